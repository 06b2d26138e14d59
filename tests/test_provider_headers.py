"""`headers=`: request headers besides the provider's own (the SDKs' `default_headers`),
sent on every turn, credentials among them kept secret as the API key is."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

import rxllm
from tests.support import Serve

ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
TOKEN = "gw-token-0123456789abcdefghijklmnop"
ANSWER = (
    b'data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}\n\n'
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n'
    b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":1}}\n\n'
    b'data: {"type":"message_stop"}\n\n'
)


async def test_extra_headers_go_with_every_request(serve: Serve) -> None:
    seen: list[Any] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers)
        return web.Response(body=ANSWER, headers={"Content-Type": "text/event-stream"})

    url = await serve(handler)
    p = rxllm.provider(
        "anthropic",
        api_key="sk-ant-0123456789abcdefghijklmnop",
        base_url=url + "/v1",
        headers={"anthropic-beta": "context-1m-2025-08-07", "anthropic-version": "2099-01-01"},
    )
    async with p:
        assert (await p.complete(ASK)).text == "hi"
    assert seen[0]["anthropic-beta"] == "context-1m-2025-08-07"
    assert seen[0]["anthropic-version"] == "2099-01-01"  # the provider's own, replaced
    assert seen[0]["x-api-key"] == "sk-ant-0123456789abcdefghijklmnop"


async def test_a_credential_header_is_kept_secret(serve: Serve) -> None:
    async def echo(request: web.Request) -> web.Response:
        said = request.headers["Authorization"].split()[-1]
        return web.json_response({"error": {"message": f"token {said} expired"}}, status=401)

    url = await serve(echo)
    p = rxllm.provider(
        "custom",
        base_url=url,
        allow_private_network=True,
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    async with p:
        record = await p.complete(ASK)
    error = record.terminal.error  # type: ignore[union-attr]
    assert error.status == 401 and "[redacted] expired" in error.message
    assert TOKEN not in record.model_dump_json()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Bad": "a\nb"},
        {"": "x"},
        {"a:b": "x"},
        {"X Title": "a"},  # not a token: the server's 400 would read as the body's fault
        {"Content-Length": "3"},  # the transport's: it cut the body to 3 bytes
        {"Transfer-Encoding": "chunked"},
        {"content-encoding": "gzip"},
    ],
)
def test_a_header_that_would_break_the_request_is_a_config_error(headers: dict[str, str]) -> None:
    with pytest.raises(rxllm.ConfigError, match="headers"):
        rxllm.provider("openai", api_key="k", headers=headers)


def test_a_credential_pasted_into_a_name_is_not_shown_and_options_do_not_show_headers() -> None:
    with pytest.raises(rxllm.ConfigError) as raised:
        rxllm.provider("openai", api_key="k", headers={f"Authorization: Bearer {TOKEN}": "x"})
    assert TOKEN not in str(raised.value)
    p = rxllm.provider("openai", api_key="k", headers={"Authorization": f"Bearer {TOKEN}"})
    assert TOKEN not in repr(p) + repr(p.options) + str(p.options)


def test_a_name_in_another_case_replaces_the_providers_own() -> None:
    p = rxllm.provider("anthropic", api_key="sk-ant-old", headers={"X-Api-Key": "sk-ant-new"})
    sent = p.http_request(ASK).headers
    assert [v for k, v in sent.items() if k.lower() == "x-api-key"] == ["sk-ant-new"]


async def test_a_gateways_own_credential_header_is_a_secret_and_stays_home(serve: Serve) -> None:
    """Helicone's `Helicone-Auth` and Cloudflare AI Gateway's `cf-aig-authorization` go by
    names of their own: echoed into the record, and sent on to another origin."""
    elsewhere: list[Any] = []

    async def other_origin(request: web.Request) -> web.Response:
        elsewhere.append(dict(request.headers))
        return web.json_response(
            {"error": {"message": f"bad {request.headers.get('Helicone-Auth')}"}}, status=401
        )

    away = await serve(other_origin)
    away = away.replace("127.0.0.1", "localhost")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(away + "/chat/completions")

    url = await serve(moved)
    gateway = {"Helicone-Auth": f"Bearer {TOKEN}", "cf-aig-authorization": f"Bearer {TOKEN}"}
    p = rxllm.provider("custom", base_url=url, allow_private_network=True, headers=gateway)
    async with p:
        record = await p.complete(ASK)
    assert elsewhere and not {"Helicone-Auth", "cf-aig-authorization"} & set(elsewhere[0])
    assert TOKEN not in record.model_dump_json()


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("Ocp-Apim-Subscription-Key", True),  # Azure API Management in front of Azure OpenAI
        ("x-portkey-virtual-key", True),
        ("X-Access-Key", True),
        ("Helicone-Auth", True),
        ("cf-aig-authorization", True),
        ("X-Session-Id", False),  # an id a wire may need on the next hop, not a credential
        ("anthropic-version", False),
        ("anthropic-beta", False),
        ("HTTP-Referer", False),
        ("X-Title", False),
        ("OpenAI-Organization", False),
        ("X-Keywords", False),
    ],
)
def test_what_names_a_credential_header(name: str, credential: bool) -> None:
    from rxllm.sources.redirects import is_credential_header

    assert is_credential_header(name) is credential


def test_a_credential_pasted_for_a_name_is_not_quoted_either() -> None:
    with pytest.raises(rxllm.ConfigError) as raised:
        rxllm.provider("openai", api_key="k", headers={f"Bearer {TOKEN}": "Authorization"})
    assert TOKEN not in str(raised.value) and "'Bearer'" in str(raised.value)


@pytest.mark.parametrize(
    ("name", "headers"),
    [
        ("azure-openai", {"Authorization": "Bearer entra-token-0123456789"}),
        ("anthropic", {"X-Api-Key": "sk-ant-test-0123456789"}),
    ],
)
def test_a_credential_header_stands_for_the_api_key(
    name: str, headers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Azure with a Microsoft Entra ID token (what the openai SDK sends for
    `azure_ad_token`) raised "needs an API key", and with a placeholder key sent both
    credentials (a review of the presets). The caller's own credential header is the
    key: it alone goes, and it stays secret."""
    for env in ("AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    p = rxllm.provider(name, base_url="https://example.com/openai/v1", headers=headers)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], max_tokens=8)
    sent = {k.lower(): v for k, v in p.http_request(request).headers.items()}
    ((key, value),) = headers.items()
    assert sent[key.lower()] == value
    assert not {"api-key", "x-api-key", "authorization"} - {key.lower()} & set(sent)
    assert value not in repr(p)
    with pytest.raises(rxllm.ConfigError, match="needs an API key"):
        rxllm.provider(name, base_url="https://example.com/openai/v1", headers={"X-Title": "t"})
