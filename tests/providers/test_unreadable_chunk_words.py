"""What a user reads when a chunk cannot be read: the value's JSON type, in JSON's
words ("an array", "a number"), never Python's ("list", "int"), and no exception class
before words a wire wrote itself ("an unexpected chunk (ValueError: ...)")."""

from __future__ import annotations

import json
import re

import pytest

from rxllm.events import Failed
from tests.support import replay_every_way


def _chat(*deltas: object) -> bytes:
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "model": "m",
         "choices": [{"index": 0, "delta": d}]}
        for d in deltas
    ]  # fmt: skip
    return b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks)


def _anthropic(delta: object) -> bytes:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "content": [],
                                              "usage": {"input_tokens": 1, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": delta},
    ]  # fmt: skip
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
    )


def _error_message(body: bytes, provider: str) -> str:
    last = replay_every_way(body, provider)[-1]
    assert isinstance(last, Failed) and last.error.kind == "protocol", last
    return last.error.message


@pytest.mark.parametrize(
    ("body", "provider", "said"),
    [
        (b"data: [1, 2]\n\n", "openai", "expected a JSON object, got an array"),
        (b'data: "text"\n\n', "openai", "expected a JSON object, got a string"),
        (_chat({"content": 7}), "openai", "a delta's content is a number, not a string"),
        (_chat({"reasoning_content": ["x"]}), "openai", "a reasoning delta is an array"),
        (b"data: 7\n\n", "anthropic", "expected a JSON object, got a number"),
        (
            _anthropic({"type": "text_delta", "text": ["x"]}),
            "anthropic",
            "a text delta is an array",
        ),
        (
            _anthropic({"type": "text_delta", "text": True}),
            "anthropic",
            "a text delta is a boolean",
        ),
    ],
)
def test_an_unreadable_chunk_is_said_in_json_words(body: bytes, provider: str, said: str) -> None:
    message = _error_message(body, provider)
    assert said in message
    assert not re.search(r"\b(ValueError|TypeError|list|int|bool|str|dict|NoneType)\b", message)
