"""Golden cases for MiniMax-M3 (minimax_m3: namespaced tag-named XML, the
first row of csrc/fmt_nsxml.c; nested values typed in C by
csrc/fmt_nsxml_value.c), each replayed with every chunker and
cut at every split point: the merged events must be identical. Responses are
written as M3's chat template writes them (tests/format_table.py
render_minimax_m3: the template's to_xml) unless the case says otherwise.
Values are typed by the tool schema (SCHEMA)."""
import json

import pytest

from sglang_toolparse import ArgsDelta, CallStart, StreamParser, Text
from sglang_toolparse.minimax_m3_types import value as m3_value
from format_table import M3_NS as NS
from format_table import minimax_m3_block, render_minimax_m3
from golden import call, err, golden_tests, replay_splits
from support import run

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "number"},
        "hot": {"type": "boolean"},
        "maybe": {"type": ["string", "null"]},
        "count": {"type": ["integer", "null"]},
        "loc": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "pts": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        "any": {},
        "content": {"type": "string"},
    },
}
TOOLS = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in ("get_weather", "noop")]
OPEN, CLOSE = NS + "<tool_call>", NS + "</tool_call>"


def block(*calls):
    return minimax_m3_block([render_minimax_m3(n, a) for n, a in calls])


def inv(name, body):
    return NS + '<invoke name="%s">' % name + body + NS + "</invoke>"


def el(k, v):
    return NS + "<%s>%s" % (k, v) + NS + "</%s>" % k


ALL = {"city": "Paris", "days": 3, "ratio": 0.5, "hot": True, "loc": {"city": "NYC", "zip": 10001},
       "tags": ["red", "blue"], "pts": [{"x": 1.5}, {"x": 2}], "pair": [7, "seven"], "any": {"a": ["1", True]}}
_trunc = "Ok." + OPEN + "\n" + NS + '<invoke name="noop">' + NS + "<content>part"
_cut = OPEN + "\n" + NS + '<invoke name="noop">' + NS + "<cont"

GOLDEN = {
    "template_every_kind": ("Checking." + block(("get_weather", ALL)),
                            [Text("Checking.")] + call(0, "get_weather", json.dumps(ALL))),
    "two_invokes_one_block": (block(("get_weather", {"city": "A"}), ("noop", {})),
                              call(0, "get_weather", '{"city": "A"}') + call(1, "noop", "{}")),
    "two_blocks": (block(("noop", {})) + "\n" + block(("noop", {"days": 1})),
                   call(0, "noop", "{}") + call(1, "noop", '{"days": 1}')),
    "string_is_raw_text": (block(("noop", {"content": 'l1\n  "q" \\ <x> {"a": 1} \t'})),
                           call(0, "noop", json.dumps({"content": 'l1\n  "q" \\ <x> {"a": 1} \t'}))),
    "string_null_stays_a_string": (block(("noop", {"maybe": "null", "city": "123"})),
                                   call(0, "noop", '{"maybe": "null", "city": "123"}')),
    "nullable_integer_null": (inv("noop", el("count", "null")).join([OPEN, CLOSE]), call(0, "noop", '{"count": null}')),
    "scalars_by_schema": (OPEN + inv("noop", el("days", " 7 ") + el("ratio", "2.0") + el("hot", "yes")
                                     + el("count", "x")) + CLOSE,
                          call(0, "noop", '{"days": 7, "ratio": 2, "hot": true, "count": "x"}')),
    "not_finite_number_is_text": (OPEN + inv("noop", el("ratio", "inf")) + CLOSE, call(0, "noop", '{"ratio": "inf"}')),
    "untyped_literals_and_items": (OPEN + inv("noop", el("any", el("item", "1") + el("item", "true"))
                                              + el("zz", "null") + el("yy", "5")) + CLOSE,
                                   call(0, "noop", '{"any": ["1", true], "zz": null, "yy": "5"}')),
    "repeated_key_is_a_list": (OPEN + inv("noop", el("any", el("a", "1") + el("a", "2") + el("b", ""))) + CLOSE,
                               call(0, "noop", '{"any": {"a": ["1", "2"], "b": {}}}')),
    "nested_key_of_the_same_name": (OPEN + inv("noop", el("any", el("any", "x"))) + CLOSE,
                                    call(0, "noop", '{"any": {"any": "x"}}')),
    "empty_containers": (OPEN + inv("noop", el("tags", "") + el("loc", "") + el("any", "")) + CLOSE,
                         call(0, "noop", '{"tags": [], "loc": {}, "any": {}}')),
    "container_as_json_text": (OPEN + inv("noop", el("tags", '["a", "b"]') + el("loc", "oops")) + CLOSE,
                               call(0, "noop", '{"tags": ["a", "b"], "loc": "oops"}')),
    "blanks_after_ns_read": (OPEN + "\n" + NS + ' \n<invoke name="noop">' + NS + " <days>4" + NS + "\t</days>"
                             + NS + "\n</invoke>\n" + CLOSE, call(0, "noop", '{"days": 4}')),
    "ns_inside_a_string_is_content": (OPEN + inv("noop", el("content", "a" + NS + "b" + NS + "<i>c")) + CLOSE,
                                      call(0, "noop", json.dumps({"content": "a" + NS + "b" + NS + "<i>c"}))),
    "unicode": (block(("noop", {"city": "caf\u00e9 \U0001F600", "any": {"k\u4e2d": "\u4e2d"}})),
                call(0, "noop", '{"city": "caf\u00e9 \U0001F600", "any": {"k\u4e2d": "\u4e2d"}}')),
    "unknown_tool_dropped_next_kept": (block(("rm_rf", {"p": "/"}), ("noop", {})),
                                       [err(None, "unknown_tool", 25, "rm_rf")] + call(0, "noop", "{}")),
    "truncated_inside_string": (_trunc, [Text("Ok."), CallStart(0, "noop"), ArgsDelta(0, '{"content": "part'),
                                         err(0, "unterminated", len(_trunc))]),
    "truncated_in_key_tag_is_text": (_cut, [Text(_cut), err(None, "unterminated", len(_cut))]),
    "missing_value_and_invoke_close": (OPEN + NS + '<invoke name="noop">' + NS + "<any>" + NS + "<a>1" + CLOSE + "z",
                                       call(0, "noop", '{"any": {"a": "1"}}') + [Text("z")]),
    "opener_without_invoke_is_text": ("Use " + OPEN + " here.", [Text("Use " + OPEN + " here.")]),
    "lone_ns_is_text": ("a " + NS + "b " + NS, [Text("a " + NS + "b " + NS)]),
    "prose_after_the_block_kept": (block(("noop", {})) + " Done.", call(0, "noop", "{}") + [Text(" Done.")]),
    "empty_name": (OPEN + NS + '<invoke name="">' + NS + "</invoke>" + CLOSE + "t", [err(None, "bad_name", 24),
                                                                                     Text("t")]),
}
test_golden_every_chunker, test_golden_every_split = golden_tests("minimax_m3", GOLDEN, TOOLS)


def test_string_streams_before_its_closing_tag():
    """A long string value reaches the client while it is generated: all
    but the bytes that could still be its closing tag."""
    p = StreamParser("minimax_m3", TOOLS)
    head = OPEN + NS + '<invoke name="noop">' + NS + "<content>"
    body = "x" * 5000 + NS[:5]
    sent = "".join(e.delta for e in p.feed(head) + p.feed(body) if isinstance(e, ArgsDelta))
    assert sent == '{"content": "' + "x" * 5000


def test_nested_value_held_until_it_closes():
    p = StreamParser("minimax_m3", TOOLS)
    head = OPEN + NS + '<invoke name="noop">' + NS + "<loc>" + NS + "<city>A" + NS + "</city>"
    assert "".join(e.delta for e in p.feed(head) if isinstance(e, ArgsDelta)) == '{"loc": '
    rest = p.feed(NS + "</loc>" + NS + "</invoke>")
    assert "".join(e.delta for e in rest if isinstance(e, ArgsDelta)) == '{"city": "A"}}'


def test_no_tools_every_name_and_untyped_values():
    text = block(("anything", {"a": {"b": ["1", "x"]}, "c": "false"}))
    assert run("minimax_m3", [text]) == call(0, "anything", '{"a": {"b": ["1", "x"]}, "c": false}')


def test_value_over_the_buffer_limit_same_at_every_split():
    text = OPEN + inv("noop", el("loc", el("city", "x" * 100))) + CLOSE + "t"
    want = run("minimax_m3", [text], TOOLS, max_buffer=64)
    assert [type(e).__name__ for e in want] == ["CallStart", "ArgsDelta", "ParseError", "Text"]
    assert want[1].delta == '{"loc": ' and want[2].code == "buffer_limit" and want[3].text == "t"
    replay_splits("minimax_m3", text, want, TOOLS, max_buffer=64)


@pytest.mark.parametrize("raw,schema,want", [
    (NS + "<item>1" + NS + "</item>" + NS + "<item>b" + NS + "</item>", SCHEMA["properties"]["pair"], [1, "b"]),
    (NS + "<item>" + NS + "<x>1.5" + NS + "</x>" + NS + "</item>", SCHEMA["properties"]["pts"], [{"x": 1.5}]),
    (NS + "<item>1" + NS + "</item>" + NS + "<k>2" + NS + "</k>", None, {"item": "1", "k": "2"}),
    (NS + "<a>1" + NS + "</b>" + NS + "</a>", None, {"a": "1"}),  # a stray closing tag is ignored
    ("  ", {"type": "integer"}, "  "),
    ("1e400", {"type": "number"}, "1e400"),
])
def test_value_builder(raw, schema, want):
    assert m3_value(raw, schema) == want


# Values typed in C (csrc/fmt_nsxml_value.c, the minimax_m3 row of
# csrc/tp_type_rules.c), each shape at every split: nested values, numbers
# as Python's int()/float() read them (Unicode digits and spaces,
# underscores; an integer past a double keeps its digits, a float past it
# is its text), booleans, nulls, strings that look like numbers or literals,
# undeclared parameters, a repeated key onto a list, JSON texts (one with a
# repeated key is json.loads'ed by the host).
def _call(name, args):
    return OPEN + inv(name, "".join(el(k, v) for k, v in args)) + CLOSE


TYPED = {
    "typed_nested_by_schema": (
        _call("noop", [("loc", el("city", "007") + el("zip", " 10_001 ")),
                       ("pts", el("item", el("x", "1e400")) + el("item", el("x", "2.50"))),
                       ("pair", el("item", "0012") + el("item", "3") + el("item", "4"))]),
        call(0, "noop", '{"loc": {"city": "007", "zip": 10001}, "pts": [{"x": "1e400"}, {"x": 2.5}], '
                        '"pair": [12, "3", "4"]}')),
    "typed_numbers_past_a_double": (
        _call("noop", [("days", "123456789012345678901234567890"), ("ratio", "12345678901234567890"),
                       ("count", "-0"), ("loc", el("zip", "9" * 40))]),
        call(0, "noop", '{"days": 123456789012345678901234567890, "ratio": 12345678901234567168, "count": 0, '
                        '"loc": {"zip": %s}}' % ("9" * 40))),
    "typed_unicode_digits_and_spaces": (
        _call("noop", [("days", "\u0661\u0662"), ("hot", "\u3000TRUE\n"), ("ratio", "\uff11.5"),
                       ("count", "1__0")]),
        call(0, "noop", '{"days": 12, "hot": true, "ratio": 1.5, "count": "1__0"}')),
    "typed_booleans": (
        _call("noop", [("hot", "off"), ("any", el("a", "true") + el("b", " false ") + el("c", "True")),
                       ("pts", el("item", el("x", "no")))]),
        call(0, "noop", '{"hot": false, "any": {"a": true, "b": false, "c": "True"}, "pts": [{"x": "no"}]}')),
    "typed_nulls": (
        _call("noop", [("count", "NULL"), ("maybe", "null"), ("any", " null "), ("days", "null"),
                       ("pair", el("item", "nil"))]),
        call(0, "noop", '{"count": null, "maybe": "null", "any": null, "days": "null", "pair": ["nil"]}')),
    "typed_strings_that_look_like_numbers": (
        _call("noop", [("city", "12"), ("loc", el("city", "1e400") + el("city", "true")), ("tags", el("item", "5"))]),
        call(0, "noop", '{"city": "12", "loc": {"city": ["1e400", "true"]}, "tags": ["5"]}')),
    "typed_undeclared_parameters": (
        _call("noop", [("zz", "5"), ("qq", "\u2003true"), ("ll", el("item", "1") + el("item", "x")),
                       ("oo", el("k", el("item", "1")) + el("k", "2") + el("j", ""))]),
        call(0, "noop", '{"zz": "5", "qq": true, "ll": ["1", "x"], "oo": {"k": ["1", "2"], "j": {}}}')),
    "typed_json_texts": (
        _call("noop", [("loc", '{"a": 1, "a": 2}'), ("tags", "[1e400]"), ("pts", " [1.0, -0] "), ("any", "[1]")]),
        call(0, "noop", '{"loc": {"a": 2}, "tags": "[1e400]", "pts": [1.0, 0], "any": "[1]"}')),
}
test_typed_golden_every_chunker, test_typed_golden_every_split = golden_tests("minimax_m3", TYPED, TOOLS)


def test_recursive_schema_types_every_level():
    node = {"type": "object", "properties": {"n": {"type": "integer"}}}
    node["properties"]["next"] = node  # a schema graph with a cycle (read once per node)
    raw = el("n", "1") + el("next", el("n", "2") + el("next", el("n", "x")))
    assert m3_value(raw, node) == {"n": 1, "next": {"n": 2, "next": {"n": "x"}}}


def test_deeper_than_max_depth_is_its_text():
    inner = el("a", el("a", el("a", el("a", "1"))))
    text = OPEN + inv("noop", el("any", inner)) + CLOSE
    got = run("minimax_m3", [text], TOOLS, max_depth=3)
    assert "".join(e.delta for e in got if isinstance(e, ArgsDelta)) == json.dumps({"any": inner})
    typed = run("minimax_m3", [text], TOOLS)  # the default depth types it
    assert "".join(e.delta for e in typed if isinstance(e, ArgsDelta)) == '{"any": {"a": {"a": {"a": {"a": "1"}}}}}'


def test_malformed_schema_table_refused():
    from sglang_toolparse import _core
    from sglang_toolparse.minimax_m3_types import schema_blob
    good = schema_blob([("f", SCHEMA)])
    for bad in (b"", good[:-1], good + b"\0", b"\xff\xff\xff\x7f" + good[4:]):
        with pytest.raises(ValueError):
            _core.CompiledTools([("f", 0, [])], (), None, bad)
        with pytest.raises(ValueError):
            _core.nsxml_value(bad, -1, "x", NS)
    assert _core.nsxml_value(good, 0, el("days", "3"), NS) == '{"days": 3}'
