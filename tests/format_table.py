"""Per-format knowledge used by the hardening tests, the fuzz seed corpus and
the fuzz dictionary: one table keyed by the core's format name.

Every harness iterates over `sglang_toolparse._core.formats()` and looks the
format up here with `spec(name)`. A format without an entry gets the generic
fallback (its markers unknown, no renderer): the input-agnostic tests (random
bytes, random corruption, memory, leaks) still run for it, and the tests that
need well-formed calls skip with a message saying which entry to add.

An entry describes:
  markers      every marker string of the format (fuzz dictionary, marker
               fragment tests)
  render_call  (name, raw_args_json) -> the text of one call
  block        list of rendered calls -> the text of a call section (some
               formats wrap calls in a begin/end pair)
  json_args    the arguments are one JSON value run through the core's JSON
               normalizer (so the depth / number limits apply to them)
  filtered     tags an input filter removes before the engine reads (an
               error's raw text is then the input less these tags)
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from typing import Callable, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class FormatSpec:
    name: str
    markers: Tuple[str, ...] = ()
    render_call: Optional[Callable[[str, str], str]] = None
    block: Callable[[Sequence[str]], str] = lambda calls: "".join(calls)
    json_args: bool = True
    generic: bool = False
    notes: str = ""
    extra_seeds: Tuple[str, ...] = ()  # format-specific spellings for the fuzz corpus
    # tags a filter takes out before the engine reads (trinity's <think>):
    # an error's raw text is what the engine read, so without them
    filtered: Tuple[str, ...] = ()
    # whitespace before a call's markup is the text's, not template
    # formatting (Inkling: the template writes none between messages)
    blank_is_text: bool = False

    def calls_text(self, calls: Sequence[Tuple[str, str]]) -> str:
        """A call section holding `calls`: (name, raw JSON arguments)."""
        assert self.render_call is not None
        return self.block([self.render_call(n, a) for n, a in calls])

    def response(self, before: str, calls: Sequence[Tuple[str, str]], after: str = "") -> str:
        return before + self.calls_text(calls) + after


def _jsontag(sep: str) -> Callable[[str, str], str]:
    def render(name: str, args: str) -> str:
        return '<tool_call>%s{"name": %s, "arguments": %s}%s</tool_call>' % (
            sep, json.dumps(name, ensure_ascii=False), args, sep)
    return render


_DS_CALLS_BEGIN = "<\uff5ctool\u2581calls\u2581begin\uff5c>"
_DS_CALLS_END = "<\uff5ctool\u2581calls\u2581end\uff5c>"
_DS_CALL_BEGIN = "<\uff5ctool\u2581call\u2581begin\uff5c>"
_DS_CALL_END = "<\uff5ctool\u2581call\u2581end\uff5c>"
_DS_SEP = "<\uff5ctool\u2581sep\uff5c>"
_DS_MARKERS = (_DS_CALLS_BEGIN, _DS_CALLS_END, _DS_CALL_BEGIN, _DS_CALL_END, _DS_SEP, "```json\n", "\n```")


_DSML = "\uff5cDSML\uff5c"
_DSML_TAGS = {  # variant -> (block, invoke, parameter) tag names
    "deepseekv32": ("function_calls", "invoke", "parameter"),
    "deepseekv4": ("tool_calls", "invoke", "parameter"),
    "deepseekv41": (" calls", " invoke", " parameter"),
}


def _dsml(fmt: str) -> FormatSpec:
    block, invoke, param = _DSML_TAGS[fmt]
    bot, eot = "<%s%s>" % (_DSML, block), "</%s%s>" % (_DSML, block)
    inv, inv_end = "<%s%s" % (_DSML, invoke), "</%s%s>" % (_DSML, invoke)
    par, par_end = "<%s%s" % (_DSML, param), "</%s%s>" % (_DSML, param)
    # the renderer writes the JSON spelling of the arguments (one JSON value
    # as the invoke's body); the seeds add the parameter-tag spelling
    xml = (bot + "\n" + '%s name="get_weather">\n%s name="city" string="true">Paris, "FR" \\ x%s\n'
           '%s name="n" string="false">[1, 2.5, {"a": null}]%s\n%s name="u" string="false">oops%s\n%s\n'
           '%s name="f"/>\n%s\n'
           % (inv, par, par_end, par, par_end, par, par_end, inv_end, inv, eot))
    return FormatSpec(
        fmt, (bot, eot, inv, inv_end, par, par_end, ' name="', ' string="true">', ' string="false">', "/>"),
        render_call=lambda n, a: '%s name="%s">\n%s\n%s' % (inv, n, a, inv_end),
        block=lambda calls: bot + "\n" + "\n".join(calls) + "\n" + eot,
        extra_seeds=("Before. " + xml + "after", xml[: len(xml) // 2],
                     bot + '%s name="nope">%s name="x" string="true">1%s%s' % (inv, par, par_end, inv_end) + eot,
                     # another variant's spelling (read by every DSML parser), and a
                     # parameter written without the DSML prefix (never announced)
                     xml.replace(block, _DSML_TAGS[_OTHER_DSML[fmt]][0]).replace(invoke, _DSML_TAGS[_OTHER_DSML[fmt]][1]),
                     bot + '%s name="f">\n<parameter name="on">true</%sparameter>\n%s' % (inv, _DSML, inv_end) + eot))


_OTHER_DSML = {"deepseekv32": "deepseekv41", "deepseekv4": "deepseekv32", "deepseekv41": "deepseekv4"}


_GLM_MARKERS = ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")


def _glm(sep: str) -> Callable[[str, str], str]:
    def render(name: str, args: str) -> str:
        parts = ["<tool_call>", name, sep]
        for k, v in json.loads(args).items():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            parts += ["<arg_key>", k, "</arg_key>", sep, "<arg_value>", text, "</arg_value>", sep]
        parts.append("</tool_call>")
        return "".join(parts)
    return render


_QWEN3_CODER_MARKERS = ("<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>")
_MINIMAX_M2_MARKERS = ("<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="', "</invoke>",
                       '<parameter name="', "</parameter>", '">')


def jinja_string(v) -> str:
    """Qwen3-Coder's template: mappings and lists as JSON, other values with
    Jinja's `string` (Python str: True, None, 3.25)."""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return v if isinstance(v, str) else str(v)


# (parameter, raw value) pairs reaching each typing step of the XML rows
# (fuzz_core.c declares i integer, x number, b boolean, o object, l array,
# z null, u integer|string, v object, m number|boolean|array, h host,
# n/a other)
_TYPED_VALUES = (
    ("i", "12"), ("i", "-007"), ("i", "1_000"), ("i", "None"), ("x", "2.50"), ("x", "1e5"), ("x", "1e400"),
    ("x", " 3 "), ("b", "True"), ("b", " yes "), ("b", "off"), ("o", '{"a": [1, NaN]}'), ("o", "{'a': 1}"),
    ("l", "[1, 2]"), ("l", "(1, 2)"), ("z", "nil"), ("u", "5"), ("u", "x"), ("v", "[1]"), ("v", "5"),
    ("n", "None"), ("n", "NULL"), ("a", "[Infinity]"), ("h", "x"), ("s", "null"), ("s", "nul"),
    ("m", "1.0"), ("m", "on"), ("m", "[1]"), ("m", "maybe"),
)


def render_qwen3_coder(name: str, args) -> str:
    args = json.loads(args) if isinstance(args, str) else args
    body = "".join("<parameter=%s>\n%s\n</parameter>\n" % (k, jinja_string(v)) for k, v in args.items())
    return "<tool_call>\n<function=%s>\n%s</function>\n</tool_call>" % (name, body)


def render_minimax_invoke(name: str, args) -> str:
    args = json.loads(args) if isinstance(args, str) else args
    body = "".join('<parameter name="%s">%s</parameter>\n'
                   % (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in args.items())
    return '<invoke name="%s">\n%s</invoke>\n' % (name, body)


def minimax_block(invokes: Sequence[str]) -> str:
    return "<minimax:tool_call>\n" + "".join(invokes) + "</minimax:tool_call>"


def _ds_block(calls: Sequence[str]) -> str:
    return _DS_CALLS_BEGIN + "".join(calls) + _DS_CALLS_END


_JSONTAG_SEEDS = (
    '<tool_call>{"arguments": {"a": [1, {"b": "c"}]}, "name": "f"}</tool_call>',
    '<tool_call>{"parameters": {}, "extra": [1, "x"], "name": "search"}</tool_call> tail',
    '<tool_call>{"name": "f"}</tool_call><tool_call>{"name": "f", "arguments": {}} junk</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"a": 1}}<tool_call>{"name": "f"}',
    'Use the <tool_call> tag, then </tool_call>. <tool_call>\n{"name": "f", "arguments": oops}</tool_call>',
)
TABLE = {
    "qwen25": FormatSpec(
        "qwen25", ("<tool_call>", "</tool_call>", '"name"', '"arguments"', '"parameters"'),
        render_call=_jsontag("\n"), block=lambda calls: "\n".join(calls), extra_seeds=_JSONTAG_SEEDS),
    "hermes": FormatSpec(
        "hermes", ("<tool_call>", "</tool_call>", '"name"', '"arguments"', '"parameters"'),
        render_call=_jsontag(""), block=lambda calls: "".join(calls), extra_seeds=_JSONTAG_SEEDS),
    "deepseekv3": FormatSpec(
        "deepseekv3", _DS_MARKERS + ("function",),
        render_call=lambda n, a: "%sfunction%s%s\n```json\n%s\n```%s" % (_DS_CALL_BEGIN, _DS_SEP, n, a, _DS_CALL_END),
        block=_ds_block),
    "deepseekv31": FormatSpec(
        "deepseekv31", _DS_MARKERS[:5],
        render_call=lambda n, a: "%s%s%s%s%s" % (_DS_CALL_BEGIN, n, _DS_SEP, a, _DS_CALL_END),
        block=_ds_block),
    # GLM writes arguments as <arg_key>/<arg_value> pairs typed by the tool's
    # schema, not as one JSON value (json_args=False). The renderer writes
    # strings raw and other values as JSON; with tool names only (no schema)
    # a plain string stays a string and JSON text is decoded, so rendered
    # arguments round-trip as long as their strings are plain text.
    "glm45": FormatSpec(
        "glm45", _GLM_MARKERS + ("\\n",), render_call=_glm("\n"), block=lambda calls: "\n".join(calls),
        json_args=False),
    "deepseekv32": _dsml("deepseekv32"),
    "deepseekv4": _dsml("deepseekv4"),
    "deepseekv41": _dsml("deepseekv41"),
    "glm47": FormatSpec(
        "glm47", _GLM_MARKERS, render_call=_glm(""), block=lambda calls: "".join(calls), json_args=False),
    # XML parameters typed by schema (json_args=False); with tool names only
    # (no schema) every parameter is a string, so only string values
    # round-trip
    "qwen3_coder": FormatSpec(
        "qwen3_coder", _QWEN3_CODER_MARKERS, render_call=render_qwen3_coder, block=lambda calls: "\n".join(calls),
        json_args=False, extra_seeds=(
            '<tool_call>{"name": "f"}</tool_call>', "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\n1",
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n<function=search>\n</function>\n</tool_call>",
            # values for every kind of fuzz_core.c's PARAMS (option bit 8):
            # the Qwen3-Coder row of tp_type_rules.c
            "<tool_call>\n<function=f>\n" + "".join(
                "<parameter=%s>\n%s\n</parameter>\n" % kv for kv in _TYPED_VALUES) + "</function>\n</tool_call>")),
    "minimax_m2": FormatSpec(
        "minimax_m2", _MINIMAX_M2_MARKERS, render_call=render_minimax_invoke, block=minimax_block, json_args=False,
        extra_seeds=('<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">x<parameter name="b">y</parameter>'
                     '</minimax:tool_call>', "<minimax:tool_call>\n<inv>",
                     # the MiniMax-M2 row (unions tried in order, by mask)
                     '<minimax:tool_call>\n<invoke name="f">\n' + "".join(
                         '<parameter name="%s">%s</parameter>\n' % kv for kv in _TYPED_VALUES)
                     + "</invoke>\n</minimax:tool_call>")),
}

_KIMI = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
         "<|tool_call_end|>", "<|tool_call_argument_begin|>")
TABLE["kimi_k2"] = FormatSpec(
    "kimi_k2", _KIMI + ("functions.", ":0", ":12"),
    render_call=lambda n, a: "%sfunctions.%s:0%s%s%s" % (_KIMI[2], n, _KIMI[4], a, _KIMI[3]),
    block=lambda calls: _KIMI[0] + "".join(calls) + _KIMI[1],
    extra_seeds=(
        # ids without `functions.`, bare counters (named by the tools), spaces between the parts
        _KIMI[0] + _KIMI[2] + "search:3" + _KIMI[4] + '{"q": 1}' + _KIMI[3] + _KIMI[2] + " 4 " + _KIMI[4]
        + ' {"city": "x"} ' + _KIMI[3] + _KIMI[1] + " after",
        "pre " + _KIMI[2] + "functions.f:0" + _KIMI[4] + '["not", "an object"]' + _KIMI[3],
        _KIMI[0] + _KIMI[2] + "functions.f" + _KIMI[4] + "{}" + _KIMI[2] + "functions.f:1" + _KIMI[3] + _KIMI[1],
    ))

_PT = "<|python_tag|>"
TABLE["llama3"] = FormatSpec(
    "llama3", (_PT, "{\"", ";", '"name"', '"parameters"', '"arguments"', "; {"),
    render_call=lambda n, a: '{"name": %s, "parameters": %s}' % (json.dumps(n, ensure_ascii=False), a),
    block=lambda calls: _PT + "; ".join(calls),
    extra_seeds=(
        '{"name": "f", "parameters": {"a": 1}};{"parameters": {}, "name": "search"} ; tail',
        "{x} is a set; {\"name\"",
        _PT + 'brave_search.call(query="x")',
        '{"name": "f", oops} ' + _PT + '{"name": "f"}; ;{ ',
    ))

_MISTRAL = ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]")
TABLE["mistral"] = FormatSpec(
    "mistral", _MISTRAL + ("[{", "]"),
    render_call=lambda n, a: "[TOOL_CALLS]%s[ARGS]%s" % (n, a),
    extra_seeds=(
        "See [1] and a[0]. [TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{\"a\": [1]}[TOOL_CALLS] search [ARGS] {} ] tail",
        '[TOOL_CALLS] [{"name": "f", "arguments": {}}] [TOOL_CALLS]nope[ARGS]{"x": "]"}[TOOL_CALLS]f[ARGS]oops',
        "[TOOL_CALLS]f[TOOL_CALLS]f[CALL_ID][CALL_ID]x[ARGS]{\"s\": \"\x01\"}]}]x",
        # the pre-v11 array form (fmt_jsontag.c's mistral-array row), then its corner cases
        'Hi [TOOL_CALLS] [{"name": "f", "arguments": {"a": [1]}, "id": "a1B2c3D4e"}, '
        '{"name": "search", "arguments": {}, "id": "Z9y8X7w6v"}] ok [TOOL_CALLS][{"name": "f"}]',
        '[TOOL_CALLS][{"name": "f", "arguments": {}, oops}, {"name": "f", "arguments": {"s": "]"}}',
        '[TOOL_CALLS] [{"name": "f", "arguments": {}}] [TOOL_CALLS]f[ARGS]{} [TOOL_CALLS] [x',
    ))



def _py_literal(v) -> str:
    """Python literal syntax of a JSON value (what pythonic models write)."""
    if isinstance(v, dict):
        return "{" + ", ".join("%r: %s" % (k, _py_literal(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_py_literal(x) for x in v) + "]"
    return repr(v)


def _render_pythonic(name: str, args: str) -> str:
    a = json.loads(args)
    if not isinstance(a, dict):  # not expressible as keywords: a positional value (malformed)
        return "%s(%s)" % (name, _py_literal(a))
    return "%s(%s)" % (name, ", ".join("%s=%s" % (k, _py_literal(v)) for k, v in a.items()))


TABLE["pythonic"] = FormatSpec(
    "pythonic", ("[", "]", "(", ")", "=", "<|python_start|>", "<|python_end|>", "'", "\\x", "r'", "True", "None"),
    render_call=_render_pythonic, block=lambda calls: "[" + ", ".join(calls) + "]", json_args=False,
    extra_seeds=(
        "See [1] and [note(s)]. [f(a='x\\'y', b=[1, -2.5e3, None], c={'k': (1,)}), search(q=r'\\d' \"z\")] after [",
        "[f(a=1_000, b=0x1F, c=007, d=1e999, e=b'x', f=f'{x}'), f(), nope(z=[1, ')'])]",
        "<|python_start|>[f(a='\\x41\\u00e9\\N{DASH}'), f(a=\"open",
        # Llama 4's template: the tokens around the content, then the calls
        "So <|python_start|>Let me look.<|python_end|>[f(a=1)] <|python_end|> ok <|python_st",
    ))
# gpt-oss (OpenAI Harmony): a call is a commentary message to `functions.NAME`
_HARMONY = ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")
_H_START, _H_CH, _H_MSG, _H_CO, _H_END, _H_CALL, _H_RET = _HARMONY
TABLE["gpt_oss"] = FormatSpec(
    "gpt_oss", _HARMONY + ("assistant", "analysis", "commentary", "final", " to=functions.", "json"),
    render_call=lambda n, a: "%sassistant%scommentary to=functions.%s %sjson%s%s%s" % (
        _H_START, _H_CH, n, _H_CO, _H_MSG, a, _H_CALL),
    extra_seeds=(
        # analysis, preamble, the template's spelling (recipient in the role header), final
        _H_CH + "analysis" + _H_MSG + "think <|e" + _H_END + _H_START + "assistant" + _H_CH + "commentary" + _H_MSG
        + "Checking." + _H_END + _H_START + "assistant to=functions.search" + _H_CH + "commentary json" + _H_MSG
        + '{"q": "<|call|>"}' + _H_CALL + _H_START + "assistant" + _H_CH + "final" + _H_MSG + "Done." + _H_RET,
        # first message at <|channel|>, empty body, builtin-tool recipient, tool response, broken header
        _H_CH + "commentary to=functions.f" + _H_MSG + _H_CALL + _H_START + "assistant" + _H_CH
        + "analysis to=browser.search" + _H_MSG + '{"x": 1}' + _H_CALL + _H_START + "functions.f to=assistant"
        + _H_CH + "commentary" + _H_MSG + "{}" + _H_END + _H_START + "assistant" + _H_CH + "comm" + _H_END + "x",
        _H_START + "assistant" + _H_CH + "commentary to=functions.get_weather" + _H_CO + "json" + _H_MSG
        + '{"a": [1, 2}' + _H_CALL + _H_START + "assistant" + _H_CH + "final" + _H_MSG + "cut <|ret",
    ))
# Rows of the GLM engine (issue 20): typed by schema like GLM (json_args=False).
_GLM_TYPED_SEED = "".join("<arg_key>%s</arg_key><arg_value>%s</arg_value>" % kv for kv in _TYPED_VALUES)
TABLE["ling3"] = FormatSpec(
    "ling3", _GLM_MARKERS + ("\\n",), render_call=_glm("\n"), block=lambda calls: "\n".join(calls), json_args=False,
    extra_seeds=("<tool_call>f" + _GLM_TYPED_SEED + "</tool_call>", "<tool_call>f</tool_call><tool_call>f\n</tool_call>",
                 "<tool_call>search<arg_key>q</arg_key>\n<arg_value>x</arg_value>\\n</tool_call> after"))
_IQ = ("<iquest_tool_call>", "</iquest_tool_call>")
TABLE["iquest_q1"] = FormatSpec(
    "iquest_q1", _IQ + _GLM_MARKERS[2:], render_call=lambda n, a: _glm("")(n, a).replace("tool_call>", "iquest_tool_call>"),
    block=lambda calls: "\n".join(calls), json_args=False,
    extra_seeds=(_IQ[0] + "f" + _GLM_TYPED_SEED + _IQ[1], _IQ[0] + "run\n<arg_key>q</arg_key> <arg_value> x </arg_value>\n" + _IQ[1],
                 "<tool_call>f</tool_call>" + _IQ[0] + "f" + _IQ[0] + "search" + _IQ[1]))
TABLE["poolside_v1"] = FormatSpec(
    "poolside_v1", _GLM_MARKERS, render_call=_glm("\n"), block=lambda calls: "\n".join(calls), json_args=False,
    extra_seeds=("<tool_call>f\n" + _GLM_TYPED_SEED.replace("</arg_value>", "</arg_value>\n") + "</tool_call>",
                 "<tool_call>f\n<arg_key>o</arg_key>\n<arg_value>{\"a\": 1, \"a\": [NaN]}</arg_value>\n</tool_call>"))
TABLE["spark25"] = FormatSpec(
    "spark25", _GLM_MARKERS, render_call=lambda n, a: _glm("")(n, a).replace("</tool_call>", "\n</tool_call>"),
    block=lambda calls: "\n".join(calls), json_args=False,
    extra_seeds=("<tool_call>f\n" + _GLM_TYPED_SEED + "\n</tool_call>",
                 "<tool_call>f\n<arg_key>b</arg_key><arg_value> 1 </arg_value><arg_key>i</arg_key><arg_value>NULL"
                 "</arg_value></tool_call><tool_call></tool_call>"))


def _hunyuan(suffix: str) -> FormatSpec:
    t = {n: "<%s%s>" % (n, suffix) for n in ("tool_calls", "tool_call", "tool_sep", "arg_key", "arg_value")}
    c = {n: "</" + v[1:] for n, v in t.items()}

    def render(name: str, args: str) -> str:
        pairs = "".join("%s%s%s\n%s%s%s\n" % (t["arg_key"], k, c["arg_key"], t["arg_value"],
                                               v if isinstance(v, str) else json.dumps(v, ensure_ascii=False),
                                               c["arg_value"]) for k, v in json.loads(args).items())
        return t["tool_call"] + name + t["tool_sep"] + "\n" + pairs + c["tool_call"]

    typed = "".join("%s%s%s%s%s%s" % (t["arg_key"], k, c["arg_key"], t["arg_value"], v, c["arg_value"])
                    for k, v in _TYPED_VALUES)
    return FormatSpec(
        "hunyuan" + ("_os" if suffix else ""),
        (t["tool_calls"], c["tool_calls"], t["tool_call"], c["tool_call"], t["tool_sep"], t["arg_key"], c["arg_key"],
         t["arg_value"], c["arg_value"]),
        render_call=render, block=lambda calls: t["tool_calls"] + "\n" + "\n".join(calls) + "\n" + c["tool_calls"],
        json_args=False,
        extra_seeds=(t["tool_calls"] + t["tool_call"] + "f" + t["tool_sep"] + typed + c["tool_call"] + c["tool_calls"],
                     # Hy4 (no separator), prose in the block, a call tag outside it, a cut-off block
                     t["tool_calls"] + "note" + t["tool_call"] + "f" + t["arg_key"] + "s" + c["arg_key"] + t["arg_value"]
                     + "x" + c["arg_value"] + c["tool_call"] + t["tool_call"] + "f" + c["tool_call"] + c["tool_calls"]
                     + " after " + t["tool_call"] + "f" + c["tool_call"],
                     "pre " + t["tool_calls"] + "\n" + t["tool_call"] + "get_weather" + t["tool_sep"] + "\n" + t["arg_key"]))


TABLE["hunyuan"] = _hunyuan("")
TABLE["hunyuan_os"] = _hunyuan(":opensource")
# Issue 20 rows. nanbeige is an alias of qwen3_coder: its template writes
# non-strings with tojson (true, null, 2.5) and '\n\n' before the first call.
TABLE["qwen3_coder"] = replace(TABLE["qwen3_coder"], extra_seeds=TABLE["qwen3_coder"].extra_seeds + (
    "Hi\n\n<tool_call>\n<function=f>\n<parameter=a>\ntrue\n</parameter>\n<parameter=b>\nnull\n</parameter>\n"
    "<parameter=c>\n2.5\n</parameter>\n<parameter=d>\n{\"x\": [1]}\n</parameter>\n</function>\n</tool_call>"
    "\n<tool_call>\n<function=search>\n</function>\n</tool_call>",))



def render_mimo(name: str, args) -> str:
    """Xiaomi MiMo: Qwen3-Coder's tags, each value as written between them."""
    args = json.loads(args) if isinstance(args, str) else args
    body = "".join("<parameter=%s>%s</parameter>\n" % (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
                   for k, v in args.items())
    return "<tool_call>\n<function=%s>\n%s</function>\n</tool_call>" % (name, body)


TABLE["mimo"] = FormatSpec(
    "mimo", _QWEN3_CODER_MARKERS, render_call=render_mimo, block=lambda calls: "\n".join(calls), json_args=False,
    extra_seeds=(
        "<tool_call>\n<function=f>\n<parameter=a>x<parameter=b>y</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=f>\n<parameter=a>\n &amp; \n</parameter>\n</tool_call> after <tool_c",
        "<tool_call>\n<function=f>\n" + "".join("<parameter=%s>%s</parameter>\n" % kv for kv in _TYPED_VALUES)
        + "</function>\n</tool_call>"))

def render_dots_invoke(name: str, args) -> str:
    return render_minimax_invoke(name, args)  # the same invoke shape


TABLE["dots"] = FormatSpec(
    "dots", ("<dots_function_call>", "</dots_function_call>", '<invoke name="', "</invoke>", '<parameter name="',
             "</parameter>", '">'),
    render_call=render_dots_invoke, block=lambda invokes: "<dots_function_call>\n" + "".join(invokes)
    + "</dots_function_call>", json_args=False,
    extra_seeds=(
        '<dots_function_call>\n<invoke name="f">\n<parameter name="a">  x \n</parameter>\n<parameter name="b">'
        ' null \t</parameter>\n</invoke>\n</dots_function_call> after',
        '<dots_function_call>{"name": "f", "arguments": {}}</dots_function_call>',
        '<dots_function_call>\n<invoke name="f">\n' + "".join(
            '<parameter name="%s"> %s </parameter>\n' % kv for kv in _TYPED_VALUES)
        + "</invoke>\n</dots_function_call>"))

TABLE["trinity"] = FormatSpec(
    "trinity", ("<tool_call>", "</tool_call>", '"name"', '"arguments"', "<think>", "</think>"),
    render_call=_jsontag("\n"), block=lambda calls: "\n".join(calls), extra_seeds=_JSONTAG_SEEDS + (
        '<think>a</think>b<tool_<think>call>{"name": "f", "arguments": {"x": "1</think>2"}}</tool_call> <thin',
        "<think>\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>\n</think></think><think",),
    filtered=("<think>", "</think>"))

_GCML = "\uff5cGCML\uff5c"
_GC_BOT, _GC_EOT = "<%stool_calls>" % _GCML, "</%stool_calls>" % _GCML
_GC_INV, _GC_INV_END = "<%sinvoke" % _GCML, "</%sinvoke>" % _GCML
_GC_PAR, _GC_PAR_END = "<%sparameter" % _GCML, "</%sparameter>" % _GCML


def render_gigachat35_invoke(name: str, args) -> str:
    """GigaChat 3.5: one parameter tag per argument, string="true" (raw) or "false" (JSON)."""
    args = json.loads(args) if isinstance(args, str) else args
    params = "".join('%s name="%s" string="%s">%s%s\n' % (
        _GC_PAR, k, "true" if isinstance(v, str) else "false",
        v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), _GC_PAR_END) for k, v in args.items())
    return '%s name="%s">\n%s%s' % (_GC_INV, name, params, _GC_INV_END)


TABLE["gigachat35"] = FormatSpec(
    "gigachat35", (_GC_BOT, _GC_EOT, _GC_INV, _GC_INV_END, _GC_PAR, _GC_PAR_END, ' name="', ' string="true">',
                   ' string="false">'),
    render_call=render_gigachat35_invoke, block=lambda calls: _GC_BOT + "\n" + "\n".join(calls) + "\n" + _GC_EOT,
    json_args=False, extra_seeds=(
        "Hi\n\n" + _GC_BOT + "\n" + render_gigachat35_invoke("get_weather", {"city": "Paris", "n": [1, 2.5, None]})
        + "\n" + _GC_INV + ' name="f">\n' + _GC_INV_END + "\n" + _GC_EOT + "<|message_sep|>",
        _GC_BOT + _GC_INV + ' name="f">' + _GC_PAR + ' name="x" string="false">nope' + _GC_PAR_END + _GC_INV_END,
        "<\uff5cDSML\uff5cinvoke name=\"f\"/> " + _GC_BOT[:9]))

def render_minicpm5(name: str, args) -> str:
    """OpenBMB MiniCPM: `<function name="NAME"><param name="K">V</param>...</function>`, no block."""
    args = json.loads(args) if isinstance(args, str) else args
    return '<function name="%s">%s</function>' % (name, "".join(
        '<param name="%s">%s</param>' % (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
        for k, v in args.items()))


TABLE["minicpm5"] = FormatSpec(
    "minicpm5", ('<function name="', "</function>", '<param name="', "</param>", '">', "<![CDATA[", "]]>"),
    render_call=render_minicpm5, block=lambda calls: "\n".join(calls), json_args=False,
    extra_seeds=(
        'a <function name="f"><param name="c"><![CDATA[ x ]] ]]> </param><param name="d"><![CD</param></function> b',
        '<function name="f"><param name="x">(1, 2)</param><param name="y"> {"a": [1]} </param>'
        '<function name="search"></function>',
        '<function name="f">' + "".join('<param name="%s">%s</param>' % kv for kv in _TYPED_VALUES) + "</function>",
        "<function=f> <function> <function name=\"f\"",))


_K3 = ("<|open|>tools<|sep|>", "<|close|>tools<|sep|>", '<|open|>call tool="', "<|close|>call<|sep|>",
       '<|open|>argument key="', "<|close|>argument<|sep|>", "<|sep|>", '" type="string"<|sep|>',
       '" type="object"<|sep|>', '" index="1"<|sep|>', "<|open|>response<|sep|>", "<|close|>response<|sep|>",
       "<|close|>message<|sep|>", "&amp;", "&quot;")
_K3_TYPES = {str: "string", int: "number", float: "number", bool: "boolean", dict: "object", list: "array",
             type(None): "null"}


def k3_attr(v: str) -> str:
    return v.replace("&", "&amp;").replace('"', "&quot;")


def render_kimi_k3(name: str, args, index: int = 1) -> str:
    """Kimi K3's encoder: strings raw, other values as JSON, each with its
    type; attribute values escaped."""
    args = json.loads(args) if isinstance(args, str) else args
    body = "".join('<|open|>argument key="%s" type="%s"<|sep|>%s<|close|>argument<|sep|>'
                   % (k3_attr(k), _K3_TYPES[type(v)], v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
                   for k, v in args.items())
    return '<|open|>call tool="%s" index="%d"<|sep|>%s<|close|>call<|sep|>' % (k3_attr(name), index, body)


# The model types every value (type="..."), so with tool names only every
# value round-trips (json_args=False: the values are not one JSON value).
TABLE["kimi_k3"] = FormatSpec(
    "kimi_k3", _K3, render_call=render_kimi_k3, block=lambda calls: _K3[0] + "".join(calls) + _K3[1],
    json_args=False,
    extra_seeds=(
        # the reply's framing around prose, an empty tools section, a value
        # without a closing tag, a non-JSON typed value, escaped attributes
        "<|open|>response<|sep|>Hi<|close|>response<|sep|>" + _K3[0] + _K3[1] + "<|close|>message<|sep|>",
        _K3[0] + '<|open|>call tool="a&amp;b" index="1"<|sep|><|open|>argument key="&quot;k" type="number"<|sep|>'
        "NaN<|close|>argument<|sep|><|open|>argument key=\"o\" type=\"object\"<|sep|>{\"a\": [1, 2.50]}"
        "<|close|>call<|sep|>" + _K3[1],
        _K3[0] + '<|open|>call tool="f" index="1"<|sep|><|open|>argument key="s"<|sep|>x<|close|>tools<|sep|>tail',
        "Use " + _K3[0] + " here. " + _K3[0] + "<|open|>call index=\"1\" tool=\"f\"<|sep|>",
    ))

# MiniMax-M3: every tag after the namespace token; values nested as the chat
# template's to_xml writes them (one element per key, one <item> per list
# entry, booleans as JSON, other scalars as their text, None left out).
M3_NS = "]<]minimax[>["
_M3 = (M3_NS + "<tool_call>", M3_NS + "</tool_call>", M3_NS + '<invoke name="', M3_NS + "</invoke>", M3_NS,
       M3_NS + "<item>", M3_NS + "</item>", '">')


def m3_xml(val) -> str:
    if isinstance(val, dict):
        return "".join("%s<%s>%s%s</%s>" % (M3_NS, k, m3_xml(v), M3_NS, k) for k, v in val.items() if v is not None)
    if isinstance(val, list):
        return "".join("%s<item>%s%s</item>" % (M3_NS, m3_xml(v), M3_NS) for v in val)
    if isinstance(val, bool):
        return json.dumps(val)
    return "" if val is None else str(val)


def render_minimax_m3(name: str, args) -> str:
    args = json.loads(args) if isinstance(args, str) else args
    return '%s<invoke name="%s">%s%s</invoke>' % (M3_NS, name, m3_xml(args), M3_NS)


def minimax_m3_block(invokes: Sequence[str]) -> str:
    return _M3[0] + "\n" + "\n".join(invokes) + "\n" + _M3[1]


# With tool names only (no schema) a leaf is a string unless it is true,
# false or null, and nested mappings and lists round-trip
# (json_args=False: the values are not one JSON value).
TABLE["minimax_m3"] = FormatSpec(
    "minimax_m3", _M3, render_call=render_minimax_m3, block=minimax_m3_block, json_args=False,
    extra_seeds=(
        # an opener that starts no call, a value without its closing tag, a
        # nested element of the key's own name, blanks after NS, a stray NS
        "a " + _M3[0] + " b " + M3_NS + "c",
        _M3[0] + _M3[2] + 'f">' + M3_NS + "<a>x" + M3_NS + "<b>1" + _M3[1] + " tail",
        _M3[0] + "\n" + _M3[2] + 'f">' + M3_NS + "<a>" + M3_NS + "<a>1" + M3_NS + "</a>" + M3_NS + "</a>"
        + M3_NS + " <n> 7 " + M3_NS + " </n>" + _M3[3] + _M3[1],
        _M3[0] + _M3[2] + 'search">' + M3_NS + "<q>" + M3_NS + "x" + M3_NS + "</q" + M3_NS + "</q>" + _M3[3],
    ))

# tool_choice="required" / a named tool: the JSON array SGLang's schema
# constraint makes a model write (the jsonarray row of fmt_jsontag.c)
TABLE["jsonarray"] = FormatSpec(
    "jsonarray", ("[", "{\"", ",", "]", '"name"', '"parameters"', '"arguments"'),
    render_call=lambda n, a: '{"name": %s, "parameters": %s}' % (json.dumps(n, ensure_ascii=False), a),
    block=lambda calls: "[" + ", ".join(calls) + "]",
    extra_seeds=(
        '{"name": "f", "parameters": {"a": [1, 2.50]}}',
        '[\n  {"parameters": {"q": "]"}, "name": "search"},\n  {"name": "f", "arguments": {}}\n] tail',
        "see [1] and [ {x} [] [{\"name\": \"nope\", \"parameters\": {}}, {\"name\": \"f\"}",
        '[{"name": "f", "parameters": {"a": 1}, "x": }, {"name": "f", "parameters": {"s": "\x01"}}',
    ))

# Cohere Command A: <|START_ACTION|>[{tool_call_id, tool_name, parameters}, ...]<|END_ACTION|>
# (the cohere_command4 row of the JSON-array engine, fmt_jsontag.c)
_CO = ("<|START_ACTION|>", "<|END_ACTION|>")


def render_cohere4(name: str, args: str, index: int = 0) -> str:
    return '{"tool_call_id": "%d", "tool_name": %s, "parameters": %s}' % (index, json.dumps(name, ensure_ascii=False),
                                                                         args)


TABLE["cohere_command4"] = FormatSpec(
    "cohere_command4", _CO + ('"tool_name"', '"parameters"', '"tool_call_id"', "[", "]"),
    render_call=render_cohere4,
    block=lambda calls: _CO[0] + "[\n    " + ",\n    ".join(calls) + "\n]" + _CO[1],
    extra_seeds=(
        "Use " + _CO[0] + " here. " + _CO[1] + " " + _CO[0] + '[{"tool_name": "f", "parameters": {}}] x' + _CO[1],
        _CO[0] + '[{"tool_call_id": "0", "name": "f", "parameters": {"a": 1}, oops}, '
        '{"tool_call_id": "1", "tool_name": "f", "parameters": {"s": "]' + _CO[1] + '"}}]' + _CO[1],
        _CO[0] + ' [ {"parameters": {"q": [1]}, "tool_name": "search"} ] ' + _CO[1] + _CO[0] + "[{",
    ))

# Swiss AI Apertus: <|tools_prefix|>[{"NAME": ARGS}, ...]<|tools_suffix|>
# (the apertus2509 row of the JSON-array engine, fmt_jsontag.c)
_AP = ("<|tools_prefix|>", "<|tools_suffix|>")
TABLE["apertus2509"] = FormatSpec(
    "apertus2509", _AP + ("[{", "]", "}, {"),
    render_call=lambda n, a: "{%s: %s}" % (json.dumps(n, ensure_ascii=False), a),
    block=lambda calls: _AP[0] + "[" + ", ".join(calls) + "]" + _AP[1],
    extra_seeds=(
        "Use " + _AP[0] + " here. " + _AP[1] + " " + _AP[0] + '[{"f": {}}] x' + _AP[1],
        _AP[0] + '[{}, {"f": {"a": 1}, "g": 2}, {"f": oops}, {"f": {"s": "]' + _AP[1] + '"}}]' + _AP[1],
        _AP[0] + ' [ {"search": {"q": [1]}} ] ' + _AP[1] + _AP[0] + "[{",
    ))

_STEP = ("<\uff5ctool_calls_begin\uff5c>", "<\uff5ctool_calls_end\uff5c>", "<\uff5ctool_call_begin\uff5c>",
         "<\uff5ctool_call_end\uff5c>", "<\uff5ctool_sep\uff5c>", "function", '<steptml:invoke name="',
         "</steptml:invoke>", '<steptml:parameter name="', "</steptml:parameter>", '">')


def render_step3(name: str, args) -> str:
    """Step-3: one call, strings raw, other values as JSON."""
    args = json.loads(args) if isinstance(args, str) else args
    body = "".join('<steptml:parameter name="%s">%s</steptml:parameter>' % (
        k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in args.items())
    return '%s\nfunction%s<steptml:invoke name="%s">%s</steptml:invoke>%s' % (_STEP[2], _STEP[4], name, body, _STEP[3])


TABLE["step3"] = FormatSpec(
    "step3", _STEP, render_call=render_step3, block=lambda calls: _STEP[0] + "\n" + "\n".join(calls) + "\n" + _STEP[1],
    json_args=False,
    extra_seeds=(
        # a lead that is not `function`, a value with markup and blanks, no block end, a bare call token
        _STEP[0] + _STEP[2] + "code" + _STEP[4] + '<steptml:invoke name="f"></steptml:invoke>' + _STEP[3] + _STEP[2]
        + " function\n" + _STEP[4] + '\n<steptml:invoke name="f">\n<steptml:parameter name="a"> <b>x</b> '
        "</steptml:parameter>\n</steptml:invoke>" + _STEP[3] + _STEP[1] + " after " + _STEP[2],
        _STEP[0] + _STEP[2] + "function" + _STEP[4] + '<steptml:invoke name="f">' + "".join(
            '<steptml:parameter name="%s"> %s </steptml:parameter>' % kv for kv in _TYPED_VALUES),
        "Hi " + _STEP[0] + " no call " + _STEP[1],
    ))

_IS1 = ("<|action_start|><|plugin|>", "<|action_start|> <|plugin|>", "<|action_end|>")
TABLE["interns1"] = FormatSpec(
    "interns1", _IS1 + ("<|action_start|>", "<|plugin|>", '"name"', '"parameters"', '"arguments"'),
    render_call=lambda n, a: '%s\n{"name": %s, "parameters": %s}%s' % (_IS1[0], json.dumps(n, ensure_ascii=False), a, _IS1[2]),
    block=lambda calls: "\n".join(calls),
    extra_seeds=(
        # the detokenizer's spelling, the interpreter (text), a stray end token
        _IS1[1] + '\n{"arguments": {"a": [1]}, "name": "f"}' + _IS1[2] + "after",
        "<|action_start|><|interpreter|>\nprint(1)" + _IS1[2] + " " + _IS1[0] + " nope " + _IS1[2],
        _IS1[0] + '{"name": "f", "parameters": {"a": 1}} junk' + _IS1[2] + _IS1[1] + '{"name": "f"',
    ))

_GC3 = ("<|function_call|>", "<|message_sep|>\n\nfunction call<|role_sep|>\n", "function call<|role_sep|>\n")
TABLE["gigachat3"] = FormatSpec(
    "gigachat3", _GC3 + ("<|message_sep|>", "<|role_sep|>", '"name"', '"arguments"'),
    render_call=lambda n, a: '%s{"name": %s, "arguments": %s}' % (_GC3[0], json.dumps(n, ensure_ascii=False), a),
    block=lambda calls: "\n".join(calls),
    extra_seeds=(
        "Hi" + _GC3[1] + '{"name": "f", "arguments": {"a": [1, {"b": 2}]}}</s>',
        _GC3[2] + '{"arguments": {}, "name": "f", "parameters": 1} tail ' + _GC3[0] + "not json",
        "a function call<|role_sep|> b " + _GC3[0] + '{"name": "f", oops} ' + _GC3[0] + '{"name": "f"',
    ))

# What every format is likely to contain: JSON punctuation and generic tags.
GENERIC_MARKERS: Tuple[str, ...] = (
    "{", "}", "[", "]", '"', "\\u", "\\ud800", ":", ",", "true", "false", "null",
    "<", ">", "</", "\n", "```", "\u2581", "\uff5c",
)


def spec(name: str) -> FormatSpec:
    """The table entry of a format, or the generic fallback."""
    if name in TABLE:
        s = TABLE[name]
        return s if s.name == name else FormatSpec(name, s.markers, s.render_call, s.block, s.json_args,
                                                   s.generic, s.notes, s.extra_seeds)
    return FormatSpec(name, (), generic=True,
                      notes="no entry in tests/format_table.py: add markers and a renderer")


def markers(name: str) -> Tuple[str, ...]:
    return spec(name).markers + GENERIC_MARKERS


# Arguments used by seeds and well-formed samples (JSON formats).
SAMPLE_ARGS: List[str] = [
    '{"city": "Paris", "unit": "celsius"}',
    '{}',
    '{"q": "a \\"quoted\\" \\\\ back\\nslash", "n": [1, -0, 2.50, 1e400, -1E-7, true, false, null]}',
    '{"nested": {"a": [{"b": {"c": []}}]}, "emoji": "\\ud83d\\ude00 \u00e9\u4e2d"}',
    '{"x":1,"y":[ 1 ,2 ],"z":{ }}',
]
SAMPLE_TOOLS = ["get_weather", "search", "f"]
SAMPLE_PROSE = ["", "Let me check.", "Sure! ", "Done.\n\nAnything else?", "a < b and c > d, {not json}"]


def seed_responses(name: str) -> List[str]:
    """Well-formed responses for the seed corpus of a format (empty for a
    format without a renderer)."""
    s = spec(name)
    if s.render_call is None:
        return []
    out = []
    for i, args in enumerate(SAMPLE_ARGS):
        tool = SAMPLE_TOOLS[i % len(SAMPLE_TOOLS)]
        before = SAMPLE_PROSE[i % len(SAMPLE_PROSE)]
        after = SAMPLE_PROSE[(i + 2) % len(SAMPLE_PROSE)]
        out.append(s.response(before, [(tool, args)], after))
    out.append(s.response("Two calls: ", [("get_weather", SAMPLE_ARGS[0]), ("search", SAMPLE_ARGS[2])]))
    # malformed variants keep the fuzzer near the error paths
    out.append(s.response("", [("unknown_tool", "{}")]))
    if s.json_args:
        out.append(s.response("", [("f", '{"a": [1, 2}')]))
    out.append(s.calls_text([("f", '{"a": 1}')])[:-3])
    if s.json_args:
        out.append(s.response("", [("f", "[NaN, Infinity, -Infinity, -0, 0.1, 1e22, 5e-324]")]))
        out.append(s.response("", [("f", '{"n": 1%s}' % ("0" * 4100))], "after"))
        out.append(s.response("", [("f", '{"s": "\\ud800\\udc00\\ud800x\\ud800\\n"}')]))
        # raw control characters in strings; numbers past a double (issue 18)
        out.append(s.response("", [("f", '{"c\n": "a\nb\t\x01\x1f```", "n": [1e400, -2E999, 1e-400]}')], "x"))
    out.append(s.response("text" + " " * 5000, [("f", "{}")], "\n" * 5000 + "end"))
    if not s.json_args:  # prose between a call's tags (issue 18: a bad_markup, the call stands)
        args = {"city": "Paris", "n": 2}
        call = s.render_call("get_weather", json.dumps(args))
        for k, at in enumerate(call_gaps(name, "get_weather", args)):
            call = call[:at + 13 * k] + "see <this> ok" + call[at + 13 * k:]
        out.append(s.block([call]))
    return out + list(s.extra_seeds)


def expected_args(raw: str) -> str:
    """The arguments the parsers write for raw JSON: json.dumps(json.loads(raw))
    as strict JSON (numbers past a double keep their digits)."""
    from sglang_toolparse import strict_json

    return strict_json.dumps(strict_json.loads(raw))


def fragments(fmt: str, size: int, seed: int) -> str:
    """About `size` characters of the format's markers, whole and cut, mixed
    with JSON punctuation: the input that keeps hold-back logic busiest.
    (Here, not in a test module, so scripts/scaling.py needs no pytest.)"""
    rnd = random.Random(seed)
    toks = list(markers(fmt))
    parts = []
    n = 0
    while n < size:
        m = rnd.choice(toks)
        r = rnd.random()
        if r < 0.3:
            m = m[: rnd.randint(1, len(m))]
        elif r < 0.5:
            m = m[rnd.randint(0, len(m) - 1):]
        elif r < 0.6:
            m = rnd.choice([" ", "\n", '"name": "f"', '"arguments": ', "{", "}", "x"])
        parts.append(m)
        n += len(m)
    return "".join(parts)


# Gemma 4: its chat template's encoder (format_argument with bare keys,
# sorted; strings between quote tokens, nothing escaped; None as `None`)
_G4 = ("<|tool_call>", "<tool_call|>", "call:", '<|"|>')


def gemma4_value(v) -> str:
    if isinstance(v, str):
        return _G4[3] + v + _G4[3]
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{" + ",".join("%s:%s" % (k, gemma4_value(v[k])) for k in sorted(v)) + "}"
    if isinstance(v, list):
        return "[" + ",".join(gemma4_value(x) for x in v) + "]"
    return str(v)


def render_gemma4(name: str, args: str) -> str:
    a = json.loads(args) if isinstance(args, str) else args
    body = gemma4_value(a)[1:-1] if isinstance(a, dict) else gemma4_value(a)
    return "%s%s%s{%s}%s" % (_G4[0], _G4[2], name, body, _G4[1])


TABLE["gemma4"] = FormatSpec(
    "gemma4", _G4 + ("{", "}", "[", "]", ":", ",", "None", "true"),
    render_call=render_gemma4, json_args=False,
    extra_seeds=(
        'Hi <|tool_call>call:f{a:<|"|>x}{,]<|"|>,b:[1,-2.5e-07,None,{c:true}],d:1_0}<tool_call|> done',
        '<|tool_call>call:f{a:1}call:f{b:<|"|>y<|"|>}<tool_call|><|tool_call> junk <tool_call|><|tool_call>call:g{a:[1}',
        '<|tool_call>call:f{a:<|"|>cut <|"| <tool_call|>',
        "<|tool_call>call:f{a:1<tool_call|>tail <|tool_call>call:{}<tool_call|><|tool_call>call:h{k}<tool_call|>",
    ))

# Inkling (TMLv0 framing): every message opens with <|message_model|>, its
# author name (the tool's name before a call) and a content token
_INK = ("<|message_model|>", "<|content_invoke_tool_json|>", "<|end_message|>", "<|content_text|>",
        "<|content_model_end_sampling|>", "<|content_thinking|>", "<|content_invoke_tool_text|>")


def render_inkling(name: str, args: str) -> str:
    n = json.dumps(name, ensure_ascii=False)
    return '%s%s%s{"name": %s, "args": %s}%s' % (_INK[0], name, _INK[1], n, args, _INK[2])


TABLE["inkling"] = FormatSpec(
    "inkling", _INK + ("<|", "|>", '"name"', '"args"', "<|message_user|>", "<|endoftext|>"),
    render_call=render_inkling,
    block=lambda calls: "".join(calls) + _INK[4], blank_is_text=True,
    extra_seeds=(
        _INK[0] + _INK[3] + "Hello <|x|> " + _INK[2] + _INK[0] + "f" + _INK[1] + '{"args": {"a": [1]}, "name": "f"}'
        + _INK[2] + _INK[4],
        _INK[0] + _INK[5] + "think<|" + _INK[2] + _INK[0] + "g" + _INK[6] + "echo hi" + _INK[2] + _INK[1] + " nope",
        _INK[0] + "f<" + _INK[1] + '{"name": "f", "args": {}} junk' + _INK[2] + _INK[0] + "f" + _INK[1] + '{"name": "f", oops}'
        + _INK[2] + _INK[0] + "f" + _INK[1] + '{"name": "f", "args": {"a": "b',
    ))


# Liquid LFM2 / LFM2.5: its chat template's render_tool_calls (LFM2.5's
# format_arg_value: strings in '...' with \\, \', \n, \r escaped; lists and
# dicts with tojson; other values with `string`)
_LFM2 = ("<|tool_call_start|>", "<|tool_call_end|>")


def lfm2_value(v) -> str:
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r") + "'"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def render_lfm2(name: str, args: str) -> str:
    a = json.loads(args) if isinstance(args, str) else args
    if not isinstance(a, dict):  # not expressible as keywords: a positional value (malformed)
        return "%s(%s)" % (name, lfm2_value(a))
    return "%s(%s)" % (name, ", ".join("%s=%s" % (k, lfm2_value(v)) for k, v in a.items()))


TABLE["lfm2"] = FormatSpec(
    "lfm2", _LFM2 + ("[", "]", "(", ")", "=", "{", "'", "true", "null", "None", '{"name": '),
    render_call=render_lfm2, block=lambda calls: _LFM2[0] + "[" + ", ".join(calls) + "]" + _LFM2[1],
    json_args=False,
    extra_seeds=(
        "Hi [1] <|tool_call_start|>[f(a='x\\'y', b=[1, -2.5e3, null], c={\"k\": true}), f()]<|tool_call_end|> done",
        '<|tool_call_start|>[{"name": "f", "arguments": {"a": 1}}, {"name": "g"}]<|tool_call_end|>'
        "<|tool_call_start|>f(a=None)<|tool_call_end|><|tool_call_start|>{\"name\": \"f\"} x<|tool_call_end|>",
        "<|tool_call_start|>[f(a=x), f(b='<|tool_call_end|>'), g(c=1)] junk<|tool_call_end|> <|tool_call_end|>",
        "<|tool_call_start|>[]<|tool_call_end|><|tool_call_start|>[f(a=\"cut <|tool_call_end|>tail <|tool_call_start|>[{\"na",
    ))


# K2 Horizon (k2_horizon): its chat template's xml dialect (strings raw,
# anything else tojson), inside the <ifm|tool_calls> group it always writes;
# the seeds add the xml_typed dialect, calls outside a group, leading think
# blocks and the json dialect (fmt_jsontag.c's k2_horizon row: a call or a
# list, arguments an object, a JSON string or null, a "function" wrapper)
_K2 = ("<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>",
       "</ifm|arg_key>", "<ifm|arg_type>", "</ifm|arg_type>", "<ifm|arg_value>", "</ifm|arg_value>")


def render_k2_horizon(name: str, args: str) -> str:
    pairs = "".join("%s%s%s\n%s%s%s\n" % (_K2[4], k, _K2[5], _K2[8],
                                           v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), _K2[9])
                    for k, v in json.loads(args).items())
    return _K2[2] + name + "\n" + pairs + _K2[3]


TABLE["k2_horizon"] = FormatSpec(
    "k2_horizon", _K2 + ("<ifm|think>", "</ifm|think>", "<ifm|think_fast>", "</ifm|think_fast>"),
    render_call=render_k2_horizon, block=lambda calls: _K2[0] + "\n" + "\n".join(calls) + "\n" + _K2[1],
    json_args=False,
    extra_seeds=(
        "Sure.\n<ifm|tool_calls>\n<ifm|tool_call>f\n<ifm|arg_key>a</ifm|arg_key>\n<ifm|arg_type>string"
        "</ifm|arg_type>\n<ifm|arg_value>12</ifm|arg_value>\n<ifm|arg_key>b</ifm|arg_key>\n<ifm|arg_type>integer"
        "</ifm|arg_type>\n<ifm|arg_value>3</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
        "x <ifm|tool_call>f\n</ifm|tool_call> y </ifm|tool_calls><ifm|tool_calls> z\n<ifm|tool_call>g"
        "<ifm|arg_key>k</ifm|arg_key><ifm|arg_type>any<ifm|arg_value>[1, 2]</ifm|arg_value></ifm|tool_call>",
        "<ifm|think>\nplan</ifm|think>\n<ifm|tool_calls><ifm|tool_call>{\"name\": \"f\", \"arguments\": {}}"
        "</ifm|tool_call></ifm|tool_calls>",
        "<ifm|tool_calls>\n<ifm|tool_call>f\n<ifm|arg_key>v</ifm|arg_key>\n<ifm|arg_value>cut </ifm|arg_val",
        # the typed parameters of fuzz_core.c's PARAMS: a union and an undeclared key read the tag
        "<ifm|tool_call>f<ifm|arg_key>u</ifm|arg_key><ifm|arg_type> string </ifm|arg_type><ifm|arg_value>12"
        "</ifm|arg_value><ifm|arg_key>w</ifm|arg_key><ifm|arg_type>any</ifm|arg_type><ifm|arg_value>[1]"
        "</ifm|arg_value><ifm|arg_key>i</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>7"
        "</ifm|arg_value><ifm|arg_key>u</ifm|arg_key><ifm|arg_type>strin<ifm|arg_value>3</ifm|arg_value>"
        "</ifm|tool_call>",
        # the json dialect, with a leading think block and group tags of no call
        " <ifm|think_fast>a <ifm|tool_call>f\n</ifm|tool_call></ifm|think_fast>\nok\n<ifm|tool_calls>\n"
        "<ifm|tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"x\", \"b\": [1, {\"c\": null}]}}</ifm|tool_call>\n"
        "<ifm|tool_call>\n[{\"name\": \"g\", \"arguments\": \"{\\\"k\\\": 2}\"}, {\"type\": \"function\", "
        "\"function\": {\"name\": \"f\", \"parameters\": null}, \"id\": 1}]\n</ifm|tool_call>\n</ifm|tool_calls>",
        "a <ifm|tool_calls>\n</ifm|tool_calls> b </ifm|tool_calls><ifm|tool_calls> c <ifm|tool_call>{\"name\": "
        "\"nope\", \"arguments\": {}}</ifm|tool_call><ifm|tool_call>{\"name\": \"f\", \"arguments\": [1]}"
        "</ifm|tool_call><ifm|tool_call>[1]</ifm|tool_call><ifm|tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a",
    ))


# Muse Glimmer (issue 23): recipient channels, calls in a tool recipient's body
_MUSE = ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>", "<atem:function_calls>", "</atem:function_calls>",
         "<atem:invoke", "</atem:invoke>", "<atem:parameter", "</atem:parameter>")


def render_muse(name: str, args, recipient: Optional[str] = None) -> str:
    """The template's tool turn: strings as is, other values as JSON."""
    args = json.loads(args) if isinstance(args, str) else args
    params = "".join('<atem:parameter name="%s">%s</atem:parameter>\n'
                     % (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in args.items())
    return ('<|start|>assistant to=%s<|message|><atem:function_calls>\n<atem:invoke name="%s">\n%s'
            '</atem:invoke>\n</atem:function_calls><|eom|>' % (recipient or name, name, params))


TABLE["muse"] = FormatSpec(
    "muse", _MUSE + (" to=", 'name="', "self", "user", "commentary", "assistant"),
    render_call=render_muse, block=lambda calls: "<|eom|>" + "".join(calls), json_args=False,
    extra_seeds=(
        # the template's turn: reasoning, a call, the answer
        ' to=self<|message|>Check the weather.<|eom|><|start|>assistant to=get_weather<|message|>'
        '<atem:function_calls>\n<atem:invoke name="get_weather">\n<atem:parameter name="city">Paris'
        '</atem:parameter>\n<atem:parameter name="days">3</atem:parameter>\n</atem:invoke>\n'
        '</atem:function_calls><|eom|><|start|>assistant to=user<|message|>Sunny.<|eot|>',
        # attributes around the name, an empty name first, a doubled namespace, a parameter left open
        'to=f.f<|message|>junk<atem:invoke x="1" name="" name="f.f" y><atem:parameter data-name="k">{"a": [1]}'
        '</atem:parameter><atem:parameter name="o">open</atem:invoke><atem:invokes name="f"></atem:invoke>',
        # a terminator inside a value, a header without a recipient, a cut-off header
        'to=search<|message|><atem:invoke name="search"><atem:parameter name="q">a<|eom|> <|start|>assistant'
        '<|message|>prose<atem:invoke name="f"></atem:invoke><|eot|>\n<|start|>assistant to=f',
        '  to=a b<|message|>x<|eot|><|start|>user to=commentary<|message|>y<|eom|>z <|sta',
    ))

# Block markup of no call (issue 18, tiling): Hunyuan's empty, prose-only
# and cut-off blocks, stray tags in a block, a partial tag after a call;
# MiniMax-M3 tags between invokes that open none, a partial tag at the end
for _sfx, _fmt in (("", "hunyuan"), (":opensource", "hunyuan_os")):
    _t = {n: "<%s%s>" % (n, _sfx) for n in ("tool_calls", "tool_call", "tool_sep")}
    _c = {n: "</" + v[1:] for n, v in _t.items()}
    TABLE[_fmt] = replace(TABLE[_fmt], extra_seeds=TABLE[_fmt].extra_seeds + (
        "a " + _t["tool_calls"] + "\n" + _c["tool_calls"] + " b " + _t["tool_calls"] + "\nnote\n" + _c["tool_calls"]
        + " c " + _t["tool_calls"] + " " + _t["tool_call"] + "x y" + _c["tool_call"] + _c["tool_calls"],
        _t["tool_calls"] + "\n" + _t["tool_call"] + "f" + _t["tool_sep"] + "\n" + _c["tool_call"] + "\n" + _c["tool_call"]
        + "\nx\n" + _t["tool_calls"] + "\n" + _t["tool_call"] + "nope" + _c["tool_call"] + "\n" + _c["tool_calls"][:-3],
    ))
TABLE["minimax_m3"] = replace(TABLE["minimax_m3"], extra_seeds=TABLE["minimax_m3"].extra_seeds + (
    _M3[0] + "\n" + _M3[2] + 'f">' + _M3[3] + "\n" + M3_NS + "<zz>" + M3_NS + "</q> x " + M3_NS + " y\n" + M3_NS
    + ' <invoke name="nope">' + _M3[3] + "\n" + _M3[1],
    _M3[0] + "\n" + _M3[2] + 'f">' + _M3[3] + "\n" + M3_NS + " </tool_ca",
))
# MiniMax-M3 values typed in C by the tools' schema (fmt_nsxml_value.c; the
# parameter names are those of fuzz_core.c's schema graph): every leaf kind,
# Unicode digits and spaces, underscores, past-double numbers, a repeated
# key onto a list, prefixItems, a recursive object, JSON text, a stray and
# an unclosed inner tag, an NS that starts no tag.
_m3e = lambda k, v: "%s<%s>%s%s</%s>" % (M3_NS, k, v, M3_NS, k)  # noqa: E731
TABLE["minimax_m3"] = replace(TABLE["minimax_m3"], extra_seeds=TABLE["minimax_m3"].extra_seeds + (
    _M3[0] + "\n" + _M3[2] + 'f">' + _m3e("i", " 1_000 ") + _m3e("x", "\u0661.5e400") + _m3e("b", "\u3000Yes ")
    + _m3e("z", "Null") + _m3e("u", "null") + _m3e("h", "true") + _m3e("zz", "\u2003false")
    + _m3e("l", _m3e("item", "007") + _m3e("item", "7") + _m3e("item", _m3e("i", "1e3") + _m3e("s", "2")))
    + _m3e("o", _m3e("o", _m3e("o", _m3e("i", "-0") + _m3e("i", "x"))) + _m3e("l", "")) + _m3e("v", _m3e("k", "on")
    + _m3e("k", "off")) + _m3e("m", '[1e400, {"a": 1, "a": 2}]') + _m3e("m", "2.50") + _M3[3] + "\n" + _M3[1],
    _M3[0] + _M3[2] + 'get_weather">' + _m3e("o", "x" + M3_NS + "<l>" + _m3e("item", "") + M3_NS + "</zz>"
    + M3_NS + " < i >9" * 3 + M3_NS + "<" + "y" * 40 + M3_NS + "x") + _m3e("item", "[1,2]") + _M3[3] + _M3[1],
))


def call_gaps(name: str, tool: str, args: dict, render: Optional[Callable[[str, str], str]] = None) -> List[int]:
    """Where the template writes only blanks inside a call of `name` to
    `tool` with `args` (rendered by `render`, default the row's renderer):
    before each parameter's tag and before the call's end tag (where a call
    with one more parameter differs from it: the start of that tag), after
    the template's blanks there. Positions where prose would be the name's
    (a name that runs to its first tag) are left out."""
    s = spec(name)
    draw = render or (lambda n, a: s.render_call(n, json.dumps(a, ensure_ascii=False)))
    items = list(args.items())
    full = draw(tool, args)
    out = []
    for k in range(len(items) + 1):
        a = draw(tool, dict(items[:k]))
        b = draw(tool, dict(items[:k] + [("zz", "q")]))
        pos = 0  # (a, b and full share the bytes before where a and b differ)
        while pos < min(len(a), len(b)) and a[pos] == b[pos]:
            pos += 1
        j = a.rfind("<", 0, pos + 1)
        if j >= 0 and ">" not in a[j:pos]:
            pos = j
            for m in s.markers:  # a namespace written before the tag (MiniMax-M3)
                if m.endswith("[") and a[:pos].endswith(m):
                    pos -= len(m)
        while pos < len(full) and full[pos] in " \n":
            pos += 1
        # (GLM-4.7's name runs to its first tag, K2 Horizon's to its first
        # tag over blank lines: prose there shows the call tag was prose)
        if not full[:pos].endswith(tool) and not (name == "k2_horizon" and full[:pos].rstrip().endswith(tool)):
            out.append(pos)
    return out
