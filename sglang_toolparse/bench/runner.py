"""Timing and correctness of every side on every case."""
from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from sglang_toolparse._core import ArgsDelta, CallEnd, CallStart, Text

from . import capped, corpus, json_speed
from . import oneshot as one
from .common import Policy, clip as _clip, compare_calls, compare_text  # noqa: F401 (also imported from here)
from .progress import progress
from .sides import EXTRA_ROWS, EXTRA_SCENARIOS, SIDES, Format, SGLang, Side, make_side


class Mode(NamedTuple):
    name: str
    fast: Policy  # native, floor, standalone
    slow: Policy  # SGLang's own detectors
    sglang_limit: float  # skip an SGLang case estimated to take longer (s)
    clock: str = "wall"  # "wall" (perf_counter_ns) or "cpu" (thread_time_ns)


# an SGLang case with a larger argument is estimated from a smaller one first
PROBE_BYTES = 4096

MODES: Dict[str, Mode] = {
    "quick": Mode("quick", Policy(0.05, 2, 20), Policy(0.2, 1, 5), 10.0),
    "default": Mode("default", Policy(0.2, 3, 100), Policy(1.0, 1, 30), 60.0),
    "full": Mode("full", Policy(1.0, 5, 500), Policy(5.0, 2, 50), 600.0),
}


# -- assembling what a side streamed -----------------------------------------
def assemble_fcp(outputs: Sequence[Tuple[str, list]]) -> Tuple[str, List[Tuple[str, str]]]:
    """(text, [(name, arguments)]) from parse_stream_chunk/parse_stream_end
    results: calls are assembled per tool_index (first name + concatenated
    parameters)."""
    text: List[str] = []
    calls: Dict[int, List[Any]] = {}
    for normal, items in outputs:
        if normal:
            text.append(normal)
        for it in items or ():
            c = calls.setdefault(it.tool_index, [None, []])
            if it.name and c[0] is None:
                c[0] = it.name
            if it.parameters:
                c[1].append(it.parameters)
    return "".join(text), [(c[0] or "", "".join(c[1])) for _, c in sorted(calls.items())]


def assemble_events(outputs: Sequence[list]) -> Tuple[str, List[Tuple[str, str]]]:
    """The same from standalone event lists (ArgsDelta per call index)."""
    text: List[str] = []
    calls: Dict[int, List[Any]] = {}
    ended: Dict[int, str] = {}
    for evs in outputs:
        for ev in evs:
            t = type(ev)
            if t is Text:
                text.append(ev.text)
            elif t is CallStart:
                calls.setdefault(ev.index, [ev.name, []])
            elif t is ArgsDelta:
                calls.setdefault(ev.index, ["", []])[1].append(ev.delta)
            elif t is CallEnd:
                ended[ev.index] = ev.arguments
    out = []
    for i, (name, parts) in sorted(calls.items()):
        args = "".join(parts)
        if i in ended and ended[i] != args:  # deltas must add up to the final arguments
            args = "<deltas %r != end %r>" % (args[:40], ended[i][:40])
        out.append((name, args))
    return "".join(text), out


# -- timing ----------------------------------------------------------------
def run_stream(side: Side, chunks: Sequence[str]) -> Tuple[int, int, list]:
    """(wall ns, CPU ns of this thread, outputs) for one whole stream (every
    chunk, then the end call), its outputs collected. The garbage collector
    is off while timing, as in timeit. Wall time is time.perf_counter_ns;
    CPU time (time.thread_time_ns) leaves out the time the process was
    descheduled, which matters on a shared machine."""
    feed, end = side.start()
    gc_was = gc.isenabled()
    gc.disable()
    wall, cpu = time.perf_counter_ns, time.thread_time_ns
    try:
        out: list = []
        ap = out.append
        c0, t0 = cpu(), wall()
        for c in chunks:
            ap(feed(c))
        ap(end())
        t1, c1 = wall(), cpu()
        return t1 - t0, c1 - c0, out
    finally:
        if gc_was:
            gc.enable()


def run_streams(side: Side, chunks: Sequence[str], k: int) -> Tuple[float, float]:
    """(wall ns, CPU ns) per stream, averaged over `k` streams timed between
    one pair of clock reads. The streams are started (parsers made) before
    the clocks start, so the time is the feeding alone, as in run_stream's;
    timing several short streams together keeps the clocks' own cost out
    of the figure (time.thread_time_ns costs ~0.6-0.9 us on a VM, a quarter
    of a whole 7-chunk stream of a native parser)."""
    streams = [side.start() for _ in range(k)]
    gc_was = gc.isenabled()
    gc.disable()
    wall, cpu = time.perf_counter_ns, time.thread_time_ns
    try:
        c0, t0 = cpu(), wall()
        for feed, end in streams:
            for c in chunks:
                feed(c)
            end()
        t1, c1 = wall(), cpu()
        return (t1 - t0) / k, (c1 - c0) / k
    finally:
        if gc_was:
            gc.enable()


# streams timed together (run_streams): as many as take about SAMPLE_NS,
# at most MAX_STREAMS (their parsers are all alive at once)
SAMPLE_NS = 200_000
MAX_STREAMS = 32


def streams_per_sample(first_ns: int) -> int:
    """How many streams one timing sample holds, from one stream's time."""
    return max(1, min(MAX_STREAMS, SAMPLE_NS // max(1, first_ns)))


CLOCKS = ("wall", "cpu")


def measure(side: Side, chunks: Sequence[str], policy: Policy,
            clock: str = "wall") -> Tuple[Dict[str, Any], str, List[Tuple[str, str]]]:
    """One collected run (correctness, and warm-up), then timed runs. If the
    collected run alone exceeds the budget (SGLang on a large argument), it
    is the only timing sample. Returns (timings, streamed text, calls); the
    timings' total_ms_* and us_per_chunk_* use `clock`, and both clocks'
    minimum is kept as wall_ms_min / cpu_ms_min."""
    return measure_outputs(side, chunks, policy, clock)[:3]


def measure_outputs(side: Side, chunks: Sequence[str], policy: Policy,
                    clock: str = "wall") -> Tuple[Dict[str, Any], str, List[Tuple[str, str]], List[Any]]:
    """measure(), plus the collected run's output for each chunk."""
    first_w, first_c, outputs = run_stream(side, chunks)
    if side.assemble is not None:
        text, calls = side.assemble(outputs or [])
    elif side.kind == "standalone":
        text, calls = assemble_events(outputs or [])
    else:
        text, calls = assemble_fcp(outputs or [])
    times: List[Tuple[int, int]] = []
    if first_w >= policy.budget * 1e9:
        times.append((first_w, first_c))
        collected = True
    else:
        collected = False
        spent = 0
        k = streams_per_sample(first_w)
        while len(times) < policy.max_reps and (len(times) < policy.min_reps or spent < policy.budget * 1e9):
            w, c = run_streams(side, chunks, k)
            times.append((w, c))
            spent += w * k
    n = max(1, len(chunks))
    sel = [t[CLOCKS.index(clock)] for t in times]
    tmin, tmed = min(sel), statistics.median(sel)
    return {
        "reps": len(times),
        "streams_per_rep": 1 if collected else k,
        "clock": clock,
        "timed_with_collection": collected,
        "total_ms_min": tmin / 1e6,
        "total_ms_median": tmed / 1e6,
        "us_per_chunk_min": tmin / n / 1e3,
        "us_per_chunk_median": tmed / n / 1e3,
        "wall_ms_min": min(t[0] for t in times) / 1e6,
        "cpu_ms_min": min(t[1] for t in times) / 1e6,
    }, text, calls, outputs


def measure_case(side: Side, case: corpus.Case, policy: Policy, clock: str = "wall") -> Dict[str, Any]:
    """measure() plus the comparison with the case's ground truth; an
    exception in a parser is reported, not raised."""
    try:
        stats, text, calls, outputs = measure_outputs(side, case.chunks, policy, clock)
    except Exception as e:  # a detector crashing on the corpus is a result too
        return {"error": "%s: %s" % (type(e).__name__, e)}
    before = args_before_close(side.kind, outputs or [], case)
    if before is not None:
        stats["args_before_close"] = before
    stats["calls"] = compare_calls(calls, case.expected_calls)
    stats["text"] = compare_text(text, case.expected_text)
    stats["n_calls"] = len(calls)
    if stats["calls"] != "ok":
        stats["calls_got"] = [[n, _clip(a)] for n, a in calls]
    if stats["text"] != "ok":
        stats["text_got"] = _clip(text)
    return stats


def args_before_close(kind: str, outputs: Sequence[Any], case: corpus.Case) -> Optional[float]:
    """Share (0..1) of the argument bytes a side had streamed before the
    chunk that carries the end of the case's large argument (its closing
    tag): what a client has received while the model is still writing it.
    None for cases without one large argument."""
    end = corpus.argument_end(case)
    if end is None or not case.expected_calls or kind not in ("standalone", "native", "sglang", "vllm"):
        return None  # the floor streams nothing
    total = len(case.expected_calls[-1][1].encode("utf-8"))
    got, pos = 0, 0
    for chunk, out in zip(case.chunks, outputs):
        pos += len(chunk)
        if pos > end:
            break
        if kind == "standalone":
            got += sum(len(ev.delta.encode("utf-8")) for ev in out if type(ev) is ArgsDelta)
        elif kind == "vllm":  # a ToolParserOutput (vllm_peer.py)
            got += sum(len((d.arguments or "").encode("utf-8")) for d in (out.calls or ()))
        else:
            got += sum(len((it.parameters or "").encode("utf-8")) for it in (out[1] or ()))
    return min(1.0, got / total) if total else None


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _t(res: Dict[str, Any], side: str, key: str = "total_ms_min") -> Optional[float]:
    s = res["sides"].get(side) or {}
    return s.get(key)


# -- the run -----------------------------------------------------------------
def run_bench(
    mode: Mode,
    formats: Optional[Sequence[str]] = None,
    scenarios: Optional[Sequence[str]] = None,
    chunk: int = 4,
    split_markers: bool = False,
    sides: Sequence[str] = SIDES,
    show_progress: bool = True,
    sg: Optional[SGLang] = None,
    log=sys.stderr,
    peer: Any = None,
    oneshot: bool = True,
) -> Dict[str, Any]:
    from .sides import discover_formats

    notes: List[str] = []
    if sg is None:
        sg = SGLang()
    if not sg.ok:
        notes.append("SGLang is not importable (%s): only the standalone native parser is measured." % sg.error)
    fmts = discover_formats(sg)
    rows = list(EXTRA_ROWS)
    if formats:
        wanted = set(formats)
        fmts = [f for f in fmts if wanted & ({f.native_name, f.core, f.builtin or ""} | set(f.aliases))]
        rows = [f for f in rows if wanted & {f.native_name, f.core, f.builtin or "", f.row, f.label}]
        if not fmts and not rows:
            raise SystemExit("no registered format matches %s" % ", ".join(sorted(wanted)))
    for f in fmts:
        if f.aliases:
            notes.append("%s: also registered as %s (same detectors, measured once)." % (f.native_name, ", ".join(f.aliases)))
    keys = list(scenarios) if scenarios else corpus.scenario_keys(mode.name)
    scen = [corpus.make_scenario(k) for k in keys]

    plan: List[Tuple[Format, corpus.Case, List[Side]]] = []
    for f in fmts + rows:
        render = corpus.ROW_RENDERERS[f.row] if f.row else corpus.RENDERERS.get(f.core)
        if render is None:
            notes.append("%s: no corpus renderer for core format %r yet; skipped (add one to "
                         "sglang_toolparse/bench/corpus.py RENDERERS)." % (f.native_name, f.core))
            continue
        side_objs = []
        for kind in sides:
            s = make_side(kind, f, corpus.TOOLS, sg, peer)
            if s is not None:
                side_objs.append(s)
        for sc in scen:
            if f.row and sc.key not in EXTRA_SCENARIOS:
                continue
            plan.append((f, corpus.render_case(sc, f.corpus_key, chunk, render, split_markers), side_objs))

    one_keys = one.scenario_keys(mode.name) if oneshot else []
    one_fmts = [f for f in fmts if f.core in corpus.RENDERERS]
    # and the extra rows SGLang parses through FunctionCallParser (mistral's
    # array, K2 Horizon's json dialect; not JsonArrayParser's, which a
    # non-streaming request does not use)
    one_fmts += [f for f in rows if sg.ok and f.native_name in sg.enum and f.row in corpus.ROW_RENDERERS]
    total = sum(len(s) for _, _, s in plan) + len(one_fmts)
    results: List[Dict[str, Any]] = []
    last_args: Dict[str, Tuple[int, float]] = {}  # format -> (arg bytes, SGLang seconds) of the last args case
    dnf: Dict[str, int] = {}  # capped format -> the smallest argument (bytes) its SGLang side did not finish
    with progress(total, enabled=show_progress) as bar:
        for f, case, side_objs in plan:
            res: Dict[str, Any] = {
                "format": f.label,
                "builtin": f.builtin,
                "core": f.core,
                "scenario": case.key,
                "label": case.scenario.label,
                "bytes": case.n_bytes,
                "arg_bytes": case.scenario.arg_bytes,
                "chunks": len(case.chunks),
                "chunking": ("bursts 20-200" if case.scenario.chunking == "bursts" else "fixed %d" % chunk)
                + ("" if split_markers or f.corpus_key not in corpus.SPECIAL_TOKENS else ", special tokens whole"),
                "sides": {},
            }
            for side in side_objs:
                bar.describe("%s %s %s" % (f.core, case.key, side.kind))
                if side.kind == "sglang" and f.core in capped.CAPPED:
                    res["sides"]["sglang"] = _capped_case(side, case, f.core, mode, dnf.get(f.label))
                    if res["sides"]["sglang"].get("did_not_finish_s") and case.key.startswith("args"):
                        dnf.setdefault(f.label, case.scenario.arg_bytes)
                    bar.update()
                    continue
                if side.kind == "sglang" and case.key.startswith("args") and case.scenario.arg_bytes > PROBE_BYTES \
                        and f.label not in last_args:
                    # nothing smaller was measured: time a 4 KB argument once to estimate from
                    probe = corpus.render_case(corpus.make_scenario("args4k"), f.corpus_key, chunk, None, split_markers)
                    try:
                        st, _, _ = measure(side, probe.chunks, Policy(0.0, 1, 1), mode.clock)
                        last_args[f.label] = (probe.scenario.arg_bytes, st["total_ms_min"] / 1e3)
                    except Exception:
                        pass
                if side.kind == "sglang" and case.key.startswith("args") and f.label in last_args:
                    prev_b, prev_s = last_args[f.label]
                    est = prev_s * (case.scenario.arg_bytes / prev_b) ** 2
                    if est > mode.sglang_limit:
                        res["sides"]["sglang"] = {
                            "skipped": "estimated %.0f s (quadratic from %.1f s at %d B) > limit %.0f s"
                            % (est, prev_s, prev_b, mode.sglang_limit),
                            "estimated_ms": est * 1e3,
                        }
                        bar.update()
                        continue
                policy = mode.slow if side.kind == "sglang" else mode.fast
                res["sides"][side.kind] = measure_case(side, case, policy, mode.clock)
                if side.kind == "sglang" and case.key.startswith("args") and "error" not in res["sides"]["sglang"]:
                    last_args[f.label] = (case.scenario.arg_bytes,
                                          res["sides"]["sglang"]["total_ms_min"] / 1e3)
                bar.update()
            res["ratios"] = {
                "sglang_over_native": _ratio(_t(res, "sglang"), _t(res, "native")),
                "native_over_floor": _ratio(_t(res, "native"), _t(res, "floor")),
                "native_over_standalone": _ratio(_t(res, "native"), _t(res, "standalone")),
                "vllm_over_standalone": _ratio(_t(res, "vllm"), _t(res, "standalone")),
            }
            results.append(res)
        oneshot_rows = []
        for f in one_fmts if one_keys else []:
            oneshot_rows += one.run_oneshot([f], one_keys, sg, peer, mode.fast, mode.clock, bar,
                                            cap=capped.budget(mode.sglang_limit))
            bar.update()

    busy = busy_note(results, mode.clock)
    if busy:
        notes.append(busy)
    normalizer = json_speed.measure(quick=mode.name == "quick")
    return {
        "schema": "sglang_toolparse.bench/1",
        "mode": mode.name,
        "chunk": chunk,
        "split_markers": split_markers,
        "clock": mode.clock,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": environment(sg),
        "formats": [f._asdict() for f in fmts],
        "extra_rows": [dict(f._asdict(), label=f.label) for f in rows],
        "results": results,
        "targets": targets(results, chunk, mode.clock) + one.oneshot_targets(oneshot_rows, mode.clock)
        + json_speed.targets(normalizer),
        "oneshot": oneshot_rows,
        "json_normalizer": normalizer,
        "vllm": _peer_info(peer),
        "notes": notes,
    }


def _capped_case(side: Side, case: corpus.Case, core: str, mode: Mode, dnf_bytes: Optional[int]) -> Dict[str, Any]:
    """A capped SGLang side (capped.CAPPED) on one case: not tried over the
    format's size limit, else measured in a child with a CPU budget; an
    argument case larger than one it did not finish is not tried."""
    cap = capped.budget(mode.sglang_limit)
    over = capped.not_tried(core, case.scenario.arg_bytes)
    if over is not None:
        return over
    if dnf_bytes is not None and case.key.startswith("args") and case.scenario.arg_bytes >= dnf_bytes:
        return capped.did_not_finish(cap, "not tried: a %d B argument did not finish" % dnf_bytes)
    try:
        got = capped.run_capped(lambda: measure_case(side, case, mode.slow, mode.clock), cap)
    except RuntimeError as e:
        return {"error": str(e)}
    return capped.did_not_finish(cap) if got is None else got


def _peer_info(peer: Any) -> Optional[Dict[str, Any]]:
    if peer is None:
        return None
    from .vllm_peer import describe

    return describe(peer)


def busy_note(results: List[Dict[str, Any]], clock: str) -> Optional[str]:
    """A warning when wall time exceeded CPU time noticeably: the process was
    descheduled (a busy machine), which inflates long runs (SGLang's) most."""
    if clock != "wall":
        return None
    worst = None
    for r in results:
        for side, v in r["sides"].items():
            w, c = v.get("wall_ms_min"), v.get("cpu_ms_min")
            if w and c and c > 0.5 and (worst is None or w / c > worst[0]):
                worst = (w / c, "%s %s %s" % (r["format"], r["scenario"], side))
    if worst is None or worst[0] < 1.2:
        return None
    try:
        import os

        load = "load average %.1f on %d CPUs; " % (os.getloadavg()[0], os.cpu_count() or 0)
    except (OSError, AttributeError):
        load = ""
    return ("wall time exceeded CPU time by up to %.0f%% (%s): the machine is busy (%s"
            "long runs are hit most, which favours the native side); see the CPU-clock column, "
            "rerun with --clock cpu, or run on an idle machine." % ((worst[0] - 1) * 100, worst[1], load))


def environment(sg: Optional[SGLang]) -> Dict[str, Any]:
    import os
    import platform

    import sglang_toolparse

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "sglang_toolparse": sglang_toolparse.__version__,
        "sglang": sg.version if sg is not None and sg.ok else None,
        "sglang_error": sg.error if sg is not None else None,
    }


# -- targets -----------------------------------------------------------------
def targets(results: List[Dict[str, Any]], chunk: int, clock: str = "wall") -> List[Dict[str, Any]]:
    """The project's performance targets, per format: reported, not asserted.
    `value` uses the run's clock; `value_wall` and `value_cpu` both clocks."""
    by: Dict[Tuple[str, str], Dict[str, Any]] = {(r["format"], r["scenario"]): r for r in results}
    out: List[Dict[str, Any]] = []

    def add(fmt, name, values, op, threshold, note=""):
        value = values[clock]
        met = None if value is None else (value >= threshold if op == ">=" else value <= threshold)
        out.append({"format": fmt, "target": name, "value": value, "value_wall": values["wall"],
                    "value_cpu": values["cpu"], "op": op, "threshold": threshold, "met": met, "note": note})

    def per_clock(f):
        return {c: f(c + "_ms_min") for c in CLOCKS}

    for fmt in sorted({r["format"] for r in results}, key=[r["format"] for r in results].index):
        r16 = by.get((fmt, "args16k"))
        r64 = by.get((fmt, "args64k"))
        chat = by.get((fmt, "chat"))
        prose = by.get((fmt, "prose2k"))
        not4 = "" if chunk == 4 else "chunk size is not 4"
        if r16 is not None:
            add(fmt, "16 KB argument: SGLang / native",
                per_clock(lambda k: _ratio(_t(r16, "sglang", k), _t(r16, "native", k))), ">=", 1000.0, not4)
        if chat is not None:
            add(fmt, "chat response: SGLang / native",
                per_clock(lambda k: _ratio(_t(chat, "sglang", k), _t(chat, "native", k))), ">=", 20.0, not4)
        if prose is not None:
            add(fmt, "2 KB prose: native / floor",
                per_clock(lambda k: _ratio(_t(prose, "native", k), _t(prose, "floor", k))), "<=", 1.5, not4)
        if r16 is not None and r64 is not None:
            side = "native" if _t(r16, "native") is not None else "standalone"
            add(fmt, "64 KB / 16 KB time (%s)" % side,
                per_clock(lambda k: _ratio(_t(r64, side, k), _t(r16, side, k))), "<=", 4.2,
                "argument ratio %.2f" % (r64["arg_bytes"] / r16["arg_bytes"]))
        fixed = [r for r in results if r["format"] == fmt and r["chunking"].startswith("fixed")]

        def worst_us(k):
            vals = [(_t(r, "standalone", k) * 1e3 / r["chunks"], r["scenario"]) for r in fixed
                    if _t(r, "standalone", k) is not None]
            return max(vals) if vals else None

        w = {c: worst_us(c + "_ms_min") for c in CLOCKS}
        if w[clock] is not None:
            add(fmt, "standalone us per %d-char chunk (worst case)" % chunk, {c: w[c] and w[c][0] for c in CLOCKS},
                "<=", 0.5, "worst: " + w[clock][1] + ("; " + not4 if not4 else ""))
    return out
