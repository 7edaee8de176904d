"""Generated Qwen3-Coder / MiniMax-M2 responses with their ground truth:
prose and calls whose values are typed JSON values rendered as the chat
templates write them (tests/format_table.py renderers)."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

from hypothesis import strategies as st

import strategies as S
from format_table import jinja_string, minimax_block, render_minimax_invoke, render_qwen3_coder

FORMATS = ["qwen3_coder", "minimax_m2"]

PROPS = {
    "s": {"type": "string"},
    "t": {"type": "string", "description": "free text"},
    "i": {"type": "integer"},
    "n": {"type": "number"},
    "b": {"type": "boolean"},
    "o": {"type": "object"},
    "a": {"type": "array"},
    "e": {"enum": ["red", "green"]},
    "oi": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
}
TOOLS = [
    {"type": "function", "function": {"name": "alpha", "parameters": {"type": "object", "properties": PROPS}}},
    {"type": "function", "function": {"name": "beta_tool", "parameters": {"type": "object", "properties": {
        "s": {"type": "string"}, "i": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "noargs", "parameters": {"type": "object", "properties": {}}}},
]
TOOL_PROPS = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in TOOLS}

# a string value containing one of these cannot be written unambiguously
ENDS = {
    "qwen3_coder": ("</parameter>", "<parameter=", "</function>", "</tool_call>"),
    "minimax_m2": ("</parameter>", "</invoke>", "</minimax:tool_call>"),
}


def plain_string(fmt: str, raw: str) -> bool:
    """A string the template writes raw and that reads back as itself."""
    return not any(e in raw for e in ENDS[fmt]) and raw.lower() != "null"


def plain_json(fmt: str, v: Any) -> bool:
    return not any(e in json.dumps(v, ensure_ascii=False) for e in ENDS[fmt])


string_values = st.one_of(
    st.text(S.TEXT_CHARS, max_size=30),
    st.sampled_from(["123", "[1, 2]", '{"a": 1}', "true", "None", "  padded  ", "\nline\n  indented\n\n", "a\\nb",
                     "<b>x</b>", "</paramete", "x </tool_cal y", "nul", "nullable", '"quoted"']),
)


def truth_number(fmt: str, v: Any) -> Any:
    # MiniMax-M2's rule: an integral number is an integer
    if fmt == "minimax_m2" and isinstance(v, float) and v.is_integer():
        return int(v)
    return v


@st.composite
def value_for(draw, fmt: str, schema: dict) -> Any:
    """A value of the parameter's type (its JSON meaning)."""
    kind = schema.get("type") or ("enum" if "enum" in schema else "optional_int")
    if kind == "string":
        return draw(string_values.filter(lambda r: plain_string(fmt, r)))
    if kind == "integer":
        return draw(st.integers(-(10**12), 10**12))
    if kind == "number":
        return draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-1000, 1000)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "enum":
        return draw(st.sampled_from(schema["enum"]))
    if kind == "optional_int":
        return draw(st.one_of(st.none(), st.integers(-100, 100)))
    container = st.dictionaries(S.json_text, S.json_values, max_size=3) if kind == "object" \
        else st.lists(S.json_values, max_size=3)
    return draw(container.filter(lambda x: plain_json(fmt, x)))


def render(fmt: str, name: str, args: Dict[str, Any]) -> str:
    if fmt == "qwen3_coder":
        return render_qwen3_coder(name, args)
    return render_minimax_invoke(name, args)


@st.composite
def calls(draw, fmt: str) -> Tuple[str, str, Dict[str, Any]]:
    """(one call as the template writes it, tool name, the arguments meant);
    for minimax_m2 the call is one invoke (the block is added by responses)."""
    name = draw(st.sampled_from(sorted(TOOL_PROPS)))
    props = TOOL_PROPS[name]
    keys = draw(st.lists(st.sampled_from(sorted(props)), unique=True, max_size=5)) if props else []
    args: Dict[str, Any] = {k: draw(value_for(fmt, props[k])) for k in keys}
    truth = {k: truth_number(fmt, v) for k, v in args.items()}
    return render(fmt, name, args), name, truth


def block(fmt: str, bodies: List[str]) -> str:
    if fmt == "qwen3_coder":
        return "\n".join(bodies)
    return minimax_block(bodies)


@st.composite
def responses(draw, fmt: str):
    """(response, expected text, [(name, arguments)]): prose, then the calls
    as the template writes them, then (not from the template, but models
    write it) more prose."""
    before = draw(st.one_of(st.just(""), S.prose()))
    n = draw(st.integers(0, 3))
    drawn = [draw(calls(fmt)) for _ in range(n)]
    after = draw(st.one_of(st.just(""), S.prose())) if n else ""
    parts, text = [before], [before]
    if n:
        parts.append(("\n" if before else "") + block(fmt, [b for b, _, _ in drawn]))
    if after:
        parts.append("\n" + after)
        text.append("\n" + after)
    expected = [(name, json.dumps(truth, ensure_ascii=False)) for _, name, truth in drawn]
    return "".join(parts), "".join(text), expected


__all__ = ["FORMATS", "TOOLS", "TOOL_PROPS", "calls", "responses", "render", "block", "jinja_string"]
