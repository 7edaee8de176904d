"""Golden cases for the Kimi-K2 parser, replayed at every split point and
with each chunker: the merged events must be the same for every chunking,
match the expected text / calls (with the model's call ids) / error codes,
and keep the per-call protocol."""
from __future__ import annotations

import json

import pytest

import kimi_support as ks
import support
from kimi_support import ARG_BEGIN as A
from kimi_support import CALL_BEGIN as CB
from kimi_support import CALL_END as CE
from kimi_support import SECTION_BEGIN as B
from kimi_support import SECTION_END as E
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, StreamParser, Text
from sglang_toolparse.api import parse

TOOLS = ["get_weather", "search", "noop", "list-files"]
SCHEMA_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
]


def call(cid, args_text):
    return CB + cid + A + args_text + CE


def case(id, text, exp_text, exp_calls, errors=(), tools=TOOLS):
    calls = [(n, json.dumps(a, ensure_ascii=False), i) for n, a, i in exp_calls]
    return pytest.param(text, tools, exp_text, calls, list(errors), id=id)


CASES = [
    case("template-example",
         B + call("functions.get_weather:0", '{"city": "Tokyo"}') + call("functions.get_weather:1", '{"city": "Paris"}') + E,
         "", [("get_weather", {"city": "Tokyo"}, "functions.get_weather:0"),
              ("get_weather", {"city": "Paris"}, "functions.get_weather:1")]),
    case("prose-before-and-after",
         "Let me look.\n\n" + B + call("functions.search:3", '{"q": "a\\"b", "n": 1.50, "u": "\\u00e9"}') + E + "\nDone.",
         "Let me look.\nDone.", [("search", {"q": 'a"b', "n": 1.5, "u": "é"}, "functions.search:3")]),
    case("whitespace-between-parts",
         B + "\n" + CB + " functions.search:0 \n" + A + "\n  " + '{"q" : [ ] }' + " \n" + CE + "\n" + E,
         "", [("search", {"q": []}, "functions.search:0")]),
    case("id-without-functions-prefix",
         B + call("search:7", '{"q": 1}') + E, "", [("search", {"q": 1}, "search:7")]),
    case("hyphen-and-dots-in-name",
         B + call("functions.list-files:0", "{}") + E, "", [("list-files", {}, "functions.list-files:0")]),
    case("dotted-name", B + call("functions.mcp.fs.read:2", "{}") + E, "",
         [("mcp.fs.read", {}, "functions.mcp.fs.read:2")], tools=["mcp.fs.read"]),
    case("bare-counter-single-tool",
         B + call("3", '{"q": "x"}') + E, "", [("search", {"q": "x"}, "3")], tools=["search"]),
    case("bare-counter-inferred-from-keys",
         B + call("0", '{"city": "Oslo", "unit": "c"}') + call("1", '{"q": "x", "n": 2}') + call("2", "{}") + E, "",
         [("get_weather", {"city": "Oslo", "unit": "c"}, "0"), ("search", {"q": "x", "n": 2}, "1"),
          ("get_weather", {}, "2")], tools=SCHEMA_TOOLS),
    case("bare-counter-no-tools", B + call("0", "{}") + E, "", [], ["missing_name"], tools=None),
    case("unknown-tool-dropped-others-survive",
         B + call("functions.nope:0", '{"a": 1}') + call("functions.noop:1", "{}") + E,
         "", [("noop", {}, "functions.noop:1")], ["unknown_tool"]),
    case("malformed-json-others-survive",
         B + call("functions.search:0", '{"q": tru}') + call("functions.noop:1", '{"x": [1, 2]}') + E + "after",
         "after", [("noop", {"x": [1, 2]}, "functions.noop:1")], ["json_syntax"]),
    case("cut-json-then-call-end",
         B + call("functions.search:0", '{"q": 1, ') + call("functions.noop:1", "{}") + E,
         "", [("noop", {}, "functions.noop:1")], ["json_syntax"]),
    case("not-an-object", B + call("functions.search:0", '["q"]') + call("functions.noop:1", "{}") + E,
         "", [("noop", {}, "functions.noop:1")], ["bad_markup"]),
    case("zero-args-empty", B + call("functions.noop:0", "") + E, "", [], ["bad_markup"]),
    # an id without `:IDX` names the tool it spells (issue 18.3: ids the
    # model misspells, tests/test_lossless.py)
    case("id-without-index", B + call("functions.noop", "{}") + call("functions.noop:1", "{}") + E,
         "", [("noop", {}, "functions.noop"), ("noop", {}, "functions.noop:1")], []),
    case("id-with-inner-space", B + call("functions.no op:0", "{}") + E, "", [], ["bad_name"]),
    case("head-without-argument-begin",
         B + CB + "functions.noop:0" + CE + call("functions.noop:1", "{}") + E,
         "", [("noop", {}, "functions.noop:1")], ["bad_markup"]),
    case("missing-call-end-tolerated",
         B + CB + "functions.noop:0" + A + "{}" + call("functions.search:1", '{"q": 1}') + E,
         "", [("noop", {}, "functions.noop:0"), ("search", {"q": 1}, "functions.search:1")]),
    case("junk-after-json", B + call("functions.noop:0", "{} junk") + E, "", [("noop", {}, "functions.noop:0")],
         ["trailing_content"]),
    case("token-inside-json-string",
         B + call("functions.search:0", json.dumps({"q": CE + E + "<|"})) + E + "tail",
         "tail", [("search", {"q": CE + E + "<|"}, "functions.search:0")]),
    case("bare-call-begin-without-section",
         "hi\n\n" + call("functions.noop:0", '{"k": null}') + "\nbye",
         "hi\nbye", [("noop", {"k": None}, "functions.noop:0")]),
    case("two-sections",
         "a\n\n" + B + call("functions.noop:0", "{}") + E + "\nb\n\n" + B + call("functions.search:1", '{"q": 2}') + E + "\nc",
         "a\nb\nc", [("noop", {}, "functions.noop:0"), ("search", {"q": 2}, "functions.search:1")]),
    case("stray-tokens-in-prose", "one " + E + "two " + CE + "three" + A + "!", "one two three!", [],
         ["bad_markup"] * 3),
    case("partial-token-at-end-is-text", "see <|tool_ca", "see <|tool_ca", []),
    case("lookalike-is-text", "a <|tool_call_begun|> b <| c |>", "a <|tool_call_begun|> b <| c |>", []),
    # prose between calls in the section is text (issue 18: no byte lost;
    # the blanks around it next to the calls are template formatting)
    case("text-between-calls-in-section-kept",
         B + call("functions.noop:0", "{}") + " note " + call("functions.noop:1", "{}") + E,
         "note", [("noop", {}, "functions.noop:0"), ("noop", {}, "functions.noop:1")]),
    case("unterminated-args", "x" + B + call("functions.search:0", '{"q": "abc')[: -len(CE)],
         "x", [], ["unterminated"]),
    # cut off before the call was announced: its text is text (issue 18.2)
    case("unterminated-id", B + CB + "functions.sea", B + CB + "functions.sea", [], ["unterminated"]),
    case("indented-json",
         B + call("functions.search:0", json.dumps({"q": "x", "o": {"p": [1, {"r": False}]}}, indent=4)) + E,
         "", [("search", {"q": "x", "o": {"p": [1, {"r": False}]}}, "functions.search:0")]),
    case("unicode-args",
         B + call("functions.search:0", '{"q": "中文 🙂 \\ud83d\\ude42 \\n\\t"}') + E, "",
         [("search", {"q": "中文 🙂 🙂 \n\t"}, "functions.search:0")]),
]


@pytest.mark.parametrize("text,tools,exp_text,exp_calls,errors", CASES)
def test_golden(text, tools, exp_text, exp_calls, errors):
    if tools is SCHEMA_TOOLS or (tools and isinstance(tools[0], dict)):
        run = lambda chunks: _run_api(chunks, tools)  # noqa: E731
    else:
        run = lambda chunks: support.run(ks.FMT, chunks, tools)  # noqa: E731
    one = run([text])
    support.check_stream_invariants(one)
    assert ks.summary_ids(one) == (exp_text, exp_calls, errors)
    for chunks in support.every_split(text):
        assert run(chunks) == one, chunks
    for name, chunker in support.CHUNKERS.items():
        ev = run(chunker(text))
        support.check_stream_invariants(ev)
        assert ev == one, name


def _run_api(chunks, tools):
    p = StreamParser(ks.FMT, tools)
    events = []
    for c in chunks:
        events += p.feed(c)
    return support.merge(events + p.finish())


def test_ids_on_events_and_one_shot():
    text = "ok\n\n" + B + call("functions.search:4", '{"q": 1}') + E
    p = StreamParser(ks.FMT, ["search"])
    events = support.merge(p.feed(text) + p.finish())
    assert events == [Text("ok"), CallStart(0, "search", "functions.search:4"),
                      ArgsDelta(0, '{"q": 1}'), CallEnd(0, "search", '{"q": 1}', "functions.search:4")]
    # the id is part of equality and repr; formats without ids have id None
    assert CallStart(0, "search", "functions.search:4") != CallStart(0, "search")
    assert repr(CallStart(0, "search")) == "CallStart(0, 'search')"
    assert repr(CallStart(0, "s", "functions.s:0")) == "CallStart(0, 's', 'functions.s:0')"
    assert CallStart(0, "s").id is None and CallEnd(0, "s", "{}").id is None
    assert hash(CallEnd(0, "s", "{}", "x")) == hash(CallEnd(0, "s", "{}", "x"))
    with pytest.raises(TypeError):
        CallStart(0, "s", 5)
    r = parse("kimi_k2", text, ["search"])
    assert [(c.name, c.id) for c in r.calls] == [("search", "functions.search:4")]
    q = parse("qwen25", '<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>', ["search"])
    assert q.calls[0].id is None


def test_call_announced_at_the_brace_and_args_stream():
    """CallStart comes when `{` arrives (not at the name); the arguments
    stream as they are generated."""
    p = StreamParser(ks.FMT, ["search"])
    assert p.feed(B + CB + "functions.search:0") == []
    assert p.feed(A + " ") == []
    ev = p.feed('{"q": "ab')
    assert ev == [CallStart(0, "search", "functions.search:0"), ArgsDelta(0, '{"q": "ab')]
    assert p.feed('c"') == [ArgsDelta(0, 'c"')]
    assert p.feed("}" + CE) == [ArgsDelta(0, "}"), CallEnd(0, "search", '{"q": "abc"}', "functions.search:0")]


def test_bare_counter_with_several_tools_is_held_until_it_closes():
    p = StreamParser(ks.FMT, SCHEMA_TOOLS)
    assert p.feed(B + CB + "5" + A + '{"q": "x",') == []
    assert p.feed(' "n": 1}') == [CallStart(0, "search", "5"), ArgsDelta(0, '{"q": "x", "n": 1}'),
                                  CallEnd(0, "search", '{"q": "x", "n": 1}', "5")]


def test_bare_counter_scoring_is_sglangs():
    """Score = matching keys minus unknown keys; the first best tool wins;
    tools without properties are skipped; below 0 names nothing."""
    tools = [
        {"name": "a", "parameters": {"properties": {"x": {}, "y": {}}}},
        {"name": "b", "parameters": {"properties": {"x": {}, "y": {}}}},
        {"name": "c", "parameters": {"anyOf": [{"properties": {"z": {}}}, {"properties": {"w\"q": {}}}]}},
        {"name": "d", "parameters": {}},
    ]
    def name(args):
        r = parse(ks.FMT, B + call("1", args) + E, tools)
        return r.calls[0].name if r.calls else [e.code for e in r.errors]
    assert name('{"x": 1}') == "a"
    assert name('{"z": 1, "u": 2}') == "c"
    assert name('{"w\\"q": 1}') == "c"
    assert name('{"u": 1, "v": {"x": 1, "y": 2}}') == ["missing_name"]
    assert name("{}") == "a"
    assert name('{"x": 1, "x": 2}') == "a"


def test_limits_bound_held_buffers():
    """An id beyond max_name, or held bare-counter arguments beyond
    max_buffer, drop the call with an error; later calls survive."""
    text = B + call("functions." + "n" * 5000 + ":0", "{}") + call("functions.noop:1", "{}") + E
    ev = support.run(ks.FMT, support.token_like(text), ["search", "noop"], max_name=1000)
    support.check_stream_invariants(ev)
    assert ks.summary_ids(ev)[1:] == ([("noop", "{}", "functions.noop:1")], ["bad_name"])
    big = B + call("0", '{"q": "%s"}' % ("x" * 5000)) + call("functions.noop:1", "{}") + E
    for chunks in ([big], support.token_like(big)):
        p = StreamParser(ks.FMT, SCHEMA_TOOLS, max_buffer=1000)
        ev = []
        for c in chunks:
            ev += p.feed(c)
        ev = support.merge(ev + p.finish())
        support.check_stream_invariants(ev)
        r = ks.summary_ids(ev)
        assert r[1:] == ([("noop", "{}", "functions.noop:1")], ["buffer_limit"])
        assert [e.offset for e in ev if hasattr(e, "code")] == [len((B + CB + "0" + A).encode())]


def test_properties_misuse_is_a_clear_error():
    from sglang_toolparse import _core

    with pytest.raises(TypeError):
        _core.StreamParser(ks.FMT, ["a", "b"], properties=[("a", ["x"])])
    with pytest.raises(TypeError):
        _core.StreamParser(ks.FMT, ["a", "b"], properties={"a": [1]})
    p = _core.StreamParser(ks.FMT, ["a", "b"], properties={"b": ["x"], "zzz": ["y"]})
    assert [e.name for e in p.feed(B + call("0", '{"x": 1}') + E) + p.finish() if isinstance(e, CallEnd)] == ["b"]
