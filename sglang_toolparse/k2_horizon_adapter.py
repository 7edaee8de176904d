"""`k2_horizon_native`: MBZUAI/LLM360 K2 Horizon's `<ifm|...>` tool calls.

The chat template writes calls in one of three dialects, chosen by its
`tool_call_format` (one per conversation) and all read by SGLang's
K2V3Detector from what a call holds:

- `xml`:       <ifm|tool_call>NAME\\n<ifm|arg_key>K</ifm|arg_key>\\n<ifm|arg_value>V</ifm|arg_value>\\n</ifm|tool_call>
- `xml_typed`: the same with <ifm|arg_type>T</ifm|arg_type>\\n before each value
- `json`:      <ifm|tool_call>{"name": ..., "arguments": {...}}</ifm|tool_call>

inside an optional <ifm|tool_calls> group. The two XML dialects are a row of
the GLM engine (csrc/fmt_glm.c: an optional group, a type tag), typed by
glm_row_types.k2_* and streamed as generated. Two shapes are left to
SGLang's own detector, exactly (docs/PARSERS.md):

- a stream whose *first* call has a JSON body (the template's `json`
  dialect): from the moment that body's first character shows, SGLang's
  K2V3Detector replays the stream's chunks and parses the rest; the text
  already sent is not sent again;
- a stream that begins (after blanks) with an <ifm|think>,
  <ifm|think_fast> or <ifm|think_faster> block, which the builtin passes
  through as text without looking for calls in it: decided before anything
  is sent (at most the opener's length is held).

Everything else never leaves the native path; the gate's cost is one
`str.find` over the new text until the first call's dialect is known.
"""
from __future__ import annotations

import logging
import types
from typing import Any, List, Optional, Tuple

from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.function_call.k2_v3_detector import K2V3Detector


logger = logging.getLogger(__name__)

CALL = "<ifm|tool_call>"
THINK_OPENERS = ("<ifm|think>", "<ifm|think_fast>", "<ifm|think_faster>")

NATIVE, SGLANG = "native", "sglang"
_LEAD = 32  # longer than every think opener


def find_call(text: str, start: int = 0) -> int:
    """text.find(CALL, start), by its first character (a search for the
    whole tag is several times slower on prose)."""
    i = text.find("<", start)
    while i >= 0 and not text.startswith(CALL, i):
        i = text.find("<", i + 1)
    return i


def _think_lead(lead: str, final: bool) -> Optional[bool]:
    """A stream that starts with `lead` (blanks taken off): True if it
    starts with a think opener, None while it may still, else False."""
    if lead[:1] != "<":
        return False
    if lead.startswith(THINK_OPENERS):
        return True
    if any(t.startswith(lead) for t in THINK_OPENERS):
        return True if final else None  # a cut-off opener: the builtin passes it through
    return False


def dialect(text: str, final: bool) -> Optional[str]:
    """Who parses a stream that begins with `text`: NATIVE, SGLANG, or None
    while that cannot be told yet (`final`: nothing more will come)."""
    lead = text[:_LEAD].lstrip()
    if not lead and len(text) > _LEAD:
        lead = text.lstrip()[:_LEAD]  # (a long blank start: rare)
    if not lead:
        return NATIVE if final else None
    think = _think_lead(lead, final)
    if think is None:
        return None
    if think:
        return SGLANG
    at = find_call(text)
    if at < 0:
        return NATIVE if final else None
    body = text[at + len(CALL):at + len(CALL) + _LEAD].lstrip()
    if not body and len(text) > at + len(CALL) + _LEAD:
        body = text[at + len(CALL):].lstrip()[:1]
    if not body:
        return NATIVE if final else None
    return SGLANG if body[0] in "{[" else NATIVE


def _items(calls: list) -> list:
    """ToolCallItems for a StreamingParseResult: stream_pair hands the
    serving hooks light deltas (sglang_adapter.Delta), pydantic wants its own."""
    return [c if isinstance(c, ToolCallItem) else
            ToolCallItem(tool_index=c.tool_index, name=c.name, parameters=c.parameters) for c in calls]


class K2HorizonGate:
    """The dialect gate of sglang_adapter.K2HorizonNativeDetector (placed
    before NativeDetectorMixin and K2V3Detector in its bases): the native
    parser's methods, or SGLang's detector's where it takes over."""

    # per detector once streaming starts (class-level defaults until then):
    # NATIVE / SGLANG once decided; until then the chunks seen (SGLang
    # replays them), the text sent so far, the stream's start while it may
    # still be a think opener, and the text from where a call tag may start
    _k2_mode: Optional[str] = None
    _k2_chunks: Optional[List[str]] = None
    _k2_sent: Optional[List[str]] = None
    _k2_head: Optional[str] = ""  # None once the start is known not to be a think block
    _k2_tail: str = ""

    @staticmethod
    def _tp_hands_over(text: str) -> bool:
        """A complete text that SGLang's detector parses (not the core)."""
        return dialect(text, True) == SGLANG

    # -- one-shot ------------------------------------------------------------
    # (text, dialect(text, True)) for the last complete text asked about
    # (SGLang's parse_non_stream asks has_tool_call, then detect_and_parse)
    _k2_whole: Optional[Tuple[str, Optional[str]]] = None

    def _k2_dialect(self, text: str) -> Optional[str]:
        seen = self._k2_whole
        if seen is not None and seen[0] is text:
            return seen[1]
        d = dialect(text, True)
        self._k2_whole = (text, d)
        return d

    def has_tool_call(self, text: str) -> bool:
        if self._k2_dialect(text) == SGLANG:
            return K2V3Detector.has_tool_call(self, text)
        return super().has_tool_call(text)

    def detect_and_parse(self, text: str, tools: List[Any]) -> StreamingParseResult:
        if self._k2_dialect(text) == SGLANG:
            return K2V3Detector.detect_and_parse(self, text, tools)
        return super().detect_and_parse(text, tools)

    # -- streaming -------------------------------------------------------------
    def parse_streaming_increment(self, new_text: str, tools: List[Any]) -> StreamingParseResult:
        if self._k2_mode == SGLANG:
            return K2V3Detector.parse_streaming_increment(self, new_text, tools)
        if self._k2_mode == NATIVE:
            return super().parse_streaming_increment(new_text, tools)
        text, calls = self._k2_step(new_text, tools, False)
        return StreamingParseResult(normal_text=text, calls=_items(calls))

    def stream_pair(self, new_text: str, tools: List[Any]) -> Tuple[str, List[Any]]:
        if self._k2_mode == NATIVE:
            return super().stream_pair(new_text, tools)
        if self._k2_mode == SGLANG:
            r = K2V3Detector.parse_streaming_increment(self, new_text, tools)
            return r.normal_text, list(r.calls)
        return self._k2_step(new_text, tools, False)

    def finish(self, tools: List[Any]) -> StreamingParseResult:
        if self._k2_mode == SGLANG:
            return K2V3Detector.finish(self, tools)
        if self._k2_mode == NATIVE:
            return super().finish(tools)
        text, calls = self._k2_step("", tools, True)
        return StreamingParseResult(normal_text=text, calls=_items(calls))

    def _k2_step(self, new_text: str, tools: List[Any], final: bool) -> Tuple[str, list]:
        """An undecided stream: decide with `new_text` (cost: the new text
        and a tag's length), feed the native parser what it may read."""
        if self._k2_chunks is None:
            self._k2_chunks, self._k2_sent = [], []
        if new_text:
            self._k2_chunks.append(new_text)
        feed = new_text
        mode = None
        if self._k2_head is not None:  # the start: a think block or not
            head = self._k2_head + new_text
            lead = head.lstrip()
            think = _think_lead(lead[:_LEAD], final) if lead else (False if final else None)
            if think is None:
                self._k2_head = head
                return "", []  # nothing may be sent yet
            if think:
                mode = SGLANG
            self._k2_head = None
            feed = head  # the held start, then the new text
        if mode is None:
            if not self._k2_tail and "<" not in feed:  # no tag can start here
                mode = NATIVE if final else None
            else:
                tail = self._k2_tail + feed
                at = find_call(tail)
                if at < 0:  # keep where a tag cut at the end may start
                    lt = tail.find("<", max(0, len(tail) - len(CALL) + 1))
                    self._k2_tail = tail[lt:] if lt >= 0 else ""
                    mode = NATIVE if final else None
                else:
                    body = tail[at + len(CALL):].lstrip()
                    if body:
                        mode = SGLANG if body[0] in "{[" else NATIVE
                    else:
                        self._k2_tail = CALL  # blanks after the tag: the body is still to come
                        mode = NATIVE if final else None
        if mode == SGLANG:
            return self._k2_take_over(tools, final)
        text, calls = super().stream_pair(feed, tools) if feed else ("", [])
        if mode == NATIVE:
            self._k2_mode = NATIVE
            self._k2_chunks = self._k2_sent = None
            self._k2_tail = ""
            self._k2_bind(super(K2HorizonGate, self))
            if final:
                if self._tp is not None:
                    t2, c2 = self._to_pair(self._tp.finish())
                    text, calls = text + t2, calls + c2
        else:
            self._k2_sent.append(text)
        return text, calls

    def _k2_bind(self, native: Any) -> None:
        """Decided: the stream's methods straight to the native parser's
        (`native`: this detector's NativeDetectorMixin view) or to SGLang's
        detector's, so no chunk after this one goes through the gate."""
        for m in ("parse_streaming_increment", "stream_pair", "finish"):
            if native is not None:
                setattr(self, m, getattr(native, m))
            elif m != "stream_pair":
                setattr(self, m, types.MethodType(getattr(K2V3Detector, m), self))

    def _k2_take_over(self, tools: List[Any], final: bool) -> Tuple[str, list]:
        """SGLang's detector replays the chunks so far, as they came; the
        text the native parser already sent is not sent again."""
        chunks, sent = self._k2_chunks or [], "".join(self._k2_sent or ())
        self._k2_mode = SGLANG
        self._k2_bind(None)
        self._k2_chunks = self._k2_sent = None
        self._tp = None  # what the native parser held is SGLang's to read now
        results = [K2V3Detector.parse_streaming_increment(self, c, tools) for c in chunks]
        if final:
            results.append(K2V3Detector.finish(self, tools))
        normal = "".join(r.normal_text for r in results)
        calls = [c for r in results for c in r.calls]
        if not normal.startswith(sent):  # (prose inside a group with blanks at a chunk's start)
            k = 0
            while k < min(len(sent), len(normal)) and sent[k] == normal[k]:
                k += 1
            logger.warning("%s: SGLang's detector took over a stream whose text so far it reads "
                           "differently; %d characters were sent as the native parser reads them",
                           self.parser_name, len(sent) - k)
            sent = sent[:k]
        return normal[len(sent):], calls
