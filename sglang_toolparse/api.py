"""Standalone Python API. Imports neither SGLang, torch nor pydantic."""
from __future__ import annotations

from typing import Any, Iterable, List, NamedTuple, Optional

from sglang_toolparse import _core
from sglang_toolparse._core import CallEnd, ParseError, Text

# Names accepted by StreamParser/parse besides the core's own format names.
FORMAT_ALIASES = {
    "qwen": "qwen25",
    "qwen3": "qwen25",
}


def available_formats() -> List[str]:
    """Every format name (and alias) the parser accepts."""
    return sorted(set(_core.formats()) | set(FORMAT_ALIASES))


def _tool_name(tool: Any) -> str:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, dict):
        fn = tool.get("function", tool)
        name = fn.get("name") if isinstance(fn, dict) else None
    else:  # SGLang/OpenAI pydantic models: Tool(function=Function(name=...))
        fn = getattr(tool, "function", tool)
        name = getattr(fn, "name", None)
    if not isinstance(name, str):
        raise TypeError("cannot find a tool name in %r" % (tool,))
    return name


def tool_names(tools: Optional[Iterable[Any]]) -> Optional[List[str]]:
    """Names of `tools`: OpenAI-style dicts ({"type": "function", "function":
    {"name": ...}}), bare {"name": ...} dicts, SGLang `Tool` models or plain
    strings. None stays None (every name is accepted)."""
    if tools is None:
        return None
    return [_tool_name(t) for t in tools]


class StreamParser(_core.StreamParser):
    """Incremental parser for one stream of model output.

    StreamParser(format, tools=None, *, forward_unknown=False, max_buffer=None,
                 max_depth=None, max_calls=None, max_name=None)

    feed(text) -> list of events; finish() -> list of events. Calls to tools
    not in `tools` are dropped with a ParseError("unknown_tool") unless
    forward_unknown is set; tools=None accepts every name.
    """

    def __init__(self, format: str, tools: Optional[Iterable[Any]] = None, **options: Any):
        super().__init__(FORMAT_ALIASES.get(format, format), tool_names(tools), **options)


class ToolCall(NamedTuple):
    index: int
    name: str
    arguments: str  # JSON text


class ParseResult(NamedTuple):
    text: str
    calls: List[ToolCall]
    errors: List[ParseError]


def collect(events: Iterable[_core.Event]) -> ParseResult:
    """Folds a sequence of events into text, complete calls and errors."""
    text: List[str] = []
    calls: List[ToolCall] = []
    errors: List[ParseError] = []
    for ev in events:
        if isinstance(ev, Text):
            text.append(ev.text)
        elif isinstance(ev, CallEnd):
            calls.append(ToolCall(ev.index, ev.name, ev.arguments))
        elif isinstance(ev, ParseError):
            errors.append(ev)
    return ParseResult("".join(text), calls, errors)


def parse(format: str, text: str, tools: Optional[Iterable[Any]] = None, **options: Any) -> ParseResult:
    """One-shot parse of a complete response (same result as streaming it)."""
    p = StreamParser(format, tools, **options)
    return collect(p.feed(text) + p.finish())
