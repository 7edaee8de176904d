"""The golden-case runner: a format's hand-written cases (text -> the merged
events it must give), each replayed with every chunker of support.CHUNKERS
and cut in two at every split point, plus the stream invariants of the
expected events. One runner instead of a copy per test file.

A test module declares its cases and gets the two tests:

    from golden import call, err, golden_tests

    GOLDEN = {"single": (text, call(0, "get_weather", W_ARGS)), ...}
    test_golden_every_chunker, test_golden_every_split = golden_tests("llama3", GOLDEN, TOOLS)

`fmts` is one format name or several (the same cases for each), `cases` a
dict or a function fmt -> dict (cases that differ by row). Every format
must have its tests/format_table.py row: the table and the golden cases
describe the same formats.

Golden texts stay small: replaying at every split costs about len(text)**2
bytes of parsing, so a text longer than MAX_SPLIT_TEXT fails with a
message (long inputs belong in a test that cuts them a few ways, not in a
golden table).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence, Tuple, Union

import pytest

from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Markup, ParseError
from support import CHUNKERS, check_stream_invariants, every_split, run

Cases = Dict[str, Tuple[str, list]]
MAX_SPLIT_TEXT = 2048


def call(i: int, name: str, args: str, id=None) -> list:
    """The merged events of one complete call."""
    if id is None:
        return [CallStart(i, name), ArgsDelta(i, args), CallEnd(i, name, args)]
    return [CallStart(i, name, id), ArgsDelta(i, args), CallEnd(i, name, args, id)]


def err(index, code: str, offset: int, detail: str = "") -> ParseError:
    return ParseError(index, code, offset, detail)


def _markup_opts(expected: list, opts: dict) -> dict:
    """A case that expects Markup events asks for them (markup=True); the
    others run as a default parser, which never gives one."""
    if any(isinstance(e, Markup) for e in expected):
        return dict(opts, markup=True)
    return opts


def replay_chunkers(fmt: str, text: str, expected: list, tools=None, **opts) -> None:
    """`text` through every chunker gives `expected`, which keeps the
    per-call protocol."""
    check_stream_invariants(expected)
    opts = _markup_opts(expected, opts)
    for name, chunker in CHUNKERS.items():
        assert run(fmt, chunker(text), tools, **opts) == expected, name


def replay_splits(fmt: str, text: str, expected: list, tools=None, **opts) -> None:
    """`text` cut in two at every point gives `expected`."""
    assert len(text) <= MAX_SPLIT_TEXT, (
        "golden text of %d characters: every-split replay is quadratic, keep it under %d"
        % (len(text), MAX_SPLIT_TEXT))
    opts = _markup_opts(expected, opts)
    for chunks in every_split(text):
        assert run(fmt, chunks, tools, **opts) == expected, chunks


def replay(fmt: str, text: str, expected: list, tools=None, **opts) -> None:
    """Both replays (for a single case written as its own test)."""
    replay_chunkers(fmt, text, expected, tools, **opts)
    replay_splits(fmt, text, expected, tools, **opts)


def _table_row(fmt: str) -> None:
    from format_table import spec

    assert not spec(fmt).generic, "%s has golden cases but no tests/format_table.py row" % fmt


def golden_tests(fmts: Union[str, Sequence[str]], cases: Union[Cases, Callable[[str], Cases]],
                 tools=None, **opts) -> Tuple[Callable, Callable]:
    """The two parametrized tests, one item per (format, case)."""
    names: List[str] = [fmts] if isinstance(fmts, str) else list(fmts)
    table = cases if callable(cases) else (lambda fmt: cases)
    params = [pytest.param(fmt, case, id="%s-%s" % (fmt, case)) for fmt in names for case in sorted(table(fmt))]

    @pytest.mark.parametrize("fmt,case", params)
    def test_golden_every_chunker(fmt, case):
        _table_row(fmt)
        text, expected = table(fmt)[case]
        replay_chunkers(fmt, text, expected, tools, **opts)

    @pytest.mark.parametrize("fmt,case", params)
    def test_golden_every_split(fmt, case):
        text, expected = table(fmt)[case]
        replay_splits(fmt, text, expected, tools, **opts)

    return test_golden_every_chunker, test_golden_every_split
