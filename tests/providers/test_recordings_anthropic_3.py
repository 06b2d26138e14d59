"""Anthropic Messages streams from public recordings whose shapes no other test replays:
a server call made by code, complete in its `content_block_start`; a turn served by a
fallback model, with its usage iterations; a cache diagnosis beside the usage. Each
body is built by hand from the recording's essential lines and checked whatever the
chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Done, ServerToolCall, ServerToolResult
from tests.support import log_messages, replay_every_way, summarize


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _block(index: int, block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _start(message_id: str, model: str, **usage: int) -> dict[str, Any]:
    message = {"id": message_id, "model": model, "content": [], "usage": usage}
    return {"type": "message_start", "message": message}


_STOP = {"type": "message_stop"}


def test_a_server_call_made_by_code_is_complete_at_its_start() -> None:
    """vercel/ai packages/anthropic/src/__fixtures__/anthropic-web-fetch-tool-20260209.1
    .chunks.txt: the code of a `code_execution` call (its input streamed) calls
    `web_fetch`, whose `server_tool_use` arrives whole in `content_block_start` (input
    `{"url": ...}`, `caller` naming the code execution) with no delta; its result, with
    the same `caller`, comes before the code's result."""
    caller = {"type": "code_execution_20260120", "tool_id": "srvtoolu_01LK"}
    fetched = {
        "type": "web_fetch_result",
        "url": "https://example.com",
        "content": {"type": "document", "source": {"type": "text", "data": "Example"}},
    }
    ran = {"type": "code_execution_result", "stdout": "Example\n", "return_code": 0}
    code = {"type": "server_tool_use", "id": "srvtoolu_01LK", "name": "code_execution"}
    fetch = {
        "type": "server_tool_use",
        "id": "srvtoolu_01Sy",
        "name": "web_fetch",
        "input": {"url": "https://example.com"},
        "caller": caller,
    }
    body = _sse(
        _start("msg_01VY", "claude-sonnet-4-6", input_tokens=3456, output_tokens=21),
        *_block(
            0,
            {**code, "input": {}, "caller": {"type": "direct"}},
            {"type": "input_json_delta", "partial_json": ""},
            {"type": "input_json_delta", "partial_json": '{"code": "print(await web'},
            {"type": "input_json_delta", "partial_json": '_fetch())"}'},
        ),
        *_block(1, fetch),
        *_block(
            2,
            {
                "type": "web_fetch_tool_result",
                "tool_use_id": "srvtoolu_01Sy",
                "content": fetched,
                "caller": caller,
            },
        ),
        *_block(
            3,
            {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_01LK", "content": ran},
        ),
        *_block(
            4, {"type": "text", "text": ""}, {"type": "text_delta", "text": "It is a placeholder."}
        ),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "container": {"id": "container_011C"}},
            "usage": {"input_tokens": 7172, "output_tokens": 144},
        },
        _STOP,
    )
    events = replay_every_way(body, "anthropic")
    calls = [e for e in events if isinstance(e, ServerToolCall)]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("srvtoolu_01LK", "code_execution", {"code": "print(await web_fetch())"}),
        ("srvtoolu_01Sy", "web_fetch", {"url": "https://example.com"}),
    ]
    assert calls[1].raw == fetch  # goes back as it came, its caller included
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(r.call_id, r.name, r.content) for r in results] == [
        ("srvtoolu_01Sy", "web_fetch", fetched),
        ("srvtoolu_01LK", "code_execution", ran),
    ]
    summary = summarize(events)
    assert (summary.text, summary.stop_reason) == ("It is a placeholder.", "stop")
    assert isinstance(events[-1], Done) and events[-1].container == "container_011C"


def test_a_turn_served_by_a_fallback_model_counts_the_usage_it_reports() -> None:
    """vercel/ai packages/anthropic/src/__fixtures__/anthropic-fallback.chunks.txt:
    `claude-fable-5` gives way to `claude-opus-4-8` (a `fallback` block); the usage's
    `iterations` are the declined attempt (`message`, 408 in, 0 out) and the served one
    (`fallback_message`, 412 in, 264 out), and the top-level counts are the served
    one's. vercel/ai's `convertAnthropicMessagesUsage` uses the top level as is when a
    `fallback_message` is present: 412 in, 264 out, not the declined attempt's 408/0
    and not their sum."""
    fallback = {
        "type": "fallback",
        "from": {"model": "claude-fable-5"},
        "to": {"model": "claude-opus-4-8"},
    }
    iterations = [
        {"type": "message", "model": "claude-fable-5", "input_tokens": 408, "output_tokens": 0},
        {
            "type": "fallback_message",
            "model": "claude-opus-4-8",
            "input_tokens": 412,
            "output_tokens": 264,
        },
    ]
    body = _sse(
        _start("msg_01Fallback", "claude-fable-5", input_tokens=408, output_tokens=1),
        *_block(0, fallback),
        *_block(
            1,
            {"type": "text", "text": ""},
            {"type": "text_delta", "text": "The printing press was invented "},
            {"type": "text_delta", "text": "by Johannes Gutenberg around 1440."},
        ),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"input_tokens": 412, "output_tokens": 264, "iterations": iterations},
        },
        _STOP,
    )
    summary = summarize(replay_every_way(body, "anthropic"))
    assert summary.text == "The printing press was invented by Johannes Gutenberg around 1440."
    assert summary.model == "claude-opus-4-8"
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (412, 264)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


def test_a_cache_diagnosis_is_logged_beside_the_usage() -> None:
    """pydantic/pydantic-ai tests/models/anthropic/cassettes/test_cache_diagnostics/
    test_cache_diagnostics_streamed.yaml: a request naming `diagnostics.previous_message_id`
    is answered with a `message_start` whose `diagnostics` says why the cache missed
    (`tools_changed`, 3701 tokens). No event carries it: it is logged, with its value,
    and the usage is the message's own (3 in, 4972 read from the cache, 5 out)."""
    start = _start(
        "msg_011CfYaF",
        "claude-sonnet-4-5-20250929",
        input_tokens=3,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=4972,
        output_tokens=5,
    )
    diagnosis = {"cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 3701}}
    start["message"].update(container=None, stop_details=None, diagnostics=diagnosis)
    body = _sse(
        start,
        *_block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "DONE"}),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_details": None, "container": None},
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 4972, "output_tokens": 5},
        },
        _STOP,
    )
    with log_messages() as logs:
        summary = summarize(replay_every_way(body, "anthropic"))
    assert summary.text == "DONE"
    assert summary.usage is not None
    usage = summary.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (3, 4972, 5)
    assert any("diagnostics" in m and "tools_changed" in m for m in logs)
