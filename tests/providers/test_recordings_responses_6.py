"""OpenAI Responses streams that a sixth sweep replayed and found read right, for shapes
no earlier test holds: dotnet/extensions' hand-made streams of events without an item,
and event types of OpenAI's streaming reference that carry nothing the contract has an
event for. Bodies are built by hand from the sources' essential events, each naming its
source; ids and values are the sources' own."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Failed, ServerToolResult
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_3 import run
from tests.support import ServeBody, log_messages, summarize

# dotnet/extensions test/Libraries/Microsoft.Extensions.AI.OpenAI.Tests/
# OpenAIResponseClientTests.cs: its streams frame each event with `event:`, most without
# a sequence number.
RESPONSE = {"id": "resp_001", "object": "response", "model": "gpt-4o-mini"}
CREATED = {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}


def framed(*payloads: dict[str, Any]) -> bytes:
    """Events as those streams frame them: `event:` and `data:`, numbered only where said."""
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


def ended(status: str, **fields: Any) -> dict[str, Any]:
    kind = "response.completed" if status == "completed" else "response.failed"
    return {"type": kind, "response": {**RESPONSE, "status": status, "output": [], **fields}}


# StreamingResponseWithRefusalUpdate_HandlesCorrectly: a `response.refusal.done` with no
# item id, no output index and no item added before it, then a response whose output is
# empty. The test expects the refusal, whole; it is the turn's refusal, never its text.
async def test_a_refusal_done_without_an_item_is_the_refusal(serve_body: ServeBody) -> None:
    refusal = "I cannot provide that information"
    events = await run(
        serve_body,
        CREATED,
        {"type": "response.refusal.done", "refusal": refusal},
        ended("completed"),
        frame=framed,
    )
    summary = summarize(events)
    assert (summary.refusal, summary.text) == (refusal, "")
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


# StreamingErrorUpdate_NoErrorInformation_HandlesGracefully: an `error` event with no
# field but its type, then `response.failed` without an error. The error event ends the
# turn, read as any error body is; the failed response after it is late and changes
# nothing.
async def test_an_error_event_without_fields_ends_the_turn_once(serve_body: ServeBody) -> None:
    events = await run(
        serve_body,
        CREATED,
        {"type": "error", "sequence_number": 1},
        {**ended("failed"), "sequence_number": 2},
        frame=framed,
    )
    assert [e.type for e in events] == ["error"]
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.code, error.error.param) == ("stream_error", None, None)
    assert error.error.message


# OpenAI's streaming reference (openai-python `types/responses/response_audio_*_event.py`,
# `response_mcp_list_tools_failed_event.py`): audio bytes and their transcript come as
# events of no output item, and listing an MCP server's tools can fail, its done item
# saying why. The transcript is what the model says: the turn's text, as the chat wire
# reads `delta.audio.transcript` (`test_responses_stream_events.py`). The audio bytes,
# the listing's progress and a `keepalive` data event (which openai-node's accumulator
# accepts, and the reference does not name) say nothing the contract has an event for,
# and each is logged; the failed listing is the result of the provider-run listing,
# with its error.
async def test_audio_keepalive_and_a_failed_mcp_listing_are_logged(
    serve_body: ServeBody,
) -> None:
    listing = {"id": "mcpl_1", "type": "mcp_list_tools", "server_label": "dmcp", "tools": []}
    error = "Error retrieving tool list from MCP server: 'dmcp'. Http status code: 424"
    known = ["response.audio.delta", "response.audio.done", "response.mcp_list_tools.failed"]
    with log_messages() as messages:
        events = await run(
            serve_body,
            CREATED,
            {"type": "response.audio.delta", "delta": "UklGRg=="},
            {"type": "response.audio.transcript.delta", "delta": "Hello"},
            {"type": "response.audio.done"},
            {"type": "response.audio.transcript.done"},
            {"type": "keepalive"},
            added(0, listing),
            on("response.mcp_list_tools.failed", 0, "mcpl_1"),
            done(0, {**listing, "error": error}),
            ended("completed", output=[{**listing, "error": error}]),
            frame=framed,
        )
    assert [e.type for e in events] == ["text", "server_tool_call", "server_tool_result", "done"]
    result = events[2]
    assert isinstance(result, ServerToolResult) and result.content["error"] == error
    assert summarize(events).text == "Hello"
    for kind in known:
        assert f"{kind!r} has no event" in messages
    assert "ignored a Responses event of unknown type 'keepalive'" in messages
