"""Serving-path hooks: the tool-call path of SGLang's OpenAIServingChat stream,
per request instead of per chunk, encoded like plain content.

SGLang 0.5.23's streaming chat path does, on every chunk of a request that
declares tools (serving_chat.py):

* `_effective_tools(request)` twice (once from `_tool_call_parsing_active`,
  once in `_process_tool_call_stream`): a copy of `request.tools` plus a scan
  of every message for `tools` (a root/system/developer message may declare
  some), so the cost grows with the conversation;
* `_get_history_tool_calls_cnt(request)` once (a scan of every message; only
  Kimi's ids use it);
* every delta (text or tool call) as a pydantic `ChatCompletionStreamResponse`
  + `model_dump_json`, where plain content goes through msgspec
  (`sse_utils.build_sse_content`).

A request's messages and tools do not change while it streams, so these hooks
(installed through SGLang's plugin HookRegistry):

* `_generate_chat_stream` (BEFORE): marks the request as streaming (a memo in
  the request's pydantic private dict; the messages were processed before);
* `_effective_tools`, `_get_history_tool_calls_cnt`,
  `_tool_call_parsing_active` (AROUND): for a marked request, computed once
  and remembered; otherwise SGLang's own;
* `_process_tool_call_stream` (AROUND, SGLang's body re-done): the same
  parser choice (where SGLang takes its JsonArrayParser for
  tool_choice="required" or a named tool, the native drop-in subclass
  NativeJsonArrayParser) and the same chunks, encoded with msgspec Structs whose fields
  are the pydantic models' fields in their order (same keys, same nulls); a
  value msgspec cannot encode falls back to SGLang's pydantic encoding. For
  our detectors the parser's result is taken as (text, calls), without
  FunctionCallParser's StreamingParseResult (NativeDetectorMixin.stream_pair);
* `_generate_stream_content` (AROUND, SGLang's body re-done, for marked
  requests without a chat-encoding adapter): the same steps in the same
  order, with the tool-call chunks built in place (no second async generator
  per chunk) and the request's values read from the memo.

Only servers whose `--tool-call-parser` holds one of this package's detectors
(any NATIVE_NAMES row, under its native or its builtin name) take the new
path; every other server runs SGLang's code (the wrappers pass through).

Safe degradation: every wrapped function (and the SGLang code the re-done body
relies on) is pinned by a hash of its source (PINS). At install time, a
mismatch installs nothing and logs one warning: SGLang runs unchanged.
SGLANG_TOOLPARSE_SERVING_HOOKS=0 turns the hooks off (nothing installed).

Installed lazily: when SGLang's serving_chat module is imported (the plugin
does not import it in processes that never serve chat).
"""
from __future__ import annotations

import hashlib
import inspect
import logging
import os
import textwrap
from typing import Any, Callable, Dict, List, Optional, Tuple

import msgspec

logger = logging.getLogger("sglang_toolparse")

ENV = "SGLANG_TOOLPARSE_SERVING_HOOKS"
SERVING_CHAT = "sglang.srt.entrypoints.openai.serving_chat"
_CHAT = SERVING_CHAT + ".OpenAIServingChat."
_PROTOCOL = "sglang.srt.entrypoints.openai.protocol."
# the request's memo, in its pydantic private dict (never serialized)
MEMO_KEY = "_toolparse_stream_memo"

# object path -> sha256 of its dedented source, SGLang 0.5.23. Wrapped
# functions, the callers whose use of them the hooks rely on, and the
# protocol models whose JSON the msgspec encoding reproduces. Re-check all of
# them on an SGLang upgrade (docs/SERVING.md "Serving hooks").
PINS: Dict[str, str] = {
    _CHAT + "_generate_chat_stream":
        "564bfc9d5f263b8c05108a9d01a13e9932535649d971d13f112bece2c7a07e5c",
    _CHAT + "_generate_stream_content":
        "33c921681786d4310a335d570fe9ef9c2b59f2d178d848cb32da6da5bdbf383c",
    _CHAT + "_process_tool_call_stream":
        "50797e47c88f0ede91d9b39c097f662c50bac3e3e4684b348afe05fddf449167",
    _CHAT + "_effective_tools":
        "24089fdf77642ddbc3196f563cc7dada5abac231012eeae6ab9bc61d88d27407",
    _CHAT + "_get_history_tool_calls_cnt":
        "7c9147aa800c8fc31ec295bc79b64a164a9b5797acd56cae90f5e9fbdd3c1fca",
    _CHAT + "_tool_call_parsing_active":
        "c93af738482b619267930ac29b91980d6ec626d194579f6930761bf9b9e4f6d0",
    _CHAT + "_process_tool_call_id":
        "4243931d135204a3048e2fa1eb0f822e2d517e023cd70d64dab395c67d21f35c",
    _CHAT + "_handle_streaming_request":
        "cc69ed4950f76edab526a0f033cd52312be69328fca7193bf0208d6fa61db055",
    _PROTOCOL + "ChatCompletionStreamResponse":
        "1c3c7fd8274277008bc6c436c71a1048e187d405adfb4a009bbea0a274318091",
    _PROTOCOL + "ChatCompletionResponseStreamChoice":
        "36b76e2cf53a48be33c36e530cd2ec53ebe8b167d6d89b8847bf1bb9ef7b997a",
    _PROTOCOL + "DeltaMessage":
        "1b9b5a78223f2980d0dcab1871e6d8a3c4e5f3914ff573a93a7e59926a08c8ab",
    _PROTOCOL + "ToolCall":
        "dab71fc99b070244843ed2b7485025c7ec5d01ffa28547410c0db34ebc3717ec",
    "sglang.srt.function_call.function_call_parser.FunctionCallParser.parse_stream_chunk":
        "95c147b0c9e15e6b7879790bdb46e54f6a60b405b0f6ef200cdcad7bfaa0a0a1",
    _PROTOCOL + "FunctionResponse":
        "511ca3725ac2d56b20be5fae844f8950640fa46064e7b34046f8b59b99b2fc4d",
}


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def source_hash(obj: Any) -> str:
    src = textwrap.dedent(inspect.getsource(inspect.unwrap(obj)))
    return hashlib.sha256(src.encode("utf-8")).hexdigest()


def _resolve(path: str) -> Any:
    import pkgutil

    return pkgutil.resolve_name(path)


def check(pins: Optional[Dict[str, str]] = None) -> List[str]:
    """The pinned objects whose source is not what the hooks expect
    (empty: all as pinned)."""
    bad = []
    for path, digest in (PINS if pins is None else pins).items():
        try:
            got = source_hash(_resolve(path))
        except Exception:  # missing, or no source
            got = None
        if got != digest:
            bad.append(path)
    return bad


# -- the per-request memo -----------------------------------------------------

_ours_cache: Dict[Any, bool] = {}


def _ours(chat: Any) -> bool:
    """Whether this server's tool-call parser is one of this package's
    detectors (any NATIVE_NAMES row, native or builtin name)."""
    name = chat.tool_call_parser
    if not name:
        return False
    cls = _FCP.ToolCallParserEnum.get(name)
    r = _ours_cache.get(cls)
    if r is None:
        from sglang_toolparse.sglang_adapter import NativeDetectorMixin

        r = _ours_cache[cls] = isinstance(cls, type) and issubclass(cls, NativeDetectorMixin)
    return r


def _memo(request: Any) -> Optional[Dict[str, Any]]:
    priv = getattr(request, "__pydantic_private__", None)
    return priv.get(MEMO_KEY) if priv is not None else None


def _before_generate_chat_stream(self: Any, *args: Any, **kwargs: Any) -> None:
    if _bypass or not _ours(self):
        return None
    request = kwargs.get("request", args[1] if len(args) > 1 else None)
    priv = getattr(request, "__pydantic_private__", None)
    if isinstance(priv, dict):
        priv[MEMO_KEY] = {}
    return None


def _memoized(key: str) -> Callable[..., Any]:
    def around(original: Callable[..., Any], self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        memo = _memo(request)
        if memo is None or _bypass or args or kwargs:
            return original(self, request, *args, **kwargs)
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = original(self, request)
            return value

    around.__name__ = "memoized_" + key.lstrip("_")
    return around


# -- deltas encoded with msgspec: the pydantic models' fields, in order -----


class _Fn(msgspec.Struct):
    name: Optional[str]
    arguments: Any


class _TC(msgspec.Struct):
    id: Optional[str]
    index: Optional[int]
    type: str
    function: _Fn


class _TextDelta(msgspec.Struct):
    role: None
    content: Optional[str]
    reasoning_content: None


class _CallDelta(msgspec.Struct):
    role: None
    content: None
    reasoning_content: None
    tool_calls: List[_TC]


class _Choice(msgspec.Struct):
    index: int
    delta: Any
    logprobs: None
    finish_reason: None
    matched_stop: None


class _Chunk(msgspec.Struct):
    id: str
    object: str
    created: int
    model: str
    choices: List[_Choice]
    usage: Optional[Dict[str, Any]]


_encode = msgspec.json.Encoder().encode


def _usage(self: Any, content: Dict[str, Any]) -> Any:
    meta = content["meta_info"]
    return _UsageProcessor.calculate_token_usage(
        prompt_tokens=self._reported_prompt_tokens(meta),
        completion_tokens=meta.get("completion_tokens", 0),
        reasoning_tokens=meta.get("reasoning_tokens", 0),
        cached_tokens=self._continuous_usage_cached_details(content),
    )


def _sse(self: Any, content: Dict[str, Any], request: Any, created: int, index: int,
         text: Optional[str], tool_call: Optional[Tuple[Optional[str], Optional[int], Optional[str], Any]],
         continuous_usage_stats: bool) -> str:
    """One delta as SGLang 0.5.23's _process_tool_call_stream frames it."""
    usage = _usage(self, content) if continuous_usage_stats else None
    if tool_call is None:
        delta: Any = _TextDelta(None, text, None)
    else:
        tid, tindex, name, args = tool_call
        delta = _CallDelta(None, None, None, [_TC(tid, tindex, "function", _Fn(name, args))])
    chunk = _Chunk(content["meta_info"]["id"], "chat.completion.chunk", created, request.model,
                   [_Choice(index, delta, None, None, None)],
                   usage.model_dump() if usage is not None else None)
    try:
        return "data: " + _encode(chunk).decode() + "\n\n"
    except (TypeError, ValueError, msgspec.EncodeError):
        # what msgspec cannot write (e.g. a lone surrogate): SGLang's own
        # encoding, with its own error
        return _pydantic_sse(content, request, created, index, text, tool_call, usage)


def _pydantic_sse(content: Dict[str, Any], request: Any, created: int, index: int, text: Optional[str],
                  tool_call: Any, usage: Any) -> str:
    P = _protocol
    if tool_call is None:
        delta = P.DeltaMessage(content=text)
    else:
        tid, tindex, name, args = tool_call
        delta = P.DeltaMessage(tool_calls=[P.ToolCall(id=tid, index=tindex,
                                                      function=P.FunctionResponse(name=name, arguments=args))])
    chunk = P.ChatCompletionStreamResponse(
        id=content["meta_info"]["id"], created=created, model=request.model,
        choices=[P.ChatCompletionResponseStreamChoice(index=index, delta=delta, finish_reason=None)])
    if usage is not None:
        chunk.usage = usage
    return "data: %s\n\n" % chunk.model_dump_json()


# -- _process_tool_call_stream, with the memo and the msgspec encoding --------


def _make_parser(self: Any, index: int, parser_dict: Dict[int, Any], request: Any, tools: List[Any]) -> None:
    """The parser for choice `index`, chosen as SGLang 0.5.23 chooses it."""
    M = _serving_chat
    is_required = request.tool_choice == "required" or isinstance(request.tool_choice, M.ToolChoice)
    constrained = M.grammar_holds_calls(request._response_parser_tool_grammar,
                                        request._response_parser_grammar_start)
    if is_required:
        probe = None
        if self.tool_call_parser:
            probe = M.FunctionCallParser(tools=tools, tool_call_parser=self.tool_call_parser,
                                         tokenizer=self.tokenizer_manager.tokenizer,
                                         tool_choice=request.tool_choice,
                                         prefix=request._response_parser_prefix, constrained=constrained)
        # where SGLang streams with its JsonArrayParser: the native one (a
        # drop-in subclass, sglang_adapter.NativeJsonArrayParser)
        parser_dict[index] = probe if probe is not None and probe.owns_tool_format() else _json_array_parser()
    else:
        parser_dict[index] = M.FunctionCallParser(tools=tools, tool_call_parser=self.tool_call_parser,
                                                  tokenizer=self.tokenizer_manager.tokenizer,
                                                  prefix=request._response_parser_prefix,
                                                  constrained=constrained)


def _json_array_parser() -> Any:
    from sglang_toolparse.sglang_adapter import NativeJsonArrayParser

    return NativeJsonArrayParser()


_direct_cache: Dict[Any, bool] = {}


def _direct(detector: Any) -> bool:
    """Whether FunctionCallParser.parse_stream_chunk may be skipped for this
    detector: one of ours that keeps NativeDetectorMixin's streaming method."""
    cls = type(detector)
    r = _direct_cache.get(cls)
    if r is None:
        from sglang_toolparse.sglang_adapter import NativeDetectorMixin

        r = _direct_cache[cls] = (issubclass(cls, NativeDetectorMixin) and cls.parse_streaming_increment
                                  is NativeDetectorMixin.parse_streaming_increment)
    return r


def _tool_call_chunks(self: Any, index: int, delta: str, parser_dict: Dict[int, Any], content: Dict[str, Any],
                     request: Any, has_tool_calls: Dict[int, bool], created: int,
                     continuous_usage_stats: bool = False, flush: bool = False) -> List[str]:
    """What SGLang 0.5.23's _process_tool_call_stream yields, as a list."""
    memo = _memo(request)
    tools = memo.get("tools") if memo is not None else None
    if tools is None:
        tools = self._effective_tools(request)
    if index not in parser_dict:
        _make_parser(self, index, parser_dict, request, tools)
    parser = parser_dict[index]
    if type(parser) is _FCP and _direct(parser.detector):
        # FunctionCallParser.parse_stream_chunk without the StreamingParseResult
        if not parser.tools and not parser.detector.parses_without_tools():
            normal_text, calls = delta, []
        else:
            normal_text, calls = parser.detector.stream_pair(delta, parser.tools)
        if flush:
            end_text, end_calls = parser.parse_stream_end()
            normal_text = (normal_text or "") + end_text
            calls = list(calls) + end_calls
    elif isinstance(parser, _serving_chat.JsonArrayParser):
        result = parser.parse_streaming_increment(delta, tools)
        normal_text, calls = result.normal_text, result.calls
        if flush:
            end = parser.finish(tools)
            normal_text = (normal_text or "") + end.normal_text
            calls = list(calls) + end.calls
    else:
        normal_text, calls = parser.parse_stream_chunk(delta)
        if flush:
            end_text, end_calls = parser.parse_stream_end()
            normal_text = (normal_text or "") + end_text
            calls = list(calls) + end_calls
    out = []
    if normal_text:
        out.append(_sse(self, content, request, created, index, normal_text, None, continuous_usage_stats))
    if not calls:
        return out
    history = memo.get("history_calls") if memo is not None else None
    if history is None:
        history = self._get_history_tool_calls_cnt(request)
    for item in calls:
        has_tool_calls[index] = True
        if item.name:
            tid, name = self._process_tool_call_id(item, history), item.name
        else:
            tid = name = None
        out.append(_sse(self, content, request, created, index, None, (tid, item.tool_index, name, item.parameters),
                        continuous_usage_stats))
    return out


async def _tool_call_stream(self: Any, *args: Any, **kwargs: Any):
    for chunk in _tool_call_chunks(self, *args, **kwargs):
        yield chunk


def _around_tool_call_stream(original: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    if _bypass or not _ours(self):
        return original(self, *args, **kwargs)
    return _tool_call_stream(self, *args, **kwargs)


# -- _generate_stream_content, for our requests ---------------------------------

_plain_cache: Dict[Any, bool] = {}


def _plain(cls: Any) -> bool:
    """Whether `cls` keeps OpenAIServingChat's tool-call stream method (a
    subclass that overrides it gets SGLang's _generate_stream_content)."""
    r = _plain_cache.get(cls)
    if r is None:
        base = _serving_chat.OpenAIServingChat
        r = _plain_cache[cls] = cls._process_tool_call_stream is base._process_tool_call_stream
    return r


def _usage_dict(self: Any, content: Dict[str, Any], index: int, prompt_tokens: Dict[int, int],
                reasoning_tokens: Dict[int, int], completion_tokens: Dict[int, int]) -> Dict[str, Any]:
    return _UsageProcessor.calculate_token_usage(
        prompt_tokens=prompt_tokens.get(index, 0),
        reasoning_tokens=reasoning_tokens.get(index, 0),
        completion_tokens=completion_tokens.get(index, 0),
        cached_tokens=self._continuous_usage_cached_details(content),
    ).model_dump()


async def _stream_content(self: Any, content: Dict[str, Any], index: int, request: Any, created: int,
                          stream_offsets: Dict[int, int], reasoning_parser_dict: Dict[int, Any],
                          parser_dict: Dict[int, Any], has_tool_calls: Dict[int, bool], choice_logprobs: Any,
                          finish_reason_type: Optional[str], continuous_usage_stats: bool,
                          prompt_tokens: Dict[int, int], reasoning_tokens: Dict[int, int],
                          completion_tokens: Dict[int, int], memo: Dict[str, Any]):
    """SGLang 0.5.23's _generate_stream_content (no chat-encoding adapter),
    with the tool-call chunks built in place (no generator per chunk) and the
    request's per-stream values from the memo."""
    build = _serving_chat.build_sse_content
    if _serving_chat.get_serving().incremental_streaming_output:
        delta = content["text"]
    else:
        delta = content["text"][stream_offsets.get(index, 0):]
        stream_offsets[index] = len(content["text"])
    remaining_logprobs = choice_logprobs
    if self.reasoning_parser and request.separate_reasoning:
        reasoning_text, delta = self._process_reasoning_stream(index, delta, reasoning_parser_dict, content, request,
                                                               finish_reason_type)
        if reasoning_text:
            usage = (_usage_dict(self, content, index, prompt_tokens, reasoning_tokens, completion_tokens)
                     if continuous_usage_stats else None)
            yield build(chunk_id=content["meta_info"]["id"], created=created, model=request.model, index=index,
                        reasoning_content=reasoning_text, logprobs=remaining_logprobs, usage=usage)
            remaining_logprobs = None
    active = memo.get("parsing_active")
    if active is None:
        active = self._tool_call_parsing_active(request)
    if active and not self._answer_started(reasoning_parser_dict.get(index)):
        for chunk in _tool_call_chunks(self, index, delta, parser_dict, content, request, has_tool_calls,
                                       created=created, continuous_usage_stats=continuous_usage_stats,
                                       flush=finish_reason_type is not None and finish_reason_type != "abort"):
            if chunk:
                yield chunk
        if finish_reason_type is not None and index in parser_dict:
            remaining_chunk = self._check_for_unstreamed_tool_args(parser_dict[index], content, request, index,
                                                                   created=created)
            if remaining_chunk:
                yield remaining_chunk
    elif delta:
        usage = (_usage_dict(self, content, index, prompt_tokens, reasoning_tokens, completion_tokens)
                 if continuous_usage_stats else None)
        yield build(chunk_id=content["meta_info"]["id"], created=created, model=request.model, index=index,
                    content=delta, logprobs=remaining_logprobs, usage=usage)
        remaining_logprobs = None
    if remaining_logprobs is not None and (self.reasoning_parser or self.tool_call_parser):
        usage = (_usage_dict(self, content, index, prompt_tokens, reasoning_tokens, completion_tokens)
                 if continuous_usage_stats else None)
        yield build(chunk_id=content["meta_info"]["id"], created=created, model=request.model, index=index,
                    logprobs=remaining_logprobs, usage=usage)


def _around_stream_content(original: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    if not args and not _bypass:
        memo = _memo(kwargs.get("request"))
        if memo is not None and self._encoding_output() is None and _plain(type(self)):
            return _stream_content(self, memo=memo, **kwargs)
    return original(self, *args, **kwargs)


# -- installation ---------------------------------------------------------------

_bypass = False  # tests: the wrappers pass everything to SGLang's code
_installed: Optional[bool] = None
_serving_chat: Any = None
_protocol: Any = None
_FCP: Any = None
_UsageProcessor: Any = None


def hooks() -> List[Tuple[str, Callable[..., Any], str]]:
    return [
        (_CHAT + "_generate_chat_stream", _before_generate_chat_stream, "BEFORE"),
        (_CHAT + "_effective_tools", _memoized("tools"), "AROUND"),
        (_CHAT + "_get_history_tool_calls_cnt", _memoized("history_calls"), "AROUND"),
        (_CHAT + "_tool_call_parsing_active", _memoized("parsing_active"), "AROUND"),
        (_CHAT + "_process_tool_call_stream", _around_tool_call_stream, "AROUND"),
        (_CHAT + "_generate_stream_content", _around_stream_content, "AROUND"),
    ]


def install(pins: Optional[Dict[str, str]] = None) -> bool:
    """Installs the hooks once SGLang's serving_chat is imported. Returns
    whether they are installed; on a pin mismatch nothing is installed and
    one warning is logged. Idempotent."""
    global _installed, _serving_chat, _protocol, _FCP, _UsageProcessor
    if _installed is not None:
        return _installed
    if not enabled():
        logger.info("sglang_toolparse: serving hooks off (%s=0)", ENV)
        _installed = False
        return False
    try:
        from sglang.srt.plugins import hook_registry
    except ImportError:
        logger.warning("sglang_toolparse: SGLang has no plugin hook registry; serving hooks not installed")
        _installed = False
        return False
    bad = check(pins)
    if bad:
        logger.warning(
            "sglang_toolparse: serving hooks not installed, SGLang's serving code is not the pinned 0.5.23 code "
            "(%s); SGLang's own streaming path runs unchanged", ", ".join(p.rsplit(".", 1)[-1] for p in bad))
        _installed = False
        return False
    import importlib

    _serving_chat = importlib.import_module(SERVING_CHAT)
    _protocol = importlib.import_module(_PROTOCOL.rstrip("."))
    _FCP = _serving_chat.FunctionCallParser
    _UsageProcessor = _serving_chat.UsageProcessor
    for target, fn, kind in hooks():
        hook_registry.HookRegistry.register(target, fn, getattr(hook_registry.HookType, kind))
    hook_registry.HookRegistry.apply_hooks()
    _installed = all(
        getattr(_resolve(t), "__wrapped__", None) is not None for t, _, _ in hooks())
    if not _installed:
        logger.warning("sglang_toolparse: the hook registry did not apply every serving hook; see its log")
    return _installed
