"""Prometheus counters for the SGLang detectors.

    sglang_toolparse_calls_total{parser}                  tool calls parsed
    sglang_toolparse_parse_failures_total{parser,reason}  calls dropped as bad output
                                                          (reason = ParseError code:
                                                          json_syntax, unterminated, ...)
    sglang_toolparse_unknown_tools_total{parser}          calls to undeclared tools

`parser` is the --tool-call-parser name (e.g. qwen25_native). A rising
parse_failures / (calls + parse_failures) ratio means the parser does not
match what the model writes (wrong parser, chat template or model).

The counters exist only when SGLang's metrics are on (--enable-metrics),
decided in the process that parses (the HTTP/tokenizer-manager process or
a tokenizer worker) from its published config; SGLANG_TOOLPARSE_METRICS=1/0
overrides the decision (e.g. for a custom server using SGLang's detectors).
They use prometheus_client's default registry, so in SGLang's multiprocess
mode (PROMETHEUS_MULTIPROC_DIR, set by SGLang when metrics are on) the
values are written to that directory and appear on SGLang's /metrics.

Cost when off: `install()` (called by the plugin when SGLang's
function_call_parser is imported, which happens before the server config is
published) adds one-shot observers; the first parsed call or error decides,
and when metrics are off they remove themselves, leaving the detectors'
observer lists empty. prometheus_client is imported only when metrics are
on, after SGLang has set PROMETHEUS_MULTIPROC_DIR.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any, Optional

logger = logging.getLogger("sglang_toolparse")

CALLS = "sglang_toolparse_calls"
FAILURES = "sglang_toolparse_parse_failures"
UNKNOWN = "sglang_toolparse_unknown_tools"


class Metrics:
    """The three counters on one registry, with the observer callbacks the
    SGLang adapter calls: on_call(parser, CallEnd), on_error(parser, ParseError)."""

    def __init__(self, registry: Any = None) -> None:
        from prometheus_client import REGISTRY, Counter

        reg = REGISTRY if registry is None else registry
        self.calls = Counter(CALLS, "Tool calls parsed by sglang-toolparse detectors", ["parser"], registry=reg)
        self.failures = Counter(
            FAILURES,
            "Tool calls dropped because the model output could not be parsed, by reason",
            ["parser", "reason"],
            registry=reg,
        )
        self.unknown = Counter(UNKNOWN, "Tool calls naming a tool the request did not declare", ["parser"], registry=reg)

    def on_call(self, parser: str, ev: Any) -> None:
        self.calls.labels(parser or "unknown").inc()

    def on_error(self, parser: str, err: Any) -> None:
        if err.code == "unknown_tool":
            self.unknown.labels(parser or "unknown").inc()
        else:
            self.failures.labels(parser or "unknown", err.code).inc()


_lock = threading.Lock()
_installed = False
_decided: Optional[bool] = None
_metrics: Optional[Metrics] = None


def sglang_metrics_enabled() -> bool:
    """SGLANG_TOOLPARSE_METRICS if set, else SGLang's --enable-metrics from
    the config published in this process (False when none is published)."""
    env = os.environ.get("SGLANG_TOOLPARSE_METRICS", "").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    try:
        from sglang.srt.runtime_context import get_observability

        return bool(get_observability().enable_metrics)
    except Exception:  # not inside an SGLang server (nothing published)
        return False


def _lists():
    from sglang_toolparse import sglang_adapter

    return sglang_adapter.CALL_OBSERVERS, sglang_adapter.ERROR_OBSERVERS


def _decide() -> Optional[Metrics]:
    global _decided, _metrics
    with _lock:
        if _decided is None:
            _decided = sglang_metrics_enabled()
            if _decided:
                try:
                    _metrics = Metrics()
                except Exception:
                    logger.warning("sglang_toolparse metrics unavailable", exc_info=True)
                    _decided = False
            calls, errors = _lists()
            # swap the one-shot observers in place (the adapter may be
            # iterating the list right now)
            for lst, fn, real in (
                (calls, _first_call, _metrics and _metrics.on_call),
                (errors, _first_error, _metrics and _metrics.on_error),
            ):
                while fn in lst:
                    if real:
                        lst[lst.index(fn)] = real
                        real = None
                    else:
                        lst.remove(fn)
            if _decided:
                logger.info("sglang_toolparse metrics enabled")
        return _metrics


def _first_call(parser: str, ev: Any) -> None:
    m = _decide()
    if m is not None:
        m.on_call(parser, ev)


def _first_error(parser: str, err: Any) -> None:
    m = _decide()
    if m is not None:
        m.on_error(parser, err)


def install() -> None:
    """Called by the plugin once SGLang's detectors are importable. Adds the
    one-shot deciding observers (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        calls, errors = _lists()
        calls.append(_first_call)
        errors.append(_first_error)


def enabled() -> Optional[bool]:
    """True/False once decided in this process, None before the first event."""
    return _decided
