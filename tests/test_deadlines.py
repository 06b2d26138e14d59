"""Deadlines over real HTTP: keepalives never keep a stalled turn alive, a slow but
steady tool call is not a stall, and each expiry names its deadline."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.local import LocalServer
from tests.support import Serve


def ask(model: str = "m", tools: bool = False) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.user("weather in Paris?")],
        tools=[rxllm.Tool(name="get_weather")] if tools else [],
    )


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"model": "m", "choices": [choice]}).encode() + b"\n\n"


Frames = Callable[[], AsyncIterator[bytes]]


@pytest.fixture
def streaming(serve: Serve) -> Callable[[Frames], Awaitable[str]]:
    """Serve a paced stream of frames; returns the base URL."""

    async def start(frames: Frames) -> str:
        async def handler(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            async for frame in frames():
                await response.write(frame)
            return response

        return await serve(handler)

    return start


async def keepalives_only() -> AsyncIterator[bytes]:
    for _ in range(250):  # 5 s of keepalives, then the server gives up
        yield b": keepalive\n\n"
        await asyncio.sleep(0.02)


async def test_keepalives_alone_expire_the_first_event_deadline(streaming: Any) -> None:
    url = await streaming(keepalives_only)
    p = rxllm.provider(
        "custom", base_url=url, first_event_timeout=0.2, max_attempts=1, allow_private_network=True
    )
    async with asyncio.timeout(3):
        rec = await p.complete(ask())
    error = rec.terminal.error
    assert error.kind == "stalled" and error.message.startswith("first_event_timeout expired")


async def test_keepalives_after_output_expire_the_idle_deadline(
    local_server: LocalServer,
) -> None:
    p = rxllm.provider("local", base_url=local_server.url, idle_timeout=0.2)
    async with asyncio.timeout(3):
        rec = await p.complete(ask("fault/hang"))  # a little output, then keepalives
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "stalled"
    assert rec.terminal.error.message.startswith("idle_timeout expired: no output from local")
    assert len(rec.attempts) == 1, "output was committed: no retry"
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=2)


async def test_a_slow_steady_tool_call_is_not_a_stall(streaming: Any) -> None:
    arguments = json.dumps({"city": "Paris", "days": 3, "notes": "x" * 40})

    async def drip() -> AsyncIterator[bytes]:
        call = {"index": 0, "id": "call_1", "function": {"name": "get_weather", "arguments": ""}}
        yield chunk({"tool_calls": [call]})
        for i in range(0, len(arguments), 4):  # 0.05 s apart, about 1 s in all
            await asyncio.sleep(0.05)
            piece = {"index": 0, "function": {"arguments": arguments[i : i + 4]}}
            yield chunk({"tool_calls": [piece]})
        yield chunk({}, "tool_calls")
        yield b"data: [DONE]\n\n"

    url = await streaming(drip)
    p = rxllm.provider("custom", base_url=url, idle_timeout=0.2, allow_private_network=True)
    rec = await p.complete(ask(tools=True))
    assert rec.terminal.type == "done" and rec.duration > 0.5
    assert rec.tool_calls[0].arguments == json.loads(arguments)


async def test_the_total_deadline_covers_the_whole_turn() -> None:
    async with LocalServer(pace=0.05) as slow:  # about 50 frames: 2.5 s
        p = rxllm.provider("local", base_url=slow.url, total_timeout=0.3)
        async with asyncio.timeout(3):
            rec = await p.complete(ask())
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "stalled"
    assert rec.terminal.error.message.startswith("total_timeout expired")
    assert rec.reasoning  # what came before the deadline is kept


@pytest.mark.parametrize(
    ("options", "guard"),
    [
        ({}, None),  # the defaults: first_event_timeout 600 s, idle_timeout 120 s
        ({"first_event_timeout": 1800.0}, None),
        ({"first_event_timeout": None, "idle_timeout": 900.0}, None),
        ({"idle_timeout": None}, 600.0),
        ({"first_event_timeout": 1800.0, "idle_timeout": None}, 1800.0),
        ({"first_event_timeout": None, "idle_timeout": None}, 300.0),
        ({"first_event_timeout": 1800.0, "read_timeout": 60.0}, 60.0),  # asked for: kept
    ],
)
def test_the_transport_guard_never_cuts_a_wait_the_deadlines_allow(
    options: dict[str, Any], guard: float | None
) -> None:
    """A reasoning model sends no byte while it thinks: a transport guard shorter than
    `first_event_timeout` would cut the wait that deadline allows, with an error that
    names the wrong setting. Left unset, there is none while `idle_timeout` is on (the
    deadlines see every silence first), else it is `first_event_timeout`."""
    from rxllm.pipeline.provider import ProviderOptions

    assert ProviderOptions(**options).silence_allowed() == guard
