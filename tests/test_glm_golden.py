"""Golden cases for the GLM-4.5/4.6 (glm45) and GLM-4.7/5 (glm47) formats,
each replayed at every split point and with every chunker: the merged
events must be identical. Values are typed by the tools' schemas."""
import json

import pytest

from golden import call, err, golden_tests
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, StreamParser, Text, parse
from support import every_split, run

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
        "maybe": {"type": ["string", "null"]},
        "code": {"type": "string"},
    },
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "edit", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}}}},
]


def g47(name, *pairs):
    return "<tool_call>" + name + "".join("<arg_key>%s</arg_key><arg_value>%s</arg_value>" % kv for kv in pairs) + "</tool_call>"


def g45(name, *pairs, sep="\n"):
    return ("<tool_call>" + name + sep + "".join("<arg_key>%s</arg_key>%s<arg_value>%s</arg_value>%s" % (k, sep, v, sep) for k, v in pairs)
            + "</tool_call>")


W_PAIRS = [("city", "Paris"), ("days", "3")]
W_ARGS = '{"city": "Paris", "days": 3}'

# name -> (format, text, expected events); "both" cases run for glm45 and glm47
GOLDEN = {
    # a tag whose name turns out to be prose at a byte that is also a one-
    # byte name separator ("\n"): the byte is text too (fuzz finding)
    "prose_tag_ended_by_a_newline": (
        "both", "<tool_call>f <\nx",
        [Text("<tool_call>f <\nx")],
    ),
    "single_with_prose": (
        "both", "Let me check.\n{W}",
        [Text("Let me check.")] + call(0, "get_weather", W_ARGS),
    ),
    "typed_values": (
        "both", None,  # built below
        call(0, "get_weather", '{"city": "123", "days": 3, "ratio": 0.5, "hot": true, "opts": {"a": [1, 2]}, '
             '"tags": ["x"], "unit": "c", "maybe": null}'),
    ),
    "string_that_looks_like_json_stays_a_string_47": (
        "glm47", g47("get_weather", ("city", '{"a": 1}'), ("code", "[1, 2]")),
        call(0, "get_weather", '{"city": "{\\"a\\": 1}", "code": "[1, 2]"}'),
    ),
    "whitespace_inside_values_kept": (
        "both", None,
        call(0, "edit", '{"path": " a.py ", "content": "def f():\\n    return 1\\n"}'),
    ),
    "zero_arguments": (
        "glm47", "<tool_call>noop</tool_call>",
        call(0, "noop", "{}"),
    ),
    "zero_arguments_45": (
        "glm45", "<tool_call>noop\n</tool_call>",
        call(0, "noop", "{}"),
    ),
    "literal_backslash_n_separators_45": (
        "glm45", g45("get_weather", *W_PAIRS, sep="\\n"),
        call(0, "get_weather", W_ARGS),
    ),
    "two_calls_one_chunk_and_prose_everywhere": (
        "both", "Before.\n{W}\nBetween.\n{N}\nAfter.",
        [Text("Before.")] + call(0, "get_weather", W_ARGS) + [Text("\nBetween.")] + call(1, "noop", "{}")
        + [Text("\nAfter.")],
    ),
    "three_calls_back_to_back": (
        "both", "{W}{N}{W}",
        call(0, "get_weather", W_ARGS) + call(1, "noop", "{}") + call(2, "get_weather", W_ARGS),
    ),
    "escapes_and_unicode_in_strings": (
        "both", None,
        call(0, "edit", '{"path": "caf\u00e9 \U0001F600 \\"q\\" \\\\ \\t", "content": "<b>x</b> </arg_valu"}'),
    ),
    "undeclared_key_typed_by_sglang_rules": (
        "glm47", g47("get_weather", ("extra", "[1, 2]"), ("other", "plain")),
        call(0, "get_weather", '{"extra": [1, 2], "other": "plain"}'),
    ),
    "unknown_tool_dropped_next_survives": (
        "glm47", g47("rm_rf", ("p", "/")) + "{W}",
        [err(None, "unknown_tool", 0, "rm_rf")] + call(0, "get_weather", W_ARGS),
    ),
    "truncated_inside_value": (
        "glm47", "Ok <tool_call>edit<arg_key>content</arg_key><arg_value>partial",
        [Text("Ok"), CallStart(0, "edit"), ArgsDelta(0, '{"content": "partial'), err(0, "unterminated", 62)],
    ),
    "truncated_before_name_complete": (  # text: nothing was sent (issue 18.2)
        "glm47", "<tool_call>get_wea",
        [Text("<tool_call>get_wea"), err(None, "unterminated", 18)],
    ),
    "missing_end_tag_before_next_call": (
        "glm47", "<tool_call>noop<tool_call>noop</tool_call>",
        None,  # the name ran into a marker that is not a name terminator: see below
    ),
    "missing_end_tag_after_value_before_next_call": (
        "glm47", g47("get_weather", *W_PAIRS)[: -len("</tool_call>")] + "{N}",
        call(0, "get_weather", W_ARGS) + call(1, "noop", "{}"),
    ),
    "empty_name": (
        "glm47", "<tool_call></tool_call>after",
        [err(None, "bad_name", 23), Text("after")],
    ),
    "partial_marker_released_at_end": (
        "both", "a <tool_c",
        [Text("a <tool_c")],
    ),
    "stray_end_tag_dropped": (  # markup of no call: an error carries it
        "both", "a</tool_call>b",
        [Text("a"), err(None, "bad_markup", 1, "markup that makes no call"), Text("b")],
    ),
    "prose_between_pairs_is_bad_markup": (
        "glm47", "<tool_call>get_weather\n junk<arg_key>city</arg_key> x <arg_value>Paris</arg_value>zz</tool_call>",
        None,
    ),
    "end_tag_inside_string_value_is_content": (
        "glm47", g47("edit", ("content", "a</tool_call><tool_call>b")) + "tail",
        call(0, "edit", '{"content": "a</tool_call><tool_call>b"}') + [Text("tail")],
    ),
    "leading_blank_lines_before_name": (
        "glm45", "<tool_call>\nget_weather\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        call(0, "get_weather", '{"days": 3}'),
    ),
}

W47 = g47("get_weather", *W_PAIRS)
W45 = g45("get_weather", *W_PAIRS)
TYPED = [("city", "123"), ("days", "3"), ("ratio", "0.5"), ("hot", "true"), ("opts", '{"a": [1,2]}'), ("tags", '["x"]'),
         ("unit", "c"), ("maybe", "null")]
WS = [("path", " a.py "), ("content", "def f():\n    return 1\n")]
ESC = [("path", 'caf\u00e9 \U0001F600 "q" \\ \t'), ("content", "<b>x</b> </arg_valu")]


def text_for(case, fmt):
    kind, text, _ = GOLDEN[case]
    build = g47 if fmt == "glm47" else g45
    if case == "typed_values":
        return build("get_weather", *TYPED)
    if case == "whitespace_inside_values_kept":
        return build("edit", *WS)
    if case == "escapes_and_unicode_in_strings":
        return build("edit", *ESC)
    w = W47 if fmt == "glm47" else W45
    n = "<tool_call>noop</tool_call>" if fmt == "glm47" else "<tool_call>noop\n</tool_call>"
    return text.replace("{W}", w).replace("{N}", n)


def expected_for(case, fmt):
    exp = GOLDEN[case][2]
    if case == "missing_end_tag_before_next_call":
        # "noop<tool_call>noop" is one (unknown) name: the name ends only at
        # <arg_key>, </tool_call> or a line break
        return [err(None, "unknown_tool", 0, "noop<tool_call>noop")]
    if case == "prose_between_pairs_is_bad_markup":
        # prose between a call's tags: bad_markup with no index (after the
        # call's first ArgsDelta: before its announcement it is reported
        # there), the call stands
        prose = "prose inside a call"
        return [CallStart(0, "get_weather"), ArgsDelta(0, '{"'), err(None, "bad_markup", 24, prose),
                err(None, "bad_markup", 52, prose), ArgsDelta(0, 'city": "Paris"'), err(None, "bad_markup", 82, prose),
                ArgsDelta(0, "}"), CallEnd(0, "get_weather", '{"city": "Paris"}')]
    if case == "typed_values" and fmt == "glm45":
        # GLM-4.5 types ["string", "null"] as "string" (its first non-null
        # type): a string parameter is the raw text the template wrote
        return call(0, "get_weather", exp[1].delta.replace('"maybe": null', '"maybe": "null"'))
    return exp


def cases(fmt):
    """case -> (text, expected events) of one format"""
    return {case: (text_for(case, fmt), expected_for(case, fmt))
            for case, (kind, _, _) in GOLDEN.items() if kind in ("both", fmt)}


test_golden_every_chunker, test_golden_every_split = golden_tests(["glm45", "glm47"], cases, TOOLS)


def test_aliases():
    text = g45("get_weather", *W_PAIRS)
    assert parse("glm", text, TOOLS) == parse("glm45", text, TOOLS)


def test_glm45_string_that_is_json_stays_its_raw_text():
    # the template writes a string raw; SGLang's GLM-4.5 would give str(json.loads(v))
    text = g45("get_weather", ("city", "true"), ("code", ' {"a":1} '), ("maybe", "5"))
    assert parse("glm45", text, TOOLS).calls[0].arguments == '{"city": "true", "code": " {\\"a\\":1} ", "maybe": "5"}'


@pytest.mark.parametrize("fmt", ["glm45", "glm47"])
@pytest.mark.parametrize("raw", ['"Paris"', "'x'", '"a","b"', "('doc', 1)", "\\n", " 'padded' ", "None", "[1, 2]"])
def test_string_values_are_the_raw_text(fmt, raw):
    """Issue 9.3: a string parameter is the text between the tags, whatever
    it looks like (quotes, a Python or CSV literal, JSON), at every split."""
    build = g47 if fmt == "glm47" else g45
    text = build("edit", ("path", raw), ("content", raw))
    want = json.dumps({"path": raw, "content": raw}, ensure_ascii=False)
    assert parse(fmt, text, TOOLS).calls[0].arguments == want
    for chunks in every_split(text):
        assert run(fmt, chunks, TOOLS) == call(0, "edit", want), chunks


def test_forward_unknown_types_values_without_schema():
    text = g47("rm_rf", ("p", "/"), ("n", "5"))
    assert run("glm47", [text], TOOLS, forward_unknown=True) == call(0, "rm_rf", '{"p": "/", "n": 5}')


def test_no_tool_list_accepts_any_name():
    assert run("glm47", [g47("anything", ("n", "5"))], None) == call(0, "anything", '{"n": 5}')


def test_name_is_sent_when_complete_and_string_value_streams():
    p = StreamParser("glm47", TOOLS)
    assert p.feed("<tool_call>get_wea") == []
    assert p.feed("ther<arg_k") == []  # "<arg_k" may still be part of the name
    assert p.feed("ey>") == []  # the name is validated, held until a parameter opens
    assert p.feed("city</arg_key><arg_value") == []
    assert p.feed(">Pa") == [CallStart(0, "get_weather"), ArgsDelta(0, '{"city": "Pa')]
    assert p.feed("ri") == [ArgsDelta(0, "ri")]
    assert p.feed("s</arg_val") == [ArgsDelta(0, "s")]
    assert p.feed("ue><arg_key>days</arg_key><arg_value>1") == [ArgsDelta(0, '", "days": ')]
    assert p.feed("2</arg_value>") == [ArgsDelta(0, "12")]
    assert p.feed("</tool_call>") == [ArgsDelta(0, "}"), CallEnd(0, "get_weather", '{"city": "Paris", "days": 12}')]


def test_glm45_name_sent_when_the_call_closes():
    p = StreamParser("glm45", TOOLS)
    assert p.feed("<tool_call>noop") == []
    assert p.feed("\n") == []  # a zero-argument call is announced at its own end tag
    assert p.feed("</tool_call>") == [CallStart(0, "noop"), ArgsDelta(0, "{}"), CallEnd(0, "noop", "{}")]


@pytest.mark.parametrize("fmt", ["glm45", "glm47"])
def test_64k_string_value_streams_before_end(fmt):
    """A 64 KB file content streams as it is generated, not at </tool_call>."""
    body = ("line with \"quotes\", tabs\t and unicode \u00e9\n" * 2000)[:65536]
    build = g47 if fmt == "glm47" else g45
    text = build("edit", ("path", "a.txt"), ("content", body))
    end = text.index("</arg_value>", text.index(body[:20]))
    p = StreamParser(fmt, TOOLS)
    streamed = []
    feeds_with_args = 0
    for i in range(0, end, 1000):
        evs = p.feed(text[i:min(i + 1000, end)])
        d = "".join(e.delta for e in evs if isinstance(e, ArgsDelta))
        feeds_with_args += bool(d)
        streamed.append(d)
    before_end = "".join(streamed)
    # everything except a possible partial end marker has streamed already
    assert before_end.startswith('{"path": "a.txt", "content": "')
    assert len(before_end) > len(json.dumps(body, ensure_ascii=False)) - 40
    assert feeds_with_args >= 60
    rest = p.feed(text[end:]) + p.finish()
    final = [e for e in rest if isinstance(e, CallEnd)][0]
    assert json.loads(final.arguments) == {"path": "a.txt", "content": body}
    assert final.arguments == before_end + "".join(e.delta for e in rest if isinstance(e, ArgsDelta))


def test_non_string_value_is_held_until_it_closes():
    p = StreamParser("glm47", TOOLS)
    evs = p.feed("<tool_call>get_weather<arg_key>opts</arg_key><arg_value>{\"a\": [1,")
    assert evs == [CallStart(0, "get_weather"), ArgsDelta(0, '{"opts": ')]
    assert p.feed(" 2]}") == []
    assert p.feed("</arg_value>") == [ArgsDelta(0, '{"a": [1, 2]}')]


def test_value_over_max_buffer_is_an_error():
    text = g47("get_weather", ("opts", "[" + "1," * 100 + "1]"), ("days", "2")) + "after"
    evs = run("glm47", [text], TOOLS, max_buffer=64)
    assert [type(e).__name__ for e in evs] == ["CallStart", "ArgsDelta", "ParseError", "Text"]
    assert evs[2].code == "buffer_limit" and evs[2].index == 0
    assert evs[3] == Text("after")


def test_lone_surrogate_stays_escaped():
    text = g47("edit", ("content", "a\ud800b"))
    assert parse("glm47", text, TOOLS).calls[0].arguments == '{"content": "a\\ud800b"}'


def test_standalone_glm_imports_no_sglang_torch_pydantic():
    import subprocess
    import sys

    code = (
        "import sys, sglang_toolparse as t\n"
        "tools = [{'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object', "
        "'properties': {'n': {'type': 'integer'}}}}}]\n"
        "r = t.parse('glm47', '<tool_call>f<arg_key>n</arg_key><arg_value>5</arg_value></tool_call>', tools)\n"
        "assert r.calls[0].arguments == '{\"n\": 5}', r\n"
        "print([m for m in sys.modules if m.split('.')[0] in ('sglang', 'torch', 'pydantic')])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


UNION_TOOLS = [{"type": "function", "function": {"name": "u", "parameters": {"anyOf": [
    {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "string"}}},
    {"type": "object", "properties": {"kind": {"const": "b"}, "x": {"type": "integer"}}},
]}}}]


@pytest.mark.parametrize("kind,x", [("a", '"5"'), ("b", "5")])
def test_glm47_discriminated_union_typed_with_later_siblings(kind, x):
    """SGLang types `x` with the discriminator that follows it, so such a
    call's arguments are sent whole when it ends (as SGLang buffers them)."""
    text = g47("u", ("x", "5"), ("kind", kind))
    args = '{"x": %s, "kind": "%s"}' % (x, kind)
    p = StreamParser("glm47", UNION_TOOLS)
    assert p.feed(text[:-len("</tool_call>")]) == [CallStart(0, "u")]
    assert p.feed("</tool_call>") == [ArgsDelta(0, args), CallEnd(0, "u", args)]
    for chunks in every_split(text):
        assert run("glm47", chunks, UNION_TOOLS) == call(0, "u", args)


def test_lone_surrogate_in_typed_value_stays_escaped():
    text = g47("get_weather", ("opts", '{"a": "x\ud800"}'))
    args = parse("glm47", text, TOOLS).calls[0].arguments
    assert args == '{"opts": {"a": "x\\ud800"}}'
    args.encode("utf-8")


@pytest.mark.parametrize("fmt", ["glm45", "glm47"])
def test_string_value_longer_than_the_limit_streams(fmt):
    """A string value is never held (its type cannot change what it is), so
    max_buffer does not bound it, however it is chunked; a leading blank
    run or a prefix that looks like JSON (once held, found by the fuzzer)
    streams like any other text."""
    from support import run as run_events
    from sglang_toolparse import ParseError

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    sep = "\n" if fmt == "glm45" else ""
    for value in ["\n" * 100 + "!", "[1.5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22] x"]:
        text = ("<tool_call>get_weather" + sep + "<arg_key>city</arg_key>" + sep + "<arg_value>"
                + value + "</arg_value>" + sep + "</tool_call>after")
        one = run_events(fmt, [text], tools, max_buffer=64)
        assert run_events(fmt, list(text), tools, max_buffer=64) == one
        assert [e for e in one if isinstance(e, ParseError)] == []
        assert parse(fmt, text, tools, max_buffer=64).calls[0].arguments == json.dumps({"city": value})
