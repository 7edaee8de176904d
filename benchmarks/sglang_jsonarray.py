"""tool_choice="required" / a named tool: SGLang 0.5.23's JsonArrayParser
next to NativeJsonArrayParser (the `jsonarray` row of csrc/fmt_jsontag.c),
side by side in one run, CPU clock (issue 19 item 3).

    PYTHONPATH=. python benchmarks/sglang_jsonarray.py [--repeat N]  (SGLang's 64 KiB 4-char row alone takes minutes)

Responses are what SGLang's JSON-schema constraint makes a model write:
`[{"name": ..., "parameters": {...}}, ...]`. Rows: a chat-sized reply (two
calls), one call with a 16 KiB and a 64 KiB string argument, each fed in
4-character chunks and in bursts of 20-200 characters; a burst of ten calls.
Columns: CPU per chunk, total, and how much of the long argument was sent
before its call's object closed (streamed as generated, or held).
Then Mistral's pre-v11 array form (`[TOOL_CALLS] [{...}]`) through
FunctionCallParser, `mistral` next to `mistral_native` (--only-mistral:
just those rows).
"""
from __future__ import annotations

import argparse
import json
import random
import time

from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.json_array_parser import JsonArrayParser

from sglang_toolparse.sglang_adapter import NativeJsonArrayParser

TOOLS = [Tool(type="function", function={"name": n, "parameters": {"type": "object", "properties": {}}})
         for n in ("get_weather", "search", "write_file")]


def response(calls):
    return json.dumps([{"name": n, "parameters": a} for n, a in calls], ensure_ascii=False)


def big(n):
    words = "lorem ipsum dolor sit amet \"quoted\" tab\t é ☀ line\n".split(" ")
    out, rnd = [], random.Random(n)
    while sum(map(len, out)) < n:
        out.append(rnd.choice(words))
    return " ".join(out)[:n]


CASES = {
    "chat": response([("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": "São Paulo weather"})]),
    "16 KiB arg": response([("write_file", {"path": "a.txt", "content": big(16 * 1024)})]),
    "64 KiB arg": response([("write_file", {"path": "a.txt", "content": big(64 * 1024)})]),
    "10 calls": response([("search", {"query": "q%d" % i, "n": i}) for i in range(10)]),
}


def fixed(text, n=4):
    return [text[i:i + n] for i in range(0, len(text), n)]


def bursts(text, seed=0):
    rnd, out, i = random.Random(seed), [], 0
    while i < len(text):
        k = rnd.randint(20, 200)
        out.append(text[i:i + k])
        i += k
    return out


def run(cls, chunks):
    """(CPU seconds, arguments, fraction of the last call's arguments sent
    before the chunk that closes its object)"""
    p = cls()
    args, fed, close_at, sent_before = {}, 0, None, None
    total = sum(map(len, chunks))
    close = total - 1  # the last call's `}` is the byte before the array's `]`
    t0 = time.process_time()
    for c in chunks:
        r = p.parse_streaming_increment(c, TOOLS)
        for it in r.calls:
            args[it.tool_index] = args.get(it.tool_index, "") + it.parameters
        fed += len(c)
        if close_at is None and fed >= close:
            close_at = fed
            last = max(args) if args else None
            sent_before = len(args.get(last, "")) if last is not None else 0
    for it in p.finish(TOOLS).calls:
        args[it.tool_index] = args.get(it.tool_index, "") + it.parameters
    dt = time.process_time() - t0
    last = max(args) if args else None
    full = len(args[last]) if last is not None else 0
    return dt, args, (sent_before or 0) / full if full else 0.0


def mistral_rows(repeat):
    """Mistral's pre-v11 array form through FunctionCallParser: `mistral`
    (SGLang's MistralDetector) next to `mistral_native` (the mistral-array
    row). Only the first call is compared: SGLang's streaming keeps only the
    first call of the array form (docs/PARSERS.md)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins

    load_plugins()

    def pre_v11(calls):
        return "[TOOL_CALLS] [" + ", ".join(
            json.dumps({"name": n, "arguments": a}, ensure_ascii=False)[:-1] + ', "id": "a1B2c3D4e"}'
            for n, a in calls) + "]"

    cases = {
        "chat": pre_v11([("get_weather", {"city": "Paris", "days": 3})]),
        "16 KiB arg": pre_v11([("write_file", {"path": "a.txt", "content": big(16 * 1024)})]),
    }

    def go(name, chunks):
        p = FunctionCallParser(TOOLS, name)
        args = {}
        t0 = time.process_time()
        for c in chunks:
            for it in p.parse_stream_chunk(c)[1]:
                args[it.tool_index] = args.get(it.tool_index, "") + it.parameters
        for it in p.parse_stream_end()[1]:
            args[it.tool_index] = args.get(it.tool_index, "") + it.parameters
        return time.process_time() - t0, args

    print("\n| Mistral pre-v11 case | chunking | chunks | mistral µs/chunk | mistral_native µs/chunk | ratio | "
          "same first call |")
    print("|---|---|---|---|---|---|---|")
    for name, text in cases.items():
        for cname, chunker in (("4-char", fixed), ("bursts", bursts)):
            chunks = chunker(text)
            s = min((go("mistral", chunks) for _ in range(repeat)), key=lambda r: r[0])
            n = min((go("mistral_native", chunks) for _ in range(repeat)), key=lambda r: r[0])
            print("| %s | %s | %d | %.2f | %.2f | %.1fx | %s |" % (
                name, cname, len(chunks), s[0] / len(chunks) * 1e6, n[0] / len(chunks) * 1e6,
                s[0] / n[0] if n[0] else float("inf"), s[1].get(0) == n[1].get(0)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only-mistral", action="store_true")
    a = ap.parse_args()
    if a.only_mistral:
        mistral_rows(a.repeat)
        return
    print("| case | chunking | chunks | JsonArrayParser µs/chunk | native µs/chunk | ratio | "
          "args before close (SGLang / native) | same arguments |")
    print("|---|---|---|---|---|---|---|---|")
    for name, text in CASES.items():
        for cname, chunker in (("4-char", fixed), ("bursts", bursts)):
            chunks = chunker(text)
            best = {}
            for cls in (JsonArrayParser, NativeJsonArrayParser):
                runs = [run(cls, chunks) for _ in range(a.repeat)]
                best[cls] = min(runs, key=lambda r: r[0])
            s, n = best[JsonArrayParser], best[NativeJsonArrayParser]
            print("| %s | %s | %d | %.2f | %.2f | %.1fx | %.0f%% / %.0f%% | %s |" % (
                name, cname, len(chunks), s[0] / len(chunks) * 1e6, n[0] / len(chunks) * 1e6,
                s[0] / n[0] if n[0] else float("inf"), s[2] * 100, n[2] * 100, s[1] == n[1]))
    mistral_rows(a.repeat)


if __name__ == "__main__":
    main()
