"""OpenAI Responses-shaped streams from public recordings that a third sweep found
misread. Bodies are built by hand from the sources' essential events, each naming its
source; ids and values are the sources' own, long ones shortened."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, ServerToolCall, ServerToolResult, ToolStart
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_3 import run
from tests.providers.test_recordings_responses_2 import data_only
from tests.support import ServeBody, summarize

# -- Perplexity's Agent API ---------------------------------------------------------------

PPLX_CALL = "call_20a572ff-9a87-4df3-9fb1-ea54e5688352"
PPLX_MESSAGE = "msg_046998a4-8eaa-4fff-b7a7-6833abc6555a"
PPLX_QUERY = "Find the official TypeScript website and describe TypeScript in one sentence."
PPLX_RESULTS = [
    {
        "id": 1,
        "snippet": "**TypeScript** (**TS**) is a high-level programming language ...",
        "source": "web",
        "title": "TypeScript - Wikipedia",
        "url": "https://en.wikipedia.org/wiki/TypeScript",
    },
    {
        "id": 7,
        "snippet": "TypeScript: JavaScript With Syntax For Types. ...",
        "source": "web",
        "title": "TypeScript: JavaScript With Syntax For Types.",
        "url": "https://www.typescriptlang.org/",
    },
]
PPLX_SEARCHED = {"queries": [PPLX_QUERY], "results": PPLX_RESULTS, "type": "search_results"}
PPLX_TEXT = "The official TypeScript website is **typescriptlang.org**.[7]"
PPLX_DONE = {
    "content": [{"annotations": [], "text": PPLX_TEXT, "type": "output_text"}],
    "id": PPLX_MESSAGE,
    "role": "assistant",
    "status": "completed",
    "type": "message",
}
PPLX_USAGE = {
    "cost": {
        "cache_read_cost": 0.00003,
        "currency": "USD",
        "input_cost": 0,
        "output_cost": 0.00002,
        "tool_calls_cost": 0.001,
        "tool_calls_cost_details": {"search_web": 0.001},
        "total_cost": 0.00105,
    },
    "input_tokens": 3007,
    "input_tokens_details": {
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 3004,
        "cached_tokens": 3004,
    },
    "output_tokens": 37,
    "output_tokens_details": {"reasoning_tokens": 0},
    "tool_calls_details": {"search_web": {"cost_usd": 0.001, "invocation": 1}},
    "total_tokens": 3044,
}


def perplexity_search(usage: dict[str, Any]) -> list[dict[str, Any]]:
    """vercel/ai packages/perplexity/src/__fixtures__/agent-web-search.chunks.txt, its
    essential events (Perplexity's Agent API, `POST /v1/agent`, a `web_search` tool)."""
    response = {"id": "resp_5619693e-4309-4fec-b395-5e21e59aba39", "object": "response"}
    arguments = json.dumps({"queries": [PPLX_QUERY]})
    return [
        {"type": "response.created", "response": {**response, "model": "fast", "output": []}},
        added(
            0,
            {
                "arguments": arguments,
                "call_id": PPLX_CALL,
                "id": "fc_b46aa003-fad7-423b-a58a-8a566ea40e82",
                "name": "search_web",
                "status": "completed",
                "type": "function_call",
            },
        ),
        {
            "call_id": PPLX_CALL,
            "queries": [PPLX_QUERY],
            "thought": "Searching the web...",
            "type": "response.reasoning.search_queries",
        },
        {
            "call_id": PPLX_CALL,
            "results": PPLX_RESULTS,
            "thought": "Found 10 results",
            "type": "response.reasoning.search_results",
        },
        done(0, PPLX_SEARCHED),
        added(1, {**PPLX_DONE, "content": None}),
        on("response.output_text.delta", 1, PPLX_MESSAGE, content_index=0, delta=PPLX_TEXT[:36]),
        on("response.output_text.delta", 1, PPLX_MESSAGE, content_index=0, delta=PPLX_TEXT[36:]),
        on("response.output_text.done", 1, PPLX_MESSAGE, content_index=0, text=PPLX_TEXT),
        done(1, PPLX_DONE),
        {
            "type": "response.completed",
            "response": {
                **response,
                "model": "openai/gpt-6-luna",
                "status": "completed",
                "output": [PPLX_SEARCHED, PPLX_DONE],
                "usage": usage,
            },
        },
    ]


# Perplexity's Agent API streams the search it runs itself as a `function_call` item
# added whole (`status: completed`, its arguments in it, no argument events), which the
# item of its results (`search_results`, no id) then replaces at the same output index;
# the call never has a done item of its own, nor a place in the completed response's
# output. The call was started as the client's and, never ended, failed the turn as
# malformed arguments: the answer lost, an agent loop asked to run `search_web`.
# vercel/ai's provider (perplexity-agent-language-model.ts) requests a call only at a
# `function_call` done item and reads the results as sources.
async def test_perplexity_search_is_the_providers_call_and_its_results_sources(
    serve_body: ServeBody,
) -> None:
    events = await run(serve_body, *perplexity_search(PPLX_USAGE), frame=data_only)
    summary = summarize(events)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    assert summary.text == PPLX_TEXT
    assert summary.tool_calls == []
    assert not [e for e in events if isinstance(e, ToolStart)]
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [(PPLX_CALL, "search_web", {"queries": [PPLX_QUERY]})]
    [result] = [e for e in events if isinstance(e, ServerToolResult)]
    assert (result.call_id, result.name, result.content) == (
        PPLX_CALL,
        "search_web",
        {"queries": [PPLX_QUERY], "results": PPLX_RESULTS, "type": "search_results"},
    )
    cited = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cited == [(r["url"], r["title"]) for r in PPLX_RESULTS]
    kinds = [e.type for e in events]
    assert kinds.index("server_tool_result") < kinds.index("text")


# The same recording's usage prices the turn in a `cost` object (USD), as Perplexity's
# chat wire does, where rxllm reads its `total_cost`; the Responses usage left the cost
# out. Its cache counts are OpenAI's `cached_tokens` and Anthropic's names
# (`cache_creation_input_tokens`), which vercel/ai's provider reads for the cache
# written; a write of 2,000 tokens here, 0 in the recording.
async def test_perplexity_usage_cost_object_and_cache_written(serve_body: ServeBody) -> None:
    details = {**PPLX_USAGE["input_tokens_details"], "cache_creation_input_tokens": 2000}
    usage = {**PPLX_USAGE, "input_tokens": 5007, "total_tokens": 5044}
    usage["input_tokens_details"] = details
    summary = summarize(await run(serve_body, *perplexity_search(usage), frame=data_only))
    assert summary.usage is not None
    assert summary.usage.cost_usd == 0.00105
    counts = (summary.usage.input_tokens, summary.usage.cache_read_tokens)
    assert counts == (3, 3004)
    assert (summary.usage.cache_write_tokens, summary.usage.total_tokens) == (2000, 5044)


# A client's call added whole (`status: completed` at its added item).
WHOLE_CALL = {
    "arguments": '{"city":"Paris"}',
    "call_id": "call_1",
    "id": "fc_1",
    "name": "get_weather",
    "status": "completed",
    "type": "function_call",
}


# A call added whole and then done as a `function_call` is the client's, requested once
# with the done item's arguments (the shape a server that adds calls whole sends for a
# function the client declared); one whose done item never came is read from the
# terminal response's output. Before, the second, started at its added item with no
# argument events, was ended by the terminal without its arguments: malformed.
async def test_a_call_added_whole_is_the_clients_when_done_as_a_call(
    serve_body: ServeBody,
) -> None:
    call = WHOLE_CALL
    other = {**call, "call_id": "call_2", "id": "fc_2", "arguments": '{"city":"Rome"}'}
    response = {"id": "resp_1", "object": "response", "model": "fast"}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "output": []}},
        added(0, call),
        done(0, call),
        added(1, other),
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [call, other]},
        },
        frame=data_only,
    )
    summary = summarize(events)
    assert summary.tool_calls == [
        ("call_1", "get_weather", {"city": "Paris"}),
        ("call_2", "get_weather", {"city": "Rome"}),
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


async def test_a_message_done_where_a_whole_call_was_added_is_no_result_of_it(
    serve_body: ServeBody,
) -> None:
    """A server that reuses output indices (as Ollama's did) adds a whole call at the
    index of the message before it, and the message is done there first: the message is
    itself, not the result of a tool the provider ran, and the call stays the client's.
    (A review of the change found it read as `server_tool_call` with the text as its
    result, then requested again.)"""
    call = WHOLE_CALL
    message = {"id": "msg_1", "type": "message", "role": "assistant"}
    part = {"type": "output_text", "text": "Let me check.", "annotations": []}
    response = {"id": "resp_1", "object": "response", "model": "qwen3"}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "output": []}},
        added(0, {**message, "status": "in_progress", "content": []}),
        added(0, call),
        done(0, {**message, "status": "completed", "content": [part]}),
        done(0, call),
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [message, call]},
        },
        frame=data_only,
    )
    assert not [e for e in events if isinstance(e, ServerToolCall | ServerToolResult)]
    summary = summarize(events)
    assert summary.tool_calls == [("call_1", "get_weather", {"city": "Paris"})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
