"""`--tool-call-parser X_native` behaves as `X` in SGLang's serving layer, with
our detector parsing -- in the launcher and in spawned children, for every
row of NATIVE_NAMES.

tests/name_parity_processes.py plays SGLang's launcher (prepare_server_args,
resolve_once) and probes SGLang's own serving code in the launcher and in
one spawned HTTP-worker child that serves as the worker of every row in turn
(see its docstring for the probes and how the child stands in for each
server's worker). The tests read that one run's results, row by row. The branches covered: GLM-4.7's grammar constraint, the DeepSeek
chat-encoding spec, the DeepSeek recipe start-up rule, tool-call ids
(Kimi-K2's `functions.NAME:IDX`), response-template lookups, detokenizer
close tokens and its gpt-oss <|call|> rule, SGLang's own rename (qwen25 -> qwen). The control probes the
un-normalized name, as SGLang saw it before: it must take other branches,
so the probes can tell.

tests/test_name_parity_sites.py pins the list of places SGLang compares the
name, so a new SGLang branch cannot go unnoticed.

Slow: the launcher and its one child import SGLang (about a minute on 2
shared cores, plus a second or so per row); the module's four fresh
interpreters start together (the `fresh` fixture).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

pytest.importorskip("sglang")
pytest.importorskip("uvicorn")

from sglang_toolparse.sglang_plugin import NATIVE_NAMES  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
OURS = "sglang_toolparse.sglang_adapter"
# probe -> the builtin names whose branch it shows (the control must differ
# there); rows of other branches join by name when NATIVE_NAMES has them
BRANCHES = {
    "glm_constraint": ("glm47",),
    "encoding_spec": ("deepseekv32", "deepseekv4", "deepseekv41", "kimi_k3"),
    "recipe_startup": ("deepseekv4", "deepseekv41"),
    "tool_call_id": ("kimi_k2", "kimi_k3"),
    "gpt_oss_detok": ("gpt-oss",),
    "inkling_startup": ("inkling",),
}
# everything the serving layer decides except which class parses
SERVING_PROBES = (
    "served_name", "sglang_base", "response_template", "parses_without_tools", "glm_constraint",
    "encoding_spec", "recipe_startup", "tool_call_id", "close_tokens", "gpt_oss_detok", "inkling_startup",
)
NATIVES = sorted(NATIVE_NAMES)


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, TESTS] + [p for p in [env.get("PYTHONPATH")] if p])
    for k in ("SGLANG_HTTP_SERVER_APP_PATH", "SGLANG_PLUGINS", "SGLANG_TOOLPARSE_REPLACE", "SGLANG_TOOLPARSE_NATIVE"):
        env.pop(k, None)
    env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


class _Fresh:
    """A fresh interpreter started now; its RESULT line read when asked.
    The module's interpreters are independent: started together, they
    import SGLang side by side instead of one after another."""

    def __init__(self, args, timeout, **extra):
        self.out, self.err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([sys.executable] + args, stdout=self.out, stderr=self.err, text=True,
                                     env=_env(**extra), cwd=ROOT)
        self.deadline = time.monotonic() + timeout

    def result(self):
        try:
            self.proc.wait(timeout=max(1.0, self.deadline - time.monotonic()))
        finally:
            self.stop()
        self.out.seek(0)
        self.err.seek(0)
        assert self.proc.returncode == 0, self.err.read()[-4000:]
        line = next(ln for ln in self.out.read().splitlines() if ln.startswith("RESULT "))
        return json.loads(line[len("RESULT "):])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def fresh():
    started = {
        "runs": _Fresh([os.path.join(TESTS, "name_parity_processes.py")], timeout=1500),
        "done_when": _Fresh(["-c", DONE_WHEN], timeout=900),
        "auto1": _Fresh(["-c", AUTO], timeout=900, SGLANG_TOOLPARSE_REPLACE="1"),
        "auto0": _Fresh(["-c", AUTO], timeout=900, SGLANG_TOOLPARSE_REPLACE="0"),
    }
    yield started
    for f in started.values():
        f.stop()


@pytest.fixture(scope="module")
def runs(fresh):
    return fresh["runs"].result()


@pytest.mark.slow
@pytest.mark.parametrize("native", NATIVES)
def test_launcher_serves_the_builtin_name(runs, native):
    builtin = NATIVE_NAMES[native][1]
    launcher = runs["launcher"][native]
    assert launcher["field"] == builtin
    assert launcher["env"] == native
    assert runs["builtin"][native]["env"] is None  # a builtin server clears the choice


def _child(runs, key):
    """The worker child's probe for this row (an error string if it raised)."""
    got = runs["child"][key]
    assert isinstance(got, dict), got
    return got


@pytest.mark.slow
def test_the_worker_inherits_the_first_servers_choice(runs):
    """The child is spawned from the first native server and its first row
    is that server's: the choice reached it through the environment it
    inherited, not through anything the test did in the child."""
    first = next(iter(NATIVE_NAMES))
    child = _child(runs, first)
    assert child["inherited"] is True and child["env"] == first
    assert child["detector"] == OURS
    assert [k for k in runs["child"] if _child(runs, k)["inherited"]] == [first]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["launcher", "child"])
@pytest.mark.parametrize("native", NATIVES)
def test_serving_branches_equal_the_builtin(runs, native, where):
    got = runs["launcher"][native] if where == "launcher" else _child(runs, native)
    ref = runs["builtin"][native]
    for probe in SERVING_PROBES:
        assert got[probe] == ref[probe], (probe, got[probe], ref[probe])


@pytest.mark.slow
@pytest.mark.parametrize("native", NATIVES)
def test_our_detector_parses_in_every_process(runs, native):
    assert runs["launcher"][native]["detector"] == OURS
    assert _child(runs, native)["detector"] == OURS
    assert _child(runs, native)["env"] == native  # the launcher's choice for this server
    assert runs["builtin"][native]["detector"].startswith("sglang.srt.function_call.")


@pytest.mark.slow
@pytest.mark.parametrize("native", NATIVES)
def test_reasoning_parser_side_in_every_process(runs, native):
    """`--reasoning-parser gpt-oss` next to gpt-oss_native: the native
    reasoning detector (sglang_reasoning.py) serves `gpt-oss` in the
    launcher and the children; every other server keeps SGLang's."""
    from sglang_toolparse.sglang_plugin import REASONING_PAIRS

    ours = "sglang_toolparse.sglang_reasoning"
    sglang = "sglang.srt.parser.reasoning_parser"
    want = ours if NATIVE_NAMES[native][1] in REASONING_PAIRS else sglang
    assert runs["launcher"][native]["reasoning_gpt_oss"] == want
    assert _child(runs, native)["reasoning_gpt_oss"] == want
    assert runs["builtin"][native]["reasoning_gpt_oss"] == sglang


@pytest.mark.slow
def test_a_builtin_servers_child_keeps_sglangs_class(runs):
    """The worker's last row: a server that chose the builtin name (after
    every native row in the same process: SGLang's class comes back)."""
    (key,) = [k for k in runs["child"] if k.startswith("builtin:")]
    child = _child(runs, key)
    assert child["env"] is None
    assert child["detector"].startswith("sglang.srt.function_call."), child


@pytest.mark.slow
@pytest.mark.parametrize("probe", sorted(BRANCHES))
def test_control_the_raw_native_name_takes_other_branches(runs, probe):
    """Before this fix SGLang saw `X_native`: the probes show the branch it
    then took differs (so the equality above is not vacuous)."""
    rows = [n for n in NATIVES if NATIVE_NAMES[n][1] in BRANCHES[probe]]
    if not rows:
        pytest.skip("no NATIVE_NAMES row for %s" % (BRANCHES[probe],))
    for native in rows:
        assert runs["control"][native][probe] != runs["builtin"][native][probe], (native, probe)


@pytest.mark.slow
def test_deepseek_v4_output_is_parsed_by_the_recipe(runs):
    """docs/SERVING.md: with deepseekv4(_native)/deepseekv41(_native) SGLang
    serves DeepSeek V4/V4.1 through deepseek-recipe, which parses the output
    itself (our detector is not fed the text), with or without the recipe's
    reasoning parser -- exactly as with the builtin name."""
    for native in NATIVES:
        builtin = NATIVE_NAMES[native][1]
        spec = {"deepseekv4": "dsv4", "deepseekv41": "dsv41"}.get(builtin)
        if spec is None:
            continue
        startup = runs["launcher"][native]["recipe_startup"]
        assert startup["%s/None" % spec] == "recipe parses output"
        assert runs["launcher"][native]["encoding_spec"] == spec


@pytest.mark.slow
def test_inkling_output_is_parsed_by_sglangs_token_parser(runs):
    """docs/SERVING.md: with inkling(_native) SGLang's Inkling adapter parses
    an Inkling model's output by token ids (the vendor's parser), with or
    without --reasoning-parser inkling, exactly as with the builtin name."""
    rows = [n for n in NATIVES if NATIVE_NAMES[n][1] == "inkling"]
    assert rows
    for native in rows:
        assert runs["launcher"][native]["inkling_startup"] == {"None": "token parser", "inkling": "token parser"}


DONE_WHEN = r"""
import json, os, sys
import torchvision_placeholder
torchvision_placeholder.install()  # SGLang imports torchvision; not installed here
from sglang.srt.plugins import load_plugins
load_plugins()
from sglang.srt.server_args import ServerArgs, prepare_server_args
from sglang_toolparse.sglang_plugin import NATIVE_NAMES, NATIVE_ENV
FCP = "sglang.srt.function_call.function_call_parser"
out = {"lazy": FCP not in sys.modules, "cli": {}, "python": {}}
def enum():
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    return FunctionCallParser.ToolCallParserEnum
for name in NATIVE_NAMES:
    sa = prepare_server_args(["--model-path", "m", "--tool-call-parser", name])
    if name == next(iter(NATIVE_NAMES)):
        out["lazy_after_prepare"] = FCP not in sys.modules
    cls = enum()[sa.tool_call_parser]
    out["cli"][name] = [sa.tool_call_parser, os.environ.get(NATIVE_ENV), cls.__module__, cls.parser_name]
for name in NATIVE_NAMES:  # sglang.Engine(tool_call_parser=...) builds the record in Python
    sa = ServerArgs(model_path="dummy", tool_call_parser=name)
    sa.resolve_once()
    cls = enum()[sa.tool_call_parser]
    out["python"][name] = [sa.tool_call_parser, os.environ.get(NATIVE_ENV), cls.__module__]
builtin = NATIVE_NAMES[next(iter(NATIVE_NAMES))][1]
sa = prepare_server_args(["--model-path", "m", "--tool-call-parser", builtin])
out["builtin"] = [sa.tool_call_parser, os.environ.get(NATIVE_ENV), enum()[builtin].__module__]
print("RESULT " + json.dumps(out))
"""


def test_done_when_fresh_interpreter_every_native_name(fresh):
    """In a fresh interpreter, after load_plugins(): prepare_server_args
    with X_native yields a server named X whose detector class is ours, and
    function_call_parser is still not imported by the choice itself."""
    out = fresh["done_when"].result()
    assert out["lazy"] and out["lazy_after_prepare"]
    for name, (_cls, builtin) in NATIVE_NAMES.items():
        assert out["cli"][name] == [builtin, name, OURS, name], name
        assert out["python"][name] == [builtin, name, OURS], name
    first = NATIVE_NAMES[next(iter(NATIVE_NAMES))][1]
    assert out["builtin"][0] == first and out["builtin"][1] is None
    assert out["builtin"][2].startswith("sglang.srt.function_call."), out["builtin"]


AUTO = r"""
import json, os
import serving_stub
from sglang.srt.plugins import load_plugins
load_plugins()
from sglang.srt.server_args import prepare_server_args
from sglang.srt.parser.template_detection import resolve_auto_parsers
from sglang.srt.runtime_context import get_serving, publish
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang_toolparse.sglang_plugin import NATIVE_ENV
# glm-5.3: SGLang's Python chat template, which declares tool_call_parser glm47
sa = prepare_server_args(["--model-path", serving_stub.model_dir(), "--device", "cpu",
                          "--tool-call-parser", "auto", "--chat-template", "glm-5.3"])
field = sa.tool_call_parser
sa.resolve_once()
resolve_auto_parsers(sa)  # as Engine._launch_subprocesses does
publish(sa, role="tokenizer")
name = get_serving().tool_call_parser
print("RESULT " + json.dumps([field, name, os.environ.get(NATIVE_ENV),
                              FunctionCallParser.ToolCallParserEnum[name].__module__]))
"""


@pytest.mark.parametrize("replace", ["1", "0"])
def test_auto_resolves_to_native_classes_with_replace(fresh, replace):
    """`--tool-call-parser auto` resolves through SGLang's detection to a
    builtin name; SGLANG_TOOLPARSE_REPLACE=1 makes that name ours."""
    if "glm47" not in {b for _, b in NATIVE_NAMES.values()}:
        pytest.skip("no glm47 row")
    field, name, env, module = fresh["auto" + replace].result()
    assert (field, name, env) == ("auto", "glm47", None)
    if replace == "1":
        assert module == OURS
    else:
        assert module.startswith("sglang.srt.function_call.")
