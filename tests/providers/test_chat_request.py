"""Chat Completions request bodies per preset, sent over a loopback server that records
them, against bodies written by hand from each endpoint's API reference."""

from __future__ import annotations

from typing import Any

import pytest

import rxllm
from rxllm import ChatRequest, Message, StreamRecord, Tool
from rxllm.request import ToolCall
from tests.support import Recorder, Serve

KEY = "sk-probe-0123456789abcdef"


async def _turn(
    serve: Serve,
    name: str,
    request: ChatRequest,
    base_path: str = "/v1",
    *refusals: tuple[int, dict[str, Any]],
) -> tuple[list[dict[str, Any]], StreamRecord]:
    recorder = Recorder(*refusals)
    base_url = (await serve(recorder.handle)).removesuffix("/v1") + base_path
    async with rxllm.provider(name, api_key=KEY, base_url=base_url) as p:
        record = await p.complete(request)
    assert record.terminal.type == "done", record.terminal
    return recorder.requests, record


HI = [Message.user("hi")]


# ------------------------------------------------ max_tokens vs max_completion_tokens


async def test_openai_sends_the_limit_as_max_completion_tokens(serve: Serve) -> None:
    """platform.openai.com/docs/api-reference/chat/create: `max_tokens` is "deprecated in
    favor of `max_completion_tokens`, and is not compatible with o-series models" (gpt-5
    refuses it too: "Unsupported parameter: 'max_tokens' is not supported with this
    model. Use 'max_completion_tokens' instead."). Every model takes the new key, so the
    first request is the right one, not a retry after a 400."""
    (sent,), record = await _turn(
        serve, "openai", ChatRequest(model="gpt-5", messages=HI, max_tokens=64)
    )
    assert sent["body"] == {
        "model": "gpt-5",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 64,
    }
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    assert [a.dropped for a in record.attempts] == [[]]


async def test_azure_sends_max_completion_tokens_with_its_key_header(serve: Serve) -> None:
    """Azure OpenAI serves OpenAI's models (o-series and gpt-5 deployments refuse
    `max_tokens` alike); its API keys go in the `api-key` header, and a deployment URL
    keeps its `api-version` query (learn.microsoft.com, Azure OpenAI REST API reference)."""
    base = "/openai/deployments/gpt5?api-version=2024-10-21"
    (sent,), _ = await _turn(
        serve, "azure-openai", ChatRequest(model="gpt5", messages=HI, max_tokens=64), base
    )
    assert sent["path"] == "/openai/deployments/gpt5/chat/completions"
    assert sent["query"] == {"api-version": "2024-10-21"}
    assert sent["headers"]["api-key"] == KEY and "Authorization" not in sent["headers"]
    assert sent["body"]["max_completion_tokens"] == 64 and "max_tokens" not in sent["body"]


async def test_an_azure_api_version_without_the_key_gets_max_tokens_on_retry(
    serve: Serve,
) -> None:
    """An `api-version` from before `max_completion_tokens` (and some gpt-4o
    deployments) refuses the key by name, naming no replacement: the retry sends the
    value under the older name those endpoints read, not no limit at all."""
    refusal = {
        "error": {
            "code": None,
            "message": "Unrecognized request argument supplied: max_completion_tokens",
            "param": None,
            "type": "invalid_request_error",
        }
    }
    sent, record = await _turn(
        serve,
        "azure-openai",
        ChatRequest(model="gpt4o", messages=HI, max_tokens=64),
        "/openai/deployments/gpt4o?api-version=2024-06-01",
        (400, refusal),
    )
    assert [a.dropped for a in record.attempts] == [[], ["max_completion_tokens"]]
    assert "max_completion_tokens" not in sent[1]["body"]
    assert sent[1]["body"]["max_tokens"] == 64


@pytest.mark.parametrize(
    "name",
    [
        "openrouter",
        "groq",
        "mistral",
        "deepseek",
        "xai",
        "together",
        "vllm",
        "ollama",
        "llamacpp",
        "nvidia",
        "zai",
        "moonshot",
        "snowflake",
        "local",
    ],
)
async def test_compatible_endpoints_keep_max_tokens(serve: Serve, name: str) -> None:
    """The compatible servers all read `max_tokens` (Mistral's, DeepSeek's, Z.ai's,
    Ollama's and llama.cpp's references name no other); one that ignored an unknown
    key would drop the limit without a word, so the key they document is sent."""
    (sent,), _ = await _turn(serve, name, ChatRequest(model="m", messages=HI, max_tokens=64))
    assert sent["body"]["max_tokens"] == 64 and "max_completion_tokens" not in sent["body"]


# ------------------------------------------------------------ a tool round trip, whole

_WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
_LOOP = [
    Message.system("Be brief."),
    Message.user("Weather in Paris?", images=["https://example.com/paris.png"]),
    Message.assistant(
        "", tool_calls=[ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})]
    ),
    Message.tool("call_1", "Sunny, 21 C"),
]


async def test_openai_tool_round_trip_body(serve: Serve) -> None:
    """chat_completion_*_message_param.py (openai-python): an assistant message that
    only calls has `content: null` beside its `tool_calls` (content is "required unless
    `tool_calls` or `function_call` is specified"); a tool message has its
    `tool_call_id` and string content; an image is an `image_url` part; tools are
    function tools with an object schema."""
    (sent,), _ = await _turn(
        serve, "openai", ChatRequest(model="gpt-4.1", messages=_LOOP, tools=[_WEATHER])
    )
    assert sent["body"] == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather in Paris?"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/paris.png"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather of a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ],
    }
