"""Cancellation at the moments a random cancel point rarely hits: before the request
goes out, while the response headers are awaited, and while an OpenRouter-style finish
waits for its usage. Each ends with exactly one `cancelled`, closes the connection,
and leaves the record saying so."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

import rxllm
from rxllm.events import Event

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ASK = rxllm.ChatRequest(
    model="m", messages=[rxllm.Message.user("weather?")], tools=[rxllm.Tool(name="get_weather")]
)


class Watched:
    """A loopback endpoint that notes when a request arrived and when it was dropped."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.dropped = asyncio.Event()

    async def hold(self, request: web.Request) -> None:
        """Keep the request waiting until the client drops the connection (aiohttp
        does not cancel a handler when its client leaves: the transport says so)."""
        async with asyncio.timeout(10):
            while request.transport is not None and not request.transport.is_closing():
                await asyncio.sleep(0.01)
        self.dropped.set()


def chunk(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


async def cancelled_turn(url: str, when: Callable[[], Awaitable[None]]) -> list[Event]:
    p = rxllm.provider("openrouter", api_key="sk-or-test-0123456789abcdef", base_url=url)
    cancel = asyncio.Event()

    async def trigger() -> None:
        await when()
        cancel.set()

    trigger_task = asyncio.create_task(trigger())
    async with asyncio.timeout(5):
        events = [e async for e in p.astream(ASK, cancel=cancel)]
    await trigger_task
    await p.aclose()
    return events


async def test_cancel_before_the_request_is_sent(serve: Any) -> None:
    seen = Watched()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.arrived.set()
        return web.Response(status=500)

    url = await serve(handler)
    p = rxllm.provider("openrouter", api_key="sk-or-test-0123456789abcdef", base_url=url)
    cancel = asyncio.Event()
    cancel.set()  # already cancelled when the turn starts
    rec = await p.complete(ASK, cancel=cancel)
    assert rec.terminal.type == "cancelled"
    await asyncio.sleep(0.05)
    assert not seen.arrived.is_set(), "a cancelled turn sends nothing"


async def test_cancel_while_the_headers_are_awaited(serve: Any) -> None:
    seen = Watched()

    async def slow_headers(request: web.Request) -> web.StreamResponse:
        seen.arrived.set()
        await seen.hold(request)  # thinking before the first byte of the response
        return web.Response(status=500)

    url = await serve(slow_headers)
    events = await cancelled_turn(url, seen.arrived.wait)
    assert [e.type for e in events] == ["cancelled"]
    await asyncio.wait_for(seen.dropped.wait(), timeout=2)


async def test_cancel_during_the_usage_hold(serve: Any) -> None:
    seen = Watched()
    call = {"index": 0, "id": "call_1", "function": {"name": "get_weather", "arguments": "{}"}}

    async def finish_then_wait(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(chunk({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}))
        await response.write(
            chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        )
        seen.arrived.set()  # the finish is held until the usage, which is late
        await seen.hold(request)
        return response

    url = await serve(finish_then_wait)
    events = await cancelled_turn(url, seen.arrived.wait)
    assert [e.type for e in events][-1] == "cancelled"
    assert [e.type for e in events].count("cancelled") == 1
    assert "done" not in [e.type for e in events]
    await asyncio.wait_for(seen.dropped.wait(), timeout=2)
