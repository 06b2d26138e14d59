"""Streamed pydantic/pydantic-ai cassettes that a systematic pass over its
`tests/models/**/cassettes` replayed and found read right, for shapes no earlier test
holds. Each body is built by hand from the cassette's essential events (ids shortened,
long text cut), replayed whole and cut at arbitrary byte boundaries, and checked
against what the cassette's own test expects. No defect was found in these: they guard
the shapes."""

from __future__ import annotations

from typing import Any

from rxllm.events import ServerToolCall, ServerToolResult
from tests.providers.test_openai_responses_shapes import added, done, on, run
from tests.support import summarize


def test_a_resumed_background_stream_begins_at_its_queued_event() -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_openai_responses/
    test_background_mode_streaming_starting_after_vcr.yaml, second interaction: `GET
    /v1/responses/{id}?starting_after=0&stream=true` resumes a background response, so
    the stream begins at `response.queued` (sequence 1) with no `response.created`. The
    resumed turn is read as any: its text once, its usage, one `done`."""
    response = {
        "id": "resp_0ab2139c1b01673300699cbc560c34819b971325e42d9b5c49",
        "object": "response",
        "background": True,
        "model": "gpt-4o-2024-08-06",
        "output": [],
        "usage": None,
    }
    message = {"id": "msg_0ab2", "type": "message", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "logprobs": [], "annotations": []}
    text = "2 + 2 equals 4."
    finished = {**message, "status": "completed", "content": [{**part, "text": text}]}
    usage = {
        "input_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
        "output_tokens": 9,
        "total_tokens": 24,
    }
    events = run(
        {"type": "response.queued", "sequence_number": 1, "response": response},
        {"type": "response.in_progress", "response": {**response, "status": "in_progress"}},
        added(0, {**message, "status": "in_progress"}),
        on("response.content_part.added", 0, "msg_0ab2", content_index=0, part=part),
        on("response.output_text.delta", 0, "msg_0ab2", content_index=0, delta="2 + 2"),
        on("response.output_text.delta", 0, "msg_0ab2", content_index=0, delta=" equals 4."),
        on("response.output_text.done", 0, "msg_0ab2", content_index=0, text=text),
        done(0, finished),
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [finished], "usage": usage},
        },
    )
    summary = summarize(events)
    assert summary.text == text
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (15, 9)
    assert (summary.terminal, summary.stop_reason, summary.model) == (
        "done",
        "stop",
        "gpt-4o-2024-08-06",
    )


def _listing(number: int, label: str, tools: list[str]) -> dict[str, Any]:
    return {
        "id": f"mcpl_{number}",
        "type": "mcp_list_tools",
        "server_label": label,
        "tools": [{"name": name, "input_schema": {"type": "object"}} for name in tools],
    }


def test_mcp_listings_done_only_in_the_completed_response_are_each_answered_once() -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_openai_responses/
    test_openai_responses_model_mcp_list_tools_stream_backfills_missing_results.yaml
    (gpt-4.1, three MCP servers): three `mcp_list_tools` items are added and reported
    `in_progress` and `completed`, but only the last has an `output_item.done`; the other
    two listings are only in `response.completed`'s output. The cassette's test expects
    each listing's tools; here each call has one `server_tool_result`, the two missing
    ones read from the terminal response."""
    servers = [
        (0, "deepwiki", ["read_wiki_structure", "read_wiki_contents", "ask_question"]),
        (1, "microsoft_learn", ["microsoft_docs_search", "microsoft_docs_fetch"]),
        (2, "gitmcp", ["fetch_pydantic_ai_documentation", "search_pydantic_ai_code"]),
    ]
    listings = [_listing(*server) for server in servers]
    message = {"id": "msg_034c", "type": "message", "role": "assistant", "content": []}
    text = "Here are the available tools from each connected MCP server:"
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    finished = {**message, "status": "completed", "content": [{**part, "text": text}]}
    begun = [added(n, {**listing, "tools": []}) for n, listing in enumerate(listings)]
    progress = [
        on(f"response.mcp_list_tools.{state}", n, f"mcpl_{n}")
        for state, order in (("in_progress", (0, 1, 2)), ("completed", (1, 0, 2)))
        for n in order
    ]
    events = run(
        {"type": "response.created", "response": {"id": "resp_034c", "model": "gpt-4.1"}},
        *begun,
        *progress,
        done(2, listings[2]),
        added(3, {**message, "status": "in_progress"}),
        on("response.content_part.added", 3, "msg_034c", content_index=0, part=part),
        on("response.output_text.delta", 3, "msg_034c", content_index=0, delta=text),
        done(3, finished),
        {
            "type": "response.completed",
            "response": {
                "id": "resp_034c",
                "model": "gpt-4.1-2025-04-14",
                "status": "completed",
                "output": [*listings, finished],
                "usage": {"input_tokens": 1199, "output_tokens": 103, "total_tokens": 1302},
            },
        },
    )
    calls = [(e.call_id, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    # each shown when its item is done, right before its result: the last in the stream,
    # the other two at the terminal
    shown = [servers[2], *servers[:2]]
    assert calls == [(f"mcpl_{n}", {"server_label": label}) for n, label, _ in shown]
    results = {
        e.call_id: [tool["name"] for tool in e.content["tools"]]
        for e in events
        if isinstance(e, ServerToolResult)
    }
    assert results == {f"mcpl_{n}": tools for n, _, tools in servers}
    assert len([e for e in events if isinstance(e, ServerToolResult)]) == 3
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.stop_reason) == (text, "done", "stop")
