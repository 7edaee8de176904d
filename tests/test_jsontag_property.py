"""Property: for generated Qwen2.5/Hermes responses and any chunking,
streamed result == one-shot result == the ground truth they were rendered
from, and every prose segment survives."""
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglang_toolparse import parse
from strategies import chunkings, json_objects, prose
from support import check_stream_invariants, run, summary

TOOLS = ["get_weather", "search", "send_email", "noop"]


@st.composite
def responses(draw):
    """(format, text, expected_text, expected_calls)"""
    fmt = draw(st.sampled_from(["qwen25", "hermes"]))
    segments = draw(st.lists(st.one_of(st.tuples(st.just("prose"), prose()),
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
            continue
        _, name, args = seg
        obj = {"name": name, "arguments": args}
        if draw(st.booleans()):
            obj = {"arguments": args, "name": name}  # arguments before name
        body = json.dumps(obj, ensure_ascii=draw(st.booleans()),
                          indent=draw(st.sampled_from([None, None, 2])),
                          separators=draw(st.sampled_from([None, (",", ":")])))
        if fmt == "qwen25":
            block = "<tool_call>\n" + body + "\n</tool_call>"
        else:
            block = "<tool_call>" + body + "</tool_call>"
        lead = draw(st.sampled_from(["", "\n", " \n"])) if parts else ""
        parts.append(lead + block)
        calls.append((name, json.dumps(args, ensure_ascii=False)))
        prev_call = True
    return fmt, "".join(parts), "".join(text), calls


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_streamed_equals_oneshot_equals_truth(data):
    fmt, text, expected_text, expected_calls = data.draw(responses())
    one = parse(fmt, text, TOOLS)
    assert one.text == expected_text
    assert [(c.name, c.arguments) for c in one.calls] == expected_calls
    assert one.errors == []
    chunks = data.draw(chunkings(text))
    streamed = run(fmt, chunks, TOOLS)
    check_stream_invariants(streamed)
    assert summary(streamed) == (expected_text, expected_calls, [])
    assert streamed == run(fmt, [text], TOOLS)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_char_by_char_equals_one_chunk(data):
    fmt, text, _, _ = data.draw(responses())
    assert run(fmt, list(text), TOOLS) == run(fmt, [text], TOOLS)


@settings(max_examples=300, deadline=None)
@given(json_objects, st.booleans(), st.sampled_from([None, 1, 4]))
def test_arguments_are_json_dumps_form(args, ascii_, indent):
    body = json.dumps({"name": "noop", "arguments": args}, ensure_ascii=ascii_, indent=indent)
    r = parse("hermes", "<tool_call>" + body + "</tool_call>", ["noop"])
    assert [c.arguments for c in r.calls] == [json.dumps(args, ensure_ascii=False)]
    assert json.loads(r.calls[0].arguments) == args


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_arbitrary_text_never_loses_prose_without_markers(s):
    """Text that cannot contain a marker comes out whole."""
    s = s.replace("<", "")
    r = parse("qwen25", s, TOOLS)
    assert r.text == s and r.calls == [] and r.errors == []
