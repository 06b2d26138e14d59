"""The SSRF guard: the address table, the URL check, the resolver, and guarded providers.

No test here connects anywhere but a loopback server it started: names resolve through
a fake resolver (or `localhost`), and the `no_outside_connections` fixture records
every connect and refuses any that is not loopback, so a guard that let one through
would fail the test instead of reaching the network.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from ipaddress import ip_address
from typing import Any

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

import rxllm
from rxllm.local import LocalServer
from rxllm.sources.guard import (
    AddressRefused,
    GuardedResolver,
    SsrfGuard,
    check_address,
    check_url,
)

KEY = "sk-guard-test-0123456789abcdefghij"

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("100.64.0.1", "CGNAT"),
    ("100.127.255.254", "CGNAT"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.254", "benchmarking"),
    ("2001:2::1", "benchmarking"),
    ("192.0.2.1", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("2001:db8::1", "documentation"),
    ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"),
    ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1, loopback"),
    ("::ffff:7f00:1", "IPv4-mapped form of 127.0.0.1, loopback"),
    ("::ffff:a00:1", "IPv4-mapped form of 10.0.0.1, private"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("64:ff9b::7f00:1", "NAT64 form of 127.0.0.1, loopback"),
    ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254, a cloud metadata"),
    ("2002:7f00:1::1", "6to4 form of 127.0.0.1, loopback"),
    ("2002:c0a8:101::", "6to4 form of 192.168.1.1, private"),
    ("::7f00:1", "IPv4-compatible"),
    ("2001:0:4136:e378::1", "Teredo"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.170.2", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("192.0.0.192", "cloud metadata"),
]

# Public addresses: the pure check lets them through. Never connected to.
ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",  # mapped, NAT64 and 6to4 forms of a public address reach it
    "64:ff9b::808:808",
    "2002:808:808::1",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above
    "198.17.255.255",
    "198.20.0.0",
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_refused_addresses_name_the_reason(address: str, reason: str) -> None:
    refusal = check_address(address)
    assert refusal is not None and reason in refusal
    assert refusal.startswith(str(ip_address(address.split("%")[0])))


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_pass(address: str) -> None:
    assert check_address(address) is None


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "100.64.0.1", "fe80::1", "fd12::1"]
)
def test_allow_private_network_opens_the_private_network(address: str) -> None:
    assert check_address(address, allow_private_network=True) is None
    assert check_address(ip_address(address), allow_private_network=True) is None


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "0.0.0.0", "224.0.0.1", "192.0.2.1"],
)
def test_metadata_and_non_servers_stay_refused_when_private_is_allowed(address: str) -> None:
    assert check_address(address, allow_private_network=True) is not None


def test_allow_private_network_as_networks_opens_only_those() -> None:
    allow = ("127.0.0.1/32", "10.1.2.0/24")
    assert check_address("127.0.0.1", allow_private_network=allow) is None
    assert check_address("10.1.2.3", allow_private_network=allow) is None
    assert check_address("::ffff:10.1.2.3", allow_private_network=allow) is None
    assert check_address("10.0.0.1", allow_private_network=allow) is not None
    assert check_address("127.0.0.2", allow_private_network=allow) is not None
    assert check_address("::1", allow_private_network=allow) is not None
    # A network that covers a metadata address still does not open it.
    assert check_address("169.254.169.254", allow_private_network=("169.254.0.0/16",))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/v1", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("gopher://example.com", "only http and https"),
        ("http://127.0.0.1:8000/v1", "loopback"),
        ("http://[::1]:8000/v1", "loopback"),
        ("http://[::ffff:7f00:1]/v1", "IPv4-mapped"),
        ("http://[::ffff:127.0.0.1]/v1", "IPv4-mapped"),
        ("https://169.254.169.254/latest/meta-data", "cloud metadata"),
        ("http://10.0.0.1/v1", "private"),
        ("http://100.64.0.1/v1", "CGNAT"),
        ("http://0.0.0.0:8000/v1", "unspecified"),
        # Legacy IPv4 spellings the system resolver accepts.
        ("http://127.1/v1", "loopback"),
        ("http://2130706433/v1", "loopback"),
        ("http://0x7f000001/v1", "loopback"),
    ],
)
def test_urls_refused_before_any_lookup(url: str, reason: str) -> None:
    refusal = check_url(url)
    assert refusal is not None and reason in refusal


@pytest.mark.parametrize(
    "url", ["https://api.openai.com/v1", "http://example.com:8080/v1", "https://[2606:4700::1111]/"]
)
def test_public_urls_and_names_pass_the_url_check(url: str) -> None:
    assert check_url(url) is None  # a name is checked when it resolves


# -- the resolver, with a fake DNS ---------------------------------------------------------


class FakeResolver(AbstractResolver):
    """Answers from a table and records each question; never touches the network."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": 0,
            }
            for address in self.table[host]
        ]

    async def close(self) -> None:
        pass


@pytest.fixture
async def no_outside_connections() -> AsyncIterator[list[Any]]:
    """Every address the loop is asked to connect a socket to; a non-loopback one is
    refused (and recorded) instead of reaching the network."""
    loop = asyncio.get_running_loop()
    real = loop.sock_connect
    connects: list[Any] = []

    async def sock_connect(sock: socket.socket, address: Any) -> None:
        connects.append(address)
        if not ip_address(address[0]).is_loopback:
            raise OSError(f"test refused a connection to {address[0]}")
        await real(sock, address)

    loop.sock_connect = sock_connect  # type: ignore[method-assign]
    yield connects
    loop.sock_connect = real  # type: ignore[method-assign]


@pytest.mark.parametrize(
    ("answers", "refused"),
    [
        (["10.0.0.1"], "10.0.0.1 is private"),
        (["169.254.169.254"], "cloud metadata"),
        (["::ffff:7f00:1"], "IPv4-mapped"),
        (["64:ff9b::a00:1"], "NAT64"),
        # Rebinding looks like this: one public answer among private ones refuses all.
        (["8.8.8.8", "127.0.0.1"], "127.0.0.1 is loopback"),
    ],
)
async def test_a_name_resolving_to_a_refused_address_is_refused_before_connecting(
    no_outside_connections: list[Any], answers: list[str], refused: str
) -> None:
    fake = FakeResolver({"api.evil.test": answers})
    async with SsrfGuard(resolver=fake).session() as session:
        with pytest.raises(AddressRefused, match=refused) as caught:
            await session.post("http://api.evil.test/v1/chat/completions", data=b"{}")
    assert "api.evil.test" in str(caught.value)
    assert fake.asked == ["api.evil.test"]
    assert no_outside_connections == []


async def test_the_resolver_returns_checked_public_answers_unchanged() -> None:
    fake = FakeResolver({"api.example.test": ["8.8.8.8", "2606:4700::1111"]})
    results = await GuardedResolver(fake).resolve("api.example.test", 443)
    assert [r["host"] for r in results] == ["8.8.8.8", "2606:4700::1111"]  # what it connects to


async def test_the_guarded_session_ignores_proxies_from_the_environment() -> None:
    async with SsrfGuard().session() as session:
        assert session.trust_env is False


# -- guarded providers against a real loopback server --------------------------------------


def ask(model: str = "m") -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")])


async def test_custom_at_loopback_is_refused_and_the_server_gets_nothing(
    local_server: LocalServer,
) -> None:
    rec = await rxllm.provider("custom", api_key=KEY, base_url=local_server.url).complete(ask())
    assert rec.terminal.type == "error"
    error = rec.terminal.error
    assert error.kind == "policy" and not error.retryable
    assert "127.0.0.1 is loopback" in error.message
    assert "allow_private_network=True" in error.message
    assert local_server.requests == []
    assert len(rec.attempts) == 1  # a policy refusal is never retried


@pytest.mark.parametrize(
    "host",
    ["localhost", "[::ffff:7f00:1]", "[::ffff:127.0.0.1]", "127.1", "2130706433", "0.0.0.0"],
)
async def test_other_spellings_of_this_machine_are_refused(
    local_server: LocalServer, no_outside_connections: list[Any], host: str
) -> None:
    url = f"http://{host}:{local_server.port}/v1"
    rec = await rxllm.provider("custom", base_url=url).complete(ask())
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "policy", rec.terminal
    assert local_server.requests == []
    assert no_outside_connections == []


async def test_allow_private_network_reaches_the_loopback_server(
    local_server: LocalServer,
) -> None:
    for allow in (True, ["127.0.0.0/8"]):
        provider = rxllm.provider("custom", base_url=local_server.url, allow_private_network=allow)
        rec = await provider.complete(ask())
        assert rec.terminal.type == "done", rec.terminal
    assert len(local_server.requests) == 2


async def test_any_provider_can_be_guarded(local_server: LocalServer) -> None:
    provider = rxllm.provider("openai", api_key=KEY, base_url=local_server.url, ssrf_guard=True)
    rec = await provider.complete(ask())
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "policy"
    assert local_server.requests == []


async def test_a_private_redirect_is_refused_before_connecting(
    local_server: LocalServer, no_outside_connections: list[Any]
) -> None:
    provider = rxllm.provider(
        "custom", api_key=KEY, base_url=local_server.url, allow_private_network=["127.0.0.1/32"]
    )
    rec = await provider.complete(ask("fault/redirect_private"))
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "policy"
    assert "10.0.0.1 is private" in rec.terminal.error.message
    assert len(local_server.requests) == 1
    assert {address[0] for address in no_outside_connections} == {"127.0.0.1"}


def test_which_providers_are_guarded_by_default() -> None:
    assert rxllm.provider("custom", base_url="https://llm.example.com/v1").guard is not None
    for name in ("local", "vllm", "ollama", "llamacpp"):
        assert rxllm.provider(name, base_url="http://127.0.0.1:1/v1").guard is None
    assert rxllm.provider("openai", api_key=KEY).guard is None
    assert rxllm.provider("vllm", ssrf_guard=True).guard is not None
    assert rxllm.provider("custom", base_url="http://x/v1", ssrf_guard=False).guard is None


async def test_a_session_cannot_be_guarded() -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(rxllm.ConfigError, match="cannot be"):
            rxllm.provider("custom", base_url="https://llm.example.com/v1", session=session)
        with pytest.raises(rxllm.ConfigError, match="ssrf_guard=False"):
            rxllm.provider("openai", api_key=KEY, session=session, ssrf_guard=True)
        trusted = rxllm.provider(
            "custom", base_url="https://llm.example.com/v1", session=session, ssrf_guard=False
        )
        assert trusted.session is session and trusted.guard is None
        assert rxllm.provider("openai", api_key=KEY, session=session).session is session


def test_allowed_networks_are_validated() -> None:
    with pytest.raises(rxllm.ConfigError, match="allow_private_network"):
        rxllm.provider("custom", base_url="http://x/v1", allow_private_network=["not-a-net"])


def test_the_guard_checks_a_url_object() -> None:
    with pytest.raises(AddressRefused, match="only http and https"):
        SsrfGuard().check(URL("ftp://example.com/x"))
    SsrfGuard().check(URL("https://api.example.com/v1"))  # a name: for the resolver


class RebindingResolver(FakeResolver):
    """Answers the checked address first, then a private one: DNS rebinding."""

    def __init__(self, first: str, then: str) -> None:
        super().__init__({})
        self.answers = [first, then]

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.table[host] = [self.answers[min(len(self.asked), 1)]]
        return await super().resolve(host, port, family)


async def test_the_connection_goes_to_the_checked_answer_and_a_rebound_one_is_refused(
    local_server: LocalServer, no_outside_connections: list[Any]
) -> None:
    """One lookup per resolution, none at connect (the socket goes to what was checked);
    aiohttp's DNS cache holds only checked answers; the next real lookup is checked again."""
    rebinding = RebindingResolver("127.0.0.1", "10.0.0.1")
    guard = SsrfGuard(allow_private_network=("127.0.0.1/32",), resolver=rebinding)
    url = f"http://llm.rebind.test:{local_server.port}/v1/chat/completions"
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}'
    close = {"Connection": "close"}  # a new connection each time, not a pooled one
    async with guard.session() as session:
        for _ in range(2):  # the second connects from the DNS cache: no lookup at all
            async with session.post(url, data=body, headers=close) as response:
                assert response.status == 200
                await response.read()
        assert rebinding.asked == ["llm.rebind.test"]
        assert session.connector is not None
        session.connector.clear_dns_cache()  # type: ignore[attr-defined]
        with pytest.raises(AddressRefused, match=r"10\.0\.0\.1 is private"):
            await session.post(url, data=body, headers=close)
    assert rebinding.asked == ["llm.rebind.test"] * 2
    assert {address[0] for address in no_outside_connections} == {"127.0.0.1"}
    assert len(local_server.requests) == 2


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://evil@127.0.0.1/v1", "loopback"),  # the host is after the @
        ("http://evil.com:80@127.0.0.1/v1", "loopback"),
        ("http://127.0.0.1#@evil.com/v1", "loopback"),  # the rest is a fragment
        # fullwidth digits and ideographic full stops, which IDNA maps to ASCII
        ("http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/v1", "loopback"),
        ("http://127\u30020\u30020\u30021/v1", "loopback"),
        ("HTTP://127.0.0.1/v1", "loopback"),
        ("http://[::ffff:169.254.169.254]/", "cloud metadata"),
        ("http://[fd00:ec2::254%25eth0]/", "cloud metadata"),
        ("http://0xa9fea9fe/", "cloud metadata"),
        ("http://169.254.43518/", "cloud metadata"),
    ],
)
def test_tricky_spellings_are_seen_through(url: str, reason: str) -> None:
    refusal = check_url(url, allow_private_network=reason == "cloud metadata")
    assert refusal is not None and reason in refusal, refusal
