"""Drives SGLang's real OpenAIServingChat on the CPU, without a model.

Only the TokenizerManager is replaced: `StubTokenizerManager` carries real
`ServerArgs` (published as SGLang's HTTP process does), a real (tiny,
byte-level) HF tokenizer with a chat template, and a `generate_request`
that yields canned model output shaped like TokenizerManager's output
dicts: `text` cumulative by default, the increment with
--incremental-streaming-output, `meta_info` with the fields serving_chat
reads, `finish_reason` on the last item; a non-streaming request gets one
item with the whole text.

Everything the serving layer does after that (chat template, request
conversion, FunctionCallParser, SSE framing, tool-call ids, the final
`_check_for_unstreamed_tool_args`) is SGLang's own code.

SGLang's import of torchvision is served by torchvision_placeholder.py
when torchvision is not installed.

Used by tests/test_serving_chat.py (through tests/serving_stub.py) and by the
serving benchmark (serving_load.py). Importing it imports SGLang.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import types
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import torchvision_placeholder


os.environ.setdefault("HF_HUB_OFFLINE", "1")
torchvision_placeholder.install()

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest  # noqa: E402
from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat  # noqa: E402
from sglang.srt.runtime_context import publish  # noqa: E402
from sglang.srt.server_args import ServerArgs  # noqa: E402

_MODEL_DIR: Optional[str] = None
_TOKENIZER: Any = None


def model_dir() -> str:
    """A local model directory with a tiny Qwen2 config.json (ServerArgs
    resolution reads the HF config; no weights are ever loaded)."""
    global _MODEL_DIR
    if _MODEL_DIR is None:
        d = tempfile.mkdtemp(prefix="toolparse-stub-model-")
        cfg = {
            "model_type": "qwen2",
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
            "num_hidden_layers": 1,
            "vocab_size": 300,
            "max_position_embeddings": 4096,
        }
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
        _MODEL_DIR = d
    return _MODEL_DIR


CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n# Tools\n<tools>\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}"
    "</tools><|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tokenizer() -> Any:
    """A real PreTrainedTokenizerFast: byte-level BPE without merges (one
    token per byte) plus Qwen's special tokens and a Qwen-like template."""
    global _TOKENIZER
    if _TOKENIZER is None:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast

        vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
        for s in ("<|im_start|>", "<|im_end|>", "<|endoftext|>"):
            vocab[s] = len(vocab)
        core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
        core.decoder = decoders.ByteLevel()
        tok = PreTrainedTokenizerFast(
            tokenizer_object=core,
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            additional_special_tokens=["<|im_start|>"],
        )
        tok.chat_template = CHAT_TEMPLATE
        _TOKENIZER = tok
    return _TOKENIZER


def server_args(parser: Optional[str], incremental: bool = False, **kw: Any) -> ServerArgs:
    sa = ServerArgs(
        model_path=model_dir(),
        device="cpu",
        tool_call_parser=parser,
        incremental_streaming_output=incremental,
        **kw,
    )
    publish(sa, role="tokenizer")  # as http_server does in the HTTP process
    return sa


class StubTokenizerManager:
    """The part of TokenizerManager that OpenAIServingChat touches."""

    def __init__(self, sa: ServerArgs, chunks: Sequence[str]) -> None:
        self.server_args = sa
        self.tokenizer = tokenizer()
        self.model_config = types.SimpleNamespace(
            get_default_sampling_params=lambda: {},
            hf_config=types.SimpleNamespace(model_type="qwen2", architectures=["Qwen2ForCausalLM"]),
            is_multimodal=False,
            context_len=4096,
        )
        self.served_model_name = "stub-model"
        self.model_path = sa.model_path
        self.request_logger = types.SimpleNamespace(log_requests=False, log_requests_level=0)
        self.chunks = list(chunks)
        self.requests: List[Any] = []

    def config_value(self, name: str) -> Any:
        return getattr(self.server_args, name)

    def create_abort_task(self, obj: Any) -> None:
        return None

    def _meta(self, n_out: int, finished: bool) -> Dict[str, Any]:
        return {
            "id": "chatcmpl-stub",
            "finish_reason": {"type": "stop", "matched": 151645} if finished else None,
            "prompt_tokens": 7,
            "weight_version": self.config_value("weight_version"),
            "num_retractions": 0,
            "reasoning_tokens": 0,
            "completion_tokens": n_out,
            "cached_tokens": 0,
        }

    async def generate_request(self, obj: Any, request: Any = None):
        self.requests.append(obj)
        if not getattr(obj, "stream", False):
            yield {"text": "".join(self.chunks), "output_ids": [], "meta_info": self._meta(len(self.chunks), True)}
            return
        incremental = bool(self.server_args.incremental_streaming_output)
        text = ""
        last = len(self.chunks) - 1
        for i, c in enumerate(self.chunks):
            text += c
            yield {
                "text": c if incremental else text,
                "output_ids": [],
                "meta_info": self._meta(i + 1, i == last),
            }
            await asyncio.sleep(0)


TEMPLATE_MANAGER = types.SimpleNamespace(
    # TemplateManager's defaults when the model's own Jinja template is used
    chat_template_name=None,
    completion_template_name=None,
    jinja_template_content_format="openai",
    force_reasoning=False,
    reasoning_config=None,
    python_chat_template=None,
    jinja_template_may_reorder_tool_results=False,
)


def make_request(tools: List[dict], stream: bool, messages: Optional[List[dict]] = None,
                 **kw: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="stub-model",
        messages=messages or [{"role": "user", "content": "What's the weather in Paris and Oslo?"}],
        tools=tools,
        stream=stream,
        **kw,
    )


async def _collect_body(resp: Any) -> List[str]:
    out = []
    async for piece in resp.body_iterator:
        out.append(piece if isinstance(piece, str) else piece.decode())
    return out


def serve(sa: ServerArgs, chunks: Sequence[str], tools: List[dict], stream: bool, **kw: Any) -> Any:
    """Runs one request through OpenAIServingChat.handle_request. Returns
    the SSE text (stream) or the ChatCompletionResponse (non-stream)."""
    tm = StubTokenizerManager(sa, chunks)
    chat = OpenAIServingChat(tm, TEMPLATE_MANAGER)

    async def go():
        resp = await chat.handle_request(make_request(tools, stream, **kw), None)
        if stream:
            assert type(resp).__name__ == "StreamingResponse", getattr(resp, "body", resp)
            return "".join(await _collect_body(resp))
        assert type(resp).__name__ == "ChatCompletionResponse", getattr(resp, "body", resp)
        return resp

    return asyncio.run(go())


# -- the client side ---------------------------------------------------------


class AssembledCall:
    def __init__(self, index: int) -> None:
        self.index = index
        self.id: Optional[str] = None
        self.name: Optional[str] = None
        self.arguments = ""

    def key(self) -> Tuple[int, Optional[str], str]:
        return (self.index, self.name, self.arguments)


def assemble_sse(body: str) -> Tuple[str, List[AssembledCall], Optional[str], List[Any]]:
    """Parses SSE with the official openai types and assembles the message
    the way clients do (content concatenated, tool calls merged by index).
    Checks the framing rules a client relies on along the way: an id and a
    name arrive once, on the first delta of a call, and never change."""
    from openai.types.chat import ChatCompletionChunk

    content: List[str] = []
    calls: Dict[int, AssembledCall] = {}
    finish: Optional[str] = None
    chunks: List[Any] = []
    done = False
    for event in body.split("\n\n"):
        if not event.strip():
            continue
        assert not done, "data after [DONE]: %r" % event
        assert event.startswith("data: "), event
        data = event[len("data: "):]
        if data == "[DONE]":
            done = True
            continue
        chunk = ChatCompletionChunk.model_validate_json(data)
        chunks.append(chunk)
        for choice in chunk.choices:
            assert choice.index == 0
            d = choice.delta
            if d.content:
                content.append(d.content)
            for tc in d.tool_calls or []:
                assert tc.index is not None
                call = calls.get(tc.index)
                if call is None:
                    assert tc.id, "first delta of call %d carries no id" % tc.index
                    assert tc.function is not None and tc.function.name, "first delta of call %d has no name" % tc.index
                    call = calls[tc.index] = AssembledCall(tc.index)
                    call.id = tc.id
                    call.name = tc.function.name
                else:
                    assert tc.id in (None, call.id), "call %d changed its id" % tc.index
                    assert tc.function is None or tc.function.name in (None, call.name), "call %d renamed" % tc.index
                if tc.function is not None and tc.function.arguments:
                    call.arguments += tc.function.arguments
            if choice.finish_reason:
                finish = choice.finish_reason
    assert done, "stream did not end with [DONE]"
    ordered = [calls[i] for i in sorted(calls)]
    return "".join(content), ordered, finish, chunks
