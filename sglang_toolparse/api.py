"""Standalone Python API. Imports neither SGLang, torch nor pydantic."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from sglang_toolparse import _core
from sglang_toolparse._core import CallEnd, ParseError, Text
from sglang_toolparse.tool_specs import tool_entries

# Names accepted by StreamParser/parse besides the core's own format names.
FORMAT_ALIASES = {
    "qwen": "qwen25",
    "qwen3": "qwen25",
    "glm": "glm45",
    "glm4": "glm45",
}

# Formats whose argument values are typed by the tools' JSON schemas.
SCHEMA_TYPED_FORMATS = ("glm45", "glm47")


def available_formats() -> List[str]:
    """Every format name (and alias) the parser accepts."""
    return sorted(set(_core.formats()) | set(FORMAT_ALIASES))


def tool_names(tools: Optional[Sequence[Any]]) -> Optional[List[str]]:
    """Names of `tools`, a list or tuple of OpenAI-style dicts ({"type":
    "function", "function": {"name": ...}}), bare {"name": ...} dicts,
    SGLang `Tool` models or plain strings (checked: see tool_specs). None
    stays None (every name is accepted)."""
    entries = tool_entries(tools)
    return None if entries is None else [name for name, _ in entries]


def tool_schemas(tools: Optional[Sequence[Any]]) -> Optional[List[Tuple[str, Any]]]:
    """(name, parameters JSON schema or None) of each tool, in order."""
    return tool_entries(tools)


def _schema_options(fmt: str, tools: Optional[Iterable[Any]]) -> Dict[str, Any]:
    if fmt not in SCHEMA_TYPED_FORMATS:
        return {}
    from sglang_toolparse.glm_types import GlmConverter

    conv = GlmConverter(fmt, tool_schemas(tools))
    return {"string_params": conv.string_params, "converter": conv}


class StreamParser(_core.StreamParser):
    """Incremental parser for one stream of model output.

    StreamParser(format, tools=None, *, forward_unknown=False, max_buffer=None,
                 max_depth=None, max_calls=None, max_name=None)

    feed(text) -> list of events; finish() -> list of events. Calls to tools
    not in `tools` are dropped with a ParseError("unknown_tool") unless
    forward_unknown is set; tools=None accepts every name.

    `tools` is a list or tuple of OpenAI tool dicts, SGLang Tool models or
    names (TypeError otherwise; ValueError for an empty or repeated name).
    Limits are positive ints. A parser is one stream's state: not
    thread-safe (a second concurrent or re-entrant feed/finish raises
    RuntimeError), not copyable or picklable (TypeError).
    """

    def __init__(self, format: str, tools: Optional[Sequence[Any]] = None, **options: Any):
        if not isinstance(format, str):
            raise TypeError("format must be a str, not %s" % type(format).__name__)
        fmt = FORMAT_ALIASES.get(format, format)
        names = tool_names(tools)  # checks `tools` before anything else reads it
        options.update(_schema_options(fmt, tools))
        super().__init__(fmt, names, **options)


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


def parse(format: str, text: str, tools: Optional[Sequence[Any]] = None, **options: Any) -> ParseResult:
    """One-shot parse of a complete response (same result as streaming it)."""
    p = StreamParser(format, tools, **options)
    return collect(p.feed(text) + p.finish())
