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
from support import every_split, merge
from sglang_toolparse._core import formats
from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, Dropped, Markup, ParseError, Reasoning, Text
from sglang_toolparse.api import StreamParser, ToolCall, collect, parse

TOOL_NAMES = ["get_weather", "search", "f"]


def stream_events(fmt, chunks, tools=None, **options):
    """The events, Markup ones included (check_tiled reads them)."""
    p = StreamParser(fmt, tools, markup=True, **options)
    events = []
    for c in chunks:
        events += p.feed(c)
    return events + p.finish()


def streamed(fmt, chunks, tools=None):
    return collect(stream_events(fmt, chunks, tools))


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


def marker_stems(fmt):
    """What makes a marker of `fmt`: its markers without a closing `>` (DSML
    reads its block opener so), and for DSML any tag that starts with the
    `<｜DSML｜` special token (every DSML parser reads every spelling)."""
    stems = {m.rstrip(">") for m in spec(fmt).markers}
    return stems | {m[:m.index(D) + len(D)] for m in stems if D in m}


def utf8(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def check_accounted(fmt, text, events, one, tools=None):
    """Every input byte is in exactly one of: a Text (or Reasoning) event,
    a call's span (its markup, name and arguments as the model wrote them,
    from its first marker to its end or to its error's raw span), or an
    error's raw span (ParseError.raw at raw_offset). Checked here, from the
    core's offsets and the event order, for any format:
    * each raw span is the input's bytes at its offset, spans in order and
      disjoint, and the stream's Dropped pieces are the input's bytes at
      their offsets (collect() joins them per error: compared with the
      one-shot result by the caller);
    * text never overlaps a raw span: the text streamed before a Dropped
      piece lies before it in the input, the text after it after it, and
      the whole text is a subsequence of the input less the raw spans.
    Not checked yet (gaps found: see docs/SEMANTICS.md): that the bytes
    neither text nor raw are only markup of calls."""
    b = utf8(text)
    filtered = spec(fmt).filtered

    if filtered:  # the input less the tags its filter takes out tiles
        check_filtered(b, filtered, one)
        view, rm = filtered_view(b, filtered)
        check_tiled(fmt, view, [
            Dropped(ev.index, ev.offset - rm[ev.offset], ev.raw) if type(ev) is Dropped
            else Markup(ev.offset - rm[ev.offset], ev.raw) if type(ev) is Markup else ev for ev in events])
        return
    check_tiled(fmt, b, events)

    def span(off, raw):
        """the input's bytes of `raw` at `off`; its end"""
        return b[off:off + len(raw)], off + len(raw)

    end = 0
    rest = []
    for e in one.errors:
        if e.raw_offset is None:
            assert e.raw == "", e
            continue
        raw = utf8(e.raw)
        got, stop = span(e.raw_offset, raw)
        assert e.raw and e.raw_offset >= end and got == raw, (e, text)
        rest.append(b[end:e.raw_offset])
        end = stop
    rest = b"".join(rest) + b[end:]
    before = ""
    for ev in events:
        if type(ev) in (Text, Reasoning):
            before += ev.text
        elif type(ev) is Dropped:
            raw = utf8(ev.raw)
            assert span(ev.offset, raw)[0] == raw, (ev, text)
            assert is_subsequence(utf8(before), b[:ev.offset]), (ev, before, text)
    after = ""
    for ev in reversed(events):
        if type(ev) in (Text, Reasoning):
            after = ev.text + after
        elif type(ev) is Dropped:
            assert is_subsequence(utf8(after), b[span(ev.offset, utf8(ev.raw))[1]:]), (ev, after, text)
    text_out = "".join(ev.text for ev in events if type(ev) in (Text, Reasoning))
    assert is_subsequence(utf8(text_out), rest), (text_out, rest)


def wildcard_match(seg: bytes, parts) -> bool:
    """`seg` is the literals of `parts` in order, with anything where a
    `None` (a call) stands between them, and nothing else."""
    pat = []  # literals merged, stars merged
    for x in parts:
        if x is None:
            if not pat or pat[-1] is not None:
                pat.append(None)
        elif pat and pat[-1] is not None:
            pat[-1] += x
        else:
            pat.append(x)
    if not pat:
        return seg == b""
    if None not in pat:
        return seg == pat[0]
    lo, hi = 0, len(seg)
    if pat[0] is not None:
        if not seg.startswith(pat[0]):
            return False
        lo = len(pat[0])
        pat = pat[1:]
    if pat[-1] is not None:
        if not seg.endswith(pat[-1]) or hi - len(pat[-1]) < lo:
            return False
        hi -= len(pat[-1])
        pat = pat[:-1]
    for lit in pat:  # the middle literals, leftmost (stars on both sides)
        if lit is None:
            continue
        k = seg.find(lit, lo, hi)
        if k < 0:
            return False
        lo = k + len(lit)
    return True


GAP_EVENTS = (CallStart, ArgsDelta, CallEnd)

# Formats that still consume some markup without a call and without an
# error that carries it (docs/SEMANTICS.md, "Dropped text", known gaps).
# The tiling check is skipped for them; every other format is checked
# exactly.
# fuzz/fuzz_core.c exempts the same names (UNTILED there).
UNTILED: set = set()  # none: every format tiles


def check_tiled(fmt, b, events):
    """The stream tiles the input: its text (and reasoning) runs, its
    Dropped and Markup pieces (at their offsets: an error's raw text, the
    message's framing) and its calls cover every input byte,
    in order. Text runs between two pieces with no call between them are
    the input's bytes there, contiguous; bytes neither text nor dropped lie
    only where a call's events stand in the stream (its markup, name,
    arguments and the template whitespace around it). So markup that made
    no call (a stray closer, a partial marker left at the end) must be text
    or in an error's dropped text, and markup next to no call's events (a
    block's end tag after prose inside the block) a Markup event, which
    anchors like a Dropped piece. Chunk-invariant by construction: text
    runs are joined across event boundaries."""
    if fmt in UNTILED:
        return
    pos, parts = 0, []
    open_calls = set()  # a call's events stand for the bytes of its extent

    def close(end, what):
        seg = b[pos:end]
        assert end >= pos, ("pieces overlap", what, pos)
        assert wildcard_match(seg, parts), ("bytes neither text, dropped nor a call's", what, seg, parts)

    for ev in events:
        t = type(ev)
        if t in (Text, Reasoning):
            parts.append(utf8(ev.text))
        elif t in GAP_EVENTS or (t is ParseError and ev.index is not None):
            parts.append(None)
            if t is CallStart:
                open_calls.add(ev.index)
            elif t is not ArgsDelta:
                open_calls.discard(ev.index)
        elif t is Dropped or t is Markup:  # input bytes at their offset
            raw = utf8(ev.raw)
            assert b[ev.offset:ev.offset + len(raw)] == raw, (ev, b)
            close(ev.offset, ev)
            # (inside an open call, prose between its tags: the call's
            # markup lies on either side, docs/SEMANTICS.md "Dropped text")
            pos, parts = ev.offset + len(raw), [None] if open_calls else []
    close(len(b), "end of input")


def bare(s, marks):
    """`s` without whitespace and without the format's markers."""
    for m in marks:
        s = s.replace(m, "")
    return "".join(s.split())


def filtered_view(b, filtered):
    """The input less the tags a filter takes out (trinity), and for each
    input offset the bytes taken out before it (an event's offset in the
    view: offset - rm[offset])."""
    tags = [utf8(t) for t in filtered]
    view, rm, i = bytearray(), [], 0
    while i < len(b):
        t = next((t for t in tags if b.startswith(t, i)), None)
        rm += [i - len(view)] * (len(t) if t else 1)
        if t:
            i += len(t)
        else:
            view.append(b[i])
            i += 1
    rm.append(len(b) - len(view))
    return bytes(view), rm


def check_filtered(b, filtered, one):
    """A format whose input filter removes tags (trinity): the raw texts
    are the input less those tags, in order, and the text and raw texts
    together are a subsequence of it."""
    for t in filtered:
        b = b.replace(utf8(t), b"")
    at = 0
    for e in one.errors:
        if e.raw:
            k = b.find(utf8(e.raw), at)
            assert k >= 0, (e, b)
            at = k + len(utf8(e.raw))


def check_lossless(fmt, text, chunks, tools=None):
    one = parse(fmt, text, tools)
    events = stream_events(fmt, chunks, tools)
    got = collect(events)
    assert got == one, (text, chunks)
    check_accounted(fmt, text, events, one, tools)
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


@pytest.mark.parametrize("text,raw,code", [
    # a refused call whose marker a removed tag splits: its raw text from
    # the marker's first byte in the input (it was at the view's offset,
    # inside the tag; trinity fuzz finding, fuzz/regress/trinity--marker-split-by-think-tag-raw-offset)
    ('Hi <tool_<think>call>\n{"name": "nope", "arguments": {}}\n</tool_call> ok',
     ' <tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>', "unknown_tool"),
    # an error after a removed tag: at the input's byte
    ('Hi <think></think><tool_call>\n{"name": "f", "arguments": {"a": x}}\n</tool_call> ok', "x}}\n</tool_call>",
     "json_syntax"),
])
def test_trinity_offsets_are_the_inputs(text, raw, code):
    """Trinity's engine reads the input less <think>/</think>; the offsets
    of its errors and dropped text are the input's (the byte the view's
    byte was), the raw text the view's, at every split."""
    one = check_lossless("trinity", text, [text], TOOL_NAMES)
    (e,) = one.errors
    view = text.replace("<think>", "").replace("</think>", "")
    assert (e.code, e.raw) == (code, raw)
    head = raw.lstrip()[:5]
    assert text[e.raw_offset:].lstrip().startswith(head) and view.index(raw) == e.raw_offset - (
        text[:e.raw_offset].count("<think>") * 7 + text[:e.raw_offset].count("</think>") * 8)
    for chunks in list(every_split(text)) + [list(text)]:
        assert collect(stream_events("trinity", chunks, TOOL_NAMES)) == one, chunks


# ---- dropped text: each kind, every split (ParseError.raw) ------------------

DSB, DSE = "<\uff5ctool\u2581calls\u2581begin\uff5c>", "<\uff5ctool\u2581calls\u2581end\uff5c>"
DSCB, DSCE, DSS = "<\uff5ctool\u2581call\u2581begin\uff5c>", "<\uff5ctool\u2581call\u2581end\uff5c>", "<\uff5ctool\u2581sep\uff5c>"
M3NS = "]<]minimax[>["  # MiniMax-M3's namespace token

DROPPED = [
    # (id, format, text, options, expected text, expected calls, [(code, raw)])
    ("refused-unknown-tool", "qwen25", 'Hi <tool_call>\n{"name": "nope", "arguments": {"a": 1}}\n</tool_call> bye', {},
     "Hi bye", [], [("unknown_tool", ' <tool_call>\n{"name": "nope", "arguments": {"a": 1}}\n</tool_call>')]),
    ("refused-missing-name", "qwen25", 'Hi <tool_call>\n{"arguments": {"a": 1}}\n</tool_call> bye', {},
     "Hi bye", [], [("missing_name", ' <tool_call>\n{"arguments": {"a": 1}}\n</tool_call>')]),
    # broken after its announcement: the call keeps what was streamed (and the
    # bytes its scanner read), the error the rest up to the end tag
    ("broken-after-announce", "hermes", 'Hi <tool_call>{"name": "f", "arguments": {"a": 1, "b": tru}}</tool_call> bye', {},
     "Hi bye", [("f", '{"a": 1, "b": ', False)], [("json_syntax", "}}</tool_call>")]),
    ("call-limit", "qwen25", '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n'
     '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', {"max_calls": 1},
     "", [("f", "{}", True)], [("call_limit", '\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')]),
    # no end tag: the skip (tp_resync.c) ends with the broken value's object
    ("resync", "llama3", '{"name": "f", "parameters": {"a": [1, oops, {"b": "]"}]}} then prose', {},
     " then prose", [("f", '{"a": [1, ', False)], [("json_syntax", 'oops, {"b": "]"}]}}')]),
    ("refused-no-end-tag", "llama3", 'Ok. <|python_tag|>{"name": "nope", "parameters": {}}; {"name": "f", "parameters": {}}', {},
     "Ok.", [("f", "{}", True)], [("unknown_tool", ' <|python_tag|>{"name": "nope", "parameters": {}}')]),
    # in a section: the refused call's text up to the next call's marker
    ("section", "kimi_k2", "Go." + KB + kcall("functions.nope:0", "{}") + kcall("functions.f:1", '{"a": 1}') + KE, {},
     "Go.", [("f", '{"a": 1}', True)], [("unknown_tool", KB + kcall("functions.nope:0", "{}"))]),
    ("dsml-invoke", "deepseekv32", "Go.<{D}function_calls>\n<{D}invoke name=\"nope\">\n<{D}parameter name=\"a\" "
     "string=\"true\">x</{D}parameter>\n</{D}invoke>\n<{D}invoke name=\"f\">\n</{D}invoke>\n</{D}function_calls>"
     .format(D=D), {}, "Go.", [("f", "{}", True)],
     [("unknown_tool", "<{D}function_calls>\n<{D}invoke name=\"nope\">\n<{D}parameter name=\"a\" string=\"true\">x"
       "</{D}parameter>\n</{D}invoke>\n".format(D=D))]),
    ("glm", "glm47", "Go.<tool_call>nope<arg_key>a</arg_key><arg_value>1</arg_value></tool_call> done", {},
     "Go. done", [], [("unknown_tool", "<tool_call>nope<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>")]),
    ("xml", "qwen3_coder", "Go.\n<tool_call>\n<function=nope>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>\ndone",
     {}, "Go.\ndone", [],
     [("unknown_tool", "\n<tool_call>\n<function=nope>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>")]),
    # a list of calls: from the list's `[` (its first call's) through the
    # list's `, ` or `]` after its `)` (markup of no call), to the next call
    # LFM2: a block that closes with no call (an empty list) is markup of
    # no call, with the blank held before it
    ("lfm2-empty-list", "lfm2", "Hi <|tool_call_start|>[]<|tool_call_end|> there", {}, "Hi there", [],
     [("bad_markup", " <|tool_call_start|>[]<|tool_call_end|>")]),
    # its JSON form: the blank after a bare object is the block's (it came
    # out as text after the junk's raw text, with a cut-off opener after it;
    # fuzz/regress/lfm2--json-form-blank-before-junk-then-cut-off-opener)
    ("lfm2-json-blank-before-junk-then-cut-off-opener", "lfm2",
     'a<|tool_call_start|>{"name": "f", "arguments": {}} x<|tool_call_end|> b <|tool_call_start|>', {},
     "a b <|tool_call_start|>", [("f", "{}", True)], [("trailing_content", "x<|tool_call_end|>"), ("unterminated", "")]),
    # Mistral: a malformed head (`[{` after a name) hands nothing over to
    # the array form: the blank held before its marker is in the raw text
    # only, not in the text as well
    ("mistral-bad-head-array", "mistral", 'Hi [TOOL_CALLS]f[ARGL] [{"name": "f", "arguments": {}}]', {},
     'Hi"name": "f", "arguments": {}}]', [], [("bad_markup", " [TOOL_CALLS]f[ARGL] [{")]),
    # a refused call's text ends before the next call's marker (which
    # was in both; fuzz/regress/mistral--refused-id-then-call-marker-in-two-raws)
    ("mistral-refused-id-then-marker", "mistral", "a [TOOL_CALLS]nope[CALL_ID]x[TOOL_CALLS]", {},
     "a[TOOL_CALLS]", [], [("unknown_tool", " [TOOL_CALLS]nope[CALL_ID]x"), ("bad_markup", ""), ("unterminated", "")]),
    ("mistral-name-over-max-name", "mistral", "Hi [TOOL_CALLS]ffffffff[ARGS]{}", {"max_name": 4},
     "Hi", [], [("bad_name", " [TOOL_CALLS]ffffffff[ARGS]{}")]),
    ("pythonic-first", "pythonic", "[nope(a=1), f(a=2)]", {}, "", [("f", '{"a": 2}', True)],
     [("unknown_tool", "[nope(a=1), ")]),
    ("pythonic-only", "pythonic", "[nope(a=1)] ok", {}, " ok", [], [("unknown_tool", "[nope(a=1)]")]),
    ("pythonic-later", "pythonic", "Hi [f(a=1), nope(b=[2, 3]), f()] bye", {}, "Hi bye",
     [("f", '{"a": 1}', True), ("f", "{}", True)], [("unknown_tool", "nope(b=[2, 3]), ")]),
    # a call broken inside its arguments: its text runs past the `)` the skip
    # counts to (as a refused call's does) to the next call or error
    # (property-test finding: overlapping raw spans; the trailing `]` is text
    # because the second skip, from `emoji`, counts the `)` as the list's end)
    ("pythonic-broken-then-error", "pythonic",
     "Done.\n\nAnything else?[get_weather(nested={'a': [{'b':'c': []}}]}, emoji='\U0001F600 \u00e9\u4e2d')]", {},
     "Done.\n\nAnything else?]", [("get_weather", '{"nested": {"a": [{"b": "c"', False)],
     [("json_syntax", ": []}}]}, "), ("bad_markup", "emoji='\U0001F600 \u00e9\u4e2d')")]),
    ("pythonic-broken-then-call", "pythonic", "[f(a=1:2), f(b=2)] ok", {}, " ok",
     [("f", '{"a": 1', False), ("f", '{"b": 2}', True)], [("bad_markup", ":2), ")]),
    # a call's name cut off by the end in a list: unterminated, its bytes
    # (with the blanks after the name) the error's dropped text, after a
    # call's end or a broken call's dropped text alike (random-seed fuzz
    # finding: they were in nothing)
    ("pythonic-name-cut-off-after-broken-call", "pythonic", "[f(a=1:2), nam ", {}, "",
     [("f", '{"a": 1', False)], [("bad_markup", ":2), "), ("unterminated", "nam ")]),
    ("pythonic-name-cut-off-after-call", "pythonic", "Hi [f(a=1), nam", {}, "Hi",
     [("f", '{"a": 1}', True)], [("unterminated", "nam")]),
    # a held `[NAME(` that is prose, then a blank and a refused list: the
    # blank goes with the refused list's text (it was in nothing: the prose
    # was text at an unknown offset; random-seed fuzz finding)
    ("pythonic-prose-prefix-then-blank-refused-list", "pythonic", "See [fW(and [nope(b=1)] ok", {},
     "See [fW(and ok", [], [("unknown_tool", " [nope(b=1)]")]),
    ("pythonic-refused-broken-then-call", "pythonic", "[nope(a=(1)), f(b=2)]", {}, "",
     [("f", '{"b": 2}', True)], [("unknown_tool", "[nope(a=(1)), ")]),
    # a bare word over max_buffer: the error at the start of the character
    # that did not fit (random-seed fuzz finding, small limits)
    ("pythonic-word-over-max-buffer-at-character-start", "pythonic", "[f(a=x" + "\u00e9" * 40 + ")] ok",
     {"max_buffer": 64}, " ok", [("f", '{"a": ', False)], [("buffer_limit", "\u00e9" * 9 + ")]")]),
    # a call head read undecided is at most 4096 bytes (the dropped-text
    # ring): past it (blanks after a name) it made no call, at a stream
    # offset; its text was dropped one-shot and lost streamed (random-seed
    # fuzz finding, the CI slice's streamed != one-shot)
    # a blank run after an array's element too long to hold is text (as
    # any longer run): the array ended there as before prose, so its `]`
    # is text and an end tag after it a stray one (the `]` was in
    # nothing: random-seed fuzz finding)
    ("jsonarray-long-blank-run-then-close", "jsonarray", '[{"name": "f", "arguments": {}}' + " " * 4100 + "] ok",
     {}, " " * 4100 + "] ok", [("f", "{}", True)], []),
    ("apertus-long-blank-run-then-close", "apertus2509",
     'Hi <|tools_prefix|>[{"f": {"a": 1}}' + "\n" * 4100 + "]<|tools_suffix|> ok", {}, "Hi" + "\n" * 4100 + "] ok",
     [("f", '{"a": 1}', True)], [("bad_markup", "<|tools_suffix|>")]),
    # a name over max_name: the whitespace held before the marker is the
    # refused call's (its raw record starts with it), not text too (it was
    # in both: random-seed fuzz finding, csrc/tp_dropped.c)
    ("glm-name-over-max-name-after-held-blank", "glm47",
     "Sure! <tool_call>" + "x" * 1100 + "<arg_key>q</arg_key><arg_value>1</arg_value></tool_call> ok", {},
     "Sure! ok", [], [("bad_name", " <tool_call>" + "x" * 1100 + "<arg_key>q</arg_key><arg_value>1</arg_value></tool_call>")]),
    ("pythonic-head-blanks-past-drop-ring", "pythonic", "[nope" + " " * 4100 + "(a=1)] ok", {},
     "[nope" + " " * 4100 + "(a=1)] ok", [], []),
    ("pythonic-name-blanks-past-drop-ring-in-list", "pythonic", "[f(a=1), nope" + " " * 4100 + "(a=1)] ok", {},
     " ok", [("f", '{"a": 1}', True)], [("bad_markup", "nope" + " " * 4100 + "(a=1)]")]),
    # a keyword over max_name: the error at the start of the character that
    # did not fit, so its dropped text is whole characters (fuzz finding)
    ("pythonic-key-over-max-name-at-character-start", "pythonic", "[f(a=1), f(a" + "\u00e9" * 600 + "=1)]", {}, "",
     [("f", '{"a": 1}', True), ("f", "{", False)], [("bad_name", "\u00e9" * 89 + "=1)]")]),
    ("harmony-recipient", "gpt_oss", "<|channel|>commentary to=functions.nope <|constrain|>json<|message|>"
     "{\"a\": 1}<|call|>", {}, "", [],
     [("unknown_tool", "<|channel|>commentary to=functions.nope <|constrain|>json<|message|>{\"a\": 1}<|call|>")]),
    # Harmony: a header the stream ends in is reported with its bytes; a
    # text message's header and stop token are Markup (the message's framing)
    ("harmony-cut-off-header", "gpt_oss", "<|start|>assistant<|channel|>final<|message|>Hi<|end|> <|start|>assist",
     {}, "Hi", [], [("unterminated", " <|start|>assist")]),
    # Mistral's pre-v11 array form: fmt_deepseek.c reads [TOOL_CALLS] and
    # hands the rest of the chunk over to fmt_jsontag.c's array row
    # mid-chunk; the raw text is still the input's bytes at raw_offset
    # (the handover moves the chunk together with its stream offset)
    ("mistral-array-broken", "mistral", 'Hi [TOOL_CALLS][{"name": "f", "arguments": {}, oops}, '
     '{"name": "f", "arguments": {"a": 1}}]', {}, "Hi", [("f", "{}", False), ("f", '{"a": 1}', True)],
     [("json_syntax", "oops}")]),
    ("mistral-array-refused", "mistral", 'Hi [TOOL_CALLS] [{"name": "nope", "arguments": {"a": 1}}, '
     '{"name": "f", "arguments": {}}]', {}, "Hi", [("f", "{}", True)],
     [("unknown_tool", ' [TOOL_CALLS] [{"name": "nope", "arguments": {"a": 1}}')]),
    # an array row with an end tag (apertus, cohere): a refused call's text
    # ends with its object (the row reads on after it), also when what
    # follows turns out to be prose; the end tag after that prose is markup
    # of no call (bad_markup)
    ("array-end-tag-refused-then-prose", "apertus2509", 'Ok <|tools_prefix|>[{"nope": {"a": 1}}, {7}]<|tools_suffix|> done',
     {}, "Ok, {7}] done", [], [("unknown_tool", ' <|tools_prefix|>[{"nope": {"a": 1}}'),
                               ("bad_markup", "<|tools_suffix|>")]),
    # markup of no call (issue 18): an end marker that closes nothing, a
    # section with no call, a partial marker that cut-off markup ends with
    ("stray-end-tag-in-prose", "qwen25", "Hi </tool_call> there", {}, "Hi  there", [],
     [("bad_markup", "</tool_call>")]),
    ("stray-end-tag-after-call", "qwen25", '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n</tool_call> ok',
     {}, " ok", [("f", "{}", True)], [("bad_markup", "\n</tool_call>")]),
    ("stray-end-tag-glm", "glm47", "a</tool_call> b", {}, "a b", [], [("bad_markup", "</tool_call>")]),
    ("empty-section-v3", "deepseekv3", "a" + DSB + DSE + "b", {}, "ab", [], [("bad_markup", DSB + DSE)]),
    ("empty-section-kimi", "kimi_k2", "a" + KB + KE + "b", {}, "ab", [], [("bad_markup", KB + KE)]),
    ("empty-block-dsml", "deepseekv32", "a<{D}function_calls>\n</{D}function_calls>b".format(D=D), {}, "ab", [],
     [("bad_markup", "<{D}function_calls>\n</{D}function_calls>".format(D=D))]),
    ("partial-marker-after-call-v3", "deepseekv3", "a" + DSB + DSCB + "function" + DSS + "f\n```json\n{}\n```" + DSCE
     + "<\uff5ctool", {}, "a", [("f", "{}", True)], [("unterminated", "<\uff5ctool")]),
    ("cut-fence-after-call-v3", "deepseekv3", "a" + DSB + DSCB + "function" + DSS + "f\n```json\n{}\n``", {}, "a",
     [("f", "{}", True)], [("unterminated", "``")]),
    ("partial-token-after-call-kimi", "kimi_k2", "a" + KB + kcall("functions.f:0", "{}") + "<|tool_ca", {}, "a",
     [("f", "{}", True)], [("unterminated", "<|tool_ca")]),
    ("partial-tag-after-invoke-dsml", "deepseekv32", "a<{D}function_calls>\n<{D}invoke name=\"f\">\n</{D}invoke>\n</{D}func"
     .format(D=D), {}, "a", [("f", "{}", True)], [("unterminated", "</{D}func".format(D=D))]),
    ("pythonic-only-after-prose", "pythonic", "Let me look.\n\n[nope()] ok", {}, "Let me look. ok", [],
     [("unknown_tool", "\n\n[nope()]")]),
    # Gemma 4: a name ended by the block's end tag instead of `{` (fuzz
    # finding: the error had no text, the call's bytes were in nothing)
    ("gemma4-name-then-end-tag", "gemma4", "a<|tool_call>call:f[}<tool_call|>b", {}, "ab", [],
     [("bad_markup", "<|tool_call>call:f[}<tool_call|>")]),
    ("gemma4-empty-block", "gemma4", "a<|tool_call>  <tool_call|>b", {}, "ab", [],
     [("bad_markup", "<|tool_call>  <tool_call|>")]),
    ("gemma4-partial-tag-after-call", "gemma4", "a<|tool_call>call:f{a:1}<tool_ca", {}, "a",
     [("f", '{"a": 1}', True)], [("unterminated", "<tool_ca")]),
    # a refused element of a JSON array: its text runs through the array's
    # `,`/`]`/end tag (markup of no call) to the next element or the text
    ("array-refused-only-element", "jsonarray", '[{"name": "nope", "parameters": {}}] ok', {}, " ok", [],
     [("unknown_tool", '[{"name": "nope", "parameters": {}}]')]),
    ("array-refused-then-call", "jsonarray", '[{"name": "nope", "parameters": {}}, {"name": "f", "parameters": {}}]',
     {}, "", [("f", "{}", True)], [("unknown_tool", '[{"name": "nope", "parameters": {}}')]),
    ("array-broken-element", "jsonarray", '[{"name": "f", "parameters": {}, oops} ] x', {}, " x",
     [("f", "{}", False)], [("json_syntax", "oops} ]")]),
    ("array-end-tag-refused-only", "cohere_command4", '<|START_ACTION|>[\n {"tool_call_id": "0", "tool_name": "nope", '
     '"parameters": {}}\n]<|END_ACTION|>Sure', {}, "Sure", [],
     [("unknown_tool", '<|START_ACTION|>[\n {"tool_call_id": "0", "tool_name": "nope", "parameters": {}}\n]<|END_ACTION|>')]),
    # a section cut off before its first call: as a call cut off before its
    # announcement, its text is text (and `unterminated`)
    ("cut-empty-section-v3", "deepseekv3", "a" + DSB, {}, "a" + DSB, [], [("unterminated", "")]),
    ("cut-empty-section-kimi", "kimi_k2", "a" + KB, {}, "a" + KB, [], [("unterminated", "")]),
    ("cut-empty-block-gigachat35", "gigachat35", "a<\uff5cGCML\uff5ctool_calls", {}, "a<\uff5cGCML\uff5ctool_calls", [],
     [("unterminated", "")]),
    # a key over its limit (max_name) mid-character: the error and its raw
    # text start at the character that crosses it (whole characters)
    ("key-limit-mid-character-xml", "qwen3_coder", "Go.<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n"
     "<parameter=a" + "\u00e9" * 8 + ">\n1\n</parameter>\n</function>\n</tool_call> done", {"max_name": 16},
     "Go. done", [("f", '{"x": "1"', False)], [("buffer_limit", "\u00e9>\n1\n</parameter>\n</function>\n</tool_call>")]),
    ("key-limit-mid-character-glm", "glm47", "Go.<tool_call>f<arg_key>x</arg_key><arg_value>1</arg_value><arg_key>a"
     + "\u00e9" * 8 + "</arg_key><arg_value>1</arg_value></tool_call> done", {"max_name": 16},
     "Go. done", [("f", '{"x": 1', False)], [("buffer_limit", "\u00e9</arg_key><arg_value>1</arg_value></tool_call>")]),
    ("key-limit-mid-character-gemma4", "gemma4", "Go.<|tool_call>call:f{x:1,a" + "\u00e9" * 8 + ":1}<tool_call|> done",
     {"max_name": 16}, "Go. done", [("f", '{"x": 1', False)], [("bad_name", "\u00e9:1}<tool_call|>")]),
    # prose after a refused invoke that begins with a partial namespace token
    # (held, then released as text while `]<` is still held): the raw text
    # ends where the prose begins, also fed byte by byte (fuzz finding)
    ("nsxml-held-ns-then-prose", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="nope">' + M3NS
     + "<a>1" + M3NS + "</a>" + M3NS + "</invoke>\n]<]<x> done", {}, "Go.]<]<x> done", [],
     [("unknown_tool", M3NS + "<tool_call>\n" + M3NS + '<invoke name="nope">' + M3NS + "<a>1" + M3NS + "</a>" + M3NS
       + "</invoke>\n")]),
    # DSML tags run together after a malformed one (exempt from the tiling
    # check until these tiled)
    ("dsml-partial-tag-then-refused-invoke", "deepseekv32", "Go.<{D} <{D} invoke name=\"nope\">\n{{}}\n</{D} invoke> ok"
     .format(D=D), {}, "Go.<{D} ok".format(D=D), [],
     [("unknown_tool", " <{D} invoke name=\"nope\">\n{{}}\n</{D} invoke>".format(D=D))]),
    ("dsml-run-together-end-tags", "deepseekv32", "Go.<{D}function_calls>\n<{D}invoke name=\"f\">\n</{D}i{D}invoke>\n"
     "</{D}function_calls> ok".format(D=D), {}, "Go. ok", [],
     [("bad_markup", "<{D}function_calls>\n<{D}invoke name=\"f\">\n</{D}i{D}invoke>\n</{D}function_calls>".format(D=D))]),
    ("dsml-partial-end-tag-then-end-tag", "deepseekv41", "Go.<{D} calls>\n<{D} invoke name=\"f\">\n<{D} parameter "
     "name=\"a\" string=\"true\">v</{D} parameter>\n</{D} i</{D} invoke>\n</{D} calls> ok".format(D=D), {}, "Go. ok",
     # (the cut tag: prose inside the call, tests/test_call_prose.py)
     [("f", '{"a": "v"}', True)], [("bad_markup", "</{D} i".format(D=D))]),
    ("dsml-invoke-tag-run-together", "deepseekv4", "Go.<{D}tool_calls>\n<{D}invoke<{D}invoke name=\"f\">\n</{D}invoke>\n"
     "</{D}tool_calls> ok".format(D=D), {}, "Go. ok", [("f", "{}", True)],
     [("bad_markup", "<{D}tool_calls>\n<{D}invoke".format(D=D))]),
    ("gcml-partial-tag-then-refused-invoke", "gigachat35", "Go.<\uff5cGCML\uff5c<\uff5cGCML\uff5cinvoke name=\"nope\">{}"
     "</\uff5cGCML\uff5cinvoke> ok", {}, "Go.<\uff5cGCML\uff5c ok", [],
     [("unknown_tool", "<\uff5cGCML\uff5cinvoke name=\"nope\">{}</\uff5cGCML\uff5cinvoke>")]),
    # K2 Horizon's group tags that make no call (issue 18): a group with no
    # call, an opener before prose, a closer after prose, a stray closer; a
    # refused first call's text starts at the group opener
    # a Qwen3-Coder block opener that is prose, then blanks and a refused
    # block: the blanks go with the refused block's text (they were in
    # nothing: text at unknown offsets)
    ("qwen3-coder-prose-opener-blank-then-refused-block", "qwen3_coder",
     "a<tool_call> <tool_call>\n<function=nope>\n<parameter=x>1</parameter>\n</function>\n</tool_call> b", {},
     "a<tool_call> b", [],
     [("unknown_tool", " <tool_call>\n<function=nope>\n<parameter=x>1</parameter>\n</function>\n</tool_call>")]),
    # Kimi-K3: a refused invoke, then a partial section closer held across
    # chunks that turns out to be prose: the refused invoke's dropped text
    # ends where that prose begins (streamed byte by byte, the held bytes
    # were in both: random-seed fuzz finding)
    ("k3-refused-invoke-then-prose-like-closer", "kimi_k3",
     '<|open|>tools<|sep|><|open|>call tool="a b"<|sep|><|close|>call<|sep|>\n<|close|>tools<|close|>x', {},
     "<|close|>tools<|close|>x", [],
     [("unknown_tool", '<|open|>tools<|sep|><|open|>call tool="a b"<|sep|><|close|>call<|sep|>\n')]),
    # MiniMax-M3: an invoke left open, then an NS, a blank and another
    # invoke that is refused: its dropped text is as written, the blank
    # included (random-seed fuzz finding: it was the NS<invoke spelling)
    ("m3-unclosed-invoke-then-ns-blank-refused-invoke", "minimax_m3",
     M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">' + M3NS + "<a>1" + M3NS + "</a>\n" + M3NS
     + ' <invoke name="nope">' + M3NS + "</invoke>\n" + M3NS + "</tool_call> ok", {}, " ok",
     [("f", '{"a": "1"}', True)],
     [("unknown_tool", M3NS + ' <invoke name="nope">' + M3NS + "</invoke>\n" + M3NS + "</tool_call>")]),
    ("k2-group-no-call", "k2_horizon", "a <ifm|tool_calls>\n </ifm|tool_calls>\nb", {}, "a \nb", [],
     [("bad_markup", "<ifm|tool_calls>\n </ifm|tool_calls>")]),
    ("k2-group-opener-then-prose", "k2_horizon", "a <ifm|tool_calls>\n  hi </ifm|tool_calls>", {}, "a hi ", [],
     [("bad_markup", "<ifm|tool_calls>\n  "), ("bad_markup", "</ifm|tool_calls>")]),
    ("k2-stray-group-closer", "k2_horizon", "a </ifm|tool_calls> b", {}, "a  b", [],
     [("bad_markup", "</ifm|tool_calls>")]),
    ("k2-refused-first-call-in-group", "k2_horizon", "a\n<ifm|tool_calls>\n<ifm|tool_call>nope\n</ifm|tool_call>\n"
     "<ifm|tool_call>{\"name\": \"f\"}</ifm|tool_call>\n</ifm|tool_calls>", {}, "a\n", [("f", "{}", True)],
     [("unknown_tool", "<ifm|tool_calls>\n<ifm|tool_call>nope\n</ifm|tool_call>\n")]),
    ("k2-json-broken-arguments", "k2_horizon", '<ifm|tool_call>{"name": "f", "arguments": {"a": [1}}</ifm|tool_call> x',
     {}, " x", [("f", '{"a": [1', False)], [("json_syntax", "}}</ifm|tool_call>")]),
    # GLM rows with a wrapper block (Hunyuan): a block tag no call stands
    # next to is markup of no call; a block cut off before its first call
    # is text; a partial tag after a call is unterminated with its bytes
    ("hunyuan-empty-block", "hunyuan", "a<tool_calls>\n</tool_calls>b", {}, "ab", [],
     [("bad_markup", "<tool_calls>\n</tool_calls>")]),
    ("hunyuan-empty-block-os", "hunyuan_os", "a<tool_calls:opensource>\n</tool_calls:opensource>b", {}, "ab", [],
     [("bad_markup", "<tool_calls:opensource>\n</tool_calls:opensource>")]),
    ("hunyuan-prose-only-block", "hunyuan", "a <tool_calls>\nnote\n</tool_calls> b", {}, "a note b", [],
     [("bad_markup", "<tool_calls>\n"), ("bad_markup", "\n</tool_calls>")]),
    ("hunyuan-prose-tag-first", "hunyuan", "a<tool_calls> <tool_call>x y</tool_call>\n<tool_call>f</tool_call></tool_calls>",
     {}, "a<tool_call>x y</tool_call>", [("f", "{}", True)], [("bad_markup", "<tool_calls> ")]),
    ("hunyuan-cut-block", "hunyuan", "a<tool_calls>\n", {}, "a<tool_calls>\n", [], [("unterminated", "")]),
    # whether the blanks before a block opener that made no call are text
    # is decided by the block's record up to the prose alone (under
    # max_buffer here), not by where a chunk end found the record past it
    # (a call opener found to be prose later; a possible tag held across
    # the prose's start): random-seed and CI fuzz findings
    ("hunyuan-prose-call-opener-after-record-over-limit", "hunyuan_os",
     "Sure <tool_calls:opensource>\n<tool_call:opensource>lookup>\n<arg_key:opensour_weather<tool_sep:opensource>\n"
     "<arg_key:opensource>", {"max_buffer": 64, "max_name": 16},
     "Sure <tool_call:opensource>lookup>\n<arg_key:opensour_weather<tool_sep:opensource>\n<arg_key:opensource>", [],
     [("bad_markup", "<tool_calls:opensource>\n")]),
    ("hunyuan-held-tag-past-prose-start-record-at-limit", "hunyuan",
     "a" + " " * 9 + "<tool_calls>" + " " * 42 + "<to)l", {"max_buffer": 64},
     "a" + " " * 9 + "<to)l", [], [("bad_markup", "<tool_calls>" + " " * 42)]),
    # a call opener that was prose, its bytes ending in a blank, then
    # another block opener: the blank is text (it was in nothing)
    # the blank held before a call opener whose name fails is the refused
    # call's, also when its record stopped at max_buffer (streamed, a chunk
    # end found it over: the blank was in the dropped text and in the
    # text; random-seed fuzz finding, small limits)
    ("glm-row-refused-name-held-blank-record-over-limit", "spark25",
     " <tool_call>" + " " * 18 + "\n" * 42 + " " * 4 + "<tool_call>", {"max_buffer": 64, "max_name": 16},
     "<tool_call>", [], [("bad_name", " <tool_call>" + " " * 18 + "\n" * 42 + " " * 4), ("unterminated", "")]),
    ("hunyuan-prose-call-opener-blank-then-block-opener", "hunyuan",
     "c <tool_calls> <tool_call>xy </t <tool_calls> z", {},
     "c <tool_call>xy </t z", [], [("bad_markup", "<tool_calls> "), ("bad_markup", "<tool_calls> ")]),
    ("hunyuan-cut-block-in-name", "hunyuan", "a<tool_calls>\n<tool_call>f", {}, "a<tool_calls>\n<tool_call>f", [],
     [("unterminated", "")]),
    ("hunyuan-partial-tag-after-call", "hunyuan", "a<tool_calls>\n<tool_call>f<tool_sep>\n</tool_call>\n</tool_ca", {},
     "a", [("f", "{}", True)], [("unterminated", "</tool_ca")]),
    ("hunyuan-refused-only-call", "hunyuan", "Go. <tool_calls>\n<tool_call>nope<tool_sep>\n</tool_call>\n</tool_calls> ok",
     {}, "Go. ok", [], [("unknown_tool", " <tool_calls>\n<tool_call>nope<tool_sep>\n</tool_call>\n</tool_calls>")]),
    ("hunyuan-stray-end-tag-in-block", "hunyuan", "a<tool_calls>\n<tool_call>f<tool_sep>\n</tool_call>\n</tool_call>\n"
     "</tool_calls>b", {}, "ab", [("f", "{}", True)], [("bad_markup", "</tool_call>\n</tool_calls>")]),
    ("hunyuan-prose-then-block-end", "hunyuan", "a<tool_calls>\n<tool_call>f<tool_sep>\n</tool_call>\nx\n</tool_calls> b",
     {}, "ax b", [("f", "{}", True)], [("bad_markup", "\n</tool_calls>")]),
    # a prose tag's </tool_call> is text only inside its block: in the next
    # (empty) block it is the block's (found in review: it was text and raw)
    ("hunyuan-prose-tag-then-empty-block", "hunyuan", "a<tool_calls>\n<tool_call>x y</tool_call></tool_calls>"
     "<tool_calls></tool_call></tool_calls>b", {}, "a<tool_call>x y</tool_call>b", [],
     [("bad_markup", "<tool_calls>\n"), ("bad_markup", "</tool_calls>"),
      ("bad_markup", "<tool_calls></tool_call></tool_calls>")]),
    ("hunyuan-second-opener-empty", "hunyuan", "a<tool_calls>\n<tool_call>f<tool_sep>\n</tool_call>\n<tool_calls>\n"
     "</tool_calls>b", {}, "ab", [("f", "{}", True)], [("bad_markup", "<tool_calls>\n</tool_calls>")]),
    # MiniMax-M3: between invokes, a namespaced tag that opens no invoke
    # (or an NS with no tag) is markup of no call; the block's end after
    # prose too; a partial NS or tag after a call is unterminated
    ("nsxml-unknown-tag-between-invokes", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">'
     + M3NS + "</invoke>\n" + M3NS + "<zz>\n" + M3NS + "</tool_call> ok", {}, "Go. ok", [("f", "{}", True)],
     [("bad_markup", M3NS + "<zz>\n" + M3NS + "</tool_call>")]),
    ("nsxml-stray-closer-then-prose", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">'
     + M3NS + "</invoke>" + M3NS + "</invoke> x\n" + M3NS + "</tool_call> ok", {}, "Go.x ok", [("f", "{}", True)],
     [("bad_markup", M3NS + "</invoke> "), ("bad_markup", "\n" + M3NS + "</tool_call>")]),
    ("nsxml-ns-without-tag", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">'
     + M3NS + "</invoke>\n" + M3NS + " hm " + M3NS + '  <invoke name="f">' + M3NS + "</invoke>", {}, "Go.hm",
     [("f", "{}", True), ("f", "{}", True)], [("bad_markup", M3NS + " ")]),
    ("nsxml-partial-ns-after-call", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">'
     + M3NS + "</invoke>\n]<]mini", {}, "Go.", [("f", "{}", True)], [("unterminated", "]<]mini")]),
    ("nsxml-partial-tag-after-call", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">'
     + M3NS + "</invoke>\n" + M3NS + " </tool_ca", {}, "Go.", [("f", "{}", True)],
     [("unterminated", M3NS + " </tool_ca")]),
    # an NS in prose that started no call, its blank, then a refused block:
    # the blank is the refused call's (it was in nothing: token fuzz finding)
    ("nsxml-stray-ns-blank-then-refused-block", "minimax_m3", "a" + M3NS + " " + M3NS + "<tool_call>" + M3NS
     + '<invoke name="nope">' + M3NS + "</invoke>" + M3NS + "</tool_call> b", {}, "a" + M3NS + " b", [],
     [("unknown_tool", " " + M3NS + "<tool_call>" + M3NS + '<invoke name="nope">' + M3NS + "</invoke>" + M3NS
       + "</tool_call>")]),
    ("nsxml-refused-invoke-blanks-after-ns", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">'
     + M3NS + "</invoke>\n" + M3NS + ' <invoke name="nope">' + M3NS + "</invoke>\n" + M3NS + "</tool_call> ok", {},
     "Go. ok", [("f", "{}", True)],
     [("unknown_tool", M3NS + ' <invoke name="nope">' + M3NS + "</invoke>\n" + M3NS + "</tool_call>")]),
    # Muse: junk in a tool channel (prose, a tag that opens no invoke) is
    # bad_markup, its text running on to the next invoke or the channel's
    # terminator (the wrapper tag after it included); a partial tag the
    # stream ends with, and an invoke tag a terminator cuts, are
    # unterminated with their bytes (the framing is Markup: test_muse_golden.py)
    ("muse-junk-in-tool-channel", "muse", " to=f<|message|>oops <atem:function_calls>\n<atem:invoke name=\"f\">\n"
     "</atem:invoke>\n</atem:function_calls>trailing junk<|eom|> after", {}, " after", [("f", "{}", True)],
     [("bad_markup", "oops <atem:function_calls>\n"), ("bad_markup", "trailing junk")]),
    ("muse-tag-opens-no-invoke", "muse", " to=f<|message|>\n<atem:invokes name=\"f\"></atem:invoke>\n"
     "<atem:invoke>x</atem:invoke> <atem:invoke name=\"f\"></atem:invoke><|eot|>", {}, "", [("f", "{}", True)],
     [("bad_markup", "<atem:invokes name=\"f\"></atem:invoke>\n"), ("bad_markup", "<atem:invoke>x</atem:invoke> ")]),
    ("muse-partial-tag-at-the-end", "muse", " to=f<|message|><atem:invoke name=\"f\"></atem:invoke>\n</atem:func",
     {}, "", [("f", "{}", True)], [("unterminated", "</atem:func")]),
    ("muse-terminator-in-invoke-tag", "muse", " to=f<|message|>\n<atem:invoke name=\"se<|eom|>x", {}, "x", [],
     [("unterminated", "<atem:invoke name=\"se")]),
    ("muse-refused-last-invoke", "muse", " to=f<|message|><atem:invoke name=\"f\"></atem:invoke>\n"
     "<atem:invoke name=\"nope\"><atem:parameter name=\"a\">1</atem:parameter></atem:invoke>\n"
     "</atem:function_calls><|eom|>\n", {}, "\n", [("f", "{}", True)],
     [("unknown_tool", "<atem:invoke name=\"nope\"><atem:parameter name=\"a\">1</atem:parameter></atem:invoke>\n"
       "</atem:function_calls>")]),
    # a tag name over max_name ends at a character boundary: between
    # invokes the tag ends before the character that does not fit whole,
    # which is prose; in an invoke the error is at its start (the dropped
    # text was cut inside a character: random-seed fuzz finding)
    ("nsxml-tag-over-max-name-at-character-boundary", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS
     + '<invoke name="f">' + M3NS + "</invoke>\n" + M3NS + "<" + "\u00e9" * 600 + ">\n" + M3NS + "</tool_call> ok", {},
     "Go." + "\u00e9" * 88 + "> ok", [("f", "{}", True)],
     [("bad_markup", M3NS + "<" + "\u00e9" * 512), ("bad_markup", "\n" + M3NS + "</tool_call>")]),
    ("nsxml-invoke-tag-over-max-name-at-character-start", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS
     + '<invoke name="f">' + M3NS + "<" + "\u00e9" * 600 + ">1" + M3NS + "</invoke>\n" + M3NS + "</tool_call> ok", {},
     "Go. ok", [], [("buffer_limit", M3NS + "<tool_call>\n" + M3NS + '<invoke name="f">' + M3NS + "<" + "\u00e9" * 600
                     + ">1" + M3NS + "</invoke>\n" + M3NS + "</tool_call>")]),
    # a value's inner tag over max_buffer: the error at the start of the
    # character that did not fit (random-seed fuzz finding, small limits)
    ("nsxml-value-tag-over-max-buffer-at-character-start", "minimax_m3", "Go." + M3NS + "<tool_call>\n" + M3NS
     + '<invoke name="f">' + M3NS + "<a>" + M3NS + "<item xy" + " \u4e2d" * 30 + ">1" + M3NS + "</item>" + M3NS + "</a>"
     + M3NS + "</invoke>\n" + M3NS + "</tool_call> ok", {"max_buffer": 64}, "Go. ok", [("f", '{"a": ', False)],
     [("buffer_limit", "\u4e2d" + " \u4e2d" * 19 + ">1" + M3NS + "</item>" + M3NS + "</a>" + M3NS + "</invoke>\n" + M3NS
       + "</tool_call>")]),
    # a call cut off before its announcement whose text is longer than
    # max_buffer: its text is text (the raw record holds at least
    # TP_RAW_FLOOR + max_name bytes, more than any marker that may still be
    # prose; it was only reported, its bytes in nothing: small-limit fuzz
    # runs, which skipped the tiling check)
    ("cut-off-call-text-over-max-buffer-is-text", "hunyuan_os",
     "pre <tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>",
     {"max_buffer": 64, "max_name": 16},
     "pre <tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>",
     [], [("unterminated", "")]),
    ("cut-off-json-call-blanks-over-max-buffer-is-text", "qwen25", 'Go.<tool_call>\n{"name": "f",' + " " * 80,
     {"max_buffer": 64}, 'Go.<tool_call>\n{"name": "f",' + " " * 80, [], [("unterminated", "")]),
    # a refused element whose text before its name is longer than max_buffer
    ("refused-element-blanks-over-max-buffer", "jsonarray", 'Hi [{"name":' + " " * 100 + '"nope", "parameters": {}}] ok',
     {"max_buffer": 64}, "Hi ok", [], [("unknown_tool", ' [{"name":' + " " * 100 + '"nope", "parameters": {}}]')]),
]


@pytest.mark.parametrize("fmt,text,opts,exp_text,exp_calls,exp_errors", [c[1:] for c in DROPPED],
                         ids=[c[0] for c in DROPPED])
def test_dropped_text_is_the_errors_raw(fmt, text, opts, exp_text, exp_calls, exp_errors):
    one = parse(fmt, text, TOOL_NAMES, **opts)
    assert (one.text, calls_of(one), [(e.code, e.raw) for e in one.errors]) == (exp_text, exp_calls, exp_errors)
    for e in one.errors:
        if e.raw_offset is not None:
            assert utf8(text)[e.raw_offset:e.raw_offset + len(utf8(e.raw))] == utf8(e.raw)
    check_accounted(fmt, text, stream_events(fmt, [text], TOOL_NAMES, **opts), one, TOOL_NAMES)
    for chunks in list(every_split(text)) + [list(text)]:
        events = stream_events(fmt, chunks, TOOL_NAMES, **opts)
        assert collect(events) == one, chunks
        check_accounted(fmt, text, events, one, TOOL_NAMES)


def test_dropped_events_follow_their_error():
    """Streamed, the error comes when it is found, its text where the skip
    ends; collect() folds the pieces into the error; parse_all() gives the
    error with its raw text and no Dropped events."""
    text = 'a<tool_call>\n{"name": "nope", "arguments": {"x": "' + "y" * 50 + '"}}\n</tool_call>b'
    p = StreamParser("qwen25", TOOL_NAMES)
    events = []
    for k in range(0, len(text), 7):
        events += p.feed(text[k:k + 7])
    events += p.finish()
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "Text" and kinds[-1] == "Text" and kinds.index("ParseError") < kinds.index("Dropped")
    err = collect(events).errors[0]
    assert (err.raw, err.raw_offset) == (text[1:-1], 1)
    oneshot = StreamParser("qwen25", TOOL_NAMES).parse_all(text)
    assert not any(type(e) is Dropped for e in oneshot)
    assert [e for e in oneshot if type(e) is ParseError] == [err]
    assert err.with_raw("", None) == ParseError(None, "unknown_tool", err.offset, "nope")


# ---- markup next to no call (Markup events, markup=True) --------------------
# A block's end after prose inside the block (or after a refused invoke)
# closes the block: it is neither text nor an error's raw text, and no
# call's events stand next to it, so the parser reports it as a Markup
# event for the tiling check. Each case at every split.

XQ = "<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n"
XQN = "<tool_call>\n<function=nope>\n<parameter=a>\nv\n</parameter>\n</function>\n"
XM = '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">v</parameter>\n</invoke>\n'
XD = '<dots_function_call>\n<invoke name="f">\n<parameter name="a">v</parameter>\n</invoke>\n'
XMI = "<tool_call>\n<function=f>\n<parameter=a>v</parameter>\n</function>\n"
FV = [("f", '{"a": "v"}', True)]
XQN_RAW = ("unknown_tool", XQN)

MARKUP = [
    # (id, format, text, expected text, calls, [(code, raw)], [markup raw])
    ("prose-then-end-tag", "qwen3_coder", "Go." + XQ + "hello <\n</tool_call> bye",
     "Go.hello <\n bye", FV, [], ["</tool_call>"]),
    # the opener as the block's closer (Qwen3-Coder writes it) after prose
    ("prose-then-opener-closes", "qwen3_coder", "Go." + XQ + "hello <\n<tool_call>\nbye",
     "Go.hello <\n\nbye", FV, [], ["<tool_call>"]),
    ("refused-then-opener-closes", "qwen3_coder", "Go." + XQN + "<tool_call>\nbye", "Go.\nbye", [], [XQN_RAW],
     ["<tool_call>"]),
    ("refused-prose-then-end-tag", "qwen3_coder", "Go." + XQN + "hm</tool_call>\n", "Go.hm\n", [], [XQN_RAW],
     ["</tool_call>"]),
    # a refused invoke's dropped text runs on through the end tag (no Markup)
    ("refused-then-end-tag", "qwen3_coder", "Go." + XQN + "</tool_call> ok", "Go. ok", [],
     [("unknown_tool", XQN + "</tool_call>")], []),
    # prose, then another call in the block: its events stand there
    ("prose-then-call", "qwen3_coder", "Go." + XQ + "hm <tool_call>\n<function=f>\n</function>\n</tool_call>",
     "Go.hm", FV + [("f", "{}", True)], [], []),
    # a partial end tag at the end after prose is text
    ("prose-then-partial-end-tag", "qwen3_coder", "Go." + XQ + "hm</tool_ca", "Go.hm</tool_ca", FV, [], []),
    ("minimax-prose-then-end-tag", "minimax_m2", "Go." + XM + "so <b>\n</minimax:tool_call>bye",
     "Go.so <b>\nbye", FV, [], ["</minimax:tool_call>"]),
    ("dots-prose-then-end-tag", "dots", "Go." + XD + "so\n</dots_function_call>bye", "Go.so\nbye", FV, [],
     ["</dots_function_call>"]),
    ("mimo-prose-then-end-tag", "mimo", "Go." + XMI + "x</tool_call>", "Go.x", FV, [], ["</tool_call>"]),
    # no block: an end tag after prose closes nothing and is text
    ("minicpm5-stray-end-tag", "minicpm5", 'Go.<function name="f"><param name="a">v</param></function> x </function> y',
     "Go. x </function> y", FV, [], []),
]


def check_markup_case(fmt, text, exp_text, exp_calls, exp_errors, exp_markup):
    """One-shot text, calls and errors as expected; streamed whole, at every
    split and char by char: the same result, the expected Markup events,
    every byte accounted for and tiled (check_accounted)."""
    one = parse(fmt, text, TOOL_NAMES)
    assert (one.text, calls_of(one), [(e.code, e.raw) for e in one.errors]) == (exp_text, exp_calls, exp_errors)
    for chunks in [[text]] + list(every_split(text)) + [list(text)]:
        events = stream_events(fmt, chunks, TOOL_NAMES)
        assert collect(events) == one, chunks
        assert [m.raw for m in events if type(m) is Markup] == exp_markup, chunks
        check_accounted(fmt, text, events, one, TOOL_NAMES)


@pytest.mark.parametrize("fmt,text,exp_text,exp_calls,exp_errors,exp_markup", [c[1:] for c in MARKUP],
                         ids=[c[0] for c in MARKUP])
def test_markup_next_to_no_call(fmt, text, exp_text, exp_calls, exp_errors, exp_markup):
    check_markup_case(fmt, text, exp_text, exp_calls, exp_errors, exp_markup)
    # only on request: the default stream is unchanged
    p = StreamParser(fmt, TOOL_NAMES)
    assert not any(type(e) is Markup for e in p.feed(text) + p.finish())


# ---- junk inside a call section: never lost (every format with a renderer) --
# A call is a span in the tiling check, so bytes next to it that the parser
# skipped without an event could not be seen there: here a junk token the
# model writes inside a section (between calls, before the first call,
# after the last one) must come out whole, as text or in an error's raw
# text, streamed at any chunking as one-shot.

JUNK = "QJUNKQ"
RENDERED = [f for f in formats() if spec(f).render_call is not None]


@st.composite
def junk_responses(draw, fmt):
    s = spec(fmt)
    calls = draw(st.lists(st.tuples(st.sampled_from(TOOL_NAMES + ["nope"]), json_objects), min_size=1, max_size=3))
    rendered = [s.render_call(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]
    k = draw(st.integers(0, len(rendered)))  # before call k (k == len: after the last)
    pad = draw(st.sampled_from(["", " ", "\n", "\n\n "]))
    junk = pad + JUNK + draw(st.sampled_from(["", " ", "\n", " more text. "]))
    if k < len(rendered):
        rendered[k] = junk + rendered[k]
    else:
        rendered[-1] += junk
    return draw(st.sampled_from(["", "Sure. "])) + s.block(rendered) + draw(st.sampled_from(["", " Done."]))


@pytest.mark.parametrize("fmt", RENDERED)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_junk_inside_a_section_is_not_lost(fmt, data):
    text = data.draw(junk_responses(fmt))
    chunks = data.draw(chunkings(text))
    tools = data.draw(st.sampled_from([None, TOOL_NAMES]))
    one = check_lossless(fmt, text, chunks, tools)
    # (pythonic: junk written onto a name is that call's name)
    assert (JUNK in one.text or any(JUNK in (e.raw or "") for e in one.errors)
            or any(JUNK in c.name for c in one.calls)), (text, one)
    check_tiled(fmt, utf8(text), stream_events(fmt, chunks, tools))


# Golden cases, each at every split: prose the model wrote inside a call
# section (DeepSeek V3/V3.1, Kimi-K2, DSML) is text; before the section's
# first call it shows the section's opener made no call (bad_markup, the
# opener and the blanks after it its raw text; the whitespace before the
# opener is text); the section's end token after it is a Markup event; an
# end token there that closes no call is bad_markup. A refused call's raw
# text ends where such prose begins.

def _v31(n, a='{"a": 1}'):
    return DSCB + n + DSS + a + DSCE


def _v3(n, a='{"a": 1}'):
    return DSCB + "function" + DSS + n + "\n```json\n" + a + "\n```" + DSCE


KSB, KSE, KCB, KCE, KAB = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                           "<|tool_call_end|>", "<|tool_call_argument_begin|>")


def _k2(n, a='{"a": 1}', i=0):
    return KCB + "functions.%s:%d" % (n, i) + KAB + a + KCE


A1 = [("f", '{"a": 1}', True)]

SECTION_JUNK = [
    # (id, format, text, expected text, calls, [(code, raw)], [markup raw])
    ("v31-between-calls", "deepseekv31", "Go." + DSB + _v31("f") + "\nsee this\n" + _v31("f") + DSE + " ok",
     "Go.see this ok", A1 * 2, [], []),
    ("v31-before-first-call", "deepseekv31", "Go. " + DSB + "\n hm " + _v31("f") + DSE,
     "Go. hm", A1, [("bad_markup", DSB + "\n ")], []),
    ("v31-then-section-end", "deepseekv31", "Go." + DSB + _v31("f") + " hm\n" + DSE + " ok",
     "Go.hm\n ok", A1, [], [DSE]),
    ("v31-after-refused-call", "deepseekv31", "Go." + DSB + _v31("nope") + " hm " + _v31("f") + DSE,
     "Go.hm", A1, [("unknown_tool", DSB + _v31("nope") + " ")], []),
    ("v31-stray-call-end-after-prose", "deepseekv31", "Go." + DSB + _v31("f") + " hm " + DSCE + " x" + DSE,
     "Go.hm  x", A1, [("bad_markup", DSCE)], [DSE]),
    ("v31-partial-token-after-prose", "deepseekv31", "Go." + DSB + _v31("f") + " hm <\uff5ctool",
     "Go.hm <\uff5ctool", A1, [], []),
    ("v31-second-opener-then-prose", "deepseekv31", "Go." + DSB + _v31("f") + "\n" + DSB + " x " + _v31("f") + DSE,
     "Go.x", A1 * 2, [("bad_markup", DSB + " ")], []),
    ("v3-between-calls", "deepseekv3", "Go." + DSB + _v3("f") + "\nQ\n" + _v3("f") + DSE, "Go.Q", A1 * 2, [], []),
    ("v3-before-first-call", "deepseekv3", "Go." + DSB + "Q" + _v3("f") + DSE, "Go.Q", A1,
     [("bad_markup", DSB)], []),
    ("k2-between-calls", "kimi_k2", "Go." + KSB + _k2("f") + " see " + _k2("f", i=1) + KSE + " ok",
     "Go.see ok", A1 * 2, [], []),
    ("k2-before-first-call", "kimi_k2", "Go. " + KSB + "\n hm " + _k2("f") + KSE,
     "Go. hm", A1, [("bad_markup", KSB + "\n ")], []),
    ("k2-then-section-end", "kimi_k2", "Go." + KSB + _k2("f") + " hm\n" + KSE + " ok",
     "Go.hm\n ok", A1, [], [KSE]),
    ("k2-after-refused-call", "kimi_k2", "Go." + KSB + _k2("nope") + " hm " + _k2("f") + KSE,
     "Go.hm", A1, [("unknown_tool", KSB + _k2("nope") + " ")], []),
    ("k2-stray-argument-token-after-prose", "kimi_k2", "Go." + KSB + _k2("f") + " hm " + KAB + " x" + KSE,
     "Go.hm  x", A1, [("bad_markup", KAB)], [KSE]),
    # a refused call's JSON decides where it ends (an end token inside one
    # of its strings does not): prose after it is text, not its string's rest
    ("v31-refused-end-token-in-string", "deepseekv31", "Go." + DSB + _v31("nope", '{"0": "%s"}' % DSCE) + " hm" + DSE,
     "Go.hm", [], [("unknown_tool", DSB + _v31("nope", '{"0": "%s"}' % DSCE) + " ")], [DSE]),
    ("v3-refused-end-token-in-string", "deepseekv3", "Go." + DSB + _v3("nope", '{"0": "%s"}' % DSCE) + " hm" + DSE,
     "Go.hm", [], [("unknown_tool", DSB + _v3("nope", '{"0": "%s"}' % DSCE) + " ")], [DSE]),
    ("k2-refused-end-token-in-string", "kimi_k2", "Go." + KSB + _k2("nope", '{"0": "%s"}' % KCE) + " hm" + KSE,
     "Go.hm", [], [("unknown_tool", KSB + _k2("nope", '{"0": "%s"}' % KCE) + " ")], [KSE]),
    ("k2-partial-token-after-prose", "kimi_k2", "Go." + KSB + _k2("f") + " hm <|tool",
     "Go.hm <|tool", A1, [], []),
]


def _dsml_tags(block, inv="invoke", par="parameter", m=D):
    return ("<%s%s>" % (m, block), "</%s%s>" % (m, block), "<%s%s" % (m, inv), "</%s%s>" % (m, inv),
            "<%s%s" % (m, par), "</%s%s>" % (m, par))


def _inv(t, n):
    return '%s name="%s">\n%s name="a" string="false">1%s\n%s' % (t[2], n, t[4], t[5], t[3])


for _fmt, _t in [("deepseekv32", _dsml_tags("function_calls")), ("deepseekv4", _dsml_tags("tool_calls")),
                 ("deepseekv41", _dsml_tags(" calls", " invoke", " parameter")),
                 ("gigachat35", _dsml_tags("tool_calls", m="\uff5cGCML\uff5c"))]:
    SECTION_JUNK += [
        (_fmt + "-between-calls", _fmt, "Go." + _t[0] + "\n" + _inv(_t, "f") + "\nsee this\n" + _inv(_t, "f") + "\n"
         + _t[1] + " ok", "Go.see this ok", A1 * 2, [], []),
        (_fmt + "-before-first-call", _fmt, "Go. " + _t[0] + "\n hm " + _inv(_t, "f") + _t[1],
         "Go. hm", A1, [("bad_markup", _t[0] + "\n ")], []),
    ]
    if _fmt == "deepseekv32":
        SECTION_JUNK += [
            ("v32-then-block-end", _fmt, "Go." + _t[0] + _inv(_t, "f") + " hm\n" + _t[1] + " ok",
             "Go.hm\n ok", A1, [], [_t[1]]),
            ("v32-after-refused-call", _fmt, "Go." + _t[0] + _inv(_t, "nope") + " hm " + _inv(_t, "f") + _t[1],
             "Go.hm", A1, [("unknown_tool", _t[0] + _inv(_t, "nope") + " ")], []),
            ("v32-stray-invoke-end-after-prose", _fmt, "Go." + _t[0] + _inv(_t, "f") + " hm " + _t[3] + " x" + _t[1],
             "Go.hm  x", A1, [("bad_markup", _t[3])], [_t[1]]),
            ("v32-partial-tag-after-prose", _fmt, "Go." + _t[0] + _inv(_t, "f") + " hm " + _t[1][:6],
             "Go.hm " + _t[1][:6], A1, [], []),
            # a second opener in the block is read as the first (prose after it: it made no call)
            ("v32-second-opener-then-prose", _fmt, "Go." + _t[0] + _inv(_t, "f") + " x " + _t[0] + " y" + _inv(_t, "f")
             + _t[1], "Go.x y", A1 * 2, [("bad_markup", _t[0] + " ")], []),
            # the opener without its `>`, then prose: it made no call
            ("v32-opener-without-gt-then-prose", _fmt, "Go." + _t[0][:-1] + "hm" + _inv(_t, "f") + _t[1],
             "Go.hm", A1, [("bad_markup", _t[0][:-1])], []),
        ]


@pytest.mark.parametrize("fmt,text,exp_text,exp_calls,exp_errors,exp_markup", [c[1:] for c in SECTION_JUNK],
                         ids=[c[0] for c in SECTION_JUNK])
def test_prose_inside_a_section_is_kept(fmt, text, exp_text, exp_calls, exp_errors, exp_markup):
    check_markup_case(fmt, text, exp_text, exp_calls, exp_errors, exp_markup)


def test_opener_record_at_the_limit_is_the_same_for_every_chunking():
    """Prose found at a partial tag held across chunks after a section
    opener whose record (the opener and the blanks around it) reaches
    max_buffer there: whether the blanks before the opener are text does
    not depend on where the chunks end (property-test finding: char by
    char gave 'ok', one-shot 'ok\\n\\n')."""
    v41 = "<\uff5cDSML\uff5c calls>"
    text = (v41 + "ok\n\n" + v41 + "\n<\uff5c" + v41 + "DSML\uff5c invoke name=\"f\">\n\n</\uff5cDSML\uff5c invoke>\n"
            + "</\uff5cDSML\uff5c calls>")
    small = dict(max_buffer=24, max_name=12)
    one = collect(StreamParser("deepseekv41", TOOL_NAMES, **small).parse_all(text))
    assert one.text.startswith("ok")
    for chunks in list(every_split(text)) + [list(text)]:
        assert collect(stream_events("deepseekv41", chunks, TOOL_NAMES, **small)) == one, chunks


def test_harmony_header_over_max_buffer_is_the_same_for_every_chunking():
    """A message header whose record (with the blanks held before its
    token) is longer than max_buffer by its <|message|> is Markup with those
    blanks for every chunking (the record holds at least TP_RAW_FLOOR +
    max_name bytes; streamed, a chunk end once found it over and one-shot
    none came: random-seed fuzz finding, small limits; later its framing
    was no Markup, bytes in nothing)."""
    text = ("text" + " " * 40 + "<|channel|>analysis<|message|>think<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Done")
    one = StreamParser("gpt_oss", TOOL_NAMES, markup=True, max_buffer=64).parse_all(text)
    assert Markup(4, " " * 40 + "<|channel|>analysis<|message|>") in one
    for chunks in list(every_split(text)) + [list(text)]:
        assert merge(stream_events("gpt_oss", chunks, TOOL_NAMES, max_buffer=64)) == merge(one), chunks


# ---- a surrogate pair written as two encoded surrogates (CESU-8) ----------
# A str made with surrogatepass may hold a pair as two lone surrogates. JSON
# reads a high surrogate's escape followed by a low one's as the pair's
# character, so a format that writes raw text as JSON string content writes
# the pair as that character (canonical: the normalizer's own output for
# the two escapes); lone ones stay escapes. Streamed, the two may come in
# different chunks: the same arguments at every split.
CESU = "\ud83d\ude00"
CESU_ARGS = {"a": "x" + CESU + "y", "b": CESU + "\ud83dz\ude00\ud83d"}
CESU_EXPECTED = '{"a": "x\U0001F600y", "b": "\U0001F600\\ud83dz\\ude00\\ud83d"}'


@pytest.mark.parametrize("fmt", [f for f in RENDERED if not spec(f).json_args])
def test_cesu8_pair_in_raw_text_is_its_character(fmt):
    text = spec(fmt).response("Hi ", [("f", json.dumps(CESU_ARGS, ensure_ascii=False))], " ok")
    one = replay(fmt, text, TOOL_NAMES)
    assert calls_of(one) == [("f", CESU_EXPECTED, True)]


def test_cesu8_pair_in_a_dsml_key_and_non_json_value():
    """DSML keys and string="false" values that are no JSON value are
    written by the same escaper (they kept raw surrogates as they were)."""
    text = ("<\uff5cDSML\uff5cfunction_calls>\n<\uff5cDSML\uff5cinvoke name=\"f\">\n<\uff5cDSML\uff5cparameter name=\"k"
            + CESU + "\" string=\"false\">v" + CESU + "\ud83d</\uff5cDSML\uff5cparameter>\n</\uff5cDSML\uff5cinvoke>\n"
            + "</\uff5cDSML\uff5cfunction_calls>")
    one = replay("deepseekv32", text, TOOL_NAMES)
    assert calls_of(one) == [("f", '{"k\U0001F600": "v\U0001F600\\ud83d"}', True)]


# ---- a call's text before its announcement longer than max_buffer --------
# Held in the call's raw record (bounded: max_buffer, at least
# TP_RAW_FLOOR + max_name bytes) until the call is announced, refused or
# cut off. A record over its bound is refused at the next checkpoint (a
# stream offset every 2 KiB, the same for any chunking): buffer_limit, its
# text the dropped text from its first marker on, streamed as it goes, up
# to where the format reads again. Every format, names declared or not,
# cut off or not: the same streamed and one-shot, every byte accounted for
# (streamed, the bytes between the record's end and the chunk were missing
# from the dropped text; cut off, they were in nothing).
LONG_RUN = 20000


def _long_run_cases(fmt):
    s = spec(fmt)
    for name in ("f", "nope"):
        full = s.response("Hi. ", [(name, '{"a": 1}')], " Bye.")
        call_at = len("Hi. ")
        for i in range(call_at + 1, len(full) - 5, 3):
            for cut in (False, True):
                text = full[:i] + " " * LONG_RUN + full[i:]
                yield text[:i + LONG_RUN + 2] if cut else text


@pytest.mark.parametrize("fmt", RENDERED)
def test_call_text_over_max_buffer_is_accounted_for(fmt):
    for opts in ({"max_buffer": 64}, {}):
        for text in _long_run_cases(fmt):
            one = stream_events(fmt, [text], TOOL_NAMES, **opts)
            check_tiled(fmt, utf8(text), one)
            for size in (997, 4099):
                chunks = [text[k:k + size] for k in range(0, len(text), size)]
                events = stream_events(fmt, chunks, TOOL_NAMES, **opts)
                assert collect(events) == collect(one), (fmt, opts, text[:80], size)
                check_tiled(fmt, utf8(text), events)


def test_call_refused_where_its_text_outgrew_max_buffer():
    """The refusal: buffer_limit at the first checkpoint past the bound,
    the whole call its dropped text, no CallStart."""
    text = 'Go.<tool_call>\n{"name": "f",' + " " * LONG_RUN + '"arguments": {"a": 1}}\n</tool_call> ok'
    for chunks in ([text], [text[k:k + 1000] for k in range(0, len(text), 1000)], list(text)):
        r = collect(stream_events("qwen25", chunks, TOOL_NAMES, max_buffer=64))
        assert (r.text, r.calls) == ("Go. ok", [])
        assert [(e.code, e.offset, e.raw_offset, e.raw) for e in r.errors] == [
            ("buffer_limit", 18432, 3, text[3:-3])]


# ---- GLM engine: a name over its limits (fuzz/regress/hunyuan--..., ling3--...) --


@pytest.mark.parametrize("fmt", ["glm45", "ling3", "hunyuan", "spark25"])
def test_glm_name_over_max_name_is_the_same_at_every_split(fmt):
    """A tool name read as one run of word bytes meets the name limit
    (max_name) before the held bytes' (max_buffer), as a byte at a time
    does: the error at the same offset at every split."""
    open_tag = "<tool_calls>" if fmt == "hunyuan" else ""
    text = open_tag + "<tool_call>" + "\x00" * 87 + "f</tool_call><tool_call>f\n</tool_call>"
    opts = {"max_buffer": 64, "max_name": 16}
    one = stream_events(fmt, [text], None, **opts)
    check_tiled(fmt, utf8(text), one)
    errs = [(e.code, e.offset) for e in collect(one).errors]
    assert ("bad_name", len(open_tag) + 11 + 16) in errs, errs
    for chunks in list(every_split(text)) + [list(text)]:
        events = stream_events(fmt, chunks, None, **opts)
        assert collect(events) == collect(one), chunks
        check_tiled(fmt, utf8(text), events)


@pytest.mark.parametrize("fmt", ["glm45", "hunyuan"])
def test_glm_closer_after_a_call_broken_by_a_limit_is_markup(fmt):
    """A tag that opened a call broken by a limit (a name over max_name)
    ends the prose tag before it as a call does: a stray </tool_call> after
    the call is markup of no call (with the blanks after it), not text
    whose blanks were then lost in a block."""
    open_tag = "<tool_calls>" if fmt == "hunyuan" else ""
    tail = "<tool_call>" + "n" * 17 + "</tool_call></tool_call>\n"
    text = open_tag + "<tool_call>n \x00" + tail
    ok = open_tag + "<tool_call>n \x00" + tail.replace("n" * 17, "n" * 15)
    for t, opts in ((text, {"max_name": 16}), (ok, {"max_name": 16}), (text, {})):
        one = stream_events(fmt, [t], None, **opts)
        check_tiled(fmt, utf8(t), one)
        r = collect(one)
        assert "</tool_call>" not in r.text, (t, opts, r.text)
        assert [e.raw for e in r.errors if e.code == "bad_markup"][-1].startswith("</tool_call>"), (t, opts)
        for chunks in every_split(t):
            events = stream_events(fmt, chunks, None, **opts)
            assert collect(events) == r, chunks
            check_tiled(fmt, utf8(t), events)


@pytest.mark.parametrize("before", [
    "",
    '<|content_invoke_tool_json|>{"name": "f", "args": {}}',
    '<|content_invoke_tool_json|>{"name": "f", "args": {}} ',
    '<|content_invoke_tool_json|>{"name": ""}',  # a call that failed (fuzz/regress/inkling--cut-off-call-...)
    '<|content_invoke_tool_json|>{"name": "f", "args": {}}<|end_message|>',
])
@pytest.mark.parametrize("after", ["\n", "  ", '\n{"na'])
def test_inkling_cut_off_call_keeps_its_text_after_a_call(before, after):
    """Inkling's call token is markup; a call cut off after it gives back
    what followed the token as text, whether a call came just before it
    (the token read where the last call's end tag may come) or not."""
    text = before + "<|content_invoke_tool_json|>" + after
    one = stream_events("inkling", [text], TOOL_NAMES)
    check_tiled("inkling", utf8(text), one)
    r = collect(one)
    assert r.text.endswith(after) and [e.code for e in r.errors][-1] == "unterminated", (text, r)
    for chunks in every_split(text):
        events = stream_events("inkling", chunks, TOOL_NAMES)
        assert collect(events) == r, chunks
        check_tiled("inkling", utf8(text), events)
