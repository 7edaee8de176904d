"""Qwen3-Coder / MiniMax-M2: correctness on generated responses and one-shot
speed, native against SGLang's builtin detectors, in one run.

    PYTHONPATH=. python benchmarks/xml_rates.py [N]        (default N=100)

1. N responses per format, generated (hypothesis, derandomized: the same set
   every run) from typed argument values and rendered as the chat templates
   write them (tests/xml_support.py), are streamed through
   FunctionCallParser (the serving layer's entry) with four chunkings: one
   chunk, 20-200-char bursts, token-like (1-4 chars, the block tags whole, as
   a tokenizer emits special tokens) and character by character. A response
   is right when its calls equal the ground truth (names, decoded
   arguments) and its text equals the ground truth but for surrounding
   whitespace.
2. One-shot: parse_non_stream on a chat response and on a 16 KB write_file
   argument; best of several runs, microseconds per response.
"""
from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

import logging  # noqa: E402

logging.disable(logging.CRITICAL)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import support  # noqa: E402
import xml_support as X  # noqa: E402
from sglang_toolparse.bench import corpus  # noqa: E402

BUILTIN = {"qwen3_coder": "qwen3_coder", "minimax_m2": "minimax-m2"}
BLOCK_TAGS = {"qwen3_coder": ("<tool_call>", "</tool_call>"),
              "minimax_m2": ("<minimax:tool_call>", "</minimax:tool_call>")}


def generated(fmt: str, n: int):
    out = []

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data):
        out.append(data.draw(X.responses(fmt)))

    draw()
    return out[:n]


def chunkings(fmt: str, text: str, seed: int):
    tags = BLOCK_TAGS[fmt]
    return {
        "one chunk": [text],
        "bursts 20-200": corpus.burst_chunks(text, seed, tokens=tags),
        "token-like 1-4": corpus._cut(text, _sizes(seed), tags),
        "char by char": list(text),
    }


def _sizes(seed: int):
    import random

    rnd = random.Random(seed)
    return lambda: rnd.randint(1, 4)


def right(got, text, calls) -> bool:
    got_text, got_calls = got
    if got_text.strip() != text.strip() or len(got_calls) != len(calls):
        return False
    for (gn, ga), (wn, wa) in zip(got_calls, calls):
        try:
            if gn != wn or json.loads(ga) != json.loads(wa):
                return False
        except ValueError:
            return False
    return True


def main(n: int) -> None:
    from sglang_toolparse.sglang_plugin import FCP_MODULE, register

    register()
    import importlib

    fcp = importlib.import_module(FCP_MODULE)
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang_support import stream_through

    tools = [Tool(**t) for t in X.TOOLS]
    print("machine: %d CPUs (shared), %s UTC" % (os.cpu_count(), time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    print("\n1. right results on %d generated responses per format (calls and text)" % n)
    for fmt in X.FORMATS:
        cases = generated(fmt, n)
        counts = {}
        for impl in ("builtin", "native"):
            name = BUILTIN[fmt] + ("_native" if impl == "native" else "")
            for i, (resp, text, calls) in enumerate(cases):
                for label, chunks in chunkings(fmt, resp, i).items():
                    try:
                        ok = right(stream_through(fcp, tools, name, chunks), text, calls)
                    except Exception:
                        ok = False
                    counts[(impl, label)] = counts.get((impl, label), 0) + ok
        for label in ("token-like 1-4", "bursts 20-200", "one chunk", "char by char"):
            print("  %-12s %-15s SGLang %3d/%d   native %3d/%d" % (
                fmt, label, counts[("builtin", label)], n, counts[("native", label)], n))

    print("\n2. one-shot parse_non_stream, us per response (best of runs)")
    for fmt in X.FORMATS:
        for key in ("chat", "args16k"):
            sc = corpus.make_scenario(key)
            text = corpus.RENDERERS[fmt](sc.prose, sc.calls)
            ctools = [Tool(**t) for t in corpus.TOOLS]
            res = {}
            for impl in ("builtin", "native"):
                name = BUILTIN[fmt] + ("_native" if impl == "native" else "")
                p = fcp.FunctionCallParser(ctools, name)
                reps = 200 if key == "chat" else 20
                best = float("inf")
                for _ in range(5):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        p.parse_non_stream(text)
                    best = min(best, (time.perf_counter() - t0) / reps)
                res[impl] = best * 1e6
            print("  %-12s %-8s SGLang %8.1f   native %8.1f   SGLang/native %.1fx" % (
                fmt, key, res["builtin"], res["native"], res["builtin"] / res["native"]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
