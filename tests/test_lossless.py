"""Issue 18 (items 2, 3 second half, 5): no byte of model output lost, and
the same answer streamed and one-shot, for every input, malformed and cut
off ones included (docs/SEMANTICS.md, "Cut-off and broken calls").

* a property test over every format of `_core.formats()` (tests/format_table.py
  gives the markers and renderers, so formats added later are covered):
  generated responses and mutated ones (truncated, bytes deleted, markers
  duplicated, random text spliced in), each fed in an arbitrary chunking:
  the one-shot `parse()` equals what the stream gave (`collect()` of its
  events: text, calls with their `complete` flag and arguments, errors with
  their offsets); the text is made of input bytes, in order; an input
  without a whole marker of the format is all text, byte for byte;
* golden cases, each replayed at every split: cut-off calls (ToolCall
  complete=False, the arguments as far as generated), Kimi-K2 ids the model
  misspells, Qwen3-Coder's stray opener-as-closer, a DSML block opener
  without its `>`;
* through SGLang's detector interface: SGLang's own unit tests
  `test_non_stream_closes_confirmed_call_at_eos` (step3p5) and
  `test_incomplete_block_no_closing_tag` (minimax) with our inputs.
"""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from format_table import markers, seed_responses, spec
from strategies import chunkings, json_objects
from support import every_split
from sglang_toolparse._core import formats
from sglang_toolparse.api import StreamParser, ToolCall, collect, parse

TOOL_NAMES = ["get_weather", "search", "f"]


def streamed(fmt, chunks, tools=None):
    p = StreamParser(fmt, tools)
    events = []
    for c in chunks:
        events += p.feed(c)
    return collect(events + p.finish())


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


def marker_stems(fmt):
    """What makes a marker of `fmt`: its markers without a closing `>` (DSML
    reads its block opener so), and for DSML any tag that starts with the
    `<｜DSML｜` special token (every DSML parser reads every spelling)."""
    stems = {m.rstrip(">") for m in spec(fmt).markers}
    return stems | {m[:m.index(D) + len(D)] for m in stems if D in m}


def check_lossless(fmt, text, chunks, tools=None):
    one = parse(fmt, text, tools)
    got = streamed(fmt, chunks, tools)
    assert got == one, (text, chunks)
    # text is the model's own bytes, in order (nothing invented)
    assert is_subsequence(one.text, text), (one.text, text)
    # no marker of the format in the input: every byte is text (a cut or
    # mangled marker is released as prose)
    if not any(m in text for m in marker_stems(fmt)):
        assert (one.text, one.calls, one.errors) == (text, [], [])
    for c in one.calls:
        if c.complete:
            json.loads(c.arguments)
        else:  # an incomplete call ended with its error, in errors
            assert any(e.index == c.index for e in one.errors)
    return one


# ---- property: generated and mutated inputs, every format, any chunking ----

@st.composite
def responses(draw, fmt):
    s = spec(fmt)
    seeds = seed_responses(fmt)
    if s.render_call is not None and draw(st.booleans()):
        calls = draw(st.lists(st.tuples(st.sampled_from(TOOL_NAMES + ["nope"]), json_objects),
                              min_size=1, max_size=3))
        before = draw(st.sampled_from(["", "Sure.", "Let me look. ", "a < b > c"]))
        after = draw(st.sampled_from(["", " Done.", "\n\nMore?"]))
        text = s.response(before, [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls], after)
    elif seeds:
        text = draw(st.sampled_from([t for t in seeds if len(t) < 4000]))
    else:
        text = draw(st.text(max_size=80))
    marks = list(markers(fmt))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["truncate", "delete", "marker", "splice"]))
        at = draw(st.integers(0, len(text)))
        if op == "truncate":
            text = text[:at]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif op == "marker":
            m = draw(st.sampled_from(marks))
            cut = draw(st.integers(1, len(m)))
            text = text[:at] + m[:cut] + text[at:]
        else:
            text = text[:at] + draw(st.text(max_size=6)) + text[at:]
    return text


@pytest.mark.parametrize("fmt", formats())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_one_shot_equals_the_stream_for_every_input(fmt, data):
    text = data.draw(responses(fmt))
    chunks = data.draw(chunkings(text))
    tools = data.draw(st.sampled_from([None, TOOL_NAMES]))
    check_lossless(fmt, text, chunks, tools)


# ---- golden cases, every split ---------------------------------------------

def replay(fmt, text, tools=None):
    """The one-shot result, checked against the stream at every split and
    character by character."""
    one = check_lossless(fmt, text, [text], tools)
    for chunks in list(every_split(text)) + [list(text)]:
        assert streamed(fmt, chunks, tools) == one, chunks
    return one


def calls_of(r):
    return [(c.name, c.arguments, c.complete) for c in r.calls]


D = "\uff5cDSML\uff5c"
CUT = [
    # (format, text, expected text, expected calls)
    ("qwen25", 'On it.<tool_call>\n{"name": "search", "arguments": {"q": "lo',
     "On it.", [("search", '{"q": "lo', False)]),
    # a number is written once it is complete: the 2 may go on
    ("hermes", 'On it.<tool_call>{"name": "search", "arguments": {"q": [1, 2',
     "On it.", [("search", '{"q": [1, ', False)]),
    ("deepseekv31", "Ok<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"tr",
     "Ok", [("search", '{"q": "tr', False)]),
    ("deepseekv32", "Ok<%sfunction_calls>\n<%sinvoke name=\"search\">\n<%sparameter name=\"q\" string=\"true\">deep "
     % (D, D, D), "Ok", [("search", '{"q": "deep ', False)]),
    # an undeclared value is typed when it closes: only its key was sent
    ("glm47", "Ok<tool_call>search<arg_key>q</arg_key><arg_value>par", "Ok", [("search", '{"q": ', False)]),
    ("kimi_k2", "Ok<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0"
     "<|tool_call_argument_begin|>{\"q\": \"k", "Ok", [("search", '{"q": "k', False)]),
    ("qwen3_coder", "Ok<tool_call>\n<function=search>\n<parameter=q>\nwhere", "Ok",
     [("search", '{"q": "where', False)]),
    ("minimax_m2", 'Ok<minimax:tool_call>\n<invoke name="search">\n<parameter name="q">Oslo</parameter>\n',
     "Ok", [("search", '{"q": "Oslo"', False)]),
    # a complete call, then one cut off: the first stays complete
    ("qwen25", '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "f", "arguments": {"a',
     "", [("f", "{}", True), ("f", '{"a', False)]),
]


@pytest.mark.parametrize("fmt,text,exp_text,exp_calls", CUT, ids=[c[0] + "-" + str(i) for i, c in enumerate(CUT)])
def test_cut_off_call_is_reported_as_streamed(fmt, text, exp_text, exp_calls):
    r = replay(fmt, text, TOOL_NAMES)
    assert (r.text, calls_of(r)) == (exp_text, exp_calls)
    assert [e.code for e in r.errors] == ["unterminated"]
    assert [c.name for c in r.complete_calls] == [n for n, _a, done in exp_calls if done]


def test_broken_call_keeps_what_was_streamed():
    text = 'a<tool_call>\n{"name": "f", "arguments": {"x": 1, "y": tru}}\n</tool_call>b'
    r = replay("qwen25", text, TOOL_NAMES)
    assert (r.text, calls_of(r), [e.code for e in r.errors]) == ("ab", [("f", '{"x": 1, "y": ', False)],
                                                                  ["json_syntax"])


def test_tool_call_stays_backwards_compatible():
    c = ToolCall(0, "f", "{}")
    assert c.complete is True and c.id is None
    assert ToolCall(1, "f", "{}", "functions.f:1") == (1, "f", "{}", "functions.f:1", True)


# Kimi-K2 ids the model misspells (item 3)
KB, KE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"


def kcall(cid, args):
    return "<|tool_call_begin|>%s<|tool_call_argument_begin|>%s<|tool_call_end|>" % (cid, args)


def ktools(*spec_):
    return [{"type": "function", "function": {"name": n, "parameters": {
        "type": "object", "properties": {k: {"type": "string"} for k in keys}}}} for n, keys in spec_]


KIMI_TOOLS = ktools(("shell", ["cmd"]), ("shell2", ["path"]), ("open_url", ["url"]))
KIMI = [
    ("no-colon-no-dot", kcall("functionsshell7", '{"cmd": "id"}'), [("shell", '{"cmd": "id"}', "functionsshell7")], []),
    ("no-colon", kcall("functions.open_url3", '{"url": "u"}'), [("open_url", '{"url": "u"}', "functions.open_url3")], []),
    ("call-counter", kcall("call00004", '{"url": "v"}'), [("open_url", '{"url": "v"}', "call00004")], []),
    # shell and shell2 both fit `shell21`: the argument keys decide, among those two
    ("two-fit-keys-decide", kcall("functions.shell21", '{"path": "/"}'),
     [("shell2", '{"path": "/"}', "functions.shell21")], []),
    ("two-fit-no-key-fits", kcall("functions.shell21", '{"url": "/"}'), [], ["missing_name"]),
    ("nothing-fits", kcall("functionsbrowse2", '{"url": "w"}'), [], ["bad_name"]),
    # a whole section of misspelled calls, as K2 writes them
    ("section", kcall("functionsshell0", '{"cmd": "a"}') + kcall("functionsshell1", '{"cmd": "b"}'),
     [("shell", '{"cmd": "a"}', "functionsshell0"), ("shell", '{"cmd": "b"}', "functionsshell1")], []),
]


@pytest.mark.parametrize("name,body,exp_calls,errors", KIMI, ids=[k[0] for k in KIMI])
def test_kimi_misspelled_ids(name, body, exp_calls, errors):
    r = replay("kimi_k2", "Running." + KB + body + KE, KIMI_TOOLS)
    assert r.text == "Running."
    assert [(c.name, c.arguments, c.id) for c in r.calls] == exp_calls
    assert [e.code for e in r.errors] == errors


def test_kimi_misspelled_id_without_tools_is_its_text():
    r = replay("kimi_k2", KB + kcall("functionsshell12", "{}") + KE)
    assert [(c.name, c.id) for c in r.calls] == [("shell", "functionsshell12")]


# Markup never leaks into text (item 5)
QC = "<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n"


@pytest.mark.parametrize("text,exp_text,ncalls", [
    ("Go." + QC + "<tool_call>", "Go.", 1),  # stray opener closes the block
    ("Go." + QC + "<tool_call>\nThen more.", "Go.\nThen more.", 1),
    ("Go.<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n<tool_call>", "Go.", 1),
    ("Go." + QC + "<tool_call>\n<function=f>\n</function>\n</tool_call>", "Go.", 2),  # a real second call
    ("Go." + QC + "</tool_call> the <tool_call> tag", "Go. the <tool_call> tag", 1),  # after the block: prose
], ids=["at-end", "then-prose", "inside-invoke", "second-call", "prose-after-block"])
def test_qwen3_coder_stray_opener_is_markup(text, exp_text, ncalls):
    r = replay("qwen3_coder", text)
    assert (r.text, len(r.complete_calls), r.errors) == (exp_text, ncalls, [])


@pytest.mark.parametrize("fmt,block", [("deepseekv32", "function_calls"), ("deepseekv4", "tool_calls"),
                                       ("deepseekv41", " calls")])
def test_dsml_block_opener_without_gt(fmt, block):
    inv = "invoke" if fmt != "deepseekv41" else " invoke"
    par = "parameter" if fmt != "deepseekv41" else " parameter"
    text = ("Checking.<{D}{b}\n<{D}{i} name=\"f\">\n<{D}{p} name=\"a\" string=\"true\">v</{D}{p}>\n"
            "</{D}{i}>\n</{D}{b}> Done.").format(D=D, b=block, i=inv, p=par)
    r = replay(fmt, text)
    assert (r.text, calls_of(r), r.errors) == ("Checking. Done.", [("f", '{"a": "v"}', True)], [])


# ---- through SGLang's detector interface ------------------------------------

def _sglang_tools():
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    return [Tool(type="function", function=Function(name="run", parameters={
        "type": "object", "properties": {"line": {"type": "string"}, "n": {"type": "integer"}}}))]


def _detector(name):
    pytest.importorskip("sglang")
    from sglang_toolparse import sglang_adapter
    from sglang_toolparse.sglang_plugin import NATIVE_NAMES

    return getattr(sglang_adapter, NATIVE_NAMES[name][0])


def _stream_message(det, text, tools, seed):
    rnd = random.Random(seed)
    i, content, calls = 0, "", {}
    while True:
        n = rnd.randint(1, 7)
        r = det.parse_streaming_increment(text[i:i + n], tools) if i < len(text) else det.finish(tools)
        content += r.normal_text
        for c in r.calls:
            got = calls.setdefault(c.tool_index, [None, ""])
            got[0] = got[0] or c.name
            got[1] += c.parameters
        if i >= len(text):
            return content, [tuple(calls[k]) for k in sorted(calls)]
        i += n


@pytest.mark.parametrize("name", ["step3p5_native", "qwen3_coder_native"])
def test_non_stream_closes_confirmed_call_at_eos(name):
    """SGLang's step3p5 test of that name, our input: a call whose value the
    model was writing when the output ended is the call, its arguments
    closed into JSON, one-shot as streamed; it stays incomplete for the
    serving layer (finish_reason "stop", tests/test_serving_announce.py)."""
    cls = _detector(name)
    tools = _sglang_tools()
    text = "<tool_call><function=run><parameter=line>echo hi"
    r = cls().detect_and_parse(text, tools)
    assert r.normal_text == ""
    assert [(c.name, json.loads(c.parameters)) for c in r.calls] == [("run", {"line": "echo hi"})]
    for seed in range(3):
        det = cls()
        assert _stream_message(det, text, tools, seed) == ("", [("run", r.calls[0].parameters)])
        assert det.incomplete_tool_call_indices == {0}


def test_incomplete_block_no_closing_tag():
    """SGLang's minimax test of that name, our input: a block the output
    ended in, after a complete parameter. Nothing of it is lost and both
    paths agree: the call as far as it was written (closed into JSON),
    never as a completed call. (SGLang's own one-shot returns the block as
    text with no call while its streaming has sent the call:
    tests/test_sglang_pinned.py strict xfail.)"""
    cls = _detector("minimax-m2_native")
    tools = _sglang_tools()
    text = 'Looking.<minimax:tool_call>\n<invoke name="run">\n<parameter name="line">ls -a</parameter>'
    r = cls().detect_and_parse(text, tools)
    assert r.normal_text == "Looking."
    assert [(c.name, json.loads(c.parameters)) for c in r.calls] == [("run", {"line": "ls -a"})]
    det = cls()
    assert _stream_message(det, text, tools, 1) == ("Looking.", [("run", r.calls[0].parameters)])
    assert det.incomplete_tool_call_indices == {0}


def test_unclosable_arguments_are_left_as_generated():
    """A call cut off where no closing makes JSON (a key without its value)
    keeps the arguments as generated, one-shot as streamed."""
    cls = _detector("qwen25_native")
    tools = _sglang_tools()
    text = '<tool_call>\n{"name": "run", "arguments": {"line": "a", "n": '
    r = cls().detect_and_parse(text, tools)
    assert [(c.name, c.parameters) for c in r.calls] == [("run", '{"line": "a", "n": ')]
    assert _stream_message(cls(), text, tools, 2) == ("", [("run", '{"line": "a", "n": ')])


@pytest.mark.parametrize("args,suffix", [
    ('{"a": "xy', '"}'), ('{"a": [1, {"b": 2', "}]}"), ('{"a": 1', "}"), ("{", "}"), ('{"a": "x\\', ""),
    ('{"a', ""), ('{"a": ', ""), ('{"a": 1, ', ""), ('{"a": 1}', ""), ("", ""), ('{"a": "}{"', "}"),
])
def test_closing_suffix(args, suffix):
    pytest.importorskip("sglang")
    from sglang_toolparse.sglang_adapter import closing_suffix

    assert closing_suffix(args) == suffix


def _serving_chat():
    import serving_stub  # noqa: F401  (SGLang's torchvision import, served by a placeholder)
    from sglang.srt.entrypoints.openai import serving_chat

    return serving_chat


def test_serving_hook_stands_down_on_unexpected_code(caplog, monkeypatch):
    pytest.importorskip("sglang")
    from sglang_toolparse import serving_finish

    class Other:
        def _process_tool_calls(self, text, tools, finish_reason):
            return None

    module = type("M", (), {"OpenAIServingChat": Other})
    assert serving_finish.patch(module) is False
    assert Other._process_tool_calls.__name__ == "_process_tool_calls"
    assert not getattr(Other._process_tool_calls, "_toolparse_hook", False)
    assert "stands down" in caplog.text
    # imported before the switch is turned off: a plugin registered by an
    # earlier test installs its hook on that import, as a server would
    serving_chat = _serving_chat()
    monkeypatch.setenv(serving_finish.SWITCH, "0")

    assert serving_finish.patch(type("M", (), {"OpenAIServingChat": serving_chat.OpenAIServingChat})) is False


def test_serving_hook_is_installed_by_the_plugin():
    pytest.importorskip("sglang")
    from sglang_toolparse.sglang_plugin import register

    register()
    serving_chat = _serving_chat()

    assert getattr(serving_chat.OpenAIServingChat._process_tool_calls, "_toolparse_hook", False)


@pytest.mark.parametrize("text", [
    "<think>\n<tool_call>\n{\"nol_c<|toolk",  # fuzz/regress/trinity--think-tag-then-cut-off-call-raw-text
    "Hi <think>x</think><tool_call>\n{\"name\": \"get_we",
    "<tool_call><think>\n{\"na</think>me\"",
])
def test_trinity_cut_off_call_text_is_what_the_engine_saw(text):
    """Trinity takes <think>/</think> out before the Qwen2.5 engine; a call
    cut off before its announcement comes back as the text the engine saw
    (the tags removed, nothing repeated), at every split."""
    want = text.replace("<think>", "").replace("</think>", "")
    one = check_lossless("trinity", text, [text])
    assert (one.text.lstrip(), one.calls, [e.code for e in one.errors]) == (want.lstrip(), [], ["unterminated"])
    for chunks in every_split(text):
        assert streamed("trinity", chunks) == one, chunks
