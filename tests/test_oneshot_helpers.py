"""The core's helpers for the one-shot path (issue 24): find_token is
str.find, and SlotModel builds the state the validating constructor
builds (result_models uses it only after checking that on a sample)."""
from __future__ import annotations

import random

import pytest

from sglang_toolparse import _core

from support import in_threads


def _texts():
    rng = random.Random(24)
    alphabet = "<|ab\u00e9x\n"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        token = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
        yield text, token, rng.randint(0, 16)


def test_find_token_is_str_find():
    for text, token, start in _texts():
        assert _core.find_token(text, token, start) == text.find(token, start), (text, token, start)


@pytest.mark.parametrize("text,token", [
    ("prose \u4e00 <|tool_call_begin|>", "<|tool_call"),  # a text of two bytes a character
    ("<|tool_call_begin|>", "<\uff5cDSML\uff5c"),  # a token of two bytes a character
    ("<" * 40 + "<|x", "<|x"),  # the first character everywhere
    ("ab<|", "<|"), ("ab<", "<|"), ("", "<|"), ("x", ""),
])
def test_find_token_edges(text, token):
    for start in range(len(text) + 2):
        assert _core.find_token(text, token, start) == text.find(token, start)


def test_find_token_misuse():
    with pytest.raises(ValueError):
        _core.find_token("abc", "b", -1)
    with pytest.raises(TypeError):
        _core.find_token(b"abc", "b")
    with pytest.raises(TypeError):
        _core.find_token("abc", None)


class _Slots:
    __slots__ = ("__dict__", "fields", "extra", "private")


_DESCRIPTORS = tuple(_Slots.__dict__[k] for k in ("__dict__", "fields", "extra", "private"))


def test_slot_model_sets_the_four_slots():
    make = _core.SlotModel(_Slots, _DESCRIPTORS, ("a", "b"))
    obj = make(1, "x")
    assert type(obj) is _Slots
    assert obj.__dict__ == {"a": 1, "b": "x"}
    assert obj.fields == {"a", "b"} and type(obj.fields) is set
    assert obj.extra is None and obj.private is None
    other = make(2, None)
    assert other.fields is not obj.fields  # a new set for each object
    assert other.__dict__ is not obj.__dict__ and other.__dict__ == {"a": 2, "b": None}
    assert obj.__dict__ == {"a": 1, "b": "x"} and list(obj.__dict__) == ["a", "b"]


class _SlotsNew(_Slots):
    __slots__ = ()
    made = 0

    def __new__(cls, *args):
        _SlotsNew.made += 1
        return super().__new__(cls)


def test_slot_model_allocates_as_object_new_would():
    """A class with object's own __new__ is allocated without it (its
    __dict__ is set at once): tracked by the GC as object.__new__ leaves it;
    a class with a __new__ of its own gets that __new__ called."""
    import gc

    obj = _core.SlotModel(_Slots, _DESCRIPTORS, ("a", "b"))(1, "x")
    assert gc.is_tracked(obj) and obj.__dict__ == {"a": 1, "b": "x"} and obj.fields == {"a", "b"}
    before = _SlotsNew.made
    other = _core.SlotModel(_SlotsNew, _DESCRIPTORS, ("a", "b"))(2, "y")
    assert _SlotsNew.made == before + 1 and type(other) is _SlotsNew
    assert other.__dict__ == {"a": 2, "b": "y"} and other.extra is None and gc.is_tracked(other)


def test_slot_model_misuse():
    with pytest.raises(TypeError):
        _core.SlotModel(object(), _DESCRIPTORS, ("a",))
    with pytest.raises(ValueError):
        _core.SlotModel(_Slots, _DESCRIPTORS[:3], ("a",))
    with pytest.raises(TypeError):
        _core.SlotModel(_Slots, (1, 2, 3, 4), ("a",))
    with pytest.raises(TypeError):
        _core.SlotModel(_Slots, _DESCRIPTORS, ("a", 1))
    with pytest.raises(ValueError):
        _core.SlotModel(_Slots, _DESCRIPTORS, ("a", "a"))
    make = _core.SlotModel(_Slots, _DESCRIPTORS, ("a", "b"))
    with pytest.raises(TypeError):
        make(1)


def test_result_models_match_the_validating_constructors():
    pytest.importorskip("sglang")
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem

    from sglang_toolparse import result_models as rm

    if not rm.FAST:
        pytest.skip("result_models validates (the installed pydantic/SGLang differ from what it checks)")
    assert type(rm.tool_call_item) is _core.SlotModel
    item = rm.tool_call_item(2, None, '{"a": 1}')
    ref = ToolCallItem(tool_index=2, name=None, parameters='{"a": 1}')
    assert rm._same(item, ref)
    res = rm.parse_result("hi", [item])
    assert rm._same(res, StreamingParseResult(normal_text="hi", calls=[ref]))
    item.parameters += "x"  # assignment works as on a validated model
    assert item.parameters == '{"a": 1}x' and item.model_dump()["parameters"] == '{"a": 1}x'


class _Fn:
    def __init__(self, name):
        self.name = name


class _Tool:
    def __init__(self, name):
        self.function = _Fn(name)


def test_plain_result_is_declares_all_then_the_items():
    """plain_result folds detect_and_parse's common case in one call: the
    result when declares_all would say yes for a list of tool models, None
    (the general path) for anything it does not decide."""
    from sglang_toolparse.per_request import declares_all

    pair = _core.SlotModel(_Slots, _DESCRIPTORS, ("text", "items"))
    triple = _core.SlotModel(_Slots, _DESCRIPTORS, ("i", "n", "p"))
    tools = [_Tool("get"), _Tool("put")]
    calls = [(0, "get", '{"a": 1}', "functions.get:0"), (1, "put", "{}", None)]
    got = _core.plain_result(("hi", calls, True), tools, triple, pair)
    assert declares_all("kimi_k2", tools, calls)
    assert got.__dict__["text"] == "hi"
    assert [x.__dict__ for x in got.__dict__["items"]] == [{"i": 0, "n": "get", "p": '{"a": 1}'},
                                                           {"i": 1, "n": "put", "p": "{}"}]
    # any callables: called with the values
    assert _core.plain_result(("t", calls[:1], True), tools, lambda *v: v, lambda *v: v) == \
        ("t", [(0, "get", '{"a": 1}')])
    undecided = [
        (("hi", [(0, "nope", "{}", None)], True), tools),  # not declared
        (("hi", [(0, "get", "{}", "3")], True), tools),  # a bare counter id: inferred from the tools
        (("hi", calls, True), tuple(tools)),  # not a list
        (("hi", calls, True), [{"function": {"name": "get"}}, _Tool("put")]),  # a dict
        (("hi", calls, True), [_Tool("")] + tools),  # an unusable tool before the call's
        (("hi", calls, True), [object()] + tools),
        (("hi", calls * 2, True), tools + [_Tool("")]),  # more than two calls: every tool read
        (("hi", [], False), tools),  # no call
    ]
    for found, tl in undecided:
        assert _core.plain_result(found, tl, triple, pair) is None, (found, tl)
    # one or two calls: the list is read up to the tools that name them, as declares_all reads it
    for tl in (tools + [_Tool("")], tools + [object()], tools + [{"function": {"name": "x"}}]):
        assert declares_all("kimi_k2", tl, calls)
        assert _core.plain_result(("hi", calls, True), tl, lambda *v: v, lambda *v: v) == \
            ("hi", [(0, "get", '{"a": 1}'), (1, "put", "{}")])


def _plain_cases():
    from format_table import seed_responses

    for fmt in ("kimi_k2", "qwen25", "deepseekv31", "llama3"):
        for text in list(seed_responses(fmt))[:6] + ["plain prose", "<tool_call>\n{\"name\": \"f\", \"argu"]:
            yield fmt, text


def test_one_shot_parser_is_reused_safely():
    """parse_plain and starts_call parse with one kept parser (reset, its
    memory kept): the same answers one after another, across formats, after
    a parse that stopped early, from a parse started while another holds it
    (a finalizer run by an allocation inside a parse), and from threads."""
    import gc
    import threading

    cases = list(_plain_cases())
    want = [(_core.StreamParser(fmt, None).parse_all(text), fmt, text) for fmt, text in cases]
    first = [(_core.parse_plain(fmt, text), _core.starts_call(fmt, text)) for fmt, text in cases]
    for _ in range(2):
        assert [(_core.parse_plain(fmt, text), _core.starts_call(fmt, text)) for fmt, text in cases] == first
    for (plain, _), (events, fmt, text) in zip(first, want):
        if plain is not None:
            assert plain[0] == "".join(ev.text for ev in events if type(ev) is _core.Text), (fmt, text)

    inner = []

    class Nested:
        def __del__(self):
            inner.append([_core.parse_plain(fmt, text) for fmt, text in cases])
            if len(inner) < 40:  # more garbage: the next collection runs another one
                b = Nested()
                b.me = b

    old = gc.get_threshold()
    gc.set_threshold(1)  # a collection (and a finalizer) at almost any allocation inside a parse
    try:
        for _ in range(3):
            a = Nested()
            a.me = a  # a cycle: freed by the collector, mid-parse
            del a
            assert [_core.parse_plain(fmt, text) for fmt, text in cases] == [p for p, _ in first]
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert len(inner) >= 10 and all(got == [p for p, _ in first] for got in inner)

    def step():
        assert [_core.parse_plain(fmt, text) for fmt, text in cases] == [p for p, _ in first]

    assert in_threads(step, 20) == []


def test_tool_entries():
    """tool_entries: per_request's one pass over a request's tool models
    (names and schemas), None for anything it does not read as it is."""
    class Fn:
        def __init__(self, name, parameters=None):
            self.name, self.parameters = name, parameters

    class T:
        def __init__(self, *a):
            self.function = Fn(*a)

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert _core.tool_entries([T("f", schema), T("g")]) == (("f", "g"), [("f", schema), ("g", None)])
    assert _core.tool_entries([]) == ((), [])
    for bad in ((T("f"),), [T("f"), T("f")], [T("")], [T(None)], [T("f", [1])], [{"function": {"name": "f"}}],
                ["f"], [object()], None):
        assert _core.tool_entries(bad) is None, bad


def test_same_content_is_strict():
    """same_content: what equal marshal bytes would say (types exact, dict
    order kept, floats bit for bit), without writing them."""
    import marshal

    a = [("f", {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "x": [1, 2.5, None, True],
                                                        "big": 10 ** 30, "s": "\u00e9"}}}), ("g", None)]
    assert _core.same_content(a, marshal.loads(marshal.dumps(a, 4))) and _core.same_content(a, a)
    for path, other in ((("minimum",), True), (("minimum",), 1.0), (("x", 1), 2.50000001), (("big",), 10 ** 30 + 1),
                        (("s",), "e"), (("x", 2), 0), (("x", 3), 1)):
        b = marshal.loads(marshal.dumps(a, 4))
        node = b[0][1]["properties"]["a"]
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = other
        assert not _core.same_content(a, b), (path, other)
        assert marshal.dumps(a, 4) != marshal.dumps(b, 4)
    assert not _core.same_content({"a": 1, "b": 2}, {"b": 2, "a": 1})  # order: as marshal
    assert not _core.same_content(0.0, -0.0) and _core.same_content(float("nan"), float("nan"))
    assert not _core.same_content([1], (1,)) and not _core.same_content("a", type("S", (str,), {})("a"))
    # strings: equal content in separate objects of each width, and unequal ones of one length
    for x, y in (("ab", "ac"), ("\u00e9a", "\u00e9b"), ("\u20ac1", "\u20ac2"), ("\U0001F600x", "\U0001F600y"), ("a", "")):
        assert _core.same_content("".join(list(x)), x) and not _core.same_content(x, y) and not _core.same_content(y, x)
    o = object()
    assert not _core.same_content(o, o)  # not JSON-like content
    d, e = {}, {}
    d["x"], e["x"] = d, e
    assert not _core.same_content(d, e)  # nesting past the limit: not the same (no recursion error)


def test_parse_typed_is_parse_all_with_the_tools_folded():
    """parse_typed: the schema-typed formats' parse with compiled tools,
    folded as parse_plain folds (text, complete calls), or None where the
    events say more (errors, undeclared tools, values the host types)."""
    from format_table import seed_responses

    from sglang_toolparse.api import SCHEMA_TYPED_FORMATS, compiled_tools

    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "n": {"type": "integer"}, "q": {"type": "string"}}}}}
        for n in ("get_weather", "search", "lookup")]
    folded = 0
    for fmt in sorted(SCHEMA_TYPED_FORMATS):
        compiled = compiled_tools(fmt, tools)
        for text in list(seed_responses(fmt))[:8] + ["plain prose"]:
            for forward in (False, True):
                got = _core.parse_typed(fmt, text, compiled, forward)
                events = _core.StreamParser(fmt, (), compiled=compiled, forward_unknown=forward).parse_all(text)
                if got is None:
                    continue
                folded += 1
                assert all(type(e) in (_core.Text, _core.CallEnd, _core.Reasoning) for e in events), (fmt, text)
                assert got[0] == "".join(e.text for e in events if type(e) is _core.Text), (fmt, text)
                assert got[1] == [(e.index, e.name, e.arguments, e.id) for e in events if type(e) is _core.CallEnd]
    assert folded > 20
    with pytest.raises(TypeError):
        _core.parse_typed("glm45", "x", None)
    with pytest.raises(ValueError):
        _core.parse_typed("nope", "x", compiled_tools("glm45", tools))
