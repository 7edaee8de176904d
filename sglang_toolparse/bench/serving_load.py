"""What a tool call costs the other streams of a live server.

SGLang parses tool calls on the asyncio event loop that serves every
stream of the HTTP process. This module drives SGLang's real
`OpenAIServingChat` (serving_stub.py: a stub TokenizerManager, no model)
with N concurrent streaming chat requests on one event loop: one request
streams a large `write_file` tool call, the others ordinary prose. It
measures, for the builtin detector and the native one:

* the CPU time the serving layer spends on the tool-call response (parser,
  SGLang's own chunk handling and SSE framing), and
* the gaps between consecutive chunks the *other* streams' clients receive
  while the tool call is in flight, against the same load in which the large
  stream is prose of the same length (the baseline).

The model is a clock. Every `step` seconds (a decode step) each stream's
next tokens become available: one token per step for the prose streams,
`tool_tokens_per_step` for the large stream. Tokens are the corpus's
4-character pieces with special tokens whole. As SGLang's TokenizerManager
does (`_stream_one_response`: it takes the newest of the queued outputs),
a stream that resumes late gets everything produced meanwhile in one item,
so a slow parser is called less often on larger pieces rather than falling
ever further behind.
"""
from __future__ import annotations

import asyncio
import gc
import math
import statistics
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import corpus

# the formats of the default run: Qwen2.5 and one format of each other family
# (kimi_k2 runs once the core has it; SGLang's builtin kimi_k2 is drivable
# with the stub, checked with SGLang 0.5.23; skipped with a note before)
DEFAULT_FORMATS = ("qwen25", "hermes", "deepseekv31", "glm47", "kimi_k2")
PROSE_TOKENS = corpus.fixed_chunks(corpus.prose_text(4096, seed=7), 4)


class LoadConfig(NamedTuple):
    streams: int = 8  # concurrent requests: one large stream + streams-1 prose streams
    step_ms: float = 5.0  # decode step: every stream gets its next tokens
    tool_tokens_per_step: int = 8  # tokens per step of the large stream
    sizes_kib: Tuple[int, ...] = (16, 64)  # argument sizes of the tool call
    warmup_steps: int = 20  # steps of prose-only load before the large stream starts
    builtin_limit_s: float = 60.0  # a builtin run still in flight after this is stopped
    incremental: bool = False  # SGLang's --incremental-streaming-output
    bins: int = 100  # gap-over-time resolution kept in the JSON / PNG


class Script(NamedTuple):
    """One request's model output, released on the step clock."""

    tokens: Optional[List[str]]  # None: endless prose until the large stream ends
    start_step: int
    per_step: int
    measured: bool  # the large stream: CPU time is accounted


def _serving_stub():
    from . import serving_stub  # imports SGLang

    return serving_stub


class Pacing:
    """Mixed into serving_stub.StubTokenizerManager (paced_tokenizer_manager()):
    generate_request releases each request's script on the step clock,
    coalescing what accumulated while the stream was not being read (as
    SGLang's TokenizerManager does)."""

    def _paced_init(self, step_s: float) -> None:
        self.step = step_s
        self.t0 = 0.0
        self.scripts: Dict[str, Script] = {}
        self.big_done: Optional[asyncio.Event] = None
        self.cpu_ns = 0
        self.deliveries = 0
        self.chars_sent = 0
        self.tail_start: Optional[int] = None
        self.clock: Optional[int] = None  # thread time when the measured item was handed over

    def pause(self) -> None:
        """Stops the measured stream's clock while its first item is held
        by the caller (handle_request kick-starts the stream: it returns
        with the first item taken but not handled to its end; what runs
        until the stream is read again belongs to other requests)."""
        if self.clock is not None:
            now = time.thread_time_ns()
            self.cpu_ns += now - self.clock
            self.clock = None
            self.paused = True

    def resume(self) -> None:
        if getattr(self, "paused", False):
            self.clock = time.thread_time_ns()
            self.paused = False

    async def generate_request(self, obj: Any, request: Any = None):
        script = self.scripts[obj.rid]
        loop = asyncio.get_running_loop()
        incremental = bool(self.server_args.incremental_streaming_output)
        tokens, per, start = script.tokens, script.per_step, script.start_step
        n = len(tokens) if tokens is not None else None
        sent = 0
        text = ""
        tt = time.thread_time_ns
        while True:
            now = loop.time()
            steps = max(0, int((now - self.t0) / self.step) - start + 1)
            if tokens is None:
                finished = self.big_done is not None and self.big_done.is_set()
                due = steps * per
            else:
                due = min(n, steps * per)
                finished = due >= n
            if due <= sent and not finished:
                wake = self.t0 + (start + sent // per) * self.step
                await asyncio.sleep(max(0.0, wake - now))
                continue
            if tokens is None:
                m = len(PROSE_TOKENS)
                piece = "".join(PROSE_TOKENS[i % m] for i in range(sent, due))
            else:
                piece = "".join(tokens[sent:due])
            sent = max(sent, due)
            text += piece
            item = {"text": piece if incremental else text, "output_ids": [],
                    "meta_info": self._meta(sent, finished)}
            if script.measured:
                self.deliveries += 1
                self.chars_sent = len(text)
                self.clock = tt()
                yield item  # the serving layer handles the item until it asks for the next
                self.cpu_ns += tt() - self.clock
                self.clock = None
            else:
                yield item
            if finished:
                if script.measured:
                    self.tail_start = tt()  # the serving layer's end-of-stream work follows
                return
            # TokenizerManager clears the request's event after taking its
            # outputs and waits on it; only its receive loop (another task)
            # sets it again, so a stream always yields to the event loop
            # between two items, even when more output is already waiting
            await asyncio.sleep(0)


_PACED: Any = None


def paced_tokenizer_manager(sa: Any, step_s: float) -> Any:
    global _PACED
    if _PACED is None:
        _PACED = type("PacedTokenizerManager", (Pacing, _serving_stub().StubTokenizerManager), {})
    tm = _PACED(sa, [])
    tm._paced_init(step_s)
    return tm


class RunResult(NamedTuple):
    data: Dict[str, Any]
    timeline: List[Tuple[float, float]]  # (ms since the large stream's first chunk, gap ms)


def _pct(sorted_vals: Sequence[float], q: float) -> Optional[float]:
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, max(0, int(math.ceil(q / 100.0 * len(sorted_vals))) - 1))
    return sorted_vals[k]


def gap_stats(gaps: Sequence[float]) -> Dict[str, Any]:
    s = sorted(gaps)
    return {"n": len(s), "p50_ms": _pct(s, 50), "p99_ms": _pct(s, 99), "max_ms": s[-1] if s else None,
            "mean_ms": statistics.fmean(s) if s else None}


def _bin_timeline(points: Sequence[Tuple[float, float]], bins: int) -> List[List[float]]:
    """[[t_ms, max gap ms]] over `bins` equal time bins (for the plot)."""
    if not points:
        return []
    end = max(t for t, _ in points) or 1.0
    width = end / bins
    out: Dict[int, float] = {}
    for t, g in points:
        b = min(bins - 1, int(t / width)) if width > 0 else 0
        if g > out.get(b, -1.0):
            out[b] = g
    return [[round((b + 0.5) * width, 3), round(g, 3)] for b, g in sorted(out.items())]


async def _consume(resp: Any, stamps: List[float], pieces: Optional[List[str]]) -> None:
    pc = time.perf_counter
    async for piece in resp.body_iterator:
        stamps.append(pc())
        if pieces is not None:
            pieces.append(piece if isinstance(piece, str) else piece.decode())


async def run_once(parser: str, big_tokens: List[str], cfg: LoadConfig, limit_s: Optional[float],
                   tools: List[dict], messages: Optional[List[dict]] = None, lead_s: float = 0.02) -> RunResult:
    """One load run: `cfg.streams - 1` prose streams and one large stream
    (`big_tokens`, a tool call or prose) served by `parser`; every request
    carries `messages` (default: one user message). The step clock starts
    `lead_s` after the requests are submitted (their set-up, e.g. rendering a
    long conversation, must fit in it)."""
    stub = _serving_stub()
    sa = stub.server_args(parser, incremental=cfg.incremental)
    tm = paced_tokenizer_manager(sa, cfg.step_ms / 1e3)
    chat = stub.OpenAIServingChat(tm, stub.TEMPLATE_MANAGER)
    loop = asyncio.get_running_loop()
    tm.big_done = asyncio.Event()
    n_small = max(0, cfg.streams - 1)
    for i in range(n_small):
        # prose streams start on different steps, as requests do
        tm.scripts["prose-%d" % i] = Script(None, i % 4, 1, False)
    tm.scripts["big"] = Script(big_tokens, cfg.warmup_steps, cfg.tool_tokens_per_step, True)

    tm.t0 = loop.time() + lead_s  # requests are set up before the clock starts
    resps = {}
    for rid in tm.scripts:
        req = stub.make_request(tools, stream=True, messages=messages, rid=rid)
        resps[rid] = await chat.handle_request(req, None)
        if tm.scripts[rid].measured:
            tm.pause()
        if type(resps[rid]).__name__ != "StreamingResponse":
            raise RuntimeError("%s: the serving layer did not stream: %r" % (parser, getattr(resps[rid], "body", resps[rid])))

    stamps: Dict[str, List[float]] = {rid: [] for rid in resps}
    big_pieces: List[str] = []
    capped = {"value": False}

    async def big() -> None:
        it = resps["big"].body_iterator
        pc = time.perf_counter
        tm.resume()
        try:
            async for piece in it:
                stamps["big"].append(pc())
                big_pieces.append(piece if isinstance(piece, str) else piece.decode())
                if limit_s is not None and pc() - stamps["big"][0] > limit_s:
                    capped["value"] = True
                    break
        finally:
            if tm.tail_start is not None:
                tm.cpu_ns += time.thread_time_ns() - tm.tail_start
            if capped["value"]:
                await it.aclose()
            tm.big_done.set()

    tasks = [asyncio.ensure_future(_consume(resps[rid], stamps[rid], None)) for rid in resps if rid != "big"]
    c0 = time.thread_time_ns()
    await asyncio.gather(big(), *tasks)
    total_cpu = (time.thread_time_ns() - c0) / 1e9

    w0, w1 = stamps["big"][0], stamps["big"][-1]
    gaps: List[float] = []
    points: List[Tuple[float, float]] = []
    for rid, st in stamps.items():
        if rid == "big":
            continue
        for a, b in zip(st, st[1:]):
            if w0 <= b <= w1:
                g = (b - a) * 1e3
                gaps.append(g)
                points.append(((b - w0) * 1e3, g))
    data: Dict[str, Any] = {
        "parser": parser,
        "in_flight_s": w1 - w0,
        "big_cpu_s": tm.cpu_ns / 1e9,
        "process_cpu_s": total_cpu,
        "deliveries": tm.deliveries,
        "chars_streamed": tm.chars_sent,
        "chars_total": sum(len(t) for t in big_tokens),
        "chars_per_delivery": tm.chars_sent / tm.deliveries if tm.deliveries else None,
        "capped": capped["value"],
        "gaps": gap_stats(gaps),
    }
    data["_body"] = "".join(big_pieces)
    return RunResult(data, points)


def check_tool_response(body: str, expected: Sequence[Tuple[str, str]]) -> Dict[str, Any]:
    """Whether the SSE of the large stream carried exactly the expected call
    (client-side assembly, as tests/test_serving_chat.py does)."""
    from .runner import compare_calls

    try:
        content, calls, finish, _ = _serving_stub().assemble_sse(body)
    except Exception as e:  # a malformed stream is a result
        return {"calls": "diff", "error": "%s: %s" % (type(e).__name__, str(e)[:200])}
    got = [(c.name or "", c.arguments) for c in calls]
    out: Dict[str, Any] = {"calls": compare_calls(got, expected), "finish_reason": finish,
                           "content_chars": len(content)}
    if out["calls"] != "ok":
        out["calls_got"] = [[n, a[:80] + ("...[%d chars]" % len(a) if len(a) > 80 else "")] for n, a in got]
    return out


class Plan(NamedTuple):
    core: str
    native: str
    builtin: str
    size_kib: int  # 0: the baseline (prose of the same length as the smallest size)
    side: str  # "sglang" | "native"


def tool_tokens(core: str, kib: int) -> Tuple[List[str], List[Tuple[str, str]]]:
    case = corpus.render_case(corpus.make_scenario("args%dk" % kib), core, chunk=4)
    return case.chunks, case.expected_calls


def prose_tokens(n: int) -> List[str]:
    m = len(PROSE_TOKENS)
    return [PROSE_TOKENS[i % m] for i in range(n)]


def run_serving(cfg: LoadConfig, formats: Sequence[str], show_progress: bool = True) -> Dict[str, Any]:
    """Every (format, size, side) run plus one baseline per (format, side).
    Returns the report dict (schema sglang_toolparse.bench.serving/1)."""
    import logging

    from .progress import progress
    from .runner import environment
    from .sides import SGLang, discover_formats

    notes: List[str] = []
    sg = SGLang()
    if not sg.ok:
        raise SystemExit("the serving benchmark needs SGLang: %s" % sg.error)
    stub = _serving_stub()
    known = {f.core: f for f in discover_formats(sg)}
    plans: List[Plan] = []
    for core in formats:
        f = known.get(core) or next((g for g in known.values() if core in (g.native_name, g.builtin) + g.aliases), None)
        if f is None or f.core not in corpus.RENDERERS:
            notes.append("%s: not a registered native format with a corpus renderer; skipped." % core)
            continue
        if not f.builtin or f.builtin not in sg.enum:
            notes.append("%s: SGLang has no builtin %r detector; skipped." % (core, f.builtin))
            continue
        for kib in (0,) + tuple(cfg.sizes_kib):
            for side in ("sglang", "native"):
                plans.append(Plan(f.core, f.native_name, f.builtin, kib, side))

    results: List[Dict[str, Any]] = []
    timelines: Dict[str, List[List[float]]] = {}
    smallest = min(cfg.sizes_kib)

    async def go() -> None:
        # warm-up: each detector once on a small call (imports, first-use caches)
        for core in dict.fromkeys(p.core for p in plans):
            p = next(q for q in plans if q.core == core)
            toks, _ = tool_tokens(core, 1)
            for parser in (p.builtin, p.native):
                await run_once(parser, toks, cfg._replace(streams=2, warmup_steps=1), None, corpus.TOOLS)
        with progress(len(plans), enabled=show_progress) as bar:
            for p in plans:
                parser = p.builtin if p.side == "sglang" else p.native
                bar.describe("%s %s %s" % (p.core, "%dk" % p.size_kib if p.size_kib else "baseline", p.side))
                if p.size_kib:
                    toks, expected = tool_tokens(p.core, p.size_kib)
                else:
                    toks, expected = prose_tokens(len(tool_tokens(p.core, smallest)[0])), []
                # only the builtin's tool-call runs can run away (prose is cheap for every parser)
                limit = cfg.builtin_limit_s if p.side == "sglang" and p.size_kib else None
                gc.collect()
                r = await run_once(parser, toks, cfg, limit, corpus.TOOLS)
                d = dict(r.data)
                body = d.pop("_body")
                d.update({"format": p.core, "native": p.native, "builtin": p.builtin, "side": p.side,
                          "size_kib": p.size_kib, "kind": "tool" if p.size_kib else "baseline"})
                if p.size_kib:
                    d["arg_bytes"] = len(expected[0][1].encode("utf-8")) if expected else 0
                    d.update(check_tool_response(body, expected))
                    if d["capped"]:
                        d["calls"] = "capped"
                        notes.append("%s %d KB %s (%s): stopped after %.1f s in flight (--builtin-limit), %d of %d "
                                     "chars streamed; its CPU time and gaps cover that part only."
                                     % (p.core, p.size_kib, p.side, parser, d["in_flight_s"], d["chars_streamed"],
                                        d["chars_total"]))
                results.append(d)
                key = "%s|%s|%s" % (p.core, p.size_kib, p.side)
                timelines[key] = _bin_timeline(r.timeline, cfg.bins)
                bar.update()

    logging.disable(logging.CRITICAL)
    try:
        asyncio.run(go())
    finally:
        logging.disable(logging.NOTSET)

    # ratios against the baseline of the same format and side
    base = {(r["format"], r["side"]): r for r in results if r["kind"] == "baseline"}
    for r in results:
        b = base.get((r["format"], r["side"]))
        if r["kind"] == "tool" and b:
            r["p99_over_baseline"] = _div(r["gaps"]["p99_ms"], b["gaps"]["p99_ms"])
            r["max_over_baseline"] = _div(r["gaps"]["max_ms"], b["gaps"]["max_ms"])
    env = environment(sg)
    try:
        import os

        env["loadavg"] = os.getloadavg()
    except (OSError, AttributeError):
        pass
    return {
        "schema": "sglang_toolparse.bench.serving/1",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": dict(cfg._asdict(), sizes_kib=list(cfg.sizes_kib)),
        "environment": env,
        "results": results,
        "timelines": timelines,
        "targets": targets(results, max(cfg.sizes_kib)),
        "notes": notes,
    }


def _div(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or not b else a / b


def targets(results: Sequence[Dict[str, Any]], kib: int) -> List[Dict[str, Any]]:
    """Issue 14's target, reported: with the native parser the other streams'
    p99 gap while the largest tool call streams is within 2x the baseline."""
    out = []
    for r in results:
        if r["kind"] == "tool" and r["side"] == "native" and r["size_kib"] == kib:
            v = r.get("p99_over_baseline")
            out.append({"format": r["format"], "target": "native: p99 gap of other streams during a %d KB "
                        "tool call / baseline p99" % kib, "value": v, "op": "<=", "threshold": 2.0,
                        "met": None if v is None else v <= 2.0})
    return out

