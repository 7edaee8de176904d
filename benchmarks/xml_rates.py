"""Qwen3-Coder / MiniMax-M2: correctness on generated responses and one-shot
speed, native against SGLang's builtin detectors, in one run.

    PYTHONPATH=. python benchmarks/xml_rates.py [N]        (default N=100)

1. N responses per format, generated (seeded: the same set every run) from
   typed argument values (prose, 1-3 calls, mostly with arguments) and
   rendered as the chat templates write them (tests/xml_support.py), are
   streamed through
   FunctionCallParser (the serving layer's entry) with four chunkings: one
   chunk, 20-200-char bursts, token-like (1-4 chars, the block tags whole, as
   a tokenizer emits special tokens) and character by character. A response
   is right when its calls equal the ground truth (names, decoded
   arguments) and its text equals the ground truth but for whitespace.
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

import xml_support as X  # noqa: E402
from sglang_toolparse.bench import corpus  # noqa: E402

BUILTIN = {"qwen3_coder": "qwen3_coder", "minimax_m2": "minimax-m2"}
BLOCK_TAGS = {"qwen3_coder": ("<tool_call>", "</tool_call>"),
              "minimax_m2": ("<minimax:tool_call>", "</minimax:tool_call>")}


_WORDS = ["Sure", "let", "me", "check", "the", "file", "weather", "and", "run", "tests", "now", "ok", "café", "東京"]
_STRINGS = ["Paris", "São Paulo ☀", "x = a < b and c > d", "line one\nline two\n", "  padded  ", "123", "true",
            'say "hi" \\ bye', "def f():\n    return {'a': [1, 2]}\n", "a</b>", ""]


def _value(rnd, fmt: str, schema: dict):
    kind = schema.get("type") or ("enum" if "enum" in schema else "optional_int")
    if kind == "string":
        v = rnd.choice(_STRINGS + [" ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(1, 30)))])
        return v
    if kind == "integer":
        return rnd.randint(-10**6, 10**6)
    if kind == "number":
        return rnd.choice([rnd.uniform(-1e3, 1e3), rnd.randint(-50, 50), 0.5, 1e-7])
    if kind == "boolean":
        return rnd.random() < 0.5
    if kind == "enum":
        return rnd.choice(schema["enum"])
    if kind == "optional_int":
        return None if rnd.random() < 0.2 else rnd.randint(0, 100)
    if kind == "object":
        return {"k%d" % i: rnd.choice([1, "v", [True, None], {"x": 2.5}]) for i in range(rnd.randint(0, 3))}
    return [rnd.choice([1, "v", None, {"x": [1]}]) for _ in range(rnd.randint(0, 3))]


def generated(fmt: str, n: int, seed: int = 20261201):
    """n responses (text, expected text, expected calls), seeded: prose, one
    to three calls (mostly with arguments), sometimes prose after."""
    import random

    rnd = random.Random(seed)
    out = []
    weighted = ["alpha"] * 6 + ["beta_tool"] * 3 + ["noargs"]
    for _ in range(n):
        before = " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(0, 12)))
        bodies, calls = [], []
        for _ in range(rnd.randint(1, 3)):
            name = rnd.choice(weighted)
            props = X.TOOL_PROPS[name]
            keys = rnd.sample(sorted(props), min(len(props), rnd.randint(1, 5))) if props else []
            args = {k: _value(rnd, fmt, props[k]) for k in keys}
            bodies.append(X.render(fmt, name, args))
            calls.append((name, json.dumps({k: X.truth_number(fmt, v) for k, v in args.items()}, ensure_ascii=False)))
        after = "Done." if rnd.random() < 0.3 else ""
        resp = (before + "\n" if before else "") + X.block(fmt, bodies) + ("\n" + after if after else "")
        out.append((resp, before + ("\n" + after if after else ""), calls))
    return out


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
    # text: equal but for whitespace (a leaked template newline is cosmetic;
    # a lost or added word is not)
    return calls_right(got, calls) and got[0].split() == text.split()


def calls_right(got, calls) -> bool:
    got_calls = got[1]
    if len(got_calls) != len(calls):
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
                        got = stream_through(fcp, tools, name, chunks)
                        ok, cok = right(got, text, calls), calls_right(got, calls)
                    except Exception:
                        ok = cok = False
                    counts[(impl, label)] = counts.get((impl, label), 0) + ok
                    counts[(impl, label, "calls")] = counts.get((impl, label, "calls"), 0) + cok
        for label in ("token-like 1-4", "bursts 20-200", "one chunk", "char by char"):
            print("  %-12s %-15s SGLang %3d/%d (calls alone %3d)   native %3d/%d (calls alone %3d)" % (
                fmt, label, counts[("builtin", label)], n, counts[("builtin", label, "calls")],
                counts[("native", label)], n, counts[("native", label, "calls")]))

    print("\n2. one-shot parse_non_stream, us of CPU time per response (best of runs)")
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
                    t0 = time.thread_time()
                    for _ in range(reps):
                        p.parse_non_stream(text)
                    best = min(best, (time.thread_time() - t0) / reps)
                res[impl] = best * 1e6
            print("  %-12s %-8s SGLang %8.1f   native %8.1f   SGLang/native %.1fx" % (
                fmt, key, res["builtin"], res["native"], res["builtin"] / res["native"]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
