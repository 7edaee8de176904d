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
    ("1E5", "100000.0"), ("1.50", "1.5"), ("-0", "0"), ("-0.0", "-0.0"), ("1e400", "Infinity"),
    ("-1e400", "-Infinity"), ("1e-400", "0.0"), ("NaN", "NaN"), ("-Infinity", "-Infinity"),
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


@pytest.mark.parametrize("raw", ["01", "1.", ".5", "1e", "+1", "tru", '"\\x"', '"a\nb"', "[1,]", '{"a" 1}', "[1 2]", "{,}", '"\\u12G4"'])
def test_invalid_json_is_an_error(raw):
    r = parse("hermes", '<tool_call>{"name": "f", "arguments": ' + raw + "}</tool_call>")
    assert r.complete_calls == [] and [e.code for e in r.errors] == ["json_syntax"]


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_hypothesis_floats(v):
    assert args_of(json.dumps([v])) == json.dumps([v])
