"""Prose the model writes inside a call, between its tags (issue 18: no byte
of model output lost). The chat templates write only blanks between a
call's opening tag and its first parameter, between its parameters and
after the last one; non-blank bytes there are a ParseError("bad_markup")
with no index, its raw text from the first non-blank byte to where the next
tag starts, and the call stands with the arguments it has without them
(docs/SEMANTICS.md, "Dropped text"). Property over every format whose calls
are a list of parameter tags, at any chunking; golden cases at every split
in tests/test_call_prose_golden.py.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from format_table import call_gaps, spec
from strategies import chunkings
from test_lossless import check_lossless, check_tiled, stream_events, utf8
from sglang_toolparse.api import parse

D = "\uff5cDSML\uff5c"
DSML_TAGS = {  # format -> (block, invoke, parameter) tag names
    "deepseekv32": ("function_calls", "invoke", "parameter"),
    "deepseekv4": ("tool_calls", "invoke", "parameter"),
    "deepseekv41": (" calls", " invoke", " parameter"),
}


def dsml_invoke(fmt, name, args):
    """A DSML invoke with parameter tags, as DeepSeek's encoder writes it."""
    _, inv, par = DSML_TAGS[fmt]
    params = "".join('<%s%s name="%s" string="%s">%s</%s%s>\n' % (
        D, par, k, "true" if isinstance(v, str) else "false", v if isinstance(v, str) else json.dumps(v), D, par)
        for k, v in args.items())
    return '<%s%s name="%s">\n%s</%s%s>' % (D, inv, name, params, D, inv)


def dsml_block(fmt, calls):
    blk = DSML_TAGS[fmt][0]
    return "<%s%s>\n%s\n</%s%s>" % (D, blk, "\n".join(calls), D, blk)


# formats whose calls are a list of parameter tags (fmt_xmlparam.c,
# fmt_glm.c, fmt_dsml.c, fmt_nsxml.c, fmt_channel.c rows)
PARAM_FORMATS = ["qwen3_coder", "mimo", "minimax_m2", "dots", "minicpm5", "kimi_k3", "step3",
                 "glm45", "glm47", "ling3", "iquest_q1", "poolside_v1", "spark25", "hunyuan", "hunyuan_os",
                 "k2_horizon", "deepseekv32", "deepseekv4", "deepseekv41", "gigachat35", "minimax_m3", "muse"]


def render(fmt, name, args):
    if fmt in DSML_TAGS:
        return dsml_invoke(fmt, name, args)
    return spec(fmt).render_call(name, json.dumps(args, ensure_ascii=False))


def block(fmt, calls):
    return dsml_block(fmt, calls) if fmt in DSML_TAGS else spec(fmt).block(calls)


def gaps(fmt, name, args):
    return call_gaps(fmt, name, args, lambda n, a: render(fmt, n, a))


JUNK = "QJUNKQ"
KEYS = ["city", "n", "q_1", "path"]
VALUES = st.one_of(st.integers(-5, 500), st.text(alphabet="xyz \u00e9\u4e2d", min_size=1, max_size=6))


@st.composite
def calls_with_prose(draw, fmt):
    n = draw(st.integers(1, 2))
    calls, clean = [], []
    for _ in range(n):
        name = draw(st.sampled_from(["get_weather", "search", "nope"]))
        keys = draw(st.lists(st.sampled_from(KEYS), min_size=2, max_size=3, unique=True))
        args = {k: draw(VALUES) for k in keys}
        text = render(fmt, name, args)
        clean.append(text)
        at = draw(st.lists(st.sampled_from(gaps(fmt, name, args)), min_size=1, max_size=2, unique=True))
        for pos in sorted(at, reverse=True):
            junk = (draw(st.sampled_from(["", " ", "\n"])) + JUNK
                    + draw(st.sampled_from(["", " ", "\n", " a < b. ", " x<"])))
            text = text[:pos] + junk + text[pos:]
        calls.append(text)
    before = draw(st.sampled_from(["", "Sure. "]))
    return before + block(fmt, calls), before + block(fmt, clean)


@pytest.mark.parametrize("fmt", PARAM_FORMATS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_prose_inside_a_call_is_not_lost(fmt, data):
    text, clean = data.draw(calls_with_prose(fmt))
    chunks = data.draw(chunkings(text))
    tools = ["get_weather", "search"]
    one = check_lossless(fmt, text, chunks, tools)
    n = text.count(JUNK)
    assert sum(e.raw.count(JUNK) for e in one.errors if e.raw) + one.text.count(JUNK) == n, (text, one)
    # the calls stand as they stand without the prose
    assert one.calls == parse(fmt, clean, tools).calls, (text, one)
    assert all(JUNK not in c.arguments for c in one.calls)
    check_tiled(fmt, utf8(text), stream_events(fmt, chunks, tools))


def test_sglang_adapter_keeps_the_call_and_logs_the_prose(fcp, sglang_tool, caplog):
    """Through SGLang the error is only logged: the call is returned
    one-shot and streamed as without the prose (as SGLang's detector
    returns it)."""
    from sglang_support import one_shot, stream_through
    from test_call_prose_golden import PROSE_CASES, TOOLS

    fmt, text, _, calls, _ = PROSE_CASES["qwen3-between-params"]
    clean = text.replace("HELLO there\n", "")
    tools = sglang_tool(*TOOLS)
    want = one_shot(fcp, tools, fmt, clean)
    with caplog.at_level("WARNING"):
        assert one_shot(fcp, tools, fmt + "_native", text) == want == ("", [("f", '{"a": "1", "b": "2"}')])
        for chunks in ([text], list(text)):
            assert stream_through(fcp, tools, fmt + "_native", chunks) == want
            assert stream_through(fcp, tools, fmt, chunks) == want  # (SGLang's detector: the same call)
    assert "text inside a tool call left out" in caplog.text


LONG_PROSE = 20000
LONG_PROSE_CALLS = {  # prose before the call's announcement, longer than the raw record's floor
    "glm47": '<tool_call>f\nSee:%s\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call> ok',
    "qwen3_coder": '<tool_call>\n<function=f>\nSee:%s\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call> ok',
    "deepseekv32": '<%sfunction_calls>\n<%sinvoke name="f">\nSee:%%s\n<%sparameter name="a" string="true">1'
                   '</%sparameter>\n</%sinvoke>\n</%sfunction_calls> ok' % ((D,) * 6),
}


@pytest.mark.parametrize("fmt", sorted(LONG_PROSE_CALLS))
@pytest.mark.parametrize("limits", [{}, {"max_buffer": 64}])
def test_long_prose_before_the_announcement_keeps_its_bytes(fmt, limits):
    """Prose before the announcement comes from the call's raw record: one
    that outgrew the record's bound refuses the call at a checkpoint (the
    whole call its dropped text), so the prose is never reported without
    its bytes, and any chunking gives the same."""
    text = LONG_PROSE_CALLS[fmt] % ("x" * LONG_PROSE)
    one = stream_events(fmt, [text], ["f"], **limits)
    check_tiled(fmt, utf8(text), one)
    raws = "".join(e.raw for e in one if type(e).__name__ == "Dropped")
    assert "See:" + "x" * LONG_PROSE in raws
    for size in (997, 4099):
        events = stream_events(fmt, [text[k:k + size] for k in range(0, len(text), size)], ["f"], **limits)
        assert [e for e in events if type(e).__name__ != "Dropped"] == [e for e in one if type(e).__name__ != "Dropped"]
        assert "".join(e.raw for e in events if type(e).__name__ == "Dropped") == raws
        check_tiled(fmt, utf8(text), events)
