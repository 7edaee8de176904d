"""Kimi-K2 test helpers: the special tokens, a renderer that writes a
response the way Kimi's chat template does (`<|tool_call_begin|>` + the
call id + `<|tool_call_argument_begin|>` + the arguments JSON), and
hypothesis strategies for responses with known ground truth (calls with
their ids)."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from hypothesis import strategies as st

FMT = "kimi_k2"
SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
CALL_END = "<|tool_call_end|>"
ARG_BEGIN = "<|tool_call_argument_begin|>"
MARKERS = [SECTION_BEGIN, SECTION_END, CALL_BEGIN, CALL_END, ARG_BEGIN]

TOOLS = ["get_weather", "search", "run-code", "mcp__fs__read.file"]
ASCII_WS = " \t\n\r"


def dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def call_id(name: str, idx: int, style: str = "functions") -> str:
    """The id as the model writes it: `functions.NAME:IDX` (the template's
    form), `NAME:IDX`."""
    return ("functions.%s:%d" if style == "functions" else "%s:%d") % (name, idx)


def json_text(args: Dict[str, Any], style: str) -> str:
    if style == "ascii":
        return json.dumps(args)
    if style == "indent":
        return json.dumps(args, indent=2, ensure_ascii=False)
    if style == "compact":
        return json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(args, ensure_ascii=False)


def render_call(cid: str, args_text: str, ws: str = "") -> str:
    return CALL_BEGIN + ws + cid + ws + ARG_BEGIN + ws + args_text + ws + CALL_END


def section(calls: List[str], joiner: str = "") -> str:
    return SECTION_BEGIN + joiner + joiner.join(calls) + joiner + SECTION_END


# a call: (name, args, json style, id style, whitespace between the parts)
Call = Tuple[str, Dict[str, Any], str, str, str]


def render(items: List[Tuple[str, Any]], start: int = 0):
    """items: ("text", prose) / ("block", [Call]), prose never next to prose.
    Returns (response, expected text, expected [(name, arguments, id)]).
    Prose is separated from a following section by a blank line (template
    formatting, dropped) and from a preceding one by a newline (kept)."""
    out: List[str] = []
    text: List[str] = []
    calls: List[Tuple[str, str, str]] = []
    prev: Optional[str] = None
    idx = start
    for kind, val in items:
        if kind == "text":
            if prev == "block":
                out.append("\n")
                text.append("\n")
            out.append(val)
            text.append(val)
        else:
            if prev == "text":
                out.append("\n\n")
            rendered = []
            for name, args, jstyle, istyle, ws in val:
                cid = call_id(name, idx, istyle)
                idx += 1
                rendered.append(render_call(cid, json_text(args, jstyle), ws))
                calls.append((name, dumps(args), cid))
            out.append(section(rendered, val[0][4] if val else ""))
        prev = kind
    return "".join(out), "".join(text), calls


# ---- strategies ----------------------------------------------------------------

_chars = st.characters(exclude_categories=("Cs",))
_text = st.text(_chars, max_size=12)
_key = st.text(st.characters(exclude_categories=("Cs",), exclude_characters='"'), min_size=1, max_size=8)
_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
    | st.sampled_from(["", "a\\b", 'q"uote', "tab\there", "line\nbreak", "ctl\x01\x1f", "é中文🙂", "<|", "<|tool_call_end|>", "|>"])
)
json_values = st.recursive(
    _scalar,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3),
    max_leaves=8,
)
arg_dicts = st.dictionaries(_key, json_values, max_size=4)
_fragments = st.sampled_from(["<", "<|", "<|tool", "<|tool_call", "|>", "functions.", ":0", "\n", " ", "{"])


@st.composite
def prose(draw) -> str:
    parts = draw(st.lists(st.one_of(st.text(_chars, max_size=10), _fragments), min_size=1, max_size=5))
    s = "".join(parts)
    if not s or s[0] in ASCII_WS or s[-1] in ASCII_WS or any(m in s for m in MARKERS):
        s = "ok"  # keep the example instead of filtering it out
    return s


@st.composite
def calls(draw) -> List[Call]:
    ws = draw(st.sampled_from(["", "", " ", "\n"]))
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out.append((draw(st.sampled_from(TOOLS)), draw(arg_dicts),
                    draw(st.sampled_from(["plain", "ascii", "indent", "compact"])),
                    draw(st.sampled_from(["functions", "functions", "plain"])), ws))
    return out


@st.composite
def responses(draw):
    """(response, expected text, expected [(name, arguments, id)])."""
    items: List[Tuple[str, Any]] = []
    if draw(st.booleans()):
        items.append(("text", draw(prose())))
    for _ in range(draw(st.integers(0, 2))):
        items.append(("block", draw(calls())))
        if draw(st.booleans()):
            items.append(("text", draw(prose())))
    return render(items, draw(st.integers(0, 20)))


def split_at(text: str, cuts: List[int]) -> List[str]:
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    out, last = [], 0
    for c in cuts:
        out.append(text[last:c])
        last = c
    out.append(text[last:])
    return [c for c in out if c]


def summary_ids(events: list):
    """(text, [(name, arguments, id)], [error codes])."""
    from sglang_toolparse.api import collect

    r = collect(events)
    return r.text, [(c.name, c.arguments, c.id) for c in r.complete_calls], [e.code for e in r.errors]
