"""A provider-run tool that failed (`ServerToolResult.is_error`) is a `tool-output-error`
in the UI message stream, with the failure as its `errorText`, as the AI SDK's own
server sends it (`toUIMessageStream`: a provider-executed tool's error, a string as it
is, else its JSON; the Anthropic provider marks these results `isError`), so the client
shows the tool part in state `output-error`. Before, every result was a
`tool-output-available`: a web search that failed showed as one that worked."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from typing import Any

import rxllm
from rxllm.events import Done, Event, ServerToolResult
from rxllm.serving.ui_message_stream import UIMessageEncoder
from tests.serving.support import check_rules, encode
from tests.serving.test_resume_fold import check_every_cut
from tests.serving.test_ui_message_stream_node import node_client, run_client

__all__ = ["node_client"]  # the Node fixture, shared with the conformance test

# The module (rxllm.serving's `ui_message_stream` is its function), read at run time: a
# name it lacks fails one test, not the file.
ENCODER = importlib.import_module("rxllm.serving.ui_message_stream")

P = "anthropic"
FAILED = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
FOUND = [
    {
        "type": "web_search_result",
        "url": "https://a.example/",
        "title": "A",
        "encrypted_content": "Eq",
        "page_age": None,
    }
]


def _event(payload: dict[str, Any]) -> str:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"


def _search(index: int, call_id: str, content: Any) -> list[str]:
    """A web search's call and result blocks, as Anthropic's stream writes them."""
    call = {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {}}
    result = {"type": "web_search_tool_result", "tool_use_id": call_id, "content": content}
    return [
        _event({"type": "content_block_start", "index": index, "content_block": call}),
        _event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": '{"query": "q"}'},
            }
        ),
        _event({"type": "content_block_stop", "index": index}),
        _event({"type": "content_block_start", "index": index + 1, "content_block": result}),
        _event({"type": "content_block_stop", "index": index + 1}),
    ]


MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1},
}
BODY = "".join(
    [
        _event({"type": "message_start", "message": MESSAGE}),
        *_search(0, "srvtoolu_1", FAILED),
        *_search(2, "srvtoolu_2", FOUND),
        _event(
            {
                "type": "content_block_start",
                "index": 4,
                "content_block": {"type": "text", "text": ""},
            }
        ),
        _event(
            {
                "type": "content_block_delta",
                "index": 4,
                "delta": {"type": "text_delta", "text": "Found it the second time."},
            }
        ),
        _event({"type": "content_block_stop", "index": 4}),
        _event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 9},
            }
        ),
        _event({"type": "message_stop"}),
    ]
).encode()


def _events() -> list[Event]:
    events: list[Event] = []
    rxllm.replay(BODY, provider=P).subscribe(events.append)
    return events


async def test_a_failed_server_tool_is_a_tool_output_error() -> None:
    stream = await encode(_events())
    check_rules(stream)
    outputs = [p for p in stream.parts if p["type"].startswith("tool-output")]
    assert outputs == [
        {
            "type": "tool-output-error",
            "toolCallId": "srvtoolu_1",
            "errorText": json.dumps(FAILED, separators=(",", ":")),
            "providerExecuted": True,
            "dynamic": True,
        },
        {
            "type": "tool-output-available",
            "toolCallId": "srvtoolu_2",
            "output": FOUND,
            "providerExecuted": True,
            "dynamic": True,
        },
    ]


def test_the_error_text_is_what_the_provider_said_of_the_failure() -> None:
    """A string as it is; nothing said, a fixed text. A failed result for a call the
    client never saw gets the call first, as a result does."""

    def error_parts(content: Any) -> list[dict[str, Any]]:
        encoder = UIMessageEncoder("m")
        event = ServerToolResult(
            provider=P, call_id="c", name="mcp", content=content, is_error=True
        )
        return [p for p in encoder.parts(event) if p["type"].startswith("tool-")]

    assert error_parts("Error: 500 from the MCP server")[-1]["errorText"] == (
        "Error: 500 from the MCP server"
    )
    parts = error_parts(None)
    assert [p["type"] for p in parts] == ["tool-input-available", "tool-output-error"]
    assert parts[-1]["errorText"] == ENCODER.TOOL_FAILED
    assert error_parts({"x": float("nan")})[-1]["errorText"] == '{"x":null}'


def test_a_resume_folds_a_failed_tool_as_the_live_response_sent_it() -> None:
    """Both cheap folds (the event, the stored JSON, where `is_error` is kept) send after
    each cut what the whole response did."""
    events = _events()
    check_every_cut(events)
    check_every_cut([*events[:-1], Done(provider=P, stop_reason="stop")], by_json=False)


def test_the_ai_client_shows_the_failed_search_as_failed(node_client: Path) -> None:
    async def body() -> bytes:
        return (await encode(_events())).raw

    results = run_client(node_client, {"failed_search": asyncio.run(body())})["results"]
    assert len(results) == 4
    for result in results:
        assert not result["errors"], result
        tools = [
            (part["toolCallId"], part["state"], part.get("errorText"))
            for part in result["message"]["parts"]
            if part["type"] == "dynamic-tool"
        ]
        assert tools == [
            ("srvtoolu_1", "output-error", json.dumps(FAILED, separators=(",", ":"))),
            ("srvtoolu_2", "output-available", None),
        ], result
