"""Parity with SGLang's detectors for the GLM engine's other rows
(tests/glm_rows.py): on template-shaped output the native calls equal
SGLang's one-shot calls; where SGLang is wrong (streaming, bursts, prose,
the template's string rule) the builtin case is a strict xfail that says
why. Declared differences are in docs/PARSERS.md."""
import json

import pytest

from glm_rows import ROWS
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
    "hunyuan": {
        "prose_after_call_one_chunk": "HunyuanDetector drops text that follows the </tool_calls> block in the same chunk",
        "one_shot_prose_after_call": "HunyuanDetector.detect_and_parse keeps only the (stripped) text before the block",
        "control_char_streams_as_json": ("HunyuanDetector escapes only \\ \" \\n \\r \\t while streaming a string: a "
                                         "control character reaches the client raw and the arguments are not JSON"),
    },
}
SGLANG_WRONG["hunyuan_os"] = SGLANG_WRONG["hunyuan"]


def parser_name(fmt, impl):
    return ROWS[fmt].sglang if impl == "builtin" else ROWS[fmt].native


def make(fcp, tools, fmt, impl):
    """FunctionCallParser as the serving layer builds it (with the row's
    tokenizer, if it has one)."""
    return fcp.FunctionCallParser(tools, parser_name(fmt, impl), tokenizer=ROWS[fmt].tokenizer())


def shot(fcp, tools, fmt, impl, text):
    normal, items = make(fcp, tools, fmt, impl).parse_non_stream(text)
    return normal, [(it.name, it.parameters) for it in items]


def stream(fcp, tools, fmt, impl, chunks):
    """Chunks through parse_stream_chunk / parse_stream_end, calls assembled
    per tool_index as a client does: (text, [(name, arguments)])."""
    p = make(fcp, tools, fmt, impl)
    text, calls = [], {}
    for t, items in [p.parse_stream_chunk(c) for c in chunks] + [p.parse_stream_end()]:
        text.append(t or "")
        for it in items:
            d = calls.setdefault(it.tool_index, ["", ""])
            d[0] = it.name or d[0]
            d[1] += it.parameters
    return "".join(text), [tuple(calls[k]) for k in sorted(calls)]


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
    normal, got = shot(fcp, tools, fmt, impl, text)
    assert calls_json(got) == calls
    assert normal == prose


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
@pytest.mark.parametrize("fmt,case", ALL)
def test_native_streamed_equals_one_shot(fcp, tools, fmt, case, chunker):
    text, prose, calls = cases(fmt)[case]
    normal, got = stream(fcp, tools, fmt, "native", CHUNKERS[chunker](text))
    assert (normal, calls_json(got)) == (prose, calls)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_several_calls_in_one_chunk(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "burst")
    text, _, calls = cases(fmt)["two_calls"]
    assert calls_json(stream(fcp, tools, fmt, impl, [text])[1]) == calls


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_prose_after_call_in_one_chunk(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "prose_after_call_one_chunk")
    text = ROWS[fmt].calls(("noop", [])) + "\nDone."
    normal, calls = stream(fcp, tools, fmt, impl, [text])
    assert (normal, calls_json(calls)) == ("\nDone.", [("noop", {})])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_one_shot_keeps_prose_after_call(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "one_shot_prose_after_call")
    text = "A.\n" + ROWS[fmt].calls(("noop", [])) + "\nB."
    normal, calls = shot(fcp, tools, fmt, impl, text)
    assert (normal, calls_json(calls)) == ("A.\nB.", [("noop", {})])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_streamed_object_equals_one_shot(fcp, tools, request, fmt, impl):
    xfail_if_wrong(request, fmt, impl, "streamed_object")
    text = ROWS[fmt].calls(("get_weather", [("opts", '{"a":[1,2]}')]))
    want = [("get_weather", '{"opts": {"a": [1, 2]}}')]
    got = stream(fcp, tools, fmt, impl, CHUNKERS["tokens"](text))[1]
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
    assert calls_json(shot(fcp, tools, fmt, impl, text)[1]) == [("get_weather", {"city": raw})]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_long_string_streams_before_its_end(fcp, tools, request, fmt, impl):
    """A 16 KB string argument reaches the client while it is generated."""
    xfail_if_wrong(request, fmt, impl, "long_string_streams")
    body = "x = 1  # a line of code\n" * 700
    text = ROWS[fmt].calls(("get_weather", [("city", body)]))
    cut = text.index(body) + len(body) - 100
    p = make(fcp, tools, fmt, impl)
    sent = ""
    for i in range(0, cut, 64):
        _, items = p.parse_stream_chunk(text[i:min(i + 64, cut)])
        sent += "".join(it.parameters for it in items)
    assert len(sent) > len(body) - 200


def test_detectors_are_sglang_subclasses(fcp, tools):
    for fmt in FORMATS:
        native = make(fcp, tools, fmt, "native")
        builtin = make(fcp, tools, fmt, "builtin")
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
        native = make(fcp, tools, fmt, "native").has_tool_call(text)
        assert native == make(fcp, tools, fmt, "builtin").has_tool_call(text), text


@pytest.mark.parametrize("fmt", FORMATS)
def test_state_for_serving_layer(fcp, tools, fmt):
    p = make(fcp, tools, fmt, "native")
    text = ROWS[fmt].calls(("get_weather", PAIRS), ("noop", []))
    for c in CHUNKERS["tokens"](text):
        p.parse_stream_chunk(c)
    p.parse_stream_end()
    d = p.detector
    assert [c["name"] for c in d.prev_tool_call_arr] == ["get_weather", "noop"]
    assert [json.loads(a) for a in d.streamed_args_for_tool] == [ARGS, {}]
    for i, c in enumerate(d.prev_tool_call_arr):
        assert c["arguments"] == d.streamed_args_for_tool[i]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_control_char_streams_as_json(fcp, tools, request, fmt, impl):
    """A string value with a control character: the streamed arguments are
    JSON (json.dumps escapes it) at token chunking."""
    xfail_if_wrong(request, fmt, impl, "control_char_streams_as_json")
    raw = "a\bb\x01c"
    text = ROWS[fmt].calls(("get_weather", [("city", raw)]))
    got = stream(fcp, tools, fmt, impl, CHUNKERS["tokens"](text))[1]
    assert calls_json(got) == [("get_weather", {"city": raw})]


# ---- Hunyuan: tag spellings from the tokenizer, as SGLang resolves them ------

def _hy_vocab(suffix, sep=True):
    from glm_rows import hunyuan_shape

    return [t for t in hunyuan_shape(suffix)[2] if sep or "tool_sep" not in t]


@pytest.mark.parametrize("vocab,fmt", [
    (None, "hunyuan"),                          # no tokenizer: the bare literals
    ([], "hunyuan"),                            # a tokenizer without Hunyuan's tokens
    (_hy_vocab(""), "hunyuan"),                 # the preview tokenizer (bare)
    (_hy_vocab(":opensource"), "hunyuan_os"),   # the shipping Hy3 tokenizer
    (_hy_vocab(":opensource", sep=False), "hunyuan_os"),  # Hy4: no <tool_sep> in the vocabulary
])
def test_hunyuan_tags_resolved_from_the_tokenizer(fcp, tools, vocab, fmt):
    from glm_rows import ROWS as R, FakeTokenizer

    tok = None if vocab is None else FakeTokenizer(vocab + ["hello"])
    p = fcp.FunctionCallParser(tools, "hunyuan_native", tokenizer=tok)
    assert p.detector._tp_format == fmt  # FunctionCallParser handed the tokenizer over (signature has it)
    sg = fcp.FunctionCallParser(tools, "hunyuan", tokenizer=tok)
    assert p.detector.bot_token == sg.detector.bot_token
    text = "Hi\n" + R[fmt].calls(("get_weather", PAIRS)) + "\nDone."
    if vocab and not any("tool_sep" in t for t in vocab):
        text = text.replace("<tool_sep:opensource>", "")  # Hy4 writes none
    want = [("get_weather", ARGS)]
    normal, calls = p.parse_non_stream(text)
    assert (normal, [(c.name, json.loads(c.parameters)) for c in calls]) == ("Hi\nDone.", want)
    assert [(c.name, json.loads(c.parameters)) for c in sg.parse_non_stream(text)[1]] == want


def test_hunyuan_unknown_suffix_is_parsed_by_sglang(fcp, tools, caplog):
    """A suffix no core row has: SGLang's own detector parses (one warning),
    so the server still gets SGLang's answer."""
    from glm_rows import FakeTokenizer

    tok = FakeTokenizer(_hy_vocab(":v9") + ["hello"])
    p = fcp.FunctionCallParser(tools, "hunyuan_native", tokenizer=tok)
    assert p.detector._sglang_parses
    text = "<tool_calls:v9>\n<tool_call:v9>noop<tool_sep:v9>\n</tool_call:v9>\n</tool_calls:v9>"
    assert [(c.name, c.parameters) for c in p.parse_non_stream(text)[1]] == [("noop", "{}")]
    streamed = []
    for c in CHUNKERS["tokens"](text):
        streamed += p.parse_stream_chunk(c)[1]
    assert [c.name for c in streamed if c.name] == ["noop"]
