"""The SGLang names that are rows of an engine we have (issue 20): for each,
how its chat template writes a call (the contract), the SGLang name, the name
the standalone API takes, and what SGLang's detector gets wrong on
template-shaped output (the strict xfails of tests/test_sglang_parity_variants.py).

A row: Variant(sglang, fmt, render) where render(prose, calls) -> the
assistant text the template writes, calls = [(name, arguments dict)]."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, NamedTuple, Sequence, Tuple

Call = Tuple[str, Dict[str, Any]]


def tojson(v: Any) -> str:
    """Jinja's `tojson` as the templates use it (HF's: ensure_ascii=False)."""
    return json.dumps(v, ensure_ascii=False)


def render_nanbeige(prose: str, calls: Sequence[Call]) -> str:
    """Nanbeige 4.x (tool_call_format 'xml'): Qwen3-Coder's layout; strings
    raw, every other value `tojson`; '\\n\\n' before the first call when there
    is prose, '\\n' between calls."""
    out = [prose]
    for i, (name, args) in enumerate(calls):
        out.append(("\n\n" if prose.strip() else "") if i == 0 else "\n")
        out.append("<tool_call>\n<function=%s>\n" % name)
        for k, v in args.items():
            out.append("<parameter=%s>\n%s\n</parameter>\n" % (k, v if isinstance(v, str) else tojson(v)))
        out.append("</function>\n</tool_call>")
    return "".join(out)


def render_mimo(prose: str, calls: Sequence[Call]) -> str:
    """Xiaomi MiMo: Qwen3-Coder's tags with the value written as is between
    them (no template newline), non-strings as JSON; one call per block."""
    blocks = ["<tool_call>\n<function=%s>\n%s</function>\n</tool_call>" % (name, "".join(
        "<parameter=%s>%s</parameter>\n" % (k, v if isinstance(v, str) else tojson(v)) for k, v in args.items()))
        for name, args in calls]
    return (prose + "\n" if prose else "") + "\n".join(blocks)


def render_dots(prose: str, calls: Sequence[Call]) -> str:
    """rednote dots.llm: MiniMax's shape in a <dots_function_call> block (the
    layout of DotsToolDetector's docstring), non-strings as JSON."""
    if not calls:
        return prose
    invokes = "".join('<invoke name="%s">\n%s</invoke>\n' % (name, "".join(
        '<parameter name="%s">%s</parameter>\n' % (k, v if isinstance(v, str) else tojson(v))
        for k, v in args.items())) for name, args in calls)
    return (prose + "\n" if prose else "") + "<dots_function_call>\n" + invokes + "</dots_function_call>"


def render_trinity(prose: str, calls: Sequence[Call]) -> str:
    """Arcee Trinity: Qwen2.5's template (SGLang's TrinityDetector names it)."""
    return prose + "".join('\n<tool_call>\n{"name": "%s", "arguments": %s}\n</tool_call>' % (n, tojson(a))
                           for n, a in calls)


GCML = "\uff5cGCML\uff5c"


def render_gigachat35(prose: str, calls: Sequence[Call]) -> str:
    """GigaChat 3.5 (GigaChat3.5.jinja): the GCML block after the text, joined
    by '\\n\\n'; a string value raw with string="true", any other value
    tojson with string="false"; invokes and parameters joined by '\\n'."""
    if not calls:
        return prose
    invokes = []
    for name, args in calls:
        params = ['<%sparameter name="%s" string="%s">%s</%sparameter>' % (
            GCML, k, "true" if isinstance(v, str) else "false", v if isinstance(v, str) else tojson(v), GCML)
            for k, v in args.items()]
        invokes.append('<%sinvoke name="%s">\n' % (GCML, name) + ("\n".join(params) + "\n" if params else "")
                       + "</%sinvoke>" % GCML)
    block = "<%stool_calls>\n" % GCML + "\n".join(invokes) + "\n</%stool_calls>" % GCML
    return prose + "\n\n" + block if prose else block


def render_minicpm5(prose: str, calls: Sequence[Call]) -> str:
    """OpenBMB MiniCPM (MiniCPM5Detector's docstring): one element per call, no
    block; non-strings as JSON."""
    return (prose + "\n" if prose and calls else prose) + "\n".join(
        '<function name="%s">%s</function>' % (name, "".join(
            '<param name="%s">%s</param>' % (k, v if isinstance(v, str) else tojson(v)) for k, v in args.items()))
        for name, args in calls)


STEP_BEGIN, STEP_END = "<\uff5ctool_calls_begin\uff5c>", "<\uff5ctool_calls_end\uff5c>"
STEP_CALL, STEP_CALL_END, STEP_SEP = "<\uff5ctool_call_begin\uff5c>", "<\uff5ctool_call_end\uff5c>", "<\uff5ctool_sep\uff5c>"


def render_step3(prose: str, calls: Sequence[Call]) -> str:
    """StepFun Step-3 (the layout its chat template's tool prompt spells out,
    in the tokenizer's fullwidth-bar tokens as Step3Detector reads them): a
    block, one `<｜tool_call_begin｜>\\nfunction<｜tool_sep｜><steptml:invoke ...>`
    per call, '\\n' between; strings raw, other values as JSON."""
    if not calls:
        return prose
    body = "".join("%s\nfunction%s<steptml:invoke name=\"%s\">%s</steptml:invoke>%s\n" % (
        STEP_CALL, STEP_SEP, name, "".join('<steptml:parameter name="%s">%s</steptml:parameter>'
                                           % (k, v if isinstance(v, str) else tojson(v)) for k, v in args.items()),
        STEP_CALL_END) for name, args in calls)
    return (prose + "\n" if prose else "") + STEP_BEGIN + "\n" + body + STEP_END


def _step3_call(name: str, params: str) -> str:
    """One call in a block; `params` continues `<steptml:parameter name="` (empty: none)."""
    body = '<steptml:parameter name="' + params.lstrip() if params else ""
    return (STEP_BEGIN + STEP_CALL + "function" + STEP_SEP + '<steptml:invoke name="%s">%s</steptml:invoke>' % (name, body)
            + STEP_CALL_END + STEP_END)


class Variant(NamedTuple):
    sglang: str  # SGLang's --tool-call-parser name (ours: sglang + "_native")
    fmt: str  # the name StreamParser takes (a core format or an alias)
    render: Callable[[str, Sequence[Call]], str]
    # fnmatch pattern of "case:mode:chunker" (mode one_shot or stream) -> why
    # SGLang's detector fails there
    sglang_wrong: Dict[str, str] = {}
    # this row's own template-shaped cases (added to CASES for it)
    cases: Dict[str, Tuple[str, List[Call]]] = {}
    # malformed or edge input: name -> (text, expected prose, expected [(name, arguments JSON)])
    golden: Dict[str, Tuple[str, str, List[Tuple[str, str]]]] = {}


def cases_of(variant: str) -> Dict[str, Tuple[str, List[Call]]]:
    return dict(CASES, **VARIANTS[variant].cases)


_QWEN25_PROSE = ("Qwen25Detector (TrinityDetector's base) loses the prose that shares a chunk with the "
                 "'\\n<tool_call>' that follows it")

_STEP3_EMPTY = ("Step3Detector loses a call without parameters: one-shot its invoke regex needs a body "
                "(`(.+?)`), streamed it is sent with no arguments at all")
_STEP3_BURST = ("Step3Detector returns at the chunk holding <\uff5ctool_calls_begin\uff5c> without parsing the "
                "rest of it: calls that arrive in that chunk are never sent (a burst gives 0 calls)")

VARIANTS: Dict[str, Variant] = {
    "nanbeige": Variant("nanbeige", "nanbeige", render_nanbeige, {
        "long_string:*": "Qwen3CoderDetector holds a string parameter until </parameter> (sglang#27005)",
    }),
    "mimo": Variant("mimo", "mimo", render_mimo, {
        "*:stream:tokens": "MiMoDetector looks for a whole <tool_call> in its buffer and otherwise flushes the "
                           "buffer as text: a <tool_call> split across chunks is shown as text and the call is lost",
        "code_string:*": "MiMoDetector html.unescape()s every value: the model's `&amp;` becomes `&` "
                         "(the template writes values raw)",
        "float_integral:*": "MiMoDetector turns a number parameter's 2.0 into 2 (the template wrote a float)",
        "long_string:*": "MiMoDetector holds a call until </tool_call>: a long argument arrives in one piece at the end",
        "optional_integer:*": "MiMoDetector reads only a parameter schema's own `type`: an anyOf "
                              "[integer, null] parameter stays the string \"7\"",
    }, cases={
        "float_integral": ("", [("get_weather", {"ratio": 2.0})]),
        "optional_integer": ("", [("get_weather", {"count": 7})]),
    }, golden={
        # a value ends at </parameter> only: another opening tag inside it is content
        "parameter_tag_in_value": ("<tool_call>\n<function=write_file>\n<parameter=content>a<parameter=b>c"
                                   "</parameter>\n</function>\n</tool_call>", "",
                                   [("write_file", '{"content": "a<parameter=b>c"}')]),
        "value_newlines_kept": ("<tool_call>\n<function=write_file>\n<parameter=content>\nx\n</parameter>\n"
                                "</function>\n</tool_call>", "", [("write_file", '{"content": "\\nx\\n"}')]),
        "prose_after_call_kept": ("<tool_call>\n<function=noop>\n</function>\n</tool_call>\nDone.", "\nDone.",
                                  [("noop", "{}")]),
        "no_function_is_text": ("a <tool_call>{\"name\": \"noop\"}</tool_call>", 'a <tool_call>{"name": "noop"}</tool_call>', []),
    }),
    "dots": Variant("dots", "dots", render_dots, {
        "long_string:*": "DotsToolDetector holds a block until </dots_function_call>: a long argument arrives in one "
                         "piece at the end",
    }, cases={
        "float_integral": ("", [("get_weather", {"ratio": 2})]),
        "optional_integer": ("", [("get_weather", {"count": 7})]),
    }, golden={
        # DotsToolDetector strips a value before typing it
        "values_stripped": ('<dots_function_call>\n<invoke name="get_weather">\n<parameter name="city">\n Paris \n'
                            '</parameter>\n<parameter name="days"> 3\n</parameter>\n<parameter name="hot">1</parameter>'
                            '\n<parameter name="opts"> null </parameter>\n</invoke>\n</dots_function_call>', "",
                            [("get_weather", '{"city": "Paris", "days": 3, "hot": true, "opts": null}')]),
        "inner_blanks_kept": ('<dots_function_call><invoke name="write_file"><parameter name="content">  a \n\n b  '
                              '</parameter></invoke></dots_function_call>', "",
                              [("write_file", '{"content": "a \\n\\n b"}')]),
        "null_then_text_is_a_string": ('<dots_function_call><invoke name="write_file"><parameter name="content">null  x'
                                       '</parameter></invoke></dots_function_call>', "",
                                       [("write_file", '{"content": "null  x"}')]),
        "two_invokes_prose_after": ('<dots_function_call>\n<invoke name="noop">\n</invoke>\n<invoke name="noop">\n'
                                    '</invoke>\n</dots_function_call>\nDone.', "\nDone.", [("noop", "{}"), ("noop", "{}")]),
        "json_body_is_text": ('<dots_function_call>{"name": "noop", "arguments": {}}</dots_function_call>',
                              '<dots_function_call>{"name": "noop", "arguments": {}}</dots_function_call>', []),
    }),
    "trinity": Variant("trinity", "trinity", render_trinity, {
        "single_with_prose:stream:*": _QWEN25_PROSE,
        "two_calls:stream:*": _QWEN25_PROSE,
        "unicode:stream:*": _QWEN25_PROSE,
        "zero_args:stream:bursts": "Qwen25Detector (TrinityDetector's base) streams no arguments for a call whose "
                                   "whole JSON arrives in one chunk with an empty arguments object",
    }, golden={
        # every <think> and </think> is removed before the parse (TrinityDetector)
        "think_tags_removed": ("<think>plan</think>Let me check.\n<tool_call>\n{\"name\": \"noop\", "
                               "\"arguments\": {}}\n</tool_call>", "planLet me check.", [("noop", "{}")]),
        "call_inside_think": ("<think>\n<tool_call>\n{\"name\": \"noop\", \"arguments\": {}}\n</tool_call>\n</think>ok",
                              "\nok", [("noop", "{}")]),
        "tag_inside_marker_and_json": ('<tool_<think>call>{"name": "write_file", "arguments": {"content": '
                                       '"a</think>b"}}</tool_call>', "", [("write_file", '{"content": "ab"}')]),
        "partial_tag_at_end_is_text": ("x <thin", "x <thin", []),
        "other_tags_kept": ("<thinking>a</thinking> <think >", "<thinking>a</thinking> <think >", []),
    }),
    "minicpm5": Variant("minicpm5", "minicpm5", render_minicpm5, {
        "long_string:*": "MiniCPM5Detector holds a call until </function>: a long argument arrives in one piece at the end",
        "undeclared_key:*": "MiniCPM5Detector turns a call with a key its tool does not declare into text (the call "
                            "and its markup are shown to the user)",
    }, cases={
        "undeclared_key": ("", [("get_weather", {"city": "Oslo", "extra": [1]})]),
    }, golden={
        "cdata_unwrapped": ('<function name="write_file"><param name="content"><![CDATA[\n a\n</b> ]] \n]]>  </param>'
                            '</function>', "", [("write_file", '{"content": "a\\n</b> ]]"}')]),
        "cdata_prefix_only_is_text": ('<function name="write_file"><param name="content"><![CDA</param></function>',
                                      "", [("write_file", '{"content": "<![CDA"}')]),
        "values_stripped_and_typed": ('<function name="get_weather"><param name="city"> Oslo </param>'
                                      '<param name="days"> 3 </param><param name="x">[1, 2]</param></function>', "",
                                      [("get_weather", '{"city": "Oslo", "days": 3, "x": [1, 2]}')]),
        "literal_and_text": ('<function name="get_weather"><param name="tags">(1, 2)</param><param name="opts">'
                             'not json</param></function>', "",
                             [("get_weather", '{"tags": [1, 2], "opts": "not json"}')]),
        "prose_between_and_after": ('A <function name="noop"></function> B <function name="noop"></function> C',
                                    "A B C", [("noop", "{}"), ("noop", "{}")]),
        "other_function_tag_is_text": ("<function=f> <function>", "<function=f> <function>", []),
    }),
    "gigachat35": Variant("gigachat35", "gigachat35", render_gigachat35, {
        "long_string:*": "GigaChat35Detector emits a call only when its </\uff5cGCML\uff5cinvoke> has arrived (re-running its "
                         "regex over the whole region every chunk): a long argument arrives in one piece at the end",
    }, golden={
        "prose_after_block_kept": ("<%stool_calls>\n<%sinvoke name=\"noop\">\n</%sinvoke>\n</%stool_calls>\nDone."
                                   % (GCML, GCML, GCML, GCML), "\nDone.", [("noop", "{}")]),
        "non_json_false_value_is_text": ('<%stool_calls><%sinvoke name="get_weather"><%sparameter name="days" '
                                         'string="false">three</%sparameter></%sinvoke></%stool_calls>'
                                         % ((GCML,) * 6), "", [("get_weather", '{"days": "three"}')]),
        "dsml_spelling_is_text": ("<\uff5cDSML\uff5cinvoke name=\"noop\"/>", "<\uff5cDSML\uff5cinvoke name=\"noop\"/>", []),
    }),
    "step3": Variant("step3", "step3", render_step3, {
        "code_string:*": "Step3Detector reads a value as `[^<]*`: a value with a '<' in it is dropped from the "
                         "arguments",
        "zero_args:*": _STEP3_EMPTY, "two_calls:*": _STEP3_EMPTY,
        "long_string:*": "Step3Detector sends a parameter only when its closing tag has arrived (re-running its "
                         "regexes and json.dumps over the whole call every chunk)",
        "optional_integer:*": "Step3Detector reads only a parameter schema's own `type`: an anyOf "
                              "[integer, null] parameter stays the string \"7\"",
        "float_integral:stream:bursts": _STEP3_BURST, "unicode:stream:bursts": _STEP3_BURST,
    }, cases={
        "float_integral": ("", [("get_weather", {"ratio": 2.0})]),
        "optional_integer": ("", [("get_weather", {"count": 7})]),
    }, golden={
        # Step3Detector strips a value, then types it by the schema's `type`
        "values_stripped_and_typed": (_step3_call("get_weather", ' city">\n Paris \n</steptml:parameter>'
                                                  '<steptml:parameter name="days"> 3 </steptml:parameter>'
                                                  '<steptml:parameter name="opts">{\'a\': (1, None)}</steptml:parameter>'
                                                  '<steptml:parameter name="ratio">about 2</steptml:parameter>'), "",
                                      [("get_weather", '{"city": "Paris", "days": 3, "opts": {"a": [1, null]}, '
                                                       '"ratio": "about 2"}')]),
        "null_word_string_or_null": (_step3_call("get_weather", ' city">null</steptml:parameter><steptml:parameter '
                                                                'name="days">null</steptml:parameter>'), "",
                                     [("get_weather", '{"city": "null", "days": null}')]),
        "markup_in_value_kept": (_step3_call("write_file", ' content"><steptml:parameter name="x">a</b>'
                                                          '</steptml:parameter>'), "",
                                 [("write_file", '{"content": "<steptml:parameter name=\\"x\\">a</b>"}')]),
        "not_a_function_is_dropped": (STEP_BEGIN + STEP_CALL + "code" + STEP_SEP + '<steptml:invoke name="noop">'
                                      "</steptml:invoke>" + STEP_CALL_END + "\n" + STEP_CALL + " function " + STEP_SEP
                                      + '\n<steptml:invoke name="noop"></steptml:invoke>' + STEP_CALL_END + STEP_END,
                                      "", [("noop", "{}")]),
        "prose_after_block_kept": (_step3_call("noop", "") + "\nDone.", "\nDone.", [("noop", "{}")]),
        "no_call_is_text": (STEP_BEGIN + "hello " + STEP_CALL, STEP_BEGIN + "hello " + STEP_CALL, []),
    }),
}


SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "number"},
        "hot": {"type": "boolean"},
        "opts": {"type": "object"},
        "tags": {"type": "array"},
        "unit": {"enum": ["c", "f"]},
        "content": {"type": "string"},
        "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
}
TOOL_NAMES = ("get_weather", "noop", "write_file")
TOOLS = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in TOOL_NAMES]

TYPED = {"city": "123", "days": 3, "ratio": 0.5, "hot": True, "opts": {"a": [1, None]}, "tags": ["x"], "unit": "c"}
CODE = 'def f(a, b):\n    return "<b>" if a < b else \'&amp;\'  # </param\n\tdone'

# case -> (prose, calls): the template writes them; the parse must give them back
CASES: Dict[str, Tuple[str, List[Call]]] = {
    "single_with_prose": ("Let me check.", [("get_weather", {"city": "Paris", "days": 3})]),
    "typed_values": ("", [("get_weather", TYPED)]),
    "zero_args": ("", [("noop", {})]),
    "two_calls": ("On it.", [("get_weather", {"city": "Oslo"}), ("noop", {})]),
    "code_string": ("", [("write_file", {"content": CODE})]),
    "unicode": ("Caf\u00e9 \u2615", [("get_weather", {"city": "Z\u00fcrich \U0001F600"})]),
}
