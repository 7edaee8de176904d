"""Golden cases for the DeepSeek parsers, replayed at every split point and
with each chunker: the merged events must be the same for every chunking,
match the expected text / calls / error codes, and keep the per-call
protocol."""
from __future__ import annotations

import json

import pytest

import ds_support as ds
import support
from ds_support import CALL_BEGIN as CB
from ds_support import CALL_END as CE
from ds_support import CALLS_BEGIN as B
from ds_support import CALLS_END as E
from ds_support import SEP as S

TOOLS = ["get_weather", "search", "noop"]


def case(id, fmt, text, exp_text, exp_calls, errors=(), tools=TOOLS):
    return pytest.param(fmt, text, tools, exp_text, [(n, json.dumps(a, ensure_ascii=False) if not isinstance(a, str) else a)
                                                     for n, a in exp_calls], list(errors), id="%s-%s" % (fmt, id))


def v3call(name, args_text):
    return CB + "function" + S + name + "\n```json\n" + args_text + "\n```" + CE


V3 = [
    case("doc-example", "deepseekv3",
         B + v3call("get_weather", '{"location": "Tokyo"}') + "\n" + v3call("get_weather", '{"location": "Paris"}') + E,
         "", [("get_weather", {"location": "Tokyo"}), ("get_weather", {"location": "Paris"})]),
    case("prose-around", "deepseekv3",
         "Let me look.\n\n" + B + v3call("search", '{"q": "a\\"b", "n": 1.50, "u": "\\u00e9"}') + E + "\nDone.",
         "Let me look.\nDone.", [("search", {"q": 'a"b', "n": 1.5, "u": "é"})]),
    case("unknown-tool-dropped", "deepseekv3",
         B + v3call("nope", '{"a": 1}') + "\n" + v3call("noop", "{}") + E,
         "", [("noop", {})], ["unknown_tool"]),
    case("malformed-json-others-survive", "deepseekv3",
         B + v3call("search", '{"q": tru}') + "\n" + v3call("noop", '{"x": [1, 2]}') + E + "after",
         "after", [("noop", {"x": [1, 2]})], ["json_syntax"]),
    # end tokens that close nothing: markup of no call, each an error whose
    # dropped text is the token (the spaces around them stay prose)
    case("stray-end-tokens-in-prose", "deepseekv3",
         "one " + E + "two " + CE + "three", "one two three", [], ["bad_markup", "bad_markup"]),
    case("partial-token-at-end-is-text", "deepseekv3", "see <｜tool▁ca", "see <｜tool▁ca", []),
    case("code-fences-in-prose-kept", "deepseekv3",
         "```python\nprint(1)\n```", "```python\nprint(1)\n```", []),
    case("no-fence-tolerated", "deepseekv3",
         B + CB + "function" + S + "noop\n{\"a\": 1}" + CE + E, "", [("noop", {"a": 1})]),
    case("fence-without-json-tolerated", "deepseekv3",
         B + CB + "function" + S + "noop\n```\n{\"a\": 1}\n```" + CE + E, "", [("noop", {"a": 1})]),
    case("bad-fence", "deepseekv3",
         B + CB + "function" + S + "noop\n```jsn\n{}\n```" + CE + CB + "function" + S + "noop\n```json\n{}\n```" + CE + E,
         "", [("noop", {})], ["bad_markup"]),
    case("junk-after-fence", "deepseekv3",
         B + CB + "function" + S + "noop\n```json\n{}\n``` junk" + CE + E, "", [("noop", {})],
         ["trailing_content"]),
    case("unterminated", "deepseekv3",
         "x" + B + CB + "function" + S + "search\n```json\n{\"q\": \"abc", "x", [], ["unterminated"]),
    case("bare-call-begin", "deepseekv3", "hi\n" + v3call("noop", '{"k": null}') + "\nbye",
         "hi\nbye", [("noop", {"k": None})]),
    case("indented-json", "deepseekv3",
         B + v3call("search", json.dumps({"q": "x", "o": {"p": [1, {"r": False}]}}, indent=4)) + E,
         "", [("search", {"q": "x", "o": {"p": [1, {"r": False}]}})]),
    case("two-blocks", "deepseekv3",
         "a\n\n" + B + v3call("noop", "{}") + E + "\nb\n\n" + B + v3call("search", '{"q": 2}') + E + "\nc",
         "a\nb\nc", [("noop", {}), ("search", {"q": 2})]),
]

V31 = [
    case("doc-example", "deepseekv31",
         B + CB + 'get_weather' + S + '{"location": "Tokyo"}' + CE + CB + "get_weather" + S + '{"location": "Paris"}' + CE + E,
         "", [("get_weather", {"location": "Tokyo"}), ("get_weather", {"location": "Paris"})]),
    case("token-inside-json-string", "deepseekv31",
         B + CB + "search" + S + json.dumps({"q": CE + E + "```"}) + CE + E + "tail",
         "tail", [("search", {"q": CE + E + "```"})]),
    case("whitespace-around-json", "deepseekv31",
         "Sure.\n\n" + B + "\n" + CB + "search" + S + '\n {"q" : [ ] }\n' + CE + "\n" + E,
         "Sure.", [("search", {"q": []})]),
    case("unknown-and-malformed", "deepseekv31",
         B + CB + "nope" + S + "{}" + CE + CB + "search" + S + "{oops}" + CE + CB + "noop" + S + "{}" + CE + E,
         "", [("noop", {})], ["unknown_tool", "json_syntax"]),
    case("missing-call-end-tolerated", "deepseekv31",
         B + CB + "noop" + S + "{}" + CB + "search" + S + '{"q": 1}' + CE + E, "",
         [("noop", {}), ("search", {"q": 1})]),
    case("junk-after-json", "deepseekv31",
         B + CB + "noop" + S + "{} junk" + CE + E, "", [("noop", {})], ["trailing_content"]),
    case("head-without-sep", "deepseekv31",
         B + CB + "noop" + CE + CB + "noop" + S + "{}" + CE + E, "", [("noop", {})], ["bad_markup"]),
    # cut off before the call was announced: its text is text (issue 18.2)
    case("unterminated-name", "deepseekv31", B + CB + "noo", B + CB + "noo", [], ["unterminated"]),
    case("unicode-args", "deepseekv31",
         B + CB + "search" + S + '{"q": "中文 🙂 \\ud83d\\ude42 \\n\\t"}' + CE + E, "",
         [("search", {"q": "中文 🙂 🙂 \n\t"})]),
]


def dsml_cases(fmt):
    t = ds.Tags(fmt)

    def p(name, value, string=True):
        return '%s name="%s" string="%s">%s%s' % (t.param, name, "true" if string else "false", value, t.param_end)

    def inv(name, body):
        return '%s name="%s">\n%s\n%s' % (t.invoke, name, body, t.invoke_end)

    def block(*invokes):
        return t.bot + "\n" + "\n".join(invokes) + "\n" + t.eot

    return [
        case("params", fmt,
             "Let me check.\n\n" + block(inv("get_weather", p("city", "San Francisco") + "\n" + p("days", "3", False))),
             "Let me check.", [("get_weather", {"city": "San Francisco", "days": 3})]),
        case("string-values-raw-and-escaped", fmt,
             block(inv("search", p("q", '  say "hi"\\ \n\ttab\x01 \u3000') + p("k\\ey", "\u3000x y\u2028"))),
             "", [("search", {"q": '  say "hi"\\ \n\ttab\x01 \u3000', "k\\ey": "\u3000x y\u2028"})]),
        case("non-string-values", fmt,
             block(inv("search", "\n".join([
                 p("a", ' {"x": [1, 2.50, -0, 1E2]} ', False), p("b", "true", False), p("c", "null", False),
                 p("d", "hello world", False), p("e", "NaN", False), p("f", "{bad", False),
                 p("g", "-Infinity", False), p("h", "", False), p("i", '"quoted"', False),
             ]))),
             "", [("search", {"a": {"x": [1, 2.5, 0, 100.0]}, "b": True, "c": None, "d": "hello world",
                              "e": "NaN", "f": "{bad", "g": "-Infinity", "h": "", "i": "quoted"})]),
        case("direct-json-body", fmt,
             block(inv("search", '{ "q": "San Francisco", "n": [1, 2] }')), "",
             [("search", {"q": "San Francisco", "n": [1, 2]})]),
        case("self-closing-and-empty", fmt,
             block('%s name="noop"/>' % t.invoke, inv("noop", ""), '%s name="noop" />' % t.invoke), "",
             [("noop", {}), ("noop", {}), ("noop", {})]),
        case("prose-between-blocks-and-after", fmt,
             "a\n\n" + block(inv("noop", "")) + "\nb\n\n" + block(inv("search", p("q", "x"))) + "\nc",
             "a\nb\nc", [("noop", {}), ("search", {"q": "x"})]),
        case("unknown-tool", fmt,
             block(inv("nope", p("q", "x")), inv("search", p("q", "y"))), "",
             [("search", {"q": "y"})], ["unknown_tool"]),
        case("unclosed-param-dropped", fmt,
             block(inv("search", '%s name="q" string="true">abc' % t.param), inv("noop", "")), "",
             [("noop", {})], ["bad_markup"]),
        case("param-without-string-attr", fmt,
             block(inv("search", '%s name="q">abc%s' % (t.param, t.param_end)), inv("noop", "")), "",
             [("noop", {})], ["bad_markup"]),
        case("prose-only-body", fmt,
             block(inv("search", "just words"), inv("noop", "")), "", [("noop", {})], ["bad_markup"]),
        # prose between an invoke's tags: bad_markup each (no index), the call stands
        case("prose-between-params-is-bad-markup", fmt,
             block(inv("search", "note " + p("q", "x") + " and " + p("n", "1", False))), "",
             [("search", {"q": "x", "n": 1})], ["bad_markup", "bad_markup"]),
        case("bare-invoke", fmt,
             "hi\n\n" + inv("search", p("q", "x")) + "\nbye", "hi\nbye", [("search", {"q": "x"})]),
        case("stray-tags-in-prose", fmt,
             "a " + t.invoke_end + "b " + t.eot + "c" + t.param_end, "a b c", [],
             ["bad_markup"] * 3),
        case("partial-tag-at-end-is-text", fmt, "x <" + ds.DSML + "inv", "x <" + ds.DSML + "inv", []),
        case("json-body-malformed", fmt,
             block(inv("search", '{"q": }'), inv("noop", "")), "", [("noop", {})], ["json_syntax"]),
        case("json-body-trailing", fmt,
             block(inv("search", '{"q": 1} extra')), "", [("search", {"q": 1})], ["trailing_content"]),
        case("unterminated-in-value", fmt,
             "x\n\n" + t.bot + "\n" + t.invoke + ' name="search">\n' + t.param + ' name="q" string="true">abc',
             "x", [], ["unterminated"]),
        case("bad-invoke-tag", fmt,
             block(t.invoke + ' nam="search">\n' + t.invoke_end, inv("noop", "")), "", [("noop", {})],
             ["bad_markup"]),
        case("tags-lookalikes-in-values", fmt,
             block(inv("search", p("q", "</" + ds.DSML + "para < </ x") + p("r", "[\"</\"]", False))), "",
             [("search", {"q": "</" + ds.DSML + "para < </ x", "r": ["</"]})]),
        case("missing-invoke-end-tolerated", fmt,
             t.bot + "\n" + t.invoke + ' name="noop">\n' + p("a", "1") + "\n" + t.invoke + ' name="noop">\n'
             + p("b", "2") + "\n" + t.invoke_end + "\n" + t.eot,
             "", [("noop", {"a": "1"}), ("noop", {"b": "2"})]),
    ]


CASES = V3 + V31 + [c for f in ds.DSML_FORMATS for c in dsml_cases(f)]


@pytest.mark.parametrize("fmt,text,tools,exp_text,exp_calls,errors", CASES)
def test_golden(fmt, text, tools, exp_text, exp_calls, errors):
    one = support.run(fmt, [text], tools)
    support.check_stream_invariants(one)
    assert support.summary(one) == (exp_text, exp_calls, errors)
    for chunks in support.every_split(text):
        assert support.run(fmt, chunks, tools) == one, chunks
    for name, chunker in support.CHUNKERS.items():
        ev = support.run(fmt, chunker(text), tools)
        support.check_stream_invariants(ev)
        assert ev == one, name


@pytest.mark.parametrize("fmt", ds.DSML_FORMATS)
def test_string_parameter_streams_as_generated(fmt):
    """The key is out when the parameter tag closes, the value's characters
    as they arrive, whitespace included (the value is the raw text)."""
    from sglang_toolparse import ArgsDelta, StreamParser

    t = ds.Tags(fmt)
    p = StreamParser(fmt, ["search"])
    got = []

    def feed(s):
        for ev in p.feed(s):
            if isinstance(ev, ArgsDelta):
                got.append(ev.delta)
        return "".join(got)

    feed(t.bot + "\n" + t.invoke + ' name="search">\n')
    assert feed(t.param + ' name="q" string="true">') == '{"q": "'
    assert feed("  hello") == '{"q": "  hello'
    assert feed(" wor") == '{"q": "  hello wor'
    assert feed("ld \n") == '{"q": "  hello world \\n'
    assert feed("</") == '{"q": "  hello world \\n'  # a possible end tag: held
    assert feed("x") == '{"q": "  hello world \\n</x'
    assert feed(t.param_end) == '{"q": "  hello world \\n</x"'
    assert feed(t.param + ' name="n" string="false">[1, ') == '{"q": "  hello world \\n</x", "n": '
    assert feed("2]" + t.param_end + "\n" + t.invoke_end) == '{"q": "  hello world \\n</x", "n": [1, 2]}'


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_limits_bound_held_buffers(fmt):
    """A held non-string DSML value / V3 name beyond the limits is dropped
    with an error; later calls survive."""
    if fmt in ds.DSML_FORMATS:
        t = ds.Tags(fmt)
        big = '%s name="search">\n%s name="v" string="false">%s%s\n%s' % (
            t.invoke, t.param, "1" * 5000, t.param_end, t.invoke_end)
        text = t.bot + big + '%s name="noop"/>' % t.invoke + t.eot
        code = "buffer_limit"
    else:
        sep = "function" + S if fmt == "deepseekv3" else ""
        text = B + CB + sep + "n" * 5000 + (S if fmt == "deepseekv31" else "\n") + "{}" + CE
        text += CB + sep + "noop" + ("\n```json\n{}\n```" if fmt == "deepseekv3" else S + "{}") + CE + E
        code = "bad_name"
    ev = support.run(fmt, support.token_like(text), ["search", "noop"], max_buffer=1000)
    support.check_stream_invariants(ev)
    _, calls, errors = support.summary(ev)
    assert calls == [("noop", "{}")]
    assert errors == [code]
