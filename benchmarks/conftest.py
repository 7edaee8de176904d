"""pytest-benchmark suite: regressions in parser speed across commits.

    python -m pytest benchmarks --benchmark-only                      # run
    python -m pytest benchmarks --benchmark-only --benchmark-save=base
    python -m pytest benchmarks --benchmark-only --benchmark-compare   # against the last save

Benchmarks are grouped by core format (group "qwen25", "glm47", ...), so a
comparison reads per format. Timings are never asserted; CI runs the suite
once with --benchmark-disable (each function once) so it cannot rot. See
docs/BENCH.md ("Regression benchmarks").
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("pytest_benchmark")

@pytest.fixture(scope="session")
def sglang():
    """SGLang's FunctionCallParser and Tool with the plugin's detectors
    registered; skips without SGLang (unless CI demands it)."""
    from sglang_toolparse.bench.sides import SGLang

    sg = SGLang()
    if not sg.ok:
        if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
            raise RuntimeError(sg.error)
        pytest.skip("SGLang not importable: %s" % sg.error)
    return sg
