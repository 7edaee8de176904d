"""The names of issue 20 that are rows of an engine we have (tests/variant_table.py):
each template-shaped case parsed back exactly at every split point and with
every chunker (standalone), and through SGLang's FunctionCallParser as
`X_native` (one-shot and streamed) against SGLang's own `X`, whose failures
are strict xfails naming what it gets wrong."""
import json

import pytest

from sglang_support import one_shot, stream_through
from support import CHUNKERS, check_stream_invariants, every_split, run, summary
from variant_table import CASES, TOOL_NAMES, TOOLS, VARIANTS, SCHEMA

ROWS = [(v, c) for v in sorted(VARIANTS) for c in sorted(CASES)]


def expected(case):
    prose, calls = CASES[case]
    return prose, [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]


@pytest.mark.parametrize("variant,case", ROWS)
def test_standalone_every_split(variant, case):
    v = VARIANTS[variant]
    text = v.render(*CASES[case])
    prose, calls = expected(case)
    whole = run(v.fmt, [text], TOOLS)
    check_stream_invariants(whole)
    assert summary(whole) == (prose, calls, [])
    for name, chunker in CHUNKERS.items():
        assert run(v.fmt, chunker(text), TOOLS) == whole, name
    for chunks in every_split(text):
        assert run(v.fmt, chunks, TOOLS) == whole, chunks


@pytest.fixture
def sg_tools(sglang_tool):
    return sglang_tool(*TOOL_NAMES, parameters=SCHEMA)


def _mark(request, variant, case, impl, mode):
    reason = VARIANTS[variant].sglang_wrong.get("%s:%s" % (case, mode)) or VARIANTS[variant].sglang_wrong.get(case)
    if impl == "builtin" and reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("impl", ["builtin", "native"])
@pytest.mark.parametrize("variant,case", ROWS)
def test_through_sglang_one_shot(fcp, sg_tools, request, variant, case, impl):
    _mark(request, variant, case, impl, "one_shot")
    v = VARIANTS[variant]
    prose, calls = expected(case)
    name = v.sglang if impl == "builtin" else v.sglang + "_native"
    normal, got = one_shot(fcp, sg_tools, name, v.render(*CASES[case]))
    assert (normal.strip(), got) == (prose, calls)


@pytest.mark.parametrize("impl", ["builtin", "native"])
@pytest.mark.parametrize("chunker", ["tokens", "bursts"])
@pytest.mark.parametrize("variant,case", ROWS)
def test_through_sglang_streamed(fcp, sg_tools, request, variant, case, chunker, impl):
    _mark(request, variant, case, impl, "stream")
    v = VARIANTS[variant]
    prose, calls = expected(case)
    name = v.sglang if impl == "builtin" else v.sglang + "_native"
    text, got = stream_through(fcp, sg_tools, name, CHUNKERS[chunker](v.render(*CASES[case])))
    assert (text.strip(), got) == (prose, calls)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_native_detector_subclasses_sglangs(fcp, variant):
    enum = fcp.FunctionCallParser.ToolCallParserEnum
    v = VARIANTS[variant]
    assert issubclass(enum[v.sglang + "_native"], enum[v.sglang])
