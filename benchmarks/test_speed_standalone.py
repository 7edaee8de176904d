"""The standalone API (no SGLang): a whole stream through StreamParser.feed,
and one-shot parse(), per format and scenario."""
from __future__ import annotations

import pytest

from sglang_toolparse import StreamParser, parse
from sglang_toolparse.bench import corpus

from bench_support import annotate, params, workload


@pytest.mark.parametrize("fmt,key", params())
def test_feed(benchmark, fmt, key):
    """One stream: a new parser, every chunk fed, finish()."""
    w = workload(fmt, key)
    chunks, tools = w.case.chunks, corpus.TOOLS
    annotate(benchmark, w)

    def stream():
        p = StreamParser(fmt, tools)
        feed = p.feed
        n = 0
        for c in chunks:
            n += len(feed(c))
        return n + len(p.finish())

    assert benchmark(stream) > 0


@pytest.mark.parametrize("fmt,key", params())
def test_parse(benchmark, fmt, key):
    """One-shot: parse() of the whole response."""
    w = workload(fmt, key)
    text, tools = w.case.text, corpus.TOOLS
    annotate(benchmark, w)
    r = benchmark(parse, fmt, text, tools)
    assert [(c.name, c.arguments) for c in r.calls] == w.case.expected_calls
