"""bench/capped.py: an SGLang side that may not finish (pythonic's
backtracking regex) runs in a forked child with a CPU budget."""
import time

import pytest

from sglang_toolparse.bench import capped


def _spin():
    while True:
        pass


def test_result_comes_back():
    assert capped.run_capped(lambda: {"calls": "ok", "n": sum(range(1000))}, 5.0) == {"calls": "ok", "n": 499500}


def test_a_case_that_does_not_finish_is_stopped():
    t0 = time.monotonic()
    assert capped.run_capped(_spin, 0.2, wall_factor=50) is None
    assert time.monotonic() - t0 < 20  # the child was killed, not waited for
    entry = capped.did_not_finish(0.2)
    assert entry["did_not_finish_s"] == 0.2 and entry["skipped"].startswith("did not finish in")


def test_an_exception_in_the_child_is_raised_here():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        capped.run_capped(lambda: 1 / 0, 5.0)


def test_budget_follows_the_mode():
    assert capped.budget(10.0) == 5.0 and capped.budget(600.0) == capped.MAX_BUDGET


def test_a_reply_over_the_size_limit_is_not_tried():
    limit = capped.CAPPED["pythonic"].max_arg_bytes
    assert capped.not_tried("pythonic", limit) is None and capped.not_tried("qwen25", 10**6) is None
    entry = capped.not_tried("pythonic", limit + 1)
    assert entry["capped"] == "not tried" and entry["skipped"].startswith("not tried: %d B of arguments" % (limit + 1))
