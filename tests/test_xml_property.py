"""Properties of the Qwen3-Coder / MiniMax-M2 parsers against generated
ground truth: for any response (prose + calls with schema-typed values,
rendered as the chat templates write them) and any chunking, the streamed
events equal the one-shot events, which equal the ground truth; every
stream keeps the per-call protocol; string parameters stream before their
closing tag."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
import support
import xml_support as X
from sglang_toolparse import ArgsDelta, StreamParser

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(fmt, text, calls, chunks):
    events = support.run(fmt, chunks, X.TOOLS)
    support.check_stream_invariants(events)
    assert support.summary(events) == (text, calls, [])
    return events


@pytest.mark.parametrize("fmt", X.FORMATS)
@SETTINGS
@given(data=st.data())
def test_ground_truth_any_chunking(fmt, data):
    response, text, calls = data.draw(X.responses(fmt))
    one = check(fmt, text, calls, support.one_chunk(response))
    assert check(fmt, text, calls, data.draw(S.chunkings(response))) == one
    assert check(fmt, text, calls, support.char_by_char(response)) == one
    seed = data.draw(st.integers(0, 1000))
    assert check(fmt, text, calls, support.token_like(response, seed)) == one
    assert check(fmt, text, calls, support.bursts(response, seed)) == one


@pytest.mark.parametrize("fmt", X.FORMATS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_split(fmt, data):
    response, _, _ = data.draw(X.responses(fmt))
    one = support.run(fmt, [response], X.TOOLS)
    for chunks in support.every_split(response):
        assert support.run(fmt, chunks, X.TOOLS) == one, chunks


@pytest.mark.parametrize("fmt", X.FORMATS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_delta_is_final_and_strings_stream(fmt, data):
    """Fed a character at a time, the arguments streamed so far are always a
    prefix of the final arguments; a string parameter has streamed all but
    a possible partial closing tag (and the template's newline) before its
    closing tag arrives."""
    body, name, truth = data.draw(X.calls(fmt))
    body = X.block(fmt, [body])
    p = StreamParser(fmt, X.TOOLS)
    streamed = ""
    seen = []
    for i, ch in enumerate(body):
        for ev in p.feed(ch):
            if isinstance(ev, ArgsDelta):
                streamed += ev.delta
        seen.append((i, streamed))
    p.finish()
    args = json.dumps(truth, ensure_ascii=False)
    for _, s in seen:
        assert args.startswith(s)
    assert streamed == args
    streamed_at = dict(seen)
    opener = "<parameter=%s>" if fmt == "qwen3_coder" else '<parameter name="%s">'
    for key, value in truth.items():
        if X.TOOL_PROPS[name][key].get("type") != "string" or len(value) < 5:
            continue
        close = body.index("</parameter>", body.index(opener % key))
        before = streamed_at[close - 1]
        enc = json.dumps(value, ensure_ascii=False)[1:-1]
        head = '"%s": "' % key
        seg = before.split(head, 1)[1] if head in before else ""
        # held back: at most "\n</parameter" (its escaped newline is 2 bytes)
        assert enc.startswith(seg) and len(seg) >= len(enc) - len("\\n</parameter"), (key, value, seg)


SOUP = {
    "qwen3_coder": ["<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>", ">",
                    "\n", " ", "alpha", "noargs", "s", "i", "o", "5", "{", "}", '"', "x", "<", "</paramet", "null",
                    "None", "True", "[1,", "\u00e9", "\x00"],
    "minimax_m2": ["<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="', "</invoke>", '<parameter name="',
                   "</parameter>", '">', "\n", " ", "alpha", "noargs", "s", "i", "o", "5", "{", "}", '"', "x", "<",
                   "</invok", "null", "nil", "true", "[1,", "\u00e9", "\x00"],
}


@pytest.mark.parametrize("fmt", X.FORMATS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_markup_soup_keeps_protocol_and_chunk_invariance(fmt, data):
    """Arbitrary mixes of markup, names, keys and value bytes: every stream
    keeps the per-call protocol (valid JSON arguments equal to the
    concatenated deltas) and the result does not depend on the chunking;
    nothing that is not markup of a call is lost from the text."""
    text = "".join(data.draw(st.lists(st.sampled_from(SOUP[fmt]), max_size=40)))
    opts = data.draw(st.sampled_from([{}, {"max_buffer": 8}, {"max_name": 4}, {"forward_unknown": True}]))
    one = support.run(fmt, [text], X.TOOLS, **opts)
    support.check_stream_invariants(one)
    assert support.run(fmt, support.char_by_char(text), X.TOOLS, **opts) == one
    assert support.run(fmt, data.draw(S.chunkings(text)), X.TOOLS, **opts) == one
    assert support.run(fmt, [text], None) == support.run(fmt, support.char_by_char(text), None)
