"""SGLang's template-driven tool-call names (`muse`, `inkling`, `beam`,
`response_template`): streaming cost and exactness, measured through
FunctionCallParser (the serving layer's entry), to decide whether a native
parser would help (issue 23 item 3; the decision is in docs/PARSERS.md).

    PYTHONPATH=. python benchmarks/template_parsers.py [--kib 16] [--quick]

For each name, one response in the wire format the name parses (prose, a
short call, a call with an N KiB string argument; `response_template` with a
JSON template of our own and with Beam's template given as data):

1. cost: CPU time to stream the response in 4-char chunks and in 20-200-char
   bursts, the same for the response with a 1/4 size argument (the ratio shows
   whether the per-chunk work grows with what came before: ~4 for linear,
   ~16 for quadratic), and parse_non_stream once;
2. exactness: the calls (names, decoded arguments) and the text of a small
   response streamed at every two-piece split, in 1..7-char chunks and char
   by char, compared with parse_non_stream of the whole; a cut-off response
   (every prefix) streamed whole and char by char must agree as well. The
   last column compares each cut-off prefix streamed with parse_non_stream
   of it: it also counts what differs by design (a stream has already sent
   a cut-off call's name and partial arguments, which one-shot drops; and
   FunctionCallParser returns text without the detector's marker unparsed).

Times are CPU seconds (time.process_time), one process, side by side; take
them on a quiet machine or as ratios.
"""
from __future__ import annotations

import argparse
import json
import logging
import random
import time

logging.disable(logging.CRITICAL)

from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from sglang.srt.parser.beam import BEAM_RESPONSE_TEMPLATE  # noqa: E402

TOOLS = [
    Tool(type="function", function=Function(name="write_file", parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})),
    Tool(type="function", function=Function(name="get_weather", parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}})),
]

# a response template of the generic kind (checkpoint metadata): calls as
# JSON objects between tags
JSON_TEMPLATE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function",
                          "function": {"name": "{content.name}", "arguments": "{content.arguments}"}},
        },
    },
}


class _Tok:
    """Stands for a tokenizer whose checkpoint metadata carries a response template."""

    def __init__(self, template):
        self.response_template = template


# name -> (FunctionCallParser kwargs, render(prose, calls) -> response text)
def _muse(prose, calls):
    out = prose + "<|eom|>" if prose else ""
    for name, args in calls:
        params = "".join(f'<atem:parameter name="{k}">{v if isinstance(v, str) else json.dumps(v)}'
                         f"</atem:parameter>\n" for k, v in args.items())
        out += (f"<|start|>assistant to={name}<|message|><atem:function_calls>\n"
                f'<atem:invoke name="{name}">\n{params}</atem:invoke>\n</atem:function_calls><|eom|>')
    return out


def _inkling(prose, calls):
    out = prose
    for name, args in calls:
        out += (f"<|message_model|>{name}<|content_invoke_tool_json|>"
                + json.dumps({"name": name, "args": args}, ensure_ascii=False) + "<|end_message|>")
    return out


def _beam(prose, calls):
    # as the template reads it: the answer channel, then each call opens at
    # " to=NAME" after the previous closer's <|start|>assistant
    out = f"<|channel|>final<|message|>{prose}<|end|><|start|>assistant" if prose else ""
    for name, args in calls:
        params = "".join(f'<rfl:parameter name="{k}">\n{v if isinstance(v, str) else json.dumps(v)}\n'
                         f"</rfl:parameter>" for k, v in sorted(args.items()))
        out += (f" to={name}<|channel|>analysis <|constrain|>xml<|message|>{params}"
                "<|end|><|start|>assistant")
    return out


def _json_tags(prose, calls):
    out = prose
    for name, args in calls:
        out += "<tool_call>" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False) + "</tool_call>"
    return out


ROWS = {
    "muse": (dict(tool_call_parser="muse"), _muse),
    "inkling": (dict(tool_call_parser="inkling"), _inkling),
    # the serving layer passes the prompt's tail as the prefix
    "beam": (dict(tool_call_parser="beam", prefix="<|start|>assistant"), _beam),
    "response_template (JSON tags)": (dict(tool_call_parser="response_template", prefix="<|im_start|>assistant\n",
                                           tokenizer=_Tok(JSON_TEMPLATE)), _json_tags),
    "response_template (Beam's)": (dict(tool_call_parser="response_template", prefix="<|start|>assistant",
                                        tokenizer=_Tok(BEAM_RESPONSE_TEMPLATE)), _beam),
}


def _parser(kw):
    return FunctionCallParser(TOOLS, **kw)


def _big(n: int) -> str:
    rnd = random.Random(n)
    words = ["alpha", "beta", "gamma", "delta", "line", "x = 1", "tab\t", "quote \"q\""]
    out, size = [], 0
    while size < n:
        w = rnd.choice(words) + (" " if rnd.random() < .9 else "\n")
        out.append(w)
        size += len(w)
    return "".join(out)[:n]


def _calls(arg_len: int):
    return [("get_weather", {"city": "Paris", "days": 3}),
            ("write_file", {"path": "notes/a.txt", "content": _big(arg_len)})]


def chunks_fixed(text, n):
    return [text[i:i + n] for i in range(0, len(text), n)]


def chunks_bursts(text, seed=0, lo=20, hi=200):
    rnd, out, i = random.Random(seed), [], 0
    while i < len(text):
        k = rnd.randint(lo, hi)
        out.append(text[i:i + k])
        i += k
    return out


def stream(kw, chunks):
    """(text, calls) as the serving layer accumulates them: calls by
    tool_index, name from the first item that names it, arguments the
    concatenated deltas."""
    p = _parser(kw)
    text, calls = [], {}
    for c in chunks:
        normal, items = p.parse_stream_chunk(c)
        text.append(normal)
        for it in items:
            d = calls.setdefault(it.tool_index, {"name": None, "arguments": ""})
            if it.name:
                d["name"] = it.name
            d["arguments"] += it.parameters or ""
    fin = getattr(p.detector, "finish", None)
    if fin is not None:
        r = fin(p.tools)
        text.append(r.normal_text)
        for it in r.calls:
            d = calls.setdefault(it.tool_index, {"name": None, "arguments": ""})
            if it.name:
                d["name"] = it.name
            d["arguments"] += it.parameters or ""
    return "".join(text), _norm([calls[k] for k in sorted(calls)])


def oneshot(kw, text):
    normal, items = _parser(kw).parse_non_stream(text)
    return normal, _norm([{"name": it.name, "arguments": it.parameters} for it in items])


def _norm(calls):
    out = []
    for c in calls:
        try:
            a = json.loads(c["arguments"]) if c["arguments"] else None
        except ValueError:
            a = ("<not JSON>", c["arguments"])
        out.append((c["name"], a))
    return out


def first_args_at(kw, chunks):
    """Share of the response fed before the long call's first argument byte
    reaches the client (1.0: only when the call is complete)."""
    p, fed, total = _parser(kw), 0, sum(len(c) for c in chunks)
    for c in chunks:
        fed += len(c)
        _, items = p.parse_stream_chunk(c)
        if any(it.tool_index == 1 and it.parameters for it in items):
            return fed / total
    return float("nan")


def cpu(f, *a):
    t = time.process_time()
    r = f(*a)
    return time.process_time() - t, r


def measure_cost(name, kw, render, kib):
    full = render("I will write it.", _calls(kib * 1024))
    quarter = render("I will write it.", _calls(kib * 256))
    want = oneshot(kw, full)
    row = {"name": name, "bytes": len(full)}
    for label, chunker in (("4-char", lambda t: chunks_fixed(t, 4)), ("bursts", chunks_bursts)):
        t_full, got = cpu(stream, kw, chunker(full))
        t_q, _ = cpu(stream, kw, chunker(quarter))
        row[label] = t_full
        row[label + " x4 size"] = t_full / t_q if t_q else float("nan")
        row[label + " same as one-shot"] = got == want
    row["one-shot"], _ = cpu(oneshot, kw, full)
    row["args at"] = first_args_at(kw, chunks_fixed(full, 4))
    row["calls"] = len(want[1])
    return row


def measure_exactness(name, kw, render):
    small = render("Hi <b>x</b>.", [("get_weather", {"city": "Pa\"ris", "days": 3}),
                                     ("write_file", {"path": "a", "content": "l1\nl2 <x>"})])
    want = oneshot(kw, small)
    bad = {"two-piece": 0, "fixed 1..7": 0, "prefix": 0, "prefix one-shot": 0}
    for i in range(1, len(small)):
        if stream(kw, [small[:i], small[i:]]) != want:
            bad["two-piece"] += 1
    for n in range(1, 8):
        if stream(kw, chunks_fixed(small, n)) != want:
            bad["fixed 1..7"] += 1
    for i in range(1, len(small)):
        cut = small[:i]
        streamed = stream(kw, list(cut))
        if stream(kw, [cut]) != streamed:
            bad["prefix"] += 1
        if oneshot(kw, cut) != streamed:
            bad["prefix one-shot"] += 1
    return {"name": name, "len": len(small), "one-shot calls": len(want[1]),
            "one-shot text": want[0], "wrong two-piece splits": bad["two-piece"],
            "wrong fixed chunkings (of 7)": bad["fixed 1..7"],
            "cut-off prefixes where char-by-char != one chunk": bad["prefix"],
            "cut-off prefixes where char-by-char != parse_non_stream": bad["prefix one-shot"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kib", type=int, default=16)
    ap.add_argument("--quick", action="store_true", help="skip the exactness sweep")
    a = ap.parse_args()
    print(f"# cost: one response, a {a.kib} KiB string argument; CPU seconds")
    print("| name | bytes | 4-char chunks | growth x4 size | bursts | growth x4 size | one-shot | streamed == one-shot | long call's first argument byte sent after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (kw, render) in ROWS.items():
        r = measure_cost(name, kw, render, a.kib)
        print(f"| {name} | {r['bytes']} | {r['4-char']:.3f} | {r['4-char x4 size']:.1f} | "
              f"{r['bursts']:.4f} | {r['bursts x4 size']:.1f} | {r['one-shot'] * 1e3:.2f} ms | "
              f"{r['4-char same as one-shot'] and r['bursts same as one-shot']} ({r['calls']} calls) | "
              f"{r['args at']:.1%} of the response |")
    if a.quick:
        return
    print("\n# exactness: a small response with prose and 2 calls")
    for name, (kw, render) in ROWS.items():
        print(json.dumps(measure_exactness(name, kw, render), ensure_ascii=False))


if __name__ == "__main__":
    main()
