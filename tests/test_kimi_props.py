"""Properties of the Kimi-K2 parser against generated ground truth: for any
response (prose + sections of calls with random JSON arguments and ids,
rendered as Kimi's template writes them) and any chunking, the streamed
events equal the one-shot events, which equal the ground truth (ids
included), and every stream keeps the per-call protocol."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kimi_support as ks
import support
from sglang_toolparse import ArgsDelta, CallStart, StreamParser

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(chunks, text, calls):
    events = support.run(ks.FMT, chunks, ks.TOOLS)
    support.check_stream_invariants(events)
    assert ks.summary_ids(events) == (text, calls, [])
    return events


@SETTINGS
@given(data=st.data())
def test_ground_truth_any_chunking(data):
    response, text, calls = data.draw(ks.responses())
    one = check(support.one_chunk(response), text, calls)
    cuts = data.draw(st.lists(st.integers(0, max(len(response), 1)), max_size=12))
    assert check(ks.split_at(response, cuts), text, calls) == one
    assert check(support.char_by_char(response), text, calls) == one
    seed = data.draw(st.integers(0, 1000))
    assert check(support.token_like(response, seed), text, calls) == one
    assert check(support.bursts(response, seed), text, calls) == one


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_every_split(data):
    response, text, calls = data.draw(ks.responses())
    one = support.run(ks.FMT, [response], ks.TOOLS)
    for chunks in support.every_split(response):
        assert support.run(ks.FMT, chunks, ks.TOOLS) == one, chunks


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_arguments_stream_while_generated(data):
    """Fed a character at a time, everything streamed so far is a prefix of
    the final arguments, and arguments longer than `{}` arrive over several
    feeds, not as one blob at the end; CallStart carries the id."""
    response, text, calls = data.draw(ks.responses())
    p = StreamParser(ks.FMT, ks.TOOLS)
    streamed, feeds_with_args = {}, {}
    for ch in response:
        seen = set()
        for ev in p.feed(ch):
            if isinstance(ev, CallStart):
                assert (ev.name, ev.id) == (calls[ev.index][0], calls[ev.index][2])
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
    for i, (_, args, _) in enumerate(calls):
        assert streamed[i] == args
        if len(args) > 2:
            assert feeds_with_args[i] >= 2, (args, feeds_with_args[i])


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unknown_tools_dropped_others_survive(data):
    response, text, calls = data.draw(ks.responses())
    declared = data.draw(st.lists(st.sampled_from(ks.TOOLS), unique=True))
    events = support.run(ks.FMT, support.token_like(response, 7), declared)
    support.check_stream_invariants(events)
    got_text, got_calls, errors = ks.summary_ids(events)
    assert got_text == text
    assert got_calls == [c for c in calls if c[0] in declared]
    assert errors == ["unknown_tool"] * sum(1 for c in calls if c[0] not in declared)
    fwd = support.run(ks.FMT, [response], [], forward_unknown=True)
    assert ks.summary_ids(fwd) == (text, calls, [])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_output_any_chunking(data):
    """Responses with pieces cut out or tokens pasted in: whatever the parser
    makes of them, it is the same for every chunking, each call ends exactly
    once, and every argument string is valid JSON."""
    response, _, _ = data.draw(ks.responses())
    frags = ks.MARKERS + ['"', "{", "}", "\n", "functions.", ":1", "7", "<|", "|>"]
    s = response
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(s)))
        if data.draw(st.booleans()) and s:
            s = s[:at] + s[at + data.draw(st.integers(1, 8)):]
        else:
            s = s[:at] + data.draw(st.sampled_from(frags)) + s[at:]
    one = support.run(ks.FMT, [s], ks.TOOLS)
    support.check_stream_invariants(one)
    assert support.run(ks.FMT, support.char_by_char(s), ks.TOOLS) == one
    cuts = data.draw(st.lists(st.integers(0, max(len(s), 1)), max_size=8))
    assert support.run(ks.FMT, ks.split_at(s, cuts), ks.TOOLS) == one
    small = dict(max_buffer=24, max_name=12)
    one = support.run(ks.FMT, [s], ks.TOOLS, **small)
    support.check_stream_invariants(one)
    assert support.run(ks.FMT, support.char_by_char(s), ks.TOOLS, **small) == one
    # bare counters among several tools are held and named at the end
    tools = [{"name": n, "parameters": {"properties": {"q": {}}}} for n in ks.TOOLS]
    one = support.run(ks.FMT, [s], tools, max_buffer=64)
    support.check_stream_invariants(one)
    assert support.run(ks.FMT, support.token_like(s, 3), tools, max_buffer=64) == one
