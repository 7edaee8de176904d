"""Where a streamed tool call's event-loop CPU goes, per delivery, through
SGLang's real OpenAIServingChat (issue 19: the 16 KB `write_file` call at 300
messages). One streaming request at a time (no load), CPU clock
(time.thread_time_ns), side by side in one run:

    PYTHONPATH=. python benchmarks/serving_per_chunk.py [--kib 16] [--tokens 8] [--messages 300] [--repeat 3]

Part 1, the whole path per delivery (what `bench --serving` accounts: from
the TokenizerManager stub handing an item over until the serving layer asks
for the next): SGLang's detector, the native one with the serving hooks
bypassed, with them, the same number of prose deliveries without tools (the
hooks' loop, and SGLang's own). Deliveries carry `--tokens` 4-char tokens of
the call, as the load run's large stream does (8 per step).

Part 2, the components of the hooked path per delivery, each call timed
alone on the same deliveries (median, less the clock's own cost): the rest
(the whole path with the content step emptied: the stub, the lean loop, the
async-generator chain, the response's consumer), the content step
(_content_chunks), inside it the tool step
(_tool_call_chunks), inside that the detector (stream_pair), inside that the
C parser (feed), and the SSE encoding of one arguments delta (_sse).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import statistics
import time
from typing import Any, List, Optional

from sglang_toolparse.bench.sides import SGLang

if not SGLang().ok:  # loads the plugin (the _native names)
    raise SystemExit("needs SGLang")

from sglang_toolparse import serving_hooks as H  # noqa: E402
from sglang_toolparse.bench import serving_agent as sa  # noqa: E402
from sglang_toolparse.bench import serving_stub as stub  # noqa: E402
from sglang_toolparse.bench.serving_load import prose_tokens, tool_tokens  # noqa: E402


class TimedTM(stub.StubTokenizerManager):
    """The stub, cumulative text, thread CPU from handing an item over until
    the next is asked for."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.cpu: List[int] = []

    async def generate_request(self, obj: Any, request: Any = None):
        text, last, tt = "", len(self.chunks) - 1, time.thread_time_ns
        for i, c in enumerate(self.chunks):
            text += c
            item = {"text": text, "output_ids": [], "meta_info": self._meta(i + 1, i == last)}
            t = tt()
            yield item
            self.cpu.append(tt() - t)
            await asyncio.sleep(0)


def serve(parser: str, chunks: List[str], tools: Optional[list], conv: list) -> float:
    """Median µs per delivery of one request (first and last excluded: the
    parser's creation, the end of the stream)."""
    tm = TimedTM(stub.server_args(parser), chunks)
    chat = stub.OpenAIServingChat(tm, stub.TEMPLATE_MANAGER)

    async def go() -> None:
        resp = await chat.handle_request(stub.make_request(tools, stream=True, messages=conv), None)
        async for _ in resp.body_iterator:
            pass

    gc.collect()
    asyncio.run(go())
    return statistics.median(tm.cpu[1:-1]) / 1e3


def per_call(fn: Any, n: int) -> float:
    """Median µs of fn(i) for i < n, each call timed alone, less the clock's
    own cost (an empty call timed the same way)."""
    tt = time.thread_time_ns
    got, empty = [], []
    for i in range(n):
        t = tt()
        fn(i)
        got.append(tt() - t)
        t = tt()
        empty.append(tt() - t)
    return max(0.0, statistics.median(got) - statistics.median(empty)) / 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kib", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=8, help="4-char tokens per delivery")
    ap.add_argument("--messages", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    toks, _ = tool_tokens("qwen25", args.kib)
    k = args.tokens
    chunks = ["".join(toks[i:i + k]) for i in range(0, len(toks), k)]
    prose = ["".join(prose_tokens(k)) for _ in chunks]
    tools, conv = sa.agent_tools(), sa.conversation(args.messages)
    serve("qwen25_native", chunks[:4], tools, conv)  # warm-up

    print("%d KB write_file call, %d messages, %d deliveries of %d tokens; µs per delivery, median, best of %d"
          % (args.kib, args.messages, len(chunks), k, args.repeat))
    rows = [("sglang (qwen25)", "qwen25", chunks, tools, False),
            ("native, hooks off", "qwen25_native", chunks, tools, True),
            ("native+hooks", "qwen25_native", chunks, tools, False),
            ("no tools, hooks", "qwen25_native", prose, None, False),
            ("no tools, hooks off", "qwen25_native", prose, None, True)]
    got = {}
    for label, parser, ch, tl, bypass in rows:
        with sa.hooks_bypassed(bypass):
            got[label] = min(serve(parser, ch, tl, conv) for _ in range(1 if parser == "qwen25" else args.repeat))
        print("  %-22s %9.2f" % (label, got[label]))
    print("  SGLang / native+hooks: %.0fx per delivery" % (got["sglang (qwen25)"] / got["native+hooks"]))

    # part 2: the components of the hooked path
    real = H._content_chunks
    H._content_chunks = lambda *a: None
    try:
        floor = min(serve("qwen25_native", chunks, tools, conv) for _ in range(args.repeat))
    finally:
        H._content_chunks = real
    cum, t = [], ""
    for c in chunks:
        t += c
        cum.append(t)
    tm = TimedTM(stub.server_args("qwen25_native"), [])
    chat = stub.OpenAIServingChat(tm, stub.TEMPLATE_MANAGER)

    def state() -> Any:
        req = stub.make_request(tools, stream=True, messages=conv)
        memo = req.__pydantic_private__[H.MEMO_KEY] = {}
        return req, memo, {}, {}, {}

    def content_step() -> float:
        req, memo, offs, pd, has = state()
        items = [{"text": cum[i], "meta_info": tm._meta(i + 1, False)} for i in range(len(cum) - 1)]

        def one(i: int) -> None:
            H._content_chunks(chat, items[i], 0, req, 1, offs, {}, pd, has, None, None, False, {0: 7}, {0: 0},
                              {0: i + 1}, memo, [])
        return per_call(one, len(items))

    def tool_step() -> float:
        req, memo, offs, pd, has = state()
        metas = [{"text": "", "meta_info": tm._meta(i + 1, False)} for i in range(len(chunks))]

        def one(i: int) -> None:
            H._tool_call_chunks(chat, 0, chunks[i], pd, metas[i], req, has, 1)
        return per_call(one, len(chunks) - 1)

    def detector_step() -> float:
        req, memo, offs, pd, has = state()
        H._tool_call_chunks(chat, 0, chunks[0], pd, {"text": "", "meta_info": tm._meta(1, False)}, req, has, 1)
        det, ptools = pd[0].detector, pd[0].tools
        return per_call(lambda i: det.stream_pair(chunks[i + 1], ptools), len(chunks) - 2)

    def core_step() -> float:
        req, memo, offs, pd, has = state()
        H._tool_call_chunks(chat, 0, chunks[0], pd, {"text": "", "meta_info": tm._meta(1, False)}, req, has, 1)
        core = pd[0].detector._tp
        return per_call(lambda i: core.feed(chunks[i + 1]), len(chunks) - 2)

    def sse_step() -> float:
        req, memo, offs, pd, has = state()
        content = {"text": "", "meta_info": tm._meta(1, False)}
        lane = H._Lane(None, None, None)
        return per_call(lambda i: H._sse(chat, content, req, 1, 0, None, (None, 0, None, chunks[i]), False, lane),
                        len(chunks))

    comp = [("the rest (stub, loop, generators, consumer)", floor)]
    for label, fn in (("content step (_content_chunks)", content_step), ("  tool step (_tool_call_chunks)", tool_step),
                      ("    detector (stream_pair)", detector_step), ("      C parser (feed)", core_step),
                      ("    SSE of an arguments delta (_sse)", sse_step)):
        comp.append((label, min(fn() for _ in range(args.repeat))))
    print("native+hooks, components (each timed alone; nested rows are part of the row above):")
    for label, v in comp:
        print("  %-44s %6.2f" % (label, v))


if __name__ == "__main__":
    main()
