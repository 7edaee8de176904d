"""Workloads for the regression benchmarks (benchmarks/test_speed_*.py):
the bench corpus (sglang_toolparse/bench/corpus.py) per core format."""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple

import pytest

from sglang_toolparse import available_formats
from sglang_toolparse.bench import corpus

# the scenarios of the bench corpus measured here (bench/corpus.py)
SCENARIOS = ("chat", "bursts3", "args16k")


class Workload(NamedTuple):
    fmt: str  # core format
    key: str  # scenario
    case: Any  # corpus.Case


def formats() -> List[str]:
    have = set(available_formats())
    return [f for f in corpus.RENDERERS if f in have]


_CASES: Dict[tuple, Any] = {}


def workload(fmt: str, key: str) -> Workload:
    if (fmt, key) not in _CASES:
        _CASES[fmt, key] = corpus.render_case(corpus.make_scenario(key), fmt, chunk=4)
    return Workload(fmt, key, _CASES[fmt, key])


def params():
    return [pytest.param(f, k, id="%s-%s" % (f, k)) for f in formats() for k in SCENARIOS]


def annotate(benchmark, w: Workload) -> None:
    """Group by format; the sizes go into the saved JSON (extra_info)."""
    benchmark.group = w.fmt
    benchmark.extra_info.update({"format": w.fmt, "scenario": w.key, "bytes": w.case.n_bytes,
                                 "chunks": len(w.case.chunks), "arg_bytes": w.case.scenario.arg_bytes})
