"""Standalone Python API. Imports neither SGLang, torch nor pydantic."""
from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

from sglang_toolparse import _core
from sglang_toolparse._core import CallEnd, ParseError, Text

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


def _tool_schema(tool: Any) -> Any:
    if isinstance(tool, str):
        return None
    if isinstance(tool, dict):
        fn = tool.get("function", tool)
        return fn.get("parameters") if isinstance(fn, dict) else None
    fn = getattr(tool, "function", tool)
    return getattr(fn, "parameters", None)


def tool_schemas(tools: Optional[Iterable[Any]]) -> Optional[List[Tuple[str, Any]]]:
    """(name, parameters JSON schema or None) of each tool, in order."""
    if tools is None:
        return None
    return [(_tool_name(t), _tool_schema(t)) for t in tools]


# ---- tools compiled once ------------------------------------------------
#
# A schema-typed format needs each tool list compiled (schema -> a kind per
# parameter, a C table shared read-only by every parser). A server sends
# the same tools with thousands of requests, so compiled lists are kept in
# two small LRU caches (CACHE_SIZE entries each, so changing tools per
# request cannot grow memory):
#  - by identity: the same list object passed again (its items unchanged)
#    costs a dict lookup. A list whose schemas are mutated in place after
#    it was first used keeps its first compilation: pass a new list.
#  - by content: an equal list (a new request's tools) costs reading the
#    schemas and one marshal.dumps of them, the key (exact: equal bytes are
#    equal content; a schema marshal cannot write is not cached by content).
# Compiled tables are immutable, so sharing them across threads is safe;
# the caches themselves are guarded by a lock.

CACHE_SIZE = 64
_cache_lock = threading.Lock()
_by_identity: "OrderedDict[Tuple[str, int], Tuple[Any, tuple, Any]]" = OrderedDict()
_by_content: "OrderedDict[Tuple[str, bytes], Any]" = OrderedDict()


def _remember(cache: "OrderedDict", key: Any, value: Any) -> None:
    with _cache_lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)


def _compile(fmt: str, schemas: Optional[List[Tuple[str, Any]]]) -> Any:
    from sglang_toolparse.glm_types import GlmConverter, compile_tools

    rows, whole, by_name = compile_tools(fmt, schemas)
    kinds = _core.KINDS
    crow = [(name, kinds[dk], [(k, kinds[kind], mask) for k, kind, mask in params]) for name, dk, params in rows]
    # every name of the list, in order (a repeated name keeps its first id)
    names = [] if schemas is None else [n for n, _ in schemas]
    crow = [(n, kinds["untyped"], []) for n in names] + crow

    def host() -> GlmConverter:
        return GlmConverter(fmt, by_name, whole)

    return _core.CompiledTools(crow, whole, host)


def compiled_tools(fmt: str, tools: Any) -> Any:
    """The CompiledTools of `tools` (a list or tuple) for format `fmt`."""
    if tools is None:
        tools = ()
    key = (fmt, id(tools))
    with _cache_lock:
        hit = _by_identity.get(key)
        if hit is not None:
            _by_identity.move_to_end(key)
    if hit is not None and hit[0] is tools and len(hit[1]) == len(tools) and all(a is b for a, b in zip(hit[1], tools)):
        return hit[2]
    schemas = tool_schemas(tools) if tools else None
    try:
        # version 2: no back-references or interning flags, so equal content
        # gives equal bytes whatever objects it shares
        ckey: Optional[Tuple[str, bytes]] = (fmt, marshal.dumps(schemas, 2))
    except ValueError:  # an object marshal cannot write: not cached by content
        ckey = None
    compiled = None
    if ckey is not None:
        with _cache_lock:
            compiled = _by_content.get(ckey)
            if compiled is not None:
                _by_content.move_to_end(ckey)
    if compiled is None:
        compiled = _compile(fmt, schemas)
        if ckey is not None:
            _remember(_by_content, ckey, compiled)
    _remember(_by_identity, key, (tools, tuple(tools), compiled))
    return compiled


def _schema_options(fmt: str, tools: Optional[Iterable[Any]]) -> Dict[str, Any]:
    if fmt not in SCHEMA_TYPED_FORMATS:
        return {}
    return {"compiled": compiled_tools(fmt, tools)}


class StreamParser(_core.StreamParser):
    """Incremental parser for one stream of model output.

    StreamParser(format, tools=None, *, forward_unknown=False, max_buffer=None,
                 max_depth=None, max_calls=None, max_name=None)

    feed(text) -> list of events; finish() -> list of events. Calls to tools
    not in `tools` are dropped with a ParseError("unknown_tool") unless
    forward_unknown is set; tools=None accepts every name.
    """

    def __init__(self, format: str, tools: Optional[Iterable[Any]] = None, **options: Any):
        fmt = FORMAT_ALIASES.get(format, format)
        if tools is not None and not isinstance(tools, (list, tuple)):
            tools = list(tools)
        typed = _schema_options(fmt, tools)
        options.update(typed)
        # a compiled tool list holds the names; () keeps "only these tools"
        names = () if typed and tools is not None else tool_names(tools)
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


def parse(format: str, text: str, tools: Optional[Iterable[Any]] = None, **options: Any) -> ParseResult:
    """One-shot parse of a complete response (same result as streaming it;
    each call's arguments are built once)."""
    return collect(StreamParser(format, tools, **options).parse_all(text))
