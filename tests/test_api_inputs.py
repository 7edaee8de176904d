"""Inputs checked at the API: `tools`, limits, feed() arguments, and
CallAssembler's reading of numbers and of tools=None."""
from __future__ import annotations

import json
import math
import sys

import pytest

from sglang_toolparse import ParseError, StreamParser, parse
from sglang_toolparse import _core
from sglang_toolparse.api import collect, tool_names
from sglang_toolparse.assembler import CallAssembler

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}},
    },
}
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"celsius": 21.5}}\n</tool_call>'


class Fn:
    def __init__(self, name, parameters=None):
        self.name = name
        self.parameters = parameters


class ToolModel:  # the shape of SGLang's / OpenAI's pydantic Tool
    def __init__(self, name, parameters=None):
        self.type = "function"
        self.function = Fn(name, parameters)


# ---- tools -----------------------------------------------------------------------

GOOD_TOOLS = [
    [WEATHER],
    (WEATHER,),
    ["get_weather"],
    [{"name": "get_weather", "parameters": {"type": "object"}}],  # bare function dict
    [{"function": {"name": "get_weather"}}],
    [ToolModel("get_weather", {"type": "object"})],
    [WEATHER, "search", ToolModel("noop")],
]


@pytest.mark.parametrize("tools", GOOD_TOOLS)
def test_accepted_tool_shapes(tools):
    res = parse("qwen25", CALL, tools)
    assert [c.name for c in res.calls] == ["get_weather"] and not res.errors


def test_sglang_tool_model_is_accepted():
    protocol = pytest.importorskip("sglang.srt.entrypoints.openai.protocol")
    tool = protocol.Tool(type="function", function=protocol.Function(name="get_weather", parameters={"type": "object"}))
    assert tool_names([tool]) == ["get_weather"]
    assert parse("glm45", "<tool_call>get_weather\n</tool_call>", [tool]).calls[0].name == "get_weather"


BAD_TOOLS_TYPE = [
    WEATHER,  # one tool dict instead of a list of them (its keys were taken as names)
    "search",  # a string (was six one-letter tools)
    {"book": {"type": "object"}},  # name -> schema mapping
    iter([WEATHER]),
    {"get_weather"},
    [{"book": {"type": "object"}}],
    [{"type": "function", "function": "get_weather"}],
    [{"type": "function", "function": {"parameters": {}}}],
    [{"type": "function", "function": {"name": 3}}],
    [{"type": "custom", "custom": {"name": "x"}}],
    [3],
    [None],
    [b"get_weather"],
    [{"name": "f", "parameters": "not a schema"}],
    [object()],
]


@pytest.mark.parametrize("tools", BAD_TOOLS_TYPE, ids=range(len(BAD_TOOLS_TYPE)))
@pytest.mark.parametrize("api", ["StreamParser", "parse", "CallAssembler"])
def test_bad_tools_are_a_type_error_naming_tools(api, tools):
    with pytest.raises(TypeError, match="tools"):
        if api == "StreamParser":
            StreamParser("qwen25", tools)
        elif api == "parse":
            parse("qwen25", CALL, tools)
        else:
            CallAssembler(tools)


@pytest.mark.parametrize("tools", [
    [WEATHER, WEATHER],
    ["a", "b", "a"],
    [WEATHER, "get_weather"],
    [ToolModel("x"), {"name": "x"}],
], ids=range(4))
@pytest.mark.parametrize("api", ["StreamParser", "CallAssembler"])
def test_duplicate_tool_names_are_a_value_error(api, tools):
    with pytest.raises(ValueError, match="duplicate tool name"):
        if api == "StreamParser":
            StreamParser("qwen25", tools)
        else:
            CallAssembler(tools)


@pytest.mark.parametrize("api", ["StreamParser", "CallAssembler"])
def test_empty_tool_name_is_a_value_error(api):
    with pytest.raises(ValueError, match="empty"):
        StreamParser("qwen25", [""]) if api == "StreamParser" else CallAssembler([""])


def test_core_tool_names_checked_too():
    with pytest.raises(TypeError, match="tool_names"):
        _core.StreamParser("qwen25", "search")
    with pytest.raises(TypeError, match="tool_names"):
        _core.StreamParser("qwen25", ["a", 1])
    with pytest.raises(ValueError, match="duplicate"):
        _core.StreamParser("qwen25", ["a", "a"])
    # any iterable of str works at the core level
    p = _core.StreamParser("qwen25", (n for n in ["get_weather"]))
    assert collect(p.feed(CALL) + p.finish()).calls[0].name == "get_weather"


@pytest.mark.parametrize("fmt", ["qwen25", "glm45", "glm47", "deepseekv4"])
def test_adapter_takes_any_tools_sglang_takes(fmt):
    """SGLang's Function model accepts any JSON value as `parameters` and
    any string as a name: the adapter never raises on a request's tools
    (empty names are left out, unusable schemas ignored)."""
    pytest.importorskip("sglang")
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    from sglang_toolparse import sglang_adapter as ad

    cls = {"qwen25": ad.Qwen25NativeDetector, "glm45": ad.Glm45NativeDetector,
           "glm47": ad.Glm47NativeDetector, "deepseekv4": ad.DeepSeekV4NativeDetector}[fmt]
    tools = [Tool(type="function", function=Function(name="", parameters=[1, 2])),
             Tool(type="function", function=Function(name="get_weather", parameters="not a schema")),
             Tool(type="function", function=Function(name="get_weather", parameters={"type": "object"})),
             Tool(type="function", function=Function(name="x", parameters=7))]
    text = {
        "qwen25": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "P"}}\n</tool_call>',
        "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>P</arg_value>\n</tool_call>",
        "glm47": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>P</arg_value></tool_call>",
        "deepseekv4": '<\uff5cDSML\uff5ctool_calls>\n<\uff5cDSML\uff5cinvoke name="get_weather">\n'
                      '<\uff5cDSML\uff5cparameter name="city" string="true">P</\uff5cDSML\uff5cparameter>\n'
                      '</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5ctool_calls>',
    }[fmt]
    r = cls().detect_and_parse(text, tools)
    assert [(c.name, json.loads(c.parameters)) for c in r.calls] == [("get_weather", {"city": "P"})]
    d = cls()
    got = []
    for ch in text:
        got += d.parse_streaming_increment(ch, tools).calls
    assert [c.name for c in got if c.name] == ["get_weather"]


def test_adapter_keeps_the_first_of_a_repeated_tool():
    """SGLang's serving layer accepts a request that declares a tool twice;
    the adapter must too (first declaration wins)."""
    pytest.importorskip("sglang")
    from sglang_toolparse.sglang_adapter import Qwen25NativeDetector

    r = Qwen25NativeDetector().detect_and_parse(CALL, [WEATHER, WEATHER])
    assert [c.name for c in r.calls] == ["get_weather"]


# ---- limits ----------------------------------------------------------------------

LIMITS = ["max_buffer", "max_depth", "max_calls", "max_name"]


@pytest.mark.parametrize("option", LIMITS)
@pytest.mark.parametrize("value", [True, False, 1.9, 100.0, "100", b"1", [1], 0, -1, 2 ** 64, 2 ** 200],
                         ids=lambda v: repr(v)[:12])
def test_bad_limits_name_the_option(option, value):
    with pytest.raises((TypeError, ValueError), match=option):
        StreamParser("qwen25", None, **{option: value})


@pytest.mark.parametrize("option", LIMITS)
def test_largest_allowed_limit_is_accepted(option):
    top = _core.MAX_LIMITS[option]
    p = StreamParser("qwen25", ["get_weather"], **{option: top})
    assert collect(p.feed(CALL) + p.finish()).calls
    with pytest.raises(ValueError, match=option):
        StreamParser("qwen25", None, **{option: top + 1})


def test_int_subclass_limit_is_accepted():
    class MyInt(int):
        pass

    res = parse("qwen25", CALL, ["get_weather"], max_calls=MyInt(1))
    assert len(res.calls) == 1


def test_format_must_be_a_str():
    with pytest.raises(TypeError, match="format"):
        StreamParser(None)
    with pytest.raises(TypeError):
        _core.StreamParser(None)


# ---- feed ------------------------------------------------------------------------

class MyStr(str):
    def __str__(self):  # must not be used to read the value
        return "something else"


@pytest.mark.parametrize("fmt", ["qwen25", "glm45"])
def test_feed_accepts_str_subclasses(fmt):
    text = CALL if fmt == "qwen25" else "<tool_call>get_weather\n<arg_key>celsius</arg_key>\n<arg_value>21.5</arg_value>\n</tool_call>"
    text = "Hi é " + text
    want = parse(fmt, text, [WEATHER])
    p = StreamParser(fmt, [WEATHER])
    evs = []
    for i in range(0, len(text), 5):
        evs += p.feed(MyStr(text[i:i + 5]))
    assert collect(evs + p.finish()) == want
    assert want.calls[0].arguments == '{"celsius": 21.5}'


@pytest.mark.parametrize("bad", [None, b"x", 3, ["x"]])
def test_feed_rejects_non_str(bad):
    p = StreamParser("qwen25")
    with pytest.raises(TypeError, match="str"):
        p.feed(bad)
    assert collect(p.feed("ok") + p.finish()).text == "ok"  # still usable


# ---- CallAssembler ---------------------------------------------------------------

@pytest.mark.parametrize("args", [
    '{"celsius": Infinity}', '{"celsius": -Infinity}', '{"celsius": NaN}', '{"x": [1, {"y": NaN}]}',
])
def test_assembler_rejects_non_finite_numbers(args):
    asm = CallAssembler([WEATHER])
    asm.add_delta(0, "call_1", "get_weather", args)
    [call] = asm.close()
    assert not call.ok
    assert [e.kind for e in call.errors] == ["invalid_json"]


@pytest.mark.parametrize("args", ['{"celsius": 1e999}', '{"celsius": -1e400}'])
def test_assembler_accepts_numbers_past_a_double(args):
    """valid JSON (RFC 8259 sets no range), as the parsers write it: the
    value keeps its digits (strict_json.BigNumber)"""
    asm = CallAssembler([WEATHER])
    asm.add_delta(0, "call_1", "get_weather", args)
    [call] = asm.close()
    assert call.ok and call.value["celsius"].text == json.loads(args, parse_float=str)["celsius"]


def test_assembler_accepts_finite_numbers():
    asm = CallAssembler([WEATHER])
    asm.add_delta(0, None, "get_weather", '{"celsius": 1e308, "n": %d}' % (10 ** 40))
    [call] = asm.close()
    assert call.ok and math.isfinite(call.value["celsius"])


def test_parser_never_passes_non_finite_numbers():
    """NaN/Infinity are not JSON: the parser reports the call (json_syntax)
    and never streams them; the assembler sees a call the parser abandoned."""
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"celsius": Infinity}}\n</tool_call>'
    p = StreamParser("qwen25", [WEATHER])
    events = p.feed(text) + p.finish()
    assert [e.code for e in events if isinstance(e, ParseError)] == ["json_syntax"]
    asm = CallAssembler([WEATHER])
    assert "Infinity" not in "".join(getattr(e, "delta", "") for e in events)
    [call] = asm.feed(events)
    assert not call.ok and [e.kind for e in call.errors] == ["parse_error"]


def test_assembler_tools_none_accepts_every_name_like_stream_parser():
    text = '<tool_call>\n{"name": "anything", "arguments": {"a": 1}}\n</tool_call>'
    p = StreamParser("qwen25", None)
    asm = CallAssembler(None)
    done = asm.feed(p.feed(text) + p.finish())
    assert [(c.name, c.ok, c.value) for c in done] == [("anything", True, {"a": 1})]
    assert CallAssembler().schemas is None  # the default is None too
    # still checks JSON
    asm = CallAssembler(None)
    asm.add_delta(0, None, "x", "{broken")
    assert [e.kind for e in asm.close()[0].errors] == ["invalid_json"]


def test_assembler_empty_tools_rejects_every_name():
    asm = CallAssembler([])
    asm.add_delta(0, None, "x", "{}")
    assert [e.kind for e in asm.close()[0].errors] == ["unknown_tool"]


# ---- any Python value: a defined outcome ------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(
        ["type", "function", "name", "parameters", "x"]), kids, max_size=4),
    max_leaves=10)
_anything = _json | st.binary(max_size=4) | st.sets(st.integers(), max_size=3) | st.just(object())


@settings(max_examples=150, deadline=None)
@given(tools=_anything | st.lists(_anything, max_size=4) | st.tuples(_anything, _anything),
       limit=st.sampled_from([None, "max_buffer", "max_depth", "max_calls", "max_name"]),
       value=_anything | st.integers(min_value=-2, max_value=2 ** 70))
def test_any_arguments_give_a_parser_or_a_clear_error(tools, limit, value):
    """Whatever a caller passes, StreamParser/CallAssembler either work or
    raise TypeError/ValueError naming what is wrong; never anything else."""
    opts = {} if limit is None else {limit: value}
    try:
        p = StreamParser("glm45", tools, **opts)
    except (TypeError, ValueError) as e:
        assert "tools" in str(e) or (limit is not None and limit in str(e)) or "tool name" in str(e), e
    else:
        res = collect(p.feed("x <tool_call>a\n<arg_key>k</arg_key>\n<arg_value>1</arg_value>\n</tool_call>")
                      + p.finish())
        assert isinstance(res.text, str)
    try:
        asm = CallAssembler(tools)
    except (TypeError, ValueError) as e:
        assert "tools" in str(e) or "tool name" in str(e), e
    else:
        asm.add_delta(0, None, "a", '{"k": 1}')
        assert len(asm.close()) == 1
