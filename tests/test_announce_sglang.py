"""Issue 15 / 9.2 against SGLang's own detectors (0.5.23), parametrized over
both implementations: where SGLang's detector gets a case wrong, the case
is an xfail(strict=True) naming what it gets wrong, and the same
expectation must pass for the native detector."""
from __future__ import annotations

import os

import pytest

try:
    import sglang.srt.function_call.deepseekv41_detector  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
        raise
    pytest.skip("SGLang not installed: %s" % e, allow_module_level=True)

from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.deepseekv4_detector import DeepSeekV4Detector  # noqa: E402
from sglang.srt.function_call.deepseekv32_detector import DeepSeekV32Detector  # noqa: E402
from sglang.srt.function_call.deepseekv41_detector import DeepSeekV41Detector  # noqa: E402
from sglang.srt.function_call.glm4_moe_detector import Glm4MoeDetector  # noqa: E402
from sglang.srt.function_call.glm47_moe_detector import Glm47MoeDetector  # noqa: E402
from sglang.srt.function_call.hermes_detector import HermesDetector  # noqa: E402
from sglang.srt.function_call.qwen25_detector import Qwen25Detector  # noqa: E402
from support import token_like  # noqa: E402
from test_announce import D, dsml  # noqa: E402

from sglang_toolparse import sglang_adapter as ad  # noqa: E402

IMPLS = {
    "qwen25": (Qwen25Detector, ad.Qwen25NativeDetector),
    "hermes": (HermesDetector, ad.HermesNativeDetector),
    "glm45": (Glm4MoeDetector, ad.Glm45NativeDetector),
    "glm47": (Glm47MoeDetector, ad.Glm47NativeDetector),
    "deepseekv32": (DeepSeekV32Detector, ad.DeepSeekV32NativeDetector),
    "deepseekv4": (DeepSeekV4Detector, ad.DeepSeekV4NativeDetector),
    "deepseekv41": (DeepSeekV41Detector, ad.DeepSeekV41NativeDetector),
}
TOOLS = [Tool(type="function", function=Function(name=n, parameters={
    "type": "object", "properties": {"id": {"type": "string"}, "enabled": {"type": "boolean"}}}))
    for n in ("lookup", "set_flag")]


def detector(fmt, impl):
    return IMPLS[fmt][0 if impl == "builtin" else 1]()


def stream(fmt, impl, text):
    """(content, [(index, name)] of the names streamed) as the serving layer sees them."""
    d = detector(fmt, impl)
    content, names = [], []
    for chunk in token_like(text, seed=3):
        r = d.parse_streaming_increment(chunk, TOOLS)
        content.append(r.normal_text or "")
        names += [(c.tool_index, c.name) for c in r.calls if c.name]
    return "".join(content), names


def cases(table):
    for key, why in table.items():
        for impl in ("native", "builtin"):
            marks = [pytest.mark.xfail(strict=True, reason=why)] if impl == "builtin" and why else []
            yield pytest.param(key, impl, marks=marks, id="%s-%s" % (key, impl))


# ---- a call whose body is malformed before it began is never announced -----------

_NAME_FIRST = ("SGLang streams the name as soon as it is parsed; the arguments then turn out not to "
               "be JSON and the client holds a call with empty arguments")
_GLM_CUT = "SGLang streams the name of a call cut off before its first value: the client holds a zero-argument call"
NOT_BEGUN = {
    "qwen25": ("Turning it on.<tool_call>\n{\"name\": \"set_flag\", \"arguments\": on}\n</tool_call>", _NAME_FIRST),
    "hermes": ("Turning it on.<tool_call>{\"name\": \"set_flag\", \"arguments\": on}</tool_call>", _NAME_FIRST),
    "glm45": ("Turning it on.\n<tool_call>set_flag\n<arg_key>enabled</arg_key>\n<arg_val", _GLM_CUT),
    "glm47": ("Turning it on.<tool_call>set_flag<arg_key>enabled</arg_key><arg_val", _GLM_CUT),
    "deepseekv4": ("Turning it on." + dsml("tool_calls", "invoke", "parameter", (
        "set_flag", '<parameter name="enabled">true</%sparameter>\n' % D)), None),
    "deepseekv41": ("Turning it on." + dsml(" calls", " invoke", " parameter", (
        "set_flag", '<parameter name="enabled">true</%s parameter>\n' % D)), None),
}


@pytest.mark.parametrize("fmt,impl", list(cases({k: v[1] for k, v in NOT_BEGUN.items()})))
def test_no_name_is_streamed_before_the_body_begins(fmt, impl):
    content, names = stream(fmt, impl, NOT_BEGUN[fmt][0])
    assert names == []


# ---- DSML: every parser reads every spelling ---------------------------------------

_FOREIGN_INVOKE = ("SGLang's %s detector reads only its own invoke spelling (%r): an invoke written "
                   "the other way is dropped")
SPELLING_CASES = {}
for _fmt, _own in (("deepseekv32", "invoke"), ("deepseekv4", "invoke"), ("deepseekv41", " invoke")):
    for _block in ("function_calls", "tool_calls", " calls", "calls"):
        for _tags in ("invoke", " invoke"):
            SPELLING_CASES[(_fmt, _block, _tags)] = None if _tags == _own else _FOREIGN_INVOKE % (_fmt, _own)


@pytest.mark.parametrize("key,impl", list(cases(SPELLING_CASES)))
def test_dsml_every_spelling(key, impl):
    fmt, block, invoke = key
    param = invoke.replace("invoke", "parameter")
    text = "Checking.\n\n" + dsml(block, invoke, param, ("lookup", [("id", True, "Q 5")]))
    r = detector(fmt, impl).detect_and_parse(text, TOOLS)
    assert [(c.name, c.parameters) for c in r.calls] == [("lookup", '{"id": "Q 5"}')]
    assert stream(fmt, impl, text)[1] == [(0, "lookup")]


# ---- a marker that starts no call is text --------------------------------------

PROSE = {
    "qwen25": ("Use the <tool_call> tag like this. Then wrap the JSON object.", None),
    "hermes": ("Use the <tool_call> tag like this. Then wrap the JSON object.",
               "SGLang's Hermes detector reports has_tool_call for prose that mentions the tag, "
               "and its streaming drops the text from the tag on"),
    "glm45": ("Use the <tool_call> tag like this.\nThen wrap the JSON object.",
              "SGLang's GLM-4.5 detector streams a call named 'tag like this.' and drops the prose after the tag"),
    "glm47": ("Use the <tool_call> tag like this.\nThen wrap the JSON object.",
              "SGLang's GLM-4.7 streaming drops the prose from the tag on (its one-shot parse keeps it)"),
}


@pytest.mark.parametrize("fmt,impl", list(cases({k: v[1] for k, v in PROSE.items()})))
def test_marker_in_prose_is_text(fmt, impl):
    text = PROSE[fmt][0]
    assert stream(fmt, impl, text) == (text, [])
    r = detector(fmt, impl).detect_and_parse(text, TOOLS)
    assert (r.normal_text, r.calls) == (text, [])
    if fmt != "glm45":  # SGLang's GLM detectors answer True for any <tool_call>
        assert detector(fmt, impl).has_tool_call(text) is False
