"""_core.json_ns_per_byte, the bench's measure of the JSON normalizer alone
(issue 24.2): it exists, gives a positive finite figure for one complete
JSON value, and refuses anything else cleanly. No timed assert: the figure
is reported by `bench`, never checked against a target here."""
from __future__ import annotations

import math

import pytest

from sglang_toolparse import _core
from sglang_toolparse.bench import json_speed


@pytest.mark.parametrize("doc", [json_speed.DOCS["chat call arguments"].encode(), json_speed.STRUCTURED.encode(),
                                 b"{}", b"[1, 2.5, null]", b'"x\\u00e9"', b"5", b"-0.5e3 \n", "{\"é\": \"ü\"}".encode()])
def test_positive_finite_for_a_json_value(doc):
    for reps in (1, 50):
        v = _core.json_ns_per_byte(doc, reps)
        assert type(v) is float and math.isfinite(v) and v >= 0, (doc, reps, v)
    assert _core.json_ns_per_byte(doc) >= 0  # the default repeat count


@pytest.mark.parametrize("doc", [b"", b"   ", b"{", b'{"a": }', b"{}x", b"[1,]", b"nul", b"NaN", b"{} {}"])
def test_not_one_json_value_is_refused(doc):
    with pytest.raises(ValueError):
        _core.json_ns_per_byte(doc, 3)


def test_bad_arguments_are_refused():
    for reps in (0, -1, 10_000_001):
        with pytest.raises(ValueError):
            _core.json_ns_per_byte(b"{}", reps)
    for doc in ("{}", None, bytearray(b"{}"), 5):
        with pytest.raises(TypeError):
            _core.json_ns_per_byte(doc, 3)
    with pytest.raises(TypeError):
        _core.json_ns_per_byte(b"{}", "3")


def test_bench_measure_and_targets():
    res = json_speed.measure(quick=True)
    assert set(res) == set(json_speed.DOCS)
    for label, r in res.items():
        assert r["bytes"] == len(json_speed.DOCS[label].encode()) and 200 <= r["bytes"] <= 400  # chat-sized
        assert 0 <= r["ns_per_byte_min"] <= r["ns_per_byte_median"] and math.isfinite(r["ns_per_byte_median"])
    ts = json_speed.targets(res)
    assert [t["op"] for t in ts] == ["<=", "<="] and all(t["threshold"] == 2.0 for t in ts)
    assert all(t["met"] == (t["value"] <= 2.0) for t in ts)
    from sglang_toolparse.bench.report import normalizer_line

    assert "ns/byte" in normalizer_line(res) and "target <= 2.0" in normalizer_line(res)
