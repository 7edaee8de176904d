"""The plugin is seen by SGLang's CLI and in its other processes.

SGLang 0.5.23 calls `sglang.srt.plugins.load_plugins()` in the launcher
(launch_server.py, cli/serve.py, Engine.__init__), the scheduler
(managers/scheduler.py, run_scheduler_process), the detokenizer
(managers/detokenizer_manager.py) and the data-parallel controller, but not
in the HTTP worker processes started with `--tokenizer-worker-num N > 1`:
those import the app from SGLANG_HTTP_SERVER_APP_PATH
(entrypoints/http_server.py, granian/uvicorn `workers=`) and run
`init_multi_tokenizer()`, which does not load plugins. The plugin points
that variable at sglang_toolparse.sglang_app, which loads the plugins and
re-exports SGLang's app; the control case shows the default path misses
the names.

Runs in subprocesses (spawned children each import SGLang: ~1 minute on 2
cores, one test; the three children start together).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("sglang")

from sglang_toolparse.sglang_plugin import APP_PATH, NATIVE_NAMES  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")


def _env():
    env = dict(os.environ)
    # this tree's sglang_toolparse first (the entry point itself comes from
    # the installed distribution's metadata)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, TESTS] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("SGLANG_HTTP_SERVER_APP_PATH", None)
    env.pop("SGLANG_PLUGINS", None)
    env.pop("SGLANG_TOOLPARSE_REPLACE", None)
    env["HF_HUB_OFFLINE"] = "1"
    return env


def test_launch_server_help_lists_native_names():
    r = subprocess.run(
        [sys.executable, "-m", "sglang.launch_server", "--help"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    # the choices of --tool-call-parser: "{auto,...,qwen25_native,...}"
    line = next(ln for ln in r.stdout.splitlines() if "--tool-call-parser {" in ln)
    choices = line.split("{", 1)[1].split("}", 1)[0].split(",")
    for name in NATIVE_NAMES:
        assert name in choices, (name, choices)


@pytest.fixture(scope="module")
def processes():
    r = subprocess.run(
        [sys.executable, os.path.join(TESTS, "plugin_processes.py")],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def test_scheduler_and_detokenizer_processes_register(processes):
    names = processes["scheduler"]["names"]
    for name in NATIVE_NAMES:
        assert name in names


def test_tokenizer_workers_register(processes):
    assert processes["app_path"] == APP_PATH
    worker = processes["worker"]
    assert worker["app"] == "FastAPI"  # SGLang's own app object
    for name in NATIVE_NAMES:
        assert name in worker["names"]


def test_default_worker_app_would_miss_the_names(processes):
    """Control: what a worker sees when it imports SGLang's default app
    path (no load_plugins() in that process)."""
    names = processes["worker_default"]["names"]
    assert not any(name in names for name in NATIVE_NAMES), names
