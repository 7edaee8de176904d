"""Generated GLM responses with their ground truth: prose and calls whose
values are rendered from typed JSON values as a GLM model writes them."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

from hypothesis import strategies as st

import strategies as S

FORMATS = ["glm45", "glm47"]

PROPS = {
    "s": {"type": "string"},
    "t": {"type": "string", "description": "free text"},
    "i": {"type": "integer"},
    "n": {"type": "number"},
    "b": {"type": "boolean"},
    "o": {"type": "object"},
    "a": {"type": "array"},
    "e": {"enum": ["red", "green"]},
    "z": {"type": "null"},
}
TOOLS = [
    {"type": "function", "function": {"name": "alpha", "parameters": {"type": "object", "properties": PROPS}}},
    {"type": "function", "function": {"name": "beta_tool", "parameters": {"type": "object", "properties": {
        "s": {"type": "string"}, "i": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "noargs", "parameters": {"type": "object", "properties": {}}}},
]
TOOL_PROPS = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in TOOLS}

END = "</arg_value>"


def plain_string(fmt: str, raw: str) -> bool:
    """A string value SGLang keeps as its raw text."""
    if END in raw or "<tool_call>" in raw or "</tool_call>" in raw:
        return False
    head = raw.lstrip(" \t\n\r")
    if head[:1] in ('"', "'", "\\"):
        return False
    if fmt == "glm45":
        if "\\" in raw:
            return False
        try:
            json.loads(raw)
            return False  # GLM-4.5 turns a string that is JSON into str(value)
        except ValueError:
            pass
    return True


string_raw = st.one_of(
    st.text(S.TEXT_CHARS, max_size=30),
    st.sampled_from(["123", "[1, 2]", '{"a": 1}', "true", "  padded  ", "line\n  indented\n", "a\\nb", "<b>x</b>",
                     "</arg_valu", "x </tool_cal y"]),
)


@st.composite
def value_for(draw, fmt: str, schema: dict) -> Tuple[str, Any]:
    """(raw text as the model writes it, the JSON value it stands for)"""
    kind = schema.get("type") or "enum"
    if kind == "string":
        raw = draw(string_raw.filter(lambda r: plain_string(fmt, r)))
        return raw, raw
    if kind == "integer":
        v = draw(st.integers(-(10**12), 10**12))
        return str(v), v
    if kind == "number":
        v = draw(st.floats(allow_nan=False, allow_infinity=False))
        return repr(v), v
    if kind == "boolean":
        v = draw(st.booleans())
        return json.dumps(v), v
    if kind == "null":
        return "null", None
    if kind == "enum":
        v = draw(st.sampled_from(schema["enum"]))
        return v, v
    container = st.dictionaries(S.json_text, S.json_values, max_size=3) if kind == "object" else st.lists(S.json_values, max_size=3)
    v = draw(container.filter(lambda x: END not in json.dumps(x, ensure_ascii=False)))
    raw = draw(st.sampled_from([json.dumps(v, ensure_ascii=False), json.dumps(v, separators=(",", ":"), ensure_ascii=False)]))
    return raw, v


def render(fmt: str, name: str, pairs: List[Tuple[str, str]], sep: str) -> str:
    if fmt == "glm47":
        return "<tool_call>" + name + "".join("<arg_key>%s</arg_key><arg_value>%s</arg_value>" % kv for kv in pairs) + "</tool_call>"
    return ("<tool_call>" + name + sep
            + "".join("<arg_key>%s</arg_key>%s<arg_value>%s</arg_value>%s" % (k, sep, v, sep) for k, v in pairs)
            + "</tool_call>")


@st.composite
def calls(draw, fmt: str) -> Tuple[str, str, Dict[str, Any]]:
    name = draw(st.sampled_from(sorted(TOOL_PROPS)))
    keys = draw(st.lists(st.sampled_from(sorted(TOOL_PROPS[name]) or ["-"]), unique=True, max_size=5)) if TOOL_PROPS[name] else []
    pairs, truth = [], {}
    for k in keys:
        raw, v = draw(value_for(fmt, TOOL_PROPS[name][k]))
        pairs.append((k, raw))
        truth[k] = v
    sep = draw(st.sampled_from(["\n", "\\n"]))
    return render(fmt, name, pairs, sep), name, truth


@st.composite
def responses(draw, fmt: str):
    """(response, expected text, [(name, arguments)])"""
    n = draw(st.integers(0, 3))
    parts, text, expected = [], [], []
    for k in range(n + 1):
        p = draw(st.one_of(st.just(""), S.prose()))
        if p:
            # whitespace between a call and prose is kept, next to calls only it is dropped
            lead = draw(st.sampled_from(["", "\n"])) if k > 0 else ""
            parts.append(lead + p)
            text.append(lead + p)
        if k < n:
            body, name, truth = draw(calls(fmt))
            parts.append(draw(st.sampled_from(["", "\n"])) + body)
            expected.append((name, json.dumps(truth, ensure_ascii=False)))
    return "".join(parts), "".join(text), expected
