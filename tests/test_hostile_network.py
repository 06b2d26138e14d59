"""The hostile-network layer attacked: address spellings the guard must see through,
redirects that try to smuggle credentials or crash the source, a pool shared by threads.

Each test named for a defect failed on the code before its fix; the few others
(`..._still_openable`, `..._pass_when_allowed`, `..._reuse_one_checked_connection`) pin
what must keep working around the fixes. Nothing connects anywhere but a loopback
server the test started.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from yarl import URL

import rxllm
from rxllm.local import LocalServer
from rxllm.sources.guard import (
    METADATA_ADDRESSES,
    AddressRefused,
    SsrfGuard,
    check_address,
    check_url,
)
from rxllm.sources.pool import SessionPool
from rxllm.sources.redirects import next_hop, without_credentials
from tests.support import Serve

KEY = "sk-hostile-test-0123456789abcdefghijKLMN"
ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
BASE = URL("https://api.example.com/v1/chat/completions")
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
SSE_ANSWER = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


# -- addresses ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "::ffff:0:7f00:1",  # IPv4-translated (SIIT) form of 127.0.0.1: inside ::/8
        "::ffff:0:a9fe:a9fe",  # ... and of the metadata address
        "::1:2:3:4",  # ::/8, reserved by the IETF
        "400::1",
        "4000::1",  # outside 2000::/3: unallocated, never an Internet server
        "5f00::1",  # SRv6 SIDs (RFC 9602)
        "fe00::1",  # fe00::/9, reserved
    ],
)
def test_ipv6_outside_global_unicast_is_refused_even_when_private_is_allowed(
    address: str,
) -> None:
    """Only 2000::/3 is allocated as global unicast; Python's own registry (3.11) calls
    `::ffff:0:7f00:1` and `fe00::1` global, so the guard let them through."""
    assert check_address(address) is not None
    assert check_address(address, allow_private_network=True) is not None


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b:1::a9fe:a9fe",  # a /96 local-use prefix (RFC 8215, RFC 6052 layout)
        "64:ff9b:1:0:a9:fea9:fe00:0",  # a /64 one
        "64:ff9b:1:a9:fe:a9fe::",  # a /56 one
        "64:ff9b:1:a9fe:a9:fe00::",  # the /48 itself
        "64:ff9b:1::6464:64c8",  # Alibaba's 100.100.100.200
    ],
)
def test_local_use_nat64_never_opens_a_metadata_address(address: str) -> None:
    refusal = check_address(address, allow_private_network=True)
    assert refusal is not None and "cloud metadata" in refusal
    assert check_address(address, allow_private_network=["64:ff9b:1::/48"]) is not None


def test_local_use_nat64_of_a_private_address_is_still_openable() -> None:
    assert check_address("64:ff9b:1::a00:1") is not None
    assert check_address("64:ff9b:1::a00:1", allow_private_network=True) is None


@pytest.mark.parametrize(
    "address",
    [
        "169.254.170.23",  # EKS Pod Identity agent: hands out IAM credentials
        "168.63.129.16",  # Azure WireServer: a public-looking address inside every VNet
        "::ffff:168.63.129.16",
        "64:ff9b::a83f:8110",
    ],
)
def test_more_metadata_endpoints_stay_refused(address: str) -> None:
    refusal = check_address(address, allow_private_network=True)
    assert refusal is not None and "cloud metadata" in refusal


def test_the_metadata_list_is_the_documented_one() -> None:
    assert {"169.254.170.23", "168.63.129.16"} <= {str(a) for a in METADATA_ADDRESSES}


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1./v1", "not an IP address"),  # aiohttp takes it for a literal
        ("http://08.0.0.1/v1", "not an IP address"),
        ("http://134744072/v1", "8.8.8.8"),  # a legacy spelling of a public address
        ("http://0010.0.0.1/v1", "8.0.0.1"),
    ],
)
def test_hosts_the_connector_would_hand_to_the_system_resolver_are_refused(
    url: str, says: str
) -> None:
    """aiohttp treats a host of digits and dots as an address and connects to it without
    asking the guarded resolver. 3.14 refuses non-canonical ones itself (a transport
    error); an aiohttp without that check leaves them to the system, which parses
    `127.1` its own way and looks `127.0.0.1.` up in DNS, unchecked. Only canonical
    addresses pass the guard."""
    refusal = check_url(url, allow_private_network=True)
    assert refusal is not None and says in refusal, refusal
    with pytest.raises(AddressRefused):
        SsrfGuard(allow_private_network=True).check(URL(url))


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1/v1", "http://[::1]:8000/v1", "http://[fe80::1%25eth0]/", "http://0x7f.1/"],
)
def test_canonical_addresses_and_names_pass_when_allowed(url: str) -> None:
    # `0x7f.1` is no literal to aiohttp: it goes through the guarded resolver.
    assert check_url(url, allow_private_network=True) is None


@pytest.mark.parametrize("host", ["127.0.0.1.", "127.1", "2130706433"])
async def test_an_odd_spelling_of_an_allowed_address_is_one_policy_error(
    local_server: LocalServer, host: str
) -> None:
    """Before: aiohttp's InvalidUrlClientError, reported as a transport failure and
    retried three times with backoff, though no retry can ever succeed."""
    url = f"http://{host}:{local_server.port}/v1"
    provider = rxllm.provider("custom", base_url=url, allow_private_network=True)
    rec = await provider.complete(ASK)
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "policy", rec.terminal.error
    assert "127.0.0.1" in rec.terminal.error.message
    assert len(rec.attempts) == 1
    assert local_server.requests == []
    await provider.aclose()


# -- redirects ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "location",
    [
        "https://evil:pw@api.example.com/v2/chat/completions",  # same origin
        "https://user@other.example.com/v1/chat/completions",  # another origin
        "https://api.example.com:443@other.example.com/",  # the host is other.example.com
    ],
)
def test_a_location_carrying_credentials_is_refused(location: str) -> None:
    refusal = next_hop(BASE, 307, location, HEADERS, (KEY,), 0)
    assert isinstance(refusal, str) and "credentials" in refusal
    assert "pw" not in refusal


async def test_a_redirect_with_userinfo_is_a_policy_error_not_an_exception(
    serve: Serve,
) -> None:
    """Before: aiohttp raised ValueError ('Cannot combine AUTHORIZATION header with ...
    credentials encoded in URL'), which left `complete()` as an exception: a hostile
    endpoint could crash the caller's turn instead of ending it with an error event."""
    paths: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        paths.append(request.path)
        if request.path == "/v1/chat/completions":
            host = request.headers["Host"]
            raise web.HTTPTemporaryRedirect(f"http://evil:pw@{host}/moved/chat/completions")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(SSE_ANSWER)
        return response

    url = await serve(handler)
    async with rxllm.provider("openai", api_key=KEY, base_url=url) as provider:
        rec = await provider.complete(ASK)
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "policy" and rec.terminal.error.status == 307
    assert "credentials" in rec.terminal.error.message
    assert paths == ["/v1/chat/completions"]


def test_a_placeholder_key_does_not_strip_ordinary_headers_on_another_origin() -> None:
    """A key found by value is matched as a whole token: with `api_key="x"` the hop lost
    `Accept: text/event-stream` (and with `"a"`, `Content-Type`)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "anthropic-version": "2023-06-01",
        "Authorization": "Bearer x",
        "X-Token": "x",
    }
    kept = {k: v for k, v in headers.items() if k not in ("Authorization", "X-Token")}
    for placeholder in ("x", "a", "-", "1"):
        headers["X-Token"] = placeholder
        assert without_credentials(headers, (placeholder,)) == kept, placeholder


async def test_a_placeholder_key_keeps_accept_across_origins(local_server: LocalServer) -> None:
    provider = rxllm.provider("openai", api_key="x", base_url=local_server.url)
    rec = await provider.complete(
        rxllm.ChatRequest(model="fault/redirect_other_origin", messages=ASK.messages)
    )
    assert rec.terminal.type == "done", rec.terminal
    [arrived] = local_server.other_origin_requests
    assert arrived["headers"].get("Accept") == "text/event-stream"
    assert "Authorization" not in arrived["headers"]
    await provider.aclose()


def test_a_hop_never_shows_its_headers() -> None:
    hop = next_hop(BASE, 307, "/v2", HEADERS, (KEY,), 0)
    assert not isinstance(hop, str)
    assert KEY not in repr(hop) and KEY not in str(hop)


# -- the pool -------------------------------------------------------------------------------


class _ConcurrentLoop:
    """Stands for another thread's event loop: asked whether it is closed while this
    thread walks the pool, its thread opens a session of its own at that very moment
    (which is what a thread per loop, each calling `asyncio.run`, does)."""

    def __init__(self, pool: SessionPool, entry: Any) -> None:
        self.pool, self.entry = pool, entry

    def is_closed(self) -> bool:
        self.pool._entries[object()] = self.entry  # type: ignore[index]
        return False


async def test_a_pool_shared_by_threads_survives_a_concurrent_open() -> None:
    """Before: `RuntimeError: dictionary changed size during iteration` out of
    `session()`, which the source reports through `on_error`: a crashed turn. Seen with
    8 threads each running event loops against one provider."""
    pool = SessionPool()
    session = pool.session()
    entry = pool._entries[asyncio.get_running_loop()]
    await session.close()  # closed: the next call opens anew and sweeps stale loops
    pool._entries[_ConcurrentLoop(pool, entry)] = entry  # type: ignore[index]
    reopened = pool.session()
    assert reopened is not session and not reopened.closed
    for key in [k for k in pool._entries if k is not asyncio.get_running_loop()]:
        del pool._entries[key]
    await pool.aclose()


@pytest.fixture
async def counting_server() -> AsyncIterator[tuple[str, list[Any]]]:
    """An OpenAI-style endpoint that records the peer of each request: one peer for
    several requests is one reused connection."""
    peers: list[Any] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(SSE_ANSWER)
        return response

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1", peers
    await runner.cleanup()


async def test_guarded_turns_reuse_one_checked_connection(
    counting_server: tuple[str, list[Any]],
) -> None:
    """The guard's resolver and URL check run per request, the connection is still
    pooled: five guarded turns, one connection."""
    url, peers = counting_server
    async with rxllm.provider(
        "custom", api_key=KEY, base_url=url, allow_private_network=["127.0.0.1/32"]
    ) as provider:
        for _ in range(5):
            rec = await provider.complete(ASK)
            assert rec.terminal.type == "done", rec.terminal
            await asyncio.sleep(0.01)
    assert len(peers) == 5 and len(set(peers)) == 1
