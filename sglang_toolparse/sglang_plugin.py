"""SGLang plugin entry point (group `sglang.srt.plugins`).

SGLang calls `register()` in every process through `load_plugins()`, before
`--tool-call-parser` is parsed. Importing SGLang's function_call_parser
costs seconds (it pulls in xgrammar, transformers, torch), so registration
is lazy: the names are added to SGLang's cheap `parser_names` list at once
(the CLI accepts them), and the detector classes are put into
`FunctionCallParser.ToolCallParserEnum` right after that module is imported,
by whoever imports it first.

`--tool-call-parser X_native` means SGLang's serving behaviour of the builtin
X with the native detector parsing. SGLang's serving layer compares the
parser *name* in many places (GLM-4.7's grammar constraint, DeepSeek's chat
encoding, Kimi's tool-call ids, ...; the list is pinned by
tests/test_name_parity_sites.py), so the name must be X everywhere:
  * where the launcher builds its ServerArgs (`ServerArgs.from_cli_args`, and
    `ServerArgs.resolve_once` for records built in Python, e.g.
    `sglang.Engine(tool_call_parser=...)`), X_native is replaced by X and the
    choice is written to SGLANG_TOOLPARSE_NATIVE (the X_native name); a
    server that chose any other name clears it;
  * every process of that server inherits the variable (scheduler,
    detokenizer, HTTP workers) and installs the native class under X (and
    under the builtin names of rows with the same class: SGLang renames
    qwen25 -> qwen, glm45 -> glm while resolving); a process whose server
    never chose a native name keeps SGLang's classes. The class keeps
    `parser_name` = X_native (log lines, metrics labels).
Everything is driven by NATIVE_NAMES: a row added there gets the same
treatment.

SGLANG_TOOLPARSE_REPLACE=1 maps every builtin name in NATIVE_NAMES (qwen25,
qwen, hermes, ...) to the native detectors, whatever name the server chose
(so `--tool-call-parser auto` resolves to native classes too).
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
    "llama3_native": ("Llama3NativeDetector", "llama3"),
    "mistral_native": ("MistralNativeDetector", "mistral"),
    "pythonic_native": ("PythonicNativeDetector", "pythonic"),
    "gpt-oss_native": ("GptOssNativeDetector", "gpt-oss"),
    "ling3_native": ("Ling3NativeDetector", "ling3"),
    "iquest_q1_native": ("IQuestQ1NativeDetector", "iquest_q1"),
    "poolside_v1_native": ("PoolsideV1NativeDetector", "poolside_v1"),
    "spark25_native": ("Spark25NativeDetector", "spark25"),
    "hunyuan_native": ("HunyuanNativeDetector", "hunyuan"),
    "nanbeige_native": ("Qwen3CoderNativeDetector", "nanbeige"),
    "mimo_native": ("MiMoNativeDetector", "mimo"),
    "dots_native": ("DotsNativeDetector", "dots"),
    "trinity_native": ("TrinityNativeDetector", "trinity"),
    "gigachat35_native": ("GigaChat35NativeDetector", "gigachat35"),
    "minicpm5_native": ("MiniCPM5NativeDetector", "minicpm5"),
    "kimi_k3_native": ("KimiK3NativeDetector", "kimi_k3"),
    "minimax-m3_native": ("MinimaxM3NativeDetector", "minimax-m3"),
    "cohere_command4_native": ("CohereCommand4NativeDetector", "cohere_command4"),
    "apertus2509_native": ("Apertus2509NativeDetector", "apertus2509"),
    "step3_native": ("Step3NativeDetector", "step3"),
    "interns1_native": ("InternS1NativeDetector", "interns1"),
    "gigachat3_native": ("GigaChat3NativeDetector", "gigachat3"),
    "gemma4_native": ("Gemma4NativeDetector", "gemma4"),
    "inkling_native": ("InklingNativeDetector", "inkling"),
    "lfm2_native": ("Lfm2NativeDetector", "lfm2"),
    "k2_horizon_native": ("K2HorizonNativeDetector", "k2_horizon"),
    "muse_native": ("MuseNativeDetector", "muse"),
}


# builtin tool parser -> (reasoning parser name, class in sglang_reasoning):
# where SGLang's reasoning parser holds the tool parser's input back, the
# native reasoning detector takes its place when that builtin is served
# natively (and the request's output goes through the tool parser)
REASONING_PAIRS: Dict[str, Tuple[str, str]] = {
    "gpt-oss": ("gpt-oss", "GptOssNativeReasoningDetector"),
}
RP_MODULE = "sglang.srt.parser.reasoning_parser"
# the switch: SGLANG_TOOLPARSE_REASONING=0 keeps SGLang's reasoning parsers
REASONING_ENV = "SGLANG_TOOLPARSE_REASONING"

# set by the launcher for its server's processes: the X_native name chosen
NATIVE_ENV = "SGLANG_TOOLPARSE_NATIVE"
# bookkeeping on ServerArgs (travels with the record to child processes):
# the X_native name the operator passed
CHOSEN_ATTR = "_toolparse_native_name"


def replace_builtins() -> bool:
    return os.environ.get("SGLANG_TOOLPARSE_REPLACE", "").strip().lower() in ("1", "true", "yes", "on")


def builtin_name(name: Optional[str]) -> Optional[str]:
    """The builtin name a native name stands for (None for any other name)."""
    row = NATIVE_NAMES.get(name) if isinstance(name, str) else None
    return row[1] if row else None


def family_builtins(native_name: str) -> List[str]:
    """The builtin names served natively when `native_name` is chosen: its
    own builtin and the builtins of rows with the same detector class
    (SGLang renames some during resolution, e.g. qwen25 -> qwen, glm45 -> glm;
    the serving layer then looks up the new name)."""
    cls_name = NATIVE_NAMES[native_name][0]
    first = NATIVE_NAMES[native_name][1]
    names = [first] if first else []
    for c, b in NATIVE_NAMES.values():
        if c == cls_name and b and b not in names:
            names.append(b)
    return names


def chosen_native() -> Optional[str]:
    """The X_native name this process's server chose (None: no native name)."""
    name = os.environ.get(NATIVE_ENV, "").strip()
    if not name:
        return None
    if builtin_name(name) is None:
        logger.warning("sglang_toolparse: %s=%r is not a native parser name; ignored", NATIVE_ENV, name)
        return None
    return name


def native_for() -> List[str]:
    """The builtin names this process's server parses natively."""
    chosen = chosen_native()
    return family_builtins(chosen) if chosen else []


def registered_names() -> List[str]:
    """Names this plugin puts into ToolCallParserEnum (given the env)."""
    names = list(NATIVE_NAMES)
    natives = set(native_for())
    for _, b in NATIVE_NAMES.values():
        if b and b not in names and (replace_builtins() or b in natives):
            names.append(b)
    return names


# -- the detector classes -----------------------------------------------------

_classes: Dict[Tuple[str, str], type] = {}
# SGLang's own class for each builtin name we may take over (None: SGLang has
# no such name), taken before the first change, so a later server in the same
# process that chooses the builtin gets SGLang's class back
_originals: Dict[str, Optional[type]] = {}


def _native_class(cls_name: str, parser_name: str) -> type:
    key = (cls_name, parser_name)
    cls = _classes.get(key)
    if cls is None:
        from sglang_toolparse import sglang_adapter

        base = getattr(sglang_adapter, cls_name)
        cls = type(base.__name__, (base,), {"parser_name": parser_name, "__module__": base.__module__})
        _classes[key] = cls
    return cls


def _apply(module: Any) -> None:
    """Puts the classes into ToolCallParserEnum for the current choice."""
    enum = module.FunctionCallParser.ToolCallParserEnum
    if not _originals:
        for _, builtin in NATIVE_NAMES.values():
            if builtin and builtin not in _originals:
                _originals[builtin] = enum.get(builtin)
    replace = replace_builtins()
    chosen = chosen_native()
    natives = set(native_for())
    for name, (cls_name, builtin) in NATIVE_NAMES.items():
        enum[name] = _native_class(cls_name, name)
        if not builtin:
            continue
        if builtin in natives:
            enum[builtin] = _native_class(cls_name, chosen)  # type: ignore[arg-type]
        elif replace:
            enum[builtin] = _native_class(cls_name, builtin)
        else:
            original = _originals.get(builtin)
            if original is not None:
                enum[builtin] = original
            else:
                enum.pop(builtin, None)


def reasoning_hook_enabled() -> bool:
    return os.environ.get(REASONING_ENV, "").strip().lower() not in ("0", "false", "no", "off")


_rp_originals: Dict[str, Any] = {}
_rp_warned: set = set()


def _apply_reasoning(module: Any) -> None:
    """Puts the native reasoning detectors into ReasoningParser.DetectorMap
    for the builtins served natively (SGLang's back otherwise). Stands down
    with one warning when SGLang's class there is not the one it expects."""
    dmap = getattr(getattr(module, "ReasoningParser", None), "DetectorMap", None)
    if not isinstance(dmap, dict):
        if "DetectorMap" not in _rp_warned:
            _rp_warned.add("DetectorMap")
            logger.warning("sglang_toolparse: SGLang's ReasoningParser.DetectorMap not found; reasoning hooks off")
        return
    served = set(native_for()) | ({b for _, b in NATIVE_NAMES.values() if b} if replace_builtins() else set())
    for builtin, (rp_name, cls_name) in REASONING_PAIRS.items():
        original = _rp_originals.setdefault(rp_name, dmap.get(rp_name))
        want = builtin in served and reasoning_hook_enabled()
        if want:
            from sglang_toolparse import sglang_reasoning

            cls = getattr(sglang_reasoning, cls_name)
            base = cls.__mro__[1]
            if original is not base:  # SGLang changed what serves this name
                if rp_name not in _rp_warned:
                    _rp_warned.add(rp_name)
                    logger.warning(
                        "sglang_toolparse: reasoning parser %r is %r, not the %r this release wraps; "
                        "left as it is (tool calls then arrive whole)", rp_name, original, base)
                want = False
        if want:
            dmap[rp_name] = cls
        elif original is not None:
            dmap[rp_name] = original


def _install_detectors(module: Any) -> None:
    _apply(module)
    try:
        from sglang_toolparse import metrics

        metrics.install()
    except Exception:  # metrics are optional; parsing must not depend on them
        logger.debug("sglang_toolparse metrics not installed", exc_info=True)


# -- the server's choice --------------------------------------------------------


def choose(server_args: Any) -> Optional[str]:
    """Called where a launcher builds its ServerArgs: replaces X_native by X,
    records the choice for this process and the ones it starts, and returns
    the native name chosen (None when the server chose another name)."""
    name = getattr(server_args, "tool_call_parser", None)
    builtin = builtin_name(name)
    if builtin is not None:
        server_args.tool_call_parser = builtin  # before resolution: the operator's input
        setattr(server_args, CHOSEN_ATTR, name)
        logger.info(
            "--tool-call-parser %s: SGLang serves it as %r, parsed by sglang_toolparse's %s",
            name, builtin, NATIVE_NAMES[name][0],
        )
        chosen: Optional[str] = name
    else:
        chosen = getattr(server_args, CHOSEN_ATTR, None)
        if chosen not in NATIVE_NAMES or builtin_name(chosen) != name:
            chosen = None  # the record (or its name) is not one we normalized
    set_chosen_native(chosen)
    return chosen


def set_chosen_native(name: Optional[str]) -> None:
    """Records the server's choice for this process and the processes it
    starts, and updates ToolCallParserEnum if it is imported."""
    if name:
        os.environ[NATIVE_ENV] = name
    else:
        os.environ.pop(NATIVE_ENV, None)
    module = sys.modules.get(FCP_MODULE)
    if module is not None:
        _apply(module)
    module = sys.modules.get(RP_MODULE)
    if module is not None:
        _apply_reasoning(module)


def _after_from_cli_args(result: Any, *args: Any, **kwargs: Any) -> Any:
    choose(result)
    return result


def _before_resolve_once(server_args: Any, *args: Any, **kwargs: Any) -> None:
    # a record that was resolved already (the launcher's, unpickled in a child
    # process) is this server's, decided in the launcher: leave it
    if getattr(server_args, "_resolution_finished", False) or getattr(server_args, "_resolution_failed", False):
        return None
    choose(server_args)
    return None


HOOKS = (
    ("sglang.srt.server_args.ServerArgs.from_cli_args", _after_from_cli_args, "AFTER"),
    ("sglang.srt.server_args.ServerArgs.resolve_once", _before_resolve_once, "BEFORE"),
)


def _register_hooks() -> None:
    try:
        from sglang.srt.plugins import hook_registry
    except ImportError:  # an SGLang without the hook registry
        logger.warning("sglang_toolparse: SGLang has no plugin hook registry; X_native names are not normalized")
        return
    for target, fn, kind in HOOKS:
        hook_registry.HookRegistry.register(target, fn, getattr(hook_registry.HookType, kind))
    source = getattr(hook_registry, "_current_plugin_source", None)
    if source is None or source.get() is None:
        # called outside load_plugins(), which applies hooks after the plugins
        hook_registry.HookRegistry.apply_hooks()


def _install_serving_hooks(module: Any) -> None:
    """SGLang's serving_chat is imported: the serving hooks
    (serving_hooks.py; they check the code they wrap first)."""
    try:
        from sglang_toolparse import serving_finish, serving_hooks

        serving_hooks.install()
        serving_finish.patch(module)  # non-stream finish_reason of incomplete calls
    except Exception:  # SGLang must run unchanged if the hooks cannot be installed
        logger.warning("sglang_toolparse: serving hooks not installed", exc_info=True)


SERVING_CHAT_MODULE = "sglang.srt.entrypoints.openai.serving_chat"


class _PostImportLoader(importlib.abc.Loader):
    def __init__(self, wrapped: importlib.abc.Loader, install: Any) -> None:
        self._wrapped = wrapped
        self._install = install

    def create_module(self, spec):  # type: ignore[override]
        return self._wrapped.create_module(spec)

    def exec_module(self, module) -> None:  # type: ignore[override]
        self._wrapped.exec_module(module)
        self._install(module)


def _on_import() -> Dict[str, Any]:
    return {FCP_MODULE: _install_detectors, RP_MODULE: _apply_reasoning, SERVING_CHAT_MODULE: _install_serving_hooks}


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Wraps the loaders of function_call_parser, of the reasoning parsers
    and of serving_chat to act on import (_on_import)."""

    def find_spec(self, fullname, path, target=None):  # type: ignore[override]
        install = _on_import().get(fullname)
        if install is None:
            return None
        sys.meta_path.remove(self)  # find the real spec without recursion
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PostImportLoader(spec.loader, install)
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
    _register_hooks()
    pending = False
    for name, install in _on_import().items():
        module = sys.modules.get(name)
        if module is not None:
            install(module)
        else:
            pending = True
    if pending:
        sys.meta_path.insert(0, _PostImportFinder())
    logger.info("sglang_toolparse registered tool-call parsers: %s", ", ".join(registered_names()))
