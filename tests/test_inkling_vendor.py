"""Differential test against Inkling's own renderer and parser, tml-renderers
(the vendor's TMLv0 implementation that SGLang's inkling_renderer.py and
inkling_output.py load; optional test dependency, requirements/test.txt):
assistant turns generated here (text, then calls with JSON arguments of
any shape, Unicode and `<|end_message|>` inside strings) are rendered by
the vendor's renderer, decoded to text as SGLang's detokenizer writes them
(skip_special_tokens off), and parsed by the native `inkling` parser in
random chunks; the result must be what the vendor's parser reads from the
token ids: the same text and the same calls with the same argument values.
Text that spells a control token is left out: in text the spelling and the
token cannot be told apart (the vendor's parser works on ids)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tml = pytest.importorskip("tml_renderers")

from sglang_toolparse import StreamParser  # noqa: E402
from sglang_toolparse.api import collect  # noqa: E402
from strategies import TEXT_CHARS, chunkings, json_objects  # noqa: E402

from tml_renderers import chat, tokenizers, v0  # noqa: E402

_TOK = tokenizers.O200kBaseChatTokenizer()
_RENDERER = v0.Renderer(_TOK)
TOOLS = ["get_weather", "search", "run_command"]
CONTROL = ("message_", "content_", "end_message", "endoftext", "audio_end", "model_trigger")


def render_turn(text, calls):
    """The model's turn as the vendor renders it (token ids)."""
    msgs = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": text,
             "tool_calls": [{"id": "c%d" % i, "type": "function",
                             "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                            for i, (n, a) in enumerate(calls)]}]
    native = [m for om in chat.OpenAIMessage.from_oss_messages(msgs) for m in om.to_messages()]
    spans, _ = _RENDERER.render_for_completion(native)
    ids = [t for w in spans for t in w.span.tokens]
    start = ids.index(_TOK.encode_special("end_message")) + 1  # after the user message
    return ids[start:]


def payloads(ids):
    """The JSON payload of each call, from the ids, as SGLang's token path
    takes the arguments (inkling_output.py: the vendor's own argument values
    are re-serialized, floats included)."""
    start, end = _TOK.encode_special("content_invoke_tool_json"), _TOK.encode_special("end_message")
    out = []
    for i, t in enumerate(ids):
        if t == start:
            out.append(json.loads(_TOK.decode(ids[i + 1:ids.index(end, i)])))
    return out


def vendor_parse(ids):
    """(text, [(name, args)]) as the vendor's TMLv0 parser reads the ids
    (names and texts from its messages, arguments from the payloads)."""
    _, parser = _RENDERER.render_for_completion([])
    text, names = [], []
    for m in parser.parse_tokens(ids):
        c = m.content
        if isinstance(c, chat.Text):
            text.append(c.text)
        elif isinstance(c, chat.InvokeTool):
            names.append(c.name)
    args = [p["args"] for p in payloads(ids)]
    assert len(args) == len(names)
    return "".join(text), list(zip(names, args))


prose = st.text(TEXT_CHARS, max_size=30).filter(lambda s: not any("<|" + c in s for c in CONTROL))
turns = st.tuples(prose, st.lists(st.tuples(st.sampled_from(TOOLS), json_objects), max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=turns, data=st.data())
def test_native_reads_what_the_vendor_reads(turn, data):
    text, calls = turn
    ids = render_turn(text, calls)
    want = vendor_parse(ids)
    output = _TOK.decode(ids)
    p = StreamParser("inkling", TOOLS)
    events = []
    for c in data.draw(chunkings(output)):
        events += p.feed(c)
    got = collect(events + p.finish())
    assert got.errors == []
    assert (got.text, [(c.name, json.loads(c.arguments)) for c in got.calls]) == want


def test_the_vendor_renders_the_call_markup_the_parser_reads():
    """The rendering this parser's row is written for (a guard: a new
    tml-renderers release that renders calls differently fails here)."""
    ids = render_turn("ok", [("search", {"q": "x"})])
    assert _TOK.decode(ids) == ('<|message_model|><|content_text|>ok<|end_message|><|message_model|>search'
                                '<|content_invoke_tool_json|>{"name":"search","args":{"q":"x"}}<|end_message|>'
                                '<|content_model_end_sampling|>')
