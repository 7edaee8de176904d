"""SGLang's HTTP app, for its tokenizer worker processes.

With `--tokenizer-worker-num N` (N > 1) SGLang starts N HTTP worker
processes (granian or uvicorn workers) that import the app from the path in
SGLANG_HTTP_SERVER_APP_PATH (default
`sglang.srt.entrypoints.http_server:app`). Those processes never run
`sglang.srt.plugins.load_plugins()` (SGLang 0.5.23 calls it in the launcher,
scheduler, detokenizer and data-parallel controller only), so a parser
registered by a plugin is unknown there and `--tool-call-parser
qwen25_native` would fail in exactly the processes that parse tool calls.

This module loads the plugins first, then exposes SGLang's own app object.
The plugin points SGLANG_HTTP_SERVER_APP_PATH here when it is registered in
the launcher (unless the variable is already set); the workers inherit the
environment.
"""
from sglang.srt.plugins import load_plugins

load_plugins()

from sglang.srt.entrypoints.http_server import app  # noqa: E402

__all__ = ["app"]
