"""The UI message stream's tools as the `ai` package reads them: a tool the provider ran
(web search, code execution) is not one of the app's tools, so it is a dynamic tool
part, as the SDK's own server sends a provider-executed tool its tool set does not list
(`stream-text.ts`, `toUIMessageStream`: "provider-executed, dynamic tools are not
listed in the tools object"); the app's own calls stay static `tool-<name>` parts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import rxllm
from rxllm.events import ErrorInfo, Event, Failed, ServerToolCall, ServerToolResult, ToolRequest
from rxllm.local import WIRES, LocalServer
from tests.serving.support import Stream, check_rules, encode
from tests.serving.test_ui_message_stream_node import VERSIONS, node_client, run_client

__all__ = ["node_client"]  # the Node fixture, shared with the conformance test

P = "anthropic"
APP_TOOLS = ["get_time", "get_weather"]  # the tools the app declares (rxllm.Tool)
SERVER_CHUNKS = ("tool-input-start", "tool-input-available", "tool-output-available")


def _request(story: str) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=f"fault/{story}",
        messages=[rxllm.Message.user("What's the weather in Paris? Tell me about rxllm.")],
        tools=[rxllm.Tool(name=name) for name in APP_TOOLS],
    )


def _search(*after: Event) -> list[Event]:
    call = ServerToolCall(provider=P, call_id="srvtoolu_1", name="web_search", arguments={})
    return [call, *after]


CUT = ErrorInfo(kind="truncated", message="The stream ended early.", provider=P)
EVENTS: dict[str, list[Event]] = {
    # the search and the app's own call in one message
    "search then a call": _search(
        ServerToolResult(provider=P, call_id="srvtoolu_1", name="web_search", content=[]),
        ToolRequest(provider=P, call_id="toolu_2", name="get_weather", index=1, arguments={}),
        rxllm.Done(provider=P, stop_reason="tool_use"),
    ),
    # cut off while the provider searched: the part never gets its output
    "search cut off": _search(Failed(provider=P, error=CUT)),
    "a result without its call": [
        ServerToolResult(provider=P, call_id="srvtoolu_9", name="code_execution", content={}),
        rxllm.Done(provider=P, stop_reason="stop"),
    ],
}


async def _bodies() -> dict[str, Stream]:
    streams = {name: await encode(events) for name, events in EVENTS.items()}
    async with LocalServer(pace=0) as server:
        for wire in WIRES:
            for story in ("web_search", "code_execution", "pause"):
                turn = server.provider(wire).stream(_request(story))
                streams[f"local {wire} {story}"] = await encode(turn)
    return streams


def _server_calls(stream: Stream) -> dict[str, str]:
    """Call id -> tool name, of the tools the provider ran."""
    return {
        p["toolCallId"]: p["toolName"]
        for p in stream.parts
        if p.get("providerExecuted") and "toolName" in p
    }


def test_a_tool_the_provider_ran_is_a_dynamic_tool() -> None:
    streams = asyncio.run(_bodies())
    assert _server_calls(streams["local anthropic web_search"])  # not vacuous
    for name, stream in streams.items():
        check_rules(stream)
        for part in stream.parts:
            if part["type"] not in SERVER_CHUNKS and part["type"] != "tool-input-error":
                continue
            # every chunk of a provider's tool says so (else the client starts a static
            # part and then looks for a dynamic one); the app's own calls stay static
            assert part.get("dynamic", False) is bool(part.get("providerExecuted")), (name, part)


def _validate(node_dir: Path, streams: dict[str, Stream]) -> list[dict[str, Any]]:
    """check.mjs with the app's tools named: each message is also validated against
    them, as a server validating the chat it stored does (`validateUIMessages`)."""
    bodies = {name: stream.raw for name, stream in streams.items()}
    results: list[dict[str, Any]] = run_client(node_dir, bodies, APP_TOOLS)["results"]
    return results


def test_the_ai_client_reads_a_provider_tool_as_a_dynamic_tool(node_client: Path) -> None:
    """Before, a web search was a static `tool-web_search` part: `validateUIMessages`
    with the app's tools refused the message ("No tool schema found for tool part
    web_search") in `ai` 5.0.92 and 6.0.0, and in every version while the search had
    no output; and a typed UI (`InferUITools<typeof tools>`) met a part of no type."""
    streams = asyncio.run(_bodies())
    results = _validate(node_client, streams)
    assert {r["version"] for r in results} == VERSIONS
    for result in results:
        where = (result["version"], result["name"])
        assert not result["errors"], (where, result["errors"])
        message = result["message"] or {"parts": []}  # no snapshot: nothing shown
        parts = [p for p in message["parts"] if "toolCallId" in p]
        server = _server_calls(streams[result["name"]])
        for part in parts:
            if part["toolCallId"] in server:
                assert part["type"] == "dynamic-tool" and part["providerExecuted"], where
                assert part["toolName"] == server[part["toolCallId"]], where
            else:
                assert part["type"] in ("tool-get_weather", "tool-get_time"), where
        assert {p["toolCallId"] for p in parts} >= server.keys(), where
