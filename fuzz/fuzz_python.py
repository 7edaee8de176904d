"""atheris harness over the Python API (StreamParser, the Cython layer),
every format from _core.formats().

    python fuzz/fuzz_python.py [libFuzzer flags] [corpus dir]
    scripts/fuzz-python.sh SECONDS      # with the C core instrumented too

The first bytes pick the format, whether the input is a well-formed
response built from the fuzz data (format_table renderer) or arbitrary
Unicode (lone surrogates and NUL included), and the chunking. Checked:
the event protocol and arguments that are strict JSON, RFC 8259: no NaN or
Infinity (check_stream_invariants); streamed ==
one-shot; on well-formed input, the prose and the calls come out exactly (no
prose lost). Any exception is a finding."""
import json
import os
import random
import re
import sys

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

with atheris.instrument_imports():
    from format_table import spec
    from support import check_stream_invariants, merge, summary
    from sglang_toolparse import StreamParser, strict_json
    from sglang_toolparse.strict_json import BigNumber
    from sglang_toolparse._core import formats

FORMATS = formats()
TOOLS = ["get_weather", "search", "f"]


def forbidden(fmt):
    return {m[0] for m in spec(fmt).markers if not m[0].isalnum()} | {"<"}


def json_value(fdp, depth=0):
    k = fdp.ConsumeIntInRange(0, 7 if depth < 3 else 4)
    if k == 0:
        return None
    if k == 1:
        return fdp.ConsumeBool()
    if k == 2:
        return fdp.ConsumeInt(8)
    if k == 3:
        v = fdp.ConsumeRegularFloat()
        return v if fdp.ConsumeBool() else BigNumber("%de%d" % (fdp.ConsumeIntInRange(1, 99), 300 + fdp.ConsumeIntInRange(9, 999)))
    if k == 4:
        return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 12))
    if k == 5:
        return [json_value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    return {fdp.ConsumeUnicodeNoSurrogates(6): json_value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3))}


_ESCAPE = re.compile(r"\\(\\|u00[01][0-9a-f]|[bfnrt])")
_RAW = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape_controls(text):
    """JSON text with its control-character escapes written raw (an escaped
    backslash stays as it is)."""
    def raw(m):
        e = m.group(1)
        return m.group(0) if e == "\\" else _RAW[e] if len(e) == 1 else chr(int(e[1:], 16))
    return _ESCAPE.sub(raw, text)


def well_formed(fdp, fmt):
    s = spec(fmt)
    bad = forbidden(fmt)
    parts, text, calls = [], [], []
    prev_call = False
    for _ in range(fdp.ConsumeIntInRange(1, 5)):
        if fdp.ConsumeBool():
            p = "".join(c for c in fdp.ConsumeUnicodeNoSurrogates(30) if c not in bad).strip()
            if not p:
                continue
            sep = [" ", "\n", "\n\n"][fdp.ConsumeIntInRange(0, 2)] if prev_call else ""
            parts.append(sep + p)
            text.append(sep + p)
            prev_call = False
        else:
            name = TOOLS[fdp.ConsumeIntInRange(0, len(TOOLS) - 1)]
            args = {fdp.ConsumeUnicodeNoSurrogates(8): json_value(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3))}
            # raw control characters inside strings (json.dumps escapes
            # them; a model may not): read as json.loads(strict=False)
            raw = strict_json.dumps(args) if fdp.ConsumeBool() else _unescape_controls(strict_json.dumps(args))
            parts.append(s.calls_text([(name, raw)]))
            calls.append((name, strict_json.dumps(args)))
            prev_call = True
    return "".join(parts), ("".join(text), calls, [])


def run(fmt, chunks):
    p = StreamParser(fmt, TOOLS)
    ev = []
    for c in chunks:
        ev += p.feed(c)
    return merge(ev + p.finish())


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    fmt = FORMATS[fdp.ConsumeIntInRange(0, len(FORMATS) - 1)]
    s = spec(fmt)
    seed = fdp.ConsumeInt(4)
    maxc = fdp.ConsumeIntInRange(1, 64)
    expected = None
    if s.render_call is not None and s.json_args and fdp.ConsumeBool():
        text, expected = well_formed(fdp, fmt)
    else:
        text = fdp.ConsumeUnicode(fdp.remaining_bytes())
    one = run(fmt, [text])
    check_stream_invariants(one)
    if expected is not None:
        assert summary(one) == expected, (text, summary(one), expected)
    rnd = random.Random(seed)
    chunks, i = [], 0
    while i < len(text):
        n = rnd.randint(1, maxc)
        chunks.append(text[i:i + n])
        i += n
    assert run(fmt, chunks) == one, text


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
