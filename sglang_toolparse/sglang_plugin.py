"""SGLang plugin entry point (group `sglang.srt.plugins`).

SGLang calls `register()` in every process through `load_plugins()`, before
`--tool-call-parser` is parsed. Importing SGLang's function_call_parser
costs seconds (it pulls in xgrammar, transformers, torch), so registration
is lazy: the names are added to SGLang's cheap `parser_names` list at once
(the CLI accepts them), and the detector classes are put into
`FunctionCallParser.ToolCallParserEnum` right after that module is imported,
by whoever imports it first.

SGLANG_TOOLPARSE_REPLACE=1 also maps the builtin names (qwen25, qwen,
hermes, ...) to the native detectors.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import importlib.machinery
import logging
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

logger = logging.getLogger("sglang_toolparse")

FCP_MODULE = "sglang.srt.function_call.function_call_parser"
# what SGLang's HTTP worker processes import (see sglang_app.py)
APP_PATH_ENV = "SGLANG_HTTP_SERVER_APP_PATH"
APP_PATH = "sglang_toolparse.sglang_app:app"

# registered name -> (adapter class name, builtin name it can replace)
NATIVE_NAMES: Dict[str, Tuple[str, Optional[str]]] = {
    "qwen25_native": ("Qwen25NativeDetector", "qwen25"),
    "qwen_native": ("Qwen25NativeDetector", "qwen"),
    "hermes_native": ("HermesNativeDetector", "hermes"),
    "glm_native": ("Glm45NativeDetector", "glm"),
    "glm45_native": ("Glm45NativeDetector", "glm45"),
    "glm47_native": ("Glm47NativeDetector", "glm47"),
    "deepseekv3_native": ("DeepSeekV3NativeDetector", "deepseekv3"),
    "deepseekv31_native": ("DeepSeekV31NativeDetector", "deepseekv31"),
    "deepseekv32_native": ("DeepSeekV32NativeDetector", "deepseekv32"),
    "deepseekv4_native": ("DeepSeekV4NativeDetector", "deepseekv4"),
    "deepseekv41_native": ("DeepSeekV41NativeDetector", "deepseekv41"),
    "kimi_k2_native": ("KimiK2NativeDetector", "kimi_k2"),
    "qwen3_coder_native": ("Qwen3CoderNativeDetector", "qwen3_coder"),
    "step3p5_native": ("Qwen3CoderNativeDetector", "step3p5"),
    "minimax-m2_native": ("MinimaxM2NativeDetector", "minimax-m2"),
}


def replace_builtins() -> bool:
    return os.environ.get("SGLANG_TOOLPARSE_REPLACE", "").strip().lower() in ("1", "true", "yes", "on")


def registered_names() -> List[str]:
    """Names this plugin puts into ToolCallParserEnum (given the env)."""
    names = list(NATIVE_NAMES)
    if replace_builtins():
        names += [b for _, b in NATIVE_NAMES.values() if b]
    return names


def _install_detectors(module: Any) -> None:
    from sglang_toolparse import sglang_adapter

    enum = module.FunctionCallParser.ToolCallParserEnum
    replace = replace_builtins()
    for name, (cls_name, builtin) in NATIVE_NAMES.items():
        base = getattr(sglang_adapter, cls_name)
        enum[name] = type(base.__name__, (base,), {"parser_name": name, "__module__": base.__module__})
        if replace and builtin:
            enum[builtin] = type(base.__name__, (base,), {"parser_name": builtin, "__module__": base.__module__})
    try:
        from sglang_toolparse import metrics

        metrics.install()
    except Exception:  # metrics are optional; parsing must not depend on them
        logger.debug("sglang_toolparse metrics not installed", exc_info=True)


class _PostImportLoader(importlib.abc.Loader):
    def __init__(self, wrapped: importlib.abc.Loader) -> None:
        self._wrapped = wrapped

    def create_module(self, spec):  # type: ignore[override]
        return self._wrapped.create_module(spec)

    def exec_module(self, module) -> None:  # type: ignore[override]
        self._wrapped.exec_module(module)
        _install_detectors(module)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Wraps the loader of function_call_parser to register on import."""

    def find_spec(self, fullname, path, target=None):  # type: ignore[override]
        if fullname != FCP_MODULE:
            return None
        sys.meta_path.remove(self)  # find the real spec without recursion
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PostImportLoader(spec.loader)
        return spec


_registered = False


def register() -> None:
    """Entry point called by sglang.srt.plugins.load_plugins()."""
    global _registered
    if _registered:
        return
    _registered = True
    try:
        from sglang.srt.function_call import parser_names

        for name in NATIVE_NAMES:
            if name not in parser_names.TOOL_CALL_PARSER_NAMES:
                parser_names.TOOL_CALL_PARSER_NAMES.append(name)
    except ImportError:  # an SGLang without the cheap name list
        pass
    # HTTP workers (--tokenizer-worker-num > 1) import the app by path and
    # never call load_plugins(); route them through a module that does
    os.environ.setdefault(APP_PATH_ENV, APP_PATH)
    module = sys.modules.get(FCP_MODULE)
    if module is not None:
        _install_detectors(module)
    else:
        sys.meta_path.insert(0, _PostImportFinder())
    logger.info("sglang_toolparse registered tool-call parsers: %s", ", ".join(registered_names()))
