"""The plugin loads through SGLang's entry point group and registers names."""
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


def test_registration_is_lazy_and_replace_env():
    """In a fresh process: load_plugins() does not import function_call_parser
    (it costs seconds in every SGLang process); importing it later picks up
    the names; SGLANG_TOOLPARSE_REPLACE=1 maps the builtin names too."""
    code = (
        "import sys\n"
        "from sglang.srt.plugins import load_plugins\n"
        "load_plugins()\n"
        "print('lazy', 'sglang.srt.function_call.function_call_parser' not in sys.modules)\n"
        "from sglang.srt.function_call.function_call_parser import FunctionCallParser as F\n"
        "e = F.ToolCallParserEnum\n"
        "print('native', e['qwen25_native'].__name__, e['hermes_native'].__name__)\n"
        "print('builtin', e['qwen25'].__module__, e['hermes'].__module__, e['qwen'].__module__)\n"
    )
    r = _run(code, SGLANG_TOOLPARSE_REPLACE="1")
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert lines["lazy"] == "True"
    assert lines["native"] == "Qwen25NativeDetector HermesNativeDetector"
    assert lines["builtin"].split() == ["sglang_toolparse.sglang_adapter"] * 3

    r = _run(code, SGLANG_TOOLPARSE_REPLACE="0")
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert "sglang_toolparse" not in lines["builtin"]


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
