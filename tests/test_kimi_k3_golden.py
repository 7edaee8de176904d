"""Golden cases for Kimi K3 (kimi_k3: XTML, a row of the XML-parameter
engine, csrc/fmt_xmlparam.c), each replayed with every chunker and cut at
every split point: the merged events must be identical. Responses are
written as K3's encoder writes them (tests/format_table.py render_kimi_k3)
unless the case says otherwise. The model types each value (type="..."):
a string is its raw text, streamed; any other type is JSON text, written
canonical, or its raw text as a string when it is not JSON."""
from golden import call, err, golden_tests
from sglang_toolparse import ArgsDelta, CallStart, Markup, StreamParser, Text
from support import every_split, run
from format_table import render_kimi_k3

TOOLS = ["get_weather", "noop", "write_file", "a&b \"q\""]
OPEN, CLOSE = "<|open|>tools<|sep|>", "<|close|>tools<|sep|>"
RESP_OPEN, RESP_CLOSE, MSG_CLOSE = "<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>"


def arg(key, value, type_="string"):
    return '<|open|>argument key="%s" type="%s"<|sep|>%s<|close|>argument<|sep|>' % (key, type_, value)


def k3call(name, *args, index=1):
    return '<|open|>call tool="%s" index="%d"<|sep|>%s<|close|>call<|sep|>' % (name, index, "".join(args))


def reply(prose, *calls):
    return (RESP_OPEN + prose + RESP_CLOSE if prose else "") + OPEN + "".join(calls) + CLOSE + MSG_CLOSE


def blen(t):
    return len(t.encode("utf-8"))


def framed(prose, events, *calls):
    """reply(prose, *calls) and the events it gives: the reply's framing
    (`<|open|>response<|sep|>`, `<|close|>response<|sep|>`,
    `<|close|>message<|sep|>`) is Markup at its offsets (out of the text, as
    SGLang takes it out; docs/SEMANTICS.md, "Dropped text"); `events` those
    of the tools section"""
    text = reply(prose, *calls)
    head = [Markup(0, RESP_OPEN), Text(prose), Markup(blen(RESP_OPEN + prose), RESP_CLOSE)] if prose else []
    return text, head + events + [Markup(blen(text) - blen(MSG_CLOSE), MSG_CLOSE)]


W = k3call("get_weather", arg("city", "Paris"), arg("days", "3", "number"))
W_ARGS = '{"city": "Paris", "days": 3}'
_trunc = RESP_OPEN + "Ok" + RESP_CLOSE + OPEN + k3call("write_file", arg("content", "partial"))[:-44]

_cut_tag = OPEN + '<|open|>call tool="noop" index="1"<|sep|><|open|>argument key="a" type="str'

GOLDEN = {
    "encoder_two_calls": framed("Checking.", call(0, "get_weather", W_ARGS) + call(1, "noop", "{}"),
                                W, k3call("noop", index=2)),
    "rendered_by_the_table": (OPEN + render_kimi_k3("get_weather", {"city": "Pa\"ris", "days": 3, "x": [1, {"a": None}],
                                                                   "hot": True, "r": 2.5}) + CLOSE,
                              call(0, "get_weather", '{"city": "Pa\\"ris", "days": 3, "x": [1, {"a": null}], '
                                                     '"hot": true, "r": 2.5}')),
    "no_tools_section_framing_is_markup": (RESP_OPEN + "Just text <b>. " + RESP_CLOSE + MSG_CLOSE,
                                           [Markup(0, RESP_OPEN), Text("Just text <b>. "),
                                            Markup(blen(RESP_OPEN) + 15, RESP_CLOSE + MSG_CLOSE)]),
    "typed_values": framed("", call(0, "get_weather", '{"a": null, "b": [1, 2.5], "c": true, "d": 1e400, "e": "null", "f": "x"}'),
                           k3call("get_weather", arg("a", "null", "null"), arg("b", " [1, 2.50] ", "array"),
                                  arg("c", "true", "boolean"), arg("d", "1e400", "number"),
                                  arg("e", "null"), arg("f", "x", "integer"))),
    "not_json_is_its_text": framed("", call(0, "get_weather", '{"n": "NaN", "o": "{\'a\': 1}", "e": ""}'),
                                   k3call("get_weather", arg("n", "NaN", "number"), arg("o", "{'a': 1}", "object"),
                                          arg("e", "", "number"))),
    "string_is_raw_text": framed("", call(0, "write_file", '{"content": "l1\\n  \\"q\\" \\\\ <x> {\\"a\\": 1} \\t"}'),
                                 k3call("write_file", arg("content", 'l1\n  "q" \\ <x> {"a": 1} \t'))),
    "type_missing_is_string": framed("", call(0, "noop", '{"k": "5"}'),
                                     k3call("noop", '<|open|>argument key="k"<|sep|>5<|close|>argument<|sep|>')),
    "attributes_read_back": framed("", call(0, "a&b \"q\"", '{"k&\\"": 1}'),
                                   k3call("a&amp;b &quot;q&quot;", arg("k&amp;&quot;", "1", "number"))),
    "amp_quot_read_in_order": framed("", call(0, "noop", '{"&quot;": "v"}'), k3call("noop", arg("&amp;quot;", "v"))),
    "name_not_stripped": framed("", [err(None, "unknown_tool", 20, " noop")], k3call(" noop", arg("a", "1"))),
    "type_attribute_last_wins": framed("", call(0, "noop", '{"a": 2}'),
                                       k3call("noop", '<|open|>argument key="a" type="string" type="number"<|sep|>'
                                                      '2<|close|>argument<|sep|>')),
    "xtype_is_not_type": framed("", call(0, "noop", '{"a": "2"}'),
                                k3call("noop", '<|open|>argument key="a" xtype="number"<|sep|>'
                                               '2<|close|>argument<|sep|>')),
    # the blank before the channel's close is its text (as in SGLang's)
    "unicode": framed("caf\u00e9 ", call(0, "write_file", '{"path": "\U0001F600 \u4e2d"}'),
                      k3call("write_file", arg("path", "\U0001F600 \u4e2d"))),
    "unknown_tool_dropped_next_kept": framed("", [err(None, "unknown_tool", 20, "rm_rf")] + call(0, "noop", "{}"),
                                             k3call("rm_rf", arg("p", "/")), k3call("noop", index=2)),
    "truncated_inside_string": (_trunc, [Markup(0, RESP_OPEN), Text("Ok"), Markup(blen(RESP_OPEN) + 2, RESP_CLOSE),
                                         CallStart(0, "write_file"), ArgsDelta(0, '{"content": "partial'),
                                         err(0, "unterminated", len(_trunc))]),
    # cut off before the call was announced (its first value not open yet):
    # its text is text, as for every row (issue 18.2)
    "truncated_in_value_tag": (_cut_tag, [Text(_cut_tag), err(None, "unterminated", len(_cut_tag))]),
    "missing_argument_close": framed("", call(0, "noop", '{"a": 7}'),
                                     k3call("noop", '<|open|>argument key="a" type="number"<|sep|>7')),
    "missing_call_close": (OPEN + '<|open|>call tool="noop" index="1"<|sep|>' + arg("a", "1") + CLOSE + "z",
                           call(0, "noop", '{"a": "1"}') + [Text("z")]),
    "empty_tools_section_is_text": (RESP_OPEN + "Hi" + RESP_CLOSE + OPEN + CLOSE + MSG_CLOSE,
                                    [Markup(0, RESP_OPEN), Text("Hi"), Markup(blen(RESP_OPEN) + 2, RESP_CLOSE),
                                     Text(OPEN + CLOSE), Markup(blen(RESP_OPEN + "Hi" + RESP_CLOSE + OPEN + CLOSE),
                                                                MSG_CLOSE)]),
    "tools_opener_then_prose_is_text": ("Use " + OPEN + " here.", [Text("Use " + OPEN + " here.")]),
    "call_attributes_in_another_order_is_text": (OPEN + '<|open|>call index="1" tool="f"<|sep|>',
                                                 [Text(OPEN + '<|open|>call index="1" tool="f"<|sep|>')]),
    "partial_framing_at_end_released": ("a <|close|>respo", [Text("a <|close|>respo")]),
    "prose_after_the_section_kept": (reply("", k3call("noop")) + "Done.", call(0, "noop", "{}")
                                     + [Markup(blen(reply("", k3call("noop"))) - blen(MSG_CLOSE), MSG_CLOSE), Text("Done.")]),
    "empty_name": (OPEN + '<|open|>call tool="" index="1"<|sep|><|close|>call<|sep|>' + CLOSE + "t",
                   [err(None, "bad_name", 20), Text("t")]),
}
test_golden_every_chunker, test_golden_every_split = golden_tests("kimi_k3", GOLDEN, TOOLS)


def test_string_streams_before_its_closing_tag():
    """A long string value reaches the client while it is generated: all
    but the bytes that could still be a closing tag."""
    p = StreamParser("kimi_k3", TOOLS)
    head = OPEN + '<|open|>call tool="write_file" index="1"<|sep|><|open|>argument key="content" type="string"<|sep|>'
    body = "x" * 5000 + "<|clo"
    sent = "".join(e.delta for e in p.feed(head) + p.feed(body) if isinstance(e, ArgsDelta))
    assert sent == '{"content": "' + "x" * 5000


def test_typed_value_held_until_it_closes():
    p = StreamParser("kimi_k3", TOOLS)
    head = OPEN + '<|open|>call tool="noop" index="1"<|sep|><|open|>argument key="o" type="object"<|sep|>'
    sent = "".join(e.delta for e in p.feed(head) + p.feed('{"a": [1, 2') if isinstance(e, ArgsDelta))
    assert sent == '{"o": '
    rest = p.feed(']}<|close|>argument<|sep|><|close|>call<|sep|>')
    assert "".join(e.delta for e in rest if isinstance(e, ArgsDelta)) == '{"a": [1, 2]}}'


def test_value_tag_attributes_over_the_buffer_limit_same_at_every_split():
    """fuzz/regress/kimi_k3--attr-buffer-limit-offset: a value tag's
    attributes that cross max_buffer are reported at the byte that crosses
    it, whatever the chunking."""
    text = (OPEN + '<|open|>call tool="noop" index="1"<|sep|><|open|>argument key="a" type="number"'
            + " " * 40 + "<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>" + CLOSE)
    want = run("kimi_k3", [text], TOOLS, max_buffer=16)
    assert [type(e).__name__ for e in want] == ["ParseError"] and want[0].code == "buffer_limit"
    for chunks in every_split(text):
        assert run("kimi_k3", chunks, TOOLS, max_buffer=16) == want, chunks
