"""MiniMax-M3 parameter values: the nested-value builder, without SGLang.

MiniMax-M3's chat template (macro `to_xml`) writes an argument as one element
per key, each tag after the namespace token `]<]minimax[>[` (NS): a mapping as
its keys' elements, a sequence as one `item` element per entry, a boolean with
`tojson`, any other scalar as its text (`{{ val }}`: strings raw, numbers as
Python writes them), a None not at all. The C core (csrc/fmt_nsxml.c)
streams a parameter declared as a string itself and hands every other value
over whole (its raw text, inner tags included); `M3Converter.value` turns it
into JSON text with the tool's schema.

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
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sglang_toolparse.glm_types import get_schema_properties
from sglang_toolparse.xml_types import _dumps

NS = "]<]minimax[>["
_BLANKS = " \t\r\n"
_STRING = frozenset(("string", "str"))
_INTEGER = frozenset(("integer", "int"))
_NUMBER = frozenset(("number", "float"))
_BOOLEAN = frozenset(("boolean", "bool"))
_SCALAR = _STRING | _INTEGER | _NUMBER | _BOOLEAN | {"null"}
_CONTAINER = frozenset(("object", "array"))
_NULL_WORDS = ("null", "Null", "NULL")
_LITERALS = {"true": True, "false": False, "null": None}
_TAG_MAX = 1024  # an inner tag's text (the core gives up on longer ones too)

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
    return not schema_types(schema) and not any(k in schema for k in ("properties", "items", "prefixItems"))


def streams(schema: Any) -> bool:
    """Is the parameter a string the core streams (a string type, and no
    container type, which SGLang's detector checks first)?"""
    types = set(schema_types(schema))
    return bool(types & _STRING) and not types & _CONTAINER


# what leaf/_container/_value ask of a schema, per schema object (the
# request's compiled tools keep theirs, so a value is typed without reading
# a schema's types again); a schema changed in place after its first use is
# not read again, as with the compiled tools themselves
_Facts = Tuple[frozenset, bool, bool]  # (types, untyped, scalar)
_facts_of: Dict[int, Tuple[Any, _Facts]] = {}


def _facts(schema: Any) -> _Facts:
    hit = _facts_of.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    types = frozenset(schema_types(schema))
    facts = (types, untyped(schema), bool(types & _SCALAR) and not types & _CONTAINER)
    if len(_facts_of) >= 4096:
        _facts_of.clear()
    _facts_of[id(schema)] = (schema, facts)  # (the entry holds the schema: its id stays its own)
    return facts


def _item_schema(schema: Dict[str, Any], index: int) -> Optional[Dict[str, Any]]:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index] if isinstance(prefix[index], dict) else None
    for key in ("additionalItems", "items"):
        if isinstance(schema.get(key), dict):
            return schema[key]
    if isinstance(prefix, list) and prefix:
        return prefix[-1] if isinstance(prefix[-1], dict) else None
    return None


def child_schema(schema: Any, tag: str, index: int) -> Optional[Dict[str, Any]]:
    if not isinstance(schema, dict):
        return None
    if tag == "item" and "array" in _facts(schema)[0]:
        return _item_schema(schema, index)
    props = get_schema_properties(schema)
    if tag in props:
        return props[tag] if isinstance(props[tag], dict) else None
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def leaf(text: str, schema: Any) -> Any:
    """A leaf's text, typed by its schema."""
    types, untyped_, _ = _facts(schema)
    if untyped_:
        return _LITERALS.get(text.strip(), text)
    if types & _STRING:
        return text
    if "null" in types and (text in _NULL_WORDS or text == ""):
        return None
    if types & _INTEGER:
        try:
            return int(text)
        except ValueError:
            pass
    if types & _NUMBER:
        try:
            f = float(text)
        except ValueError:
            f = math.nan
        if math.isfinite(f):
            return int(f) if f == int(f) else f
    if types & _BOOLEAN:
        word = text.strip().lower()
        if word in ("true", "1", "yes", "on"):
            return True
        if word in ("false", "0", "no", "off"):
            return False
    return text


class _El:
    __slots__ = ("tag", "text", "children")

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.text: List[str] = []
        self.children: List["_El"] = []


# an NS that begins a tag: blanks, `<`, the tag's text (no `]`, `<` or `>`,
# shorter than _TAG_MAX), `>`; any other NS is text. NS cannot begin inside
# another NS, so a search from each position finds what a scan from the
# end of the last tag or unread NS finds.
_TAG = re.compile(re.escape(NS) + "[ \t\r\n]*<([^\\]<>]{0,%d})>" % (_TAG_MAX - 1))


def parse_tree(raw: str) -> _El:
    root = _El("")
    stack = [root]
    pos = 0
    for m in _TAG.finditer(raw):
        i = m.start()
        if i > pos:
            stack[-1].text.append(raw[pos:i])
        pos = m.end()
        tag = m.group(1)
        if tag[:1] == "/":
            name = tag[1:].strip()
            for d in range(len(stack) - 1, 0, -1):
                if stack[d].tag == name:
                    del stack[d:]
                    break
            continue  # a closing tag that matches nothing is ignored
        el = _El(tag.strip())
        stack[-1].children.append(el)
        stack.append(el)
    if pos < len(raw):
        stack[-1].text.append(raw[pos:])
    return root


def _container(el: _El, schema: Any) -> Any:
    children = el.children
    types, untyped_, _ = _facts(schema)
    if "array" in types or (untyped_ and all(c.tag == "item" for c in children)):
        return [_value(c, child_schema(schema, c.tag, i)) for i, c in enumerate(children)]
    out: Dict[str, Any] = {}
    for c in children:
        v = _value(c, child_schema(schema, c.tag, 0))
        if c.tag in out:
            prev = out[c.tag]
            if isinstance(prev, list):
                prev.append(v)
            else:
                out[c.tag] = [prev, v]
        else:
            out[c.tag] = v
    return out


def _empty(schema: Any) -> Any:
    return [] if "array" in _facts(schema)[0] else {}


def _value(el: _El, schema: Any) -> Any:
    if el.children:
        return _container(el, schema)
    text = "".join(el.text)
    if not text.strip(_BLANKS) and not _facts(schema)[2]:
        return _empty(schema)
    return leaf(text, schema)


def value(raw: str, schema: Any) -> Any:
    """A parameter's value from its raw text (between NS<KEY> and NS</KEY>)."""
    if NS in raw:  # (without one, no tag: the tree is its text)
        root = parse_tree(raw)
        if root.children:
            return _container(root, schema)
    if not raw.strip(_BLANKS):
        return leaf(raw, schema) if _facts(schema)[2] else _empty(schema)
    if _facts(schema)[0] & _CONTAINER:
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return leaf(raw, schema)


def first_params(tools: Schemas) -> Dict[str, Any]:
    """tool name -> parameters schema (a dict) of the first tool of a name."""
    out: Dict[str, Any] = {}
    for name, params in tools:
        if name not in out:
            out[name] = params if isinstance(params, dict) else None
    return out


def c_rows(tools: Schemas) -> List[Tuple[str, str, List[Tuple[str, str, int]]]]:
    """(tool, default kind, [(parameter, kind, 0)]) for the core: string
    parameters stream, every other value goes to the host."""
    rows = []
    for name, params in first_params(tools).items():
        props = get_schema_properties(params) if isinstance(params, dict) else {}
        rows.append((name, "untyped", [(k, "string" if streams(s) else "host", 0) for k, s in props.items()]))
    return rows


class M3Converter:
    """Types the values the C core hands over (the GlmConverter interface:
    see _core.StreamParser)."""

    def __init__(self, tools: Optional[Schemas]):
        self.tools = first_params(tools or [])
        self._schema: Any = None

    def begin(self, name: str) -> bool:
        self._schema = self.tools.get(name)
        return False

    def value(self, key: str, raw: str) -> str:
        schema = get_schema_properties(self._schema).get(key) if isinstance(self._schema, dict) else None
        if schema is None and isinstance(self._schema, dict):
            extra = self._schema.get("additionalProperties")
            schema = extra if isinstance(extra, dict) else None
        try:
            return _dumps(value(raw, schema), raw)
        except Exception:  # defensive: a rule must never break the stream
            return json.dumps(raw, ensure_ascii=False)

    def end(self) -> Optional[str]:
        return None

    def reset(self) -> None:
        self._schema = None
