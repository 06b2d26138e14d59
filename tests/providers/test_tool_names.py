"""Each wire's own rule for tool names, checked when the body is built: a name the
endpoint refuses is a `ConfigError` at the call. Sent, OpenAI's 400 names
`tools[0].function.name`, and a degraded retry dropped every tool: the turn went on
without them, a success that had lost them (a request-side review's probe). OpenAI's
`FunctionDefinition.name`: "a-z, A-Z, 0-9, or contain underscores and dashes, with a
maximum length of 64"; Anthropic's: `^[a-zA-Z0-9_-]{1,128}$` (its 400 `tools.0.custom.name:
String should match pattern ...`); Gemini's `FunctionDeclaration.name` takes dots and
colons, at most 64 characters. A compatible server keeps what `rxllm.Tool` takes.

Then the tool call ids of a history written anywhere, as each API takes them back
(`rxllm.providers.call_ids`)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.providers import wire_for
from tests.support import Serve

LONG = "t" * 65


def build(provider: str, name: str) -> dict[str, Any]:
    request = rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("hi")], tools=[rxllm.Tool(name=name)]
    )
    return wire_for(provider).build_body(request)


@pytest.mark.parametrize(
    ("provider", "refused", "taken"),
    [
        ("openai", ["github.list_commits", "mcp:search", LONG], ["get_weather", "t" * 64]),
        ("azure-openai", ["github.list_commits", LONG], ["get-weather"]),
        ("openai-responses", ["github.list_commits", LONG], ["get_weather"]),
        ("anthropic", ["github.list_commits", "mcp:search"], ["t" * 128]),
        ("google", [LONG], ["github.list_commits", "mcp:search"]),
        ("vllm", [], ["github.list_commits", "t" * 128]),
    ],
)
def test_a_tool_name_the_endpoint_refuses_is_a_config_error(
    provider: str, refused: list[str], taken: list[str]
) -> None:
    for name in refused:
        with pytest.raises(rxllm.ConfigError, match=rf"tool name '{name}' is not one"):
            build(provider, name)
    for name in taken:
        build(provider, name)


async def test_the_error_comes_at_the_call_and_nothing_is_sent(serve: Serve) -> None:
    sent: list[Any] = []

    async def handler(request: web.Request) -> web.Response:
        sent.append(await request.json())
        error = {"message": "Invalid 'tools[0].function.name'", "param": "tools[0].function.name"}
        return web.json_response({"error": error}, status=400)

    provider = rxllm.provider("openai", api_key="sk-test-0123456789", base_url=await serve(handler))
    request = rxllm.ChatRequest(
        model="gpt-4.1",
        messages=[rxllm.Message.user("hi")],
        tools=[rxllm.Tool(name="github.list_commits")],
    )
    with pytest.raises(rxllm.ConfigError, match="letters, digits, '_' and '-', at most 64"):
        provider.stream(request)
    await provider.aclose()
    assert sent == []


VLLM_ID = "chatcmpl-tool-0123456789abcdef0123456789abcdef"  # 46 characters, as vLLM writes
GEMINI_ID = "github_list_commits_for_repository_branch_0"  # rxllm's name for Gemini's call


@pytest.mark.parametrize("call_id", [VLLM_ID, GEMINI_ID])
@pytest.mark.parametrize(("provider", "longest"), [("openai", 40), ("azure-openai", 40)])
def test_a_call_id_longer_than_openai_takes_is_shortened_for_the_call_and_its_result(
    call_id: str, provider: str, longest: int
) -> None:
    """OpenAI refuses a tool call id over 40 characters ("string too long. Expected a
    string with maximum length 40", opencode#12653): the ids of calls made elsewhere (a
    fallback, a history begun on vLLM or Gemini) go as a shorter one, the same for the
    call and its result. A compatible server keeps the id it may have written itself."""
    call = rxllm.ToolCall(id=call_id, name="lookup", arguments={})
    history = [
        rxllm.Message.user("hi"),
        rxllm.Message.assistant(tool_calls=[call]),
        rxllm.Message.tool(call_id, "done"),
    ]
    request = rxllm.ChatRequest(model="m", messages=history)
    messages = wire_for(provider).build_body(request)["messages"]
    sent = messages[1]["tool_calls"][0]["id"]
    assert len(sent) <= longest and sent != call_id and messages[2]["tool_call_id"] == sent
    kept = wire_for("vllm").build_body(request)["messages"]
    assert kept[1]["tool_calls"][0]["id"] == kept[2]["tool_call_id"] == call_id


def test_repeated_and_long_call_ids_go_unique_and_bounded_to_the_responses_api() -> None:
    """Gemini's calls come back as `{name}_{index}` in every turn that calls the same
    function: two `function_call` items of one `call_id` are refused ("Duplicate
    function_call_output for call_id ..."), and so is a `call_id` over 64 characters.
    Each call goes once, each result with its own call."""
    long_id = "x" * 70

    def turn(call_id: str, city: str) -> list[rxllm.Message]:
        call = rxllm.ToolCall(id=call_id, name="get_weather", arguments={"city": city})
        return [rxllm.Message.assistant(tool_calls=[call]), rxllm.Message.tool(call_id, city)]

    history = [
        rxllm.Message.user("Paris, then Rome, then Oslo"),
        *turn("get_weather_0", "Paris"),
        *turn("get_weather_0", "Rome"),
        *turn(long_id, "Oslo"),
    ]
    request = rxllm.ChatRequest(model="gpt-5", messages=history)
    items = wire_for("openai-responses").build_body(request)["input"][1:]
    pairs = [(item["type"], item["call_id"]) for item in items]
    calls = [call_id for kind, call_id in pairs if kind == "function_call"]
    outputs = [call_id for kind, call_id in pairs if kind == "function_call_output"]
    assert calls == outputs and len(set(calls)) == 3
    assert calls[0] == "get_weather_0" and all(len(call_id) <= 64 for call_id in calls)
    assert [item["output"] for item in items if item["type"] == "function_call_output"] == [
        "Paris",
        "Rome",
        "Oslo",
    ]
