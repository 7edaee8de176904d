"""The parsers a benchmark run compares, each behind one interface:
`side.start()` returns (feed, end) for a fresh stream; feed(chunk) and end()
return what the parser returned (a (text, calls) tuple or an event list).

- native:     FunctionCallParser(tools, "<name>_native").parse_stream_chunk
- sglang:     FunctionCallParser(tools, "<builtin>").parse_stream_chunk
- floor:      FunctionCallParser over a detector whose parse_streaming_increment
              returns an empty StreamingParseResult (SGLang's own per-chunk cost)
- standalone: sglang_toolparse.StreamParser(format, tools).feed
- vllm:       vLLM's Rust tool parser (optional, vllm_peer.py), for the
              formats it has
"""
from __future__ import annotations

import importlib
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from sglang_toolparse import _core
from sglang_toolparse.api import FORMAT_ALIASES, StreamParser

SIDES = ("native", "sglang", "floor", "standalone", "vllm")

Feed = Callable[[str], Any]
End = Callable[[], Any]


class SGLang:
    """Lazily imported SGLang pieces (None if SGLang is not importable)."""

    def __init__(self, load: bool = True) -> None:
        self.error: Optional[str] = None
        self.version: Optional[str] = None
        self.import_seconds = 0.0
        self.FunctionCallParser: Any = None
        self.Tool: Any = None
        self.StreamingParseResult: Any = None
        if not load:
            return
        t0 = time.perf_counter()
        try:
            from sglang_toolparse import sglang_plugin

            sglang_plugin.register()  # before function_call_parser is imported
            fcp = importlib.import_module(sglang_plugin.FCP_MODULE)
            from sglang.srt.entrypoints.openai.protocol import Tool
            from sglang.srt.function_call.core_types import StreamingParseResult

            if not any(n in fcp.FunctionCallParser.ToolCallParserEnum for n in sglang_plugin.NATIVE_NAMES):
                sglang_plugin._install_detectors(fcp)  # imported before register() by someone else
            self.FunctionCallParser = fcp.FunctionCallParser
            self.Tool = Tool
            self.StreamingParseResult = StreamingParseResult
            try:
                from importlib.metadata import version

                self.version = version("sglang")
            except Exception:
                self.version = getattr(importlib.import_module("sglang"), "__version__", None)
        except Exception as e:  # ImportError, or SGLang failing to import on this machine
            self.error = "%s: %s" % (type(e).__name__, e)
        self.import_seconds = time.perf_counter() - t0

    @classmethod
    def unavailable(cls, reason: str) -> "SGLang":
        sg = cls(load=False)
        sg.error = reason
        return sg

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def enum(self) -> Dict[str, Any]:
        return self.FunctionCallParser.ToolCallParserEnum

    def tools(self, tools: List[Dict[str, Any]]) -> List[Any]:
        return [self.Tool(**t) for t in tools]

    def floor_name(self, builtin: str) -> str:
        """Registers (once) and returns the name of a floor detector: the
        builtin detector class with parsing replaced by an empty result."""
        name = "_toolparse_bench_floor_" + builtin
        if name not in self.enum:
            base = self.enum[builtin]
            SPR = self.StreamingParseResult

            def parse_streaming_increment(self, new_text, tools):  # noqa: ARG001
                return SPR()

            def finish(self, tools):  # noqa: ARG001
                return SPR()

            self.enum[name] = type("FloorDetector", (base,), {
                "parse_streaming_increment": parse_streaming_increment,
                "finish": finish,
            })
        return name


    def oneshot_floor_name(self, builtin: str) -> str:
        """Registers (once) and returns the name of a one-shot floor: the
        builtin detector class answering has_tool_call False and
        detect_and_parse with the text and no call, without reading it:
        what SGLang costs per non-streaming request before any parsing
        (FunctionCallParser, the detector, the result objects)."""
        name = "_toolparse_bench_oneshot_floor_" + builtin
        if name not in self.enum:
            SPR = self.StreamingParseResult

            def has_tool_call(self, text):  # noqa: ARG001
                return False

            def detect_and_parse(self, text, tools):  # noqa: ARG001
                return SPR(normal_text=text, calls=[])

            self.enum[name] = type("OneShotFloorDetector", (self.enum[builtin],), {
                "has_tool_call": has_tool_call,
                "detect_and_parse": detect_and_parse,
            })
        return name


class Format(NamedTuple):
    """One benchmarked pair: a native detector and the builtin it replaces."""

    native_name: str  # e.g. "qwen25_native"
    builtin: Optional[str]  # e.g. "qwen25"
    core: str  # core format name, keys the corpus renderers
    aliases: Tuple[str, ...]  # other native names for the same pair
    row: str = ""  # an EXTRA_ROWS row: its corpus.ROW_RENDERERS key

    @property
    def label(self) -> str:
        """The row's name in the results: the native name, and the row
        where the pair has another one."""
        return "%s[%s]" % (self.native_name, self.row) if self.row and self.row != self.core else self.native_name

    @property
    def corpus_key(self) -> str:
        return self.row or self.core


# Rows beyond one per NATIVE_NAMES pair, on EXTRA_SCENARIOS: mistral_native's
# pre-v11 array form, and tool_choice="required" / a named tool, which SGLang's
# serving layer parses with JsonArrayParser (outside FunctionCallParser) and
# the serving hooks with NativeJsonArrayParser (the `jsonarray` core format);
# K2 Horizon's json dialect (its template's tool_call_format="json").
EXTRA_SCENARIOS = ("chat", "bursts3", "args16k")
EXTRA_ROWS = (
    Format("mistral_native", "mistral", "mistral", (), "mistral_array"),
    Format("NativeJsonArrayParser", "JsonArrayParser", "jsonarray", (), "jsonarray"),
    Format("k2_horizon_native", "k2_horizon", "k2_horizon", (), "k2_horizon_json"),
)


def _core_format(native_name: str, cls_name: str, builtin: Optional[str], sg: Optional[SGLang]) -> str:
    if sg is not None and sg.ok:
        try:
            from sglang_toolparse import sglang_adapter

            fmt = getattr(getattr(sglang_adapter, cls_name), "_tp_format", "")
            if fmt:
                return fmt
        except Exception:
            pass
    known = set(_core.formats())
    for cand in (builtin, native_name[: -len("_native")] if native_name.endswith("_native") else native_name):
        if cand:
            cand = FORMAT_ALIASES.get(cand, cand)
            if cand in known:
                return cand
    return builtin or native_name


def discover_formats(sg: Optional[SGLang]) -> List[Format]:
    """Pairs from sglang_plugin.NATIVE_NAMES, one per (core format, builtin
    detector class): qwen_native and qwen25_native are one row."""
    from sglang_toolparse.sglang_plugin import NATIVE_NAMES

    seen: Dict[Tuple[str, str], int] = {}
    out: List[Format] = []
    for name, (cls_name, builtin) in NATIVE_NAMES.items():
        core = _core_format(name, cls_name, builtin, sg)
        bcls = ""  # without SGLang only the core format matters
        if sg is not None and sg.ok:
            bcls = sg.enum[builtin].__name__ if builtin and builtin in sg.enum else (builtin or "")
        key = (core, bcls)
        if key in seen:
            i = seen[key]
            if name == core + "_native" and out[i].native_name != name:  # glm45_native over glm_native
                prev = out[i]
                out[i] = Format(name, builtin, core, prev.aliases + (prev.native_name,))
            else:
                out[i] = out[i]._replace(aliases=out[i].aliases + (name,))
            continue
        seen[key] = len(out)
        out.append(Format(name, builtin, core, ()))
    return out


class Side:
    """A parser to time. start() makes a fresh stream."""

    def __init__(self, kind: str, start: Callable[[], Tuple[Feed, End]],
                 assemble: Optional[Callable[[list], Any]] = None):
        self.kind = kind
        self.start = start
        self.assemble = assemble  # outputs -> (text, calls); None: by kind (runner.measure)


def make_side(kind: str, fmt: Format, tools: List[Dict[str, Any]], sg: Optional[SGLang],
              peer: Any = None) -> Optional[Side]:
    """None if the side cannot run here (no SGLang, no builtin, no vLLM
    parser for the format)."""
    if kind == "vllm":
        from . import vllm_peer

        if peer is None or not peer.supports(fmt.core):
            return None
        return Side(kind, vllm_peer.stream_start(peer, fmt.core, tools), vllm_peer.assemble)
    if kind == "standalone":

        def start_sa() -> Tuple[Feed, End]:
            # the tool dicts, not just their names: formats that type values
            # by the schema (GLM) read it, as the adapter's detectors do
            p = StreamParser(fmt.core, tools)
            return p.feed, p.finish

        return Side(kind, start_sa)
    if sg is None or not sg.ok:
        return None
    if fmt.core == "jsonarray":
        return _json_array_side(kind, tools, sg)
    if kind == "native":
        parser_name = fmt.native_name
    elif kind == "sglang":
        parser_name = fmt.builtin
    elif kind == "floor":
        parser_name = sg.floor_name(fmt.builtin) if fmt.builtin else None
    else:
        raise ValueError(kind)
    if not parser_name or parser_name not in sg.enum:
        return None
    sg_tools = sg.tools(tools)
    FCP = sg.FunctionCallParser

    def start_fcp() -> Tuple[Feed, End]:
        p = FCP(sg_tools, parser_name)
        return p.parse_stream_chunk, p.parse_stream_end

    return Side(kind, start_fcp)


def _json_array_side(kind: str, tools: List[Dict[str, Any]], sg: SGLang) -> Optional[Side]:
    """JsonArrayParser (sglang) or NativeJsonArrayParser (native) fed as
    SGLang's serving layer feeds it (parse_streaming_increment(delta, tools),
    finish(tools) at the end); no floor (FunctionCallParser is not on this
    path)."""
    if kind == "native":
        from sglang_toolparse.sglang_adapter import NativeJsonArrayParser as cls
    elif kind == "sglang":
        from sglang.srt.function_call.json_array_parser import JsonArrayParser as cls
    else:
        return None
    sg_tools = sg.tools(tools)

    def start() -> Tuple[Feed, End]:
        p = cls()

        def feed(chunk: str) -> Tuple[str, list]:
            r = p.parse_streaming_increment(chunk, sg_tools)
            return r.normal_text, r.calls

        def end() -> Tuple[str, list]:
            r = p.finish(sg_tools)
            return r.normal_text, r.calls

        return feed, end

    return Side(kind, start)
