"""The hostile network, left open by session 36: a response compressed in `br` or `zstd`
that this install cannot decode, where the caller's own Accept-Encoding header asked for
it (ae52bea's message said the request had not offered it)."""

from __future__ import annotations

import pytest

from tests.test_probe_network_2 import (
    SSE,
    error_of,
    no_proxy_environment,
    raw_server,
    response,
    turn,
)
from tests.test_probe_network_4 import MISSING, no_decoders

__all__ = ["no_decoders", "no_proxy_environment"]  # the fixtures, imported to apply here


@pytest.mark.usefixtures("no_decoders")
@pytest.mark.parametrize(
    ("coding", "accept"),
    [("br", "br"), ("zstd", "gzip, zstd;q=0.5"), ("br", "*")],
)
async def test_an_encoding_the_caller_asked_for_says_so(coding: str, accept: str) -> None:
    """The caller's header replaces aiohttp's own (which lists only what this install
    decodes) and offers the encoding: the message says the request offered it in that
    header, and what to do. Before, it said the request did not offer that encoding and
    the server or a proxy ignored it."""
    answer = response(b"200 OK", [*SSE, ("Content-Encoding", coding)], b"\x8b\x02 compressed")
    async with raw_server(answer) as (port, heads):
        rec = await turn(port, max_attempts=3, headers={"Accept-Encoding": accept})
    assert f"\r\nAccept-Encoding: {accept}\r\n".encode() in heads[0]
    error = error_of(rec)
    assert (error.kind, error.status) == ("protocol", None)
    assert error.message == (
        "the response is compressed in an encoding this install cannot decode: "
        f"{MISSING[coding]} (aiohttp[speedups] brings it); the request offered that encoding "
        f"in its own Accept-Encoding header ({accept!r}): install the package, or leave the "
        "encoding out of that header"
    )
    assert len(heads) == 1  # not retried, as before


@pytest.mark.usefixtures("no_decoders")
@pytest.mark.parametrize("accept", ["gzip, br", "br;q=0, gzip", "identity"])
async def test_a_header_of_the_callers_without_that_encoding_still_says_not_offered(
    accept: str,
) -> None:
    """A caller's header that lists another coding, or refuses this one (`q=0`): the
    request did not offer what came, as ae52bea's message says."""
    answer = response(b"200 OK", [*SSE, ("Content-Encoding", "zstd")], b"\x28\xb5 compressed")
    if accept.startswith("br;q=0"):
        answer = response(b"200 OK", [*SSE, ("Content-Encoding", "br")], b"\x8b\x02 compressed")
    async with raw_server(answer) as (port, _):
        rec = await turn(port, headers={"Accept-Encoding": accept})
    assert error_of(rec).message.endswith(
        "the request did not offer that encoding (Accept-Encoding), so the server or a proxy "
        "on the way ignored it"
    )
