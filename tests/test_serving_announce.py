"""Issue 15 through SGLang's real serving layer (OpenAIServingChat), as a
client sees the SSE stream (tests/serving_stub.py):

* a call whose body is malformed before it began never reaches the client
  (no name, no empty-argument call an agent would execute), and the calls
  that follow keep indices 0, 1, ...;
* a call that began well and is cut off or breaks later was streamed, is
  never completed with invented arguments (only the open string and
  containers are closed), and the response keeps finish_reason "stop" (the
  adapter's incomplete_tool_call_indices), streamed and not;
* a <tool_call> in prose is content (issue 9.2), streamed and not.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("sglang")
pytest.importorskip("openai")

import serving_stub  # noqa: E402
from support import token_like  # noqa: E402

from sglang_toolparse.sglang_plugin import register  # noqa: E402

register()

TOOLS = [
    {"type": "function", "function": {"name": "set_flag", "parameters": {
        "type": "object", "properties": {"enabled": {"type": "boolean"}}}}},
    {"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"id": {"type": "string"}}}}},
]
D = "\uff5cDSML\uff5c"


def _qwen(body):
    return "<tool_call>\n%s\n</tool_call>" % body


def _dsml(block, invoke, param, inner):
    return "<%s%s>\n<%s%s name=\"set_flag\">\n%s</%s%s>\n</%s%s>" % (D, block, D, invoke, inner, D, invoke, D, block)


# parser -> (text whose only call is malformed before its body began,
#            text with such a call then a good one,
#            text whose call began well and is cut off)
CASES = {
    "qwen25_native": (
        "Turning it on." + _qwen('{"name": "set_flag", "arguments": on}'),
        _qwen('{"name": "set_flag", "arguments": on}') + "\n" + _qwen('{"name": "lookup", "arguments": {"id": "B-2"}}'),
        "Turning it on." + '<tool_call>\n{"name": "lookup", "arguments": {"id": "B-',
    ),
    # DSML through SGLang's serving layer: V3.2's name (SGLang serves V4/V4.1
    # through deepseek-recipe, which parses the output itself); every DSML
    # parser reads the V4 spelling used here
    "deepseekv32_native": (
        "Turning it on.\n\n" + _dsml("tool_calls", "invoke", "parameter",
                                     '<parameter name="enabled">true</%sparameter>\n' % D),
        _dsml("tool_calls", "invoke", "parameter", '<parameter name="enabled">true</%sparameter>\n' % D)
        + '<%sinvoke name="lookup">\n<%sparameter name="id" string="true">B-2</%sparameter>\n</%sinvoke>' % (D, D, D, D),
        "Turning it on.\n\n<%stool_calls>\n<%sinvoke name=\"lookup\">\n<%sparameter name=\"id\" string=\"true\">B-"
        % (D, D, D),
    ),
    "glm47_native": (
        None,
        None,
        "Turning it on.<tool_call>lookup<arg_key>id</arg_key><arg_value>B-",
    ),
}


def _stream(parser, text):
    sa = serving_stub.server_args(parser)
    body = serving_stub.serve(sa, token_like(text, seed=3), TOOLS, stream=True)
    content, calls, finish, _ = serving_stub.assemble_sse(body)
    return content, [(c.index, c.name, c.arguments) for c in calls], finish


def _oneshot(parser, text):
    sa = serving_stub.server_args(parser)
    resp = serving_stub.serve(sa, [text], TOOLS, stream=False)
    choice = resp.choices[0]
    calls = [(tc.function.name, tc.function.arguments) for tc in choice.message.tool_calls or []]
    return choice.message.content or "", calls, choice.finish_reason


@pytest.mark.parametrize("parser", [p for p in sorted(CASES) if CASES[p][0]])
def test_malformed_before_body_never_reaches_the_client(parser):
    text = CASES[parser][0]
    content, calls, finish = _stream(parser, text)
    assert calls == []  # SGLang would otherwise hand out set_flag with "" / "{}" arguments
    assert content == "Turning it on."
    assert finish == "stop"
    assert _oneshot(parser, text) == ("Turning it on.", [], "stop")


@pytest.mark.parametrize("parser", [p for p in sorted(CASES) if CASES[p][1]])
def test_rejected_call_leaves_no_gap_in_indices(parser):
    content, calls, finish = _stream(parser, CASES[parser][1])
    assert [(i, name, json.loads(args)) for i, name, args in calls] == [(0, "lookup", {"id": "B-2"})]
    assert finish == "tool_calls"


@pytest.mark.parametrize("parser", sorted(CASES))
def test_begun_then_cut_off_is_streamed_incomplete(parser):
    content, calls, finish = _stream(parser, CASES[parser][2])
    assert content == "Turning it on."
    assert len(calls) == 1
    index, name, args = calls[0]
    assert (index, name) == (0, "lookup")
    # what was generated, closed (the open string and object) into JSON a
    # client can read, as SGLang closes a call cut off at EOS; never a
    # completed call: finish_reason stays "stop"
    assert args == '{"id": "B-"}', args
    assert finish == "stop"
    # and the non-streaming response says the same (docs/SEMANTICS.md,
    # "Cut-off and broken calls"; the serving hook keeps "stop" there)
    assert _oneshot(parser, CASES[parser][2]) == ("Turning it on.", [("lookup", args)], "stop")


@pytest.mark.parametrize("parser", ["qwen25_native", "hermes_native", "glm45_native", "glm47_native"])
def test_marker_in_prose_is_content(parser):
    text = "Use the <tool_call> tag like this. Then wrap the JSON object."
    assert _stream(parser, text) == (text, [], "stop")
    assert _oneshot(parser, text) == (text, [], "stop")


@pytest.mark.parametrize("parser,text", [
    ("qwen3_coder_native", "Turning it on. <tool_call>\n<function=lookup"),
    ("qwen25_native", 'Turning it on. <tool_call>\n{"name": "look'),
])
def test_cut_off_before_it_began_is_content(parser, text):
    """A call the output ended in before it was announced sent nothing: its
    text is content, streamed and not, and no call (issue 18.2)."""
    assert _stream(parser, text) == (text, [], "stop")
    assert _oneshot(parser, text) == (text, [], "stop")
