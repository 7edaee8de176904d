"""Standalone Python API. Imports neither SGLang, torch nor pydantic."""
from __future__ import annotations

import json
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
    "kimi": "kimi_k2",
    "minimax-m2": "minimax_m2",
    "minimax": "minimax_m2",
    "step3p5": "qwen3_coder",
}

# Formats whose argument values are typed by the tools' JSON schemas.
SCHEMA_TYPED_FORMATS = ("glm45", "glm47", "qwen3_coder", "minimax_m2")


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


def _properties(tools: Optional[Sequence[Any]]) -> Optional[Dict[str, List[str]]]:
    """kimi_k2: each tool's property names, as JSON string content (how the
    core writes argument keys), to name a call whose id is a bare counter.
    Only needed with two or more tools (one tool names every call)."""
    if not tools or len(tools) < 2:
        return None
    out: Dict[str, List[str]] = {}
    for name, schema in tool_entries(tools) or ():
        keys = _property_names(schema)
        joined = "".join(keys)
        if not (joined.isprintable() and '"' not in joined and "\\" not in joined):
            keys = [json.dumps(k, ensure_ascii=False)[1:-1] for k in keys]
        out[name] = keys
    return out


def _property_names(schema: Any, depth: int = 0) -> List[str]:
    """Top-level property names of a parameters schema; without any, those of
    its anyOf / oneOf / allOf branches (as SGLang reads them)."""
    if not isinstance(schema, dict) or depth > 32:
        return []
    props = schema.get("properties")
    if isinstance(props, dict):
        return [k for k in props if isinstance(k, str)]
    names: List[str] = []
    for keyword in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for branch in branches:
                names += [k for k in _property_names(branch, depth + 1) if k not in names]
    return names


def _schema_options(fmt: str, tools: Optional[Iterable[Any]]) -> Dict[str, Any]:
    if fmt == "kimi_k2":
        return {"properties": _properties(tools)}
    if fmt not in SCHEMA_TYPED_FORMATS:
        return {}
    if fmt in ("qwen3_coder", "minimax_m2"):
        from sglang_toolparse.xml_types import XmlConverter

        xconv = XmlConverter(fmt, tool_schemas(tools))
        return {"string_params": xconv.string_params, "other_params": xconv.other_params, "converter": xconv}
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
    id: Optional[str] = None  # the call id the model wrote (kimi_k2), else None


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
            calls.append(ToolCall(ev.index, ev.name, ev.arguments, ev.id))
        elif isinstance(ev, ParseError):
            errors.append(ev)
    return ParseResult("".join(text), calls, errors)


def parse(format: str, text: str, tools: Optional[Sequence[Any]] = None, **options: Any) -> ParseResult:
    """One-shot parse of a complete response (same result as streaming it)."""
    p = StreamParser(format, tools, **options)
    return collect(p.feed(text) + p.finish())
