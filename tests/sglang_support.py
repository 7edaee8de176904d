"""Driving SGLang's FunctionCallParser the way serving_chat does."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple


def stream_through(fcp, tools, parser_name: str, chunks: Sequence[str]) -> Tuple[str, List[Tuple[str, str]]]:
    """Feeds chunks through FunctionCallParser.parse_stream_chunk and
    parse_stream_end; assembles calls per tool_index as a client would.
    Returns (text, [(name, arguments)])."""
    p = fcp.FunctionCallParser(tools, parser_name)
    text: List[str] = []
    calls: Dict[int, List[str]] = {}

    def take(t, items):
        text.append(t or "")
        for it in items:
            d = calls.setdefault(it.tool_index, ["", ""])
            if it.name:
                d[0] = it.name
            d[1] += it.parameters

    for c in chunks:
        take(*p.parse_stream_chunk(c))
    take(*p.parse_stream_end())
    return "".join(text), [tuple(calls[k]) for k in sorted(calls)]


def one_shot(fcp, tools, parser_name: str, text: str) -> Tuple[str, List[Tuple[str, str]]]:
    p = fcp.FunctionCallParser(tools, parser_name)
    normal, items = p.parse_non_stream(text)
    return normal, [(it.name, it.parameters) for it in items]
