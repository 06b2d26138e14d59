"""OpenAI Responses stream shapes no capture holds, made by hand from the streaming
events reference and openai-python's `types/responses/response_stream_event.py` (and the
event types it unions); ids and values are made up. Every body is checked whatever the
chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import (
    Citation,
    Done,
    Event,
    Failed,
    ReasoningDelta,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
)
from tests.support import log_messages, replay_every_way, summarize

P = "openai-responses"


def wire(*payloads: dict[str, Any]) -> bytes:
    """Events as OpenAI frames them, each numbered by `sequence_number` unless it says."""
    out = []
    for number, payload in enumerate(payloads):
        payload = {"sequence_number": number, **payload}
        out.append(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(wire(*payloads), P)


RESPONSE = {"id": "resp_1", "object": "response", "model": "gpt-test", "output": []}
CREATED = {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}
USAGE = {
    "input_tokens": 20,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 9,
    "output_tokens_details": {"reasoning_tokens": 4},
    "total_tokens": 29,
}
COMPLETED = {
    "type": "response.completed",
    "response": {**RESPONSE, "status": "completed", "usage": USAGE},
}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def on(kind: str, index: int, item_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "output_index": index, "item_id": item_id, **fields}


REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def reasoning_texts(events: list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, ReasoningDelta) and e.text]


# -- defects found ------------------------------------------------------------------------


def test_a_summary_part_that_came_whole_is_shown_once() -> None:
    """ResponseReasoningSummaryPartDoneEvent carries the part's whole text. A part with
    no `reasoning_summary_text.delta` (its text only in `.done`) was never shown when an
    earlier part of the item had deltas: only whole items were read at their done."""
    part = {"type": "summary_text", "text": ""}
    events = run(
        CREATED,
        added(0, REASONING),
        on("response.reasoning_summary_part.added", 0, "rs_1", summary_index=0, part=part),
        on("response.reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="First."),
        on("response.reasoning_summary_text.done", 0, "rs_1", summary_index=0, text="First."),
        on(
            "response.reasoning_summary_part.done",
            0,
            "rs_1",
            summary_index=0,
            part={"type": "summary_text", "text": "First."},
        ),
        on("response.reasoning_summary_part.added", 0, "rs_1", summary_index=1, part=part),
        on("response.reasoning_summary_text.done", 0, "rs_1", summary_index=1, text="Second."),
        on(
            "response.reasoning_summary_part.done",
            0,
            "rs_1",
            summary_index=1,
            part={"type": "summary_text", "text": "Second."},
        ),
        done(
            0,
            {
                **REASONING,
                "summary": [
                    {"type": "summary_text", "text": "First."},
                    {"type": "summary_text", "text": "Second."},
                ],
            },
        ),
        COMPLETED,
    )
    assert reasoning_texts(events) == ["First.", "\n\nSecond."]
    assert summarize(events).reasoning == "First.\n\nSecond."


@pytest.mark.parametrize("form", ["summary", "content"])
def test_parts_with_no_events_of_their_own_are_read_from_the_done_item(form: str) -> None:
    """DESIGN: what the provider says is complete is emitted, exactly once. Part 0
    streamed, part 1 had no events at all (a relay dropped them): the done item holds
    both, and part 1 was dropped because the item had shown a part."""
    kind, event, field = (
        ("summary_text", "response.reasoning_summary_text.delta", "summary_index")
        if form == "summary"
        else ("reasoning_text", "response.reasoning_text.delta", "content_index")
    )
    parts = [{"type": kind, "text": "A"}, {"type": kind, "text": "B"}]
    events = run(
        CREATED,
        added(0, REASONING),
        on(event, 0, "rs_1", delta="A", **{field: 0}),
        done(0, {**REASONING, form: parts}),
        COMPLETED,
    )
    assert reasoning_texts(events) == ["A", "\n\nB"]


def test_a_done_item_in_the_other_form_than_what_streamed_adds_nothing() -> None:
    """The item streamed its text; its done item also holds a summary: the item was
    shown, in its text's form."""
    events = run(
        CREATED,
        added(0, REASONING),
        on("response.reasoning_text.delta", 0, "rs_1", content_index=0, delta="Long thought."),
        done(
            0,
            {
                **REASONING,
                "summary": [{"type": "summary_text", "text": "Short."}],
                "content": [{"type": "reasoning_text", "text": "Long thought."}],
            },
        ),
        COMPLETED,
    )
    assert reasoning_texts(events) == ["Long thought."]


def test_summary_and_reasoning_text_parts_of_one_item_stay_apart() -> None:
    """A reasoning item with a summary part 0 and a reasoning-text part 0 (servers that
    stream both): the two were keyed alike, so the raw text ran on from the summary
    ("Short.Long..."), with no separator."""
    events = run(
        CREATED,
        added(0, REASONING),
        on("response.reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="Short."),
        on("response.reasoning_text.delta", 0, "rs_1", content_index=0, delta="Long "),
        on("response.reasoning_text.delta", 0, "rs_1", content_index=0, delta="thought."),
        on("response.reasoning_text.done", 0, "rs_1", content_index=0, text="Long thought."),
        done(0, {**REASONING, "summary": [{"type": "summary_text", "text": "Short."}]}),
        COMPLETED,
    )
    assert summarize(events).reasoning == "Short.\n\nLong thought."


def test_a_sequence_number_gap_or_repeat_is_logged() -> None:
    """`sequence_number` counts a response's events from 0; a gap (events lost on the
    way) or a repeat went unsaid. The events that arrived are read as they are."""
    text = {"type": "response.output_text.delta", "output_index": 0, "content_index": 0}
    payloads = [
        {**CREATED, "sequence_number": 0},
        {**text, "delta": "A", "sequence_number": 1},
        {**text, "delta": "C", "sequence_number": 4},
        {**text, "delta": "D", "sequence_number": 4},
        {**COMPLETED, "sequence_number": 5},
    ]
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads).encode()
    with log_messages() as messages:
        events = replay_every_way(body, P)
    assert summarize(events).text == "ACD"
    assert "sequence_number 4 after 1: 2 event(s) missing" in messages
    assert "sequence_number 4 after 4: an event repeated or out of order" in messages
    assert not any(m.startswith("sequence_number 5") for m in messages)


# -- shapes that held ----------------------------------------------------------------------


def test_a_reasoning_text_part_that_came_whole_is_shown_once() -> None:
    events = run(
        CREATED,
        added(0, REASONING),
        on("response.reasoning_text.done", 0, "rs_1", content_index=0, text="Whole."),
        done(0, {**REASONING, "content": [{"type": "reasoning_text", "text": "Whole."}]}),
        COMPLETED,
    )
    assert reasoning_texts(events) == ["Whole."]


def test_queued_and_in_progress_then_a_refusal_streamed_and_done() -> None:
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    refusal = {"type": "refusal", "refusal": "I can't help with that."}
    events = run(
        CREATED,
        {"type": "response.queued", "response": {**RESPONSE, "status": "queued"}},
        {"type": "response.in_progress", "response": {**RESPONSE, "status": "in_progress"}},
        added(0, message),
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "refusal", "refusal": ""},
        },
        on("response.refusal.delta", 0, "msg_1", content_index=0, delta="I can't "),
        on("response.refusal.delta", 0, "msg_1", content_index=0, delta="help with that."),
        on("response.refusal.done", 0, "msg_1", content_index=0, refusal=refusal["refusal"]),
        done(0, {**message, "status": "completed", "content": [refusal]}),
        COMPLETED,
    )
    got = summarize(events)
    assert (got.refusal, got.text, got.stop_reason) == ("I can't help with that.", "", "stop")


def test_mcp_list_tools_and_a_failed_mcp_call_with_streamed_arguments() -> None:
    listed = {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "dice", "tools": []}
    call = {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "roll",
        "server_label": "dice",
        "arguments": "",
        "status": "in_progress",
    }
    failed = {**call, "arguments": '{"sides": 6}', "status": "failed", "error": "down"}
    events = run(
        CREATED,
        added(0, listed),
        on("response.mcp_list_tools.in_progress", 0, "mcpl_1"),
        on("response.mcp_list_tools.completed", 0, "mcpl_1"),
        done(0, {**listed, "tools": [{"name": "roll", "input_schema": {}}]}),
        added(1, call),
        on("response.mcp_call.in_progress", 1, "mcp_1"),
        on("response.mcp_call_arguments.delta", 1, "mcp_1", delta='{"sides":'),
        on("response.mcp_call_arguments.delta", 1, "mcp_1", delta=" 6}"),
        on("response.mcp_call_arguments.done", 1, "mcp_1", arguments='{"sides": 6}'),
        on("response.mcp_call.failed", 1, "mcp_1"),
        done(1, failed),
        COMPLETED,
    )
    kinds = [e.type for e in events]
    assert kinds == ["server_tool_call", "server_tool_result"] * 2 + ["usage", "done"]
    result = events[3]
    assert isinstance(result, ServerToolResult) and result.content["error"] == "down"
    assert result.content["arguments"] == '{"sides": 6}'  # the done item, as sent
    assert not [e for e in events if isinstance(e, ToolRequest)]


def test_code_interpreter_image_generation_and_a_custom_tool() -> None:
    interpreter = {
        "type": "code_interpreter_call",
        "id": "ci_1",
        "status": "in_progress",
        "code": "",
        "container_id": "cntr_1",
        "outputs": None,
    }
    image = {"type": "image_generation_call", "id": "ig_1", "status": "in_progress"}
    custom = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "sql"}
    events = run(
        CREATED,
        added(0, interpreter),
        on("response.code_interpreter_call.in_progress", 0, "ci_1"),
        on("response.code_interpreter_call_code.delta", 0, "ci_1", delta="print("),
        on("response.code_interpreter_call_code.delta", 0, "ci_1", delta="2)"),
        on("response.code_interpreter_call_code.done", 0, "ci_1", code="print(2)"),
        on("response.code_interpreter_call.interpreting", 0, "ci_1"),
        on("response.code_interpreter_call.completed", 0, "ci_1"),
        done(0, {**interpreter, "status": "completed", "code": "print(2)", "outputs": []}),
        added(1, image),
        on("response.image_generation_call.generating", 1, "ig_1"),
        on(
            "response.image_generation_call.partial_image",
            1,
            "ig_1",
            partial_image_index=0,
            partial_image_b64="aGk=",
        ),
        done(1, {**image, "status": "completed", "result": "aGk="}),
        added(2, {**custom, "input": ""}),
        on("response.custom_tool_call_input.delta", 2, "ctc_1", delta="SELECT"),
        on("response.custom_tool_call_input.delta", 2, "ctc_1", delta=" 1"),
        on("response.custom_tool_call_input.done", 2, "ctc_1", input="SELECT 1"),
        done(2, {**custom, "input": "SELECT 1"}),
        COMPLETED,
    )
    servers = [
        (e.type, e.call_id) for e in events if isinstance(e, ServerToolCall | ServerToolResult)
    ]
    assert servers == [
        ("server_tool_call", "ci_1"),
        ("server_tool_result", "ci_1"),
        ("server_tool_call", "ig_1"),
        ("server_tool_result", "ig_1"),
    ]
    got = summarize(events)
    assert got.tool_calls == [("call_1", "sql", {"input": "SELECT 1"})]
    assert got.stop_reason == "tool_use"


@pytest.mark.parametrize(
    "action",
    [
        {"type": "search", "query": "rxllm", "sources": [{"type": "url", "url": "https://a/"}]},
        {"type": "open_page", "url": "https://a/"},
        {"type": "find", "url": "https://a/", "pattern": "reactive"},
    ],
)
def test_web_and_file_search_calls(action: dict[str, Any]) -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "in_progress"}
    files = {"type": "file_search_call", "id": "fs_1", "status": "in_progress", "queries": []}
    events = run(
        CREATED,
        added(0, search),
        on("response.web_search_call.in_progress", 0, "ws_1"),
        on("response.web_search_call.searching", 0, "ws_1"),
        on("response.web_search_call.completed", 0, "ws_1"),
        done(0, {**search, "status": "completed", "action": action}),
        added(1, files),
        on("response.file_search_call.in_progress", 1, "fs_1"),
        on("response.file_search_call.searching", 1, "fs_1"),
        on("response.file_search_call.completed", 1, "fs_1"),
        done(1, {**files, "status": "completed", "queries": ["q"], "results": None}),
        COMPLETED,
    )
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(r.call_id, r.name) for r in results] == [
        ("ws_1", "web_search_call"),
        ("fs_1", "file_search_call"),
    ]
    assert results[0].content["action"] == action
    assert results[1].content["queries"] == ["q"]


def test_annotation_types_without_an_event_are_logged() -> None:
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    url = {
        "type": "url_citation",
        "url": "https://a/",
        "title": "A",
        "start_index": 0,
        "end_index": 3,
    }
    others = [
        {"type": "file_citation", "file_id": "file_1", "filename": "a.pdf", "index": 3},
        {"type": "container_file_citation", "container_id": "c", "file_id": "f", "filename": "o"},
        {"type": "file_path", "file_id": "file_2", "index": 3},
    ]
    with log_messages() as messages:
        events = run(
            CREATED,
            added(0, message),
            on("response.output_text.delta", 0, "msg_1", content_index=0, delta="See it."),
            *(
                on(
                    "response.output_text.annotation.added",
                    0,
                    "msg_1",
                    content_index=0,
                    annotation_index=n,
                    annotation=a,
                )
                for n, a in enumerate([*others, url])
            ),
            done(
                0,
                {
                    **message,
                    "content": [
                        {"type": "output_text", "text": "See it.", "annotations": [*others, url]}
                    ],
                },
            ),
            COMPLETED,
        )
    cites = [(e.url, e.cited_text) for e in events if isinstance(e, Citation)]
    assert cites == [("https://a/", None)]  # the range is the answer's own text
    for kind in ("file_citation", "container_file_citation", "file_path"):
        assert f"an annotation of type {kind!r} has no event" in messages


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("max_output_tokens", "length"), ("content_filter", "content_filter"), (None, "other")],
)
def test_incomplete_reasons(reason: str | None, stop: str) -> None:
    details = {"reason": reason} if reason else None
    events = run(
        CREATED,
        on("response.output_text.delta", 0, "msg_1", content_index=0, delta="Hi"),
        {
            "type": "response.incomplete",
            "response": {
                **RESPONSE,
                "status": "incomplete",
                "incomplete_details": details,
                "usage": USAGE,
            },
        },
    )
    last = events[-1]
    assert isinstance(last, Done) and (last.stop_reason, last.raw_stop_reason) == (stop, reason)


def test_failed_and_an_unknown_event_type() -> None:
    with log_messages() as messages:
        events = run(
            CREATED,
            {"type": "response.teleport.started", "output_index": 0},
            on("response.output_text.delta", 0, "msg_1", content_index=0, delta="Hi"),
            {
                "type": "response.failed",
                "response": {
                    **RESPONSE,
                    "status": "failed",
                    "error": {"code": "server_error", "message": "The model failed."},
                },
            },
        )
    assert [e.type for e in events] == ["text", "error"]
    error = events[-1]
    assert isinstance(error, Failed) and error.error.code == "server_error"
    assert "ignored a Responses event of unknown type 'response.teleport.started'" in messages
