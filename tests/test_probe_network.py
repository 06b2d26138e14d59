"""The hostile network, probed from the outside: destinations the SSRF guard refuses
when a `custom` provider names them directly, deadlines against loopback servers that
stall at each moment, and what a provider's connections outlive."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import rxllm
from rxllm.local import LocalServer
from tests.support import Handler, Serve

ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"model": "m", "choices": [choice]}).encode() + b"\n\n"


ANSWER = chunk({"content": "hi"}) + chunk({}, "stop") + b"data: [DONE]\n\n"


# -- the SSRF guard, named directly as base_url ----------------------------------------


@pytest.fixture
async def counted(serve: Serve) -> AsyncIterator[tuple[int, list[str]]]:
    """A loopback server answering every request, and the paths it was asked for."""
    hits: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        hits.append(request.path)
        return web.Response(body=ANSWER, content_type="text/event-stream")

    url = await serve(handler)
    yield int(url.rsplit(":", 1)[1].split("/")[0]), hits


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1:{port}", "loopback"),
        ("localhost:{port}", "loopback"),
        ("LOCALHOST:{port}", "loopback"),
        ("[::1]:{port}", "loopback"),
        ("0177.0.0.1:{port}", "127.0.0.1 is loopback"),
        ("2130706433:{port}", "127.0.0.1 is loopback"),
        ("0x7f000001:{port}", "127.0.0.1 is loopback"),
        ("127.1:{port}", "127.0.0.1 is loopback"),
        ("127.0.0.1.:{port}", "not an IP address"),
        ("[::ffff:7f00:1]:{port}", "IPv4-mapped form of 127.0.0.1"),
        ("[::ffff:127.0.0.1]:{port}", "IPv4-mapped form of 127.0.0.1"),
        ("[64:ff9b::7f00:1]:{port}", "NAT64 form of 127.0.0.1"),
        ("[2002:7f00:1::]:{port}", "6to4 form of 127.0.0.1"),
        ("[::127.0.0.1]:{port}", "IPv4-compatible"),
        ("169.254.169.254", "cloud metadata"),
        ("[::ffff:a9fe:a9fe]", "cloud metadata"),
        ("100.64.0.1", "CGNAT"),
        ("[fd00::1]", "unique-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0:{port}", "unspecified"),
        ("0:{port}", "unspecified"),
        ("[::]:{port}", "unspecified"),
        ("[fe80::1%25lo]:{port}", "link-local"),
    ],
)
async def test_a_custom_base_url_at_a_refused_destination_is_one_policy_error(
    counted: tuple[int, list[str]], host: str, reason: str
) -> None:
    port, hits = counted
    url = f"http://{host.format(port=port)}/v1"
    async with rxllm.provider("custom", base_url=url, api_key="sk-test") as p:
        rec = await p.complete(ASK)
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "policy" and "SSRF guard" in rec.terminal.error.message
    assert reason in rec.terminal.error.message
    assert len(rec.attempts) == 1  # a refusal is not retried
    assert hits == []


@pytest.mark.parametrize(
    "url",
    [
        "ws://127.0.0.1/v1",
        "file:///etc/passwd",
        "ftp://example.com/v1",
        "http://user:pass@example.com/v1",
        "http://127.0.0.1%2f@example.com/v1",
    ],
)
def test_a_base_url_that_is_no_http_endpoint_is_refused_at_the_call(url: str) -> None:
    with pytest.raises(rxllm.ConfigError):
        rxllm.provider("custom", base_url=url, api_key="sk-test")


@pytest.mark.parametrize(
    "options",
    [
        {"allow_private_network": True},
        {"allow_private_network": ["127.0.0.0/8"]},
        {"ssrf_guard": False},
    ],
)
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_the_private_network_is_reachable_once_allowed(
    counted: tuple[int, list[str]], options: dict[str, Any], host: str
) -> None:
    port, hits = counted
    async with rxllm.provider("custom", base_url=f"http://{host}:{port}/v1", **options) as p:
        rec = await p.complete(ASK)
    assert rec.terminal.type == "done" and rec.text == "hi"
    assert hits == ["/v1/chat/completions"]


# -- deadlines, against servers that stall at each moment ------------------------------


def stalling(moment: str) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        if moment == "before_headers":
            await asyncio.sleep(2)  # past every deadline here; short, for the teardown
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "x-request-id": "req_probe_1"}
        )
        await response.prepare(request)
        if moment == "after_headers":
            await asyncio.sleep(2)  # past every deadline here; short, for the teardown
        elif moment == "keepalives_before_output":
            for _ in range(600):
                await response.write(b": keepalive\n\n")
                await asyncio.sleep(0.02)
        elif moment == "keepalives_after_output":
            await response.write(chunk({"role": "assistant", "content": "he"}))
            for _ in range(600):
                await response.write(b": keepalive\n\n")
                await asyncio.sleep(0.02)
        elif moment == "a_drip_of_comment_bytes":
            await response.write(chunk({"content": "he"}))
            for _ in range(3000):
                await response.write(b":")
                await asyncio.sleep(0.005)
        return response

    return handler


@pytest.mark.parametrize(
    ("moment", "options", "named", "request_id"),
    [
        ("before_headers", {"first_event_timeout": 0.3}, "first_event_timeout", None),
        ("after_headers", {"first_event_timeout": 0.3}, "first_event_timeout", "req_probe_1"),
        (
            "keepalives_before_output",
            {"first_event_timeout": 0.3},
            "first_event_timeout",
            "req_probe_1",
        ),
        ("keepalives_after_output", {"idle_timeout": 0.3}, "idle_timeout", "req_probe_1"),
        ("a_drip_of_comment_bytes", {"idle_timeout": 0.3}, "idle_timeout", "req_probe_1"),
        (
            "a_drip_of_comment_bytes",
            {"idle_timeout": None, "total_timeout": 0.5},
            "total_timeout",
            "req_probe_1",
        ),
    ],
)
async def test_each_stall_is_one_stalled_error_naming_its_deadline(
    serve: Serve, moment: str, options: dict[str, Any], named: str, request_id: str | None
) -> None:
    url = await serve(stalling(moment))
    async with rxllm.provider(
        "custom", base_url=url, allow_private_network=True, max_attempts=1, **options
    ) as p:
        started = time.monotonic()
        rec = await p.complete(ASK)
    assert rec.terminal.type == "error"
    error = rec.terminal.error
    assert error.kind == "stalled" and error.message.startswith(f"{named} expired")
    assert error.request_id == request_id
    assert time.monotonic() - started < 3


async def test_a_tls_handshake_that_never_ends_is_the_connect_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # accepts the connection, never answers the ClientHello
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with rxllm.provider(
            "custom",
            base_url=f"https://127.0.0.1:{port}/v1",
            allow_private_network=True,
            connect_timeout=0.3,
            max_attempts=1,
        ) as p:
            rec = await p.complete(ASK)
    finally:
        server.close()
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "stalled"
    assert rec.terminal.error.message.startswith("connect_timeout expired")
    assert rec.terminal.error.request_id is None


async def test_the_total_deadline_bounds_retries_and_their_backoff(serve: Serve) -> None:
    hits: list[float] = []

    async def limited(request: web.Request) -> web.StreamResponse:
        hits.append(time.monotonic())
        return web.json_response(
            {"error": {"message": "Rate limit reached"}}, status=429, headers={"Retry-After": "30"}
        )

    url = await serve(limited)
    async with rxllm.provider(
        "custom", base_url=url, allow_private_network=True, total_timeout=1.0
    ) as p:
        started = time.monotonic()
        rec = await p.complete(ASK)
    assert time.monotonic() - started < 1.5  # never sleeps 30 s past its own deadline
    assert rec.terminal.type == "error" and rec.terminal.error.status == 429
    assert rec.terminal.error.retry_after == 30


@pytest.mark.parametrize(
    "option", ["connect_timeout", "first_event_timeout", "idle_timeout", "total_timeout"]
)
@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan"), "5", True])
def test_a_deadline_that_is_no_positive_number_is_refused_at_the_call(
    option: str, value: Any
) -> None:
    with pytest.raises(rxllm.ConfigError, match=option):
        rxllm.provider("custom", base_url="https://api.example.com/v1", **{option: value})


# -- connections ------------------------------------------------------------------------


async def test_an_endless_body_after_done_is_drained_for_a_bounded_time(serve: Serve) -> None:
    """`[DONE]`, then keepalives that never end: the turn is over at once, and the
    drain that would give the connection back gives up and closes it."""
    ended: list[float] = []

    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(ANSWER)
        try:
            for _ in range(1000):
                await response.write(b": keepalive\n\n")
                await asyncio.sleep(0.01)
        finally:
            ended.append(time.monotonic())
        return response

    url = await serve(endless)
    async with rxllm.provider("custom", base_url=url, allow_private_network=True) as p:
        started = time.monotonic()
        rec = await p.complete(ASK)
        assert rec.terminal.type == "done" and time.monotonic() - started < 0.5
        for _ in range(60):
            if ended:
                break
            await asyncio.sleep(0.1)
    assert ended and ended[0] - started < 4  # the drain's bound (2 s), not the body's 10 s


async def test_aclose_while_connecting_cancels_the_turn_at_once() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    p = rxllm.provider("custom", base_url=f"https://127.0.0.1:{port}/v1", ssrf_guard=False)
    try:
        turn = asyncio.ensure_future(p.complete(ASK))
        await asyncio.sleep(0.2)
        await p.aclose()
        rec = await asyncio.wait_for(turn, 2)
    finally:
        server.close()
    assert rec.terminal.type == "cancelled" and "aclose()" in rec.terminal.reason


@pytest.fixture(scope="module")
def threaded_server() -> Iterator[str]:
    """The local provider on a loop of its own thread, outliving the tests' loops."""
    ready = threading.Event()
    url: list[str] = []
    stop: list[asyncio.Event] = []
    loop: list[asyncio.AbstractEventLoop] = []

    async def run() -> None:
        async with LocalServer(pace=0) as server:
            url.append(server.url)
            stop.append(asyncio.Event())
            loop.append(asyncio.get_running_loop())
            ready.set()
            await stop[0].wait()

    thread = threading.Thread(target=asyncio.run, args=(run(),), daemon=True)
    thread.start()
    ready.wait(10)
    yield url[0]
    loop[0].call_soon_threadsafe(stop[0].set)
    thread.join(10)


def test_a_provider_used_by_many_event_loops_keeps_none_of_them_alive(
    threaded_server: str,
) -> None:
    """`asyncio.run(p.complete(...))` per call (a sync app, a worker): each closed loop
    must be freed, not kept by a cache of the loop's scheduler (~5 KB per call)."""
    p = rxllm.provider("local", base_url=threaded_server)
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def turn() -> str:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        rec = await p.complete(ASK)
        return rec.terminal.type

    for _ in range(5):
        assert asyncio.run(turn()) == "done"
    gc.collect()
    alive = sum(ref() is not None for ref in loops)
    assert alive <= 1  # the last one, at most, until another loop streams


async def test_aclose_during_a_backoff_wait_ends_the_turn(serve: Serve) -> None:
    """aclose() cut only the responses streaming then: a turn waiting out a backoff
    sent its next attempt afterwards, reopened the pool and ended `done`."""
    hits: list[str] = []

    async def limited_once(request: web.Request) -> web.StreamResponse:
        hits.append(request.path)
        if len(hits) == 1:
            return web.json_response(
                {"error": {"message": "Rate limit reached"}},
                status=429,
                headers={"Retry-After": "1"},
            )
        return web.Response(body=ANSWER, content_type="text/event-stream")

    url = await serve(limited_once)
    p = rxllm.provider("custom", base_url=url, allow_private_network=True)
    turn = asyncio.ensure_future(p.complete(ASK))
    await asyncio.sleep(0.3)  # the 429 came back; the turn waits 1 s before its retry
    await p.aclose()
    rec = await asyncio.wait_for(turn, 3)
    assert rec.terminal.type == "cancelled"
    assert len(hits) == 1


def test_a_session_passed_in_that_cannot_serve_says_why() -> None:
    """A closed session, or one made on an earlier loop, failed on `on_error` from deep
    inside asyncio ("Event loop is closed"); then as a transport error, retried twice
    with a backoff for a mistake no retry mends. It is a ConfigError at the call."""

    async def make() -> aiohttp.ClientSession:
        return aiohttp.ClientSession()

    old = asyncio.run(make())  # its loop is closed now

    async def turn(session: aiohttp.ClientSession) -> rxllm.StreamRecord:
        p = rxllm.provider("openai", api_key="k", base_url="http://127.0.0.1:9/v1", session=session)
        return await p.complete(ASK)

    with pytest.raises(rxllm.ConfigError, match="belongs to another event loop"):
        asyncio.run(turn(old))

    async def closed_one() -> rxllm.StreamRecord:
        session = aiohttp.ClientSession()
        await session.close()
        return await turn(session)

    with pytest.raises(rxllm.ConfigError, match="is closed"):
        asyncio.run(closed_one())
