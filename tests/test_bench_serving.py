"""`python -m sglang_toolparse bench --serving` (sglang_toolparse/bench/serving_*.py).

The paced stub model is checked in process (coalescing as SGLang's
TokenizerManager does, every token delivered once, the end marked); the CLI
runs tiny in a subprocess and its table and JSON are checked. No timing is
asserted.
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
import types

import pytest

from sglang_toolparse.bench import serving_load as sl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_gap_stats_percentiles():
    g = sl.gap_stats([float(i) for i in range(1, 101)])
    assert (g["n"], g["p50_ms"], g["p99_ms"], g["max_ms"]) == (100, 50.0, 99.0, 100.0)
    assert sl.gap_stats([])["p99_ms"] is None
    assert sl.gap_stats([3.0])["p50_ms"] == 3.0


def test_timeline_keeps_the_max_gap_per_bin():
    pts = [(1.0, 5.0), (2.0, 50.0), (9.0, 7.0), (10.0, 6.0)]
    tl = sl._bin_timeline(pts, 2)
    assert [g for _, g in tl] == [50.0, 7.0]
    assert sl._bin_timeline([], 10) == []


def _stub():
    pytest.importorskip("sglang")
    pytest.importorskip("openai")
    from sglang_toolparse.bench import serving_stub
    from sglang_toolparse.bench.sides import SGLang

    assert SGLang().ok  # registers the native detectors, as the bench does

    return serving_stub


@pytest.mark.parametrize("incremental", [False, True])
def test_paced_model_coalesces_what_a_late_reader_missed(incremental):
    """A reader that falls behind gets everything produced meanwhile in one
    item (cumulative text, or the increment with
    --incremental-streaming-output); nothing is lost or repeated, the last
    item is marked finished, and the measured stream's serving time is
    accounted."""
    stub = _stub()
    sa = stub.server_args("qwen25_native", incremental=incremental)
    tm = sl.paced_tokenizer_manager(sa, 0.001)
    tokens = ["t%02d." % i for i in range(60)]
    tm.scripts["big"] = sl.Script(tokens, 0, 1, True)

    async def read():
        tm.t0 = asyncio.get_running_loop().time()
        items = []
        async for item in tm.generate_request(types.SimpleNamespace(rid="big", stream=True)):
            items.append(item)
            time.sleep(0.004)  # a busy event loop: ~4 steps pass per item
        return items

    items = asyncio.run(read())
    texts = [it["text"] for it in items]
    full = "".join(tokens)
    if incremental:
        assert "".join(texts) == full
    else:
        assert texts[-1] == full
        assert all(b.startswith(a) for a, b in zip(texts, texts[1:]))
    assert len(items) < len(tokens) // 2, "a late reader must get coalesced items"
    assert [it["meta_info"]["finish_reason"] is not None for it in items] == [False] * (len(items) - 1) + [True]
    assert tm.deliveries == len(items) and tm.chars_sent == len(full)
    assert tm.cpu_ns > 0


def test_endless_prose_stream_ends_when_the_large_stream_is_done():
    stub = _stub()
    tm = sl.paced_tokenizer_manager(stub.server_args("qwen25_native"), 0.001)
    tm.scripts["p"] = sl.Script(None, 0, 2, False)

    async def read():
        tm.big_done = asyncio.Event()
        tm.t0 = asyncio.get_running_loop().time()
        items = []
        async for item in tm.generate_request(types.SimpleNamespace(rid="p", stream=True)):
            items.append(item)
            if len(items) == 5:
                tm.big_done.set()
        return items

    items = asyncio.run(read())
    assert len(items) == 6  # the sixth carries the finish
    assert items[-1]["meta_info"]["finish_reason"] is not None
    assert items[-1]["text"].startswith(items[0]["text"])


def test_check_tool_response_reads_the_sse_like_a_client():
    stub = _stub()
    from sglang_toolparse.bench import corpus

    toks, expected = sl.tool_tokens("qwen25", 1)
    sa = stub.server_args("qwen25_native")
    body = stub.serve(sa, toks, corpus.TOOLS, stream=True)
    assert sl.check_tool_response(body, expected)["calls"] == "ok"
    wrong = [(expected[0][0], expected[0][1].replace("src/", "lib/"))]
    assert sl.check_tool_response(body, wrong)["calls"] == "diff"
    assert sl.check_tool_response("data: {not json\n\n", expected)["calls"] == "diff"


HAVE_SGLANG = importlib.util.find_spec("sglang") is not None or os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1"


@pytest.mark.skipif(not HAVE_SGLANG, reason="SGLang not installed")
def test_serving_cli_tiny_run(tmp_path):
    out = tmp_path / "serving.json"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "sglang_toolparse", "bench", "--serving", "--quick", "--formats",
                        "qwen25", "--sizes", "1", "--streams", "3", "--no-progress", "--no-agent", "--json", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "p99/base" in p.stdout and "qwen25_native" in p.stdout
    rep = json.loads(out.read_text())
    assert rep["schema"] == "sglang_toolparse.bench.serving/1"
    assert rep["config"]["streams"] == 3 and rep["config"]["sizes_kib"] == [1]
    rows = {(r["kind"], r["side"]): r for r in rep["results"]}
    assert set(rows) == {("baseline", "sglang"), ("baseline", "native"), ("tool", "sglang"), ("tool", "native")}
    for (kind, side), r in rows.items():
        assert r["parser"] == ("qwen25" if side == "sglang" else "qwen25_native")
        assert r["gaps"]["n"] > 0 and r["gaps"]["p50_ms"] <= r["gaps"]["p99_ms"] <= r["gaps"]["max_ms"]
        assert r["big_cpu_s"] > 0 and r["deliveries"] > 0
        assert r["chars_streamed"] == r["chars_total"] and not r["capped"]
    assert rows[("tool", "native")]["calls"] == "ok"
    assert rows[("tool", "native")]["finish_reason"] == "tool_calls"
    assert rows[("tool", "sglang")]["calls"] in ("ok", "json", "diff")
    assert rows[("tool", "native")]["p99_over_baseline"] is not None
    assert [t["format"] for t in rep["targets"]] == ["qwen25"]
    assert set(rep["timelines"]) == {"qwen25|0|sglang", "qwen25|0|native", "qwen25|1|sglang", "qwen25|1|native"}
    png = tmp_path / "serving.png"
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.exists() and png.stat().st_size > 1000


def test_serving_cli_rejects_bad_options():
    from sglang_toolparse.bench import serving_cli

    with pytest.raises(SystemExit):
        serving_cli.main(["--streams", "1"])


@pytest.mark.skipif(not HAVE_SGLANG, reason="SGLang not installed")
def test_builtin_limit_stops_the_builtin_tool_call_and_says_so():
    """--builtin-limit: a builtin tool-call run still in flight is stopped,
    marked capped with the part streamed, and noted; baselines and the
    native side are never stopped."""
    _stub()
    cfg = sl.LoadConfig(streams=2, sizes_kib=(4,), warmup_steps=2, builtin_limit_s=0.05)
    rep = sl.run_serving(cfg, ["qwen25"], show_progress=False)
    rows = {(r["kind"], r["side"]): r for r in rep["results"]}
    capped = rows[("tool", "sglang")]
    assert capped["capped"] and capped["calls"] == "capped"
    assert 0 < capped["chars_streamed"] < capped["chars_total"]
    assert any("--builtin-limit" in n and "qwen25 4 KB sglang" in n for n in rep["notes"])
    for key in (("baseline", "sglang"), ("baseline", "native"), ("tool", "native")):
        assert not rows[key]["capped"] and rows[key]["chars_streamed"] == rows[key]["chars_total"]
    assert rows[("tool", "native")]["calls"] == "ok"


def test_agent_conversation_and_tools():
    from sglang_toolparse.bench import serving_agent as sa

    tools = sa.agent_tools()
    names = [t["function"]["name"] for t in tools]
    assert len(names) == 21 == len(set(names))
    for n in (10, 300, 1000):
        conv = sa.conversation(n)
        assert len(conv) == n and conv[0]["role"] == "system" and conv[-1]["role"] == "user"
        calls = [m for m in conv if m.get("tool_calls")]
        assert len(calls) >= (n - 2) // 3 - 1
        for i, m in enumerate(conv):  # every call is answered by its result
            if m.get("tool_calls"):
                assert conv[i + 1]["role"] == "tool"
                assert conv[i + 1]["tool_call_id"] == m["tool_calls"][0]["id"]


def test_agent_targets_from_rows():
    from sglang_toolparse.bench import serving_agent as sa

    rows = [{"messages": 10, "side": "native+hooks", "per_chunk_us": 10.0},
            {"messages": 1000, "side": "native+hooks", "per_chunk_us": 13.0},
            {"messages": 300, "side": "native+hooks", "per_chunk_us": 12.0},
            {"messages": 300, "side": "no tools", "per_chunk_us": 10.0}]
    loads = [{"size_kib": 16, "side": "sglang", "big_cpu_s": 3.0},
             {"size_kib": 16, "side": "native+hooks", "big_cpu_s": 0.1},
             {"size_kib": 64, "side": "native+hooks", "big_cpu_s": 0.4, "p99_over_baseline": 1.2}]
    got = {t["target"].split(":")[0]: (round(t["value"], 3), t["met"]) for t in sa.agent_targets(rows, loads)}
    assert got == {"per-chunk loop CPU, tools, 300 msgs / no tools": (1.2, True),
                   "per-chunk loop CPU, tools, 1000 msgs / 10 msgs": (1.3, False),
                   "16 KB call at 300 msgs": (30.0, True),
                   "64 KB call at 300 msgs": (1.2, False)}


@pytest.mark.skipif(not HAVE_SGLANG, reason="SGLang not installed")
def test_serving_cli_agent_tiny_run(tmp_path):
    out = tmp_path / "agent.json"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "sglang_toolparse", "bench", "--serving", "--quick", "--agent-only",
                        "--agent-messages", "4,12", "--sizes", "1", "--streams", "2", "--no-progress",
                        "--json", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Agent scenario" in p.stdout and "native+hooks" in p.stdout
    ag = json.loads(out.read_text())["agent"]
    assert ag["hooks_installed"] is True and ag["tools"] == 21
    assert {(r["messages"], r["side"]) for r in ag["per_chunk"]} == {
        (n, s) for n in (4, 12) for s in ("sglang", "native", "native+hooks", "no tools", "no tools, hooks off")}
    # a marginal figure (the difference of two runs): a number, which noise
    # on a loaded machine may push to or below zero for the ~4 µs hooked path
    assert all(isinstance(r["per_chunk_us"], float) and math.isfinite(r["per_chunk_us"]) for r in ag["per_chunk"])
    loads = {(d["size_kib"], d["side"]): d for d in ag["large_calls"]}
    assert set(loads) == {(1, "baseline"), (1, "sglang"), (1, "native"), (1, "native+hooks")}
    assert loads[(1, "native+hooks")]["calls"] == "ok" and loads[(1, "native")]["calls"] == "ok"
    assert loads[(1, "native+hooks")]["gaps"]["n"] > 0 and loads[(1, "native+hooks")]["deliveries"] > 1
