"""Checks that parsing time grows linearly with the input for the
adversarial inputs (a benchmark, not a test: timings are never asserted in
the test suite).

    python scripts/scaling.py [--base BYTES]

For each format and input kind, times one-shot and 64 KB-chunk parsing at
sizes n, 2n, 4n, 8n (best of 3) and prints us/KB and the ratio t(8n)/t(n)
(linear: about 8; quadratic: about 64).

    python scripts/scaling.py --instructions

counts the C core's instructions instead (fuzz/bench.c under valgrind
callgrind) at n and 8n: exact, unlike wall time, which caches and other
load on the machine distort."""
import argparse
import gc
import os
import sys
import time

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# the input generators live with the tests (tests/format_table.py, no
# dependency); the parser is the source tree's only when it was built in
# place, otherwise the installed package (`pip install .`)
sys.path.insert(0, os.path.join(_ROOT, "tests"))
_PKG = os.path.join(_ROOT, "sglang_toolparse")
if os.path.isdir(_PKG) and any(f.startswith("_core.") and f.endswith((".so", ".pyd")) for f in os.listdir(_PKG)):
    sys.path.insert(0, _ROOT)

from format_table import fragments, spec  # noqa: E402
from sglang_toolparse import StreamParser  # noqa: E402
from sglang_toolparse._core import formats  # noqa: E402

TOOLS = ["get_weather", "search", "f"]


def kinds(fmt):
    s = spec(fmt)
    out = {
        "prose": lambda n: ("Plain prose, no markup at all. " * (n // 31 + 1))[:n],
        "marker_fragments": lambda n: fragments(fmt, n, 1),
    }
    if s.render_call is not None:
        out["many_calls"] = lambda n: s.response("", [("f", '{"i": %d}' % i) for i in range(n // 60 + 1)])
        out["unknown_tools"] = lambda n: s.response("", [("nope", "{}")] * (n // 50 + 1))
        if s.json_args:
            out["deep_nesting"] = lambda n: s.response("", [("f", "[" * (n // 2) + "]" * (n // 2))])
            out["big_argument"] = lambda n: s.response("", [("f", '{"d": "%s"}' % ("x" * n))])
            out["big_number"] = lambda n: s.response("", [("f", '{"d": [%s]}' % ",".join(["1.5e3"] * (n // 6)))])
    return out


def timed(text, chunk):
    best = 1e9
    gc.collect()
    gc.disable()  # CPython's cyclic GC is superlinear in live objects: not the parser's cost
    try:
        return _timed(text, chunk)
    finally:
        gc.enable()


def _timed(text, chunk):
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        p = StreamParser(fmt_global, TOOLS)
        if chunk:
            for i in range(0, len(text), chunk):
                p.feed(text[i:i + chunk])
        else:
            p.feed(text)
        p.finish()
        best = min(best, time.perf_counter() - t)
    return best


def instructions(base):
    import re
    import subprocess
    import tempfile

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    tmp = tempfile.mkdtemp()
    exe = os.path.join(tmp, "bench")
    csrc = os.path.join(root, "csrc")
    subprocess.check_call(["gcc", "-O2", "-I" + csrc, os.path.join(root, "fuzz", "bench.c")]
                          + [os.path.join(csrc, f) for f in sorted(os.listdir(csrc)) if f.endswith(".c")]
                          + ["-lm", "-o", exe])
    print("%-8s %-17s %-6s %14s %14s %8s" % ("format", "input", "chunks", "instr/B@n", "instr/B@8n", "I8n/In"))
    for fmt in formats():
        for name, make in kinds(fmt).items():
            files = []
            for k in (1, 8):
                path = os.path.join(tmp, "%s-%s-%d" % (fmt, name, k))
                with open(path, "wb") as f:
                    f.write(make(base * k).encode("utf-8", "surrogatepass"))
                files.append(path)
            for chunk in (0, 65536):
                irs = []
                for path in files:
                    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", exe,
                                          fmt, path, str(chunk)], capture_output=True, text=True).stderr
                    irs.append(int(re.search(r"refs:\s+([\d,]+)", out).group(1).replace(",", "")))
                sizes = [os.path.getsize(p) for p in files]
                print("%-8s %-17s %-6s %14.1f %14.1f %8.2f" % (
                    fmt, name, "64K" if chunk else "one", irs[0] / sizes[0], irs[1] / sizes[1], irs[1] / irs[0]))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=int, default=256 << 10)
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--format", action="append", help="only these formats (repeatable; default: all)")
    args = ap.parse_args()
    if args.instructions:
        instructions(args.base)
        sys.exit(0)
    print("%-8s %-17s %-6s %10s %10s %8s" % ("format", "input", "chunks", "us/KB@n", "us/KB@8n", "t8n/tn"))
    for fmt_global in args.format or formats():
        for name, make in kinds(fmt_global).items():
            texts = [make(args.base * k) for k in (1, 2, 4, 8)]
            for chunk in (0, 65536):
                ts = [timed(t, chunk) for t in texts]
                kb = [len(t.encode("utf-8", "surrogatepass")) / 1024 for t in texts]
                print("%-8s %-17s %-6s %10.2f %10.2f %8.1f" % (
                    fmt_global, name, "64K" if chunk else "one", ts[0] / kb[0] * 1e6, ts[3] / kb[3] * 1e6,
                    ts[3] / ts[0]))
