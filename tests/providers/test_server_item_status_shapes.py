"""A provider-run item's `status` that is no string (a list, an object, from a relay that
rewrites frames or a server's slip) is a status that says no failure, as it was before
Tinfoil's `blocked` joined `failed`: the set they were kept in hashed the value, and a
list or an object failed the whole turn as a protocol error ("unhashable type"). The
Responses wire and the chat wire's Tinfoil frames share the check (`server_item_failed`).

The same holds for every word a wire's value is tested against in a set (the chat wire's
statuses under way and parallel wrappers' names, Anthropic's server call blocks and
complete stop reasons, Gemini's block reasons that block nothing): they are tuples, so a
value that is no string is none of them; a tool's name that is no string names none."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, Failed, ServerToolResult, ToolRequest
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


_UNHASHABLE = [["x"], {"a": 1}]


def _frames(*frames: dict[str, Any], named: bool = False, done: bool = True) -> bytes:
    def frame(payload: dict[str, Any]) -> str:
        event = f"event: {payload['type']}\n" if named else ""
        return f"{event}data: {json.dumps(payload)}\n\n"

    return ("".join(map(frame, frames)) + ("data: [DONE]\n\n" if done else "")).encode()


def _terminal(events: list[Any]) -> tuple[str, str | None, str | None]:
    failed = [e.error.message for e in events if isinstance(e, Failed)]
    assert not failed, failed
    done = events[-1]
    assert isinstance(done, Done)
    text = "".join(e.text for e in events if e.type == "text")
    return done.stop_reason, done.raw_stop_reason, text


@pytest.mark.parametrize("status", _SHAPES, ids=repr)
def test_a_status_that_is_no_string_fails_no_chat_turn(status: Any) -> None:
    """Tinfoil's frames on the chat wire: the status is final, the search's result read."""
    assert _read(replay_every_way(_tinfoil_turn(status), "custom")) == ([False], "hi")


@pytest.mark.parametrize("name", _UNHASHABLE, ids=repr)
def test_a_chat_call_named_by_no_string_fails_no_turn(name: Any) -> None:
    envelope = {"object": "chat.completion.chunk", "model": "m", "id": "chatcmpl_1"}
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": '{"q": 1}'}}  # fmt: skip
    events = replay_every_way(
        _frames(
            {**envelope, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
            {**envelope, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ),
        "custom",
    )
    assert _terminal(events)[0] == "tool_use"
    assert [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ToolRequest)] == [
        ("call_1", "", {"q": 1})
    ]


@pytest.mark.parametrize("name", _UNHASHABLE, ids=repr)
def test_a_responses_call_named_by_no_string_fails_no_turn(name: Any) -> None:
    call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": name,
            "arguments": ""}  # fmt: skip
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    frames = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        {"type": "response.function_call_arguments.delta", "output_index": 0,
         "delta": '{"q": 1}'},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {**call, "arguments": '{"q": 1}'}},
        {"type": "response.completed",
         "response": {"id": "resp_1", "status": "completed", "usage": usage}},
    ]  # fmt: skip
    events = replay_every_way(_frames(*frames, named=True, done=False), "openai-responses")
    assert _terminal(events)[0] == "tool_use"
    assert [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ToolRequest)] == [
        ("call_1", "", {"q": 1})
    ]


_ANTHROPIC_START = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                "content": [], "usage": {"input_tokens": 3, "output_tokens": 0}},
}  # fmt: skip


def _anthropic_turn(*blocks: dict[str, Any], stop: Any = "end_turn") -> bytes:
    at = len(blocks)
    said = [
        {"type": "content_block_start", "index": at, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": at, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": at},
    ]
    opened = [
        frame
        for index, block in enumerate(blocks)
        for frame in (
            {"type": "content_block_start", "index": index, "content_block": block},
            {"type": "content_block_stop", "index": index},
        )
    ]
    end = [
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return _frames(_ANTHROPIC_START, *opened, *said, *end, named=True, done=False)


@pytest.mark.parametrize("kind", _UNHASHABLE, ids=repr)
def test_an_anthropic_block_of_no_string_type_fails_no_turn(kind: Any) -> None:
    """A block of no kind known is skipped, as one of an unknown string's is."""
    events = replay_every_way(_anthropic_turn({"type": kind, "id": "srvtoolu_1"}), "anthropic")
    assert _terminal(events) == ("stop", "end_turn", "hi")


@pytest.mark.parametrize("stop", _UNHASHABLE, ids=repr)
def test_an_anthropic_stop_reason_of_no_string_fails_no_turn(stop: Any) -> None:
    """A reason of no kind known is `other`, kept as its JSON text (as the chat wire's)."""
    events = replay_every_way(_anthropic_turn(stop=stop), "anthropic")
    assert _terminal(events) == ("other", json.dumps(stop), "hi")


@pytest.mark.parametrize("reason", _UNHASHABLE, ids=repr)
def test_a_gemini_block_reason_of_no_string_fails_no_turn(reason: Any) -> None:
    """A reason given is a block, whatever its kind, as an unknown word's is."""
    feedback = {"promptFeedback": {"blockReason": reason},
                "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3}}  # fmt: skip
    events = replay_every_way(_frames(feedback, done=False), "google")
    assert _terminal(events) == ("content_filter", json.dumps(reason), "")


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
