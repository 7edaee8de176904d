"""The argument normalizer writes exactly what json.dumps(json.loads(x),
ensure_ascii=False) writes, in particular floats in repr() form."""
import json
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sglang_toolparse import CallEnd, ParseError, StreamParser, parse


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


# ---------------------------------------------------------------------------
# the scanner's inline room (csrc/tp_json.h): a number token up to 61 bytes
# and 128 nesting levels are held in the struct, longer / deeper ones in a
# heap spill; the limits (TP_JSON_NUM_MAX = 4096 bytes, max_depth) are the
# same either way, at every chunking

KIMI_PRE = "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
KIMI_POST = "<|tool_call_end|><|tool_calls_section_end|>"


def kimi_events(args: str, size: int, **opts):
    text = KIMI_PRE + args + KIMI_POST
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    p = StreamParser("kimi_k2", ["f"], **opts)
    ev = []
    for c in chunks:
        ev += p.feed(c)
    ev += p.finish()
    ends = [e for e in ev if isinstance(e, CallEnd)]
    errors = [(e.code, e.offset) for e in ev if isinstance(e, ParseError)]
    return (ends[0].arguments if ends else None), errors


def number(rnd, length):
    """A number token of exactly `length` bytes: an integer, or a float in
    a double's range (its point within the first 20 digits)."""
    body = str(rnd.randint(1, 9)) + "".join(rnd.choice("0123456789") for _ in range(length - 1))
    kind = rnd.randrange(3)
    if kind == 1 and length > 3:
        point = rnd.randint(1, min(length - 2, 20))
        body = body[:point] + "." + body[point + 1:]
    elif kind == 2 and length > 6:
        body = body[0] + "." + body[2:-4] + "e-" + body[-2:]
    return body


@pytest.mark.parametrize("size", [1, 3, 7, 64, 100000])
def test_numbers_around_the_inline_room_and_the_limit(size):
    rnd = random.Random(20261202 + size)
    lengths = [1, 2, 30, 59, 60, 61, 62, 63, 64, 65, 100, 300, 4095, 4096]
    nums = [number(rnd, n) for n in lengths]
    raw = '{"a": [' + ", ".join(nums) + '], "b": ' + nums[-2] + "}"
    args, errors = kimi_events(raw, size)
    assert errors == [] and args == json.dumps(json.loads(raw), ensure_ascii=False)
    # one byte past the limit: an error at the 4097th byte of the token
    long = "1" * 4097
    args, errors = kimi_events('{"a": ' + long + "}", size)
    assert args is None and errors == [("json_number", len(KIMI_PRE) + 6 + 4096)]


def nested(rnd, depth):
    """`depth` levels of arrays and objects mixed, a scalar inside."""
    kinds = [rnd.randrange(2) for _ in range(depth)]
    head = "".join('{"k": ' if k else "[" for k in kinds)
    tail = "".join("}" if k else "]" for k in reversed(kinds))
    return head + "1" + tail, kinds


@pytest.mark.parametrize("size", [1, 5, 64, 100000])
def test_nesting_around_the_inline_levels(size):
    rnd = random.Random(20261203 + size)
    for depth in (127, 128, 129, 130, 300, 600):
        inner, kinds = nested(rnd, depth - 1)
        raw = '{"a": ' + inner + ', "b": [1, {"c": 2}]}'  # the object is level 1
        args, errors = kimi_events(raw, size, max_depth=600)
        assert errors == [] and args == raw, depth
        # a wrong closer at the deepest level is an error there
        bad = raw.replace("1" + ("}" if kinds[-1] else "]"), "1" + ("]" if kinds[-1] else "}"), 1)
        args, errors = kimi_events(bad, size, max_depth=600)
        at = len(KIMI_PRE) + raw.index("1" + ("}" if kinds[-1] else "]")) + 1
        assert args is None and errors == [("json_syntax", at)], depth
    inner, _ = nested(rnd, 600)
    args, errors = kimi_events('{"a": ' + inner + "}", size, max_depth=600)
    assert args is None and [c for c, _ in errors] == ["json_depth"]


@pytest.mark.parametrize("size", [1, 7, 100000])
def test_engines_nesting_past_the_inline_levels(size):
    """The engines that keep their own nesting in a tp_json (gemma4's
    key-value calls, pythonic) read it back right past the inline levels."""
    rnd = random.Random(20261204 + size)
    for depth in (127, 128, 129, 300):
        kinds = [rnd.randrange(2) for _ in range(depth)]
        tail = "".join("}" if k else "]" for k in reversed(kinds))
        wrong = ("]" if kinds[-1] else "}") + tail[1:]
        expected = '{"a": ' + "".join('{"k": ' if k else "[" for k in kinds) + "1" + tail + "}"
        for fmt, pre, head, post, code in (
                ("gemma4", "<|tool_call>call:f{a:", "".join("{k:" if k else "[" for k in kinds), "}<tool_call|>",
                 "bad_markup"),
                ("pythonic", "[f(a=", "".join("{'k': " if k else "[" for k in kinds), ")]", "json_syntax")):
            for closers, want in ((tail, ([expected], [])), (wrong, None)):
                text = pre + head + "1" + closers + post
                p = StreamParser(fmt, ["f"], max_depth=600)
                ev = []
                for i in range(0, len(text), size):
                    ev += p.feed(text[i:i + size])
                ev += p.finish()
                got = ([e.arguments for e in ev if isinstance(e, CallEnd)],
                       [(e.code, e.offset) for e in ev if isinstance(e, ParseError)])
                assert got == (want or ([], [(code, len(pre) + len(head) + 1)])), (fmt, depth)
