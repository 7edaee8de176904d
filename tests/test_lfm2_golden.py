"""Liquid LFM2 / LFM2.5 (`lfm2`, a row of the pythonic engine in
csrc/fmt_pythonic.c; its JSON form a row of fmt_jsontag.c): golden cases
replayed with every chunker and at every split, the chat template's
render_tool_calls read backwards (random arguments rendered by
tests/format_table.py's copy of the template's encoder), and parity with
SGLang's Lfm2Detector through FunctionCallParser (strict xfails name what
SGLang gets wrong).

The contract is the model's chat template: LFM2.5's render_tool_calls writes
`<|tool_call_start|>[NAME(K=V, ...), ...]<|tool_call_end|>`, a string as
'...' with \\, ', \\n and \\r escaped, a list or dict with `tojson` (so
true/false/null inside), anything else with `string` (True, None, 3, 1e-05);
LFM2's writes a string as "..." unescaped and a list with `string` (Python's
repr). SGLang's detector also reads a bare call and the JSON form
`[{"name": ..., "arguments": {...}}]` (the model writes it when its system
prompt asks for JSON calls): read here too."""
import json
import random

import pytest

from format_table import render_lfm2
from golden import call, err, golden_tests
from parity import parity_tests
from sglang_toolparse import ArgsDelta, CallEnd, CallStart, StreamParser, Text
from support import CHUNKERS, run, random_value

TOOLS = ["get_weather", "search", "f", "g"]
S, E = "<|tool_call_start|>", "<|tool_call_end|>"


def block(body: str) -> str:
    return S + body + E


W = block("[get_weather(city='Paris', days=3)]")
W_ARGS = '{"city": "Paris", "days": 3}'
T_ARGS = '{"q": "it\'s\\\\ \\n", "n": null, "b": true, "f": 1e-05, "i": -7, "l": ["a", true, null, {"k": false}], "d": {"x": 1.5}}'

GOLDEN = {
    "single": (W, call(0, "get_weather", W_ARGS)),
    "prose_around": ("Sure. " + W + " Done.", [Text("Sure.")] + call(0, "get_weather", W_ARGS) + [Text(" Done.")]),
    "two_calls_in_a_list": (block("[get_weather(city='A'), search()]"),
                            call(0, "get_weather", '{"city": "A"}') + call(1, "search", "{}")),
    # LFM2.5's format_arg_value: escaped '...' strings, tojson lists and dicts, `string` for the rest
    "template_values": (block("[search(q='it\\'s\\\\ \\n', n=None, b=True, f=1e-05, i=-7, "
                              "l=[\"a\", true, null, {\"k\": false}], d={\"x\": 1.5})]"),
                        call(0, "search", T_ARGS)),
    # LFM2's: "..." strings as they are, lists as Python's repr
    "lfm2_template_values": (block("[search(q=\"a 'b'\", l=['x', True, None, {'k': 2}], d={\"k\": \"v\"})]"),
                             call(0, "search", '{"q": "a \'b\'", "l": ["x", true, null, {"k": 2}], "d": {"k": "v"}}')),
    "json_form": (block('[{"name": "search", "arguments": {"q": "x"}}, {"name": "get_weather", "parameters": {"city": "B"}}]'),
                  call(0, "search", '{"q": "x"}') + call(1, "get_weather", '{"city": "B"}')),
    "bare_call": (block("get_weather(city='A')"), call(0, "get_weather", '{"city": "A"}')),
    "bare_json_object": (block(' {"name": "search", "arguments": {}} '), call(0, "search", "{}")),
    # the blank before the end tag is the block's, not text after it
    "bare_json_object_then_text": (block(' {"name": "search", "arguments": {}} ') + "t",
                                   call(0, "search", "{}") + [Text("t")]),
    # indices run on across blocks, whichever form each block has
    "json_block_then_pythonic_block": ("a" + block('[{"name": "search", "arguments": {"q": "x"}}]') + "b" + W + "c",
                                       [Text("a")] + call(0, "search", '{"q": "x"}') + [Text("b")]
                                       + call(1, "get_weather", W_ARGS) + [Text("c")]),
    # a block that closes with no call: markup of no call, reported with
    # the block as its raw text (docs/SEMANTICS.md, "Dropped text")
    "empty_list_is_markup": ("x" + block("[]") + "y",
                             [Text("x"), err(None, "bad_markup", len("x" + block("[]")), "a block with no call"),
                              Text("y")]),
    "empty_list_then_call": (" " + block("[ ]") + "\n" + W,
                             [err(None, "bad_markup", len(" " + block("[ ]")), "a block with no call")]
                             + call(0, "get_weather", W_ARGS)),
    "stray_end_tag_is_prose": ("a " + E + " b", [Text("a " + E + " b")]),
    "brackets_in_prose_are_prose": ("see [1] and [f(a=1)] here", [Text("see [1] and [f(a=1)] here")]),
    "unknown_tool_then_known": (block("[nope(a=1), search(q='x')]"),
                                [err(None, "unknown_tool", 24, "nope")] + call(0, "search", '{"q": "x"}')),
    "broken_value_then_next_call": (block("[search(q=x), get_weather(city='B')]") + "t",
                                    [CallStart(0, "search"), ArgsDelta(0, '{"q": '), err(0, "json_syntax", 30)]
                                    + call(1, "get_weather", '{"city": "B"}') + [Text("t")]),
    "tuple_refused_next_call_read": (block("[search(q=(1, 2)), f()]"),
                                     [CallStart(0, "search"), ArgsDelta(0, '{"q": '), err(0, "json_syntax", 29)]
                                     + call(1, "f", "{}")),
    "trailing_junk_reported": (block("[search(q='x')] junk") + "t",
                               call(0, "search", '{"q": "x"}') + [err(None, "trailing_content", 35), Text("t")]),
    "end_tag_ends_a_broken_call": (S + "[search(q=1+" + E + "tail",
                                   [CallStart(0, "search"), ArgsDelta(0, '{"q": '), err(0, "json_syntax", 31),
                                    Text("tail")]),
    "block_without_a_call": (block("hello") + "t", [err(None, "bad_markup", 24), Text("t")]),
    "json_block_broken_then_pythonic": (block('[{"name": "search", "arguments": {"q": }}]') + W,
                                        [CallStart(0, "search"), ArgsDelta(0, '{"q": '), err(0, "json_syntax", 58)]
                                        + call(1, "get_weather", W_ARGS)),
    "cut_off_in_a_string": (S + "[search(q='ab",
                            [CallStart(0, "search"), ArgsDelta(0, '{"q": "ab'), err(0, "unterminated", 32)]),
    "cut_off_before_the_call_is_text": ("Hi " + S + "[sea", [Text("Hi " + S + "[sea"), err(None, "unterminated", 26)]),
    "no_end_tag_after_the_list": (S + "[search(q='x')]", call(0, "search", '{"q": "x"}')),
}

test_golden_every_chunker, test_golden_every_split = golden_tests("lfm2", GOLDEN, TOOLS)


def test_strings_stream_as_generated():
    p = StreamParser("lfm2", TOOLS)
    assert p.feed(S + "[search(q='long te") == [CallStart(0, "search"), ArgsDelta(0, '{"q": "long te')]
    assert p.feed("xt\\") == [ArgsDelta(0, "xt")]  # an escape is read whole
    assert p.feed("nmore', n=1)]") == [ArgsDelta(0, '\\nmore", "n": 1}'),
                                      CallEnd(0, "search", '{"q": "long text\\nmore", "n": 1}')]
    assert p.feed(E + " ok") == [Text(" ok")]


def test_json_form_streams_as_generated():
    p = StreamParser("lfm2", TOOLS)
    assert p.feed(S + '[{"name": "search", "arguments": {"q": "long te') == [
        CallStart(0, "search"), ArgsDelta(0, '{"q": "long te')]
    assert p.feed('xt"}}]' + E + "[") == [ArgsDelta(0, 'xt"}'), CallEnd(0, "search", '{"q": "long text"}'),
                                          Text("[")]  # prose again after the block: a `[` is not held
    assert p.feed("f(a=1)]") + p.finish() == [Text("f(a=1)]")]


def _value(rnd):
    return random_value(rnd, 'abk_\'" ', 'xy \'"\\\n\r\t\x01é中😀]){},:<|>=')


def test_template_round_trip():
    """Random arguments rendered as LFM2.5's template renders them read back
    as the same JSON value, one chunk and every 3 characters."""
    rnd = random.Random(23)
    for _ in range(300):
        args = {"v": _value(rnd), "w": _value(rnd)}
        text = S + "[" + render_lfm2("search", json.dumps(args)) + "]" + E
        for chunks in ([text], [text[i:i + 3] for i in range(0, len(text), 3)]):
            ends = [e for e in run("lfm2", chunks, TOOLS) if isinstance(e, CallEnd)]
            assert len(ends) == 1 and json.loads(ends[0].arguments) == args, (text, ends)


# ---- parity with SGLang's Lfm2Detector (builtin vs native) -----------------
PTOOLS = ("get_weather", "search")
CASES = {  # name -> (text, prose, calls)
    "single": (W, "", [("get_weather", W_ARGS)]),
    "two_calls_in_a_list": (block("[get_weather(city='A'), search(q='b', n=None, t=true)]"), "",
                            [("get_weather", '{"city": "A"}'), ("search", '{"q": "b", "n": null, "t": true}')]),
    "template_values": (block("[search(q='it\\'s\\\\ \\n', n=None, b=True, f=1e-05, i=-7, "
                              "l=[\"a\", true, null, {\"k\": false}], d={\"x\": 1.5})]"), "", [("search", T_ARGS)]),
    "json_form": (block('[{"name": "search", "arguments": {"q": "x", "n": [1, 2.5]}}]'), "",
                  [("search", '{"q": "x", "n": [1, 2.5]}')]),
    "bare_call": (block("get_weather(city='A')"), "", [("get_weather", '{"city": "A"}')]),
    "unknown_tool_dropped": (block("[nope(a=1), search(q='x')]"), "", [("search", '{"q": "x"}')]),
    "prose_before": ("Sure." + W, "Sure.", [("get_weather", W_ARGS)]),
}


def _streamed_xfail(impl, case, chunker):
    return None


test_one_shot_same_calls, test_streamed_calls = parity_tests("lfm2", CASES, PTOOLS, _streamed_xfail)


def _name(impl):
    return "lfm2" if impl == "builtin" else "lfm2_native"


@pytest.mark.parametrize("chunker", ["tokens", "one"])
@pytest.mark.parametrize("impl", ["builtin", "native"])
def test_two_blocks_two_calls(fcp, sglang_tool, request, impl, chunker):
    from sglang_support import stream_through

    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "SGLang numbers the calls of each block from 0 (the second block's call shares tool_index 0 and the "
            "client merges the two), and reads one block per increment (a chunk with two blocks loses the second)")))
    text = W + block("[search(q='x')]")
    assert stream_through(fcp, sglang_tool(*PTOOLS), _name(impl), CHUNKERS[chunker](text)) == (
        "", [("get_weather", W_ARGS), ("search", '{"q": "x"}')])


@pytest.mark.parametrize("impl", ["builtin", "native"])
def test_prose_after_a_block_in_the_same_chunk(fcp, sglang_tool, request, impl):
    from sglang_support import stream_through

    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "SGLang's stream drops the text that follows a block in the chunk that closes it")))
    assert stream_through(fcp, sglang_tool(*PTOOLS), _name(impl), ["Sure. " + W + " Done."])[0].endswith("Done.")


@pytest.mark.parametrize("impl", ["builtin", "native"])
def test_one_shot_keeps_text_after_the_block(fcp, sglang_tool, request, impl):
    from sglang_support import one_shot

    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "SGLang's one-shot parse keeps only the text before the first block (its stream sends the rest)")))
    assert one_shot(fcp, sglang_tool(*PTOOLS), _name(impl), W + " Done.") == (" Done.", [("get_weather", W_ARGS)])


@pytest.mark.parametrize("impl", ["builtin", "native"])
def test_arguments_streamed_before_the_block_closes(fcp, sglang_tool, request, impl):
    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "SGLang holds the whole block until its end tag: no argument streaming")))
    p = fcp.FunctionCallParser(sglang_tool(*PTOOLS), _name(impl))
    _, items = p.parse_stream_chunk(S + "[search(q='long te")
    assert "".join(it.parameters for it in items) == '{"q": "long te'


@pytest.mark.parametrize("impl", ["builtin", "native"])
def test_a_cut_off_block_is_not_lost(fcp, sglang_tool, request, impl):
    from sglang_support import stream_through

    if impl == "builtin":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "SGLang drops a block the stream ends in: neither its call nor its text reaches the client")))
    got = stream_through(fcp, sglang_tool(*PTOOLS), _name(impl), CHUNKERS["tokens"]("Hi " + S + "[search(q='ab"))
    assert got == ("Hi", [("search", '{"q": "ab"}')])  # the incomplete call, as for every format (serving_finish.py)


def test_has_tool_call(fcp, sglang_tool):
    p = fcp.FunctionCallParser(sglang_tool(*PTOOLS), "lfm2_native")
    assert p.has_tool_call(W) and p.has_tool_call("Hi " + W)
    assert not p.has_tool_call("no call: " + E) and not p.has_tool_call("see [1]")
