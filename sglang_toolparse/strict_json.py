"""Argument JSON as the parsers write it (docs/SEMANTICS.md, "Arguments"):
strict RFC 8259. Python's json module reads `NaN`, `Infinity`, `-Infinity`
and turns a number past a double (`1e400`) into `inf`, which json.dumps
writes back as `Infinity`: not JSON for JavaScript's JSON.parse, Go or Rust.
Here a number past a double keeps the digits it was written with, and a
value holding NaN or an infinity has no JSON form (the callers then use the
raw text, as the C core does).

The Python twins of the core's typing rules (glm_types.py, xml_types.py)
read JSON with `loads` and write it with `dumps`."""
from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["BigNumber", "loads", "dumps", "number"]


class BigNumber(float):
    """A JSON number whose value is past a double: as a float it is the
    infinity Python reads (so typing rules that compare or convert see what
    SGLang's see), and `text` is the number as it was written."""

    __slots__ = ("text",)

    def __new__(cls, text: str) -> "BigNumber":
        self = float.__new__(cls, text)
        self.text = text
        return self


def number(token: str) -> float:
    """float(token), or a BigNumber when the value is past a double."""
    v = float(token)
    return v if v - v == 0 else BigNumber(token)


def loads(text: str) -> Any:
    """json.loads(text), numbers past a double kept as BigNumber."""
    return json.loads(text, parse_float=number)


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _swap(value: Any, tag: str, found: list) -> Any:
    """value with each BigNumber replaced by a placeholder string."""
    if type(value) is BigNumber:
        found.append(value.text)
        return "%s%d" % (tag, len(found) - 1)
    if isinstance(value, dict):
        return {k: _swap(v, tag, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_swap(v, tag, found) for v in value]
    return value


def dumps(value: Any) -> str:
    """json.dumps(value, ensure_ascii=False) for strict JSON: a BigNumber
    is written as its digits; NaN or an infinity raises ValueError (as a
    set or bytes raise TypeError)."""
    if type(value) is BigNumber:
        return value.text
    try:
        return _ENCODER.encode(value)
    except ValueError:
        found: list = []
        # a placeholder no string of the value can contain: a fresh nonce
        tag = "\x00bignumber-%s-" % os.urandom(8).hex()
        swapped = _swap(value, tag, found)
        if not found:
            raise
        text = _ENCODER.encode(swapped)  # NaN/inf left: ValueError
        esc = _ENCODER.encode(tag)[1:-1]
        for k in range(len(found) - 1, -1, -1):  # k=10 before k=1
            text = text.replace('"%s%d"' % (esc, k), found[k])
        return text
