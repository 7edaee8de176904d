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

* `_generate_chat_stream` (AROUND): marks the request as streaming (a memo in
  the request's pydantic private dict; the messages were processed before);
  a request without the options only SGLang's loop writes (logprobs, hidden
  states, routed experts, token details, ids, a response-template grammar)
  streams through the lean loop (`_chat_stream`: SGLang's per-item steps and
  end of stream, the request's constant values read once, the content step
  called directly), any other through SGLang's loop;
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


def _mark(self: Any, request: Any) -> Optional[Dict[str, Any]]:
    """A new memo for the request of a stream our server serves, or None."""
    if _bypass or not _ours(self):
        return None
    priv = getattr(request, "__pydantic_private__", None)
    if not isinstance(priv, dict):
        return None
    memo: Dict[str, Any] = {}
    priv[MEMO_KEY] = memo
    return memo


def _around_generate_chat_stream(original: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    """Marks the request (the memo); a request the lean loop covers streams
    through it, any other through SGLang's generator (which then takes the
    hooked methods below)."""
    if len(args) == 3 and not kwargs:
        adapted_request, request, raw_request = args
    else:
        request = kwargs.get("request", args[1] if len(args) > 1 else None)
        adapted_request = raw_request = None
    memo = _mark(self, request)
    if memo is not None and adapted_request is not None and _lean(self, request):
        return _chat_stream(self, adapted_request, request, raw_request, memo)
    return original(self, *args, **kwargs)


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


class _Lane:
    """What one choice of one stream reads on every chunk of the tool path,
    resolved once (kept in the request's memo, by choice index): the parser
    SGLang chose, our detector when FunctionCallParser.parse_stream_chunk may
    be skipped, the effective tools, and the SSE bytes around a delta (the
    envelope of the chunk, for the chunk id, `created` and model it was
    built for; the head of an arguments-only tool-call delta, by tool
    index). The bytes are cut out of the msgspec encoding of the same
    Structs, so they cannot differ from it."""

    __slots__ = ("parser", "detector", "tools", "cid", "created", "model", "head", "tail", "args_heads")

    def __init__(self, parser: Any, detector: Any, tools: Any) -> None:
        self.parser = parser
        self.detector = detector
        self.tools = tools
        self.cid: Any = None
        self.created: Any = None
        self.model: Any = None
        self.head: Optional[bytes] = None  # None: no envelope for the current key
        self.tail = b""
        self.args_heads: Dict[int, bytes] = {}


_NULL_DELTA = b'"delta":null'
_ARGS_END = b'"arguments":null}}]}'


def _envelope(lane: _Lane, cid: Any, created: Any, model: Any, index: int) -> None:
    """lane.head / lane.tail: the chunk's JSON before and after its delta."""
    lane.cid, lane.created, lane.model = cid, created, model
    lane.head = None
    try:
        whole = _encode(_Chunk(cid, "chat.completion.chunk", created, model, [_Choice(index, None, None, None, None)],
                               None))
    except (TypeError, ValueError, msgspec.EncodeError):
        return
    # `"delta":null` occurs once: inside a JSON string every quote is escaped
    if whole.count(_NULL_DELTA) != 1:
        return
    head, tail = whole.split(_NULL_DELTA)
    lane.head, lane.tail = b"data: " + head + b'"delta":', tail + b"\n\n"


def _args_head(lane: _Lane, tindex: int) -> Optional[bytes]:
    """The delta of an arguments-only tool-call delta up to its arguments."""
    h = lane.args_heads.get(tindex)
    if h is None:
        whole = _encode(_CallDelta(None, None, None, [_TC(None, tindex, "function", _Fn(None, None))]))
        h = lane.args_heads[tindex] = whole[: -len(_ARGS_END)] + b'"arguments":' if whole.endswith(_ARGS_END) else b""
    return h or None


def _sse(self: Any, content: Dict[str, Any], request: Any, created: int, index: int,
         text: Optional[str], tool_call: Optional[Tuple[Optional[str], Optional[int], Optional[str], Any]],
         continuous_usage_stats: bool, lane: Optional[_Lane] = None) -> str:
    """One delta as SGLang 0.5.23's _process_tool_call_stream frames it."""
    if lane is not None and not continuous_usage_stats:
        # the common case: the envelope of the stream's chunks, built once
        cid, model = content["meta_info"]["id"], request.model
        if lane.cid != cid or lane.created != created or lane.model != model or lane.head is None:
            _envelope(lane, cid, created, model, index)
        if lane.head is not None:
            try:
                if tool_call is None:
                    body = _encode(_TextDelta(None, text, None))
                else:
                    tid, tindex, name, args = tool_call
                    h = (_args_head(lane, tindex) if tid is None and name is None and type(args) is str
                         and type(tindex) is int else None)
                    if h is not None:
                        body = h + _encode(args) + b"}}]}"
                    else:
                        body = _encode(_CallDelta(None, None, None, [_TC(tid, tindex, "function", _Fn(name, args))]))
                return (lane.head + body + lane.tail).decode()
            except (TypeError, ValueError, msgspec.EncodeError):
                pass  # SGLang's encoding and its error, below
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


def _lane(self: Any, index: int, parser_dict: Dict[int, Any], request: Any, memo: Optional[Dict[str, Any]]) -> _Lane:
    """The choice's lane: made with its parser (chosen as SGLang chooses it)
    on its first chunk, then read from the memo."""
    lanes = memo.setdefault("lanes", {}) if memo is not None else {}
    lane = lanes.get(index)
    parser = parser_dict.get(index)
    if lane is not None and parser is lane.parser and parser is not None:
        return lane
    tools = memo.get("tools") if memo is not None else None
    if tools is None:
        tools = self._effective_tools(request)
    if parser is None:
        _make_parser(self, index, parser_dict, request, tools)
        parser = parser_dict[index]
    detector = parser.detector if type(parser) is _FCP and _direct(parser.detector) else None
    if detector is not None and not parser.tools and not detector.parses_without_tools():
        detector = None  # FunctionCallParser hands the text back unparsed: its own method
    lane = lanes[index] = _Lane(parser, detector, tools)
    return lane


def _tool_call_chunks(self: Any, index: int, delta: str, parser_dict: Dict[int, Any], content: Dict[str, Any],
                     request: Any, has_tool_calls: Dict[int, bool], created: int,
                     continuous_usage_stats: bool = False, flush: bool = False,
                     out: Optional[List[str]] = None) -> List[str]:
    """What SGLang 0.5.23's _process_tool_call_stream yields, appended to
    `out` (a new list by default), in order."""
    memo = _memo(request)
    lane = _lane(self, index, parser_dict, request, memo)
    parser = lane.parser
    if lane.detector is not None:
        # FunctionCallParser.parse_stream_chunk without the StreamingParseResult
        normal_text, calls = lane.detector.stream_pair(delta, parser.tools)
        if flush:
            end_text, end_calls = parser.parse_stream_end()
            normal_text = (normal_text or "") + end_text
            calls = list(calls) + end_calls
    elif isinstance(parser, _serving_chat.JsonArrayParser):
        tools = lane.tools
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
    if out is None:
        out = []
    if normal_text:
        out.append(_sse(self, content, request, created, index, normal_text, None, continuous_usage_stats, lane))
    if not calls:
        return out
    history = None
    for item in calls:
        has_tool_calls[index] = True
        name = item.name
        if name:
            if history is None:
                history = memo.get("history_calls") if memo is not None else None
                if history is None:
                    history = self._get_history_tool_calls_cnt(request)
            if type(item) is not _ToolCallItem:  # SGLang's code gets SGLang's type
                item = _tci(item.tool_index, name, item.parameters)
            tid = self._process_tool_call_id(item, history)
        else:
            tid = None
        out.append(_sse(self, content, request, created, index, None, (tid, item.tool_index, name, item.parameters),
                        continuous_usage_stats, lane))
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


def _content_chunks(self: Any, content: Dict[str, Any], index: int, request: Any, created: int,
                    stream_offsets: Dict[int, int], reasoning_parser_dict: Dict[int, Any], parser_dict: Dict[int, Any],
                    has_tool_calls: Dict[int, bool], choice_logprobs: Any, finish_reason_type: Optional[str],
                    continuous_usage_stats: bool, prompt_tokens: Dict[int, int], reasoning_tokens: Dict[int, int],
                    completion_tokens: Dict[int, int], memo: Dict[str, Any], out: List[str]) -> None:
    """What SGLang 0.5.23's _generate_stream_content yields (no chat-encoding
    adapter), appended to `out` in order: its steps (delta, reasoning, tool
    path or content, logprobs flush) with the tool-call chunks built in place
    and the request's per-stream values from the memo. Synchronous: none of
    its steps awaits."""
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
            out.append(build(chunk_id=content["meta_info"]["id"], created=created, model=request.model, index=index,
                             reasoning_content=reasoning_text, logprobs=remaining_logprobs, usage=usage))
            remaining_logprobs = None
    active = memo.get("parsing_active")
    if active is None:
        active = self._tool_call_parsing_active(request)
    if active and not self._answer_started(reasoning_parser_dict.get(index)):
        # (SGLang drops empty chunks here; _sse never makes one)
        _tool_call_chunks(self, index, delta, parser_dict, content, request, has_tool_calls, created,
                          continuous_usage_stats, finish_reason_type is not None and finish_reason_type != "abort", out)
        if finish_reason_type is not None and index in parser_dict:
            remaining_chunk = self._check_for_unstreamed_tool_args(parser_dict[index], content, request, index,
                                                                   created=created)
            if remaining_chunk:
                out.append(remaining_chunk)
    elif delta:
        usage = (_usage_dict(self, content, index, prompt_tokens, reasoning_tokens, completion_tokens)
                 if continuous_usage_stats else None)
        out.append(build(chunk_id=content["meta_info"]["id"], created=created, model=request.model, index=index,
                         content=delta, logprobs=remaining_logprobs, usage=usage))
        remaining_logprobs = None
    if remaining_logprobs is not None and (self.reasoning_parser or self.tool_call_parser):
        usage = (_usage_dict(self, content, index, prompt_tokens, reasoning_tokens, completion_tokens)
                 if continuous_usage_stats else None)
        out.append(build(chunk_id=content["meta_info"]["id"], created=created, model=request.model, index=index,
                         logprobs=remaining_logprobs, usage=usage))


async def _stream_content(self: Any, kw: Dict[str, Any], memo: Dict[str, Any]):
    """_generate_stream_content for a marked request: `kw` are the keyword
    arguments SGLang's _generate_chat_stream passes. Chunks computed before
    an error are yielded before it is raised, as SGLang's generator does."""
    out: List[str] = []
    try:
        _content_chunks(self, kw["content"], kw["index"], kw["request"], kw["created"], kw["stream_offsets"],
                        kw["reasoning_parser_dict"], kw["parser_dict"], kw["has_tool_calls"], kw["choice_logprobs"],
                        kw["finish_reason_type"], kw["continuous_usage_stats"], kw["prompt_tokens"],
                        kw["reasoning_tokens"], kw["completion_tokens"], memo, out)
    except BaseException:
        for chunk in out:
            yield chunk
        raise
    for chunk in out:
        yield chunk


def _around_stream_content(original: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    if not args and not _bypass:
        memo = _memo(kwargs.get("request"))
        if memo is not None and self._encoding_output() is None and _plain(type(self)):
            return _stream_content(self, kwargs, memo)
    return original(self, *args, **kwargs)


# -- _generate_chat_stream, the per-chunk loop, for the common requests -------


def _lean(self: Any, request: Any) -> bool:
    """Whether the lean loop covers this request: no chat-encoding adapter,
    OpenAIServingChat's own content and tool-stream methods, and none of the
    request options whose output only SGLang's loop writes (logprobs, hidden
    states, routed experts, cached-token details, speculative-token details,
    input or output ids), no response-template grammar (whose stop token
    SGLang settles at the end)."""
    return (self._encoding_output() is None and _lean_class(type(self))
            and not request.logprobs and not request.return_hidden_states and not request.return_routed_experts
            and not request.return_cached_tokens_details and not request.return_spec_tokens_details
            and not self._should_return_input_ids(request) and not self._should_return_output_ids(request)
            # a response-template grammar: SGLang settles the stop token per chunk
            and request._response_parser_grammar_start is None and not request._response_parser_tool_grammar)


_lean_cache: Dict[Any, bool] = {}


def _lean_class(cls: Any) -> bool:
    """Whether `cls` keeps OpenAIServingChat's content and tool-stream
    methods (a subclass overriding either gets SGLang's loop)."""
    r = _lean_cache.get(cls)
    if r is None:
        base = _serving_chat.OpenAIServingChat
        r = _lean_cache[cls] = _plain(cls) and cls._generate_stream_content is base._generate_stream_content
    return r


async def _chat_stream(self: Any, adapted_request: Any, request: Any, raw_request: Any, memo: Dict[str, Any]):
    """SGLang 0.5.23's _generate_chat_stream for a request `_lean` admits:
    the same chunks in the same order, the per-chunk steps without what those
    options need (their values are never written for such a request), the
    request's constant values read once (its pydantic private attributes,
    which cost a Python-level __getattr__ each), and the content chunks
    built by a plain call (_content_chunks) instead of the hooked method and
    a generator per chunk."""
    M = _serving_chat
    build = M.build_sse_content
    created = int(M.time.time())
    parser_dict: Dict[int, Any] = {}
    reasoning_parser_dict: Dict[int, Any] = {}
    is_firsts: Dict[int, bool] = {}
    stream_offsets: Dict[int, int] = {}
    has_tool_calls: Dict[int, bool] = {}
    finish_reasons: Dict[int, Any] = {}
    prompt_tokens: Dict[int, int] = {}
    reasoning_tokens: Dict[int, int] = {}
    completion_tokens: Dict[int, int] = {}
    cached_tokens: Dict[int, int] = {}
    image_tokens: Dict[int, int] = {}
    audio_tokens: Dict[int, int] = {}
    video_tokens: Dict[int, int] = {}
    stream_started = False
    content: Any = None
    try:
        include_usage, continuous_usage_stats = M.should_include_usage(
            request.stream_options, M.get_serving().stream_response_default_include_usage)
        role_reasoning = "" if self.reasoning_parser == "k2_horizon" and request.separate_reasoning else None
        model = request.model
        async for content in self.tokenizer_manager.generate_request(adapted_request, raw_request):
            index = content.get("index", 0)
            meta = content["meta_info"]
            prompt_tokens[index] = self._reported_prompt_tokens(meta)
            completion_tokens[index] = meta.get("completion_tokens", 0)
            reasoning_tokens[index] = meta.get("reasoning_tokens", 0)
            cached_tokens[index] = meta.get("cached_tokens", 0)
            image_tokens[index] = meta.get("image_tokens", 0)
            audio_tokens[index] = meta.get("audio_tokens", 0)
            video_tokens[index] = meta.get("video_tokens", 0)
            finish_reason = meta.get("finish_reason", None)
            finish_reason_type = finish_reason["type"] if finish_reason else None
            if finish_reason_type:
                if finish_reason_type == "abort" and isinstance(finish_reason.get("status_code"), M.HTTPStatus):
                    code = finish_reason["status_code"]
                    error = self.create_streaming_error_response(
                        finish_reason.get("message", "Generation aborted."), code.name, code.value)
                    yield f"data: {error}\n\n"
                    break
                finish_reasons[index] = finish_reason
            if is_firsts.get(index, True):
                is_firsts[index] = False
                yield build(chunk_id=meta["id"], created=created, model=model, index=index, role="assistant",
                            content="", reasoning_content=role_reasoning)
                stream_started = True
            out: List[str] = []
            try:
                _content_chunks(self, content, index, request, created, stream_offsets, reasoning_parser_dict,
                                parser_dict, has_tool_calls, None, finish_reason_type, continuous_usage_stats,
                                prompt_tokens, reasoning_tokens, completion_tokens, memo, out)
            except BaseException:
                for chunk in out:
                    yield chunk
                raise
            for chunk in out:
                yield chunk

        for idx, finish_reason_data in finish_reasons.items():
            finish_reason_type = finish_reason_data["type"]
            final_finish_reason = finish_reason_type
            if (has_tool_calls.get(idx, False) and finish_reason_type == "stop"
                    and not M._incomplete_tool_call_indices(parser_dict.get(idx))):
                final_finish_reason = "tool_calls"
            yield build(chunk_id=content["meta_info"]["id"], created=created, model=model, index=idx,
                        finish_reason=final_finish_reason, matched_stop=finish_reason_data.get("matched"))

        if include_usage:
            n = request.n
            usage = _UsageProcessor.calculate_streaming_usage(
                prompt_tokens, reasoning_tokens, completion_tokens, cached_tokens=cached_tokens, n_choices=n,
                enable_cache_report=M.get_serving().enable_cache_report,
                image_tokens=sum(t for i, t in image_tokens.items() if i % n == 0),
                audio_tokens=sum(t for i, t in audio_tokens.items() if i % n == 0),
                video_tokens=sum(t for i, t in video_tokens.items() if i % n == 0))
            usage_chunk = M.ChatCompletionStreamResponse(id=content["meta_info"]["id"], created=created, choices=[],
                                                         model=model, usage=usage)
            yield f"data: {usage_chunk.model_dump_json()}\n\n"

    except ValueError as e:
        if not stream_started:
            raise
        error = self.create_streaming_error_response(str(e))
        yield f"data: {error}\n\n"

    yield "data: [DONE]\n\n"


# -- installation ---------------------------------------------------------------

_bypass = False  # tests: the wrappers pass everything to SGLang's code
_installed: Optional[bool] = None
_serving_chat: Any = None
_protocol: Any = None
_FCP: Any = None
_UsageProcessor: Any = None
_ToolCallItem: Any = None
_tci: Any = None


def hooks() -> List[Tuple[str, Callable[..., Any], str]]:
    return [
        (_CHAT + "_generate_chat_stream", _around_generate_chat_stream, "AROUND"),
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
    global _installed, _serving_chat, _protocol, _FCP, _UsageProcessor, _ToolCallItem, _tci
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
    from sglang.srt.function_call.core_types import ToolCallItem
    from sglang_toolparse.result_models import tool_call_item

    _ToolCallItem, _tci = ToolCallItem, tool_call_item
    for target, fn, kind in hooks():
        hook_registry.HookRegistry.register(target, fn, getattr(hook_registry.HookType, kind))
    hook_registry.HookRegistry.apply_hooks()
    _installed = all(
        getattr(_resolve(t), "__wrapped__", None) is not None for t, _, _ in hooks())
    if not _installed:
        logger.warning("sglang_toolparse: the hook registry did not apply every serving hook; see its log")
    return _installed
