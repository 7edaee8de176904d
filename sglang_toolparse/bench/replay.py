"""`bench --input FILE`: replays recorded model outputs through the native
detector and SGLang's, reporting speed and every difference in the calls.

Input: JSONL, one object per line:
  {"format": "qwen25", "text": "...", "tools": [OpenAI tool dicts],
   "id": "optional", "chunks": ["optional recorded chunking"]}
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import corpus
from .progress import progress
from .report import fmt_us, fmt_x, table
from .runner import Mode, assemble_events, assemble_fcp, compare_calls, compare_text, measure
from .sides import SGLang, Side, _core_format


class InputError(ValueError):
    pass


def load_jsonl(path: str) -> List[Dict[str, Any]]:
    records = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise InputError("%s:%d: not JSON: %s" % (path, lineno, e)) from None
            if not isinstance(rec, dict) or not isinstance(rec.get("format"), str) or not isinstance(rec.get("text"), str):
                raise InputError('%s:%d: need an object with "format" and "text" strings' % (path, lineno))
            tools = rec.get("tools")
            if not isinstance(tools, list) or not tools:
                raise InputError('%s:%d: "tools" must be a non-empty list of tool dicts' % (path, lineno))
            rec["tools"] = [_tool_dict(t, path, lineno) for t in tools]
            chunks = rec.get("chunks")
            if chunks is not None:
                if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
                    raise InputError('%s:%d: "chunks" must be a list of strings' % (path, lineno))
                if "".join(chunks) != rec["text"]:
                    raise InputError('%s:%d: "chunks" do not add up to "text"' % (path, lineno))
            rec.setdefault("id", "%s:%d" % (path.rsplit("/", 1)[-1], lineno))
            records.append(rec)
    if not records:
        raise InputError("%s: no records" % path)
    return records


def _tool_dict(t: Any, path: str, lineno: int) -> Dict[str, Any]:
    if isinstance(t, str):
        return {"type": "function", "function": {"name": t, "parameters": {"type": "object", "properties": {}}}}
    if isinstance(t, dict) and isinstance(t.get("function"), dict):
        return {"type": t.get("type", "function"), **{k: v for k, v in t.items() if k != "type"}}
    if isinstance(t, dict) and isinstance(t.get("name"), str):  # a bare function dict
        return {"type": "function", "function": t}
    raise InputError("%s:%d: not a tool: %r" % (path, lineno, t))


def resolve(fmt: str, sg: Optional[SGLang]) -> Tuple[str, Optional[str], str]:
    """(native name, builtin name, core format) for a "format" field."""
    from sglang_toolparse.sglang_plugin import NATIVE_NAMES

    if fmt in NATIVE_NAMES:
        cls, builtin = NATIVE_NAMES[fmt]
        return fmt, builtin, _core_format(fmt, cls, builtin, sg)
    for name, (cls, builtin) in NATIVE_NAMES.items():
        if builtin == fmt:
            return name, builtin, _core_format(name, cls, builtin, sg)
    if fmt + "_native" in NATIVE_NAMES:
        cls, builtin = NATIVE_NAMES[fmt + "_native"]
        return fmt + "_native", builtin, _core_format(fmt + "_native", cls, builtin, sg)
    raise InputError("format %r has no native detector (known: %s)" % (fmt, ", ".join(NATIVE_NAMES)))


def _calls_of_items(items: Sequence[Any]) -> List[Tuple[str, str]]:
    return [(it.name or "", it.parameters or "") for it in items]


def _diff_text(a: str, b: str, width: int = 60) -> str:
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    lo = max(0, i - 20)
    return "at char %d: %r vs %r" % (i, a[lo : i + width], b[lo : i + width])


def replay(records: List[Dict[str, Any]], chunk: int, mode: Mode, sg: SGLang, show_progress: bool = True,
           split_markers: bool = False) -> Dict[str, Any]:
    from sglang_toolparse.api import StreamParser

    from .runner import environment

    notes: List[str] = []
    if not sg.ok:
        notes.append("SGLang is not importable (%s): only the standalone native parser ran; "
                     "nothing to compare against." % sg.error)
    policy_fast = mode.fast._replace(budget=min(mode.fast.budget, 0.1))
    policy_slow = mode.slow._replace(budget=min(mode.slow.budget, 0.5))
    rows: List[Dict[str, Any]] = []
    kinds = ["native", "sglang", "oneshot"] if sg.ok else ["standalone"]
    with progress(len(records) * len(kinds), enabled=show_progress) as bar:
        for rec in records:
            native, builtin, core = resolve(rec["format"], sg)
            tokens = () if split_markers else corpus.SPECIAL_TOKENS.get(core, ())
            chunks = rec.get("chunks") or corpus.fixed_chunks(rec["text"], chunk, tokens)
            row: Dict[str, Any] = {"id": rec["id"], "format": rec["format"], "native": native, "builtin": builtin,
                                   "bytes": len(rec["text"].encode("utf-8")), "chunks": len(chunks),
                                   "chunking": "recorded" if rec.get("chunks") else "fixed %d" % chunk,
                                   "sides": {}, "outputs": {}}
            for kind in kinds:
                bar.describe("%s %s" % (rec["id"], kind))
                try:
                    if kind == "standalone":

                        def start_sa(tools=rec["tools"]):
                            p = StreamParser(core, tools)
                            return p.feed, p.finish

                        stats, text, calls = measure(Side(kind, start_sa), chunks, policy_fast, mode.clock)
                    elif kind == "oneshot":
                        stats, text, calls = _oneshot(sg, rec, builtin, policy_slow)
                    else:
                        name = native if kind == "native" else builtin
                        if name not in sg.enum:
                            raise InputError("%s is not registered in FunctionCallParser" % name)
                        tools = sg.tools(rec["tools"])

                        def start_fcp(tools=tools, name=name):
                            p = sg.FunctionCallParser(tools, name)
                            return p.parse_stream_chunk, p.parse_stream_end

                        stats, text, calls = measure(Side(kind, start_fcp), chunks,
                                                     policy_slow if kind == "sglang" else policy_fast, mode.clock)
                    row["sides"][kind] = stats
                    row["outputs"][kind] = {"text": text, "calls": [list(c) for c in calls]}
                except InputError:
                    raise
                except Exception as e:
                    row["sides"][kind] = {"error": "%s: %s" % (type(e).__name__, e)}
                bar.update()
            row["diffs"] = _diffs(row)
            rows.append(row)
    return {
        "schema": "sglang_toolparse.bench.replay/1",
        "mode": mode.name,
        "chunk": chunk,
        "split_markers": split_markers,
        "clock": mode.clock,
        "environment": environment(sg),
        "records": rows,
        "summary": _summary(rows),
        "notes": notes,
    }


def _oneshot(sg: SGLang, rec: Dict[str, Any], builtin: Optional[str], policy) -> Tuple[Dict[str, Any], str, List[Tuple[str, str]]]:
    import time

    tools = sg.tools(rec["tools"])
    p = sg.FunctionCallParser(tools, builtin)
    t0 = time.perf_counter_ns()
    text, items = p.parse_non_stream(rec["text"])
    dt = time.perf_counter_ns() - t0
    return {"reps": 1, "total_ms_min": dt / 1e6, "total_ms_median": dt / 1e6}, text, _calls_of_items(items)


PAIRS = (("native", "sglang"), ("native", "oneshot"), ("sglang", "oneshot"))


def _diffs(row: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = []
    o = row["outputs"]
    for a, b in PAIRS:
        if a not in o or b not in o:
            continue
        ca = [tuple(c) for c in o[a]["calls"]]
        cb = [tuple(c) for c in o[b]["calls"]]
        calls = compare_calls(ca, cb)
        text = compare_text(o[a]["text"], o[b]["text"])
        d: Dict[str, Any] = {"pair": "%s/%s" % (a, b), "calls": calls, "text": text}
        if calls != "ok":
            d["calls_detail"] = "%d vs %d calls: %s vs %s" % (len(ca), len(cb), _short(ca), _short(cb))
        if text != "ok":
            d["text_detail"] = _diff_text(o[a]["text"], o[b]["text"])
        out.append(d)
    return out


def _short(calls: Sequence[Tuple[str, str]], n: int = 120) -> str:
    s = json.dumps([list(c) for c in calls], ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "..."


def _summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    tot: Dict[str, float] = {}
    chunks = 0
    for r in rows:
        chunks += r["chunks"]
        for k, v in r["sides"].items():
            if "total_ms_min" in v:
                tot[k] = tot.get(k, 0.0) + v["total_ms_min"]
    same: Dict[str, Dict[str, int]] = {}
    for r in rows:
        for d in r["diffs"]:
            s = same.setdefault(d["pair"], {"records": 0, "calls_equal": 0, "calls_json_equal": 0, "text_equal": 0,
                                            "text_ws_equal": 0})
            s["records"] += 1
            s["calls_equal"] += d["calls"] == "ok"
            s["calls_json_equal"] += d["calls"] in ("ok", "json")
            s["text_equal"] += d["text"] == "ok"
            s["text_ws_equal"] += d["text"] in ("ok", "ws")
    speed = tot.get("sglang") / tot["native"] if tot.get("native") and tot.get("sglang") else None
    return {"records": len(rows), "chunks": chunks, "total_ms": tot, "sglang_over_native": speed, "agreement": same}


def print_replay(result: Dict[str, Any], out) -> None:
    rows = result["records"]
    print("Replay of %d recorded outputs, %s chunking (%s mode)" % (
        len(rows), "recorded or fixed %d-char" % result["chunk"], result["mode"]), file=out)
    print("us per chunk (min over runs); oneshot: ms for parse_non_stream of the whole text.", file=out)
    print(file=out)
    sa = any("standalone" in r["sides"] for r in rows)
    headers = ["id", "format", "bytes", "chunks", "standalone" if sa else "native", "sglang", "sglang/native", "oneshot ms",
               "calls n/s", "calls n/o", "text n/s", "text n/o"]
    right = [False, False, True, True, True, True, True, True, False, False, False, False]
    trows = []
    for r in rows:
        s = r["sides"]

        def us(k):
            v = s.get(k) or {}
            return "error" if "error" in v else fmt_us(v.get("us_per_chunk_min"))

        n, g = (s.get("native") or {}).get("total_ms_min"), (s.get("sglang") or {}).get("total_ms_min")
        d = {x["pair"]: x for x in r["diffs"]}
        ns, no = d.get("native/sglang", {}), d.get("native/oneshot", {})
        one = s.get("oneshot") or {}
        trows.append([str(r["id"]), r["format"], str(r["bytes"]), str(r["chunks"]),
                      us("native") if "native" in s else us("standalone"), us("sglang"),
                      fmt_x(g / n if n and g else None),
                      "error" if "error" in one else fmt_us(one.get("total_ms_min")),
                      ns.get("calls", "-"), no.get("calls", "-"), ns.get("text", "-"), no.get("text", "-")])
    print(table(headers, trows, right), file=out)
    sm = result["summary"]
    print(file=out)
    tot = sm["total_ms"]
    print("total: %s" % ", ".join("%s %.2f ms" % (k, v) for k, v in tot.items()), file=out)
    if sm["sglang_over_native"]:
        print("SGLang streaming / native streaming: %s" % fmt_x(sm["sglang_over_native"]), file=out)
    for pair, a in sm["agreement"].items():
        print("%s: calls equal in %d/%d (same JSON in %d), text equal in %d/%d (but for whitespace in %d)" % (
            pair, a["calls_equal"], a["records"], a["calls_json_equal"], a["text_equal"], a["records"],
            a["text_ws_equal"]), file=out)
    diffs = [(r, d) for r in rows for d in r["diffs"] if d["calls"] != "ok" or d["text"] != "ok"]
    errors = [(r, k, v["error"]) for r in rows for k, v in r["sides"].items() if "error" in v]
    if diffs or errors:
        print(file=out)
        print("Differences:", file=out)
        for r, d in diffs:
            if d["calls"] != "ok":
                print("  %s %s calls (%s): %s" % (r["id"], d["pair"], d["calls"], d["calls_detail"]), file=out)
            if d["text"] != "ok":
                print("  %s %s text (%s): %s" % (r["id"], d["pair"], d["text"], d["text_detail"]), file=out)
        for r, k, e in errors:
            print("  %s %s raised %s" % (r["id"], k, e), file=out)
    for n in result["notes"]:
        print("note: " + n, file=out)
