"""Parity with SGLang's Qwen3CoderDetector (qwen3_coder, step3p5) and
MinimaxM2Detector (minimax-m2): on output as the chat templates write it
the native calls equal SGLang's one-shot calls, value typing included (a
differential property test over schemas and raw values). Where SGLang is
wrong the builtin case is a strict xfail that says why."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from format_table import minimax_block, render_minimax_invoke, render_qwen3_coder
from sglang_support import one_shot, stream_through
from support import CHUNKERS, check_stream_invariants, run

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "number"},
        "hot": {"type": "boolean"},
        "opts": {"type": "object"},
        "tags": {"type": "array"},
        "unit": {"enum": ["c", "f"]},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "content": {"type": "string"},
    },
}
NAMES = ("get_weather", "noop")
ARGS = {"city": "Paris", "days": 3, "ratio": 0.5, "hot": True, "opts": {"a": [1, 2]}, "tags": ["x"], "unit": "c"}
ARGS_JSON = json.dumps(ARGS)

# SGLang parser name -> core format
FORMATS = {"qwen3_coder": "qwen3_coder", "minimax-m2": "minimax_m2"}
IMPLS = ["builtin", "native"]


def render(fmt, calls):
    if fmt == "qwen3_coder":
        return "\n".join(render_qwen3_coder(n, a) for n, a in calls)
    return minimax_block([render_minimax_invoke(n, a) for n, a in calls])


def parser_name(fmt, impl):
    return fmt if impl == "builtin" else fmt + "_native"


@pytest.fixture
def tools(sglang_tool):
    return sglang_tool(*NAMES, parameters=SCHEMA)


def cases(fmt):
    return {
        "single": ("Let me check.\n" + render(fmt, [("get_weather", ARGS)]), "Let me check.", [("get_weather", ARGS_JSON)]),
        "zero_args": (render(fmt, [("noop", {})]), "", [("noop", "{}")]),
        "two_calls": (render(fmt, [("get_weather", ARGS), ("noop", {})]), "",
                      [("get_weather", ARGS_JSON), ("noop", "{}")]),
        "string_looks_like_number": (render(fmt, [("get_weather", {"city": "123"})]), "",
                                     [("get_weather", '{"city": "123"}')]),
        "code": (render(fmt, [("get_weather", {"content": 'x = "<a>"\n\tif a < b: pass'})]), "",
                 [("get_weather", json.dumps({"content": 'x = "<a>"\n\tif a < b: pass'}))]),
    }


ALL = [(fmt, case) for fmt in FORMATS for case in sorted(cases(fmt))]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt,case", ALL)
def test_one_shot_same_calls(fcp, tools, impl, fmt, case):
    text, prose, calls = cases(fmt)[case]
    normal, got = one_shot(fcp, tools, parser_name(fmt, impl), text)
    assert got == calls
    # SGLang keeps the template's newline before the block; it is formatting
    assert normal.rstrip("\n") == prose


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
@pytest.mark.parametrize("fmt,case", ALL)
def test_native_streamed_equals_one_shot(fcp, tools, fmt, case, chunker):
    text, prose, calls = cases(fmt)[case]
    assert stream_through(fcp, tools, parser_name(fmt, "native"), CHUNKERS[chunker](text)) == (prose, calls)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("chunker", ["chars", "tokens"])
def test_minimax_block_opener_split_across_chunks(fcp, tools, request, impl, chunker):
    """sglang#35564: a call lost char by char."""
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "MinimaxM2Detector flushes its buffer as text when <minimax:tool_call> has not fully arrived: "
            "the call is lost and its markup shown to the user")))
    text, prose, calls = cases("minimax-m2")["single"]
    got_text, got_calls = stream_through(fcp, tools, parser_name("minimax-m2", impl), CHUNKERS[chunker](text))
    assert got_calls == calls and got_text.rstrip("\n") == prose


@pytest.mark.parametrize("impl", IMPLS)
def test_minimax_zero_argument_invoke_streams_braces(fcp, tools, request, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "MinimaxM2Detector streams no arguments at all for an invoke without parameters ('' is not JSON)")))
    text, _, calls = cases("minimax-m2")["two_calls"]
    assert stream_through(fcp, tools, parser_name("minimax-m2", impl), [text])[1] == calls


@pytest.mark.parametrize("impl", IMPLS)
def test_minimax_optional_string_keeps_its_value(fcp, tools, request, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "MinimaxM2Detector makes every value of a parameter whose schema allows null null "
            "(an Optional[str] 'x' becomes null); the template writes None as `null`")))
    text = render("minimax-m2", [("get_weather", {"maybe": "x", "count": 7})])
    assert one_shot(fcp, tools, parser_name("minimax-m2", impl), text)[1] == [
        ("get_weather", '{"maybe": "x", "count": 7}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_minimax_value_newlines_are_content(fcp, tools, request, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "MinimaxM2Detector.detect_and_parse strips every leading and trailing newline of a value (its "
            "streaming keeps them); the template writes string values raw")))
    text = render("minimax-m2", [("get_weather", {"content": "\nline\n"})])
    assert one_shot(fcp, tools, parser_name("minimax-m2", impl), text)[1] == [
        ("get_weather", '{"content": "\\nline\\n"}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_qwen_none_of_a_typed_parameter_is_null(fcp, tools, request, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "Qwen3CoderDetector reads `None` (how the template's Jinja `string` writes None) as the string "
            "\"None\" for an integer parameter")))
    text = render("qwen3_coder", [("get_weather", {"count": None})])
    assert one_shot(fcp, tools, parser_name("qwen3_coder", impl), text)[1] == [("get_weather", '{"count": null}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_qwen_block_opener_that_starts_no_call_is_text(fcp, tools, request, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "Qwen3CoderDetector drops everything between <tool_call> and </tool_call> when no <function= "
            "follows (e.g. a Qwen2.5-style JSON call written as prose)")))
    text = 'a <tool_call>{"name": "f"}</tool_call> b'
    assert stream_through(fcp, tools, parser_name("qwen3_coder", impl), CHUNKERS["tokens"](text)) == (text, [])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", ["qwen3_coder"])
def test_one_shot_keeps_prose_after_call(fcp, tools, request, fmt, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "Qwen3CoderDetector.detect_and_parse keeps only the text before the first call")))
    text = "A.\n" + render(fmt, [("noop", {})]) + "\nB."
    assert one_shot(fcp, tools, parser_name(fmt, impl), text) == ("A.\nB.", [("noop", "{}")])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_string_parameter_streams_before_its_closing_tag(fcp, tools, request, fmt, impl):
    """sglang#27005: a long string argument arrives in one burst at the end."""
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "SGLang holds a string parameter until </parameter>: nothing of it streams while it is generated")))
    content = "print('hello')\n" * 200
    text = render(fmt, [("get_weather", {"content": content})])
    end = text.index(content) + len(content)
    p = fcp.FunctionCallParser(tools, parser_name(fmt, impl))
    streamed = ""
    for i in range(0, end, 4):
        _, items = p.parse_stream_chunk(text[i:min(i + 4, end)])
        streamed += "".join(it.parameters for it in items)
    assert len(streamed) >= 0.95 * len(json.dumps(content))


def test_detectors_are_sglang_subclasses(fcp, tools):
    from sglang.srt.function_call.minimax_m2 import MinimaxM2Detector
    from sglang.srt.function_call.qwen3_coder_detector import Qwen3CoderDetector

    for name, base in (("qwen3_coder_native", Qwen3CoderDetector), ("step3p5_native", Qwen3CoderDetector),
                       ("minimax-m2_native", MinimaxM2Detector)):
        p = fcp.FunctionCallParser(tools, name)
        assert isinstance(p.detector, base), name
        builtin = fcp.FunctionCallParser(tools, name[: -len("_native")])
        assert p.detector.supports_structural_tag() == builtin.detector.supports_structural_tag()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_state_for_serving_layer(fcp, tools, fmt):
    p = fcp.FunctionCallParser(tools, fmt + "_native")
    text = render(fmt, [("get_weather", ARGS), ("noop", {})])
    for c in CHUNKERS["tokens"](text):
        p.parse_stream_chunk(c)
    p.parse_stream_end()
    d = p.detector
    assert [c["name"] for c in d.prev_tool_call_arr] == ["get_weather", "noop"]
    assert d.streamed_args_for_tool == [ARGS_JSON, "{}"]
    for i, c in enumerate(d.prev_tool_call_arr):
        assert c["arguments"] == d.streamed_args_for_tool[i]  # the streamed JSON text


# ---- differential: value typing equals SGLang's one-shot ---------------------

TYPE_SCHEMAS = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "object"}, {"type": "array"},
    {"type": "null"}, {"type": ["string", "null"]}, {"type": ["integer", "null"]}, {"enum": ["a", "b", "7"]}, {"enum": ["7", 8]},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"oneOf": [{"type": "object"}, {"type": "array"}]},
    {"anyOf": [{"type": "number"}, {"type": "boolean"}]}, {"type": "int64"}, {"type": "float"}, {"type": "list"},
    {"type": "dict"}, {"type": "bool"}, {"type": "str"}, {"type": "enum"}, {}, {"description": "no type"},
    {"type": "integer", "enum": [1, 2]}, {"allOf": [{"type": "integer"}]}, {"properties": {}}, {"items": {}},
]
RAW_VALUES = [
    "123", "hello", " hello world ", "12.5", "-3", "1e5", "true", "false", "True", "FALSE", "yes", "off", "1", "0",
    '{"a": 1}', "[1, 2]", '"quoted"', "'single'", "", "  ", "NaN", "x\ny", "a\\nb", "{'a': 1}", "(1, 2)",
    "5 apples", "[1, 2] x", "tab\there", "0x10", "007", "-", "1.0", " 7", "{", '["a"]', "\\", "\u00e9 \U0001F600",
    "[1,\n 2]", "-0", "1.5e300", "2.0", "1_000", "+5", ".5", "5.", "1E3",
]
# values on which the native result differs from SGLang's on purpose
# (docs/PARSERS.md): NaN/Infinity are not JSON; minimax: null-allowing schemas
SKIP_RAW = {"NaN", "1.5e400", "inf", "Infinity"}


def _schema_allows_null(schema):
    from sglang_toolparse.xml_types import extract_types

    return "null" in extract_types(schema)


@st.composite
def typed_calls(draw, fmt):
    n = draw(st.integers(1, 4))
    props = {}
    for k in range(n):
        s = draw(st.sampled_from(TYPE_SCHEMAS + [None]))
        if s is not None:
            props["p%d" % k] = s
    keys = draw(st.lists(st.sampled_from(["p%d" % k for k in range(n + 1)]), unique=True, max_size=4))
    pairs = {k: draw(st.sampled_from(RAW_VALUES)) for k in keys}
    if fmt == "qwen3_coder":
        text = "<tool_call>\n<function=f>\n" + "".join(
            "<parameter=%s>\n%s\n</parameter>\n" % kv for kv in pairs.items()) + "</function>\n</tool_call>"
    else:
        text = minimax_block(['<invoke name="f">\n' + "".join(
            '<parameter name="%s">%s</parameter>\n' % kv for kv in pairs.items()) + "</invoke>\n"])
    return {"type": "object", "properties": props}, pairs, text


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_typing_equals_sglang_one_shot(fcp, fmt, data):
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.minimax_m2 import MinimaxM2Detector
    from sglang.srt.function_call.qwen3_coder_detector import Qwen3CoderDetector

    from sglang_toolparse import parse

    params, pairs, text = data.draw(typed_calls(fmt))
    if fmt == "minimax-m2":
        # declared differences: a schema that allows null (SGLang: always
        # null), a value with surrounding newlines (SGLang one-shot strips)
        if any(_schema_allows_null(params["properties"].get(k)) for k in pairs if k in params["properties"]):
            return
        if any(v != v.strip("\n") for v in pairs.values()):
            return
    tools = [Tool(type="function", function={"name": "f", "parameters": params})]
    try:
        ref = (Qwen3CoderDetector if fmt == "qwen3_coder" else MinimaxM2Detector)().detect_and_parse(text, tools)
    except Exception:
        return  # SGLang raised (e.g. int(inf)); the native parser returns a result, checked below
    if not ref.calls:
        return  # SGLang's whole parse failed (a literal_eval value json.dumps rejects)
    want = [(c.name, c.parameters) for c in ref.calls]
    core = FORMATS[fmt]
    got = [(c.name, c.arguments) for c in parse(core, text, tools).calls]
    streamed = run(core, list(text), tools)
    check_stream_invariants(streamed)
    assert [(e.name, e.arguments) for e in streamed if type(e).__name__ == "CallEnd"] == got
    if any(v in SKIP_RAW for v in pairs.values()) or any(s in want[0][1] for s in ("NaN", "Infinity")):
        return
    assert got == want, (params, pairs)
