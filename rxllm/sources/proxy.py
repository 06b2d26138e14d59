"""The proxy the environment names for a URL, as the SDKs' httpx clients read it:
`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY` (urllib's reading of the variables)."""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network

import aiohttp
from aiohttp.typedefs import LooseHeaders
from yarl import URL

__all__ = ["NoProxy", "environment_proxy", "proxied_request"]


def environment_proxy() -> type[aiohttp.ClientRequest]:
    """The request class of an unguarded session: through the proxy the environment
    names now (`proxied_request`)."""
    return proxied_request(urllib.request.getproxies_environment())


def proxied_request(environment: Mapping[str, str]) -> type[aiohttp.ClientRequest]:
    """The request class that goes through the proxy `environment` names for its URL's
    scheme (urllib's reading of the variables: `{"http": ..., "no": ...}`), or
    aiohttp's own when it names none that aiohttp can speak to (http or https: a SOCKS
    proxy needs a session of the caller's, with a connector that speaks SOCKS)."""
    proxies: dict[str, tuple[URL, aiohttp.BasicAuth | None]] = {}
    for scheme in ("http", "https"):
        given = environment.get(scheme) or environment.get("all")
        if not given:
            continue
        url = URL(given if "://" in given else f"http://{given}")
        if url.scheme in ("http", "https") and url.host:
            # Credentials in the URL are the proxy's (Proxy-Authorization), not the URL's.
            proxies[scheme] = (url.with_user(None), aiohttp.BasicAuth.from_url(url))
    if not proxies:
        return aiohttp.ClientRequest
    no_proxy = NoProxy(environment.get("no", ""))

    class ProxiedRequest(aiohttp.ClientRequest):
        def update_proxy(
            self,
            proxy: URL | None,
            proxy_auth: aiohttp.BasicAuth | None,
            proxy_headers: LooseHeaders | None,
        ) -> None:
            # Called once, as the request is made; a proxy asked for per request wins.
            chosen = proxies.get(self.url.scheme)
            if proxy is None and chosen is not None and not no_proxy.names(self.url):
                proxy, proxy_auth = chosen
            super().update_proxy(proxy, proxy_auth, proxy_headers)

    return ProxiedRequest


class NoProxy:
    """`NO_PROXY`: comma-separated `*` (every host), domains (`example.com` or
    `.example.com`: it and every name under it, as urllib reads them), IP addresses and
    networks (`10.0.0.0/8`, `::1`: as httpx reads them), each with an optional `:port`.
    A name is matched as written, never by the address it resolves to."""

    def __init__(self, value: str) -> None:
        self.everything = False
        self.domains: list[tuple[str, int | None]] = []
        self.networks: list[tuple[IPv4Network | IPv6Network, int | None]] = []
        for entry in value.lower().split(","):
            entry = entry.strip()
            if entry == "*":
                self.everything = True
            elif entry:
                self._add(entry)

    def _add(self, entry: str) -> None:
        host, port = entry, None
        head, colon, tail = entry.rpartition(":")
        if colon and tail.isdigit() and (head.endswith("]") or ":" not in head):
            host, port = head, int(tail)  # `host:1234`, `[::1]:1234`; not a bare `::1`
        host = host.removeprefix("[").removesuffix("]")
        try:
            self.networks.append((ip_network(host, strict=False), port))
        except ValueError:
            self.domains.append((host.lstrip(".").rstrip("."), port))

    def names(self, url: URL) -> bool:
        if self.everything:
            return True
        host = (url.host or "").lower().rstrip(".")
        port = url.port
        try:
            address = ip_address(host)
        except ValueError:
            return any(
                (host == name or host.endswith("." + name)) and wanted in (None, port)
                for name, wanted in self.domains
            )
        return any(address in net and wanted in (None, port) for net, wanted in self.networks)
