"""The hostile network, third round: a certificate that fails its check, a body in an
encoding aiohttp does not decode, header values that are not ASCII, and what raw
loopback servers (`asyncio.start_server`, sending exactly the bytes written here) do
to a turn. Each ends in one clear error naming what went wrong, at once where a retry
cannot help, or reads right; nothing hangs, nothing the caller holds secret is shown."""

from __future__ import annotations

import asyncio
import gzip
import shutil
import socket
import ssl
import struct
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import rxllm
from rxllm.errors import ConfigError
from tests.test_probe_network_2 import (
    ANSWER,
    SSE,
    error_of,
    no_proxy_environment,
    raw_server,
    response,
    turn,
)

__all__ = ["no_proxy_environment"]  # the autouse fixture, imported to apply here too

KEY = "sk-probe-network-3-0123456789abcdef"
ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


# -- a certificate that fails its check -------------------------------------------------


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no CA signed, and its key (made by `openssl`)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a self-signed certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@asynccontextmanager
async def tls_server(
    cert: Path, key: Path, host: str = "127.0.0.1"
) -> AsyncIterator[tuple[int, list[str]]]:
    """A loopback HTTPS server answering ANSWER with `cert`; yields its port and the
    paths of the requests that reached it."""
    reached: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        reached.append(request.path)
        return web.Response(body=ANSWER, content_type="text/event-stream")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    site = web.TCPSite(runner, host, 0, ssl_context=context)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1], reached  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


async def test_a_certificate_that_fails_its_check_ends_at_once_naming_it(
    self_signed: tuple[Path, Path],
) -> None:
    # It was "ClientConnectorCertificateError: ... [SSLCertVerificationError: (1, ...)]",
    # a transport error backed off and tried again twice: the same certificate fails
    # the same check on every attempt.
    async with (
        tls_server(*self_signed) as (port, reached),
        rxllm.provider(
            "custom",
            base_url=f"https://127.0.0.1:{port}/v1",
            api_key=KEY,
            allow_private_network=True,
            max_attempts=3,
        ) as p,
    ):
        rec = await p.complete(ASK)
    error = error_of(rec)
    assert len(rec.attempts) == 1 and reached == []
    assert error.kind == "transport" and not error.retryable
    assert error.message == (
        f"the TLS certificate of 127.0.0.1:{port} failed its check: self-signed certificate"
        " (for a server whose certificate a private CA signed, pass a session=... whose "
        "connector trusts that CA: ssl=ssl.create_default_context(cafile=...))"
    )
    assert KEY not in str(rec.model_dump())


async def trusting_turn(context: ssl.SSLContext, base_url: str) -> rxllm.StreamRecord:
    """A turn through a session of one's own whose connector checks with `context`."""
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as own,
        rxllm.provider(
            "custom", base_url=base_url, api_key=KEY, session=own, ssrf_guard=False, max_attempts=3
        ) as p,
    ):
        return await p.complete(ASK)


async def test_a_certificate_for_another_address_ends_at_once_naming_it(
    self_signed: tuple[Path, Path],
) -> None:
    # A certificate its CA signed for 127.0.0.1 and localhost, served at 127.0.0.2: its CA
    # trusted (a session of one's own), the name still does not match.
    cert, _ = self_signed
    context = ssl.create_default_context(cafile=cert)
    async with tls_server(*self_signed, host="127.0.0.2") as (port, reached):
        rec = await trusting_turn(context, f"https://127.0.0.2:{port}/v1")
    error = error_of(rec)
    assert len(rec.attempts) == 1 and not error.retryable and reached == []
    assert error.message.startswith(
        f"the TLS certificate of 127.0.0.2:{port} failed its check: IP address mismatch, "
        "certificate is not valid for '127.0.0.2'."
    )


async def test_a_certificate_trusted_through_a_session_of_ones_own_is_read(
    self_signed: tuple[Path, Path],
) -> None:
    # What the error advises for a private CA works.
    cert, _ = self_signed
    context = ssl.create_default_context(cafile=cert)
    async with tls_server(*self_signed) as (port, reached):
        rec = await trusting_turn(context, f"https://127.0.0.1:{port}/v1")
    assert rec.terminal.type == "done" and rec.text == "hi" and len(reached) == 1


# -- an encoding aiohttp does not decode ------------------------------------------------


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip, gzip", gzip.compress(gzip.compress(ANSWER))),
        ("gzip,gzip", gzip.compress(gzip.compress(ANSWER))),
        ("gzip, identity", gzip.compress(ANSWER)),
        ("x-gzip", gzip.compress(ANSWER)),
        ("deflate, br", b"\x1f\x8b\x08\x00 not read"),
    ],
)
async def test_a_stream_in_an_encoding_aiohttp_does_not_decode_says_so(
    coding: str, body: bytes
) -> None:
    # aiohttp decodes one of gzip, deflate, br, zstd alone and hands anything else on
    # as it came: it was "protocol: the response body is not an SSE stream: '\x08..."
    # (the compressed bytes quoted as text).
    async with raw_server(response(b"200 OK", [*SSE, ("Content-Encoding", coding)], body)) as (
        port,
        _,
    ):
        rec = await turn(port)
    error = error_of(rec)
    assert error.kind == "protocol"
    assert error.message == (
        f"the body is encoded as {coding!r} (Content-Encoding), which aiohttp does not "
        "decode: it decodes one of gzip, deflate, br or zstd alone"
    )


async def test_a_rejection_in_an_encoding_aiohttp_does_not_decode_keeps_its_status() -> None:
    # Its message was the compressed bytes as text.
    body = gzip.compress(gzip.compress(b'{"error": {"message": "slow down"}}'))
    headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip, gzip")]
    async with raw_server(response(b"429 Too Many Requests", headers, body)) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert error.kind == "rejected" and error.status == 429
    assert error.message == (
        "HTTP 429: (the body is encoded as 'gzip, gzip' (Content-Encoding), which aiohttp "
        "does not decode: it decodes one of gzip, deflate, br or zstd alone)"
    )
    assert error.raw is None


@pytest.mark.parametrize("coding", ["identity", "GZIP", "utf-8", ""])
async def test_a_coding_that_is_none_or_no_compression_reads_as_before(coding: str) -> None:
    # A plain body under a misused header (`Content-Encoding: utf-8`) was read, and is.
    body = gzip.compress(ANSWER) if coding == "GZIP" else ANSWER
    async with raw_server(response(b"200 OK", [*SSE, ("Content-Encoding", coding)], body)) as (
        port,
        _,
    ):
        rec = await turn(port)
    assert rec.terminal.type == "done" and rec.text == "hi"


# -- header values that are not ASCII ---------------------------------------------------


def test_an_api_key_with_a_character_that_is_not_ascii_is_refused_at_the_call() -> None:
    # A key pasted with a typographic dash or a letter of another alphabet went out as
    # UTF-8 bytes and came back a 401 from the server, after a round trip; httpx (the
    # SDKs) refuses such a header value before sending.
    key = "sk-probe\u2013network-3-0123456789abcdef"
    with pytest.raises(ConfigError) as caught:
        rxllm.provider("custom", base_url="https://example.com/v1", api_key=key)
    message = str(caught.value)
    assert message == (
        "the API key of provider 'custom' holds a character that is not ASCII ('\\u2013', "
        "character 9): an API key is ASCII; was it pasted with a typographic character?"
    )
    assert "0123456789abcdef" not in message


@pytest.mark.parametrize("value", ["José", "caf\u00e9 app", "\u4e2d\u6587"])
def test_a_header_value_that_is_not_ascii_is_refused_at_the_call(value: str) -> None:
    # aiohttp sent it as UTF-8, which servers read as Latin-1 (a name garbled without a
    # word); httpx refuses it.
    with pytest.raises(ConfigError) as caught:
        rxllm.provider(
            "custom", base_url="https://example.com/v1", api_key=KEY, headers={"X-User": value}
        )
    assert "header 'X-User': its value holds a character that is not ASCII" in str(caught.value)


async def _sent_heads(**options: Any) -> list[bytes]:
    async with raw_server(response(b"200 OK", SSE, ANSWER)) as (port, heads):
        rec = await turn(port, **options)
    assert rec.terminal.type == "done"
    return heads


async def test_ascii_header_values_are_sent_as_given() -> None:
    heads = await _sent_heads(headers={"X-Title": "Caf%C3%A9 app"})
    assert b"\r\nX-Title: Caf%C3%A9 app\r\n" in heads[0]


# -- a turn ended while its request is still being sent ---------------------------------

BIG = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("x" * 24_000_000)])
"""A request larger than what the kernel buffers between two loopback sockets whose
receiving end reads nothing (a prompt with images is this size)."""


@asynccontextmanager
async def a_server_that_stops_reading() -> AsyncIterator[
    tuple[int, asyncio.Event, asyncio.Event, list[int]]
]:
    """A loopback server that reads a request's head and its body's first byte, then
    nothing until `go` is set, then the rest of the body to its end; yields its port,
    an event set once it stopped reading, `go`, and (after) how many bytes of the body
    came against how many the head announced."""
    go = asyncio.Event()
    counts: list[int] = []
    head_read = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        got = len(await reader.readexactly(1))  # the body's writing has begun
        head_read.set()
        await go.wait()
        try:
            async with asyncio.timeout(5):  # a client that keeps its end open sends no more
                while part := await reader.read(1 << 20):
                    got += len(part)
        except (ConnectionError, TimeoutError):
            pass
        counts[:] = [got, length]
        writer.close()

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)  # a small window
    listener.bind(("127.0.0.1", 0))
    server = await asyncio.start_server(handle, sock=listener)
    try:
        yield listener.getsockname()[1], head_read, go, counts
        go.set()
        for _ in range(1000):  # until the handler has counted (5 s at most)
            if counts:
                break
            await asyncio.sleep(0.01)
    finally:
        server.close()
        await server.wait_closed()


async def test_a_turn_cancelled_while_its_request_is_sent_sends_no_more_of_it() -> None:
    # The close flushed what the transport had buffered: the whole 24 MB request reached
    # the server after its turn was cancelled, a complete request the server then
    # answers (and bills), only without anyone listening.
    async with (
        a_server_that_stops_reading() as (port, head_read, go, counts),
        rxllm.provider(
            "custom",
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key=KEY,
            allow_private_network=True,
            max_attempts=1,
        ) as p,
    ):

        async def read() -> None:
            async for _ in p.astream(BIG):
                pass

        task = asyncio.ensure_future(read())
        await head_read.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        go.set()  # before the pool's close, which would wait for the rest to be sent
    got, length = counts
    assert got < length


async def test_a_turn_whose_deadline_expires_while_its_request_is_sent_sends_no_more() -> None:
    async with (
        a_server_that_stops_reading() as (port, _, go, counts),
        rxllm.provider(
            "custom",
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key=KEY,
            allow_private_network=True,
            max_attempts=1,
            read_timeout=0.5,
            first_event_timeout=None,
            idle_timeout=None,
        ) as p,
    ):
        rec = await p.complete(BIG)
        go.set()
    assert error_of(rec).kind == "stalled"
    got, length = counts
    assert got < length


async def test_a_subscription_disposed_while_its_request_is_sent_sends_no_more() -> None:
    async with (
        a_server_that_stops_reading() as (port, head_read, go, counts),
        rxllm.provider(
            "custom",
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key=KEY,
            allow_private_network=True,
            max_attempts=1,
        ) as p,
    ):
        seen: list[rxllm.Event] = []
        subscription = p.stream(BIG).subscribe(seen.append)
        await head_read.wait()
        subscription.dispose()
        go.set()
    got, length = counts
    assert got < length and seen == []


# -- a proxy that opens the tunnel, then drops it ---------------------------------------

PROXY_PASSWORD = "hunter3-proxy-password"


@pytest.mark.parametrize("then", [b"", b"HTTP/1.1 200 OK\r\n\r\n"])
async def test_a_tunnel_the_proxy_drops_names_the_proxy(
    monkeypatch: pytest.MonkeyPatch, then: bytes
) -> None:
    # The proxy answers CONNECT with 200, then closes (or writes HTTP where the TLS
    # handshake should be). It read "Cannot connect to host api.openai.invalid:443 ...
    # [the server closed the connection during the TLS handshake]": the provider blamed
    # for what its proxy did, the proxy named nowhere.
    answer = b"HTTP/1.1 200 Connection established\r\n\r\n" + then
    async with raw_server(answer) as (port, heads):
        monkeypatch.setenv("HTTPS_PROXY", f"http://bob:{PROXY_PASSWORD}@127.0.0.1:{port}")
        async with rxllm.provider(
            "openai", api_key=KEY, base_url="https://api.openai.invalid/v1", max_attempts=1
        ) as p:
            rec = await p.complete(ASK)
    assert heads and heads[0].startswith(b"CONNECT api.openai.invalid:443 ")
    error = error_of(rec)
    assert error.kind == "transport"
    assert error.message.startswith("ClientConnectorError: Cannot connect to host")
    assert error.message.endswith(f" (through the proxy 127.0.0.1:{port})")
    shown = f"{error.message} {rec.model_dump_json()}"
    assert PROXY_PASSWORD not in shown and KEY not in shown


# -- a server that resets the connection ------------------------------------------------


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a reset (RST), not a FIN: what a crashed server or a middlebox sends."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


PIECE = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'


@pytest.mark.parametrize(
    ("framing", "words"),
    [
        (b"Transfer-Encoding: chunked", "Not enough data to satisfy transfer length header."),
        (
            b"Content-Length: 1000",
            "Not enough data to satisfy content length header "
            f"(received {len(PIECE)} of 1000 bytes).",
        ),
    ],
)
async def test_a_reset_mid_body_says_so_in_words(framing: bytes, words: str) -> None:
    # It read "... transfer length header.. ConnectionResetError(104, 'Connection reset
    # by peer')": two periods and an exception's repr.
    piece = PIECE
    body = b"%x\r\n%s\r\n" % (len(piece), piece) if b"chunked" in framing else piece

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n%s\r\n\r\n" % framing)
        writer.write(body)
        await writer.drain()
        await asyncio.sleep(0.05)  # the piece read before the reset
        reset(writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        rec = await turn(server.sockets[0].getsockname()[1])
    finally:
        server.close()
        await server.wait_closed()
    error = error_of(rec)
    assert rec.text == "hi" and error.kind == "truncated"
    assert error.message == (
        "the connection closed mid-stream: Response payload is not completed: "
        f"{words} (ConnectionResetError: Connection reset by peer)"
    )


# -- a session passed in whose pool is full ---------------------------------------------


async def test_a_wait_for_a_full_pool_of_a_session_passed_in_says_so() -> None:
    # A session whose connector allows one connection per host, held by a turn its
    # server never answers: the next turn waits for the pool, and aiohttp's connect
    # timeout counts that wait. It read "connect_timeout expired: no connection to
    # custom within 0.5 s", as if the server could not be reached.
    answered = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await answered.wait()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit_per_host=1)) as own,
            rxllm.provider(
                "custom",
                base_url=f"http://127.0.0.1:{port}/v1",
                api_key=KEY,
                session=own,
                ssrf_guard=False,
                max_attempts=1,
                connect_timeout=0.5,
            ) as p,
        ):
            held = asyncio.ensure_future(p.complete(ASK))
            while not own.connector or not own.connector._acquired:  # the first one is out
                await asyncio.sleep(0.01)
            rec = await p.complete(ASK)
            answered.set()
            await held
    finally:
        server.close()
        await server.wait_closed()
    error = error_of(rec)
    assert error.kind == "stalled"
    assert error.message == (
        "connect_timeout expired: no connection to custom within 0.5 s (the session "
        "passed in allows 1 connection per host, and connect_timeout counts the wait "
        "for one of them to be free)"
    )
