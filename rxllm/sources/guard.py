"""The SSRF guard: a URL given by a user reaches only the public internet.

A `custom` endpoint (and any provider built with `ssrf_guard=True`) is a URL rxllm did
not choose; without a guard it can point the library, and the API key and
conversation it sends, at the machine's own services, the private network or the
cloud's metadata endpoint. The guard works at three points, all before a byte is sent:

- the URL (`check_url`): http or https only; an IP literal is checked at once, since
  aiohttp connects to a literal without asking any resolver;
- the resolver (`GuardedResolver`): every address a name resolves to is checked and
  the connection is pinned to the checked addresses (aiohttp's `TCPConnector` connects
  to exactly what the resolver returned, while the Host header and TLS SNI keep the
  name), so a DNS answer that changes between a check and the connect cannot slip
  through: there is no second lookup. One refused address refuses the whole name (a
  name that answers both public and private addresses is how rebinding attacks look);
- every redirect hop, which goes through both again (`rxllm.sources.redirects`).

`check_address` is the heart: a pure function from an address to the reason it is
refused. `allow_private_network` opts in to the private network (RFC 1918, loopback,
link-local, CGNAT, unique-local): `True` for all of it, or a list of networks for only
those. Addresses that are never a server (unspecified, multicast, reserved,
documentation, benchmarking) and the cloud metadata endpoints stay refused even then.
IPv6 is public only inside 2000::/3, the one block IANA allocates as global unicast
(Python 3.11's registry calls `fe00::1` and `::ffff:0:7f00:1` global).

A URL's host that aiohttp's connector takes for an address (digits and dots, or a
colon) is connected to as written, without asking any resolver, so the guard accepts
it only in canonical form: `127.0.0.1.` is a DNS name to the system and `127.1` is
parsed by the platform, either of them behind the guard's back.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

__all__ = [
    "AddressRefused",
    "GuardedResolver",
    "SsrfGuard",
    "check_address",
    "check_url",
]

IPAddress = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})

# Instance metadata services hand out cloud credentials to whoever asks from inside:
# AWS (IPv4, IPv6, the ECS task endpoint and the EKS Pod Identity agent at
# 169.254.170.23 / fd00:ec2::23), GCP and Azure (169.254.169.254), Azure's WireServer
# (168.63.129.16: a public-looking address that answers inside every VNet with the VM's
# goal state and extension settings), Oracle (192.0.0.192), Alibaba (100.100.100.200).
# Refused even with `allow_private_network`.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "169.254.169.253",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "168.63.129.16",
        "192.0.0.192",
        "100.100.100.200",
    )
)

# (network, reason, private): `private` networks are what `allow_private_network`
# opens; the others are never a server's address. From the IANA special-purpose
# address registries (RFC 6890 and its updates).
_V4_TABLE: tuple[tuple[IPv4Network, str, bool], ...] = tuple(
    (IPv4Network(net), reason, private)
    for net, reason, private in (
        ("0.0.0.0/8", "unspecified ('this network')", False),
        ("10.0.0.0/8", "private", True),
        ("100.64.0.0/10", "CGNAT (shared address space)", True),
        ("127.0.0.0/8", "loopback", True),
        ("169.254.0.0/16", "link-local", True),
        ("172.16.0.0/12", "private", True),
        ("192.0.0.0/24", "IETF protocol assignments", False),
        ("192.0.2.0/24", "documentation", False),
        ("192.88.99.0/24", "reserved (6to4 relay anycast)", False),
        ("192.168.0.0/16", "private", True),
        ("198.18.0.0/15", "benchmarking", False),
        ("198.51.100.0/24", "documentation", False),
        ("203.0.113.0/24", "documentation", False),
        ("224.0.0.0/4", "multicast", False),
        ("240.0.0.0/4", "reserved", False),
    )
)
_V6_TABLE: tuple[tuple[IPv6Network, str, bool], ...] = tuple(
    (IPv6Network(net), reason, private)
    for net, reason, private in (
        ("::/128", "unspecified", False),
        ("::1/128", "loopback", True),
        ("::/96", "reserved (IPv4-compatible)", False),
        ("64:ff9b:1::/48", "local-use NAT64", True),
        ("100::/64", "reserved (discard-only)", False),
        ("2001::/32", "reserved (Teredo)", False),
        ("2001:2::/48", "benchmarking", False),
        ("2001:db8::/32", "documentation", False),
        ("3fff::/20", "documentation", False),
        ("fc00::/7", "unique-local (private)", True),
        ("fe80::/10", "link-local", True),
        ("fec0::/10", "site-local (private)", True),
        ("ff00::/8", "multicast", False),
    )
)
_NAT64 = IPv6Network("64:ff9b::/96")
_LOCAL_NAT64 = IPv6Network("64:ff9b:1::/48")
# RFC 6052 section 2.2: where an IPv4 address sits in a NAT64 address, by the prefix
# length the operator chose, as (first bit, bit count) pieces (bits 64-71 stay zero).
# A local-use prefix (RFC 8215) is the /48 itself or any longer prefix inside it.
_NAT64_LAYOUTS: tuple[tuple[tuple[int, int], ...], ...] = (
    ((48, 16), (72, 16)),  # /48
    ((56, 8), (72, 24)),  # /56
    ((72, 32),),  # /64
    ((96, 32),),  # /96
)
_GLOBAL_UNICAST = IPv6Network("2000::/3")


def check_address(
    ip: str | IPAddress, *, allow_private_network: bool | Sequence[str] = False
) -> str | None:
    """Why `ip` may not be fetched, or None when it may.

    An IPv6 address that embeds an IPv4 one (IPv4-mapped `::ffff:127.0.0.1`, written
    dotted or `::ffff:7f00:1`; NAT64 `64:ff9b::/96`; 6to4 `2002::/16`) reaches that
    IPv4 address, so it is judged by it. `allow_private_network`: True, or the
    networks (`"10.1.2.0/24"`) whose private addresses are allowed.
    """
    address = ip_address(ip) if isinstance(ip, str) else ip
    if isinstance(address, IPv6Address) and address.scope_id:
        address = IPv6Address(int(address))  # `fe80::1%eth0` is judged as `fe80::1`
    allowed = _allowed_networks(allow_private_network)
    reason, private = _classify(address)
    if reason is None:
        return None
    if private and any(_within(address, net) for net in allowed):
        return None
    return f"{address} is {reason}"


def _classify(address: IPAddress) -> tuple[str | None, bool]:
    """(why the address is not public, whether it is the private network's), or
    (None, False) for a public address."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address", False
    if isinstance(address, IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            form, v4 = embedded
            reason, private = _classify(v4)
            if reason is None:
                return None, False
            return f"the {form} form of {v4}, {reason}", private
        if address in _LOCAL_NAT64:
            # Which layout the translator uses is its operator's choice: a metadata
            # address in any of them stays closed when the private network is opened.
            for v4 in _local_nat64_candidates(address):
                if v4 in METADATA_ADDRESSES:
                    return f"the local-use NAT64 form of {v4}, a cloud metadata address", False
        table: Iterable[tuple[Network, str, bool]] = _V6_TABLE
    else:
        table = _V4_TABLE
    for net, reason, private in table:
        if address in net:
            return reason, private
    if isinstance(address, IPv6Address) and address not in _GLOBAL_UNICAST:
        return "outside global unicast (2000::/3): reserved or unallocated", False
    if not address.is_global:  # whatever else Python's registry knows is not public
        return "not globally reachable", False
    return None, False


def _local_nat64_candidates(address: IPv6Address) -> Iterable[IPv4Address]:
    """The IPv4 address each RFC 6052 layout would read out of `address`."""
    value = int(address)
    for layout in _NAT64_LAYOUTS:
        v4 = 0
        for first, count in layout:
            v4 = (v4 << count) | ((value >> (128 - first - count)) & ((1 << count) - 1))
        yield IPv4Address(v4)


def _embedded_ipv4(address: IPv6Address) -> tuple[str, IPv4Address] | None:
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _NAT64:
        return "NAT64", IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    return None


def _allowed_networks(allow: bool | Sequence[str]) -> tuple[Network, ...]:
    if allow is True:
        return (IPv4Network("0.0.0.0/0"), IPv6Network("::/0"))
    if allow is False:
        return ()
    return tuple(ip_network(net, strict=False) for net in allow)


def _within(address: IPAddress, net: Network) -> bool:
    if isinstance(address, IPv6Address) and net.version == 4:
        embedded = _embedded_ipv4(address)
        return embedded is not None and embedded[1] in net
    return address.version == net.version and address in net


def _ip_literal(host: str) -> IPAddress | None:
    """The address a URL's host names literally, including the legacy IPv4 forms
    (`127.1`, `2130706433`, `0x7f000001`) that the system resolver accepts too."""
    try:
        return ip_address(host.strip("[]"))
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _connector_takes_as_address(host: str) -> bool:
    """Whether aiohttp's connector connects to `host` as written, without asking the
    resolver it was given: its `is_ip_address` rule (3.14), which also covers the
    stricter patterns of older versions (digits and dots, or a colon)."""
    return ":" in host or host.replace(".", "").isdigit()


def _host_refusal(host: str, allow: bool | Sequence[str]) -> tuple[str, bool] | None:
    """Why a URL's host is refused before any lookup, and whether allowing the private
    network would open it; None for a name (the resolver checks what it resolves to)
    or an allowed address written canonically."""
    return _judged_host(host, allow if isinstance(allow, bool) else tuple(allow))


# Judged once per host and allowance: a provider's every turn goes to the same host,
# and parsing it as an address (with the networks it is checked against) each time
# cost a guarded stream's start a fifth of its instructions.
@functools.lru_cache(maxsize=256)
def _judged_host(host: str, allow: bool | tuple[str, ...]) -> tuple[str, bool] | None:
    literal = _ip_literal(host)
    if literal is not None:
        reason = check_address(literal, allow_private_network=allow)
        if reason is not None:
            return reason, check_address(literal, allow_private_network=True) is None
    if not _connector_takes_as_address(host):
        return None
    try:
        ip_address(host)
    except ValueError:
        pass
    else:
        return None
    # Connected to as written, the host would be parsed (or looked up) by the system,
    # not by the guard: the connection would not be pinned to what was checked.
    if literal is not None:
        return f"{host} is a legacy spelling of {literal}: write the address as {literal}", False
    return (
        f"{host} is not an IP address, yet a client connects to it as one, leaving the "
        "lookup to the system, unchecked: write the address or the name without it"
    ), False


def check_url(url: str | URL, *, allow_private_network: bool | Sequence[str] = False) -> str | None:
    """Why `url` may not be fetched before any lookup, or None: its scheme, and its
    host when that is an IP literal, or what a client would take for one without
    being one in canonical form (a name is checked by `GuardedResolver`)."""
    parsed = URL(url) if isinstance(url, str) else url
    if parsed.scheme not in ALLOWED_SCHEMES:
        return f"only http and https URLs may be fetched, not {parsed.scheme or 'none'!r}"
    host = parsed.raw_host
    if not host:
        return "the URL names no host"
    refusal = _host_refusal(host, allow_private_network)
    return None if refusal is None else refusal[0]


class AddressRefused(Exception):
    """The guard refused a destination before connecting to it; the message names it."""

    def __init__(self, target: str, reason: str, *, openable: bool = False) -> None:
        hint = " (allow_private_network=True opts in)" if openable else ""
        super().__init__(f"the SSRF guard refused {target}: {reason}{hint}")
        self.target = target
        self.reason = reason


def _refuse(target: str, address: IPAddress, allow: bool | Sequence[str]) -> None:
    reason = check_address(address, allow_private_network=allow)
    if reason is not None:
        openable = check_address(address, allow_private_network=True) is None
        raise AddressRefused(target, reason, openable=openable)


class GuardedResolver(AbstractResolver):
    """Resolves with `inner` (aiohttp's default resolver unless given), then checks every
    address; one refused address raises `AddressRefused` for the whole name. The
    connector connects only to what this returns: the connection is pinned."""

    def __init__(
        self,
        inner: AbstractResolver | None = None,
        *,
        allow_private_network: bool | Sequence[str] = False,
    ) -> None:
        self._inner = inner if inner is not None else aiohttp.DefaultResolver()
        self._allow = allow_private_network

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for result in results:
            _refuse(host, ip_address(result["host"]), self._allow)
        return results

    async def close(self) -> None:
        await self._inner.close()


@dataclass(frozen=True)
class SsrfGuard:
    """How a source guards its destinations: the private networks it allows, and the
    resolver it resolves names with (the system's unless given; tests give a fake)."""

    allow_private_network: bool | tuple[str, ...] = False
    resolver: AbstractResolver | None = field(default=None, compare=False)

    def check(self, url: URL) -> None:
        """Raise `AddressRefused` for a URL the guard refuses before any lookup."""
        if url.scheme not in ALLOWED_SCHEMES or not url.raw_host:
            reason = check_url(url)
            raise AddressRefused(str(url.with_query(None)), reason or "not an http(s) URL")
        refusal = _host_refusal(url.raw_host, self.allow_private_network)
        if refusal is not None:
            reason, openable = refusal
            raise AddressRefused(url.raw_host, reason, openable=openable)

    def open(self) -> tuple[aiohttp.ClientSession, GuardedResolver | None]:
        """A new session whose every connection goes through the guard, and the resolver
        to close after it (a connector leaves a resolver it was given open; None when
        the resolver is the caller's). `trust_env=False`: a proxy from the environment
        would connect on our behalf, unchecked."""
        resolver = GuardedResolver(self.resolver, allow_private_network=self.allow_private_network)
        connector = aiohttp.TCPConnector(resolver=resolver, limit=0)  # see SessionPool
        session = aiohttp.ClientSession(connector=connector, trust_env=False)
        return session, (resolver if self.resolver is None else None)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[aiohttp.ClientSession]:
        """A guarded session for one use, closed with its resolver after it."""
        session, resolver = self.open()
        try:
            async with session:
                yield session
        finally:
            if resolver is not None:
                await resolver.close()
