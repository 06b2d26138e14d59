"""A provider-run item's `status` that is no string (a list, an object, from a relay that
rewrites frames or a server's slip) is a status that says no failure, as it was before
Tinfoil's `blocked` joined `failed`: the set they were kept in hashed the value, and a
list or an object failed the whole turn as a protocol error ("unhashable type"). The
Responses wire and the chat wire's Tinfoil frames share the check (`server_item_failed`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, Failed, ServerToolResult
from tests.support import ServeBody, replay_every_way

_SHAPES = [["failed"], {"code": "blocked"}, 3, None]


def _responses_turn(status: Any) -> bytes:
    def event(kind: str, **fields: Any) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"

    search = {"id": "ws_1", "type": "web_search_call", "action": {"type": "search", "query": "q"}}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    done = {"id": "resp_1", "status": "completed", "usage": usage}
    searching = {**search, "status": "in_progress"}
    return "".join(
        [
            event("response.created", response={"id": "resp_1", "status": "in_progress"}),
            event("response.output_item.added", output_index=0, item=searching),
            event("response.output_item.done", output_index=0, item={**search, "status": status}),
            event("response.output_item.added", output_index=1, item=message),
            event("response.output_text.delta", output_index=1, content_index=0, delta="hi"),
            event("response.completed", response=done),
        ]
    ).encode()  # fmt: skip


def _tinfoil_turn(status: Any) -> bytes:
    """Tinfoil's search frames as test_tinfoil_blocked_search writes them, bare."""
    envelope = {"object": "chat.completion.chunk", "model": "gpt-oss-120b", "id": "chatcmpl_1"}
    frames: list[dict[str, Any]] = [
        {"type": "web_search_call", "id": "ws_1", "status": "in_progress",
         "action": {"type": "search", "query": "q"}},
        {"type": "web_search_call", "id": "ws_1", "status": status,
         "action": {"type": "search", "query": "q"}},
        {**envelope, "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]},
        {**envelope, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]  # fmt: skip
    return ("".join(f"data: {json.dumps(f)}\n\n" for f in frames) + "data: [DONE]\n\n").encode()


def _read(events: list[Any]) -> tuple[list[bool], str]:
    failed = [e.error.message for e in events if isinstance(e, Failed)]
    assert not failed, failed
    assert isinstance(events[-1], Done)
    text = "".join(e.text for e in events if e.type == "text")
    return [e.is_error for e in events if isinstance(e, ServerToolResult)], text


@pytest.mark.parametrize("status", _SHAPES, ids=repr)
def test_a_status_that_is_no_string_fails_no_responses_turn(status: Any) -> None:
    assert _read(replay_every_way(_responses_turn(status), "openai-responses")) == ([False], "hi")


def test_blocked_and_failed_are_still_failures() -> None:
    """The guard: the strings still read as before."""
    for status in ("blocked", "failed"):
        assert _read(replay_every_way(_responses_turn(status), "openai-responses"))[0] == [True]
        assert _read(replay_every_way(_tinfoil_turn(status), "custom"))[0] == [True]


async def test_a_status_that_is_no_string_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_responses_turn(["blocked"]))
    async with rxllm.provider(
        "openai-responses", api_key="sk-test", base_url=base_url, allow_private_network=True
    ) as provider:
        request = rxllm.ChatRequest(model="gpt-5", messages=[rxllm.Message.user("hi")])
        events = [event async for event in provider.astream(request)]
    assert _read(events) == ([False], "hi")
