"""Run as a script by test_metrics.py, in a fresh interpreter (the metrics
decision is once per process, and prometheus_client must be imported after
PROMETHEUS_MULTIPROC_DIR is set, as in SGLang).

    python metrics_driver.py on|off

Serves one non-streaming and one streaming request through SGLang's
OpenAIServingChat with --enable-metrics on or off, then prints a JSON
object: the text of SGLang's own /metrics route (add_prometheus_middleware,
multiprocess collector) and the state of the detectors' observer lists.
"""
from __future__ import annotations

import json
import os
import sys

import serving_stub

from sglang_toolparse.sglang_plugin import register

# two good calls, a call to an undeclared tool, a call with broken JSON
OUTPUT = (
    "Checking.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n'
    '{"name": "launch_rockets", "arguments": {}}\n</tool_call>\n<tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Oslo",, }}\n</tool_call>\n<tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
)
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
]


def main(mode: str) -> None:
    register()
    on = mode == "on"
    sa = serving_stub.server_args("qwen25_native", enable_metrics=on)
    resp = serving_stub.serve(sa, [OUTPUT], TOOLS, stream=False)
    n_one = len(resp.choices[0].message.tool_calls or [])
    body = serving_stub.serve(sa, [OUTPUT[i : i + 7] for i in range(0, len(OUTPUT), 7)], TOOLS, stream=True)
    _, calls, _, _ = serving_stub.assemble_sse(body)

    from sglang_toolparse import metrics, sglang_adapter

    out = {
        "calls_one_shot": n_one,
        "calls_streamed": len(calls),
        "decided": metrics.enabled(),
        "call_observers": [getattr(f, "__qualname__", repr(f)) for f in sglang_adapter.CALL_OBSERVERS],
        "error_observers": [getattr(f, "__qualname__", repr(f)) for f in sglang_adapter.ERROR_OBSERVERS],
        "multiproc_dir": os.environ.get("PROMETHEUS_MULTIPROC_DIR"),
    }
    from prometheus_client import REGISTRY

    out["default_registry_names"] = sorted(
        n for n in getattr(REGISTRY, "_names_to_collectors", {}) if n.startswith("sglang_toolparse")
    )
    if on:
        from starlette.applications import Starlette
        from starlette.testclient import TestClient

        from sglang.srt.utils.common import add_prometheus_middleware

        app = Starlette()
        add_prometheus_middleware(app)  # SGLang's /metrics: MultiProcessCollector over the dir
        with TestClient(app) as client:
            r = client.get("/metrics")
            out["metrics_status"] = r.status_code
            out["metrics_text"] = r.text
        out["multiproc_files"] = sorted(os.listdir(os.environ["PROMETHEUS_MULTIPROC_DIR"]))
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
