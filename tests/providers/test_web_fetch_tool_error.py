"""A web fetch that failed, as the web fetch tool's page writes it, is a failed
provider-run tool (`ServerToolResult.is_error`).

The page (platform.claude.com, agents-and-tools/tool-use/web-fetch-tool, "Errors")
shows the failure as `{"type": "web_fetch_tool_error", "error_code":
"url_not_accessible"}` inside a `web_fetch_tool_result` block with a 200; the SDKs
type the same object `web_fetch_tool_result_error`, which rxllm read, so the page's
shape (and a proxy that runs the tool for Bedrock and writes it so) read as a fetch
that worked. Bodies built by hand from the page's example, served over loopback and
replayed at every chunking.
"""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm.events import ServerToolResult
from tests.support import ServeBody, replay_every_way

KEY = "sk-ant-probe-0123456789abcdef"
ASK = rxllm.ChatRequest(model="claude-test", messages=[rxllm.Message.user("fetch it")])
URL = "https://example.com/article"
# The page's example error, as it shows it.
FETCH_ERROR = {"type": "web_fetch_tool_error", "error_code": "url_not_accessible"}


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _fetch_turn(content: dict[str, Any]) -> bytes:
    """The page's streaming example: the call, its URL streamed, the result whole."""
    message = {
        "id": "msg_abc123",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1},
    }
    call = {"type": "server_tool_use", "id": "srvtoolu_xyz789", "name": "web_fetch"}
    result = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_xyz789", "content": content}
    return _sse(
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": call},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps({"url": URL})},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "text_delta", "text": "I could not open that page."},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 12, "server_tool_use": {"web_fetch_requests": 1}},
        },
        {"type": "message_stop"},
    )


def _results(events: list[Any]) -> list[tuple[str, str, Any, bool]]:
    results = [e for e in events if isinstance(e, ServerToolResult)]
    return [(e.call_id, e.name, e.content, e.is_error) for e in results]


async def test_the_page_s_fetch_error_is_a_failed_tool_over_loopback(
    serve_body: ServeBody,
) -> None:
    body = _fetch_turn(FETCH_ERROR)
    expected = [("srvtoolu_xyz789", "web_fetch", FETCH_ERROR, True)]
    events = replay_every_way(body, "anthropic")
    assert _results(events) == expected
    assert [e.type for e in events] == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "usage",
        "done",
    ]
    async with rxllm.provider(
        "anthropic", api_key=KEY, base_url=await serve_body(body), allow_private_network=True
    ) as p:
        rec = await p.complete(ASK)
        streamed = [ev async for ev in p.astream(ASK)]
    assert _results(streamed) == expected
    assert {ev.provider for ev in streamed} == {"anthropic"}
    assert rec.text == "I could not open that page."
    assert rec.terminal.type == "done" and rec.terminal.stop_reason == "stop"


def test_the_page_s_fetch_error_relayed_by_litellm_is_a_failed_tool() -> None:
    """The chat wire reads LiteLLM's relay of the same block (`provider_specific_fields`)
    as the Anthropic wire does."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        payload = {"id": "chatcmpl-1", "model": "claude-test", "choices": [choice]}
        return f"data: {json.dumps(payload)}\n\n".encode()

    entry = {
        "id": "srvtoolu_1",
        "type": "function",
        "index": 0,
        "function": {"name": "web_fetch", "arguments": json.dumps({"url": URL})},
    }
    block = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": FETCH_ERROR}
    body = (
        chunk({"role": "assistant", "content": "", "tool_calls": [entry]})
        + chunk({"content": "", "provider_specific_fields": {"web_search_results": [block]}})
        + chunk({"content": "It failed."})
        + chunk({}, "tool_calls")
        + b"data: [DONE]\n\n"
    )
    events = replay_every_way(body, "custom")
    assert _results(events) == [("srvtoolu_1", "web_fetch", FETCH_ERROR, True)]


def test_a_fetch_that_worked_is_no_error() -> None:
    """The near miss: the page's `web_fetch_result` is the tool's output."""
    worked = {
        "type": "web_fetch_result",
        "url": URL,
        "content": {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Article content..."},
            "title": "Article Title",
            "citations": {"enabled": True},
        },
        "retrieved_at": "2025-08-25T10:30:00Z",
    }
    events = replay_every_way(_fetch_turn(worked), "anthropic")
    assert _results(events) == [("srvtoolu_xyz789", "web_fetch", worked, False)]
