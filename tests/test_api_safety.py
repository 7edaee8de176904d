"""Misuse of a StreamParser from Python: a parser whose initialization did
not run, two threads or a re-entrant callback on one parser, copying and
pickling. Each gives a clear exception, never a crash or a read of memory
the core may have moved (docs/SEMANTICS.md, "Using a parser").

The cases that used to kill the interpreter (SIGSEGV) run in a child
process, so a regression fails its test instead of taking pytest down."""
from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap
import threading

import pytest

import sglang_toolparse
from sglang_toolparse import StreamParser, parse
from sglang_toolparse import _core
from sglang_toolparse.api import collect

PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(sglang_toolparse.__file__)))
QWEN_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def run_child(code: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter that imports this copy of the
    package (the sanitized one under scripts/sanitize-tests.sh)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


# ---- a parser whose initialization did not run ---------------------------------

UNINIT_CHILD = """
    import sys
    from sglang_toolparse import StreamParser
    from sglang_toolparse import _core

    class NoSuper(StreamParser):
        def __init__(self):
            pass  # forgets super().__init__()

    class CoreNoSuper(_core.StreamParser):
        def __init__(self, *a, **k):
            pass

    made = {
        "core.__new__": lambda: _core.StreamParser.__new__(_core.StreamParser),
        "api.__new__": lambda: StreamParser.__new__(StreamParser),
        "subclass": NoSuper,
        "core subclass": lambda: CoreNoSuper("qwen25"),
    }
    uses = {
        "feed": lambda p: p.feed("x"),
        "feed('')": lambda p: p.feed(""),
        "feed(call)": lambda p: p.feed('<tool_call>{"name": "a", "arguments": {}}</tool_call>'),
        "finish": lambda p: p.finish(),
        "offset": lambda p: p.offset,
        "feed after finish": lambda p: (p.finish(), p.feed("x")),
    }
    for mname, make in made.items():
        for uname, use in uses.items():
            p = make()
            try:
                use(p)
            except RuntimeError as e:
                assert "not initialized" in str(e), (mname, uname, e)
            else:
                sys.exit("no RuntimeError: %s / %s" % (mname, uname))
            del p
    print("ALL RAISED")
"""


def test_uninitialized_parser_raises_in_a_child_process():
    r = run_child(UNINIT_CHILD)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    assert "ALL RAISED" in r.stdout


def test_uninitialized_then_initialized_in_a_child_process():
    """__init__ may still run on a parser created by __new__; it then works
    for every format."""
    code = """
        from sglang_toolparse import _core
        for fmt in _core.formats():
            p = _core.StreamParser.__new__(_core.StreamParser)
            for use in (lambda: p.feed("<tool_call>x"), p.finish, lambda: p.offset):
                try:
                    use()
                except RuntimeError as e:
                    assert "not initialized" in str(e), e
                else:
                    raise SystemExit("no RuntimeError for " + fmt)
            p.__init__(fmt)
            assert isinstance(p.feed("hello") + p.finish(), list)
        print("OK")
    """
    r = run_child(code)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


def test_failed_init_leaves_an_uninitialized_parser_in_a_child_process():
    """A bad argument is found before the core state exists: the object is
    left uninitialized (its methods raise), never half-built."""
    code = """
        from sglang_toolparse import _core

        class Keep(_core.StreamParser):
            def __init__(self, *a, **k):
                try:
                    super().__init__(*a, **k)
                except (TypeError, ValueError):
                    pass

        for args, kw in [(("qwen25", ["a", 1]), {}), (("qwen25", ["a", "a"]), {}),
                         (("qwen25",), {"max_buffer": 0}), (("nope",), {}),
                         (("glm45", ["a"]), {"string_params": {"a": [3]}})]:
            p = Keep(*args, **kw)
            try:
                p.feed("x")
            except RuntimeError as e:
                assert "not initialized" in str(e), e
            else:
                raise SystemExit("half-built parser accepted feed: %r %r" % (args, kw))
        print("OK")
    """
    r = run_child(code)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


def test_reinit_is_refused():
    p = StreamParser("qwen25", ["get_weather"])
    with pytest.raises(RuntimeError, match="re-initialized"):
        p.__init__("qwen25")
    assert collect(p.feed(QWEN_CALL) + p.finish()).calls[0].name == "get_weather"


# ---- one parser, two callers ---------------------------------------------------

class ReentrantConverter:
    """A GLM converter that feeds its own parser while the parser is in the
    middle of decoding a batch (the case that read freed memory)."""

    def __init__(self):
        self.parser = None
        self.seen = []

    def begin(self, name):
        return False

    def value(self, key, raw):
        for use in (lambda: self.parser.feed("<tool_call>x"), self.parser.finish,
                    lambda: self.parser.feed("")):
            try:
                use()
            except RuntimeError as e:
                self.seen.append(str(e))
            else:
                self.seen.append(None)
        return '"%s"' % raw.strip("'")

    def end(self):
        return "{}"

    def reset(self):
        pass


# 'v' is Python literal syntax: the core hands it to the converter (a plain v
# it would type itself, and no Python would run while decoding)
GLM_CALL = "<tool_call>f\n<arg_key>k</arg_key>\n<arg_value>'v'</arg_value>\n</tool_call>"


def test_reentrant_feed_raises_for_the_inner_caller():
    conv = ReentrantConverter()
    p = _core.StreamParser("glm45", ["f"], converter=conv)
    conv.parser = p
    res = collect(p.feed("A " + GLM_CALL + " B") + p.finish())
    assert conv.seen and all(s is not None and "already running" in s for s in conv.seen), conv.seen
    # the outer call completed normally and the parser is usable afterwards
    assert [c[:3] for c in res.calls] == [(0, "f", '{"k": "v"}')]
    assert res.text == "A B"


def test_reentrant_use_in_a_child_process():
    """The same, for every format, in a child process: a regression that
    crashes shows as a failed test."""
    code = """
        from sglang_toolparse import _core
        class Conv:
            def __init__(self): self.p = None; self.n = 0
            def begin(self, name): return False
            def value(self, key, raw):
                try:
                    self.p.feed("x" * 100000)
                except RuntimeError:
                    self.n += 1
                return '"v"'
            def end(self): return "{}"
            def reset(self): pass
        for fmt in ("glm45", "glm47"):
            sep = "\\n" if fmt == "glm45" else ""
            # values only the host's (Python) rules type: the converter runs
            value = "'v'" if fmt == "glm45" else '{"a": 1, "a": 2}'
            call = "<tool_call>f" + sep + "<arg_key>k</arg_key>" + sep + "<arg_value>" + value + "</arg_value>" + sep + "</tool_call>"
            c = Conv(); p = _core.StreamParser(fmt, ["f"], converter=c); c.p = p
            for ch in (call * 50):
                p.feed(ch)
            p.finish()
            assert c.n == 50, (fmt, c.n)
        print("OK")
    """
    r = run_child(code)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


def test_second_thread_gets_runtime_error():
    """Thread A is inside feed() (in the converter, the one place the
    binding runs Python while decoding); thread B's feed/finish raise
    RuntimeError at once, and A's result is intact."""
    inside = threading.Event()
    release = threading.Event()
    errors = []

    class Blocking(ReentrantConverter):
        def value(self, key, raw):
            inside.set()
            assert release.wait(30)
            return '"%s"' % raw.strip("'")

    conv = Blocking()
    p = _core.StreamParser("glm45", ["f"], converter=conv)
    out = []
    a = threading.Thread(target=lambda: out.extend(p.feed(GLM_CALL)))
    a.start()
    assert inside.wait(30)
    for use in (lambda: p.feed("B"), p.finish):
        try:
            use()
        except RuntimeError as e:
            errors.append(str(e))
    release.set()
    a.join(30)
    assert not a.is_alive()
    assert len(errors) == 2 and all("already running" in e for e in errors), errors
    res = collect(out + p.finish())
    assert [c[:3] for c in res.calls] == [(0, "f", '{"k": "v"}')]


def test_converter_exception_leaves_the_parser_usable():
    class Boom(ReentrantConverter):
        def value(self, key, raw):
            raise KeyError("boom")

    p = _core.StreamParser("glm45", ["f"], converter=Boom())
    with pytest.raises(KeyError):
        p.feed(GLM_CALL)
    # not stuck "busy": later calls run (what the core had decoded is gone)
    assert isinstance(p.feed("after"), list)
    assert isinstance(p.finish(), list)


def test_many_threads_many_parsers_stress():
    """One parser per thread (the supported use) under contention: every
    thread gets exactly the single-threaded result."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"k": {"type": "string"}, "n": {"type": "integer"}}}}}]
    call = "<tool_call>f\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n<arg_key>n</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
    text = ("x " + call) * 20
    want = parse("glm45", text, tools)
    bad = []

    def work():
        for _ in range(5):
            p = StreamParser("glm45", tools)
            evs = []
            for i in range(0, len(text), 3):
                evs += p.feed(text[i:i + 3])
            if collect(evs + p.finish()) != want:
                bad.append(1)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not bad


def test_shared_parser_across_threads_never_crashes_in_a_child():
    """Misuse: four threads feed ONE GLM parser with a converter that runs
    Python. Each feed either completes or raises RuntimeError; the process
    survives and no event carries garbage."""
    code = """
        import threading, sys
        from sglang_toolparse import StreamParser
        tools = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"n": {"type": "integer"}, "o": {"type": "object"}}}}}]
        call = '<tool_call>f\\n<arg_key>n</arg_key>\\n<arg_value>12</arg_value>\\n<arg_key>o</arg_key>\\n<arg_value>{"a": [1, 2]}</arg_value>\\n</tool_call>'
        p = StreamParser("glm45", tools)
        sys.setswitchinterval(1e-6)
        stats = {"ok": 0, "busy": 0}
        lock = threading.Lock()
        def work():
            for _ in range(300):
                try:
                    evs = p.feed(call)
                except RuntimeError as e:
                    assert "already running" in str(e), e
                    with lock: stats["busy"] += 1
                    continue
                for e in evs:
                    for attr in ("text", "delta", "arguments", "name"):
                        v = getattr(e, attr, None)
                        if isinstance(v, str):
                            v.encode("utf-8", "surrogatepass")
                with lock: stats["ok"] += 1
        ts = [threading.Thread(target=work) for _ in range(4)]
        [t.start() for t in ts]; [t.join() for t in ts]
        assert stats["ok"] + stats["busy"] == 1200, stats
        print("OK", stats)
    """
    r = run_child(code)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


# ---- copy / pickle -------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: StreamParser("qwen25", ["get_weather"]),
    lambda: _core.StreamParser("glm45", ["f"]),
], ids=["api", "core"])
@pytest.mark.parametrize("how", [
    pickle.dumps, copy.copy, copy.deepcopy,
    lambda p: pickle.dumps(p, protocol=0), lambda p: pickle.dumps(p, protocol=5),
], ids=["pickle", "copy", "deepcopy", "pickle0", "pickle5"])
def test_copy_and_pickle_raise_a_plain_type_error(make, how):
    p = make()
    with pytest.raises(TypeError, match="create one parser per stream") as ei:
        how(p)
    assert "__reduce" not in str(ei.value) and "cython" not in str(ei.value).lower()


def test_parser_still_works_after_a_refused_copy():
    p = StreamParser("qwen25", ["get_weather"])
    p.feed("Hi ")
    with pytest.raises(TypeError):
        copy.deepcopy(p)
    res = collect(p.feed(QWEN_CALL) + p.finish())
    assert res.calls[0].arguments == '{"city": "Paris"}'
