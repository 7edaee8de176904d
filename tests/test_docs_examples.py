"""Examples in the docs and the scripts work as written: the JSONL record
in docs/BENCH.md is valid `bench --input`, and scripts/scaling.py runs
against an installed package (no in-place build, no pytest)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

import sglang_toolparse
from sglang_toolparse import parse
from sglang_toolparse.api import collect
from sglang_toolparse.bench.replay import load_jsonl
from sglang_toolparse import StreamParser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(sglang_toolparse.__file__)))


def _bench_jsonl_example() -> str:
    with open(os.path.join(ROOT, "docs", "BENCH.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc[doc.index("## Replaying recorded outputs"):]
    m = re.search(r"One JSON object per line[^\n]*\n\n```json\n(.*?)\n```", section, re.S)
    assert m, "the JSONL example of docs/BENCH.md was not found"
    return m.group(1)


def test_bench_md_jsonl_example_is_valid_input(tmp_path):
    block = _bench_jsonl_example()
    assert "\n" not in block.strip(), "a JSONL record is one line"
    path = tmp_path / "example.jsonl"
    path.write_text(block + "\n", encoding="utf-8")
    [rec] = load_jsonl(str(path))
    assert rec["id"] == "weather-1" and rec["format"] == "qwen25"
    # and it means what it says: one call, through its recorded chunking
    p = StreamParser(rec["format"], rec["tools"])
    res = collect([e for c in rec["chunks"] for e in p.feed(c)] + p.finish())
    assert res == parse(rec["format"], rec["text"], rec["tools"])
    assert [(c.name, c.arguments) for c in res.calls] == [("get_weather", '{"city": "Paris"}')]
    assert res.text == "Let me check." and not res.errors


def test_scaling_script_runs_against_an_installed_package(tmp_path):
    """A checkout after `pip install .` has no built core in the source
    tree: the script must use the installed package, and it must not need
    pytest (a test-only dependency)."""
    tree = tmp_path / "checkout"
    (tree / "scripts").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "sglang_toolparse").mkdir()
    shutil.copy(os.path.join(ROOT, "scripts", "scaling.py"), tree / "scripts")
    shutil.copy(os.path.join(ROOT, "tests", "format_table.py"), tree / "tests")
    for f in os.listdir(os.path.join(ROOT, "sglang_toolparse")):  # sources only, as a checkout has
        if f.endswith((".py", ".pyx", ".pxd")):
            shutil.copy(os.path.join(ROOT, "sglang_toolparse", f), tree / "sglang_toolparse")
    code = textwrap.dedent("""
        import runpy, sys
        sys.modules["pytest"] = None      # not installed
        sys.modules["hypothesis"] = None
        sys.argv = ["scaling.py", "--base", "512", "--format", "qwen25", "--format", "glm47"]
        runpy.run_path(%r, run_name="__main__")
        import sglang_toolparse
        print("USED", sglang_toolparse.__file__)
    """ % str(tree / "scripts" / "scaling.py"))
    env = dict(os.environ, PYTHONPATH=PKG_ROOT)  # stands for site-packages
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "marker_fragments" in r.stdout and "qwen25" in r.stdout and "glm47" in r.stdout
    assert "USED " + os.path.join(PKG_ROOT, "sglang_toolparse") in r.stdout
