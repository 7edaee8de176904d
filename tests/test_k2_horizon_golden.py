"""K2 Horizon (`k2_horizon`): golden cases of the native row (the template's
xml and xml_typed dialects) at every split, and its typing against the
reference (glm_row_types.k2_value, K2V3Detector's rules). Parity with
SGLang's detector and the adapter's handover: tests/test_k2_horizon.py."""
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
    "stray_group_tags_are_markup": ("a" + G1 + "b" + G0 + G1 + "c", [Text("abc")]),
    "stray_call_close_is_text": ("x </ifm|tool_call> y", [Text("x </ifm|tool_call> y")]),
    "prose_inside_group_is_text": (G0 + "\nnote " + R + "\n" + G1, [Text("note ")] + call(0, "read_file", R_ARGS)),
    "name_only_call": (group("<ifm|tool_call>noop</ifm|tool_call>"), call(0, "noop", "{}")),
    "partial_marker_released_at_end": ("see <ifm|tool_ca", [Text("see <ifm|tool_ca")]),
    "prose_tag_is_text": ("use <ifm|tool_call> tags here", [Text("use <ifm|tool_call> tags here")]),
    "unknown_tool_dropped_next_survives": (
        group(xml_call("rm", [("p", "/")]), R),
        [err(None, "unknown_tool", len(G0) + 1, "rm")] + call(0, "read_file", R_ARGS)),
    "cut_off_inside_a_string": (
        G0 + "\n<ifm|tool_call>read_file\n<ifm|arg_key>path</ifm|arg_key>\n<ifm|arg_value>a.p",
        [CallStart(0, "read_file"), ArgsDelta(0, '{"path": "a.p'), err(0, "unterminated", 92)]),
    # the json dialect is SGLang's (the adapter hands it over); the row reads its tag as prose
    "json_body_is_text_natively": (
        '<ifm|tool_call>{"name":"noop","arguments":{}}</ifm|tool_call>',
        [Text('<ifm|tool_call>{"name":"noop","arguments":{}}</ifm|tool_call>')]),
    "think_tags_are_text_natively": (
        "<ifm|think>x</ifm|think>ok", [Text("<ifm|think>x</ifm|think>ok")]),
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
