"""Adversarial inputs for every format the core implements.

Each test asserts the defined result (which error, which text), not just
survival. Formats come from `_core.formats()`; per-format knowledge (how to
write a call, markers) from tests/format_table.py, with a generic fallback
so a format that lands later runs the input-agnostic tests at once.
Timing is never asserted (see scripts/scaling.py for the linear-time check).
"""
from __future__ import annotations

import json
import random
import tracemalloc

import pytest

from format_table import SAMPLE_ARGS, expected_args, fragments, markers, seed_responses, spec
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Dropped, Markup, ParseError, Reasoning, StreamParser, Text
from sglang_toolparse._core import DEFAULT_LIMITS, ERROR_REASONS, formats
from support import check_stream_invariants, fixed, merge, one_chunk, run, summary, token_like

FORMATS = formats()
ERROR_CODES = set(ERROR_REASONS)
TOOLS = ["get_weather", "search", "f"]
PLACEHOLDER = "\x00ARGS\x00"


def need_renderer(fmt, json_args=False):
    s = spec(fmt)
    if s.render_call is None:
        pytest.skip("%s: %s" % (fmt, s.notes or "no renderer in tests/format_table.py"))
    if json_args and not s.json_args:
        pytest.skip("%s: arguments are not one JSON value" % fmt)
    return s


def split_call(fmt, name="f", before=""):
    """(prefix, suffix) around the arguments of one call in a response."""
    s = need_renderer(fmt, json_args=True)
    text = s.response(before, [(name, PLACEHOLDER)])
    pre, post = text.split(PLACEHOLDER)
    return pre, post


def nbytes(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def feed_all(p, chunks):
    ev = []
    for c in chunks:
        ev += p.feed(c)
    return ev + p.finish()


def unframed(events):
    """The events but the message's framing (Markup: Harmony's, Inkling's
    headers around the call; tests/test_lossless.py checks those)."""
    return [e for e in events if not isinstance(e, Markup)]


def check_defined(events):
    """Every adversarial input ends in a defined result: the stream protocol
    holds and every error has a known code and an offset."""
    check_stream_invariants(events)
    for e in events:
        if isinstance(e, ParseError):
            assert e.code in ERROR_CODES, e
            assert e.offset >= 0


# ---------------------------------------------------------------------------
# deep nesting


@pytest.mark.parametrize("fmt", FORMATS)
def test_nesting_200000_levels(fmt):
    pre, post = split_call(fmt)
    depth = 200_000
    head = '{"a": '  # arguments are an object in every format
    text = pre + head + "[" * depth + "]" * depth + "}" + post
    limit = DEFAULT_LIMITS["max_depth"]
    for chunks in ([text], fixed(65536)(text)):
        ev = unframed(run(fmt, chunks, TOOLS))
        check_defined(ev)
        errors = [e for e in ev if isinstance(e, ParseError)]
        assert [(e.code, e.index) for e in errors] == [("json_depth", 0)]
        # detected at the first bracket past the limit (the object is level 1)
        assert errors[0].offset == nbytes(pre) + len(head) + limit - 1
        assert [type(e) for e in ev] == [CallStart, ArgsDelta, ParseError]
        assert ev[1].delta == head + "[" * (limit - 1)
        assert not any(isinstance(e, Text) for e in ev)


@pytest.mark.parametrize("fmt", FORMATS)
def test_nesting_deep_objects_with_depth_cap(fmt):
    pre, post = split_call(fmt)
    depth = 5000
    text = pre + '{"a": ' * depth + "1" + "}" * depth + post
    ev = run(fmt, token_like(text), TOOLS, max_depth=4096)
    errors = [e for e in ev if isinstance(e, ParseError)]
    assert [e.code for e in errors] == ["json_depth"]
    assert errors[0].offset == nbytes(pre) + 6 * 4096
    # at the cap itself the value is accepted
    # at the cap itself the value is accepted (already in canonical form;
    # too deep for json.loads, so not checked with it)
    args = '{"a": ' * 4096 + "1" + "}" * 4096
    ev = StreamParser(fmt, TOOLS, max_depth=4096)
    ev = unframed(merge(feed_all(ev, token_like(pre + args + post))))
    assert [type(e) for e in ev] == [CallStart, ArgsDelta, CallEnd] and ev[2].arguments == args


# ---------------------------------------------------------------------------
# a 32 MB argument in 64 KB chunks


@pytest.mark.parametrize("fmt", FORMATS)
def test_32mb_argument_streams(fmt):
    pre, post = split_call(fmt)
    size = 32 << 20
    body = ("0123456789abcdef" * 4096)  # 64 KB
    p = StreamParser(fmt, TOOLS)
    fed = emitted = 0
    starts = ends = 0
    stream = [pre + '{"data": "'] + [body] * (size // len(body)) + ['"}' + post]
    for k, chunk in enumerate(stream):
        fed += nbytes(chunk)
        for e in p.feed(chunk):
            if isinstance(e, ArgsDelta):
                emitted += nbytes(e.delta)
            elif isinstance(e, CallStart):
                starts += 1
            elif isinstance(e, (ParseError, Text)):
                raise AssertionError(e)
            elif isinstance(e, CallEnd):
                ends += 1
                assert len(e.arguments) == size + 12
        if 0 < k < len(stream) - 1:
            # the core streams the argument out: it holds back no more than a
            # marker's length, never the argument
            assert fed - emitted <= nbytes(pre) + 64, (k, fed, emitted)
    tail = p.finish()
    assert not [e for e in tail if not isinstance(e, Text)]
    assert (starts, ends) == (1, 1)
    assert emitted == size + len('{"data": ""}')


@pytest.mark.parametrize("fmt", ["qwen25", "hermes"])
def test_arguments_before_name_hit_buffer_limit(fmt):
    """Arguments written before the name are the one thing the core must
    hold back; past max_buffer they fail with buffer_limit."""
    if fmt not in FORMATS:
        pytest.skip("format not built")
    limit = 1 << 16
    head = '<tool_call>{"arguments": {"data": "'
    text = head + "x" * (2 * limit) + '"}, "name": "f"}</tool_call>after'
    for chunks in ([text], fixed(4096)(text)):
        ev = run(fmt, chunks, TOOLS, max_buffer=limit)
        check_defined(ev)
        errors = [e for e in ev if isinstance(e, ParseError)]
        assert [(e.code, e.index) for e in errors] == [("buffer_limit", None)]
        # the first byte that does not fit; buffer holds '{"data": "' + x...
        assert errors[0].offset == len(head) - len('{"data": "') + limit
        assert summary(ev)[0] == "after"


# ---------------------------------------------------------------------------
# NUL and lone surrogates


@pytest.mark.parametrize("fmt", FORMATS)
def test_nul_and_lone_surrogates_in_prose(fmt):
    prose = "a\x00b \ud800 c\udfff\x00 \U0001f600 \ud83d"
    for chunks in ([prose], list(prose), token_like(prose)):
        ev = run(fmt, chunks, TOOLS)
        assert ev == [Text(prose)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_nul_and_lone_surrogates_in_arguments(fmt):
    pre, post = split_call(fmt, before="x\x00\ud800 ")
    # escaped lone surrogate and escaped NUL: valid JSON, kept escaped
    args = '{"s": "\\ud800 \\u0000 \\udfff\\ud800"}'
    r = summary(run(fmt, list(pre + args + post), TOOLS))
    assert r[0] == ("x\x00\ud800 " if spec(fmt).blank_is_text else "x\x00\ud800")
    assert r[1] == [("f", '{"s": "\\ud800 \\u0000 \\udfff\\ud800"}')] and r[2] == []
    # a raw lone surrogate inside a string is passed through as it came
    raw = '{"s": "a\ud800b"}'
    r = summary(run(fmt, [pre + raw + post], TOOLS))
    assert r[1] == [("f", raw)] and json.loads(r[1][0][1]) == {"s": "a\ud800b"}
    # a raw NUL inside a string is read as json.loads(strict=False) reads
    # it, and written escaped (issue 18)
    raw_nul = '{"s": "a\x00b"}'
    r = summary(run(fmt, [pre + raw_nul + post + "after"], TOOLS))
    assert r[1] == [("f", '{"s": "a\\u0000b"}')] and r[2] == [] and r[0].endswith("after")


# ---------------------------------------------------------------------------
# truncation at every point


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_point(fmt):
    need_renderer(fmt)
    s = spec(fmt)
    text = s.response("Checking. ", [("get_weather", SAMPLE_ARGS[0]), ("search", SAMPLE_ARGS[3])], "")
    full = summary(run(fmt, [text], TOOLS))
    assert full[2] == [] and len(full[1]) == 2
    first_marker = min((text.find(m) for m in s.markers if m in text), default=len(text))
    for i in range(len(text) + 1):
        cut = text[:i]
        for chunks in ([cut], fixed(7)(cut)):
            ev = run(fmt, chunks, TOOLS)
            check_defined(ev)
            t, calls, errors = summary(ev)
            # prose before the first call survives any cut after it
            if i >= first_marker:
                assert t.startswith("Checking."), (i, t)
            # a call is either complete (and then exactly the full one) or
            # reported; never a wrong call
            for c in calls:
                assert c in full[1], (i, c)
            assert set(errors) <= {"unterminated", "json_syntax"}, (i, errors)
            started = sum(isinstance(e, CallStart) for e in ev)
            assert started == len(calls) + sum(e.index is not None for e in ev if isinstance(e, ParseError))
        if i == len(text):
            assert summary(run(fmt, [cut], TOOLS)) == full


# ---------------------------------------------------------------------------
# random corruption


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_corruption(fmt):
    seeds = seed_responses(fmt) or ["Some prose, then {\"name\": \"f\"} and <x> tags."]
    toks = list(markers(fmt))
    rnd = random.Random(1234)
    for n in range(400):
        s = list(rnd.choice(seeds))
        for _ in range(rnd.randint(1, 6)):
            op = rnd.randrange(4)
            pos = rnd.randint(0, len(s))
            if op == 0 and s:
                del s[min(pos, len(s) - 1)]
            elif op == 1:
                s.insert(pos, rnd.choice(toks))
            elif op == 2:
                s.insert(pos, chr(rnd.choice([0, 0x7F, 0xD800, 0xDFFF, 0xFFFF, 0x10FFFF, rnd.randrange(0x20, 0x3000)])))
            elif s:
                j = rnd.randint(0, len(s) - 1)
                s[min(pos, len(s) - 1)], s[j] = s[j], s[min(pos, len(s) - 1)]
        text = "".join(s)
        one = run(fmt, [text], None if n % 2 else TOOLS)
        check_defined(one)
        for chunks in (list(text), token_like(text, n)):
            assert run(fmt, chunks, None if n % 2 else TOOLS) == one, text


# ---------------------------------------------------------------------------
# 10,000 calls in one response


@pytest.mark.parametrize("fmt", FORMATS)
def test_10000_calls(fmt):
    s = need_renderer(fmt)
    # string values: they round-trip in every format, also where a value's
    # type comes from a schema that tool names alone do not give (XML formats)
    calls = [("f", '{"i": "v%d"}' % i) for i in range(10_000)]
    text = s.response("", calls, "end")
    ev = run(fmt, fixed(4096)(text), TOOLS)
    t, got, errors = summary(ev)
    assert errors == [] and t == "end"
    assert got == calls
    # past max_calls: every further call is reported, none emitted
    ev = run(fmt, fixed(4096)(text), TOOLS, max_calls=100)
    check_defined(ev)
    t, got, errors = summary(ev)
    assert len(got) == 100 and errors == ["call_limit"] * 9_900 and t == "end"
    assert all(e.index is None and e.detail == "f" for e in ev if isinstance(e, ParseError))


# ---------------------------------------------------------------------------
# unknown tools and malformed markup


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_tool(fmt):
    s = need_renderer(fmt)
    text = s.response("a", [("rm_rf", '{"path": "/"}'), ("f", "{}")], "")
    ev = run(fmt, list(text), TOOLS)
    check_defined(ev)
    errors = [e for e in ev if isinstance(e, ParseError)]
    assert [(e.code, e.index, e.detail) for e in errors] == [("unknown_tool", None, "rm_rf")]
    assert summary(ev)[1] == [("f", "{}")]
    assert [e.index for e in ev if isinstance(e, CallStart)] == [0]
    # forwarded when asked to
    ev = run(fmt, [text], TOOLS, forward_unknown=True)
    assert summary(ev)[1] == [("rm_rf", '{"path": "/"}'), ("f", "{}")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_tool_long_non_ascii_name(fmt):
    """Regression: an error detail cut at 256 bytes in the middle of a UTF-8
    character made feed() raise UnicodeDecodeError."""
    s = need_renderer(fmt)
    name = "x" + "\u00e9" * 200
    for chunks in ([s.response("", [(name, "{}")])], list(s.response("", [(name, "{}")]))):
        ev = run(fmt, chunks, TOOLS)
        errors = [e for e in ev if isinstance(e, ParseError)]
        assert [e.code for e in errors] == ["unknown_tool"]
        assert name.startswith(errors[0].detail) and nbytes(errors[0].detail) == 255


@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_markup(fmt):
    toks = [m for m in spec(fmt).markers if not m.isalnum()] or ["<", ">"]
    cases = []
    for m in toks:
        cases += [m, m * 3, "prose " + m + " prose", m + "{" + m + "}" + m, m[: max(1, len(m) // 2)] + "x" + m]
    for i, text in enumerate(cases):
        one = run(fmt, [text], TOOLS)
        check_defined(one)
        assert run(fmt, list(text), TOOLS) == one
        assert not [e for e in one if isinstance(e, (CallStart, CallEnd))], (text, one)
        # prose before the markup is never lost (after a start marker, a
        # broken call is skipped up to its end marker by design)
        if text.startswith("prose "):
            assert summary(one)[0].startswith("prose"), (text, one)
        assert {e.code for e in one if isinstance(e, ParseError)} <= {
            "json_syntax", "unterminated", "bad_markup", "missing_name", "trailing_content"}, one


@pytest.mark.parametrize("fmt", ["qwen25", "hermes"])
def test_trailing_content_offset_is_chunk_independent(fmt):
    """Regression (found by the fuzzer): junk that began as a partial end tag
    held back from an earlier chunk was reported at the offset of the
    current chunk."""
    if fmt not in FORMATS:
        pytest.skip("format not built")
    text = '<tool_call>{"name": "f", "arguments": {"a": 1}}</toooolall>'
    want = text.index("</too")
    for chunks in ([text], list(text), fixed(3)(text), [text[:53], text[53:]]):
        ev = run(fmt, chunks, TOOLS)
        errs = [(e.code, e.offset) for e in ev if isinstance(e, ParseError)]
        assert errs == [("trailing_content", want)], chunks


@pytest.mark.parametrize("fmt", ["qwen25", "hermes"])
def test_buffer_limit_offset_is_chunk_independent(fmt):
    """Regression (found by the fuzzer): a string run that overflowed a
    bounded buffer was reported at the start of the run, so the offset
    depended on the chunking."""
    if fmt not in FORMATS:
        pytest.skip("format not built")
    text = '<tool_call>{"name": "f", "argum: 1}}</tool_ca'
    for chunks in ([text], list(text), fixed(5)(text)):
        ev = run(fmt, chunks, TOOLS, max_name=16)
        assert [(e.code, e.offset) for e in ev if isinstance(e, ParseError)] == [("buffer_limit", 26 + 16)]


# ---------------------------------------------------------------------------
# 1 MB of random marker fragments


@pytest.mark.parametrize("fmt", FORMATS)
def test_1mb_marker_fragments(fmt):
    text = fragments(fmt, 1 << 20, 7)
    tracemalloc.start()
    try:
        p = StreamParser(fmt, TOOLS)
        out = 0
        for c in fixed(65536)(text):
            for e in p.feed(c):
                check_event_types(e)
                out += len(getattr(e, "text", "") or getattr(e, "delta", ""))
        tail = p.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Python-side memory stays within a few chunks, whatever the input
    assert peak < 16 * 65536 * 4, peak
    assert out <= 8 * len(text)
    one = run(fmt, [text], TOOLS)
    check_defined(one)
    assert one == merge(run(fmt, fixed(65536)(text), TOOLS))
    # a different chunking of the full text gives the same events
    assert one == run(fmt, token_like(text, 5), TOOLS)
    del tail


def check_event_types(e):
    assert isinstance(e, (Text, CallStart, ArgsDelta, CallEnd, ParseError, Reasoning, Dropped, Markup)), e
