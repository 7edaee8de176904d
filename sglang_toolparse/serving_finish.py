"""The non-stream finish_reason hook: where SGLang's serving layer decides
something from the parser's result that the detector interface cannot carry.

A call the model began but did not finish (cut off by a
stop string or an end-of-sequence token, or broken) is incomplete: the
streamed response ends with finish_reason "stop" (the detector lists it in
`incomplete_tool_call_indices`, which SGLang's streaming code reads). The
non-stream path (`OpenAIServingChat._process_tool_calls`) turns "stop" into
"tool_calls" whenever the parser returned any call, so the same output
would reach a non-streaming client as a completed call. The hook keeps
"stop" (and the matched stop string) there when a native detector's
one-shot parse held an incomplete call, so both paths agree on `tool_calls`,
`content` and `finish_reason`.

The hook checks that the method it wraps still makes that decision the way
it expects (its source); otherwise it stands down with one warning. It is
installed with the stream hooks (serving_hooks.py), by the plugin when
SGLang imports serving_chat (no import cost for processes that never serve
chat), and SGLANG_TOOLPARSE_SERVING_HOOKS=0 turns it off.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
from typing import Any, Callable

logger = logging.getLogger("sglang_toolparse")

SWITCH = "SGLANG_TOOLPARSE_SERVING_HOOKS"
# what _process_tool_calls must contain for the hook to be right about it
EXPECTED = ('if finish_reason["type"] == "stop":', 'finish_reason["type"] = "tool_calls"')


def enabled() -> bool:
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _keep_stop_for_incomplete(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _process_tool_calls(self: Any, text: str, tools: Any, finish_reason: Any, *args: Any, **kwargs: Any) -> Any:
        from sglang_toolparse.sglang_adapter import ONESHOT_INCOMPLETE

        before = dict(finish_reason) if isinstance(finish_reason, dict) else None
        token = ONESHOT_INCOMPLETE.set(False)
        try:
            result = original(self, text, tools, finish_reason, *args, **kwargs)
            incomplete = ONESHOT_INCOMPLETE.get()
        finally:
            ONESHOT_INCOMPLETE.reset(token)
        if (incomplete and before is not None and before.get("type") == "stop"
                and isinstance(finish_reason, dict) and finish_reason.get("type") == "tool_calls"):
            finish_reason.clear()
            finish_reason.update(before)  # "stop", matched as it was: as the stream ends
        return result

    _process_tool_calls._toolparse_hook = True  # type: ignore[attr-defined]
    return _process_tool_calls


def patch(module: Any) -> bool:
    """Wraps OpenAIServingChat._process_tool_calls in `module`. Returns
    whether the hook is in place."""
    if not enabled():
        return False
    cls = getattr(module, "OpenAIServingChat", None)
    method = getattr(cls, "_process_tool_calls", None) if cls is not None else None
    if method is None:
        logger.warning("sglang_toolparse: serving hook stands down: OpenAIServingChat._process_tool_calls not found")
        return False
    if getattr(method, "_toolparse_hook", False):
        return True
    try:
        source = inspect.getsource(method)
    except (OSError, TypeError):
        source = ""
    if not all(piece in source for piece in EXPECTED):
        logger.warning("sglang_toolparse: serving hook stands down: OpenAIServingChat._process_tool_calls is not "
                       "the code it was written for (non-stream finish_reason of incomplete calls may say tool_calls)")
        return False
    cls._process_tool_calls = _keep_stop_for_incomplete(method)
    return True
