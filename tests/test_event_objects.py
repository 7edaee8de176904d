"""How the binding builds a batch's event objects (sglang_toolparse/_core.pyx):
the final event classes' free list of memory blocks, a call's argument
pieces (kept without a list up to two), the batch list made at the batch's
size. None of it may show: every event keeps its type, fields, repr and
equality; CallEnd.arguments is its deltas' concatenation for any number of
pieces; a batch holds exactly its events, in order, however many (a C array
of them, on the stack then grown, made into one list at the end); a call's
name and id (from a cache of recent short ASCII strs) are the model's bytes."""
from __future__ import annotations

import gc
import sys

import pytest

from sglang_toolparse import (ArgsDelta, CallEnd, CallStart, Dropped, Event, Markup, ParseError,
                              Reasoning, StreamParser, Text)
from sglang_toolparse import _core
from support import merge

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


def _k2_call(name, i, args='{"a": 1}'):
    return ("<|tool_call_begin|>functions.%s:%d<|tool_call_argument_begin|>%s<|tool_call_end|>"
            % (name, i, args))


def _k2_expected(names, prose=""):
    """The events of _k2_section(names, prose) fed whole."""
    out = [Text(prose)] if prose else []
    for i, name in enumerate(names):
        cid = "functions.%s:%d" % (name, i)
        args = '{"n": %d, "s": "%s"}' % (i, "v" * i)
        out += [CallStart(i, name, cid), ArgsDelta(i, args), CallEnd(i, name, args, cid)]
    return out


def _k2_section(names, prose=""):
    return (prose + "<|tool_calls_section_begin|>"
            + "".join(_k2_call(n, i, '{"n": %d, "s": "%s"}' % (i, "v" * i)) for i, n in enumerate(names))
            + "<|tool_calls_section_end|>")


@pytest.mark.parametrize("ncalls", [5, 6, 11, 40])
def test_a_batch_of_many_events_keeps_them_all_in_order(ncalls):
    # 3 events a call: 16 (the batch's array on the stack) is crossed at 6
    # calls, and 40 calls grow it on the heap three times
    names = ["get_weather", "search"] * (ncalls // 2) + ["get_weather"] * (ncalls % 2)
    text = _k2_section(names, "Hello.")
    p = StreamParser("kimi_k2", None)
    evs = p.feed(text)
    assert type(evs) is list and evs == _k2_expected(names, "Hello.")
    assert p.finish() == []
    # the same events in any chunking (merged), and one-shot
    p = StreamParser("kimi_k2", None)
    small = [e for i in range(0, len(text), 7) for e in p.feed(text[i:i + 7])] + p.finish()
    assert merge(small) == evs
    assert StreamParser("kimi_k2", None).parse_all(text) == [e for e in evs if type(e) in (Text, CallEnd)]


def test_names_and_ids_are_the_model_bytes_whatever_the_cache_holds():
    """Names and ids come from a cache of the last short ASCII str per hash
    slot: names that share a slot (same length, same first and last 8
    bytes), names at and past its length limit, one-character, non-ASCII
    and many distinct names, in streams that interleave, each get their
    own bytes back."""
    twins = ["aaaaaaaa%sbbbbbbbb" % c for c in "XYZ"] + ["aaaaaaaa%sbbbbbbbb" % c for c in "XY"]
    lengths = ["n" * k for k in (1, 2, 7, 8, 9, 15, 16, 17, 24, 54, 55, 56, 57, 70, 200)]
    other = ["m\u00e9t\u00e9o", "\u5929\u6c14", "get_weather", "search", "x1", "x2"] + ["tool_%d" % i for i in range(150)]
    names = twins + lengths + other
    want = {n: _k2_expected([n] * 3) for n in set(names)}
    open_ = []
    for round_ in range(3):
        for k, name in enumerate(names if round_ != 1 else names[::-1]):
            p = StreamParser("kimi_k2", None)
            text = _k2_section([name] * 3)
            cut = 60 + k % 40
            open_.append((name, p, p.feed(text[:cut]), text[cut:]))
            if len(open_) > 7:  # several streams open at once, finished out of order
                name2, p2, first, rest = open_.pop(k % 5)
                assert merge(first + p2.feed(rest) + p2.finish()) == want[name2], name2
    for name2, p2, first, rest in open_:
        assert merge(first + p2.feed(rest) + p2.finish()) == want[name2], name2


def test_a_converter_that_runs_the_collector_or_raises_mid_batch():
    """A host converter (Python code) runs while a batch is built: the
    objects already made are held by the batch (no list with holes exists
    yet), a garbage collection then changes nothing, and an exception
    drops them and leaves the parser usable."""
    calls = "".join("<tool_call>f\n<arg_key>k</arg_key>\n<arg_value>'v%d'</arg_value>\n</tool_call>" % i
                    for i in range(8))

    class Conv:
        def __init__(self, boom_at=-1):
            self.n = 0
            self.boom_at = boom_at

        def begin(self, name):
            return False

        def value(self, key, raw):
            self.n += 1
            gc.collect()
            junk = [[i] for i in range(1000)]  # allocations that may start a collection
            del junk
            if self.n == self.boom_at:
                raise KeyError("boom")
            return '"%s"' % raw.strip("'")

        def end(self):
            return "{}"

        def reset(self):
            pass

    text = "A " + calls + " B"
    p = _core.StreamParser("glm45", ["f"], converter=Conv())
    evs = p.feed(text) + p.finish()
    ends = [e for e in evs if type(e) is CallEnd]
    assert [(e.index, e.arguments) for e in ends] == [(i, '{"k": "v%d"}' % i) for i in range(8)]
    assert len(evs) > 16  # past the batch's array on the stack
    p = _core.StreamParser("glm45", ["f"], converter=Conv(boom_at=7))
    with pytest.raises(KeyError):
        p.feed(text)
    assert isinstance(p.feed(" after"), list) and isinstance(p.finish(), list)

