"""Properties of the GLM parsers against generated ground truth: for any
response (prose + calls with schema-typed values, rendered as GLM-4.5 or
GLM-4.7 write them) and any chunking, the streamed events equal the one-shot
events, which equal the ground truth, and every stream keeps the per-call
protocol."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glm_support as G
import strategies as S
import support
from sglang_toolparse import ArgsDelta, CallEnd, StreamParser

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(fmt, text, calls, chunks):
    events = support.run(fmt, chunks, G.TOOLS)
    support.check_stream_invariants(events)
    assert support.summary(events) == (text, calls, [])
    return events


@pytest.mark.parametrize("fmt", G.FORMATS)
@SETTINGS
@given(data=st.data())
def test_ground_truth_any_chunking(fmt, data):
    response, text, calls = data.draw(G.responses(fmt))
    one = check(fmt, text, calls, support.one_chunk(response))
    assert check(fmt, text, calls, data.draw(S.chunkings(response))) == one
    assert check(fmt, text, calls, support.char_by_char(response)) == one
    seed = data.draw(st.integers(0, 1000))
    assert check(fmt, text, calls, support.token_like(response, seed)) == one
    assert check(fmt, text, calls, support.bursts(response, seed)) == one


@pytest.mark.parametrize("fmt", G.FORMATS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_split(fmt, data):
    response, _, _ = data.draw(G.responses(fmt))
    one = support.run(fmt, [response], G.TOOLS)
    for chunks in support.every_split(response):
        assert support.run(fmt, chunks, G.TOOLS) == one, chunks


@pytest.mark.parametrize("fmt", G.FORMATS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_delta_is_final_and_strings_stream(fmt, data):
    """Fed a character at a time, the arguments streamed so far are always a
    prefix of the final arguments; a string value of a declared string
    parameter has streamed (all but a possible partial end marker) before
    its </arg_value> arrives."""
    body, name, truth = data.draw(G.calls(fmt))
    p = StreamParser(fmt, G.TOOLS)
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
    for key, value in truth.items():
        schema = G.TOOL_PROPS[name][key]
        if schema.get("type") != "string" or not value.strip():
            continue
        if fmt == "glm45" and value.strip()[0] in "-0123456789tfnNI{[":
            continue  # GLM-4.5 holds a value while it may still be one JSON value
        close = body.index("</arg_value>", body.index("<arg_key>%s</arg_key>" % key))
        before = streamed_at[close - 1]
        enc = json.dumps(value, ensure_ascii=False)[1:-1]
        head = '"%s": "' % key
        seg = before.split(head, 1)[1] if head in before else ""
        assert enc.startswith(seg) and len(seg) >= len(enc) - len("</arg_value>"), (key, value, seg)


SOUP = ["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "\n", "\\n", " ",
        "alpha", "noargs", "beta_tool", "s", "i", "o", "t", "5", "{", "}", '"', "'", "x", "<", "</arg_valu", "\\", "[1,", "true",
        "\u00e9", "\x00"]


@pytest.mark.parametrize("fmt", G.FORMATS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_markup_soup_keeps_protocol_and_chunk_invariance(fmt, data):
    """Arbitrary mixes of GLM markup, names, keys and value bytes: every
    stream keeps the per-call protocol (valid JSON arguments equal to the
    concatenated deltas) and the result does not depend on the chunking."""
    text = "".join(data.draw(st.lists(st.sampled_from(SOUP), max_size=40)))
    opts = data.draw(st.sampled_from([{}, {"max_buffer": 8}, {"max_name": 4}, {"forward_unknown": True}]))
    one = support.run(fmt, [text], G.TOOLS, **opts)
    support.check_stream_invariants(one)
    assert support.run(fmt, support.char_by_char(text), G.TOOLS, **opts) == one
    assert support.run(fmt, data.draw(S.chunkings(text)), G.TOOLS, **opts) == one
    assert support.run(fmt, [text], None) == support.run(fmt, support.char_by_char(text), None)
