"""Value typing of the GLM engine's rows with rules of their own
(sglang_toolparse/glm_row_types.py, rows of csrc/tp_type_rules.c):

* the C core (and its hand-over to Python) equals the Python reference for
  every schema kind x raw value of a table, one-shot and a character at a
  time;
* the reference equals SGLang's detector one-shot, except where the chat
  template decides otherwise (declared in docs/PARSERS.md, listed per row in
  DECLARED)."""
import json
import math

import pytest

from glm_rows import TYPING_ROWS as ROWS
from sglang_toolparse import parse
from sglang_toolparse.glm_row_types import FAMILIES, value
from support import run

SCHEMAS = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "object"},
    {"type": "array"}, {"type": "null"}, {"type": ["string", "null"]}, {"type": ["integer", "null"]},
    {"enum": ["a", "b", "7"]}, {"type": "str"}, {"type": "int"}, {"type": "float"}, {"type": "bool"},
    {"type": "text"}, {"type": "enum"}, {"type": "Integer"}, {"type": "uint64"}, {"type": "double"},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"oneOf": [{"type": "object"}, {"type": "null"}]},
    {"anyOf": [{"type": "number"}, {"type": "boolean"}]}, {"anyOf": [{"type": "string"}, {"type": "array"}]},
    {}, {"description": "no type"},
]
RAW_VALUES = [
    "123", "hello", " hello world ", "12.5", "-3", "1e5", "true", "false", "True", "TRUE", "null", "NULL", "None",
    '{"a": 1}', "[1, 2]", '"quoted"', "'single'", "", "  ", " 7", "7 ", "NaN", "Infinity", "-Infinity", "nan", "inf",
    "1e400", "x\ny", "{'a': 1}", "(1, 2)", "{1, 2}", "b'x'", "5 apples", "0x10", "007", "1_000", "-0", "1.0", "2.50",
    "12345678901234567890", "1", "0", "yes", "on", " true ", "[1,\n 2]", '{"k": "v", "k": "w"}', "\u00e9 \U0001F600",
    "\u0661\u0662", "+5", "1.5e300", "-", "{",
]


def tools_for(schema):
    props = {} if schema is None else {"p": schema}
    return [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": props}}}]


def expected(fmt, schema, raw):
    from sglang_toolparse.glm_types import _dumps

    return '{"p": %s}' % _dumps(value(fmt, schema, raw), raw)


FAMS = sorted(FAMILIES)


@pytest.mark.parametrize("fmt", FAMS)
def test_core_equals_reference(fmt):
    for schema in SCHEMAS + [None]:
        tools = tools_for(schema)
        for raw in RAW_VALUES:
            text = ROWS[fmt].calls(("f", [("p", raw)]))
            got = [c.arguments for c in parse(fmt, text, tools).calls]
            assert got == [expected(fmt, schema, raw)], (schema, raw)


@pytest.mark.parametrize("fmt", FAMS)
def test_core_streamed_equals_one_shot(fmt):
    for schema in SCHEMAS[:10]:
        tools = tools_for(schema)
        text = ROWS[fmt].calls(*[("f", [("p", raw)]) for raw in RAW_VALUES])
        assert run(fmt, list(text), tools) == run(fmt, [text], tools), schema


def _non_finite(raw):
    try:
        v = json.loads(raw)
    except ValueError:
        return False
    return any(isinstance(x, float) and not math.isfinite(x) for x in _walk(v))


def _walk(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from _walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from _walk(x)
    else:
        yield v


def _float_non_finite(raw):
    try:
        return not math.isfinite(float(raw))
    except ValueError:
        return False


def _declared_string(schema):
    from sglang_toolparse.glm_row_types import spark_kind

    return schema is not None and spark_kind(schema) == "string"


# (schema, raw) where the template (and so the reference) decides, not SGLang
DECLARED = {
    # a JSON value with NaN/Infinity stays text (SGLang writes NaN into the
    # argument JSON); the template writes no newline around a value
    "poolside_v1": lambda schema, raw: _non_finite(raw) or raw.startswith("\n") or raw.endswith("\n"),
    # non-finite numbers stay text; a declared string is its text, "null" too
    "spark25": lambda schema, raw: (_non_finite(raw) or _float_non_finite(raw)
                                    or (_declared_string(schema) and raw.lower() == "null")),
    # non-finite numbers stay text; a "type" list (SGLang raises: unhashable) reads as the union
    "hunyuan": lambda schema, raw: (_non_finite(raw) or _float_non_finite(raw)
                                    or (isinstance(schema, dict) and isinstance(schema.get("type"), list))),
}
DECLARED["hunyuan_os"] = DECLARED["hunyuan"]
# K2V3Detector: a JSON value with NaN/Infinity (or a number past a double,
# which json.loads makes inf) stays text; SGLang writes it into the arguments
DECLARED["k2_horizon"] = lambda schema, raw: _non_finite(raw)


@pytest.mark.parametrize("fmt", FAMS)
def test_reference_equals_sglang(fcp, fmt):
    from sglang.srt.entrypoints.openai.protocol import Tool

    det_cls = fcp.FunctionCallParser.ToolCallParserEnum[ROWS[fmt].sglang]
    while det_cls.__module__.startswith("sglang_toolparse"):  # SGLang's own class under a native install
        det_cls = det_cls.__mro__[1]
    declared = DECLARED.get(fmt, lambda s, r: False)
    compared = 0
    for schema in SCHEMAS + [None]:
        tools = [Tool(**t) for t in tools_for(schema)]
        for raw in RAW_VALUES:
            if declared(schema, raw):
                continue
            text = ROWS[fmt].calls(("f", [("p", raw)]))
            tok = ROWS[fmt].tokenizer()
            ref = (det_cls(tokenizer=tok) if tok else det_cls()).detect_and_parse(text, tools)
            want = json.loads(expected(fmt, schema, raw))
            assert [json.loads(c.parameters) for c in ref.calls] == [want], (schema, raw)
            compared += 1
    assert compared > len(SCHEMAS) * len(RAW_VALUES) // 2
