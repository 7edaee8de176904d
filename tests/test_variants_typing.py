"""Typing rows of issue 20's names: dots has its own row of
csrc/tp_type_rules.c (DotsToolDetector's conversions), checked against its
Python twin (xml_types.py) on the edge schemas and values of
tests/test_xml_typing_c.py, and the twin against SGLang's detector itself;
mimo uses Qwen3-Coder's row (its typing is that file's subject)."""
import json
import math

import pytest

from test_xml_typing_c import SCHEMAS, VALUES, check, reference


def test_dots_core_typing_equals_python_rules():
    decided = sum(check("dots", schema, raw) is not None for schema in SCHEMAS for raw in VALUES)
    assert decided > 0.8 * len(SCHEMAS) * len(VALUES), decided


def _finite(v):
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_finite(x) for x in v)
    if isinstance(v, dict):
        return all(_finite(x) for x in v.values())
    return True


def test_dots_rules_equal_sglangs(fcp):
    from sglang.srt.function_call.dots_detector import DotsToolDetector

    det = DotsToolDetector()
    checked = 0
    for schema in SCHEMAS:
        props, defs = {"p": schema}, {}
        ptype = (det._resolve_param_type(props["p"], defs) or "string") if isinstance(schema, dict) else "string"
        for raw in VALUES:
            raw = raw.strip()
            try:
                want = det._convert_param_value(raw, ptype)
            except Exception:  # SGLang raises (e.g. int() of a huge float): its call is lost
                continue
            if not _finite(want):  # NaN/Infinity are not JSON: the text here (docs/PARSERS.md)
                continue
            try:
                json.dumps(want)
            except (TypeError, ValueError):
                continue
            assert json.loads(reference("dots", schema, raw)) == want, (schema, raw)
            checked += 1
    assert checked > 0.8 * len(SCHEMAS) * len(VALUES)


def test_minicpm5_core_typing_equals_python_rules():
    decided = sum(check("minicpm5", schema, raw) is not None for schema in SCHEMAS for raw in VALUES)
    assert decided > 0.5 * len(SCHEMAS) * len(VALUES), decided  # literal_eval cases go to the host


def test_minicpm5_rules_equal_sglangs(fcp):
    from sglang.srt.function_call.minicpm5_detector import parse_arguments

    checked = 0
    for schema in SCHEMAS:
        raw_string = isinstance(schema, dict) and schema.get("type") == "string"
        for raw in VALUES:
            raw = raw.strip()
            want = raw if raw_string else parse_arguments(raw)[0]
            if not _finite(want):
                continue
            try:
                want = json.loads(json.dumps(want, allow_nan=False))  # a tuple is a JSON array
            except (TypeError, ValueError):  # a set, bytes: the text here
                continue
            assert json.loads(reference("minicpm5", schema, raw)) == want, (schema, raw)
            checked += 1
    assert checked > 0.8 * len(SCHEMAS) * len(VALUES)


def test_step3_core_typing_equals_python_rules():
    decided = sum(check("step3", schema, raw) is not None for schema in SCHEMAS for raw in VALUES)
    assert decided > 0.5 * len(SCHEMAS) * len(VALUES), decided  # literal_eval cases go to the host


def test_step3_rules_equal_sglangs(fcp):
    """Step3Detector: the schema's own `type`, absent/empty or "string" the
    text, else json.loads, then literal_eval, then the text. Where the schema
    has no own `type` but anyOf/oneOf/enum give one that is not a string,
    ours types the value (docs/PARSERS.md): those schemas are left out."""
    from sglang.srt.function_call.step3_detector import parse_arguments
    from sglang_toolparse.xml_types import infer_type

    checked = 0
    for schema in SCHEMAS:
        own = schema.get("type") if isinstance(schema, dict) else None
        if isinstance(schema, dict) and "type" not in schema and infer_type(schema) not in (None, "string"):
            continue
        for raw in VALUES:
            raw = raw.strip()
            want = raw if not own or own == "string" else parse_arguments(raw)[0]
            if not _finite(want):
                continue
            try:
                want = json.loads(json.dumps(want, allow_nan=False))
            except (TypeError, ValueError):
                continue
            assert json.loads(reference("step3", schema, raw)) == want, (schema, raw)
            checked += 1
    assert checked > 0.5 * len(SCHEMAS) * len(VALUES), checked
