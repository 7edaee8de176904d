"""Golden cases for Qwen3-Coder / Qwen3.5 (qwen3_coder) and MiniMax-M2
(minimax_m2), each replayed with every chunker and cut at every split
point: the merged events must be identical. Values are typed by the tools'
schemas (xml_types.py); responses are written as the chat templates write
them unless the case says otherwise."""
import pytest

from sglang_toolparse import ArgsDelta, CallEnd, CallStart, ParseError, Text
from support import CHUNKERS, check_stream_invariants, every_split, run

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "number"},
        "hot": {"type": "boolean"},
        "opts": {"type": "object"},
        "tags": {"type": "array"},
        "unit": {"enum": ["c", "f"]},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}}}},
]


def call(i, name, args):
    return [CallStart(i, name), ArgsDelta(i, args), CallEnd(i, name, args)]


def err(index, code, offset, detail=""):
    return ParseError(index, code, offset, detail)


# --- renderers (as the templates write a call; values given as raw text) ---

def qwen(name, *pairs, block=True):
    body = "<function=%s>\n" % name + "".join("<parameter=%s>\n%s\n</parameter>\n" % kv for kv in pairs) + "</function>"
    return "<tool_call>\n" + body + "\n</tool_call>" if block else body


def mm_invoke(name, *pairs):
    return '<invoke name="%s">\n' % name + "".join('<parameter name="%s">%s</parameter>\n' % kv for kv in pairs) + "</invoke>\n"


def mm(*invokes):
    return "<minimax:tool_call>\n" + "".join(invokes) + "</minimax:tool_call>"


W_PAIRS = [("city", "Paris"), ("days", "3")]
W_ARGS = '{"city": "Paris", "days": 3}'
TYPED_Q = [("city", "123"), ("days", "3"), ("ratio", "0.5"), ("hot", "True"), ("opts", '{"a": [1, 2]}'),
           ("tags", '["x"]'), ("unit", "c"), ("maybe", "null"), ("count", "None")]
TYPED_M = [("city", "123"), ("days", "3"), ("ratio", "0.5"), ("hot", "true"), ("opts", '{"a": [1, 2]}'),
           ("tags", '["x"]'), ("unit", "c"), ("maybe", "null"), ("count", "null")]
TYPED_ARGS = ('{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, "tags": ["x"], '
              '"unit": "c", "maybe": null, "count": null}')
CODE = 'def f():\n    return "<b>"  # </param\n'
CODE_JSON = '"def f():\\n    return \\"<b>\\"  # </param\\n"'

Q, M = "qwen3_coder", "minimax_m2"
_trunc_q = "Ok\n<tool_call>\n<function=write_file>\n<parameter=content>\npartial"
_trunc_m = 'Ok\n<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="content">partial'

# name -> (format, text, expected merged events)
GOLDEN = {
    "q_single_with_prose": (Q, "Let me check.\n" + qwen("get_weather", *W_PAIRS) + "\nDone.",
                            [Text("Let me check.")] + call(0, "get_weather", W_ARGS) + [Text("\nDone.")]),
    "m_single_with_prose": (M, "Let me check.\n" + mm(mm_invoke("get_weather", *W_PAIRS)) + "\nDone.",
                            [Text("Let me check.")] + call(0, "get_weather", W_ARGS) + [Text("\nDone.")]),
    "q_typed_values": (Q, qwen("get_weather", *TYPED_Q), call(0, "get_weather", TYPED_ARGS)),
    "m_typed_values": (M, mm(mm_invoke("get_weather", *TYPED_M)), call(0, "get_weather", TYPED_ARGS)),
    "q_code_string_streams_raw": (Q, qwen("write_file", ("path", "a.py"), ("content", CODE)),
                                  call(0, "write_file", '{"path": "a.py", "content": %s}' % CODE_JSON)),
    "m_code_string_streams_raw": (M, mm(mm_invoke("write_file", ("path", "a.py"), ("content", CODE))),
                                  call(0, "write_file", '{"path": "a.py", "content": %s}' % CODE_JSON)),
    # the template's newlines around a value are dropped, the value's own kept
    "q_value_newlines": (Q, qwen("write_file", ("content", "\n\nx\n\n")),
                         call(0, "write_file", '{"content": "\\n\\nx\\n\\n"}')),
    "m_value_newlines_kept": (M, mm(mm_invoke("write_file", ("content", "\nx\n"))),
                              call(0, "write_file", '{"content": "\\nx\\n"}')),
    "q_two_calls_two_blocks": (Q, "A\n" + qwen("get_weather", *W_PAIRS) + "\n" + qwen("noop") + "\nB",
                               [Text("A")] + call(0, "get_weather", W_ARGS) + call(1, "noop", "{}") + [Text("\nB")]),
    "m_two_invokes_one_block": (M, "A\n" + mm(mm_invoke("get_weather", *W_PAIRS), mm_invoke("noop")) + "\nB",
                                [Text("A")] + call(0, "get_weather", W_ARGS) + call(1, "noop", "{}") + [Text("\nB")]),
    "q_undeclared_key_is_string": (Q, qwen("noop", ("x", "[1, 2]"), ("y", "NULL")),
                                   call(0, "noop", '{"x": "[1, 2]", "y": null}')),
    "m_undeclared_key_is_string": (M, mm(mm_invoke("noop", ("x", "[1, 2]"), ("y", "None"))),
                                   call(0, "noop", '{"x": "[1, 2]", "y": "None"}')),
    "q_string_null_prefix_then_text": (Q, qwen("write_file", ("content", "nullable")),
                                       call(0, "write_file", '{"content": "nullable"}')),
    "q_unknown_tool_dropped_next_kept": (Q, qwen("rm_rf", ("p", "/")) + "\n" + qwen("noop"),
                                         [err(None, "unknown_tool", 12, "rm_rf")] + call(0, "noop", "{}")),
    "m_unknown_invoke_dropped_next_kept": (M, mm(mm_invoke("rm_rf", ("p", "/")), mm_invoke("noop")),
                                           [err(None, "unknown_tool", 20, "rm_rf")] + call(0, "noop", "{}")),
    "q_truncated_inside_string": (Q, _trunc_q, [Text("Ok"), CallStart(0, "write_file"),
                                                ArgsDelta(0, '{"content": "partial'),
                                                err(0, "unterminated", len(_trunc_q))]),
    "m_truncated_inside_string": (M, _trunc_m, [Text("Ok"), CallStart(0, "write_file"),
                                                ArgsDelta(0, '{"content": "partial'),
                                                err(0, "unterminated", len(_trunc_m))]),
    # cut off before the call was announced: its text is text (issue 18.2)
    "q_truncated_before_a_parameter": (Q, "<tool_call>\n<function=noop>\n",
                                       [Text("<tool_call>\n<function=noop>\n"), err(None, "unterminated", 28)]),
    "q_block_opener_then_json_is_text": (Q, 'a <tool_call>{"name": "f"}</tool_call> b',
                                         [Text('a <tool_call>{"name": "f"}</tool_call> b')]),
    "m_block_opener_then_prose_is_text": (M, "x <minimax:tool_call>\n<inv>y",
                                          [Text("x <minimax:tool_call>\n<inv>y")]),
    "q_block_opener_at_end_is_text": (Q, "x <tool_call>\n", [Text("x <tool_call>\n")]),
    "q_partial_marker_released": (Q, "a <tool_c", [Text("a <tool_c")]),
    "q_missing_function_end": (Q, "<tool_call>\n<function=noop>\n<parameter=a>\n1\n</tool_call>z",
                               call(0, "noop", '{"a": "1"}') + [Text("z")]),
    "q_missing_parameter_end": (Q, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
                                   "<parameter=days>\n3\n</function>\n</tool_call>",
                                call(0, "get_weather", W_ARGS)),
    "q_prose_after_call_without_block_end_kept": (Q, "<tool_call>\n<function=noop>\n</function>\nThanks!\nBye <tool",
                                                  call(0, "noop", "{}") + [Text("Thanks!\nBye <tool")]),
    "m_prose_after_invoke_without_block_end_kept": (
        M, '<minimax:tool_call>\n<invoke name="noop">\n</invoke>\nDone. <invoke name="noop">\n</invoke>\n',
        call(0, "noop", "{}") + [Text("Done.")] + call(1, "noop", "{}")),
    "m_missing_invoke_end": (M, '<minimax:tool_call>\n<invoke name="noop">\n<parameter name="a">1</parameter>\n'
                                '</minimax:tool_call>', call(0, "noop", '{"a": "1"}')),
    "m_parameter_opener_inside_value_is_content": (
        M, mm(mm_invoke("write_file", ("content", 'x<parameter name="y">z'))),
        call(0, "write_file", '{"content": "x<parameter name=\\"y\\">z"}')),
    "q_escapes_and_unicode": (Q, qwen("write_file", ("path", 'caf\u00e9 \U0001F600 "q" \\ \t')),
                              call(0, "write_file", '{"path": "caf\u00e9 \U0001F600 \\"q\\" \\\\ \\t"}')),
    # prose between a call's tags: bad_markup with no index, the call stands
    # (tests/test_lossless.py::test_prose_inside_a_call_is_not_lost has its raw text)
    "q_prose_between_tags_is_bad_markup": (
        Q, "<tool_call>\n<function=noop> junk\n<parameter=a>\n1\n</parameter> zz\n</function>\n</tool_call>",
        [CallStart(0, "noop"), ArgsDelta(0, '{"'), err(None, "bad_markup", 28, "prose inside a call"),
         ArgsDelta(0, 'a": "1"'), err(None, "bad_markup", 62, "prose inside a call"), ArgsDelta(0, "}"),
         CallEnd(0, "noop", '{"a": "1"}')]),
    "m_name_and_key_stripped": (M, '<minimax:tool_call>\n<invoke name=" noop ">\n<parameter name=" a ">1</parameter>\n'
                                   '</invoke>\n</minimax:tool_call>', call(0, "noop", '{"a": "1"}')),
    "q_empty_name": (Q, "<tool_call>\n<function=>\n</function>\n</tool_call>t", [err(None, "bad_name", 12), Text("t")]),
    "q_non_finite_number_stays_text": (Q, qwen("get_weather", ("ratio", "inf")), call(0, "get_weather", '{"ratio": "inf"}')),
    "m_optional_integer_keeps_value": (M, mm(mm_invoke("get_weather", ("count", "7"))),
                                       call(0, "get_weather", '{"count": 7}')),
    "m_boolean_words": (M, mm(mm_invoke("get_weather", ("hot", "yes"))), call(0, "get_weather", '{"hot": true}')),
}

CASES = sorted(GOLDEN)


@pytest.mark.parametrize("case", CASES)
def test_golden_every_chunker(case):
    fmt, text, expected = GOLDEN[case]
    for name, chunker in CHUNKERS.items():
        assert run(fmt, chunker(text), TOOLS) == expected, name
    check_stream_invariants(expected)


@pytest.mark.parametrize("case", CASES)
def test_golden_every_split(case):
    fmt, text, expected = GOLDEN[case]
    for chunks in every_split(text):
        assert run(fmt, chunks, TOOLS) == expected, chunks


def test_standalone_aliases():
    text = mm(mm_invoke("noop"))
    assert run("minimax-m2", [text], TOOLS) == run("minimax_m2", [text], TOOLS) == call(0, "noop", "{}")
    text = qwen("noop")
    assert run("step3p5", [text], TOOLS) == call(0, "noop", "{}")


def test_string_streams_before_its_closing_tag():
    """A long string parameter reaches the client while it is generated: all
    but the bytes that could still be the closing tag."""
    from sglang_toolparse import StreamParser

    content = "line of code;\n" * 300
    for fmt, text in ((Q, qwen("write_file", ("content", content))),
                      (M, mm(mm_invoke("write_file", ("content", content))))):
        p = StreamParser(fmt, TOOLS)
        cut = text.index(content) + len(content)
        streamed = "".join(e.delta for i in range(0, cut, 4) for e in p.feed(text[i:min(i + 4, cut)])
                           if isinstance(e, ArgsDelta))
        full = '{"content": %s}' % __import__("json").dumps(content)
        assert full.startswith(streamed)
        # held: at most the template newline and a partial closing tag
        assert len(full) - len(streamed) <= len('\\n"}') + 2, (fmt, len(full) - len(streamed))


@pytest.mark.parametrize("fmt,head,rest", [
    (Q, "<tool_call>\n<function=get_weather>\n<parameter=cit", "y>\nParis"),
    (M, '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city"', ">Paris"),
    (Q, "<tool_call>\n<function=noop>\n</function", ">"),
])
def test_call_announced_when_its_body_has_begun(fmt, head, rest):
    """CallStart comes with the first complete parameter opening tag (or the
    invoke's own end for a call without parameters), not with the name."""
    from sglang_toolparse import StreamParser

    p = StreamParser(fmt, TOOLS)
    assert not [e for e in p.feed(head) if isinstance(e, CallStart)]
    started = [e for e in p.feed(rest) if isinstance(e, CallStart)]
    assert len(started) == 1 and started[0].index == 0
