"""Properties of the gpt-oss (Harmony) parser against generated ground truth:
any sequence of messages (analysis, commentary preambles, calls in either
header spelling with random JSON arguments, final answers), rendered as
gpt-oss writes them, under any chunking gives the same events as one shot,
and those equal the ground truth (content, reasoning, calls); the per-call
protocol holds."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import support
from strategies import chunkings, json_objects, prose
from test_harmony_golden import CALL, CH, CO, END, M, RET, S, merge, run, summary

TOOLS = ["get_weather", "search", "noop"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROSE = prose(("<",))


@st.composite
def messages(draw):
    """(response, content, reasoning, calls)."""
    parts, content, reasoning, calls = [], [], [], []
    first = True
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["analysis", "preamble", "call", "call_role", "final"]))
        head = CH if first and draw(st.booleans()) else S + "assistant" + CH
        first = False
        if kind in ("analysis", "preamble", "final"):
            body = draw(PROSE)
            channel = {"analysis": "analysis", "preamble": "commentary", "final": "final"}[kind]
            stop = RET if kind == "final" else END
            parts.append(head + channel + M + body + stop)
            (reasoning if kind == "analysis" else content).append(body)
        else:
            name = draw(st.sampled_from(TOOLS))
            args = draw(json_objects)
            raw = json.dumps(args, ensure_ascii=False, indent=draw(st.sampled_from([None, 2])))
            if kind == "call" or head == CH:
                constrain = draw(st.sampled_from([" " + CO + "json", CO + "json", "", " json"]))
                parts.append(head + "commentary to=functions." + name + constrain + M + raw + CALL)
            else:
                parts.append(S + "assistant to=functions." + name + CH + "commentary json" + M + raw + CALL)
            calls.append((name, json.dumps(args, ensure_ascii=False)))
    return "".join(parts), "".join(content), "".join(reasoning), calls


@SETTINGS
@given(data=st.data())
def test_ground_truth_any_chunking(data):
    response, content, reasoning, calls = data.draw(messages())
    one = run([response], TOOLS)
    support.check_stream_invariants(one)
    assert summary(one) == (content, reasoning, calls, [])
    assert run(data.draw(chunkings(response)), TOOLS) == one
    seed = data.draw(st.integers(0, 1000))
    assert run(support.token_like(response, seed), TOOLS) == one
    assert run(support.bursts(response, seed), TOOLS) == one


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_char_by_char_and_truncated(data):
    """Byte-by-byte equals one shot; any prefix of a response (a stream cut
    off) gives a defined result with the protocol intact."""
    response, _c, _r, _calls = data.draw(messages())
    one = run([response], TOOLS)
    assert run(support.char_by_char(response), TOOLS) == one
    cut = data.draw(st.integers(0, len(response)))
    ev = run([response[:cut]], TOOLS)
    support.check_stream_invariants(ev)
    assert merge(ev) == run(data.draw(chunkings(response[:cut])), TOOLS)
