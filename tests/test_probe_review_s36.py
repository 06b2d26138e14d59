"""Regressions found reviewing session 36's library commits, each shown against a loopback
server as a user meets it.

- 97ee836 (Venice's sources after the usage chunk) made the chat wire wait, after the
  usage that follows the finish, for the next chunk, `[DONE]` or the end of the body. A
  server that holds the connection there longer than `idle_timeout` (the turn complete,
  its `[DONE]` late) now ended the turn `error(stalled)`, its answer and usage already
  shown, where it had ended `done` at the usage chunk. The first-event and idle deadlines
  now end a turn its provider had already said was complete as the end of the body would
  have: `done` (`fragments.Closed.ended`, given by `operators.normalize` when a deadline
  hangs up), so a usage on the finish chunk itself, which waits likewise, ends so too.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Done, Failed
from tests.support import Serve

_USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
_CALL = {
    "index": 0,
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}


def _chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> bytes:
    payload = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **more,
    }
    return f"data: {json.dumps(payload)}\n\n".encode()


_USAGE_CHUNK = f"data: {json.dumps({'id': 'chatcmpl-1', 'choices': [], 'usage': _USAGE})}\n\n"

# Each stream up to where its server holds the connection, `[DONE]` never sent: the usage
# chunk after the finish (OpenAI's `stream_options.include_usage` shape), the usage on the
# finish chunk itself, a call's finish then the usage chunk.
_COMPLETE = {
    "usage_after_the_finish": [
        _chunk({"role": "assistant", "content": "Hi"}),
        _chunk({}, "stop"),
        _USAGE_CHUNK.encode(),
    ],
    "usage_on_the_finish": [
        _chunk({"role": "assistant", "content": "Hi"}),
        _chunk({}, "stop", usage=_USAGE),
    ],
    "a_call_then_the_usage": [
        _chunk({"role": "assistant", "tool_calls": [_CALL]}),
        _chunk({}, "tool_calls"),
        _USAGE_CHUNK.encode(),
    ],
}


async def _held_turn(serve: Serve, chunks: list[bytes], **options: Any) -> rxllm.StreamRecord:
    """The record of a turn whose server writes `chunks`, then holds the connection open
    with keepalive comments."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for chunk in chunks:
            await response.write(chunk)
        try:  # held open, kept alive (a comment resets no deadline), until rxllm hangs up
            while True:
                await asyncio.sleep(0.05)
                await response.write(b": keepalive\n\n")
        except ConnectionError:
            return response

    base_url = await serve(handler)
    async with rxllm.provider("openai", api_key="k", base_url=base_url, **options) as provider:
        async with asyncio.timeout(10):
            return await provider.complete(
                rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
            )


@pytest.mark.parametrize("name", list(_COMPLETE))
async def test_a_stall_after_the_finish_and_its_usage_is_done(serve: Serve, name: str) -> None:
    record = await _held_turn(serve, _COMPLETE[name], idle_timeout=0.2)
    assert isinstance(record.terminal, Done), record.terminal
    assert record.usage is not None and record.usage.total_tokens == 5
    if name == "a_call_then_the_usage":
        assert record.terminal.stop_reason == "tool_use"
        assert [(c.call_id, c.arguments) for c in record.tool_calls] == [
            ("call_1", {"city": "Paris"})
        ]
    else:
        assert (record.text, record.terminal.stop_reason) == ("Hi", "stop")


async def test_a_stall_before_the_finish_is_still_a_stall(serve: Serve) -> None:
    record = await _held_turn(
        serve, [_chunk({"role": "assistant", "content": "Hi"})], idle_timeout=0.2
    )
    assert isinstance(record.terminal, Failed)
    assert record.terminal.error.kind == "stalled"
    assert record.terminal.error.message.startswith("idle_timeout expired")
    assert record.text == "Hi"


async def test_the_total_deadline_after_the_finish_still_fails_the_turn(serve: Serve) -> None:
    """The total deadline watches the whole turn, above its attempts: it keeps its word."""
    record = await _held_turn(serve, _COMPLETE["usage_after_the_finish"], total_timeout=0.3)
    assert isinstance(record.terminal, Failed)
    assert record.terminal.error.message.startswith("total_timeout expired")
