"""Redirects followed by hand: which are followed, what crosses an origin, how many hops.

Over real loopback servers only: the other origin is a second loopback server on
another port (`LocalServer.other_origin`), which records what reached it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from yarl import URL

import rxllm
from rxllm.local import LocalServer
from rxllm.sources.redirects import MAX_REDIRECTS, Hop, next_hop, without_credentials

KEY = "sk-redirect-test-0123456789abcdefghij"
BASE = URL("https://api.example.com/v1/chat/completions")
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


def test_a_same_origin_307_keeps_every_header() -> None:
    hop = next_hop(BASE, 307, "/v2/chat/completions", HEADERS, (KEY,), 0)
    assert hop == Hop(URL("https://api.example.com/v2/chat/completions"), HEADERS, False)
    assert KEY not in repr(hop) and KEY not in str(hop)  # a hop logged shows no key


@pytest.mark.parametrize(
    "location",
    [
        "https://other.example.com/v1/chat/completions",  # another host
        "https://api.example.com:8443/v1/chat/completions",  # another port
        "http://api.example.com:443/v1/chat/completions",  # refused anyway: a downgrade
    ],
)
def test_another_origin_drops_the_credentials(location: str) -> None:
    hop = next_hop(BASE, 308, location, HEADERS, (KEY,), 0)
    if URL(location).scheme == "http":
        assert isinstance(hop, str) and "https to http" in hop
        return
    assert isinstance(hop, Hop) and hop.cross_origin
    assert hop.headers == {"Content-Type": "application/json"}


def test_an_explicit_default_port_is_the_same_origin() -> None:
    hop = next_hop(BASE, 307, "https://API.example.com:443/v1/x", HEADERS, (KEY,), 0)
    assert isinstance(hop, Hop) and not hop.cross_origin and hop.headers == HEADERS


def test_http_to_https_on_the_same_host_is_another_origin() -> None:
    hop = next_hop(
        URL("http://api.example.com/v1"), 308, "https://api.example.com/v1", HEADERS, (KEY,), 0
    )
    assert isinstance(hop, Hop) and hop.cross_origin and "Authorization" not in hop.headers


def test_credentials_are_found_by_name_and_by_the_secret_they_hold() -> None:
    headers = {
        "x-api-key": KEY,
        "api-key": KEY,
        "X-Goog-Api-Key": KEY,
        "Cookie": "session=1",
        "X-Custom-Auth": f"Token {KEY}",  # a wire's own header, found by its value
        "anthropic-version": "2023-06-01",
        "Accept": "text/event-stream",
    }
    assert without_credentials(headers, (KEY,)) == {
        "anthropic-version": "2023-06-01",
        "Accept": "text/event-stream",
    }
    assert without_credentials({"X-Short": "ollama"}, ("ollama",)) == {}  # a placeholder too
    assert without_credentials({"Accept": "x"}, ("",)) == {"Accept": "x"}


@pytest.mark.parametrize("status", [301, 302, 303])
def test_redirects_that_would_drop_the_body_are_not_followed(status: int) -> None:
    refusal = next_hop(BASE, status, "/v2/chat/completions", HEADERS, (KEY,), 0)
    assert isinstance(refusal, str)
    assert f"({status})" in refusal and "https://api.example.com/v2/chat/completions" in refusal


def test_at_most_three_hops() -> None:
    assert isinstance(next_hop(BASE, 307, "/a", HEADERS, (), MAX_REDIRECTS - 1), Hop)
    refusal = next_hop(BASE, 307, "/a", HEADERS, (), MAX_REDIRECTS)
    assert isinstance(refusal, str) and "more than 3 redirects" in refusal


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://x/y", "http://[::1"])
def test_a_location_that_is_no_http_url_is_refused(location: str) -> None:
    assert isinstance(next_hop(BASE, 307, location, HEADERS, (), 0), str)


# -- over HTTP, every wire's key header ------------------------------------------------------


def chat(model: str) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")])


@pytest.mark.parametrize(
    ("name", "header", "path"),
    [
        ("openai", "Authorization", "/v1"),
        ("anthropic", "x-api-key", "/v1"),
        ("azure-openai", "api-key", "/v1"),
        ("google", "x-goog-api-key", "/v1beta"),
    ],
)
async def test_a_redirect_to_another_origin_never_carries_the_key(
    local_server: LocalServer, name: str, header: str, path: str
) -> None:
    provider = rxllm.provider(name, api_key=KEY, base_url=local_server.root + path)
    rec = await provider.complete(chat("fault/redirect_other_origin"))
    assert rec.terminal.type == "done", rec.terminal  # 307: the body went on, unchanged
    assert len(local_server.requests) == 1
    [arrived] = local_server.other_origin_requests
    assert arrived["body"] == local_server.requests[0]
    assert header.lower() not in {h.lower() for h in arrived["headers"]}
    assert not any(KEY in value for value in arrived["headers"].values())


async def test_a_guarded_provider_follows_an_allowed_redirect_without_the_key(
    local_server: LocalServer,
) -> None:
    provider = rxllm.provider(
        "custom", api_key=KEY, base_url=local_server.url, allow_private_network=True
    )
    rec = await provider.complete(chat("fault/redirect_other_origin"))
    assert rec.terminal.type == "done", rec.terminal
    [arrived] = local_server.other_origin_requests
    assert not any(KEY in value for value in arrived["headers"].values())


async def test_a_fourth_hop_is_a_policy_error(local_server: LocalServer) -> None:
    rec = await rxllm.provider("openai", api_key=KEY, base_url=local_server.url).complete(
        chat("fault/redirect_loop")
    )
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "policy" and rec.terminal.error.status == 307
    assert "more than 3 redirects" in rec.terminal.error.message
    assert len(local_server.requests) == 1 + MAX_REDIRECTS
    assert len(rec.attempts) == 1  # never retried


Serve = Callable[[Callable[[web.Request], Awaitable[web.StreamResponse]]], Awaitable[str]]


async def test_a_same_origin_redirect_keeps_the_key_and_the_body(serve: Serve) -> None:
    seen: list[tuple[str, str, str | None, bytes]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(
            (
                request.method,
                request.path,
                request.headers.get("Authorization"),
                await request.read(),
            )
        )
        if request.path == "/v1/chat/completions":
            raise web.HTTPTemporaryRedirect("/moved/chat/completions")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(
            b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
            b"data: [DONE]\n\n"
        )
        return response

    url = await serve(handler)
    rec = await rxllm.provider("openai", api_key=KEY, base_url=url).complete(chat("m"))
    assert rec.terminal.type == "done" and rec.text == "hi"
    assert [(method, path, auth) for method, path, auth, _ in seen] == [
        ("POST", "/v1/chat/completions", f"Bearer {KEY}"),
        ("POST", "/moved/chat/completions", f"Bearer {KEY}"),
    ]
    assert seen[0][3] == seen[1][3] != b""


@pytest.mark.parametrize("status", [301, 302, 303])
async def test_a_body_dropping_redirect_is_an_error_that_names_the_new_place(
    serve: Serve, status: int
) -> None:
    methods: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        methods.append(request.method)
        return web.Response(status=status, headers={"Location": "/v2/chat/completions"})

    url = await serve(handler)
    rec = await rxllm.provider("openai", api_key=KEY, base_url=url).complete(chat("m"))
    assert rec.terminal.type == "error"
    error = rec.terminal.error
    assert (error.kind, error.status) == ("policy", status)
    assert "/v2/chat/completions" in error.message and "base_url" in error.message
    assert methods == ["POST"]  # nothing followed


async def test_a_redirect_without_location_is_an_http_error(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(status=307, text="no location")

    url = await serve(handler)
    rec = await rxllm.provider("openai", api_key=KEY, base_url=url).complete(chat("m"))
    assert rec.terminal.type == "error"
    assert (rec.terminal.error.kind, rec.terminal.error.status) == ("http", 307)
