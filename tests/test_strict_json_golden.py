"""Issue 18, items 3-5: arguments are strict JSON (RFC 8259) in every format,
raw control characters inside JSON strings are read as
json.loads(strict=False) reads them, and DSML string="true" values are the
raw text. Golden cases replayed at every split and with each chunker: the
merged events are the same for every chunking and equal the one-shot
result."""
from __future__ import annotations

import json

import pytest

import support
from format_table import spec
from sglang_toolparse import CallEnd, parse

DSML = "\uff5cDSML\uff5c"
DSML_TAGS = {  # block, invoke, parameter
    "deepseekv32": ("function_calls", "invoke", "parameter"),
    "deepseekv4": ("tool_calls", "invoke", "parameter"),
    "deepseekv41": (" calls", " invoke", " parameter"),
}
JSON_FORMATS = ("qwen25", "hermes", "deepseekv3", "deepseekv31", "deepseekv32", "deepseekv4", "deepseekv41",
                "kimi_k2")


def _reject(token):
    raise ValueError("not JSON: %s" % token)


def strict_loads(text):
    """RFC 8259: no NaN/Infinity (a number past a double is JSON)."""
    return json.loads(text, parse_constant=_reject)


def check_every_chunking(fmt, text, tools, want_text, want_calls, want_errors):
    one = parse(fmt, text, tools)
    assert one.text == want_text
    assert [(c.name, c.arguments) for c in one.complete_calls] == want_calls
    assert [e.code for e in one.errors] == want_errors
    for c in one.complete_calls:
        strict_loads(c.arguments)
    ref = None
    splits = list(support.every_split(text)) + [f(text) for f in support.CHUNKERS.values()]
    for chunks in splits:
        events = support.run(fmt, chunks, tools)
        support.check_stream_invariants(events)
        if ref is None:
            ref = events
            assert support.summary(events) == (want_text, want_calls, want_errors)
            for ev in events:
                if isinstance(ev, CallEnd):
                    strict_loads(ev.arguments)
        else:
            assert events == ref, chunks


def dsml_block(fmt, invokes):
    block, inv, par = DSML_TAGS[fmt]
    body = []
    for name, params in invokes:
        if isinstance(params, str):  # a JSON body
            body.append('<%s%s name="%s">%s</%s%s>' % (DSML, inv, name, params, DSML, inv))
            continue
        ps = "".join('<%s%s name="%s" string="%s">%s</%s%s>\n' % (DSML, par, k, s, v, DSML, par)
                     for k, s, v in params)
        body.append('<%s%s name="%s">\n%s</%s%s>' % (DSML, inv, name, ps, DSML, inv))
    return "<%s%s>\n%s\n</%s%s>" % (DSML, block, "\n".join(body), DSML, block)


# ---- raw control characters inside JSON strings -----------------------------------

RAW_CTRL = '{"command": "head -70\n/tmp/a.py", "t": "a\tb\x01\x1f", "k\nx": "\r", "md": "x\n```\ny"}'
RAW_CTRL_WANT = json.dumps(json.loads(RAW_CTRL, strict=False), ensure_ascii=False)


@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_raw_control_characters_in_json_strings(fmt):
    s = spec(fmt)
    text = "Run it." + s.calls_text([("f", RAW_CTRL)])
    check_every_chunking(fmt, text, ["f"], "Run it.", [("f", RAW_CTRL_WANT)], [])
    assert "\\u0001\\u001f" in RAW_CTRL_WANT  # written escaped, as json.dumps writes them


@pytest.mark.parametrize("fmt", sorted(DSML_TAGS))
def test_raw_control_characters_in_dsml_non_string_values(fmt):
    text = dsml_block(fmt, [("f", [("a", "false", '{"x": "1\n2"}'), ("b", "false", '["\t"]')])])
    want = json.dumps({"a": {"x": "1\n2"}, "b": ["\t"]}, ensure_ascii=False)
    check_every_chunking(fmt, text, ["f"], "", [("f", want)], [])


# ---- numbers past a double, and no NaN/Infinity --------------------------------------

BIG = '{"a": 1e400, "b": -2.5E+999, "c": 123456789012345678901234567890e300, "d": 1e-400, "e": [0.1, 1E400]}'
BIG_WANT = '{"a": 1e400, "b": -2.5E+999, "c": 123456789012345678901234567890e300, "d": 0.0, "e": [0.1, 1E400]}'


@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_numbers_past_a_double_keep_their_digits(fmt):
    text = spec(fmt).calls_text([("f", BIG)])
    check_every_chunking(fmt, text, ["f"], "", [("f", BIG_WANT)], [])


@pytest.mark.parametrize("fmt", JSON_FORMATS)
@pytest.mark.parametrize("const", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(fmt, const):
    """json.loads reads them; no strict JSON parser does: the call is
    malformed (json_syntax), later calls and prose survive."""
    text = spec(fmt).calls_text([("f", '{"a": [1, %s]}' % const), ("f", '{"b": 2}')]) + "\nAfter."
    check_every_chunking(fmt, text, ["f"], "\nAfter.", [("f", '{"b": 2}')], ["json_syntax"])


@pytest.mark.parametrize("fmt", sorted(DSML_TAGS))
def test_dsml_non_string_values_past_a_double_and_constants(fmt):
    text = dsml_block(fmt, [("f", [("a", "false", "1e400"), ("b", "false", " NaN "), ("c", "false", "[-Infinity]"),
                                   ("d", "false", "-1E999")])])
    want = '{"a": 1e400, "b": "NaN", "c": "[-Infinity]", "d": -1E999}'  # SGLang's fallback: the stripped text
    check_every_chunking(fmt, text, ["f"], "", [("f", want)], [])


SCHEMA = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "n": {"type": "number"}, "o": {"type": "object"}, "a": {"type": "array"}}}}}]


@pytest.mark.parametrize("fmt,text,want", [
    ("glm47", "<tool_call>f<arg_key>n</arg_key><arg_value>1e400</arg_value><arg_key>o</arg_key>"
              '<arg_value>{"x": -1E999}</arg_value><arg_key>a</arg_key><arg_value>[NaN]</arg_value></tool_call>',
     '{"n": 1e400, "o": {"x": -1E999}, "a": "[NaN]"}'),
    ("glm45", "<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>1e400</arg_value>\n<arg_key>a</arg_key>\n"
              "<arg_value>[Infinity, 1]</arg_value>\n</tool_call>",
     '{"n": 1e400, "a": "[Infinity, 1]"}'),
    ("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=n>\n1e400\n</parameter>\n<parameter=o>\n"
                    '{"x": 2e999}\n</parameter>\n<parameter=a>\n[NaN]\n</parameter>\n</function>\n</tool_call>',
     '{"n": 1e400, "o": {"x": 2e999}, "a": "[NaN]"}'),
    ("minimax_m2", '<minimax:tool_call>\n<invoke name="f">\n<parameter name="n">-1e400</parameter>\n'
                   '<parameter name="o">{"x": 2e999}</parameter>\n<parameter name="a">[Infinity]</parameter>\n'
                   "</invoke>\n</minimax:tool_call>",
     '{"n": -1e400, "o": {"x": 2e999}, "a": "[Infinity]"}'),
])
def test_typed_values_are_strict_json(fmt, text, want):
    """Schema-typed formats: a number past a double keeps its digits; a value
    that SGLang would write with NaN/Infinity stays its text."""
    check_every_chunking(fmt, text, SCHEMA, "", [("f", want)], [])


@pytest.mark.parametrize("raw,want", [
    ("(1e400, 2)", '"(1e400, 2)"'),  # ast.literal_eval gives inf: not JSON, the text
    ("{'a': 1e400}", "\"{'a': 1e400}\""),
    ("[1e400, 'x']", "\"[1e400, 'x']\""),
    ("[1e400, 2]", "[1e400, 2]"),  # JSON: the core keeps the digits
])
def test_host_typed_literals_never_write_infinity(raw, want):
    """Values typed by Python's literal rules (the host): a float('inf') from
    a literal is not written as Infinity."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "p": {"type": "array"}}}}}]
    for fmt, text in [("glm47", "<tool_call>f<arg_key>p</arg_key><arg_value>%s</arg_value></tool_call>" % raw),
                      ("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=p>\n%s\n</parameter>\n</function>\n"
                                      "</tool_call>" % raw)]:
        [call] = parse(fmt, text, tools).calls
        strict_loads(call.arguments)
        assert call.arguments == '{"p": %s}' % want, fmt


# ---- DSML string="true" values: the raw text -------------------------------------------

@pytest.mark.parametrize("fmt", sorted(DSML_TAGS))
@pytest.mark.parametrize("value", [
    "    assert x == 7\n",  # an Edit tool's old_string: indentation and newline kept
    "\n\tindented\n\n",
    "   ",  # only blanks
    "",
    "\u3000full-width space\u00a0",  # Unicode spaces are text as well
    'quotes " and \\ backslash',
    "ctrl \x01 \x1f",
])
def test_dsml_string_values_are_the_raw_text(fmt, value):
    text = "Editing.\n\n" + dsml_block(fmt, [("Edit", [("old_string", "true", value), ("n", "false", "2")])])
    want = json.dumps({"old_string": value, "n": 2}, ensure_ascii=False)
    check_every_chunking(fmt, text, ["Edit"], "Editing.", [("Edit", want)], [])


@pytest.mark.parametrize("fmt", sorted(DSML_TAGS))
def test_dsml_string_value_whitespace_streams_without_a_hold(fmt):
    """A run of blanks in a string value reaches the client as it arrives."""
    from sglang_toolparse import ArgsDelta, StreamParser

    block, inv, par = DSML_TAGS[fmt]
    head = '<%s%s>\n<%s%s name="Edit">\n<%s%s name="s" string="true">' % (DSML, block, DSML, inv, DSML, par)
    p = StreamParser(fmt, ["Edit"])
    got = "".join(e.delta for e in p.feed(head + "x   ") if isinstance(e, ArgsDelta))
    assert got == '{"s": "x   '
    got = "".join(e.delta for e in p.feed("\n\n") if isinstance(e, ArgsDelta))
    assert got == "\\n\\n"
