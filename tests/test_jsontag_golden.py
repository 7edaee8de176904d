"""Golden cases for the Qwen2.5 and Hermes formats, each replayed at every
split point and with every chunker: the merged events must be identical."""
from golden import call, err, golden_tests
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Text
from support import run

TOOLS = ["get_weather", "search", "noop"]


W = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'
W_ARGS = '{"city": "Paris", "days": 3}'
S = '{"name": "search", "arguments": {"q": "x"}}'
S_ARGS = '{"q": "x"}'

GOLDEN = {
    "qwen_single": (
        "Sure, let me check.\n<tool_call>\n" + W + "\n</tool_call>",
        [Text("Sure, let me check.")] + call(0, "get_weather", W_ARGS),
    ),
    "hermes_single": (
        "<tool_call>" + W + "</tool_call>",
        call(0, "get_weather", W_ARGS),
    ),
    "two_calls_newline_separated": (
        "<tool_call>\n" + W + "\n</tool_call>\n<tool_call>\n" + S + "\n</tool_call>",
        call(0, "get_weather", W_ARGS) + call(1, "search", S_ARGS),
    ),
    "prose_before_between_after": (
        "Before.\n<tool_call>\n" + W + "\n</tool_call>\nBetween.\n<tool_call>\n" + S + "\n</tool_call>\nAfter.",
        [Text("Before.")] + call(0, "get_weather", W_ARGS) + [Text("\nBetween.")]
        + call(1, "search", S_ARGS) + [Text("\nAfter.")],
    ),
    "parameters_key": (
        '<tool_call>{"name": "search", "parameters": {"q": "x"}}</tool_call>',
        call(0, "search", S_ARGS),
    ),
    "arguments_before_name": (
        '<tool_call>{"arguments": {"q": "x"}, "name": "search"}</tool_call>',
        call(0, "search", S_ARGS),
    ),
    "zero_arguments": (
        '<tool_call>{"name": "noop", "arguments": {}}</tool_call>',
        call(0, "noop", "{}"),
    ),
    "missing_arguments": (
        '<tool_call>{"name": "noop"}</tool_call>',
        call(0, "noop", "{}"),
    ),
    "end_tag_inside_json_string": (
        '<tool_call>{"name": "search", "arguments": {"q": "</tool_call><tool_call>"}}</tool_call>tail',
        call(0, "search", '{"q": "</tool_call><tool_call>"}') + [Text("tail")],
    ),
    "unicode_and_escapes": (
        '<tool_call>{"name":"search","arguments":{"q":"caf\\u00e9 \\ud83d\\ude00 \u4e2d \\/ \\"q\\" \\\\ \\n\\t"}}</tool_call>',
        call(0, "search", '{"q": "café \U0001F600 \u4e2d / \\"q\\" \\\\ \\n\\t"}'),
    ),
    "numbers_normalized_like_json_dumps": (
        '<tool_call>{"name":"search","arguments":{"a":1.50,"b":1e5,"c":-0,"d":1E-7,"e":[true,false,null]}}</tool_call>',
        call(0, "search", '{"a": 1.5, "b": 100000.0, "c": 0, "d": 1e-07, "e": [true, false, null]}'),
    ),
    "truncated_by_max_tokens": (
        'Ok <tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
        [Text("Ok"), CallStart(0, "get_weather"), ArgsDelta(0, '{"city": "Par'), err(0, "unterminated", 65)],
    ),
    # cut off before the call was announced: its text is text (issue 18.2)
    "truncated_before_name": (
        '<tool_call>\n{"name": "get_wea',
        [Text('<tool_call>\n{"name": "get_wea'), err(None, "unterminated", 29)],
    ),
    "unknown_tool_dropped_next_survives": (
        '<tool_call>{"name": "rm_rf", "arguments": {"p": "/"}}</tool_call>\n<tool_call>' + S + "</tool_call>",
        [err(None, "unknown_tool", 27, "rm_rf")] + call(0, "search", S_ARGS),
    ),
    "malformed_json_dropped_prose_and_next_survive": (
        '<tool_call>{"name": "search", "arguments": {"q": }}</tool_call> and then <tool_call>' + S + "</tool_call>",
        [CallStart(0, "search"), ArgsDelta(0, '{"q": '), err(0, "json_syntax", 49), Text(" and then")]
        + call(1, "search", S_ARGS),
    ),
    "not_json_after_marker": (  # a marker that starts no call is prose (issue 9.2)
        "<tool_call>hello</tool_call>bye",
        [Text("<tool_call>hello</tool_call>bye")],
    ),
    "missing_name": (
        '<tool_call>{"arguments": {"q": "x"}}</tool_call>',
        [err(None, "missing_name", 35)],
    ),
    "name_not_a_string": (
        '<tool_call>{"name": 5, "arguments": {}}</tool_call>x',
        [err(None, "bad_name", 20), Text("x")],
    ),
    "trailing_content_inside_tag": (
        '<tool_call>{"name": "noop", "arguments": {}} junk</tool_call>',
        call(0, "noop", "{}") + [err(None, "trailing_content", 45)],
    ),
    "missing_end_tag_before_next_call": (
        '<tool_call>{"name": "noop", "arguments": {}}\n<tool_call>' + S + "</tool_call>",
        call(0, "noop", "{}") + call(1, "search", S_ARGS),
    ),
    "missing_end_tag_at_end_of_stream": (
        '<tool_call>{"name": "noop", "arguments": {}}\n',
        call(0, "noop", "{}"),
    ),
    "partial_marker_released_at_end": (
        "a <tool_c",
        [Text("a <tool_c")],
    ),
    "near_miss_marker_is_text": (
        "x <tool_calx> y",
        [Text("x <tool_calx> y")],
    ),
    # an end tag that closes nothing: markup of no call, an error whose
    # dropped text is the tag
    "stray_end_tag_dropped": (
        "a</tool_call>b",
        [Text("a"), err(None, "bad_markup", 1, "markup that makes no call"), Text("b")],
    ),
    "trailing_whitespace_without_calls_kept": (
        "just prose\n\n",
        [Text("just prose\n\n")],
    ),
    "leading_whitespace_before_call_dropped": (
        "\n\n<tool_call>" + W + "</tool_call>\n",
        call(0, "get_weather", W_ARGS),
    ),
    "arguments_as_string": (
        '<tool_call>{"name": "search", "arguments": "{\\"q\\": 1}"}</tool_call>',
        call(0, "search", '"{\\"q\\": 1}"'),
    ),
    "extra_keys_ignored": (
        '<tool_call>{"id": 7, "name": "search", "meta": {"a": [1, {"b": "}"}]}, "arguments": {"q": "x"}}</tool_call>',
        call(0, "search", S_ARGS),
    ),
}


test_golden_every_chunker, test_golden_every_split = golden_tests(["qwen25", "hermes"], GOLDEN, TOOLS)


def test_forward_unknown_emits_call():
    text = '<tool_call>{"name": "rm_rf", "arguments": {"p": "/"}}</tool_call>'
    assert run("qwen25", [text], TOOLS, forward_unknown=True) == call(0, "rm_rf", '{"p": "/"}')


def test_no_tool_list_accepts_any_name():
    text = '<tool_call>{"name": "anything", "arguments": {}}</tool_call>'
    assert run("hermes", [text], None) == call(0, "anything", "{}")


def test_arguments_stream_before_the_call_closes():
    from sglang_toolparse import StreamParser

    p = StreamParser("qwen25", TOOLS)
    evs = p.feed('<tool_call>\n{"name": "search", "arguments": {"q": "long te')
    assert [type(e).__name__ for e in evs] == ["CallStart", "ArgsDelta"]
    assert evs[1].delta == '{"q": "long te'
    assert p.feed("xt") == [ArgsDelta(0, "xt")]
    assert p.feed('"}}\n</tool_call>') == [ArgsDelta(0, '"}'), CallEnd(0, "search", '{"q": "long text"}')]


def test_name_waits_for_validation():
    from sglang_toolparse import StreamParser

    p = StreamParser("qwen25", TOOLS)
    assert p.feed('<tool_call>{"name": "sea') == []
    assert p.feed('rch"') == []  # validated; announced when the body begins (issue 15)
    assert p.feed(', "arguments": ') == []
    assert p.feed("{") == [CallStart(0, "search"), ArgsDelta(0, "{")]


def test_marker_is_held_back_only_while_it_can_match():
    from sglang_toolparse import StreamParser

    p = StreamParser("qwen25", TOOLS)
    assert p.feed("Hello <tool") == [Text("Hello")]  # " " held as whitespace, "<tool" as marker prefix
    assert p.feed("box>") == [Text(" <toolbox>")]
