"""Prometheus counters (sglang_toolparse.metrics)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

prometheus_client = pytest.importorskip("prometheus_client")

from sglang_toolparse import ParseError, StreamParser  # noqa: E402
from sglang_toolparse.metrics import Metrics  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")

BAD = (
    '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>'
    '<tool_call>\n{"name": "f", "arguments": {"a": }}\n</tool_call>'
    '<tool_call>\n{"name": "f", "arguments": {"a": 2}'
)


def _value(registry, name, **labels):
    v = registry.get_sample_value(name, labels)
    return 0.0 if v is None else v


def test_counters_and_labels():
    """Events of a real parse, fed to the observers: one counter per kind,
    the failure reason is the ParseError code."""
    reg = prometheus_client.CollectorRegistry()
    m = Metrics(reg)
    p = StreamParser("qwen25", ["f"])
    for ev in p.feed(BAD) + p.finish():
        if isinstance(ev, ParseError):
            m.on_error("qwen25_native", ev)
        elif type(ev).__name__ == "CallEnd":
            m.on_call("qwen25_native", ev)
    assert _value(reg, "sglang_toolparse_calls_total", parser="qwen25_native") == 1
    assert _value(reg, "sglang_toolparse_unknown_tools_total", parser="qwen25_native") == 1
    assert _value(reg, "sglang_toolparse_parse_failures_total", parser="qwen25_native", reason="json_syntax") == 1
    assert _value(reg, "sglang_toolparse_parse_failures_total", parser="qwen25_native", reason="unterminated") == 1
    # unknown tools are not counted as parse failures
    assert _value(reg, "sglang_toolparse_parse_failures_total", parser="qwen25_native", reason="unknown_tool") == 0


def _driver(mode, tmp_path):
    pytest.importorskip("sglang")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, TESTS] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("SGLANG_TOOLPARSE_METRICS", None)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if mode == "on":
        # what SGLang's launcher does with --enable-metrics
        # (set_prometheus_multiproc_dir) before starting its processes
        env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp_path)
    r = subprocess.run(
        [sys.executable, os.path.join(TESTS, "metrics_driver.py"), mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


# streaming: the call with broken JSON was announced (id, name, the
# arguments up to the error) before the error could be seen; a stream
# cannot take it back, so the client gets 3 calls, one with invalid JSON
# arguments (CallAssembler reports it), and the non-streaming response
# lists the same 3 (issue 18.2: one-shot as streamed; finish_reason stays
# "stop"). Counted once as a parse failure.
_STREAMED = 3


def _sample(text, name, **labels):
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{([^}]*)\} (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if got == labels:
            return float(m.group(3))
    return None


def test_enabled_visible_on_sglang_metrics_in_multiprocess_mode(tmp_path):
    out = _driver("on", tmp_path)
    assert out["decided"] is True
    assert out["calls_one_shot"] == out["calls_streamed"] == _STREAMED
    # the values live in the multiprocess dir (one mmap file per process and kind)
    assert any(f.startswith("counter_") for f in out["multiproc_files"])
    text = out["metrics_text"]
    assert out["metrics_status"] == 200
    # 2 requests: each 2 good calls, 1 unknown tool, 1 broken JSON
    assert _sample(text, "sglang_toolparse_calls_total", parser="qwen25_native") == 4.0
    assert _sample(text, "sglang_toolparse_unknown_tools_total", parser="qwen25_native") == 2.0
    assert _sample(text, "sglang_toolparse_parse_failures_total", parser="qwen25_native", reason="json_syntax") == 2.0
    # the one-shot deciders were swapped for the counters' observers
    assert out["call_observers"] == ["Metrics.on_call"]
    assert out["error_observers"] == ["Metrics.on_error"]


def test_disabled_registers_nothing(tmp_path):
    out = _driver("off", tmp_path)
    assert out["decided"] is False
    assert out["calls_one_shot"] == out["calls_streamed"] == _STREAMED
    assert out["call_observers"] == [] and out["error_observers"] == []
    assert out["default_registry_names"] == []
