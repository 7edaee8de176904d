"""Golden cases of prose inside a call (issue 18), each engine, at every
split: the raw text of each error, the text and the calls (every byte
accounted for), and the merged events through tests/golden.py. The property
over rendered calls is tests/test_call_prose.py; docs/SEMANTICS.md,
"Dropped text"."""
from __future__ import annotations

import pytest

from golden import err, golden_tests
from support import every_split
from test_call_prose import D, DSML_TAGS
from test_lossless import calls_of, check_accounted, check_tiled, stream_events
from sglang_toolparse import ArgsDelta, CallEnd, CallStart
from sglang_toolparse._core import Markup
from sglang_toolparse.api import collect, parse

# (format, text, [(code, raw) of the errors], calls) with the events in
# GOLDEN_EVENTS: the prose's error after the call's first ArgsDelta when it
# came before the announcement, where it stands otherwise.

TOOLS = ["get_weather", "search", "f"]
GC = "\uff5cGCML\uff5c"
M3 = "]<]minimax[>["
STEP_B, STEP_E = "<\uff5ctool_calls_begin\uff5c>", "<\uff5ctool_calls_end\uff5c>"
STEP_CB, STEP_CE, STEP_SEP = "<\uff5ctool_call_begin\uff5c>", "<\uff5ctool_call_end\uff5c>", "<\uff5ctool_sep\uff5c>"


def _dsml(fmt, body, name="f"):
    blk, inv, _ = DSML_TAGS[fmt]
    return "<%s%s>\n<%s%s name=\"%s\">\n%s</%s%s>\n</%s%s>" % (D, blk, D, inv, name, body, D, inv, D, blk)


def _dp(fmt, k, v, string=True):
    par = DSML_TAGS[fmt][2]
    return '<%s%s name="%s" string="%s">%s</%s%s>\n' % (D, par, k, "true" if string else "false", v, D, par)


def _muse_tag(param, is_tag=False):
    """a Muse call with one parameter element `param` (its tag and value)"""
    body = param + "</atem:parameter>\n"
    text = (' to=f<|message|><atem:function_calls>\n<atem:invoke name="f">\n' + body
            + "</atem:invoke>\n</atem:function_calls><|eom|>")
    return ("muse", text, "", [("f", '{"a": 1}' if is_tag else "{}", True)], [] if is_tag else [("bad_markup", body)],
            [' to=f<|message|><atem:function_calls>\n', '\n</atem:function_calls><|eom|>'])


PROSE_CASES = {
    # id: (format, text, expected text, calls, [(code, raw)][, Markup events])
    "qwen3-between-params": (
        "qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\nHELLO there\n<parameter=b>\n2\n"
        "</parameter>\n</function>\n</tool_call>", "", [("f", '{"a": "1", "b": "2"}', True)],
        [("bad_markup", "HELLO there\n")]),
    "qwen3-before-first-and-after-last": (
        "qwen3_coder", "<tool_call>\n<function=f>\nsee a<b \n<parameter=a>\n1\n</parameter>\ndone.\n</function>\n"
        "</tool_call>", "", [("f", '{"a": "1"}', True)], [("bad_markup", "see a<b \n"), ("bad_markup", "done.\n")]),
    "qwen3-refused-call-keeps-it-in-its-raw": (
        "qwen3_coder", "<tool_call>\n<function=nope>\nhm\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        "", [], [("unknown_tool", "<tool_call>\n<function=nope>\nhm\n<parameter=a>\n1\n</parameter>\n</function>\n"
                  "</tool_call>")]),
    "qwen3-cut-off-after-prose-before-announcement": (
        "qwen3_coder", "Hi <tool_call>\n<function=f>\nhm", "Hi <tool_call>\n<function=f>\nhm", [],
        [("unterminated", "")]),
    "qwen3-cut-off-after-prose": (
        "qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\nhm", "",
        [("f", '{"a": "1"', False)], [("bad_markup", "hm"), ("unterminated", "")]),
    "minimax-m2-between-params": (
        "minimax_m2", '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1</parameter>\nHELLO\n'
        '<parameter name="b">2</parameter>\n</invoke>\n</minimax:tool_call>', "", [("f", '{"a": "1", "b": "2"}', True)],
        [("bad_markup", "HELLO\n")]),
    "kimi-k3-after-the-call-tag": (
        "kimi_k3", '<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|>hm<|open|>argument key="a" type="string"'
        '<|sep|>x<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>', "", [("f", '{"a": "x"}', True)],
        [("bad_markup", "hm")]),
    "step3-between-params": (
        "step3", STEP_B + "\n" + STEP_CB + "\nfunction" + STEP_SEP + '<steptml:invoke name="f"><steptml:parameter '
        'name="a">x</steptml:parameter> no <steptml:parameter name="b">y</steptml:parameter></steptml:invoke>'
        + STEP_CE + "\n" + STEP_E, "", [("f", '{"a": "x", "b": "y"}', True)], [("bad_markup", "no ")]),
    "glm47-between-and-inside-pairs": (
        "glm47", "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value>HELLO<arg_key>b</arg_key> x "
        "<arg_value>2</arg_value></tool_call>", "", [("f", '{"a": 1, "b": 2}', True)],
        [("bad_markup", "HELLO"), ("bad_markup", "x ")]),
    "glm45-before-first-pair": (
        "glm45", "<tool_call>f\nhm\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n\\n</tool_call>", "",
        [("f", '{"a": 1}', True)], [("bad_markup", "hm\n")]),
    "hunyuan-after-last-pair": (
        "hunyuan", "<tool_calls>\n<tool_call>f<tool_sep>\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\nok\n"
        "</tool_call>\n</tool_calls>", "", [("f", '{"a": "1"}', True)], [("bad_markup", "ok\n")]),
    "k2-horizon-between-pairs": (
        "k2_horizon", "<ifm|tool_call>f\n<ifm|arg_key>a</ifm|arg_key>\n<ifm|arg_value>1</ifm|arg_value>\nhm\n"
        "<ifm|arg_key>b</ifm|arg_key>\n<ifm|arg_value>2</ifm|arg_value>\n</ifm|tool_call>", "",
        [("f", '{"a": 1, "b": 2}', True)], [("bad_markup", "hm\n")]),
    "dsml-v32-around-params": (
        "deepseekv32", _dsml("deepseekv32", "Hi " + _dp("deepseekv32", "a", "1") + "HELLO there\n"
                             + _dp("deepseekv32", "b", "2", False) + "bye\n"), "",
        [("f", '{"a": "1", "b": 2}', True)],
        [("bad_markup", "Hi "), ("bad_markup", "HELLO there\n"), ("bad_markup", "bye\n")]),
    "dsml-v41-between-params": (
        "deepseekv41", _dsml("deepseekv41", _dp("deepseekv41", "a", "1") + "x\n" + _dp("deepseekv41", "b", "2")), "",
        [("f", '{"a": "1", "b": "2"}', True)], [("bad_markup", "x\n")]),
    "dsml-v4-prose-and-no-parameter-is-dropped": (
        "deepseekv4", _dsml("deepseekv4", "just words\n"), "", [],
        [("bad_markup", _dsml("deepseekv4", "just words\n"))]),
    "gigachat35-between-params": (
        "gigachat35", "<%stool_calls>\n<%sinvoke name=\"f\">\n<%sparameter name=\"a\" string=\"true\">1</%sparameter>"
        "\nhm\n</%sinvoke>\n</%stool_calls>" % (GC, GC, GC, GC, GC, GC), "", [("f", '{"a": "1"}', True)],
        [("bad_markup", "hm\n")]),
    "minimax-m3-between-params": (
        "minimax_m3", M3 + "<tool_call>\n" + M3 + '<invoke name="f">' + M3 + "<a>1" + M3 + "</a> hm " + M3 + "<b>2"
        + M3 + "</b>" + M3 + "</invoke>\n" + M3 + "</tool_call>", "", [("f", '{"a": "1", "b": "2"}', True)],
        [("bad_markup", "hm ")]),
    "muse-between-params": (
        "muse", ' to=f<|message|><atem:function_calls>\n<atem:invoke name="f">\nhm\n<atem:parameter name="a">1'
        '</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>', "", [("f", '{"a": 1}', True)],
        [("bad_markup", "hm\n")], [' to=f<|message|><atem:function_calls>\n', '\n</atem:function_calls><|eom|>']),
    # A parameter's tag is read up to 4096 bytes (fmt_channel.c TAG_BOUND):
    # one that turns out no tag (no `name="` before its `>`, or none within
    # the bound) is prose from its `<`, its bytes taken from the tail ring,
    # also when it began chunks before (they were lost: the dropped text
    # began at the chunk or checkpoint where it was decided).
    # (the long ones: their raw text at every split, not in golden.py's
    # runner, which keeps texts short)
    "muse-long-partial-parameter-tag-is-prose": _muse_tag('<atem:parameter n' + " " * 5000 + 'ame="a">1'),
    "muse-partial-parameter-tag-is-prose": _muse_tag('<atem:parameter n' + " " * 40 + 'ame="a">1'),
    "muse-parameter-tag-past-the-bound-is-prose": _muse_tag('<atem:parameter' + " " * 5000 + 'name="a">1'),
    "muse-parameter-tag-under-the-bound": _muse_tag('<atem:parameter' + " " * 4000 + 'name="a">1', True),
}


@pytest.mark.parametrize("case", sorted(PROSE_CASES))
def test_prose_inside_a_call_raw_text(case):
    """The raw text of each error, the text and the calls, at every split
    and char by char, every byte accounted for (check_markup_case)."""
    fmt, text, exp_text, calls, errors, *markup = PROSE_CASES[case]
    one = parse(fmt, text, TOOLS)
    assert (one.text, calls_of(one), [(e.code, e.raw) for e in one.errors]) == (exp_text, calls, errors)
    for chunks in [[text]] + list(every_split(text)) + [list(text)]:
        events = stream_events(fmt, chunks, TOOLS)
        assert collect(events) == one, chunks
        # (Muse's framing: Markup events, merged as the chunks allow)
        assert "".join(m.raw for m in events if type(m) is Markup) == "".join(markup[0] if markup else []), chunks
        check_accounted(fmt, text, events, one, TOOLS)


def _at(case, prose, nth=0):
    """the stream byte offset where `prose` begins in a case's text"""
    text = PROSE_CASES[case][1]
    i = -1
    for _ in range(nth + 1):
        i = text.index(prose, i + 1)
    return len(text[:i].encode("utf-8"))


def _prose(case, prose, nth=0):
    return err(None, "bad_markup", _at(case, prose, nth), "prose inside a call")


def _events(case):
    """The merged events of each golden case: the call's events with the
    prose's errors where the core reports them."""
    S, A, E = CallStart, ArgsDelta, CallEnd

    def q(prose):
        return _prose(case, prose)
    return {
        "qwen3-between-params": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("HELLO"), A(0, ', "b": "2"}'),
                                 E(0, "f", '{"a": "1", "b": "2"}')],
        # before the announcement: reported after the first ArgsDelta
        "qwen3-before-first-and-after-last": lambda: [S(0, "f"), A(0, '{"'), q("see"), A(0, 'a": "1"'),
                                              q("done"), A(0, "}"), E(0, "f", '{"a": "1"}')],
        "qwen3-cut-off-after-prose": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("hm"),
                                      err(0, "unterminated", len(PROSE_CASES[case][1]))],
        "minimax-m2-between-params": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("HELLO"), A(0, ', "b": "2"}'),
                                      E(0, "f", '{"a": "1", "b": "2"}')],
        "kimi-k3-after-the-call-tag": lambda: [S(0, "f"), A(0, '{"'), q("hm"), A(0, 'a": "x"}'),
                                               E(0, "f", '{"a": "x"}')],
        "step3-between-params": lambda: [S(0, "f"), A(0, '{"a": "x"'), q("no "), A(0, ', "b": "y"}'),
                                 E(0, "f", '{"a": "x", "b": "y"}')],
        "glm47-between-and-inside-pairs": lambda: [S(0, "f"), A(0, '{"a": 1'), q("HELLO"), q("x "),
                                           A(0, ', "b": 2}'), E(0, "f", '{"a": 1, "b": 2}')],
        "glm45-before-first-pair": lambda: [S(0, "f"), A(0, '{"'), q("hm"), A(0, 'a": 1}'), E(0, "f", '{"a": 1}')],
        "hunyuan-after-last-pair": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("ok"), A(0, "}"), E(0, "f", '{"a": "1"}')],
        "k2-horizon-between-pairs": lambda: [S(0, "f"), A(0, '{"a": 1'), q("hm"), A(0, ', "b": 2}'),
                                     E(0, "f", '{"a": 1, "b": 2}')],
        "dsml-v32-around-params": lambda: [S(0, "f"), A(0, '{"a": "'), q("Hi "), A(0, '1"'), q("HELLO"),
                                   A(0, ', "b": 2'), q("bye"), A(0, "}"), E(0, "f", '{"a": "1", "b": 2}')],
        "dsml-v41-between-params": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("x\n"), A(0, ', "b": "2"}'),
                                    E(0, "f", '{"a": "1", "b": "2"}')],
        "gigachat35-between-params": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("hm"), A(0, "}"),
                                              E(0, "f", '{"a": "1"}')],
        "minimax-m3-between-params": lambda: [S(0, "f"), A(0, '{"a": "1"'), q("hm"), A(0, ', "b": "2"}'),
                                      E(0, "f", '{"a": "1", "b": "2"}')],
        "muse-between-params": lambda: [S(0, "f"), A(0, "{"), q("hm"), A(0, '"a": 1}'), E(0, "f", '{"a": 1}')],
        "muse-partial-parameter-tag-is-prose": lambda: [S(0, "f"), A(0, "{"), q("<atem:parameter"), A(0, "}"),
                                                        E(0, "f", "{}")],
    }[case]()


GOLDEN_FORMATS = sorted({PROSE_CASES[c][0] for c in PROSE_CASES})


def _golden(fmt):
    out = {}
    for case, (f, text, *_) in PROSE_CASES.items():
        if f == fmt:
            try:
                out[case] = (text, _events(case))
            except KeyError:  # (cases checked by their raw text only)
                pass
    return out


test_golden_every_chunker, test_golden_every_split = golden_tests(GOLDEN_FORMATS, _golden, TOOLS)


_MUSE_H = ' to=f<|message|><atem:function_calls>\n<atem:invoke name="f">\n'
_MUSE_T = "\n</atem:invoke>\n</atem:function_calls><|eom|> ok"
MUSE_LIMIT_CASES = {
    # a value held past max_buffer after prose inside the call: the call
    # fails where the limit is crossed, its dropped text from there (it
    # began at the call's `<`, so held the prose's bytes again: fuzz
    # finding, fuzz/regress/muse--value-over-max-buffer-after-prose-in-call)
    "value-over-max-buffer-after-prose": (
        _MUSE_H + '<atem:parameter name="a">1</atem:parameter>\nhm\n<atem:parameter name="b">[' + "1, " * 30
        + "2]</atem:parameter>" + _MUSE_T, {"max_buffer": 64}, [("f", '{"a": 1', False)],
        [("bad_markup", 105, "hm\n"), ("buffer_limit", 197, "1, " * 9 + "2]</atem:parameter>"
                                       "\n</atem:invoke>\n</atem:function_calls>")]),
    # a key past max_name after prose: from the parameter tag's `<`
    "key-over-max-name-after-prose": (
        _MUSE_H + 'hm\n<atem:parameter name="' + "k" * 40 + '">1</atem:parameter>' + _MUSE_T, {"max_name": 16},
        [("f", "{", False)], [("bad_markup", 61, "hm\n"), ("buffer_limit", 64, '<atem:parameter name="' + "k" * 40
                                                          + '">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls>')]),
}


@pytest.mark.parametrize("case", sorted(MUSE_LIMIT_CASES))
def test_muse_call_over_a_limit_after_prose(case):
    """The prose's error and the call's refusal hold disjoint bytes, at
    every split and char by char."""
    text, opts, calls, errors = MUSE_LIMIT_CASES[case]
    one = collect(stream_events("muse", [text], TOOLS, **opts))
    assert (one.text, calls_of(one), [(e.code, e.raw_offset, e.raw) for e in one.errors]) == (" ok", calls, errors)
    for chunks in list(every_split(text)) + [list(text)]:
        events = stream_events("muse", chunks, TOOLS, **opts)
        assert collect(events) == one, chunks
        check_tiled("muse", text.encode("utf-8"), events)
