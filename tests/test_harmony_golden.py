"""Golden cases for the gpt-oss (OpenAI Harmony) parser, replayed at every
split point and with each chunker: the merged events are the same for every
chunking and match the expected text / reasoning / calls / error codes, and
the per-call protocol holds. The reference is the Harmony format as OpenAI
documents it and its StreamableParser reads headers (docs/PARSERS.md)."""
from __future__ import annotations

import json

import pytest

import support
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Markup, ParseError, Reasoning, StreamParser, Text
from sglang_toolparse.api import parse

FMT = "gpt_oss"
TOOLS = ["get_weather", "search", "noop"]
S, CH, M, CO = "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"
END, CALL, RET = "<|end|>", "<|call|>", "<|return|>"


def analysis(t):
    return CH + "analysis" + M + t + END


def msg(channel, body, stop=END, role="assistant"):
    return S + role + CH + channel + M + body + stop


def call(name, args, head=None):
    """The model's own spelling: recipient after the channel, <|constrain|>json."""
    return S + "assistant" + CH + "commentary to=functions." + name + " " + CO + "json" + M + args + CALL


def call_role_header(name, args):
    """The chat template's spelling: recipient after the role, bare `json`."""
    return S + "assistant to=functions." + name + CH + "commentary json" + M + args + CALL


def merge(events):
    out = []
    for ev in support.merge(events):
        if out and type(ev) is Reasoning and type(out[-1]) is Reasoning:
            out[-1] = Reasoning(out[-1].text + ev.text)
        else:
            out.append(ev)
    return out


def run(chunks, tools=TOOLS, markup=False):
    p = StreamParser(FMT, tools, markup=markup)
    events = []
    for c in chunks:
        events += p.feed(c)
    return merge(events + p.finish())


def summary(events):
    r = parse.__globals__["collect"](events)
    reasoning = "".join(e.text for e in events if type(e) is Reasoning)
    return r.text, reasoning, [(c.name, c.arguments) for c in r.complete_calls], [e.code for e in r.errors]


def case(id, text, exp_text, exp_reasoning, exp_calls, errors=(), tools=TOOLS):
    calls = [(n, json.dumps(a, ensure_ascii=False)) for n, a in exp_calls]
    return pytest.param(text, tools, exp_text, exp_reasoning, calls, list(errors), id=id)


W = '{"location": "Paris", "unit": "celsius"}'
CASES = [
    case("docs-example",
         analysis("Need the weather.") + S + "assistant" + CH + "commentary to=functions.get_weather " + CO
         + "json" + M + W + CALL,
         "", "Need the weather.", [("get_weather", json.loads(W))]),
    case("first-message-at-channel",
         CH + "commentary to=functions.get_weather " + CO + "json" + M + W + CALL,
         "", "", [("get_weather", json.loads(W))]),
    case("recipient-in-role-header", call_role_header("search", '{"q": "x"}'), "", "", [("search", {"q": "x"})]),
    case("no-constrain", S + "assistant" + CH + "commentary to=functions.search" + M + '{"q": 1}' + CALL,
         "", "", [("search", {"q": 1})]),
    case("constrain-without-space", S + "assistant" + CH + "commentary to=functions.search" + CO + "json" + M
         + '{"q": 1}' + CALL, "", "", [("search", {"q": 1})]),
    case("recipient-without-namespace", S + "assistant" + CH + "commentary to=search" + M + "{}" + CALL,
         "", "", [("search", {})]),
    case("preamble-then-calls-then-final",
         analysis("think") + msg("commentary", "Checking both.") + call("get_weather", '{"location": "Oslo"}')
         + call("search", '{"q": "a\\"b", "n": 1.50}') + analysis("done") + msg("final", "Both sunny.", RET),
         "Checking both.Both sunny.", "thinkdone",
         [("get_weather", {"location": "Oslo"}), ("search", {"q": 'a"b', "n": 1.5})]),
    case("final-only", analysis("easy") + msg("final", "Hello **world**!", RET), "Hello **world**!", "easy", []),
    case("final-cut-off-without-return", analysis("x") + S + "assistant" + CH + "final" + M + "Partial ans",
         "Partial ans", "x", []),
    case("analysis-cut-off", CH + "analysis" + M + "still thinking <|e", "", "still thinking <|e", []),
    case("empty-body-is-zero-arg-call", S + "assistant" + CH + "commentary to=functions.noop " + CO + "json" + M + CALL,
         "", "", [("noop", {})]),
    case("whitespace-body-is-zero-arg-call", S + "assistant" + CH + "commentary to=functions.noop" + M + " \n" + CALL,
         "", "", [("noop", {})]),
    case("marker-inside-json-string-is-argument",
         call("search", json.dumps({"q": CALL + END + S + "<|" + M})) + msg("final", "ok", RET),
         "ok", "", [("search", {"q": CALL + END + S + "<|" + M})]),
    case("unknown-tool-dropped-others-survive", call("nope", '{"a": 1}') + call("noop", "{}"),
         "", "", [("noop", {})], ["unknown_tool"]),
    case("unknown-tool-body-read-as-json", call("nope", '{"q": "<|call|>x"}') + msg("final", "ok", RET),
         "ok", "", [], ["unknown_tool"]),
    case("builtin-tool-recipient-is-unknown", S + "assistant" + CH + "analysis to=browser.search" + M
         + '{"query": "x"}' + CALL + call("noop", "{}"), "", "", [("noop", {})], ["unknown_tool"]),
    case("malformed-json-others-survive", call("search", '{"q": tru}') + call("noop", '{"x": [1, 2]}'),
         "", "", [("noop", {"x": [1, 2]})], ["json_syntax"]),
    case("json-cut-by-call-token", call("search", '{"q": 1, ') + call("noop", "{}"),
         "", "", [("noop", {})], ["json_syntax"]),
    case("not-an-object", call("search", '["q"]') + call("noop", "{}"), "", "", [("noop", {})], ["bad_markup"]),
    case("junk-after-json", call("noop", "{} junk"), "", "", [("noop", {})], ["trailing_content"]),
    case("call-ended-by-end-token", S + "assistant" + CH + "commentary to=functions.noop" + M + "{}" + END
         + msg("final", "x", RET), "x", "", [("noop", {})]),
    case("tool-response-message-is-text",
         call("noop", "{}") + S + "functions.noop to=assistant" + CH + "commentary" + M + '{"ok": true}' + END,
         '{"ok": true}', "", [("noop", {})]),
    case("unknown-channel-is-text", S + "assistant" + CH + "notes" + M + "kept" + END, "kept", "", []),
    case("prose-outside-messages", "Hi. " + call("noop", "{}") + "\nbye", "Hi.\nbye", "", [("noop", {})]),
    case("stray-tokens-in-prose", "one " + END + "two " + CALL + "three" + M + RET + "!", "one two three!", "", []),
    case("partial-token-at-end-is-text", "see <|cha", "see <|cha", "", []),
    case("lookalike-is-text", "a <|chan|> b <| c |>", "a <|chan|> b <| c |>", "", []),
    case("header-cut-by-end-token", S + "assistant" + CH + "commentary to=functions.noop" + END
         + call("noop", "{}"), "", "", [("noop", {})], ["bad_markup"]),
    case("unterminated-header", "x" + S + "assistant" + CH + "comm", "x", "", [], ["unterminated"]),
    case("unterminated-args", "x" + call("search", '{"q": "abc')[: -len(CALL)], "x", "", [], ["unterminated"]),
    case("empty-recipient", S + "assistant" + CH + "commentary to=" + M + "{}" + CALL + call("noop", "{}"),
         "", "", [("noop", {})], ["bad_name"]),
    case("indented-unicode-json", call("search", json.dumps({"q": "中文 🙂", "o": {"p": [1, False]}}, indent=2,
                                                              ensure_ascii=False)),
         "", "", [("search", {"q": "中文 🙂", "o": {"p": [1, False]}})]),
]


@pytest.mark.parametrize("text,tools,exp_text,exp_reasoning,exp_calls,errors", CASES)
def test_golden(text, tools, exp_text, exp_reasoning, exp_calls, errors):
    one = run([text], tools)
    support.check_stream_invariants(one)
    assert summary(one) == (exp_text, exp_reasoning, exp_calls, errors)
    for chunks in support.every_split(text):
        assert run(chunks, tools) == one, chunks
    for name, chunker in support.CHUNKERS.items():
        ev = run(chunker(text), tools)
        support.check_stream_invariants(ev)
        assert ev == one, name


def test_call_announced_at_the_brace_and_args_stream():
    """CallStart when the recipient is known and `{` arrives; the arguments
    stream as they are generated; a stop token inside a string is text."""
    p = StreamParser(FMT, ["search"])
    assert p.feed(S + "assistant" + CH + "commentary to=functions.search " + CO + "json") == []
    assert p.feed(M + " ") == []
    assert p.feed('{"q": "ab') == [CallStart(0, "search"), ArgsDelta(0, '{"q": "ab')]
    assert p.feed("<|call|>") == [ArgsDelta(0, "<|call|>")]
    assert p.feed('"}') == [ArgsDelta(0, '"}'), CallEnd(0, "search", '{"q": "ab<|call|>"}')]
    assert p.feed(CALL) == []


def test_split_token_held_only_while_it_can_complete():
    p = StreamParser(FMT, [], markup=True)
    # the header and the stop token are the message's framing: Markup
    assert p.feed(S + "assistant" + CH + "final" + M + "Hi <|re") == [Markup(0, S + "assistant" + CH + "final" + M),
                                                                     Text("Hi")]
    assert p.feed("tx") == [Text(" <|retx")]
    assert p.feed(" <|ret") == []
    assert p.feed("urn|>after") == [Text(" "), Markup(55, "<|return|>"), Text("after")]


def test_reasoning_streams_as_generated():
    p = StreamParser(FMT, [], markup=True)
    assert p.feed(CH + "analysis" + M + "a") == [Markup(0, CH + "analysis" + M), Reasoning("a")]
    assert p.feed("b <|e") == [Reasoning("b ")]
    assert p.feed("nd|>") == [Markup(33, "<|end|>")]


def test_one_shot_equals_streamed():
    text = CASES[6].values[0]
    r = parse("gpt-oss", text, TOOLS)
    assert r.text == "Checking both.Both sunny."
    assert [c.name for c in r.calls] == ["get_weather", "search"]


def test_header_over_max_name_same_at_every_split():
    """A header over max_name is dropped up to its <|message|>, whichever
    token the limit is crossed at (fuzz/regress/gpt_oss--header-over-...)."""
    text = (S + "assistant to=functions.search" + CH + "commentary json" + M + '{"q": "<|call|>"}' + CALL
            + msg("final", "Done.", RET))
    def go(chunks):
        p = StreamParser(FMT, TOOLS, max_name=16)
        ev = []
        for c in chunks:
            ev += p.feed(c)
        return merge(ev + p.finish())
    one = go([text])
    assert summary(one) == ("Done.", "", [], ["bad_name"])
    for chunks in support.every_split(text):
        assert go(chunks) == one, chunks


def test_header_over_max_name_dropped_later_calls_survive():
    text = S + "assistant" + CH + "commentary to=functions." + "x" * 300 + M + "{}" + CALL + call("noop", "{}")
    for chunks in ([text], support.char_by_char(text)):
        p = StreamParser(FMT, TOOLS, max_name=64)
        ev = []
        for c in chunks:
            ev += p.feed(c)
        ev = merge(ev + p.finish())
        assert summary(ev) == ("", "", [("noop", "{}")], ["bad_name"])


# ---- the message's framing is Markup (issue 18), every split ----------------
def _mk(before, framing):
    return Markup(len(before.encode("utf-8")), framing)


_PRE = analysis("think ") + "\n" + msg("commentary", "Checking. ")
_FRAMED = _PRE + call("get_weather", W) + END + " " + msg("final", "Done.", RET)
FRAMING = {
    # headers of messages that make no call and their stop tokens are
    # Markup; the whitespace before a stop token is the message's text;
    # the whitespace before a header is the header's (as before: not text);
    # a call's header and stop token are the call's; a stray token is Markup
    "messages_and_a_call": (_FRAMED, [
        _mk("", CH + "analysis" + M), Reasoning("think "),
        _mk(CH + "analysis" + M + "think ", END + "\n" + S + "assistant" + CH + "commentary" + M), Text("Checking. "),
        _mk(_PRE[:-len(END)], END), CallStart(0, "get_weather"), ArgsDelta(0, W), CallEnd(0, "get_weather", W),
        _mk(_PRE + call("get_weather", W), END + " " + S + "assistant" + CH + "final" + M), Text("Done."),
        _mk(_FRAMED[:-len(RET)], RET)]),
    # a header the stream ends in: unterminated, its bytes the error's raw
    # text (not in the merged events: tests/test_lossless.py checks it)
    "cut_off_header": (msg("final", "Hi") + S + "assistant" + CH + "fin",
                       [_mk("", S + "assistant" + CH + "final" + M), Text("Hi"),
                        _mk(S + "assistant" + CH + "final" + M + "Hi", END),
                        # (the detail shows <|channel|> as \x01)
                        ParseError(None, "unterminated", len(msg("final", "Hi") + S), "assistant\x01fin")]),
}


@pytest.mark.parametrize("name", sorted(FRAMING))
def test_framing_is_markup_at_every_split(name):
    text, expected = FRAMING[name]
    assert run([text], markup=True) == expected
    for k in range(1, len(text)):
        assert run([text[:k], text[k:]], markup=True) == expected, k
    assert run(list(text), markup=True) == expected
