"""The JSON normalizer's own speed (issue 24.2): CPU ns per byte of the
core's normalizer over a chat-sized arguments object, timed in C by
`_core.json_ns_per_byte` (the document fed whole to a reset scanner, as
fuzz/json_bench.c does), min over runs, in the same run as the rest of the
bench. Two documents: the corpus's chat call arguments, and an object of
short keys, numbers, literals and short strings (structure-heavy JSON, the
normalizer's slow case; fuzz/json_bench.c's default document)."""
from __future__ import annotations

import json
from typing import Any, Dict, List

from .corpus import CHAT_CALL

# short keys, numbers, true/false/null, short strings, nesting: ~300 B
STRUCTURED = ('{"location": "San Francisco, CA", "unit": "celsius", "days": 5, "include_hourly": true, '
              '"filters": {"min_temp": -3.5, "max_temp": 28, "conditions": ["rain", "snow", "fog"]}, '
              '"limit": 10, "offset": 0, "verbose": false, "lang": null, "query": "weather next week", '
              '"ids": [1, 2, 3, 42, 1000], "ratio": 0.75}')

DOCS = {
    "chat call arguments": json.dumps(CHAT_CALL[1], ensure_ascii=False),
    "structure-heavy object": STRUCTURED,
}

# issue 24's target: at most this many ns per byte on a chat-sized arguments object
TARGET_NS_PER_BYTE = 2.0


def measure(quick: bool = False) -> Dict[str, Dict[str, Any]]:
    """{document label: {"bytes", "ns_per_byte_min", "ns_per_byte_median",
    "runs", "reps", "target_ns_per_byte"}} (report.normalizer_line lays it
    out): each run reads the document `reps` times (~2 ms of
    CPU), CPU clock of this thread."""
    from sglang_toolparse._core import json_ns_per_byte

    out: Dict[str, Dict[str, Any]] = {}
    for label, doc in DOCS.items():
        data = doc.encode("utf-8")
        reps = max(100, 2_000_000 // (2 * len(data)))  # ~2 ns per byte: ~2 ms per run
        json_ns_per_byte(data, reps)  # warm-up
        runs = sorted(json_ns_per_byte(data, reps) for _ in range(5 if quick else 15))
        out[label] = {"bytes": len(data), "ns_per_byte_min": runs[0], "ns_per_byte_median": runs[len(runs) // 2],
                      "runs": len(runs), "reps": reps, "target_ns_per_byte": TARGET_NS_PER_BYTE}
    return out


def targets(res: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Issue 24.2's target per document, in runner.targets()' fields (the
    figure is CPU time whatever the run's clock)."""
    out = []
    for label, r in res.items():
        v = r["ns_per_byte_min"]
        out.append({"format": "(JSON normalizer)", "target": "ns per byte: %s (%d B)" % (label, r["bytes"]),
                    "value": v, "value_wall": None, "value_cpu": v, "op": "<=", "threshold": TARGET_NS_PER_BYTE,
                    "met": v <= TARGET_NS_PER_BYTE, "note": "in C, CPU clock"})
    return out

