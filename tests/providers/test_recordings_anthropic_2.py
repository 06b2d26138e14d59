"""Anthropic Messages streams from public recordings the captures lack (vercel/ai's
`packages/anthropic/src/__fixtures__/*.chunks.txt`, one event's JSON a line, which its
tests send as `data:` lines without `event:` names). Each body is built by hand from
the recording's essential lines and checked whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Failed, ToolStart
from tests.support import log_messages, replay_every_way, summarize


def _data_only(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads)


def _message_start(message_id: str, input_tokens: int) -> dict[str, Any]:
    usage = {"input_tokens": input_tokens, "output_tokens": 1}
    message = {"id": message_id, "model": "claude-sonnet-4-20250514", "usage": usage}
    return {"type": "message_start", "message": message}


def _block(index: int, block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _end(reason: str, output_tokens: int) -> list[dict[str, Any]]:
    delta = {"stop_reason": reason, "stop_sequence": None}
    usage = {"output_tokens": output_tokens}
    return [{"type": "message_delta", "delta": delta, "usage": usage}, {"type": "message_stop"}]


def test_a_repeated_message_start_is_ignored() -> None:
    """vercel/ai issue-18331-duplicate-message-start.chunks.txt: a relay sends the open
    message's `message_start` twice, the second with `input_tokens: 99`. vercel/ai's test
    ("ignores a duplicate message_start for the same open message") expects one
    response and usage input 10, output 2. Before: the repeat's 99 replaced the 10."""
    events = replay_every_way(
        _data_only(
            _message_start("msg_duplicate", 10),
            _message_start("msg_duplicate", 99),
            *_block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"}),
            *_end("end_turn", 2),
        ),
        "anthropic",
    )
    summary = summarize(events)
    assert summary.text == "ok"
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (10, 2)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


def test_another_message_starting_inside_the_open_one_is_an_error() -> None:
    """vercel/ai issue-18331-spliced-message-start.chunks.txt: `msg_second` starts
    while `msg_first` is still open (its `lookup` call cut at `{"value":"Spark`), then
    runs to its end at the same block indices. vercel/ai's test ("fails a different
    message_start while the previous message is open") expects an invalid-response
    error, no finish and no tool call. Before: the second message's blocks were read as
    the first's, with its thinking joined to the first's."""
    thinking = {"type": "thinking", "thinking": ""}
    call = {"type": "tool_use", "name": "lookup", "input": {}}
    body = _data_only(
        _message_start("msg_first", 10),
        *_block(
            0,
            thinking,
            {"type": "thinking_delta", "thinking": "first reasoning"},
            {"type": "signature_delta", "signature": "sig_first"},
        ),
        {"type": "content_block_start", "index": 1, "content_block": {**call, "id": "toolu_first"}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"value":"Spark'},
        },
        _message_start("msg_second", 99),
        *_block(
            0,
            thinking,
            {"type": "thinking_delta", "thinking": "second reasoning"},
            {"type": "signature_delta", "signature": "sig_second"},
        ),
        *_block(
            1,
            {**call, "id": "toolu_second"},
            {"type": "input_json_delta", "partial_json": '{"value":"Spark"}'},
        ),
        *_end("tool_use", 20),
    )
    events = replay_every_way(body, "anthropic")
    summary = summarize(events)
    assert (summary.terminal, summary.error_kind) == ("error", "protocol")
    error = events[-1]
    assert isinstance(error, Failed) and "msg_second" in error.error.message
    assert summary.tool_calls == []
    assert summary.reasoning == "first reasoning"
    assert [e.call_id for e in events if isinstance(e, ToolStart)] == ["toolu_first"]


def test_a_message_start_without_an_id_repeated_is_one_message() -> None:
    """Compatible servers may leave out the message id: a repeated start without one
    cannot name another message, so it is read as the same one (logged)."""
    start = {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 5}}}
    with log_messages() as logs:
        events = replay_every_way(
            _data_only(
                start,
                start,
                *_block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "hi"}),
                *_end("end_turn", 1),
            ),
            "anthropic",
        )
    assert (summarize(events).text, summarize(events).terminal) == ("hi", "done")
    assert any("repeated message_start" in m for m in logs)
