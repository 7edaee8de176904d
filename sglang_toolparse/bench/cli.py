"""`python -m sglang_toolparse bench`: the side-by-side benchmark."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import List, Optional

DEFAULT_JSON = os.path.join("benchmarks", "results", "latest.json")
DEFAULT_REPLAY_JSON = os.path.join("benchmarks", "results", "replay.json")

EPILOG = """\
Without --input: runs the built-in corpus (a chat response with ~300 B of
arguments, 2 KB of prose, 3 calls in 20-200-char bursts, one call with a 1, 4,
16 and 64 KB argument) for every format registered by the plugin, through
four sides: native (<name>_native via FunctionCallParser.parse_stream_chunk),
sglang (the builtin detector, same calls), floor (a detector returning an
empty result: SGLang's own per-chunk cost) and standalone
(sglang_toolparse.StreamParser.feed); also rows for mistral_native's pre-v11
array and for tool_choice="required" (JsonArrayParser, SGLang's serving
path, next to NativeJsonArrayParser) on the chat, burst and 16 KB cases.
Prints us per chunk, ratios, whether
each side's calls and text equal the ground truth, and the project's targets.

--input FILE: replays recorded model outputs, one JSON object per line:
  {"format": "qwen25", "text": "<model output>", "tools": [<OpenAI tool dicts>],
   "id": "optional label", "chunks": ["optional", "recorded", "chunking"]}
"format" is a builtin parser name (qwen25, qwen, hermes, ...) or a native
name (qwen25_native). Each line is parsed by the native detector (streaming),
SGLang's builtin detector (streaming) and SGLang's builtin one-shot
(parse_non_stream); the speed and every difference in calls or text are
reported. See docs/BENCH.md.

--serving: the concurrent serving-path benchmark (SGLang's OpenAIServingChat
with one large tool call among N streams); `bench --serving --help`.
"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m sglang_toolparse bench",
        description="Side-by-side benchmark of the native tool-call parsers and SGLang's.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small cases, few repeats (CI smoke, < 30 s)")
    size.add_argument("--full", action="store_true",
                      help="adds a 256 KB argument, more repeats, SGLang cases up to 10 min each")
    ap.add_argument("--input", metavar="FILE", help="replay recorded outputs (JSONL, see below)")
    ap.add_argument("--chunk", type=int, default=4, metavar="N", help="characters per chunk (default 4)")
    ap.add_argument("--split-markers", action="store_true",
                    help="let chunk boundaries fall inside special tokens such as <tool_call> (by default a "
                         "special token is never split, as a tokenizer emits it whole)")
    ap.add_argument("--formats", metavar="A,B", help="only these formats (native, builtin or core names)")
    ap.add_argument("--scenarios", metavar="A,B",
                    help="only these scenarios (chat, prose2k, bursts3, args<N>k)")
    ap.add_argument("--sglang-limit", type=float, metavar="SECONDS",
                    help="skip an SGLang case whose estimated time exceeds this "
                         "(default: 10 quick, 60 default, 600 full)")
    ap.add_argument("--json", metavar="PATH", help="JSON output (default %s, or %s with --input)"
                    % (DEFAULT_JSON, DEFAULT_REPLAY_JSON))
    ap.add_argument("--no-json", action="store_true", help="do not write JSON")
    ap.add_argument("--png", metavar="PATH",
                    help="plot of time against argument length (default: the JSON path with .png); "
                         "needs matplotlib")
    ap.add_argument("--no-png", action="store_true", help="do not write the plot")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter_ns (default); cpu: time.thread_time_ns, which leaves out "
                         "time the process was descheduled (steadier on a busy machine). Both are in the JSON.")
    ap.add_argument("--no-sglang", action="store_true", help="do not import SGLang (standalone side only)")
    ap.add_argument("--vllm-rust-parser", metavar="PATH",
                    help="vLLM's _rust_tool_parser.abi3.so (or its directory) as an extra side for the formats it "
                         "has (default: $SGLANG_TOOLPARSE_VLLM_RUST_PARSER, else an installed vllm; "
                         "scripts/get-vllm-rust-parser.sh extracts it from a wheel)")
    ap.add_argument("--no-vllm", action="store_true", help="do not look for vLLM's Rust tool parser")
    ap.add_argument("--no-oneshot", action="store_true", help="skip the one-shot (non-streaming) table")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def _split(v: Optional[str]) -> Optional[List[str]]:
    return [x.strip() for x in v.split(",") if x.strip()] if v else None


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--serving" in argv:
        from .serving_cli import main as serving_main

        return serving_main([a for a in argv if a != "--serving"])
    args = build_parser().parse_args(argv)
    if args.chunk < 1:
        raise SystemExit("--chunk must be >= 1")
    from . import report as rep
    from .runner import MODES
    from .sides import SGLang

    mode = MODES["quick" if args.quick else "full" if args.full else "default"]
    mode = mode._replace(clock=args.clock)
    if args.sglang_limit is not None:
        mode = mode._replace(sglang_limit=args.sglang_limit)
    show = not args.no_progress

    if args.no_sglang:
        sg = SGLang.unavailable("disabled with --no-sglang")
    else:
        print("importing SGLang ...", file=sys.stderr, flush=True)
        sg = SGLang()
        if sg.ok:
            print("SGLang %s imported in %.1f s" % (sg.version, sg.import_seconds), file=sys.stderr, flush=True)
        else:
            print("SGLang is not importable (%s): measuring the native standalone parser only"
                  % sg.error, file=sys.stderr, flush=True)

    # parsers log every dropped call; that would be timed and flood the
    # terminal (both sides alike), so logging is off while measuring
    logging.disable(logging.CRITICAL)
    try:
        if args.input:
            from .replay import InputError, load_jsonl, print_replay, replay

            try:
                records = load_jsonl(args.input)
                result = replay(records, chunk=args.chunk, mode=mode, sg=sg, show_progress=show,
                                split_markers=args.split_markers)
            except (InputError, OSError) as e:
                print("error: %s" % e, file=sys.stderr)
                return 2
            result["input"] = args.input
            print_replay(result, sys.stdout)
            json_path = args.json or DEFAULT_REPLAY_JSON
        else:
            from .runner import run_bench
            from .vllm_peer import load as load_peer

            peer = None if args.no_vllm else load_peer(args.vllm_rust_parser)
            result = run_bench(mode, formats=_split(args.formats), scenarios=_split(args.scenarios),
                               chunk=args.chunk, split_markers=args.split_markers, show_progress=show, sg=sg,
                               peer=peer, oneshot=not args.no_oneshot)
            rep.print_bench(result, sys.stdout)
            json_path = args.json or DEFAULT_JSON
    finally:
        logging.disable(logging.NOTSET)
    sys.stdout.flush()
    if not args.no_json:
        print("JSON: %s" % rep.write_json(result, json_path))
        if not args.input and not args.no_png:
            png = args.png or os.path.splitext(json_path)[0] + ".png"
            written = rep.write_png(result, png)
            if written:
                print("PNG: %s" % written)
            else:
                print("PNG: not written (matplotlib not installed, or no argument-size rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
