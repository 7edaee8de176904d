"""K2 Horizon (`k2_horizon`): golden cases at every split of the template's
three dialects (xml and xml_typed: a GLM-engine row; json: fmt_jsontag.c's
k2_horizon row), a leading think block, and group tags that make no call;
the XML typing against the reference (glm_row_types.k2_value, K2V3Detector's
rules). Parity with SGLang's detector: tests/test_k2_horizon.py."""
import json

import pytest

from golden import call, err, golden_tests
from sglang_toolparse import ArgsDelta, CallStart, Text, parse

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "line": {"type": "integer"},
        "opts": {"type": "object"},
        "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "either": {"type": ["integer", "boolean"]},
        "mode": {"$ref": "#/$defs/Mode"},
        "anything": {"type": "any"},
    },
    "$defs": {"Mode": {"type": "string", "enum": ["r", "w"]}},
}
TOOLS = [
    {"type": "function", "function": {"name": "read_file", "parameters": SCHEMA}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
]

G0, G1 = "<ifm|tool_calls>", "</ifm|tool_calls>"


def xml_call(name, pairs, typed=False):
    """One call as the chat template writes it (xml, or xml_typed with the
    type written for each pair: (key, value) or (key, type, value))."""
    out = "<ifm|tool_call>" + name + "\n"
    for p in pairs:
        k, t, v = p if len(p) == 3 else (p[0], None, p[1])
        out += "<ifm|arg_key>%s</ifm|arg_key>\n" % k
        if typed:
            out += "<ifm|arg_type>%s</ifm|arg_type>\n" % t
        out += "<ifm|arg_value>%s</ifm|arg_value>\n" % v
    return out + "</ifm|tool_call>"


def group(*calls):
    return G0 + "".join("\n" + c for c in calls) + "\n" + G1


R = xml_call("read_file", [("path", "a.py"), ("line", "3")])
R_ARGS = '{"path": "a.py", "line": 3}'
TYPED = xml_call("read_file", [("path", "string", "007"), ("id", "string", "12"), ("either", "integer", "5"),
                               ("extra", "string", "[1]"), ("other", "array", "[1]"), ("any", "any", " 2 ")],
                 typed=True)
TYPED_ARGS = '{"path": "007", "id": "12", "either": 5, "extra": "[1]", "other": [1], "any": " 2 "}'
J = '<ifm|tool_call>{"name": "read_file", "arguments": {"path": "a", "line": 2}}</ifm|tool_call>'
J_ARGS = '{"path": "a", "line": 2}'

GOLDEN = {
    # the template: content, then the group right after it (its blanks are content)
    "content_then_group": ("Let me look.\n" + group(R), [Text("Let me look.\n")] + call(0, "read_file", R_ARGS)),
    "two_calls_in_group": (group(R, xml_call("noop", [])),
                           call(0, "read_file", R_ARGS) + call(1, "noop", "{}")),
    # schema wins; an untyped key or a union reads the model's type tag
    "xml_typed_dialect": (group(TYPED), call(0, "read_file", TYPED_ARGS)),
    "xml_untyped_values_json_or_text": (
        group(xml_call("read_file", [("opts", '{"a": [1, 2]}'), ("id", "12"), ("x", "tru"), ("y", " null ")])),
        call(0, "read_file", '{"opts": {"a": [1, 2]}, "id": 12, "x": "tru", "y": null}')),
    "ref_inlined_string_stays_text": (
        group(xml_call("read_file", [("mode", "007")])), call(0, "read_file", '{"mode": "007"}')),
    "declared_type_beats_the_tag": (
        group(xml_call("read_file", [("line", "string", "4"), ("path", "integer", "5")], typed=True)),
        call(0, "read_file", '{"line": 4, "path": "5"}')),
    "string_streamed_raw_with_tags_inside": (
        group(xml_call("read_file", [("path", "a <b> </ifm|arg_valu \"q\" \\ \u00e9\n")])),
        call(0, "read_file", json.dumps({"path": "a <b> </ifm|arg_valu \"q\" \\ \u00e9\n"}, ensure_ascii=False))),
    # calls outside a group, and blanks around them: text (as the builtin keeps them)
    "call_without_group_blanks_are_text": (
        "Hi \n" + R + "\n bye\n", [Text("Hi \n")] + call(0, "read_file", R_ARGS) + [Text("\n bye\n")]),
    # group tags that make no call: errors carrying them (issue 18), never silent
    "stray_group_tags_are_errors": ("a" + G1 + "b" + G0 + G1 + "c",
                                    [Text("a"), err(None, "bad_markup", 1, "markup that makes no call"), Text("b"),
                                     err(None, "bad_markup", 52, "a group with no call"), Text("c")]),
    "stray_call_close_is_text": ("x </ifm|tool_call> y", [Text("x </ifm|tool_call> y")]),
    "prose_inside_group_is_text": (G0 + "\nnote " + R + "\n" + G1,
                                   [err(None, "bad_markup", 17, "a group opener with no call"), Text("note ")]
                                   + call(0, "read_file", R_ARGS)),
    "name_only_call": (group("<ifm|tool_call>noop</ifm|tool_call>"), call(0, "noop", "{}")),
    "partial_marker_released_at_end": ("see <ifm|tool_ca", [Text("see <ifm|tool_ca")]),
    "prose_tag_is_text": ("use <ifm|tool_call> tags here", [Text("use <ifm|tool_call> tags here")]),
    "unknown_tool_dropped_next_survives": (
        group(xml_call("rm", [("p", "/")]), R),
        [err(None, "unknown_tool", len(G0) + 1, "rm")] + call(0, "read_file", R_ARGS)),
    "cut_off_inside_a_string": (
        G0 + "\n<ifm|tool_call>read_file\n<ifm|arg_key>path</ifm|arg_key>\n<ifm|arg_value>a.p",
        [CallStart(0, "read_file"), ArgsDelta(0, '{"path": "a.p'), err(0, "unterminated", 92)]),
    # the json dialect: fmt_jsontag.c's k2_horizon row (a call or a list of
    # them; arguments an object, a JSON string holding one, or null)
    "json_dialect_in_group": ("Ok.\n" + group(J), [Text("Ok.\n")] + call(0, "read_file", J_ARGS)),
    "json_list_of_calls": (G0 + '<ifm|tool_call>[{"name": "noop", "arguments": {}}, {"name": "noop"}]</ifm|tool_call>'
                           + G1, call(0, "noop", "{}") + call(1, "noop", "{}")),
    "json_arguments_as_string_or_null": (
        group('<ifm|tool_call>\n{"name": "read_file", "arguments": "{\\"line\\": 7}"}\n</ifm|tool_call>',
              '<ifm|tool_call>{"name": "noop", "parameters": null}</ifm|tool_call>'),
        call(0, "read_file", '{"line": 7}') + call(1, "noop", "{}")),
    "json_then_xml_in_one_group": (group(J, R), call(0, "read_file", J_ARGS) + call(1, "read_file", R_ARGS)),
    "json_unknown_tool_next_survives": (
        group('<ifm|tool_call>{"name": "rm", "arguments": {"p": "/"}}</ifm|tool_call>', J),
        [err(None, "unknown_tool", 45, "rm")] + call(0, "read_file", J_ARGS)),
    "json_arguments_not_an_object": ('a<ifm|tool_call>{"name": "noop", "arguments": [1]}</ifm|tool_call>b',
                                     [Text("a"), err(None, "json_syntax", 46), Text("b")]),
    # a bad escape in a string holding the arguments: what was decoded
    # before it is streamed at any chunking (fuzz finding)
    "json_string_arguments_bad_escape": ('<ifm|tool_call>{"name": "noop", "arguments": "{\\a"}</ifm|tool_call>x',
                                         [CallStart(0, "noop"), ArgsDelta(0, "{"), err(0, "json_syntax", 48),
                                          Text("x")]),
    "json_cut_off_in_arguments": (
        G0 + '\n<ifm|tool_call>{"name": "read_file", "arguments": {"path": "a.p',
        [CallStart(0, "read_file"), ArgsDelta(0, '{"path": "a.p'), err(0, "unterminated", 80)]),
    "json_list_not_calls_is_text": ("x <ifm|tool_call> [1]</ifm|tool_call>",
                                    [Text("x <ifm|tool_call> [1]</ifm|tool_call>")]),
    # a think block leading the output is text, no call read in it (as
    # K2V3Detector passes it through); elsewhere its opener is text
    "leading_think_block_is_text": (" <ifm|think>\nplan " + R + "</ifm|think>\nok" + group(R),
                                    [Text(" <ifm|think>\nplan " + R + "</ifm|think>\nok")] + call(0, "read_file", R_ARGS)),
    "two_leading_think_blocks": ("<ifm|think_fast>a</ifm|think_fast>\n<ifm|think>b</ifm|think_fast>c</ifm|think>" + R,
                                 [Text("<ifm|think_fast>a</ifm|think_fast>\n<ifm|think>b</ifm|think_fast>c</ifm|think>")]
                                 + call(0, "read_file", R_ARGS)),
    "think_opener_after_text_is_text": ("hi <ifm|think>" + R + "</ifm|think>",
                                        [Text("hi <ifm|think>")] + call(0, "read_file", R_ARGS) + [Text("</ifm|think>")]),
    "cut_off_think_opener": (" \n<ifm|think_fa", [Text(" \n<ifm|think_fa")]),
    "think_opener_after_a_released_lt_is_text": ("<<ifm|think>" + R + "</ifm|think>",
                                                 [Text("<<ifm|think>")] + call(0, "read_file", R_ARGS)
                                                 + [Text("</ifm|think>")]),
    "unterminated_think_block": ("<ifm|think_faster>plan " + R, [Text("<ifm|think_faster>plan " + R)]),
    # group tags: a group with no call, an opener or a closer next to prose
    # (not a call) are bad_markup carrying them; a group cut off before its
    # first call is text (unterminated)
    "group_with_no_call": ("a " + G0 + "\n" + G1 + " b",
                           [Text("a "), err(None, "bad_markup", 36, "a group with no call"), Text(" b")]),
    "group_opener_before_prose": ("no " + G0 + " here " + R,
                                  [Text("no "), err(None, "bad_markup", 20, "a group opener with no call"),
                                   Text("here ")] + call(0, "read_file", R_ARGS)),
    "group_closer_after_prose": (G0 + "\n" + R + "\nnote\n" + G1 + "x",
                                 call(0, "read_file", R_ARGS) + [Text("note\n"),
                                                                 err(None, "bad_markup", 197, "markup that makes no call"),
                                                                 Text("x")]),
    "group_opener_then_json_prose_body": (G0 + '<ifm|tool_call> ["a"] </ifm|tool_call>' + G1 + "x",
                                          [err(None, "bad_markup", 16, "a group opener with no call"),
                                           Text('<ifm|tool_call> ["a"] </ifm|tool_call>'),
                                           err(None, "bad_markup", 54, "markup that makes no call"), Text("x")]),
    # a stray call closer right after a group opener: text, and so are the
    # blanks after it (fuzz finding: the newline was lost)
    "group_opener_then_stray_call_closer": (G0 + "</ifm|tool_call>\n x" + G1,
                                            [err(None, "bad_markup", 16, "a group opener with no call"),
                                             Text("</ifm|tool_call>\n x"),
                                             err(None, "bad_markup", 35, "markup that makes no call")]),
    "group_cut_off_before_a_call": ("a " + G0 + "\n <ifm|tool",
                                    [Text("a " + G0 + "\n <ifm|tool"), err(None, "unterminated", 29)]),
    "group_opener_then_prose_tag": (G0 + "\n<ifm|tool_call>use it like this</ifm|tool_call>",
                                    [err(None, "bad_markup", 17, "a group opener with no call"),
                                     Text("<ifm|tool_call>use it like this</ifm|tool_call>")]),
}

test_golden_every_chunker, test_golden_every_split = golden_tests("k2_horizon", GOLDEN, TOOLS)


@pytest.mark.parametrize("spec,wire,raw", [
    (None, None, "12"), (None, None, " tru "), (None, "string", "12"), (None, "any", " 1 "), (None, " array ", "[1]"),
    ({"type": "string"}, "integer", "3"), ({"type": "integer"}, "string", "3"), ({"type": "integer"}, None, "x"),
    ({"anyOf": [{"type": "integer"}]}, "string", "3"), ({"anyOf": [{"type": "integer"}]}, None, "3"),
    ({"type": ["integer", "null"]}, "string", "3"), ({"type": ["integer", "string"]}, "string", "3"),
    ({"type": "object"}, None, '{"a": 1}'), ({"enum": [1, 2]}, "string", "1"), ({"description": "d"}, "string", "1"),
    ({"type": "number"}, None, "NaN"),
])
def test_typing_matches_reference(spec, wire, raw):
    """The core's typing of one value equals glm_row_types.k2_value."""
    from sglang_toolparse.glm_row_types import k2_value

    props = {} if spec is None else {"v": spec}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": props}}}]
    pair = ("v", wire, raw) if wire is not None else ("v", raw)
    text = xml_call("f", [pair], typed=wire is not None)
    got = parse("k2_horizon", text, tools=tools)
    want = k2_value(spec, raw, wire)
    assert json.loads(got.calls[0].arguments) == {"v": want}
