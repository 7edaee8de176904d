"""Reasoning-parser side of a native tool parser, for formats where SGLang's
reasoning parser sits in front of the tool parser and holds tool calls back.

gpt-oss: SGLang's `--reasoning-parser gpt-oss` (GptOssDetector over its
HarmonyParser) takes the `analysis` channel out as reasoning and hands the
tool parser everything else, but holds each tool-call message until its
`<|call|>` and then hands it over whole: the client gets no argument before
the model has finished writing it. When the server's tool parser is
`gpt-oss_native` and the request's output goes through it
(`tool_call_parser_active`, which SGLang's ReasoningParser passes to a
detector that takes it), this detector reads the stream with the native
core instead: reasoning as it is generated, final/preamble text as text, and
each call re-written for the tool parser as a canonical Harmony call
message whose arguments are passed on as they stream. Whatever else SGLang
decides is unchanged; when no tool parser reads the output, SGLang's own
detector runs (it passes calls on as raw text, which is then content).

Imports SGLang; installed by sglang_plugin (see REASONING_PAIRS there).
"""
from __future__ import annotations

import logging
from typing import Any, List

from sglang.srt.parser.reasoning_parser import GptOssDetector, StreamingParseResult

from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, ParseError, Reasoning, Text
from sglang_toolparse._core import StreamParser as _CoreParser

logger = logging.getLogger("sglang_toolparse")

_CALL_HEAD = "<|start|>assistant<|channel|>commentary to=functions.%s <|constrain|>json<|message|>"
_CALL_END = "<|call|>"


class GptOssNativeReasoningDetector(GptOssDetector):
    """SGLang's GptOssDetector; with a tool parser active, the native core
    reads the stream (see the module docstring)."""

    def __init__(self, *args: Any, tool_call_parser_active: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tp_active = bool(tool_call_parser_active)
        self._tp = _CoreParser("gpt_oss", None) if self._tp_active else None  # every name: the tool parser checks

    def _render(self, events: List[Any]) -> StreamingParseResult:
        normal: List[str] = []
        reasoning: List[str] = []
        for ev in events:
            t = type(ev)
            if t is Text:
                normal.append(ev.text)
            elif t is Reasoning:
                reasoning.append(ev.text)
            elif t is ArgsDelta:
                normal.append(ev.delta)
            elif t is CallStart:
                normal.append(_CALL_HEAD % ev.name)
            elif t is CallEnd:
                normal.append(_CALL_END)
            elif t is ParseError:
                if ev.index is not None:
                    # a call broken after it was passed on: end it, so the
                    # tool parser sees it broken too (it reports it)
                    normal.append(_CALL_END)
                else:
                    logger.debug("gpt-oss reasoning parser: %s", ev.reason)
        return StreamingParseResult(normal_text="".join(normal), reasoning_text="".join(reasoning))

    def parse_streaming_increment(self, new_text: str) -> StreamingParseResult:
        if self._tp is None:
            return super().parse_streaming_increment(new_text)
        return self._render(self._tp.feed(new_text))

    def finish(self) -> StreamingParseResult:  # type: ignore[override]
        if self._tp is None:
            return super().finish()
        return self._render(self._tp.finish())

    def detect_and_parse(self, text: str) -> StreamingParseResult:
        if self._tp is None:
            return super().detect_and_parse(text)
        p = _CoreParser("gpt_oss", None)
        return self._maybe_apply_force_nonempty_content(self._render(p.feed(text) + p.finish()))
