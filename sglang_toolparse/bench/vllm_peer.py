"""vLLM's Rust tool parser as an optional side of the bench.

vllm 0.26-0.31 wheels ship `vllm/_rust_tool_parser.abi3.so`, a PyO3 module
(Python >= 3.8 stable ABI) with native parsers for three formats. Its API,
found by introspection of the 0.31.0 module:

    Tool(name, description, parameters, strict=None)
    ToolParser(parser_name, tools)        # "DeepSeekV4ToolParser", "KimiK2ToolParser",
                                          # "MinimaxM3ToolParser"; else ValueError
        .parse_into(chunk, output)        # appends this chunk's results to output
        .finish() -> ToolParserOutput     # flushes held-back text / an open call
        .tool_call_id(tool_index)         # the model's own id (Kimi-K2), else None
        .reset(), .preserve_special_tokens()
    ToolParserOutput(normal_text="", calls=None)
        .normal_text, .calls -> [ToolCallDelta(tool_index, name, arguments)]
        .append(other), .coalesce()

vLLM drives it (vllm/tool_parsers/rust_tool_parser.py) with a fresh
ToolParserOutput per streamed chunk, and one-shot as parse_into(whole text),
append(finish()), coalesce(). The bench does the same, without vLLM's
pydantic protocol objects: it is compared with our standalone API, which
also returns plain Python objects.

The module is found, in order: the path in SGLANG_TOOLPARSE_VLLM_RUST_PARSER
(or `bench --vllm-rust-parser PATH`), then an installed vllm package (the .so
is loaded from its directory without importing vllm). It is never required:
without it the side is absent and the bench says why.
scripts/get-vllm-rust-parser.sh extracts the module from a vllm wheel.
"""
from __future__ import annotations

import importlib.util
import os
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

ENV = "SGLANG_TOOLPARSE_VLLM_RUST_PARSER"
MODULE_FILE = "_rust_tool_parser.abi3.so"

# our core format name -> vLLM's Rust parser name (same wire format).
# MinimaxM3ToolParser has no counterpart here (MiniMax-M3's markup is not
# MiniMax-M2's).
PARSERS: Dict[str, str] = {
    "deepseekv4": "DeepSeekV4ToolParser",
    "kimi_k2": "KimiK2ToolParser",
}


class Peer:
    """The loaded module, or why it is not available."""

    def __init__(self, module: Any = None, path: Optional[str] = None, error: Optional[str] = None) -> None:
        self.module, self.path, self.error = module, path, error

    @property
    def ok(self) -> bool:
        return self.module is not None

    def sha256(self) -> Optional[str]:
        """The module file's hash (the module does not carry vLLM's version)."""
        if self.path is None:
            return None
        import hashlib

        with open(self.path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def supports(self, core: str) -> bool:
        if not self.ok or core not in PARSERS:
            return False
        try:
            self.module.ToolParser(PARSERS[core], [])
            return True
        except Exception:
            return False

    def tools(self, tools: Sequence[Dict[str, Any]]) -> List[Any]:
        out = []
        for t in tools:
            f = t.get("function", t)
            out.append(self.module.Tool(f["name"], f.get("description"), f.get("parameters") or {}, f.get("strict")))
        return out


def _load_file(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("vllm._rust_tool_parser", path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s" % path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("Tool", "ToolParser", "ToolParserOutput"):
        if not hasattr(mod, name):
            raise ImportError("%s has no %s: not vLLM's Rust tool parser" % (path, name))
    return mod


def load(path: Optional[str] = None) -> Peer:
    """The peer from `path`, $SGLANG_TOOLPARSE_VLLM_RUST_PARSER or an
    installed vllm; Peer(error=...) when none is usable."""
    path = path or os.environ.get(ENV) or None
    if path:
        if os.path.isdir(path):
            path = os.path.join(path, MODULE_FILE)
        try:
            return Peer(_load_file(path), path)
        except Exception as e:
            return Peer(error="%s: %s: %s" % (path, type(e).__name__, e))
    try:
        spec = importlib.util.find_spec("vllm")
    except Exception:
        spec = None
    for d in (spec.submodule_search_locations or []) if spec else []:
        cand = os.path.join(d, MODULE_FILE)
        if os.path.exists(cand):
            try:
                return Peer(_load_file(cand), cand)
            except Exception as e:
                return Peer(error="%s: %s: %s" % (cand, type(e).__name__, e))
    return Peer(error="vLLM's Rust tool parser not found (set %s to its %s; "
                      "scripts/get-vllm-rust-parser.sh extracts it from a vllm wheel)" % (ENV, MODULE_FILE))


def stream_start(peer: Peer, core: str, tools: Sequence[Dict[str, Any]]):
    """(feed, end) for one stream, as vLLM's adapter drives the parser."""
    mod = peer.module
    rtools = peer.tools(tools)
    name = PARSERS[core]

    def start():
        p = mod.ToolParser(name, rtools)
        Out = mod.ToolParserOutput
        parse_into = p.parse_into

        def feed(chunk: str) -> Any:
            o = Out()
            parse_into(chunk, o)
            return o

        return feed, p.finish

    return start


def assemble(outputs: Sequence[Any]) -> Tuple[str, List[Tuple[str, str]]]:
    """(text, [(name, arguments)]) from ToolParserOutputs (per tool_index:
    the first name, arguments concatenated)."""
    text: List[str] = []
    calls: Dict[int, List[Any]] = {}
    for o in outputs:
        if o is None:
            continue
        if o.normal_text:
            text.append(o.normal_text)
        for d in o.calls:
            c = calls.setdefault(d.tool_index, [None, []])
            if d.name and c[0] is None:
                c[0] = d.name
            if d.arguments:
                c[1].append(d.arguments)
    return "".join(text), [(c[0] or "", "".join(c[1])) for _, c in sorted(calls.items())]


def one_shot(peer: Peer, core: str, tools: Sequence[Dict[str, Any]]):
    """(parse, read): parse(text) parses a complete response the way vLLM
    does (fresh parser, parse_into, finish, coalesce) and returns vLLM's
    output; read(output) -> (text, [(name, arguments)])."""
    mod = peer.module
    rtools = peer.tools(tools)
    name = PARSERS[core]

    def parse(text: str) -> Any:
        p = mod.ToolParser(name, rtools)
        o = mod.ToolParserOutput()
        p.parse_into(text, o)
        o.append(p.finish())
        return o.coalesce()

    def read(o: Any) -> Tuple[str, List[Tuple[str, str]]]:
        return o.normal_text, [(c.name or "", c.arguments or "") for c in o.calls]

    return parse, read


def describe(peer: Peer) -> Dict[str, Any]:
    return {"available": peer.ok, "path": peer.path, "error": peer.error,
            "sha256": peer.sha256() if peer.ok else None,
            "formats": sorted(c for c in PARSERS if peer.supports(c)) if peer.ok else [],
            "checked": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
