"""examples/openai_server.py read through the official openai client.

The app runs under uvicorn on 127.0.0.1 (a free port) in a thread of this
process for the module; it is stopped at the end (should_exit, bounded
join)."""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import threading
import time

import pytest

openai = pytest.importorskip("openai")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a place",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                    "required": ["city"],
                },
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}
EXPECTED_ARGS = {"location": {"city": "Zürich", "country": "CH"}, "unit": "celsius"}


def _load_example():
    spec = importlib.util.spec_from_file_location("openai_server_example", os.path.join(ROOT, "examples", "openai_server.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def base_url():
    mod = _load_example()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(mod.create_app(), host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert t.is_alive() and time.monotonic() < deadline, "example server did not start"
        time.sleep(0.05)
    yield "http://127.0.0.1:%d/v1" % port
    server.should_exit = True
    t.join(timeout=10)


@pytest.fixture(scope="module")
def client(base_url):
    c = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=30)
    yield c
    c.close()


def _ask(client, question, stream, tools=(WEATHER,)):
    return client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": question}],
        tools=list(tools) or openai.NOT_GIVEN,
        stream=stream,
    )


def _assemble(stream):
    content, calls, finish, last = [], {}, None, None
    for chunk in stream:
        last = chunk
        for ch in chunk.choices:
            d = ch.delta
            if d.content:
                content.append(d.content)
            for tc in d.tool_calls or []:
                c = calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
                c["id"] = c["id"] or tc.id
                c["name"] = c["name"] or (tc.function and tc.function.name)
                c["arguments"] += (tc.function and tc.function.arguments) or ""
            finish = ch.finish_reason or finish
    return "".join(content), [calls[i] for i in sorted(calls)], finish, last


def test_non_streaming(client):
    r = _ask(client, "Weather in Zürich?", stream=False)
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls"
    assert msg.content == "Let me look that up."
    (tc,) = msg.tool_calls
    assert tc.id.startswith("call_") and tc.function.name == "get_weather"
    assert json.loads(tc.function.arguments) == EXPECTED_ARGS
    assert r.model_extra["tool_call_errors"] == []


def test_streaming_equals_non_streaming(client):
    one = _ask(client, "Weather in Zürich?", stream=False).choices[0].message
    content, calls, finish, _ = _assemble(_ask(client, "Weather in Zürich?", stream=True))
    assert finish == "tool_calls"
    assert content == one.content
    assert [(c["name"], c["arguments"]) for c in calls] == [
        (tc.function.name, tc.function.arguments) for tc in one.tool_calls
    ]
    assert all(c["id"] for c in calls)


@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
def test_bad_calls_are_held_back_and_reported(client, stream):
    r = _ask(client, "Weather, broken please", stream=stream)
    if stream:
        content, calls, finish, last = _assemble(r)
        errors = last.model_extra["tool_call_errors"]
        names_args = [(c["name"], json.loads(c["arguments"])) for c in calls]
    else:
        msg = r.choices[0].message
        finish, errors = r.choices[0].finish_reason, r.model_extra["tool_call_errors"]
        names_args = [(tc.function.name, json.loads(tc.function.arguments)) for tc in msg.tool_calls]
    # only the valid call reaches the client
    assert names_args == [("get_weather", EXPECTED_ARGS)]
    assert finish == "tool_calls"
    assert [(e["kind"], e["name"], e["path"]) for e in errors] == [
        ("schema", "get_weather", "$.location"),
        ("unknown_tool", "rm_rf", "$"),
    ]


def test_without_tools_plain_answer(client):
    r = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content == "I have no tools, so here is a plain answer."
    assert r.choices[0].message.tool_calls is None
    assert r.choices[0].finish_reason == "stop"


# ---- every --format, and bad client input (in-process, Starlette's TestClient) ----

def _formats():
    from sglang_toolparse.bench.corpus import RENDERERS

    return sorted(RENDERERS)


@pytest.fixture(scope="module")
def example():
    return _load_example()


def _post(app, body, raw=None):
    from starlette.testclient import TestClient

    with TestClient(app) as tc:
        if raw is not None:
            return tc.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
        return tc.post("/v1/chat/completions", json=body)


def _sse_calls(text):
    content, calls, errors = [], {}, None
    for line in text.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        obj = json.loads(line[6:])
        d = obj["choices"][0]["delta"]
        content.append(d.get("content") or "")
        for tc in d.get("tool_calls") or []:
            calls[tc["index"]] = (tc["function"]["name"], json.loads(tc["function"]["arguments"]))
        if "tool_call_errors" in obj:
            errors = obj["tool_call_errors"]
    return "".join(content), [calls[i] for i in sorted(calls)], errors


@pytest.mark.parametrize("fmt", _formats())
@pytest.mark.parametrize("question", ["Weather?", "Weather, broken please"], ids=["good", "broken"])
def test_every_format_writes_and_parses_calls(example, fmt, question):
    app = example.create_app(fmt)
    body = {"model": "fake-model", "messages": [{"role": "user", "content": question}], "tools": [WEATHER]}
    r = _post(app, body)
    assert r.status_code == 200, r.text
    out = r.json()
    msg = out["choices"][0]["message"]
    assert msg["content"] == "Let me look that up."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg["tool_calls"]] == [
        ("get_weather", EXPECTED_ARGS)]
    want_errors = [] if question == "Weather?" else [("schema", "get_weather"), ("unknown_tool", "rm_rf")]
    assert [(e["kind"], e["name"]) for e in out["tool_call_errors"]] == want_errors
    r = _post(app, dict(body, stream=True))
    assert r.status_code == 200
    content, calls, errors = _sse_calls(r.text)
    assert content == "Let me look that up."
    assert calls == [("get_weather", EXPECTED_ARGS)]
    assert [(e["kind"], e["name"]) for e in errors] == want_errors


@pytest.mark.parametrize("tools", [
    WEATHER,
    "get_weather",
    [{"name_of_tool": "x"}],
    [WEATHER, WEATHER],
    [{"type": "function", "function": {"name": 5}}],
    [42],
], ids=["dict", "str", "no-name", "duplicate", "name-not-str", "int"])
@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
def test_bad_tools_get_400_with_an_openai_error_body(example, tools, stream):
    app = example.create_app("qwen25")
    r = _post(app, {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "tools": tools,
                    "stream": stream})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error" and err["param"] == "tools"
    assert "tools" in err["message"] or "tool name" in err["message"]


def test_bad_body_gets_400(example):
    app = example.create_app("hermes")
    assert _post(app, None, raw=b"{not json").status_code == 400
    assert _post(app, None, raw=b"[1, 2]").status_code == 400
    assert _post(app, {"messages": "hi"}).json()["error"]["param"] == "messages"


def test_bad_tools_through_the_openai_client(client):
    with pytest.raises(openai.BadRequestError) as ei:
        _ask(client, "hi", stream=False, tools=(WEATHER, WEATHER))
    assert ei.value.status_code == 400 and "duplicate" in str(ei.value)


def test_unknown_format_is_refused_at_startup(example):
    with pytest.raises(ValueError, match="no stand-in model output"):
        example.create_app("no-such-format")
