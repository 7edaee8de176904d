"""InternLM2 / Intern-S1 (`interns1`, a row of fmt_jsontag.c): golden cases
replayed at every split, and parity with SGLang's InternlmDetector through
FunctionCallParser (strict xfails name what SGLang gets wrong)."""
from golden import call, golden_tests
from parity import parity_tests
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, ParseError, StreamParser, Text
from support import CHUNKERS

TOOLS = ["get_weather", "search", "noop"]
A = "<|action_start|><|plugin|>"   # the template's spelling
B = "<|action_start|> <|plugin|>"  # SGLang's detokenizer (spaces_between_special_tokens)
E = "<|action_end|>"


W = '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}'
W_ARGS = '{"city": "Paris", "days": 3}'
S = '{"name": "search", "arguments": {"q": "caf\\u00e9 <|action_end|>"}}'
S_ARGS = '{"q": "café <|action_end|>"}'

GOLDEN = {
    "template_spelling": (A + "\n" + W + E, call(0, "get_weather", W_ARGS)),
    "detokenizer_spelling": (B + "\n" + W + E, call(0, "get_weather", W_ARGS)),
    "prose_before_and_after": ("Let me check.\n" + A + "\n" + W + E + "\nDone.",
                               [Text("Let me check.")] + call(0, "get_weather", W_ARGS) + [Text("\nDone.")]),
    "two_calls_both_spellings": (A + "\n" + W + E + "\n" + B + "\n" + S + E,
                                 call(0, "get_weather", W_ARGS) + call(1, "search", S_ARGS)),
    # the end token after the interpreter block's prose closes no call: an
    # error carries it (bad_markup)
    "interpreter_is_text": ("Run: <|action_start|><|interpreter|>\nprint(1)" + E + " ok",
                            [Text("Run: <|action_start|><|interpreter|>\nprint(1)"),
                             ParseError(None, "bad_markup", 45, "markup that makes no call"), Text(" ok")]),
    "stray_end_token_dropped": ("a" + E + "b", [Text("a"), ParseError(None, "bad_markup", 1, "markup that makes no call"), Text("b")]),
    "tag_without_object_is_prose": ("Use " + A + " then " + E + ".", [Text("Use " + A + " then " + E + ".")]),
    "parameters_before_name": (A + '{"parameters": {"q": "x"}, "name": "search"}' + E, call(0, "search", '{"q": "x"}')),
    "no_parameters": (A + '{"name": "noop"}' + E, call(0, "noop", "{}")),
    "unknown_tool_then_known": (A + '{"name": "rm", "parameters": {}}' + E + A + S + E,
                                [ParseError(None, "unknown_tool", 39, "rm")] + call(0, "search", S_ARGS)),
    "broken_object_skipped_to_end_token": (A + '{"name": "search", oops}' + E + " x " + A + W + E,
                                           [ParseError(None, "json_syntax", 45, ""), Text(" x")]
                                           + call(0, "get_weather", W_ARGS)),
    "junk_before_end_token": (A + W + " junk" + E + "ok",
                              call(0, "get_weather", W_ARGS) + [ParseError(None, "trailing_content", 94, ""), Text("ok")]),
    "cut_off": (A + '{"name": "search", "parameters": {"q": "ab',
                [CallStart(0, "search"), ArgsDelta(0, '{"q": "ab'), ParseError(0, "unterminated", 68, "")]),
    "cut_off_after_the_tag": ("Hi " + A, [Text("Hi " + A), ParseError(None, "unterminated", 29, "")]),
}


test_golden_every_chunker, test_golden_every_split = golden_tests("interns1", GOLDEN, TOOLS)


def test_arguments_stream_before_the_call_ends():
    p = StreamParser("interns1", TOOLS)
    assert p.feed(B + '\n{"name": "search", "parameters": {"q": "long te') == [
        CallStart(0, "search"), ArgsDelta(0, '{"q": "long te')]
    assert p.feed("xt") == [ArgsDelta(0, "xt")]
    assert p.feed('"}}') == [ArgsDelta(0, '"}'), CallEnd(0, "search", '{"q": "long text"}')]
    assert p.feed(E + "ok") == [Text("ok")]


# ---- parity with SGLang's InternlmDetector (builtin vs native) ----------------
PTOOLS = ("get_weather", "search")
W_CALL = ("get_weather", W_ARGS)
S2 = '{"name": "search", "arguments": {"q": "caf\u00e9"}}'
S_CALL = ("search", '{"q": "café"}')
CASES = {  # name -> (text, prose, calls)
    "one_call": (B + "\n" + W + E, "", [W_CALL]),
    "prose_then_call": ("Let me check." + B + "\n" + W + E, "Let me check.", [W_CALL]),
    "two_calls": (B + "\n" + W + E + B + "\n" + S2 + E, "", [W_CALL, S_CALL]),
    "prose_after_call": (B + "\n" + W + E + " Done.", " Done.", [W_CALL]),
    "end_token_inside_a_string": (B + "\n" + S + E, "", [("search", S_ARGS)]),
}
# what SGLang's InternlmDetector gets wrong
PROSE_AFTER = "SGLang drops prose after the first call (its streaming path returns no text once a call was sent; its one-shot keeps only the text before the first call)"
SECOND = ("SGLang loses a second call: after the first it discards every chunk without the whole "
          "opening tag (a partial tag included), and one chunk holding two calls gives only the first")
END_IN_STRING = "SGLang ends the call at the first <|action_end|>, even inside a JSON string, and drops the call"
ONE_SHOT_FAILS = {"prose_after_call": PROSE_AFTER, "end_token_inside_a_string": END_IN_STRING}

# what each chunking gives SGLang (bursts carry the second opening tag whole)
BUILTIN_STREAM_FAILS = {("two_calls", c): SECOND for c in ("chars", "fixed4", "one", "tokens")}
BUILTIN_STREAM_FAILS.update({("prose_after_call", c): PROSE_AFTER for c in CHUNKERS})
BUILTIN_STREAM_FAILS.update({("end_token_inside_a_string", c): END_IN_STRING for c in CHUNKERS})

test_one_shot_same_calls, test_streamed_calls = parity_tests(
    "interns1", CASES, PTOOLS,
    streamed_xfail=lambda impl, case, chunker: BUILTIN_STREAM_FAILS.get((case, chunker)) if impl == "builtin" else None,
    one_shot_xfail=lambda impl, case: ONE_SHOT_FAILS.get(case) if impl == "builtin" else None)


def test_has_tool_call_agrees_with_the_parse(fcp, sglang_tool):
    p = fcp.FunctionCallParser(sglang_tool(*PTOOLS), "interns1_native")
    assert p.has_tool_call(B + W + E) and p.has_tool_call("Hi " + A + W + E)
    assert not p.has_tool_call("Use " + A + " then") and not p.has_tool_call("<|action_start|><|interpreter|>x")
