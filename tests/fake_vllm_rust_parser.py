"""A stand-in for vLLM's `_rust_tool_parser` module with the same Python
API (see sglang_toolparse/bench/vllm_peer.py), implemented over our own
StreamParser. It lets CI exercise the bench's `vllm` side (loading by path,
streaming and one-shot plumbing, report columns) without the 320 MB wheel;
the real module is measured with scripts/get-vllm-rust-parser.sh."""
from __future__ import annotations

from sglang_toolparse import ArgsDelta, CallStart, StreamParser, Text

_FORMATS = {"DeepSeekV4ToolParser": "deepseekv4"}


class Tool:
    def __init__(self, name, description, parameters, strict=None):
        self.name, self.description, self.parameters, self.strict = name, description, parameters, strict


class ToolCallDelta:
    def __init__(self, tool_index, name, arguments):
        self.tool_index, self.name, self.arguments = tool_index, name, arguments


class ToolParserOutput:
    def __init__(self, normal_text="", calls=None):
        self.normal_text = normal_text
        self.calls = list(calls or [])

    def append(self, other):
        self.normal_text += other.normal_text
        self.calls.extend(other.calls)

    def coalesce(self):
        merged = {}
        for d in self.calls:
            m = merged.setdefault(d.tool_index, [None, ""])
            m[0] = m[0] or d.name
            m[1] += d.arguments or ""
        return ToolParserOutput(self.normal_text, [ToolCallDelta(i, n, a) for i, (n, a) in sorted(merged.items())])


class ToolParser:
    def __init__(self, parser_name, tools):
        if parser_name not in _FORMATS:
            raise ValueError("unsupported tool parser `%s`" % parser_name)
        self._p = StreamParser(_FORMATS[parser_name], [
            {"type": "function", "function": {"name": t.name, "parameters": t.parameters}} for t in tools])

    def _emit(self, events, output):
        for ev in events:
            if type(ev) is Text:
                output.normal_text += ev.text
            elif type(ev) is CallStart:
                output.calls.append(ToolCallDelta(ev.index, ev.name, None))
            elif type(ev) is ArgsDelta:
                output.calls.append(ToolCallDelta(ev.index, None, ev.delta))

    def parse_into(self, chunk, output):
        self._emit(self._p.feed(chunk), output)

    def finish(self):
        out = ToolParserOutput()
        self._emit(self._p.finish(), out)
        return out

    def tool_call_id(self, tool_index):
        return None
