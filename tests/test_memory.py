"""Bounded memory and reference counting of the Cython layer.

RSS is read from /proc/self/statm; under ASan (TOOLPARSE_SANITIZED=1) RSS
says nothing and these tests are skipped (scripts/leak-check.sh covers
leaks there)."""
from __future__ import annotations

import ast
import gc
import os
import subprocess
import sys
import tracemalloc

import pytest

from format_table import spec
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, ParseError, StreamParser, Text
from sglang_toolparse._core import formats

FORMATS = formats()
TOOLS = ["get_weather", "search", "f"]
# 30 distinct tools: each parser holds a realistic tool table
MANY_TOOLS = TOOLS + ["tool_%d" % i for i in range(27)]
sanitized = pytest.mark.skipif(os.environ.get("TOOLPARSE_SANITIZED") == "1", reason="RSS under ASan")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def stream_unit(fmt: str) -> str:
    """A response fragment with prose and (when the format has a renderer)
    a call, repeated to make long streams."""
    s = spec(fmt)
    if s.render_call is None:
        return "Some prose with <markup> and {braces}. "
    return "Some prose. " + s.calls_text([("f", '{"city": "Paris", "n": [1, 2.5]}')]) + " more prose "


def feed_many(fmt: str, feeds: int, chunk: int = 3, samples: int = 10):
    unit = stream_unit(fmt)
    text = unit * (4096 // len(unit) + 1)
    chunks = [text[i:i + chunk] for i in range(0, len(text) - chunk, chunk)]
    p = StreamParser(fmt, TOOLS)
    marks = []
    n = 0
    calls = 0
    every = feeds // samples
    while n < feeds:
        for c in chunks:
            for e in p.feed(c):
                if type(e) is CallEnd:
                    calls += 1
            n += 1
            if n % every == 0:
                marks.append(rss())
            if n >= feeds:
                break
    p.finish()
    return marks, calls


def in_fresh_interpreter(expr: str):
    """Evaluates `expr` (a call of this module) in a new interpreter: the
    heap left by other tests would add allocator noise unrelated to the
    parser."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys; sys.path[:0] = [%r, %r]; from test_memory import *; print(repr(%s))"
            % (here, os.path.dirname(here), expr))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


@sanitized
@pytest.mark.parametrize("fmt", FORMATS)
def test_rss_stable_over_1m_feeds(fmt):
    marks, calls = in_fresh_interpreter("feed_many(%r, 1000000)" % fmt)
    if spec(fmt).render_call is not None:  # a call per fragment: ~3M characters fed
        assert calls > 2_000_000 // len(stream_unit(fmt))
    # after warm-up, RSS does not grow with the number of feeds
    growth = max(marks[2:]) - marks[1]
    assert growth < 2 << 20, [m >> 10 for m in marks]


def create_free(fmt: str):
    """Creates, feeds and frees parsers in batches; returns the growth of
    live traced Python blocks per batch and the RSS growth."""
    unit = stream_unit(fmt)

    def batch(k):
        for _ in range(k):
            p = StreamParser(fmt, MANY_TOOLS)
            p.feed(unit[:7])
            p.feed(unit[7:] + "<")
            p.finish()

    # A leak adds objects with every parser: count the live traced blocks.
    # (Their total size is no good measure: a table CPython reallocates,
    # like the interned-strings dict the compiler behind the GLM typing
    # rules' ast.literal_eval touches, was allocated untraced and shows as
    # growth when it is rebuilt.)
    def blocks():
        gc.collect()
        return len(tracemalloc.take_snapshot().traces)

    tracemalloc.start()
    batch(2000)
    base_rss = rss()
    growth = []
    for _ in range(3):
        before = blocks()
        batch(10000)
        growth.append(blocks() - before)
    tracemalloc.stop()
    return growth, rss() - base_rss


@sanitized
@pytest.mark.parametrize("fmt", FORMATS)
def test_parsers_created_and_freed_do_not_leak(fmt):
    growth, rss_growth = in_fresh_interpreter("create_free(%r)" % fmt)
    # a leak adds to every batch; the first one may still fill caches and
    # free lists (minimax_m3, Python typing: [106, 1, 0] and [131, 72, 33])
    assert max(growth[1:]) < 100, growth              # Python objects
    assert rss_growth < 2 << 20, rss_growth           # C allocations


@pytest.mark.parametrize("fmt", FORMATS)
def test_event_reference_counts(fmt):
    s = spec(fmt)
    if s.render_call is None:
        pytest.skip("no renderer")
    text = "prose " * 20 + s.calls_text([("get_weather", '{"city": "%s"}' % ("P" * 100))]) + "tail " * 20
    p = StreamParser(fmt, TOOLS)
    events = p.feed(text) + p.finish()
    assert {type(e) for e in events} >= {Text, CallStart, ArgsDelta, CallEnd}
    assert sys.getrefcount(events) == 2
    for e in events:
        # held by the list, the loop variable and getrefcount's argument
        assert sys.getrefcount(e) == 3, e
        for attr in ("text", "delta", "arguments"):
            v = getattr(e, attr, None)
            if isinstance(v, str) and len(v) > 1:
                # owned by the events only (plus `v` and getrefcount's
                # argument); a one-delta call's CallEnd.arguments is the
                # delta object itself ("".join of one string)
                owners = sum(getattr(o, a, None) is v for o in events for a in ("text", "delta", "arguments"))
                assert sys.getrefcount(v) == 2 + owners, (e, attr)
    del p
    gc.collect()
    for e in events:
        assert sys.getrefcount(e) == 3


@pytest.mark.parametrize("fmt", FORMATS)
def test_errors_and_feed_after_finish_do_not_leak_refs(fmt):
    p = StreamParser(fmt, TOOLS)
    p.finish()
    before = sys.gettotalrefcount() if hasattr(sys, "gettotalrefcount") else None
    for _ in range(1000):
        with pytest.raises(RuntimeError):
            p.feed("x")
        assert p.finish() == []
    if before is not None:
        assert sys.gettotalrefcount() - before < 100
    tracemalloc.start()
    a = tracemalloc.get_traced_memory()[0]
    for _ in range(5000):
        try:
            p.feed("x")
        except RuntimeError:
            pass
        with pytest.raises(ValueError):
            StreamParser("no-such-format")
        with pytest.raises(ValueError):
            StreamParser(fmt, max_depth=0)
    gc.collect()
    b = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert b - a < 32 << 10, b - a
