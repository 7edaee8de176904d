"""The `tools` argument of StreamParser, parse() and CallAssembler, checked
once at the API: a list or tuple whose items are OpenAI tool dicts
({"type": "function", "function": {"name": ..., "parameters": ...}}),
bare function dicts ({"name": ..., "parameters": ...}), SGLang/OpenAI
`Tool` models (`.function.name`) or tool names (str). Anything else is a
TypeError naming `tools`; an empty or repeated name is a ValueError.
Pure Python: imports neither the core nor SGLang."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping  # typing.Mapping's isinstance is several times slower
from typing import Any, List, Optional, Tuple

__all__ = ["tool_entries", "usable_tools"]

_SHAPES = 'OpenAI tool dicts ({"type": "function", "function": {"name": ...}}), SGLang Tool models or tool names'


def _entry(i: int, tool: Any) -> Tuple[str, Any]:
    if isinstance(tool, str):
        return tool, None
    if isinstance(tool, Mapping):
        kind = tool.get("type")
        if kind not in ("function", None):
            raise TypeError("tools[%d]: only function tools are supported, not type %r" % (i, kind))
        if "function" in tool:
            fn = tool["function"]
            if not isinstance(fn, Mapping):
                raise TypeError("tools[%d]: \"function\" must be a dict, not %s" % (i, type(fn).__name__))
        elif "name" in tool:
            fn = tool  # a bare function dict: {"name": ..., "parameters": ...}
        else:
            raise TypeError(
                "tools[%d]: a tool dict needs {\"type\": \"function\", \"function\": {\"name\": ...}}; got keys %s"
                % (i, sorted(map(str, tool)))
            )
        name, params = fn.get("name"), fn.get("parameters")
    else:
        fn = getattr(tool, "function", None)
        if fn is None:
            raise TypeError("tools must hold %s; tools[%d] is %s" % (_SHAPES, i, type(tool).__name__))
        name, params = getattr(fn, "name", None), getattr(fn, "parameters", None)
    if type(name) is not str and not isinstance(name, str):
        raise TypeError("tools[%d]: the tool name must be a str, not %s" % (i, type(name).__name__))
    if params is not None and type(params) is not dict and not isinstance(params, (Mapping, bool)):
        raise TypeError("tools[%d] (%r): parameters must be a JSON schema object, not %s" % (i, name, type(params).__name__))
    return name, params


def tool_entries(tools: Any) -> Optional[List[Tuple[str, Any]]]:
    """[(name, parameters schema or None)] in order; None stays None (every
    name is accepted)."""
    if tools is None:
        return None
    if not isinstance(tools, (list, tuple)):
        raise TypeError("tools must be a list or tuple of %s, not %s" % (_SHAPES, type(tools).__name__))
    out: List[Tuple[str, Any]] = []
    seen = set()
    for i, tool in enumerate(tools):
        name, params = _entry(i, tool)
        if not name:
            raise ValueError("tools[%d]: the tool name is empty" % i)
        if name in seen:
            raise ValueError("tools: duplicate tool name %r" % name)
        seen.add(name)
        out.append((name, params))
    return out


def usable_tools(tools: Any) -> list:
    """`tools` reduced to what tool_entries accepts, never raising: for
    callers that must take whatever SGLang's serving layer takes (its
    `Function.parameters` is any JSON value, a name may be empty or
    repeated). Kept in order: the first tool of each non-empty name; a
    `parameters` that is not a JSON schema (object or bool) is dropped (the
    tool then has no schema); an item with no readable name is left out
    (a call to it is an unknown tool). When every tool is usable as it is,
    a list `tools` is returned itself (not a copy), so per-request caches
    keyed by identity (api.compiled_tools) find it. The answer for a list
    is remembered by identity (the same objects again: one lookup), with
    api.compiled_tools' caveat: a tool mutated in place is not re-read."""
    hit = _usable_seen.get(id(tools))
    if hit is not None and hit[0] is tools and len(hit[1]) == len(tools) and all(a is b for a, b in zip(hit[1], tools)):
        return hit[2]
    out = _usable(tools)
    if isinstance(tools, (list, tuple)):
        with _usable_lock:
            _usable_seen[id(tools)] = (tools, tuple(tools), out)
            _usable_seen.move_to_end(id(tools))
            while len(_usable_seen) > 64:
                _usable_seen.popitem(last=False)
    return out


_usable_lock = threading.Lock()
_usable_seen: "OrderedDict[int, Tuple[Any, tuple, list]]" = OrderedDict()


def _usable(tools: Any) -> list:
    out: list = []
    seen = set()
    same = isinstance(tools, list)
    for i, tool in enumerate(tools or ()):
        try:
            name, _ = _entry(i, tool)
        except TypeError:
            try:  # only `parameters` is unusable: keep the tool without it
                name = _entry(i, _without_parameters(tool))[0]
            except TypeError:
                same = False
                continue
            tool = {"type": "function", "function": {"name": name}}
            same = False
        if name and name not in seen:
            seen.add(name)
            out.append(tool)
        else:
            same = False
    return tools if same else out


def _without_parameters(tool: Any) -> Any:
    if isinstance(tool, Mapping):
        fn = tool.get("function", tool)
        name = fn.get("name") if isinstance(fn, Mapping) else None
    else:
        fn = getattr(tool, "function", None)
        name = getattr(fn, "name", None)
    return {"type": "function", "function": {"name": name}}
