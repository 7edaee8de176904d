"""has_tool_call feeds the text in growing pieces from the first marker on
and stops at the first call event; its answer must be the one a single feed
of the whole text gives (a marker split across its pieces, a marker in
prose, a call far from the first marker)."""
from __future__ import annotations

import os

import pytest

try:
    from sglang_toolparse import sglang_adapter as ad
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
        raise
    pytest.skip("SGLang not installed: %s" % e, allow_module_level=True)

from sglang_toolparse._core import StreamParser, Text

DSML = "\uff5cDSML\uff5c"
V4_CALL = ("<" + DSML + "tool_calls>\n<" + DSML + 'invoke name="f">\n<' + DSML
           + 'parameter name="a" string="true">x</' + DSML + "parameter>\n</" + DSML + "invoke>\n</"
           + DSML + "tool_calls>")
KIMI_CALL = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
             '{"a": 1}<|tool_call_end|><|tool_calls_section_end|>')
CASES = {
    ad.DeepSeekV4NativeDetector: (V4_CALL, "<" + DSML + "tool_calls>", "</" + DSML + "invoke>"),
    ad.KimiK2NativeDetector: (KIMI_CALL, "<|tool_calls_section_begin|>", "<|tool_call_end|>"),
}


def one_feed(cls, text: str) -> bool:
    if not any(m in text for m in cls._tp_markers):
        return False
    p = StreamParser(cls._tp_format, None)
    events = p.feed(text) + p.finish()
    return any(type(ev) is not Text for ev in events) or "".join(ev.text for ev in events) != text


def texts(call: str, marker: str, stray: str):
    for pad in (0, 1, 200, 255, 256, 257, 700, 767, 768, 1791):
        # the first marker as prose (a stray end tag), the call `pad` bytes on
        yield stray + "y" * pad + call
        # a call whose opening marker straddles a piece boundary
        yield "p " + "z" * pad + call + " after"
        # a marker-like text that never becomes a call
        yield stray + " " * pad + marker[:-1] + " no"
        yield "q" + " " * pad + stray


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_has_tool_call_agrees_with_one_feed(cls):
    call, marker, stray = CASES[cls]
    det = cls()
    answers = set()
    for text in texts(call, marker, stray):
        answers.add(one_feed(cls, text))
        assert det.has_tool_call(text) == one_feed(cls, text), text[:80]
    assert answers == {True, False}  # both answers are exercised
