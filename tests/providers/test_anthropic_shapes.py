"""Anthropic Messages stream shapes no capture holds, made by hand from the streaming
reference and anthropic-sdk-python's types (`types/raw_message_stream_event.py`,
`types/beta/beta_raw_content_block_start_event.py`, `beta_raw_message_delta_event.py`,
`beta_citations_delta.py`, `beta_mcp_tool_result_block.py`, `beta_fallback_block.py`);
ids and values are made up. Every body is checked whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import (
    Citation,
    Done,
    Event,
    Failed,
    ServerToolCall,
    ServerToolResult,
    UsageUpdate,
)
from tests.support import log_messages, replay_every_way, summarize

PROVIDER = "anthropic"


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(sse(*payloads), PROVIDER)


START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}
STOP = {"type": "message_stop"}


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": value}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str | None, **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": 5, **usage},
    }


def text(index: int, value: str) -> list[dict[str, Any]]:
    return [
        start(index, {"type": "text", "text": ""}),
        delta(index, {"type": "text_delta", "text": value}),
        stop(index),
    ]


# -- defects found ------------------------------------------------------------------------


def test_a_failed_mcp_result_says_so_in_its_content() -> None:
    """BetaMCPToolResultBlock: `content` and, beside it, `is_error`. A failed MCP call's
    result read as its bare content looked exactly like the tool's output."""
    failure = [{"type": "text", "text": "connection refused"}]
    events = run(
        START,
        start(
            0,
            {
                "type": "mcp_tool_use",
                "id": "mcptoolu_1",
                "name": "roll",
                "server_name": "dice",
                "input": {"sides": 6},
            },
        ),
        stop(0),
        start(
            1,
            {
                "type": "mcp_tool_result",
                "tool_use_id": "mcptoolu_1",
                "is_error": True,
                "content": failure,
            },
        ),
        stop(1),
        start(
            2,
            {
                "type": "mcp_tool_result",
                "tool_use_id": "mcptoolu_1",
                "is_error": False,
                "content": "4",
            },
        ),
        stop(2),
        end("end_turn"),
        STOP,
    )
    results = [(e.call_id, e.name, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [
        ("mcptoolu_1", "roll", {"is_error": True, "content": failure}),
        ("mcptoolu_1", "roll", "4"),  # a success is its content, as for every other tool
    ]


def test_fields_no_event_carries_are_logged_with_their_values() -> None:
    """BetaRawMessageDeltaEvent: `context_management` beside `delta`, `delta.stop_sequence`
    (the sequence that matched), usage `cache_creation` (5m/1h split) and
    `server_tool_use`. They were dropped unsaid. (A message_start's `container` was one;
    its id is now the `Done`'s.)"""
    first = json.loads(json.dumps(START))
    first["message"]["container"] = {"id": "container_1", "expires_at": "2026-01-01T00:00:00Z"}
    first["message"]["usage"]["cache_creation"] = {
        "ephemeral_5m_input_tokens": 3,
        "ephemeral_1h_input_tokens": 4,
    }
    final = end(
        "stop_sequence",
        input_tokens=12,
        cache_creation_input_tokens=7,
        server_tool_use={"web_search_requests": 2},
    )
    final["delta"]["stop_sequence"] = "END"
    final["context_management"] = {
        "applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2}]
    }
    with log_messages() as messages:
        events = run(first, *text(0, "Done"), final, STOP)
    got = summarize(events)
    assert (got.text, got.stop_reason, got.raw_stop_reason) == ("Done", "stop", "stop_sequence")
    assert got.usage is not None
    assert (got.usage.input_tokens, got.usage.cache_write_tokens) == (12, 7)
    assert isinstance(events[-1], Done) and events[-1].container == "container_1"
    for where, key, value in (
        ("usage", "cache_creation", "ephemeral_1h_input_tokens"),
        ("message_delta", "stop_sequence", "'END'"),
        ("message_delta", "context_management", "clear_tool_uses_20250919"),
        ("usage", "server_tool_use", "web_search_requests"),
    ):
        prefix = f"no event carries the {where} field {key}: "
        assert any(m.startswith(prefix) and value in m for m in messages), (where, key)
    # what is read is not logged as unread
    assert not any("field stop_reason" in m or "field input_tokens" in m for m in messages)


def test_a_fallback_block_names_the_model_that_served_the_turn() -> None:
    """BetaFallbackBlock: content after it comes from the model in `to`; `done.model`
    said the model that declined."""
    hop = {"type": "fallback", "from": {"model": "claude-test"}, "to": {"model": "claude-next"}}
    events = run(START, start(0, hop), stop(0), *text(1, "Hi"), end("end_turn"), STOP)
    # the block itself, kept for the turn sent back: an empty reasoning delta with it
    assert [e.type for e in events] == ["reasoning", "text", "usage", "done"]
    assert events[0].text == "" and events[0].details == hop  # type: ignore[union-attr]
    done = events[-1]
    assert isinstance(done, Done) and done.model == "claude-next"


# -- shapes that held ----------------------------------------------------------------------


def test_every_citation_type_in_wire_order() -> None:
    """BetaCitationsDelta's five citation types: those with a url (web search result) or
    a url-like source (search result) are citations in order; document locations name
    no source to link and are logged."""
    kinds = [
        {"type": "char_location", "cited_text": "a", "document_index": 0, "document_title": "D"},
        {"type": "page_location", "cited_text": "b", "document_index": 1, "start_page_number": 1},
        {"type": "content_block_location", "cited_text": "c", "document_index": 2},
        {
            "type": "web_search_result_location",
            "cited_text": "d",
            "url": "https://a.example/",
            "title": None,
            "encrypted_index": "Eo",
        },
        {
            "type": "search_result_location",
            "cited_text": "e",
            "source": "https://b.example/",
            "title": "B",
            "search_result_index": 0,
        },
    ]
    with log_messages() as messages:
        events = run(
            START,
            start(0, {"type": "text", "text": "", "citations": None}),
            *(delta(0, {"type": "citations_delta", "citation": c}) for c in kinds),
            delta(0, {"type": "text_delta", "text": "cited"}),
            stop(0),
            end("end_turn"),
            STOP,
        )
    cites = [(e.url, e.title, e.cited_text) for e in events if isinstance(e, Citation)]
    assert cites == [("https://a.example/", None, "d"), ("https://b.example/", "B", "e")]
    skipped = {m.split()[2] for m in messages if m.endswith(("without a url: D", "url: "))}
    assert skipped == {"char_location", "page_location", "content_block_location"}


@pytest.mark.parametrize(
    ("block_type", "content"),
    [
        ("web_search_tool_result", {"type": "web_search_tool_result_error", "error_code": "x"}),
        ("web_fetch_tool_result", {"type": "web_fetch_tool_result_error", "error_code": "x"}),
        ("code_execution_tool_result", {"type": "code_execution_tool_result_error"}),
        ("bash_code_execution_tool_result", {"type": "bash_code_execution_tool_result_error"}),
        (
            "text_editor_code_execution_tool_result",
            {"type": "text_editor_code_execution_tool_result_error", "error_code": "x"},
        ),
        ("tool_search_tool_result", {"type": "tool_search_tool_result_error"}),
    ],
)
def test_server_tool_error_results_are_results_as_sent(
    block_type: str, content: dict[str, Any]
) -> None:
    """A server tool's failure is inside its result's content: one call (its input
    streamed as input_json_delta), one result, then `pause_turn` is `pause`."""
    name = block_type.removesuffix("_tool_result")
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": name, "input": {}}
    events = run(
        START,
        start(0, call),
        delta(0, {"type": "input_json_delta", "partial_json": '{"q": '}),
        delta(0, {"type": "input_json_delta", "partial_json": '"x"}'}),
        stop(0),
        start(1, {"type": block_type, "tool_use_id": "srvtoolu_1", "content": content}),
        stop(1),
        end("pause_turn"),
        STOP,
    )
    assert [e.type for e in events] == ["server_tool_call", "server_tool_result", "usage", "done"]
    tool_call, result, _, done = events
    assert isinstance(tool_call, ServerToolCall) and tool_call.arguments == {"q": "x"}
    assert isinstance(result, ServerToolResult) and (result.name, result.content) == (name, content)
    assert isinstance(done, Done) and done.stop_reason == "pause"


@pytest.mark.parametrize(
    ("raw", "stop_reason"),
    [
        ("model_context_window_exceeded", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause"),
        ("tool_use", "tool_use"),
        ("stop_sequence", "stop"),
    ],
)
def test_stop_reasons_with_pings_anywhere(raw: str, stop_reason: str) -> None:
    ping = {"type": "ping"}
    events = run(ping, START, ping, *text(0, "x"), ping, end(raw), ping, STOP)
    done = events[-1]
    assert isinstance(done, Done) and (done.stop_reason, done.raw_stop_reason) == (stop_reason, raw)
    assert summarize(events).text == "x"


def test_odd_and_future_blocks_are_logged_and_the_rest_is_read() -> None:
    """`container_upload`, and a block and a delta type newer than this module: logged,
    never a crash, never text."""
    with log_messages() as messages:
        events = run(
            START,
            start(0, {"type": "container_upload", "file_id": "file_1"}),
            stop(0),
            start(2, {"type": "hologram", "input": {}}),
            delta(2, {"type": "hologram_delta", "beam": 1}),
            stop(2),
            *text(3, "ok"),
            end("end_turn"),
            STOP,
        )
    assert [e.type for e in events] == ["text", "usage", "done"]
    for kind in ("container_upload", "hologram"):
        assert f"skipped an unknown Anthropic block: {kind}" in messages
    assert "ignored an unknown Anthropic delta: hologram_delta" in messages


def test_usage_in_message_delta_updates_input_and_cache_fields() -> None:
    """BetaMessageDeltaUsage: every count is cumulative and may be resent or updated
    (server tools read more input); a null count keeps the earlier one."""
    first = json.loads(json.dumps(START))
    first["message"]["usage"] = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 7,
        "cache_read_input_tokens": 100,
        "output_tokens": 1,
    }
    events = run(
        first,
        *text(0, "a"),
        end(None, input_tokens=10, cache_read_input_tokens=None),
        end("end_turn", input_tokens=30, cache_creation_input_tokens=9, output_tokens=40),
        STOP,
    )
    usages = [e.usage for e in events if isinstance(e, UsageUpdate)]
    last = usages[-1]
    assert (last.input_tokens, last.output_tokens) == (30, 40)
    assert (last.cache_read_tokens, last.cache_write_tokens) == (100, 9)
    assert last.total_tokens == 30 + 40 + 100 + 9


@pytest.mark.parametrize(
    "payload",
    [
        {"error": "Input validation error: `top_p` must be > 0.0 and < 1.0"},  # TGI's
        {"error": {"message": "Input validation error: `top_p` must be > 0.0 and < 1.0"}},
    ],
)
def test_an_error_without_a_type_ends_the_turn_with_its_words(
    payload: dict[str, Any],
) -> None:
    """A proxy's error written where an event would be, without Anthropic's `type`: read
    as the other wires read it, never ignored into a truncated turn."""
    framed = f"data: {json.dumps(payload)}\n\n".encode()  # no `event:` line either
    events = replay_every_way(sse(START) + framed, PROVIDER)
    terminal = events[-1]
    assert isinstance(terminal, Failed) and terminal.error.kind == "stream_error"
    assert "`top_p` must be > 0.0" in terminal.error.message
