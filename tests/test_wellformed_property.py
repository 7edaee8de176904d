"""Property, for every format with a renderer in tests/format_table.py:
on well-formed responses (prose and calls interleaved) and any chunking, no
prose is lost, every call comes out exactly, and streamed == one-shot."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from format_table import spec
from sglang_toolparse._core import formats
from strategies import chunkings, json_objects, prose
from support import check_stream_invariants, run, summary

TOOLS = ["get_weather", "search", "send_email", "noop"]


def forbidden(fmt):
    # prose must not contain the start of a marker: first characters of
    # every marker that is markup (not a bare word)
    return sorted({m[0] for m in spec(fmt).markers if not m[0].isalnum()} | {"<"})


@st.composite
def responses(draw, fmt):
    s = spec(fmt)
    segments = draw(st.lists(st.one_of(st.tuples(st.just("prose"), prose(forbidden(fmt))),
                                       st.tuples(st.just("call"), st.sampled_from(TOOLS), json_objects)),
                             min_size=1, max_size=5))
    parts, text, calls = [], [], []
    prev_call = False
    for seg in segments:
        if seg[0] == "prose":
            sep = draw(st.sampled_from(["\n", "\n\n", " "])) if prev_call else ""
            parts.append(sep + seg[1])
            text.append(sep + seg[1])
            prev_call = False
        else:
            _, name, args = seg
            raw = json.dumps(args, ensure_ascii=draw(st.booleans()))
            parts.append(s.calls_text([(name, raw)]))
            calls.append((name, json.dumps(args, ensure_ascii=False)))
            prev_call = True
    return "".join(parts), "".join(text), calls


@pytest.mark.parametrize("fmt", formats())
def test_no_prose_lost_and_calls_exact(fmt):
    s = spec(fmt)
    if s.render_call is None or not s.json_args:
        pytest.skip("%s: no JSON renderer in tests/format_table.py" % fmt)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def check(data):
        text, want_text, want_calls = data.draw(responses(fmt))
        one = run(fmt, [text], TOOLS)
        check_stream_invariants(one)
        assert summary(one) == (want_text, want_calls, [])
        chunks = data.draw(chunkings(text))
        assert run(fmt, chunks, TOOLS) == one

    check()
