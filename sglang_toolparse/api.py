"""Standalone Python API. Imports neither SGLang, torch nor pydantic."""
from __future__ import annotations

import json
import marshal
import threading
from collections import OrderedDict
from operator import is_
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from sglang_toolparse import _core
from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, Dropped, ParseError, Text
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
    "gpt-oss": "gpt_oss",
    "nanbeige": "qwen3_coder",  # SGLang serves Nanbeige with Qwen3CoderDetector
    "minimax-m3": "minimax_m3",
}

# Formats whose argument values are typed by the tools' JSON schemas.
SCHEMA_TYPED_FORMATS = ("glm45", "glm47", "qwen3_coder", "minimax_m2", "mimo", "dots", "minicpm5")
# rows of the GLM engine typed by GLM-4.5's or GLM-4.7's rules (glm_types.py)
GLM_FAMILY = {"glm45": "glm45", "glm47": "glm47", "ling3": "glm45", "iquest_q1": "glm47"}
SCHEMA_TYPED_FORMATS += tuple(f for f in GLM_FAMILY if f not in SCHEMA_TYPED_FORMATS)
# rows of the GLM engine with rules of their own (glm_row_types.py)
ROW_FORMATS = ("poolside_v1", "spark25", "hunyuan", "hunyuan_os")
SCHEMA_TYPED_FORMATS += ROW_FORMATS
XML_FORMATS = ("qwen3_coder", "minimax_m2", "mimo", "dots", "minicpm5")  # rules: xml_types.py, rows in csrc/tp_type_rules.c
SCHEMA_TYPED_FORMATS += ("minimax_m3",)  # nested values typed in C (minimax_m3_types.py: the schema table)
XML_FORMATS += ("step3",)
SCHEMA_TYPED_FORMATS += ("step3",)
ROW_FORMATS += ("k2_horizon",)  # glm_row_types.py types xml and xml_typed; a JSON body is fmt_jsontag.c's (no typing)
SCHEMA_TYPED_FORMATS += ("k2_horizon",)


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
    return {name: _property_keys(schema) for name, schema in tool_entries(tools) or ()}


def _property_keys(schema: Any) -> List[str]:
    keys = _property_names(schema)
    joined = "".join(keys)
    if not (joined.isprintable() and '"' not in joined and "\\" not in joined):
        keys = [json.dumps(k, ensure_ascii=False)[1:-1] for k in keys]
    return keys


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


def _compile_untyped(fmt: str, schemas: Optional[List[Tuple[str, Any]]]) -> Any:
    """A format that does not type values: the tool names (in order), and
    for kimi_k2 each tool's property names (to name a bare-counter call)."""
    kinds = _core.KINDS
    untyped, other = kinds["untyped"], kinds["other"]
    if fmt != "kimi_k2":
        return _core.CompiledTools([(n, untyped, []) for n, _ in schemas or ()])
    return _core.CompiledTools([(n, untyped, [(k, other, 0) for k in _property_keys(schema)])
                                for n, schema in schemas or ()])


def _compile(fmt: str, schemas: Optional[List[Tuple[str, Any]]]) -> Any:
    if fmt in XML_FORMATS:
        return _compile_xml(fmt, schemas)
    if fmt in ROW_FORMATS:
        return _compile_row(fmt, schemas)
    if fmt == "minimax_m3":
        return _compile_m3(schemas)
    if fmt not in SCHEMA_TYPED_FORMATS:
        return _compile_untyped(fmt, schemas)
    from sglang_toolparse.glm_types import GlmConverter, compile_tools

    family = GLM_FAMILY[fmt]
    rows, whole, by_name = compile_tools(family, schemas)
    kinds = _core.KINDS
    crow = [(name, kinds[dk], [(k, kinds[kind], mask) for k, kind, mask in params]) for name, dk, params in rows]
    # every name of the list, in order (a repeated name keeps its first id)
    names = [] if schemas is None else [n for n, _ in schemas]
    crow = [(n, kinds["untyped"], []) for n in names] + crow

    def host() -> GlmConverter:
        return GlmConverter(family, by_name, whole)

    return _core.CompiledTools(crow, whole, host)


def _compile_row(fmt: str, schemas: Optional[List[Tuple[str, Any]]]) -> Any:
    from sglang_toolparse.glm_row_types import RowConverter, compile_rows, tool_params

    kinds = _core.KINDS
    crow = [(name, kinds[dk], [(k, kinds[kind], mask) for k, kind, mask in params])
            for name, dk, params in compile_rows(fmt, schemas)]
    names = [] if schemas is None else [n for n, _ in schemas]
    crow = [(n, kinds["untyped"], []) for n in names] + crow
    params = tool_params(schemas, fmt)

    def host() -> RowConverter:  # the few values the core leaves to Python's rules
        return RowConverter(fmt, params)

    return _core.CompiledTools(crow, (), host)


def _compile_m3(schemas: Optional[List[Tuple[str, Any]]]) -> Any:
    from sglang_toolparse.minimax_m3_types import M3Converter, c_rows, schema_blob

    kinds = _core.KINDS
    tools = schemas or []
    crow = [(name, kinds[dk], [(k, kinds[kind], mask) for k, kind, mask in params])
            for name, dk, params in c_rows(tools)]
    names = [] if schemas is None else [n for n, _ in schemas]
    crow = [(n, kinds["untyped"], []) for n in names] + crow

    def host() -> M3Converter:  # the JSON texts the core leaves to json.loads
        return M3Converter(tools)

    return _core.CompiledTools(crow, (), host, schema_blob(tools))


def _compile_xml(fmt: str, schemas: Optional[List[Tuple[str, Any]]]) -> Any:
    from sglang_toolparse.xml_types import TYPING, XmlConverter, c_rows

    fmt = TYPING.get(fmt, fmt)  # a row typed by another family's rules

    kinds = _core.KINDS
    tools = schemas or []
    crow = [(name, kinds[dk], [(k, kinds[kind], mask) for k, kind, mask in params])
            for name, dk, params in c_rows(fmt, tools)]
    names = [] if schemas is None else [n for n, _ in schemas]
    crow = [(n, kinds["untyped"], []) for n in names] + crow

    def host() -> XmlConverter:  # the few values the core leaves to Python's rules
        return XmlConverter(fmt, tools)

    return _core.CompiledTools(crow, (), host)


def compiled_tools(fmt: str, tools: Any) -> Any:
    """The CompiledTools of `tools` (a list or tuple) for format `fmt`."""
    if tools is None:
        tools = ()
    last = _last  # one tuple read: the list asked for last, without a lookup
    if last[0] is tools and last[1] == fmt and len(last[2]) == len(tools) and all(map(is_, last[2], tools)):
        return last[3]
    key = (fmt, id(tools))
    hit = _by_identity.get(key)  # a dict read is atomic; the lock guards the order
    if hit is not None and hit[0] is tools and len(hit[1]) == len(tools) and all(map(is_, hit[1], tools)):
        try:  # one C call, atomic under the GIL (the lock guards compound updates)
            _by_identity.move_to_end(key)
        except KeyError:  # evicted meanwhile by another thread
            pass
        _remember_last(fmt, hit[0], hit[1], hit[2])
        return hit[2]  # these very objects were checked when they were compiled
    schemas = tool_schemas(tools) or None  # checks `tools` (a list or tuple of tools)
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
    _remember_last(fmt, tools, tuple(tools), compiled)
    return compiled


# (tools, fmt, tuple(tools), compiled) of the last compiled_tools() answer;
# replaced whole, so a reader sees one consistent tuple
_last: Tuple[Any, ...] = (object(), None, (), None)


def _remember_last(fmt: str, tools: Any, items: tuple, compiled: Any) -> None:
    global _last
    _last = (tools, fmt, items, compiled)


class StreamParser(_core.ToolsParser):
    """Incremental parser for one stream of model output.

    StreamParser(format, tools=None, *, forward_unknown=False, max_buffer=None,
                 max_depth=None, max_calls=None, max_name=None, markup=False)

    feed(text) -> list of events; finish() -> list of events. Calls to tools
    not in `tools` are dropped with a ParseError("unknown_tool") unless
    forward_unknown is set; tools=None accepts every name. markup=True
    also streams Markup events (markup next to no call, so that the events
    tile the input; docs/SEMANTICS.md, "Dropped text").

    `tools` is a list or tuple of OpenAI tool dicts, SGLang Tool models or
    names (TypeError otherwise; ValueError for an empty or repeated name).
    Limits are positive ints. A parser is one stream's state: not
    thread-safe (a second concurrent or re-entrant feed/finish raises
    RuntimeError), not copyable or picklable (TypeError).
    """

    # __init__(format, tools=None, **options) is _core.ToolsParser's: the
    # format (a str; FORMAT_ALIASES), then compiled_tools(format, tools)
    # (a list passed again is found by identity without a call), then the
    # core's setup; bound below (_bind_api) to this module's tables


class ToolCall(NamedTuple):
    """One call of a response. `complete` is False for a call that began
    (its name and arguments were streamed) but was cut off (end of stream:
    max_tokens, a stop string) or broke (malformed markup): `arguments` is
    then the JSON text as far as it was generated, exactly what streaming
    sent (a prefix of valid JSON, usually not valid JSON itself), and the
    call's ParseError is in `errors`. Never execute an incomplete call."""

    index: int
    name: str
    arguments: str  # JSON text (complete calls); the arguments so far otherwise
    id: Optional[str] = None  # the call id the model wrote (kimi_k2), else None
    complete: bool = True


class ParseResult(NamedTuple):
    text: str
    calls: List[ToolCall]  # in index order, incomplete ones included (complete=False)
    errors: List[ParseError]

    @property
    def complete_calls(self) -> List[ToolCall]:
        """The calls that ended well-formed (safe to execute)."""
        return [c for c in self.calls if c.complete]


def collect(events: Iterable[_core.Event]) -> ParseResult:
    """Folds a sequence of events (streamed, or parse_all's) into text,
    calls and errors. The same input gives the same result either way: a
    call that began and then ended with a ParseError is a ToolCall with
    complete=False and the arguments its ArgsDelta events carried; the
    Dropped events that follow an error become its `raw` text."""
    text: List[str] = []
    calls: List[ToolCall] = []
    errors: List[ParseError] = []
    open_: Dict[int, Tuple[int, List[str]]] = {}  # index -> (position in calls, deltas)
    for ev in events:
        t = type(ev)
        if t is Text:
            text.append(ev.text)
        elif t is ArgsDelta:
            got = open_.get(ev.index)
            if got is not None:
                got[1].append(ev.delta)
        elif t is CallStart:
            open_[ev.index] = (len(calls), [])
            calls.append(ToolCall(ev.index, ev.name, "", ev.id, False))
        elif t is CallEnd:
            got = open_.pop(ev.index, None)
            call = ToolCall(ev.index, ev.name, ev.arguments, ev.id)
            if got is None:
                calls.append(call)
            else:
                calls[got[0]] = call
        elif t is ParseError:
            errors.append(ev)
            got = open_.pop(ev.index, None) if ev.index is not None else None
            if got is not None:
                calls[got[0]] = calls[got[0]]._replace(arguments="".join(got[1]))
        elif t is Dropped and errors:  # the text the last error dropped
            last = errors[-1]
            errors[-1] = last.with_raw(last.raw + ev.raw, ev.offset if last.raw_offset is None else last.raw_offset)
    for pos, deltas in open_.values():  # events of a stream not yet finished
        calls[pos] = calls[pos]._replace(arguments="".join(deltas))
    return ParseResult("".join(text), calls, errors)


def parse(format: str, text: str, tools: Optional[Sequence[Any]] = None, **options: Any) -> ParseResult:
    """One-shot parse of a complete response (same result as streaming it;
    each call's arguments are built once)."""
    return collect(StreamParser(format, tools, **options).parse_all(text))


_core._bind_api(FORMAT_ALIASES, SCHEMA_TYPED_FORMATS, compiled_tools)
