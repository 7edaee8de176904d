"""The benchmark CLI (`python -m sglang_toolparse bench`) and its corpus.

Runs the CLI in subprocesses (--quick, --input on the shipped example,
--no-sglang) and checks the table, the JSON structure and that the
correctness columns are computed. No timing is asserted.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from sglang_toolparse import available_formats, parse
from sglang_toolparse.bench import corpus
from sglang_toolparse.bench.runner import assemble_events, compare_calls, compare_text
from sglang_toolparse.bench.sides import EXTRA_ROWS, EXTRA_SCENARIOS, discover_formats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "benchmarks", "replay_example.jsonl")
# CI sets TOOLPARSE_REQUIRE_SGLANG=1: the SGLang side must then run, not skip
HAVE_SGLANG = importlib.util.find_spec("sglang") is not None or os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1"
STATUSES = {"ok", "json", "diff"}
TEXT_STATUSES = {"ok", "ws", "diff"}


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "sglang_toolparse", "bench", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


# -- corpus (in process, no SGLang) ------------------------------------------
@pytest.mark.parametrize("fmt", sorted(corpus.RENDERERS))
@pytest.mark.parametrize("key", corpus.scenario_keys("default") + ["calls10"])
def test_corpus_ground_truth_is_what_the_native_parser_extracts(fmt, key):
    if fmt not in available_formats():
        pytest.skip("format %s not in this build of the core" % fmt)
    case = corpus.render_case(corpus.make_scenario(key), fmt)
    assert "".join(case.chunks) == case.text
    r = parse(fmt, case.text, corpus.TOOLS)
    assert [(c.name, c.arguments) for c in r.calls] == case.expected_calls
    assert r.text == case.expected_text
    assert not r.errors


@pytest.mark.parametrize("row", EXTRA_ROWS, ids=lambda f: f.label)
@pytest.mark.parametrize("key", EXTRA_SCENARIOS)
def test_extra_row_ground_truth_is_what_the_native_parser_extracts(row, key):
    """The rows beyond one per native name (mistral_native's pre-v11 array,
    tool_choice=required): their own renderer, no prose, read by the core
    format the row's parsers run."""
    case = corpus.render_case(corpus.make_scenario(key), row.corpus_key)
    assert "".join(case.chunks) == case.text and case.expected_text == ""
    r = parse(row.core, case.text, corpus.TOOLS)
    assert [(c.name, c.arguments) for c in r.calls] == case.expected_calls
    assert r.text == "" and not r.errors


def test_corpus_sizes_and_chunking():
    chat = corpus.make_scenario("chat")
    assert 250 <= chat.arg_bytes <= 350
    big = corpus.make_scenario("args16k")
    assert abs(big.arg_bytes - 16 * 1024) <= 16
    case = corpus.render_case(big, "qwen25", split_markers=True)
    assert all(len(c) == 4 for c in case.chunks[:-1])
    bursts = corpus.render_case(corpus.make_scenario("bursts3"), "hermes")
    assert len(bursts.expected_calls) == 3
    assert all(20 <= len(c) <= 200 for c in bursts.chunks[:-1])
    assert corpus.prose_text(2048) and "<" not in corpus.prose_text(2048)


def test_every_registered_core_format_is_known_to_discovery():
    from sglang_toolparse.bench.sides import SGLang
    from sglang_toolparse.sglang_plugin import NATIVE_NAMES

    fmts = discover_formats(SGLang.unavailable("test"))
    names = {f.native_name for f in fmts} | {a for f in fmts for a in f.aliases}
    assert names == set(NATIVE_NAMES)


@pytest.mark.parametrize("fmt", sorted(corpus.SPECIAL_TOKENS))
def test_chunkers_keep_special_tokens_whole(fmt):
    tokens = corpus.SPECIAL_TOKENS[fmt]
    for key in ("chat", "bursts3", "args1k"):
        case = corpus.render_case(corpus.make_scenario(key), fmt)
        assert "".join(case.chunks) == case.text
        cuts = set()
        pos = 0
        for c in case.chunks[:-1]:
            pos += len(c)
            cuts.add(pos)
        spans = corpus._token_spans(case.text, tokens)
        assert spans, "the corpus text has special tokens"
        assert not [s for s in spans if any(s[0] < c < s[1] for c in cuts)]
        if case.scenario.chunking == "fixed":  # only chunks ending in a token are longer than 4
            assert all(len(c) == 4 or c.endswith(tokens) for c in case.chunks[:-1])
        split = corpus.render_case(corpus.make_scenario(key), fmt, split_markers=True)
        if split.scenario.chunking == "fixed":
            assert all(len(c) == 4 for c in split.chunks[:-1])


def test_compare_helpers():
    assert compare_calls([("f", '{"a": 1}')], [("f", '{"a": 1}')]) == "ok"
    assert compare_calls([("f", '{"a":1}')], [("f", '{"a": 1}')]) == "json"
    assert compare_calls([("f", '{"a": 1}')], [("g", '{"a": 1}')]) == "diff"
    assert compare_calls([], [("f", "{}")]) == "diff"
    assert compare_text("x\n", "x") == "ws"
    assert compare_text("x", "y") == "diff"
    from sglang_toolparse import StreamParser

    p = StreamParser("qwen25", ["f"])
    text = 'hi\n<tool_call>\n{"name": "f", "arguments": {"a": [1, 2]}}\n</tool_call>'
    out = [p.feed(text[i : i + 3]) for i in range(0, len(text), 3)] + [p.finish()]
    assert assemble_events(out) == ("hi", [("f", '{"a": [1, 2]}')])


# -- the CLI -------------------------------------------------------------------
@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    p = run_cli("--quick", "--no-progress", "--no-png", "--json", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        return p.stdout, json.load(f)


def test_quick_table_and_json(quick):
    stdout, rep = quick
    for col in ("format", "scenario", "native", "sglang", "floor", "standalone", "sglang/native",
                "native/floor", "calls nat/sgl/sa", "text nat/sgl/sa"):
        assert col in stdout
    assert "Targets (reported, not asserted)" in stdout
    assert rep["schema"] == "sglang_toolparse.bench/1"
    assert rep["mode"] == "quick" and rep["chunk"] == 4
    fmts = [f["native_name"] for f in rep["formats"]]
    rendered = [f["native_name"] for f in rep["formats"] if f["core"] in corpus.RENDERERS]
    assert "qwen25_native" in fmts and "hermes_native" in fmts
    pairs = {(r["format"], r["scenario"]) for r in rep["results"]}
    rows = [r["label"] for r in rep["extra_rows"]]
    assert rows == ["mistral_native[mistral_array]", "NativeJsonArrayParser", "k2_horizon_native[k2_horizon_json]"]
    assert pairs == {(f, s) for f in rendered for s in corpus.scenario_keys("quick")} | {
        (f, s) for f in rows for s in corpus.scenario_keys("quick") if s in EXTRA_SCENARIOS}
    for r in rep["results"]:
        assert r["chunks"] >= 1 and r["bytes"] > 0
        sa = r["sides"]["standalone"]
        assert sa["calls"] == "ok" and sa["text"] == "ok", r
        assert sa["us_per_chunk_min"] > 0 and sa["reps"] >= 1
        assert set(r["ratios"]) == {"sglang_over_native", "native_over_floor", "native_over_standalone",
                                    "vllm_over_standalone"}
    for t in rep["targets"]:
        assert set(t) >= {"format", "target", "value", "op", "threshold", "met"}
    # one-shot table: every rendered format, the standalone parse() exact
    from sglang_toolparse.bench.oneshot import scenario_keys

    assert "One-shot" in stdout
    assert {"chat", "calls10", "args4k"} == set(scenario_keys("quick"))
    one_rows = [r for r in rows if r != "NativeJsonArrayParser"] if HAVE_SGLANG else []  # (FunctionCallParser's)
    assert {(r["format"], r["scenario"]) for r in rep["oneshot"]} == {
        (f, s) for f in rendered + one_rows for s in scenario_keys("quick") if s != "prose2k" or f in rendered}
    for r in rep["oneshot"]:
        sa = r["sides"]["standalone"]
        assert sa["calls"] == "ok" and sa["text"] == "ok" and sa["us_min"] > 0, r
    # the table: a line per (format, reply), every format named
    table = stdout[stdout.index("One-shot"):]
    for col in ("native us", "sglang us", "floor us", "standalone us", "native/sglang", "native/standalone"):
        assert col in table, col
    lines = table.splitlines()
    for r in rep["oneshot"]:
        assert any(line.split()[:3] == [r["format"], r["scenario"], str(r["bytes"])] for line in lines), r
    # the JSON normalizer alone (issue 24.2), in the same run: a line and its targets
    from sglang_toolparse.bench.json_speed import DOCS

    assert set(rep["json_normalizer"]) == set(DOCS)
    assert all(r["ns_per_byte_min"] > 0 for r in rep["json_normalizer"].values())
    assert "JSON normalizer alone" in stdout
    assert len([t for t in rep["targets"] if t["format"] == "(JSON normalizer)"]) == len(DOCS)


@pytest.mark.skipif(not HAVE_SGLANG, reason="SGLang not installed")
def test_quick_sglang_sides_measured_and_checked(quick):
    _, rep = quick
    assert rep["environment"]["sglang"]
    from sglang_toolparse.bench.capped import CAPPED

    for r in rep["results"]:
        s = r["sides"]
        # JsonArrayParser is fed by the serving layer itself: no FunctionCallParser floor
        assert set(s) - {"vllm"} == {"native", "sglang", "standalone"} | ({"floor"} if r["core"] != "jsonarray" else set())
        # the native detector through SGLang's FunctionCallParser reproduces the ground truth
        assert s["native"]["calls"] == "ok" and s["native"]["text"] == "ok", r
        if s["sglang"].get("capped"):  # only a capped builtin may be left unfinished or untried
            assert r["core"] in CAPPED and s["sglang"]["skipped"], r
            continue
        assert s["sglang"]["calls"] in STATUSES and s["sglang"]["text"] in TEXT_STATUSES
        # the floor returns nothing: its calls match only when there are none
        assert "floor" not in s or s["floor"]["calls"] == ("ok" if not r["arg_bytes"] else "diff")
        assert r["ratios"]["sglang_over_native"] > 0 and ("floor" not in s or r["ratios"]["native_over_floor"] > 0)
        if s["sglang"]["calls"] != "ok":
            assert "calls_got" in s["sglang"]
    met = {t["target"].split(":")[0] for t in rep["targets"] if t["met"] is not None}
    assert {"chat response", "2 KB prose"} <= met
    for r in rep["oneshot"]:
        assert r["sides"]["native"]["calls"] == "ok", r
        if r["sides"]["sglang"].get("capped"):
            assert r["core"] in CAPPED, r
            continue
        assert r["sides"]["sglang"]["calls"] in STATUSES | {None} or "error" in r["sides"]["sglang"]
        assert r["sides"]["floor"]["us_min"] > 0 and "calls" not in r["sides"]["floor"]
        assert r["ratios"]["native_over_sglang"] > 0
    # issue 24's per-request targets, one pair per format (reported, not asserted)
    # (a capped builtin that finished no reply, e.g. pythonic on a loaded
    # machine, has no "every reply" row: there is nothing to compare)
    one = [t for t in rep["targets"] if t["target"].startswith("one-shot")]
    measured = {r["format"] for r in rep["oneshot"] if not r["sides"]["sglang"].get("skipped")}
    assert {(t["format"], t["target"]) for t in one} == {
        (f, "one-shot chat: native / SGLang") for f in {r["format"] for r in rep["oneshot"]}} | {
        (f, "one-shot, every reply: native / SGLang") for f in measured}
    unfinished = {r["format"] for r in rep["oneshot"] if r["sides"]["sglang"].get("capped")}
    # (a chat reply whose calls SGLang's builtin gets wrong, e.g. Gemma 4's, is no baseline)
    wrong = {r["format"] for r in rep["oneshot"] if r["scenario"] == "chat" and
             r["sides"]["sglang"].get("calls", "ok") not in ("ok", "json")}
    for t in one:
        if t["format"] in wrong and t["target"].startswith("one-shot chat"):
            assert t["met"] is None and "not compared" in t["note"], t
        elif t["format"] not in unfinished:
            assert t["met"] is not None, t


def test_bench_modules_import_no_circle():
    """The bench modules import one another without a circle (report.py lays
    out every table and imports none of the measuring modules)."""
    import ast

    here = os.path.join(ROOT, "sglang_toolparse", "bench")
    graph = {}
    for name in os.listdir(here):
        if name.endswith(".py"):
            tree = ast.parse(open(os.path.join(here, name), encoding="utf-8").read())
            deps = set()
            for node in ast.walk(tree):  # function-level imports count too
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    deps |= {node.module} if node.module else {a.name for a in node.names}
            graph[name[:-3]] = deps
    assert graph["report"] <= {"progress"}, graph["report"]

    def visit(mod, path):
        assert mod not in path, "import circle: " + " -> ".join(path + [mod])
        for dep in graph.get(mod, ()):
            visit(dep, path + [mod])

    for mod in graph:
        visit(mod, [])


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "replay.json"
    p = run_cli("--input", EXAMPLE, "--quick", "--no-progress", "--json", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        return p.stdout, json.load(f)


def test_replay_example(replayed):
    stdout, rep = replayed
    with open(EXAMPLE, encoding="utf-8") as f:
        lines = [json.loads(l) for l in f if l.strip()]
    assert rep["schema"] == "sglang_toolparse.bench.replay/1"
    assert [r["id"] for r in rep["records"]] == [l["id"] for l in lines]
    assert rep["summary"]["records"] == len(lines)
    for r, line in zip(rep["records"], lines):
        tokens = corpus.SPECIAL_TOKENS.get(line["format"], ())
        assert r["chunks"] == len(line["chunks"] if "chunks" in line else corpus.fixed_chunks(line["text"], 4, tokens))
        assert all("us_per_chunk_min" in v or "total_ms_min" in v or "error" in v for v in r["sides"].values())
    assert "id" in stdout and "calls n/s" in stdout


@pytest.mark.skipif(not HAVE_SGLANG, reason="SGLang not installed")
def test_replay_example_compares_three_parsers(replayed):
    _, rep = replayed
    by_id = {r["id"]: r for r in rep["records"]}
    for r in rep["records"]:
        assert set(r["sides"]) == {"native", "sglang", "oneshot"}
        assert [d["pair"] for d in r["diffs"]] == ["native/sglang", "native/oneshot", "sglang/oneshot"]
        for d in r["diffs"]:
            assert d["calls"] in STATUSES and d["text"] in TEXT_STATUSES
            assert ("calls_detail" in d) == (d["calls"] != "ok")
    # well-formed outputs: the native stream and SGLang's one-shot parse agree on the calls
    for rid in ("weather-qwen", "two-calls-qwen", "escapes-hermes", "recorded-chunks-hermes", "prose-only",
                "weather-glm45", "weather-glm47"):
        d = {x["pair"]: x for x in by_id[rid]["diffs"]}
        assert d["native/oneshot"]["calls"] == "ok", by_id[rid]
    two = by_id["two-calls-qwen"]["outputs"]["native"]["calls"]
    assert [c[0] for c in two] == ["search_web", "get_weather"]
    agree = rep["summary"]["agreement"]
    assert set(agree) == {"native/sglang", "native/oneshot", "sglang/oneshot"}
    assert all(a["records"] == len(rep["records"]) for a in agree.values())


def test_without_sglang_runs_standalone_only(tmp_path):
    out = tmp_path / "ns.json"
    p = run_cli("--no-sglang", "--quick", "--scenarios", "chat,bursts3", "--no-progress", "--no-png",
                "--json", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "standalone" in p.stdout and "not importable" in p.stdout
    rep = json.loads(out.read_text())
    assert rep["environment"]["sglang"] is None
    for r in rep["results"]:
        assert set(r["sides"]) == {"standalone"}
        assert r["sides"]["standalone"]["calls"] == "ok"


def test_bad_input_is_reported(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "qwen25", "text": "x"}\n')
    p = run_cli("--no-sglang", "--input", str(bad), "--no-progress", "--no-json")
    assert p.returncode == 2
    assert "tools" in p.stderr


def test_main_help():
    p = subprocess.run([sys.executable, "-m", "sglang_toolparse"], cwd=ROOT, capture_output=True, text=True)
    assert "bench" in p.stdout
    p = run_cli("--help")
    assert p.returncode == 0 and '"format"' in p.stdout and "--input" in p.stdout


def test_png_written_when_matplotlib_present(quick, tmp_path):
    pytest.importorskip("matplotlib")
    from sglang_toolparse.bench.report import write_png

    _, rep = quick
    out = write_png(rep, str(tmp_path / "plot.png"))
    assert out and (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert write_png({**rep, "results": [r for r in rep["results"] if not r["scenario"].startswith("args")]},
                     str(tmp_path / "none.png")) is None
