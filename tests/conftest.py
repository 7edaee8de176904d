import os
import sys

import pytest

# tests import their helpers as `support`, `strategies`
sys.path.insert(0, os.path.dirname(__file__))


def _load_sglang():
    """Imports SGLang's function_call_parser after loading plugins (as the
    server does). Skips when SGLang is absent, unless CI demands it."""
    try:
        from sglang.srt.plugins import load_plugins

        load_plugins()
        from sglang.srt.function_call import function_call_parser
    except ImportError as e:  # pragma: no cover - depends on the machine
        if os.environ.get("TOOLPARSE_REQUIRE_SGLANG") == "1":
            raise
        pytest.skip("SGLang not installed: %s" % e)
    return function_call_parser


@pytest.fixture(scope="session")
def fcp():
    """sglang.srt.function_call.function_call_parser, plugins loaded."""
    return _load_sglang()


@pytest.fixture(scope="session")
def sglang_tool():
    """Builds SGLang Tool models from names."""
    _load_sglang()
    from sglang.srt.entrypoints.openai.protocol import Tool

    def make(*names, parameters=None):
        return [
            Tool(type="function", function={"name": n, "parameters": parameters or {"type": "object", "properties": {}}})
            for n in names
        ]

    return make


@pytest.fixture(autouse=True)
def _server_choice_does_not_leak():
    """A test that builds a server with a native name (prepare_server_args,
    ServerArgs.resolve_once) makes that choice for this process, as a
    launcher does; the next test starts without it."""
    yield
    if os.environ.get("SGLANG_TOOLPARSE_NATIVE"):
        from sglang_toolparse.sglang_plugin import set_chosen_native

        set_chosen_native(None)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running; skipped by the sanitized run")
