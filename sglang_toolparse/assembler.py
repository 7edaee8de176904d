"""Collects streamed tool calls and checks each one when it ends, so an
application can decide before it executes a call. No SGLang import; no
dependency (a JSON-schema subset is built in; pass use_jsonschema=True to
use the `jsonschema` package instead when it is installed).

    asm = CallAssembler(tools)            # OpenAI-style tool dicts (with "parameters")
    p = StreamParser("qwen25", tools)
    for chunk in model_stream:
        for ev in p.feed(chunk):
            done = asm.add(ev)            # an AssembledCall when a call ends
            if done is not None and done.ok:
                execute(done.name, done.value)
    for ev in p.finish():
        asm.add(ev)
    asm.errors                            # every CallError, in order

The same checks work on the client side of an OpenAI stream:
`add_delta(index, id, name, arguments)` per tool-call delta, then
`close()` when the stream ends (or `end(index)` when a call is known to be
complete).

Errors (CallError.kind):
  unknown_tool   the name is not among the tools (tools=None accepts
                 every name, as StreamParser does)
  invalid_json   the arguments are not valid JSON (or not an object);
                 NaN and Infinity are not JSON (Python's json module
                 would accept them); a number beyond a double's range
                 (1e400) is valid JSON, as the parsers write it
  schema         the arguments violate the tool's parameters schema;
                 `path` is the JSON path of the offending value, e.g. $.location.city
  parse_error    the parser abandoned the call (ParseError code in `code`)
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from sglang_toolparse import strict_json
from sglang_toolparse.tool_specs import tool_entries

__all__ = ["AssembledCall", "CallAssembler", "CallError", "schema_errors", "tool_schemas"]


class CallError(NamedTuple):
    index: Optional[int]
    name: Optional[str]
    kind: str  # unknown_tool | invalid_json | schema | parse_error
    message: str
    path: str = "$"
    code: Optional[str] = None

    def __str__(self) -> str:
        where = "call %s" % self.index if self.index is not None else "call"
        if self.name:
            where += " (%s)" % self.name
        if self.kind == "schema":
            return "%s: %s at %s" % (where, self.message, self.path)
        return "%s: %s" % (where, self.message)


class AssembledCall:
    """One tool call: deltas collected until it ends, then checked."""

    __slots__ = ("index", "id", "name", "_parts", "done", "value", "errors")

    def __init__(self, index: int, name: Optional[str] = None, id: Optional[str] = None) -> None:
        self.index = index
        self.id = id
        self.name = name
        self._parts: List[str] = []
        self.done = False
        self.value: Any = None  # decoded arguments once valid JSON
        self.errors: List[CallError] = []

    @property
    def arguments(self) -> str:
        return "".join(self._parts)

    @property
    def ok(self) -> bool:
        return self.done and not self.errors

    def __repr__(self) -> str:
        return "AssembledCall(index=%r, name=%r, arguments=%r, done=%r, errors=%r)" % (
            self.index,
            self.name,
            self.arguments,
            self.done,
            [str(e) for e in self.errors],
        )


def tool_schemas(tools: Optional[Sequence[Any]]) -> Optional[Dict[str, Any]]:
    """name -> parameters schema (None when the tool declares none); None
    when `tools` is None (every name accepted). `tools` is checked as for
    StreamParser (a list or tuple of tool dicts, Tool models or names)."""
    entries = tool_entries(tools)
    return None if entries is None else dict(entries)


def _reject_constant(token: str) -> Any:
    raise ValueError("%s is not a JSON number" % token)


def _loads(text: str) -> Any:
    """json.loads without Python's extensions: NaN, Infinity and -Infinity
    are rejected (clients' parsers reject them too). A number past a double
    (`1e400`) is valid JSON, as the parsers write it: it is read as a
    strict_json.BigNumber (a float that keeps the digits written)."""
    return json.loads(text, parse_constant=_reject_constant, parse_float=strict_json.number)


class CallAssembler:
    """See the module docstring. `tools` as for StreamParser (None accepts
    every name, unchecked); a tool without a parameters schema accepts any
    JSON object."""

    def __init__(self, tools: Optional[Sequence[Any]] = None, *, use_jsonschema: bool = False) -> None:
        self.schemas = tool_schemas(tools)
        self.calls: Dict[int, AssembledCall] = {}
        self.errors: List[CallError] = []
        self._validator = None
        if use_jsonschema:
            import jsonschema  # optional extra: pip install sglang-toolparse[schema]

            self._validator = jsonschema

    # -- StreamParser events ---------------------------------------------
    def add(self, ev: Any) -> Optional[AssembledCall]:
        """Takes one parser event; returns the call it completed, if any."""
        kind = type(ev).__name__
        if kind == "CallStart":
            self.calls[ev.index] = AssembledCall(ev.index, ev.name)
        elif kind == "ArgsDelta":
            self._call(ev.index)._parts.append(ev.delta)
        elif kind == "CallEnd":
            call = self._call(ev.index, ev.name)
            if call.arguments != ev.arguments:  # deltas missed: trust the end event
                call._parts = [ev.arguments]
            return self._finish(call)
        elif kind == "ParseError":
            if ev.index is None and ev.code == "unknown_tool":
                self._error(CallError(None, ev.detail or None, "unknown_tool", "unknown tool %r" % ev.detail))
            elif ev.index is not None:
                call = self._call(ev.index)
                call.done = True
                self._error(
                    CallError(ev.index, call.name, "parse_error", ev.reason or ev.code, code=ev.code), call
                )
                return call
            else:
                self._error(CallError(None, None, "parse_error", ev.reason or ev.code, code=ev.code))
        return None

    def feed(self, events: Iterable[Any]) -> List[AssembledCall]:
        """Takes a list of events; returns the calls they completed."""
        out = []
        for ev in events:
            done = self.add(ev)
            if done is not None:
                out.append(done)
        return out

    # -- OpenAI stream deltas (client side) --------------------------------
    def add_delta(
        self, index: int, id: Optional[str] = None, name: Optional[str] = None, arguments: Optional[str] = None
    ) -> None:
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = AssembledCall(index, name, id)
        if id and not call.id:
            call.id = id
        if name and not call.name:
            call.name = name
        if arguments:
            call._parts.append(arguments)

    def end(self, index: int) -> AssembledCall:
        return self._finish(self._call(index))

    def close(self) -> List[AssembledCall]:
        """Ends every open call (end of stream); returns them all, by index."""
        for i in sorted(self.calls):
            if not self.calls[i].done:
                self._finish(self.calls[i])
        return [self.calls[i] for i in sorted(self.calls)]

    # -- internals ----------------------------------------------------------
    def _call(self, index: int, name: Optional[str] = None) -> AssembledCall:
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = AssembledCall(index, name)
        elif name and not call.name:
            call.name = name
        return call

    def _error(self, err: CallError, call: Optional[AssembledCall] = None) -> None:
        self.errors.append(err)
        if call is not None:
            call.errors.append(err)

    def _finish(self, call: AssembledCall) -> AssembledCall:
        if call.done:
            return call
        call.done = True
        if self.schemas is not None and call.name not in self.schemas:
            self._error(CallError(call.index, call.name, "unknown_tool", "unknown tool %r" % call.name), call)
            return call
        text = call.arguments
        try:
            value = _loads(text) if text.strip() else {}
        except ValueError as e:
            self._error(CallError(call.index, call.name, "invalid_json", "arguments are not valid JSON: %s" % e), call)
            return call
        if not isinstance(value, dict):
            self._error(
                CallError(call.index, call.name, "invalid_json", "arguments are %s, not an object" % _type_name(value)),
                call,
            )
            return call
        call.value = value
        schema = None if self.schemas is None else self.schemas[call.name]
        if schema:
            for path, msg in self._check(value, schema):
                self._error(CallError(call.index, call.name, "schema", msg, path), call)
        return call

    def _check(self, value: Any, schema: Any) -> List[Tuple[str, str]]:
        if self._validator is None:
            return schema_errors(value, schema)
        v = self._validator.validators.validator_for(schema)(schema)
        return [(_path_of(list(e.absolute_path)), e.message) for e in v.iter_errors(value)]


# -- a JSON Schema subset -------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _path_of(parts: List[Any]) -> str:
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        elif _IDENT.match(p):
            out += "." + p
        else:
            out += "[%s]" % json.dumps(p, ensure_ascii=False)
    return out


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _is_type(v: Any, t: str) -> bool:
    if t == "null":
        return v is None
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "string":
        return isinstance(v, str)
    if t == "array":
        return isinstance(v, list)
    if t == "object":
        return isinstance(v, dict)
    return True  # unknown type names are not enforced


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        return None  # remote refs are not followed
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return None
    return node


def schema_errors(value: Any, schema: Any, _root: Any = None, _path: Optional[List[Any]] = None) -> List[Tuple[str, str]]:
    """(JSON path, message) for each violation of `schema` by `value`.

    Supported: type (string or list), enum, const, properties, required,
    additionalProperties (bool or schema), patternProperties, items (schema),
    prefixItems, min/maxItems, uniqueItems, min/maxLength, pattern,
    minimum/maximum/exclusiveMinimum/exclusiveMaximum, multipleOf,
    min/maxProperties, anyOf, oneOf, allOf, not, local $ref (#/$defs/...,
    #/definitions/...). Unknown keywords (format, title, description, ...)
    are ignored."""
    root = schema if _root is None else _root
    path = [] if _path is None else _path
    errs: List[Tuple[str, str]] = []
    if schema is False:
        return [(_path_of(path), "no value is allowed here")]
    if not isinstance(schema, Mapping):  # True, None: anything goes
        return errs
    here = _path_of(path)

    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        if target is not None:
            errs += schema_errors(value, target, root, path)

    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_is_type(value, x) for x in types):
            errs.append((here, "expected %s, got %s" % (" or ".join(types), _type_name(value))))
            return errs  # the other keywords would only repeat the type error

    if "enum" in schema and not any(_equal(value, e) for e in schema["enum"]):
        errs.append((here, "%s is not one of %s" % (json.dumps(value, ensure_ascii=False), json.dumps(schema["enum"], ensure_ascii=False))))
    if "const" in schema and not _equal(value, schema["const"]):
        errs.append((here, "expected %s" % json.dumps(schema["const"], ensure_ascii=False)))

    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key in schema.get("required") or ():
            if key not in value:
                errs.append((here, "missing required property %r" % key))
        pattern_props = schema.get("patternProperties") or {}
        for key, v in value.items():
            matched = False
            if key in props:
                matched = True
                errs += schema_errors(v, props[key], root, path + [key])
            for pat, sub in pattern_props.items():
                if re.search(pat, key):
                    matched = True
                    errs += schema_errors(v, sub, root, path + [key])
            if not matched:
                extra = schema.get("additionalProperties", True)
                if extra is False:
                    errs.append((_path_of(path + [key]), "unexpected property %r" % key))
                elif isinstance(extra, Mapping):
                    errs += schema_errors(v, extra, root, path + [key])
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            errs.append((here, "fewer than %d properties" % schema["minProperties"]))
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            errs.append((here, "more than %d properties" % schema["maxProperties"]))

    if isinstance(value, list):
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # draft-4..7 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        n_prefix = 0
        if isinstance(prefix, list):
            n_prefix = len(prefix)
            for i, (v, sub) in enumerate(zip(value, prefix)):
                errs += schema_errors(v, sub, root, path + [i])
        if items is False and len(value) > n_prefix:
            errs.append((_path_of(path + [n_prefix]), "no more than %d items allowed" % n_prefix))
        elif isinstance(items, Mapping):
            for i in range(n_prefix, len(value)):
                errs += schema_errors(value[i], items, root, path + [i])
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append((here, "fewer than %d items" % schema["minItems"]))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append((here, "more than %d items" % schema["maxItems"]))
        if schema.get("uniqueItems"):
            seen = []
            for v in value:
                if any(_equal(v, s) for s in seen):
                    errs.append((here, "items are not unique"))
                    break
                seen.append(v)

    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errs.append((here, "shorter than %d characters" % schema["minLength"]))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errs.append((here, "longer than %d characters" % schema["maxLength"]))
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            errs.append((here, "does not match %r" % schema["pattern"]))

    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append((here, "less than the minimum %s" % schema["minimum"]))
        if "maximum" in schema and value > schema["maximum"]:
            errs.append((here, "greater than the maximum %s" % schema["maximum"]))
        ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if isinstance(ex_min, (int, float)) and not isinstance(ex_min, bool) and value <= ex_min:
            errs.append((here, "not greater than %s" % ex_min))
        if isinstance(ex_max, (int, float)) and not isinstance(ex_max, bool) and value >= ex_max:
            errs.append((here, "not less than %s" % ex_max))
        mult = schema.get("multipleOf")
        if isinstance(mult, (int, float)) and mult > 0:
            q = value / mult
            if not math.isfinite(q) or abs(q - round(q)) > 1e-9:
                errs.append((here, "not a multiple of %s" % mult))

    for sub in schema.get("allOf") or ():
        errs += schema_errors(value, sub, root, path)
    if "anyOf" in schema:
        branches = [schema_errors(value, sub, root, path) for sub in schema["anyOf"]]
        if branches and all(branches):
            errs.append((here, "matches none of anyOf: " + "; ".join(_first(b) for b in branches)))
    if "oneOf" in schema:
        branches = [schema_errors(value, sub, root, path) for sub in schema["oneOf"]]
        n_ok = sum(1 for b in branches if not b)
        if n_ok == 0 and branches:
            errs.append((here, "matches none of oneOf: " + "; ".join(_first(b) for b in branches)))
        elif n_ok > 1:
            errs.append((here, "matches %d branches of oneOf, expected exactly one" % n_ok))
    if "not" in schema and not schema_errors(value, schema["not"], root, path):
        errs.append((here, "matches a schema it must not match"))
    return errs


def _first(errs: List[Tuple[str, str]]) -> str:
    p, m = errs[0]
    return "%s at %s" % (m, p)
