"""Table and PNG of the serving benchmark (serving_load.py)."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from .report import fmt_x, table


def _ms(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return "%.0f" % v if v >= 100 else "%.1f" % v


def _s(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return "%.2f" % v if v < 10 else "%.1f" % v


def serving_table(report: Dict[str, Any]) -> str:
    headers = ["format", "large stream", "side", "parser", "in flight s", "CPU ms", "items", "chars/item",
               "gap p50 ms", "p99", "max", "p99/base", "calls"]
    right = [False, False, False, False, True, True, True, True, True, True, True, True, False]
    rows: List[List[str]] = []
    for r in report["results"]:
        what = "%d KB call" % r["size_kib"] if r["kind"] == "tool" else "prose (baseline)"
        g = r["gaps"]
        rows.append([
            r["format"], what, r["side"], r["parser"], _s(r["in_flight_s"]), _ms(r["big_cpu_s"] * 1e3),
            str(r["deliveries"]), "%.0f" % (r["chars_per_delivery"] or 0),
            _ms(g["p50_ms"]), _ms(g["p99_ms"]), _ms(g["max_ms"]),
            fmt_x(r.get("p99_over_baseline")) if r["kind"] == "tool" else "",
            r.get("calls", "-") if r["kind"] == "tool" else "",
        ])
    return table(headers, rows, right)


def cpu_ratios(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """SGLang's CPU seconds over the native parser's, per format and size."""
    by = {(r["format"], r["size_kib"], r["side"]): r for r in report["results"] if r["kind"] == "tool"}
    out = []
    for (fmt, kib, side), r in by.items():
        if side != "native":
            continue
        s = by.get((fmt, kib, "sglang"))
        if s is None:
            continue
        out.append({"format": fmt, "size_kib": kib, "sglang_cpu_s": s["big_cpu_s"], "native_cpu_s": r["big_cpu_s"],
                    "ratio": s["big_cpu_s"] / r["big_cpu_s"] if r["big_cpu_s"] else None,
                    "sglang_p99_ms": s["gaps"]["p99_ms"], "native_p99_ms": r["gaps"]["p99_ms"],
                    "sglang_capped": s.get("capped", False)})
    return out


def print_serving(report: Dict[str, Any], out) -> None:
    env, cfg = report["environment"], report["config"]
    print("sglang-toolparse %s serving benchmark: SGLang %s OpenAIServingChat (stub tokenizer manager, no model), "
          "Python %s, %s CPUs%s" % (
              env["sglang_toolparse"], env["sglang"], env["python"], env["cpus"],
              ", load average %.1f" % env["loadavg"][0] if env.get("loadavg") else ""), file=out)
    print("%d concurrent streaming requests on one event loop; a decode step every %g ms: %d prose streams get "
          "1 token per step, the large stream %d (4-char tokens, special tokens whole); %s streaming output."
          % (cfg["streams"], cfg["step_ms"], cfg["streams"] - 1, cfg["tool_tokens_per_step"],
             "incremental" if cfg["incremental"] else "cumulative (SGLang's default)"), file=out)
    print("in flight = first to last chunk of the large stream; CPU ms = event-loop CPU spent on the large stream's "
          "response (parser + SGLang's chunk handling and SSE); items = model outputs handed to the serving layer "
          "(coalesced when the loop falls behind); gap = time between consecutive chunks received by the other "
          "streams' clients while the large stream is in flight; p99/base = that p99 over the baseline's.", file=out)
    print(file=out)
    print(table_with_ratios(report), file=out)
    if report["targets"]:
        print(file=out)
        print("Target (reported, not asserted):", file=out)
        for t in report["targets"]:
            status = "n/a" if t["met"] is None else "met" if t["met"] else "MISSED (%.2fx the limit)" % (
                t["value"] / t["threshold"])
            print("  %-12s %s: %s (goal <= %.1fx) %s" % (t["format"], t["target"], fmt_x(t["value"]),
                                                          t["threshold"], status), file=out)
    for n in report["notes"]:
        print("note: " + n, file=out)


def table_with_ratios(report: Dict[str, Any]) -> str:
    parts = [serving_table(report)]
    ratios = cpu_ratios(report)
    if ratios:
        rows = [[r["format"], "%d KB" % r["size_kib"],
                 _ms(r["sglang_cpu_s"] * 1e3) + (" (capped)" if r["sglang_capped"] else ""),
                 _ms(r["native_cpu_s"] * 1e3), fmt_x(r["ratio"]), _ms(r["sglang_p99_ms"]), _ms(r["native_p99_ms"])]
                for r in ratios]
        parts.append("")
        parts.append(table(["format", "tool call", "CPU ms sglang", "CPU ms native", "sglang/native",
                            "others' p99 gap ms sglang", "native"], rows,
                           [False, False, True, True, True, True, True]))
    return "\n".join(parts)


def write_png(report: Dict[str, Any], path: str) -> Optional[str]:
    """Gap over time of the other streams (max per time bin), one panel per
    format and tool-call size: builtin vs native, baselines dashed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    tl = report.get("timelines") or {}
    fmts = list(dict.fromkeys(r["format"] for r in report["results"]))
    sizes = sorted({r["size_kib"] for r in report["results"] if r["kind"] == "tool"})
    if not fmts or not sizes:
        return None
    fig, axes = plt.subplots(len(fmts), len(sizes), figsize=(5.5 * len(sizes), 2.6 * len(fmts) + 0.6),
                             squeeze=False, sharey=True)
    styles = {"sglang": ("C3", "SGLang builtin"), "native": ("C0", "native")}
    for i, fmt in enumerate(fmts):
        for j, kib in enumerate(sizes):
            ax = axes[i][j]
            for side, (color, label) in styles.items():
                pts = tl.get("%s|%s|%s" % (fmt, kib, side)) or []
                if pts:
                    ax.plot([p[0] / 1e3 for p in pts], [p[1] for p in pts], "-", color=color, lw=1.2,
                            label="%s, with the tool call" % label)
                base = tl.get("%s|0|%s" % (fmt, side)) or []
                if base:
                    ax.plot([p[0] / 1e3 for p in base], [p[1] for p in base], ":", color=color, lw=0.9,
                            label="%s, baseline (prose)" % label)
            ax.set_yscale("log")
            ax.set_title("%s, %d KB write_file call" % (fmt, kib), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("max gap per bin (ms)", fontsize=8)
            if i == len(fmts) - 1:
                ax.set_xlabel("time since the large stream started (s)", fontsize=8)
            if i == 0 and j == len(sizes) - 1:
                ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    cfg = report["config"]
    fig.suptitle("Other streams' inter-chunk gap while one stream carries a tool call (%d streams, %g ms steps)"
                 % (cfg["streams"], cfg["step_ms"]), fontsize=10)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def print_agent(section: Dict[str, Any], out) -> None:
    """The agent scenario (serving_agent.py)."""
    from .serving_agent import agent_tables

    print(file=out)
    print("Agent scenario (%s): one streaming prose reply, %d tools declared, a history of rounds of user message, "
          "assistant tool call and tool result. µs/chunk = marginal event-loop CPU per 4-char chunk, (CPU of a "
          "%d-chunk reply - CPU of a %d-chunk one) / %d, median of %d; /no tools = over the same request without "
          "tools. Sides: sglang = %s (SGLang's detector), native = %s with the serving hooks bypassed, "
          "native+hooks = %s with them (installed: %s)."
          % (section["format"], section["tools"], section["chunks"][1], section["chunks"][0],
             section["chunks"][1] - section["chunks"][0], section["repeats"], section["builtin"], section["native"],
             section["native"], "yes" if section["hooks_installed"] else "NO"), file=out)
    print(file=out)
    print(agent_tables(section), file=out)
    if section["targets"]:
        print(file=out)
        print("Targets (issue 19, native+hooks; reported, not asserted):", file=out)
        for t in section["targets"]:
            v = t["value"]
            status = "n/a" if t["met"] is None else "met" if t["met"] else "MISSED"
            print("  %s: %s (goal %s %.1fx) %s" % (t["target"], "-" if v is None else "%.2fx" % v, t["op"],
                                                   t["threshold"], status), file=out)
    ld = {(d["size_kib"], d["side"]): d for d in section.get("large_calls", [])}
    for kib in sorted({k for k, _ in ld}):
        s, h = ld.get((kib, "sglang")), ld.get((kib, "native+hooks"))
        if s and h and s.get("deliveries") and h.get("deliveries") and h["big_cpu_s"]:
            ps, ph = s["big_cpu_s"] / s["deliveries"], h["big_cpu_s"] / h["deliveries"]
            print("  (%d KB call per delivery: SGLang %.0f µs, native+hooks %.1f µs, %.1fx; deliveries %d vs %d: a "
                  "loop that falls behind gets fewer, larger ones)"
                  % (kib, ps * 1e6, ph * 1e6, ps / ph if ph else float("nan"), s["deliveries"], h["deliveries"]),
                  file=out)
