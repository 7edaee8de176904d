"""One-shot parsing of a whole response (non-streaming requests), side by
side: each side builds its parser and parses the complete text, as a server
does per request.

- native:     FunctionCallParser(tools, "<name>_native").parse_non_stream(text)
- sglang:     the same with the builtin name
- standalone: sglang_toolparse.parse(format, text, tools)
- vllm:       vLLM's Rust parser, as vLLM parses a complete response
              (vllm_peer.one_shot), when available for the format
"""
from __future__ import annotations

import gc
import time
from typing import Any, Callable, Dict, List, Sequence, Tuple

from sglang_toolparse.api import parse as tp_parse

from . import corpus
from .runner import Policy, _clip, compare_calls, compare_text

ONESHOT_SIDES = ("native", "sglang", "standalone", "vllm")
Parse = Callable[[str], Tuple[str, List[Tuple[str, str]]]]


def scenario_keys(mode: str) -> List[str]:
    return ["chat", "args4k"] if mode == "quick" else ["chat", "args16k"]


def _fcp_parse(sg: Any, tools: List[Any], name: str) -> Parse:
    FCP = sg.FunctionCallParser

    def parse(text: str):
        normal, calls = FCP(tools, name).parse_non_stream(text)
        return normal or "", [(c.name or "", c.parameters or "") for c in calls]

    return parse


def _sa_parse(core: str, tools: List[Dict[str, Any]]) -> Parse:
    def parse(text: str):
        r = tp_parse(core, text, tools)
        return r.text, [(c.name, c.arguments) for c in r.calls]

    return parse


def make_parsers(fmt: Any, sg: Any, peer: Any) -> Dict[str, Parse]:
    out: Dict[str, Parse] = {"standalone": _sa_parse(fmt.core, corpus.TOOLS)}
    if sg is not None and sg.ok:
        sg_tools = sg.tools(corpus.TOOLS)
        if fmt.native_name in sg.enum:
            out["native"] = _fcp_parse(sg, sg_tools, fmt.native_name)
        if fmt.builtin and fmt.builtin in sg.enum:
            out["sglang"] = _fcp_parse(sg, sg_tools, fmt.builtin)
    if peer is not None and peer.supports(fmt.core):
        from . import vllm_peer

        out["vllm"] = vllm_peer.one_shot(peer, fmt.core, corpus.TOOLS)
    return {k: out[k] for k in ONESHOT_SIDES if k in out}


def time_parse(parse: Parse, text: str, policy: Policy, sample_ns: int = 1_000_000) -> Dict[str, Any]:
    """Min and median per parse over repeats (wall and thread CPU clocks, GC
    off). Each sample times `loops` parses (at least ~1 ms per sample), so
    the clocks' own cost (~2 us for thread_time_ns on a VM) does not bias
    short parses."""
    t0 = time.perf_counter_ns()
    parse(text)
    first = max(1, time.perf_counter_ns() - t0)
    loops = max(1, min(10_000, sample_ns // first))
    walls: List[float] = []
    cpus: List[float] = []
    spent = 0
    gc_was = gc.isenabled()
    gc.disable()
    try:
        while len(walls) < policy.max_reps and (len(walls) < policy.min_reps or spent < policy.budget * 1e9):
            c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
            for _ in range(loops):
                parse(text)
            t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
            walls.append((t1 - t0) / loops)
            cpus.append((c1 - c0) / loops)
            spent += t1 - t0
    finally:
        if gc_was:
            gc.enable()
    walls.sort()
    return {"reps": len(walls), "loops": loops, "wall_us_min": walls[0] / 1e3,
            "wall_us_median": walls[len(walls) // 2] / 1e3, "cpu_us_min": min(cpus) / 1e3}


def run_oneshot(fmts: Sequence[Any], keys: Sequence[str], sg: Any, peer: Any, policy: Policy,
                clock: str = "wall", bar: Any = None) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for f in fmts:
        render = corpus.RENDERERS.get(f.core)
        if render is None:
            continue
        parsers = make_parsers(f, sg, peer)
        for key in keys:
            case = corpus.render_case(corpus.make_scenario(key), f.core, 4, render)
            row: Dict[str, Any] = {"format": f.native_name, "core": f.core, "scenario": key, "bytes": case.n_bytes,
                                   "arg_bytes": case.scenario.arg_bytes, "sides": {}}
            for side, parse in parsers.items():
                if bar is not None:
                    bar.describe("one-shot %s %s %s" % (f.core, key, side))
                try:
                    text, calls = parse(case.text)
                    st = time_parse(parse, case.text, policy)
                except Exception as e:  # a parser failing on the corpus is a result
                    row["sides"][side] = {"error": "%s: %s" % (type(e).__name__, e)}
                    continue
                st["us_min"] = st["cpu_us_min"] if clock == "cpu" else st["wall_us_min"]
                st["calls"] = compare_calls(calls, case.expected_calls)
                st["text"] = compare_text(text, case.expected_text)
                if st["calls"] != "ok":
                    st["calls_got"] = [[n, _clip(a, 120)] for n, a in calls]
                row["sides"][side] = st
            sa = row["sides"].get("standalone", {}).get("us_min")
            row["ratios"] = {k + "_over_standalone": (v["us_min"] / sa if sa and v.get("us_min") else None)
                             for k, v in row["sides"].items() if k != "standalone"}
            rows.append(row)
    return rows


def oneshot_table(rows: Sequence[Dict[str, Any]]) -> str:
    from .report import fmt_us, fmt_x, table

    present = [s for s in ONESHOT_SIDES if any(s in r["sides"] for r in rows)]
    headers = ["format", "scenario", "bytes"] + ["%s us" % s for s in present] + \
        ["%s/standalone" % s for s in present if s != "standalone"] + ["calls " + "/".join(present)]
    right = [False, False, True] + [True] * (2 * len(present) - 1) + [False]
    out = []
    for r in rows:
        cells = [r["format"], r["scenario"], str(r["bytes"])]
        for s in present:
            v = r["sides"].get(s)
            cells.append("-" if v is None else "error" if v.get("error") else fmt_us(v["us_min"]))
        for s in present:
            if s != "standalone":
                cells.append(fmt_x(r["ratios"].get(s + "_over_standalone")))
        cells.append("/".join((r["sides"].get(s) or {}).get("calls", "err" if (r["sides"].get(s) or {}).get("error")
                                                                 else "-") for s in present))
        out.append(cells)
    return table(headers, out, right)
