"""A minimal OpenAI-compatible /v1/chat/completions endpoint (Starlette)
built on sglang-toolparse's standalone API, over a fake model stream.

    pip install sglang-toolparse starlette uvicorn   # or: pip install "sglang-toolparse[example]"
    python examples/openai_server.py --port 8000 --format qwen25
    # then any OpenAI client: base_url="http://127.0.0.1:8000/v1"
    # (--format: any name of sglang_toolparse.available_formats())

What it shows:
* StreamParser turns the model's text stream into prose and tool-call
  events, chunk by chunk (replace `fake_model` with your engine's stream).
* CallAssembler checks every call when it ends (declared tool, valid JSON,
  the tool's parameters schema). Only calls that pass are sent: in a
  stream, prose goes out as it arrives and each tool call goes out as one
  delta once it is complete and valid, so a client never sees half a call
  or one it must not execute. Rejected calls are listed in the extra field
  `tool_call_errors` (non-streaming: on the response; streaming: on the
  final chunk).

The fake model answers with canned text in the `--format` tool-call
format (written by the renderers the bench uses), cut into token-like
chunks: a call to the first declared tool (arguments from
CANNED_ARGUMENTS, `{}` otherwise); if the last user message contains
"broken", also a call with arguments that violate the schema and one to an
undeclared tool; without tools, prose only.

A request whose `tools` is not a list of OpenAI function tools (or repeats
a name) gets HTTP 400 with an OpenAI-style error body.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
import uuid
from typing import Any, AsyncIterator, Dict, List, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from sglang_toolparse import StreamParser, Text, available_formats
from sglang_toolparse.api import FORMAT_ALIASES, tool_names
from sglang_toolparse.assembler import CallAssembler
from sglang_toolparse.bench.corpus import RENDERERS

CANNED_ARGUMENTS: Dict[str, Dict[str, Any]] = {
    "get_weather": {"location": {"city": "Zürich", "country": "CH"}, "unit": "celsius"},
}


def canned_output(fmt: str, messages: List[Dict[str, Any]], tools: Optional[List[Dict[str, Any]]]) -> str:
    """What the fake model writes, in the tool-call format `fmt` (a core
    format name, a key of RENDERERS)."""
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), {})
    question = last.get("content") if isinstance(last.get("content"), str) else ""
    if not tools:
        return "I have no tools, so here is a plain answer."
    name = tool_names(tools)[0]
    calls = [(name, CANNED_ARGUMENTS.get(name, {}))]
    if "broken" in question:
        calls.append((name, {"location": 42}))
        calls.append(("rm_rf", {"path": "/"}))
    return RENDERERS[fmt]("Let me look that up.", calls)


async def fake_model(text: str, seed: int = 0) -> AsyncIterator[str]:
    """Yields `text` in token-like pieces (1-6 characters)."""
    rnd = random.Random(seed)
    i = 0
    while i < len(text):
        n = rnd.randint(1, 6)
        yield text[i : i + n]
        i += n
        await asyncio.sleep(0)


def _call_json(call: Any) -> Dict[str, Any]:
    return {
        "id": "call_" + uuid.uuid4().hex[:24],
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def _errors_json(asm: CallAssembler) -> List[Dict[str, Any]]:
    return [
        {"index": e.index, "name": e.name, "kind": e.kind, "path": e.path, "message": e.message, "code": e.code}
        for e in asm.errors
    ]


def bad_request(message: str, param: Optional[str] = None) -> JSONResponse:
    """HTTP 400 with the error body OpenAI's API (and its clients) use."""
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}},
        status_code=400,
    )


def create_app(fmt: str = "qwen25", model_name: str = "fake-model") -> Starlette:
    fmt = FORMAT_ALIASES.get(fmt, fmt)
    if fmt not in RENDERERS:
        raise ValueError("no stand-in model output for format %r; formats: %s"
                         % (fmt, ", ".join(f for f in available_formats() if FORMAT_ALIASES.get(f, f) in RENDERERS)))

    async def chat_completions(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return bad_request("the request body is not valid JSON")
        if not isinstance(body, dict):
            return bad_request("the request body must be a JSON object")
        messages = body.get("messages") or []
        if not isinstance(messages, list):
            return bad_request("messages must be a list", "messages")
        tools = body.get("tools") or None
        try:  # the client's tools, checked before anything reads them
            parser = StreamParser(fmt, tools or [])
            asm = CallAssembler(tools or [])
        except (TypeError, ValueError) as e:
            return bad_request(str(e), "tools")
        text = canned_output(fmt, messages, tools)
        created = int(time.time())
        rid = "chatcmpl-" + uuid.uuid4().hex

        if not body.get("stream"):
            prose: List[str] = []
            calls: List[Dict[str, Any]] = []
            async for piece in fake_model(text):
                for ev in parser.feed(piece):
                    if isinstance(ev, Text):
                        prose.append(ev.text)
                    done = asm.add(ev)
                    if done is not None and done.ok:
                        calls.append(_call_json(done))
            for ev in parser.finish():
                if isinstance(ev, Text):
                    prose.append(ev.text)
                done = asm.add(ev)
                if done is not None and done.ok:
                    calls.append(_call_json(done))
            message: Dict[str, Any] = {"role": "assistant", "content": "".join(prose) or None}
            if calls:
                message["tool_calls"] = calls
            return JSONResponse(
                {
                    "id": rid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model_name,
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                    "tool_call_errors": _errors_json(asm),
                }
            )

        def chunk(delta: Dict[str, Any], finish: Optional[str] = None, **extra: Any) -> str:
            obj = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model_name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            obj.update(extra)
            return "data: %s\n\n" % json.dumps(obj, ensure_ascii=False)

        async def sse() -> AsyncIterator[str]:
            yield chunk({"role": "assistant", "content": ""})
            sent = 0

            def out(events: List[Any]) -> List[str]:
                nonlocal sent
                pieces = []
                for ev in events:
                    if isinstance(ev, Text) and ev.text:
                        pieces.append(chunk({"content": ev.text}))
                    done = asm.add(ev)
                    if done is not None and done.ok:
                        # the whole checked call in one delta; the OpenAI
                        # index counts the calls actually sent
                        call = dict(_call_json(done), index=sent)
                        sent += 1
                        pieces.append(chunk({"tool_calls": [call]}))
                return pieces

            async for piece in fake_model(text):
                for s in out(parser.feed(piece)):
                    yield s
            for s in out(parser.finish()):
                yield s
            yield chunk({}, "tool_calls" if sent else "stop", tool_call_errors=_errors_json(asm))
            yield "data: [DONE]\n\n"

        return StreamingResponse(sse(), media_type="text/event-stream")

    async def models(request: Request):
        return JSONResponse({"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "example"}]})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )


app = create_app()


def main() -> None:
    import uvicorn

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--format", default="qwen25", choices=available_formats())
    args = ap.parse_args()
    uvicorn.run(create_app(args.format), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
