"""Parity with SGLang's MinimaxM3Detector (minimax-m3): on output as
MiniMax-M3's chat template writes it the native calls equal SGLang's, one-shot
and streamed, nested values and typing included. Where SGLang is wrong (it
loses or changes what the template wrote, or streams something else than it
parses) the builtin case is a strict xfail that says why; docs/PARSERS.md
"MiniMax-M3" lists them."""
import json

import pytest

from format_table import M3_NS as NS
from sglang_support import one_shot, stream_through
from support import CHUNKERS
from test_minimax_m3_golden import ALL, CLOSE, OPEN, SCHEMA, block, el, inv

IMPLS = ["builtin", "native"]
NAMES = ("get_weather", "noop")


def parser_name(impl):
    return "minimax-m3" if impl == "builtin" else "minimax-m3_native"


@pytest.fixture
def tools(sglang_tool):
    return sglang_tool(*NAMES, parameters=SCHEMA)


CASES = {
    "every_kind": ("Checking.\n" + block(("get_weather", ALL)), "Checking.", [("get_weather", json.dumps(ALL))]),
    "zero_args": (block(("noop", {})), "", [("noop", "{}")]),
    "two_invokes": (block(("get_weather", {"city": "A", "days": 2}), ("noop", {})), "",
                    [("get_weather", '{"city": "A", "days": 2}'), ("noop", "{}")]),
    "two_blocks": (block(("noop", {})) + "\n" + block(("noop", {"hot": False})), "",
                   [("noop", "{}"), ("noop", '{"hot": false}')]),
    "code_string": (block(("noop", {"content": 'x = "<a>"\n\tif a < b: pass'})), "",
                    [("noop", json.dumps({"content": 'x = "<a>"\n\tif a < b: pass'}))]),
    "untyped_nested": (OPEN + inv("noop", el("any", el("item", "1") + el("item", el("k", "true")))) + CLOSE, "",
                       [("noop", '{"any": ["1", {"k": true}]}')]),
}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_shot_same_calls(fcp, tools, impl, case):
    text, prose, calls = CASES[case]
    normal, got = one_shot(fcp, tools, parser_name(impl), text)
    assert got == calls
    assert normal.rstrip("\n") == prose  # SGLang keeps the newline before the block: formatting


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("chunker", ["chars", "tokens", "one"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_streamed_same_calls(fcp, tools, impl, case, chunker):
    text, prose, calls = CASES[case]
    got_text, got_calls = stream_through(fcp, tools, parser_name(impl), CHUNKERS[chunker](text))
    assert got_calls == calls and got_text.rstrip("\n") == prose


def xfail_builtin(request, impl, reason):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("impl", IMPLS)
def test_string_trailing_blanks_kept(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector.detect_and_parse strips a value's trailing blanks (its "
                                 "stream keeps them); the template writes strings raw")
    text = block(("noop", {"content": "a  \n"}))
    assert one_shot(fcp, tools, parser_name(impl), text)[1] == [("noop", '{"content": "a  \\n"}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_nullable_string_null_is_a_string(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector.detect_and_parse makes the text null of a string|null "
                                 "parameter null (its stream sends the string); the template never writes a None")
    text = block(("noop", {"maybe": "null"}))
    assert one_shot(fcp, tools, parser_name(impl), text)[1] == [("noop", '{"maybe": "null"}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_infinite_number_is_its_text(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector raises OverflowError on a number parameter 'inf' (int(inf)): "
                                 "one-shot the whole response becomes text, streaming the exception escapes")
    text = OPEN + inv("noop", el("ratio", "inf")) + CLOSE
    assert one_shot(fcp, tools, parser_name(impl), text)[1] == [("noop", '{"ratio": "inf"}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_nested_element_named_as_its_parameter(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector's stream ends a nested value at the first closing tag of "
                                 "its name, an inner one: the arguments sent are not JSON ('{\"any\": {}, \"/any\": ')")
    text = OPEN + inv("noop", el("any", el("any", "x"))) + CLOSE
    assert stream_through(fcp, tools, parser_name(impl), CHUNKERS["tokens"](text))[1] == [
        ("noop", '{"any": {"any": "x"}}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_array_written_as_json_text_kept(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector's stream makes an array parameter written as JSON text an "
                                 "empty object {} (the text is lost; its one-shot parse keeps it as a string)")
    text = OPEN + inv("noop", el("tags", '["a", "b"]')) + CLOSE
    assert stream_through(fcp, tools, parser_name(impl), CHUNKERS["tokens"](text))[1] == [
        ("noop", '{"tags": ["a", "b"]}')]


@pytest.mark.parametrize("impl", IMPLS)
def test_undeclared_tool_not_streamed(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector streams a call to a tool the request did not declare (its "
                                 "one-shot parse drops it): the client is told to run rm_rf")
    text = block(("rm_rf", {"p": "/"}))
    assert stream_through(fcp, tools, parser_name(impl), CHUNKERS["tokens"](text))[1] == []


@pytest.mark.parametrize("impl", IMPLS)
def test_opener_without_invoke_is_text(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector's stream drops everything after a block opener that starts "
                                 "no call (one-shot keeps it as text)")
    text = "Use " + OPEN + " here."
    assert stream_through(fcp, tools, parser_name(impl), CHUNKERS["tokens"](text)) == (text, [])


@pytest.mark.parametrize("impl", IMPLS)
def test_cut_off_call_one_shot_as_streamed(fcp, tools, request, impl):
    xfail_builtin(request, impl, "MinimaxM3Detector.detect_and_parse returns a cut-off block as text, while its "
                                 "stream sent the call's name and arguments")
    text = "Ok." + OPEN + "\n" + NS + '<invoke name="noop">' + NS + "<content>part"
    streamed = stream_through(fcp, tools, parser_name(impl), CHUNKERS["tokens"](text))
    assert [name for name, _ in streamed[1]] == ["noop"]
    assert one_shot(fcp, tools, parser_name(impl), text)[1] == streamed[1]


@pytest.mark.parametrize("impl", IMPLS)
def test_string_parameter_streams_before_its_closing_tag(fcp, tools, impl):
    """Both stream a string as it is generated (SGLang's detector is incremental)."""
    content = "print('hello')\n" * 200
    text = block(("noop", {"content": content}))
    end = text.index(content) + len(content)
    p = fcp.FunctionCallParser(tools, parser_name(impl))
    streamed = ""
    for i in range(0, end, 4):
        _, items = p.parse_stream_chunk(text[i:min(i + 4, end)])
        streamed += "".join(it.parameters for it in items)
    assert len(streamed) >= 0.95 * len(json.dumps(content))


def test_detector_is_an_sglang_subclass(fcp, tools):
    from sglang.srt.function_call.minimax_m3 import MinimaxM3Detector

    p = fcp.FunctionCallParser(tools, "minimax-m3_native")
    assert isinstance(p.detector, MinimaxM3Detector)
    builtin = fcp.FunctionCallParser(tools, "minimax-m3")
    assert p.detector.supports_structural_tag() == builtin.detector.supports_structural_tag()
    assert type(p.detector).parses_without_tools() is True


@pytest.mark.parametrize("impl", IMPLS)
def test_no_tools_keeps_calls(fcp, impl):
    """parses_without_tools: a request without tools keeps the call, as sent."""
    text = block(("anything", {"a": "1"}))
    assert one_shot(fcp, [], parser_name(impl), text)[1] == [("anything", '{"a": "1"}')]
