"""Golden cases for the GLM engine's other rows (tests/glm_rows.py), each
replayed with every chunker and at every split point: the merged events must
be identical. The text is written as each family's chat template writes it;
values are typed by the tools' schemas with the family's rules."""
import json

import pytest

from glm_rows import ROWS
from golden import call, err, golden_tests
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, StreamParser, Text, parse

NO_CALL = "markup that makes no call"

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "number"},
        "hot": {"type": "boolean"},
        "opts": {"type": "object"},
        "tags": {"type": "array"},
        "maybe": {"type": ["string", "null"]},
    },
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "edit", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}}}},
]

W = ("get_weather", [("city", "Paris"), ("days", "3")])
W_ARGS = '{"city": "Paris", "days": 3}'
N = ("noop", [])
TYPED = [("city", "123"), ("days", "3"), ("ratio", "0.5"), ("hot", "true"), ("opts", '{"a": [1,2]}'),
         ("tags", '["x"]'), ("maybe", "null")]
# the typed call's arguments by each family's rules
TYPED_ARGS = {
    "ling3": '{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, "tags": ["x"], '
             '"maybe": "null"}',  # GLM-4.5: ["string", "null"] is a string, its raw text
    "iquest_q1": '{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, "tags": ["x"], '
                 '"maybe": null}',  # GLM-4.7: a union allowing null
    "poolside_v1": '{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, "tags": ["x"], '
                   '"maybe": null}',  # a type list is not string-like: json.loads
    "spark25": '{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, "tags": ["x"], '
               '"maybe": "null"}',  # a type list reads as "string": the raw text
    # Hunyuan: ["string", "null"] is only a string (null left out): the raw text
    "hunyuan": '{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, "tags": ["x"], '
               '"maybe": "null"}',
}
TYPED_ARGS["hunyuan_os"] = TYPED_ARGS["hunyuan"]
WS = [("path", " a.py "), ("content", "def f():\n    return 1\n")]
ESC = [("path", 'caf\u00e9 \U0001F600 "q" \\ \t'), ("content", "<b>x</b> </arg_valu a</tool_call><tool_call>b")]


def cases(fmt):
    """name -> (text, expected merged events)"""
    r = ROWS[fmt]
    opener = r.markers[0]
    out = {
        "single_with_prose": ("Let me check.\n" + r.calls(W), [Text("Let me check.")] + call(0, "get_weather", W_ARGS)),
        "typed_values": (r.calls(("get_weather", TYPED)), call(0, "get_weather", TYPED_ARGS[fmt])),
        "whitespace_inside_strings_kept": (
            r.calls(("edit", WS)), call(0, "edit", json.dumps(dict(WS), ensure_ascii=False))),
        "escapes_unicode_and_tags_in_strings": (
            r.calls(("edit", ESC)), call(0, "edit", json.dumps(dict(ESC), ensure_ascii=False))),
        "zero_arguments": (r.calls(N), call(0, "noop", "{}")),
        "two_calls_prose_around": (
            "Before.\n" + r.calls(W) + "\nBetween.\n" + r.calls(N) + "\nAfter.",
            [Text("Before.")] + call(0, "get_weather", W_ARGS) + [Text("\nBetween.")] + call(1, "noop", "{}")
            + [Text("\nAfter.")]),
        "three_calls_one_turn": (
            r.calls(W, N, W), call(0, "get_weather", W_ARGS) + call(1, "noop", "{}") + call(2, "get_weather", W_ARGS)),
        "partial_marker_released_at_end": ("a " + opener[:-3], [Text("a " + opener[:-3])]),
    }
    text = r.calls(("rm_rf", [("p", "/")]), W)
    out["unknown_tool_dropped_next_survives"] = (
        text, [err(None, "unknown_tool", text.index(opener), "rm_rf")] + call(0, "get_weather", W_ARGS))
    one = r.calls(("edit", [("content", "partial")]))
    text = "Ok " + one[: one.index("partial") + len("partial")]
    out["truncated_inside_value"] = (
        text, [Text("Ok"), CallStart(0, "edit"), ArgsDelta(0, '{"content": "partial'), err(0, "unterminated", len(text))])
    out.update(SPECIFIC.get(fmt, {}))
    return out


SPECIFIC = {
    "ling3": {
        # Ling3Detector: the name ends at a newline, <arg_key> or </tool_call>
        "name_then_arg_key_directly": (
            "<tool_call>get_weather<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
            call(0, "get_weather", '{"days": 3}')),
        "zero_arguments_closed_at_once": ("<tool_call>noop</tool_call>", call(0, "noop", "{}")),
        "literal_backslash_n_separators": (
            "<tool_call>get_weather\\n<arg_key>days</arg_key>\\n<arg_value>3</arg_value>\\n</tool_call>",
            call(0, "get_weather", '{"days": 3}')),
        "prose_tag_is_text": ("use the <tool_call> tag here", [Text("use the <tool_call> tag here")]),
    },
    "iquest_q1": {
        # blanks between the parts (the model's own newline after the name)
        "blanks_between_parts": (
            "<iquest_tool_call>get_weather\n<arg_key>city</arg_key> <arg_value>x</arg_value>\n</iquest_tool_call>",
            call(0, "get_weather", '{"city": "x"}')),
        "glm_tags_are_text": ("<tool_call>noop</tool_call>", [Text("<tool_call>noop</tool_call>")]),
        # lossless: a call cut off before its announcement is text plus the error
        "cut_off_before_the_name_ends": (
            "<iquest_tool_call>get_wea", [Text("<iquest_tool_call>get_wea"), err(None, "unterminated", 25)]),
    },
    "poolside_v1": {
        # the template writes a string raw: its newlines are its own
        "string_with_wrapping_newlines_kept": (
            "<tool_call>edit\n<arg_key>content</arg_key>\n<arg_value>\nx\n</arg_value>\n</tool_call>",
            call(0, "edit", '{"content": "\\nx\\n"}')),
        # a declared non-string type: json.loads, then a Python literal; undeclared: json.loads only
        "literal_for_typed_json_only_for_undeclared": (
            "<tool_call>get_weather\n<arg_key>tags</arg_key>\n<arg_value>(1, 'a')</arg_value>\n"
            "<arg_key>extra</arg_key>\n<arg_value>(1, 'a')</arg_value>\n</tool_call>",
            call(0, "get_weather", '{"tags": [1, "a"], "extra": "(1, \'a\')"}')),
        "non_finite_stays_text": (
            "<tool_call>get_weather\n<arg_key>ratio</arg_key>\n<arg_value>NaN</arg_value>\n</tool_call>",
            call(0, "get_weather", '{"ratio": "NaN"}')),
    },
    "spark25": {
        # Spark25Detector's words and numbers: "null" first, 1/0 booleans, an integral number is an int
        "null_words_and_numbers": (
            "<tool_call>get_weather\n<arg_key>days</arg_key><arg_value>NULL</arg_value>\n"
            "<arg_key>hot</arg_key><arg_value> 1 </arg_value>\n<arg_key>ratio</arg_key><arg_value>2.0</arg_value>\n"
            "<arg_key>extra</arg_key><arg_value>null</arg_value>\n</tool_call>",
            call(0, "get_weather", '{"days": null, "hot": true, "ratio": 2, "extra": null}')),
        # a failed conversion tries JSON, then keeps the text
        "failed_conversion_json_then_text": (
            "<tool_call>get_weather\n<arg_key>days</arg_key><arg_value>1.5</arg_value>\n"
            "<arg_key>hot</arg_key><arg_value>yes</arg_value>\n</tool_call>",
            call(0, "get_weather", '{"days": 1.5, "hot": "yes"}')),
    },
    "hunyuan": {
        "call_tag_outside_the_block_is_text": (
            "<tool_call>noop<tool_sep></tool_call>", [Text("<tool_call>noop<tool_sep></tool_call>")]),
        # Hy4: no <tool_sep>, no separators
        "hy4_without_tool_sep": (
            "<tool_calls><tool_call>get_weather<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
            "<tool_call>noop</tool_call></tool_calls>",
            call(0, "get_weather", '{"days": 3}') + call(1, "noop", "{}")),
        # the opener no call stands next to (prose follows it) is markup of
        # no call, reported with its bytes (docs/SEMANTICS.md, "Dropped text")
        "prose_inside_the_block_is_text": (
            "<tool_calls>\nnote\n<tool_call>noop<tool_sep>\n</tool_call>\n</tool_calls>\nDone.",
            [err(None, "bad_markup", 13, NO_CALL), Text("note")] + call(0, "noop", "{}") + [Text("\nDone.")]),
        # an undeclared key is a string (its schema defaults to string): streamed raw
        "undeclared_key_is_a_string": (
            "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>extra</arg_key>\n<arg_value>[1, 2]</arg_value>\n"
            "<arg_key>days</arg_key>\n<arg_value>007</arg_value>\n</tool_call>\n</tool_calls>",
            call(0, "get_weather", '{"extra": "[1, 2]", "days": 7}')),
        "prose_call_tag_inside_the_block_is_text": (
            "<tool_calls>\nuse the <tool_call> tag, then </tool_call>.\n</tool_calls>",
            [err(None, "bad_markup", 13, NO_CALL), Text("use the <tool_call> tag, then </tool_call>."),
             err(None, "bad_markup", 56, NO_CALL)]),
        "bare_tags_are_text_for_the_suffixed_row_and_back": (
            "<tool_calls:opensource>x</tool_calls:opensource>", [Text("<tool_calls:opensource>x</tool_calls:opensource>")]),
    },
    "hunyuan_os": {
        "bare_tags_are_text": (
            "<tool_calls><tool_call>noop<tool_sep></tool_call></tool_calls>",
            [Text("<tool_calls><tool_call>noop<tool_sep></tool_call></tool_calls>")]),
        "bare_tool_sep_ends_the_name": (
            "<tool_calls:opensource><tool_call:opensource>noop<tool_sep></tool_call:opensource></tool_calls:opensource>",
            call(0, "noop", "{}")),
    },
}

test_golden_every_chunker, test_golden_every_split = golden_tests(sorted(ROWS), cases, TOOLS)


@pytest.mark.parametrize("fmt", sorted(ROWS))
def test_long_string_value_streams_before_its_end(fmt):
    """A 64 KB string argument streams as it is generated, not at its end tag."""
    body = ("line with \"quotes\", tabs\t and unicode \u00e9\n" * 2000)[:65536]
    text = ROWS[fmt].calls(("edit", [("path", "a.txt"), ("content", body)]))
    end = text.index(ROWS[fmt].markers[5], text.index(body[:20]))
    p = StreamParser(fmt, TOOLS)
    streamed = []
    for i in range(0, end, 1000):
        streamed += [e.delta for e in p.feed(text[i:min(i + 1000, end)]) if isinstance(e, ArgsDelta)]
    before_end = "".join(streamed)
    assert len(before_end) > len(json.dumps(body, ensure_ascii=False)) - 40
    rest = p.feed(text[end:]) + p.finish()
    final = [e for e in rest if isinstance(e, CallEnd)][0]
    assert json.loads(final.arguments) == {"path": "a.txt", "content": body}


@pytest.mark.parametrize("fmt", sorted(ROWS))
def test_no_tool_list_accepts_any_name(fmt):
    text = ROWS[fmt].calls(("anything", [("s", "x y")]))
    calls = parse(fmt, text, None).calls
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("anything", {"s": "x y"})]
