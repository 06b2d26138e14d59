"""The aiohttp source against a real loopback server: bytes, statuses, timeouts, sessions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web

from rxllm.error_body import MAX_MESSAGE_CHARS
from rxllm.events import Failed
from rxllm.fragments import ResponseHeaders
from rxllm.sources import HttpRequest, RawChunk, SourceItem, http_source
from rxllm.sources.http import MAX_ERROR_BODY_BYTES
from tests.support import drain

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def collect(source: Any) -> list[SourceItem]:
    """What the source emitted after the response's headers (checked on their own)."""
    return [item for item in await drain(source) if not isinstance(item, ResponseHeaders)]


async def test_the_headers_come_first_once(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"x-request-id": "req_7"})
        await response.prepare(request)
        await response.write(b"data: a\n\n")
        return response

    items = await drain(http_source(HttpRequest(await serve(handler), b"{}"), provider="p"))
    assert isinstance(items[0], ResponseHeaders) and items[0].headers["X-Request-Id"] == "req_7"
    assert not any(isinstance(item, ResponseHeaders) for item in items[1:])
    assert isinstance(items[1], RawChunk)


async def test_chunks_in_order_with_event_names(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        assert await request.read() == b'{"x":1}'
        assert request.headers["X-Test"] == "1"
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for i in range(50):
            await response.write(f"event: e{i % 2}\ndata: {i}\n\n".encode())
        return response

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b'{"x":1}', {"X-Test": "1"}), provider="p"))
    assert items == [RawChunk("p", 1, f"e{i % 2}", str(i)) for i in range(50)]


async def test_read_timeout_is_stalled(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"data: 1\n\n")
        await asyncio.sleep(5)
        return response

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p", read_timeout=0.2))
    assert items[0] == RawChunk("p", 1, "message", "1")
    assert isinstance(items[1], Failed) and items[1].error.kind == "stalled"


async def test_error_status_reads_a_bounded_body(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(status=429, text='{"error": {"message": "slow down"}}' + " " * 200_000)

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p"))
    assert len(items) == 1 and isinstance(items[0], Failed)
    error = items[0].error
    assert (error.kind, error.status) == ("rejected", 429)
    assert error.message == "HTTP 429: slow down" and len(error.raw or "") <= 64 * 1024
    # The source states what happened; whether to retry is the provider's policy.
    assert not error.retryable


async def test_an_error_body_in_two_writes_is_read_whole(serve: Any) -> None:
    """One read returns what has arrived: the tail (and `param`) used to be lost."""
    body = (
        b'{"error": {"message": "Unsupported parameter: \'temperature\' is not supported '
        b'with this model.", "type": "invalid_request_error", "param": "temperature", '
        b'"code": "unsupported_parameter"}}'
    )

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=400, headers={"Content-Type": "application/json"})
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body[:20])
        await asyncio.sleep(0.2)
        await response.write(body[20:])
        return response

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p"))
    assert len(items) == 1 and isinstance(items[0], Failed)
    error = items[0].error
    assert (error.kind, error.status, error.retryable) == ("rejected", 400, False)
    assert error.message == (
        "HTTP 400: Unsupported parameter: 'temperature' is not supported with this model."
    )
    assert (error.param, error.code) == ("temperature", "unsupported_parameter")
    assert error.raw == body.decode()


async def test_retry_after_and_request_id_headers_reach_the_error(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        body = '{"error": {"message": "Overloaded", "type": "server_error"}}'
        headers = {"Retry-After": "2", "x-request-id": "req_123"}
        return web.Response(status=503, text=body, headers=headers)

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p"))
    assert isinstance(items[0], Failed)
    error = items[0].error
    assert (error.kind, error.status, error.code) == ("http", 503, "server_error")
    assert (error.retry_after, error.request_id) == (2.0, "req_123")


async def test_the_header_wait_wins_over_the_body_wait(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        body = (
            '{"error": {"message": "Please try again in 5.289s.", "code": "rate_limit_exceeded"}}'
        )
        return web.Response(status=429, text=body, headers={"retry-after-ms": "750"})

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p"))
    assert isinstance(items[0], Failed) and items[0].error.retry_after == 0.75


async def test_an_endless_error_body_is_cut_at_the_cap(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=500)
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError):
            while True:
                await response.write(b"x" * 8192)
                await asyncio.sleep(0)
        return response

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p"))
    assert len(items) == 1 and isinstance(items[0], Failed)
    error = items[0].error
    assert (error.kind, error.status) == ("http", 500)
    assert len(error.raw or "") == MAX_ERROR_BODY_BYTES
    assert len(error.message) <= len("HTTP 500: ") + MAX_MESSAGE_CHARS


async def test_an_error_body_that_stops_arriving_ends_at_the_read_timeout(serve: Any) -> None:
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=400)
        await response.prepare(request)
        await response.write(b'{"error": {"message": "bad request", "param": "seed"}}')
        await asyncio.wait_for(release.wait(), timeout=5)  # the rest never comes
        return response

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p", read_timeout=0.3))
    assert not release.is_set()  # ended by the read timeout, not by the body's end
    assert isinstance(items[0], Failed)
    error = items[0].error
    assert (error.kind, error.message, error.param) == ("rejected", "HTTP 400: bad request", "seed")
    release.set()


async def test_a_given_session_is_used_and_left_open(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"data: ok\n\n")
        return response

    url = await serve(handler)
    async with aiohttp.ClientSession() as session:
        for _ in range(2):
            items = await collect(
                http_source(HttpRequest(url, b"{}"), provider="p", session=session)
            )
            assert items == [RawChunk("p", 1, "message", "ok")]
        assert not session.closed


async def test_connection_dropped_mid_body_is_truncated(serve: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"data: 1\n\n")
        assert request.transport is not None
        request.transport.close()  # no chunked terminator: the body is cut
        return response

    url = await serve(handler)
    items = await collect(http_source(HttpRequest(url, b"{}"), provider="p"))
    assert items[0] == RawChunk("p", 1, "message", "1")
    assert isinstance(items[-1], Failed) and items[-1].error.kind == "truncated"
