"""The SGLang path: the plugin's <name>_native detector through SGLang's
FunctionCallParser, streamed (parse_stream_chunk per chunk, as the serving
layer calls it) and one-shot (parse_non_stream), per format and scenario."""
from __future__ import annotations

import pytest

from sglang_toolparse.bench import corpus
from sglang_toolparse.bench.sides import discover_formats

from bench_support import annotate, params, workload


def _native_name(sg, fmt: str) -> str:
    for f in discover_formats(sg):
        if f.core == fmt and f.native_name in sg.enum:
            return f.native_name
    pytest.skip("no registered native detector for %s" % fmt)


@pytest.mark.parametrize("fmt,key", params())
def test_sglang_stream(benchmark, sglang, fmt, key):
    w = workload(fmt, key)
    name = _native_name(sglang, fmt)
    tools = sglang.tools(corpus.TOOLS)
    FCP = sglang.FunctionCallParser
    chunks = w.case.chunks
    annotate(benchmark, w)

    def stream():
        p = FCP(tools, name)
        step = p.parse_stream_chunk
        n = 0
        for c in chunks:
            n += len(step(c)[1])
        return n + len(p.parse_stream_end()[1])

    assert benchmark(stream) >= len(w.case.expected_calls)


@pytest.mark.parametrize("fmt,key", params())
def test_sglang_one_shot(benchmark, sglang, fmt, key):
    w = workload(fmt, key)
    name = _native_name(sglang, fmt)
    tools = sglang.tools(corpus.TOOLS)
    FCP = sglang.FunctionCallParser
    annotate(benchmark, w)
    _text, calls = benchmark(lambda: FCP(tools, name).parse_non_stream(w.case.text))
    assert [c.name for c in calls] == [n for n, _ in w.case.expected_calls]
