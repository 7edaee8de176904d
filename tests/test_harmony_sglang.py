"""Parity with SGLang's GptOssDetector (`gpt-oss`) through FunctionCallParser,
parametrized over the implementations (builtin vs native), one-shot and
streamed with every chunker. The tool parser alone here (no reasoning
parser: it gets the raw Harmony stream); the pair with
`--reasoning-parser gpt-oss` is tested through OpenAIServingChat in
tests/test_serving_chat.py. Declared differences are strict xfails that say
why SGLang is wrong (docs/PARSERS.md, gpt-oss)."""
import json

import pytest

from sglang_support import one_shot, stream_through
from support import CHUNKERS as _CHUNKERS
from support import token_like

from test_harmony_golden import CALL, CH, CO, END, M, RET, S, analysis, call, call_role_header, msg

SPECIAL = (S, CH, M, CO, END, CALL, RET)


def special_tokens(text):
    """Token-like pieces with Harmony's special tokens whole (as a real
    stream delivers them: they are single tokens of the vocabulary)."""
    out, i, rest = [], 0, ""
    while i < len(text):
        hit = next((t for t in SPECIAL if text.startswith(t, i)), None)
        if hit is None:
            rest += text[i]
            i += 1
            continue
        out += token_like(rest, seed=len(out)) if rest else []
        out.append(hit)
        rest, i = "", i + len(hit)
    return out + (token_like(rest, seed=len(out)) if rest else [])


CHUNKERS = dict(_CHUNKERS, special_tokens=special_tokens)
TOOLS = ("get_weather", "search")
W = '{"city": "Paris", "days": 3}'
Q = '{"q": "caf\u00e9 \\"x\\" \\ud83d\\ude00", "n": [1.5, null]}'
W_CALL = ("get_weather", W)
Q_CALL = ("search", json.dumps(json.loads(Q), ensure_ascii=False))

# name -> (text, expected content, expected calls)
CASES = {
    "docs_call": (analysis("Need weather.") + call("get_weather", W), "", [W_CALL]),
    "first_message_call": (CH + "commentary to=functions.get_weather " + CO + "json" + M + W + CALL, "", [W_CALL]),
    "preamble_two_calls": (analysis("t") + msg("commentary", "Checking.") + call("get_weather", W) + call("search", Q),
                           "Checking.", [W_CALL, Q_CALL]),
    "preamble_call_final": (msg("commentary", "Checking.") + call("get_weather", W) + msg("final", "Sunny.", RET),
                            "Checking.Sunny.", [W_CALL]),
    "call_then_final": (call("get_weather", W) + analysis("ok") + msg("final", "Sunny.", RET), "Sunny.", [W_CALL]),
    "final_only": (analysis("easy") + msg("final", "Hello there.", RET), "Hello there.", []),
    "role_header_recipient": (call_role_header("get_weather", W), "", [W_CALL]),
    "no_constrain": (S + "assistant" + CH + "commentary to=functions.get_weather" + M + W + CALL, "", [W_CALL]),
    "marker_in_argument": (call("search", '{"q": "<|call|>x<|end|>"}'), "", [("search", '{"q": "<|call|>x<|end|>"}')]),
}
IMPLS = ["builtin", "native"]

_RAW = ("SGLang's has_tool_call looks only for '<|start|>assistant<|channel|>commentary': a response "
        "without it (the model's first message starts at <|channel|>; a final answer) is returned "
        "one-shot as the raw Harmony markup, while its streaming path parses it")
_JOIN = "SGLang's one-shot joins the content of separate messages with ' ' (streamed: with '')"
_CONSTRAIN = ("SGLang's regex requires '<|constrain|>json' right after the recipient: the chat template's own "
              "spelling (recipient in the role header, bare 'json') and calls without <|constrain|> are dropped")
_MARKER = ("a Harmony token spelled inside a JSON string argument ends SGLang's message there: the call is "
           "dropped and the rest of the string leaks as content")
_BURST_ANALYSIS = ("a burst holding the end of an earlier message (analysis, preamble) and the whole call: "
                   "SGLang never sends the call")
_SPLIT = ("Harmony's tokens split across chunks (text streams, a client re-chunking): SGLang streams the held "
          "markup as content and sends no call (with whole special tokens it is right: the special_tokens chunker)")
# (kind, case, chunker or "one-shot") -> why SGLang is wrong there
SGLANG_WRONG = {
    ("calls", "first_message_call", "one-shot"): _RAW,
    ("content", "first_message_call", "one-shot"): _RAW,
    ("content", "final_only", "one-shot"): _RAW,
    ("content", "preamble_call_final", "one-shot"): _JOIN,
    ("calls", "role_header_recipient", "one-shot"): _CONSTRAIN,
    ("content", "role_header_recipient", "one-shot"): _RAW,
    ("calls", "no_constrain", "one-shot"): _CONSTRAIN,
    ("calls", "marker_in_argument", "one-shot"): _MARKER,
    ("content", "marker_in_argument", "one-shot"): _MARKER,
    ("calls", "docs_call", "bursts"): _BURST_ANALYSIS,
    ("calls", "preamble_call_final", "bursts"): _BURST_ANALYSIS,
}
for _c in CHUNKERS:
    SGLANG_WRONG[("calls", "role_header_recipient", _c)] = _CONSTRAIN
    SGLANG_WRONG[("calls", "no_constrain", _c)] = _CONSTRAIN
    SGLANG_WRONG[("calls", "marker_in_argument", _c)] = _MARKER
    if _c in ("chars", "fixed4", "tokens"):
        for _case in CASES:
            SGLANG_WRONG.setdefault(("calls", _case, _c), _SPLIT)


def parser_name(impl):
    return "gpt-oss" if impl == "builtin" else "gpt-oss_native"


def _mark(request, impl, kind, case, how):
    why = SGLANG_WRONG.get((kind, case, how))
    if impl == "builtin" and why:
        request.applymarker(pytest.mark.xfail(strict=True, reason=why))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_shot_calls(fcp, sglang_tool, request, impl, case):
    _mark(request, impl, "calls", case, "one-shot")
    text, _content, calls = CASES[case]
    _normal, got = one_shot(fcp, sglang_tool(*TOOLS), parser_name(impl), text)
    assert [(n, json.loads(a)) for n, a in got] == [(n, json.loads(a)) for n, a in calls]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_shot_content(fcp, sglang_tool, request, impl, case):
    _mark(request, impl, "content", case, "one-shot")
    text, content, _calls = CASES[case]
    normal, _got = one_shot(fcp, sglang_tool(*TOOLS), parser_name(impl), text)
    assert normal == content


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_streamed(fcp, sglang_tool, request, impl, case, chunker):
    text, content, calls = CASES[case]
    why_calls = SGLANG_WRONG.get(("calls", case, chunker))
    why_content = SGLANG_WRONG.get(("content", case, chunker))
    if impl == "builtin" and (why_calls or why_content):
        request.applymarker(pytest.mark.xfail(strict=True, reason=why_calls or why_content))
    got_text, got = stream_through(fcp, sglang_tool(*TOOLS), parser_name(impl), CHUNKERS[chunker](text))
    assert [(n, json.loads(a)) for n, a in got] == [(n, json.loads(a)) for n, a in calls]
    assert got_text == content
    if impl == "native":  # and byte for byte the normalized arguments
        assert got == calls
