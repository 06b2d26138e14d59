"""Anthropic Messages streams from public recordings whose shapes no other test replays:
a block started at the index of a block that already ended (the next block's start
sent with the previous `*_tool_result` block's index). Each body is built by hand from
the recording's essential lines and checked whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import ServerToolCall, ServerToolResult
from tests.support import replay_every_way, summarize


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _json(partial: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": partial}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": text}


_MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_01AUET",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "usage": {"input_tokens": 2721, "output_tokens": 3},
    },
}
_END = (
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"input_tokens": 18693, "output_tokens": 599},
    },
    {"type": "message_stop"},
)


def test_a_block_started_at_an_ended_blocks_index_is_the_next_block() -> None:
    """vercel/ai packages/anthropic/src/__fixtures__/anthropic-code-execution-pdf-skill.1
    .chunks.txt (claude-sonnet-4-5 with the pdf skill): after each `*_tool_result` block
    the next block's `content_block_start` repeats the result's index while its deltas and
    stop carry the next one (result 5, then `server_tool_use` bash started at 5, its
    `input_json_delta`s and stop at 6). The Anthropic SDK's accumulator appends each
    started block, so the call at place 6 gets its input; read by the start's index the
    call had none and came out last, after its own result, as `{}`."""
    ran = {
        "type": "bash_code_execution_result",
        "stdout": "PDF created successfully: Boba_Fett.pdf\n",
        "stderr": "",
        "return_code": 0,
        "content": [{"type": "bash_code_execution_output", "file_id": "file_011CX5"}],
    }
    editor = {
        "type": "server_tool_use",
        "id": "srvtoolu_011rU",
        "name": "text_editor_code_execution",
    }
    bash = {"type": "server_tool_use", "id": "srvtoolu_011kq", "name": "bash_code_execution"}
    body = _sse(
        _MESSAGE_START,
        _start(4, {**editor, "input": {}}),
        _delta(4, _json('{"command": "create", "path": "/tmp/create_pdf.py"}')),
        _stop(4),
        _start(
            5,
            {
                "type": "text_editor_code_execution_tool_result",
                "tool_use_id": "srvtoolu_011rU",
                "content": {"type": "text_editor_code_execution_create_result"},
            },
        ),
        _stop(5),
        _start(5, {**bash, "input": {}}),
        _delta(6, _json("")),
        _delta(6, _json('{"command": "cd /tmp &&')),
        _delta(6, _json(' python create_pdf.py"}')),
        _stop(6),
        _start(
            7,
            {
                "type": "bash_code_execution_tool_result",
                "tool_use_id": "srvtoolu_011kq",
                "content": ran,
            },
        ),
        _stop(7),
        _start(7, {"type": "text", "text": ""}),
        _delta(8, _text("Perfect! It is ready for download.")),
        _stop(8),
        *_END,
    )
    events = replay_every_way(body, "anthropic")
    shown = [e for e in events if isinstance(e, ServerToolCall | ServerToolResult)]
    assert [(e.type, e.call_id) for e in shown] == [
        ("server_tool_call", "srvtoolu_011rU"),
        ("server_tool_result", "srvtoolu_011rU"),
        ("server_tool_call", "srvtoolu_011kq"),
        ("server_tool_result", "srvtoolu_011kq"),
    ]
    call = shown[2]
    assert isinstance(call, ServerToolCall)
    command = {"command": "cd /tmp && python create_pdf.py"}
    assert (call.name, call.arguments) == ("bash_code_execution", command)
    assert call.raw == {**bash, "input": command}  # goes back with its input
    result = shown[3]
    assert isinstance(result, ServerToolResult)
    assert (result.name, result.content) == ("bash_code_execution", ran)
    summary = summarize(events)
    assert (summary.text, summary.stop_reason) == ("Perfect! It is ready for download.", "stop")


def test_a_block_that_reuses_an_ended_index_throughout_keeps_its_input() -> None:
    """The same restart read the other way: a server that starts a call at an ended
    block's index and sends its deltas and stop there too (made by hand). The call still
    gets the input its own deltas carry, and the turn's calls keep their order."""
    body = _sse(
        _MESSAGE_START,
        _start(0, {"type": "text", "text": ""}),
        _delta(0, _text("Looking it up.")),
        _stop(0),
        _start(0, {"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {}}),
        _delta(0, _json('{"id": ')),
        _delta(0, _json('"customer_123"}')),
        _stop(0),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    )
    summary = summarize(replay_every_way(body, "anthropic"))
    assert summary.text == "Looking it up."
    assert summary.tool_calls == [("toolu_01", "lookup", {"id": "customer_123"})]
    assert summary.stop_reason == "tool_use"
