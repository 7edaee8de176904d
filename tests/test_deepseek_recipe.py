"""Differential test against DeepSeek's own decoder, deepseek-recipe (the
Rust parser SGLang serves DeepSeek V4/V4.1 with; optional test dependency,
requirements/test.txt): on well-formed DSML generated here (V3.2, V4 and
V4.1 tag spellings, whitespace and Unicode in string values, several
invokes, prose before the block) the native parsers return the same prose,
the same calls and the same argument values, string values byte for byte.
On malformed input the recipe is wrong in places: strict xfails name them
(docs/PARSERS.md, "Reference decoders")."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

recipe = pytest.importorskip("deepseek_recipe")

import support  # noqa: E402
from sglang_toolparse import parse  # noqa: E402

D = "\uff5cDSML\uff5c"
SPELLINGS = {  # block, invoke, parameter
    "deepseekv32": ("function_calls", "invoke", "parameter"),
    "deepseekv4": ("tool_calls", "invoke", "parameter"),
    "deepseekv41": (" calls", " invoke", " parameter"),
}
MODEL = {"deepseekv32": "DeepSeek-V4-Pro", "deepseekv4": "DeepSeek-V4-Pro", "deepseekv41": "DeepSeek-V4.1-Flash"}
TOOLS = ["Edit", "get_weather", "run"]


def recipe_parse(fmt, text):
    """(content, [(name, arguments)]) as deepseek-recipe's StreamProcessor
    decodes `text` (one text chunk, then a stop)."""
    conv = recipe.ChatCompletionRequest(
        {"model": MODEL[fmt], "messages": [{"role": "user", "content": "hi"}]}).convert(recipe.ConversionOptions())
    sp = recipe.StreamProcessor(recipe.ChatCompletionRequest.chunk_generator(conv, "id", "m"),
                                recipe.ParsingOptions(parse_tool_calls=True))
    out = sp.push(recipe.InferenceChunk.ready()) + sp.push(recipe.InferenceChunk.text(text))
    out += sp.push(recipe.InferenceChunk.finish(recipe.InferenceFinishReason.Stop))
    content, calls = [], {}
    for chunk in out:
        delta = json.loads(chunk.to_json())["choices"][0]["delta"]
        content.append(delta.get("content") or "")
        for tc in delta.get("tool_calls") or ():
            f = tc["function"]
            if "name" in f:
                calls[tc["index"]] = [f["name"], f["arguments"]]
            else:
                calls[tc["index"]][1] += f["arguments"]
    return "".join(content), [tuple(v) for _, v in sorted(calls.items())]


def native_parse(fmt, text):
    r = parse(fmt, text, TOOLS)
    return r.text, [(c.name, c.arguments) for c in r.calls]


def block(fmt, invokes, spelling=None):
    b, inv, par = SPELLINGS[spelling or fmt]
    out = []
    for name, params in invokes:
        ps = "".join('<%s%s name="%s" string="%s">%s</%s%s>\n'
                     % (D, par, k, "true" if isinstance(v, str) else "false",
                        v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), D, par)
                     for k, v in params.items())
        out.append('<%s%s name="%s">\n%s</%s%s>' % (D, inv, name, ps, D, inv))
    return "<%s%s>\n%s\n</%s%s>" % (D, b, "\n".join(out), D, b)


# string values: whitespace runs at either end, Unicode (spaces too), quotes,
# backslashes, control characters; never "<" (a tag) or the full-width bar
_chars = st.characters(exclude_categories=("Cs",), exclude_characters="<\uff5c\r")
_string = st.lists(st.one_of(st.text(_chars, max_size=4),
                            st.sampled_from([" ", "\n", "\t", "    ", "\u3000", "\u00a0", '"', "\\", "\x01"])),
                  max_size=6).map("".join)
_scalar = st.none() | st.booleans() | st.integers(-10 ** 12, 10 ** 12) | st.floats(
    allow_nan=False, allow_infinity=False) | st.text(_chars, max_size=6)
_json = st.recursive(_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(_chars, max_size=4), c,
                                                                                   max_size=3), max_leaves=6)
_key = st.text(st.characters(min_codepoint=0x30, max_codepoint=0x7a, exclude_characters='"<>\\'),
               min_size=1, max_size=8)
_params = st.dictionaries(_key, st.one_of(_string, _json), max_size=4)
_prose = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="<\uff5c"), max_size=20).map(str.strip)


@pytest.mark.parametrize("fmt", sorted(SPELLINGS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_same_as_deepseek_recipe_on_well_formed_dsml(fmt, data):
    invokes = data.draw(st.lists(st.tuples(st.sampled_from(TOOLS), _params), min_size=1, max_size=3))
    spelling = data.draw(st.sampled_from([fmt, fmt, *SPELLINGS]))  # models write each other's spellings
    prose = data.draw(_prose)
    text = (prose + "\n\n" if prose else "") + block(fmt, invokes, spelling)
    want_text, want_calls = recipe_parse(fmt, text)
    got_text, got_calls = native_parse(fmt, text)
    assert got_text == want_text == prose
    assert [n for n, _ in got_calls] == [n for n, _ in want_calls] == [n for n, _ in invokes]
    for (_, got), (_, want), (_, params) in zip(got_calls, want_calls, invokes):
        # the recipe passes non-string values through as written, we write
        # them canonically: the same JSON values; strings byte for byte
        assert json.loads(got) == json.loads(want) == params
    # and streamed at any split, the same
    for chunks in (support.token_like(text, 3), support.char_by_char(text)):
        assert support.summary(support.run(fmt, chunks, TOOLS))[:2] == (got_text, got_calls)


@pytest.mark.parametrize("fmt", sorted(SPELLINGS))
def test_whitespace_string_value_as_the_recipe_reads_it(fmt):
    text = "Editing.\n\n" + block(fmt, [("Edit", {"old_string": "    assert x == 7\n", "new_string": "\tdone "})])
    assert native_parse(fmt, text) == recipe_parse(fmt, text) == (
        "Editing.", [("Edit", '{"old_string": "    assert x == 7\\n", "new_string": "\\tdone "}')])


# ---- where deepseek-recipe is wrong (malformed input) ----------------------------------

def both(reason):
    return pytest.mark.parametrize("impl", [
        pytest.param(recipe_parse, id="recipe", marks=pytest.mark.xfail(strict=True, reason=reason)),
        pytest.param(native_parse, id="native"),
    ])


@both("deepseek-recipe drops the prose that follows a tool-call block")
@pytest.mark.parametrize("fmt", sorted(SPELLINGS))
def test_prose_after_block_is_kept(impl, fmt):
    text = "Before.\n\n" + block(fmt, [("run", {"cmd": "ls"})]) + "\nAfter."
    assert impl(fmt, text) == ("Before.\nAfter.", [("run", '{"cmd": "ls"}')])


@both("deepseek-recipe reads a parameter tag written without the DSML marker as part of the "
      "arguments: the client gets arguments the model never meant")
@pytest.mark.parametrize("fmt", sorted(SPELLINGS))
def test_parameter_without_marker_gives_no_garbage_arguments(impl, fmt):
    b, inv, par = SPELLINGS[fmt]
    text = '<%s%s>\n<%s%s name="run">\n<parameter name="cmd" string="true">ls</parameter>\n</%s%s>\n</%s%s>' % (
        D, b, D, inv, D, inv, D, b)
    assert impl(fmt, text)[1] == []  # native: reported (bad_markup), no call


@both("deepseek-recipe passes a string=\"false\" value that is not JSON through as written: "
      "the arguments are not JSON")
@pytest.mark.parametrize("fmt", sorted(SPELLINGS))
@pytest.mark.parametrize("value,want", [("hello world", '"hello world"'), ("NaN", '"NaN"'), ('"a\nb"', '"a\\nb"')])
def test_non_json_value_gives_json_arguments(impl, fmt, value, want):
    b, inv, par = SPELLINGS[fmt]
    text = '<%s%s>\n<%s%s name="run">\n<%s%s name="v" string="false">%s</%s%s>\n</%s%s>\n</%s%s>' % (
        D, b, D, inv, D, par, value, D, par, D, inv, D, b)
    [(name, args)] = impl(fmt, text)[1]
    assert args == '{"v": %s}' % want
    json.loads(args, parse_constant=lambda c: 1 / 0)
