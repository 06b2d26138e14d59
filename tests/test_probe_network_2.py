"""The hostile network, second round: what a proxy, a server's framing and its
encodings do to a turn, against raw loopback servers (`asyncio.start_server`) that
send exactly the bytes written here. Each ends in one clear error naming what went
wrong, or reads right; nothing hangs, nothing the caller holds secret is shown."""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.error_body import MAX_ERROR_BODY_BYTES
from tests.support import Serve

KEY = "sk-probe-network-2-0123456789abcdef"
PROXY_PASSWORD = "hunter2-proxy-password"
ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"model": "m", "choices": [choice]}).encode() + b"\n\n"


ANSWER = chunk({"content": "hi"}) + chunk({}, "stop") + b"data: [DONE]\n\n"
SSE = [("Content-Type", "text/event-stream")]


def response(status: bytes, headers: list[tuple[str, str]], body: bytes) -> bytes:
    """A whole HTTP/1.1 response, its Content-Length counted."""
    head = b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers)
    return b"HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s" % (status, head, len(body), body)


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)  # CGI: urllib ignores HTTP_PROXY


@asynccontextmanager
async def raw_server(answer: bytes) -> AsyncIterator[tuple[int, list[bytes]]]:
    """A loopback server that reads each request's head, answers `answer` and closes;
    yields its port and the heads it read."""
    heads: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            heads.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(answer)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], heads
    finally:
        server.close()
        await server.wait_closed()


async def turn(port: int, **options: Any) -> rxllm.StreamRecord:
    async with rxllm.provider(
        "custom",
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key=KEY,
        allow_private_network=True,
        **{"max_attempts": 1, **options},
    ) as p:
        return await p.complete(ASK)


def error_of(rec: rxllm.StreamRecord) -> rxllm.ErrorInfo:
    assert rec.terminal.type == "error", rec.terminal
    return rec.terminal.error


# -- a proxy that refuses the tunnel ----------------------------------------------------


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (b"407 Proxy Authentication Required", "407 Proxy Authentication Required"),
        (b"403 Forbidden", "403 Forbidden"),
        (b"502 Bad Gateway", "502 Bad Gateway"),
    ],
)
async def test_a_proxy_refusing_the_tunnel_says_so_and_shows_no_password(
    monkeypatch: pytest.MonkeyPatch, status: bytes, words: str
) -> None:
    # HTTPS through HTTPS_PROXY asks the proxy for a tunnel (CONNECT); a corporate proxy
    # that wants other credentials, or blocks the host, answers with its status. It was
    # "transport: the response is not valid HTTP: Proxy Authentication Required": the
    # proxy's answer is valid HTTP, and its status was lost.
    answer = b"HTTP/1.1 %s\r\nProxy-Authenticate: Basic realm=corp\r\nContent-Length: 0\r\n\r\n"
    async with raw_server(answer % status) as (port, heads):
        monkeypatch.setenv("HTTPS_PROXY", f"http://bob:{PROXY_PASSWORD}@127.0.0.1:{port}")
        async with rxllm.provider(
            "openai", api_key=KEY, base_url="https://api.openai.invalid/v1", max_attempts=1
        ) as p:
            rec = await p.complete(ASK)
    assert heads and heads[0].startswith(b"CONNECT api.openai.invalid:443 ")
    assert KEY.encode() not in heads[0]  # the tunnel's request carries no API key
    error = error_of(rec)
    assert error.kind == "transport" and error.status is None  # the provider said nothing
    assert error.message == (
        f"the proxy refused to open a tunnel to api.openai.invalid:443: HTTP {words}"
    )
    shown = f"{error.message} {error.raw} {rec.model_dump_json()}"
    assert PROXY_PASSWORD not in shown and KEY not in shown


# -- encodings --------------------------------------------------------------------------

ERROR_BODY = json.dumps(
    {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
).encode()


async def test_a_rejection_whose_body_is_not_the_encoding_it_names_says_so() -> None:
    # A proxy that labels every answer `Content-Encoding: gzip` and sends a plain body:
    # the 401 and its headers stand; the body came but could not be decoded. It read
    # "HTTP 401: (the body did not arrive)", which it did.
    answer = response(
        b"401 Unauthorized",
        [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
        ERROR_BODY,
    )
    async with raw_server(answer) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert (error.kind, error.status) == ("rejected", 401)
    assert error.message == (
        "HTTP 401: (the body could not be decoded: Can not decode content-encoding: gzip)"
    )


# -- answers that are no stream by their status ----------------------------------------


@pytest.mark.parametrize(
    ("answer", "status", "words"),
    [
        (b"HTTP/1.1 204 No Content\r\n\r\n", 204, "No Content"),
        (b"HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\n\r\n", 205, "Reset Content"),
        (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
            + ANSWER,
            101,
            "Switching Protocols",
        ),
    ],
)
async def test_a_status_that_carries_no_stream_is_one_protocol_error_naming_it(
    answer: bytes, status: int, words: str
) -> None:
    # A 204 (or 205) has no body by definition, and a 101 switches the connection to
    # another protocol: neither is a stream that "ended without its terminal marker"
    # (`truncated`, which was retried as if the next answer could differ).
    async with raw_server(answer) as (port, heads):
        rec = await turn(port, max_attempts=3)
    error = error_of(rec)
    assert (error.kind, error.status) == ("protocol", status)
    assert error.message == (
        f"HTTP {status} {words}: the endpoint answered with no stream where one was asked for"
    )
    assert len(heads) == 1 and len(rec.attempts) == 1


# -- TLS to a server that speaks none ---------------------------------------------------


async def test_https_to_a_plain_http_server_says_it_does_not_speak_tls(serve: Serve) -> None:
    # "https://localhost:11434" for a local server that speaks plain HTTP: it answers the
    # ClientHello with a 400 in clear text, which OpenSSL reads as WRONG_VERSION_NUMBER.
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text="never reached over TLS")

    url = (await serve(handler)).replace("http://", "https://")
    async with rxllm.provider(
        "custom", base_url=url, api_key=KEY, allow_private_network=True, max_attempts=1
    ) as p:
        rec = await p.complete(ASK)
    error = error_of(rec)
    assert error.kind == "transport" and "WRONG_VERSION_NUMBER" in error.message
    assert error.message.endswith(
        ": the server does not speak TLS (an http:// server at an https:// URL?)"
    )


async def test_a_server_that_hangs_up_on_the_tls_handshake_says_so() -> None:
    # It was "ClientConnectorError: Cannot connect to host 127.0.0.1:port ssl:default
    # [None]": aiohttp writes the reset's missing strerror as is.
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(10)  # the start of the ClientHello
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with rxllm.provider(
            "custom",
            base_url=f"https://127.0.0.1:{port}/v1",
            api_key=KEY,
            allow_private_network=True,
            max_attempts=1,
        ) as p:
            rec = await p.complete(ASK)
    finally:
        server.close()
        await server.wait_closed()
    error = error_of(rec)
    assert error.kind == "transport" and "[None]" not in error.message
    assert error.message == (
        f"ClientConnectorError: Cannot connect to host 127.0.0.1:{port} ssl:default "
        "[ConnectionResetError: the server closed the connection during the TLS handshake]"
    )


# -- a server that ignores `stream: true` -------------------------------------------------

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "whole"},
            "finish_reason": "stop",
        }
    ],
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "text", "text": "whole"}],
    "stop_reason": "end_turn",
}


@pytest.mark.parametrize(
    ("provider", "body", "what"),
    [
        ("custom", COMPLETION, "an OpenAI chat completion"),
        ("anthropic", MESSAGE, "an Anthropic message"),
    ],
)
async def test_a_whole_response_in_place_of_the_stream_says_the_stream_was_ignored(
    provider: str, body: dict[str, Any], what: str
) -> None:
    # A gateway or server that drops `stream: true` answers the whole response as JSON.
    # It read "the response body is not an SSE stream: '{...'", leaving the reader to
    # recognize the completion in the quote (cut at 300 characters).
    answer = response(b"200 OK", [("Content-Type", "application/json")], json.dumps(body).encode())
    async with (
        raw_server(answer) as (port, _),
        rxllm.provider(
            provider,
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key=KEY,
            ssrf_guard=False,
            max_attempts=1,
        ) as p,
    ):
        rec = await p.complete(ASK)
    error = error_of(rec)
    assert error.kind == "protocol" and rec.text == ""
    assert error.message.startswith(
        f"the endpoint answered a whole response, not a stream ({what}): it ignored the "
        "request to stream: '{"
    )


# -- framings and encodings that read right, as guards ----------------------------------


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data)


def chunked(*parts: bytes, extension: bytes = b"", trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x%s\r\n%s\r\n" % (len(p), extension, p) for p in parts)
    return body + b"0\r\n" + trailer + b"\r\n"


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(
            response(b"200 OK", [*SSE, ("Content-Encoding", "gzip")], gzipped(ANSWER)), id="gzip"
        ),
        pytest.param(
            response(b"200 OK", [*SSE, ("Content-Encoding", "deflate")], zlib.compress(ANSWER)),
            id="deflate",
        ),
        pytest.param(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
            + response(b"200 OK", SSE, ANSWER),
            id="1xx-then-200",
        ),
        pytest.param(
            HEAD
            + b"Transfer-Encoding: chunked\r\n\r\n"
            + chunked(ANSWER[:25], ANSWER[25:], extension=b";ext=1", trailer=b"X-Trailer: t\r\n"),
            id="chunk-extensions-and-trailer",
        ),
        pytest.param(
            b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + ANSWER,
            id="http-1.0-until-close",
        ),
        pytest.param(
            response(b"200 OK", SSE, b"\xef\xbb\xbf" + ANSWER.replace(b"\n", b"\r")),
            id="bom-and-cr-line-ends",
        ),
        pytest.param(
            response(
                b"200 OK",
                SSE,
                b"retry: 3000\nid: 1\n\n" + ANSWER.replace(b"data:", b"id: 7\ndata:"),
            ),
            id="retry-and-id-fields",
        ),
    ],
)
async def test_a_stream_in_any_of_http_s_framings_reads_right(answer: bytes) -> None:
    async with raw_server(answer) as (port, _):
        rec = await turn(port)
    assert rec.terminal.type == "done" and rec.text == "hi"


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        pytest.param(
            HEAD + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(ANSWER),
            "the response is not valid HTTP: Transfer-Encoding can't be present with "
            "Content-Length",
            id="length-and-chunked",
        ),
        pytest.param(
            HEAD + b"Content-Length: %d\r\nContent-Length: 3\r\n\r\n" % len(ANSWER) + ANSWER,
            "the response is not valid HTTP: Duplicate Content-Length",
            id="two-lengths",
        ),
        pytest.param(
            HEAD + b"X-Big: " + b"a" * 100_000 + b"\r\n\r\n",
            "the response is not valid HTTP: Got more than 8190 bytes when reading",
            id="a-header-past-aiohttp-s-limit",
        ),
    ],
)
async def test_a_head_that_could_smuggle_or_overflow_is_one_transport_error(
    answer: bytes, words: str
) -> None:
    async with raw_server(answer) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert error.kind == "transport" and error.status is None
    assert error.message.startswith(words)


@functools.cache
def bomb() -> bytes:
    """8 MB of one SSE line, gzipped to about 8 KB."""
    return gzipped(b"data: " + b"a" * (8 * 1024 * 1024) + b"\n\n")


async def test_a_decompression_bomb_is_cut_at_max_response_bytes_counted_decoded() -> None:
    answer = response(b"200 OK", [*SSE, ("Content-Encoding", "gzip")], bomb())
    assert len(answer) < 1_000_000
    async with raw_server(answer) as (port, _):
        rec = await turn(port, max_response_bytes=1_000_000, max_line_bytes=16 * 1024 * 1024)
    error = error_of(rec)
    assert (error.kind, error.message) == (
        "limit",
        "the response exceeds max_response_bytes (1000000)",
    )


async def test_a_decompression_bomb_as_a_rejection_body_is_cut_at_the_error_body_cap() -> None:
    answer = response(
        b"400 Bad Request",
        [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
        bomb(),
    )
    async with raw_server(answer) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert (error.kind, error.status) == ("rejected", 400)
    assert error.raw is not None and len(error.raw) == MAX_ERROR_BODY_BYTES


async def test_a_gzip_stream_is_read_as_it_arrives_not_at_its_end() -> None:
    # Each event flushed (Z_SYNC_FLUSH) is readable at once: the server holds its end
    # until the turn has shown the first text, which a client that waited for the whole
    # gzip member would never show.
    compressor = zlib.compressobj(wbits=31)
    seen_first = asyncio.Event()

    def flushed(data: bytes) -> bytes:
        out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
        return b"%x\r\n%s\r\n" % (len(out), out)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = HEAD + b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
        writer.write(head + flushed(chunk({"content": "first "})))
        await writer.drain()
        try:
            await asyncio.wait_for(seen_first.wait(), 5)
            rest = chunk({"content": "then the rest"}, "stop")
        except TimeoutError:
            rest = chunk({"content": "only at the end"}, "stop")
        tail = compressor.compress(rest + b"data: [DONE]\n\n") + compressor.flush()
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    texts: list[str] = []
    try:
        async with (
            rxllm.provider(
                "custom",
                base_url=f"http://127.0.0.1:{port}/v1",
                api_key=KEY,
                allow_private_network=True,
            ) as p,
            p.astream(ASK) as events,
        ):
            async for event in events:
                if event.type == "text":
                    texts.append(event.text)
                    seen_first.set()
    finally:
        server.close()
        await server.wait_closed()
    assert "".join(texts) == "first then the rest"


# -- a server that echoes the key --------------------------------------------------------


async def test_a_rejection_echoing_the_key_in_its_fields_and_request_id_shows_it_nowhere() -> None:
    # The message and raw body were redacted; the structured fields (`param`, `code`)
    # and the request id header were kept as sent, into the record and every log.
    body = json.dumps(
        {"error": {"message": f"bad key {KEY}", "code": KEY, "param": f"key={KEY}"}}
    ).encode()
    answer = response(
        b"401 Unauthorized",
        [("Content-Type", "application/json"), ("x-request-id", KEY)],
        body,
    )
    async with raw_server(answer) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert (error.kind, error.status) == ("rejected", 401)
    assert (error.code, error.param, error.request_id) == (
        "[redacted]",
        "key=[redacted]",
        "[redacted]",
    )
    assert KEY not in rec.model_dump_json()


async def test_an_error_frame_echoing_the_key_in_its_fields_shows_it_nowhere() -> None:
    # The same inside a stream: an error frame after `200 OK` whose code and param quote
    # the key (the normalizer's `fail` redacted its message and raw only).
    frame = {"error": {"message": f"bad key {KEY}", "code": KEY, "param": KEY}}
    body = chunk({"role": "assistant"}) + b"data: " + json.dumps(frame).encode() + b"\n\n"
    answer = response(b"200 OK", [*SSE, ("x-request-id", KEY)], body)
    async with raw_server(answer) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert error.kind == "stream_error"
    assert (error.code, error.param, error.request_id) == ("[redacted]",) * 3
    assert KEY not in rec.model_dump_json()


async def test_a_header_past_the_limit_quoted_cut_shows_no_start_of_an_echoed_key() -> None:
    # aiohttp quotes the first 100 bytes of a line too long and cuts there: a key the
    # cut fell in showed its start ("sk-probe-network-2-01..."), which `redact` cannot
    # recognize as the key.
    head = HEAD + b"X-Echo: " + b"a" * 70 + b" " + KEY.encode() + b"b" * 9000 + b"\r\n\r\n"
    async with raw_server(head) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert error.kind == "transport"
    assert error.message.startswith(
        "the response is not valid HTTP: Got more than 8190 bytes when reading: b'aaa"
    )
    assert error.message.endswith(" ...'.")
    assert not any(KEY[:n] in error.message for n in range(6, len(KEY) + 1))


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1\r\nX-Evil: 1",
        "http://127.0.0.1:8080/v1\n/x",
        "http://127.0.0.1:8080/v\t1",
        "http://127.0.0.1:8080/v 1",
        "http://127.0.0.1:8080/v1\x00/x",
        "http://127.0.0.1:8080/v1\x7f",
    ],
)
def test_a_base_url_with_whitespace_or_a_control_character_is_refused_at_the_call(
    base_url: str,
) -> None:
    """yarl drops a line break or tab anywhere in a URL (WHATWG) and quotes a space or a
    NUL, so "/v1\\r\\nX-Evil: 1" was sent as "/v1X-Evil:%201/chat/completions": nothing
    injected, but not the URL written (httpx refuses such a URL outright)."""
    with pytest.raises(rxllm.ConfigError, match="whitespace or a control character"):
        rxllm.provider("custom", base_url=base_url, api_key="sk-test", ssrf_guard=False)


@pytest.mark.parametrize(
    "base_url",
    ["http://127.0.0.1:8080/v1\n", " http://127.0.0.1:8080/v1 ", "\thttp://127.0.0.1:8080/v1\r\n"],
)
def test_whitespace_around_a_base_url_is_no_part_of_it(base_url: str) -> None:
    # a line end read from a file or an environment variable, a pasted space
    p = rxllm.provider("custom", base_url=base_url, api_key="sk-test", ssrf_guard=False)
    assert p.base_url == "http://127.0.0.1:8080/v1"
    assert p.http_request(ASK).url == "http://127.0.0.1:8080/v1/chat/completions"


def test_a_base_url_of_whitespace_is_no_base_url() -> None:
    with pytest.raises(rxllm.ConfigError, match="needs base_url"):
        rxllm.provider("custom", base_url=" \n", api_key="sk-test")
