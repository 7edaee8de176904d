"""Writes the fuzz seed corpus and dictionary for every format the core has.

    python fuzz/gen_corpus.py OUTDIR

OUTDIR/seeds/      plain model output per format (for driver.c)
OUTDIR/corpus/     the same with the 3 header bytes libFuzzer inputs start
                   with (byte 0 = index of the format in tp_format_names())
OUTDIR/toolparse.dict   markers of every format + JSON/markup tokens
fuzz/regress/FORMAT--what   inputs that once failed (without the format
                   byte), added to OUTDIR/corpus for the formats that exist
Formats and their markers come from tests/format_table.py, so a format that
lands later is covered as soon as it is registered in the core (markers and
well-formed seeds once it has a table entry)."""
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

from format_table import markers, seed_responses  # noqa: E402
from sglang_toolparse._core import formats  # noqa: E402

GENERIC_SEEDS = [
    "",
    # every kind of the typed-value layer (PARAMS of fuzz_core.c)
    "<tool_call>f<arg_key>i</arg_key><arg_value>'5'</arg_value><arg_key>x</arg_key><arg_value>\"2.5\"</arg_value>"
    "<arg_key>b</arg_key><arg_value>True</arg_value><arg_key>o</arg_key><arg_value>{\"a\": 1, \"a\": [1.0, 1e400]}"
    "</arg_value><arg_key>l</arg_key><arg_value>[1,\n 2]</arg_value><arg_key>z</arg_key><arg_value>null</arg_value>"
    "<arg_key>u</arg_key><arg_value>[7]</arg_value><arg_key>v</arg_key><arg_value>'q'</arg_value>"
    "<arg_key>h</arg_key><arg_value>x</arg_value><arg_key>s</arg_key><arg_value>\\\"a\"</arg_value></tool_call>",
    "Just prose, no calls at all.\n",
    "  \n\t ",
    '{"name": "f", "arguments": {"a": 1}}',
    "\x00 NUL \ud800 lone surrogate \udfff",
    "<" * 50,
]


def dict_escape(s: str) -> str:
    out = []
    for b in s.encode("utf-8", "surrogatepass"):
        if 0x20 <= b < 0x7F and b not in (0x22, 0x5C):
            out.append(chr(b))
        else:
            out.append("\\x%02X" % b)
    return '"' + "".join(out) + '"'


def main(outdir: str) -> None:
    seeds = os.path.join(outdir, "seeds")
    corpus = os.path.join(outdir, "corpus")
    for d in (seeds, corpus):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):  # regenerated from scratch: stale seeds go
            os.unlink(os.path.join(d, f))
    tokens = set()
    n = 0
    for fi, name in enumerate(formats()):
        tokens.update(markers(name))
        for k, text in enumerate(seed_responses(name) + GENERIC_SEEDS):
            data = text.encode("utf-8", "surrogatepass")
            # named by content, so a kept working corpus never shadows a
            # changed seed
            with open(os.path.join(seeds, "%s-%s" % (name, hashlib.sha1(data).hexdigest()[:16])), "wb") as f:
                f.write(data)
            for opts, ch in ((0, 0), (1, 9), (4, 3), (8, 2), (24, 5)):
                raw = bytes([fi, opts, ch]) + data
                with open(os.path.join(corpus, "%s-%s" % (name, hashlib.sha1(raw).hexdigest()[:16])), "wb") as f:
                    f.write(raw)
            n += 1
    # regression inputs (fuzz/regress/FORMAT--what: option byte, chunking
    # byte, text), the format byte resolved by name
    regress = os.path.join(HERE, "regress")
    names = formats()
    for fn in sorted(os.listdir(regress)) if os.path.isdir(regress) else []:
        fmt = fn.split("--")[0]
        if fmt in names:
            with open(os.path.join(regress, fn), "rb") as f:
                raw = bytes([names.index(fmt)]) + f.read()
            with open(os.path.join(corpus, "regress-" + fn), "wb") as f:
                f.write(raw)
            n += 1
    with open(os.path.join(outdir, "toolparse.dict"), "w") as f:
        for t in sorted(tokens):
            f.write(dict_escape(t) + "\n")
    print("gen_corpus: %d formats, %d seeds, %d dictionary tokens -> %s"
          % (len(formats()), n, len(tokens), outdir))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "out"))
