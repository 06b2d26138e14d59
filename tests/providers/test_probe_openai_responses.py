"""OpenAI Responses shapes found missing by a probe of the streaming wire: content that
the protocol says is complete but that arrived in an event no other event repeated
(`response.content_part.done`, the terminal response's `output`). Bodies are made by
hand from the streaming events reference and openai-python's event types; ids and
values are made up. Every body is checked whatever the chunking."""

from __future__ import annotations

from typing import Any

from rxllm.events import (
    Citation,
    Failed,
    ReasoningDelta,
    Refusal,
    ServerToolResult,
    ToolRequest,
)
from tests.providers.test_openai_responses_shapes import run
from tests.support import summarize

RESPONSE = {"id": "resp_1", "object": "response", "model": "gpt-test"}
CREATED = {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}
USAGE = {
    "input_tokens": 20,
    "input_tokens_details": {"cached_tokens": 5},
    "output_tokens": 9,
    "output_tokens_details": {"reasoning_tokens": 4},
    "total_tokens": 29,
}
MESSAGE = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    response = {**RESPONSE, "status": "completed", "output": list(output), "usage": USAGE}
    return {"type": "response.completed", "response": response}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def part_done(index: int, content_index: int, part: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "response.content_part.done",
        "output_index": index,
        "item_id": "msg_1",
        "content_index": content_index,
        "part": part,
    }


def test_a_content_part_that_came_whole_at_its_done_event_is_emitted_once() -> None:
    """ResponseContentPartDoneEvent carries the whole part (`output_text`, `refusal`).
    A minimal server that sends a part only there (no `output_text.delta`, no
    `output_text.done`, no `output_item.done`) had its text dropped without a word."""
    cite = {"type": "url_citation", "url": "https://ex.com", "title": "Ex"}
    events = run(
        CREATED,
        added(0, {**MESSAGE, "content": []}),
        part_done(0, 0, {"type": "output_text", "text": "Whole text", "annotations": []}),
        part_done(0, 1, {"type": "refusal", "refusal": "I can't help with that."}),
        part_done(
            0,
            2,
            {
                "type": "output_text",
                "text": " See ex.",
                "annotations": [{**cite, "start_index": 5, "end_index": 7}],
            },
        ),
        completed(),
    )
    out = summarize(events)
    assert (out.text, out.refusal, out.stop_reason) == (
        "Whole text See ex.",
        "I can't help with that.",
        "stop",
    )
    assert [(e.url, e.cited_text) for e in events if isinstance(e, Citation)] == [
        ("https://ex.com", None)  # the range is the answer's own text
    ]


def test_a_content_part_done_never_repeats_what_was_streamed() -> None:
    """OpenAI's own order: deltas, `output_text.done`, `content_part.done`,
    `output_item.done`, each repeating the part: the text is shown once."""
    whole = {"type": "output_text", "text": "Hello", "annotations": []}
    events = run(
        CREATED,
        added(0, {**MESSAGE, "content": []}),
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hel",
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "lo",
        },
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello",
        },
        part_done(0, 0, whole),
        done(0, {**MESSAGE, "status": "completed", "content": [whole]}),
        completed({**MESSAGE, "status": "completed", "content": [whole]}),
    )
    assert summarize(events).text == "Hello"


def test_a_reasoning_text_part_that_came_whole_at_content_part_done_is_shown_once() -> None:
    """A reasoning item's `reasoning_text` part (gpt-oss, DeepSeek's Responses wire)
    may come only in its `content_part.done`."""
    events = run(
        CREATED,
        added(0, {"type": "reasoning", "id": "rs_1", "summary": []}),
        {
            **part_done(0, 0, {"type": "reasoning_text", "text": "Think first."}),
            "item_id": "rs_1",
        },
        completed(),
    )
    assert [e.text for e in events if isinstance(e, ReasoningDelta) and e.text] == ["Think first."]


def test_items_only_in_the_completed_response_are_emitted() -> None:
    """`response.completed` carries the whole response, its `output` included. A server
    that streams nothing but the terminal response (or loses an item's events on the
    way) had its answer dropped without a word and the turn reported a bare success."""
    text = {"type": "output_text", "text": "It is sunny.", "annotations": []}
    events = run(
        CREATED,
        completed(
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Look it up."}],
                "encrypted_content": "ENC",
            },
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "weather"},
            },
            {**MESSAGE, "status": "completed", "content": [text]},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "save",
                "arguments": '{"note": "sunny"}',
                "status": "completed",
            },
        ),
    )
    out = summarize(events)
    assert out.reasoning == "Look it up." and out.signatures == ["ENC"]
    assert out.text == "It is sunny."
    assert out.tool_calls == [("call_1", "save", {"note": "sunny"})]
    assert [e.name for e in events if isinstance(e, ServerToolResult)] == ["web_search_call"]
    assert out.stop_reason == "tool_use"


def test_the_completed_response_never_repeats_items_already_done() -> None:
    """OpenAI's terminal response repeats every item its stream already finished: none
    is emitted twice, matched by output index or by item id (a proxy that numbers its
    items differently)."""
    text = {"type": "output_text", "text": "Hi", "annotations": []}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"}
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "f",
        "arguments": "{}",
        "status": "completed",
    }
    message = {**MESSAGE, "status": "completed", "content": [text]}
    events = run(
        CREATED,
        done(0, reasoning),
        done(0, search),  # misnumbered: its id tells it apart
        added(2, {**MESSAGE, "content": []}),
        {
            "type": "response.output_text.delta",
            "output_index": 2,
            "content_index": 0,
            "delta": "Hi",
        },
        added(3, {**call, "arguments": "", "status": "in_progress"}),
        {"type": "response.function_call_arguments.delta", "output_index": 3, "delta": "{}"},
        completed(reasoning, search, message, call),  # message and call never `done`
    )
    out = summarize(events)
    assert out.text == "Hi" and out.signatures == ["ENC"]
    assert out.tool_calls == [("call_1", "f", {})]
    assert len([e for e in events if isinstance(e, ServerToolResult)]) == 1
    assert len([e for e in events if isinstance(e, ToolRequest)]) == 1
    assert not [e for e in events if isinstance(e, Refusal)]


def test_a_failed_response_tells_how_long_to_wait_as_an_error_event_does() -> None:
    """`response.failed`'s `error` (ResponseError: `code`, `message`) is an error like
    the `error` event's: the wait its message names ("Please try again in 20s", as in
    every OpenAI rate-limit message) reaches `retry_after` by either path."""
    message = "Rate limit reached for gpt-4o on tokens per min. Please try again in 20s."
    error = {"code": "rate_limit_exceeded", "message": message}
    failed = {
        "type": "response.failed",
        "response": {**RESPONSE, "status": "failed", "error": error},
    }
    by_event = run(CREATED, {"type": "error", **error, "param": None})[-1]
    by_failed = run(CREATED, failed)[-1]
    assert isinstance(by_event, Failed) and isinstance(by_failed, Failed)
    assert by_failed.error.retry_after == by_event.error.retry_after == 20.0
    assert (by_failed.error.code, by_failed.error.message) == ("rate_limit_exceeded", message)


def test_a_call_cut_by_the_token_limit_keeps_the_usage_of_the_turn() -> None:
    """The incomplete response's `output` repeats the cut call with its partial
    arguments: the call is still malformed, never invented, and the usage the terminal
    response carries comes before that error, as without the `output`."""
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    response = {
        **RESPONSE,
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{**call, "arguments": '{"city": "Par', "status": "incomplete"}],
        "usage": USAGE,
    }
    events = run(
        CREATED,
        added(0, {**call, "arguments": "", "status": "in_progress"}),
        {
            "type": "response.function_call_arguments.delta",
            "output_index": 0,
            "delta": '{"city": "Par',
        },
        {"type": "response.incomplete", "response": response},
    )
    assert [e.type for e in events] == ["tool_start", "usage", "error"]
    assert isinstance(events[-1], Failed)
    assert events[-1].error.kind == "malformed_tool_arguments"


def test_a_failed_response_whose_error_is_only_words_is_a_stream_error() -> None:
    """A proxy's `response.failed` with `error` as a bare string is the provider's
    error, read as any error body is, not a chunk rxllm could not read (`protocol`)."""
    failed = {
        "type": "response.failed",
        "response": {**RESPONSE, "status": "failed", "error": "boom"},
    }
    events = run(CREATED, failed)
    assert [e.type for e in events] == ["error"]
    assert isinstance(events[-1], Failed)
    assert (events[-1].error.kind, events[-1].error.message) == ("stream_error", "boom")
