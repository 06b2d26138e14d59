"""A connection that fails after the provider said the turn was complete: the turn is
done with what it had (its usage too), not truncated. Over real HTTP, with a server
that resets the connection mid-body."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from tests.support import Serve


@pytest.fixture
def resetting(serve: Serve) -> Callable[[list[bytes]], Awaitable[str]]:
    """Serve `frames`, then drop the connection without ending the chunked body;
    returns the base URL."""

    async def start(frames: list[bytes]) -> str:
        async def handler(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for frame in frames:
                await response.write(frame)
            assert request.transport is not None
            request.transport.abort()  # a reset: no final chunk, no clean close
            return response

        return await serve(handler)

    return start


def data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def chat(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return data({"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


REQUEST = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


async def test_openai_chat_finish_then_reset_is_done(resetting: Any) -> None:
    url = await resetting([chat({"content": "Hello"}), chat({}, "stop")])
    p = rxllm.provider("custom", base_url=url, max_attempts=1, allow_private_network=True)
    rec = await p.complete(REQUEST)
    assert rec.terminal.type == "done" and rec.terminal.stop_reason == "stop"
    assert rec.text == "Hello"


async def test_openai_chat_reset_before_the_finish_is_still_an_error(resetting: Any) -> None:
    url = await resetting([chat({"content": "Hel"})])
    p = rxllm.provider("custom", base_url=url, max_attempts=1, allow_private_network=True)
    rec = await p.complete(REQUEST)
    assert rec.terminal.type == "error" and rec.terminal.error.kind in ("truncated", "transport")
    assert rec.text == "Hel"


async def test_gemini_finish_then_reset_is_done_with_its_usage(resetting: Any) -> None:
    # Made by hand from Google's streamGenerateContent reference: the last chunk holds
    # the finish reason and the usage; the connection then resets before the body ends.
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
        "modelVersion": "gemini-2.5-flash",
    }
    url = await resetting([data(chunk)])
    p = rxllm.provider("google", api_key="g" * 39, base_url=url + "beta", max_attempts=1)
    rec = await p.complete(REQUEST)
    assert rec.terminal.type == "done" and rec.text == "Hi"
    assert rec.usage is not None and (rec.usage.input_tokens, rec.usage.output_tokens) == (3, 1)
