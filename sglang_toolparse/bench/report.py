"""Printing the tables, writing JSON and the optional PNG."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence


def fmt_us(v: Optional[float]) -> str:
    if v is None:
        return "-"
    if v >= 1000:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_x(v: Optional[float]) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return "%.0fx" % v
    if v >= 10:
        return "%.1fx" % v
    return "%.2fx" % v


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


# the one-shot table's sides, in column order (oneshot.py measures them)
ONESHOT_SIDES = ("native", "sglang", "floor", "standalone", "vllm")


def oneshot_table(rows: Sequence[Dict[str, Any]]) -> str:
    """One row per (format, reply): us per reply for each side, native over
    the builtin (issue 24's target), each side over the standalone parse(),
    and each side's calls against the ground truth."""
    present = [s for s in ONESHOT_SIDES if any(s in r["sides"] for r in rows)]
    both = "native" in present and "sglang" in present
    headers = ["format", "scenario", "bytes"] + ["%s us" % s for s in present] + \
        (["native/sglang"] if both else []) + \
        ["%s/standalone" % s for s in present if s not in ("standalone", "floor")] + \
        ["calls " + "/".join(s for s in present if s != "floor")]
    right = [False, False, True] + [True] * (len(headers) - 4) + [False]
    out = []
    for r in rows:
        cells = [r["format"], r["scenario"], str(r["bytes"])]
        for s in present:
            v = r["sides"].get(s)
            cells.append("-" if v is None else "error" if v.get("error") else
                         v["capped"] if v.get("capped") else fmt_us(v["us_min"]))
        if both:
            cells.append(fmt_x(r["ratios"].get("native_over_sglang")))
        for s in present:
            if s not in ("standalone", "floor"):
                cells.append(fmt_x(r["ratios"].get(s + "_over_standalone")))
        cells.append("/".join((r["sides"].get(s) or {}).get("calls", "err" if (r["sides"].get(s) or {}).get("error")
                                                                 else "-") for s in present if s != "floor"))
        out.append(cells)
    return table(headers, out, right)


def _side_cell(side: Optional[Dict[str, Any]], key: str = "us_per_chunk_min") -> str:
    if not side:
        return "-"
    if side.get("capped"):  # "dnf 30s" or "not tried" (bench/capped.py)
        return side["capped"]
    if side.get("skipped"):
        return "skip"
    if side.get("error"):
        return "error"
    return fmt_us(side.get(key))


def _ok(side: Optional[Dict[str, Any]], key: str) -> str:
    if not side or side.get("skipped"):
        return "-"
    if side.get("error"):
        return "err"
    return side.get(key) or "-"


def _pct(side: Optional[Dict[str, Any]]) -> str:
    """Share of a large argument streamed before its closing tag arrived."""
    v = side.get("args_before_close") if side else None
    return "-" if v is None else "%.0f%%" % (100 * v)


def bench_table(report: Dict[str, Any]) -> str:
    headers = ["format", "scenario", "bytes", "chunks", "native", "sglang", "floor", "standalone",
               "sglang/native", "native/floor", "calls nat/sgl/sa", "text nat/sgl/sa", "args before close nat/sgl"]
    right = [False, False, True, True, True, True, True, True, True, True, False, False, False]
    # vLLM's Rust parser (optional side): its us per chunk and its time over
    # the standalone parser's after `standalone`, its calls/text at the end
    vllm = any("vllm" in r["sides"] for r in report["results"])
    if vllm:
        headers = headers[:8] + ["vllm", "vllm/standalone"] + headers[8:] + ["vllm calls/text"]
        right = right[:8] + [True, True] + right[8:] + [False]
    rows = []
    for r in report["results"]:
        s = r["sides"]
        row = [
            r["format"], r["scenario"], str(r["bytes"]), str(r["chunks"]),
            _side_cell(s.get("native")), _side_cell(s.get("sglang")), _side_cell(s.get("floor")),
            _side_cell(s.get("standalone")),
            fmt_x(r["ratios"]["sglang_over_native"]), fmt_x(r["ratios"]["native_over_floor"]),
            "/".join(_ok(s.get(k), "calls") for k in ("native", "sglang", "standalone")),
            "/".join(_ok(s.get(k), "text") for k in ("native", "sglang", "standalone")),
            "/".join(_pct(s.get(k)) for k in ("native", "sglang")),
        ]
        if vllm:
            v = s.get("vllm")
            row = row[:8] + [_side_cell(v), fmt_x(r["ratios"].get("vllm_over_standalone"))] + row[8:] + [
                "%s/%s" % (_ok(v, "calls"), _ok(v, "text")) if v else ""]
        rows.append(row)
    return table(headers, rows, right)


def targets_table(report: Dict[str, Any]) -> str:
    clock = report.get("clock", "wall")
    other = "cpu" if clock == "wall" else "wall"
    rows = []
    for t in report["targets"]:
        v = t["value"]
        f = fmt_us if t["target"].startswith(("standalone us", "ns per byte")) else fmt_x
        val, goal = f(v), "%s %s" % (t["op"], f(t["threshold"]))
        if t["met"] is None:
            status = "n/a"
        elif t["met"]:
            status = "met"
        elif t["op"] == ">=":  # the fraction of the goal reached
            status = "MISSED (%.2f of goal)" % (v / t["threshold"])
        else:  # how far over the limit
            status = "MISSED (%.2fx the limit)" % (v / t["threshold"])
        rows.append([t["format"], t["target"], val, goal, status, f(t.get("value_" + other)), t.get("note") or ""])
    return table(["format", "target", "value", "goal", "status", "%s clock" % other, "note"], rows,
                 [False, False, True, True, False, True, False])


def normalizer_line(res: Dict[str, Dict[str, Any]]) -> str:
    """The JSON normalizer's line (json_speed.measure's result): each
    document's ns per byte, min and median of the runs."""
    return "JSON normalizer alone (in C, CPU clock, min / median of %d runs): %s; target <= %.1f ns/byte." % (
        max((r["runs"] for r in res.values()), default=0),
        "; ".join("%s %d B: %.2f / %.2f ns/byte" % (label, r["bytes"], r["ns_per_byte_min"], r["ns_per_byte_median"])
                  for label, r in res.items()),
        max((r["target_ns_per_byte"] for r in res.values()), default=0))


def print_bench(report: Dict[str, Any], out) -> None:
    env = report["environment"]
    print("sglang-toolparse %s benchmark (%s mode), Python %s, SGLang %s, %s CPUs" % (
        env["sglang_toolparse"], report["mode"], env["python"], env["sglang"] or "not available", env["cpus"]), file=out)
    print("us per chunk (min over runs, several short streams per clock read, %s clock); chunks of %d chars except bursts3 (20-200)%s." % (
        "wall" if report.get("clock", "wall") == "wall" else "CPU", report["chunk"],
        "" if report.get("split_markers") else ", special tokens (<tool_call>, ...) never split"), file=out)
    print("native = <name>_native through FunctionCallParser.parse_stream_chunk; sglang = the builtin detector; "
          "floor = a detector returning an empty result; standalone = StreamParser.feed.", file=out)
    print("args before close: share of a large argument a client has received before the chunk that "
          "carries its closing tag.", file=out)
    print("calls/text: ok = equal to the ground truth, json = same decoded arguments, "
          "ws = equal but for surrounding whitespace, diff = different.", file=out)
    print(file=out)
    print(bench_table(report), file=out)
    skipped = [(r["format"], r["scenario"], side, v["skipped"]) for r in report["results"]
               for side, v in r["sides"].items() if v.get("skipped")]
    if skipped:
        print(file=out)
        for fmt, sc, side, why in skipped:
            print("skipped %s %s %s: %s" % (fmt, sc, side, why), file=out)
    if report["targets"]:
        print(file=out)
        print("Targets (reported, not asserted):", file=out)
        print(targets_table(report), file=out)
    if report.get("oneshot"):
        print(file=out)
        print("One-shot (build the parser and parse the whole reply, as a server does per request; us, min over "
              "runs, %s clock): native/sglang = FunctionCallParser(tools, name).parse_non_stream(text), "
              "floor = the same with a detector that reads nothing (SGLang's own per-request cost), "
              "standalone = sglang_toolparse.parse, vllm = vLLM's Rust parser as vLLM parses a complete reply:"
              % ("wall" if report.get("clock", "wall") == "wall" else "CPU"), file=out)
        print(oneshot_table(report["oneshot"]), file=out)
    if report.get("json_normalizer"):
        print(file=out)
        print(normalizer_line(report["json_normalizer"]), file=out)
    vinfo = report.get("vllm")
    if vinfo is not None:
        if vinfo.get("available"):
            print("note: vLLM's Rust tool parser: %s (formats here: %s)" % (
                vinfo["path"], ", ".join(vinfo["formats"]) or "none"), file=out)
        else:
            print("note: vLLM's Rust tool parser not measured: %s" % vinfo["error"], file=out)
    for n in report["notes"]:
        print("note: " + n, file=out)


def write_json(report: Dict[str, Any], path: str) -> str:
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return path


def write_png(report: Dict[str, Any], path: str) -> Optional[str]:
    """Time per stream against argument length, log-log, native vs SGLang.
    None if matplotlib is not installed or there is nothing to plot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    series: Dict[str, Dict[str, List[Any]]] = {}
    builtin = {r["format"]: r.get("builtin") or r["format"] for r in report["results"]}
    for r in report["results"]:
        if not r["scenario"].startswith("args"):
            continue
        for side in ("native", "sglang", "standalone"):
            v = r["sides"].get(side) or {}
            if v.get("total_ms_min") is None:
                continue
            s = series.setdefault("%s|%s" % (r["format"], side), {"x": [], "y": []})
            s["x"].append(r["arg_bytes"])
            s["y"].append(v["total_ms_min"])
    if not series:
        return None
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(11, 6.5))
    styles = {"native": "-o", "sglang": "--s", "standalone": ":^"}
    names = {"native": "native, via FunctionCallParser", "sglang": "SGLang builtin",
             "standalone": "native standalone StreamParser"}
    fmts = list(dict.fromkeys(k.split("|")[0] for k in series))
    colors = {f: "C%d" % (i % 10) for i, f in enumerate(fmts)}
    for key, s in series.items():
        fmt, side = key.split("|")
        ax.plot(s["x"], s["y"], styles[side], color=colors[fmt], markersize=4)
    # one colour per format, one line style per side
    fmt_handles = [Line2D([], [], color=colors[f], lw=2, label="%s / %s" % (f, builtin[f])) for f in fmts]
    side_handles = [Line2D([], [], color="k", linestyle=styles[k][:-1], marker=styles[k][-1], label=names[k])
                    for k in styles]
    leg = ax.legend(handles=fmt_handles, title="format (native / builtin)", fontsize=8,
                    loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.add_artist(leg)
    ax.legend(handles=side_handles, title="side", fontsize=8, loc="lower left", bbox_to_anchor=(1.01, 0.0))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("argument length (bytes of JSON)")
    ax.set_ylabel("time per stream (ms, %d-char chunks, %s clock)" % (report["chunk"], report.get("clock", "wall")))
    ax.set_title("Streaming tool-call parsing: native vs SGLang")
    ax.grid(True, which="both", alpha=0.3)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
