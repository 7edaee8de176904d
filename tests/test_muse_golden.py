"""Muse Glimmer (`muse`, csrc/fmt_channel.c): golden cases replayed with
every chunker and at every split, and parity with SGLang's
MuseGlimmerDetector through FunctionCallParser (strict xfails name what
SGLang gets wrong).

The contract is the model's chat template as its renderers write it: the
prompt ends at `<|start|>assistant`, so the model's first header is
` to=R<|message|>`, later ones `<|start|>assistant to=R<|message|>`; a body
ends at <|eom|> or <|eot|>; `self` (reasoning), `user` and `commentary`
bodies are prose; a tool turn is `<|start|>assistant to=NAME<|message|>
<atem:function_calls>\\n<atem:invoke name="NAME">\\n<atem:parameter
name="K">V</atem:parameter>\\n...</atem:invoke>\\n</atem:function_calls><|eom|>`
("String and scalar parameters should be specified as is, while lists and
objects should use JSON format"). What the template leaves open (tag
attributes, name resolution, typing, malformed output) follows SGLang's
detector; docs/PARSERS.md "Muse Glimmer" lists both."""
import pytest

from golden import call, err, golden_tests
from parity import parity_tests
from support import CHUNKERS
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Markup, StreamParser, Text

TOOLS = ["get_weather", "search", "noop", "weather.get", "math.add"]
S, M, EOM, EOT = "<|start|>", "<|message|>", "<|eom|>", "<|eot|>"
FC, FCE = "<atem:function_calls>\n", "</atem:function_calls>"


def inv(name, *params, attrs=""):
    body = "".join('<atem:parameter name="%s">%s</atem:parameter>\n' % kv for kv in params)
    return '<atem:invoke%s name="%s">\n%s</atem:invoke>\n' % (attrs, name, body)


def turn(rcpt, *invokes, first=False):
    """A tool turn as the template writes it (`first`: the model's first header)."""
    return ("" if first else S + "assistant") + " to=" + rcpt + M + FC + "".join(invokes) + FCE + EOM


W = inv("get_weather", ("city", "Paris"), ("days", "3"))
W_ARGS = '{"city": "Paris", "days": 3}'
THINK = " to=self" + M + "Let me check." + EOM
ANSWER = S + "assistant to=user" + M + "Sunny." + EOT
CUT = " to=search" + M + FC + '<atem:invoke name="search">\n<atem:parameter name="q">ab'
UNKNOWN = turn("rm", inv("rm", ("f", "1")), inv("noop"), first=True)
REFUSED_TAG = " to=search" + M + '<atem:invoke name="sea'
ODD_TAGS = (" to=search" + M + 'junk <atem:invokes name="noop"></atem:invoke>'
            '<atem:invoke x="1" name="" data-name="search" y>'
            '<atem:parameter xname="a">1</atem:parameter><atem:parameter id=\'2\' name="q" >a>b</atem:parameter>'
            '</atem:invoke>' + EOM)
# a parameter the invoke's closing tag cuts: its value ends there (SGLang drops the parameter)
LEFT_OPEN = (" to=search" + M + '<atem:invoke name="search"><atem:parameter name="q">x</atem:parameter>'
             '<atem:parameter name="open">never closed</atem:invoke><atem:invoke name="search">'
             '<atem:parameter name="n">[1, 2</atem:invoke>' + EOM)
VALUES = (" to=search" + M + '<atem:invoke name="search">'
          + "".join('<atem:parameter name="%s">%s</atem:parameter>' % kv for kv in [
              ("s", " as is \n"), ("n", " 7 "), ("o", '{"a": [1, 2.50]}'), ("q", '"quoted"'), ("e", ""),
              ("t", "tru"), ("nan", "NaN"), ("big", "1e400"), ("tag", "<b>x</b>")])
          + "</atem:invoke>" + EOM)
VALUES_ARGS = ('{"s": " as is \\n", "n": 7, "o": {"a": [1, 2.5]}, "q": "quoted", "e": "", "t": "tru", '
               '"nan": "NaN", "big": 1e400, "tag": "<b>x</b>"}')
SURR = (" to=search" + M + '<atem:invoke name="search">'
        + "".join('<atem:parameter name="%s">%s</atem:parameter>' % kv for kv in [
            ("q", "x\ud800\udfffy"), ("r", '"\ud800\udfff"'), ("s", "a\ud800b\udfff")]) + "</atem:invoke>" + EOM)
SURR_CUT = " to=search" + M + '<atem:invoke name="search"><atem:parameter name="q">a\ud800' + EOM
NAMES = (" to=x" + M + inv("weather.get.weather.get") + inv("get_weather.get_weather") + inv("ns.add")
         + inv("noop.noop") + EOM)

GOLDEN = {
    "template_turn": (THINK + turn("get_weather", W) + ANSWER,
                      [Text("Let me check.")] + call(0, "get_weather", W_ARGS) + [Text("Sunny.")]),
    "first_header_calls": (turn("search", inv("search", ("q", "caf\u00e9")), first=True),
                           call(0, "search", '{"q": "café"}')),
    "two_turns_two_calls": (turn("get_weather", W, first=True) + turn("search", inv("search", ("q", "x"))),
                            call(0, "get_weather", W_ARGS) + call(1, "search", '{"q": "x"}')),
    "two_invokes_one_turn": (turn("noop", inv("noop"), inv("noop"), first=True),
                             call(0, "noop", "{}") + call(1, "noop", "{}")),
    # output that opens without a header is one prose body, to its terminator (dropped)
    "no_header_prose": ("Just prose <|start|> here" + EOT + " and after", [Text("Just prose <|start|> here and after")]),
    # a call in a prose channel is text; a header without a recipient is `user`
    "call_in_prose_channel": (" to=user" + M + inv("noop") + EOT + S + "assistant" + M + "hi" + EOT,
                              [Text(inv("noop") + "hi")]),
    "commentary_channel": (S + "assistant to=commentary" + M + "note" + EOM, [Text("note")]),
    # blanks between channels are text; the tool channel's markup is not
    "blanks_kept": ("  to=user" + M + "Hi \n" + EOT + "\n" + turn("noop", inv("noop")) + "\n ok",
                    [Text("Hi \n\n")] + call(0, "noop", "{}") + [Text("\n ok")]),
    # a recipient with a blank is no header (SGLang's streaming reading)
    "recipient_with_blank_is_prose": ("  to=a b" + M + "x" + EOT + "y", [Text("  to=a b" + M + "xy")]),
    "headers_cut_off_are_text": (" to=user" + M + "a" + EOM + S + "assistant to=f", [Text("a" + S + "assistant to=f")]),
    "first_header_cut_off": ("  to=get_weather<|mes", [Text("  to=get_weather<|mes")]),
    "partial_start_is_prose": (" to=user" + M + "a" + EOM + "<|sta" + "rt over" + EOT + "b",
                               [Text("a<|start overb")]),
    "partial_terminator_at_the_end": (" to=user" + M + "a<|eo", [Text("a<|eo")]),
    "values_json_else_text": (VALUES, call(0, "search", VALUES_ARGS)),
    # tags read as SGLang's regexes read them: `\b` after the tag name, the
    # first non-empty name="..." at a word boundary, `>` inside the value
    # (junk in the tool channel and a tag that opens no invoke are
    # bad_markup with their bytes, up to the next invoke)
    "odd_tags": (ODD_TAGS, [err(None, "bad_markup", ODD_TAGS.index("junk"), "text in a tool channel"),
                            err(None, "bad_markup", ODD_TAGS.index("<atem:invokes"), "markup that makes no call"),
                            # a parameter tag without a name: prose inside the call, the call stands
                            CallStart(0, "search"), ArgsDelta(0, "{"),
                            err(None, "bad_markup", ODD_TAGS.index("<atem:parameter xname"), "prose inside a call"),
                            ArgsDelta(0, '"q": "a>b"}'), CallEnd(0, "search", '{"q": "a>b"}')]),
    "param_left_open": (LEFT_OPEN, call(0, "search", '{"q": "x", "open": "never closed"}')
                        + call(1, "search", '{"n": "[1, 2"}')),
    # a string streams as soon as it cannot be JSON; JSON-like values are held
    "names_resolved": (NAMES, call(0, "weather.get", "{}") + call(1, "get_weather", "{}")
                       + call(2, "math.add", "{}") + call(3, "noop", "{}")),
    "unknown_tool_then_known": (UNKNOWN, [err(None, "unknown_tool", UNKNOWN.index("<atem:invoke"), "rm")]
                                + call(0, "noop", "{}")),
    # a terminator inside a call ends the body: the call is cut off there
    "terminator_in_value": (CUT + EOM + " after", [CallStart(0, "search"), ArgsDelta(0, '{"q": "ab'),
                                                   err(0, "unterminated", len(CUT)),
                                                   Text(" after")]),
    "cut_off_in_value": (CUT, [CallStart(0, "search"), ArgsDelta(0, '{"q": "ab'), err(0, "unterminated", len(CUT))]),
    "cut_off_in_held_value": (CUT[:-2] + "[1, 2", [CallStart(0, "search"), ArgsDelta(0, "{"),
                                                  err(0, "unterminated", len(CUT) + 3)]),
    "cut_off_in_tag": (REFUSED_TAG, [err(None, "unterminated", REFUSED_TAG.index("<atem:invoke"))]),
    # lone surrogates (surrogatepass input): a high one followed by a low
    # one is the pair's character (JSON reads their escapes as the pair),
    # also split between chunks and in a held value; lone ones stay escapes
    # (fuzz finding: fuzz/regress/muse--surrogate-pair-split-across-streamed-pieces)
    "surrogate_pair_is_its_character": (SURR, call(0, "search", '{"q": "x\U000103ffy", "r": "\\"\U000103ff\\"", '
                                                             '"s": "a\\ud800b\\udfff"}')),
    "surrogate_high_at_the_cut": (SURR_CUT, [CallStart(0, "search"), ArgsDelta(0, '{"q": "a\\ud800'),
                                             err(0, "unterminated", len(SURR_CUT.encode("utf-8", "surrogatepass")) - 7)]),
}
test_golden_every_chunker, test_golden_every_split = golden_tests("muse", GOLDEN, TOOLS)


# ---- the message's framing is Markup (issue 18), every split ----------------
# Headers, terminators and a tool channel's wrapper tags and blanks are
# the template's markup: Markup events (asked for with markup=True), so
# every byte is in text, a call, an error's raw text or a Markup event
# (tests/test_lossless.py checks the tiling). Junk in a tool channel is
# bad_markup (its raw text: tests/test_lossless.py DROPPED).
def _mk(before, framing):
    return Markup(len(before.encode("utf-8")), framing)


_TT = THINK + turn("get_weather", W)
_BL = "  to=user" + M + "Hi \n" + EOT + "\n" + turn("noop", inv("noop")) + "\n ok"
_JUNK = " to=noop" + M + "oops " + FC + inv("noop") + FCE + "trailing junk" + EOM + " after"
_PART = " to=noop" + M + FC + inv("noop") + "</atem:func"
_TAG = " to=search" + M + '<atem:invoke name="sea' + EOM + "x"
_LAST = " to=x" + M + FC + inv("noop") + inv("rm") + FCE + EOM + "\n"
FRAMING = {
    "template_turn": (THINK + turn("get_weather", W) + ANSWER, [
        _mk("", " to=self" + M), Text("Let me check."),
        _mk(THINK[:-len(EOM)], EOM + S + "assistant to=get_weather" + M + FC)]
        + call(0, "get_weather", W_ARGS)
        + [_mk(_TT[:-len("\n" + FCE + EOM)], "\n" + FCE + EOM + S + "assistant to=user" + M), Text("Sunny."),
           _mk(_TT + ANSWER[:-len(EOT)], EOT)]),
    # blanks between messages are text, a prose body's header and terminator Markup
    "blanks_between_messages": (_BL, [
        _mk("", "  to=user" + M), Text("Hi \n"), _mk("  to=user" + M + "Hi \n", EOT), Text("\n"),
        _mk(_BL[:_BL.index(S)], S + "assistant to=noop" + M + FC)] + call(0, "noop", "{}")
        + [_mk(_BL[:_BL.index("\n" + FCE)], "\n" + FCE + EOM), Text("\n ok")]),
    "header_without_recipient": (S + "assistant" + M + "hi" + EOT, [
        _mk("", S + "assistant" + M), Text("hi"), _mk(S + "assistant" + M + "hi", EOT)]),
    # junk before and after the invokes: bad_markup (the wrapper tag after
    # junk is in its raw text), the rest Markup
    "junk_in_tool_channel": (_JUNK, [
        _mk("", " to=noop" + M), err(None, "bad_markup", _JUNK.index("oops"), "text in a tool channel")]
        + call(0, "noop", "{}") + [
        _mk(_JUNK[:_JUNK.index("\n" + FCE)], "\n" + FCE),
        err(None, "bad_markup", _JUNK.index("trailing"), "text in a tool channel"),
        _mk(_JUNK[:_JUNK.index(EOM)], EOM), Text(" after")]),
    # a partial tag the stream ends with after a call: unterminated, its bytes the raw text
    "partial_tag_at_the_end": (_PART, [_mk("", " to=noop" + M + FC)] + call(0, "noop", "{}") + [
        _mk(_PART[:_PART.index("</atem:invoke>\n") + 14], "\n"),
        err(None, "unterminated", _PART.index("</atem:func"))]),
    # a terminator inside an invoke's tag: unterminated, the tag its raw text
    "terminator_in_tag": (_TAG, [_mk("", " to=search" + M), err(None, "unterminated", _TAG.index("<atem:invoke")),
                                 _mk(_TAG[:_TAG.index(EOM)], EOM), Text("x")]),
    # a refused last invoke's raw text runs on to the terminator
    "refused_last_invoke": (_LAST, [_mk("", " to=x" + M + FC)] + call(0, "noop", "{}") + [
        _mk(_LAST[:_LAST.index('<atem:invoke name="rm"') - 1], "\n"),
        err(None, "unknown_tool", _LAST.index('<atem:invoke name="rm"'), "rm"),
        _mk(_LAST[:_LAST.index(EOM)], EOM), Text("\n")]),
}
test_framing_every_chunker, test_framing_every_split = golden_tests("muse", FRAMING, TOOLS)


def test_strings_stream_json_values_are_held():
    """A value is a string as soon as it cannot be JSON: it streams; a value
    that may be JSON (a number here) is sent at its closing tag."""
    p = StreamParser("muse", TOOLS)
    assert p.feed(" to=search" + M + FC + '<atem:invoke name="search">\n<atem:parameter name="q">long te') == [
        CallStart(0, "search"), ArgsDelta(0, '{"q": "long te')]
    assert p.feed("xt</atem:parameter>\n<atem:parameter name=\"n\">2") == [ArgsDelta(0, 'xt"')]
    assert p.feed("5</atem:parameter>\n<atem:parameter name=\"b\">tru") == [ArgsDelta(0, ', "n": 25')]
    assert p.feed("e") == []  # still the literal true
    assert p.feed("ly</atem:parameter></atem:invoke>") == [
        ArgsDelta(0, ', "b": "truely"}'), CallEnd(0, "search", '{"q": "long text", "n": 25, "b": "truely"}')]
    assert p.feed("\n" + FCE + EOM + S + "assistant to=user" + M + "ok") == [Text("ok")]


def test_name_longer_than_max_name_is_refused():
    text = " to=f" + M + '<atem:invoke name="' + "x" * 40 + '"><atem:parameter name="a">1</atem:parameter>' \
        "</atem:invoke>" + inv("noop") + EOM
    p = StreamParser("muse", TOOLS, max_name=16)
    events = p.feed(text) + p.finish()
    at = text.index("<atem:invoke")
    assert [type(e).__name__ for e in events] == ["ParseError", "Dropped", "CallStart", "ArgsDelta", "CallEnd"]
    assert events[0].code == "bad_name" and events[0].offset == at
    # the refused invoke is the error's dropped text, up to the next invoke
    assert events[1].offset == at and events[1].raw == text[at:text.index("<atem:invoke", at + 1)]


# ---- parity with SGLang's MuseGlimmerDetector (builtin vs native) ------------------
PTOOLS = ("get_weather", "search", "weather.get")
CASES = {  # name -> (text, prose, calls)
    "template_turn": (THINK + turn("get_weather", W) + ANSWER, "Let me check.Sunny.", [("get_weather", W_ARGS)]),
    "first_header_calls": (turn("search", inv("search", ("q", "caf\u00e9")), first=True), "",
                           [("search", '{"q": "café"}')]),
    "two_turns": (turn("get_weather", W, first=True) + turn("search", inv("search", ("q", "x"))), "",
                  [("get_weather", W_ARGS), ("search", '{"q": "x"}')]),
    "no_header_prose": ("Just prose <|start|> here", "Just prose <|start|> here", []),
    "call_in_prose_channel": (" to=user" + M + inv("search") + EOT, inv("search"), []),
    "blanks_kept": ("  to=user" + M + "Hi \n" + EOT + "\n" + turn("search", inv("search")) + "\n ok",
                    "Hi \n\n\n ok", [("search", "{}")]),
    "odd_tags": (ODD_TAGS, "", [("search", '{"q": "a>b"}')]),
    "param_left_open": (LEFT_OPEN, "", [("search", '{"q": "x", "open": "never closed"}'), ("search", '{"n": "[1, 2"}')]),
    "doubled_namespace": (" to=x" + M + inv("weather.get.weather.get") + inv("search.search") + EOM, "",
                          [("weather.get", "{}"), ("search", "{}")]),
    "unknown_tool_dropped": (turn("rm", inv("rm", ("f", "1")), inv("search"), first=True), "", [("search", "{}")]),
    "recipient_with_blank": ("  to=a b" + M + inv("search") + EOT + "y", "  to=a b" + M + inv("search") + "y", []),
    "nan_value": (" to=search" + M + inv("search", ("q", "NaN")) + EOM, "", [("search", '{"q": "NaN"}')]),
    "big_number": (" to=search" + M + inv("search", ("n", "1e400")) + EOM, "", [("search", '{"n": 1e400}')]),
}
HEADER_BLANK = ("SGLang's one-shot parse reads a first header whose recipient has a blank as a header "
                "(could_start_header sees <|message|> in the whole text); streamed, the blank makes it prose")
NAN = "SGLang json.loads NaN to a float and writes it back as NaN: its arguments are not JSON"
LEFT_OPEN_WHY = ("SGLang drops a parameter that the invoke's closing tag cuts (its regex wants "
                 "</atem:parameter>): the model's argument is lost silently; here its value ends there")
BIG = ("SGLang json.loads 1e400 to inf and writes Infinity: its arguments are not JSON (a number past a "
       "double keeps its digits here, as in every other format)")


def streamed_xfail(impl, case, chunker):
    if impl != "builtin":
        return None
    if case == "recipient_with_blank" and M in CHUNKERS[chunker](CASES[case][0])[0]:
        return HEADER_BLANK  # the first chunk holds the whole header
    return {"nan_value": NAN, "big_number": BIG, "param_left_open": LEFT_OPEN_WHY}.get(case)


def one_shot_xfail(impl, case):
    if impl != "builtin":
        return None
    return {"recipient_with_blank": HEADER_BLANK, "nan_value": NAN, "big_number": BIG,
            "param_left_open": LEFT_OPEN_WHY}.get(case)


test_one_shot_same_calls, test_streamed_calls = parity_tests("muse", CASES, PTOOLS, streamed_xfail,
                                                             one_shot_xfail=one_shot_xfail)


def test_has_tool_call_looks_for_the_atem_markers(fcp, sglang_tool):
    p = fcp.FunctionCallParser(sglang_tool(*PTOOLS), "muse_native")
    assert p.has_tool_call(turn("search", inv("search")))
    # no ATEM marker: the output as it is, as SGLang's (framing and all)
    assert not p.has_tool_call(" to=user" + M + "hi" + EOT)
    # a marker that made no call and changed no text: prose
    assert not p.has_tool_call("Use <atem:invoke like this")
