"""Shared test helpers: chunkings, event merging, running a parser."""
from __future__ import annotations

import json
import random
import threading
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence

from sglang_toolparse import ArgsDelta, CallEnd, CallStart, Dropped, Markup, ParseError, Reasoning, StreamParser, Text
from sglang_toolparse.api import collect


def one_chunk(text: str) -> List[str]:
    return [text] if text else []


def char_by_char(text: str) -> List[str]:
    return list(text)


def random_split(text: str, lo: int, hi: int, seed: int = 0) -> List[str]:
    """Chunks of lo..hi characters, reproducibly random."""
    rnd = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        n = rnd.randint(lo, hi)
        out.append(text[i : i + n])
        i += n
    return out


def token_like(text: str, seed: int = 0) -> List[str]:
    """1-6 characters per chunk, like a tokenizer's output."""
    return random_split(text, 1, 6, seed)


def bursts(text: str, seed: int = 0) -> List[str]:
    """20-200 characters per chunk (speculative decoding, --stream-interval)."""
    return random_split(text, 20, 200, seed)


def fixed(n: int) -> Callable[[str], List[str]]:
    def split(text: str) -> List[str]:
        return [text[i : i + n] for i in range(0, len(text), n)]

    split.__name__ = "fixed_%d" % n
    return split


CHUNKERS: Dict[str, Callable[[str], List[str]]] = {
    "one": one_chunk,
    "chars": char_by_char,
    "tokens": token_like,
    "bursts": bursts,
    "fixed4": fixed(4),
}


def every_split(text: str) -> Iterator[List[str]]:
    """llhttp's SCAN: the text cut in two at every position."""
    for i in range(len(text) + 1):
        yield [text[:i], text[i:]]


def merge(events: Iterable) -> list:
    """Merges adjacent Text events, adjacent ArgsDelta of one call and
    Markup pieces that continue each other, so
    event lists from different chunkings can be compared. An error's raw
    text (streamed as Dropped events, in ParseError.raw one-shot) is left
    out: tests/test_lossless.py checks it."""
    out: list = []
    for ev in events:
        last = out[-1] if out else None
        if isinstance(ev, Text) and isinstance(last, Text):
            out[-1] = Text(last.text + ev.text)
        elif isinstance(ev, Reasoning) and isinstance(last, Reasoning):  # gpt_oss
            out[-1] = Reasoning(last.text + ev.text)
        elif isinstance(ev, ArgsDelta) and isinstance(last, ArgsDelta) and last.index == ev.index:
            out[-1] = ArgsDelta(ev.index, last.delta + ev.delta)
        elif isinstance(ev, Text) and not ev.text:
            continue
        elif isinstance(ev, Dropped):  # an error's raw text: tests/test_lossless.py checks it
            continue
        elif (isinstance(ev, Markup) and isinstance(last, Markup)
              and last.offset + len(last.raw.encode("utf-8", "surrogatepass")) == ev.offset):
            out[-1] = Markup(last.offset, last.raw + ev.raw)  # the message's framing, in pieces
        elif isinstance(ev, ParseError) and ev.raw_offset is not None:
            out.append(ev.with_raw("", None))
        else:
            out.append(ev)
    return out


def run(fmt: str, chunks: Sequence[str], tools=None, **opts) -> list:
    """Feeds `chunks` then finishes; returns the merged events."""
    p = StreamParser(fmt, tools, **opts)
    events: list = []
    for c in chunks:
        events += p.feed(c)
    events += p.finish()
    return merge(events)


def _not_json(token: str):
    raise ValueError("%s is not JSON (RFC 8259)" % token)


def strict_json_loads(text: str):
    """json.loads for strict JSON (RFC 8259): NaN, Infinity and -Infinity
    are rejected (a number past a double is JSON)."""
    return json.loads(text, parse_constant=_not_json)


def check_stream_invariants(events: list) -> None:
    """Per-call protocol: start, deltas, then exactly one end or error;
    deltas concatenate to the end's arguments, which are strict JSON."""
    open_: Dict[int, List[str]] = {}
    names: Dict[int, str] = {}
    closed = set()
    expected_index = 0
    for ev in events:
        if isinstance(ev, CallStart):
            assert ev.index == expected_index, (ev, expected_index)
            expected_index += 1
            assert not open_, "a call started while another is open"
            open_[ev.index] = []
            names[ev.index] = ev.name
        elif isinstance(ev, ArgsDelta):
            assert ev.index in open_, ev
            open_[ev.index].append(ev.delta)
        elif isinstance(ev, CallEnd):
            assert ev.index in open_, ev
            assert ev.name == names[ev.index]
            assert "".join(open_.pop(ev.index)) == ev.arguments
            strict_json_loads(ev.arguments)
            closed.add(ev.index)
        elif isinstance(ev, ParseError):
            if ev.index is not None:
                assert ev.index in open_, ev
                open_.pop(ev.index)
                closed.add(ev.index)
    assert not open_, "calls left open at end of stream: %r" % open_


def summary(events: list):
    """(text, [(name, arguments)] of the complete calls, [error codes]) of an
    event list (incomplete calls: tests/test_lossless.py)."""
    r = collect(events)
    return r.text, [(c.name, c.arguments) for c in r.complete_calls], [e.code for e in r.errors]


def tools_of(*names: str, schema: Optional[dict] = None) -> List[dict]:
    """OpenAI-style tool dicts."""
    return [
        {"type": "function", "function": {"name": n, "parameters": schema or {"type": "object", "properties": {}}}}
        for n in names
    ]


def random_value(rnd, key_chars: str, str_chars: str, min_key: int = 1, depth: int = 0):
    """A random JSON-able value (lists and dicts to depth 3, strings of
    `str_chars`, keys of `key_chars`, big ints, awkward floats, booleans,
    None) for template round trips: a format's renderer writes it, the
    parser must read back the same value."""
    r = rnd.random()
    if depth < 3 and r < 0.15:
        return [random_value(rnd, key_chars, str_chars, min_key, depth + 1) for _ in range(rnd.randint(0, 3))]
    if depth < 3 and r < 0.3:
        return {"".join(rnd.choice(key_chars) for _ in range(rnd.randint(min_key, 4))):
                random_value(rnd, key_chars, str_chars, min_key, depth + 1) for _ in range(rnd.randint(0, 3))}
    if r < 0.55:
        return "".join(rnd.choice(str_chars) for _ in range(rnd.randint(0, 8)))
    if r < 0.7:
        return rnd.randint(-10**20, 10**20)
    if r < 0.85:
        return rnd.choice([0.0, -0.0, 1.5, 1e-7, 1e22, -2.5e300, 123456.789, rnd.random()])
    return rnd.choice([True, False, None])


def in_threads(step: Callable[[], None], times: int, threads: int = 4) -> list:
    """Run `step` `times` times in each of `threads` threads at once; the
    exceptions they raised (none when every step passed)."""
    errors: list = []

    def work():
        try:
            for _ in range(times):
                step()
        except Exception as e:  # reported to the caller
            errors.append(e)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return errors
