"""Properties of the DeepSeek parsers against generated ground truth: for
any response (prose + calls with random JSON arguments, rendered as each
model writes it) and any chunking, the streamed events equal the one-shot
events, which equal the ground truth, and every stream keeps the per-call
protocol."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ds_support as ds
import support
from sglang_toolparse import ArgsDelta, CallStart, StreamParser

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(fmt, response, text, calls, chunks):
    events = support.run(fmt, chunks, ds.TOOLS)
    support.check_stream_invariants(events)
    assert support.summary(events) == (text, calls, [])
    return events


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@SETTINGS
@given(data=st.data())
def test_ground_truth_any_chunking(fmt, data):
    response, text, calls = data.draw(ds.responses(fmt))
    one = check(fmt, response, text, calls, support.one_chunk(response))
    cuts = data.draw(st.lists(st.integers(0, max(len(response), 1)), max_size=12))
    assert check(fmt, response, text, calls, ds.split_at(response, cuts)) == one
    assert check(fmt, response, text, calls, support.char_by_char(response)) == one
    seed = data.draw(st.integers(0, 1000))
    assert check(fmt, response, text, calls, support.token_like(response, seed)) == one


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_split(fmt, data):
    response, text, calls = data.draw(ds.responses(fmt))
    one = support.run(fmt, [response], ds.TOOLS)
    for chunks in support.every_split(response):
        assert support.run(fmt, chunks, ds.TOOLS) == one, chunks


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_arguments_stream_while_generated(fmt, data):
    """Fed a character at a time, everything streamed so far is a prefix of
    the final arguments (every delta is final), and arguments longer than
    `{}` arrive over several feeds, not as one blob at the end."""
    response, text, calls = data.draw(ds.responses(fmt))
    p = StreamParser(fmt, ds.TOOLS)
    streamed = {}
    feeds_with_args = {}
    for ch in response:
        seen = set()
        for ev in p.feed(ch):
            if isinstance(ev, CallStart):
                streamed[ev.index] = ""
                feeds_with_args[ev.index] = 0
            elif isinstance(ev, ArgsDelta):
                streamed[ev.index] += ev.delta
                assert calls[ev.index][1].startswith(streamed[ev.index])
                seen.add(ev.index)
        for i in seen:
            feeds_with_args[i] += 1
    p.finish()
    assert len(streamed) == len(calls)
    for i, (_, args) in enumerate(calls):
        assert streamed[i] == args
        if len(args) > 2:
            assert feeds_with_args[i] >= 2, (args, feeds_with_args[i])


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unknown_tools_dropped_others_survive(fmt, data):
    """With only some tools declared, calls to the others are reported and
    dropped; the rest are unchanged; forward_unknown keeps them all."""
    response, text, calls = data.draw(ds.responses(fmt))
    declared = data.draw(st.lists(st.sampled_from(ds.TOOLS), unique=True))
    events = support.run(fmt, support.token_like(response, 7), declared)
    support.check_stream_invariants(events)
    got_text, got_calls, errors = support.summary(events)
    assert got_text == text
    assert got_calls == [c for c in calls if c[0] in declared]
    assert errors == ["unknown_tool"] * sum(1 for c in calls if c[0] not in declared)
    fwd = support.run(fmt, [response], [], forward_unknown=True)
    assert support.summary(fwd) == (text, calls, [])


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_output_any_chunking(fmt, data):
    """Responses with pieces cut out or markup fragments pasted in: whatever
    the parser makes of them, it is the same for every chunking, each call
    ends exactly once, and every argument string is valid JSON."""
    response, _, _ = data.draw(ds.responses(fmt))
    frags = ds.markers(fmt) + ['"', "{", "}", "\n", "```json\n", ' name="search">', ' string="false">', "<", "/>"]
    s = response
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(s)))
        if data.draw(st.booleans()) and s:
            s = s[:at] + s[at + data.draw(st.integers(1, 8)):]
        else:
            s = s[:at] + data.draw(st.sampled_from(frags)) + s[at:]
    one = support.run(fmt, [s], ds.TOOLS)
    support.check_stream_invariants(one)
    assert support.run(fmt, support.char_by_char(s), ds.TOOLS) == one
    cuts = data.draw(st.lists(st.integers(0, max(len(s), 1)), max_size=8))
    assert support.run(fmt, ds.split_at(s, cuts), ds.TOOLS) == one
    # small limits: the limit errors, too, do not depend on the chunking
    small = dict(max_buffer=24, max_name=12)
    one = support.run(fmt, [s], ds.TOOLS, **small)
    support.check_stream_invariants(one)
    assert support.run(fmt, support.char_by_char(s), ds.TOOLS, **small) == one
