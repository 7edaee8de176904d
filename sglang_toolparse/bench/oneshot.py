"""One-shot parsing of a whole response (non-streaming requests), side by
side: each side builds its parser and parses the complete text, as a server
does per request. The table is laid out by report.oneshot_table.

- native:     FunctionCallParser(tools, "<name>_native").parse_non_stream(text),
              with a new list of Tool models for each request (TOOL_LISTS)
- sglang:     the same with the builtin name
- floor:      the same with a detector that reads nothing (has_tool_call
              False, the text back): SGLang's own per-request cost
- standalone: sglang_toolparse.parse(format, text, tools)
- vllm:       vLLM's Rust parser, as vLLM parses a complete response
              (vllm_peer.one_shot), when available for the format

What is timed is that call and what it returns (each side's own result
object); the result is read out for the check against the ground truth
outside the timed part (Side.read).
"""
from __future__ import annotations

import gc
import itertools
import json
import time
from typing import Any, Callable, Dict, List, NamedTuple, Sequence, Tuple

from sglang_toolparse.api import parse as tp_parse

from . import capped, corpus
from .common import Policy, clip, compare_calls, compare_text
from .report import ONESHOT_SIDES

Parse = Callable[[str], Any]  # a side's parse of a whole reply: its own result object
Read = Callable[[Any], Tuple[str, List[Tuple[str, str]]]]


class Side(NamedTuple):
    """A one-shot side: `parse` is what is timed (building the parser and
    parsing the reply, the side's own result returned); `read` turns that
    result into (text, [(name, arguments)]) for the check against the
    ground truth, outside the timed part (a list and a tuple per call are
    not the parser's cost, and a per-call comprehension costs ~0.5 us on
    every side alike)."""
    parse: Parse
    read: Read


def scenario_keys(mode: str) -> List[str]:
    """Replies of a run mode: a chat reply (one call), prose only, 3 calls,
    10 calls, one call with a 16 KB argument (4 KB with --quick)."""
    if mode == "quick":
        return ["chat", "calls10", "args4k"]
    return ["chat", "prose2k", "bursts3", "calls10", "args16k"]


# every request brings its own list of Tool models (parsed from its JSON):
# each parse takes the next of this many lists, more than any per-list cache
# of the parsers holds (64), so nothing is found by the list's identity
TOOL_LISTS = 256


def _fcp_read(res: Any) -> Tuple[str, List[Tuple[str, str]]]:
    normal, calls = res
    return normal or "", [(c.name or "", c.parameters or "") for c in calls]


def _fcp_parse(sg: Any, lists: List[List[Any]], name: str) -> Side:
    FCP = sg.FunctionCallParser
    nxt = itertools.cycle(lists).__next__

    def parse(text: str):
        return FCP(nxt(), name).parse_non_stream(text)

    return Side(parse, _fcp_read)


def _sa_read(r: Any) -> Tuple[str, List[Tuple[str, str]]]:
    return r.text, [(c.name, c.arguments) for c in r.calls]


def _sa_parse(core: str, tools: List[Dict[str, Any]]) -> Side:
    def parse(text: str):
        return tp_parse(core, text, tools)

    return Side(parse, _sa_read)


def make_parsers(fmt: Any, sg: Any, peer: Any) -> Dict[str, Side]:
    out: Dict[str, Side] = {"standalone": _sa_parse(fmt.core, corpus.TOOLS)}
    if sg is not None and sg.ok:
        raw = json.dumps(corpus.TOOLS)
        lists = [sg.tools(json.loads(raw)) for _ in range(TOOL_LISTS)]
        if fmt.native_name in sg.enum:
            out["native"] = _fcp_parse(sg, lists, fmt.native_name)
        if fmt.builtin and fmt.builtin in sg.enum:
            out["sglang"] = _fcp_parse(sg, lists, fmt.builtin)
            out["floor"] = _fcp_parse(sg, lists, sg.oneshot_floor_name(fmt.builtin))
    if peer is not None and peer.supports(fmt.core):
        from . import vllm_peer

        out["vllm"] = Side(*vllm_peer.one_shot(peer, fmt.core, corpus.TOOLS))
    return {k: out[k] for k in ONESHOT_SIDES if k in out}


def time_parse(parse: Parse, text: str, policy: Policy, sample_ns: int = 1_000_000) -> Dict[str, Any]:
    """Min and median per parse over repeats (wall and thread CPU clocks, GC
    off). Each sample times `loops` parses (at least ~1 ms per sample), so
    the clocks' own cost (~2 us for thread_time_ns on a VM) does not bias
    short parses."""
    return time_parses({"": parse}, text, policy, sample_ns)[""]


def _loops(parse: Parse, text: str, sample_ns: int) -> int:
    t0 = time.perf_counter_ns()
    parse(text)
    first = max(1, time.perf_counter_ns() - t0)
    return max(1, min(10_000, sample_ns // first))


def time_parses(parses: Dict[str, Parse], text: str, policy: Policy,
                sample_ns: int = 1_000_000) -> Dict[str, Dict[str, Any]]:
    """time_parse for several sides of one reply, their samples taken in
    turn (a round is one sample of each side), so that a slow phase of a
    shared machine falls on every side alike instead of on whichever side
    was being timed then. Repeats until every side has policy.min_reps
    samples and the rounds have spent policy.budget per side, or
    policy.max_reps rounds. A side whose parse raises is left out of the
    result (its exception is in `errors`)."""
    loops = {k: _loops(p, text, sample_ns) for k, p in parses.items()}
    walls: Dict[str, List[float]] = {k: [] for k in parses}
    cpus: Dict[str, List[float]] = {k: [] for k in parses}
    live = dict(parses)
    errors: Dict[str, BaseException] = {}
    spent = 0
    gc_was = gc.isenabled()
    gc.disable()
    try:
        rounds = 0
        while live and rounds < policy.max_reps and (rounds < policy.min_reps or spent < policy.budget * 1e9 * len(live)):
            rounds += 1
            for k, parse in list(live.items()):
                n = loops[k]
                try:
                    c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
                    for _ in range(n):
                        parse(text)
                    t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
                except Exception as e:  # a parser failing is a result
                    errors[k] = e
                    del live[k]
                    continue
                walls[k].append((t1 - t0) / n)
                cpus[k].append((c1 - c0) / n)
                spent += t1 - t0
    finally:
        if gc_was:
            gc.enable()
    if "" in errors:  # (time_parse: one side, its exception as before)
        raise errors[""]
    out: Dict[str, Dict[str, Any]] = {}
    for k in live:
        w = sorted(walls[k])
        out[k] = {"reps": len(w), "loops": loops[k], "wall_us_min": w[0] / 1e3,
                  "wall_us_median": w[len(w) // 2] / 1e3, "cpu_us_min": min(cpus[k]) / 1e3}
    for k, e in errors.items():
        out[k] = {"error": "%s: %s" % (type(e).__name__, e)}
    return out


def run_oneshot(fmts: Sequence[Any], keys: Sequence[str], sg: Any, peer: Any, policy: Policy,
                clock: str = "wall", bar: Any = None, cap: float = capped.MAX_BUDGET) -> List[Dict[str, Any]]:
    """One row per (format, reply); `fmts` may hold extra rows (sides.EXTRA_ROWS
    with a FunctionCallParser name: their own renderer, no prose reply),
    named by their label. The SGLang side of a format in capped.CAPPED
    runs in a child given `cap` seconds per reply."""
    rows: List[Dict[str, Any]] = []
    for f in fmts:
        render = corpus.ROW_RENDERERS.get(f.row) if f.row else corpus.RENDERERS.get(f.core)
        if render is None:
            continue
        parsers = make_parsers(f, sg, peer)
        for key in keys:
            if f.row and key == "prose2k":  # an extra row's replies have no prose (corpus.render_case)
                continue
            case = corpus.render_case(corpus.make_scenario(key), f.corpus_key, 4, render)
            row: Dict[str, Any] = {"format": f.label, "core": f.core, "scenario": key, "bytes": case.n_bytes,
                                   "arg_bytes": case.scenario.arg_bytes, "sides": {}}
            got: Dict[str, Tuple[str, List[Tuple[str, str]]]] = {}
            stats: Dict[str, Dict[str, Any]] = {}
            for side, (parse, read) in parsers.items():
                if bar is not None:
                    bar.describe("one-shot %s %s %s" % (f.core, key, side))

                def measure(parse=parse, read=read, text=case.text):
                    got_text, got_calls = read(parse(text))
                    return got_text, got_calls, time_parse(parse, text, policy)

                try:
                    if side == "sglang" and f.core in capped.CAPPED:
                        over = capped.not_tried(f.core, case.scenario.arg_bytes)
                        if over is not None:
                            row["sides"][side] = over
                            continue
                        res = capped.run_capped(measure, cap)
                        if res is None:
                            row["sides"][side] = capped.did_not_finish(cap)
                            continue
                        got[side], stats[side] = res[:2], res[2]
                    else:
                        got[side] = read(parse(case.text))
                except Exception as e:  # a parser failing on the corpus is a result
                    row["sides"][side] = {"error": "%s: %s" % (type(e).__name__, e)}
            # the sides timed here, sample by sample in turn (time_parses)
            stats.update(time_parses({k: parsers[k].parse for k in got if k not in stats}, case.text, policy))
            for side in parsers:
                if side not in got:
                    continue
                st = stats[side]
                if "error" in st:
                    row["sides"][side] = st
                    continue
                text, calls = got[side]
                st["us_min"] = st["cpu_us_min"] if clock == "cpu" else st["wall_us_min"]
                if side == "floor":  # reads nothing: no calls to compare
                    row["sides"][side] = st
                    continue
                st["calls"] = compare_calls(calls, case.expected_calls)
                st["text"] = compare_text(text, case.expected_text)
                if st["calls"] != "ok":
                    st["calls_got"] = [[n, clip(a, 120)] for n, a in calls]
                row["sides"][side] = st
            sa = row["sides"].get("standalone", {}).get("us_min")
            row["ratios"] = {k + "_over_standalone": (v["us_min"] / sa if sa and v.get("us_min") else None)
                             for k, v in row["sides"].items() if k not in ("standalone", "floor")}
            row["ratios"]["native_over_sglang"] = _over(row, "native", "sglang", "us_min")
            rows.append(row)
    return rows


def _over(row: Dict[str, Any], a: str, b: str, key: str) -> Any:
    x, y = (row["sides"].get(a) or {}).get(key), (row["sides"].get(b) or {}).get(key)
    return x / y if x and y else None


def oneshot_targets(rows: Sequence[Dict[str, Any]], clock: str = "wall") -> List[Dict[str, Any]]:
    """Issue 24's per-request targets, per format (reported, not asserted):
    through SGLang, building the parser and parsing a chat reply costs at
    most half the builtin's time, and never more than the builtin's at any
    size. A reply whose calls the builtin gets wrong (its `calls` not ok or
    json) gives no baseline: its time is not compared (a chat reply's
    target has no value), and the note names it. Same fields as
    runner.targets()."""
    out: List[Dict[str, Any]] = []
    for fmt in dict.fromkeys(r["format"] for r in rows):
        every = [r for r in rows if r["format"] == fmt]
        mine = [r for r in every if (r["sides"].get("sglang") or {}).get("calls", "ok") in ("ok", "json")]
        wrong = [r["scenario"] for r in every if r not in mine]
        chat = next((r for r in every if r["scenario"] == "chat"), None)
        checks = []
        if chat is not None:
            right = chat in mine
            checks.append(("one-shot chat: native / SGLang", "<=", 0.5,
                           {c: _over(chat, "native", "sglang", c + "_us_min") if right else None
                            for c in ("wall", "cpu")}, "" if right else "not compared (SGLang's calls wrong)"))

        def worst(c: str) -> Any:
            vals = [(_over(r, "native", "sglang", c + "_us_min"), r["scenario"]) for r in mine]
            vals = [v for v in vals if v[0] is not None]
            return max(vals) if vals else None

        w = {c: worst(c) for c in ("wall", "cpu")}
        if w[clock] is not None:
            checks.append(("one-shot, every reply: native / SGLang", "<=", 1.0,
                           {c: w[c] and w[c][0] for c in w}, "worst: " + w[clock][1] +
                           ("; not compared (SGLang's calls wrong): " + ", ".join(wrong) if wrong else "")))
        for name, op, threshold, values, note in checks:
            value = values[clock]
            out.append({"format": fmt, "target": name, "value": value, "value_wall": values["wall"],
                        "value_cpu": values["cpu"], "op": op, "threshold": threshold,
                        "met": None if value is None else value <= threshold, "note": note})
    return out
