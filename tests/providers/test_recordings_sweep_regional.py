"""Streams of providers outside the US whose OpenAI-compatible endpoints carry fields of
their own, read from their documentation, their SDKs and the relays and plugins that
adapt them (QuantumNous/new-api's and songquanpeng/one-api's channel adaptors,
langgenius/dify-official-plugins' model plugins, LobeChat's model runtime): MiniMax,
and the others each test names, in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential chunks, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what a client of that endpoint should get.
"""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm.events import Failed
from tests.support import ServeBody


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- MiniMax --------------------------------------------------------------------------------


def _minimax(status_code: int, status_msg: str, **fields: Any) -> dict[str, Any]:
    """A response of MiniMax's `/v1/text/chatcompletion_v2` as its API reference writes
    one: the OpenAI fields, its moderation flags and `base_resp`, the outcome
    (`status_code` 0 where all went well)."""
    return {
        "id": "04ecb5d9b1921ae0fb0e8da9017a5474",
        "created": 1755153113,
        "model": "MiniMax-M1",
        "object": "chat.completion.chunk",
        "input_sensitive": False,
        "output_sensitive": False,
        "input_sensitive_type": 0,
        "output_sensitive_type": 0,
        "output_sensitive_int": 0,
        "base_resp": {"status_code": status_code, "status_msg": status_msg},
        **fields,
    }


async def test_minimax_base_resp_error_as_the_whole_200_body(serve_body: ServeBody) -> None:
    """langgenius/dify-official-plugins models/minimax/models/llm/chat_completion_v2.py
    (`_handle_chat_generate_response`, `_handle_error_by_code`): MiniMax says a failure
    in `base_resp`, `{"status_code": 1004, "status_msg": ...}` (its codes: 1002 rate
    limit, 1004 authentication, 1008 balance, 1027 output judged sensitive, 2013 invalid
    parameters), and can answer the request with its whole response object so, in
    place of the stream. That object is the error, with its words and code, never a
    stream cut short (before: a `protocol` error, "not an SSE stream")."""
    body = json.dumps(_minimax(1004, "login fail: Please carry the API secret key", choices=None))
    base_url = await serve_body(body.encode())
    async with rxllm.provider(
        "custom", base_url=base_url, allow_private_network=True, max_attempts=1
    ) as p:
        record = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    error = record.terminal
    assert isinstance(error, Failed)
    assert error.error.kind == "stream_error"
    assert error.error.message == "login fail: Please carry the API secret key"
    assert error.error.code == "1004"
