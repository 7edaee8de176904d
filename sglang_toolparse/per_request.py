"""What one request costs the SGLang adapter, kept small.

SGLang builds a FunctionCallParser, and with it a detector, for every
request; a non-streaming request then calls has_tool_call and
detect_and_parse on the whole reply. Three things keep that cheap:

- The builtin detector's state is set up once per class: its `__init__`
  (tokens, compiled regexes, empty buffers) runs on a prototype the first
  time a class is built, and the prototype's values go on the class: its
  immutable values (strings, numbers, compiled patterns: shared) as class
  attributes, its empty containers as descriptors that give a detector a
  fresh one when first read (then kept in the detector's __dict__). A
  request that reads none of them (a one-shot parse) sets up nothing, and
  the class needs no `__getattr__` hook (which would make every attribute
  read of a detector, SGLang's included, a Python-level call). Anything
  else in the builtin's state (a non-empty or unknown kind of object, a
  future SGLang's), or arguments to `__init__`, and the builtin's own
  `__init__` runs as before.
- The compiled tool list of a request (tool_specs.usable_tools, then
  api.compiled_tools) is found by the list's identity (one list passed to
  many parsers), else by its content read in one pass: the tool names for
  formats that only check names; for those that type values by schema,
  a kept copy of the same schemas under the same names (compared in C,
  strictly), else the schemas' marshal bytes (every request brings a new
  list of Tool models; the general path reads them three times). Their
  one-shot parse (typed_fold) compares only the schemas of the tools the
  reply calls, when the compiled tools kept for the same names parse it.
- has_tool_call's answer is remembered for the text it was asked about
  (SGLang asks twice, then parses); the parse itself runs once.

Imports neither SGLang nor pydantic.
"""
from __future__ import annotations

import enum
import inspect
import marshal
import re
import threading
from operator import is_
from typing import Any, Dict, Optional, Tuple

from sglang_toolparse._core import same_content, tool_entries
from sglang_toolparse.api import SCHEMA_TYPED_FORMATS, compiled_tools
from sglang_toolparse.tool_specs import usable_tools

__all__ = ["Fresh", "declared_names", "declares_all", "fast_init", "prototype", "request_tools",
           "restore_init", "start_from", "state_of", "typed_fold"]

_lock = threading.Lock()

# ---- the builtin detector's state, from a prototype --------------------------

_SHARED = (str, bytes, int, float, complex, type(None), re.Pattern, enum.Enum)
_FRESH = (list, dict, set)
_Proto = Tuple[Dict[str, Any], Dict[str, Any]]
# class -> (shared values, {name: container type}), or None when the class's
# state cannot be shared (its own __init__ then runs every time)
_protos: Dict[type, Optional[_Proto]] = {}


def _immutable(v: Any, depth: int = 0) -> bool:
    if isinstance(v, _SHARED):
        return True
    if type(v) in (tuple, frozenset) and depth < 4:
        return all(_immutable(x, depth + 1) for x in v)
    return False


def _prototype(cls: type, mixin: type) -> Optional[_Proto]:
    obj = cls.__new__(cls)
    try:
        super(mixin, obj).__init__()  # the builtin's __init__ (what follows `mixin` in the MRO)
    except Exception:
        return None
    # stateful helpers the builtin makes new for each detector (e.g. gpt-oss's
    # HarmonyParser): the class names their factory, called on first read
    return state_of(obj, getattr(cls, "_tp_builtin_factories", {}))


def state_of(obj: Any, factories: Dict[str, Any]) -> Optional[_Proto]:
    """A freshly built detector's state as a prototype: (shared immutable
    values, {name: factory of a fresh one}); None when some value is
    neither (the state cannot be shared). `factories` maps names to the
    type of a helper made new per detector."""
    shared: Dict[str, Any] = {}
    fresh: Dict[str, Any] = {}
    for name, value in vars(obj).items():
        if name in factories and type(value) is factories[name]:
            fresh[name] = factories[name]
        elif type(value) in _FRESH and not value:
            fresh[name] = type(value)
        elif _immutable(value):
            shared[name] = value
        else:
            return None
    return shared, fresh


class Fresh:
    """A class attribute that gives each detector its own container (or
    helper) when first read: `make()`, kept in the detector's __dict__. A
    non-data descriptor: from then on the __dict__ entry is what a read
    finds, at a plain attribute read's cost."""

    __slots__ = ("name", "make")

    def __init__(self, name: str, make: Any) -> None:
        self.name = name
        self.make = make

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.make()
        return value


# class -> the names _install put on it
_installed: Dict[type, frozenset] = {}


def _install(cls: type, mixin: type, proto: _Proto) -> None:
    """Put `proto` on `cls`: shared values as class attributes, containers
    as Fresh descriptors; not a name that `cls` or a class between it and
    `mixin` (included) defines itself (what a detector read there before:
    the adapter's own attributes and containers)."""
    mro = cls.__mro__
    ours = set()
    for k in mro[:mro.index(mixin) + 1]:
        ours.update(n for n in vars(k) if n not in _installed.get(k, ()))
    shared, fresh = proto
    put = []
    for name, value in shared.items():
        if name not in ours:
            setattr(cls, name, value)
            put.append(name)
    for name, make in fresh.items():
        if name not in ours:
            setattr(cls, name, Fresh(name, make))
            put.append(name)
    _installed[cls] = frozenset(put)


def prototype(cls: type, mixin: type) -> Optional[_Proto]:
    """The state the builtin detector's `__init__` (the one after `mixin`
    in `cls`'s MRO) sets, taken once per class and put on the class
    (_install); None when it cannot be shared (the caller then runs that
    `__init__`)."""
    try:
        return _protos[cls]
    except KeyError:
        proto = _prototype(cls, mixin)
        if proto is not None:
            with _lock:
                if cls not in _installed:
                    _install(cls, mixin, proto)
        _protos[cls] = proto
        return proto


def _takes_nothing(init: Any) -> bool:
    try:
        params = list(inspect.signature(init).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(params) == 1 and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)


# classes fast_init has decided on (as _protos, classes are kept)
_init_decided: set = set()


def fast_init(cls: type, mixin: type) -> None:
    """Once `cls`'s detectors start from a prototype (`mixin.__init__` found
    one): give `cls` object's own `__init__` when that is all its
    construction does, so SGLang's `detector_class()` per request runs no
    Python code. Only for a class whose `__init__` is `mixin`'s, that has
    no subclass (they would inherit it; the mixin gives a later one its
    `__init__` back: restore_init), and whose builtin `__init__` (the next
    in the MRO) takes no arguments: a call with arguments is then refused
    (TypeError) as the builtin refuses it, instead of reaching it. The
    signature SGLang inspects for a `tokenizer` parameter is the builtin's:
    `()`."""
    if cls in _init_decided:
        return
    _init_decided.add(cls)
    if cls.__dict__.get("__init__", mixin.__init__) is not mixin.__init__ or \
            getattr(cls, "__init__", None) is not mixin.__init__ or cls.__subclasses__():
        return
    mro = cls.__mro__
    builtin = next((k.__dict__["__init__"] for k in mro[mro.index(mixin) + 1:] if "__init__" in k.__dict__), None)
    if builtin is None or builtin is object.__init__ or _takes_nothing(builtin):
        cls.__init__ = object.__init__  # type: ignore[misc]


def restore_init(cls: type, mixin: type) -> None:
    """For a new subclass of `mixin`: `mixin.__init__` where it would
    inherit the `object.__init__` fast_init gave a base class (each class
    finds its own prototype)."""
    if "__init__" not in cls.__dict__ and getattr(cls, "__init__", None) is object.__init__:
        cls.__init__ = mixin.__init__  # type: ignore[misc]


def start_from(obj: Any, proto: _Proto) -> None:
    """Give `obj` the state of `proto` at once (state_of's split: shared
    values, fresh containers and helpers)."""
    shared, fresh = proto
    d = obj.__dict__
    d.update(shared)
    for name, make in fresh.items():
        d[name] = make()


# ---- the request's compiled tools --------------------------------------------

_CACHE_SIZE = 64
# (format, id(tools)) -> (tools, tuple(tools), CompiledTools)
_by_list: Dict[Tuple[str, int], Tuple[Any, tuple, Any]] = {}
# (format, what the compiled list depends on) -> CompiledTools
_by_content: Dict[Tuple[str, Any], Any] = {}


def _remember(cache: Dict[Any, Any], key: Any, value: Any) -> None:
    with _lock:
        cache.pop(key, None)
        cache[key] = value
        while len(cache) > _CACHE_SIZE:
            del cache[next(iter(cache))]


def _same_list(fmt: str, tools: Any) -> Any:
    """The CompiledTools remembered for this very list holding the same
    objects, or None."""
    hit = _by_list.get((fmt, id(tools)))
    if hit is not None and hit[0] is tools and len(hit[1]) == len(tools) and all(map(is_, hit[1], tools)):
        return hit[2]
    return None


def request_tools(fmt: str, tools: Any) -> Any:
    """The CompiledTools a detector's parser uses for `tools` (what SGLang
    passes: a list of Tool models, possibly with unusable entries, or
    None): api.compiled_tools(fmt, usable_tools(tools)). Remembered for the
    same list holding the same objects, and for a list with the same
    content (every request brings its own list: SGLang's Tool models are
    read once, and the key is only what the compiled list depends on). As
    with api.compiled_tools, a tool mutated in place after its first use is
    not read again."""
    hit = _same_list(fmt, tools)
    if hit is not None:
        return hit
    # (names, [(name, schema), ...]) in one pass, in C; None: not read as it is
    return _read_tools(fmt, tools, tool_entries(tools))


def _read_tools(fmt: str, tools: Any, read: Any) -> Any:
    """request_tools past the list's identity, `read` being tool_entries(tools)."""
    if read is not None and fmt in SCHEMA_TYPED_FORMATS:
        # the schema-typed formats: a kept copy of the same schemas (compared
        # in C, strictly: what their marshal bytes would say) for these names
        for entries, compiled in _by_schemas.get((fmt, read[0]), ()):
            if same_content(read[1], entries):
                return compiled
    ckey = _content_key(fmt, read)
    compiled = _by_content.get(ckey) if ckey is not None else None
    if compiled is None:
        compiled = compiled_tools(fmt, usable_tools(tools))
        if ckey is not None:
            _remember(_by_content, ckey, compiled)
    if ckey is not None and fmt in SCHEMA_TYPED_FORMATS:
        # a copy: the request's own schema objects may change after it
        _remember_schemas((fmt, read[0]), marshal.loads(ckey[1]), compiled)
    if isinstance(tools, (list, tuple)):
        _remember(_by_list, (fmt, id(tools)), (tools, tuple(tools), compiled))
    return compiled


def typed_fold(fmt: str, text: str, tools: Any, forward: bool, parse: Any) -> Any:
    """parse(fmt, text, request_tools(fmt, tools), forward), `parse` being
    _core.parse_typed (a schema-typed format's one-shot fold: text and
    complete calls, or None), reading of a new list with kept names only
    the schemas of the tools its reply calls.

    The compiled list last kept for the same names is tried first. A
    parse with it is the request's own parse when the schemas of the tools
    it called equal the kept ones: a compiled list gives each tool's values
    their types from that tool's schema alone (its row, its host
    converter's entry, its nested-value graph, all found by the call's
    name), and a fold holds every call that started (a call that did not
    complete is an error, and the fold is None). A fold of None is taken
    when all the schemas are the same; anything else is parsed again with
    request_tools'. tests/test_per_request.py checks this against fresh
    compiles, a changed schema at every position."""
    compiled = _same_list(fmt, tools)
    if compiled is not None:
        return parse(fmt, text, compiled, forward)
    read = tool_entries(tools)
    if read is not None:
        kept = _by_schemas.get((fmt, read[0]))
        if kept:
            entries, compiled = kept[0]
            fold = parse(fmt, text, compiled, forward)
            if same_content(read[1], entries) if fold is None else _called_same(read, entries, fold[1]):
                return fold
    return parse(fmt, text, _read_tools(fmt, tools, read), forward)


def _called_same(read: Any, entries: Any, calls: Any) -> bool:
    """Whether each tool that `calls` name has the same schema in `read`
    (tool_entries of the request's list) as in `entries` (a kept copy for
    the same names, in the same order); every schema compared when a call
    names a tool not declared (forwarded)."""
    names, now = read
    compared = set()
    for call in calls:
        try:
            i = names.index(call[1])
        except ValueError:
            return same_content(now, entries)
        if i not in compared:
            compared.add(i)
            if not same_content(now[i][1], entries[i][1]):
                return False
    return True


# (format, tool names) -> [(a copy of the tools' (name, schema) entries, CompiledTools), ...],
# the last kept first; a few per key, _CACHE_SIZE keys
_SCHEMAS_PER_NAMES = 4
_by_schemas: Dict[Tuple[str, tuple], list] = {}


def _remember_schemas(key: Tuple[str, tuple], entries: Any, compiled: Any) -> None:
    with _lock:
        kept = [e for e in _by_schemas.pop(key, ()) if e[1] is not compiled]
        _by_schemas[key] = [(entries, compiled)] + kept[:_SCHEMAS_PER_NAMES - 1]
        while len(_by_schemas) > _CACHE_SIZE:
            del _by_schemas[next(iter(_by_schemas))]


def declared_names(fmt: str, tools: Any) -> Any:
    """The names a parser made with request_tools(fmt, tools) accepts (a
    set, or the compiled tuple), without compiling: read from SGLang-style
    tool models in one pass when every one has a readable, non-empty name
    (usable_tools keeps each such tool); else from request_tools."""
    if type(tools) is list:
        names = set()
        for tool in tools:
            name = getattr(getattr(tool, "function", None), "name", None)
            if type(name) is not str or not name or type(tool) is dict:
                break
            names.add(name)
        else:
            return names
    return request_tools(fmt, tools).names


def declares_all(fmt: str, tools: Any, calls: Any) -> bool:
    """Whether every call of `calls` ((index, name, arguments, id) of
    complete calls, as _core.parse_plain gives them) names a tool that a
    parser made with request_tools(fmt, tools) accepts, with the name
    written in the call (a Kimi-K2 id `NAME:IDX`, not a bare counter whose
    tool is inferred from the tools). A few calls are looked up in the list
    directly, more in declared_names' set."""
    for call in calls:
        cid = call[3]
        if cid is not None and ":" not in cid:
            return False
    if not calls:
        return True
    if len(calls) > 2 or type(tools) is not list:
        names = declared_names(fmt, tools)
        for call in calls:
            if call[1] not in names:
                return False
        return True
    for call in calls:
        name = call[1]
        for tool in tools:
            try:  # (a dict, or a tool without a function name: the general path)
                tname = tool.function.name
            except AttributeError:
                return _in_names(fmt, tools, calls)
            if tname == name and type(tname) is str:
                break
        else:
            return _in_names(fmt, tools, calls)
    return True


def _in_names(fmt: str, tools: Any, calls: Any) -> bool:
    names = declared_names(fmt, tools)
    return all(call[1] in names for call in calls)


def _content_key(fmt: str, read: Any) -> Optional[Tuple[str, Any]]:
    """What the compiled list of a request's tools depends on, from `read`
    (tool_entries of them: one pass over SGLang-style tool models,
    `.function.name`, `.function.parameters` a dict or None, each usable as
    it is: a non-empty name, not repeated); None for anything else (then
    the general path decides). Formats that
    type values by schema depend on the schemas: their marshal bytes
    (format 4: its back-references to an object met before make it about
    twice as fast as format 2 on JSON-decoded schemas; the bytes still
    decode to the content, so equal bytes are equal content, and the same
    content shared differently only misses the cache); Kimi-K2 on the names and each tool's
    property names (they name a bare-counter call); the others on the names
    alone."""
    if read is None:
        return None
    names, entries = read
    if fmt not in SCHEMA_TYPED_FORMATS:
        if fmt != "kimi_k2":
            return fmt, names
        # Kimi-K2: and each tool's top-level property names (api._property_names)
        props = tuple(tuple(p["properties"]) if p is not None and type(p.get("properties")) is dict else
                      None if p is None else False for _, p in entries)
        if False not in props:
            return fmt, names, props
    try:
        return fmt, marshal.dumps(entries, 4)
    except ValueError:  # an object marshal cannot write
        return None
