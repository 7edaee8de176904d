"""Parity of the DeepSeek native detectors with SGLang's own.

On well-formed output the one-shot results are the same (same calls, same
argument JSON, same prose before the first block). Streaming: where
SGLang's detector is right the results agree; where it is wrong, an
xfail(strict=True) test runs the correct expectation against SGLang's
detector (so it must keep failing there) and the same expectation against
ours (which must pass)."""
from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    import sglang.srt.function_call.deepseekv41_detector  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
        raise
    pytest.skip("SGLang not installed: %s" % e, allow_module_level=True)

import ds_support as ds  # noqa: E402
import support  # noqa: E402
from ds_support import CALL_BEGIN as CB  # noqa: E402
from ds_support import CALL_END as CE  # noqa: E402
from ds_support import CALLS_BEGIN as B  # noqa: E402
from ds_support import CALLS_END as E  # noqa: E402
from ds_support import SEP as S  # noqa: E402
from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.deepseekv3_detector import DeepSeekV3Detector  # noqa: E402
from sglang.srt.function_call.deepseekv4_detector import DeepSeekV4Detector  # noqa: E402
from sglang.srt.function_call.deepseekv31_detector import DeepSeekV31Detector  # noqa: E402
from sglang.srt.function_call.deepseekv32_detector import DeepSeekV32Detector  # noqa: E402
from sglang.srt.function_call.deepseekv41_detector import DeepSeekV41Detector  # noqa: E402

from sglang_toolparse import sglang_adapter as ad  # noqa: E402

BUILTIN = {
    "deepseekv3": DeepSeekV3Detector,
    "deepseekv31": DeepSeekV31Detector,
    "deepseekv32": DeepSeekV32Detector,
    "deepseekv4": DeepSeekV4Detector,
    "deepseekv41": DeepSeekV41Detector,
}
NATIVE = {
    "deepseekv3": ad.DeepSeekV3NativeDetector,
    "deepseekv31": ad.DeepSeekV31NativeDetector,
    "deepseekv32": ad.DeepSeekV32NativeDetector,
    "deepseekv4": ad.DeepSeekV4NativeDetector,
    "deepseekv41": ad.DeepSeekV41NativeDetector,
}
TOOLS = [Tool(type="function", function=Function(name=n, parameters={"type": "object", "properties": {}}))
         for n in ds.TOOLS]


def oneshot(cls, text):
    r = cls().detect_and_parse(text, TOOLS)
    return r.normal_text, [(c.name, c.parameters) for c in r.calls]


def stream(cls, chunks):
    """Streams through a detector the way the serving layer does; returns
    (text, [(name, concatenated arguments)], pieces per call)."""
    d = cls()
    text, names, args, pieces = [], {}, {}, {}

    def take(r):
        text.append(r.normal_text or "")
        for c in r.calls:
            if c.name:
                names[c.tool_index] = c.name
            if c.parameters:
                args[c.tool_index] = args.get(c.tool_index, "") + c.parameters
                pieces[c.tool_index] = pieces.get(c.tool_index, 0) + 1

    for c in chunks:
        take(d.parse_streaming_increment(c, TOOLS))
    take(d.finish(TOOLS))
    idx = sorted(set(names) | set(args))
    return "".join(text), [(names.get(i), args.get(i, "")) for i in idx], [pieces.get(i, 0) for i in idx]


def special_aware(fmt, text, seed=0):
    """Token-like chunks in which each special token arrives whole (what a
    tokenizer-level stream looks like)."""
    ms = sorted(set(ds.markers(fmt)), key=len, reverse=True)
    pat = re.compile("(" + "|".join(re.escape(m) for m in ms) + ")")
    out = []
    for part in pat.split(text):
        if part:
            out += [part] if pat.fullmatch(part) else support.token_like(part, seed)
    return out


# ---- markers are SGLang's, byte for byte ----------------------------------------

@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_markers_match_sglang(fmt):
    d = BUILTIN[fmt]()
    # has_tool_call's quick check finds SGLang's start token (DSML: the tag prefix
    # shared by every spelling, which every DSML parser reads)
    assert any(m in d.bot_token for m in NATIVE[fmt]._tp_markers)
    assert d.eot_token in ds.markers(fmt)
    if fmt in ds.DSML_FORMATS:
        t = ds.Tags(fmt)
        assert (d.invoke_start_token, d.invoke_end_token) == (t.invoke, t.invoke_end)
        assert d.parameter_regex.startswith(t.param) and t.param_end in d.parameter_regex
    else:
        assert CB in d.func_call_regex and CE in d.func_call_regex and S in d.func_detail_regex


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_detector_classes(fmt):
    n = NATIVE[fmt]()
    assert isinstance(n, BUILTIN[fmt])
    assert n.parser_name == fmt + "_native"
    assert n.structure_info()("search") == BUILTIN[fmt]().structure_info()("search")
    assert n.has_tool_call("x " + ds.markers(fmt)[0] if fmt in ds.DSML_FORMATS else "x " + B)
    assert not n.has_tool_call("plain text")


# ---- one-shot parity on generated well-formed output ----------------------------

_plain = st.text(st.sampled_from("abcdefghij XYZ.,!?:;-'()<>/0123456789é中"), min_size=1, max_size=20).filter(
    lambda s: s.strip() == s)


def stripped(fmt, items):
    """items with DSML string parameter values stripped: SGLang strips them
    (here they are the raw text, test_dsml_string_values_are_the_raw_text),
    so the parity tests compare values where the two agree."""
    if fmt not in ds.DSML_FORMATS:
        return items
    return [(kind, val if kind == "text" else [
        (n, {k: v.strip() if isinstance(v, str) and style == "xml" else v for k, v in a.items()}, style)
        for n, a, style in val]) for kind, val in items]


@st.composite
def plain_responses(draw, fmt):
    items = []
    if draw(st.booleans()):
        items.append(("text", draw(_plain)))
    for _ in range(draw(st.integers(1, 2))):
        items.append(("block", draw(ds.calls(fmt))))
        if draw(st.booleans()):
            items.append(("text", draw(_plain)))
    return items


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_oneshot_parity(fmt, data):
    items = stripped(fmt, data.draw(plain_responses(fmt)))
    response, text, calls = ds.render(fmt, items)
    sg_text, sg_calls = oneshot(BUILTIN[fmt], response)
    my_text, my_calls = oneshot(NATIVE[fmt], response)
    assert my_calls == sg_calls == calls
    assert my_text == text
    # SGLang keeps only the prose before the first block (see
    # test_prose_after_block_kept); up to there the two agree
    before = items[0][1] if items[0][0] == "text" else ""
    assert sg_text == before
    assert my_text.startswith(sg_text)


# ---- streaming parity where SGLang is right --------------------------------------

@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_parity(fmt, data):
    """Special tokens whole in their chunk (the case SGLang's V3/V3.1
    streaming handles), only prose before the first block (SGLang drops
    later prose): the same calls, and the same prose up to template
    whitespace (SGLang's V3/V3.1 streaming passes the blank line before the
    block through). SGLang's V3/V3.1 streaming passes the JSON through as
    written, ours normalizes it as its one-shot path does, so arguments are
    generated in json.dumps' default layout here."""
    items = [it for it in stripped(fmt, data.draw(plain_responses(fmt))) if it[0] == "block"][:1]
    if fmt in ds.V3_FORMATS:
        # SGLang streams the model's JSON text as written, we stream it
        # normalized (what its one-shot path returns): compare the layout
        # the models write, json.dumps' default
        items = [("block", [(n, a, "plain") for n, a, _ in items[0][1]])]
    if data.draw(st.booleans()):
        items.insert(0, ("text", data.draw(_plain)))
    response, text, calls = ds.render(fmt, items)
    chunks = special_aware(fmt, response, data.draw(st.integers(0, 99)))
    sg = stream(BUILTIN[fmt], chunks)
    mine = stream(NATIVE[fmt], chunks)
    assert mine[1] == sg[1] == calls
    assert mine[0] == text
    assert sg[0].strip() == text


# ---- where SGLang is wrong -------------------------------------------------------

def both(reason):
    """Parametrizes over SGLang's detector (strict xfail) and ours."""
    return pytest.mark.parametrize("impl", [
        pytest.param(BUILTIN, id="sglang", marks=pytest.mark.xfail(strict=True, reason=reason)),
        pytest.param(NATIVE, id="native"),
    ])


def v3_response(fmt):
    args = {"location": "Tokyo", "days": [1, 2]}
    if fmt == "deepseekv3":
        call = ds.render_v3_call("get_weather", args)
    else:
        call = ds.render_v31_call("get_weather", args)
    return "Checking.\n\n" + B + call + E, [("get_weather", json.dumps(args))]


@both("SGLang's V3/V3.1 detectors do not hold back a special token split across chunks: "
      "the markup leaks as text and the call is lost")
@pytest.mark.parametrize("fmt", ds.V3_FORMATS)
def test_v3_split_special_tokens(impl, fmt):
    response, calls = v3_response(fmt)
    text, got, _ = stream(impl[fmt], support.token_like(response, 3))
    assert (text, got) == ("Checking.", calls)


@both("SGLang's V3/V3.1 detectors emit only the name when one chunk carries a whole call: "
      "the arguments are lost")
@pytest.mark.parametrize("fmt", ds.V3_FORMATS)
def test_v3_whole_call_in_one_chunk(impl, fmt):
    response, calls = v3_response(fmt)
    _, got, _ = stream(impl[fmt], ["Checking.\n\n", response[len("Checking.\n\n"):]])
    assert got == calls


@both("SGLang's V3/V3.1 one-shot parse drops every call when one of them is malformed")
@pytest.mark.parametrize("fmt", ds.V3_FORMATS)
def test_v3_malformed_call_does_not_drop_others(impl, fmt):
    render = ds.render_v3_call if fmt == "deepseekv3" else ds.render_v31_call
    bad = render("search", {"q": 1}).replace('{"q": 1}', '{"q": }')
    response = "Hi\n\n" + B + bad + render("noop", {}) + E
    # the malformed call as far as it was streamed (an incomplete call,
    # docs/SEMANTICS.md "Cut-off and broken calls"), and the good one
    assert oneshot(impl[fmt], response) == ("Hi", [("search", '{"q": '), ("noop", "{}")])


@both("SGLang keeps only the prose before the first tool-call block")
@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_prose_after_block_kept(impl, fmt):
    response, text, calls = ds.render(fmt, [("text", "Before"), ("block", [("noop", {}, "xml")]),
                                            ("text", "After")])
    assert oneshot(impl[fmt], response) == ("Before\nAfter", calls)


@both("SGLang's DSML detectors stream nothing until an invoke closes: a long argument "
      "arrives as one late blob")
@pytest.mark.parametrize("fmt", ds.DSML_FORMATS)
def test_dsml_arguments_stream(impl, fmt):
    response, text, calls = ds.render(fmt, [("block", [("search", {"q": "word " * 40}, "xml")])])
    chunks = special_aware(fmt, response, 5)
    _, got, pieces = stream(impl[fmt], chunks)
    assert got == calls
    assert pieces[0] > 10


@both("SGLang's DSML detectors strip string parameter values; DeepSeek's encoder writes them raw and "
      "its decoders (encoding_dsv32.parse_tool_calls, deepseek-recipe) keep them byte for byte")
@pytest.mark.parametrize("fmt", ds.DSML_FORMATS)
@pytest.mark.parametrize("value", ["    assert x == 7\n", "\n\tx", " "])
def test_dsml_string_values_are_the_raw_text(impl, fmt, value):
    response, text, calls = ds.render(fmt, [("text", "Edit."), ("block", [("search", {"q": value}, "xml")])])
    assert calls == [("search", json.dumps({"q": value}))]
    assert oneshot(impl[fmt], response) == ("Edit.", calls)
    assert stream(impl[fmt], special_aware(fmt, response))[1] == calls


@both("SGLang's DSML streaming withholds prose that follows a block")
@pytest.mark.parametrize("fmt", ds.DSML_FORMATS)
def test_dsml_streamed_prose_after_block(impl, fmt):
    response, text, calls = ds.render(fmt, [("text", "Before"), ("block", [("noop", {}, "self")]),
                                            ("text", "After")])
    assert stream(impl[fmt], special_aware(fmt, response))[:2] == ("Before\nAfter", calls)


@both("SGLang's detectors drop prose the model writes inside a tool-call section, between calls "
      "(DeepSeek's reference decoder, encoding_dsv32.parse_tool_calls, refuses such output as malformed and "
      "decides nothing); here it is text, as every engine keeps it (docs/SEMANTICS.md, issue 18)")
@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_prose_between_calls_in_section_kept(impl, fmt):
    style = "xml" if fmt in ds.DSML_FORMATS else "plain"
    response, _, calls = ds.render(fmt, [("text", "Checking."),
                                         ("block", [("noop", {}, style), ("search", {"q": 1}, style)])])
    end = ds.Tags(fmt).invoke_end if fmt in ds.DSML_FORMATS else ds.CALL_END
    k = response.index(end) + len(end)
    response = response[:k] + "\nAlso a search.\n" + response[k:]
    assert oneshot(impl[fmt], response) == ("Checking.Also a search.", calls)


# ---- explained differences on malformed output -----------------------------------

@pytest.mark.parametrize("fmt", ds.DSML_FORMATS)
def test_dsml_trailing_content_after_json_body(fmt):
    """SGLang drops an invoke whose JSON body is followed by other text; we
    keep the complete call and report trailing_content (docs/SEMANTICS.md),
    since its arguments may already have streamed."""
    t = ds.Tags(fmt)
    response = t.bot + t.invoke + ' name="search">{"q": 1} extra' + t.invoke_end + t.eot
    assert oneshot(BUILTIN[fmt], response) == ("", [])
    assert oneshot(NATIVE[fmt], response) == ("", [("search", '{"q": 1}')])


@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_unknown_tools_follow_sglang_env(fmt, monkeypatch):
    """Undeclared tools are dropped as SGLang drops them, and kept under
    SGLANG_FORWARD_UNKNOWN_TOOLS=1, in both detectors."""
    response, _, calls = ds.render(fmt, [("block", [("mystery", {"a": 1}, "xml"), ("noop", {}, "xml")])])
    for flag, expected in (("0", calls[1:]), ("1", calls)):
        monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", flag)
        assert oneshot(BUILTIN[fmt], response)[1] == expected
        assert oneshot(NATIVE[fmt], response)[1] == expected
        assert stream(NATIVE[fmt], support.token_like(response, 2))[1] == expected


# ---- serving-layer state -----------------------------------------------------------

@pytest.mark.parametrize("fmt", ds.ALL_FORMATS)
def test_streaming_state_for_serving_layer(fmt):
    response, text, calls = ds.render(fmt, [("text", "Hi"), ("block", [("search", {"q": "x"}, "xml"),
                                                                       ("noop", {}, "xml")])])
    d = NATIVE[fmt]()
    for c in support.token_like(response, 11):
        d.parse_streaming_increment(c, TOOLS)
    d.finish(TOOLS)
    # arguments as streamed (JSON text), as SGLang's DSML detectors store them
    assert d.prev_tool_call_arr == [{"name": n, "arguments": a} for n, a in calls]
    assert [json.loads(c["arguments"]) for c in d.prev_tool_call_arr] == [{"q": "x"}, {}]
    assert d.streamed_args_for_tool == [a for _, a in calls]
    assert d.current_tool_id == 2


def test_plugin_registers_names(fcp, monkeypatch):
    """The native names are registered by the plugin (conftest's fcp loads
    it as the server does); SGLANG_TOOLPARSE_REPLACE=1 maps the builtin
    names to the native detectors too."""
    from sglang.srt.function_call import parser_names

    from sglang_toolparse import sglang_plugin

    enum = fcp.FunctionCallParser.ToolCallParserEnum
    for fmt in ds.ALL_FORMATS:
        assert issubclass(enum[fmt + "_native"], NATIVE[fmt])
        assert enum[fmt + "_native"]().parser_name == fmt + "_native"
        assert fmt + "_native" in parser_names.TOOL_CALL_PARSER_NAMES
    saved = dict(enum)
    try:
        monkeypatch.setenv("SGLANG_TOOLPARSE_REPLACE", "1")
        sglang_plugin._install_detectors(fcp)
        for fmt in ds.ALL_FORMATS:
            assert issubclass(enum[fmt], NATIVE[fmt])
            assert enum[fmt]().parser_name == fmt
            assert fmt in sglang_plugin.registered_names()
    finally:
        enum.clear()
        enum.update(saved)
