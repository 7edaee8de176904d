"""Built-in benchmark corpus: model outputs generated in code, with their
ground truth (the calls and the prose a parser should extract).

A *renderer* turns (prose, calls) into the text a model of one format family
writes. Renderers are keyed by the core format name (the `_tp_format` of the
native detector, e.g. "qwen25", "hermes"). To benchmark a new family, add a
function to RENDERERS; families without a renderer are skipped with a note.
"""
from __future__ import annotations

import json
import random
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

# (name, arguments dict)
Call = Tuple[str, Dict[str, Any]]
Renderer = Callable[[str, Sequence[Call]], str]


def _dumps(obj: Any) -> str:
    # what the models write, and what both parsers return for arguments
    return json.dumps(obj, ensure_ascii=False)


def render_qwen25(prose: str, calls: Sequence[Call]) -> str:
    """Qwen2.5 / Qwen3: `<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>`."""
    blocks = ["<tool_call>\n%s\n</tool_call>" % _dumps({"name": n, "arguments": a}) for n, a in calls]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def render_hermes(prose: str, calls: Sequence[Call]) -> str:
    """Hermes: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`."""
    blocks = ["<tool_call>%s</tool_call>" % _dumps({"name": n, "arguments": a}) for n, a in calls]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def _glm_value(v: Any) -> str:
    # strings are written raw, other values as JSON; the parsers type them
    # by the tool's schema (every corpus parameter is declared)
    return v if isinstance(v, str) else _dumps(v)


def render_glm45(prose: str, calls: Sequence[Call]) -> str:
    """GLM-4.5/4.6: `<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n...</tool_call>`."""
    blocks = [
        "<tool_call>%s\n%s</tool_call>" % (n, "".join(
            "<arg_key>%s</arg_key>\n<arg_value>%s</arg_value>\n" % (k, _glm_value(v)) for k, v in a.items()))
        for n, a in calls
    ]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def render_glm47(prose: str, calls: Sequence[Call]) -> str:
    """GLM-4.7/5: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>`."""
    blocks = [
        "<tool_call>%s%s</tool_call>" % (n, "".join(
            "<arg_key>%s</arg_key><arg_value>%s</arg_value>" % (k, _glm_value(v)) for k, v in a.items()))
        for n, a in calls
    ]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


_DS_CALLS_BEGIN, _DS_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
_DS_CALL_BEGIN, _DS_CALL_END, _DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def _ds_block(prose: str, calls: List[str]) -> str:
    if not calls:
        return prose
    return prose + _DS_CALLS_BEGIN + "".join(calls) + _DS_CALLS_END


def render_deepseekv3(prose: str, calls: Sequence[Call]) -> str:
    """DeepSeek V3/R1: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>`."""
    return _ds_block(prose, [
        "%sfunction%s%s\n```json\n%s\n```%s" % (_DS_CALL_BEGIN, _DS_SEP, n, _dumps(a), _DS_CALL_END)
        for n, a in calls])


def render_deepseekv31(prose: str, calls: Sequence[Call]) -> str:
    """DeepSeek V3.1: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`."""
    return _ds_block(prose, ["%s%s%s%s%s" % (_DS_CALL_BEGIN, n, _DS_SEP, _dumps(a), _DS_CALL_END) for n, a in calls])


def _dsml(block: str, invoke: str, param: str, d: str = "｜DSML｜") -> Renderer:
    """DeepSeek V3.2/V4/V4.1 DSML (GigaChat 3.5: marker ｜GCML｜): parameters
    as tags, string="true" for raw strings and string="false" for JSON values."""

    def render(prose: str, calls: Sequence[Call]) -> str:
        if not calls:
            return prose
        out = [prose + "\n\n<%s%s>\n" % (d, block)]
        for n, a in calls:
            out.append('<%s%s name="%s">\n' % (d, invoke, n))
            for k, v in a.items():
                out.append('<%s%s name="%s" string="%s">%s</%s%s>\n' % (
                    d, param, k, "true" if isinstance(v, str) else "false", _glm_value(v), d, param))
            out.append("</%s%s>\n" % (d, invoke))
        out.append("</%s%s>" % (d, block))
        return "".join(out)

    return render


_KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")
_KIMI_CALL = ("<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>")


def render_kimi_k2(prose: str, calls: Sequence[Call]) -> str:
    """Kimi-K2/K2.5: `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>`
    in a `<|tool_calls_section_begin|>` section (the chat template's layout)."""
    if not calls:
        return prose
    begin, arg, end = _KIMI_CALL
    body = "".join("%sfunctions.%s:%d%s%s%s" % (begin, n, i, arg, _dumps(a), end) for i, (n, a) in enumerate(calls))
    return prose + _KIMI_SECTION[0] + body + _KIMI_SECTION[1]


def _jinja_string(v: Any) -> str:
    # Qwen3-Coder's template: mappings and lists as JSON, other values with
    # Jinja's `string` (Python str: True, None, 12.5)
    if isinstance(v, (dict, list)):
        return _dumps(v)
    return v if isinstance(v, str) else str(v)


def render_qwen3_coder(prose: str, calls: Sequence[Call]) -> str:
    """Qwen3-Coder / Qwen3.5: `<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n...</function>\n</tool_call>`."""
    blocks = [
        "<tool_call>\n<function=%s>\n%s</function>\n</tool_call>" % (n, "".join(
            "<parameter=%s>\n%s\n</parameter>\n" % (k, _jinja_string(v)) for k, v in a.items()))
        for n, a in calls
    ]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def render_minimax_m2(prose: str, calls: Sequence[Call]) -> str:
    """MiniMax-M2: `<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n...</invoke>\n</minimax:tool_call>`."""
    if not calls:
        return prose
    invokes = "".join(
        '<invoke name="%s">\n%s</invoke>\n' % (n, "".join(
            '<parameter name="%s">%s</parameter>\n' % (k, _glm_value(v)) for k, v in a.items()))
        for n, a in calls)
    return (prose + "\n" if prose else "") + "<minimax:tool_call>\n" + invokes + "</minimax:tool_call>"


def render_llama3(prose: str, calls: Sequence[Call]) -> str:
    """Llama 3.x: `<|python_tag|>{"name": ..., "parameters": ...}; {...}` (the
    tag lets prose come first; without prose the models also write the bare object)."""
    if not calls:
        return prose
    return prose + "<|python_tag|>" + "; ".join(_dumps({"name": n, "parameters": a}) for n, a in calls)


def render_mistral(prose: str, calls: Sequence[Call]) -> str:
    """Mistral v11+: `[TOOL_CALLS]NAME[ARGS]{...}` per call (mistral-common's encoding)."""
    return prose + "".join("[TOOL_CALLS]%s[ARGS]%s" % (n, _dumps(a)) for n, a in calls)


def _py_literal(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join("%r: %s" % (k, _py_literal(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_py_literal(x) for x in v) + "]"
    return repr(v)


def render_pythonic(prose: str, calls: Sequence[Call]) -> str:
    """Pythonic (Llama 4): `[NAME(K=V, ...), ...]`, values as Python literals."""
    if not calls:
        return prose
    body = ", ".join("%s(%s)" % (n, ", ".join("%s=%s" % (k, _py_literal(v)) for k, v in a.items()))
                     for n, a in calls)
    return (prose + " " if prose else "") + "[" + body + "]"


_HARMONY = ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")


def render_gpt_oss(prose: str, calls: Sequence[Call]) -> str:
    """gpt-oss (OpenAI Harmony): an analysis message, then the prose as a
    commentary preamble and one `<|start|>assistant<|channel|>commentary
    to=functions.NAME <|constrain|>json<|message|>{...}<|call|>` per call;
    without calls the prose is the final answer (its <|return|> is a stop
    token the server trims)."""
    head = "<|channel|>analysis<|message|>Let me work out what to do.<|end|>"
    if not calls:
        return head + "<|start|>assistant<|channel|>final<|message|>" + prose
    pre = "<|start|>assistant<|channel|>commentary<|message|>%s<|end|>" % prose if prose else ""
    return head + pre + "".join(
        "<|start|>assistant<|channel|>commentary to=functions.%s <|constrain|>json<|message|>%s<|call|>"
        % (n, _dumps(a)) for n, a in calls)


def render_spark25(prose: str, calls: Sequence[Call]) -> str:
    """iFlytek Spark 2.5: `<tool_call>NAME\n<arg_key>K</arg_key><arg_value>V</arg_value>\n...</tool_call>`."""
    blocks = ["<tool_call>%s\n%s</tool_call>" % (n, "".join(
        "<arg_key>%s</arg_key><arg_value>%s</arg_value>\n" % (k, _glm_value(v)) for k, v in a.items()))
        for n, a in calls]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def render_mimo(prose: str, calls: Sequence[Call]) -> str:
    """Xiaomi MiMo: `<tool_call>\n<function=NAME>\n<parameter=K>V</parameter>\n...</function>\n</tool_call>`."""
    blocks = [
        "<tool_call>\n<function=%s>\n%s</function>\n</tool_call>" % (n, "".join(
            "<parameter=%s>%s</parameter>\n" % (k, _glm_value(v)) for k, v in a.items()))
        for n, a in calls
    ]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def render_hunyuan(prose: str, calls: Sequence[Call]) -> str:
    """Tencent Hunyuan: `<tool_calls>\n<tool_call>NAME<tool_sep>\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n
    </tool_call>\n</tool_calls>` (the tags bare, as without a tokenizer)."""
    if not calls:
        return prose
    blocks = ["<tool_call>%s<tool_sep>\n%s</tool_call>" % (n, "".join(
        "<arg_key>%s</arg_key>\n<arg_value>%s</arg_value>\n" % (k, _glm_value(v)) for k, v in a.items()))
        for n, a in calls]
    return (prose + "\n" if prose else "") + "<tool_calls>\n" + "\n".join(blocks) + "\n</tool_calls>"
def render_dots(prose: str, calls: Sequence[Call]) -> str:
    """rednote dots.llm: `<dots_function_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n...`."""
    return render_minimax_m2(prose, calls).replace("minimax:tool_call>", "dots_function_call>")


def render_minicpm5(prose: str, calls: Sequence[Call]) -> str:
    """OpenBMB MiniCPM: `<function name="NAME"><param name="K">V</param>...</function>` (no block)."""
    blocks = ['<function name="%s">%s</function>' % (n, "".join(
        '<param name="%s">%s</param>' % (k, _glm_value(v)) for k, v in a.items())) for n, a in calls]
    if not blocks:
        return prose
    return (prose + "\n" if prose else "") + "\n".join(blocks)


_K3_TYPES = {str: "string", bool: "boolean", int: "number", float: "number", dict: "object", list: "array",
             type(None): "null"}


def _k3_attr(v: str) -> str:
    return v.replace("&", "&amp;").replace('"', "&quot;")


def render_kimi_k3(prose: str, calls: Sequence[Call]) -> str:
    """Kimi K3 (XTML): `<|open|>response<|sep|>PROSE<|close|>response<|sep|><|open|>tools<|sep|>
    <|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>
    ...<|close|>call<|sep|><|close|>tools<|sep|>`: strings raw, other values as JSON."""
    out = "<|open|>response<|sep|>%s<|close|>response<|sep|>" % prose if prose else ""
    if not calls:
        return out
    body = "".join(
        '<|open|>call tool="%s" index="%d"<|sep|>%s<|close|>call<|sep|>' % (_k3_attr(n), i + 1, "".join(
            '<|open|>argument key="%s" type="%s"<|sep|>%s<|close|>argument<|sep|>'
            % (_k3_attr(k), _K3_TYPES.get(type(v), "string"), _glm_value(v)) for k, v in a.items()))
        for i, (n, a) in enumerate(calls))
    return out + "<|open|>tools<|sep|>" + body + "<|close|>tools<|sep|>"


_M3_NS = "]<]minimax[>["


def _m3_xml(v: Any) -> str:
    """MiniMax-M3's to_xml: one element per key, one <item> per list entry,
    booleans as JSON, other scalars as their text, None left out."""
    if isinstance(v, dict):
        return "".join("%s<%s>%s%s</%s>" % (_M3_NS, k, _m3_xml(x), _M3_NS, k) for k, x in v.items() if x is not None)
    if isinstance(v, list):
        return "".join("%s<item>%s%s</item>" % (_M3_NS, _m3_xml(x), _M3_NS) for x in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def render_minimax_m3(prose: str, calls: Sequence[Call]) -> str:
    """MiniMax-M3: `NS<tool_call>\nNS<invoke name="NAME">NS<K>V NS</K>...NS</invoke>\nNS</tool_call>`
    (NS = `]<]minimax[>[`), values nested as the chat template's to_xml writes them."""
    if not calls:
        return prose
    invokes = "\n".join('%s<invoke name="%s">%s%s</invoke>' % (_M3_NS, n, _m3_xml(a), _M3_NS) for n, a in calls)
    return prose + _M3_NS + "<tool_call>\n" + invokes + "\n" + _M3_NS + "</tool_call>"


def render_cohere4(prose: str, calls: Sequence[Call]) -> str:
    """Cohere Command A: `<|START_ACTION|>[` then one `{"tool_call_id", "tool_name",
    "parameters"}` object per call, `,` and newlines between, `]<|END_ACTION|>`."""
    if not calls:
        return prose
    items = ",\n    ".join('{"tool_call_id": "%d", "tool_name": %s, "parameters": %s}' % (i, _dumps(n), _dumps(a))
                          for i, (n, a) in enumerate(calls))
    return prose + "<|START_ACTION|>[\n    " + items + "\n]<|END_ACTION|>"


def render_apertus(prose: str, calls: Sequence[Call]) -> str:
    """Swiss AI Apertus: `<|tools_prefix|>[{"NAME": ARGS}, ...]<|tools_suffix|>`."""
    if not calls:
        return prose
    return prose + "<|tools_prefix|>[" + ", ".join("{%s: %s}" % (_dumps(n), _dumps(a)) for n, a in calls) + \
        "]<|tools_suffix|>"


_STEP_BAR = "\uff5c"


def render_step3(prose: str, calls: Sequence[Call]) -> str:
    """StepFun Step-3: `<｜tool_calls_begin｜>\n<｜tool_call_begin｜>\nfunction<｜tool_sep｜><steptml:invoke
    name="NAME"><steptml:parameter name="K">V</steptml:parameter>...</steptml:invoke><｜tool_call_end｜>...
    <｜tool_calls_end｜>`: strings raw, other values as JSON."""
    if not calls:
        return prose
    tok = lambda t: "<%s%s%s>" % (_STEP_BAR, t, _STEP_BAR)  # noqa: E731
    body = "".join("%s\nfunction%s<steptml:invoke name=\"%s\">%s</steptml:invoke>%s\n" % (
        tok("tool_call_begin"), tok("tool_sep"), n, "".join(
            '<steptml:parameter name="%s">%s</steptml:parameter>' % (k, _glm_value(v)) for k, v in a.items()),
        tok("tool_call_end")) for n, a in calls)
    return (prose + "\n" if prose else "") + tok("tool_calls_begin") + "\n" + body + tok("tool_calls_end")


def render_interns1(prose: str, calls: Sequence[Call]) -> str:
    """InternLM2 / Intern-S1: `<|action_start|><|plugin|>\n{"name": ..., "parameters": ...}<|action_end|>`
    per call, the two opening tokens with a space between them as SGLang's
    detokenizer writes them (the only spelling SGLang's detector reads)."""
    return prose + "".join("<|action_start|> <|plugin|>\n%s<|action_end|>" % _dumps({"name": n, "parameters": a})
                           for n, a in calls)


def render_gigachat3(prose: str, calls: Sequence[Call]) -> str:
    """GigaChat 3: `<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": ..., "arguments": ...}`.
    The template writes one call per message; the multi-call scenarios give
    each call its own header (SGLang's detector reads only the first)."""
    return prose + "".join("<|message_sep|>\n\nfunction call<|role_sep|>\n" + _dumps({"name": n, "arguments": a})
                           for n, a in calls)


def _gemma4_value(v: Any) -> str:
    if isinstance(v, str):
        return '<|"|>' + v + '<|"|>'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):  # keys in the call's order (the template sorts them; the ground truth does not)
        return "{" + ",".join("%s:%s" % (k, _gemma4_value(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_gemma4_value(x) for x in v) + "]"
    return str(v)


def render_gemma4(prose: str, calls: Sequence[Call]) -> str:
    """Google Gemma 4: `<|tool_call>call:NAME{K:V,...}<tool_call|>` per call,
    values as its chat template's format_argument writes them (bare keys,
    strings between `<|"|>` tokens)."""
    return prose + "".join("<|tool_call>call:%s%s<tool_call|>" % (n, _gemma4_value(dict(a))) for n, a in calls)


def render_inkling(prose: str, calls: Sequence[Call]) -> str:
    """Inkling, as the vendor's TMLv0 renderer (tml-renderers) writes a turn:
    the prose as a text message, each call as its own message headed by the
    tool's name, `<|content_model_end_sampling|>` at the end."""
    out = "<|message_model|><|content_text|>%s<|end_message|>" % prose if prose else ""
    for n, a in calls:
        out += "<|message_model|>%s<|content_invoke_tool_json|>%s<|end_message|>" % (n, _dumps({"name": n, "args": a}))
    return out + "<|content_model_end_sampling|>"


def _lfm2_value(v: Any) -> str:
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r") + "'"
    if isinstance(v, (dict, list)):
        return _dumps(v)
    return str(v)


def render_lfm2(prose: str, calls: Sequence[Call]) -> str:
    """Liquid LFM2.5: `<|tool_call_start|>[NAME(K=V, ...), ...]<|tool_call_end|>`,
    values as its chat template's format_arg_value writes them ('...'
    strings with \\, \', \n, \r escaped; lists and dicts with tojson;
    the rest with `string`)."""
    if not calls:
        return prose
    body = ", ".join("%s(%s)" % (n, ", ".join("%s=%s" % (k, _lfm2_value(v)) for k, v in a.items()))
                     for n, a in calls)
    return prose + "<|tool_call_start|>[" + body + "]<|tool_call_end|>"


def render_k2_horizon(prose: str, calls: Sequence[Call]) -> str:
    """MBZUAI/LLM360 K2 Horizon, its chat template's xml dialect: the content,
    then `<ifm|tool_calls>` with `\n<ifm|tool_call>NAME\n<ifm|arg_key>K</ifm|arg_key>\n
    <ifm|arg_value>V</ifm|arg_value>\n...</ifm|tool_call>` per call, `\n</ifm|tool_calls>`."""
    if not calls:
        return prose
    return prose + "<ifm|tool_calls>" + "".join("\n<ifm|tool_call>%s\n%s</ifm|tool_call>" % (n, "".join(
        "<ifm|arg_key>%s</ifm|arg_key>\n<ifm|arg_value>%s</ifm|arg_value>\n" % (k, _glm_value(v))
        for k, v in a.items())) for n, a in calls) + "\n</ifm|tool_calls>"


def render_muse(prose: str, calls: Sequence[Call]) -> str:
    """Muse Glimmer, as its chat template writes a turn (the prompt ends at
    `<|start|>assistant`): the prose as a ` to=user` channel, each call as
    a tool turn `<|start|>assistant to=NAME<|message|><atem:function_calls>\n
    <atem:invoke name="NAME">\n<atem:parameter name="K">V</atem:parameter>\n...
    </atem:invoke>\n</atem:function_calls><|eom|>` (strings as is, other
    values as JSON); the model's first header has no `<|start|>assistant`."""
    out = " to=user<|message|>%s<|eom|>" % prose if prose else ""
    for n, a in calls:
        params = "".join('<atem:parameter name="%s">%s</atem:parameter>\n' % (k, _glm_value(v)) for k, v in a.items())
        head = "<|start|>assistant" if out else ""
        out += ('%s to=%s<|message|><atem:function_calls>\n<atem:invoke name="%s">\n%s</atem:invoke>\n'
                "</atem:function_calls><|eom|>" % (head, n, n, params))
    return out


RENDERERS: Dict[str, Renderer] = {
    "kimi_k2": render_kimi_k2,
    "qwen3_coder": render_qwen3_coder,
    "minimax_m2": render_minimax_m2,
    "deepseekv3": render_deepseekv3,
    "deepseekv31": render_deepseekv31,
    "deepseekv32": _dsml("function_calls", "invoke", "parameter"),
    "deepseekv4": _dsml("tool_calls", "invoke", "parameter"),
    "deepseekv41": _dsml(" calls", " invoke", " parameter"),
    "qwen25": render_qwen25,
    "hermes": render_hermes,
    "glm45": render_glm45,
    "glm47": render_glm47,
    "llama3": render_llama3,
    "mistral": render_mistral,
    # SGLang 0.5.23's PythonicDetector does not finish a 4 KB-argument case
    # (its backtracking regex): its side runs with a time budget (capped.py)
    "pythonic": render_pythonic,


    "gpt_oss": render_gpt_oss,
    "ling3": render_glm45,  # Ling-3 / Ring write GLM-4.5's spelling
    "iquest_q1": lambda prose, calls: render_glm47(prose, calls).replace("tool_call>", "iquest_tool_call>"),
    "poolside_v1": render_glm45,  # Poolside Laguna writes GLM-4.5's spelling
    "spark25": render_spark25,
    "hunyuan": render_hunyuan,
    "mimo": render_mimo,
    "dots": render_dots,
    "trinity": render_qwen25,  # Qwen2.5's template
    "gigachat35": _dsml("tool_calls", "invoke", "parameter", "\uff5cGCML\uff5c"),
    "minicpm5": render_minicpm5,
    "kimi_k3": render_kimi_k3,
    "minimax_m3": render_minimax_m3,
    "cohere_command4": render_cohere4,
    "apertus2509": render_apertus,
    "step3": render_step3,
    "interns1": render_interns1,
    "gigachat3": render_gigachat3,
    "gemma4": render_gemma4,
    "inkling": render_inkling,
    "lfm2": render_lfm2,
    "k2_horizon": render_k2_horizon,
    "muse": render_muse,
}


def render_mistral_array(prose: str, calls: Sequence[Call]) -> str:
    """Mistral's pre-v11 array (Mistral-7B-Instruct-v0.3's template): `[TOOL_CALLS] [`,
    each call's `{"name": ..., "arguments": ...}` with `, "id": "<9 alphanumerics>"`
    added, joined by `, `, then `]`. The template writes no content with calls."""
    return "[TOOL_CALLS] [" + ", ".join(_dumps({"name": n, "arguments": a})[:-1] + ', "id": "c%08d"}' % i
                                        for i, (n, a) in enumerate(calls)) + "]"


def render_jsonarray(prose: str, calls: Sequence[Call]) -> str:
    """tool_choice="required" / a named tool: what SGLang's JSON-schema
    constraint makes a model write, `[{"name": ..., "parameters": ...}, ...]`
    and nothing else."""
    return _dumps([{"name": n, "parameters": a} for n, a in calls])


def render_k2_horizon_json(prose: str, calls: Sequence[Call]) -> str:
    """K2 Horizon, its chat template's json dialect (tool_call_format="json"):
    the content, then `<ifm|tool_calls>` with `\n<ifm|tool_call>{"name": N,
    "arguments": ARGS}</ifm|tool_call>` per call, `\n</ifm|tool_calls>`."""
    if not calls:
        return prose
    return prose + "<ifm|tool_calls>" + "".join("\n<ifm|tool_call>%s</ifm|tool_call>" % _dumps(
        {"name": n, "arguments": a}) for n, a in calls) + "\n</ifm|tool_calls>"


# Rows beyond one per native parser name (sides.EXTRA_ROWS), keyed by row:
# neither array form carries prose, so their cases have none
ROW_RENDERERS: Dict[str, Renderer] = {
    "mistral_array": render_mistral_array,
    "jsonarray": render_jsonarray,
    "k2_horizon_json": render_k2_horizon_json,
}


# -- tools -----------------------------------------------------------------
def _tool(name: str, desc: str, props: Dict[str, Any], required: Sequence[str]) -> Dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": desc,
            "parameters": {"type": "object", "properties": props, "required": list(required)},
        },
    }


# Every parameter the corpus uses is declared with its type (formats such as
# GLM's type values by the schema).
TOOLS: List[Dict[str, Any]] = [
    _tool("get_weather", "Current weather and forecast for a place",
          {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
           "days": {"type": "integer"}, "include": {"type": "array", "items": {"type": "string"}},
           "options": {"type": "object"}, "note": {"type": "string"}},
          ["location"]),
    _tool("search_web", "Search the web",
          {"query": {"type": "string"}, "max_results": {"type": "integer"},
           "filters": {"type": "object"}}, ["query"]),
    _tool("write_file", "Write a file in the workspace",
          {"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]),
    _tool("run_command", "Run a shell command",
          {"command": {"type": "string"}, "timeout": {"type": "number"}, "env": {"type": "object"}},
          ["command"]),
]


# -- generated content -----------------------------------------------------
_CODE_LINES = [
    "def handle(request, *, retries=3):",
    '    """Serve one request; see docs/handlers.md for the \\"retry\\" rules."""',
    "    path = request.path.rstrip('/') or '/'",
    '    if path.startswith("C:\\\\Users"):  # Windows paths arrive escaped',
    "        raise ValueError(f\"bad path: {path!r}\")",
    "    for attempt in range(retries):",
    "        try:",
    "            return ROUTES[path](request)\t# dispatch",
    "        except KeyError:",
    "            log.warning(\"no route for %s (attempt %d)\", path, attempt)",
    "    return Response(status=404, body='{\"error\": \"not found\"}')",
    "",
    "# Grüße, naïve café — 東京 / Zürich ✓",
    "RATE = {'min': 0.5, 'max': 1e3, 'tags': [\"a\", \"b\"]}",
]

_PROSE_SENTENCES = [
    "The service keeps a small cache of recent responses so that repeated questions are answered quickly.",
    "When the cache is cold, each request is forwarded to the backend and the result is stored for a while.",
    "Entries expire after a few minutes, which keeps memory use modest even under heavy traffic.",
    "If the backend is slow, the caller sees a short delay, but correctness never depends on the cache.",
    "Operators can tune the expiry and the maximum size without restarting anything.",
    "Metrics report hit rates, evictions and the latency of misses, broken down by route.",
    "In short, the cache is an optimisation: turning it off changes speed, not answers.",
]


def code_text(n_chars: int, seed: int = 0) -> str:
    """Source-code-like text (quotes, backslashes, tabs, non-ASCII) of about
    n chars, without leading or trailing whitespace (which some formats trim)."""
    rnd = random.Random(seed)
    out: List[str] = []
    size = 0
    while size < n_chars:
        line = rnd.choice(_CODE_LINES) + "\n"
        out.append(line)
        size += len(line)
    return "".join(out)[:n_chars].strip()


def prose_text(n_bytes: int, seed: int = 0) -> str:
    """Plain English prose (no markup) of about n bytes."""
    rnd = random.Random(seed)
    out: List[str] = []
    size = 0
    while size < n_bytes:
        s = rnd.choice(_PROSE_SENTENCES)
        out.append(s)
        size += len(s) + 1
    return " ".join(out)[:n_bytes].rstrip()


def file_args(n_bytes: int, seed: int = 0) -> Dict[str, Any]:
    """write_file arguments whose JSON is about n_bytes (UTF-8) long."""
    path = "src/handlers/generated_%d.py" % n_bytes
    k = n_bytes
    for _ in range(20):
        args = {"path": path, "content": code_text(max(k, 0), seed)}
        size = len(_dumps(args).encode("utf-8"))
        if abs(size - n_bytes) <= 8 or k <= 0:
            break
        k -= max(1, (size - n_bytes) * 9 // 10) if size > n_bytes else -max(1, (n_bytes - size) * 9 // 10)
    return args


CHAT_CALL: Call = ("get_weather", {
    "location": "San Francisco, CA",
    "unit": "celsius",
    "days": 5,
    "include": ["hourly", "alerts", "air_quality", "sunrise_sunset"],
    "options": {"language": "en-US", "round": True, "precision": 1, "source": None},
    "note": "Plan for an outdoor event on Saturday afternoon; flag rain over 30% or wind above 25 km/h.",
})

BURST_CALLS: List[Call] = [
    ("search_web", {"query": "latest stable release of the Linux kernel", "max_results": 5,
                    "filters": {"site": ["kernel.org", "lwn.net"], "recency_days": 30}}),
    ("run_command", {"command": "grep -rn \"TODO\" src/ | sort -t: -k1,1 | head -n 50", "timeout": 12.5,
                     "env": {"LC_ALL": "C", "GREP_COLORS": "mt=01;31"}}),
    ("write_file", {"path": "notes/summary.md",
                    "content": "# Summary\n\n- Kernel: check the \"stable\" column.\n- TODOs: 50 listed, sorted by file."}),
]


# -- chunkers --------------------------------------------------------------
# Special tokens of each family. A tokenizer emits each as one token, so a
# server's stream never splits one across chunks; the chunkers keep them
# whole (a cut inside one moves to its end) unless split_markers is set.
_GLM_TOKENS = ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
_DS_TOKENS = (_DS_CALLS_BEGIN, _DS_CALLS_END, _DS_CALL_BEGIN, _DS_CALL_END, _DS_SEP)
SPECIAL_TOKENS: Dict[str, Tuple[str, ...]] = {
    "qwen3_coder": ("<tool_call>", "</tool_call>"),
    "minimax_m2": ("<minimax:tool_call>", "</minimax:tool_call>"),
    "qwen25": ("<tool_call>", "</tool_call>"),
    "hermes": ("<tool_call>", "</tool_call>"),
    "glm45": _GLM_TOKENS,
    "glm47": _GLM_TOKENS,
    "deepseekv3": _DS_TOKENS,
    "deepseekv31": _DS_TOKENS,
    "kimi_k2": _KIMI_SECTION + _KIMI_CALL,
    "llama3": ("<|python_tag|>",),
    "mistral": ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"),
    "mistral_array": ("[TOOL_CALLS]",),


    "gpt_oss": _HARMONY,
    "ling3": _GLM_TOKENS,
    "iquest_q1": ("<iquest_tool_call>", "</iquest_tool_call>") + _GLM_TOKENS[2:],
    "poolside_v1": _GLM_TOKENS,
    "spark25": _GLM_TOKENS,
    "hunyuan": ("<tool_calls>", "</tool_calls>", "<tool_sep>") + _GLM_TOKENS,
    "mimo": ("<tool_call>", "</tool_call>"),
    "dots": ("<dots_function_call>", "</dots_function_call>"),
    "trinity": ("<tool_call>", "</tool_call>", "<think>", "</think>"),
    "kimi_k3": ("<|open|>", "<|close|>", "<|sep|>"),
    "minimax_m3": (_M3_NS,),
    "cohere_command4": ("<|START_ACTION|>", "<|END_ACTION|>"),
    "apertus2509": ("<|tools_prefix|>", "<|tools_suffix|>"),
    "step3": tuple("<\uff5c%s\uff5c>" % t for t in ("tool_calls_begin", "tool_calls_end", "tool_call_begin",
                                                      "tool_call_end", "tool_sep")),
    "interns1": ("<|action_start|>", "<|plugin|>", "<|action_end|>"),
    "gigachat3": ("<|message_sep|>", "<|role_sep|>", "<|function_call|>"),
    "gemma4": ("<|tool_call>", "<tool_call|>", '<|"|>'),
    "inkling": ("<|message_model|>", "<|content_text|>", "<|content_invoke_tool_json|>", "<|end_message|>",
                "<|content_model_end_sampling|>"),
    "lfm2": ("<|tool_call_start|>", "<|tool_call_end|>"),
    "k2_horizon": ("<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>",
                   "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>"),
    "k2_horizon_json": ("<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>"),
    "muse": ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"),
}


def _token_spans(text: str, tokens: Sequence[str]) -> List[Tuple[int, int]]:
    spans = []
    for t in tokens:
        i = text.find(t)
        while i >= 0:
            spans.append((i, i + len(t)))
            i = text.find(t, i + len(t))
    return sorted(spans)


def _cut(text: str, sizes: Callable[[], int], tokens: Sequence[str]) -> List[str]:
    spans = _token_spans(text, tokens) if tokens else []
    out, i, k = [], 0, 0
    while i < len(text):
        j = min(len(text), i + sizes())
        while k < len(spans) and spans[k][1] <= j:
            k += 1
        if k < len(spans) and spans[k][0] < j < spans[k][1]:
            j = spans[k][1]  # never cut inside a special token
        out.append(text[i:j])
        i = j
    return out


def fixed_chunks(text: str, n: int, tokens: Sequence[str] = ()) -> List[str]:
    """n-character chunks; a chunk that would end inside one of `tokens`
    extends to the token's end."""
    return _cut(text, lambda: n, tokens)


def burst_chunks(text: str, seed: int = 0, lo: int = 20, hi: int = 200, tokens: Sequence[str] = ()) -> List[str]:
    rnd = random.Random(seed)
    return _cut(text, lambda: rnd.randint(lo, hi), tokens)


# -- scenarios -------------------------------------------------------------
class Scenario(NamedTuple):
    """What a case contains, independent of the format."""

    key: str
    label: str
    prose: str
    calls: List[Call]
    chunking: str  # "fixed" (uses the run's chunk size) or "bursts"
    arg_bytes: int  # bytes of argument JSON (sum over calls)


class Case(NamedTuple):
    """A scenario rendered for one format."""

    scenario: Scenario
    fmt: str
    text: str
    chunks: List[str]
    expected_calls: List[Tuple[str, str]]  # (name, arguments JSON)
    expected_text: str

    @property
    def key(self) -> str:
        return self.scenario.key

    @property
    def n_bytes(self) -> int:
        return len(self.text.encode("utf-8"))


def _arg_bytes(calls: Sequence[Call]) -> int:
    return sum(len(_dumps(a).encode("utf-8")) for _, a in calls)


# a reply with ten calls (an agent fanning out): the chat call and the three
# burst calls, over and over
CALLS10: List[Call] = [([CHAT_CALL] + BURST_CALLS)[i % 4] for i in range(10)]


def make_scenario(key: str) -> Scenario:
    """chat | prose2k | bursts3 | calls10 | args<N>k (one write_file call of N KiB arguments)."""
    if key == "chat":
        prose = "Sure, I'll look up the forecast for San Francisco so we can plan Saturday."
        calls = [CHAT_CALL]
        return Scenario(key, "chat response (~300 B args)", prose, calls, "fixed", _arg_bytes(calls))
    if key == "prose2k":
        return Scenario(key, "2 KB plain prose, no call", prose_text(2048), [], "fixed", 0)
    if key == "bursts3":
        prose = "I'll search, scan the TODOs and write a summary."
        return Scenario(key, "3 calls, 20-200-char bursts", prose, BURST_CALLS, "bursts", _arg_bytes(BURST_CALLS))
    if key == "calls10":
        prose = "Running the ten lookups in parallel."
        return Scenario(key, "10 calls (~1.9 KB args)", prose, CALLS10, "fixed", _arg_bytes(CALLS10))
    if key.startswith("args") and key.endswith("k") and key[4:-1].isdigit():
        kib = int(key[4:-1])
        calls = [("write_file", file_args(kib * 1024))]
        return Scenario(key, "one call, %d KB argument" % kib, "", calls, "fixed", _arg_bytes(calls))
    raise ValueError("unknown scenario %r" % key)


_M3_LITERALS = {"true": True, "false": False, "null": None}


def _m3_carried(v: Any, schema: Any) -> Any:
    types = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(v, dict):
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        return {k: _m3_carried(x, props.get(k)) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return [_m3_carried(x, items) for x in v]
    if types or isinstance(v, bool):
        return v
    # an untyped leaf is read back as text: only true/false/null are literals
    text = "" if v is None else str(v)
    return _M3_LITERALS.get(text.strip(), text)


def _m3_call(name: str, args: Dict[str, Any]) -> Dict[str, Any]:
    """What MiniMax-M3's template carries of a call's arguments: a None is
    left out, and inside an object the schema does not describe (the
    corpus's `options`, `filters`, `env`) a number comes back as its text."""
    schema = next((t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == name), {})
    return _m3_carried(args, schema)


# formats whose template cannot carry every value of the corpus: the
# arguments a reader gets back (name, arguments) -> arguments
CARRIED: Dict[str, Callable[[str, Dict[str, Any]], Dict[str, Any]]] = {"minimax_m3": _m3_call}


def render_case(scenario: Scenario, fmt: str, chunk: int = 4, renderer: Optional[Renderer] = None,
                split_markers: bool = False) -> Case:
    render = renderer or RENDERERS.get(fmt) or ROW_RENDERERS[fmt]
    if fmt in ROW_RENDERERS:
        scenario = scenario._replace(prose="")
    text = render(scenario.prose, scenario.calls)
    tokens = () if split_markers else SPECIAL_TOKENS.get(fmt, ())
    if scenario.chunking == "bursts":
        chunks = burst_chunks(text, tokens=tokens)
    else:
        chunks = fixed_chunks(text, chunk, tokens)
    carried = CARRIED.get(fmt)
    expected = [(n, _dumps(carried(n, a) if carried else a)) for n, a in scenario.calls]
    return Case(scenario, fmt, text, chunks, expected, scenario.prose)


def argument_end(case: Case) -> Optional[int]:
    """For a case with one large string argument (args<N>k): the character
    offset in case.text just past the argument's last character, i.e. where
    its closing tag (or the JSON's closing quote) begins. None otherwise."""
    if not case.key.startswith("args") or not case.scenario.calls:
        return None
    content = case.scenario.calls[-1][1].get("content")
    if not isinstance(content, str) or not content:
        return None
    ends = []
    for form in (content, json.dumps(content, ensure_ascii=False)[1:-1]):
        i = case.text.rfind(form[-32:])
        if i >= 0:
            ends.append(i + len(form[-32:]))
    return max(ends) if ends else None


def scenario_keys(mode: str) -> List[str]:
    """Scenarios of a run mode, small to large (SGLang's time on a large
    argument is estimated from the previous one)."""
    if mode == "quick":
        return ["chat", "prose2k", "bursts3", "args1k", "args4k"]
    if mode == "full":
        return ["chat", "prose2k", "bursts3", "args1k", "args4k", "args16k", "args64k", "args256k"]
    return ["chat", "prose2k", "bursts3", "args1k", "args4k", "args16k", "args64k"]
