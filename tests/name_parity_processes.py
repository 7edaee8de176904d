"""Run as a script by tests/test_name_parity_processes.py (a fresh interpreter:
the test process's own registration cannot leak in).

Acts as SGLang's launcher for one server after another: load_plugins(), then
for each name `prepare_server_args([... "--tool-call-parser", name])` and
`resolve_once()` (as launch_server.run_server does), then probes SGLang's
serving layer

  * in this process (with --tokenizer-worker-num 1 SGLang's HTTP server,
    TokenizerManager and OpenAIServingChat run in the launcher), and
  * in one child started with the `spawn` method, as an HTTP worker with
    --tokenizer-worker-num > 1 is: it inherits the environment of the first
    native server, imports the HTTP app from SGLANG_HTTP_SERVER_APP_PATH and
    probes with that server's pickled ServerArgs. It then stands in for a
    worker of every other server, one row after another (the rows of
    NATIVE_NAMES, then a server that chose a builtin name): it takes the
    environment that worker would inherit and re-runs the plugin's
    import-time installs (sglang_plugin._on_import(), what importing
    function_call_parser and the reasoning parsers runs in a fresh worker),
    then probes with that server's ServerArgs. One SGLang import serves the
    whole table (a child per row cost minutes as the table grew). A
    scheduler/detokenizer child calls load_plugins() instead; the same
    environment variable decides there.

Every probe calls SGLang's own code with the name the serving layer reads
(`get_serving().tool_call_parser`, i.e. TokenizerManager.config_value):

  served_name          the resolved name (qwen25 -> qwen by SGLang itself)
  detector             module of ToolCallParserEnum[name]
  sglang_base          the SGLang detector class it is (or subclasses)
  response_template    issubclass(cls, ResponseTemplateToolDetector)
  parses_without_tools OpenAIServingChat._tool_call_parsing_active, no tools
  glm_constraint       OpenAIServingChat._process_messages(...)'s grammar
                       constraint for a request with tools (GLM-4.7 branch)
  encoding_spec        chat_encoding.resolve_chat_encoding_spec
  recipe_startup       DeepSeekRecipeChatEncodingAdapter.__init__'s rule, for
                       each recipe spec and reasoning parser (None or the
                       recipe's own); the deepseek_recipe package (not
                       installed here) is replaced by a stub, the rule is
                       SGLang's
  inkling_startup      InklingChatEncodingAdapter.__init__'s rule (token parser
                       or text path), for reasoning parser None and 'inkling';
                       tml-renderers replaced by a stub, the rule is SGLang's
  tool_call_id         OpenAIServingChat._process_tool_call_id's id shape
  close_tokens         response_template.tool_close_token_ids (detokenizer)
  gpt_oss_detok        DetokenizerManager.init_running_status's gpt-oss check:
                       whether trim_matched_stop keeps a final <|call|> (200012)
  reasoning_gpt_oss    module of ReasoningParser.DetectorMap["gpt-oss"] (ours in
                       a gpt-oss_native server: sglang_reasoning.py)

Prints one line: RESULT {json}.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import sys
import types

import torchvision_placeholder

torchvision_placeholder.install()
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
HF_CONFIG = types.SimpleNamespace(model_type="qwen2", architectures=["Qwen2ForCausalLM"])


def _stub_recipe():
    """deepseek-recipe is an optional package; its tokenizer-level parts are
    replaced so that the adapter's start-up rule (SGLang's code) can run."""
    from sglang.srt.entrypoints.openai import serving_deepseek_recipe as m

    class StubRecipe:
        @classmethod
        def from_hf_tokenizer(cls, spec, tokenizer):
            return cls()

    m.DeepSeekRecipe = StubRecipe
    m.DeepSeekRecipeChatEncodingAdapter._encode = lambda self, body, **kw: [0]
    return m


def _sglang_base(cls):
    for c in cls.__mro__:
        if c.__module__.startswith("sglang.srt.function_call."):
            return c.__name__
    return None


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # the probe records what SGLang does, errors included
        return "error %s: %s" % (type(e).__name__, str(e)[:200])


def _inkling_startup(name, tok):
    """InklingChatEncodingAdapter.__init__'s rule (who parses an Inkling
    model's output), for reasoning parser None and 'inkling'; the vendor's
    tml-renderers is replaced by a stub (the rule is SGLang's)."""
    from sglang.srt.entrypoints.openai import serving_inkling

    real = serving_inkling.load_tml_renderers
    serving_inkling.load_tml_renderers = lambda: None
    try:
        out = {}
        for rp in (None, "inkling"):
            def build(rp=rp):
                a = serving_inkling.InklingChatEncodingAdapter(
                    tokenizer=None, reasoning_parser=rp, tool_call_parser=name, chat_hooks=None)
                return "token parser" if a.output is not None else "text path"
            out[str(rp)] = _outcome(build)
        return out
    finally:
        serving_inkling.load_tml_renderers = real


def probe(sa, served=None):
    """What SGLang's serving layer does for the server `sa` (published in
    this process). `served` overrides the name it reads (the control)."""
    import serving_stub
    from sglang.srt.entrypoints.openai import chat_encoding
    from sglang.srt.entrypoints.openai.chat_encoding_adapters import ADAPTER_OUTPUT_PARSERS
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
    from sglang.srt.function_call.core_types import ToolCallItem
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.response_template import ResponseTemplateToolDetector, tool_close_token_ids
    from sglang.srt.runtime_context import get_context, get_serving, publish

    publish(sa, role="tokenizer")
    name = served if served is not None else get_serving().tool_call_parser
    out = {"served_name": name}
    cls = FunctionCallParser.ToolCallParserEnum.get(name)
    out["detector"] = cls.__module__ if cls else None
    out["sglang_base"] = _sglang_base(cls) if cls else None
    out["response_template"] = bool(cls and issubclass(cls, ResponseTemplateToolDetector))
    tok = serving_stub.tokenizer()
    out["close_tokens"] = sorted(tool_close_token_ids(name, tok))
    out["encoding_spec"] = chat_encoding.resolve_chat_encoding_spec(
        hf_config=HF_CONFIG, tokenizer=tok, tool_call_parser=name)

    recipe = _stub_recipe()
    startup = {}
    for spec, (reasoning_name, _) in sorted(ADAPTER_OUTPUT_PARSERS.items()):
        for rp in (None, reasoning_name):
            def build(spec=spec, rp=rp):
                a = recipe.DeepSeekRecipeChatEncodingAdapter(
                    chat_encoding_spec=spec, tokenizer=tok, reasoning_parser=rp, tool_call_parser=name,
                    chat_hooks=None, default_chat_template_kwargs=None)
                return "recipe parses output" if a.output is not None else "text path"
            startup["%s/%s" % (spec, rp)] = _outcome(build)
    out["recipe_startup"] = startup
    out["inkling_startup"] = _inkling_startup(name, tok)

    class TM(serving_stub.StubTokenizerManager):
        def config_value(self, key):  # as TokenizerManager: the resolved value
            return get_context().config_leaf(key)

    def chat():
        c = OpenAIServingChat(TM(sa, []), serving_stub.TEMPLATE_MANAGER)
        c.tool_call_parser = name
        return c

    def constraint():
        c = chat()
        req = serving_stub.make_request(TOOLS, False)
        return repr(c._process_messages(req, is_multimodal=False).tool_call_constraint)

    def without_tools():
        return chat()._tool_call_parsing_active(serving_stub.make_request([], False))

    out["glm_constraint"] = _outcome(constraint)
    out["parses_without_tools"] = _outcome(without_tools)
    item = ToolCallItem(tool_index=1, name="get_weather", parameters="{}")
    tool_id = OpenAIServingChat._process_tool_call_id(types.SimpleNamespace(tool_call_parser=name), item, 2)
    out["tool_call_id"] = re.sub(r"^call_[0-9a-f]{24}$", "call_<uuid>", tool_id)
    out["gpt_oss_detok"] = _outcome(lambda: _detok_keeps_call(name))
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    rcls = ReasoningParser.DetectorMap.get("gpt-oss")
    out["reasoning_gpt_oss"] = rcls.__module__ if rcls else None
    return out


def _detok_keeps_call(name):
    """SGLang's detokenizer set up for a server whose serving name is
    `name` (get_serving() answers with it; its Watchdog stubbed): does it
    keep gpt-oss's final <|call|> token?"""
    from sglang.srt.managers import detokenizer_manager as dm

    import serving_stub

    saved = dm.Watchdog.create, dm.get_serving
    dm.Watchdog.create = staticmethod(lambda **kw: None)
    dm.get_serving = lambda: types.SimpleNamespace(tool_call_parser=name, disable_tokenizer_batch_decode=False)
    try:
        fake = types.SimpleNamespace(tokenizer=serving_stub.tokenizer())
        dm.DetokenizerManager.init_running_status(fake, None)
        return dm.DetokenizerManager.trim_matched_stop(fake, [5, 200012], {"matched": 200012}, False) == [5, 200012]
    finally:
        dm.Watchdog.create, dm.get_serving = saved


def http_worker(rows, q):
    """An HTTP worker: imports the app by path (uvicorn/granian do), then
    serves with the ServerArgs it was handed. `rows` yields (key, pickled
    ServerArgs, the launcher's NATIVE_ENV for that server) until None: the
    first is this process's own server (its environment inherited at spawn);
    each later one is another server's worker, re-created in this process."""
    import pickle

    import torchvision_placeholder

    torchvision_placeholder.install()
    from uvicorn.importer import import_from_string

    import_from_string(os.environ.get("SGLANG_HTTP_SERVER_APP_PATH", "sglang.srt.entrypoints.http_server:app"))
    from sglang_toolparse import sglang_plugin

    out = {}
    first = True
    for key, blob, env in iter(rows.get, None):
        if not first:
            _become_worker_of(sglang_plugin, env)
        res = _outcome(lambda: probe(pickle.loads(blob)))
        if isinstance(res, dict):
            res["env"] = os.environ.get(sglang_plugin.NATIVE_ENV)
            res["inherited"] = first
        out[key] = res
        first = False
    q.put(out)


def _become_worker_of(sglang_plugin, env):
    """This process as a fresh worker of another server: the environment it
    would inherit, and what importing SGLang's parser modules runs there
    (the plugin's import-time installs; its serving hooks do not depend on
    the server's choice and stay as installed)."""
    if env:
        os.environ[sglang_plugin.NATIVE_ENV] = env
    else:
        os.environ.pop(sglang_plugin.NATIVE_ENV, None)
    installs = sglang_plugin._on_import()
    for module in (sglang_plugin.FCP_MODULE, sglang_plugin.RP_MODULE):
        installs[module](sys.modules[module])


def main():
    import pickle

    from sglang.srt.plugins import load_plugins

    load_plugins()
    import serving_stub
    from sglang.srt.server_args import prepare_server_args

    from sglang_toolparse.sglang_plugin import NATIVE_ENV, NATIVE_NAMES

    names = sys.argv[1:] or list(NATIVE_NAMES)
    ctx = mp.get_context("spawn")
    out = {"launcher": {}, "child": {}, "control": {}, "builtin": {}}
    rows, results = ctx.Queue(), ctx.Queue()
    worker = None

    def server(name):
        sa = prepare_server_args(["--model-path", serving_stub.model_dir(), "--device", "cpu",
                                  "--tool-call-parser", name])
        record = {"field": sa.tool_call_parser, "env": os.environ.get(NATIVE_ENV)}
        sa.resolve_once()
        return sa, record

    def to_worker(key, sa):
        # pickled now: the record as this server handed it over
        rows.put((key, pickle.dumps(sa), os.environ.get(NATIVE_ENV)))

    for native in names:
        builtin = NATIVE_NAMES[native][1]
        sa, record = server(native)
        if worker is None:
            # the one worker: spawned from the first native server, whose
            # environment it inherits; it imports SGLang while this
            # process probes the launcher side
            worker = ctx.Process(target=http_worker, args=(rows, results), daemon=True)
            worker.start()
        to_worker(native, sa)
        record.update(probe(sa))
        out["launcher"][native] = record
        out["control"][native] = probe(sa, served=native)  # the name un-normalized
        sa, record = server(builtin)
        record.update(probe(sa))
        out["builtin"][native] = record
    # a worker of a server that chose the builtin name keeps SGLang's class
    sa, _ = server(NATIVE_NAMES[names[0]][1])
    to_worker("builtin:" + names[0], sa)
    rows.put(None)
    try:
        out["child"] = results.get(timeout=900)
    finally:
        worker.join(timeout=60)
        if worker.is_alive():
            worker.kill()
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
