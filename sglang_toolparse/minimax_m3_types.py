"""MiniMax-M3 parameter values: the tool schemas as the C core reads them.

MiniMax-M3's chat template (macro `to_xml`) writes an argument as one element
per key, each tag after the namespace token `]<]minimax[>[` (NS): a mapping as
its keys' elements, a sequence as one `item` element per entry, a boolean with
`tojson`, any other scalar as its text (`{{ val }}`: strings raw, numbers as
Python writes them), a None not at all. The C core streams a parameter
declared as a string itself (csrc/fmt_nsxml.c) and types every other value
whole, nested elements included (csrc/fmt_nsxml_value.c; its leaves by the
minimax_m3 row of csrc/tp_type_rules.c), from the schema graph this module
writes (`schema_blob`, read by csrc/tp_schema.c).

What the template leaves open is read as SGLang's MinimaxM3Detector reads it
(sglang 0.5.23, srt/function_call/minimax_m3.py): the schema of a child
(`properties`, `additionalProperties`, `items` / `prefixItems` by position),
the leaf conversions (integer, number, boolean words, exact-case null for a
nullable non-string), an untyped value's literals (`true`, `false`, `null`),
a repeated key collected into a list, an untyped element whose children are
all `item` a list, an empty untyped or container value an empty container.
Where SGLang's reading loses or changes what the template wrote, the
template wins (docs/PARSERS.md, "MiniMax-M3"):

- a leaf's text is kept as written (SGLang strips its trailing blanks in
  one-shot parsing, not when streaming);
- a string-typed value is a string, also `null` (the template never writes a
  None; SGLang's one-shot parse makes it null, its stream a string);
- a number that is not finite (`inf`) stays its text (SGLang raises);
- a container-typed value written as JSON text (no tags) is that JSON, or
  its text when it is not JSON (SGLang: an empty container, the text lost);
- an element with children is a container even when text precedes them,
  and a closing tag that matches no open element is ignored (SGLang: the
  whole response becomes text).

Python keeps only the JSON texts the core leaves to json.loads (a repeated
key, past the core's limits): M3Converter.
"""
from __future__ import annotations

import json
import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sglang_toolparse import _core
from sglang_toolparse.glm_types import get_schema_properties
from sglang_toolparse.xml_types import _dumps

NS = "]<]minimax[>["
_STRING = frozenset(("string", "str"))
_INTEGER = frozenset(("integer", "int"))
_NUMBER = frozenset(("number", "float"))
_BOOLEAN = frozenset(("boolean", "bool"))
_SCALAR = _STRING | _INTEGER | _NUMBER | _BOOLEAN | {"null"}
_CONTAINER = frozenset(("object", "array"))

Schemas = Sequence[Tuple[str, Any]]


def schema_types(schema: Any) -> List[str]:
    if not isinstance(schema, dict):
        return []
    t = schema.get("type")
    if isinstance(t, str):
        return [t.lower()]
    if isinstance(t, list):
        return [x.lower() for x in t if isinstance(x, str)]
    return []


def untyped(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    return not schema_types(schema) and "properties" not in schema and "items" not in schema \
        and "prefixItems" not in schema


def streams(schema: Any) -> bool:
    """Is the parameter a string the core streams (a string type, and no
    container type, which SGLang's detector checks first)?"""
    types = set(schema_types(schema))
    return bool(types & _STRING) and not types & _CONTAINER


_JT = (("string", _STRING, 1), ("integer", _INTEGER, 2), ("number", _NUMBER, 4), ("boolean", _BOOLEAN, 8),
       ("null", frozenset(("null",)), 16))  # TP_JT_* bits (csrc/tp_types.h)
_UNTYPED, _SCALAR_F, _CONTAINER_F, _ARRAY_F = 1, 2, 4, 8  # TP_SN_* (csrc/tp_schema.h)
_NONE, _NULL_PROP = -1, -2


class _Graph:
    """Schema dicts as nodes of the core's table (csrc/tp_schema.c), each
    dict once (shared and recursive schemas are a graph)."""

    def __init__(self) -> None:
        self.ids: Dict[int, int] = {}
        self.keep: List[Any] = []  # (the dicts, alive while their ids are keys)
        self.todo: List[Tuple[int, Dict[str, Any]]] = []
        self.nodes: List[bytes] = []

    def node(self, schema: Any) -> int:
        if not isinstance(schema, dict):
            return _NONE
        got = self.ids.get(id(schema))
        if got is None:
            got = self.ids[id(schema)] = len(self.keep)
            self.keep.append(schema)
            self.todo.append((got, schema))
        return got

    def _encode(self, schema: Dict[str, Any]) -> bytes:
        types = frozenset(schema_types(schema))
        flags = (_UNTYPED if untyped(schema) else 0) | (_SCALAR_F if types & _SCALAR and not types & _CONTAINER else 0) \
            | (_CONTAINER_F if types & _CONTAINER else 0) | (_ARRAY_F if "array" in types else 0)
        mask = sum(bit for _, names, bit in _JT if types & names)
        extra = schema.get("additionalProperties")
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        pids = [self.node(x) for x in prefix]
        rest = _NONE
        for key in ("additionalItems", "items"):
            if isinstance(schema.get(key), dict):
                rest = self.node(schema[key])
                break
        else:
            if pids:
                rest = pids[-1]
        out = [struct.pack("<BBiiI", flags, mask, self.node(extra), rest, len(pids))]
        out += [struct.pack("<i", i) for i in pids]
        props = [(k, v) for k, v in get_schema_properties(schema).items() if isinstance(k, str)]
        out.append(struct.pack("<I", len(props)))
        for k, v in props:
            b = k.encode("utf-8", "surrogatepass")
            out.append(struct.pack("<I", len(b)) + b + struct.pack("<i", _NULL_PROP if v is None else self.node(v)))
        return b"".join(out)

    def blob(self, tools: Sequence[Tuple[str, int]]) -> bytes:
        """The table: every node reached, then (tool name, root node)."""
        done: Dict[int, bytes] = {}
        while self.todo:
            k, schema = self.todo.pop()
            done[k] = self._encode(schema)
        out = [struct.pack("<I", len(self.keep))] + [done[k] for k in range(len(self.keep))]
        out.append(struct.pack("<I", len(tools)))
        for name, root in tools:
            b = name.encode("utf-8", "surrogatepass")
            out.append(struct.pack("<I", len(b)) + b + struct.pack("<i", root))
        return b"".join(out)


def schema_blob(tools: Schemas) -> bytes:
    """The core's schema table of a tool list: each tool's parameters
    (the first tool of a name) as a graph of nodes."""
    g = _Graph()
    roots = [(name, g.node(params)) for name, params in first_params(tools).items()]
    return g.blob(roots)


def value(raw: str, schema: Any) -> Any:
    """A parameter's value from its raw text (between NS<KEY> and NS</KEY>),
    typed by `schema` as the core types it."""
    g = _Graph()
    node = g.node(schema)
    text = _core.nsxml_value(g.blob(()), node, raw, NS)
    return json.loads(json_text(raw) if text is None else text)


def json_text(raw: str) -> str:
    """A container-typed value written as JSON text that the core leaves
    to json.loads (a repeated key, past its limits): that JSON, else (not
    JSON, NaN or a number past a double) the text."""
    try:
        try:
            got = json.loads(raw)
        except ValueError:
            got = raw
        return _dumps(got, raw)
    except Exception:  # defensive (RecursionError): a rule must never break the stream
        return json.dumps(raw, ensure_ascii=False)


def first_params(tools: Schemas) -> Dict[str, Any]:
    """tool name -> parameters schema (a dict) of the first tool of a name."""
    out: Dict[str, Any] = {}
    for name, params in tools:
        if name not in out:
            out[name] = params if isinstance(params, dict) else None
    return out


def c_rows(tools: Schemas) -> List[Tuple[str, str, List[Tuple[str, str, int]]]]:
    """(tool, default kind, [(parameter, kind, 0)]) for the core: string
    parameters stream, every other value is held and typed whole."""
    rows = []
    for name, params in first_params(tools).items():
        props = get_schema_properties(params) if isinstance(params, dict) else {}
        rows.append((name, "untyped", [(k, "string" if streams(s) else "host", 0) for k, s in props.items()]))
    return rows


class M3Converter:
    """The host of the few values the core leaves to Python (the
    GlmConverter interface: see _core.StreamParser): JSON texts (json_text)."""

    def __init__(self, tools: Optional[Schemas]):
        pass

    def begin(self, name: str) -> bool:
        return False

    def value(self, key: str, raw: str) -> str:
        return json_text(raw)

    def end(self) -> Optional[str]:
        return None

    def reset(self) -> None:
        pass
