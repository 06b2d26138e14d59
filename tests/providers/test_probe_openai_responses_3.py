"""OpenAI Responses streams of open-weight servers that a third probe found misread:
vLLM's (a response cut by its token limit sent as `response.completed`; gpt-oss parts
numbered on across items, an output index used again) and Ollama's (parallel calls
that arrive in separate chunks, each at the same output index). Bodies are made by
hand from those servers' sources (vllm `responses/serving.py`, `protocol.py`,
`streaming_events.py`; ollama `openai/responses.go`) and the stream vllm-project/vllm#24938
shows; ids and values are made up. Every body is read whatever the chunking, and over
a loopback server: the same events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rxllm
from rxllm.events import Event
from tests.providers.test_openai_responses_shapes import added, done, on, wire
from tests.providers.test_probe_usage import _counts
from tests.support import ServeBody, replay_every_way, summarize

RESPONSE = {"id": "resp_1", "object": "response", "model": "gpt-oss-20b"}
CREATED = {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}
USAGE = {
    "input_tokens": 30,
    "input_tokens_details": {"cached_tokens": 16},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 5},
    "total_tokens": 42,
}
# (input apart from the cache, output incl. reasoning, reasoning, cache read, total)
COUNTS = (14, 12, 5, 16, 42)


def terminal(*output: dict[str, Any], **fields: Any) -> dict[str, Any]:
    response = {**RESPONSE, "status": "completed", "output": list(output), "usage": USAGE}
    return {"type": "response.completed", "response": {**response, **fields}}


async def run(
    serve_body: ServeBody, *payloads: dict[str, Any], frame: Callable[..., bytes] = wire
) -> list[Event]:
    """The events of the body (`frame`d), the same over HTTP as replayed in any chunking."""
    body = frame(*payloads)
    events = replay_every_way(body, "openai-responses")
    request = rxllm.ChatRequest(model="gpt-oss-20b", messages=[rxllm.Message.user("hi")])
    base_url = await serve_body(body)
    async with rxllm.provider("openai-responses", api_key="sk-probe", base_url=base_url) as p:
        assert [event async for event in p.astream(request)] == events
    return events


def counts(usage: rxllm.Usage | None) -> tuple[int, ...]:
    assert usage is not None
    return _counts(usage)


MESSAGE = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}


async def test_a_completed_response_whose_status_is_incomplete_ended_by_length(
    serve_body: ServeBody,
) -> None:
    """vLLM ends a response cut by `max_output_tokens` with `response.completed` whose
    response says `status: "incomplete"` and `incomplete_details.reason:
    "max_output_tokens"` (`ResponsesResponse.from_request`). It read as `stop`."""
    part = {"type": "output_text", "text": "Once upon", "annotations": []}
    events = await run(
        serve_body,
        CREATED,
        added(0, {**MESSAGE, "content": []}),
        on("response.output_text.delta", 0, "msg_1", content_index=0, delta="Once "),
        on("response.output_text.delta", 0, "msg_1", content_index=0, delta="upon"),
        terminal(
            {**MESSAGE, "status": "incomplete", "content": [part]},
            status="incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        ),
    )
    got = summarize(events)
    assert (got.text, got.stop_reason, got.raw_stop_reason) == (
        "Once upon",
        "length",
        "max_output_tokens",
    )
    assert counts(got.usage) == COUNTS


async def test_gpt_oss_parts_numbered_across_items_are_shown_once(serve_body: ServeBody) -> None:
    """vLLM's gpt-oss stream numbers content parts on across the response and used an
    output index again (vllm-project/vllm#24938: the reasoning item done at
    output_index 1, then the message added at output_index 1, its only part at
    content_index 1). The message's `output_item.done` holds that part at position 0,
    which read as a part never streamed: the answer was shown twice."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "status": "in_progress"}
    thought = {"type": "reasoning_text", "text": "Greet back."}
    answer = {"type": "output_text", "text": "Hello!", "annotations": [], "logprobs": []}
    reasoning_done = {**reasoning, "status": "completed", "content": [thought]}
    message_done = {**MESSAGE, "status": "completed", "content": [answer]}
    events = await run(
        serve_body,
        CREATED,
        added(1, reasoning),
        # vLLM's own names for the part events of a reasoning item
        on(
            "response.reasoning_part.added",
            1,
            "rs_1",
            content_index=0,
            part={**thought, "text": ""},
        ),
        on("response.reasoning_text.delta", 1, "rs_1", content_index=0, delta="Greet "),
        on("response.reasoning_text.delta", 1, "rs_1", content_index=0, delta="back."),
        on("response.reasoning_text.done", 1, "rs_1", content_index=0, text="Greet back."),
        on("response.reasoning_part.done", 1, "rs_1", content_index=0, part=thought),
        done(1, reasoning_done),
        added(1, {**MESSAGE, "content": []}),
        on("response.content_part.added", 1, "msg_1", content_index=1, part={**answer, "text": ""}),
        on("response.output_text.delta", 1, "msg_1", content_index=1, delta="Hello"),
        on("response.output_text.delta", 1, "msg_1", content_index=1, delta="!"),
        on("response.output_text.done", 1, "msg_1", content_index=1, text="Hello!"),
        on("response.content_part.done", 1, "msg_1", content_index=1, part=answer),
        done(1, message_done),
        terminal(reasoning_done, message_done),
    )
    got = summarize(events)
    assert (got.text, got.reasoning, got.stop_reason) == ("Hello!", "Greet back.", "stop")
    assert counts(got.usage) == COUNTS


def _ollama_call(number: int, arguments: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": f"fc_{number}_0",
        "type": "function_call",
        "status": status,
        "call_id": f"call_{number}",
        "name": "run_command",
        "arguments": arguments,
    }


def _ollama_call_events(index: int, number: int, arguments: str) -> list[dict[str, Any]]:
    """One call as Ollama's converter streams it: added, one delta, done, item done."""
    item_id = f"fc_{number}_0"
    return [
        added(index, _ollama_call(number, "", status="in_progress")),
        on("response.function_call_arguments.delta", index, item_id, delta=arguments),
        on("response.function_call_arguments.done", index, item_id, arguments=arguments),
        done(index, _ollama_call(number, arguments)),
    ]


async def test_parallel_calls_at_one_output_index_are_each_requested(
    serve_body: ServeBody,
) -> None:
    """Ollama's converter numbers a chunk's calls from its current output index and
    never moves it on: parallel calls that arrive in separate chunks (as its chat
    endpoint sends them, captures/ollama/parallel_tool_calls_whole_chunks.sse) all
    come at one output index, each its own item id and call id. The second call was
    dropped without a word (its start read as a repeat of the first)."""
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    thought = "List the files."
    reasoning_done = {
        **reasoning,
        "summary": [{"type": "summary_text", "text": thought}],
        "encrypted_content": thought,  # Ollama's: the plain text
    }
    first, second = '{"command":"ls"}', '{"command":"ls -l"}'
    events = await run(
        serve_body,
        CREATED,
        added(0, reasoning),
        on("response.reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta=thought),
        on("response.reasoning_summary_text.done", 0, "rs_1", summary_index=0, text=thought),
        done(0, reasoning_done),
        *_ollama_call_events(1, 1, first),
        *_ollama_call_events(1, 2, second),
        terminal(reasoning_done, _ollama_call(1, first), _ollama_call(2, second)),
    )
    got = summarize(events)
    assert got.tool_calls == [
        ("call_1", "run_command", {"command": "ls"}),
        ("call_2", "run_command", {"command": "ls -l"}),
    ]
    assert (got.reasoning, got.stop_reason) == (thought, "tool_use")
    assert counts(got.usage) == COUNTS
