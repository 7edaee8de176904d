"""Schema typing of the GLM engine's other rows (issue 20), without SGLang.

Each family's rule for turning a parameter's raw text into a JSON value is
restated here from SGLang 0.5.23's detector (srt/function_call/), with the
chat template's own rule where they disagree (a string parameter is the raw
text; a non-finite number is kept as text, so the arguments stay JSON; see
docs/PARSERS.md). The C core applies the same rules from its table rows
(csrc/tp_type_rules.c) and hands over only what needs Python (a literal for
ast.literal_eval, an object with a repeated key, numbers Python reads
beyond plain ASCII). This module is the host for those values, the schema
compiler for the core's kind table, and the reference the differential
tests compare the core with.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sglang_toolparse.glm_types import _dumps, get_schema_properties, safe_literal_eval
from sglang_toolparse.strict_json import dumps as strict_dumps
from sglang_toolparse.strict_json import loads as _loads

Schemas = Sequence[Tuple[str, Any]]  # (tool name, parameters schema or None)
Row = Tuple[str, str, List[Tuple[str, str, int]]]  # (name, default kind, [(key, kind, mask)])


def _finite(v: Any) -> bool:
    """strict_json.dumps would write it (a number past a double keeps its
    digits; NaN or an infinity has no JSON form)."""
    try:
        strict_dumps(v)
        return True
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------- poolside_v1

# PoolsideV1Detector._convert_param_value: the schema's "type" as a lowercase
# string; string-like types are the raw text; no type: json.loads; any other
# type: json.loads, then ast.literal_eval; what fails is the raw text.
POOLSIDE_STRING = frozenset({"string", "str", "text", "enum"})


def poolside_type(spec: Any) -> str:
    return str(spec.get("type", "")).lower() if isinstance(spec, dict) else ""


def poolside_kind(spec: Any) -> str:
    t = poolside_type(spec)
    return "string" if t in POOLSIDE_STRING else ("other" if t else "untyped")


def poolside_value(spec: Any, raw: str) -> Any:
    t = poolside_type(spec)
    if t in POOLSIDE_STRING:
        return raw
    try:
        v = _loads(raw)
        return v if _finite(v) else raw  # NaN/Infinity: the text (SGLang writes them into the JSON)
    except ValueError:
        pass
    if t:
        try:
            v = safe_literal_eval(raw)
            if _finite(v):
                return v
        except Exception:  # SyntaxError, ValueError, MemoryError, RecursionError ...
            pass
    return raw


# ------------------------------------------------------------- spark25

# Spark25Detector's _get_param_type / _convert_value: the schema's "type" if
# it is a string (lowercased), else "string"; "null" (any case) is null
# before anything; a failed conversion tries json.loads, then the raw text.
SPARK_STRING, SPARK_INT, SPARK_NUM, SPARK_BOOL = ({"string", "str", "text"}, {"integer", "int"},
                                                  {"number", "float"}, {"boolean", "bool"})


def spark_type(spec: Any) -> str:
    t = spec.get("type") if isinstance(spec, dict) else None
    return t.lower() if isinstance(t, str) else "string"


def spark_kind(spec: Any) -> str:
    t = spark_type(spec)
    if t in SPARK_STRING:
        return "string"
    return "integer" if t in SPARK_INT else "number" if t in SPARK_NUM else "boolean" if t in SPARK_BOOL else "other"


def _spark_convert(t: str, raw: str) -> Any:
    if t in SPARK_INT:
        return int(raw)
    if t in SPARK_NUM:
        f = float(raw)
        return int(f) if f.is_integer() else f
    if t in SPARK_BOOL:
        w = raw.strip().lower()
        if w not in ("true", "1", "false", "0"):
            raise ValueError(raw)
        return w in ("true", "1")
    return _loads(raw)


def spark_value(spec: Any, raw: str) -> Any:
    t = spark_type(spec)
    if spec is not None and t in SPARK_STRING:  # a declared string: the text as written
        return raw
    if raw.lower() == "null":
        return None
    if t in SPARK_STRING:
        return raw
    for convert in (lambda: _spark_convert(t, raw), lambda: _loads(raw)):
        try:
            v = convert()
        except (TypeError, ValueError, OverflowError):
            continue
        if _finite(v):  # float() past a double or NaN/Infinity: failed, try JSON (1e400 keeps its digits)
            return v
    return raw


# ------------------------------------------------------------- hunyuan

# HunyuanDetector._get_types / _parse_value. A "type" that is a list (SGLang
# raises there) reads as the union of its entries.
_HY_ALIASES = {"str": "string", "text": "string", "varchar": "string", "char": "string", "enum": "string",
               "bool": "boolean", "binary": "boolean", "int": "integer", "float": "number", "double": "number",
               "list": "array", "dict": "object", "map": "object"}
_HY_PRIMITIVE = {"string", "boolean", "integer", "number"}
_MASK = {"string": 1, "integer": 2, "number": 4, "boolean": 8, "null": 16, "object": 32, "array": 64}  # TP_JT_*


def _hy_normalize(t: Any) -> str:
    if not isinstance(t, str):
        return "string" if t is None else str(t)
    exact = _HY_ALIASES.get(t)
    if exact is not None:
        return exact
    low = t.lower()
    if low.startswith(("int", "uint", "long", "short", "unsigned")):
        return "integer"
    if low.startswith(("num", "float")):
        return "number"
    return t


def hunyuan_types(spec: Any) -> frozenset:
    spec = spec if isinstance(spec, dict) else {}
    if "type" in spec:
        options = [spec]
    elif isinstance(spec.get("anyOf"), list):
        options = spec["anyOf"]
    elif isinstance(spec.get("oneOf"), list):
        options = spec["oneOf"]
    else:
        options = [{"type": "string"}]
    types = set()
    for o in options:
        t = o.get("type", "string") if isinstance(o, dict) else "string"
        for one in (t if isinstance(t, list) else [t]):
            types.add(_hy_normalize(one))
    return frozenset(types - {"null"})


def hunyuan_kind(spec: Any) -> Tuple[str, int]:
    types = hunyuan_types(spec)
    if types == {"string"}:
        return "string", 0
    mask = sum(_MASK[t] for t in types & _HY_PRIMITIVE)
    if "number" in types:
        mask |= _MASK["integer"]  # int() first: exact for any integral text
    if types - _HY_PRIMITIVE:
        mask |= _MASK["object"]  # a type outside the primitives: json.loads
    return "union", mask


def hunyuan_value(spec: Any, raw: str) -> Any:
    types = hunyuan_types(spec)
    if "boolean" in types and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    if "integer" in types:
        try:
            return int(raw)
        except ValueError:
            pass
    if "number" in types:
        try:
            v = float(raw) if ("." in raw or "e" in raw or "E" in raw) else int(raw)
            if _finite(v):
                return v
        except ValueError:
            pass
    if types - _HY_PRIMITIVE:
        try:
            v = _loads(raw)
            return v if _finite(v) else raw
        except ValueError:
            pass
    if "string" in types:
        return raw
    try:
        v = _loads(raw)
        return v if _finite(v) else raw
    except ValueError:
        return raw


# ------------------------------------------------------------- k2_horizon

# K2V3Detector._argument_type / _coerce_value (XML dialects). A parameter's
# schema, after the template's inlining of a local "#/$defs/..." or
# "#/definitions/..." reference (fields at the reference site win), is typed
# by infer_type_from_json_schema; anyOf/oneOf and a "type" list of several
# non-null types leave the type to the model's <ifm|arg_type> (the core reads
# it: "string"/"any" keep the text). "string"/"any": the raw text; anything
# else (or no type): json.loads of the stripped text, else the raw text.


def k2_resolve(spec: Any, root: Any) -> Any:
    if not isinstance(spec, dict):
        return None
    resolved = dict(spec)
    seen = set()
    while isinstance(resolved.get("$ref"), str):
        ref = resolved["$ref"]
        if ref in seen:
            return None
        seen.add(ref)
        if ref.startswith("#/$defs/"):
            defs, name = (root.get("$defs", {}) if isinstance(root, dict) else {}), ref[len("#/$defs/"):]
        elif ref.startswith("#/definitions/"):
            defs, name = (root.get("definitions", {}) if isinstance(root, dict) else {}), ref[len("#/definitions/"):]
        else:
            return resolved
        target = defs.get(name) if isinstance(defs, dict) else None
        if not isinstance(target, dict):
            return resolved
        resolved = {**target, **{k: v for k, v in resolved.items() if k != "$ref"}}
    return resolved


def k2_kind(spec: Any) -> str:
    from sglang_toolparse.glm_types import infer_type_from_json_schema

    if not isinstance(spec, dict):
        return "untyped"
    t = spec.get("type")
    if "anyOf" in spec or "oneOf" in spec or (isinstance(t, list) and len([x for x in t if x != "null"]) > 1):
        return "union"  # the model's <ifm|arg_type> decides
    inferred = infer_type_from_json_schema(spec)
    if inferred is None:
        return "untyped"
    return "string" if inferred in ("string", "any") else "other"


def k2_value(spec: Any, raw: str, wire_type: Optional[str] = None) -> Any:
    kind = k2_kind(spec)
    target = wire_type.strip() if kind in ("untyped", "union") and wire_type is not None else kind
    if target in ("string", "any"):
        return raw
    try:
        v = _loads(raw.strip())
        return v if _finite(v) else raw
    except ValueError:
        return raw


def k2_tool_params(schemas: Optional[Schemas]) -> Dict[str, Dict[str, Any]]:
    """tool_params with each property's local reference inlined."""
    out: Dict[str, Dict[str, Any]] = {}
    for name, schema in schemas or ():
        if name not in out:
            props = get_schema_properties(schema) if isinstance(schema, dict) else {}
            out[name] = {k: k2_resolve(v, schema) for k, v in props.items()}
    return out


# ------------------------------------------------------------- the families

# fmt -> (kind of a parameter's schema, value of a raw text under that schema)
FAMILIES = {
    "poolside_v1": (poolside_kind, poolside_value),
    "spark25": (spark_kind, spark_value),
    "hunyuan": (hunyuan_kind, hunyuan_value),
    "hunyuan_os": (hunyuan_kind, hunyuan_value),  # the same rules, tags with a ":opensource" suffix
    "k2_horizon": (k2_kind, k2_value),
}
# a family whose properties are read otherwise than tool_params reads them
PROPS = {"k2_horizon": k2_tool_params}


def tool_params(schemas: Optional[Schemas], fmt: Optional[str] = None) -> Dict[str, Dict[str, Any]]:
    """name -> {key: property schema}: the first tool of a name (the
    detectors look the name up in order), properties as SGLang's
    get_schema_properties finds them (or as the family `fmt` reads them)."""
    if fmt in PROPS:
        return PROPS[fmt](schemas)
    out: Dict[str, Dict[str, Any]] = {}
    for name, schema in schemas or ():
        if name not in out:
            out[name] = get_schema_properties(schema) if isinstance(schema, dict) else {}
    return out


def compile_rows(fmt: str, schemas: Optional[Schemas]) -> List[Row]:
    """Rows for _core.CompiledTools: a kind per declared parameter."""
    kind_of = FAMILIES[fmt][0]
    rows = []
    for name, props in tool_params(schemas, fmt).items():
        params = []
        for k, spec in props.items():
            kind = kind_of(spec)
            params.append((k,) + (kind if isinstance(kind, tuple) else (kind, 0)))
        rows.append((name, "untyped", params))
    return rows


def value(fmt: str, spec: Any, raw: str) -> Any:
    """The reference: what `raw` of a parameter with schema `spec` (None:
    undeclared) becomes."""
    return FAMILIES[fmt][1](spec, raw)


class RowConverter:
    """Types the values the C core hands over (the GlmConverter interface:
    see _core.StreamParser)."""

    __slots__ = ("fmt", "tools", "_params")

    def __init__(self, fmt: str, tools: Dict[str, Dict[str, Any]]):
        self.fmt = fmt
        self.tools = tools  # shared: read only
        self._params: Dict[str, Any] = {}

    def begin(self, name: str) -> bool:
        self._params = self.tools.get(name, {})
        return False  # no value depends on another: nothing held per call

    def value(self, key: str, raw: str) -> str:
        try:
            return _dumps(value(self.fmt, self._params.get(key), raw), raw)
        except Exception:  # defensive: a rule must never break the stream
            return json.dumps(raw, ensure_ascii=False)

    def end(self) -> Optional[str]:
        return None

    def reset(self) -> None:
        self._params = {}


__all__ = ["FAMILIES", "RowConverter", "compile_rows", "tool_params", "value"]
