"""The agent scenario of `bench --serving`: what a tool-enabled stream costs
SGLang's serving loop per chunk when the conversation is long.

One streaming request through SGLang's real OpenAIServingChat (serving_stub:
a stub tokenizer manager, no model): a prose reply in 4-character chunks,
~20 tools declared, and an agent history of rounds (user message, assistant
tool call, tool result) of 10, 300 and 1000 messages. Reported: the marginal
event-loop CPU per chunk, (CPU of a reply of K2 chunks - CPU of K1 chunks) /
(K2 - K1), thread CPU time, median of a few repeats; the per-request work
(template rendering of the history, request conversion) cancels out. Sides:

* sglang: SGLang's builtin detector (the hooks pass it through);
* native: the native detector, serving hooks bypassed;
* native+hooks: the native detector with the serving hooks;
* no tools: the same request and reply without tools (the content path;
  on a native server the hooks' lean loop serves it too);
* no tools, hooks off: the same, the hooks bypassed (SGLang's own loop).

Then the large-call cases at 300 messages (serving_load.run_once: concurrent
streams on the step clock): the CPU the serving loop spends on one 16 KB / 64
KB write_file call per side, and the other streams' p99 gap over the same
load with a prose stream of the same length.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import corpus

MESSAGES = (10, 300, 1000)
CHUNKS = (40, 440)  # K1, K2
REPEATS = 5
SIDES = ("sglang", "native", "native+hooks")
NO_TOOLS = ("no tools", "no tools, hooks off")


def agent_tools(n: int = 21) -> List[Dict[str, Any]]:
    """corpus.TOOLS plus generated tools of a few typed parameters each."""
    tools = list(corpus.TOOLS)
    kinds = ("string", "integer", "boolean", "number", "array", "object")
    i = 0
    while len(tools) < n:
        props = {"arg%d" % k: {"type": kinds[(i + k) % len(kinds)], "description": "parameter %d of tool %d" % (k, i)}
                 for k in range(3 + i % 4)}
        tools.append(corpus._tool("tool_%02d" % i, "Generated tool %d of the agent scenario" % i, props, ["arg0"]))
        i += 1
    return tools


def conversation(n: int, seed: int = 0) -> List[Dict[str, Any]]:
    """`n` messages: a system prompt, then rounds of user message, assistant
    tool call and tool result; the last message is the user's."""
    msgs: List[Dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. Use the tools."}]
    r = 0
    while len(msgs) < n - 1:
        cid = "call_%024x" % (seed * 100003 + r)
        msgs.append({"role": "user", "content": "Step %d: look at the build and fix what fails." % r})
        msgs.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": "run_command", "arguments": '{"command": "make test -k case_%d"}' % r}}]})
        msgs.append({"role": "tool", "tool_call_id": cid, "content": "FAILED case_%d: expected 3, got 4" % r})
        r += 1
    msgs = msgs[: n - 1]
    while msgs[-1]["role"] == "assistant":  # a call is followed by its result
        msgs.pop()
    while len(msgs) < n - 1:
        msgs.append({"role": "user", "content": "And then?"})
    msgs.append({"role": "user", "content": "Summarize what you changed."})
    return msgs


@contextlib.contextmanager
def hooks_bypassed(flag: bool) -> Iterator[None]:
    from sglang_toolparse import serving_hooks

    old = serving_hooks._bypass
    serving_hooks._bypass = flag
    try:
        yield
    finally:
        serving_hooks._bypass = old


def _parser_for(side: str, builtin: str, native: str) -> str:
    return builtin if side == "sglang" else native


def _request_cpu(stub: Any, parser: str, chunks: Sequence[str], tools: Optional[List[dict]],
                 messages: List[dict], clock: Any = time.thread_time) -> float:
    """Thread CPU seconds (or `clock`) of one streaming request, from
    handle_request to the last SSE piece."""
    sa = stub.server_args(parser)
    tm = stub.StubTokenizerManager(sa, chunks)
    chat = stub.OpenAIServingChat(tm, stub.TEMPLATE_MANAGER)

    async def go() -> float:
        req = stub.ChatCompletionRequest(model="stub-model", messages=messages, tools=tools, stream=True)
        gc.collect()
        c0 = clock()
        resp = await chat.handle_request(req, None)
        async for _ in resp.body_iterator:
            pass
        return clock() - c0

    return asyncio.run(go())


def per_chunk(stub: Any, parser: str, tools: Optional[List[dict]], messages: List[dict],
              chunks: Tuple[int, int] = CHUNKS, repeats: int = REPEATS) -> float:
    """Marginal loop CPU per chunk (seconds), median of `repeats`."""
    pieces = corpus.fixed_chunks(corpus.prose_text(4 * chunks[1] + 64, seed=11), 4)
    vals = []
    for _ in range(repeats):
        a = _request_cpu(stub, parser, pieces[: chunks[0]], tools, messages)
        b = _request_cpu(stub, parser, pieces[: chunks[1]], tools, messages)
        vals.append((b - a) / (chunks[1] - chunks[0]))
    return statistics.median(vals)


def run_agent(fmt: str = "qwen25", messages: Sequence[int] = MESSAGES, sizes_kib: Sequence[int] = (16, 64),
              load_cfg: Any = None, show_progress: bool = True, repeats: int = REPEATS) -> Dict[str, Any]:
    """The agent scenario for one format. Returns the report section."""
    import logging

    from .progress import progress
    from .serving_load import LoadConfig, check_tool_response, prose_tokens, run_once, tool_tokens
    from .sides import SGLang, discover_formats

    sg = SGLang()
    if not sg.ok:
        raise SystemExit("the serving benchmark needs SGLang: %s" % sg.error)
    from . import serving_stub as stub
    from sglang_toolparse import serving_hooks

    f = next(g for g in discover_formats(sg) if g.core == fmt)
    builtin, native = f.builtin, f.native_name
    tools = agent_tools()
    rows: List[Dict[str, Any]] = []
    loads: List[Dict[str, Any]] = []
    cfg = load_cfg or LoadConfig()
    plans = [(n, side) for n in messages for side in SIDES + NO_TOOLS]
    load_plans = ([(min(sizes_kib), "baseline")] if sizes_kib else []) + [
        (kib, side) for kib in sizes_kib for side in SIDES]
    logging.disable(logging.CRITICAL)
    try:
        with progress(len(plans) + len(load_plans), enabled=show_progress) as bar:
            per_chunk(stub, native, tools, conversation(10), (4, 8), 1)  # warm-up
            for n, side in plans:
                bar.describe("agent %d msgs %s" % (n, side))
                conv = conversation(n)
                plain = side in NO_TOOLS
                parser = native if plain else _parser_for(side, builtin, native)
                with hooks_bypassed(side in ("native", "no tools, hooks off")):
                    v = per_chunk(stub, parser, None if plain else tools, conv, repeats=repeats)
                rows.append({"messages": n, "side": side, "parser": parser, "per_chunk_us": v * 1e6})
                bar.update()
            conv = conversation(300)
            smallest = min(sizes_kib) if sizes_kib else 0
            # the requests' set-up (the 300-message template, ...) happens before the step clock starts
            # OpenAIServingChat sets the requests up one after the other (each
            # up to its first chunk), on the step clock: the large stream starts
            # once all are set up (wall time: part of it runs in worker threads)
            setup = max(_request_cpu(stub, native, ["x"], tools, conv, time.perf_counter) for _ in range(2))
            lead = 0.02 + setup
            cfg = cfg._replace(warmup_steps=cfg.warmup_steps + int(2.0 * cfg.streams * setup * 1e3 / cfg.step_ms))
            for kib, side in load_plans:
                bar.describe("agent %d KB %s" % (kib, side))
                if side == "baseline":
                    toks, expected = prose_tokens(len(tool_tokens(fmt, smallest)[0])), []
                    parser, bypass = native, False
                else:
                    toks, expected = tool_tokens(fmt, kib)
                    parser, bypass = _parser_for(side, builtin, native), side == "native"
                limit = cfg.builtin_limit_s if side == "sglang" else None
                gc.collect()
                with hooks_bypassed(bypass):
                    r = asyncio.run(run_once(parser, toks, cfg, limit, tools, messages=conv, lead_s=lead))
                d = dict(r.data)
                body = d.pop("_body")
                d.update({"size_kib": kib, "side": side, "messages": 300})
                if expected:
                    d.update(check_tool_response(body, expected))
                loads.append(d)
                bar.update()
    finally:
        logging.disable(logging.NOTSET)
    base = {r["messages"]: r["per_chunk_us"] for r in rows if r["side"] == "no tools"}
    for r in rows:
        r["over_no_tools"] = r["per_chunk_us"] / base[r["messages"]] if base.get(r["messages"]) else None
    bl = next((d for d in loads if d["side"] == "baseline"), None)
    for d in loads:
        if d["side"] != "baseline" and bl and bl["gaps"]["p99_ms"]:
            d["p99_over_baseline"] = d["gaps"]["p99_ms"] / bl["gaps"]["p99_ms"]
    return {"format": fmt, "builtin": builtin, "native": native, "tools": len(tools), "chunks": list(CHUNKS),
            "lead_s": lead, "warmup_steps": cfg.warmup_steps,
            "repeats": repeats, "hooks_installed": bool(serving_hooks._installed), "per_chunk": rows,
            "large_calls": loads, "targets": agent_targets(rows, loads)}


def agent_targets(rows: Sequence[Dict[str, Any]], loads: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Issue 19's targets, for native+hooks."""
    pc = {(r["messages"], r["side"]): r["per_chunk_us"] for r in rows}
    out: List[Dict[str, Any]] = []

    def add(name: str, v: Optional[float], op: str, th: float) -> None:
        met = None if v is None else (v <= th if op == "<=" else v >= th)
        out.append({"target": name, "value": v, "op": op, "threshold": th, "met": met})

    def ratio(a: Any, b: Any) -> Optional[float]:
        return a / b if a is not None and b else None

    add("per-chunk loop CPU, tools, 300 msgs / no tools", ratio(pc.get((300, "native+hooks")), pc.get((300, "no tools"))),
        "<=", 1.3)
    add("per-chunk loop CPU, tools, 1000 msgs / 10 msgs", ratio(pc.get((1000, "native+hooks")),
                                                                pc.get((10, "native+hooks"))), "<=", 1.2)
    ld = {(d["size_kib"], d["side"]): d for d in loads}
    s16, h16 = ld.get((16, "sglang")), ld.get((16, "native+hooks"))
    if s16 and h16:
        add("16 KB call at 300 msgs: SGLang's loop CPU / native+hooks'", ratio(s16["big_cpu_s"], h16["big_cpu_s"]),
            ">=", 25.0)
    h64 = ld.get((64, "native+hooks"))
    if h64:
        add("64 KB call at 300 msgs: other streams' p99 gap / baseline", h64.get("p99_over_baseline"), "<=", 1.1)
    return out


def agent_tables(section: Dict[str, Any]) -> str:
    from .report import fmt_x, table

    rows = section["per_chunk"]
    ns = sorted({r["messages"] for r in rows})
    sides = list(SIDES) + list(NO_TOOLS)
    pc = {(r["messages"], r["side"]): r for r in rows}
    body = []
    for side in sides:
        cells = [side, pc[(ns[0], side)]["parser"] if (ns[0], side) in pc else "-"]
        for n in ns:
            r = pc.get((n, side))
            cells.append("-" if r is None else "%.1f" % r["per_chunk_us"])
            cells.append("" if r is None or side == "no tools" else fmt_x(r["over_no_tools"]))
        body.append(cells)
    heads = ["side", "parser"]
    for n in ns:
        heads += ["%d msgs µs/chunk" % n, "/no tools"]
    out = [table(heads, body, [False, False] + [True] * (2 * len(ns)))]
    loads = section["large_calls"]
    if loads:
        lrows = []
        for d in loads:
            what = "prose (baseline)" if d["side"] == "baseline" else "%d KB call" % d["size_kib"]
            n = d.get("deliveries") or 0
            lrows.append([what, d["side"], d["parser"], "%.1f" % (d["big_cpu_s"] * 1e3), str(n),
                          "%.1f" % (d["big_cpu_s"] * 1e6 / n) if n else "-",
                          "%.1f" % (d["gaps"]["p99_ms"] or 0), fmt_x(d.get("p99_over_baseline")),
                          d.get("calls", "") + (" (capped)" if d.get("capped") else "")])
        out.append("")
        out.append(table(["300 msgs, large stream", "side", "parser", "loop CPU ms", "deliveries", "µs/delivery",
                          "others' p99 gap ms", "p99/base", "calls"], lrows,
                         [False, False, False, True, True, True, True, True, False]))
    return "\n".join(out)
