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


@pytest.mark.parametrize("headers", [{"X-Bad": "a\nb"}, {"": "x"}, {"a:b": "x"}])
def test_a_header_aiohttp_would_refuse_is_a_config_error(headers: dict[str, str]) -> None:
    with pytest.raises(rxllm.ConfigError, match="headers"):
        rxllm.provider("openai", api_key="k", headers=headers)
