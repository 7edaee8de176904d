"""The SGLang adapter never raises on adversarial model output: every
format's detector (found generically: the adapter classes naming the format)
is driven with the adversarial inputs, streamed and one-shot."""
from __future__ import annotations

import json
import logging
import random

import pytest

from format_table import markers, seed_responses, spec
from sglang_toolparse._core import formats

adapter = pytest.importorskip("sglang_toolparse.sglang_adapter")

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
         for n in ("get_weather", "search", "f")]


def detector_classes(fmt):
    return [c for c in vars(adapter).values()
            if isinstance(c, type) and issubclass(c, adapter.NativeDetectorMixin)
            and getattr(c, "_tp_format", None) == fmt]


def adversarial_inputs(fmt):
    s = spec(fmt)
    out = ["", "plain prose \x00 \ud800", "".join(markers(fmt)) * 50]
    if s.render_call is not None:
        if s.json_args:
            out.append(s.response("x", [("f", "[" * 200_000 + "]" * 200_000)]))
            out.append(s.response("x", [("f", '{"s": "a\x00b"}')], "after"))
        out.append(s.response("x", [("rm_rf", "{}"), ("f", '{"a": 1}')]))
        out.append(s.response("", [("f", '{"i": %d}' % i) for i in range(2000)]))
        full = s.response("Checking. ", [("get_weather", '{"city": "Paris"}')])
        out += [full[:i] for i in range(0, len(full), 3)]
    rnd = random.Random(9)
    seeds = seed_responses(fmt) or out[1:3]
    for _ in range(50):
        t = list(rnd.choice(seeds))
        for _ in range(4):
            t.insert(rnd.randint(0, len(t)), rnd.choice(list(markers(fmt)) + ["\ud800", "\x00", "}"]))
        out.append("".join(t))
    return out


@pytest.mark.parametrize("fmt", formats())
def test_adapter_never_raises(fmt, caplog):
    classes = detector_classes(fmt)
    if not classes:
        pytest.skip("no SGLang detector maps to format %s" % fmt)
    caplog.set_level(logging.CRITICAL, logger="sglang_toolparse")
    rnd = random.Random(1)
    for cls in classes:
        for text in adversarial_inputs(fmt):
            r = cls().detect_and_parse(text, TOOLS)
            d = cls()
            i = 0
            streamed, content = {}, []
            results = []
            chunks = []
            while i < len(text):
                n = rnd.choice([1, 2, 5, 64, 4096, 65536])
                chunks.append(text[i:i + n])
                results.append(d.parse_streaming_increment(chunks[-1], TOOLS))
                i += n
            results.append(d.finish(TOOLS))
            for res in results:
                content.append(res.normal_text)
                for c in res.calls:
                    got = streamed.setdefault(c.tool_index, [None, ""])
                    got[0] = got[0] or c.name
                    got[1] += c.parameters
            if getattr(cls, "_tp_hands_over", None) and cls._tp_hands_over(text):
                # SGLang's own detector parses it (k2_horizon's JSON dialect):
                # what the builtin gives, one-shot and with the same chunks
                builtin = [b for b in cls.__mro__ if b.__module__.startswith("sglang.srt.function_call.")][0]
                w, bd = builtin().detect_and_parse(text, TOOLS), builtin()
                assert (r.normal_text, r.calls) == (w.normal_text, w.calls)
                want = [bd.parse_streaming_increment(c, TOOLS) for c in chunks] + [bd.finish(TOOLS)]
                assert ("".join(x.normal_text for x in results), [c for x in results for c in x.calls]) == \
                    ("".join(x.normal_text for x in want), [c for x in want for c in x.calls])
                continue
            # the one-shot message is what the stream sent (issue 18.2):
            # content, and every call, cut-off and broken ones included
            assert r.normal_text == "".join(content)
            assert [(c.name, c.parameters) for c in r.calls] == [tuple(streamed[k]) for k in sorted(streamed)]
            for k, c in enumerate(r.calls):  # complete calls: valid JSON arguments
                if k not in d.incomplete_tool_call_indices:
                    json.loads(c.parameters)
            # every started call's streamed arguments are consistent state
            for k, args in enumerate(d.streamed_args_for_tool):
                assert isinstance(args, str)
                prev = d.prev_tool_call_arr[k]
                # a completed call holds exactly what was streamed; a call
                # cut off holds "" (nothing for the serving layer to add)
                assert prev.get("arguments") in (args, "")
