"""SGLang adapter: detectors that subclass SGLang's own (so structural-tag,
grammar and structure_info keep working) and replace the parsing methods
with the native core. Imports SGLang; loaded lazily by the plugin."""
from __future__ import annotations

import contextvars
import json
import logging
import os
import types
from typing import Any, Dict, List, Optional, Tuple

from sglang.srt.environ import envs
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.function_call.hermes_detector import HermesDetector
from sglang.srt.function_call.qwen25_detector import Qwen25Detector

from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, Markup, ParseError, Text
from sglang_toolparse._core import StreamParser as _CoreParser
from sglang_toolparse._core import find_token, parse_plain, parse_typed, plain_done, plain_look, starts_call
from sglang_toolparse.api import SCHEMA_TYPED_FORMATS
from sglang_toolparse.per_request import _protos as _PROTOS
from sglang_toolparse.per_request import (Fresh, declared_names, declares_all, fast_init, prototype,
                                          request_tools, restore_init, start_from, state_of, typed_fold)
from sglang_toolparse.result_models import parse_result as _spr
from sglang_toolparse.result_models import tool_call_item as _tci

logger = logging.getLogger("sglang_toolparse")

# Called for every ParseError with (parser name, error); the metrics module
# installs itself here. Kept as a plain list so the hot path pays nothing
# when it is empty.
ERROR_OBSERVERS: List[Any] = []
CALL_OBSERVERS: List[Any] = []


class Delta:
    """A streamed tool-call delta with ToolCallItem's attributes (tool_index,
    name, parameters) and none of its pydantic machinery: what
    NativeDetectorMixin.stream_pair hands the serving hooks per chunk. The
    hooks build a real ToolCallItem where SGLang's code receives one
    (`_process_tool_call_id`, once per call)."""

    __slots__ = ("tool_index", "name", "parameters")

    def __init__(self, tool_index: int, name: Optional[str], parameters: str) -> None:
        self.tool_index = tool_index
        self.name = name
        self.parameters = parameters

    def __repr__(self) -> str:
        return "Delta(%r, %r, %r)" % (self.tool_index, self.name, self.parameters)


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


# Set by every native one-shot parse (detect_and_parse): whether the result
# holds an incomplete call. The serving hook (serving_finish.py) reads it to
# keep the non-stream finish_reason what the stream's is ("stop", not
# "tool_calls", for a response whose call was cut off by a stop string or
# EOS).
ONESHOT_INCOMPLETE: "contextvars.ContextVar[bool]" = contextvars.ContextVar("toolparse_oneshot_incomplete",
                                                                           default=False)
_incomplete_now = ONESHOT_INCOMPLETE.get


def closing_suffix(args: str) -> str:
    """What closes `args`, the JSON text of an incomplete call's arguments
    as far as they were generated, into a valid JSON object: the open
    string's quote and the open containers' brackets (`{"a": "xy` -> `"}`).
    "" when nothing closes it without inventing content (a key without its
    value, a cut number or escape, a trailing comma) or it is complete."""
    if not args:
        return ""
    stack: List[str] = []
    in_str = esc = False
    for ch in args:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    if esc:
        return ""
    suffix = ('"' if in_str else "") + "".join(reversed(stack))
    try:
        value = json.loads(args + suffix)
    except ValueError:
        return ""
    return suffix if isinstance(value, dict) else ""


class NativeDetectorMixin:
    """Maps core events onto SGLang's StreamingParseResult and keeps the
    state the serving layer reads (prev_tool_call_arr, streamed_args_for_tool,
    current_tool_id, current_tool_name_sent) consistent with what was sent."""

    _tp_format: str = ""
    _tp_markers: Tuple[str, ...] = ()
    parser_name: str = ""

    # each detector's own, made when first read (a per_request.Fresh on
    # this class for each, set below): `streamed_args_for_tool`, and
    # `incomplete_tool_call_indices`: calls whose name was streamed but that
    # never completed (cut off or broken): SGLang's serving layer then keeps
    # finish_reason "stop" instead of "tool_calls", as for its own
    # response-template parser
    _tp_own = {"streamed_args_for_tool": StreamedArgs, "incomplete_tool_call_indices": set}
    _tp_lead: str = ""  # what every marker starts with (set per class; per detector where it sets _tp_markers)
    # what every token the core reads in text starts with (start markers and
    # stray end tags, which it drops): a text without it is all text
    _tp_token_lead: str = "<"

    _tp_several: bool = False  # markers other than the lead itself
    # a format that does not type values by the tools' schemas: has_tool_call
    # parses the whole text (every name accepted) and detect_and_parse takes
    # that parse when the tools would not have changed it (set per class)
    _tp_untyped: bool = False
    # a schema-typed format whose replies read the tools' schemas only at
    # this token (K2 Horizon: its parameter tags): a reply without it is
    # taken as an untyped format's (has_tool_call parses it whole, every
    # name accepted, and detect_and_parse takes that parse when every call
    # names a declared tool), and the request's schemas are not read
    _tp_schema_token: Optional[str] = None
    # the builtin sends a call of any name, whatever the tools and
    # SGLANG_FORWARD_UNKNOWN_TOOLS say (Kimi K3)
    _tp_forwards_all: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        restore_init(cls, NativeDetectorMixin)
        cls._tp_set_markers(cls, cls._tp_format, cls._tp_markers)

    @staticmethod
    def _tp_set_markers(on: Any, fmt: str, markers: Tuple[str, ...]) -> None:
        """Set the format, its markers and what has_tool_call derives from
        them on `on`: a class, or a detector whose tags come from its
        tokenizer (the class's derived values would be another format's)."""
        on._tp_format = fmt
        on._tp_markers = markers = tuple(markers)
        on._tp_lead = os.path.commonprefix(list(markers)) if markers else ""
        on._tp_several = tuple(markers) != (on._tp_lead,)
        on._tp_untyped = fmt not in SCHEMA_TYPED_FORMATS
        # the same, read by has_tool_call in one attribute read
        on._tp_cfg = (fmt, on._tp_lead, on._tp_several, on._tp_untyped, on._tp_markers, on._tp_token_lead,
                      None if on._tp_untyped else on._tp_schema_token)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # the builtin's state comes from its class's prototype, put on the
        # class (per_request.py): its regexes are compiled once per process,
        # and a one-shot request sets up none of it
        if args or kwargs or not (_PROTOS.get(type(self)) or prototype(type(self), NativeDetectorMixin)):
            super().__init__(*args, **kwargs)
            for name, make in self._tp_own.items():
                setattr(self, name, make())
        else:
            # nothing to set up: the class's next detectors skip this call
            # (object's __init__, ~0.2 us less per request), when the
            # builtin's own __init__ takes no arguments either (what SGLang
            # passes is then refused as the builtin refuses it)
            fast_init(type(self), NativeDetectorMixin)

    # per detector, set when first needed (class-level None until then):
    # the stream's parser, and (text, has_tool_call(text), parsing gives
    # back all of text as text, the events of has_tool_call's whole parse or
    # None) for the last text asked about
    _tp: Optional[_CoreParser] = None
    _tp_seen: Optional[Tuple[str, bool, bool, Optional[list]]] = None

    # -- helpers ---------------------------------------------------------
    def _new_parser(self, tools: Any, forward: Optional[bool] = None) -> _CoreParser:
        # whole tools, not just names: schema-typed formats read
        # `function.parameters` to type values as SGLang does; compiled once
        # per tool list, found by the list's identity or its content
        # (request_tools never raises: it takes what SGLang's serving layer
        # takes)
        if self._tp_forwards_all:
            forward = True
        elif forward is None:
            forward = bool(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get())
        return _CoreParser(self._tp_format, (), compiled=request_tools(self._tp_format, tools),
                           forward_unknown=forward)

    def _stream(self, tools: Any) -> _CoreParser:
        if self._tp is None:
            self._tp = self._new_parser(tools)
        return self._tp

    def _report(self, err: ParseError) -> None:
        if err.code == "unknown_tool":
            logger.warning("%s: model attempted to call undefined function %r", self.parser_name, err.detail)
        elif err.index is not None:
            logger.warning("%s: tool call %d left incomplete: %s", self.parser_name, err.index, err.reason)
        elif err.detail == "prose inside a call":  # (the call stands: docs/SEMANTICS.md "Dropped text")
            logger.warning("%s: text inside a tool call left out: %s", self.parser_name, err.reason)
        else:
            logger.warning("%s: dropped tool call: %s", self.parser_name, err.reason)
        for obs in ERROR_OBSERVERS:
            obs(self.parser_name, err)

    def _to_result(self, events: list) -> StreamingParseResult:
        if not events:
            return StreamingParseResult()
        normal_text, calls = self._to_pair(events)
        return _spr(normal_text, calls)

    def stream_pair(self, new_text: str, tools: List[Any]) -> Tuple[str, List[Any]]:
        """parse_streaming_increment's result as (normal_text, calls),
        without building a StreamingParseResult, the calls as `Delta` items
        (ToolCallItem's three attributes, no pydantic object): the serving
        hooks' per-chunk path (serving_hooks.py). The detector's state
        (streamed_args_for_tool, prev_tool_call_arr, ...) moves exactly as
        with parse_streaming_increment."""
        events = self._stream(tools).feed(new_text)
        if len(events) == 1:
            ev = events[0]
            t = type(ev)
            if t is Text:  # the common chunks: prose ...
                return ev.text, []
            if t is ArgsDelta:  # ... and a piece of arguments
                self.streamed_args_for_tool.add(ev.index, ev.delta)
                return "", [Delta(ev.index, None, ev.delta)]
        return self._to_pair(events, Delta)

    def _to_pair(self, events: list, _item: Any = _tci) -> Tuple[str, List[Any]]:
        text: List[str] = []
        calls: List[Any] = []
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
                    calls.append(_item(i, None, ev.delta))
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
                calls.append(_item(i, ev.name, ""))
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
                    self._close_incomplete(ev.index, calls, _item)
                self._report(ev)
        return "".join(text), calls

    def _close_incomplete(self, i: int, calls: List[Any], _item: Any = _tci) -> None:
        """A call that began and broke or was cut off stays incomplete
        (finish_reason "stop"/"length", never "tool_calls"); the client
        gets the closing of its arguments where one makes them valid JSON
        (`{"command": "pwd` + `"}`), as the one-shot result has them."""
        suffix = closing_suffix(self.streamed_args_for_tool[i])
        if suffix:
            self.streamed_args_for_tool.add(i, suffix)
            calls.append(_item(i, None, suffix))

    # -- SGLang detector interface ----------------------------------------
    def has_tool_call(self, text: str) -> bool:
        """True when `text` holds markup this parser reads as a tool call,
        well-formed or not (the serving layer then takes the parsed message
        instead of the raw text). A marker that starts no call ("use the
        <tool_call> tag") is prose: False. Decided by the core itself, with
        every tool name accepted, so it agrees with what parsing does; the
        answer is remembered for this text (SGLang asks again in
        parse_non_stream)."""
        seen = self._tp_seen
        if seen is None or seen[0] is not text:
            # the look, in C (_core.plain_look): one search for the markers'
            # lead; no marker: no call. Formats that do not type values by
            # the tools' schemas: the whole parse, every name accepted,
            # kept for detect_and_parse (parse_plain's fold of text and
            # complete calls); the others: the text after the first marker
            # in small pieces until a call shows (starts_call)
            seen = self._tp_seen = plain_look(self._tp_cfg, text, parse_plain, starts_call)
        return seen[1]

    def _tp_first_marker(self, text: str, i: Optional[int] = None) -> int:
        """Where the first of the markers begins in `text`, -1 if none: one
        search for what they all start with (`i`: where it was found), then
        a check at each hit."""
        lead = self._tp_lead
        if not lead:
            first = -1
            for m in self._tp_markers:
                i = find_token(text, m)
                if i >= 0 and (first < 0 or i < first):
                    first = i
            return first
        if i is None:
            i = find_token(text, lead)
        markers = self._tp_markers
        if len(markers) == 1:
            return i
        while i >= 0:
            if text.startswith(markers, i):  # any of them (one call in C)
                return i
            i = find_token(text, lead, i + 1)
        return -1

    def _tp_plain(self, text: str) -> Optional[StreamingParseResult]:
        """The result for a text that parsing gives back whole as text (no
        marker and no other token in it, or has_tool_call's look at it
        found no call and every byte came back as text); None when it has
        to be parsed."""
        seen = self._tp_seen
        if seen is None or seen[0] is not text:
            if find_token(text, self._tp_token_lead) >= 0 or self._tp_first_marker(text) >= 0:
                return None
        elif not seen[2]:
            return None
        return _spr(text, [])  # calls given: no copy of the default

    def _tp_parse_all(self, text: str, tools: List[Any]) -> list:
        """One pass over the whole text: has_tool_call's, when the tools
        would not have changed it, else a parse with the tools. Calls to
        undeclared tools are forwarded when SGLANG_FORWARD_UNKNOWN_TOOLS is
        set: read only when the text calls one (then parsed again with
        forwarding), which gives what a parser made with the flag gives."""
        seen = self._tp_seen
        if seen is not None and seen[0] is text and type(seen[3]) is list and \
                _same_with_tools(seen[3], declared_names(self._tp_format, tools)):
            return seen[3]
        events = self._new_parser(tools, forward=False).parse_all(text)
        for ev in events:
            if type(ev) is ParseError and ev.code == "unknown_tool":
                if envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get():
                    return self._new_parser(tools, forward=True).parse_all(text)
                break
        return events

    def detect_and_parse(self, text: str, tools: List[Any]) -> StreamingParseResult:
        seen = self._tp_seen
        if seen is not None and seen[0] is text:  # has_tool_call looked at this text
            if not CALL_OBSERVERS:
                # all text, a fold without calls, or one whose calls every
                # name a tool of the list (plain_result), in one call in C
                done = plain_done(seen, tools, _tci, _spr, ONESHOT_INCOMPLETE)
                if done is not None:
                    return done
            found = seen[3]
            if found is None:
                if seen[2]:  # known to be all text: not parsed
                    return _spr(text, [])  # calls given: no copy of the default
                if not seen[1] and self._tp_untyped:
                    # no marker, so no call: the request's tools change
                    # nothing (the text less its stray tokens)
                    plain = parse_plain(self._tp_format, text)
                    if plain is not None and not plain[1]:
                        return _spr(plain[0], [])
            elif type(found) is tuple and not found[1]:  # no call: the text less its markup
                if _incomplete_now():
                    ONESHOT_INCOMPLETE.set(False)
                return _spr(found[0], [])
            elif type(found) is tuple and declares_all(self._tp_format, tools, found[1]):
                # its parse_plain (text and complete calls only), which the
                # request's tools do not change (every call names a declared
                # tool; Kimi-K2: by its id, not a bare counter)
                if CALL_OBSERVERS:
                    for i, name, args, cid in found[1]:
                        ev = CallEnd(i, name, args, cid)
                        for obs in CALL_OBSERVERS:
                            obs(self.parser_name, ev)
                if _incomplete_now():  # (set only when it changes: a set costs more than a read)
                    ONESHOT_INCOMPLETE.set(False)
                items = []
                for i, name, args, _ in found[1]:
                    items.append(_tci(i, name, args))
                return _spr(found[0], items)
        else:
            plain = self._tp_plain(text)
            if plain is not None:  # known to be all text: not parsed
                return plain
        if not self._tp_untyped and not CALL_OBSERVERS and type(self)._new_parser is _MIXIN_NEW_PARSER and \
                (seen is None or seen[0] is not text or seen[1]):
            # the schema-typed formats: the parse with the request's tools
            # folded in C (text and complete calls, no event objects) when
            # that is all it reports; else the events below (not tried for
            # a text has_tool_call found no call in: stray tokens, errors)
            fold = typed_fold(self._tp_format, text, tools, self._tp_forwards_all, parse_typed)
            if fold is not None:
                if _incomplete_now():
                    ONESHOT_INCOMPLETE.set(False)
                items = []
                for i, name, args, _ in fold[1]:
                    items.append(_tci(i, name, args))
                return _spr(fold[0], items)
        calls: List[ToolCallItem] = []
        normal: List[str] = []
        started: dict = {}  # index -> (ToolCallItem, argument pieces) of a call not yet ended
        incomplete = False
        for ev in self._tp_parse_all(text, tools):  # one pass; each complete call's arguments built once
            t = type(ev)
            if t is Text:
                normal.append(ev.text)
            elif t is CallEnd:
                calls.append(_tci(ev.index, ev.name, ev.arguments))
                for obs in CALL_OBSERVERS:
                    obs(self.parser_name, ev)
            elif t is CallStart:  # a call that then broke or was cut off
                started[ev.index] = (_tci(ev.index, ev.name, ""), [])
            elif t is ArgsDelta:
                started[ev.index][1].append(ev.delta)
            elif t is ParseError:
                self._report(ev)
                if ev.index in started:
                    item, pieces = started.pop(ev.index)
                    item.parameters = "".join(pieces) + closing_suffix("".join(pieces))
                    calls.append(item)
                    incomplete = True
        if incomplete or _incomplete_now():
            ONESHOT_INCOMPLETE.set(incomplete)
        return _spr("".join(normal), calls)

    def parse_streaming_increment(self, new_text: str, tools: List[Any]) -> StreamingParseResult:
        return self._to_result(self._stream(tools).feed(new_text))

    def finish(self, tools: List[Any]) -> StreamingParseResult:
        if self._tp is None:
            return StreamingParseResult()
        return self._to_result(self._tp.finish())


for _name, _make in NativeDetectorMixin._tp_own.items():
    setattr(NativeDetectorMixin, _name, Fresh(_name, _make))
del _name, _make
_MIXIN_NEW_PARSER = NativeDetectorMixin._new_parser


def _same_with_tools(events: list, names: Any) -> bool:
    """Whether a parse with every name accepted (`events`, a format that
    does not type values) is what the request's tools (`names`) give: every
    call completed and names a declared tool, which the tools' parse
    accepts at the same point; Kimi-K2: named by its id, not inferred from
    the tools (a bare counter id). A failed call's name is not in the
    events, so a parse with an error is not taken."""
    for ev in events:
        t = type(ev)
        if t is CallEnd:
            if ev.name not in names or (ev.id is not None and ":" not in ev.id):
                return False
        elif t is not Text and t is not Markup:  # (framing: not text, as with the tools)
            return False
    return True


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
    _tp_token_lead = "<\uff5c"  # every token of the format begins "<｜"


class DeepSeekV31NativeDetector(NativeDetectorMixin, DeepSeekV31Detector):
    """DeepSeek V3.1 (`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ARGS}`), native core."""

    _tp_format = "deepseekv31"
    _tp_markers = (_DS_CALLS_BEGIN, _DS_CALL_BEGIN)
    parser_name = "deepseekv31_native"
    _tp_token_lead = "<\uff5c"  # every token of the format begins "<｜"


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
    # the token the core reads (a call start); the other start, a bare `{`,
    # is a marker: a text with neither is all text
    _tp_token_lead = "<|python_tag|>"


# ---- Mistral v11+ (issue 22): [TOOL_CALLS]NAME[ARGS]{...} -------------------
from sglang.srt.function_call.mistral_detector import MistralDetector  # noqa: E402


class MistralNativeDetector(NativeDetectorMixin, MistralDetector):
    """Mistral Small/Medium/Large 3.x, Devstral, Magistral (v11+ tokenizers:
    `[TOOL_CALLS]NAME[ARGS]{...}`, `[CALL_ID]ID` before `[ARGS]` where the
    tokenizer writes ids), native core (a row of fmt_deepseek.c). The pre-v11
    array form `[TOOL_CALLS] [{"name": ..., "arguments": ..., "id": ...}]`
    is read by the JSON-array engine's mistral-array row (fmt_jsontag.c)."""

    _tp_format = "mistral"
    _tp_markers = ("[TOOL_CALLS]",)
    parser_name = "mistral_native"
    _tp_token_lead = "[TOOL_CALLS]"  # the one token the core reads (no end token)


# ---- Pythonic (Llama 4; issue 22): [f(a=1, b="x"), g()] ----------------------
from sglang.srt.function_call.pythonic_detector import PythonicDetector  # noqa: E402


class PythonicNativeDetector(NativeDetectorMixin, PythonicDetector):
    """Llama 4 Scout/Maverick and pythonic Llama 3.2 prompts
    (`[f(a=1, b="x"), g()]`, Python literals converted to JSON as SGLang's
    `ast` conversion does, strings streamed), native core (fmt_pythonic.c)."""

    _tp_format = "pythonic"
    _tp_markers = ("[",)
    parser_name = "pythonic_native"


# ---- gpt-oss / OpenAI Harmony (issue 21) ---------------------------------------
from sglang.srt.function_call.gpt_oss_detector import GptOssDetector  # noqa: E402
from sglang.srt.parser.harmony_parser import HarmonyParser  # noqa: E402


class GptOssNativeDetector(NativeDetectorMixin, GptOssDetector):
    """gpt-oss / OpenAI Harmony (`<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{ARGS}<|call|>`),
    native core (csrc/fmt_harmony.c). Calls stream from the header's
    recipient and the `{` of the body; `final` and `commentary` (preamble)
    bodies are content; `analysis` bodies are Reasoning events, which this
    detector drops as SGLang's does (with `--reasoning-parser gpt-oss` the
    reasoning parser has taken them out before the text gets here)."""

    _tp_format = "gpt_oss"
    _tp_builtin_factories = {"harmony_parser": HarmonyParser}  # a fresh one per detector, as the builtin makes
    _tp_markers = ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")
    parser_name = "gpt-oss_native"
# ---- rows of the GLM engine (issue 20): other families that write a name and
# <arg_key>/<arg_value> pairs -------------------------------------------------
from sglang.srt.function_call.ling3_detector import Ling3Detector  # noqa: E402


class Ling3NativeDetector(NativeDetectorMixin, Ling3Detector):
    """inclusionAI Ling-3 / Ring (GLM-4.5's `<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>...`;
    the name may also end at `<arg_key>` or `</tool_call>`), native core; typed by GLM-4.5's rules."""

    _tp_format = "ling3"
    _tp_markers = ("<tool_call>",)
    parser_name = "ling3_native"


from sglang.srt.function_call.iquest_q1_detector import IQuestQ1Detector  # noqa: E402


class IQuestQ1NativeDetector(NativeDetectorMixin, IQuestQ1Detector):
    """IQuest Coder (`<iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</iquest_tool_call>`),
    native core; typed by GLM-4.7's rules. A `required` or named tool_choice is
    parsed by SGLang's IQuest JSON parser, as for the builtin."""

    _tp_format = "iquest_q1"
    _tp_markers = ("<iquest_tool_call>",)
    parser_name = "iquest_q1_native"


from sglang.srt.function_call.poolside_v1_detector import PoolsideV1Detector  # noqa: E402


class PoolsideV1NativeDetector(NativeDetectorMixin, PoolsideV1Detector):
    """Poolside Laguna (GLM-4.5's `<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n...`),
    native core; typed by PoolsideV1Detector's rules (glm_row_types.py)."""

    _tp_format = "poolside_v1"
    _tp_markers = ("<tool_call>",)
    parser_name = "poolside_v1_native"


from sglang.srt.function_call.spark25_detector import Spark25Detector  # noqa: E402


class Spark25NativeDetector(NativeDetectorMixin, Spark25Detector):
    """iFlytek Spark 2.5 (`<tool_call>NAME\n<arg_key>K</arg_key><arg_value>V</arg_value>\n...</tool_call>`),
    native core; typed by Spark25Detector's rules (glm_row_types.py)."""

    _tp_format = "spark25"
    _tp_markers = ("<tool_call>",)
    parser_name = "spark25_native"


from sglang.srt.function_call.hunyuan_detector import HunyuanDetector  # noqa: E402

# the core's rows for Hunyuan's tag spellings: tag suffix -> core format
HUNYUAN_ROWS = {"": "hunyuan", ":opensource": "hunyuan_os"}


def hunyuan_format(d: Any) -> Optional[str]:
    """The core format whose tags are the ones SGLang's HunyuanDetector `d`
    resolved from the tokenizer's vocabulary (bare literals without one), or
    None for a spelling no row has. <tool_sep> may stay bare (Hy4 has none)."""
    toks = (d.bot_token, d.eot_token, d.tool_call_start_token, d.tool_call_end_token, d.arg_key_start_token,
            d.arg_key_end_token, d.arg_value_start_token, d.arg_value_end_token)
    for suffix, fmt in HUNYUAN_ROWS.items():
        bare = ("<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>",
                "<arg_value>", "</arg_value>")
        if toks == tuple(t[:-1] + suffix + ">" for t in bare) and d.tool_sep_token in (
                "<tool_sep>", "<tool_sep%s>" % suffix):
            return fmt
    return None


class HunyuanNativeDetector(NativeDetectorMixin, HunyuanDetector):
    """Tencent Hunyuan Hy3/Hy4 (`<tool_calls>\\n<tool_call>NAME<tool_sep>\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>\\n</tool_calls>`),
    native core; typed by HunyuanDetector's rules (glm_row_types.py). The tag
    spellings are resolved from the tokenizer as SGLang's detector resolves
    them (`<tool_calls:opensource>` ...; bare without a tokenizer); a
    spelling no core row has is parsed by SGLang's own detector, with one
    warning."""

    _tp_format = "hunyuan"
    _tp_markers = ("<tool_calls>",)
    parser_name = "hunyuan_native"
    _warned = False

    # (class, id(tokenizer)) -> (tokenizer, the state a detector for it
    # starts with, or None when it cannot be shared). SGLang builds a
    # detector per request with the server's one tokenizer: the builtin's
    # scan of the vocabulary, its tag resolution and its regexes run once
    # per tokenizer (kept alive here, a few at most), not per request.
    _tp_by_tokenizer: Dict[Tuple[type, int], Tuple[Any, Any]] = {}
    _TP_TOKENIZERS_KEPT = 8

    def __init__(self, tokenizer: Any = None) -> None:
        key = (type(self), id(tokenizer))
        seen = HunyuanNativeDetector._tp_by_tokenizer.get(key)
        if seen is not None and seen[0] is tokenizer and seen[1] is not None:
            start_from(self, seen[1])
            return
        self._tp_setup(tokenizer)
        if seen is None or seen[0] is not tokenizer:
            kept = HunyuanNativeDetector._tp_by_tokenizer
            while len(kept) >= self._TP_TOKENIZERS_KEPT:
                kept.pop(next(iter(kept)), None)
            kept[key] = (tokenizer, state_of(self, {**getattr(type(self), "_tp_builtin_factories", {}),
                                                     **self._tp_own}))

    def _tp_setup(self, tokenizer: Any) -> None:
        super().__init__(tokenizer=tokenizer)
        fmt = hunyuan_format(self)
        self._sglang_parses = fmt is None
        if fmt is None:
            if not HunyuanNativeDetector._warned:
                HunyuanNativeDetector._warned = True
                logger.warning("hunyuan_native: no native row for the tokenizer's tags %r; SGLang's HunyuanDetector "
                               "parses them", (self.bot_token, self.tool_call_start_token, self.tool_sep_token))
            # SGLang's own methods on this instance (the native path pays no check per chunk)
            for m in ("has_tool_call", "detect_and_parse", "parse_streaming_increment", "finish"):
                setattr(self, m, types.MethodType(getattr(HunyuanDetector, m), self))
            return
        self._tp_set_markers(self, fmt, (self.bot_token,))


# ---- Issue 20: SGLang names that are rows of an engine we have ----------------
from sglang.srt.function_call.mimo_detector import MiMoDetector  # noqa: E402


class MiMoNativeDetector(NativeDetectorMixin, MiMoDetector):
    """Xiaomi MiMo (`<tool_call>\\n<function=NAME>\\n<parameter=KEY>VALUE</parameter>...`), native core:
    a row of the Qwen3-Coder/MiniMax-M2 engine, values as written, typed by Qwen3-Coder's rules."""

    _tp_format = "mimo"
    _tp_markers = ("<tool_call>",)
    parser_name = "mimo_native"


from sglang.srt.function_call.dots_detector import DotsToolDetector  # noqa: E402


class DotsNativeDetector(NativeDetectorMixin, DotsToolDetector):
    """rednote dots.llm (`<dots_function_call>\\n<invoke name="NAME">\\n<parameter name="KEY">VALUE</parameter>...`),
    native core: a row of the Qwen3-Coder/MiniMax-M2 engine, values stripped and typed by DotsToolDetector's rules."""

    _tp_format = "dots"
    _tp_markers = ("<dots_function_call>",)
    parser_name = "dots_native"


from sglang.srt.function_call.trinity_detector import TrinityDetector  # noqa: E402


class TrinityNativeDetector(NativeDetectorMixin, TrinityDetector):
    """Arcee Trinity (Qwen2.5's `<tool_call>{"name": ..., "arguments": ...}</tool_call>` with every
    `<think>` / `</think>` removed first, as TrinityDetector does), native core: a filter in front of
    the Qwen2.5 engine, matched across chunks."""

    _tp_format = "trinity"
    # a <tool_call> may be cut by a think tag: the core decides from the first '<'
    _tp_markers = ("<",)
    parser_name = "trinity_native"


from sglang.srt.function_call.gigachat35_detector import GigaChat35Detector  # noqa: E402


class GigaChat35NativeDetector(NativeDetectorMixin, GigaChat35Detector):
    """GigaChat 3.5 GCML (`<｜GCML｜tool_calls>\\n<｜GCML｜invoke name="NAME">\\n<｜GCML｜parameter name="K"
    string="true|false">V</｜GCML｜parameter>...`), native core: a row of the DSML engine."""

    _tp_format = "gigachat35"
    _tp_markers = ("<\uff5cGCML\uff5c",)
    parser_name = "gigachat35_native"


from sglang.srt.function_call.minicpm5_detector import MiniCPM5Detector  # noqa: E402


class MiniCPM5NativeDetector(NativeDetectorMixin, MiniCPM5Detector):
    """OpenBMB MiniCPM (`<function name="NAME"><param name="KEY">VALUE</param>...</function>`, no block),
    native core: a row of the Qwen3-Coder/MiniMax-M2 engine (values stripped, CDATA unwrapped, typed by
    MiniCPM5Detector's rules)."""

    _tp_format = "minicpm5"
    _tp_markers = ('<function name="',)
    parser_name = "minicpm5_native"


# ---- Kimi K3 (issue 23): XTML, a row of the XML-parameter engine ---------------
from sglang.srt.function_call.kimik3_detector import KimiK3Detector  # noqa: E402


class KimiK3NativeDetector(NativeDetectorMixin, KimiK3Detector):
    """Kimi K3 (`<|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|>...`),
    native core. The serving layer builds the client's call id for `kimi_k3`
    as `{name}:{history calls + tool_index}` from the ToolCallItem, as it does
    for SGLang's own detector. SGLang's KimiK3Detector sends a call of any
    name (it never consults the tools): so does this one."""

    _tp_format = "kimi_k3"
    _tp_markers = ("<|open|>tools<|sep|>",)
    _tp_token_lead = "<|"  # every token of the format begins "<|"
    _tp_forwards_all = True
    parser_name = "kimi_k3_native"


# ---- MiniMax-M3 (issue 23): namespaced tag-named XML, nested values -----------
from sglang.srt.function_call.minimax_m3 import MINIMAX_NS_TOKEN, MinimaxM3Detector  # noqa: E402


class MinimaxM3NativeDetector(NativeDetectorMixin, MinimaxM3Detector):
    """MiniMax-M3 (`]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="NAME">
    ]<]minimax[>[<KEY>VALUE]<]minimax[>[</KEY>...`, values nested as the chat
    template's to_xml writes them), native core (csrc/fmt_nsxml.c; nested
    values typed in C by csrc/fmt_nsxml_value.c). As SGLang's detector, it parses
    without tools (parses_without_tools): a request without tools keeps
    every call, whatever its name."""

    _tp_format = "minimax_m3"
    _tp_markers = (MINIMAX_NS_TOKEN,)
    _tp_token_lead = MINIMAX_NS_TOKEN  # the core reads nothing else in text
    parser_name = "minimax-m3_native"

    def _new_parser(self, tools: Any, forward: Optional[bool] = None) -> _CoreParser:
        if not tools:  # no tools: the call is kept as sent (SGLang: "the history names it")
            forward = True
        return super()._new_parser(tools, forward)


# ---- tool_choice="required" / a named tool (issue 19 item 3): the JSON array --
from sglang.srt.function_call.json_array_parser import JsonArrayParser  # noqa: E402


class NativeJsonArrayParser(NativeDetectorMixin, JsonArrayParser):
    """What SGLang's serving layer streams with for `tool_choice="required"`
    or a named tool when the server's detector does not own its format
    under constraints (`FunctionCallParser.owns_tool_format()` false): the
    constrained output `[{"name": ..., "parameters": {...}}, ...]` (or one
    bare object), read by the native core (the `jsonarray` row of
    fmt_jsontag.c), arguments streamed as generated. A drop-in subclass of
    JsonArrayParser (the serving layer checks `isinstance(parser,
    JsonArrayParser)` and reads prev_tool_call_arr / streamed_args_for_tool
    at the end). As JsonArrayParser, a call of an undeclared name is never
    forwarded, whatever SGLANG_FORWARD_UNKNOWN_TOOLS says. The serving hooks
    (serving_hooks.py) make it in place of JsonArrayParser for servers whose
    --tool-call-parser is one of this package's detectors."""

    _tp_format = "jsonarray"
    _tp_markers = ("[", "{")
    _tp_token_lead = "["
    parser_name = "jsonarray_native"

    def _new_parser(self, tools: Any, forward: Optional[bool] = None) -> _CoreParser:
        return super()._new_parser(tools, forward=False)


# ---- Cohere Command A (issue 23): a row of the JSON-array engine ---------------
from sglang.srt.function_call.cohere_command4_detector import CohereCommand4Detector  # noqa: E402


class CohereCommand4NativeDetector(NativeDetectorMixin, CohereCommand4Detector):
    """Cohere Command A / Command-R7B (`<|START_ACTION|>[{"tool_call_id": "0",
    "tool_name": NAME, "parameters": {...}}, ...]<|END_ACTION|>`), native
    core: the cohere_command4 row of the JSON-array engine (fmt_jsontag.c),
    arguments streamed as generated. The model's tool_call_id is dropped, as
    SGLang's detector drops it (the serving layer makes the client's ids)."""

    _tp_format = "cohere_command4"
    _tp_markers = ("<|START_ACTION|>",)
    _tp_token_lead = "<|"  # the tokens the core reads: <|START_ACTION|>, a stray <|END_ACTION|>
    parser_name = "cohere_command4_native"


# ---- Swiss AI Apertus (issue 23): a row of the JSON-array engine ----------------
from sglang.srt.function_call.apertus2509_detector import Apertus2509Detector  # noqa: E402


class Apertus2509NativeDetector(NativeDetectorMixin, Apertus2509Detector):
    """Swiss AI Apertus (`<|tools_prefix|>[{"NAME": {...}}, ...]<|tools_suffix|>`),
    native core: the apertus2509 row of the JSON-array engine (fmt_jsontag.c;
    each element's first key is the name, its value the arguments),
    arguments streamed as generated."""

    _tp_format = "apertus2509"
    _tp_markers = ("<|tools_prefix|>",)
    _tp_token_lead = "<|tools_"  # the tokens the core reads: <|tools_prefix|>, a stray <|tools_suffix|>
    parser_name = "apertus2509_native"


# ---- Step-3 (issue 23): a row of the XML-parameter engine ---------------------
from sglang.srt.function_call.step3_detector import Step3Detector  # noqa: E402


class Step3NativeDetector(NativeDetectorMixin, Step3Detector):
    """StepFun Step-3 (`<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>
    <steptml:invoke name="NAME"><steptml:parameter name="KEY">VALUE</steptml:parameter>...
    </steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>`), native core: a row of the
    Qwen3-Coder/MiniMax-M2 engine, values stripped and typed by Step3Detector's rules."""

    _tp_format = "step3"
    _tp_markers = ("<\uff5ctool_calls_begin\uff5c>",)
    parser_name = "step3_native"


# ---- InternLM2 / Intern-S1 and GigaChat 3 (issue 23): rows of the JSON-object
# engine (fmt_jsontag.c) --------------------------------------------------------
from sglang.srt.function_call.gigachat3_detector import GigaChat3Detector  # noqa: E402
from sglang.srt.function_call.internlm_detector import InternlmDetector  # noqa: E402


class InternS1NativeDetector(NativeDetectorMixin, InternlmDetector):
    """InternLM2 / Intern-S1 (`<|action_start|><|plugin|>\\n{"name": ..., "parameters": {...}}<|action_end|>`,
    the two tokens also with a space between them, as SGLang's detokenizer
    writes them), native core: a row of fmt_jsontag.c."""

    _tp_format = "interns1"
    _tp_markers = ("<|action_start|>",)
    parser_name = "interns1_native"


class GigaChat3NativeDetector(NativeDetectorMixin, GigaChat3Detector):
    """GigaChat 3 / 3.1 (`function call<|role_sep|>\\n{"name": ..., "arguments": {...}}`
    or `<|function_call|>{...}`; the object's `}` ends the call), native core:
    a row of fmt_jsontag.c."""

    _tp_format = "gigachat3"
    _tp_markers = ("<|function_call|>", "function call<|role_sep|>\n")
    parser_name = "gigachat3_native"


# ---- Gemma 4 (issue 22): call:NAME{key:value}, its own engine (fmt_kvcall.c) ----
from sglang.srt.function_call.gemma4_detector import Gemma4Detector  # noqa: E402


class Gemma4NativeDetector(NativeDetectorMixin, Gemma4Detector):
    """Google Gemma 4 (`<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>`,
    values as its chat template's format_argument writes them), native core:
    strings streamed as generated, each call its own index. SGLang's
    Gemma4Detector sends a call of any name (it never consults the tools):
    so does this one."""

    _tp_format = "gemma4"
    _tp_markers = ("<|tool_call>",)
    _tp_token_lead = "<|tool_call>"  # the one token the core reads in text
    _tp_forwards_all = True
    parser_name = "gemma4_native"


# ---- Inkling (issue 23): TMLv0 control tokens, a row of fmt_jsontag.c ----------
from sglang.srt.function_call.inkling_detector import InklingDetector  # noqa: E402


class InklingNativeDetector(NativeDetectorMixin, InklingDetector):
    """Inkling (`<|message_model|>NAME<|content_invoke_tool_json|>{"name": ..., "args": {...}}<|end_message|>`,
    as the vendor's TMLv0 renderer writes a call; every other control token
    is framing, dropped from the text), native core: arguments streamed as
    generated. SGLang's InklingDetector sends a call of any name (OpenAI's
    behaviour for a hallucinated tool): so does this one. Under SGLang a
    server whose model is Inkling parses the output by token ids with the
    vendor's parser (serving_inkling.py) whichever detector is named: this
    class parses where the text path is taken (docs/SERVING.md)."""

    _tp_format = "inkling"
    # the text form's token too, as SGLang's has_tool_call: the serving layer
    # then takes the parsed message (its payload as text, control tokens out)
    # instead of the raw output
    _tp_markers = ("<|content_invoke_tool_json|>", "<|content_invoke_tool_text|>")
    _tp_token_lead = "<|"  # every control token the core reads in text
    _tp_forwards_all = True
    parser_name = "inkling_native"


# ---- Liquid LFM2 / LFM2.5 (issue 23): a row of the pythonic engine ----------
from sglang.srt.function_call.lfm2_detector import Lfm2Detector  # noqa: E402


class Lfm2NativeDetector(NativeDetectorMixin, Lfm2Detector):
    """Liquid LFM2 / LFM2.5 (`<|tool_call_start|>[f(a='x', n=1), g()]<|tool_call_end|>`,
    the template's render_tool_calls; also the JSON form
    `[{"name": ..., "arguments": {...}}]` and a bare call or object, as
    SGLang reads them), native core: a row of fmt_pythonic.c, the JSON form
    a row of fmt_jsontag.c; strings streamed as generated, each call its own
    index across blocks."""

    _tp_format = "lfm2"
    _tp_markers = ("<|tool_call_start|>",)
    _tp_token_lead = "<|tool_call_start|>"  # the one token the core reads in text (a stray end tag is text)
    parser_name = "lfm2_native"


# ---- K2 Horizon (issue 23): a row of the GLM engine, its JSON dialect a row of fmt_jsontag.c ----
from sglang.srt.function_call.k2_v3_detector import K2V3Detector  # noqa: E402


class K2HorizonNativeDetector(NativeDetectorMixin, K2V3Detector):
    """MBZUAI/LLM360 K2 Horizon (`<ifm|tool_calls>\\n<ifm|tool_call>NAME\\n<ifm|arg_key>K</ifm|arg_key>\\n
    [<ifm|arg_type>T</ifm|arg_type>\\n]<ifm|arg_value>V</ifm|arg_value>\\n</ifm|tool_call>\\n</ifm|tool_calls>`,
    or the json dialect `<ifm|tool_call>{"name": ..., "arguments": {...}}</ifm|tool_call>`),
    native core: the XML dialects a row of the GLM engine (values streamed as
    generated, typed as K2V3Detector types them: the schema, else the
    model's <ifm|arg_type>), a JSON body handed to fmt_jsontag.c's
    k2_horizon row (arguments streamed through the JSON normalizer); a
    leading <ifm|think...> block is text, no call read in it, as
    K2V3Detector passes it through."""

    _tp_format = "k2_horizon"
    _tp_markers = ("<ifm|tool_call>",)
    # its schemas type only values of parameter tags (<ifm|arg_key>,
    # <ifm|arg_type>, <ifm|arg_value>): the JSON dialect reads none
    _tp_schema_token = "<ifm|arg_"
    parser_name = "k2_horizon_native"


# ---- Muse Glimmer (issue 23): recipient channels, its own engine (fmt_channel.c) ----------
from sglang.srt.function_call.muse_glimmer_detector import MuseGlimmerDetector  # noqa: E402


class MuseNativeDetector(NativeDetectorMixin, MuseGlimmerDetector):
    """Muse Glimmer (` to=R<|message|>BODY<|eom|>`, `<|start|>assistant
    to=R<|message|>…<|eot|>`; a tool recipient's body holds
    `<atem:invoke name="N"><atem:parameter name="K">V</atem:parameter></atem:invoke>`),
    native core (csrc/fmt_channel.c): prose channels stream as text, their
    framing dropped; each call is sent when its invoke tag closes; a value
    is json.loads'ed, else its text: a string streams as soon as it cannot
    be JSON, a JSON value is sent at its closing tag. has_tool_call looks
    for the ATEM markers as SGLang's does."""

    _tp_format = "muse"
    _tp_markers = ("<atem:invoke", "<atem:function_calls>")
    parser_name = "muse_native"
