"""DeepSeek's DSML markup is read as calls only where the request offered tools the model
may call, as vLLM's `deepseek_v32` parser reads it only then (`adjust_request`: tools,
and a tool choice that is not "none"). An app that offered no tool, or said "none",
gets the markup as the answer's text, as it came, never a call it cannot run.

Over a loopback server, with bodies written from DeepSeek's grammar (the module
docstring of `rxllm.providers.dsml`); the retry case with Ollama's rejection of a
request with tools (tests/rejections: `ollama__gemma3_does_not_support_tools`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Done
from tests.support import Serve

BAR = "\uff5c"
M = f"{BAR}DSML{BAR}"
WEATHER = (
    f"<{M}tool_calls>\n"
    f'<{M}invoke name="get_weather">\n'
    f'<{M}parameter name="city" string="true">Paris</{M}parameter>\n'
    f"</{M}invoke>\n"
    f"</{M}tool_calls>"
)
TOOL = rxllm.Tool(name="get_weather", description="The weather.", parameters={"type": "object"})
# Ollama's words for a model with no tool template (louisho5/picobot#6)
NO_TOOLS = {
    "error": {
        "message": "registry.ollama.ai/library/gemma3:4b does not support tools",
        "type": "api_error",
        "param": None,
        "code": None,
    }
}


def _stream(content: str) -> bytes:
    def chunk(delta: dict[str, str], finish: str | None = None) -> str:
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": "deepseek-ai/DeepSeek-V3.2",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    frames = [chunk({"role": "assistant", "content": ""})]
    frames += [chunk({"content": content[i : i + 4]}) for i in range(0, len(content), 4)]
    frames += [chunk({}, "stop"), "data: [DONE]\n\n"]
    return "".join(frames).encode()


async def _server(serve: Serve, bodies: list[dict[str, Any]], reject_tools: bool = False) -> str:
    """Streams the block to every request, its body kept in `bodies`; with
    `reject_tools`, refuses one that has tools as Ollama does."""

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        if reject_tools and "tools" in body:
            return web.json_response(NO_TOOLS, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_stream(WEATHER))
        return response

    return await serve(handler)


@pytest.mark.parametrize(
    "offered",
    [
        {},  # no tools
        {"tools": [TOOL], "tool_choice": "none"},
        {
            "params": {
                "tools": [{"type": "function", "function": {"name": "f"}}],
                "tool_choice": "none",
            }
        },
    ],
    ids=["no tools", "tool_choice none", "none in params"],
)
async def test_no_tool_to_call_leaves_the_markup_as_text(
    serve: Serve, offered: dict[str, Any]
) -> None:
    bodies: list[dict[str, Any]] = []
    base_url = await _server(serve, bodies)
    async with rxllm.provider("vllm", base_url=base_url) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], **offered
        )
        record = await provider.complete(request)
    assert isinstance(record.terminal, Done), record.terminal
    assert (record.text, record.tool_calls) == (WEATHER, [])
    assert record.terminal.stop_reason == "stop"


@pytest.mark.parametrize(
    "offered",
    [
        {"tools": [TOOL]},
        {"tools": [TOOL], "tool_choice": "required"},
        {"params": {"tools": [{"type": "function", "function": {"name": "get_weather"}}]}},
    ],
    ids=["tools", "tool_choice required", "tools in params"],
)
async def test_tools_offered_read_the_markup_as_calls(
    serve: Serve, offered: dict[str, Any]
) -> None:
    bodies: list[dict[str, Any]] = []
    base_url = await _server(serve, bodies)
    async with rxllm.provider("vllm", base_url=base_url) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], **offered
        )
        record = await provider.complete(request)
    assert isinstance(record.terminal, Done), record.terminal
    assert record.text == ""
    assert [(c.name, c.arguments) for c in record.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert record.terminal.stop_reason == "tool_use"


async def test_a_retry_whose_body_lost_its_tools_reads_no_call(serve: Serve) -> None:
    """The endpoint refused the tools and the retry went without them (the body sent is
    what is read, not the request): the model was offered none."""
    bodies: list[dict[str, Any]] = []
    base_url = await _server(serve, bodies, reject_tools=True)
    async with rxllm.provider("vllm", base_url=base_url) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], tools=[TOOL]
        )
        record = await provider.complete(request)
    assert ["tools" in body for body in bodies] == [True, False]
    assert isinstance(record.terminal, Done), record.terminal
    assert (record.text, record.tool_calls) == (WEATHER, [])
