"""The argument normalizer writes exactly what json.dumps(json.loads(x),
ensure_ascii=False) writes, in particular floats in repr() form."""
import json
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sglang_toolparse import parse


def args_of(raw_json: str) -> str:
    r = parse("hermes", '<tool_call>{"name": "f", "arguments": ' + raw_json + "}</tool_call>")
    assert r.errors == [], r.errors
    return r.calls[0].arguments


def test_random_bit_pattern_floats_match_repr():
    rnd = random.Random(20261129)
    vals = []
    while len(vals) < 5000:
        v = struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0]
        if v == v and abs(v) != float("inf"):
            vals.append(v)
    assert args_of(json.dumps(vals)) == json.dumps(vals)


@pytest.mark.parametrize("v", [
    5.960464477539063e-08, 0.1, 1e16, 1e15, 1e-5, 1e-4, 0.0001, 123456789012345678.0,
    -0.0, 5e-324, 1.7976931348623157e308, 9.999999999999999e22, 1e22, 1e23, 100.0, 2.5e-7,
])
def test_float_edge_cases(v):
    assert args_of(json.dumps([v])) == json.dumps([v])


@pytest.mark.parametrize("raw,expected", [
    ("1E5", "100000.0"), ("1.50", "1.5"), ("-0", "0"), ("-0.0", "-0.0"), ("1e400", "1e400"),
    ("-1e400", "-1e400"), ("1e-400", "0.0"), ("-1.5E+999", "-1.5E+999"), ("12345e400", "12345e400"),
    ("123456789012345678901234567890", "123456789012345678901234567890"),
    ('"\\u00e9\\/\\b\\f\\u0001\\u001F"', '"\u00e9/\\b\\f\\u0001\\u001f"'),
    ('"\\ud83d\\ude00"', '"\U0001F600"'),
    ('"\\ud800"', '"\\ud800"'),  # lone surrogate stays escaped (valid UTF-8 out)
    ('"\\ud800\\n"', '"\\ud800\\n"'),
    ('"\\udc00x"', '"\\udc00x"'),
    ("[ 1 , [ ] , { } ,{\"a\" :[true]} ]", '[1, [], {}, {"a": [true]}]'),
])
def test_tokens(raw, expected):
    assert args_of(raw) == expected


@pytest.mark.parametrize("raw", ["01", "1.", ".5", "1e", "+1", "tru", '"\\x"', "NaN", "Infinity", "-Infinity", "[1, NaN]", "[1,]", '{"a" 1}', "[1 2]", "{,}", '"\\u12G4"'])
def test_invalid_json_is_an_error(raw):
    r = parse("hermes", '<tool_call>{"name": "f", "arguments": ' + raw + "}</tool_call>")
    assert r.complete_calls == [] and [e.code for e in r.errors] == ["json_syntax"]


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_hypothesis_floats(v):
    assert args_of(json.dumps([v])) == json.dumps([v])


def test_short_decimals_match_repr():
    """Numbers of at most 15 significant digits take the normalizer's fast
    path (their own digits are repr()'s shortest digits); the others, and
    those near the ends of the range, strtod. Both must write repr(float)."""
    rnd = random.Random(20261201)
    toks = []
    for _ in range(4000):
        digits = "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 18)))
        point = rnd.randint(0, len(digits))
        mant = (digits[:point] or "0").lstrip("0") or "0"
        frac = digits[point:]
        tok = ("-" if rnd.random() < 0.3 else "") + mant + ("." + frac if frac else ".0")
        r = rnd.random()
        if r < 0.5:
            tok += rnd.choice("eE") + rnd.choice(["", "+", "-"]) + str(rnd.randint(0, 330))
        toks.append(tok)
    toks += ["0.0", "-0.0", "0e5", "-0.000e-3", "1e-299", "1e-300", "9.99999999999999e299", "1e300",
             "123456789012345.0", "1234567890123456.0", "0.000123456789012345", "100000000000000000000.0"]
    raw = "[" + ", ".join(toks) + "]"
    # value by value: repr(float(t)), but numbers past a double keep their digits
    want = []
    for t in toks:
        v = float(t)
        want.append(t if v in (float("inf"), float("-inf")) else repr(v))
    assert args_of(raw) == "[" + ", ".join(want) + "]"
    # and cut into chunks at every length, the same (numbers cut by a chunk take the slow path)
    from sglang_toolparse import StreamParser
    text = '<tool_call>{"name": "f", "arguments": ' + raw + "}</tool_call>"
    for size in (1, 3, 7, 64):
        p = StreamParser("hermes")
        evs = []
        for i in range(0, len(text), size):
            evs += p.feed(text[i:i + size])
        evs += p.finish()
        assert [e.arguments for e in evs if type(e).__name__ == "CallEnd"] == ["[" + ", ".join(want) + "]"]
