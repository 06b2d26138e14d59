"""A turn whose event loop ends under it: `asyncio.run` returns while the turn streams,
and cancels the task that reads it. A subscribed observer still hears exactly one
terminal, `cancelled` with why, then `on_completed`: before, it heard nothing at all."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

import rxllm
from rxllm.events import Cancelled

ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
FIRST = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'


async def _serve_one_chunk_then_hold(dropped: asyncio.Event) -> tuple[web.AppRunner, str]:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(FIRST)
        try:
            await asyncio.sleep(30)
        finally:
            dropped.set()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/v1"


def test_a_subscriber_hears_cancelled_when_its_loop_ends_mid_turn() -> None:
    heard: list[Any] = []

    async def main() -> None:
        dropped = asyncio.Event()
        _runner, url = await _serve_one_chunk_then_hold(dropped)
        p = rxllm.provider("openai", api_key="sk-test-0123456789abcdef", base_url=url)
        p.stream(ASK).subscribe(
            on_next=heard.append,
            on_error=lambda error: heard.append(("on_error", error)),
            on_completed=lambda: heard.append("on_completed"),
        )
        async with asyncio.timeout(5):
            while not heard:
                await asyncio.sleep(0.01)
        # main returns with the turn still streaming: asyncio.run cancels its task

    asyncio.run(main())

    assert [getattr(e, "type", e) for e in heard] == [
        "text",
        "cancelled",
        "on_completed",
    ]
    ended = heard[1]
    assert isinstance(ended, Cancelled)
    assert ended.provider == "openai"
    assert "task reading the stream was cancelled" in ended.reason


def test_hanging_up_still_ends_in_silence() -> None:
    """Disposing is the observer leaving: it is told nothing more, as before."""
    heard: list[Any] = []

    async def main() -> None:
        dropped = asyncio.Event()
        runner, url = await _serve_one_chunk_then_hold(dropped)
        p = rxllm.provider("openai", api_key="sk-test-0123456789abcdef", base_url=url)
        subscription = p.stream(ASK).subscribe(
            on_next=heard.append, on_completed=lambda: heard.append("on_completed")
        )
        async with asyncio.timeout(5):
            while not heard:
                await asyncio.sleep(0.01)
            subscription.dispose()
            await dropped.wait()  # the server saw the client leave
        await p.aclose()
        await runner.cleanup()

    asyncio.run(main())

    assert [getattr(e, "type", e) for e in heard] == ["text"]
