"""Qwen3-Coder / MiniMax-M2 values typed in the C core (issue 12 on issue 11's
typed-value layer): the rows of csrc/tp_type_rules.c give, for every value
they decide, the JSON text of the Python reference (xml_types.py, SGLang's
rules plus the declared differences), and hand only the rest to that
reference as the host."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglang_toolparse import CallEnd, parse
from sglang_toolparse import _core
from sglang_toolparse.xml_types import XmlConverter, c_rows, compile_tools

FORMATS = ("qwen3_coder", "minimax_m2")

TYPE_NAMES = ["string", "str", "text", "varchar", "char", "enum", "integer", "int", "uint64", "long", "short",
              "unsigned", "number", "num", "float", "double", "boolean", "bool", "binary", "object", "array",
              "arr", "dict", "list", "null", "any", "tuple", "Integer", " number ", "BOOLEAN"]

SCHEMAS = ([{"type": t} for t in TYPE_NAMES] + [
    {}, "integer", None, {"type": ["integer", "null"]}, {"type": ["null"]}, {"type": ["string", "integer"]},
    {"type": ["boolean", "number"]}, {"type": ["object", "string"]}, {"type": ["array", "integer"]},
    {"anyOf": [{"type": "integer"}, {"type": "null"}]}, {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
    {"oneOf": [{"type": "number"}, {"type": "array"}]}, {"allOf": [{"type": "string"}, {"type": "integer"}]},
    {"enum": [1, 2]}, {"enum": ["a", 1]}, {"enum": [True, None]}, {"enum": [1.5]}, {"enum": [[1], {"a": 1}]},
    {"properties": {"a": {}}}, {"items": {}}, {"type": "foo"}, {"type": ["foo", "string"]},
])

VALUES = [
    "", "null", "NULL", "Null", "None", "none", "NONE", "nil", "NIL", "true", "True", "TRUE", "false", "False",
    "yes", "YES", "on", "OFF", "no", " yes ", "\ttrue\n", "1", "0", "-0", "+5", "007", "12", "-12", "1.0",
    "1.5", "-0.0", "5.", ".5", "-.5", "1e5", "1E5", "1e+5", "1e-5", "1e400", "-1e400", "1e-400", "1.5e300",
    "12345678901234567890", "1" * 30 + ".5", "9007199254740993", "1" * 400, "1" * 5000, "-" + "9" * 20,
    "1_000", " 5", "5 ", "\n5\n", "\u0663", "\uff15", "inf", "-inf", "nan", "Infinity", "NaN", "-Infinity",
    "[NaN]", '{"a": Infinity}', "[1, 2]", "[1,2]", '{"a": 1}', '{"a":1,"b":[true,null]}', '{"a": 1, "a": 2}',
    "'x'", "(1, 2)", "{1, 2}", "[1, 'a']", "abc", 'a"b', "a\\b", "\\u00e9", "[", "{", '"x"', '"5"', '"\\ud800"',
    "0x10", "1e5.5", "--5", "+-5", "1.5e", "e5", ".", "+", "-", "ab\ncd", "\t", "1.7976931348623157e308",
    "2.2250738585072014e-308", "4.9e-324", "5e-324", "0.1", "0.30000000000000004", "1e16", "1e15",
    "0.0001", "0.00001", "123456789012345678", "100000000000000000000.0", "3.25", "True, False", "héllo",
    "null ", " null", "[" * 70 + "]" * 70, "[" * 600 + "]" * 600, "\ud800", "é", "1\x00",
]

# values whose typing the core decides itself for every kind but Qwen3-Coder's
# "literal" fallback (whose rule is ast.literal_eval)
PLAIN = ["", "null", "None", "nil", "true", "false", "yes", "0", "1", "-12", "+5", "3.25", "1e5", "-0.0", "abc",
         "[1, 2]", '{"a": 1}', "hello world", "1e400"]


def reference(fmt, schema, raw):
    tools = [("f", {"type": "object", "properties": {"p": schema}})]
    conv = XmlConverter(fmt, tools)
    conv.begin("f")
    return conv.value("p", raw)


def c_kind(fmt, schema):
    rows = c_rows(fmt, [("f", {"type": "object", "properties": {"p": schema}})])
    (_, _, params), = rows
    (_, kind, mask), = params
    return kind, mask


def check(fmt, schema, raw):
    kind, mask = c_kind(fmt, schema)
    got = _core.type_value(fmt, _core.KINDS[kind], mask, raw)
    if got is not None:
        assert got == reference(fmt, schema, raw), (fmt, schema, raw, kind, mask)
    return got


@pytest.mark.parametrize("fmt", FORMATS)
def test_core_typing_equals_python_rules(fmt):
    decided = 0
    for schema in SCHEMAS:
        for raw in VALUES:
            decided += check(fmt, schema, raw) is not None
    # the core decides the great majority of these (edge) values itself
    assert decided > 0.8 * len(SCHEMAS) * len(VALUES), decided


@pytest.mark.parametrize("fmt", FORMATS)
def test_core_decides_plain_values(fmt):
    for schema in SCHEMAS:
        kind, _ = c_kind(fmt, schema)
        if kind == "other":  # Qwen3-Coder's literal fallback: ast.literal_eval
            continue
        for raw in PLAIN:
            if fmt == "qwen3_coder" and kind == "object" and raw == "+5":
                continue  # not JSON; its next rule is ast.literal_eval (which reads 5)
            assert check(fmt, schema, raw) is not None, (fmt, schema, raw)


def test_kinds_compiled_from_schemas():
    assert c_kind("qwen3_coder", {"type": "integer"}) == ("integer", 0)
    assert c_kind("qwen3_coder", {"type": "dict"}) == ("object", 0)
    assert c_kind("qwen3_coder", {"type": "tuple"}) == ("other", 0)
    assert c_kind("qwen3_coder", {"enum": ["a", "b"]}) == ("string", 0)
    assert c_kind("minimax_m2", {"type": ["string", "null"]}) == ("string", 0)
    assert c_kind("minimax_m2", {"type": ["integer", "string"]}) == ("union", 1 | 2)
    assert c_kind("minimax_m2", {"type": ["boolean", "array", "number"]}) == ("union", 4 | 8 | 32)
    assert c_kind("minimax_m2", {"type": "foo"}) == ("union", 0)


# generated schemas and raw values
type_names = st.sampled_from(TYPE_NAMES + ["null", "string"])
enum_values = st.lists(st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                                 st.text(max_size=3)), min_size=1, max_size=3)
schemas = st.one_of(
    type_names.map(lambda t: {"type": t}),
    st.lists(type_names, min_size=1, max_size=3).map(lambda ts: {"type": ts}),
    st.lists(type_names, min_size=1, max_size=3).map(lambda ts: {"anyOf": [{"type": t} for t in ts]}),
    enum_values.map(lambda vs: {"enum": vs}),
    st.tuples(type_names, enum_values).map(lambda te: {"type": te[0], "enum": te[1]}),
)
raws = st.one_of(
    st.sampled_from(VALUES),
    st.text(alphabet="0123456789+-.eE_ ntrufalsyoNTRUFALSYOI[]{}\",:'\n", max_size=12),
    st.integers().map(str),
    st.floats().map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: "%.*g" % (abs(hash(f)) % 20 + 1, f)),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
                 lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                 max_leaves=6).map(json.dumps),
    st.text(max_size=8),
)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, raw=raws)
def test_core_typing_equals_python_rules_generated(fmt, schema, raw):
    check(fmt, schema, raw)


def counting(fmt, tools):
    """A CompiledTools whose host converters record the values they type."""
    k = _core.KINDS
    seen = []

    class Counting(XmlConverter):
        def value(self, key, raw):
            seen.append((key, raw))
            return XmlConverter.value(self, key, raw)

    rows = [(n, k[d], [(p, k[kind], m) for p, kind, m in ps]) for n, d, ps in c_rows(fmt, tools)]
    return _core.CompiledTools(rows, (), lambda: Counting(fmt, tools)), seen


CALL = {
    "qwen3_coder": lambda pairs: "<tool_call>\n<function=f>\n" + "".join(
        "<parameter=%s>\n%s\n</parameter>\n" % kv for kv in pairs) + "</function>\n</tool_call>",
    "minimax_m2": lambda pairs: "<minimax:tool_call>\n<invoke name=\"f\">\n" + "".join(
        "<parameter name=\"%s\">%s</parameter>\n" % kv for kv in pairs) + "</invoke>\n</minimax:tool_call>",
}
PROPS = {"s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
         "o": {"type": "object"}, "u": {"type": ["integer", "string"]}, "t": {"type": "tuple"}}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("pairs,hosted", [
    ([("s", "hello"), ("i", "5"), ("n", "2.5"), ("b", "true"), ("o", '{"a": [1, 2.0]}'), ("u", "x"),
      ("x", "undeclared"), ("s", "null"), ("i", "nil"), ("n", "1e400")], []),
    ([("i", "1_000")], [("i", "1_000")]),  # Python's int() reads underscores: the host
    ([("n", " 2.5 ")], [("n", " 2.5 ")]),
])
def test_only_python_cases_reach_the_host(fmt, pairs, hosted):
    tools = [("f", {"type": "object", "properties": PROPS})]
    ct, seen = counting(fmt, tools)
    text = CALL[fmt](pairs)
    p = _core.StreamParser(fmt, ["f"], compiled=ct)
    got = [e for e in p.feed(text) + p.finish() if isinstance(e, CallEnd)]
    assert seen == hosted
    ref = XmlConverter(fmt, tools)
    ref.begin("f")
    want = {}
    for k, v in pairs:
        want[k] = json.loads(ref.value(k, v))
    assert json.loads(got[0].arguments) == want
    api_tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": PROPS}}}]
    assert parse(fmt, text, api_tools).calls[0].arguments == got[0].arguments


@pytest.mark.parametrize("fmt", FORMATS)
def test_literal_fallback_goes_to_the_host(fmt):
    """Qwen3-Coder's rule for a type without a conversion is ast.literal_eval:
    the core hands such values over (MiniMax-M2 has no such rule)."""
    tools = [("f", {"type": "object", "properties": PROPS})]
    ct, seen = counting(fmt, tools)
    text = CALL[fmt]([("t", "(1, 2)")])
    p = _core.StreamParser(fmt, ["f"], compiled=ct)
    got = [e for e in p.feed(text) + p.finish() if isinstance(e, CallEnd)]
    assert seen == ([("t", "(1, 2)")] if fmt == "qwen3_coder" else [])
    assert json.loads(got[0].arguments) == {"t": [1, 2] if fmt == "qwen3_coder" else "(1, 2)"}
