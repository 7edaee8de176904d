"""SGLang's real serving path (OpenAIServingChat) on the CPU, for every
native parser in NATIVE_NAMES and the builtin parser it twins.

The model is replaced by canned output (tests/serving_stub.py); the SSE is
read with the official openai client's ChatCompletionChunk and assembled as
a client does. For each parser, chunking (token-like / multi-token bursts)
and streaming mode (cumulative text, SGLang's default, or
--incremental-streaming-output):

* the stream is well-formed for a client: one id and one name on the first
  delta of each call, indices 0..n-1, arguments that are valid JSON,
  finish_reason "tool_calls";
* the streamed message equals the non-streaming response of the same
  server (content and calls), and both equal the expected message.

A new format is covered by adding its canned output to CANNED (keyed by the
builtin name it twins in NATIVE_NAMES). Where SGLang's builtin parser gets
the message wrong, the case is marked xfail(strict=True) in BUILTIN_DIFFS
with the reason, so the table is exactly the set of observed differences.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("sglang")
pytest.importorskip("openai")

import serving_stub  # noqa: E402
from support import bursts, token_like  # noqa: E402

from sglang_toolparse.sglang_plugin import NATIVE_NAMES, register  # noqa: E402

register()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    },
]

PROSE = "Let me check the weather."
EXPECTED_CALLS = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("get_weather", {"city": "São Paulo ☀", "days": 1}),
]

_QWEN = (
    PROSE + "\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
    "</tool_call>\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "São Paulo ☀", "days": 1}}\n'
    "</tool_call>"
)
_DSV3 = (
    PROSE + "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
    '```json\n{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜>\n'
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
    '```json\n{"city": "São Paulo ☀", "days": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
_DSV31 = (
    PROSE + "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    '{"city": "Paris", "days": 3}<｜tool▁call▁end｜>'
    "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    '{"city": "São Paulo ☀", "days": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
_GLM45 = (
    PROSE + "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n"
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>São Paulo ☀</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"
)
_GLM47 = (
    PROSE + "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
    "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>São Paulo ☀</arg_value>"
    "<arg_key>days</arg_key><arg_value>1</arg_value></tool_call>"
)
_KIMI = (
    PROSE + "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Paris", "days": 3}<|tool_call_end|>'
    "<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>"
    '{"city": "São Paulo ☀", "days": 1}<|tool_call_end|><|tool_calls_section_end|>'
)


def _dsml(block: str, invoke: str, param: str) -> str:
    """DeepSeek V3.2 / V4 / V4.1 DSML markup (tag names differ by version)."""
    d = "｜DSML｜"

    def inv(city, days):
        return (
            '<%s%s name="get_weather">\n'
            '<%s%s name="city" string="true">%s</%s%s>\n'
            '<%s%s name="days" string="false">%d</%s%s>\n'
            "</%s%s>\n" % (d, invoke, d, param, city, d, param, d, param, days, d, param, d, invoke)
        )

    return PROSE + "\n\n<%s%s>\n%s%s</%s%s>" % (d, block, inv("Paris", 3), inv("São Paulo ☀", 1), d, block)


_QWEN3_CODER = (
    PROSE + "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo ☀\n</parameter>\n"
    "<parameter=days>\n1\n</parameter>\n</function>\n</tool_call>"
)
_MINIMAX_M2 = (
    PROSE + '\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
    '<parameter name="days">3</parameter>\n</invoke>\n<invoke name="get_weather">\n'
    '<parameter name="city">São Paulo ☀</parameter>\n<parameter name="days">1</parameter>\n</invoke>\n'
    "</minimax:tool_call>"
)

_LLAMA3 = (
    PROSE + "<|python_tag|>"
    '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}; '
    '{"name": "get_weather", "parameters": {"city": "São Paulo ☀", "days": 1}}'
)
_MISTRAL = (
    PROSE + '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}'
    '[TOOL_CALLS]get_weather[ARGS]{"city": "São Paulo ☀", "days": 1}'
)
_PYTHONIC = PROSE + ' [get_weather(city="Paris", days=3), get_weather(city=\'São Paulo ☀\', days=1)]'
_HARMONY_CALL = (
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>%s<|call|>"
)
# gpt-oss: analysis, a commentary preamble (the content), then the calls
_GPT_OSS = (
    "<|channel|>analysis<|message|>The user wants the weather in two cities.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>" + PROSE + "<|end|>"
    + _HARMONY_CALL % '{"city": "Paris", "days": 3}' + _HARMONY_CALL % '{"city": "São Paulo ☀", "days": 1}'
)
_HARMONY_SPECIAL = ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")


_KIMI_K3 = (
    "<|open|>response<|sep|>" + PROSE + "<|close|>response<|sep|><|open|>tools<|sep|>"
    '<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris'
    '<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>'
    '<|close|>call<|sep|><|open|>call tool="get_weather" index="2"<|sep|>'
    '<|open|>argument key="city" type="string"<|sep|>São Paulo ☀<|close|>argument<|sep|>'
    '<|open|>argument key="days" type="number"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>'
    "<|close|>tools<|sep|>"
)

# builtin parser name -> model output in that format (PROSE + EXPECTED_CALLS)
CANNED = {
    "qwen3_coder": _QWEN3_CODER,
    "step3p5": _QWEN3_CODER,
    "minimax-m2": _MINIMAX_M2,
    "qwen25": _QWEN,
    "qwen": _QWEN,
    "hermes": _QWEN,
    "deepseekv3": _DSV3,
    "deepseekv31": _DSV31,
    "glm": _GLM45,
    "glm45": _GLM45,
    "glm47": _GLM47,
    "deepseekv32": _dsml("function_calls", "invoke", "parameter"),
    "deepseekv4": _dsml("tool_calls", "invoke", "parameter"),
    "deepseekv41": _dsml(" calls", " invoke", " parameter"),
    "kimi_k2": _KIMI,
    "llama3": _LLAMA3,
    "mistral": _MISTRAL,
    "pythonic": _PYTHONIC,
    "gpt-oss": _GPT_OSS,
    "kimi_k3": _KIMI_K3,
}

# builtin names whose serving path cannot be driven with the stub model; their
# native names are served as the builtin (docs/SERVING.md, issue 10), so
# neither can be driven
_RECIPE = (
    "SGLang 0.5.23 serves %s (and its _native name, which SGLang sees as the builtin) through "
    "its DeepSeek-recipe chat encoding (chat_encoding.py: the parser name selects spec %r): "
    "prompts need the `deepseek-recipe` package and DeepSeek's tokenizer, and the recipe parses "
    "output tokens instead of the detector (tests/test_name_parity_processes.py)"
)
NOT_DRIVABLE = {
    "deepseekv4": _RECIPE % ("deepseekv4", "dsv4"),
    "deepseekv41": _RECIPE % ("deepseekv41", "dsv41"),
}

_QWEN_SPECIAL = ("<tool_call>", "</tool_call>")
_DS_SPECIAL = tuple(
    "<｜%s｜>" % s
    for s in ("tool▁calls▁begin", "tool▁calls▁end", "tool▁call▁begin", "tool▁call▁end", "tool▁sep")
)
_GLM_SPECIAL = _QWEN_SPECIAL + ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")

# builtin parser name -> markers that are single tokens in the model's
# vocabulary (added/special tokens), so a real stream never splits them
SPECIAL_TOKENS = {
    "qwen3_coder": _QWEN_SPECIAL,
    "step3p5": _QWEN_SPECIAL,
    "minimax-m2": ("<minimax:tool_call>", "</minimax:tool_call>"),
    "qwen25": _QWEN_SPECIAL,
    "qwen": _QWEN_SPECIAL,
    "hermes": _QWEN_SPECIAL,
    "deepseekv3": _DS_SPECIAL,
    "deepseekv31": _DS_SPECIAL,
    "glm": _GLM_SPECIAL,
    "glm45": _GLM_SPECIAL,
    "glm47": _GLM_SPECIAL,
    # the full-width DSML marker is kept whole (never split mid-character run)
    "deepseekv32": ("｜DSML｜",),
    "deepseekv4": ("｜DSML｜",),
    "deepseekv41": ("｜DSML｜",),
    "kimi_k2": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                "<|tool_call_end|>", "<|tool_call_argument_begin|>"),
    "llama3": ("<|python_tag|>",),
    "mistral": ("[TOOL_CALLS]", "[ARGS]"),
    "pythonic": (),
    "gpt-oss": _HARMONY_SPECIAL,
    "kimi_k3": ("<|open|>", "<|close|>", "<|sep|>"),
}


def _tokens(text: str, special) -> list:
    """Token-like pieces: special tokens whole, other text in 1-6 chars."""
    out, i, rest = [], 0, []
    while i < len(text):
        hit = next((s for s in special if text.startswith(s, i)), None)
        if hit is None:
            rest.append(text[i])
            i += 1
            continue
        if rest:
            out += token_like("".join(rest), seed=len(out))
            rest = []
        out.append(hit)
        i += len(hit)
    if rest:
        out += token_like("".join(rest), seed=len(out))
    return out


def _bursts(text: str, special) -> list:
    """Multi-token bursts (--stream-interval, speculative decoding): runs
    of 20-200 characters cut at token boundaries."""
    toks, out, cur = _tokens(text, special), [], ""
    cuts = iter(len(c) for c in bursts("x" * (len(text) + 200), seed=1))
    want = next(cuts)
    for t in toks:
        cur += t
        if len(cur) >= want:
            out.append(cur)
            cur, want = "", next(cuts)
    if cur:
        out.append(cur)
    return out


CHUNKERS = {"tokens": _tokens, "bursts": _bursts}

_BURST_CALLS = (
    "a burst holding the rest of one call and the whole next call: the first call "
    "is streamed with empty arguments and the second call is never streamed"
)
_LEAK = "template whitespace around the calls is streamed as content (%r) while the one-shot result strips it"
_PROSE_LOST = "prose in a burst that also starts a call is never streamed (content %r)"

# (assertion, builtin parser, chunker) -> why SGLang's builtin parser is wrong
# there (observed with SGLang 0.5.23, the same in cumulative and incremental
# streaming). strict=True: a case that starts passing fails the run, so the
# table stays the exact set of differences.
BUILTIN_DIFFS = {
    ("calls", "qwen25", "bursts"): _BURST_CALLS,
    ("calls", "qwen", "bursts"): _BURST_CALLS,
    ("calls", "hermes", "bursts"): _BURST_CALLS,
    ("calls", "deepseekv3", "bursts"): (
        "a burst holding two calls: call 0 gets call 1's arguments, call 1 is streamed as '{}'"
    ),
    ("calls", "deepseekv31", "bursts"): (
        "a burst holding two calls: one call whose name swallows "
        "'<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_weather', arguments '{}'"
    ),
    ("content", "qwen25", "tokens"): _LEAK % "\n",
    ("content", "qwen", "tokens"): _LEAK % "\n",
    ("content", "hermes", "tokens"): _LEAK % "\n\n",
    ("content", "deepseekv3", "tokens"): _LEAK % "\n",
    ("content", "glm", "tokens"): _LEAK % "\n\n",
    ("content", "glm45", "tokens"): _LEAK % "\n\n",
    ("content", "qwen25", "bursts"): _PROSE_LOST % "",
    ("content", "qwen", "bursts"): _PROSE_LOST % "",
    ("content", "hermes", "bursts"): _LEAK % "\n",
    ("content", "deepseekv3", "bursts"): _PROSE_LOST % "",
    ("content", "deepseekv31", "bursts"): _PROSE_LOST % "",
    ("content", "glm", "bursts"): _PROSE_LOST % "",
    ("content", "glm45", "bursts"): _PROSE_LOST % "",
    ("calls", "llama3", "bursts"): (
        "a burst holding a whole call: its name is streamed with empty arguments (not JSON) "
        "and the next call is never streamed (sglang#37634)"
    ),
    ("calls", "mistral", "bursts"): "a burst holding two compact calls: the second is never streamed",
    ("content", "llama3", "bursts"): _PROSE_LOST % "",
    ("content", "pythonic", "tokens"): _LEAK % " ",
    ("content", "pythonic", "bursts"): _LEAK % " ",
}
# issue 20's rows, written as their templates write them (tests/variant_table.py)
from variant_table import VARIANTS as _VARIANTS  # noqa: E402

for _v in _VARIANTS.values():
    CANNED[_v.sglang] = _v.render(PROSE, EXPECTED_CALLS)
SPECIAL_TOKENS.update({
    "nanbeige": _QWEN_SPECIAL, "mimo": _QWEN_SPECIAL, "trinity": _QWEN_SPECIAL + ("<think>", "</think>"),
    "dots": ("<dots_function_call>", "</dots_function_call>"), "gigachat35": ("\uff5cGCML\uff5c",),
})

_KEPT_NL = "the template's newline before the call block is kept as content, one-shot and streamed ('...weather.\\n')"
BUILTIN_DIFFS[("calls", "gpt-oss", "bursts")] = (
    "a burst holding the end of one call and the whole next call: the second call is never sent")
for _b in ("qwen3_coder", "step3p5", "minimax-m2"):
    for _c in ("tokens", "bursts"):
        BUILTIN_DIFFS[("content", _b, _c)] = _KEPT_NL
_KEPT_NLS = "the template's newline(s) before the call (block) are kept as content, one-shot and streamed"
for _b in ("nanbeige", "mimo", "dots", "minicpm5", "trinity", "gigachat35"):
    for _c in ("tokens", "bursts"):
        BUILTIN_DIFFS[("content", _b, _c)] = _KEPT_NLS
BUILTIN_DIFFS[("content", "trinity", "bursts")] = _PROSE_LOST % ""
SPECIAL_TOKENS["step3"] = tuple("<\uff5c%s\uff5c>" % t for t in (
    "tool_calls_begin", "tool_calls_end", "tool_call_begin", "tool_call_end", "tool_sep"))
for _c in ("tokens", "bursts"):
    BUILTIN_DIFFS[("content", "step3", _c)] = _KEPT_NLS
BUILTIN_DIFFS[("calls", "trinity", "bursts")] = _BURST_CALLS

# rows of the GLM engine (issue 20): canned output as each template writes it
CANNED["ling3"] = _GLM45
SPECIAL_TOKENS["ling3"] = _GLM_SPECIAL
BUILTIN_DIFFS[("content", "ling3", "tokens")] = _LEAK % "\n\n"
BUILTIN_DIFFS[("content", "ling3", "bursts")] = _PROSE_LOST % ""
CANNED["iquest_q1"] = _GLM47.replace("tool_call>", "iquest_tool_call>")
SPECIAL_TOKENS["iquest_q1"] = ("<iquest_tool_call>", "</iquest_tool_call>") + _GLM_SPECIAL[2:]
CANNED["poolside_v1"] = _GLM45
SPECIAL_TOKENS["poolside_v1"] = _GLM_SPECIAL
BUILTIN_DIFFS[("content", "poolside_v1", "tokens")] = _LEAK % "\n"
BUILTIN_DIFFS[("content", "poolside_v1", "bursts")] = _LEAK % "\n"
CANNED["spark25"] = _GLM45.replace("</arg_key>\n<arg_value>", "</arg_key><arg_value>")
SPECIAL_TOKENS["spark25"] = _GLM_SPECIAL
BUILTIN_DIFFS[("content", "spark25", "tokens")] = _LEAK % "\n\n"
BUILTIN_DIFFS[("content", "spark25", "bursts")] = _LEAK % "\n\n"
CANNED["hunyuan"] = (PROSE + "\n<tool_calls>\n" + _GLM45[len(PROSE) + 1:].replace("\n<arg_key>", "<tool_sep>\n<arg_key>", 1)
                     .replace("</tool_call>\n<tool_call>get_weather\n", "</tool_call>\n<tool_call>get_weather<tool_sep>\n")
                     .replace("</arg_key>\n<arg_value>", "</arg_key>\n<arg_value>") + "\n</tool_calls>")
SPECIAL_TOKENS["hunyuan"] = _GLM_SPECIAL + ("<tool_calls>", "</tool_calls>", "<tool_sep>")
BUILTIN_DIFFS[("content", "hunyuan", "tokens")] = _LEAK % "\n"
BUILTIN_DIFFS[("content", "hunyuan", "bursts")] = _LEAK % "\n"
# Cohere Command A (issue 23): the template's layout of an action block
CANNED["cohere_command4"] = (
    PROSE + '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": '
    '{"city": "Paris", "days": 3}},\n    {"tool_call_id": "1", "tool_name": "get_weather", "parameters": '
    '{"city": "São Paulo ☀", "days": 1}}\n]<|END_ACTION|>')
SPECIAL_TOKENS["cohere_command4"] = ("<|START_ACTION|>", "<|END_ACTION|>")
# Swiss AI Apertus (issue 23)
CANNED["apertus2509"] = (
    PROSE + '<|tools_prefix|>[{"get_weather": {"city": "Paris", "days": 3}}, '
    '{"get_weather": {"city": "São Paulo ☀", "days": 1}}]<|tools_suffix|>')
SPECIAL_TOKENS["apertus2509"] = ("<|tools_prefix|>", "<|tools_suffix|>")
for _c in ("tokens", "bursts"):
    BUILTIN_DIFFS[("calls", "cohere_command4", _c)] = (
        "the block's calls are streamed with one tool_index 0 (sglang#35564): the client gets one call whose id "
        "changes and whose arguments are both calls' joined")
    BUILTIN_DIFFS[("content", "cohere_command4", _c)] = (
        "the block's calls are streamed with one tool_index 0 (sglang#35564): the stream cannot be assembled")

# MiniMax-M3 (issue 23): as its chat template writes it (tests/format_table.py)
from format_table import M3_NS as _M3_NS  # noqa: E402
from format_table import minimax_m3_block, render_minimax_m3  # noqa: E402

CANNED["minimax-m3"] = PROSE + "\n" + minimax_m3_block([render_minimax_m3(n, a) for n, a in EXPECTED_CALLS])
SPECIAL_TOKENS["minimax-m3"] = (_M3_NS,)
for _c in ("tokens", "bursts"):
    BUILTIN_DIFFS[("content", "minimax-m3", _c)] = _KEPT_NLS


# issue 23: InternLM2 / Intern-S1, as SGLang's detokenizer writes the template's
# `<|action_start|><|plugin|>` (a space between the two special tokens)
CANNED["interns1"] = "".join(
    ["Let me check the weather."]
    + ['<|action_start|> <|plugin|>\n{"name": "get_weather", "parameters": %s}<|action_end|>'
       % json.dumps(a, ensure_ascii=False) for _, a in EXPECTED_CALLS])
SPECIAL_TOKENS["interns1"] = ("<|action_start|>", "<|plugin|>", "<|action_end|>")
BUILTIN_DIFFS[("calls", "interns1", "tokens")] = (
    "after the first call SGLang discards every chunk without the whole opening tag (here '<|action_start|>', ' ', "
    "'<|plugin|>' arrive as three tokens): the second call is never streamed")

# Gemma 4 (issue 22), as its chat template writes calls: no whitespace around them
_G4Q = '<|"|>'
CANNED["gemma4"] = PROSE + "".join(
    "<|tool_call>call:get_weather{city:%s%s%s,days:%d}<tool_call|>" % (_G4Q, c["city"], _G4Q, c["days"])
    for _, c in EXPECTED_CALLS)
SPECIAL_TOKENS["gemma4"] = ("<|tool_call>", "<tool_call|>", _G4Q)
for _c in CHUNKERS:
    for _k in ("calls", "content"):  # (a client rejects the stream: "call 0 changed its id")
        BUILTIN_DIFFS[(_k, "gemma4", _c)] = (
            "both calls are to get_weather: SGLang gives them the tool's list position as tool_index, so the "
            "stream carries one index for two calls, each with its own id")


# Inkling (issue 23), as the vendor's TMLv0 renderer writes a turn (a server
# whose model is not Inkling's architecture takes this text path)
CANNED["inkling"] = "<|message_model|><|content_text|>%s<|end_message|>%s<|content_model_end_sampling|>" % (
    PROSE, "".join('<|message_model|>%s<|content_invoke_tool_json|>%s<|end_message|>'
                   % (n, json.dumps({"name": n, "args": a}, ensure_ascii=False, separators=(",", ":")))
                   for n, a in EXPECTED_CALLS))
SPECIAL_TOKENS["inkling"] = ("<|message_model|>", "<|content_text|>", "<|content_invoke_tool_json|>",
                             "<|end_message|>", "<|content_model_end_sampling|>")

# Liquid LFM2 / LFM2.5 (issue 23), as its chat template's render_tool_calls
# writes them: one block, the calls as a Python list
from format_table import render_lfm2  # noqa: E402

CANNED["lfm2"] = PROSE + "<|tool_call_start|>[" + ", ".join(
    render_lfm2(n, json.dumps(a)) for n, a in EXPECTED_CALLS) + "]<|tool_call_end|>"
SPECIAL_TOKENS["lfm2"] = ("<|tool_call_start|>", "<|tool_call_end|>")

# K2 Horizon (issue 23), its template's xml dialect inside the group it writes
from format_table import TABLE as _TABLE  # noqa: E402
from format_table import render_k2_horizon  # noqa: E402

CANNED["k2_horizon"] = PROSE + _TABLE["k2_horizon"].block(
    [render_k2_horizon(n, json.dumps(a)) for n, a in EXPECTED_CALLS])
SPECIAL_TOKENS["k2_horizon"] = ("<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>",
                                "<ifm|arg_key>", "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>")

# Muse Glimmer (issue 23), as its chat template writes a turn: the prose as a
# `to=user` channel (the model's first header), each call its own tool turn
from format_table import render_muse  # noqa: E402

CANNED["muse"] = " to=user<|message|>" + PROSE + "<|eom|>" + "".join(
    render_muse(n, json.dumps(a)) for n, a in EXPECTED_CALLS)
SPECIAL_TOKENS["muse"] = ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>")


def _cases(kind):
    for native, (_cls, builtin) in sorted(NATIVE_NAMES.items()):
        for which in ("native", "builtin"):
            parser = native if which == "native" else builtin
            if parser is None:
                continue
            for chunker in CHUNKERS:
                for incremental in (False, True):
                    marks = []
                    if builtin in NOT_DRIVABLE:
                        marks.append(pytest.mark.skip(reason=NOT_DRIVABLE[builtin]))
                    elif builtin not in CANNED:
                        marks.append(pytest.mark.skip(reason="no canned %r output in CANNED yet" % builtin))
                    elif which == "builtin" and (kind, builtin, chunker) in BUILTIN_DIFFS:
                        marks.append(pytest.mark.xfail(strict=True, reason=BUILTIN_DIFFS[(kind, builtin, chunker)]))
                    yield pytest.param(
                        parser,
                        builtin,
                        chunker,
                        incremental,
                        marks=marks,
                        id="%s-%s-%s" % (parser, chunker, "incr" if incremental else "cumul"),
                    )


def _message_of(resp):
    choice = resp.choices[0]
    msg = choice.message
    calls = [
        (i, tc.function.name, tc.function.arguments, tc.id) for i, tc in enumerate(msg.tool_calls or [])
    ]
    return msg.content or "", calls, choice.finish_reason


_RUNS: dict = {}


def _run(parser, builtin, chunker, incremental):
    """(one-shot message, streamed (content, calls, finish)) for a case,
    computed once for both tests."""
    key = (parser, builtin, chunker, incremental)
    if key not in _RUNS:
        text = CANNED[builtin]
        chunks = CHUNKERS[chunker](text, SPECIAL_TOKENS.get(builtin, ()))
        assert "".join(chunks) == text
        sa = serving_stub.server_args(parser, incremental=incremental)
        one = _message_of(serving_stub.serve(sa, [text], TOOLS, stream=False))
        body = serving_stub.serve(sa, chunks, TOOLS, stream=True)
        content, calls, finish, _ = serving_stub.assemble_sse(body)
        _RUNS[key] = (one, (content, calls, finish))
    return _RUNS[key]


@pytest.mark.parametrize("parser,builtin,chunker,incremental", list(_cases("calls")))
def test_streamed_calls(parser, builtin, chunker, incremental):
    (one_content, one_calls, one_finish), (content, calls, finish) = _run(parser, builtin, chunker, incremental)

    # the one-shot response is the expected message
    assert one_finish == "tool_calls"
    for i, name, args, call_id in one_calls:
        assert call_id, "non-streaming call %d has no id" % i
    assert [(name, json.loads(args)) for _, name, args, _ in one_calls] == EXPECTED_CALLS

    # a client can use the stream as it is (ids and names checked while
    # assembling): indices 0..n-1, unique ids, declared names, JSON arguments
    assert [c.index for c in calls] == list(range(len(calls)))
    assert len({c.id for c in calls}) == len(calls), "tool-call ids are not unique"
    for c in calls:
        assert c.name in ("get_weather", "search"), c.name
        json.loads(c.arguments)
    assert finish == "tool_calls"

    # and it carries exactly the one-shot calls
    assert [(c.name, c.arguments) for c in calls] == [(name, args) for _, name, args, _ in one_calls]


@pytest.mark.parametrize("parser,builtin,chunker,incremental", list(_cases("content")))
def test_streamed_content(parser, builtin, chunker, incremental):
    (one_content, _calls, _f), (content, _c, _f2) = _run(parser, builtin, chunker, incremental)
    assert one_content == PROSE
    assert content == one_content


@pytest.mark.parametrize(
    "native", sorted(n for n, (_c, b) in NATIVE_NAMES.items() if b in CANNED and b not in NOT_DRIVABLE), ids=str
)
def test_native_one_shot_equals_standalone_api(native):
    """The serving path returns exactly what the standalone API parses
    (arguments byte for byte, prose with SEMANTICS.md's whitespace rule)."""
    from sglang_toolparse import parse
    from sglang_toolparse import sglang_adapter

    builtin = NATIVE_NAMES[native][1]
    fmt = getattr(sglang_adapter, NATIVE_NAMES[native][0])._tp_format
    ref = parse(fmt, CANNED[builtin], TOOLS)
    sa = serving_stub.server_args(native)
    content, calls, _ = _message_of(serving_stub.serve(sa, [CANNED[builtin]], TOOLS, stream=False))
    assert content == ref.text
    assert [(n, a) for _, n, a, _ in calls] == [(c.name, c.arguments) for c in ref.calls]


def test_client_checks_sglang_stream_with_call_assembler():
    """A call whose JSON breaks after it started streaming has already been
    announced (a stream cannot take it back): the client gets its id, name
    and invalid arguments. CallAssembler, fed the SSE deltas, flags exactly
    that call before anything is executed."""
    from sglang_toolparse.assembler import CallAssembler

    native = next(n for n, (_c, b) in sorted(NATIVE_NAMES.items()) if b == "qwen25")
    text = (
        "On it.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>\n<tool_call>\n'
        '{"name": "get_weather", "arguments": {"city": "Oslo",, "days": 1}}\n</tool_call>\n<tool_call>\n'
        '{"name": "get_weather", "arguments": {"city": "Rome", "days": "three"}}\n</tool_call>'
    )
    sa = serving_stub.server_args(native)
    body = serving_stub.serve(sa, _tokens(text, _QWEN_SPECIAL), TOOLS, stream=True)
    _content, _calls, _finish, chunks = serving_stub.assemble_sse(body)
    asm = CallAssembler(TOOLS)
    for chunk in chunks:
        for choice in chunk.choices:
            for tc in choice.delta.tool_calls or []:
                f = tc.function
                asm.add_delta(tc.index, tc.id, f and f.name, f and f.arguments)
    calls = asm.close()
    assert [c.ok for c in calls] == [True, False, False]
    assert calls[0].value == {"city": "Paris", "days": 2}
    assert [(e.index, e.kind) for e in calls[1].errors] == [(1, "invalid_json")]
    assert [(e.index, e.kind, e.path) for e in calls[2].errors] == [(2, "schema", "$.days")]


@pytest.mark.parametrize("parser", ["kimi_k2", "kimi_k2_native"])
@pytest.mark.parametrize("incremental", [False, True], ids=["cumul", "incr"])
def test_kimi_call_ids_through_serving_layer(monkeypatch, incremental, parser):
    """Kimi's multi-turn template needs call ids `functions.NAME:N`, N
    counting every call of the conversation. SGLang's serving layer builds
    them for tool_call_parser "kimi_k2" from the detector's (name,
    tool_index): with SGLANG_TOOLPARSE_REPLACE=1 the native detector serves
    that name, and so does kimi_k2_native (which the serving layer sees as
    kimi_k2: issue 10's name parity); the ids are the ones SGLang's own detector gets, streamed
    and one-shot, offset by the calls already in the history. Special
    tokens are split across chunks here, which SGLang's own detector does
    not survive."""
    from sglang.srt.function_call import function_call_parser as fcp

    from sglang_toolparse import sglang_adapter, sglang_plugin

    used = []

    class Spy(sglang_adapter.KimiK2NativeDetector):
        def parse_streaming_increment(self, new_text, tools):
            used.append("stream")
            return super().parse_streaming_increment(new_text, tools)

        def detect_and_parse(self, text, tools):
            used.append("one-shot")
            return super().detect_and_parse(text, tools)

    enum = fcp.FunctionCallParser.ToolCallParserEnum
    monkeypatch.setenv("SGLANG_TOOLPARSE_REPLACE", "1")
    saved = dict(enum)
    try:
        # the server's arguments first: building them records the server's
        # choice of parser, which reinstalls the detector classes
        sa = serving_stub.server_args(parser, incremental=incremental)
        assert sa.tool_call_parser == "kimi_k2"  # what the serving layer compares
        sglang_plugin._install_detectors(fcp)
        assert issubclass(enum["kimi_k2"], sglang_adapter.KimiK2NativeDetector)
        enum["kimi_k2"] = Spy
        history = [
            {"role": "user", "content": "Weather in Rome and Oslo?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "functions.get_weather:%d" % i, "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "%s"}' % c}}
                for i, c in enumerate(["Rome", "Oslo"])]},
            {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "sunny"},
            {"role": "tool", "tool_call_id": "functions.get_weather:1", "content": "rain"},
            {"role": "user", "content": "And Paris and São Paulo?"},
        ]
        text = _KIMI.replace(":0<|", ":2<|").replace(":1<|", ":3<|")
        want = [("functions.get_weather:2", "get_weather"), ("functions.get_weather:3", "get_weather")]
        for messages, ids in ((None, ["functions.get_weather:0", "functions.get_weather:1"]),
                              (history, [i for i, _ in want])):
            one = serving_stub.serve(sa, [text], TOOLS, stream=False, messages=messages)
            content, calls, finish = _message_of(one)
            assert (content, finish) == (PROSE, "tool_calls")
            assert [c[3] for c in calls] == ids
            assert [(n, json.loads(a)) for _, n, a, _ in calls] == EXPECTED_CALLS
            body = serving_stub.serve(sa, token_like(text, 3), TOOLS, stream=True, messages=messages)
            content, scalls, finish, _ = serving_stub.assemble_sse(body)
            assert (content, finish) == (PROSE, "tool_calls")
            assert [c.id for c in scalls] == ids
            assert [(c.name, c.arguments) for c in scalls] == [(n, a) for _, n, a, _ in calls]
        assert "stream" in used and "one-shot" in used
    finally:
        enum.clear()
        enum.update(saved)

