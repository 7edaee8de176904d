"""When a call is announced, and when a marker is just text (issues 15, 9.2).

* A call is announced (CallStart) only once its body has begun as its format
  requires: the first byte of JSON arguments, a complete parameter opening
  tag, or the call's own end for a call without arguments. A call whose body
  is malformed before that is reported (ParseError with no index) and leaves
  no event behind; the next announced call takes the next index, so the
  indices a client sees stay 0, 1, 2, ...
* A call that began well and breaks later has been streamed: it ends with a
  ParseError carrying its index (never a CallEnd with invented arguments).
* Qwen2.5/Hermes: a <tool_call> not followed (after whitespace) by `{` is
  prose, and so is a </tool_call> after it.
* DSML: every DSML parser reads every block and tag spelling.

Golden cases are replayed one-shot, char by char, token-like and cut in two
at every position; all must give the same events (error offsets included).
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import chunkings
from support import CHUNKERS, check_stream_invariants, every_split, run, tools_of

from sglang_toolparse import ArgsDelta, CallEnd, CallStart, ParseError, Text

TOOLS = tools_of("set_mode", "lookup", "ping")
DSML_FORMATS = ["deepseekv32", "deepseekv4", "deepseekv41"]
D = "\uff5cDSML\uff5c"
# (block, invoke, parameter) as each DSML variant writes them
SPELLINGS = {
    "deepseekv32": ("function_calls", "invoke", "parameter"),
    "deepseekv4": ("tool_calls", "invoke", "parameter"),
    "deepseekv41": (" calls", " invoke", " parameter"),
}
CB, CE = "<\uff5ctool\u2581calls\u2581begin\uff5c>", "<\uff5ctool\u2581calls\u2581end\uff5c>"
B, E, SEP = "<\uff5ctool\u2581call\u2581begin\uff5c>", "<\uff5ctool\u2581call\u2581end\uff5c>", "<\uff5ctool\u2581sep\uff5c>"


def dsml(block, invoke, param, *invokes):
    """A DSML block; each invoke is (name, body) where body is a list of
    (key, is_string, value) parameters, raw text, or None (self-closing)."""
    out = ["<%s%s>\n" % (D, block)]
    for name, body in invokes:
        if body is None:
            out.append('<%s%s name="%s"/>\n' % (D, invoke, name))
            continue
        out.append('<%s%s name="%s">\n' % (D, invoke, name))
        if isinstance(body, str):
            out.append(body)
        else:
            for k, is_str, v in body:
                out.append('<%s%s name="%s" string="%s">%s</%s%s>\n'
                           % (D, param, k, "true" if is_str else "false", v, D, param))
        out.append("</%s%s>\n" % (D, invoke))
    out.append("</%s%s>" % (D, block))
    return "".join(out)


def replay(fmt, text):
    """The merged events of `text`, checked equal for every chunking."""
    ref = run(fmt, [text], TOOLS)
    check_stream_invariants(ref)
    for name, chunker in CHUNKERS.items():
        assert run(fmt, chunker(text), TOOLS) == ref, name
    for chunks in every_split(text):
        assert run(fmt, chunks, TOOLS) == ref, chunks
    return ref


def shape(events):
    """(text, announced names, completed (index, name, args), errors (code, index))."""
    text = "".join(e.text for e in events if isinstance(e, Text))
    started = [(e.index, e.name) for e in events if isinstance(e, CallStart)]
    done = [(e.index, e.name, json.loads(e.arguments)) for e in events if isinstance(e, CallEnd)]
    errors = [(e.code, e.index) for e in events if isinstance(e, ParseError)]
    return text, started, done, errors


def first_delta(events, index):
    return next(e.delta for e in events if isinstance(e, ArgsDelta) and e.index == index)


# ---- Qwen2.5 / Hermes -------------------------------------------------------

JSONTAG = {
    # the hazard in this format: a name, then a body that is not JSON
    "name_then_bad_arguments": (
        'Switching.<tool_call>\n{"name": "set_mode", "arguments": enable}\n</tool_call>',
        ("Switching.", [], [], [("json_syntax", None)]),
    ),
    # cut off before the announcement: nothing was sent, so the text is
    # text (issue 18.2; docs/SEMANTICS.md "Cut-off and broken calls")
    "name_then_cut_off": (
        '<tool_call>\n{"name": "set_mode", "argum',
        ('<tool_call>\n{"name": "set_mode", "argum', [], [], [("unterminated", None)]),
    ),
    "name_then_bad_key": (
        '<tool_call>{"name": "set_mode", arguments: {}}</tool_call> ok',
        (" ok", [], [], [("json_syntax", None)]),
    ),
    # a rejected call takes no index: the next call is 0
    "rejected_then_good": (
        '<tool_call>{"name": "set_mode", "arguments": }</tool_call>\n'
        '<tool_call>{"name": "lookup", "arguments": {"id": 7}}</tool_call>',
        ("", [(0, "lookup")], [(0, "lookup", {"id": 7})], [("json_syntax", None)]),
    ),
    # began well, breaks later: streamed, ended by an error with its index
    "begun_then_broken": (
        '<tool_call>{"name": "lookup", "arguments": {"id": tru}}</tool_call>',
        ("", [(0, "lookup")], [], [("json_syntax", 0)]),
    ),
    "begun_then_cut_off": (
        '<tool_call>{"name": "lookup", "arguments": {"id": "A-',
        ("", [(0, "lookup")], [], [("unterminated", 0)]),
    ),
    "arguments_before_name": (
        '<tool_call>{"arguments": {"id": 1}, "name": "lookup"}</tool_call>',
        ("", [(0, "lookup")], [(0, "lookup", {"id": 1})], []),
    ),
    "arguments_before_unknown_name": (
        '<tool_call>{"arguments": {"id": 1}, "name": "nope"}</tool_call>',
        ("", [], [], [("unknown_tool", None)]),
    ),
    "no_arguments": (
        '<tool_call>{"name": "ping"}</tool_call>',
        ("", [(0, "ping")], [(0, "ping", {})], []),
    ),
    # issue 9.2: a marker that starts no call is prose
    "marker_in_prose": (
        "Use the <tool_call> tag like this. Then wrap the JSON object.",
        ("Use the <tool_call> tag like this. Then wrap the JSON object.", [], [], []),
    ),
    "marker_pair_in_prose": (
        "Wrap it as <tool_call>\n  name + args </tool_call>, nothing else.",
        ("Wrap it as <tool_call>\n  name + args </tool_call>, nothing else.", [], [], []),
    ),
    "marker_in_prose_then_call": (
        'Put it in <tool_call> tags:\n<tool_call>\n{"name": "ping", "arguments": {}}\n</tool_call>',
        ("Put it in <tool_call> tags:", [(0, "ping")], [(0, "ping", {})], []),
    ),
    "marker_then_end_of_stream": (
        "Checking.\n<tool_call>\n",
        ("Checking.\n<tool_call>\n", [], [], [("unterminated", None)]),
    ),
    "stray_end_tag_still_markup": (  # reported: bad_markup carries it (issue 18)
        "Done.</tool_call> Bye",
        ("Done. Bye", [], [], [("bad_markup", None)]),
    ),
}


@pytest.mark.parametrize("fmt", ["qwen25", "hermes"])
@pytest.mark.parametrize("case", sorted(JSONTAG))
def test_jsontag_golden(fmt, case):
    text, expected = JSONTAG[case]
    events = replay(fmt, text)
    assert shape(events) == expected
    for index, _ in expected[1]:
        assert first_delta(events, index)[0] in "{[\""  # announced at the body's first byte


def test_jsontag_announce_point():
    from sglang_toolparse import StreamParser

    p = StreamParser("qwen25", TOOLS)
    assert p.feed('<tool_call>\n{"name": "lookup"') == []
    assert p.feed(', "arguments": ') == []
    assert p.feed('{"id"') == [CallStart(0, "lookup"), ArgsDelta(0, '{"id"')]
    p = StreamParser("qwen25", TOOLS)
    assert p.feed('<tool_call>{"name": "ping"') == []
    assert p.feed("}") == [CallStart(0, "ping"), ArgsDelta(0, "{}"), CallEnd(0, "ping", "{}")]
    p = StreamParser("qwen25", TOOLS)
    assert p.feed("Use the <tool_call>") == [Text("Use the")]
    assert p.feed("  tag") == [Text(" <tool_call>  tag")]


# ---- DeepSeek V3 / V3.1 -------------------------------------------------------

DEEPSEEK = {
    ("deepseekv31", "name_then_bad_arguments"): (
        CB + B + "set_mode" + SEP + "enable" + E + B + "lookup" + SEP + '{"id": 2}' + E + CE,
        ("", [(0, "lookup")], [(0, "lookup", {"id": 2})], [("json_syntax", None)]),
    ),
    ("deepseekv31", "name_then_cut_off"): (
        "One moment." + CB + B + "set_mode" + SEP,
        ("One moment." + CB + B + "set_mode" + SEP, [], [], [("unterminated", None)]),
    ),
    ("deepseekv31", "begun_then_cut_off"): (
        CB + B + "lookup" + SEP + '{"id": "A',
        ("", [(0, "lookup")], [], [("unterminated", 0)]),
    ),
    ("deepseekv3", "name_then_bad_fence"): (
        CB + B + "function" + SEP + "set_mode\n~~~\n{}\n~~~" + E + CE,
        ("", [], [], [("bad_markup", None)]),
    ),
    ("deepseekv3", "name_then_cut_in_fence"): (
        CB + B + "function" + SEP + "set_mode\n```js",
        (CB + B + "function" + SEP + "set_mode\n```js", [], [], [("unterminated", None)]),
    ),
    ("deepseekv3", "good_call"): (
        CB + B + "function" + SEP + 'lookup\n```json\n{"id": 3}\n```' + E + CE,
        ("", [(0, "lookup")], [(0, "lookup", {"id": 3})], []),
    ),
}


@pytest.mark.parametrize("fmt,case", sorted(DEEPSEEK))
def test_deepseek_golden(fmt, case):
    text, expected = DEEPSEEK[(fmt, case)]
    assert shape(replay(fmt, text)) == expected


# ---- DSML (V3.2 / V4 / V4.1) -------------------------------------------------


def _own(fmt):
    return SPELLINGS[fmt]


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_undecorated_parameter_never_announced(fmt):
    """The hazard of issue 15: parameter tags written without the DSML prefix.
    Nothing is streamed for that invoke; the next one is call 0."""
    block, invoke, param = _own(fmt)
    bad = '<parameter name="enabled">true</%s%s>\n' % (D, param)
    text = "Toggling. " + dsml(block, invoke, param, ("set_mode", bad), ("lookup", [("id", True, "Q-17")]))
    events = replay(fmt, text)
    assert shape(events) == ("Toggling.", [(0, "lookup")], [(0, "lookup", {"id": "Q-17"})], [("bad_markup", None)])


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_undecorated_parameter_and_end_tag(fmt):
    block, invoke, _ = _own(fmt)
    body = '<parameter name="ref">R-88</parameter>\n'
    text = dsml(block, invoke, "parameter", ("lookup", body))
    assert shape(replay(fmt, text)) == ("", [], [], [("bad_markup", None)])


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_prose_without_parameters_never_announced(fmt):
    block, invoke, param = _own(fmt)
    text = dsml(block, invoke, param, ("set_mode", "I would turn it on.\n"))
    assert shape(replay(fmt, text)) == ("", [], [], [("bad_markup", None)])


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_cut_before_first_parameter(fmt):
    block, invoke, param = _own(fmt)
    text = "<%s%s>\n<%s%s name=\"set_mode\">\n<%s%s name=\"on\" stri" % (D, block, D, invoke, D, param)
    assert shape(replay(fmt, text)) == (text, [], [], [("unterminated", None)])


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_begun_then_broken_is_streamed_and_incomplete(fmt):
    block, invoke, param = _own(fmt)
    text = '<%s%s>\n<%s%s name="lookup">\n<%s%s name="id" string="true">Q-1\n</%s%s>\n</%s%s>' % (
        D, block, D, invoke, D, param, D, invoke, D, block)
    events = replay(fmt, text)
    assert shape(events) == ("", [(0, "lookup")], [], [("bad_markup", 0)])
    assert first_delta(events, 0).startswith('{"id": "')


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_zero_argument_calls(fmt):
    block, invoke, param = _own(fmt)
    text = dsml(block, invoke, param, ("ping", None), ("ping", []))
    assert shape(replay(fmt, text)) == ("", [(0, "ping"), (1, "ping")], [(0, "ping", {}), (1, "ping", {})], [])


@pytest.mark.parametrize("fmt", DSML_FORMATS)
@pytest.mark.parametrize("block", ["function_calls", "tool_calls", " calls", "calls"])
@pytest.mark.parametrize("tags", ["plain", "spaced"])
def test_dsml_every_spelling(fmt, block, tags):
    invoke, param = ("invoke", "parameter") if tags == "plain" else (" invoke", " parameter")
    text = "Looking it up.\n\n" + dsml(block, invoke, param, ("lookup", [("id", True, "Q 5"), ("n", False, "[1, 2]")]),
                                       ("lookup", '{"id": "J"}'))
    assert shape(replay(fmt, text)) == (
        "Looking it up.", [(0, "lookup"), (1, "lookup")],
        [(0, "lookup", {"id": "Q 5", "n": [1, 2]}), (1, "lookup", {"id": "J"})], [])


@pytest.mark.parametrize("fmt", DSML_FORMATS)
def test_dsml_announce_points(fmt):
    from sglang_toolparse import StreamParser

    block, invoke, param = _own(fmt)
    p = StreamParser(fmt, TOOLS)
    assert p.feed('<%s%s>\n<%s%s name="lookup">\n<%s%s name="id" string="true"' % (D, block, D, invoke, D, param)) == []
    assert p.feed(">") == [CallStart(0, "lookup"), ArgsDelta(0, '{"id": "')]
    p = StreamParser(fmt, TOOLS)
    assert p.feed('<%s%s>\n<%s%s name="lookup">\n ' % (D, block, D, invoke)) == []
    assert p.feed("{") == [CallStart(0, "lookup"), ArgsDelta(0, "{")]
    p = StreamParser(fmt, TOOLS)
    assert p.feed('<%s%s>\n<%s%s name="ping"/' % (D, block, D, invoke)) == []
    assert p.feed(">") == [CallStart(0, "ping"), ArgsDelta(0, "{}"), CallEnd(0, "ping", "{}")]


# ---- GLM-4.5 / GLM-4.7 -------------------------------------------------------

GLM = {
    "name_then_cut_off": (
        "Let me see.\n<tool_call>set_mode\n",
        ("Let me see.\n<tool_call>set_mode\n", [], [], [("unterminated", None)]),
    ),
    "key_then_cut_off": (
        "<tool_call>set_mode\n<arg_key>on</arg_key>\n<arg_val",
        ("<tool_call>set_mode\n<arg_key>on</arg_key>\n<arg_val", [], [], [("unterminated", None)]),
    ),
    "value_begun_then_cut_off": (
        "<tool_call>lookup\n<arg_key>id</arg_key>\n<arg_value>Q-",
        ("", [(0, "lookup")], [], [("unterminated", 0)]),
    ),
    "zero_arguments": (
        "<tool_call>ping\n</tool_call>",
        ("", [(0, "ping")], [(0, "ping", {})], []),
    ),
    # issue 9.2: a name is one word; a blank inside it followed by more text
    # means the <tool_call> was prose
    "marker_in_prose": (
        "Use the <tool_call> tag like this.\nThen wrap the JSON object.",
        ("Use the <tool_call> tag like this.\nThen wrap the JSON object.", [], [], []),
    ),
    "marker_pair_in_prose_then_call": (
        "Wrap as <tool_call>\n name args </tool_call>, like:\n<tool_call>ping\n</tool_call>",
        ("Wrap as <tool_call>\n name args </tool_call>, like:", [(0, "ping")], [(0, "ping", {})], []),
    ),
    "one_word_then_end_of_stream": (
        "A <tool_call>tag",
        ("A <tool_call>tag", [], [], [("unterminated", None)]),
    ),
    "missing_end_tag_tolerated": (
        "<tool_call>set_mode\n<tool_call>lookup\n<arg_key>id</arg_key>\n<arg_value>7</arg_value>\n</tool_call>",
        ("", [(0, "set_mode"), (1, "lookup")], [(0, "set_mode", {}), (1, "lookup", {"id": 7})], []),
    ),
}


@pytest.mark.parametrize("fmt", ["glm45", "glm47"])
@pytest.mark.parametrize("case", sorted(GLM))
def test_glm_golden(fmt, case):
    text, expected = GLM[case]
    if fmt == "glm47":
        text = text.replace("\n<arg", "<arg").replace("\n</tool_call>", "</tool_call>")
        if expected[0].startswith("<tool_call>"):  # a cut-off call released as text: its own text
            expected = (expected[0].replace("\n<arg", "<arg"),) + expected[1:]
    assert shape(replay(fmt, text)) == expected


# ---- the property ------------------------------------------------------------

# fragments a response is built from: well-formed calls, calls broken before
# or after their body began, cut-offs, prose and markers in prose
FRAGMENTS = {
    "qwen25": [
        '<tool_call>\n{"name": "lookup", "arguments": {"id": 1}}\n</tool_call>',
        '<tool_call>\n{"name": "ping"}\n</tool_call>',
        '<tool_call>\n{"name": "set_mode", "arguments": x}\n</tool_call>',
        '<tool_call>\n{"name": "lookup", "arguments": {"id": ]}\n</tool_call>',
        '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": "lookup", "arg',
        "Use <tool_call> tags.", "Sure.", " ", "\n", "<tool_call>", "}", "</tool_call>",
    ],
    "deepseekv31": [
        CB, CE, B + "lookup" + SEP + '{"id": 1}' + E, B + "set_mode" + SEP + "on" + E,
        B + "lookup" + SEP + '{"id": ' + E, B + "ping" + SEP, "Hi.", "\n", '{"a": 1}',
    ],
    "deepseekv4": [
        "<%stool_calls>" % D, "</%stool_calls>" % D, "<%s calls>" % D,
        '<%sinvoke name="lookup">' % D, '<%s invoke name="ping">' % D, '<%sinvoke name="ping"/>' % D,
        "</%sinvoke>" % D, "</%s invoke>" % D,
        '<%sparameter name="id" string="true">Q</%sparameter>' % (D, D),
        '<%s parameter name="n" string="false">[1]' % D, "</%sparameter>" % D,
        '<parameter name="on">true</parameter>', "{\"id\": 2}", "text", "\n",
    ],
    "hermes": [
        '<tool_call>{"name": "lookup", "arguments": {"id": 1}}</tool_call>',
        '<tool_call>{"arguments": {"id": 2}, "name": "lookup"}</tool_call>',
        '<tool_call>{"name": "set_mode", "arguments": "x}</tool_call>',
        "<tool_call> not a call", "</tool_call>", "Ok.", "\n", "{",
    ],
    "deepseekv3": [
        CB, CE, B + "function" + SEP + 'lookup\n```json\n{"id": 1}\n```' + E,
        B + "function" + SEP + "set_mode\n~~~" + E, B + "function" + SEP + "ping\n```json\n{", "```", "Hi.", "\n",
    ],
    "glm45": [
        "<tool_call>", "</tool_call>", "lookup\n", "ping\n", "two words ", "<arg_key>id</arg_key>\n",
        "<arg_value>5</arg_value>\n", "<arg_value>", "</arg_value>", "hello", "\n",
    ],
    "glm47": [
        "<tool_call>", "</tool_call>", "lookup", "ping", "set_mode", "<arg_key>id</arg_key>",
        "<arg_value>5</arg_value>", "<arg_value>", "</arg_value>", "hello", "\n",
    ],
}


@pytest.mark.parametrize("fmt", sorted(FRAGMENTS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_announces_oneshot_calls_plus_only_begun_ones(fmt, data):
    """For any input: the calls announced while streaming are the one-shot
    calls, plus only calls whose body began well-formed (each of those
    streamed argument bytes and then ended with an error naming it)."""
    text = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS[fmt]), max_size=10)))
    one = run(fmt, [text], TOOLS)
    oneshot_calls = [(e.index, e.name) for e in one if isinstance(e, CallEnd)]
    streamed = run(fmt, data.draw(chunkings(text)), TOOLS)
    check_stream_invariants(streamed)
    announced = [(e.index, e.name) for e in streamed if isinstance(e, CallStart)]
    assert [i for i, _ in announced] == list(range(len(announced)))  # contiguous indices
    assert set(oneshot_calls) <= set(announced)
    for index, _ in set(announced) - set(oneshot_calls):
        evs = [e for e in streamed if getattr(e, "index", None) == index]
        assert isinstance(evs[1], ArgsDelta), evs  # the body began before anything else
        assert isinstance(evs[-1], ParseError), evs  # and it was never completed
    for i, ev in enumerate(streamed):
        if isinstance(ev, CallStart):
            nxt = streamed[i + 1]
            assert isinstance(nxt, ArgsDelta) and nxt.index == ev.index


# ---- has_tool_call agrees with parsing (issue 9.2) ------------------------------


@pytest.mark.parametrize("cls,text,expected", [
    ("Qwen25NativeDetector", "Use the <tool_call> tag like this. Then wrap the JSON object.", False),
    ("Qwen25NativeDetector", "<tool_call>\n", True),  # a call cut off
    ("Qwen25NativeDetector", '<tool_call>\n{"name": "x", "arguments": bad}\n</tool_call>', True),  # malformed call
    ("HermesNativeDetector", "Wrap it in <tool_call>...</tool_call>.", False),
    ("Glm47NativeDetector", "Use the <tool_call> tag like this.", False),
    ("Glm45NativeDetector", "<tool_call>ping\n</tool_call>", True),
    ("DeepSeekV4NativeDetector", '<\uff5cDSML\uff5cfunction_calls><\uff5cDSML\uff5cinvoke name="p"/>'
                                 '</\uff5cDSML\uff5cfunction_calls>', True),
    ("DeepSeekV32NativeDetector", "no markup", False),
])
def test_has_tool_call_agrees_with_parsing(cls, text, expected):
    pytest.importorskip("sglang")
    from sglang_toolparse import sglang_adapter

    assert getattr(sglang_adapter, cls)().has_tool_call(text) is expected


def _has_call_by_full_parse(fmt, markers, text):
    from sglang_toolparse import _core

    if not any(m in text for m in markers):  # the quick check: no call can start
        return False
    events = _core.StreamParser(fmt, None).parse_all(text)
    return any(not isinstance(ev, Text) for ev in events) or "".join(ev.text for ev in events) != text


@pytest.mark.parametrize("cls", ["Qwen25NativeDetector", "HermesNativeDetector", "Glm45NativeDetector",
                                 "Glm47NativeDetector", "Qwen3CoderNativeDetector", "MinimaxM2NativeDetector",
                                 "KimiK2NativeDetector", "DeepSeekV4NativeDetector"])
def test_has_tool_call_stops_early_but_equals_a_full_parse(cls):
    """has_tool_call feeds growing pieces from the first marker and stops at
    the first call event: the same answer as parsing the whole text, for
    markers at any distance and calls anywhere in a long text."""
    pytest.importorskip("sglang")
    from format_table import seed_responses, spec
    from sglang_toolparse import sglang_adapter

    det_cls = getattr(sglang_adapter, cls)
    fmt = det_cls._tp_format
    marks = list(det_cls._tp_markers) + list(spec(fmt).markers)
    texts = list(seed_responses(fmt))
    for m in marks:
        texts += ["x" * 300 + m + "y" * 700, m, "a " + m + " b " * 400 + m, "p" * 5000 + m + "\n"]
    for r in seed_responses(fmt)[:4]:
        texts += ["Use " + marks[0] + " like this. " * 50 + r, r + " and " + marks[0] * 3, r[: len(r) // 2]]
    det = det_cls()
    for text in texts:
        assert det.has_tool_call(text) is _has_call_by_full_parse(fmt, det_cls._tp_markers, text), (fmt, text[:200])
