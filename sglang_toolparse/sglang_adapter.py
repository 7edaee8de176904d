"""SGLang adapter: detectors that subclass SGLang's own (so structural-tag,
grammar and structure_info keep working) and replace the parsing methods
with the native core. Imports SGLang; loaded lazily by the plugin."""
from __future__ import annotations

import logging
from typing import Any, List, Optional, Tuple

from sglang.srt.environ import envs
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.function_call.hermes_detector import HermesDetector
from sglang.srt.function_call.qwen25_detector import Qwen25Detector

from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, ParseError, Text
from sglang_toolparse._core import StreamParser as _CoreParser
from sglang_toolparse.api import StreamParser
from sglang_toolparse.tool_specs import usable_tools

logger = logging.getLogger("sglang_toolparse")

# Called for every ParseError with (parser name, error); the metrics module
# installs itself here. Kept as a plain list so the hot path pays nothing
# when it is empty.
ERROR_OBSERVERS: List[Any] = []
CALL_OBSERVERS: List[Any] = []


class StreamedArgs(list):
    """`streamed_args_for_tool` for the serving layer: a list of str whose
    items grow by appending pieces, joined only when read, so streaming a
    huge argument costs time linear in its size (`lst[i] += delta` would
    copy the whole string on every chunk)."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: List[List[str]] = []

    def open(self, i: int) -> None:
        while len(self) <= i:
            list.append(self, "")
            self._pending.append([])

    def add(self, i: int, piece: str) -> None:
        self._pending[i].append(piece)

    def _flush(self) -> None:
        for i, pieces in enumerate(self._pending):
            if pieces:
                list.__setitem__(self, i, list.__getitem__(self, i) + "".join(pieces))
                pieces.clear()

    def __getitem__(self, i):  # type: ignore[override]
        self._flush()
        return list.__getitem__(self, i)

    def __iter__(self):  # type: ignore[override]
        self._flush()
        return list.__iter__(self)

    def __eq__(self, other: object) -> bool:
        self._flush()
        return list.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._flush()
        return list.__repr__(self)


class NativeDetectorMixin:
    """Maps core events onto SGLang's StreamingParseResult and keeps the
    state the serving layer reads (prev_tool_call_arr, streamed_args_for_tool,
    current_tool_id, current_tool_name_sent) consistent with what was sent."""

    _tp_format: str = ""
    _tp_markers: Tuple[str, ...] = ()
    parser_name: str = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tp: Optional[StreamParser] = None
        self.streamed_args_for_tool = StreamedArgs()
        # calls whose name was streamed but that never completed (cut off or
        # broken): SGLang's serving layer then keeps finish_reason "stop"
        # instead of "tool_calls", as for its own response-template parser
        self.incomplete_tool_call_indices: set = set()

    # -- helpers ---------------------------------------------------------
    def _new_parser(self, tools: Any) -> StreamParser:
        # whole tools, not just names: schema-typed formats read
        # `function.parameters` to type values as SGLang does; the request's
        # own list when it is usable as it is, so its compiled tools are
        # found by identity for every parser of the request
        return StreamParser(
            self._tp_format,
            usable_tools(tools),  # never raises: takes what SGLang's serving layer takes
            forward_unknown=bool(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get()),
        )

    def _stream(self, tools: Any) -> StreamParser:
        if self._tp is None:
            self._tp = self._new_parser(tools)
        return self._tp

    def _report(self, err: ParseError) -> None:
        if err.code == "unknown_tool":
            logger.warning("%s: model attempted to call undefined function %r", self.parser_name, err.detail)
        else:
            logger.warning("%s: dropped tool call: %s", self.parser_name, err.reason)
        for obs in ERROR_OBSERVERS:
            obs(self.parser_name, err)

    def _to_result(self, events: list) -> StreamingParseResult:
        if not events:
            return StreamingParseResult()
        text: List[str] = []
        calls: List[ToolCallItem] = []
        for ev in events:
            t = type(ev)
            if t is Text:
                text.append(ev.text)
            elif t is ArgsDelta:
                i = ev.index
                self.streamed_args_for_tool.add(i, ev.delta)
                last = calls[-1] if calls else None
                if last is not None and last.tool_index == i and last.name is None:
                    last.parameters += ev.delta
                else:
                    calls.append(ToolCallItem(tool_index=i, name=None, parameters=ev.delta))
            elif t is CallStart:
                i = ev.index
                self.streamed_args_for_tool.open(i)
                while len(self.prev_tool_call_arr) <= i:
                    self.prev_tool_call_arr.append({})
                # until the call ends, "arguments" is "": the serving layer's
                # end-of-stream check (_check_for_unstreamed_tool_args) sends
                # expected[len(streamed):] only if expected starts with what
                # was streamed, so a call cut off mid-way gets nothing invented
                self.prev_tool_call_arr[i] = {"name": ev.name, "arguments": ""}
                self.current_tool_id = i
                self.current_tool_name_sent = True
                self.incomplete_tool_call_indices.add(i)
                calls.append(ToolCallItem(tool_index=i, name=ev.name, parameters=""))
            elif t is CallEnd:
                i = ev.index
                # the arguments as streamed (JSON text), as SGLang's DSML
                # detectors store them: the serving layer's end-of-stream
                # check then finds nothing left to send, and no re-encoding
                # of a decoded dict can differ from what the client got
                self.prev_tool_call_arr[i] = {"name": ev.name, "arguments": ev.arguments}
                self.incomplete_tool_call_indices.discard(i)
                self.current_tool_id = i + 1
                self.current_tool_name_sent = False
                for obs in CALL_OBSERVERS:
                    obs(self.parser_name, ev)
            elif t is ParseError:
                if ev.index is not None:
                    self.current_tool_id = ev.index + 1
                    self.current_tool_name_sent = False
                self._report(ev)
        return StreamingParseResult(normal_text="".join(text), calls=calls)

    # -- SGLang detector interface ----------------------------------------
    def has_tool_call(self, text: str) -> bool:
        """True when `text` holds markup this parser reads as a tool call,
        well-formed or not (the serving layer then takes the parsed message
        instead of the raw text). A marker that starts no call ("use the
        <tool_call> tag") is prose: False. Decided by the core itself, with
        every tool name accepted, so it agrees with what parsing does."""
        starts = [i for i in (text.find(m) for m in self._tp_markers) if i >= 0]
        if not starts:
            return False
        # the core parser itself (no tools, so nothing to compile or type: only
        # the kinds of events matter), fed the prose before the first marker,
        # then growing pieces until a call shows (a parse gives the same events
        # for any split, so stopping there is exact and a long argument is not
        # read twice by parse_non_stream)
        p = _CoreParser(self._tp_format, None)
        pos, step, seen = min(starts), 256, []
        events = p.feed(text[:pos])
        while True:
            seen += events
            if any(type(ev) is not Text for ev in events):
                return True
            if pos >= len(text):
                break
            events = p.feed(text[pos:pos + step])
            pos, step = pos + step, step * 2
        seen += p.finish()
        if any(type(ev) is not Text for ev in seen):
            return True
        return "".join(ev.text for ev in seen) != text

    def detect_and_parse(self, text: str, tools: List[Any]) -> StreamingParseResult:
        p = self._new_parser(tools)
        calls: List[ToolCallItem] = []
        normal: List[str] = []
        for ev in p.parse_all(text):  # one pass; each call's arguments built once
            t = type(ev)
            if t is Text:
                normal.append(ev.text)
            elif t is CallEnd:
                calls.append(ToolCallItem(tool_index=ev.index, name=ev.name, parameters=ev.arguments))
                for obs in CALL_OBSERVERS:
                    obs(self.parser_name, ev)
            elif t is ParseError:
                self._report(ev)
        return StreamingParseResult(normal_text="".join(normal), calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: List[Any]) -> StreamingParseResult:
        return self._to_result(self._stream(tools).feed(new_text))

    def finish(self, tools: List[Any]) -> StreamingParseResult:
        if self._tp is None:
            return StreamingParseResult()
        return self._to_result(self._tp.finish())


class Qwen25NativeDetector(NativeDetectorMixin, Qwen25Detector):
    """Qwen2.5 / Qwen3 (`<tool_call>\\n{...}\\n</tool_call>`), native core."""

    _tp_format = "qwen25"
    _tp_markers = ("<tool_call>",)
    parser_name = "qwen25_native"


class HermesNativeDetector(NativeDetectorMixin, HermesDetector):
    """Hermes (`<tool_call>{...}</tool_call>`), native core."""

    _tp_format = "hermes"
    _tp_markers = ("<tool_call>",)
    parser_name = "hermes_native"



# --- GLM: values typed by the tools' schemas (SGLang's rules, glm_types.py) ---
from sglang.srt.function_call.glm4_moe_detector import Glm4MoeDetector  # noqa: E402
from sglang.srt.function_call.glm47_moe_detector import Glm47MoeDetector  # noqa: E402


class Glm45NativeDetector(NativeDetectorMixin, Glm4MoeDetector):
    """GLM-4.5 / GLM-4.6 (`<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>...`), native core."""

    _tp_format = "glm45"
    _tp_markers = ("<tool_call>",)
    parser_name = "glm45_native"


class Glm47NativeDetector(NativeDetectorMixin, Glm47MoeDetector):
    """GLM-4.7 / GLM-5 (`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...`), native core."""

    _tp_format = "glm47"
    _tp_markers = ("<tool_call>",)
    parser_name = "glm47_native"


# ---- DeepSeek (issue 3) ------------------------------------------------------
from sglang.srt.function_call.deepseekv3_detector import DeepSeekV3Detector  # noqa: E402
from sglang.srt.function_call.deepseekv31_detector import DeepSeekV31Detector  # noqa: E402
from sglang.srt.function_call.deepseekv32_detector import DeepSeekV32Detector  # noqa: E402
from sglang.srt.function_call.deepseekv4_detector import DeepSeekV4Detector  # noqa: E402
from sglang.srt.function_call.deepseekv41_detector import DeepSeekV41Detector  # noqa: E402

_DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
_DS_CALL_BEGIN = "<｜tool▁call▁begin｜>"


class DeepSeekV3NativeDetector(NativeDetectorMixin, DeepSeekV3Detector):
    """DeepSeek V3 (`<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` + a ```json
    fence), native core."""

    _tp_format = "deepseekv3"
    _tp_markers = (_DS_CALLS_BEGIN, _DS_CALL_BEGIN)
    parser_name = "deepseekv3_native"


class DeepSeekV31NativeDetector(NativeDetectorMixin, DeepSeekV31Detector):
    """DeepSeek V3.1 (`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ARGS}`), native core."""

    _tp_format = "deepseekv31"
    _tp_markers = (_DS_CALLS_BEGIN, _DS_CALL_BEGIN)
    parser_name = "deepseekv31_native"


def _dsml_markers(cls: Any) -> Tuple[str, ...]:
    """What every DSML tag starts with (every DSML parser reads every
    block and tag spelling), from SGLang's own token."""
    return ("<" + cls.dsml_token,)


class DeepSeekV32NativeDetector(NativeDetectorMixin, DeepSeekV32Detector):
    """DeepSeek V3.2 DSML (`<｜DSML｜function_calls>`), native core."""

    _tp_format = "deepseekv32"
    _tp_markers = _dsml_markers(DeepSeekV32Detector)
    parser_name = "deepseekv32_native"


class DeepSeekV4NativeDetector(NativeDetectorMixin, DeepSeekV4Detector):
    """DeepSeek V4 DSML (`<｜DSML｜tool_calls>`), native core."""

    _tp_format = "deepseekv4"
    _tp_markers = _dsml_markers(DeepSeekV4Detector)
    parser_name = "deepseekv4_native"


class DeepSeekV41NativeDetector(NativeDetectorMixin, DeepSeekV41Detector):
    """DeepSeek V4.1 DSML (`<｜DSML｜ calls>`, ` invoke`, ` parameter`), native core."""

    _tp_format = "deepseekv41"
    _tp_markers = _dsml_markers(DeepSeekV41Detector)
    parser_name = "deepseekv41_native"


# ---- Kimi-K2 / K2.5 (issue 13) -------------------------------------------------
from sglang.srt.function_call.kimik2_detector import KimiK2Detector  # noqa: E402


class KimiK2NativeDetector(NativeDetectorMixin, KimiK2Detector):
    """Kimi-K2 / K2.5 (`<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{ARGS}`),
    native core. The serving layer builds the client's call id for `kimi_k2`
    as `functions.{name}:{history calls + tool_index}` from the ToolCallItem
    (name, per-response tool_index), as it does for SGLang's own detector;
    the model's own id is on the standalone API's CallStart/CallEnd.id."""

    _tp_format = "kimi_k2"
    _tp_markers = ("<|tool_calls_section_begin|>", "<|tool_call_begin|>")
    parser_name = "kimi_k2_native"


# ---- Qwen3-Coder / Qwen3.5 and MiniMax-M2 (issue 12): XML parameters typed by
# the tools' schemas (SGLang's rules, xml_types.py) ----------------------------
from sglang.srt.function_call.minimax_m2 import MinimaxM2Detector  # noqa: E402
from sglang.srt.function_call.qwen3_coder_detector import Qwen3CoderDetector  # noqa: E402


class Qwen3CoderNativeDetector(NativeDetectorMixin, Qwen3CoderDetector):
    """Qwen3-Coder / Qwen3.5 (`<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>...`), native core."""

    _tp_format = "qwen3_coder"
    _tp_markers = ("<tool_call>",)
    parser_name = "qwen3_coder_native"


class MinimaxM2NativeDetector(NativeDetectorMixin, MinimaxM2Detector):
    """MiniMax-M2 (`<minimax:tool_call>\\n<invoke name="NAME">\\n<parameter name="KEY">VALUE</parameter>...`), native core."""

    _tp_format = "minimax_m2"
    _tp_markers = ("<minimax:tool_call>",)
    parser_name = "minimax-m2_native"


# ---- Llama 3.1 / 3.2 / 3.3 (issue 22): JSON objects, `;` between calls ------
from sglang.srt.function_call.llama32_detector import Llama32Detector  # noqa: E402


class Llama3NativeDetector(NativeDetectorMixin, Llama32Detector):
    """Llama 3.x (`<|python_tag|>{"name": ..., "parameters": {...}}; {...}`, or
    the object first in the output), native core (a row of fmt_jsontag.c)."""

    _tp_format = "llama3"
    _tp_markers = ("<|python_tag|>", "{")
    parser_name = "llama3_native"


# ---- Mistral v11+ (issue 22): [TOOL_CALLS]NAME[ARGS]{...} -------------------
from sglang.srt.function_call.mistral_detector import MistralDetector  # noqa: E402


class MistralNativeDetector(NativeDetectorMixin, MistralDetector):
    """Mistral Small/Medium/Large 3.x, Devstral, Magistral (v11+ tokenizers:
    `[TOOL_CALLS]NAME[ARGS]{...}`, `[CALL_ID]ID` before `[ARGS]` where the
    tokenizer writes ids), native core (a row of fmt_deepseek.c). The pre-v11
    array form `[TOOL_CALLS][{...}]` is not read natively (it stays text)."""

    _tp_format = "mistral"
    _tp_markers = ("[TOOL_CALLS]",)
    parser_name = "mistral_native"


# ---- Pythonic (Llama 4; issue 22): [f(a=1, b="x"), g()] ----------------------
from sglang.srt.function_call.pythonic_detector import PythonicDetector  # noqa: E402


class PythonicNativeDetector(NativeDetectorMixin, PythonicDetector):
    """Llama 4 Scout/Maverick and pythonic Llama 3.2 prompts
    (`[f(a=1, b="x"), g()]`, Python literals converted to JSON as SGLang's
    `ast` conversion does, strings streamed), native core (fmt_pythonic.c)."""

    _tp_format = "pythonic"
    _tp_markers = ("[",)
    parser_name = "pythonic_native"
