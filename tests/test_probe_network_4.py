"""The hostile network, fourth round: a response compressed in an encoding this
install cannot decode (`br` without Brotli, `zstd` without backports.zstd), and a very
large request body, whose JSON encoding the turn's deadlines count."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp.http_parser
import pytest
from aiohttp import web

import rxllm
from rxllm.errors import ConfigError
from rxllm.sources.http import PIECE, LaterBody, json_body
from tests.support import Handler, Serve
from tests.test_probe_network_2 import (
    ANSWER,
    KEY,
    SSE,
    error_of,
    no_proxy_environment,
    raw_server,
    response,
    turn,
)

__all__ = ["no_proxy_environment"]  # the autouse fixture, imported to apply here too


# -- br and zstd without their packages -------------------------------------------------

# aiohttp's words for each, naming the package it wants (`http_parser.DeflateBuffer`).
MISSING = {
    "br": "Can not decode content-encoding: brotli (br). Please install `Brotli`",
    "zstd": "Can not decode content-encoding: zstandard (zstd). Please install `backports.zstd`",
}


@pytest.fixture
def no_decoders(monkeypatch: pytest.MonkeyPatch) -> None:
    """This install as one without Brotli and backports.zstd: aiohttp asks the flags
    its `compression_utils` set at import (`HAS_BROTLI`, `HAS_ZSTD`) where it opens a
    body's decoder (`http_parser.DeflateBuffer`), for its C parser too."""
    monkeypatch.setattr(aiohttp.http_parser, "HAS_BROTLI", False)
    monkeypatch.setattr(aiohttp.http_parser, "HAS_ZSTD", False)


@pytest.mark.usefixtures("no_decoders")
@pytest.mark.parametrize("coding", ["br", "zstd"])
@pytest.mark.parametrize("status", [b"200 OK", b"429 Too Many Requests"])
async def test_an_encoding_whose_package_is_missing_says_what_to_install(
    coding: str, status: bytes
) -> None:
    """A server (or a proxy) that compresses with `br` or `zstd` though the request's
    Accept-Encoding did not offer it: aiohttp refuses the head. It read "the response
    is not valid HTTP: Can not decode ...", a `transport` error retried as a network
    fault, which the next answer repeats; now it is one error, not retried, that says
    the body is compressed, which package decodes it, and that the request did not
    offer that encoding."""
    body = b"\x8b\x02\x80 compressed bytes"  # never read: the head is refused first
    answer = response(status, [*SSE, ("Content-Encoding", coding)], body)
    async with raw_server(answer) as (port, heads):
        rec = await turn(port, max_attempts=3)
    error = error_of(rec)
    assert (error.kind, error.status) == ("protocol", None)
    assert error.message == (
        "the response is compressed in an encoding this install cannot decode: "
        f"{MISSING[coding]} (aiohttp[speedups] brings it); the request did not offer that "
        "encoding (Accept-Encoding), so the server or a proxy on the way ignored it"
    )
    assert "not valid HTTP" not in error.message
    assert len(heads) == 1  # not retried: the same server answers the same way


async def test_a_head_that_is_no_http_still_says_so() -> None:
    """The near miss: a head aiohttp cannot parse for another reason is still "not
    valid HTTP", a transport error."""
    async with raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n" + ANSWER) as (port, _):
        rec = await turn(port)
    error = error_of(rec)
    assert error.kind == "transport"
    assert error.message.startswith("the response is not valid HTTP: ")


# -- a very large request body ------------------------------------------------------------

# A data URL of 32 MB of base64 (a 24 MB image): 32 pieces of `PIECE` characters.
BIG_IMAGE = "data:image/png;base64," + "iVBORw0KGgo" * (32 * 1024 * 1024 // 11)


def big_request(**params: Any) -> rxllm.ChatRequest:
    image = rxllm.Message.user("What is in this image?", images=[BIG_IMAGE])
    return rxllm.ChatRequest(model="m", messages=[image], params=params)


async def read_whole(request: web.Request) -> bytes:
    """A body larger than aiohttp's server reads whole (`client_max_size`)."""
    return b"".join([chunk async for chunk in request.content.iter_any()])


async def big_turn(serve: Serve, handler: Handler, **options: Any) -> rxllm.StreamRecord:
    base_url = await serve(handler)
    async with rxllm.provider(
        "custom", base_url=base_url, api_key=KEY, allow_private_network=True, **options
    ) as p:
        return await p.complete(big_request())


async def test_a_large_body_is_encoded_with_the_loop_free_for_other_streams(
    serve: Serve,
) -> None:
    """A request with a 24 MB image (32 MB of base64): its body was JSON-encoded at
    the call, in one go (`json.dumps` holds the GIL while it writes one string, so no
    thread frees the loop), and every other stream on the loop stood still meanwhile
    (30 MB: 0.15 to 1.3 s). Now it is encoded as the request is sent, a piece at a time: by the time
    the request reaches the server, the loop has run between the pieces (a task that
    counts its turns on the loop counted one per piece at least)."""
    turns = 0

    async def other_stream() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    seen: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(turns)  # the head has come; the body follows
        body = await read_whole(request)
        assert json.loads(body)["messages"][0]["content"][1]["image_url"]["url"] == BIG_IMAGE
        return web.Response(body=ANSWER, content_type="text/event-stream")

    counting = asyncio.create_task(other_stream())
    await asyncio.sleep(0)
    try:
        before = turns
        rec = await big_turn(serve, handler)
    finally:
        counting.cancel()
    assert rec.terminal.type == "done", rec.terminal
    assert rec.text == "hi"
    assert seen[0] - before >= len(BIG_IMAGE) // PIECE


async def test_a_turn_ended_while_its_large_body_encodes_sends_nothing(serve: Serve) -> None:
    """A turn cancelled 20 turns of the loop after it began (the request reached the
    server 13 turns after it began when its body was encoded at the call): now the
    encoding, 32 pieces, is the turn's, so it ends there and nothing is sent."""
    reached: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        reached.append(request.path)
        await read_whole(request)
        return web.Response(body=ANSWER, content_type="text/event-stream")

    cancel = asyncio.Event()

    async def canceller() -> None:
        for _ in range(20):
            await asyncio.sleep(0)
        cancel.set()

    base_url = await serve(handler)
    async with rxllm.provider(
        "custom", base_url=base_url, api_key=KEY, allow_private_network=True
    ) as p:
        ending = asyncio.create_task(canceller())
        rec = await p.complete(big_request(), cancel=cancel)
        await ending
    assert rec.terminal.type == "cancelled", rec.terminal
    assert reached == []


async def test_a_total_timeout_counts_the_encoding_of_a_large_body(serve: Serve) -> None:
    """The turn's deadlines start as it is subscribed, and the encoding is now the
    turn's: a total_timeout far shorter than it ends the turn while it encodes, with
    the deadline's error, and nothing reaches the server."""
    reached: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        reached.append(request.path)
        await read_whole(request)
        return web.Response(body=ANSWER, content_type="text/event-stream")

    rec = await big_turn(serve, handler, total_timeout=0.001)
    error = error_of(rec)
    assert error.kind == "stalled"
    assert "total_timeout" in error.message
    assert reached == []


async def test_a_large_body_is_the_json_a_small_one_would_be() -> None:
    """The pieces join into the bytes `json.dumps` writes whole: escapes, characters
    beyond ASCII and beyond the BMP, in the long strings and around them."""
    text = 'say "hi"\\\n\t\x00 é ☂ 😀 \u2028 </script>' * (3 * PIECE // 30)
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "n": [1, 2.5, True, None, ("é", {"k": text[: PIECE + 7]})],
        "stream": True,
    }
    assert await LaterBody(body).encoded() == json_body(body)
    assert LaterBody(body).now() == json_body(body)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"temperature": float("nan")}, "the request cannot be sent as JSON"),
        ({"user": "\udcff"}, "the request holds text that is not Unicode"),
    ],
)
def test_a_large_request_that_is_no_json_is_refused_at_the_call(
    params: dict[str, Any], words: str
) -> None:
    """Its body is encoded later, and checked at the call as before."""
    p = rxllm.provider("custom", base_url="http://127.0.0.1:9/v1", allow_private_network=True)
    with pytest.raises(ConfigError, match=words):
        p.stream(big_request(**params))
    with pytest.raises(ConfigError, match=r"cannot be sent as JSON: .* not JSON serializable"):
        p.stream(big_request(user=object()))  # a ConfigError too, where json's TypeError was
