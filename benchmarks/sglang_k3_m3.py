"""SGLang 0.5.23's `kimi_k3` and `minimax-m3` detectors, measured the way
benchmarks/template_parsers.py measures the template-driven names (same
cost and exactness functions), next to `kimi_k3_native` and `minimax-m3_native` (issue 23 item 1).

    PYTHONPATH=. python benchmarks/sglang_k3_m3.py [--kib 16]

Responses are written as the formats' encoders write them: Kimi K3 XTML
(`<|open|>response<|sep|>…<|close|>response<|sep|>`, a `tools` channel of
`<|open|>call tool="N" index="i"<|sep|>` calls with typed `argument`
elements, `<|close|>message<|sep|>`), MiniMax-M3 (every tag behind the
`]<]minimax[>[` namespace token, parameters as `<KEY>VALUE</KEY>`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import template_parsers as T  # noqa: E402

NS = "]<]minimax[>["
K3_TYPES = {str: "string", int: "number", float: "number", bool: "boolean", dict: "object",
            list: "array", type(None): "null"}


def _attr(s: str) -> str:
    return s.replace("&", "&amp;").replace('"', "&quot;")


def kimi_k3(prose, calls):
    out = f"<|open|>response<|sep|>{prose}<|close|>response<|sep|>" if prose else ""
    out += "<|open|>tools<|sep|>"
    for i, (name, args) in enumerate(calls):
        out += f'<|open|>call tool="{_attr(name)}" index="{i + 1}"<|sep|>'
        for k, v in args.items():
            body = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            out += (f'<|open|>argument key="{_attr(k)}" type="{K3_TYPES[type(v)]}"<|sep|>'
                    f"{body}<|close|>argument<|sep|>")
        out += "<|close|>call<|sep|>"
    return out + "<|close|>tools<|sep|><|close|>message<|sep|>"


def minimax_m3(prose, calls):
    out = prose + NS + "<tool_call>"
    for name, args in calls:
        out += NS + f'<invoke name="{name}">'
        for k, v in args.items():
            out += NS + f"<{k}>" + (v if isinstance(v, str) else json.dumps(v)) + NS + f"</{k}>"
        out += NS + "</invoke>"
    return out + NS + "</tool_call>"


ROWS = {
    "kimi_k3": (dict(tool_call_parser="kimi_k3"), kimi_k3),
    "kimi_k3_native": (dict(tool_call_parser="kimi_k3_native"), kimi_k3),
    "minimax-m3": (dict(tool_call_parser="minimax-m3"), minimax_m3),
    "minimax-m3_native": (dict(tool_call_parser="minimax-m3_native"), minimax_m3),
}


def main():
    from sglang.srt.plugins import load_plugins

    load_plugins()  # registers the X_native names
    ap = argparse.ArgumentParser()
    ap.add_argument("--kib", type=int, default=16)
    a = ap.parse_args()
    print(f"# cost: one response, a {a.kib} KiB string argument; CPU seconds")
    for name, (kw, render) in ROWS.items():
        r = T.measure_cost(name, kw, render, a.kib)
        print(f"| {name} | {r['bytes']} | 4-char {r['4-char']:.3f} s (growth x4 size {r['4-char x4 size']:.1f}) | "
              f"bursts {r['bursts']:.4f} s ({r['bursts x4 size']:.1f}) | one-shot {r['one-shot'] * 1e3:.2f} ms | "
              f"streamed == one-shot {r['4-char same as one-shot'] and r['bursts same as one-shot']} | "
              f"long call's first argument byte after {r['args at']:.1%} |")
    print("\n# exactness: a small response with prose and 2 calls")
    for name, (kw, render) in ROWS.items():
        print(json.dumps(T.measure_exactness(name, kw, render), ensure_ascii=False))


if __name__ == "__main__":
    main()
