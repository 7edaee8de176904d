"""The optional vLLM Rust tool parser side of the bench (bench/vllm_peer.py).

Loading is checked against bad paths; the side's plumbing (streaming and
one-shot, report columns) runs in CI against tests/fake_vllm_rust_parser.py,
a module with the same API over our own parser. When the real module is
available (SGLANG_TOOLPARSE_VLLM_RUST_PARSER, see
scripts/get-vllm-rust-parser.sh) its results on the bench corpus are
checked too. No timing is asserted.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from sglang_toolparse import available_formats
from sglang_toolparse.bench import corpus, vllm_peer
from sglang_toolparse.bench.runner import compare_calls, measure, Policy
from sglang_toolparse.bench.sides import Format, make_side

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKE = os.path.join(ROOT, "tests", "fake_vllm_rust_parser.py")
REAL = os.environ.get(vllm_peer.ENV)


def test_missing_path_is_an_error_not_an_exception(tmp_path):
    p = vllm_peer.load(str(tmp_path / "nope.so"))
    assert not p.ok and "nope.so" in p.error
    bad = tmp_path / "_rust_tool_parser.abi3.so"
    bad.write_bytes(b"not a shared object")
    p = vllm_peer.load(str(tmp_path))  # a directory: the module file in it
    assert not p.ok and str(bad) in p.error


def test_a_module_without_the_api_is_refused(tmp_path):
    other = tmp_path / "other.py"
    other.write_text("x = 1\n")
    p = vllm_peer.load(str(other))
    assert not p.ok and "not vLLM's Rust tool parser" in p.error


def test_not_found_says_how_to_get_it(monkeypatch):
    monkeypatch.delenv(vllm_peer.ENV, raising=False)
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    p = vllm_peer.load()
    assert not p.ok and vllm_peer.ENV in p.error and "get-vllm-rust-parser.sh" in p.error


def test_assemble_merges_deltas_per_call():
    D = types.SimpleNamespace
    outs = [D(normal_text="Hi ", calls=[]), D(normal_text="", calls=[D(tool_index=0, name="f", arguments=None)]),
            D(normal_text="", calls=[D(tool_index=0, name=None, arguments='{"a"'),
                                     D(tool_index=1, name="g", arguments="{}")]),
            D(normal_text="", calls=[D(tool_index=0, name=None, arguments=": 1}")]), None]
    assert vllm_peer.assemble(outs) == ("Hi ", [("f", '{"a": 1}'), ("g", "{}")])


def _peers():
    out = [pytest.param(FAKE, id="fake")]
    out.append(pytest.param(REAL, id="vllm", marks=pytest.mark.skipif(
        not REAL, reason="set %s to vLLM's module (scripts/get-vllm-rust-parser.sh)" % vllm_peer.ENV)))
    return out


@pytest.mark.parametrize("path", _peers())
@pytest.mark.parametrize("key", ["chat", "bursts3", "args4k"])
def test_peer_side_streams_the_corpus(path, key):
    peer = vllm_peer.load(path)
    assert peer.ok, peer.error
    cores = [c for c in vllm_peer.PARSERS if peer.supports(c) and c in corpus.RENDERERS]
    assert "deepseekv4" in cores
    for core in cores:
        fmt = Format(core + "_native", core, core, ())
        side = make_side("vllm", fmt, corpus.TOOLS, None, peer)
        case = corpus.render_case(corpus.make_scenario(key), core)
        stats, text, calls = measure(side, case.chunks, Policy(0.0, 1, 1))
        # vLLM writes arguments compactly: same JSON value, other spacing
        assert compare_calls(calls, case.expected_calls) in ("ok", "json"), (core, calls)
        assert text == case.expected_text
        parse, read = vllm_peer.one_shot(peer, core, corpus.TOOLS)
        one_text, one_calls = read(parse(case.text))
        assert compare_calls(one_calls, case.expected_calls) in ("ok", "json")
        assert one_text == case.expected_text


def test_unsupported_format_has_no_side():
    peer = vllm_peer.load(FAKE)
    assert make_side("vllm", Format("qwen25_native", "qwen25", "qwen25", ()), corpus.TOOLS, None, peer) is None
    assert make_side("vllm", Format("deepseekv4_native", "deepseekv4", "deepseekv4", ()), corpus.TOOLS, None,
                     None) is None


@pytest.mark.skipif("deepseekv4" not in available_formats(), reason="core without deepseekv4")
def test_bench_cli_with_a_peer(tmp_path):
    out = tmp_path / "b.json"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "sglang_toolparse", "bench", "--quick", "--no-sglang", "--formats",
                        "deepseekv4", "--scenarios", "chat,args1k", "--vllm-rust-parser", FAKE, "--no-progress",
                        "--json", str(out), "--no-png"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "vllm/standalone" in p.stdout and "One-shot" in p.stdout
    rep = json.loads(out.read_text())
    assert rep["vllm"]["available"] and rep["vllm"]["formats"] == ["deepseekv4"]
    for r in rep["results"]:
        assert r["sides"]["vllm"]["calls"] == "ok" and r["ratios"]["vllm_over_standalone"] > 0
    one = {r["scenario"]: r for r in rep["oneshot"]}
    assert set(one) == {"chat", "calls10", "args4k"}
    assert set(one["chat"]["sides"]) == {"standalone", "vllm"}
    assert one["args4k"]["sides"]["vllm"]["calls"] == "ok"
    assert one["calls10"]["sides"]["vllm"]["calls"] == "ok"
