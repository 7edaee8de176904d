"""Parity with SGLang's detectors for the GLM engine's other rows
(tests/glm_rows.py): on template-shaped output the native calls equal
SGLang's one-shot calls; where SGLang is wrong (streaming, bursts, prose,
the template's string rule) the builtin case is a strict xfail that says
why. Declared differences are in docs/PARSERS.md."""
import json

import pytest

from glm_rows import ROWS
from sglang_support import one_shot, stream_through
from support import CHUNKERS

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "number"},
        "hot": {"type": "boolean"},
        "opts": {"type": "object"},
        "tags": {"type": "array"},
    },
}
NAMES = ("get_weather", "noop")
PAIRS = [("city", "Paris"), ("days", "3"), ("ratio", "0.5"), ("hot", "true"), ("opts", '{"a": [1, 2]}'),
         ("tags", '["x"]')]
ARGS = {"city": "Paris", "days": 3, "ratio": 0.5, "hot": True, "opts": {"a": [1, 2]}, "tags": ["x"]}
FORMATS = sorted(ROWS)
IMPLS = ["builtin", "native"]

_KEEPS_NL = ("%s keeps the template's newlines around a call as content (docs/PARSERS.md: whitespace next to "
             "a call is formatting, dropped one-shot and streamed alike)")
# What SGLang 0.5.23 gets wrong, per row and test (the reason of the strict xfail).
SGLANG_WRONG = {
    "ling3": {
        "burst": "Glm4MoeDetector (Ling3) emits only the first of several calls that end in one chunk",
        "prose_after_call_one_chunk": "Glm4MoeDetector (Ling3) drops text that follows a call in the same chunk",
        "one_shot_prose_after_call": "Glm4MoeDetector.detect_and_parse keeps only the text before the first call",
        "string_raw:true": "Glm4MoeDetector turns a string parameter that is JSON into str(json.loads(v))",
        "string_raw:[1,2]": "Glm4MoeDetector turns a string parameter that is JSON into str(json.loads(v))",
        "string_raw:\"q\"": "Glm4MoeDetector strips the quotes from a string parameter's text",
    },
    "iquest_q1": {
        "long_string_streams": "IQuestQ1Detector holds the whole call until </iquest_tool_call>",
        "one_shot:single": _KEEPS_NL % "IQuestQ1Detector",
        "one_shot:two_calls": _KEEPS_NL % "IQuestQ1Detector",
        "one_shot_prose_after_call": _KEEPS_NL % "IQuestQ1Detector",
    },
    "poolside_v1": {
        "long_string_streams": "PoolsideV1Detector holds each value until its </arg_value>",
        "one_shot:single": _KEEPS_NL % "PoolsideV1Detector",
        "one_shot_prose_after_call": "PoolsideV1Detector.detect_and_parse keeps only the text before the first call",
    },
    "spark25": {
        "long_string_streams": "Spark25Detector holds the whole call until </tool_call>",
        "one_shot:single": _KEEPS_NL % "Spark25Detector",
        "one_shot:two_calls": _KEEPS_NL % "Spark25Detector",
        "one_shot_prose_after_call": _KEEPS_NL % "Spark25Detector",
    },
}


def parser_name(fmt, impl):
    return ROWS[fmt].sglang if impl == "builtin" else ROWS[fmt].native


def xfail_if_wrong(request, fmt, impl, key):
    reason = SGLANG_WRONG.get(fmt, {}).get(key)
    if impl == "builtin" and reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def calls_json(calls):
    """(name, decoded arguments): rows whose SGLang detector writes compact
    JSON are compared by value"""
    return [(n, json.loads(a)) for n, a in calls]


@pytest.fixture
def tools(sglang_tool):
    return sglang_tool(*NAMES, parameters=SCHEMA)


def cases(fmt):
    r = ROWS[fmt]
    w = ("get_weather", PAIRS)
    return {
        "single": ("Let me check.\n" + r.calls(w), "Let me check.", [("get_weather", ARGS)]),
        "zero_args": (r.calls(("noop", [])), "", [("noop", {})]),
        "two_calls": (r.calls(w, ("noop", [])), "", [("get_weather", ARGS), ("noop", {})]),
        "string_looks_like_number": (r.calls(("get_weather", [("city", "123")])), "", [("get_weather", {"city": "123"})]),
    }


ALL = [(fmt, case) for fmt in FORMATS for case in sorted(cases(fmt))]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt,case", ALL)
def test_one_shot_same_calls(fcp, tools, request, impl, fmt, case):
    xfail_if_wrong(request, fmt, impl, "one_shot:" + case)
    text, prose, calls = cases(fmt)[case]
    normal, got = one_shot(fcp, tools, parser_name(fmt, impl), text)
    assert calls_json(got) == calls
    assert normal == prose


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
@pytest.mark.parametrize("fmt,case", ALL)
def test_native_streamed_equals_one_shot(fcp, tools, fmt, case, chunker):
    text, prose, calls = cases(fmt)[case]
    normal, got = stream_through(fcp, tools, ROWS[fmt].native, CHUNKERS[chunker](text))
    assert (normal, calls_json(got)) == (prose, calls)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_several_calls_in_one_chunk(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "burst")
    text, _, calls = cases(fmt)["two_calls"]
    assert calls_json(stream_through(fcp, tools, parser_name(fmt, impl), [text])[1]) == calls


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_prose_after_call_in_one_chunk(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "prose_after_call_one_chunk")
    text = ROWS[fmt].calls(("noop", [])) + "\nDone."
    normal, calls = stream_through(fcp, tools, parser_name(fmt, impl), [text])
    assert (normal, calls_json(calls)) == ("\nDone.", [("noop", {})])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_one_shot_keeps_prose_after_call(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "one_shot_prose_after_call")
    text = "A.\n" + ROWS[fmt].calls(("noop", [])) + "\nB."
    normal, calls = one_shot(fcp, tools, parser_name(fmt, impl), text)
    assert (normal, calls_json(calls)) == ("A.\nB.", [("noop", {})])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_streamed_object_equals_one_shot(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "streamed_object")
    text = ROWS[fmt].calls(("get_weather", [("opts", '{"a":[1,2]}')]))
    want = [("get_weather", '{"opts": {"a": [1, 2]}}')]
    got = stream_through(fcp, tools, parser_name(fmt, impl), CHUNKERS["tokens"](text))[1]
    assert calls_json(got) == calls_json(want)
    if impl == "native":
        assert got == want


STRINGS = ["true", "[1,2]", '"q"', "None", " padded ", "a\\nb"]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("raw", STRINGS)
def test_string_parameter_is_the_raw_text(fcp, tools, request, fmt, impl, raw):
    """The templates write a string argument raw, so a string parameter is
    the text between the tags, whatever it looks like."""
    xfail_if_wrong(request, fmt, impl, "string_raw:" + raw)
    text = ROWS[fmt].calls(("get_weather", [("city", raw)]))
    assert calls_json(one_shot(fcp, tools, parser_name(fmt, impl), text)[1]) == [("get_weather", {"city": raw})]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_long_string_streams_before_its_end(fcp, tools, request, fmt, impl):
    """A 16 KB string argument reaches the client while it is generated."""
    xfail_if_wrong(request, fmt, impl, "long_string_streams")
    body = "x = 1  # a line of code\n" * 700
    text = ROWS[fmt].calls(("get_weather", [("city", body)]))
    cut = text.index(body) + len(body) - 100
    p = fcp.FunctionCallParser(tools, parser_name(fmt, impl))
    sent = ""
    for i in range(0, cut, 64):
        _, items = p.parse_stream_chunk(text[i:min(i + 64, cut)])
        sent += "".join(it.parameters for it in items)
    assert len(sent) > len(body) - 200


def test_detectors_are_sglang_subclasses(fcp, tools):
    for fmt in FORMATS:
        native = fcp.FunctionCallParser(tools, ROWS[fmt].native)
        builtin = fcp.FunctionCallParser(tools, ROWS[fmt].sglang)
        assert isinstance(native.detector, type(builtin.detector)), fmt
        assert native.detector.supports_structural_tag() == builtin.detector.supports_structural_tag()
        assert native.detector.parses_required_natively() == builtin.detector.parses_required_natively()
        # FunctionCallParser's GLM-4.7 special-casing (isinstance) applies to the native detector too
        assert (getattr(native.detector, "use_full_assistant_constraint", None)
                == getattr(builtin.detector, "use_full_assistant_constraint", None)), fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_has_tool_call_agrees(fcp, tools, fmt):
    r = ROWS[fmt]
    for text in (r.calls(("noop", [])), "no call here", "Hi " + r.calls(("get_weather", PAIRS))):
        native = fcp.FunctionCallParser(tools, r.native).has_tool_call(text)
        assert native == fcp.FunctionCallParser(tools, r.sglang).has_tool_call(text), text


@pytest.mark.parametrize("fmt", FORMATS)
def test_state_for_serving_layer(fcp, tools, fmt):
    p = fcp.FunctionCallParser(tools, ROWS[fmt].native)
    text = ROWS[fmt].calls(("get_weather", PAIRS), ("noop", []))
    for c in CHUNKERS["tokens"](text):
        p.parse_stream_chunk(c)
    p.parse_stream_end()
    d = p.detector
    assert [c["name"] for c in d.prev_tool_call_arr] == ["get_weather", "noop"]
    assert [json.loads(a) for a in d.streamed_args_for_tool] == [ARGS, {}]
    for i, c in enumerate(d.prev_tool_call_arr):
        assert c["arguments"] == d.streamed_args_for_tool[i]
