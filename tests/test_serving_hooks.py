"""The serving hooks (sglang_toolparse/serving_hooks.py) change what SGLang
computes per chunk and how it encodes tool-path deltas, never what a client
receives.

Against the installed SGLang, in this process: every request of a matrix
(tools or not; tool_choice auto / required / named / none; reasoning parser
on and off; n > 1; stream_options include_usage and continuous usage;
logprobs; Kimi-K2 ids with earlier tool calls in the history; a call cut off
by the length limit; cumulative and incremental streaming) is served through
SGLang's real OpenAIServingChat twice, with the hooks and with the wrappers
passing everything to SGLang's own code. The parsed SSE events must be equal
(random `call_...` ids are numbered in order of appearance; Kimi ids are
compared as sent), and on the tool path the hooked run must really have
taken the hooked code.

The install-time checks (a pin mismatch installs nothing and logs one
warning; SGLANG_TOOLPARSE_SERVING_HOOKS=0 installs nothing) run in one child
process: there nothing is installed yet.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from typing import Any, Dict, List, Optional

import pytest

pytest.importorskip("sglang")

import serving_stub  # noqa: E402
from support import token_like  # noqa: E402

from sglang_toolparse import serving_hooks  # noqa: E402
from sglang_toolparse.sglang_plugin import register  # noqa: E402

register()

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
]
PROSE = "Let me check the weather."
QWEN = (PROSE + "\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
        "</tool_call>\n<tool_call>\n"
        '{"name": "search", "arguments": {"query": "São Paulo ☀"}}\n</tool_call>')
QWEN_CUT = PROSE + '\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
KIMI = (PROSE + "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:3"
        '<|tool_call_argument_begin|>{"city": "Paris", "days": 3}<|tool_call_end|>'
        "<|tool_call_begin|>functions.search:4<|tool_call_argument_begin|>"
        '{"query": "x"}<|tool_call_end|><|tool_calls_section_end|>')
GLM45 = (PROSE + "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
         "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>")
# what SGLang's JSON-schema constraint makes a model write for required/named
JSON_ARRAY = '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, ' \
             '{"name": "search", "parameters": {"query": "q"}}]'
THINK = "<think>The user wants weather.</think>"

HISTORY = [
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "functions.get_weather:0", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        {"id": "functions.search:1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "cold"},
    {"role": "tool", "tool_call_id": "functions.search:1", "content": "none"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "functions.search:2", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "functions.search:2", "content": "none"},
    {"role": "user", "content": "And Paris and São Paulo?"},
]
NAMED = {"type": "function", "function": {"name": "get_weather"}}


class MatrixTokenizerManager(serving_stub.StubTokenizerManager):
    """The stub with n choices (interleaved, each its own id), logprobs and a
    finish reason of choice."""

    n = 1
    finish = "stop"

    def _meta(self, n_out: int, finished: bool) -> Dict[str, Any]:
        m = super()._meta(n_out, finished)
        if finished:
            m["finish_reason"] = ({"type": "length", "length": n_out} if self.finish == "length"
                                  else {"type": "stop", "matched": 151645})
            if self.finish == "abort-error":  # a system error: SGLang streams an error chunk
                from http import HTTPStatus

                m["finish_reason"] = {"type": "abort", "status_code": HTTPStatus.SERVICE_UNAVAILABLE,
                                      "message": "overloaded"}
            elif self.finish == "abort":  # graceful (e.g. /abort_request): the normal chunk path
                m["finish_reason"] = {"type": "abort"}
        m["output_token_logprobs_length"] = n_out
        m["output_token_logprobs"] = [(-0.5 - i / 8, 65 + i % 20, "t%d" % i) for i in range(n_out)]
        m["output_top_logprobs"] = [[(-0.25, 66, "u")] for _ in range(n_out)]
        return m

    async def generate_request(self, obj: Any, request: Any = None):
        self.requests.append(obj)
        incremental = bool(self.server_args.incremental_streaming_output)
        texts = [""] * self.n
        last = len(self.chunks) - 1
        for i, c in enumerate(self.chunks):
            for k in range(self.n):
                texts[k] += c
                meta = self._meta(i + 1, i == last)
                meta["id"] = "chatcmpl-stub-%d" % k
                yield {"index": k, "text": c if incremental else texts[k], "output_ids": [], "meta_info": meta}
            await asyncio.sleep(0)


def _serve(parser: Optional[str], text: str, tools: Optional[List[dict]], *, n: int = 1, finish: str = "stop",
           incremental: bool = False, reasoning: Optional[str] = None, prepare: Any = None, chunker: Any = None,
           **req: Any) -> str:
    sa = serving_stub.server_args(parser, incremental=incremental,
                                  **({"reasoning_parser": reasoning} if reasoning else {}))
    tm = MatrixTokenizerManager(sa, (chunker or (lambda t: token_like(t, seed=3)))(text))
    tm.n, tm.finish = n, finish
    chat = serving_stub.OpenAIServingChat(tm, serving_stub.TEMPLATE_MANAGER)

    async def go() -> str:
        request = serving_stub.ChatCompletionRequest(
            model="stub-model", stream=True, n=n,
            messages=req.pop("messages", None) or [{"role": "user", "content": "Weather in Paris?"}],
            tools=tools, **req)
        if prepare is not None:
            prepare(request)
        resp = await chat.handle_request(request, None)
        assert type(resp).__name__ == "StreamingResponse", getattr(resp, "body", resp)
        return "".join(await serving_stub._collect_body(resp))

    return asyncio.run(go())


def _events(body: str) -> List[Any]:
    """The SSE events as JSON values; `call_<hex>` ids numbered in order of
    appearance (they are random), `created` kept (compared within a run)."""
    ids: Dict[str, str] = {}

    def number(m: "re.Match[str]") -> str:
        return ids.setdefault(m.group(0), "call_#%d" % len(ids))

    out: List[Any] = []
    for ev in body.split("\n\n"):
        if not ev.strip():
            continue
        assert ev.startswith("data: "), ev
        data = ev[len("data: "):]
        out.append(data if data == "[DONE]" else json.loads(re.sub(r"call_[0-9a-f]{24}", number, data)))
    created = {e["created"] for e in out if isinstance(e, dict) and "created" in e}
    assert len(created) <= 1
    for e in out:
        if isinstance(e, dict):
            e.pop("created", None)
    return out


QWEN_ROW = ("qwen25_native", QWEN)
# id -> (parser, model output, tools, options)
MATRIX: Dict[str, Any] = {
    "no-tools": ("qwen25_native", QWEN, None, {}),
    "no-parser": (None, QWEN, TOOLS, {}),
    "auto": ("qwen25_native", QWEN, TOOLS, {}),
    "auto-incremental": ("qwen25_native", QWEN, TOOLS, {"incremental": True}),
    "auto-prose-only": ("qwen25_native", PROSE * 3, TOOLS, {}),
    "tool_choice-none": ("qwen25_native", QWEN, TOOLS, {"tool_choice": "none"}),
    "required-owns-format": ("qwen25_native", QWEN, TOOLS, {"tool_choice": "required"}),
    "required-json-array": ("glm45_native", JSON_ARRAY, TOOLS, {"tool_choice": "required"}),
    "named-json-array": ("glm45_native", JSON_ARRAY, TOOLS, {"tool_choice": NAMED}),
    "named-owns-format": ("qwen25_native", QWEN, TOOLS, {"tool_choice": NAMED}),
    "glm45-auto": ("glm45_native", GLM45, TOOLS, {}),
    "reasoning": ("qwen25_native", THINK + QWEN, TOOLS, {"reasoning": "qwen3"}),
    "reasoning-no-tools": ("qwen25_native", THINK + PROSE, None, {"reasoning": "qwen3"}),
    "n3": ("qwen25_native", QWEN, TOOLS, {"n": 3}),
    "include-usage": ("qwen25_native", QWEN, TOOLS, {"stream_options": {"include_usage": True}}),
    "continuous-usage": ("qwen25_native", QWEN, TOOLS,
                         {"stream_options": {"include_usage": True, "continuous_usage_stats": True}}),
    "logprobs": ("qwen25_native", QWEN, TOOLS, {"logprobs": True, "top_logprobs": 1}),
    "kimi-history": ("kimi_k2_native", KIMI, TOOLS, {"messages": HISTORY}),
    "kimi-history-n2": ("kimi_k2_native", KIMI, TOOLS, {"messages": HISTORY, "n": 2}),
    "cut-off": ("qwen25_native", QWEN_CUT, TOOLS, {"finish": "length"}),
    "builtin-parser": ("qwen25", QWEN, TOOLS, {}),  # not ours: SGLang's path, wrappers pass through
    "abort-error": ("qwen25_native", QWEN, TOOLS, {"finish": "abort-error", "n": 2}),
    "abort-graceful": ("qwen25_native", QWEN_CUT, TOOLS, {"finish": "abort"}),
    "n3-usage-incremental": ("qwen25_native", QWEN, TOOLS, {"n": 3, "incremental": True,
                                                           "stream_options": {"include_usage": True}}),
    "glm47": ("glm47_native", GLM45.replace("<tool_call>get_weather\n", "<tool_call>get_weather")
                          .replace("</arg_key>\n", "</arg_key>").replace("</arg_value>\n", "</arg_value>"),
                          TOOLS, {}),
}
# cases whose hooked run goes through the re-done tool path
TOOL_PATH = {"auto", "auto-incremental", "auto-prose-only", "required-owns-format", "required-json-array",
             "named-json-array", "named-owns-format", "glm45-auto", "reasoning", "n3", "include-usage",
             "continuous-usage", "logprobs", "kimi-history", "kimi-history-n2", "cut-off", "abort-error",
             "abort-graceful", "n3-usage-incremental", "glm47"}
# cases whose hooked run goes through the lean per-chunk loop (_chat_stream)
LEAN = set(MATRIX) - {"logprobs", "no-parser", "builtin-parser"}


def test_hooks_installed() -> None:
    assert serving_hooks._installed is True
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat

    assert OpenAIServingChat._process_tool_call_stream.__wrapped__ is not None


@pytest.mark.parametrize("case", list(MATRIX))
def test_sse_equal_hooked_and_unhooked(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, text, tools, opts = MATRIX[case]
    encoded: List[str] = []
    real_sse = serving_hooks._sse

    def counting(*a: Any, **k: Any) -> str:
        s = real_sse(*a, **k)
        encoded.append(s)
        return s

    monkeypatch.setattr(serving_hooks, "_sse", counting)
    lean: List[int] = []
    real_chat_stream = serving_hooks._chat_stream
    monkeypatch.setattr(serving_hooks, "_chat_stream", lambda *a: lean.append(1) or real_chat_stream(*a))
    if "json-array" in case:
        # the encoding of the hooked path, with SGLang's own JsonArrayParser on
        # both sides (the native one streams other argument pieces; the
        # client's message is compared in tests/test_serving_required.py)
        from sglang.srt.function_call.json_array_parser import JsonArrayParser

        monkeypatch.setattr(serving_hooks, "_json_array_parser", JsonArrayParser)
    monkeypatch.setattr(serving_hooks, "_bypass", True)
    plain = _serve(parser, text, tools, **dict(opts))
    assert not encoded
    monkeypatch.setattr(serving_hooks, "_bypass", False)
    hooked = _serve(parser, text, tools, **dict(opts))
    assert _events(hooked) == _events(plain)
    assert bool(encoded) == (case in TOOL_PATH)
    assert bool(lean) == (case in LEAN)
    # the case really exercises what it names
    if case.startswith("kimi"):
        assert '"functions.get_weather:3"' in hooked and '"functions.search:4"' in hooked
    if "json-array" in case:
        assert '"name":"search"' in hooked.replace(" ", "") or case.startswith("named")
        assert '"name":"get_weather"' in hooked.replace(" ", "")
    if case == "cut-off":
        assert '"finish_reason":"length"' in hooked
    if case == "abort-error":
        assert "overloaded" in hooked and '"finish_reason":"' not in hooked
    if case == "abort-graceful":
        assert '"finish_reason":"abort"' in hooked
    if case == "glm47":
        assert '"name":"get_weather"' in hooked.replace(" ", "")
    if case == "n3-usage-incremental":
        assert '"completion_tokens":' in hooked


def _rows() -> List[str]:
    from sglang_toolparse.sglang_plugin import NATIVE_NAMES

    return list(NATIVE_NAMES)


@pytest.mark.parametrize("native", _rows())
def test_sse_equal_every_native_row(native: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Table-driven over NATIVE_NAMES: each row's canned output (the serving
    tests' CANNED, keyed by the builtin it twins) streams the same SSE with
    and without the hooks, and the hooked run takes the hooked path."""
    from test_serving_chat import CANNED, NOT_DRIVABLE, TOOLS as CHAT_TOOLS

    from sglang_toolparse.sglang_plugin import NATIVE_NAMES

    builtin = NATIVE_NAMES[native][1]
    if builtin in NOT_DRIVABLE:
        pytest.skip(NOT_DRIVABLE[builtin])
    if builtin not in CANNED:
        pytest.skip("no canned output for %s in tests/test_serving_chat.py CANNED" % builtin)
    encoded: List[str] = []
    real_sse = serving_hooks._sse
    monkeypatch.setattr(serving_hooks, "_sse", lambda *a, **k: encoded.append(1) or real_sse(*a, **k))
    monkeypatch.setattr(serving_hooks, "_bypass", True)
    plain = _serve(native, CANNED[builtin], CHAT_TOOLS)
    assert not encoded
    monkeypatch.setattr(serving_hooks, "_bypass", False)
    hooked = _serve(native, CANNED[builtin], CHAT_TOOLS)
    assert encoded
    assert _events(hooked) == _events(plain)
    assert '"tool_calls"' in hooked


class CountingList(list):
    iterations = 0

    def __iter__(self):  # type: ignore[override]
        CountingList.iterations += 1
        return super().__iter__()


def test_conversation_scanned_once_per_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the hooks, the request's messages are read a fixed number of
    times per stream (not per chunk); SGLang alone reads them on every chunk."""

    def count(bypass: bool, chunker: Any) -> int:
        monkeypatch.setattr(serving_hooks, "_bypass", bypass)
        CountingList.iterations = 0
        _serve("kimi_k2_native", KIMI, TOOLS, messages=HISTORY, chunker=chunker,
               prepare=lambda r: setattr(r, "messages", CountingList(r.messages)))
        return CountingList.iterations

    def few(text: str) -> List[str]:
        return [text[:10], text[10:]]

    many = len(token_like(KIMI, seed=3))
    plain_few, plain_many = count(True, few), count(True, lambda t: token_like(t, seed=3))
    hooked_few, hooked_many = count(False, few), count(False, lambda t: token_like(t, seed=3))
    assert plain_many - plain_few >= 2 * (many - 2)  # SGLang: _effective_tools twice per chunk
    assert hooked_many == hooked_few  # with the hooks: per request


CHILD = r"""
import logging, os, sys
sys.path.insert(0, os.environ["TP_TESTS"])
import torchvision_placeholder; torchvision_placeholder.install()
records = []
class H(logging.Handler):
    def emit(self, r): records.append(r)
logging.getLogger("sglang_toolparse").addHandler(H())
logging.getLogger("sglang_toolparse").setLevel(logging.INFO)
from sglang_toolparse import serving_hooks as h
from sglang.srt.entrypoints.openai import serving_chat
C = serving_chat.OpenAIServingChat
originals = {t: h._resolve(t) for t, _, _ in h.hooks()}
def untouched():
    return all(h._resolve(t) is o for t, o in originals.items())
# 1. switched off
os.environ[h.ENV] = "0"
assert h.install() is False and untouched()
# 2. a pinned function that is not what the hooks expect
h._installed = None
os.environ.pop(h.ENV)
bad = dict(h.PINS)
bad[h._CHAT + "_effective_tools"] = "0" * 64
n0 = len([r for r in records if r.levelno >= logging.WARNING])
assert h.install(bad) is False and untouched()
warns = [r for r in records if r.levelno >= logging.WARNING][n0:]
assert len(warns) == 1 and "_effective_tools" in warns[0].getMessage(), [r.getMessage() for r in warns]
# 3. as pinned: installed
h._installed = None
assert h.check() == []
assert h.install() is True and not untouched()
print("OK")
"""


def test_install_checks_in_child() -> None:
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    env["TP_TESTS"] = here
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(here), env.get("PYTHONPATH", "")])
    env.pop(serving_hooks.ENV, None)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-3000:]


def test_pins_match_installed_sglang() -> None:
    """The installed SGLang is the one the hooks were written against (an
    upgrade fails here first: re-check the functions listed, then re-pin)."""
    assert serving_hooks.check() == []


@pytest.mark.parametrize("cid,model", [("chatcmpl-stub", "stub-model"), ('id "delta":null \\ é', 'm"delta":null'),
                                       ("x\u2028y", "模型")])
def test_cached_framing_is_the_struct_encoding(cid: str, model: str) -> None:
    """The per-stream SSE envelope and the arguments-only head (cut out of
    the msgspec encoding once per stream) give the bytes the Structs give,
    for text and tool-call deltas, odd ids and models included; what msgspec
    cannot encode (a lone surrogate) falls back to SGLang's pydantic encoding
    on both paths."""
    import types

    h = serving_hooks
    chat = types.SimpleNamespace()
    request = types.SimpleNamespace(model=model)
    content = {"meta_info": {"id": cid}}
    deltas = [("hello \"wörld\"\n", None), ("\u2028</script>", None), (None, (None, 0, None, '{"a": "b\\n')),
              (None, (None, 3, None, "")), (None, ("call_1", 1, "get_weather", "")),
              (None, (None, 2, "search", '{"q": 1}')), (None, (None, 0, None, {"not": "a str"}))]
    for index in (0, 2):
        lane = h._Lane(None, None, None)
        for text, call in deltas * 2:
            fast = h._sse(chat, content, request, 1700000000, index, text, call, False, lane)
            assert fast == h._sse(chat, content, request, 1700000000, index, text, call, False)
        assert lane.head is not None and lane.args_heads
    # a lone surrogate: SGLang's pydantic encoding and its error, either way

    def outcome(*a: Any) -> Any:
        try:
            return h._sse(*a)
        except Exception as e:  # what SGLang's model_dump_json raises
            return type(e).__name__, str(e)

    lane = h._Lane(None, None, None)
    for text, call in [("a\ud800", None), (None, (None, 0, None, "\udfff"))]:
        got = outcome(chat, content, request, 1, 0, text, call, False, lane)
        assert got == outcome(chat, content, request, 1, 0, text, call, False)
        assert got[0] == "PydanticSerializationError"
