"""How the binding builds a batch's event objects (sglang_toolparse/_core.pyx):
the final event classes' free list of memory blocks, a call's argument
pieces (kept without a list up to two), the batch list made at the batch's
size. None of it may show: every event keeps its type, fields, repr and
equality; CallEnd.arguments is its deltas' concatenation for any number of
pieces; a batch holds exactly its events, in order."""
from __future__ import annotations

import gc
import sys

import pytest

from sglang_toolparse import (ArgsDelta, CallEnd, CallStart, Dropped, Event, Markup, ParseError,
                              Reasoning, StreamParser, Text)
from sglang_toolparse import _core

FINAL_EVENTS = (Text, Reasoning, CallStart, ArgsDelta, CallEnd, ParseError, Dropped, Markup)
K2_CALL = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
           '<|tool_call_argument_begin|>{"city": "Paris", "days": [1, 2, 3], "unit": "C"}'
           '<|tool_call_end|><|tool_calls_section_end|>')
K2_ARGS = '{"city": "Paris", "days": [1, 2, 3], "unit": "C"}'


@pytest.mark.skipif(not getattr(sys, "_is_gil_enabled", lambda: True)(),
                    reason="free-threaded build: the default allocator slots are kept")
def test_every_final_event_class_uses_the_free_list():
    assert _core._EVENT_FREELIST == frozenset(c.__name__ for c in FINAL_EVENTS)
    assert "Event" not in _core._EVENT_FREELIST  # subclassable in Python: its own slots


def test_reused_blocks_keep_each_events_type_fields_and_equality():
    # Text and Reasoning have one size: blocks pass from one class to the other
    def make(k):
        return [Text("a%d" % k), Reasoning("r%d" % k), CallStart(k, "f", "functions.f:1"), ArgsDelta(k, "{}"),
                CallEnd(k, "f", "{}", None), ParseError(None, "bad_markup", k, "d", "raw", 2), Dropped(0, k, "x"),
                Markup(k, "<m>")]

    expected = [repr(e) for e in make(7)]
    for round_ in range(3):
        evs = [make(7) for _ in range(50)]
        assert all([repr(e) for e in row] == expected for row in evs)
        assert all(row == evs[0] for row in evs)
        del evs
        gc.collect()
        mixed = [Reasoning("x") if i % 2 else Text("x") for i in range(100)]
        assert [type(e) for e in mixed] == [Reasoning if i % 2 else Text for i in range(100)]
        del mixed
    assert Text("x") == Text("x") and Text("x") != Reasoning("x")
    assert repr(CallStart(0, "f")) == "CallStart(0, 'f')"
    assert repr(CallEnd(2, "f", "{}", "id")) == "CallEnd(2, 'f', '{}', 'id')"
    assert hash(ArgsDelta(0, "a")) == hash(ArgsDelta(0, "a"))


def test_python_subclass_of_event_still_works():
    class Mine(Event):
        pass

    objs = [Mine() for _ in range(100)]
    assert all(type(o) is Mine for o in objs)
    del objs
    gc.collect()


@pytest.mark.parametrize("pieces", [1, 2, 3, 4, 7, 40])
def test_call_end_arguments_are_the_deltas_for_any_number_of_pieces(pieces):
    head, tail = K2_CALL.split("{", 1)
    body = "{" + tail[: tail.index("<|tool_call_end|>")]
    rest = tail[tail.index("<|tool_call_end|>"):]
    # the body cut into `pieces` chunks (one delta each: one per feed)
    step = max(1, -(-len(body) // pieces))
    chunks = [head] + [body[i:i + step] for i in range(0, len(body), step)] + [rest]
    p = StreamParser("kimi_k2", ["get_weather"])
    events = [e for c in chunks for e in p.feed(c)] + p.finish()
    deltas = [e.delta for e in events if type(e) is ArgsDelta]
    (end,) = [e for e in events if type(e) is CallEnd]
    # (a chunk of only held bytes, such as a blank, makes no delta)
    assert len(deltas) >= min(pieces, 3)
    assert "".join(deltas) == end.arguments == K2_ARGS
    assert end.id == "functions.get_weather:0" and end.name == "get_weather"


def test_one_batch_holds_exactly_its_events_in_order():
    p = StreamParser("kimi_k2", ["get_weather"])
    evs = p.feed("Hi. " + K2_CALL + " Bye." + K2_CALL.replace(":0", ":1"))
    assert [type(e) for e in evs] == [Text, CallStart, ArgsDelta, CallEnd, Text, CallStart, ArgsDelta, CallEnd]
    assert p.finish() == []
    # fewer objects than core events: the arguments of one batch are one delta
    p = StreamParser("kimi_k2", ["get_weather"])
    p.feed(K2_CALL[:K2_CALL.index("{")])
    evs = p.feed(K2_ARGS[:10])
    assert evs == [CallStart(0, "get_weather", "functions.get_weather:0"), ArgsDelta(0, K2_ARGS[:10])]
    evs = p.feed(K2_ARGS[10:] + "<|tool_call_end|>")
    assert evs == [ArgsDelta(0, K2_ARGS[10:]), CallEnd(0, "get_weather", K2_ARGS, "functions.get_weather:0")]
    assert type(evs) is list and len(evs) == 2
    evs.append(1)  # the caller's own list
    assert p.feed("") == [] and p.feed("") is not p.feed("")


def _k2_events(chunks, **limits):
    p = StreamParser("kimi_k2", ["get_weather"], **limits)
    return [e for c in chunks for e in p.feed(c)] + p.finish()


def test_parsers_reusing_freed_buffers_give_the_same_events():
    """A freed parser's small buffers go to a pool the next parser takes
    them from (capacity within the new parser's limits only): results must
    not depend on which parser ran before, limits included."""
    long_name = "functions.%s:0" % ("x" * 3000)
    big = K2_CALL.replace("functions.get_weather:0", long_name)
    cases = [
        ([K2_CALL], {}),
        ([K2_CALL[:40], K2_CALL[40:90], K2_CALL[90:]], {}),
        ([big], {}),                                   # a large id buffer goes to the pool
        ([K2_CALL], {"max_name": 8}),                  # ... and is not taken under a small limit
        ([K2_CALL[:50], K2_CALL[50:]], {"max_buffer": 16}),
        (["Hello " * 200 + K2_CALL], {"max_name": 30}),
    ]
    fresh = [_k2_events(c, **o) for c, o in cases]
    assert any(type(e) is ParseError for e in fresh[3])  # the name over max_name
    split = _k2_events([K2_CALL[:60], K2_CALL[60:]])
    for round_ in range(4):
        held = []
        for k, (c, o) in enumerate(cases if round_ % 2 else cases[::-1]):
            i = k if round_ % 2 else len(cases) - 1 - k
            assert _k2_events(c, **o) == fresh[i], (round_, i)
            if round_ >= 2:  # parsers alive while others come and go
                h = StreamParser("kimi_k2", ["get_weather"])
                held.append((h, h.feed(K2_CALL[:60])))
        for h, first in held:
            assert first + h.feed(K2_CALL[60:]) + h.finish() == split
        del held
