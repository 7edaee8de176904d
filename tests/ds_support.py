"""DeepSeek test helpers: the special tokens, renderers that write a
response the way each model's chat template does, and hypothesis
strategies for responses with known ground truth."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from hypothesis import strategies as st

# V3 / V3.1 special tokens (fullwidth ｜ and ▁, as in SGLang's detectors)
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"

DSML = "｜DSML｜"
# variant -> (block, invoke, parameter) tag names
DSML_TAGS = {
    "deepseekv32": ("function_calls", "invoke", "parameter"),
    "deepseekv4": ("tool_calls", "invoke", "parameter"),
    "deepseekv41": (" calls", " invoke", " parameter"),
}
DSML_FORMATS = tuple(DSML_TAGS)
V3_FORMATS = ("deepseekv3", "deepseekv31")
ALL_FORMATS = V3_FORMATS + DSML_FORMATS


class Tags:
    def __init__(self, fmt: str) -> None:
        block, invoke, param = DSML_TAGS[fmt]
        self.bot = "<%s%s>" % (DSML, block)
        self.eot = "</%s%s>" % (DSML, block)
        self.invoke = "<%s%s" % (DSML, invoke)
        self.invoke_end = "</%s%s>" % (DSML, invoke)
        self.param = "<%s%s" % (DSML, param)
        self.param_end = "</%s%s>" % (DSML, param)

    def markers(self) -> List[str]:
        return [self.bot, self.eot, self.invoke, self.invoke_end, self.param, self.param_end]


def markers(fmt: str) -> List[str]:
    if fmt in DSML_TAGS:
        return Tags(fmt).markers()
    return [CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP]


def dumps(v: Any) -> str:
    """What the parsers must return for arguments `v`."""
    return json.dumps(v, ensure_ascii=False)


# ---- renderers ---------------------------------------------------------------
# A call is (name, args dict, style); style picks a spelling the format allows
# (JSON layout for V3/V3.1; "xml", "json" or "self" for DSML).

def _json_text(args: Dict[str, Any], style: str) -> str:
    if style == "ascii":
        return json.dumps(args)
    if style == "indent":
        return json.dumps(args, indent=2, ensure_ascii=False)
    if style == "compact":
        return json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(args, ensure_ascii=False)


def render_v3_call(name: str, args: Dict[str, Any], style: str = "plain") -> str:
    return CALL_BEGIN + "function" + SEP + name + "\n```json\n" + _json_text(args, style) + "\n```" + CALL_END


def render_v31_call(name: str, args: Dict[str, Any], style: str = "plain") -> str:
    return CALL_BEGIN + name + SEP + _json_text(args, style) + CALL_END


def render_dsml_call(fmt: str, name: str, args: Dict[str, Any], style: str = "xml") -> str:
    """As SGLang's encoding_dsv32 writes an assistant tool call."""
    t = Tags(fmt)
    if style == "self" and not args:
        return '%s name="%s"/>' % (t.invoke, name)
    if style == "json":
        body = json.dumps(args, ensure_ascii=False)
    else:
        body = "\n".join(
            '%s name="%s" string="%s">%s%s'
            % (t.param, k, "true" if isinstance(v, str) else "false",
               v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), t.param_end)
            for k, v in args.items()
        )
    return '%s name="%s">\n%s\n%s' % (t.invoke, name, body, t.invoke_end)


def dsml_expected_args(args: Dict[str, Any], style: str) -> Dict[str, Any]:
    """String parameter values are the raw text (DeepSeek's encoder writes
    them raw; its decoders keep them byte for byte; SGLang strips them)."""
    return args


def render_block(fmt: str, calls: List[Tuple[str, Dict[str, Any], str]], joiner: str = "\n") -> str:
    if fmt == "deepseekv3":
        return CALLS_BEGIN + joiner.join(render_v3_call(*c) for c in calls) + CALLS_END
    if fmt == "deepseekv31":
        return CALLS_BEGIN + joiner.join(render_v31_call(*c) for c in calls) + CALLS_END
    t = Tags(fmt)
    return t.bot + "\n" + "\n".join(render_dsml_call(fmt, *c) for c in calls) + "\n" + t.eot


def expected_args(fmt: str, args: Dict[str, Any], style: str) -> str:
    if fmt in DSML_TAGS:
        return dumps(dsml_expected_args(args, style))
    return dumps(args)


def render(fmt: str, items: List[Tuple[str, Any]]) -> Tuple[str, str, List[Tuple[str, str]]]:
    """items: ("text", prose) / ("block", calls), prose never next to prose.
    Returns (response, expected text, expected [(name, arguments)]). Prose
    is separated from a following block by a blank line and from a
    preceding block by a newline, as the templates write it: the blank line
    is template formatting (dropped), the newline before prose is kept."""
    out: List[str] = []
    text: List[str] = []
    calls: List[Tuple[str, str]] = []
    prev: Optional[str] = None
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
            out.append(render_block(fmt, val))
            calls += [(name, expected_args(fmt, args, style)) for name, args, style in val]
        prev = kind
    return "".join(out), "".join(text), calls


# ---- strategies ----------------------------------------------------------------

TOOLS = ["get_weather", "search", "run_code", "noop"]
ASCII_WS = " \t\n\r"

_chars = st.characters(exclude_categories=("Cs",), exclude_characters="｜")
_text = st.text(_chars, max_size=12)
_key = st.text(st.characters(exclude_categories=("Cs",), exclude_characters='｜"'), min_size=1, max_size=8)
_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
    | st.sampled_from(["", "a\\b", 'q"uote', "tab\there", "line\nbreak", "ctl\x01\x1f", "é中文🙂", "</", "<", "```"])
)
json_values = st.recursive(
    _scalar,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3),
    max_leaves=8,
)
arg_dicts = st.dictionaries(_key, json_values, max_size=4)

_fragments = st.sampled_from(["<", "</", "<｜", "<｜tool▁", "<｜DSML｜", "<｜DSML｜inv", "```", "\n", " ", "｜"])


@st.composite
def prose(draw, fmt: str) -> str:
    parts = draw(st.lists(st.one_of(st.text(_chars, max_size=10), _fragments), min_size=1, max_size=5))
    s = "".join(parts)
    ms = markers(fmt)
    if not s or s[0] in ASCII_WS or s[-1] in ASCII_WS or any(m in s for m in ms):
        s = "ok"  # keep the example instead of filtering it out
    return s


@st.composite
def calls(draw, fmt: str) -> List[Tuple[str, Dict[str, Any], str]]:
    n = draw(st.integers(1, 3))
    out = []
    for _ in range(n):
        name = draw(st.sampled_from(TOOLS))
        args = draw(arg_dicts)
        if fmt in DSML_TAGS:
            style = draw(st.sampled_from(["xml", "xml", "json", "self"]))
            if style == "self" and args:
                style = "xml"
        else:
            style = draw(st.sampled_from(["plain", "ascii", "indent", "compact"]))
        out.append((name, args, style))
    return out


@st.composite
def responses(draw, fmt: str):
    """(response, expected text, expected calls)."""
    items: List[Tuple[str, Any]] = []
    if draw(st.booleans()):
        items.append(("text", draw(prose(fmt))))
    for _ in range(draw(st.integers(0, 2))):
        items.append(("block", draw(calls(fmt))))
        if draw(st.booleans()):
            items.append(("text", draw(prose(fmt))))
    return render(fmt, items)


def split_at(text: str, cuts: List[int]) -> List[str]:
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    out, last = [], 0
    for c in cuts:
        out.append(text[last:c])
        last = c
    out.append(text[last:])
    return [c for c in out if c]
