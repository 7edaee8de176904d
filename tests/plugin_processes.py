"""Run as a script by test_plugin_processes.py (a fresh interpreter, so the
test process's own registration cannot leak in).

The launcher side does what `python -m sglang.launch_server` does first
(load_plugins()), then starts children with the `spawn` start method, as
SGLang's scheduler/detokenizer processes and uvicorn/granian HTTP workers
are started: a child re-imports everything and only has what it loads
itself. Prints one JSON object:

  app_path         SGLANG_HTTP_SERVER_APP_PATH after load_plugins()
  worker           parser names in ToolCallParserEnum in an HTTP worker
                   that imports the app from that path (as uvicorn does)
  worker_default   the same with SGLang's default app path: the control
                   (SGLang itself does not load plugins there)
  scheduler        names in a child that calls load_plugins() itself, as
                   scheduler/detokenizer processes do
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys


def _enum_names():
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    return sorted(FunctionCallParser.ToolCallParserEnum)


def http_worker(app_path, q):
    import torchvision_placeholder

    torchvision_placeholder.install()
    from uvicorn.importer import import_from_string

    app = import_from_string(app_path)
    q.put({"app": type(app).__name__, "names": _enum_names()})


def scheduler_like(q):
    from sglang.srt.plugins import load_plugins

    load_plugins()
    q.put({"names": _enum_names()})


def _start(ctx, target, *args):
    q = ctx.Queue()
    p = ctx.Process(target=target, args=args + (q,), daemon=True)
    p.start()
    return p, q


def _result(started):
    p, q = started
    try:
        out = q.get(timeout=300)
    finally:
        p.join(timeout=60)
        if p.is_alive():
            p.kill()
    return out


def main():
    from sglang.srt.plugins import load_plugins

    load_plugins()
    app_path = os.environ.get("SGLANG_HTTP_SERVER_APP_PATH")
    ctx = mp.get_context("spawn")
    out = {"app_path": app_path, "sys_modules_fcp": "sglang.srt.function_call.function_call_parser" in sys.modules}
    # the three children are independent: started together, they import
    # SGLang side by side
    started = {"scheduler": _start(ctx, scheduler_like),
               "worker": _start(ctx, http_worker, app_path),
               "worker_default": _start(ctx, http_worker, "sglang.srt.entrypoints.http_server:app")}
    for key, child in started.items():
        out[key] = _result(child)
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
