"""Schema typing of Qwen3-Coder and MiniMax-M2 parameter values, without SGLang.

Both families write every parameter value as text whose JSON type comes from
the tool's schema. These are SGLang's rules (sglang 0.5.23,
srt/function_call/qwen3_coder_detector.py, minimax_m2.py, utils.py;
Apache-2.0), written as tables so they port to rows of a C table, with the
differences the chat templates call for (docs/PARSERS.md, "Qwen3-Coder /
MiniMax-M2"):

- A value SGLang would type as NaN or Infinity (not JSON) stays its text; a
  number past a double keeps the digits it was written with (strict_json.py).
- qwen3_coder: the template writes a None argument with Jinja's `string`,
  i.e. `None`; a non-string parameter whose value is exactly `None` is null
  (SGLang: the string "None").
- minimax_m2: the template writes None as `null` (tojson) and strings raw,
  so a schema that allows null makes only the text `null` null (SGLang:
  every value of such a parameter is null, e.g. an Optional[str] is always
  null), and a string parameter's `None` / `nil` stay strings.

The C core streams a value of a string parameter itself (held only while it
may still be the word `null`) and types every other value with these rules
written as rows of csrc/tp_type_rules.c (`c_rows` gives each parameter's C
kind; tests/test_xml_typing_c.py checks the rows against this module). The
few values whose typing needs Python (ast.literal_eval, int()/float() of text
beyond plain ASCII numbers) are handed over raw and `XmlConverter`, the host,
turns them into JSON text.
"""
from __future__ import annotations

import json
import math
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# shared with GLM: SGLang's utils.get_schema_properties / safe_literal_eval
from sglang_toolparse.glm_types import get_schema_properties, safe_literal_eval
from sglang_toolparse.strict_json import BigNumber
from sglang_toolparse.strict_json import dumps as strict_dumps
from sglang_toolparse.strict_json import loads as strict_loads

Schemas = Sequence[Tuple[str, Any]]  # (tool name, parameters schema or None)

# ------------------------------------------------------------ the tables

# Qwen3-Coder: the schema gives one type name (SGLang's
# infer_type_from_json_schema, lower-cased; none: "string"); the first row
# whose test matches it gives the conversion. No row: "literal".
QWEN_TYPE_RULES: Tuple[Tuple[str, Tuple[str, ...], str], ...] = (
    # (test, type names, conversion)
    ("equals", ("string", "str", "text", "varchar", "char", "enum"), "string"),
    ("prefix", ("int", "uint", "long", "short", "unsigned"), "integer"),
    ("prefix", ("num", "float"), "number"),
    ("equals", ("boolean", "bool", "binary"), "boolean"),
    ("equals", ("object", "array", "arr"), "json"),
    ("prefix", ("dict", "list"), "json"),
)
QWEN_FALLBACK = "literal"
# Conversions tried after a failed one (SGLang: a mapping that is not JSON
# is tried with ast.literal_eval).
QWEN_THEN: Dict[str, str] = {"json": "literal"}

# MiniMax-M2: the schema gives a set of type names (SGLang's
# _extract_types_from_schema: `type`, `enum` values, anyOf/oneOf/allOf);
# they are tried in this order, the first conversion that succeeds wins;
# if none does, FALLBACK.
MINIMAX_PRIORITY: Tuple[Tuple[str, str], ...] = (
    # (type name, conversion)
    ("integer", "integer"), ("int", "integer"),
    ("number", "number"), ("float", "number"),
    ("boolean", "boolean"), ("bool", "boolean"),
    ("object", "json"), ("array", "json"),
    ("string", "string"), ("str", "string"), ("text", "string"),
)
MINIMAX_FALLBACK = "json_or_string"
MINIMAX_STRING_TYPES = frozenset(("string", "str", "text"))

# dots (DotsToolDetector._convert_param_value): one type name (the first
# non-null of a `type` list; without `type`, through $ref / anyOf / oneOf /
# allOf, null branches skipped; none: "string"), lower-cased; a name in no
# row is "json" (json.loads, else the text). The value is stripped first.
DOTS_TYPE_RULES: Tuple[Tuple[Tuple[str, ...], str], ...] = (
    (("string", "str", "text"), "string"),
    (("integer", "int"), "integer"),
    (("number", "float"), "number"),
    (("boolean", "bool"), "boolean"),
)

# Words read as null, compared case-insensitively (a value equal to one of
# them is null before any conversion), per family and kind of parameter.
NULL_WORDS: Dict[Tuple[str, str], Tuple[str, ...]] = {
    ("qwen3_coder", "string"): ("null",),
    ("qwen3_coder", "other"): ("null",),
    ("minimax_m2", "string"): ("null",),
    ("minimax_m2", "other"): ("null", "none", "nil"),
    ("dots", "string"): ("null",),
    ("dots", "other"): ("null",),
    ("minicpm5", "string"): (),
    ("minicpm5", "other"): (),
    ("step3", "string"): (),
    ("step3", "other"): (),
}
# Exact spellings read as null, from the templates (case-sensitive).
TEMPLATE_NULL: Dict[Tuple[str, str], Tuple[str, ...]] = {
    ("qwen3_coder", "other"): ("None",),  # Jinja `string` of None
}
BOOLEAN_WORDS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...], bool]] = {
    # family: (true words, false words, strip first), lower-cased;
    # qwen3_coder reads anything not true as false
    "qwen3_coder": (("true",), (), False),
    "minimax_m2": (("true", "1", "yes", "on"), ("false", "0", "no", "off"), True),
    "dots": (("true", "1"), (), False),
}
ENUM_VALUE_TYPES: Tuple[Tuple[type, str], ...] = (
    # JSON type of an enum value (bool before int: a bool is an int)
    (type(None), "null"), (bool, "boolean"), (int, "integer"), (float, "number"),
    (str, "string"), (list, "array"), (dict, "object"),
)

# ------------------------------------------------------------ conversions


class _Fail(Exception):
    """A conversion does not apply: try the next one."""


def _literal(raw: str) -> Any:
    try:
        return safe_literal_eval(raw)
    except Exception as e:  # ValueError, SyntaxError, MemoryError, RecursionError...
        raise _Fail from e


def _integer(raw: str) -> Any:
    try:
        return int(raw)
    except (ValueError, TypeError) as e:
        raise _Fail from e


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def _finite(f: float, raw: str) -> float:
    if math.isinf(f) or math.isnan(f):
        if math.isinf(f) and _JSON_NUMBER.match(raw):
            return BigNumber(raw)  # past a double: the digits as written
        raise _Fail  # not JSON
    return f


def _qwen_number(raw: str) -> Any:
    try:
        f = _finite(float(raw), raw)
    except (ValueError, TypeError) as e:
        raise _Fail from e
    if type(f) is BigNumber:
        return f
    # written without "." or "e" and integral: an integer
    if not ("." in raw or "e" in raw.lower()) and f.is_integer():
        return int(f)
    return f


def _minimax_number(raw: str) -> Any:
    try:
        f = _finite(float(raw), raw)
    except (ValueError, TypeError) as e:
        raise _Fail from e
    if type(f) is BigNumber:
        return f
    return int(f) if f.is_integer() else f


def _boolean(family: str) -> Callable[[str], Any]:
    true_words, false_words, strip = BOOLEAN_WORDS[family]

    def convert(raw: str) -> Any:
        v = raw.lower().strip() if strip else raw.lower()
        if v in true_words:
            return True
        if v in false_words or not false_words:
            return False
        raise _Fail

    return convert


def _json(raw: str) -> Any:
    try:
        return strict_loads(raw)
    except (ValueError, RecursionError) as e:
        raise _Fail from e


CONVERSIONS: Dict[str, Dict[str, Callable[[str], Any]]] = {
    "qwen3_coder": {
        "string": lambda raw: raw,
        "integer": _integer,
        "number": _qwen_number,
        "boolean": _boolean("qwen3_coder"),
        "json": _json,
        "literal": _literal,
    },
    "minimax_m2": {
        "string": lambda raw: raw,
        "integer": _integer,
        "number": _minimax_number,
        "boolean": _boolean("minimax_m2"),
        "json": _json,
    },
    "minicpm5": {
        "string": lambda raw: raw,
        "json": _json,
        "literal": _literal,
    },
    "step3": {
        "string": lambda raw: raw,
        "json": _json,
        "literal": _literal,
    },
    "dots": {
        "string": lambda raw: raw,
        "integer": _integer,
        "number": _minimax_number,
        "boolean": _boolean("dots"),
        "json": _json,
    },
}

# ------------------------------------------------------------ schemas


def _enum_types(values: list) -> List[str]:
    out = []
    for v in values:
        for py, name in ENUM_VALUE_TYPES:
            if isinstance(v, py):
                out.append(name)
                break
    return out


def infer_type(schema: Any) -> Optional[str]:
    """SGLang's utils.infer_type_from_json_schema (Qwen3-Coder)."""
    if not isinstance(schema, dict):
        return None
    if "type" in schema:
        t = schema["type"]
        if isinstance(t, str):
            return t
        if isinstance(t, list) and t:
            non_null = [x for x in t if x != "null"]
            return non_null[0] if non_null else "string"
    if "anyOf" in schema or "oneOf" in schema:
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            types = [x for x in (infer_type(b) for b in branches) if x]
            if types:
                if len(set(types)) == 1:
                    return types[0]
                if len(set(types)) == 2 and "null" in types:
                    return [x for x in types if x != "null"][0]
                return "string" if "string" in types else types[0]
    if "enum" in schema and isinstance(schema["enum"], list):
        kinds = set(_enum_types(schema["enum"]))
        return kinds.pop() if len(kinds) == 1 else "string"
    if "allOf" in schema and isinstance(schema["allOf"], list):
        for branch in schema["allOf"]:
            t = infer_type(branch)
            if t and t != "string":
                return t
        return "string"
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def extract_types(schema: Any) -> List[str]:
    """SGLang's MinimaxM2Detector._extract_types_from_schema."""
    if not isinstance(schema, dict):
        return ["string"]
    types = set()
    t = schema.get("type")
    if isinstance(t, str):
        types.add(t)
    elif isinstance(t, list):
        types.update(x for x in t if isinstance(x, str))
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        types.update(_enum_types(schema["enum"]))
    for keyword in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(keyword), list):
            for branch in schema[keyword]:
                types.update(extract_types(branch))
    return sorted(types) if types else ["string"]


def _qwen_conversion(type_name: str) -> str:
    for test, names, conversion in QWEN_TYPE_RULES:
        if test == "equals" and type_name in names:
            return conversion
        if test == "prefix" and type_name.startswith(names):
            return conversion
    return QWEN_FALLBACK


class _Param:
    """How one parameter's values are typed, compiled from the tables: the
    words read as null and the conversions to try, in order."""

    __slots__ = ("kind", "nulls", "exact_nulls", "chain", "fallback", "ckind", "cmask")

    def __init__(self, family: str, kind: str, chain: Tuple[str, ...], fallback: str):
        self.kind = kind  # "string" (streams in the core) or "other"
        # the C core's kind (_core.KINDS) and union mask: its row of
        # csrc/tp_type_rules.c reproduces these rules
        self.ckind, self.cmask = C_KINDS[family](kind, chain)
        self.nulls = frozenset(NULL_WORDS[(family, kind)])
        self.exact_nulls = frozenset(TEMPLATE_NULL.get((family, kind), ()))
        table = CONVERSIONS[family]
        self.chain = tuple(table[name] for name in chain)
        self.fallback = _json_or_text if fallback == "json_or_string" else _text


# conversion -> the C kind of a Qwen3-Coder parameter (tp_rules_qwen3_coder)
QWEN_C_KINDS = {"string": "string", "integer": "integer", "number": "number",
                "boolean": "boolean", "json": "object", "literal": "other"}
# conversion -> the TP_JT_* bit of a MiniMax-M2 union's mask (tp_types.h):
# every non-string parameter is a union of the types it tries
MINIMAX_C_BITS = {"string": 1, "integer": 2, "number": 4, "boolean": 8, "json": 32}


def _qwen_c_kind(kind: str, chain: Tuple[str, ...]) -> Tuple[str, int]:
    return QWEN_C_KINDS[chain[0]], 0


def _minimax_c_kind(kind: str, chain: Tuple[str, ...]) -> Tuple[str, int]:
    if kind == "string":
        return "string", 0
    mask = 0
    for conversion in chain:
        mask |= MINIMAX_C_BITS[conversion]
    return "union", mask


DOTS_C_KINDS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
                "json": "object"}


def _dots_c_kind(kind: str, chain: Tuple[str, ...]) -> Tuple[str, int]:
    return DOTS_C_KINDS[chain[0]], 0


def _minicpm5_c_kind(kind: str, chain: Tuple[str, ...]) -> Tuple[str, int]:
    return ("string" if kind == "string" else "other"), 0


C_KINDS = {"qwen3_coder": _qwen_c_kind, "minimax_m2": _minimax_c_kind, "dots": _dots_c_kind,
           "minicpm5": _minicpm5_c_kind, "step3": _minicpm5_c_kind}


def c_rows(fmt: str, tools: Schemas) -> List[Tuple[str, str, List[Tuple[str, str, int]]]]:
    """(tool name, default kind, [(parameter, kind, mask)]) for
    _core.CompiledTools: an undeclared key is untyped (a string in these
    families' rows)."""
    return [(name, "untyped", [(k, p.ckind, p.cmask) for k, p in params.items() if isinstance(k, str)])
            for name, params in compile_tools(fmt, tools).items() if isinstance(name, str)]


def _text(raw: str) -> Any:
    return raw


def _json_or_text(raw: str) -> Any:
    try:
        return _json(raw)
    except _Fail:
        return raw


def qwen_param(schema: Any) -> _Param:
    t = infer_type(schema)
    conversion = _qwen_conversion("string" if t is None else str(t).strip().lower())
    if conversion == "string":
        return _Param("qwen3_coder", "string", ("string",), "string")
    chain = (conversion,) + ((QWEN_THEN[conversion],) if conversion in QWEN_THEN else ())
    return _Param("qwen3_coder", "other", chain, "string")


def minimax_param(schema: Any) -> _Param:
    types = {t.lower() for t in extract_types(schema)} - {"null"}
    if not types or types <= MINIMAX_STRING_TYPES:
        return _Param("minimax_m2", "string", ("string",), "string")
    chain = tuple(conv for name, conv in MINIMAX_PRIORITY if name in types)
    return _Param("minimax_m2", "other", chain, MINIMAX_FALLBACK)


def dots_type(schema: Any, depth: int = 0) -> Any:
    """DotsToolDetector._resolve_param_type (local $refs already resolved
    by _properties)."""
    if not isinstance(schema, dict) or depth > 10:
        return None
    if "type" in schema:
        return schema["type"]
    for keyword in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(keyword)
        if not isinstance(branches, list):
            continue
        for branch in branches:
            if isinstance(branch, dict) and branch.get("type") == "null":
                continue
            t = dots_type(branch, depth + 1)
            if t is not None:
                return t
    return None


def dots_param(schema: Any) -> _Param:
    t = dots_type(schema)
    if t is None:
        t = "string"
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    name = (t if isinstance(t, str) else str(t)).lower()
    conversion = next((conv for names, conv in DOTS_TYPE_RULES if name in names), "json")
    return _Param("dots", "string" if conversion == "string" else "other", (conversion,), "string")


def minicpm5_param(schema: Any) -> _Param:
    """MiniCPM5Detector: raw text only when the schema's `type` is exactly
    "string"; anything else json.loads, then ast.literal_eval, then the text."""
    if isinstance(schema, dict) and schema.get("type") == "string":
        return _Param("minicpm5", "string", ("string",), "string")
    return _Param("minicpm5", "other", ("json", "literal"), "string")


def step3_param(schema: Any) -> _Param:
    """Step3Detector (get_argument_type): the schema's own `type` (without
    one, the type anyOf / oneOf / enum give, infer_type: Step3Detector takes
    those as strings, docs/PARSERS.md); absent (or empty) or "string": the
    raw text; any other (a list too): json.loads, then ast.literal_eval,
    then the text."""
    t = (schema["type"] if "type" in schema else infer_type(schema)) if isinstance(schema, dict) else None
    if not t or t == "string":
        return _Param("step3", "string", ("string",), "string")
    return _Param("step3", "other", ("json", "literal"), "string")


def _resolve_refs(schema: Any, defs: Dict[str, Any], depth: int = 0) -> Any:
    """A parameter schema with its local `#/$defs/X` references replaced
    (DotsToolDetector follows them when it looks for a type)."""
    if depth > 10 or not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if "type" not in schema and isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _resolve_refs(defs.get(ref.rsplit("/", 1)[-1]), defs, depth + 1)
    out = dict(schema)
    for keyword in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(keyword), list):
            out[keyword] = [_resolve_refs(b, defs, depth + 1) for b in out[keyword]]
    return out


def _first_params(tools: Schemas, family: str) -> Dict[str, Any]:
    """tool name -> parameters schema, the first tool of a name (minimax_m2:
    the first whose parameters are a dict)."""
    out: Dict[str, Any] = {}
    for name, params in tools:
        if name in out:
            continue
        if family == "minimax_m2" and not isinstance(params, dict):
            continue
        out[name] = params
    return out


def _properties(family: str, params: Any) -> Dict[str, Any]:
    if not isinstance(params, dict):
        return {}
    props = get_schema_properties(params)
    if family == "qwen3_coder" and not props and "properties" not in params:
        return params  # SGLang's _get_arguments_config does the same
    if family == "dots":
        defs = params.get("$defs")
        defs = defs if isinstance(defs, dict) else {}
        return {k: _resolve_refs(v, defs) for k, v in props.items()}
    return props


# ------------------------------------------------------------ converter

_SURROGATE = re.compile("[\ud800-\udfff]")
# one encoder: json.dumps with non-default options builds a new one per call
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _dumps(value: Any, raw: str) -> str:
    # scalars without json.dumps (the common case, and the hot path)
    t = type(value)
    if t is int:
        return str(value)
    if t is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if t is float:
        return repr(value) if value - value == 0 else json.dumps(raw, ensure_ascii=False)
    try:
        text = strict_dumps(value)  # a BigNumber: its digits
    except (TypeError, ValueError, RecursionError):  # a set, bytes, NaN...: the text
        text = _ENCODER.encode(raw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates stay escaped, as the core writes them
        text = _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)
    return text


def convert(param: _Param, raw: str) -> Any:
    """The typed value of `raw` for one parameter (a Python value)."""
    if raw.lower() in param.nulls or raw in param.exact_nulls:
        return None
    for conversion in param.chain:
        try:
            return conversion(raw)
        except _Fail:
            continue
    return param.fallback(raw)


FAMILIES = {"qwen3_coder": qwen_param, "minimax_m2": minimax_param, "dots": dots_param,
            "minicpm5": minicpm5_param, "step3": step3_param}
# formats typed by another family's rules (the C side: BY_FORMAT in
# csrc/tp_type_rules.c): MiMoDetector converts as Qwen3CoderDetector does
TYPING = {"mimo": "qwen3_coder"}
_UNDECLARED = {fmt: param_of({"type": "string"}) for fmt, param_of in FAMILIES.items()}
_UNDECLARED["minicpm5"] = minicpm5_param({})  # MiniCPM5Detector types an undeclared key's value too


_COMPILED: Dict[Tuple[str, Tuple[Tuple[str, str], ...]], Dict[str, Dict[str, _Param]]] = {}
_BY_ID: Dict[Any, Tuple[List[Tuple[str, Any]], Dict[str, Dict[str, _Param]]]] = {}
_COMPILED_MAX = 256  # tool lists kept compiled (a server sees the same few again and again)
_compiled_lock = threading.Lock()


def compile_tools(fmt: str, tools: Schemas) -> Dict[str, Dict[str, _Param]]:
    """tool name -> {parameter -> _Param}, cached by the tools' content
    (name and repr of the parameters schema): a server parses many
    responses against the same tool list."""
    # the same list objects again (one request parsed chunk by chunk and at
    # its end): found by identity, the objects kept alive by the cache entry
    ident = (fmt, tuple((name, id(params)) for name, params in tools))
    with _compiled_lock:
        hit = _BY_ID.get(ident)
    if hit is not None and all(a is b for (_, a), (_, b) in zip(hit[0], tools)):
        return hit[1]
    key = (fmt, tuple((name, repr(params)) for name, params in tools))
    with _compiled_lock:
        compiled = _COMPILED.get(key)
    if compiled is not None:
        _remember(ident, tools, compiled)
        return compiled
    param_of = FAMILIES[fmt]
    compiled = {name: {k: param_of(v) for k, v in _properties(fmt, params).items()}
                for name, params in _first_params(tools, fmt).items()}
    with _compiled_lock:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = compiled
    _remember(ident, tools, compiled)
    return compiled


def _remember(ident, tools: Schemas, compiled) -> None:
    with _compiled_lock:
        if len(_BY_ID) >= _COMPILED_MAX:
            _BY_ID.clear()
        _BY_ID[ident] = (list(tools), compiled)


_KINDS: Dict[int, Tuple[Any, Dict[str, List[str]], Dict[str, List[str]]]] = {}


def _kinds(compiled: Dict[str, Dict[str, _Param]]) -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
    """(string parameters, other parameters) by tool, once per compiled table."""
    with _compiled_lock:
        hit = _KINDS.get(id(compiled))
    if hit is not None and hit[0] is compiled:
        return hit[1], hit[2]
    strings = {n: [k for k, p in ps.items() if p.kind == "string"] for n, ps in compiled.items()}
    others = {n: [k for k, p in ps.items() if p.kind != "string"] for n, ps in compiled.items()}
    with _compiled_lock:
        if len(_KINDS) >= _COMPILED_MAX:
            _KINDS.clear()
        _KINDS[id(compiled)] = (compiled, strings, others)
    return strings, others


class XmlConverter:
    """Types the values the C core hands over (the GlmConverter interface:
    see _core.StreamParser)."""

    def __init__(self, fmt: str, tools: Optional[Schemas]):
        if fmt not in FAMILIES:
            raise ValueError("no XML typing rules for format %r" % (fmt,))
        self.fmt = fmt
        self.tools = compile_tools(fmt, tools or [])  # shared: read only
        # declared string parameters stream; declared others are typed here;
        # undeclared ones are strings (the core's default for these formats)
        self.string_params, self.other_params = _kinds(self.tools)
        self._params: Dict[str, _Param] = {}
        self._string = _UNDECLARED[fmt]  # an undeclared key is a string

    def begin(self, name: str) -> bool:
        self._params = self.tools.get(name, {})
        return False  # no value depends on another: nothing held per call

    def value(self, key: str, raw: str) -> str:
        param = self._params.get(key) or self._string
        try:
            return _dumps(convert(param, raw), raw)
        except Exception:  # defensive: a rule must never break the stream
            return json.dumps(raw, ensure_ascii=False)

    def end(self) -> Optional[str]:
        return None

    def reset(self) -> None:
        self._params = {}
