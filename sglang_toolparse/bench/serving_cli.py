"""`python -m sglang_toolparse bench --serving`: what a tool call costs the
other streams of a live SGLang server (serving_load.py)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

DEFAULT_JSON = os.path.join("benchmarks", "results", "serving.json")

EPILOG = """\
SGLang's real OpenAIServingChat (a stub tokenizer manager instead of the
model) serves --streams concurrent streaming chat requests on one event loop.
One request streams a large write_file tool call; the others stream prose.
For each format, the builtin detector and the native one run the same load,
then a baseline in which the large stream is prose of the same length.
Reported: CPU seconds the serving loop spends on the tool-call response, and
the p50/p99/max gap between consecutive chunks of the other streams while it
is in flight. See docs/BENCH.md ("Serving benchmark").
"""


def build_parser() -> argparse.ArgumentParser:
    from .serving_load import DEFAULT_FORMATS

    ap = argparse.ArgumentParser(
        prog="python -m sglang_toolparse bench --serving",
        description="Concurrent serving-path benchmark: SGLang's event loop with one large tool call.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="1 and 4 KB calls, 4 streams (CI smoke, < 1 min)")
    size.add_argument("--full", action="store_true", help="16, 64 and 256 KB calls, 16 streams, builtin limit 600 s")
    ap.add_argument("--formats", metavar="A,B",
                    help="core, native or builtin names (default %s)" % ",".join(DEFAULT_FORMATS))
    ap.add_argument("--sizes", metavar="KB,KB", help="tool-call argument sizes in KiB (default 16,64)")
    ap.add_argument("--streams", type=int, metavar="N", help="concurrent requests, the large one included (default 8)")
    ap.add_argument("--step-ms", type=float, metavar="MS", help="decode step: tokens released every MS ms (default 5)")
    ap.add_argument("--tool-tokens-per-step", type=int, metavar="K",
                    help="tokens per step of the large stream (default 8; the prose streams get 1)")
    ap.add_argument("--builtin-limit", type=float, metavar="SECONDS",
                    help="stop a builtin run still in flight after this long and say so (default 60)")
    ap.add_argument("--incremental", action="store_true", help="SGLang's --incremental-streaming-output")
    agent = ap.add_mutually_exclusive_group()
    agent.add_argument("--no-agent", action="store_true", help="skip the agent scenario (serving_agent.py)")
    agent.add_argument("--agent-only", action="store_true", help="run only the agent scenario")
    ap.add_argument("--agent-messages", metavar="N,N", help="conversation lengths of the agent scenario "
                    "(default 10,300,1000)")
    ap.add_argument("--agent-format", metavar="CORE", default="qwen25", help="format of the agent scenario "
                    "(default qwen25)")
    ap.add_argument("--json", metavar="PATH", help="JSON output (default %s)" % DEFAULT_JSON)
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("--png", metavar="PATH", help="gap-over-time plot (default: the JSON path with .png)")
    ap.add_argument("--no-png", action="store_true")
    ap.add_argument("--no-progress", action="store_true")
    return ap


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from . import report as rep
    from . import serving_load as sl
    from .serving_report import print_agent, print_serving, write_png

    cfg = sl.LoadConfig()
    if args.quick:
        cfg = cfg._replace(streams=4, sizes_kib=(1, 4), warmup_steps=10, builtin_limit_s=30.0)
    elif args.full:
        cfg = cfg._replace(streams=16, sizes_kib=(16, 64, 256), builtin_limit_s=600.0)
    if args.sizes:
        cfg = cfg._replace(sizes_kib=tuple(int(x) for x in args.sizes.split(",") if x.strip()))
    for opt, field in (("streams", "streams"), ("step_ms", "step_ms"), ("tool_tokens_per_step", "tool_tokens_per_step"),
                       ("builtin_limit", "builtin_limit_s")):
        v = getattr(args, opt)
        if v is not None:
            cfg = cfg._replace(**{field: v})
    if args.incremental:
        cfg = cfg._replace(incremental=True)
    if cfg.streams < 2 or cfg.step_ms <= 0 or cfg.tool_tokens_per_step < 1 or not cfg.sizes_kib \
            or min(cfg.sizes_kib) < 1:
        raise SystemExit("need --streams >= 2, --step-ms > 0, --tool-tokens-per-step >= 1, sizes >= 1")
    formats = [x.strip() for x in args.formats.split(",") if x.strip()] if args.formats else list(sl.DEFAULT_FORMATS)

    print("importing SGLang ...", file=sys.stderr, flush=True)
    if args.agent_only:
        from .runner import environment
        from .sides import SGLang

        report = {"schema": "sglang_toolparse.bench.serving/1", "config": dict(cfg._asdict()),
                  "environment": environment(SGLang()), "results": [], "timelines": {}, "targets": [], "notes": []}
    else:
        report = sl.run_serving(cfg, formats, show_progress=not args.no_progress)
        print_serving(report, sys.stdout)
    if not args.no_agent:
        from . import serving_agent as sa

        msgs = tuple(int(x) for x in args.agent_messages.split(",")) if args.agent_messages else sa.MESSAGES
        report["agent"] = sa.run_agent(args.agent_format, msgs, cfg.sizes_kib, cfg,
                                       show_progress=not args.no_progress,
                                       repeats=1 if args.quick else sa.REPEATS)
        print_agent(report["agent"], sys.stdout)
    sys.stdout.flush()
    if not args.no_json:
        path = args.json or DEFAULT_JSON
        print("JSON: %s" % rep.write_json(report, path))
        if not args.no_png and report["results"]:
            png = args.png or os.path.splitext(path)[0] + ".png"
            written = write_png(report, png)
            print("PNG: %s" % (written or "not written (matplotlib not installed)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
