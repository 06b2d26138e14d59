"""A body whose chunked transfer-encoding breaks (a bad chunk-size line, a chunk longer
than it said), sent by a raw loopback server since aiohttp.web cannot: it ends at once,
as `truncated`, never as the read watchdog's silence; and the SSE lines the spec
ignores are logged at debug."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import struct
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import client_proto, web
from aiohttp.http_parser import HttpResponseParserPy
from loguru import logger

import rxllm
from rxllm.events import Event, Failed
from rxllm.fragments import ResponseHeaders
from rxllm.sources import HttpRequest, http_source
from rxllm.sources.http import _retrieve
from rxllm.sources.sse import SseDecoder
from tests.support import Serve, drain

KEY = "sk-probe-transport-0123456789abcdefghij"
# Only a safety net: a broken body must end long before it (the watchdog would say
# "read_timeout expired" after one or two of these).
READ_TIMEOUT = 3.0


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


HELLO = chunk({"role": "assistant", "content": "Hel"})
MORE = chunk({"content": "l"})
FINISH = chunk({"content": "lo"}, "stop")
DONE = b"data: [DONE]\n\n"
HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Transfer-Encoding: chunked\r\nx-request-id: req_bad\r\n\r\n"
)
GOOD = b"%x\r\n" % len(HELLO) + HELLO + b"\r\n"
BAD_SIZE = b"zz\r\n"  # not hex: no chunk size at all


@asynccontextmanager
async def raw_server(writes: list[bytes], *, keep_open: bool = False) -> AsyncIterator[str]:
    """A loopback server that reads the request, sends `writes` one by one (a pause
    between them, so each is its own read), then closes, or waits for the client to."""

    handlers: list[asyncio.Task[Any]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.append(asyncio.current_task())  # type: ignore[arg-type]
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
        for data in writes:
            writer.write(data)
            await writer.drain()
            await asyncio.sleep(0.05)
        if keep_open:
            await reader.read()  # until the client hangs up
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        if handlers:
            await asyncio.wait(handlers, timeout=5)


async def events(url: str, **options: Any) -> tuple[list[Event], float]:
    """The stream's events, and how long it took."""
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    started = time.monotonic()
    async with rxllm.provider(
        "openai", api_key=KEY, base_url=url, read_timeout=READ_TIMEOUT, max_attempts=1, **options
    ) as provider:
        evs = [ev async for ev in provider.astream(request)]
    return evs, time.monotonic() - started


def assert_truncated_at_once(evs: list[Event], took: float, says: str) -> None:
    error = evs[-1].error  # type: ignore[union-attr]
    assert (error.kind, error.request_id) == ("truncated", "req_bad"), error
    assert "read_timeout" not in error.message and says in error.message
    assert "400, message" not in error.message  # aiohttp's server words, not a status
    assert took < READ_TIMEOUT


@pytest.mark.parametrize("keep_open", [False, True], ids=["server_closes", "server_waits"])
async def test_a_bad_chunk_size_line_ends_the_stream_at_once_as_truncated(
    keep_open: bool,
) -> None:
    # aiohttp's C parser hands this error to the connection (which it closes), never to
    # the body: `readany()` waited for the read watchdog, which said "no bytes for 3 s".
    async with raw_server([HEAD + GOOD, BAD_SIZE], keep_open=keep_open) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["text", "error"]
    assert_truncated_at_once(evs, took, "Invalid character in chunk size: b'zz'")


async def test_a_chunk_longer_than_its_size_ends_the_stream_at_once() -> None:
    async with raw_server([HEAD + GOOD, b"3\r\nabcdef\r\n"]) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["text", "error"]
    assert_truncated_at_once(evs, took, "after chunk data")


async def test_what_arrived_before_the_bad_chunk_is_still_read() -> None:
    # The good chunks and the bad line in one write: the body's text is not thrown away.
    async with raw_server([HEAD, GOOD + b"%x\r\n" % len(MORE) + MORE + b"\r\n" + BAD_SIZE]) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["text", "text", "error"]
    assert_truncated_at_once(evs, took, "chunk size")


async def test_the_source_alone_ends_a_broken_body_at_once() -> None:
    # Subscribed outside `astream`: the source runs in a task of its own.
    async with raw_server([HEAD + GOOD, BAD_SIZE]) as url:
        source = http_source(
            HttpRequest(url + "/chat/completions", b"{}"), provider="p", read_timeout=READ_TIMEOUT
        )
        started = time.monotonic()
        items = await drain(source)
    failure = items[-1]
    assert isinstance(failure, Failed) and failure.error.kind == "truncated"
    assert failure.error.request_id == "req_bad" and "chunk size" in failure.error.message
    assert time.monotonic() - started < READ_TIMEOUT
    assert not any(isinstance(item, ResponseHeaders) for item in items[1:])


@pytest.mark.parametrize("parser", ["c", "python"])
async def test_a_chunk_cut_short_by_the_close_reads_without_aiohttp_s_inner_error(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # aiohttp quotes its parser's error by its repr: the message read "...: <Transfer
    # EncodingError: 400, message='Not enough data to satisfy transfer length header.'>".
    if parser == "python":
        monkeypatch.setattr(client_proto, "HttpResponseParser", HttpResponseParserPy)
    async with raw_server([HEAD + GOOD, b"%x\r\n" % len(MORE) + MORE[:10]]) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["text", "error"]
    assert_truncated_at_once(evs, took, "Not enough data to satisfy transfer length header.")
    message = evs[-1].error.message  # type: ignore[union-attr]
    assert "TransferEncodingError" not in message and "message=" not in message
    assert message.startswith("the connection closed mid-stream: ")


async def test_with_aiohttp_pure_python_parser_a_bad_chunk_is_truncated_not_on_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without aiohttp's C extension (AIOHTTP_NO_EXTENSIONS=1, or a platform without a
    # wheel), the body's read raises `TransferEncodingError`, which is no ClientError:
    # it reached the consumer as `on_error`, a traceback from inside aiohttp.
    monkeypatch.setattr(client_proto, "HttpResponseParser", HttpResponseParserPy)
    async with raw_server([HEAD + GOOD, BAD_SIZE]) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["text", "error"]
    assert_truncated_at_once(evs, took, "zz")


async def test_a_gzip_stream_that_stops_decoding_is_truncated_without_a_made_up_status() -> None:
    compressor = zlib.compressobj(wbits=31)
    start = compressor.compress(HELLO) + compressor.flush(zlib.Z_SYNC_FLUSH)
    head = HEAD.replace(b"\r\n\r\n", b"\r\nContent-Encoding: gzip\r\n\r\n")
    junk = b"\xff" * 40
    async with raw_server(
        [head + b"%x\r\n" % len(start) + start + b"\r\n", b"28\r\n" + junk]
    ) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["text", "error"]
    assert_truncated_at_once(evs, took, "Can not decode content-encoding: gzip")


async def test_a_rejection_with_broken_chunking_is_reported_at_once() -> None:
    # An error body cut by a bad chunk: what arrived names the rejection, without
    # waiting out read_timeout for the rest of a body that will never come.
    head = HEAD.replace(b"200 OK", b"400 Bad Request").replace(b"text/event-stream", b"json")
    part = b'{"error":{"message":"bad model"'
    async with raw_server([head, b"%x\r\n" % len(part) + part + b"\r\n", BAD_SIZE]) as url:
        evs, took = await events(url)
    error = evs[-1].error  # type: ignore[union-attr]
    assert (error.kind, error.status, error.request_id) == ("rejected", 400, "req_bad")
    assert error.raw == part.decode()
    assert took < READ_TIMEOUT


async def test_a_bad_chunk_with_the_headers_is_a_transport_error_without_a_made_up_status() -> None:
    # aiohttp fails the response before its head is handed over: no request id to name,
    # and the "400" of aiohttp's own words is not a status the provider sent (it sent 200).
    async with raw_server([HEAD + GOOD + BAD_SIZE]) as url:
        evs, took = await events(url)
    assert [ev.type for ev in evs] == ["error"]
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "transport" and error.status is None
    assert error.message == "the response is not valid HTTP: Invalid character in chunk size: b'zz'"
    assert took < READ_TIMEOUT


async def test_a_body_read_until_the_connection_closes_still_succeeds() -> None:
    # No length, no chunking: the close is the body's end, not a break.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    async with raw_server([head, HELLO, FINISH + DONE]) as url:
        evs, _ = await events(url)
    assert [ev.type for ev in evs] == ["text", "text", "done"]


async def test_a_pooled_connection_carries_one_watcher_whatever_it_streamed(serve: Serve) -> None:
    # One callback per response on the connection's `closed` future, removed at the
    # stream's end; one consumer of its error stays, not one per stream.
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(HELLO)
        await asyncio.sleep(0.01)  # the body still open when the source looks
        await response.write(FINISH + DONE)
        return response

    url = await serve(handler)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with aiohttp.ClientSession() as session:
        provider = rxllm.provider("openai", api_key=KEY, base_url=url, session=session)
        for _ in range(5):
            evs = [ev async for ev in provider.astream(request)]
            assert evs[-1].type == "done"
        pooled = session.connector._conns.values()  # type: ignore[union-attr]
        conns = [proto for protos in pooled for proto, _ in protos]
        assert len(conns) == 1  # the five streams went over one kept-alive connection
        closed = conns[0].closed
        assert closed is not None and not closed.done()
        assert closed.remove_done_callback(_retrieve) == 1
        assert not closed._callbacks  # no stream's watcher left behind


@contextmanager
def debug_records() -> Iterator[list[dict[str, Any]]]:
    """rxllm's debug records (message and bound fields) while the block runs."""
    records: list[dict[str, Any]] = []
    sink = logger.add(
        lambda m: records.append({"message": m.record["message"], **m.record["extra"]}),
        level="DEBUG",
    )
    logger.enable("rxllm")
    try:
        yield records
    finally:
        logger.disable("rxllm")
        logger.remove(sink)


def ignored(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["message"].startswith("ignored an SSE line")]


def test_the_lines_the_spec_ignores_are_logged_once_per_field_name() -> None:
    body = (
        b"Data: capitalised\n"
        b"id: a\x00b\n"
        b"retry: 1.5\n"
        b"x-trace: 1\n"
        b"x-trace: 2\n"
        b"data: kept\n"
        b"\n"
        b"Data: again\n"
        b"retry: soon\n"
        b"data: kept too\n\n"
    )
    with debug_records() as records:
        decoder = SseDecoder(provider="vllm", attempt=2)
        evs = decoder.feed(body) + decoder.close()
    assert [ev.data for ev in evs] == ["kept", "kept too"]
    assert evs[0].id is None and evs[0].retry is None
    logged = ignored(records)
    assert [r["message"].split("'")[1] for r in logged] == ["Data", "id", "retry", "x-trace"]
    assert "'capitalised'" in logged[0]["message"] and "'1.5'" in logged[2]["message"]
    assert all((r["provider"], r["attempt"]) == ("vllm", 2) for r in logged)


def test_the_fields_the_spec_knows_log_nothing() -> None:
    body = b": keepalive\nevent: e\nid: 7\nretry: 1000\ndata: a\ndata: b\nerror: {}\n\n" + HELLO
    with debug_records() as records:
        decoder = SseDecoder()
        decoder.feed(body)
        decoder.close()
    assert not ignored(records)


def test_a_body_of_made_up_field_names_logs_a_bounded_number() -> None:
    body = b"".join(b"f%d: v\n" % n for n in range(100)) + b"data: x\n\n"
    with debug_records() as records:
        decoder = SseDecoder()
        assert [ev.data for ev in decoder.feed(body)] == ["x"]
    logged = ignored(records)
    assert len(logged) == 16 and "further field names are not logged" in logged[-1]["message"]


async def test_a_live_stream_logs_its_ignored_field_with_its_provider(
    serve_body: Callable[[bytes], Awaitable[str]],
) -> None:
    url = await serve_body(b"Data: lost\n\n" + HELLO + FINISH + DONE)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    with debug_records() as records:
        async with rxllm.provider("openai", api_key=KEY, base_url=url) as provider:
            evs = [ev async for ev in provider.astream(request)]
    assert [ev.type for ev in evs] == ["text", "text", "done"]
    logged = ignored(records)
    assert len(logged) == 1 and logged[0]["provider"] == "openai" and logged[0]["attempt"] == 1


async def test_a_watched_connection_reset_while_pooled_leaves_no_asyncio_error() -> None:
    # The source asks for the connection's `closed` future; aiohttp sets a reset's error
    # on it, and asyncio logs an error nobody retrieved once a later request has dropped
    # the dead connection from the pool.
    loop = asyncio.get_running_loop()
    problems: list[str] = []
    loop.set_exception_handler(lambda _, context: problems.append(context["message"]))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        rest = FINISH + DONE
        writer.write(HEAD + GOOD)
        await writer.drain()
        await asyncio.sleep(0.05)  # the body still open when the source looks
        writer.write(b"%x\r\n" % len(rest) + rest + b"\r\n0\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.1)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # a reset of the idle, kept-alive connection

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    try:
        async with rxllm.provider("openai", api_key=KEY, base_url=url) as provider:
            for _ in range(2):  # the second finds the first's connection dead, drops it
                evs = [ev async for ev in provider.astream(request)]
                assert evs[-1].type == "done"
                await asyncio.sleep(0.3)
            gc.collect()
            await asyncio.sleep(0.05)
        assert problems == []
    finally:
        loop.set_exception_handler(None)
        server.close()
