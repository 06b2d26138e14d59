"""A turn whose event loop ends under it: `asyncio.run` returns while the turn streams,
and cancels the task that reads it. A subscribed observer still hears exactly one
terminal, `cancelled` with why, then `on_completed`: before, it heard nothing at all."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

import rxllm
from rxllm.events import Cancelled
from tests.support import Handler

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

    return await _serve(handler)


async def _serve(handler: Handler) -> tuple[web.AppRunner, str]:
    """`handler` on a loopback port, in the loop `asyncio.run` runs (the `serve` fixture
    lives in pytest's loop); the runner, and the base URL to give a provider."""
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


def test_a_subscriber_hears_cancelled_when_its_loop_ends_in_a_backoff() -> None:
    """The wait a rejection asked for (429, `retry-after`) is no task of the source's:
    the loop ending during it still ends the turn, for the attempt that never started."""
    heard: list[Any] = []

    async def main() -> None:
        async def handler(request: web.Request) -> web.Response:
            return web.json_response(
                {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                status=429,
                headers={"retry-after": "30"},
            )

        _runner, url = await _serve(handler)
        p = rxllm.provider("openai", api_key="sk-test-0123456789abcdef", base_url=url)
        p.stream(ASK).subscribe(
            on_next=heard.append,
            on_error=lambda error: heard.append(("on_error", error)),
            on_completed=lambda: heard.append("on_completed"),
        )
        async with asyncio.timeout(5):
            while not heard:
                await asyncio.sleep(0.01)
        # main returns during the 30 s wait: asyncio.run cancels what is left

    asyncio.run(main())

    assert [getattr(e, "type", e) for e in heard] == ["retry", "cancelled", "on_completed"]
    retry, ended = heard[0], heard[1]
    assert isinstance(ended, Cancelled)
    assert (
        (ended.provider, ended.attempt)
        == (retry.next_provider, retry.next_attempt)
        == (
            "openai",
            2,
        )
    )
    assert "task reading the stream was cancelled" in ended.reason


async def test_a_backoff_still_ends_in_the_next_attempt(serve: Any) -> None:
    """The wait as a task changes nothing for a turn that lives: the next attempt
    starts after it, and the consumer that leaves during it is told nothing more."""
    calls: list[float] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) == 1:
            return web.json_response(
                {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                status=429,
                headers={"retry-after": "0.2"},
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(FIRST)
        await response.write(
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        )
        return response

    url = await serve(handler)
    async with rxllm.provider("openai", api_key="sk-test-0123456789abcdef", base_url=url) as p:
        record = await p.complete(ASK)
        assert [a.number for a in record.attempts] == [1, 2]
        assert record.text == "hi" and record.terminal.type == "done"
        assert calls[1] - calls[0] >= 0.2  # the wait the server asked for

        calls.clear()
        async with p.astream(ASK) as events:
            first = await anext(events)
            assert first.type == "retry"
        await asyncio.sleep(0.4)  # past the wait: no attempt starts for a consumer gone
        assert len(calls) == 1
