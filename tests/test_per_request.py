"""What one request costs the adapter (issue 24.1), checked by counting, not
timing: a native detector compiles nothing per request and has the
builtin's state; has_tool_call, asked twice as serving_chat asks, looks at
the text once and parse_non_stream parses it once; the shortcuts give what
a full parse gives."""
from __future__ import annotations

import os
import re

import pytest

try:
    from sglang_toolparse import sglang_adapter as ad
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
        raise
    pytest.skip("SGLang not installed: %s" % e, allow_module_level=True)

from format_table import markers, seed_responses

from sglang_toolparse import _core, per_request
from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, ParseError, Text
from sglang_toolparse.sglang_plugin import NATIVE_NAMES, _native_class

CLASSES = sorted({row[0] for row in NATIVE_NAMES.values()})
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "q": {"type": "string"}, "n": {"type": "integer"}}}}}
    for n in ("get_weather", "search", "lookup")]


def _cls(name: str) -> type:
    return getattr(ad, name)


def _reference(cls: type):
    """A detector whose builtin state comes from the builtin's own __init__."""
    ref = cls.__new__(cls)
    super(ad.NativeDetectorMixin, ref).__init__()
    return ref


def _fcp():
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    from sglang_toolparse import sglang_plugin

    sglang_plugin._install_detectors(__import__(sglang_plugin.FCP_MODULE, fromlist=["x"]))
    return FunctionCallParser, [Tool(**t) for t in TOOLS]


@pytest.mark.parametrize("name", CLASSES)
def test_builtin_state_from_the_prototype(name):
    cls = _cls(name)
    ref = _reference(cls)
    a, b = cls(), cls()
    assert per_request.prototype(cls, ad.NativeDetectorMixin) is not None  # today's builtins share
    for attr, value in vars(ref).items():
        got = getattr(a, attr)
        if attr == "streamed_args_for_tool":
            assert isinstance(got, ad.StreamedArgs) and got == value
            continue
        fresh = attr in getattr(cls, "_tp_builtin_factories", {})  # a helper object made new per detector
        assert type(got) is type(value) and (vars(got) == vars(value) if fresh else got == value), attr
        if type(value) in (list, dict, set) or fresh:  # containers and helpers are the detector's own
            assert got is not getattr(b, attr), attr
    assert isinstance(a.incomplete_tool_call_indices, set)
    assert a.incomplete_tool_call_indices is not b.incomplete_tool_call_indices
    with pytest.raises(AttributeError):
        a.no_such_attribute  # noqa: B018
    assert not hasattr(a, "__no_such_dunder__")


@pytest.mark.parametrize("name", CLASSES)
def test_nothing_compiled_per_request(name, monkeypatch):
    FCP, tools = _fcp()
    parser_name = next(n for n, row in NATIVE_NAMES.items() if row[0] == name)
    texts = ["plain prose"] + seed_responses(_cls(name)._tp_format)[:3]
    for text in texts:  # once per process: the prototype, compiled tools, modules imported when first needed
        FCP(tools, parser_name).parse_non_stream(text)
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *a, **k: compiled.append(a) or real(*a, **k))
    for text in texts:
        FCP(tools, parser_name).parse_non_stream(text)
    assert compiled == []


def test_unshareable_state_runs_the_builtin_init():
    """A builtin whose __init__ keeps an object that cannot be shared (a
    future SGLang's) gets its own __init__ run for every detector."""
    from sglang.srt.function_call.qwen25_detector import Qwen25Detector

    class Odd(Qwen25Detector):
        def __init__(self):
            super().__init__()
            self.thing = object()  # neither immutable nor an empty container

    cls = type("OddNative", (ad.NativeDetectorMixin, Odd), {"_tp_format": "qwen25", "_tp_markers": ("<tool_call>",)})
    a, b = cls(), cls()
    assert per_request.prototype(cls, ad.NativeDetectorMixin) is None
    assert "thing" in vars(a) and a.thing is not b.thing
    assert isinstance(a.streamed_args_for_tool, ad.StreamedArgs)
    assert a.has_tool_call('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')


class _Counting(_core.StreamParser):
    passes = 0

    def parse_all(self, text):
        type(self).passes += 1
        return super().parse_all(text)


def _counting_plain(fmt, text):
    _Counting.passes += 1
    return _core.parse_plain(fmt, text)


def _oneshot_texts(fmt):
    ms = markers(fmt)
    out = list(seed_responses(fmt))
    out += ["plain prose, nothing else", "a < b and c > d", "Use " + ms[0] + " like this."]
    out += ["x " + m + " y" for m in ms]
    return out


@pytest.mark.parametrize("name", CLASSES)
def test_one_pass_through_sglang(name, monkeypatch):
    """serving_chat asks has_tool_call, then parse_non_stream (which asks
    again): the text is parsed once. Formats that type values by the
    tools' schemas: has_tool_call looks at the text up to the first call
    (starts_call) and parse_non_stream parses it (folded in C, parsed again
    by events only when the fold does not take it), or not at all when
    that look found only text. The others: has_tool_call parses it (every name
    accepted) and parse_non_stream takes that parse, parsing again only
    when the tools would change it (a call to an undeclared tool, or a
    call that failed, whose name the events do not give)."""
    FCP, tools = _fcp()
    parser_name = next(n for n, row in NATIVE_NAMES.items() if row[0] == name)
    cls = _cls(name)
    fmt = cls._tp_format
    looks = []
    monkeypatch.setattr(ad, "starts_call", lambda *a: looks.append(a) or _core.starts_call(*a))
    monkeypatch.setattr(ad, "_CoreParser", _Counting)
    monkeypatch.setattr(ad, "parse_plain", _counting_plain)
    declined = []

    def counting_typed(*a):
        _Counting.passes += 1
        got = _core.parse_typed(*a)
        declined.append(got is None)
        return got

    monkeypatch.setattr(ad, "parse_typed", counting_typed)
    declared = {t["function"]["name"] for t in TOOLS}
    reused = 0
    for text in _oneshot_texts(fmt):
        looks.clear()
        declined.clear()
        _Counting.passes = 0
        p = FCP(tools, parser_name)
        has = p.has_tool_call(text)
        normal, calls = p.parse_non_stream(text)
        if getattr(cls, "_tp_hands_over", None) and cls._tp_hands_over(text):
            assert _Counting.passes == 0 and not looks, text  # SGLang's own detector parses it
            continue
        if not has:
            assert (normal, calls) == (text, [])
        if cls._tp_token_lead not in text and not any(m in text for m in cls._tp_markers):
            # nothing the core reads (no token, no marker): not parsed at all
            assert _Counting.passes == 0 and not has and not looks
            continue
        token = cls._tp_schema_token
        if not cls._tp_untyped and not (token and token not in text):
            # one parse with the tools, folded in C (parse_typed); a reply the
            # fold does not take (an error, a value the host types) is then
            # parsed by events
            assert len(looks) <= 1, text
            assert _Counting.passes == 1 + sum(declined) if has else _Counting.passes <= 1, text
            assert len(declined) <= 1, text
            continue
        assert not looks
        full = _core.StreamParser(fmt, None).parse_all(text)
        clean = all(type(ev) in (Text, _core.Reasoning, _core.Markup) or (type(ev) is CallEnd and ev.name in declared
                                          and (ev.id is None or ":" in ev.id)) for ev in full)
        if any(m in text for m in cls._tp_markers):
            # (a schema-typed format's reply that reads no schema, K2 Horizon's
            # JSON dialect: parsed again with the tools as its others are)
            assert _Counting.passes == (1 if clean or not has else 2 if cls._tp_untyped else 2 + sum(declined)), text
            assert len(declined) <= 1, text
            reused += clean and has
        else:  # a stray end token is an error now (issue 18): the request's tools parse it again
            assert _Counting.passes <= (1 if clean else 2), text
    if cls._tp_untyped:
        assert reused >= 3  # the well-formed seed replies took has_tool_call's parse
    elif cls._tp_schema_token:
        assert reused >= 1  # a reply without the token took has_tool_call's parse


def _calls_as_sglang(events):
    """The calls detect_and_parse gives for a full parse's events: complete
    ones, and a cut-off or broken one (CallStart, its ArgsDelta pieces, then
    its error) with its arguments closed where that makes them JSON."""
    calls, started = [], {}
    for ev in events:
        if type(ev) is CallEnd:
            calls.append((ev.name, ev.arguments))
        elif type(ev) is CallStart:
            started[ev.index] = (ev.name, [])
        elif type(ev) is ArgsDelta:
            started[ev.index][1].append(ev.delta)
        elif type(ev) is ParseError and ev.index in started:
            name, pieces = started.pop(ev.index)
            args = "".join(pieces)
            calls.append((name, args + ad.closing_suffix(args)))
    return calls


@pytest.mark.parametrize("name", CLASSES)
def test_shortcuts_give_what_a_full_parse_gives(name):
    """detect_and_parse, with or without has_tool_call before it, returns
    what a full parse of the text returns (texts with stray end tags, no
    marker, markers in prose, calls)."""
    cls = _cls(name)
    fmt = cls._tp_format
    _, tools = _fcp()
    for text in _oneshot_texts(fmt):
        if getattr(cls, "_tp_hands_over", None) and cls._tp_hands_over(text):  # SGLang's own detector's answer
            builtin = [b for b in cls.__mro__ if b.__module__.startswith("sglang.srt.function_call.")][0]
            r, w = cls().detect_and_parse(text, tools), builtin().detect_and_parse(text, tools)
            assert (r.normal_text, r.calls, cls().has_tool_call(text)) == \
                (w.normal_text, w.calls, builtin().has_tool_call(text)), text
            continue
        events = _core.StreamParser(fmt, (), compiled=per_request.request_tools(fmt, tools),
                                    forward_unknown=cls._tp_forwards_all).parse_all(text)
        want = ("".join(ev.text for ev in events if type(ev) is Text), _calls_as_sglang(events))
        for ask_first in (False, True):
            d = cls()
            if ask_first:
                d.has_tool_call(text)
            r = d.detect_and_parse(text, tools)
            assert (r.normal_text, [(c.name, c.parameters) for c in r.calls]) == want, (ask_first, text)
        # has_tool_call: the answer of a whole parse, every name accepted
        full = _core.StreamParser(fmt, None).parse_all(text)
        expected = any(type(ev) is not Text for ev in full) or "".join(ev.text for ev in full) != text
        if not any(m in text for m in cls._tp_markers):
            expected = False  # no call can start (a stray end tag alone is no call)
        assert cls().has_tool_call(text) is expected, text


def test_forwarding_read_only_when_a_call_names_an_undeclared_tool(monkeypatch):
    d = ad.Qwen25NativeDetector()
    text = '<tool_call>\n{"name": "other", "arguments": {"a": 1}}\n</tool_call>'
    reads = []
    real = ad.envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get
    monkeypatch.setattr(type(ad.envs.SGLANG_FORWARD_UNKNOWN_TOOLS), "get",
                        lambda self: reads.append(1) or real())
    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "1")
    known = '<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>'
    assert [c.name for c in d.detect_and_parse(known, TOOLS).calls] == ["search"]
    assert reads == []
    assert [c.name for c in ad.Qwen25NativeDetector().detect_and_parse(text, TOOLS).calls] == ["other"]
    assert reads == [1]
    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "0")
    r = ad.Qwen25NativeDetector().detect_and_parse(text, TOOLS)
    assert r.calls == [] and r.normal_text == ""


def test_request_tools_by_identity():
    tools = [dict(t) for t in TOOLS]
    a = per_request.request_tools("glm45", tools)
    assert per_request.request_tools("glm45", tools) is a
    assert per_request.request_tools("qwen25", tools) is not a  # per format
    tools.append({"type": "function", "function": {"name": "more"}})
    b = per_request.request_tools("glm45", tools)
    assert b is not a and "more" in b.names
    tools[0] = {"type": "function", "function": {"name": "other"}}
    assert "other" in per_request.request_tools("glm45", tools).names
    # what SGLang's serving layer takes, never raising
    assert per_request.request_tools("qwen25", [{"type": "function", "function": {"name": ""}}]).names == ()
    assert per_request.request_tools("qwen25", None).names == ()


def test_starts_call():
    q = '<tool_call>\n{"name": "f", "arguments": {"a": "' + "x" * 5000 + '"}}\n</tool_call>'
    assert _core.starts_call("qwen25", "hi " + q, 3)
    assert _core.starts_call("qwen25", "hi " + q)  # pos 0: all of it in pieces
    assert not _core.starts_call("qwen25", "use <tool_call> like this", 4)
    assert _core.starts_call("qwen25", "héllo ✓ " + q, 8)  # pos counts characters
    assert not _core.starts_call("qwen25", "héllo ✓ <tool_call> tag", 8)
    assert _core.starts_call("qwen25", "\ud800 " + q, 2)  # a lone surrogate
    assert _core.starts_call("qwen25", "<tool_call>\n", 0)  # cut off: a call
    assert _core.starts_call("qwen25", "a </tool_call> b", 0)  # a stray end tag is dropped: not all text
    assert not _core.starts_call("qwen25", "", 0)
    with pytest.raises(ValueError):
        _core.starts_call("nope", "x")
    with pytest.raises(ValueError):
        _core.starts_call("qwen25", "x", 2)
    with pytest.raises(TypeError):
        _core.starts_call("qwen25", b"x")


@pytest.mark.parametrize("name", CLASSES)
def test_text_without_the_token_lead_is_all_text(name):
    """detect_and_parse returns a text without `_tp_token_lead` unparsed:
    the core must give every such text back whole (texts built from the
    format's markers cut anywhere, with the lead's characters removed only
    where they would form it)."""
    import random

    cls = _cls(name)
    fmt, lead = cls._tp_format, cls._tp_token_lead
    pieces = list(markers(fmt)) + list(cls._tp_markers) + list(' <{}[]":,\n\t|>/=`\uff5c\u2581éa')
    pieces += [m[:k] for m in markers(fmt) for k in range(1, len(m))] + [m[k:] for m in markers(fmt) for k in range(1, len(m))]
    rnd = random.Random(24)
    tried = 0
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 12)))
        while lead in text:  # the lead's last character removed where it forms it
            text = text.replace(lead, lead[:-1])
        if any(m in text for m in cls._tp_markers):
            continue  # a start marker that is no token (Llama 3's bare `{`) is looked for too
        tried += 1
        events = _core.StreamParser(fmt, None).parse_all(text)
        assert [type(ev) for ev in events] == [Text] * len(events) and "".join(ev.text for ev in events) == text, text
    assert tried > 300


def test_request_tools_by_content_for_new_lists():
    """Every request brings its own list of Tool models: an equal list finds
    the compiled tools by what they depend on (names; the schemas for
    formats typed by them; Kimi-K2: the property names too)."""
    _, tools = _fcp()
    from sglang.srt.entrypoints.openai.protocol import Tool

    def fresh(tool_dicts):
        return [Tool(**t) for t in tool_dicts]

    other_schema = [dict(t, function=dict(t["function"], parameters={
        "type": "object", "properties": {"city": {"type": "integer"}}})) for t in TOOLS]
    for fmt in ("qwen25", "deepseekv4", "kimi_k2", "glm45", "qwen3_coder"):
        a = per_request.request_tools(fmt, fresh(TOOLS))
        assert per_request.request_tools(fmt, fresh(TOOLS)) is a
        b = per_request.request_tools(fmt, fresh(other_schema))
        assert (b is a) == (fmt in ("qwen25", "deepseekv4")), fmt  # names only / schemas matter
        assert b.names == a.names
        c = per_request.request_tools(fmt, fresh(TOOLS[:2]))
        assert c is not a
        # what the general path compiles
        for lst in (TOOLS, other_schema, TOOLS[:2]):
            got = per_request.request_tools(fmt, fresh(lst))
            from sglang_toolparse.api import compiled_tools
            want = compiled_tools(fmt, [dict(t) for t in lst])
            assert got.names == want.names and got.whole == want.whole


def test_declared_names():
    from sglang.srt.entrypoints.openai.protocol import Tool

    models = [Tool(**t) for t in TOOLS]
    assert per_request.declared_names("qwen25", models) == {t["function"]["name"] for t in TOOLS}
    odd = models + [{"type": "function", "function": {"name": ""}}, "plain", models[0]]
    assert set(per_request.declared_names("qwen25", odd)) == set(per_request.request_tools("qwen25", odd).names)
    assert set(per_request.declared_names("kimi_k2", None)) == set()


def test_hunyuan_state_once_per_tokenizer(monkeypatch):
    """HunyuanDetector takes a tokenizer: the state (tags resolved from the
    vocabulary, regexes) is built once per tokenizer, a second detector for
    the same tokenizer compiles nothing and reads no vocabulary, keeps the
    tokenizer's spellings (has_tool_call included) and owns its containers."""
    from glm_rows import ROWS, FakeTokenizer, hunyuan_shape

    tok = FakeTokenizer(list(hunyuan_shape(":opensource")[2]) + ["hello"])
    first = ad.HunyuanNativeDetector(tokenizer=tok)
    reads, compiled, real = [], [], re.compile
    monkeypatch.setattr(FakeTokenizer, "get_vocab", lambda self: reads.append(1) or {})
    monkeypatch.setattr(re, "compile", lambda *a, **k: compiled.append(a) or real(*a, **k))
    a, b = ad.HunyuanNativeDetector(tokenizer=tok), ad.HunyuanNativeDetector(tokenizer=tok)
    assert (reads, compiled) == ([], [])
    text = ROWS["hunyuan_os"].calls(("get_weather", [("city", "x")]))
    for d in (first, a, b):
        assert (d._tp_format, d.bot_token, d._tp_lead) == ("hunyuan_os", "<tool_calls:opensource>",
                                                            "<tool_calls:opensource>")
        assert d.has_tool_call(text) and not d.has_tool_call(text.replace(":opensource", ""))
    assert a.prev_tool_call_arr is not b.prev_tool_call_arr and a._completed_args is not b._completed_args
    assert a.streamed_args_for_tool is not b.streamed_args_for_tool
    assert a.incomplete_tool_call_indices is not b.incomplete_tool_call_indices
    bare = ad.HunyuanNativeDetector()  # another tokenizer (none): its own spellings
    assert (bare._tp_format, bare.bot_token) == ("hunyuan", "<tool_calls>")


def _fold(events):
    """parse_plain's answer from parse_all's events (None: more than text,
    reasoning, markup of the message and complete calls)."""
    if any(type(ev) not in (Text, CallEnd, _core.Reasoning, _core.Markup) for ev in events):
        return None
    calls = [(ev.index, ev.name, ev.arguments, ev.id) for ev in events if type(ev) is CallEnd]
    return "".join(ev.text for ev in events if type(ev) is Text), calls


UNTYPED = sorted({_cls(n)._tp_format for n in CLASSES if _cls(n)._tp_untyped})


@pytest.mark.parametrize("fmt", UNTYPED)
def test_parse_plain_is_parse_all_folded(fmt):
    """has_tool_call's one-shot fold (no event objects) gives what
    parse_all's events give, and None whenever they hold more than text and
    complete calls (an error, a cut-off call, reasoning)."""
    texts = _oneshot_texts(fmt) + ["", "héllo ✓", "\ud800 x"]
    texts += [t[: len(t) // 2] for t in seed_responses(fmt)]  # cut off
    texts += ["é " + t + " ✓" for t in seed_responses(fmt)]
    for text in texts:
        events = _core.StreamParser(fmt, None).parse_all(text)
        got = _core.parse_plain(fmt, text)
        want = _fold(events)
        if want is None:
            assert got is None, text
            continue
        changed = bool(want[1]) or want[0] != text or any(type(ev) in (_core.Reasoning, _core.Markup) for ev in events)
        assert got == (want[0], want[1], changed), text
    with pytest.raises(ValueError):
        _core.parse_plain("nope", "x")
    with pytest.raises(TypeError):
        _core.parse_plain(fmt, b"x")


def test_declares_all():
    from sglang.srt.entrypoints.openai.protocol import Tool

    models = [Tool(**t) for t in TOOLS]
    call = lambda name, cid=None: (0, name, "{}", cid)  # noqa: E731
    assert per_request.declares_all("qwen25", models, [])
    assert per_request.declares_all("qwen25", models, [call("search")])
    assert per_request.declares_all("qwen25", models, [call("search"), call("lookup"), call("get_weather")])
    assert not per_request.declares_all("qwen25", models, [call("other")])
    assert not per_request.declares_all("qwen25", models, [call("search"), call("search"), call("other")])
    assert per_request.declares_all("qwen25", TOOLS, [call("search")])  # dicts: by declared_names
    assert not per_request.declares_all("qwen25", TOOLS + ["x"], [call("x2")])
    assert per_request.declares_all("kimi_k2", models, [call("search", "functions.search:0")])
    assert not per_request.declares_all("kimi_k2", models, [call("search", "3")])  # a bare counter
    assert not per_request.declares_all("qwen25", [], [call("search")])
    assert not per_request.declares_all("qwen25", None, [call("search")])


def test_result_models_equal_validated_ones(monkeypatch):
    """ToolCallItem / StreamingParseResult built without validation have
    the validated objects' state; a model that is not plain BaseModel
    data (here: one declared so) gets the validating constructors."""
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem

    from sglang_toolparse import result_models as rm

    assert rm.FAST  # the installed pydantic and SGLang were checked
    for args in ((0, "f", '{"a": "é"}'), (7, None, ""), (2, "g", "x")):
        a, b = rm.tool_call_item(*args), ToolCallItem(tool_index=args[0], name=args[1], parameters=args[2])
        assert a.__getstate__() == b.__getstate__() and a.model_dump_json() == b.model_dump_json()
        a.parameters += "y"  # still a model that can be changed
        assert a.parameters == args[2] + "y"
    calls = [rm.tool_call_item(0, "f", "{}")]
    r = rm.parse_result("t", calls)
    v = StreamingParseResult(normal_text="t", calls=[ToolCallItem(tool_index=0, name="f", parameters="{}")])
    assert r.__getstate__() == v.__getstate__() and r == v and r.model_dump() == v.model_dump()
    assert r.model_dump(exclude_unset=True) == v.model_dump(exclude_unset=True)
    monkeypatch.setattr(rm, "_plain_model", lambda cls, fields: False)
    assert rm._checked() is None


def test_fast_init_runs_no_python_per_detector():
    """Once a class's detectors start from its prototype, the class takes
    object's __init__ (SGLang's `detector_class()` runs no Python code);
    its signature stays the builtin's, arguments are refused as the
    builtin refuses them, and a subclass made afterwards finds its own
    prototype (its builtin attributes read as before)."""
    import inspect

    from sglang.srt.function_call.kimik2_detector import KimiK2Detector

    base = type("K2Fast", (ad.NativeDetectorMixin, KimiK2Detector), {"_tp_format": "kimi_k2",
                                                                      "_tp_markers": ad.KimiK2NativeDetector._tp_markers})
    assert base.__init__ is ad.NativeDetectorMixin.__init__
    first = base()
    assert base.__init__ is object.__init__
    assert str(inspect.signature(base)) == str(inspect.signature(KimiK2Detector)) == "()"
    with pytest.raises(TypeError):
        base(None)
    for d in (first, base()):
        assert d.bot_token == KimiK2Detector().bot_token and d.prev_tool_call_arr == []
        assert isinstance(d.streamed_args_for_tool, ad.StreamedArgs)
        assert d.has_tool_call("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
                               "<|tool_call_argument_begin|>{}<|tool_call_end|>")
    sub = type("K2FastSub", (base,), {})
    assert sub.__init__ is ad.NativeDetectorMixin.__init__
    s = sub()
    assert s.tool_call_start_token == "<|tool_call_begin|>" and s.prev_tool_call_arr == []
    # a class that has subclasses when its first detector is made keeps its __init__
    parent = type("K2Parent", (ad.NativeDetectorMixin, KimiK2Detector), {"_tp_format": "kimi_k2"})
    child = type("K2Child", (parent,), {})
    parent()
    assert parent.__init__ is ad.NativeDetectorMixin.__init__
    assert child().bot_token == "<|tool_calls_section_begin|>"


def test_request_tools_schema_copy_is_strict_and_private():
    """The schema-typed formats find a request's compiled tools by a kept
    copy of the same schemas: a schema that differs only as True differs
    from 1 (or 1.0) gets its own compiled tools, and a request that changes
    its schema objects afterwards changes nothing kept."""
    from sglang.srt.entrypoints.openai.protocol import Tool

    from sglang_toolparse.api import compiled_tools

    def schema(v):
        return [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"a": {"type": "integer", "minimum": v}}}}}]

    for fmt in ("glm45", "qwen3_coder", "k2_horizon"):
        got = {}
        for v in (1, True, 1.0, 1):
            lst = [Tool(**t) for t in schema(v)]
            got.setdefault(repr(v), set()).add(id(per_request.request_tools(fmt, lst)))
            assert per_request.request_tools(fmt, lst).whole == compiled_tools(fmt, schema(v)).whole
        assert len(got["1"]) == 1 and len(set().union(*got.values())) == 3, (fmt, got)
        lst = [Tool(**t) for t in schema(2)]
        first = per_request.request_tools(fmt, lst)
        lst[0].function.parameters["properties"]["a"]["type"] = "string"  # changed after its use
        again = per_request.request_tools(fmt, [Tool(**t) for t in schema(2)])
        assert again is first
        changed = [Tool(**t) for t in schema(2)]
        changed[0].function.parameters["properties"]["a"]["type"] = "string"
        assert per_request.request_tools(fmt, changed) is not first


def test_k2_horizon_json_dialect_reads_no_schema(monkeypatch):
    """K2 Horizon types only values of its parameter tags by the schemas: a
    reply in its JSON dialect whose calls all name declared tools is taken
    from has_tool_call's parse without reading the request's schemas; a
    parameter tag anywhere after the first marker, or a call to an
    undeclared tool, reads them, and every reply gives what the standalone
    parse with the tools gives."""
    from sglang_toolparse.api import parse

    FCP, tools = _fcp()
    reads = []
    monkeypatch.setattr(ad, "request_tools", lambda *a: reads.append(a[0]) or per_request.request_tools(*a))
    monkeypatch.setattr(ad, "typed_fold", lambda *a: reads.append(a[0]) or per_request.typed_fold(*a))
    js = '<ifm|tool_calls>\n<ifm|tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "n": 2}}' \
         '</ifm|tool_call>\n</ifm|tool_calls>'
    xml = '<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>n</ifm|arg_key>\n' \
          '<ifm|arg_value>2</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>'
    cases = [("hi " + js, False), (js.replace("get_weather", "elsewhere"), True), (xml, True),
             (js.replace("}}<", "}}<ifm|tool_call>{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}<"), False),
             (js + " then " + xml, True), ("<ifm|arg_key> alone, then " + js, False)]
    for text, reads_schemas in cases:
        reads.clear()
        normal, calls = FCP(tools, "k2_horizon_native").parse_non_stream(text)
        assert bool(reads) == reads_schemas, text  # (an undeclared call: its events parse reads them again)
        want = parse("k2_horizon", text, TOOLS)
        assert (normal, [(c.name, c.parameters) for c in calls]) == \
            (want.text, [(c.name, c.arguments) for c in want.calls]), text


_KEYS = ("city", "unit", "q", "n", "a", "b", "i", "x", "y", "z", "nested", "emoji", "s", "c")


def _variant(kind):
    """A schema whose every property (the seed replies' keys) is of `kind`;
    None: no parameters."""
    if kind is None:
        return None
    field = {"type": kind} if kind != "enum" else {"type": "string", "enum": ["celsius", "Paris"]}
    if kind == "union":
        field = {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]}
    return {"type": "object", "properties": {k: dict(field) for k in _KEYS}, "required": ["city"]}


_KINDS = ("string", "integer", "number", "boolean", "object", "array", "enum", "union", None)
_NAMES = ("get_weather", "search", "f")


def _variant_lists():
    """Tool lists of the same names whose schemas differ: each tool in turn
    of every kind, the others strings."""
    out = [(_variant(k),) * len(_NAMES) for k in _KINDS]
    for pos in range(len(_NAMES)):
        for k in _KINDS[1:]:
            out.append(tuple(_variant(k) if j == pos else _variant("string") for j in range(len(_NAMES))))
    return [[{"type": "function", "function": {"name": n, "parameters": p}} for n, p in zip(_NAMES, ps)]
            for ps in out]


TYPED = [c for c in CLASSES if not _cls(c)._tp_untyped]


@pytest.mark.parametrize("name", TYPED)
def test_typed_fold_reads_the_called_tools_schemas(name, monkeypatch):
    """typed_fold parses a new list with the compiled tools last kept for its
    names, and takes that parse when the tools it called have the same
    schemas: for every kept list and every request list of the same names
    (each tool's schema changed in turn), it gives what a fresh compile of
    the request's own list gives, and a reply whose calls name only tools
    whose schemas are unchanged is parsed once."""
    from sglang.srt.entrypoints.openai.protocol import Tool

    from sglang_toolparse.api import compiled_tools

    fmt = _cls(name)._tp_format
    lists = _variant_lists()
    models = [[Tool(**t) for t in lst] for lst in lists]
    monkeypatch.setattr(per_request, "_same_list", lambda fmt, tools: None)  # every list is new
    passes = []

    def parse(*a):
        passes.append(a[2])
        return _core.parse_typed(*a)

    texts = _oneshot_texts(fmt)
    took = 0
    for forward in (False, True):
        want = {(k, t): _core.parse_typed(fmt, t, compiled_tools(fmt, lst), forward)
                for k, lst in enumerate(lists) for t in texts}
        for kept in range(len(lists)):
            for k in range(len(lists)):
                monkeypatch.setattr(per_request, "_by_schemas", {})
                per_request.request_tools(fmt, models[kept])  # the one kept for these names
                for text in texts:
                    passes.clear()
                    got = per_request.typed_fold(fmt, text, models[k], forward, parse)
                    assert got == want[k, text], (kept, k, forward, text)
                    if got is not None and len(passes) == 1 and kept != k and got[1]:
                        took += 1  # taken with another list's compiled tools
    assert took > 0
