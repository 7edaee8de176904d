"""Schema typing of GLM argument values, without SGLang.

GLM writes every argument value as raw text; its JSON type comes from the
tool's schema. These are SGLang's rules (sglang 0.5.23,
srt/function_call/glm4_moe_detector.py, glm47_moe_detector.py and
utils.py; Apache-2.0), ported so the standalone parser types values exactly
as SGLang's one-shot `detect_and_parse` does, without importing SGLang.

One difference, on purpose: a parameter whose schema type is "string" is
the raw text between the tags, as GLM's chat templates render a string
argument (`v` if it is a string, `tojson` otherwise); SGLang also strips
quotes from it and JSON-decodes it (docs/PARSERS.md).

`compile_tools` turns a tool list into the C core's table (a kind per
parameter, see csrc/tp_types.h): the core types almost every value itself
and hands over only a value that needs Python's rules (literal syntax,
number parsing, enum- or sibling-dependent unions); `GlmConverter` types
those. Values SGLang cannot serialize (a Python set or bytes from its
`ast.literal_eval` fallback) make its whole `detect_and_parse` fail; here
they stay the raw string instead. Arguments are strict JSON
(strict_json.py): a number past a double keeps its digits, and a value
holding NaN or an infinity (which SGLang writes as `NaN`/`Infinity`, not
JSON) stays its raw text.
"""
from __future__ import annotations

import ast
import json
import re
import threading
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sglang_toolparse.strict_json import dumps as strict_dumps
from sglang_toolparse.strict_json import loads as _loads

Schemas = Sequence[Tuple[str, Any]]  # (tool name, parameters schema or None)
ByName = Dict[str, Any]  # tool name -> parameters schema (see by_name45/by_name47)


def by_name45(tools: Schemas) -> ByName:
    """GLM-4.5 looks tools up in a dict: the last of a duplicated name wins."""
    return {name: params for name, params in tools}


def by_name47(tools: Schemas) -> ByName:
    """GLM-4.7 takes the first tool of a duplicated name."""
    out: ByName = {}
    for name, params in tools:
        out.setdefault(name, params)
    return out

# ---------------------------------------------------------------- shared

_ast_lock = threading.Lock()


def safe_literal_eval(value: str) -> Any:
    # SGLang's utils.safe_literal_eval: invalid-escape warnings suppressed
    with _ast_lock, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=SyntaxWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        return ast.literal_eval(value)


def get_schema_properties(schema: Any) -> Dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        return properties
    merged: Dict[str, Any] = {}
    for keyword in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for branch in branches:
                for key, value in get_schema_properties(branch).items():
                    merged.setdefault(key, value)
    return merged


def infer_type_from_json_schema(schema: Any) -> Optional[str]:
    if not isinstance(schema, dict):
        return None
    if "type" in schema:
        type_value = schema["type"]
        if isinstance(type_value, str):
            return type_value
        elif isinstance(type_value, list) and type_value:
            non_null_types = [t for t in type_value if t != "null"]
            if non_null_types:
                return non_null_types[0]
            return "string"
    if "anyOf" in schema or "oneOf" in schema:
        schemas = schema.get("anyOf") or schema.get("oneOf")
        types = []
        if isinstance(schemas, list):
            for sub_schema in schemas:
                inferred_type = infer_type_from_json_schema(sub_schema)
                if inferred_type:
                    types.append(inferred_type)
            if types:
                if len(set(types)) == 1:
                    return types[0]
                if len(set(types)) == 2 and "null" in types:
                    return [t for t in types if t != "null"][0]
                if "string" in types:
                    return "string"
                return types[0]
    if "enum" in schema and isinstance(schema["enum"], list):
        if not schema["enum"]:
            return "string"
        enum_types = set()
        for value in schema["enum"]:
            if value is None:
                enum_types.add("null")
            elif isinstance(value, bool):
                enum_types.add("boolean")
            elif isinstance(value, int):
                enum_types.add("integer")
            elif isinstance(value, float):
                enum_types.add("number")
            elif isinstance(value, str):
                enum_types.add("string")
            elif isinstance(value, list):
                enum_types.add("array")
            elif isinstance(value, dict):
                enum_types.add("object")
        if len(enum_types) == 1:
            return enum_types.pop()
        return "string"
    if "allOf" in schema and isinstance(schema["allOf"], list):
        for sub_schema in schema["allOf"]:
            inferred_type = infer_type_from_json_schema(sub_schema)
            if inferred_type and inferred_type != "string":
                return inferred_type
        return "string"
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def _convert_to_number(value: str) -> Any:
    try:
        if "." in value or "e" in value.lower():
            return float(value)
        else:
            return int(value)
    except (ValueError, AttributeError):
        return value


def _convert_to_integer(value: str) -> Any:
    try:
        return int(value)
    except (ValueError, AttributeError):
        return value


# ------------------------------------------------------- GLM-4.5 / GLM-4.6


def glm45_argument_type(name2params: ByName, func_name: str, arg_key: str) -> Optional[str]:
    if func_name not in name2params:
        return None
    properties = get_schema_properties(name2params[func_name])
    if arg_key not in properties:
        return None
    return infer_type_from_json_schema(properties[arg_key])


def glm45_parse_arguments(json_value: str, arg_type: Optional[str] = None) -> Tuple[Any, bool]:
    try:
        parsed_value = _loads(json_value)
        if arg_type == "number" and isinstance(parsed_value, str):
            parsed_value = _convert_to_number(parsed_value)
        return parsed_value, True
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        wrapped = _loads('{"tmp": "' + json_value + '"}')
        parsed_value = _loads(wrapped["tmp"])
        if arg_type == "number" and isinstance(parsed_value, str):
            parsed_value = _convert_to_number(parsed_value)
        return parsed_value, True
    except (json.JSONDecodeError, ValueError, KeyError):
        pass
    if arg_type == "string":
        if len(json_value) >= 2 and json_value[0] == json_value[-1] and json_value[0] in {'"', "'"}:
            return json_value[1:-1], True
        return json_value, True
    try:
        return safe_literal_eval(json_value), True
    except (ValueError, SyntaxError):
        pass
    try:
        return json.loads(json.dumps(str(json_value))), True
    except (json.JSONDecodeError, ValueError):
        return json_value, False


def glm45_value(tools: ByName, func_name: str, arg_key: str, arg_value: str) -> Any:
    """Glm4MoeDetector._parse_argument_pairs for one pair."""
    arg_type = glm45_argument_type(tools, func_name, arg_key)
    if arg_type == "string":
        return arg_value  # the raw text, as the chat template renders a string
    parsed_value, is_good_json = glm45_parse_arguments(arg_value, arg_type)
    return parsed_value if is_good_json else arg_value


# ------------------------------------------------------- GLM-4.7 / GLM-5

_UNSET = object()


def _json_type(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return "integer"
    return {
        type(None): "null",
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }[float if isinstance(value, float) else type(value)]  # a BigNumber is a number


def _json_equal(left: Any, right: Any) -> bool:
    if _json_type(left) != _json_type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_json_equal(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right))
    return left == right


def _matches_discriminators(schema: Any, root: Any, arguments: Dict[str, Any]) -> bool:
    for name, value in arguments.items():
        types = _argument_types(schema, root, name, value=value)
        if types is not None and _json_type(value) not in types:
            return False
    return True


def _resolve_ref(root: Any, ref: str) -> Any:
    target = root
    for part in ref[2:].split("/") if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        target = target[int(part)] if isinstance(target, list) else target[part]
    return target


def _argument_types(schema, root, key=None, seen=frozenset(), arguments=None, value=_UNSET):
    if not isinstance(schema, dict) or id(schema) in seen:
        return None
    seen = seen | {id(schema)}
    constraints = []
    ref = schema.get("$ref")
    if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
        try:
            target = _resolve_ref(root, ref)
            types = _argument_types(target, root, key, seen, arguments, value)
            if types is not None:
                constraints.append(types)
        except (KeyError, IndexError, TypeError, ValueError):
            pass
    if key is not None:
        field = schema.get("properties", {}).get(key)
        types = _argument_types(field, root, seen=seen, value=value)
        if types is not None:
            constraints.append(types)
    else:
        types = schema.get("type")
        if isinstance(types, str):
            constraints.append({types, "integer"} if types == "number" else {types})
        elif isinstance(types, list):
            constraints.append(set(types) | ({"integer"} if "number" in types else set()))
        values = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(values, list):
            constraints.append(
                {_json_type(allowed) for allowed in values if value is _UNSET or _json_equal(value, allowed)}
            )
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            alternatives = [
                _argument_types(branch, root, key, seen, arguments, value)
                for branch in schema[keyword]
                if key is None or _matches_discriminators(branch, root, arguments or {})
            ]
            if alternatives and all(types is not None for types in alternatives):
                constraints.append(set().union(*alternatives))
    if isinstance(schema.get("allOf"), list):
        for branch in schema["allOf"]:
            types = _argument_types(branch, root, key, seen, arguments, value)
            if types is not None:
                constraints.append(types)
    return set.intersection(*constraints) if constraints else None


def _get_argument_types(tools: ByName, func_name, arg_key, arguments=None, value=_UNSET):
    if func_name not in tools:
        return None
    schema = tools[func_name]
    return _argument_types(schema, schema, arg_key, arguments=arguments, value=value)


def glm47_argument_type(tools: ByName, func_name, arg_key, arguments=None) -> Optional[str]:
    types = _get_argument_types(tools, func_name, arg_key, arguments)
    if types == {"number", "integer"}:
        return "number"
    return next(iter(types)) if types and len(types) == 1 else None


def _key_level_nodes(schema: Any):
    """Schema nodes _argument_types visits with a key (where anyOf/oneOf
    branches are filtered by sibling arguments)."""
    seen = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            try:
                stack.append(_resolve_ref(schema, ref))
            except (KeyError, IndexError, TypeError, ValueError):
                pass
        for keyword in ("anyOf", "oneOf", "allOf"):
            branches = node.get(keyword)
            if isinstance(branches, list):
                stack.extend(branches)


def needs_argument_context(schema: Any) -> bool:
    keys: set = set()
    has_union = False
    for node in _key_level_nodes(schema):
        props = node.get("properties", {})
        keys.update(props)
        for keyword in ("anyOf", "oneOf"):
            if isinstance(node.get(keyword), list):
                has_union = True
    for key in keys if has_union else ():
        types = _argument_types(schema, schema, key)
        if types is None or len(types) > 1 and types != {"number", "integer"}:
            return True
    return False


def _has_key_level_union(schema: Any) -> bool:
    return any(
        isinstance(node.get(k), list) for node in _key_level_nodes(schema) for k in ("anyOf", "oneOf")
    )


def _coerce_numeric_string(value: Any, arg_type: Optional[str]) -> Any:
    if isinstance(value, str):
        if arg_type == "integer":
            return _convert_to_integer(value)
        if arg_type == "number":
            return _convert_to_number(value)
    return value


def glm47_parse_arguments(json_value: str, arg_type: Optional[str] = None) -> Tuple[Any, bool]:
    try:
        return _coerce_numeric_string(_loads(json_value), arg_type), True
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        wrapped = _loads('{"tmp": "' + json_value + '"}')
        return _coerce_numeric_string(_loads(wrapped["tmp"]), arg_type), True
    except (json.JSONDecodeError, ValueError, KeyError):
        pass
    if arg_type == "string":
        if len(json_value) >= 2 and json_value[0] == json_value[-1] and json_value[0] in {'"', "'"}:
            return json_value[1:-1], True
        return json_value, True
    try:
        return safe_literal_eval(json_value), True
    except (ValueError, SyntaxError):
        pass
    try:
        return json.loads(json.dumps(str(json_value))), True
    except (json.JSONDecodeError, ValueError):
        return json_value, False


def glm47_value(tools: ByName, func_name: str, arg_key: str, arg_value: str, known: Dict[str, Any]) -> Any:
    """One iteration of Glm47MoeDetector._parse_argument_pairs."""
    arg_type = glm47_argument_type(tools, func_name, arg_key, known)
    if arg_type == "string":
        return arg_value  # the raw text, as the chat template renders a string
    parsed_value, is_good_json = glm47_parse_arguments(arg_value, arg_type or "string")
    if arg_type is None:
        allowed = _get_argument_types(tools, func_name, arg_key, known, parsed_value)
        native = _get_argument_types(tools, func_name, arg_key, known, arg_value)
        if allowed is not None and _json_type(parsed_value) not in allowed and native is not None and "string" in native:
            parsed_value = arg_value
    return parsed_value if is_good_json else arg_value


def glm47_needs_context(tools: ByName, func_name: str) -> bool:
    # (SGLang asks whether any tool of that name needs it; with duplicated
    # names only the first one's schema is consulted here)
    return func_name in tools and needs_argument_context(tools[func_name])


def glm47_parse_pairs(tools: ByName, func_name: str, pairs: List[Tuple[str, str]]) -> Dict[str, Any]:
    """Glm47MoeDetector._parse_argument_pairs (keys already stripped)."""
    arguments: Dict[str, Any] = {}
    known: Dict[str, Any] = {}
    if len(pairs) > 1 and glm47_needs_context(tools, func_name):
        for key, raw in pairs:
            parsed = glm47_parse_pairs(tools, func_name, [(key, raw)])[key]
            native_types = _get_argument_types(tools, func_name, key, value=raw)
            if isinstance(parsed, str) or native_types is None or "string" not in native_types:
                known[key] = parsed
    for key, raw in pairs:
        arguments[key] = glm47_value(tools, func_name, key, raw, known)
        known[key] = arguments[key]
    return arguments


# ------------------------------------------------------------- converter


_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps(value: Any, raw: str) -> str:
    try:
        text = strict_dumps(value)
    except (TypeError, ValueError, RecursionError):  # a set/bytes/complex from literal_eval, NaN, inf
        text = json.dumps(raw, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates stay escaped, as the core writes them
        text = _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)
    return text


class GlmConverter:
    """Types the values the C core hands over (see _core.StreamParser): one
    per parser, made when first needed. `tools` is the ByName dict of the
    format (by_name45/by_name47), `whole` the tools typed call by call."""

    __slots__ = ("fmt", "tools", "whole", "_name", "_known", "_pairs", "_whole")

    def __init__(self, fmt: str, tools: Any, whole: frozenset = frozenset()):
        self.fmt = fmt
        if not isinstance(tools, dict):  # a list of (name, schema)
            tools = by_name45(tools or []) if fmt == "glm45" else by_name47(tools or [])
            whole = frozenset(n for n in tools if fmt == "glm47" and glm47_needs_context(tools, n))
        self.tools = tools
        self.whole = whole
        self._name = ""
        self._known: Dict[str, Any] = {}
        self._pairs: List[Tuple[str, str]] = []
        self._whole = False

    def begin(self, name: str) -> bool:
        self._name = name
        self._known = {}
        self._pairs = []
        self._whole = name in self.whole
        return self._whole

    def value(self, key: str, raw: str) -> Optional[str]:
        if self._whole:
            self._pairs.append((key, raw))
            return None
        try:
            if self.fmt == "glm45":
                v = glm45_value(self.tools, self._name, key, raw)
            else:
                v = glm47_value(self.tools, self._name, key, raw, self._known)
                self._known[key] = v
        except Exception:  # SGLang's rules raise here (its whole parse fails)
            v = raw
        return _dumps(v, raw)

    def end(self) -> Optional[str]:
        if not self._whole:
            return None
        try:
            args = glm47_parse_pairs(self.tools, self._name, self._pairs)
            try:
                text = strict_dumps(args)
            except ValueError:  # NaN or an infinity: that value is its raw text
                raws = dict(self._pairs)
                text = "{%s}" % ", ".join("%s: %s" % (_dumps(k, k), _dumps(v, raws.get(k, "")))
                                          for k, v in args.items())
        except Exception:
            text = json.dumps(dict(self._pairs), ensure_ascii=False)
        self.reset()
        return text

    def reset(self) -> None:
        self._known = {}
        self._pairs = []
        self._whole = False


# ------------------------------------------------------------- compiling

_JSON_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")
_MASK = {t: 1 << i for i, t in enumerate(_JSON_TYPES)}  # TP_JT_* of csrc/tp_types.h


def _kind_of(type_name: Optional[str]) -> str:
    if type_name is None:
        return "untyped"
    return type_name if type_name in _JSON_TYPES else "other"


def _has_enum(field: Any, root: Any) -> bool:
    """Whether a field's types can depend on its value (enum/const anywhere
    _argument_types looks)."""
    seen = set()
    stack = [field]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if "enum" in node or "const" in node:
            return True
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            try:
                stack.append(_resolve_ref(root, ref))
            except (KeyError, IndexError, TypeError, ValueError):
                pass
        for keyword in ("anyOf", "oneOf", "allOf"):
            branches = node.get(keyword)
            if isinstance(branches, list):
                stack.extend(branches)
    return False


def _glm45_rows(tools: ByName):
    rows = []
    for name, schema in tools.items():
        params = []
        for key, field in get_schema_properties(schema).items():
            params.append((key, _kind_of(infer_type_from_json_schema(field)), 0))
        rows.append((name, "untyped", params))
    return rows, frozenset()


def _glm47_rows(tools: ByName):
    rows, whole = [], set()
    for name, schema in tools.items():
        if needs_argument_context(schema):
            whole.add(name)
            rows.append((name, "host", []))
            continue
        if _has_key_level_union(schema):  # types depend on sibling values
            rows.append((name, "host", []))
            continue
        params = []
        fields: Dict[str, List[Any]] = {}
        for node in _key_level_nodes(schema):
            props = node.get("properties")
            if isinstance(props, dict):
                for key, field in props.items():
                    fields.setdefault(key, []).append(field)
        for key, flds in fields.items():
            types = _argument_types(schema, schema, key)
            if types is None:
                params.append((key, "untyped", 0))
            elif types == {"number", "integer"}:
                params.append((key, "number", 0))
            elif len(types) == 1:
                params.append((key, _kind_of(next(iter(types))), 0))
            elif any(_has_enum(f, schema) for f in flds):
                params.append((key, "host", 0))  # the union depends on the value
            else:
                params.append((key, "union", sum(_MASK.get(t, 0) for t in types)))
        rows.append((name, "untyped", params))
    return rows, frozenset(whole)


def compile_tools(fmt: str, tools: Optional[Schemas]):
    """(rows for _core.CompiledTools, whole-call tool names, ByName dict)."""
    if fmt == "glm45":
        by_name = by_name45(tools or [])
        rows, whole = _glm45_rows(by_name)
    else:
        by_name = by_name47(tools or [])
        rows, whole = _glm47_rows(by_name)
    return rows, whole, by_name
