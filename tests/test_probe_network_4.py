"""The hostile network, fourth round: a response compressed in an encoding this
install cannot decode (`br` without Brotli, `zstd` without backports.zstd), and a very
large request body, whose JSON encoding the turn's deadlines count."""

from __future__ import annotations

import aiohttp.http_parser
import pytest

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
