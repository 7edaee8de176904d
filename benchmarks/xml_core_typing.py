"""Qwen3-Coder / MiniMax-M2 figures of one build, CPU clock (thread_time), min of
7 repeats, in microseconds: standalone feed of 20-200-char bursts (parser
construction included, per chunk), parser construction with a warm cache
(same list; an equal new list), one-shot chat and 16 KB argument through
sglang_toolparse.parse and through FunctionCallParser.parse_non_stream
(native and SGLang builtin). Compare builds by running it with each on
PYTHONPATH, alternately:

    PYTHONPATH=. python benchmarks/xml_core_typing.py
"""
import json, logging, sys, time
logging.disable(logging.CRITICAL)
from sglang_toolparse import api
from sglang_toolparse.bench import corpus
import sglang_toolparse.sglang_plugin as plug; plug.register()
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.entrypoints.openai.protocol import Tool

def best(f, n):
    f(); b = 1e18
    for _ in range(7):
        t = time.thread_time_ns()
        for _ in range(n): f()
        b = min(b, (time.thread_time_ns() - t) / n / 1000)
    return b

out = {}
dtools = corpus.TOOLS
mtools = [Tool(**t) for t in dtools]
for fmt, sgname in (("qwen3_coder", "qwen3_coder"), ("minimax_m2", "minimax-m2")):
    nat = {"qwen3_coder": "qwen3_coder_native", "minimax_m2": "minimax-m2_native"}[fmt]
    r = {}
    case = corpus.render_case(corpus.make_scenario("bursts3"), fmt)
    chunks = case.chunks
    def burst():
        p = api.StreamParser(fmt, dtools)
        for c in chunks: p.feed(c)
        p.finish()
    r["burst_us_per_chunk"] = best(burst, 300) / len(chunks)
    r["burst_chunks"] = len(chunks)
    r["construct_same_list"] = best(lambda: api.StreamParser(fmt, dtools), 3000)
    r["construct_equal_list"] = best(lambda: api.StreamParser(fmt, json.loads(json.dumps(dtools))), 1000) - best(lambda: json.loads(json.dumps(dtools)), 1000)
    chat = corpus.render_case(corpus.make_scenario("chat"), fmt).text
    r["oneshot_chat_standalone"] = best(lambda: api.parse(fmt, chat, dtools), 2000)
    r["oneshot_chat_native_fcp"] = best(lambda: FunctionCallParser(mtools, nat).parse_non_stream(chat), 1000)
    r["oneshot_chat_sglang_fcp"] = best(lambda: FunctionCallParser(mtools, sgname).parse_non_stream(chat), 1000)
    big = corpus.render_case(corpus.make_scenario("args16k"), fmt).text
    r["oneshot_16k_standalone"] = best(lambda: api.parse(fmt, big, dtools), 200)
    r["oneshot_16k_native_fcp"] = best(lambda: FunctionCallParser(mtools, nat).parse_non_stream(big), 200)
    out[fmt] = r
r = {}
r["construct_qwen25_same_list"] = best(lambda: api.StreamParser("qwen25", dtools), 3000)
out["json"] = r
print(json.dumps(out))
