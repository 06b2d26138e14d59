"""The proxy environment: an unguarded provider's pooled session goes through
HTTP_PROXY / HTTPS_PROXY / ALL_PROXY and bypasses it for NO_PROXY, as the SDKs' httpx
clients do; a guarded one connects directly (the guard checks and pins the address it
connects to, which a proxy would choose instead); `.netrc` is never read."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

import rxllm
from rxllm.local import LocalServer
from rxllm.sources.http import HttpRequest, http_source
from rxllm.sources.proxy import NoProxy
from rxllm.sources.raw import RawChunk
from tests.support import drain

ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)


@dataclass
class ForwardProxy:
    """A loopback HTTP forward proxy: it takes absolute-form requests
    (`POST http://host:port/path`), records each, and forwards it to its target."""

    url: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)
    """Each request it got: `target` (the absolute URL asked for) and `headers`."""


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    recorded = ForwardProxy()
    async with aiohttp.ClientSession() as upstream:  # no proxy of its own

        async def forward(request: web.BaseRequest) -> web.StreamResponse:
            target = request._message.url  # the request target as sent
            recorded.seen.append({"target": str(target), "headers": dict(request.headers)})
            if not target.is_absolute():  # an origin server's request, not a proxy's
                return web.Response(status=400, text="a forward proxy takes absolute URLs")
            headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
            async with upstream.request(
                request.method, target, headers=headers, data=await request.read()
            ) as answer:
                response = web.StreamResponse(
                    status=answer.status,
                    headers={
                        k: v
                        for k, v in answer.headers.items()
                        if k.lower() not in HOP_BY_HOP | {"transfer-encoding", "content-length"}
                    },
                )
                await response.prepare(request)
                async for chunk in answer.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response

        server = web.Server(forward)
        runner = web.ServerRunner(server, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        recorded.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            yield recorded
        finally:
            await runner.cleanup()


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the variables it means, whatever the machine has."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)  # CGI: urllib ignores HTTP_PROXY


async def test_a_turn_goes_through_http_proxy(
    proxy: ForwardProxy, local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with rxllm.provider("local", base_url=local_server.url) as p:
        rec = await p.complete(ASK)
        again = await p.complete(ASK)
    assert rec.terminal.type == "done" and rec.text
    assert again.terminal.type == "done" and again.text == rec.text
    assert len(local_server.requests) == 2
    targets = [seen["target"] for seen in proxy.seen]
    assert len(targets) == 2
    assert all(target.startswith(local_server.url + "/") for target in targets)


async def test_all_proxy_without_a_scheme_and_with_credentials(
    proxy: ForwardProxy, local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # httpx's reading: ALL_PROXY for a scheme with no variable of its own, `http://`
    # before a bare host:port. The credentials are the proxy's, never the provider's.
    bare = URL(proxy.url)
    monkeypatch.setenv("ALL_PROXY", f"user:pa%3Ass@{bare.host}:{bare.port}")
    async with rxllm.provider("local", base_url=local_server.url) as p:
        rec = await p.complete(ASK)
    assert rec.terminal.type == "done"
    [seen] = proxy.seen
    expected = "Basic " + base64.b64encode(b"user:pa:ss").decode()
    assert seen["headers"].get("Proxy-Authorization") == expected
    assert seen["target"].startswith(local_server.url + "/")
    assert "user" not in seen["target"]


@pytest.mark.parametrize(
    ("no_proxy", "bypassed"),
    [
        ("example.com, 127.0.0.1", True),
        ("127.0.0.0/8", True),
        ("*", True),
        ("127.0.0.1:{port}", True),
        ("127.0.0.1:1", False),  # another port of the host
        ("example.com,127.0.0.2", False),
    ],
)
async def test_no_proxy_naming_the_host_bypasses_the_proxy(
    proxy: ForwardProxy,
    local_server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    no_proxy: str,
    bypassed: bool,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy.format(port=local_server.port))
    async with rxllm.provider("local", base_url=local_server.url) as p:
        rec = await p.complete(ASK)
    assert rec.terminal.type == "done"
    assert len(local_server.requests) == 1
    assert len(proxy.seen) == (0 if bypassed else 1)


@pytest.mark.parametrize(
    ("no_proxy", "url", "named"),
    [
        ("example.com", "https://example.com/v1", True),
        ("example.com", "https://api.example.com/v1", True),
        (".example.com", "https://example.com/v1", True),
        ("EXAMPLE.com", "https://Api.Example.COM./v1", True),
        ("example.com", "https://notexample.com/v1", False),
        ("example.com:8443", "https://example.com:8443/v1", True),
        ("example.com:8443", "https://example.com/v1", False),
        ("10.0.0.0/8", "http://10.1.2.3:8000/v1", True),
        ("10.0.0.0/8", "http://11.1.2.3:8000/v1", False),
        ("::1", "http://[::1]:8000/v1", True),
        ("[::1]:8000", "http://[::1]:8000/v1", True),
        ("fd00::/8", "http://[fd12::1]/v1", True),
        ("10.0.0.0/8", "http://10.example.com/v1", False),  # a name is not its address
        (" , ", "https://example.com/v1", False),
    ],
)
def test_the_no_proxy_reading(no_proxy: str, url: str, named: bool) -> None:
    assert NoProxy(no_proxy).names(URL(url)) is named


async def test_a_proxy_for_the_other_scheme_is_not_used(
    proxy: ForwardProxy, local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)  # the provider's URL is http://
    async with rxllm.provider("local", base_url=local_server.url) as p:
        rec = await p.complete(ASK)
    assert rec.terminal.type == "done"
    assert proxy.seen == []


async def test_a_guarded_provider_connects_directly(
    proxy: ForwardProxy, local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The guard checks the address it connects to and pins the connection to it; through
    # a proxy, the proxy would resolve and connect, unchecked. So the proxy is not used.
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with rxllm.provider(
        "custom", base_url=local_server.url, api_key="k", allow_private_network=True
    ) as p:
        assert p.guard is not None
        rec = await p.complete(ASK)
    assert rec.terminal.type == "done"
    assert len(local_server.requests) == 1
    assert proxy.seen == []


async def test_the_same_provider_unguarded_uses_the_proxy_and_never_reads_netrc(
    proxy: ForwardProxy,
    local_server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # A `.netrc` with a `default` entry has credentials for every host: aiohttp's
    # `trust_env=True` would add them as `Authorization: Basic`, and with the provider's
    # own `Authorization` refuse the request (ValueError). httpx reads no `.netrc`
    # unless asked (NetRCAuth, since 0.24); neither does rxllm.
    netrc = tmp_path / "netrc"
    netrc.write_text("default login someone password elsewhere\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with rxllm.provider(
        "custom", base_url=local_server.url, api_key="k", ssrf_guard=False
    ) as p:
        rec = await p.complete(ASK)
    assert rec.terminal.type == "done"
    [seen] = proxy.seen
    assert seen["target"].startswith(local_server.url + "/")
    assert seen["headers"].get("Authorization") == "Bearer k"
    assert "Proxy-Authorization" not in seen["headers"]


async def test_a_source_with_a_session_of_its_own_goes_through_the_proxy(
    proxy: ForwardProxy, local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`http_source` without a session opens one per subscription: the same proxy."""
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    url = local_server.url + "/chat/completions"
    items = await drain(http_source(HttpRequest(url, json.dumps(body).encode()), provider="local"))
    assert any(isinstance(item, RawChunk) for item in items)
    assert [seen["target"] for seen in proxy.seen] == [url]
