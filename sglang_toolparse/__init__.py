"""sglang-toolparse: fast, exact streaming tool-call parsers with a C core.

Standalone use (no SGLang needed)::

    from sglang_toolparse import StreamParser, parse

    p = StreamParser("qwen25", tools)        # tools: OpenAI dicts, names or SGLang Tools
    for chunk in model_stream:
        for ev in p.feed(chunk):
            ...                               # Text / CallStart / ArgsDelta / CallEnd / ParseError
                                              # (gpt-oss: Reasoning; Dropped: an error's raw text;
                                              #  Markup: framing of the message)
    tail = p.finish()

    result = parse("hermes", full_text, tools) # .text, .calls (c.complete), .errors
"""
from sglang_toolparse._core import (
    DEFAULT_LIMITS,
    MAX_DEPTH_CAP,
    ArgsDelta,
    CallEnd,
    CallStart,
    Dropped,
    Event,
    Markup,
    ParseError,
    Reasoning,
    Text,
)
from sglang_toolparse.api import (
    FORMAT_ALIASES,
    ParseResult,
    StreamParser,
    ToolCall,
    available_formats,
    parse,
    tool_names,
)

__all__ = [
    "ArgsDelta",
    "CallEnd",
    "CallStart",
    "DEFAULT_LIMITS",
    "Dropped",
    "Event",
    "FORMAT_ALIASES",
    "MAX_DEPTH_CAP",
    "Markup",
    "ParseError",
    "ParseResult",
    "Reasoning",
    "StreamParser",
    "Text",
    "ToolCall",
    "available_formats",
    "parse",
    "tool_names",
]
__version__ = "0.1.0"
