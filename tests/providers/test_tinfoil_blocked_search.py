"""Tinfoil's web search refused by its safeguard: a `web_search_call` whose status is
`blocked` is a provider-run tool that gave no result (`ServerToolResult.is_error`).

Tinfoil's docs (docs.tinfoil.sh/guides/web-search): a safeguard model "blocks queries
containing sensitive information before they're sent to Exa. The model still responds,
just without search results". Its server writes each state of a search as a frame of its
own (tinfoilsh/confidential-websearch api/streaming.go, `EmitSearchCall`: type, id,
status, the action, and a `reason` when blocked), and its Go client reads the frames as
tinfoil-go's websearch_test.go feeds them (`TestWebSearchBlockedEvent`: status `blocked`,
reason "SSN detected"), listing blocked searches apart from the results
(`blocked_searches`). The bodies below are those frames, bare as the test feeds them and
inside a chunk's envelope as the proxy wraps them."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, ServerToolResult
from tests.support import ServeBody, replay_every_way

_QUERY = "search for John Smith SSN 123-45-6789"
_ENVELOPE = {"object": "chat.completion.chunk", "created": 1767225600, "model": "gpt-oss-120b",
             "choices": []}  # fmt: skip


def _turn(wrapped: bool) -> bytes:
    def ran(call_id: str, status: str, query: str, **more: str) -> dict[str, Any]:
        frame = {"type": "web_search_call", "id": call_id, "status": status,
                 "action": {"type": "search", "query": query}, **more}  # fmt: skip
        return {**frame, **_ENVELOPE} if wrapped else frame

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**_ENVELOPE, "id": "chatcmpl_1",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip

    frames = [
        ran("ws_abc123", "in_progress", "latest quantum computing news 2026"),
        ran("ws_abc123", "completed", "latest quantum computing news 2026"),
        ran("ws_def456", "in_progress", _QUERY),
        ran("ws_def456", "blocked", _QUERY, reason="SSN detected"),
        chunk({"role": "assistant", "content": "I cannot search for that information."}),
        chunk({}, "stop"),
    ]
    return ("".join(f"data: {json.dumps(f)}\n\n" for f in frames) + "data: [DONE]\n\n").encode()


def _results(events: list[Any]) -> list[tuple[str, str, bool]]:
    return [
        (e.call_id, e.content["status"], e.is_error)
        for e in events
        if isinstance(e, ServerToolResult)
    ]


@pytest.mark.parametrize("wrapped", [True, False], ids=["in an envelope", "bare"])
def test_a_blocked_search_is_a_tool_that_failed(wrapped: bool) -> None:
    events = replay_every_way(_turn(wrapped), "custom")
    assert _results(events) == [
        ("ws_abc123", "completed", False),  # a guard: a search that ran
        ("ws_def456", "blocked", True),
    ]
    blocked = [e for e in events if isinstance(e, ServerToolResult)][1]
    assert blocked.content["reason"] == "SSN detected"
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "stop"


async def test_a_blocked_search_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_turn(wrapped=True))
    async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as provider:
        events = [
            e
            async for e in provider.astream(
                rxllm.ChatRequest(model="gpt-oss-120b", messages=[rxllm.Message.user("hi")])
            )
        ]
    assert _results(events) == [("ws_abc123", "completed", False), ("ws_def456", "blocked", True)]
