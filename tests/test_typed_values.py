"""The typed-value layer (issue 11): tools compiled once and shared, values
typed in the C core with only Python-literal cases handed to Python, the
one-shot path, and no core memory read across a call back into Python."""
import json

import pytest

from sglang_toolparse import ArgsDelta, CallEnd, CallStart, StreamParser, parse
from sglang_toolparse import _core, api
from sglang_toolparse.glm_types import GlmConverter, compile_tools

from support import in_threads

PROPS = {"s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
         "o": {"type": "object"}, "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
         "e": {"enum": ["7", 8]}}


def tools_with(props=PROPS, name="f"):
    return [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}]


def g47(name, *pairs):
    return "<tool_call>" + name + "".join("<arg_key>%s</arg_key><arg_value>%s</arg_value>" % kv for kv in pairs) + "</tool_call>"


def counting(fmt, tools):
    """A CompiledTools whose host converters count the values they type."""
    rows, whole, by_name = compile_tools(fmt, api.tool_schemas(tools))
    k = _core.KINDS
    seen = []

    class Counting(GlmConverter):
        __slots__ = ()

        def value(self, key, raw):
            seen.append((key, raw))
            return GlmConverter.value(self, key, raw)

    crow = [(n, k[d], [(p, k[kind], m) for p, kind, m in ps]) for n, d, ps in rows]
    return _core.CompiledTools(crow, whole, lambda: Counting(fmt, by_name, whole)), seen


@pytest.mark.parametrize("pairs,hosted", [
    ([("i", "5"), ("n", "2.5"), ("b", "true"), ("o", '{"a": [1, 2.0]}'), ("u", "x"), ("x", "plain")], []),
    ([("s", "'quoted' ('doc', 1)")], []),  # a string is never typed: it streams
    ([("b", "True")], [("b", "True")]),  # Python literal syntax: ast.literal_eval
    ([("i", "'5'")], [("i", "'5'")]),
    ([("n", '"2.5"')], [("n", '"2.5"')]),  # a JSON string re-read as a number by float()
    ([("e", "7")], [("e", "7")]),  # the union depends on the enum value
    ([("o", '{"a": 1, "a": 2}')], [("o", '{"a": 1, "a": 2}')]),  # json.loads keeps the last key
])
def test_core_types_values_and_hands_over_only_python_cases(pairs, hosted):
    tools = tools_with()
    ct, seen = counting("glm47", tools)
    text = g47("f", *pairs)
    p = _core.StreamParser("glm47", ["f"], compiled=ct)
    got = [e for e in p.feed(text) + p.finish() if isinstance(e, CallEnd)]
    assert seen == hosted
    assert got[0].arguments == parse("glm47", text, tools).calls[0].arguments


def test_same_list_and_equal_list_share_one_compilation():
    tools = tools_with()
    a = api.compiled_tools("glm47", tools)
    assert api.compiled_tools("glm47", tools) is a  # by identity
    assert api.compiled_tools("glm47", json.loads(json.dumps(tools))) is a  # by content
    assert api.compiled_tools("glm45", tools) is not a  # another family's rules
    changed = tools_with(dict(PROPS, i={"type": "string"}))
    assert api.compiled_tools("glm47", changed) is not a
    # a changed schema types differently
    assert parse("glm47", g47("f", ("i", "5")), changed).calls[0].arguments == '{"i": "5"}'
    assert parse("glm47", g47("f", ("i", "5")), tools).calls[0].arguments == '{"i": 5}'


def test_cache_is_bounded_when_tools_change_per_request():
    for k in range(api.CACHE_SIZE * 3):
        tools = tools_with(name="tool%d" % k)
        assert parse("glm47", g47("tool%d" % k, ("i", "5")), tools).calls[0].arguments == '{"i": 5}'
    assert len(api._by_identity) <= api.CACHE_SIZE
    assert len(api._by_content) <= api.CACHE_SIZE


def test_replacing_an_item_of_a_cached_list_is_seen():
    tools = tools_with()
    assert parse("glm47", g47("f", ("i", "5")), tools).calls[0].arguments == '{"i": 5}'
    tools[0] = tools_with(dict(PROPS, i={"type": "string"}))[0]
    assert parse("glm47", g47("f", ("i", "5")), tools).calls[0].arguments == '{"i": "5"}'


def test_threads_share_compiled_tools():
    tools = tools_with()
    text = g47("f", ("i", "5"), ("b", "True"), ("s", "x y"), ("e", "8")) * 3
    want = parse("glm47", text, tools)
    def step():
        copy = json.loads(json.dumps(tools))  # a new request's equal tools
        assert parse("glm47", text, copy) == want

    assert in_threads(step, 200) == []


@pytest.mark.parametrize("fmt", ["glm45", "glm47", "qwen25", "deepseekv4"])
def test_parse_all_is_feed_and_finish_without_streaming_objects(fmt):
    from sglang_toolparse.bench import corpus as C

    case = C.render_case(C.make_scenario("bursts3"), fmt)
    p = StreamParser(fmt, C.TOOLS)
    streamed = [e for e in p.feed(case.text) + p.finish() if not isinstance(e, (ArgsDelta, CallStart))]
    once = StreamParser(fmt, C.TOOLS).parse_all(case.text)
    assert once == streamed
    assert [(c.name, c.arguments) for c in parse(fmt, case.text, C.TOOLS).calls] == case.expected_calls
    q = StreamParser(fmt, C.TOOLS)
    q.parse_all("x")
    with pytest.raises(RuntimeError):
        q.parse_all("x")


class Reentrant:
    """A host converter that feeds its own parser while a batch is being
    turned into events (what a finalizer or another thread could do)."""

    def __init__(self):
        self.parser = None
        self.calls = 0

    def begin(self, name):
        return False

    def value(self, key, raw):
        self.calls += 1
        try:
            self.parser.feed("x" * 200000)  # the core's output buffer and events are replaced
        except RuntimeError:
            pass
        return json.dumps(raw)

    def end(self):
        return None

    def reset(self):
        pass


def test_python_code_run_while_collecting_cannot_read_moved_memory():
    """Issue 9.2: the binding holds no pointer into core memory across a call
    back into Python: a converter that re-enters feed() (the core's output
    buffer and event array are reallocated) gives defined events or a
    RuntimeError, never a read of freed memory."""
    conv = Reentrant()
    p = _core.StreamParser("glm45", ["f"], string_params={}, converter=conv)
    conv.parser = p
    # "True" is typed by Python (literal_eval); 200 KB of text follow it in
    # the same batch (this segfaulted before: SIGSEGV reading freed memory)
    text = "<tool_call>f\n<arg_key>b</arg_key>\n<arg_value>True</arg_value>\n</tool_call>" + "\u00e9" * 100000
    for _ in range(5):
        try:
            evs = p.feed(text)
        except RuntimeError:
            continue
        for e in evs:
            repr(e)
    assert conv.calls == 5


KIND_SCHEMAS = {  # kind name, mask -> a schema compiled to it
    ("untyped", 0): None, ("integer", 0): {"type": "integer"}, ("number", 0): {"type": "number"},
    ("boolean", 0): {"type": "boolean"}, ("null", 0): {"type": "null"}, ("object", 0): {"type": "object"},
    ("array", 0): {"type": "array"}, ("other", 0): {"type": "int"},
    ("union", 1 | 2): {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    ("union", 32 | 16): {"anyOf": [{"type": "object"}, {"type": "null"}]},
}
VALUES = ["123", "hello", " hello ", "12.5", "-3", "1e5", "1e400", "-0", "2.0", "true", "null", "None", "True", '{"a": 1}',
          "[1, 2]", '"q"', "'s'", '\\"e\\"', "", "  ", "\n5\n", "NaN", "-Infinity", "x\ny", "a\\nb", "{'a': 1}", "(1, 2)",
          "5 apples", "'", '"', "\\u0031", "0x10", "007", "-", "{", '["a"]', "\\", "\u00e9", "[1,\n 2]", "b'x'", "#c\n5",
          '{"a": {"b": 1, "b": 2}}', '{"k": "\ud800"}', "[" * 600 + "]" * 600, "1" * 5000]


@pytest.mark.parametrize("fmt", ["glm45", "glm47"])
def test_type_value_equals_python_rules(fmt):
    """The C rules (tp_type_value) give the Python rules' JSON text for every
    value they decide, and hand the rest to the host."""
    for (kind, mask), schema in KIND_SCHEMAS.items():
        props = {} if schema is None else {"p": schema}
        rows, whole, by_name = compile_tools(fmt, [("f", {"type": "object", "properties": props})])
        compiled = dict((k, (kd, m)) for k, kd, m in rows[0][2])
        if schema is not None and fmt == "glm47":
            assert compiled["p"] == (kind, mask), schema
        k, m = compiled.get("p", ("untyped", 0))
        conv = GlmConverter(fmt, by_name, whole)
        for raw in VALUES:
            got = _core.type_value(fmt, _core.KINDS[k], m, raw)
            conv.begin("f")
            ref = conv.value("p", raw)
            if got is not None:
                assert got == ref, (fmt, schema, raw)


@pytest.mark.parametrize("raw", [
    '{"a": [{"b": 1, "b": 2}]}',  # a repeated key deep inside: json.loads keeps the last
    "{" + ", ".join('"k%d": %d' % (i % 39, i) for i in range(40)) + "}",  # past the inline key list
    "{" + ", ".join('"k%d": %d' % (i, i) for i in range(40)) + "}",
    "[" * 70 + '{"a": 1, "a": 2}' + "]" * 70,  # deeper than the core checks: the host does
])
def test_object_values_with_repeated_keys(raw):
    text = g47("f", ("o", raw))
    want = json.dumps({"o": json.loads(raw)}, ensure_ascii=False)
    assert parse("glm47", text, tools_with()).calls[0].arguments == want


@pytest.mark.parametrize("fmt,text,want", [
    # the core writes a number at most a JSON number token long (4096
    # characters, what tp_json reads back; random-seed fuzz finding: the
    # core's arguments had a number no JSON reader of the core reads):
    # past a double and longer, the host types it (its digits, as before)
    ("mimo", "<tool_call>\n<function=f>\n<parameter=n>" + "1" * 4100 + "2.50</parameter>\n</function>\n</tool_call>",
     '{"n": ' + "1" * 4100 + "2.50}"),
    ("mimo", "<tool_call>\n<function=f>\n<parameter=n>" + "1" * 4000 + "2.50</parameter>\n</function>\n</tool_call>",
     '{"n": ' + "1" * 4000 + "2.50}"),
    # Gemma 4's bare integer (typed in the core only): longer, it is the
    # string the model wrote, as a float past a double is
    ("gemma4", "<|tool_call>call:f{n:" + "1" * 4100 + "_0}<tool_call|>", '{"n": "' + "1" * 4100 + '_0"}'),
    ("gemma4", "<|tool_call>call:f{n:" + "1" * 4000 + "_0}<tool_call|>", '{"n": ' + "1" * 4000 + "0}"),
], ids=["mimo-past-token", "mimo-within-token", "gemma4-past-token", "gemma4-within-token"])
def test_core_writes_no_number_longer_than_a_number_token(fmt, text, want):
    from sglang_toolparse.api import collect
    from support import every_split
    tools = tools_with({"n": {"type": "number"}})
    one = parse(fmt, text, tools)
    assert one.calls[0].arguments == want
    for chunks in every_split(text):
        p = StreamParser(fmt, tools)
        evs = []
        for c in chunks:
            evs += p.feed(c)
        assert collect(evs + p.finish()) == one


@pytest.mark.parametrize("digits,want_number", [(4096, True), (4097, False)])
def test_minimax_m3_integer_at_most_a_number_token(digits, want_number):
    """MiniMax-M3 types an integer as Python's int() reads it (up to 4300
    digits), but the core writes no number longer than a JSON number token
    (4096 characters, what tp_json reads back): longer, it is the text the
    model wrote, as a float past a double is."""
    from format_table import spec
    from sglang_toolparse.api import collect
    from support import every_split
    tools = tools_with({"n": {"type": "integer"}})
    value = "9" * digits
    text = spec("minimax_m3").calls_text([("f", '{"n": "X"}')]).replace("X", value)
    want = '{"n": %s}' % (value if want_number else '"%s"' % value)
    assert parse("minimax_m3", text, tools).calls[0].arguments == want
    for chunks in list(every_split(text))[::97]:
        p = StreamParser("minimax_m3", tools)
        evs = []
        for c in chunks:
            evs += p.feed(c)
        assert collect(evs + p.finish()).calls[0].arguments == want
