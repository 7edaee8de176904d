"""The plugin loads through SGLang's entry point group and registers names."""
import json
import os
import subprocess
import sys

import pytest

from sglang_toolparse.sglang_plugin import NATIVE_NAMES


def test_entry_point_is_declared():
    from importlib.metadata import entry_points

    eps = [ep for ep in entry_points(group="sglang.srt.plugins") if ep.value.startswith("sglang_toolparse")]
    assert [ep.value for ep in eps] == ["sglang_toolparse.sglang_plugin:register"]


def test_load_plugins_registers_native_names(fcp):
    enum = fcp.FunctionCallParser.ToolCallParserEnum
    for name, (cls_name, builtin) in NATIVE_NAMES.items():
        cls = enum[name]
        assert cls.__name__ == cls_name and cls.parser_name == name
        # drop-in: the native class subclasses an SGLang detector
        sglang_bases = [c for c in cls.__mro__[1:] if c.__module__.startswith("sglang.srt.function_call.")
                        and c.__name__ != "BaseFormatDetector"]
        assert sglang_bases, cls.__mro__


def test_sglang_cli_accepts_native_name(fcp):
    """The CLI accepts every native name and hands SGLang the builtin name it
    stands for (tests/test_name_parity_*.py: what SGLang then does)."""
    from sglang.srt.server_args import prepare_server_args

    from sglang_toolparse.sglang_plugin import NATIVE_ENV

    for name, (_cls, builtin) in NATIVE_NAMES.items():
        args = prepare_server_args(["--model-path", "dummy", "--tool-call-parser", name])
        assert args.tool_call_parser == builtin
        assert os.environ[NATIVE_ENV] == name
        assert fcp.FunctionCallParser.ToolCallParserEnum[builtin] is fcp.FunctionCallParser.ToolCallParserEnum[name]


def _run(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=300)


REGISTRATION = """
import json, sys
from sglang.srt.plugins import load_plugins
load_plugins()
lazy = 'sglang.srt.function_call.function_call_parser' not in sys.modules
from sglang.srt.function_call.function_call_parser import FunctionCallParser as F
from sglang_toolparse.sglang_plugin import NATIVE_NAMES
e = F.ToolCallParserEnum
def cls(name):
    c = e.get(name)
    return [c.__module__, c.__name__, getattr(c, 'parser_name', None)] if c is not None else None
rows = {n: [cls(n), cls(b)] for n, (_, b) in NATIVE_NAMES.items()}
print('RESULT ' + json.dumps({'lazy': lazy, 'rows': rows}))
"""
OURS = "sglang_toolparse.sglang_adapter"


@pytest.fixture(scope="module")
def registration():
    """One fresh interpreter with SGLANG_TOOLPARSE_REPLACE=1 and one with 0,
    each reporting every NATIVE_NAMES row (name -> [native class, builtin
    name's class])."""
    out = {}
    for replace in ("1", "0"):
        r = _run(REGISTRATION, SGLANG_TOOLPARSE_REPLACE=replace)
        assert r.returncode == 0, r.stderr[-3000:]
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))
        out[replace] = json.loads(line[len("RESULT "):])
    return out


@pytest.mark.parametrize("replace", ["1", "0"])
def test_registration_is_lazy(registration, replace):
    """In a fresh process load_plugins() does not import
    function_call_parser (it costs seconds in every SGLang process)."""
    assert registration[replace]["lazy"] is True


@pytest.mark.parametrize("native", sorted(NATIVE_NAMES))
def test_replace_env_maps_every_builtin_name(registration, native):
    """Importing function_call_parser after load_plugins() picks up the
    names; SGLANG_TOOLPARSE_REPLACE=1 maps the builtin name of every row to
    its native class too, and without it the builtin stays SGLang's."""
    cls_name, builtin = NATIVE_NAMES[native]
    ours = [OURS, cls_name, native]
    on, off = registration["1"]["rows"][native], registration["0"]["rows"][native]
    assert on[0] == ours and off[0] == ours
    assert on[1] == [OURS, cls_name, builtin]
    assert off[1] is not None and off[1][0].startswith("sglang.srt.function_call."), off[1]


def test_standalone_api_imports_no_sglang_torch_pydantic():
    code = (
        "import sys, sglang_toolparse as t\n"
        "r = t.parse('qwen25', '<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>', ['f'])\n"
        "assert r.calls[0].name == 'f'\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('sglang', 'torch', 'pydantic')]\n"
        "print(bad)\n"
    )
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
