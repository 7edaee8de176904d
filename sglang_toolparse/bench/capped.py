"""SGLang detectors that may not finish a bench case: their side is given a
size limit (a reply with more argument bytes is not tried) and, below it, runs in a forked
child with a CPU budget; a case it does not finish in time is reported as
"did not finish in N s" instead of hanging the run.

SGLang 0.5.23's PythonicDetector matches the whole call list with a
backtracking regular expression (`tool_call_regex`, in has_tool_call and
detect_and_parse, called by its stream on every `]`): on a 2-core VM 0.3 s
for the 382-byte chat reply, 22 ms for a 1 KB argument, and no result after
100 s of CPU for a 4 KB argument or 300 s for the 1.9 KB ten-call reply.
The regex runs in C, where no signal or timer can stop it: only a child
process can be stopped.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any, Callable, Dict, NamedTuple, Optional


class Cap(NamedTuple):
    max_arg_bytes: int  # replies with more argument bytes are not tried on SGLang's side
    why: str


# core format -> its SGLang side's cap
CAPPED: Dict[str, Cap] = {
    "pythonic": Cap(1536, "SGLang's PythonicDetector matches the call list with a backtracking regex: no result "
                          "after 100 s of CPU for a 4 KB argument, 300 s for 1.9 KB in ten calls"),
}

# the CPU budget per case (seconds): half the mode's SGLang limit (5 s with
# --quick, the CI smoke run), at most this
MAX_BUDGET = 30.0


def budget(mode_limit: float) -> float:
    return min(mode_limit / 2, MAX_BUDGET)


def not_tried(core: str, arg_bytes: int) -> Optional[Dict[str, Any]]:
    """The side's entry for a reply over the format's size limit (bytes of
    call arguments: prose costs the regex nothing), else None."""
    cap = CAPPED.get(core)
    if cap is None or arg_bytes <= cap.max_arg_bytes:
        return None
    return {"skipped": "not tried: %d B of arguments > %d B (%s)" % (arg_bytes, cap.max_arg_bytes, cap.why),
            "capped": "not tried"}


def _child(conn: Any, fn: Callable[[], Any]) -> None:
    try:
        conn.send(("ok", fn()))
    except BaseException as e:  # reported, like a detector's exception in the parent
        conn.send(("error", "%s: %s" % (type(e).__name__, e)))
    finally:
        conn.close()


def _cpu_seconds(pid: int) -> Optional[float]:
    """CPU time (user + system) of a process so far, from /proc (Linux)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_capped(fn: Callable[[], Any], seconds: float, wall_factor: float = 4.0) -> Optional[Any]:
    """fn() in a forked child: its (picklable) result, or None when it did
    not finish within `seconds` of the child's CPU time (wall time where
    /proc is not there), or `wall_factor` times that in wall time (a loaded
    machine); the child is then killed. An exception in fn is raised here
    as a RuntimeError naming it."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn), daemon=True)
    proc.start()
    send.close()
    t0 = time.monotonic()
    try:
        while not recv.poll(0.05):
            cpu = _cpu_seconds(proc.pid)
            wall = time.monotonic() - t0
            if (cpu if cpu is not None else wall) > seconds or wall > seconds * wall_factor:
                return None
        status, value = recv.recv()
    except EOFError:  # the child died without an answer
        status, value = "error", "the child process exited with code %s" % proc.exitcode
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    if status == "error":
        raise RuntimeError(value)
    return value


def did_not_finish(seconds: float, why: str = "") -> Dict[str, Any]:
    """The side's entry for a case it did not finish."""
    out: Dict[str, Any] = {"skipped": "did not finish in %.0f s of CPU" % seconds, "did_not_finish_s": seconds,
                           "capped": "dnf %.0fs" % seconds}
    if why:
        out["skipped"] += " (%s)" % why
    return out
