"""The names of issue 20 that are rows of an engine we have (tests/variant_table.py),
standalone: each template-shaped case parsed back exactly with every chunker
and at every split point, and each row's edge cases (malformed, cut off,
markup in values) at every split."""
import json

import pytest

from support import CHUNKERS, check_stream_invariants, every_split, run, summary
from variant_table import TOOLS, VARIANTS, cases_of

ROWS = [(v, c) for v in sorted(VARIANTS) for c in sorted(cases_of(v))]
GOLDEN = [(v, g) for v in sorted(VARIANTS) for g in sorted(VARIANTS[v].golden)]


def expected(variant, case):
    prose, calls = cases_of(variant)[case]
    return prose, [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]


@pytest.mark.parametrize("variant,case", ROWS)
def test_standalone_every_split(variant, case):
    v = VARIANTS[variant]
    text = v.render(*cases_of(variant)[case])
    prose, calls = expected(variant, case)
    whole = run(v.fmt, [text], TOOLS)
    check_stream_invariants(whole)
    assert summary(whole) == (prose, calls, [])
    for name, chunker in CHUNKERS.items():
        assert run(v.fmt, chunker(text), TOOLS) == whole, name
    for chunks in every_split(text):
        assert run(v.fmt, chunks, TOOLS) == whole, chunks


@pytest.mark.parametrize("variant,name", GOLDEN)
def test_golden_every_split(variant, name):
    v = VARIANTS[variant]
    text, prose, calls = v.golden[name]
    whole = run(v.fmt, [text], TOOLS)
    check_stream_invariants(whole)
    assert summary(whole)[:2] == (prose, calls)
    for chunks in every_split(text):
        assert run(v.fmt, chunks, TOOLS) == whole, chunks
