"""What the streaming (runner.py) and one-shot (oneshot.py) measurements
share: how long to time a case, and how a side's output compares with the
case's ground truth."""
from __future__ import annotations

import json
from typing import Any, NamedTuple, Sequence, Tuple


class Policy(NamedTuple):
    """How long to time one (case, side): repeat until `budget` seconds have
    been spent and at least `min_reps` runs were made, at most `max_reps`."""

    budget: float
    min_reps: int
    max_reps: int


def _json_or_none(s: str) -> Any:
    try:
        return json.loads(s)
    except ValueError:
        return None


def compare_calls(got: Sequence[Tuple[str, str]], want: Sequence[Tuple[str, str]]) -> str:
    """"ok" (same names, same argument text), "json" (same names and decoded
    arguments, different text) or "diff"."""
    if list(got) == list(want):
        return "ok"
    if len(got) == len(want) and all(
        gn == wn and _json_or_none(ga) is not None and _json_or_none(ga) == _json_or_none(wa)
        for (gn, ga), (wn, wa) in zip(got, want)
    ):
        return "json"
    return "diff"


def compare_text(got: str, want: str) -> str:
    """"ok" (equal), "ws" (equal but for leading/trailing whitespace) or "diff"."""
    if got == want:
        return "ok"
    if got.strip() == want.strip():
        return "ws"
    return "diff"


def clip(s: str, n: int = 400) -> str:
    """`s`, its middle cut out when it is longer than n characters."""
    return s if len(s) <= n else s[: n // 2] + " ...[%d chars]... " % (len(s) - n) + s[-n // 2 :]
