"""The names of issue 20 that are rows of an engine we have (tests/variant_table.py),
standalone: each template-shaped case parsed back exactly with every chunker
and at every split point, and each row's edge cases (malformed, cut off,
markup in values) at every split."""
import json

import pytest

from support import CHUNKERS, check_stream_invariants, every_split, run, summary
from variant_table import TOOLS, VARIANTS, _step3_call, cases_of

ROWS = [(v, c) for v in sorted(VARIANTS) for c in sorted(cases_of(v))]
GOLDEN = [(v, g) for v in sorted(VARIANTS) for g in sorted(VARIANTS[v].golden)]


def expected(variant, case):
    prose, calls = cases_of(variant)[case]
    return prose, [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]


@pytest.mark.parametrize("variant,case", ROWS)
def test_standalone_every_split(variant, case):
    v = VARIANTS[variant]
    text = v.render(*cases_of(variant)[case])
    prose, calls = expected(variant, case)
    whole = run(v.fmt, [text], TOOLS)
    check_stream_invariants(whole)
    assert summary(whole) == (prose, calls, [])
    for name, chunker in CHUNKERS.items():
        assert run(v.fmt, chunker(text), TOOLS) == whole, name
    for chunks in every_split(text):
        assert run(v.fmt, chunks, TOOLS) == whole, chunks


@pytest.mark.parametrize("variant,name", GOLDEN)
def test_golden_every_split(variant, name):
    v = VARIANTS[variant]
    text, prose, calls = v.golden[name]
    whole = run(v.fmt, [text], TOOLS)
    check_stream_invariants(whole)
    assert summary(whole)[:2] == (prose, calls)
    for chunks in every_split(text):
        assert run(v.fmt, chunks, TOOLS) == whole, chunks


STRIPPED_VALUE_SHAPES = {
    "dots": lambda v: ('<dots_function_call>\n<invoke name="f">\n<parameter name="s">' + v
                       + '</parameter>\n</invoke>\n</dots_function_call>after'),
    "minicpm5": lambda v: '<function name="f"><param name="s">' + v + "</param></function>after",
    "step3": lambda v: _step3_call("f", ' s">' + v + "</steptml:parameter>") + "after",
}
STRING_TOOL = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"s": {"type": "string"}}}}}]


@pytest.mark.parametrize("fmt", sorted(STRIPPED_VALUE_SHAPES))
@pytest.mark.parametrize("value,expect", [
    # a blank run inside a value is held while it may still end it; over
    # max_buffer (64 here) it is a buffer_limit error, however it is split
    # (the fuzzer found one-shot streaming it and char by char failing)
    (" a" + " " * 70 + "b ", None),
    (" a" + "\t" * 60 + "b ", "a" + "\t" * 60 + "b"),
    ("null" + " " * 61 + "x", None),  # "null" and blanks: held as a possible null
    ("null" + " " * 59 + "x", "null" + " " * 59 + "x"),
])
def test_stripped_value_blank_run_bounded_at_every_split(fmt, value, expect):
    text = STRIPPED_VALUE_SHAPES[fmt](value)
    whole = run(fmt, [text], STRING_TOOL, max_buffer=64)
    check_stream_invariants(whole)
    prose, calls, errors = summary(whole)
    assert prose == "after"
    if expect is None:
        assert (calls, errors) == ([], ["buffer_limit"])
    else:
        assert (calls, errors) == ([("f", json.dumps({"s": expect}))], [])
    assert run(fmt, list(text), STRING_TOOL, max_buffer=64) == whole
    for chunks in every_split(text):
        assert run(fmt, chunks, STRING_TOOL, max_buffer=64) == whole, chunks


@pytest.mark.parametrize("value,expect", [
    # minicpm5's CDATA section: the held tail is "]]>" with the blanks around
    # it, bounded the same way; a long section is not held whole
    ("<![CDATA[" + "x" * 100 + "]] " + " " * 40 + "]]> ", "x" * 100 + "]]"),
    ("<![CDATA[ a" + " " * 70 + "b ]]>", None),
    ("<![CDATA[ ab ]]]] ]]> ", "ab ]]]]"),
])
def test_cdata_tail_bounded_at_every_split(value, expect):
    test_stripped_value_blank_run_bounded_at_every_split("minicpm5", value, expect)
