"""How much later a call is announced now that CallStart waits for the body
(issue 15), per format, measured in chunks.

    python scripts/announce_latency.py --base DIR

DIR holds a build of the parser to compare with (e.g. the commit before
issue 15: `git archive <rev> | tar -x -C DIR && (cd DIR && python setup.py
build_ext --inplace)`). For each format, sample responses (tests/format_table.py
renderers: one call with arguments, one without) are fed in token-like chunks
(1-6 characters, 50 seeds) and character by character; the script reports the
chunk at which each call's CallStart arrives in both builds, and the
difference (mean / max chunks; characters when fed one at a time).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = range(50)


def _responses(fmt):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import format_table

    spec = format_table.spec(fmt)
    out = [("json args", spec.response("Let me check.", [("get_weather", '{"city": "Paris", "days": 3}')])),
           ("no args", spec.response("", [("f", "{}")]))]
    if fmt.startswith("deepseekv32") or fmt.startswith("deepseekv4"):  # parameter-tag bodies too
        inv, par = format_table.spec(fmt).markers[2], format_table.spec(fmt).markers[4]
        bot, eot = format_table.spec(fmt).markers[0], format_table.spec(fmt).markers[1]
        inv_end, par_end = format_table.spec(fmt).markers[3], format_table.spec(fmt).markers[5]
        out.append(("param tags", '%s\n%s name="get_weather">\n%s name="city" string="true">Paris%s\n%s\n%s'
                   % (bot, inv, par, par_end, inv_end, eot)))
    return out


# markers that are single tokens in each model's vocabulary
_QWEN = ("<tool_call>", "</tool_call>")
_DS = tuple("<\uff5c%s\uff5c>" % t for t in (
    "tool\u2581calls\u2581begin", "tool\u2581calls\u2581end", "tool\u2581call\u2581begin",
    "tool\u2581call\u2581end", "tool\u2581sep"))
SPECIAL = {"qwen25": _QWEN, "hermes": _QWEN, "deepseekv3": _DS, "deepseekv31": _DS,
           "glm45": _QWEN + ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
           "deepseekv32": ("\uff5cDSML\uff5c",), "deepseekv4": ("\uff5cDSML\uff5c",),
           "deepseekv41": ("\uff5cDSML\uff5c",)}
SPECIAL["glm47"] = SPECIAL["glm45"]
# a byte-level BPE pre-tokenizer's pieces (GPT-2 / Qwen style): a real
# tokenizer never merges across them, so this counts at most as many
# tokens as the model would write
_PIECE = re.compile(r"""'(?:s|t|re|ve|m|ll|d)| ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+| ?_+|.""", re.S)


def words(text, special):
    out, i = [], 0
    pat = re.compile("|".join(re.escape(t) for t in special)) if special else None
    while i < len(text):
        m = pat.search(text, i) if pat else None
        j = m.start() if m else len(text)
        out += _PIECE.findall(text[i:j])
        if m:
            out.append(m.group())
            j = m.end()
        i = j
    assert "".join(out) == text
    return out


def _arrivals():
    """{fmt: [[chunk index of each CallStart] per (response, chunking)]} with
    the sglang_toolparse found on sys.path."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from support import char_by_char, token_like

    from sglang_toolparse import CallStart, StreamParser, _core

    res = {}
    for fmt in sorted(_core.formats()):
        rows = []
        for kind, text in _responses(fmt):
            chunkings = [("chars", char_by_char(text)), ("words", words(text, SPECIAL.get(fmt, ())))]
            chunkings += [("tokens%d" % s, token_like(text, s)) for s in SEEDS]
            for name, chunks in chunkings:
                p = StreamParser(fmt, None)
                at = []
                for i, c in enumerate(chunks):
                    at += [i for e in p.feed(c) if isinstance(e, CallStart)]
                at += [len(chunks) for e in p.finish() if isinstance(e, CallStart)]
                rows.append((kind, name, at))
        res[fmt] = rows
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="directory with the build to compare with")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.json:
        json.dump(_arrivals(), sys.stdout)
        return
    def run(path):
        env = dict(os.environ, PYTHONPATH=path)
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--json"], env=env,
                             check=True, capture_output=True, text=True, cwd="/").stdout
        return json.loads(out)
    new = run(ROOT)
    old = run(os.path.abspath(args.base))
    print("extra delay of CallStart, in: BPE-like pieces (special tokens whole); random 1-6 char "
          "chunks (%d seeds) mean/max; characters" % len(SEEDS))
    print("%-12s %-11s %6s %9s %8s %7s" % ("format", "call", "pieces", "tok mean", "tok max", "chars"))
    for fmt in sorted(new):
        if fmt not in old:
            continue
        by_kind = {}
        for (kind, name, a), (_, _, b) in zip(new[fmt], old[fmt]):
            assert len(a) == len(b), (fmt, name, a, b)
            tok, chars, pieces = by_kind.setdefault(kind, ([], [], []))
            d = [x - y for x, y in zip(a, b)]
            (chars if name == "chars" else pieces if name == "words" else tok).extend(d)
        for kind, (tok, chars, pieces) in by_kind.items():
            print("%-12s %-11s %6s %9.2f %8d %7s" % (fmt, kind, "/".join(str(x) for x in pieces),
                                                     statistics.mean(tok), max(tok),
                                                     "/".join(str(x) for x in chars)))


if __name__ == "__main__":
    main()
