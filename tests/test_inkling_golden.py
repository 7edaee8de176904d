"""Inkling (`inkling`, a row of fmt_jsontag.c with control tokens read whole):
golden cases replayed with every chunker and at every split, and parity
with SGLang's InklingDetector through FunctionCallParser (strict xfails
name what SGLang gets wrong). The contract is the vendor's TMLv0 renderer
(tml-renderers): `<|message_model|>NAME<|content_invoke_tool_json|>{"name":
NAME, "args": {...}}<|end_message|>` per call, `<|message_model|><|content_text|>
TEXT<|end_message|>` per text message, `<|content_model_end_sampling|>` at the
end of the turn."""
import pytest

from golden import call, err, golden_tests
from parity import parity_tests
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Markup, StreamParser, Text

TOOLS = ["get_weather", "search", "noop"]
M, J, E = "<|message_model|>", "<|content_invoke_tool_json|>", "<|end_message|>"
T, END, TH, X = "<|content_text|>", "<|content_model_end_sampling|>", "<|content_thinking|>", "<|content_invoke_tool_text|>"

W = '{"name":"get_weather","args":{"city":"Paris","days":3}}'  # as the renderer writes it (compact)
W_ARGS = '{"city": "Paris", "days": 3}'
S = '{"name": "search", "args": {"q": "caf\\u00e9 <|end_message|>"}}'
S_ARGS = '{"q": "café <|end_message|>"}'
NOOP = '{"name":"noop","args":{}}'

def mk(before, framing):
    """The message's framing `framing` after the text `before`: Markup
    (out of the text, as the vendor's parser and SGLang take it out;
    docs/SEMANTICS.md, "Dropped text")."""
    return Markup(len(before.encode("utf-8")), framing)


HW, HS, HN = M + "get_weather" + J, M + "search" + J, M + "noop" + J
GOLDEN = {
    "call_as_rendered": (HW + W + E + END, [mk("", HW)] + call(0, "get_weather", W_ARGS) + [mk(HW + W + E, END)]),
    "text_message_then_call": (M + T + "Let me check. " + E + HW + W + E + END,
                               [mk("", M + T), Text("Let me check. "), mk(M + T + "Let me check. ", E + HW)]
                               + call(0, "get_weather", W_ARGS) + [mk(M + T + "Let me check. " + E + HW + W + E, END)]),
    # without a reasoning parser the thinking message is text, as SGLang's detector leaves it
    "thinking_text_call": (M + TH + "hmm" + E + M + T + "ok" + E + HW + W + E + END,
                           [mk("", M + TH), Text("hmm"), mk(M + TH + "hmm", E + M + T), Text("ok"),
                            mk(M + TH + "hmm" + E + M + T + "ok", E + HW)] + call(0, "get_weather", W_ARGS)
                           + [mk(M + TH + "hmm" + E + M + T + "ok" + E + HW + W + E, END)]),
    "two_calls_end_token_inside_a_string": (HW + W + E + HS + S + E + END,
                                            [mk("", HW)] + call(0, "get_weather", W_ARGS) + [mk(HW + W + E, HS)]
                                            + call(1, "search", S_ARGS) + [mk(HW + W + E + HS + S + E, END)]),
    "args_before_name": (HS + '{"args": {"q": "x"}, "name": "search"}' + E,
                         [mk("", HS)] + call(0, "search", '{"q": "x"}')),
    "no_args_key": (HN + '{"name": "noop"}' + E, [mk("", HN)] + call(0, "noop", "{}")),
    # a refused call's header and tag are framing; its object is its raw text
    "unknown_tool_then_known": (M + "rm" + J + '{"name": "rm", "args": {}}' + E + HN + NOOP + E,
                                [mk("", M + "rm" + J), err(None, "unknown_tool", 60, "rm"),
                                 mk(M + "rm" + J + '{"name": "rm", "args": {}}' + E, HN)] + call(0, "noop", "{}")),
    # the text form: the vendor's parser gives its payload as content
    "text_invoke_is_text": (M + "sh" + X + "echo hi" + E + "!",
                            [mk("", M + "sh" + X), Text("echo hi"), mk(M + "sh" + X + "echo hi", E), Text("!")]),
    # the tag is a control token: markup even where no object follows
    "tag_without_object": (M + "x" + J + "nope" + E + " after",
                           [mk("", M + "x" + J), Text("nope"), mk(M + "x" + J + "nope", E), Text(" after")]),
    "broken_object_skipped_to_end_token": (HS + '{"name": "search", oops}' + E + M + T + "x" + E,
                                           [mk("", HS), err(None, "json_syntax", 70),
                                            mk(HS + '{"name": "search", oops}' + E, M + T), Text("x"),
                                            mk(HS + '{"name": "search", oops}' + E + M + T + "x", E)]),
    "junk_before_end_token": (HN + NOOP + " junk" + E + "ok",
                              [mk("", HN)] + call(0, "noop", "{}") + [err(None, "trailing_content", 75), Text("ok")]),
    "cut_off_in_args": (HS + '{"name": "search", "args": {"q": "ab',
                        [mk("", HS), CallStart(0, "search"), ArgsDelta(0, '{"q": "ab'), err(0, "unterminated", 87)]),
    "cut_off_after_the_tag": (M + T + "Hi" + E + HS,
                              [mk("", M + T), Text("Hi"), mk(M + T + "Hi", E + HS), err(None, "unterminated", 101)]),
    # a header the stream ends in (no token closed it) is text
    "cut_off_header": (M + T + "Hi" + E + M + "sea", [mk("", M + T), Text("Hi"), mk(M + T + "Hi", E + M), Text("sea")]),
    "other_tokens_are_text": (M + T + "a <|foo|> b <| c <|END_MESSAGE|>" + E,
                              [mk("", M + T), Text("a <|foo|> b <| c <|END_MESSAGE|>"),
                               mk(M + T + "a <|foo|> b <| c <|END_MESSAGE|>", E)]),
    "partial_token_at_the_end": (M + T + "a" + E + "<|end_mess",
                                 [mk("", M + T), Text("a"), mk(M + T + "a", E), Text("<|end_mess")]),
    # whitespace is the text's: the template writes none between messages
    "blank_kept": (M + T + "a \n" + E + "\n" + HN + " " + NOOP + " " + E + "\n",
                   [mk("", M + T), Text("a \n"), mk(M + T + "a \n", E), Text("\n"), mk(M + T + "a \n" + E + "\n", HN)]
                   + call(0, "noop", "{}") + [Text("\n")]),
    # a header longer than max_name is no header: text
    "header_over_max_name_is_text": (M + "x" * 1030 + J + NOOP + E,
                                     [mk("", M), Text("x" * 1030), mk(M + "x" * 1030, J)] + call(0, "noop", "{}")),
}
test_golden_every_chunker, test_golden_every_split = golden_tests("inkling", GOLDEN, TOOLS)


def test_arguments_stream_before_the_call_ends():
    p = StreamParser("inkling", TOOLS, markup=True)
    assert p.feed(M + "search" + J + '{"name": "search", "args": {"q": "long te') == [
        Markup(0, HS), CallStart(0, "search"), ArgsDelta(0, '{"q": "long te')]
    assert p.feed("xt") == [ArgsDelta(0, "xt")]
    assert p.feed('"}}') == [ArgsDelta(0, '"}'), CallEnd(0, "search", '{"q": "long text"}')]
    assert p.feed(E + M + T + "ok") == [Markup(len(HS + '{"name": "search", "args": {"q": "long text"}}' + E), M + T),
                                         Text("ok")]  # (the call's end token is the call's)


# ---- parity with SGLang's InklingDetector (builtin vs native) ------------------
PTOOLS = ("get_weather", "search")
W_CALL = ("get_weather", W_ARGS)
S2 = '{"name":"search","args":{"q":"caf\u00e9"}}'
S_CALL = ("search", '{"q": "café"}')
CASES = {  # name -> (text, prose, calls)
    "one_call": (M + "get_weather" + J + W + E + END, "", [W_CALL]),
    "text_then_call": (M + T + "Let me check." + E + M + "get_weather" + J + W + E + END, "Let me check.", [W_CALL]),
    "two_calls": (M + "get_weather" + J + W + E + M + "search" + J + S2 + E + END, "", [W_CALL, S_CALL]),
    "text_after_call": (M + "get_weather" + J + W + E + M + T + " Done." + E + END, " Done.", [W_CALL]),
    "undeclared_tool_sent": (M + "rm" + J + '{"name":"rm","args":{"f":1}}' + E, "", [("rm", '{"f": 1}')]),
    "text_invoke": (M + "sh" + X + "echo hi" + E + END, "echo hi", []),
    "end_token_inside_a_string": (M + "search" + J + S + E, "", [("search", S_ARGS)]),
}
TEXT_INVOKE = ("SGLang makes the text form (<|content_invoke_tool_text|>) a call with an empty name and "
               "{\"text\": ...} arguments; the vendor's parser (tml-renderers) gives its payload as content")
END_IN_STRING = ("SGLang ends the call at the first <|end_message|>, even inside a JSON string: the call fails "
                 "and the rest is text")


def streamed_xfail(impl, case, chunker):
    if impl != "builtin":
        return None
    return {"text_invoke": TEXT_INVOKE, "end_token_inside_a_string": END_IN_STRING}.get(case)


_one_shot, test_streamed_calls = parity_tests("inkling", CASES, PTOOLS, streamed_xfail)
ONE_SHOT_FAILS = {"text_invoke": TEXT_INVOKE, "end_token_inside_a_string": END_IN_STRING}


@pytest.mark.parametrize("impl", ["builtin", "native"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_shot_same_calls(fcp, sglang_tool, request, impl, case):
    from sglang_support import one_shot

    if impl == "builtin" and case in ONE_SHOT_FAILS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=ONE_SHOT_FAILS[case]))
    text, prose, calls = CASES[case]
    name = "inkling" if impl == "builtin" else "inkling_native"
    assert one_shot(fcp, sglang_tool(*PTOOLS), name, text) == (prose, calls)


def test_has_tool_call_agrees_with_the_parse(fcp, sglang_tool):
    p = fcp.FunctionCallParser(sglang_tool(*PTOOLS), "inkling_native")
    assert p.has_tool_call(M + "get_weather" + J + W + E) and p.has_tool_call("Hi " + J + W + E)
    # no call marker: the output as it is, as SGLang's (has_tool_call false)
    assert not p.has_tool_call(M + T + "hi" + E) and not p.has_tool_call("Use <|content_invoke_tool_ then")
    # a marker that opened no call: markup read, so the parsed text is taken
    assert p.has_tool_call(M + T + "Use " + J + " then")
    # the text form: no call, but the parsed text (as SGLang's has_tool_call says)
    assert p.has_tool_call(M + "sh" + X + "ls" + E)
