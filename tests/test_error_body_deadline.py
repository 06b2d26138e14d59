"""A rejection whose headers came at once but whose body trickles is that rejection:
its status, its `Retry-After` and what of its body arrived, whether the error body's
own bound ends the read or a deadline (`first_event_timeout`) fires during it. As the
SDKs raise `RateLimitError` on a 429 whatever its body does, the verdict is the status,
never a stall. Over real HTTP: a loopback server that sends a byte of its body at a
time until the client hangs up."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Event, Failed
from rxllm.fragments import ResponseHeaders
from rxllm.sources import HttpRequest, http_source
from rxllm.sources import http as http_module
from tests.support import Serve, drain

REQUEST_ID = "req_trickle_0123456789"
BODY = b'{"error": {"message": "Rate limit reached for requests", "type": "requests"}}'
HEAD = BODY[:30]  # sent with the headers; the rest, a byte at a time
ON_HANG_UP = 20.0  # the longest a handler trickles: the client hangs up long before


def trickling(status: int, headers: dict[str, str] | None = None) -> web.StreamResponse:
    return web.StreamResponse(
        status=status,
        headers={"Content-Type": "application/json", "x-request-id": REQUEST_ID, **(headers or {})},
    )


def trickle(status: int, headers: dict[str, str] | None = None) -> Any:
    """A handler that answers `status` at once, then its body a byte every 0.2 s (the
    whole body would take seconds); bounded, so that the server always shuts down."""

    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = trickling(status, headers)
        response.content_length = len(BODY)
        await response.prepare(request)
        await response.write(HEAD)
        loop = asyncio.get_running_loop()
        end = loop.time() + ON_HANG_UP
        try:
            for byte in BODY[len(HEAD) :]:
                await asyncio.sleep(0.2)
                if loop.time() > end or request.transport is None:
                    break
                await response.write(bytes([byte]))
        except ConnectionError:
            pass
        return response

    return handler


async def events(url: str, **options: Any) -> list[Event]:
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider(
        "custom", api_key="k", base_url=url, allow_private_network=True, **options
    ) as provider:
        return await asyncio.wait_for(_all(provider.astream(request)), timeout=10)


async def _all(stream: Any) -> list[Event]:
    return [event async for event in stream]


async def test_a_429_cut_by_the_first_event_deadline_is_a_429_with_its_wait(
    serve: Serve,
) -> None:
    url = await serve(trickle(429, {"Retry-After": "7"}))
    evs = await events(url, first_event_timeout=0.5, idle_timeout=None, max_attempts=1)
    assert [ev.type for ev in evs] == ["error"]
    error = evs[-1].error  # type: ignore[union-attr]
    assert (error.kind, error.status, error.retry_after) == ("rejected", 429, 7.0)
    assert error.request_id == REQUEST_ID
    assert error.raw is not None and error.raw.startswith(HEAD.decode())
    assert len(error.raw) < len(BODY)  # what arrived, not a body made up whole
    assert error.message.startswith("HTTP 429: ")
    assert error.message.endswith("(the rest of the body did not arrive)")


async def test_a_401_cut_by_the_first_event_deadline_surfaces_rather_than_retrying(
    serve: Serve,
) -> None:
    # Read as a stall, the refused key was sent again (a stall may not happen twice);
    # read as the 401 it is, no body can change it.
    url = await serve(trickle(401))
    evs = await events(url, first_event_timeout=0.5, idle_timeout=None, max_attempts=2)
    assert [ev.type for ev in evs] == ["error"]
    error = evs[-1].error  # type: ignore[union-attr]
    assert (error.kind, error.status, error.retryable) == ("rejected", 401, False)


async def test_a_trickling_error_body_is_read_for_the_error_body_bound_not_read_timeout(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bound is seconds (ERROR_BODY_SECONDS); made short here so the test is quick.
    # Before it, the body had `read_timeout` (600 s by default) to trickle in.
    monkeypatch.setattr(http_module, "ERROR_BODY_SECONDS", 0.5, raising=False)
    url = await serve(trickle(429, {"Retry-After": "3"}))
    items = await drain(http_source(HttpRequest(url, b"{}"), provider="p", read_timeout=600))
    assert isinstance(items[0], ResponseHeaders) and len(items) == 2
    failure = items[1]
    assert isinstance(failure, Failed)
    error = failure.error
    assert (error.kind, error.status, error.retry_after) == ("rejected", 429, 3.0)
    assert error.raw is not None and HEAD.decode() in error.raw and len(error.raw) < len(BODY)
    assert error.message.endswith("(the rest of the body did not arrive)")


async def test_a_body_that_never_began_still_says_its_status(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = trickling(503, {"Retry-After": "2"})
        response.content_length = 100
        await response.prepare(request)
        for _ in range(int(ON_HANG_UP / 0.1)):  # nothing, until the client hangs up
            if request.transport is None or request.transport.is_closing():
                break
            await asyncio.sleep(0.1)
        return response

    url = await serve(handler)
    evs = await events(url, first_event_timeout=0.5, idle_timeout=None, max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    assert (error.kind, error.status, error.retry_after) == ("http", 503, 2.0)
    assert error.message == "HTTP 503: (the body did not arrive)" and error.raw == ""
