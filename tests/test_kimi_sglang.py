"""Parity of the Kimi-K2 native detector with SGLang's KimiK2Detector.

On output as Kimi's template writes it, the one-shot results are the same
(same calls, same argument JSON, same prose before the section), and so is
streaming when every special token arrives whole. Where SGLang's detector
is wrong, an xfail(strict=True) test runs the correct expectation against
SGLang's detector (so it must keep failing there) and the same expectation
against ours (which must pass)."""
from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    import sglang.srt.function_call.kimik2_detector  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
        raise
    pytest.skip("SGLang not installed: %s" % e, allow_module_level=True)

import kimi_support as ks  # noqa: E402
import support  # noqa: E402
from kimi_support import ARG_BEGIN as A  # noqa: E402
from kimi_support import CALL_BEGIN as CB  # noqa: E402
from kimi_support import CALL_END as CE  # noqa: E402
from kimi_support import SECTION_BEGIN as B  # noqa: E402
from kimi_support import SECTION_END as E  # noqa: E402
from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.kimik2_detector import KimiK2Detector  # noqa: E402

from sglang_toolparse import sglang_adapter as ad  # noqa: E402

BUILTIN = KimiK2Detector
NATIVE = ad.KimiK2NativeDetector
TOOLS = [Tool(type="function", function=Function(name=n, parameters={"type": "object", "properties": {}}))
         for n in ks.TOOLS]
_TOKENS = re.compile("(" + "|".join(re.escape(m) for m in ks.MARKERS) + ")")


def oneshot(cls, text, tools=TOOLS):
    r = cls().detect_and_parse(text, tools)
    return r.normal_text, [(c.name, c.parameters) for c in r.calls]


def stream(cls, chunks, tools=TOOLS):
    """Streams through a detector the way the serving layer does; returns
    (text, [(name, concatenated arguments)])."""
    d = cls()
    text, names, args = [], {}, {}

    def take(r):
        text.append(r.normal_text or "")
        for c in r.calls:
            if c.name:
                names[c.tool_index] = c.name
            if c.parameters:
                args[c.tool_index] = args.get(c.tool_index, "") + c.parameters

    for c in chunks:
        take(d.parse_streaming_increment(c, tools))
    if cls is NATIVE:
        take(d.finish(tools))
    idx = sorted(set(names) | set(args))
    return "".join(text), [(names.get(i), args.get(i, "")) for i in idx]


def special_aware(text, seed=0):
    """1-4 character chunks in which each special token arrives whole (a
    tokenizer-level stream)."""
    out = []
    for part in _TOKENS.split(text):
        if part:
            out += [part] if _TOKENS.fullmatch(part) else support.random_split(part, 1, 4, seed)
    return out


def both(reason):
    """Parametrizes over SGLang's detector (strict xfail) and ours."""
    return pytest.mark.parametrize("impl", [
        pytest.param(BUILTIN, id="sglang", marks=pytest.mark.xfail(strict=True, reason=reason)),
        pytest.param(NATIVE, id="native"),
    ])


# ---- markers and classes are SGLang's ----------------------------------------------

def test_markers_match_sglang():
    d = BUILTIN()
    assert (d.bot_token, d.eot_token, d.tool_call_start_token, d.tool_call_end_token,
            d.tool_call_argument_begin_token) == (B, E, CB, CE, A)
    assert d.bot_token in NATIVE._tp_markers and d.tool_call_start_token in NATIVE._tp_markers


def test_detector_class():
    n = NATIVE()
    assert isinstance(n, BUILTIN)
    assert n.parser_name == "kimi_k2_native"
    assert n.structure_info()("search") == BUILTIN().structure_info()("search")
    assert n.get_structural_tag_name() == "kimi"
    assert n.has_tool_call("x " + B) and n.has_tool_call("x " + CB)
    assert not n.has_tool_call("plain text <|")


# ---- parity on output as the template writes it ---------------------------------------

_plain = st.text(st.sampled_from("abcdefghij XYZ.,!?:;-'()<>/0123456789é中"), min_size=1, max_size=20).filter(
    lambda s: s.strip() == s)
_value = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(st.sampled_from('ab c"\\\n中🙂<|>'), max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text("xyz", min_size=1, max_size=3), c, max_size=3),
    max_leaves=6)


@st.composite
def template_calls(draw):
    """Calls as the template renders them: no whitespace between the parts,
    json.dumps' default layout."""
    return [(draw(st.sampled_from(ks.TOOLS)), draw(st.dictionaries(st.text("kqv", min_size=1, max_size=3), _value,
                                                                   max_size=3)),
             "plain", draw(st.sampled_from(["functions", "plain"])), "")
            for _ in range(draw(st.integers(1, 3)))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_oneshot_parity(data):
    items = [("block", data.draw(template_calls()))]
    if data.draw(st.booleans()):
        items.insert(0, ("text", data.draw(_plain)))
    response, text, calls = ks.render(items, data.draw(st.integers(0, 9)))
    expected = [(n, a) for n, a, _ in calls]
    sg, mine = oneshot(BUILTIN, response), oneshot(NATIVE, response)
    assert mine == (text, expected)
    # SGLang keeps the template's blank line before the section
    assert (sg[0].rstrip(), sg[1]) == mine


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_parity_tokens_whole(data):
    """Every special token whole in its chunk, the rest in 1-4 character
    pieces: the same calls and the same prose (SGLang passes the template's
    whitespace before the section through, we drop it)."""
    items = [("block", data.draw(template_calls()))]
    if data.draw(st.booleans()):
        items.insert(0, ("text", data.draw(_plain)))
    response, text, calls = ks.render(items)
    chunks = special_aware(response, data.draw(st.integers(0, 99)))
    sg, mine = stream(BUILTIN, chunks), stream(NATIVE, chunks)
    assert mine[1] == sg[1] == [(n, a) for n, a, _ in calls]
    assert mine[0] == text == sg[0].strip()


# ---- where SGLang is wrong -----------------------------------------------------------

RESPONSE = "Checking.\n\n" + B + CB + "functions.search:0" + A + '{"q": "hello world", "n": [1, 2]}' + CE + E
CALLS = [("search", '{"q": "hello world", "n": [1, 2]}')]


@both("SGLang streams a partial <|tool_call_end|> at the end of a chunk as argument text "
      "(a stream not cut at token boundaries, e.g. re-chunked by a proxy): the arguments are corrupted")
def test_partial_end_token_not_streamed_as_arguments(impl):
    cut = RESPONSE.index(CE) + 5
    assert stream(impl, [RESPONSE[:cut], RESPONSE[cut:]]) == ("Checking.", CALLS)


@both("SGLang does not hold back a special token split across chunks inside a call: "
      "the markup leaks into the arguments or the call is lost")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_special_tokens(impl, seed):
    _, calls = stream(impl, support.token_like(RESPONSE, seed))
    assert calls == CALLS


@both("SGLang keeps only the prose before the tool-call section (one-shot)")
def test_prose_after_section_kept(impl):
    assert oneshot(impl, RESPONSE + "\nDone.") == ("Checking.\nDone.", CALLS)


@both("SGLang drops prose the model writes inside the tool-call section, between calls; here it is "
      "text (docs/SEMANTICS.md, issue 18)")
def test_prose_between_calls_in_section_kept(impl):
    second = CB + "functions.get_weather:1" + A + "{}" + CE
    response = RESPONSE[:-len(E)] + "\nAlso a check.\n" + second + E
    want = ("Checking.Also a check.", CALLS + [("get_weather", "{}")])
    assert oneshot(impl, response) == want
    assert stream(impl, special_aware(response)) == want


@both("SGLang's one-shot parse ignores a call without the section token, which its streaming "
      "path accepts: the call's markup is returned as text")
def test_bare_call_one_shot(impl):
    response = "Checking.\n\n" + CB + "functions.search:0" + A + '{"q": 1}' + CE
    assert stream(impl, special_aware(response)) == ("Checking.", [("search", '{"q": 1}')])
    assert oneshot(impl, response) == ("Checking.", [("search", '{"q": 1}')])


@both("SGLang's kimi_k2 detector forwards calls to tools that are not in the request, "
      "ignoring SGLANG_FORWARD_UNKNOWN_TOOLS")
def test_undeclared_tool_dropped(impl, monkeypatch):
    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "0")
    response = B + CB + "functions.rm_rf:0" + A + '{"p": "/"}' + CE + CB + "functions.search:1" + A + "{}" + CE + E
    assert oneshot(impl, response) == ("", [("search", "{}")])


# ---- explained differences on malformed output ---------------------------------------

def test_malformed_arguments():
    """SGLang hands argument text that is not JSON to the client as the
    call's arguments; we stop the call at the json_syntax error: one-shot
    it is what streaming sent of it (the arguments up to the break, an
    incomplete call: finish_reason stays "stop"), never the broken text,
    and the others are kept (docs/PARSERS.md)."""
    response = B + CB + "functions.search:0" + A + '{"q": tru}' + CE + CB + "functions.search:1" + A + "{}" + CE + E
    assert oneshot(BUILTIN, response) == ("", [("search", '{"q": tru}'), ("search", "{}")])
    assert oneshot(NATIVE, response) == ("", [("search", '{"q": '), ("search", "{}")])


def test_undeclared_tool_forwarded_under_env(monkeypatch):
    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "1")
    response = B + CB + "functions.other:0" + A + '{"a": 1}' + CE + E
    assert oneshot(NATIVE, response) == oneshot(BUILTIN, response) == ("", [("other", '{"a": 1}')])
    assert stream(NATIVE, support.token_like(response, 2))[1] == [("other", '{"a": 1}')]


def test_bare_counter_inference_matches_sglang():
    tools = [Tool(type="function", function=Function(name="get_weather", parameters={
                 "type": "object", "properties": {"city": {"type": "string"}}})),
             Tool(type="function", function=Function(name="search", parameters={
                 "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}))]
    response = B + CB + "4" + A + '{"q": "x", "n": 1}' + CE + CB + " 5 " + A + '{"city": "Oslo"}' + CE + E
    expected = [("search", '{"q": "x", "n": 1}'), ("get_weather", '{"city": "Oslo"}')]
    assert oneshot(BUILTIN, response, tools)[1] == oneshot(NATIVE, response, tools)[1] == expected
    chunks = special_aware(response, 3)
    assert stream(BUILTIN, chunks, tools)[1] == stream(NATIVE, chunks, tools)[1] == expected


# ---- serving-layer state ---------------------------------------------------------------

def test_streaming_state_for_serving_layer():
    response = "Hi\n\n" + B + CB + "functions.search:3" + A + '{"q": "x"}' + CE + CB + "functions.get_weather:4" + A + "{}" + CE + E
    d = NATIVE()
    for c in support.token_like(response, 11):
        d.parse_streaming_increment(c, TOOLS)
    d.finish(TOOLS)
    # the streamed JSON text, as SGLang's newer detectors store it
    assert d.prev_tool_call_arr == [{"name": "search", "arguments": '{"q": "x"}'},
                                    {"name": "get_weather", "arguments": "{}"}]
    assert d.streamed_args_for_tool == ['{"q": "x"}', "{}"]
    assert d.current_tool_id == 2
    # tool_index is the per-response position (0, 1), not the model's :3 / :4
    # counter: the serving layer adds the history's call count to it
    items = NATIVE().detect_and_parse(response, TOOLS).calls
    assert [(c.tool_index, c.name) for c in items] == [(0, "search"), (1, "get_weather")]
    assert [(c.tool_index, c.name) for c in BUILTIN().detect_and_parse(response, TOOLS).calls] == \
        [(0, "search"), (1, "get_weather")]


def test_plugin_registers_names(fcp, monkeypatch):
    from sglang.srt.function_call import parser_names

    from sglang_toolparse import sglang_plugin

    enum = fcp.FunctionCallParser.ToolCallParserEnum
    assert issubclass(enum["kimi_k2_native"], NATIVE)
    assert enum["kimi_k2_native"]().parser_name == "kimi_k2_native"
    assert "kimi_k2_native" in parser_names.TOOL_CALL_PARSER_NAMES
    saved = dict(enum)
    try:
        monkeypatch.setenv("SGLANG_TOOLPARSE_REPLACE", "1")
        sglang_plugin._install_detectors(fcp)
        assert issubclass(enum["kimi_k2"], NATIVE)
        assert enum["kimi_k2"]().parser_name == "kimi_k2"
        assert "kimi_k2" in sglang_plugin.registered_names()
    finally:
        enum.clear()
        enum.update(saved)


def test_long_argument_streams(fcp):
    """A long argument streams in many pieces through either detector."""
    response = B + CB + "functions.search:0" + A + json.dumps({"q": "word " * 200}) + CE + E
    chunks = special_aware(response, 4)
    d = NATIVE()
    pieces = sum(1 for c in chunks for it in d.parse_streaming_increment(c, TOOLS).calls if it.parameters)
    assert pieces > 100


@both("SGLang's kimi_k2 detector drops, without a trace, calls whose id the model misspelled "
      "(functionsNAME5, functions.NAME5, callNNNNN; sglang#21377, #25362)")
def test_misspelled_ids_name_the_tool(impl):
    response = (B + CB + "functionssearch7" + A + '{"q": 1}' + CE + CB + "functions.search8" + A + '{"q": 2}' + CE
                + E + "Done.")
    calls = [("search", '{"q": 1}'), ("search", '{"q": 2}')]
    assert oneshot(impl, response) == ("Done.", calls)
    assert stream(impl, special_aware(response)) == ("Done.", calls)
