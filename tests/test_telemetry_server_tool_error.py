"""A provider-run tool that failed (`ServerToolResult.is_error`) in the GenAI spans'
messages. The conventions' ServerToolCallResponsePart gives such a failure no field
of its own (its `server_tool_call_response` takes any provider property beside
`type`; `error.type` is the operation's, or an execute_tool span's for a tool the
caller runs), so the part says it as the event does: `is_error: true` beside the
result's type and content, in the output and in the history sent back."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.pipeline.provider import record_of
from tests.test_telemetry_semconv import Sdk, check_parts, request

SEARCH_ERROR = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
RESULTS = [{"type": "web_search_result", "url": "https://a.example/", "title": "A"}]


def body(content: Any) -> bytes:
    """An Anthropic turn built from the Messages streaming page: a web search, its
    result block (`content` an error object or the results), then text."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test"}
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    payloads: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "content": [], "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": call},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "q"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


@pytest.mark.parametrize(("content", "failed"), [(SEARCH_ERROR, True), (RESULTS, False)])
async def test_a_failed_server_tool_says_so_out_and_back(content: Any, failed: bool) -> None:
    first = Sdk()
    operator = first.operator(request=request(), provider="anthropic", capture_content=True)
    replayed = rxllm.replay(body(content), provider="anthropic").pipe(operator)
    record = await record_of(replayed, "anthropic")
    [output] = json.loads(first.attributes()["gen_ai.output.messages"])
    check_parts([output])
    [response] = [p for p in output["parts"] if p["type"] == "server_tool_call_response"]
    expected: dict[str, Any] = {"type": "web_search", "content": content}
    if failed:
        expected["is_error"] = True
    assert response == {
        "type": "server_tool_call_response",
        "id": "srvtoolu_1",
        "server_tool_call_response": expected,
    }

    second = Sdk()
    history = request(rxllm.Message.user("Search"), record.to_message())
    replayed = rxllm.replay(body(RESULTS), provider="anthropic")
    await record_of(replayed.pipe(second.operator(request=history, capture_content=True)), "x")
    [_, sent_back] = json.loads(second.attributes()["gen_ai.input.messages"])
    check_parts([sent_back])
    assert sent_back["parts"] == output["parts"]
