"""CallAssembler: per-call collection and checks (no SGLang)."""
from __future__ import annotations

import json

import pytest
from support import CHUNKERS

from sglang_toolparse import StreamParser
from sglang_toolparse.assembler import CallAssembler, schema_errors

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "minLength": 1}, "country": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "hours": {"type": "array", "items": {"type": "integer"}},
            },
            "required": ["location"],
        },
    },
}
SEARCH = {"type": "function", "function": {"name": "search"}}  # no schema: any object
TOOLS = [WEATHER, SEARCH]


def call(name, args):
    body = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return '<tool_call>\n{"name": "%s", "arguments": %s}\n</tool_call>\n' % (name, body)


def run(text, chunker="tokens", tools=TOOLS, parser_tools=None, **opts):
    p = StreamParser("qwen25", parser_tools if parser_tools is not None else tools, **opts)
    asm = CallAssembler(tools)
    done = []
    for c in CHUNKERS[chunker](text):
        done += asm.feed(p.feed(c))
    done += asm.feed(p.finish())
    return asm, done


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_valid_calls_complete_in_order(chunker):
    text = "Sure.\n" + call("get_weather", {"location": {"city": "Zürich"}, "unit": "celsius", "hours": [1, 2]}) + call(
        "search", {"q": "x"}
    )
    asm, done = run(text, chunker)
    assert [c.index for c in done] == [0, 1]
    assert all(c.ok for c in done), done
    assert done[0].value == {"location": {"city": "Zürich"}, "unit": "celsius", "hours": [1, 2]}
    assert json.loads(done[1].arguments) == {"q": "x"}
    assert asm.errors == []


def test_schema_violations_carry_json_paths():
    bad = {"location": {"city": "", "zip": 8000}, "unit": "kelvin", "days": 0, "hours": [1, "2"]}
    asm, done = run(call("get_weather", bad))
    (c,) = done
    assert not c.ok
    got = sorted((e.kind, e.path) for e in c.errors)
    assert got == sorted(
        [
            ("schema", "$.location.city"),  # minLength
            ("schema", "$.location.zip"),  # additionalProperties: false
            ("schema", "$.unit"),  # enum
            ("schema", "$.days"),  # minimum
            ("schema", "$.hours[1]"),  # items type
        ]
    )
    msgs = {e.path: e.message for e in c.errors}
    assert "kelvin" in msgs["$.unit"] and "celsius" in msgs["$.unit"]
    assert "expected integer, got string" == msgs["$.hours[1]"]
    assert "at $.location.city" in str(c.errors[0]) or any("at $.location.city" in str(e) for e in c.errors)


def test_missing_required_and_wrong_top_type():
    asm, done = run(call("get_weather", {"unit": "celsius"}) + call("get_weather", {"location": "Paris"}))
    assert [(e.index, e.path, e.message) for e in asm.errors] == [
        (0, "$", "missing required property 'location'"),
        (1, "$.location", "expected object, got string"),
    ]


def test_unknown_tool_is_reported_without_a_call():
    asm, done = run(call("launch", {}) + call("search", {}))
    assert [(c.index, c.name, c.ok) for c in done] == [(0, "search", True)]
    assert [(e.kind, e.name, e.index) for e in asm.errors] == [("unknown_tool", "launch", None)]


def test_unknown_tool_forwarded_is_caught_at_the_end():
    # the parser accepts every name (tools=None): the assembler still checks
    asm, done = run(call("launch", {"n": 1}), parser_tools=None, forward_unknown=True)
    (c,) = done
    assert [(e.kind, e.index, e.name) for e in c.errors] == [("unknown_tool", 0, "launch")]


def test_invalid_json_from_the_parser_and_from_a_client_stream():
    asm, done = run(call("search", '{"q": "x",, }') + call("search", {"q": "y"}))
    assert [(c.index, c.ok) for c in done] == [(0, False), (1, True)]
    assert asm.errors[0].kind == "parse_error" and asm.errors[0].code == "json_syntax"

    # client side: deltas as an OpenAI stream delivers them, cut mid-call
    asm = CallAssembler(TOOLS)
    asm.add_delta(0, id="call_1", name="search", arguments='{"q": ')
    asm.add_delta(0, arguments='"x", ')
    asm.add_delta(1, id="call_2", name="get_weather", arguments='{"location": {"city": "Oslo"}}')
    calls = asm.close()
    assert [(c.id, c.ok) for c in calls] == [("call_1", False), ("call_2", True)]
    assert calls[0].errors[0].kind == "invalid_json"
    assert calls[1].value == {"location": {"city": "Oslo"}}


def test_arguments_must_be_an_object():
    asm = CallAssembler(TOOLS)
    asm.add_delta(0, name="search", arguments="[1, 2]")
    (c,) = asm.close()
    assert [(e.kind, e.message) for e in c.errors] == [("invalid_json", "arguments are array, not an object")]


@pytest.mark.parametrize(
    "value,schema,paths",
    [
        (1, {"anyOf": [{"type": "string"}, {"type": "integer"}]}, []),
        (1.5, {"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["$"]),
        (1, {"oneOf": [{"type": "number"}, {"type": "integer"}]}, ["$"]),  # both match
        ("a", {"oneOf": [{"type": "number"}, {"type": "string"}]}, []),
        (True, {"type": "integer"}, ["$"]),  # booleans are not numbers
        (3.0, {"type": "integer"}, []),
        (None, {"type": ["string", "null"]}, []),
        ({"a b": 1}, {"properties": {"a b": {"type": "string"}}}, ['$["a b"]']),
        ([1, "x", 3], {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}, ["$[2]"]),
        ({"x": {"y": 1}}, {"$defs": {"Y": {"type": "string"}}, "properties": {"x": {"properties": {"y": {"$ref": "#/$defs/Y"}}}}}, ["$.x.y"]),
        ("abc", {"pattern": "^[a-z]+$", "maxLength": 2}, ["$"]),
        ({"k": 1}, {"additionalProperties": {"type": "string"}}, ["$.k"]),
        ("x", {"not": {"type": "string"}}, ["$"]),
        ([1, 1], {"uniqueItems": True}, ["$"]),
        (0.3, {"multipleOf": 0.1}, []),
        (5, {"exclusiveMaximum": 5}, ["$"]),
        ("x", {"const": "x"}, []),
        ("x", False, ["$"]),
    ],
)
def test_schema_subset(value, schema, paths):
    assert [p for p, _ in schema_errors(value, schema)] == paths


def test_agrees_with_jsonschema_when_installed():
    """Same error paths as jsonschema (which reports an additionalProperties
    violation at the object, where we name the unexpected property)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = WEATHER["function"]["parameters"]
    cases = [
        {"location": {"city": "Oslo"}},
        {"location": {"city": ""}, "unit": "kelvin"},
        {"location": {"city": "x"}, "days": 15, "hours": [1, 2.5]},
        {"unit": "celsius"},
    ]
    for value in cases:
        ours = sorted(p for p, _ in schema_errors(value, schema))
        v = jsonschema.Draft202012Validator(schema)
        ref = sorted(_jsonpath(list(e.absolute_path)) for e in v.iter_errors(value))
        assert ours == ref, value
        asm = CallAssembler([WEATHER], use_jsonschema=True)
        asm.add_delta(0, name="get_weather", arguments=json.dumps(value))
        (c,) = asm.close()
        assert sorted(e.path for e in c.errors) == ref


def _jsonpath(parts):
    from sglang_toolparse.assembler import _path_of

    return _path_of(parts)


@pytest.mark.parametrize("big", ["1e400", "-2.5E+999", "123456789e9999"])
def test_number_past_a_double_is_valid_json_as_the_parser_writes_it(big):
    """The parsers keep a number past a double as written (strict JSON,
    docs/SEMANTICS.md); the assembler reads it as valid, the schema's
    "number" type included; NaN and Infinity stay invalid_json."""
    from sglang_toolparse.api import parse

    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"x": {"type": "number"}}}}}]
    r = parse("qwen25", '<tool_call>\n{"name": "f", "arguments": {"x": %s}}\n</tool_call>' % big, tools)
    assert r.calls[0].arguments == '{"x": %s}' % big
    asm = CallAssembler(tools, use_jsonschema=False)
    got = asm.feed(StreamParser("qwen25", tools).parse_all(
        '<tool_call>\n{"name": "f", "arguments": {"x": %s}}\n</tool_call>' % big))
    assert [(c.name, c.ok, c.errors) for c in got] == [("f", True, [])]
    for bad in ("NaN", "Infinity", "-Infinity"):
        c = CallAssembler(tools)
        c.add_delta(0, name="f", arguments='{"x": %s}' % bad)
        assert [e.kind for e in c.end(0).errors] == ["invalid_json"]
