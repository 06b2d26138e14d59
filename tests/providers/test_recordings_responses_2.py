"""OpenAI Responses streams from public recordings and SDK stream tests that a second
sweep found misread. Bodies are built by hand from the sources' essential events, each
naming its source; ids and values are the sources' own, long ones shortened."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import Citation, ServerToolCall, ServerToolResult
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_3 import run
from tests.support import ServeBody, summarize

TEXT = '{"answer":4}'
PART = {"type": "output_text", "text": TEXT, "annotations": [], "logprobs": []}
MESSAGE = {"id": "msg_test", "type": "message", "role": "assistant", "status": "completed"}
TOOL = {
    "id": "fc_test",
    "type": "function_call",
    "call_id": "call_test",
    "name": "lookup",
    "arguments": TEXT,
    "status": "completed",
}


# openai/openai-python tests/lib/responses/test_null_output_items.py
# (test_stream_preserves_output_after_empty_item): some servers send an
# `output_item.added` whose `item` is null or absent, before and at the output index of a
# message; the SDK keeps the message and the call around it as they are. The empty event
# took output index 0 as an item of no id and no type, the message was read under it,
# the terminal response's message matched nothing the stream showed and its text came twice.
@pytest.mark.parametrize("empty", [{"item": None}, {}], ids=["null", "absent"])
async def test_an_output_item_event_without_an_item_begins_none(
    serve_body: ServeBody, empty: dict[str, Any]
) -> None:
    nothing = {"type": "response.output_item.added", "output_index": 0, **empty}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {"id": "resp_test", "output": []}},
        nothing,
        added(0, {**MESSAGE, "status": "in_progress", "content": []}),
        nothing,
        added(1, {**TOOL, "status": "in_progress", "arguments": ""}),
        on("response.content_part.added", 0, "msg_test", content_index=0, part=PART),
        on("response.output_text.delta", 0, "msg_test", content_index=0, delta='{"answer":'),
        on("response.function_call_arguments.delta", 1, "fc_test", delta='{"answer":'),
        on("response.output_text.delta", 0, "msg_test", content_index=0, delta="4}"),
        on("response.function_call_arguments.delta", 1, "fc_test", delta="4}"),
        on("response.output_text.done", 0, "msg_test", content_index=0, text=TEXT),
        done(1, TOOL),
        {**nothing, "type": "response.output_item.done"},  # a done event without it too
        done(0, {**MESSAGE, "content": [PART]}),
        {
            "type": "response.completed",
            "response": {
                "id": "resp_test",
                "status": "completed",
                "output": [{**MESSAGE, "content": [PART]}, TOOL],
            },
        },
    )
    summary = summarize(events)
    assert summary.text == TEXT
    assert summary.tool_calls == [("call_test", "lookup", {"answer": 4})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


def data_only(*payloads: dict[str, Any]) -> bytes:
    """Events as vercel/ai's fixtures hold them: each a `data:` line alone."""
    return "".join(f"data: {json.dumps(payload)}\n\n" for payload in payloads).encode()


XAI_MESSAGE = "msg_1d1a0870-4485-9e15-a5f5-87e29c5f8266"
XAI_SEARCH = "ws_1d1a0870-4485-9e15-a5f5-87e29c5f8266_call-163bd0fb-0"
XAI_SOURCE = {"type": "url", "url": "https://x.ai/"}
XAI_CITES = [
    {"type": "url_citation", "url": url, "start_index": 0, "end_index": 0, "title": url}
    for url in ("https://x.ai/", "https://x.ai/news")
]


# vercel/ai packages/xai/src/responses/__fixtures__/xai-13218-web-search-provider-tool-result
# .1.chunks.txt: xAI's Responses stream (grok-4-fast-non-reasoning) prices the turn in its
# usage as `cost_in_usd_ticks` (132,865,000 ticks of 1e-10 USD), as its chat wire does,
# where rxllm reads it; the Responses usage left the cost out. Its citations span no
# text (`start_index` = `end_index` = 0): no cited text.
async def test_xai_responses_usage_is_priced_from_its_ticks(serve_body: ServeBody) -> None:
    search = {
        "id": XAI_SEARCH,
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "https://x.ai", "sources": [XAI_SOURCE]},
    }
    part = {"type": "output_text", "text": "**xAI**", "logprobs": [], "annotations": XAI_CITES}
    message = {"id": XAI_MESSAGE, "type": "message", "role": "assistant", "status": "completed"}
    response = {"id": "1d1a0870", "object": "response", "model": "grok-4-fast-non-reasoning"}
    usage = {
        "input_tokens": 4144,
        "input_tokens_details": {"cached_tokens": 1920},
        "output_tokens": 49,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 4193,
        "num_sources_used": 0,
        "num_server_side_tools_used": 1,
        "cost_in_usd_ticks": 132865000,
    }
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        added(0, {**search, "status": "in_progress", "action": {"type": "search", "query": ""}}),
        on("response.web_search_call.searching", 0, XAI_SEARCH),
        done(0, search),
        added(1, {**message, "status": "in_progress", "content": []}),
        on("response.output_text.delta", 1, XAI_MESSAGE, content_index=0, delta="**xAI**"),
        *(
            on(
                "response.output_text.annotation.added",
                1,
                XAI_MESSAGE,
                content_index=0,
                annotation_index=n,
                annotation=cite,
            )
            for n, cite in enumerate(XAI_CITES)
        ),
        on("response.output_text.done", 1, XAI_MESSAGE, content_index=0, text="**xAI**"),
        on("response.content_part.done", 1, XAI_MESSAGE, content_index=0, part=part),
        done(1, {**message, "content": [part]}),
        {
            "type": "response.completed",
            "response": {
                **response,
                "status": "completed",
                "output": [search, {**message, "content": [part]}],
                "usage": usage,
            },
        },
        frame=data_only,
    )
    summary = summarize(events)
    assert summary.text == "**xAI**"
    assert summary.usage is not None
    assert summary.usage.cost_usd == pytest.approx(0.0132865)
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (2224, 1920)
    assert [(e.url, e.cited_text) for e in events if isinstance(e, Citation)] == [
        ("https://x.ai/", None),
        ("https://x.ai/news", None),
    ]
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [e.content["action"]["sources"] for e in results] == [[XAI_SOURCE]]


XS_QUERY = '{"query":"from:xai filter:media","limit":20,"mode":"Latest"}'
XS_VIDEO = '{"video_url":"https://video.twimg.com/amplify_video/1991284765027364866.mp4"}'


def x_search(number: str, name: str, input_: str, status: str = "completed") -> dict[str, Any]:
    return {
        "call_id": f"xs_call_{number}",
        "input": input_,
        "name": name,
        "type": "custom_tool_call",
        "id": f"ctc_b7b464ea_xs_call_{number}",
        "status": status,
    }


# vercel/ai packages/xai/src/responses/__fixtures__/xai-x-search-tool.chunks.txt: xAI's
# server-side X search (tool `x_search`, grok-4-fast-reasoning) streams the sub-tools it
# runs as `custom_tool_call` items (`x_keyword_search`, `view_x_video`; call ids
# `xs_call_...`), then web searches and the answer, all in one completed response.
# vercel's xAI provider reads them as provider-executed. They were tool requests for
# tools the client never declared, and the turn ended `tool_use`.
async def test_xai_x_search_sub_tools_are_run_by_xai(serve_body: ServeBody) -> None:
    keyword = x_search("24148162", "x_keyword_search", XS_QUERY)
    video = x_search("14963218", "view_x_video", XS_VIDEO)
    search = {
        "id": "ws_b7b464ea_call_55360208",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "", "sources": []},
    }
    message = {"id": "msg_b7b464ea", "type": "message", "role": "assistant"}
    part = {"type": "output_text", "text": "### Latest", "logprobs": [], "annotations": []}
    response = {"id": "b7b464ea", "object": "response", "model": "grok-4-fast-reasoning"}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        added(0, {**keyword, "input": "", "status": "in_progress"}),
        on("response.custom_tool_call_input.delta", 0, keyword["id"], delta=XS_QUERY),
        on("response.custom_tool_call_input.done", 0, keyword["id"], input=XS_QUERY),
        done(0, keyword),
        added(1, {**video, "input": "", "status": "in_progress"}),
        on("response.custom_tool_call_input.delta", 1, video["id"], delta=XS_VIDEO),
        on("response.custom_tool_call_input.done", 1, video["id"], input=XS_VIDEO),
        added(2, {**search, "status": "in_progress"}),
        on("response.web_search_call.searching", 2, search["id"]),
        done(2, search),
        done(1, video),  # done after the search begun after it
        added(3, {**message, "status": "in_progress", "content": []}),
        on("response.output_text.delta", 3, "msg_b7b464ea", content_index=0, delta="### Latest"),
        on("response.output_text.done", 3, "msg_b7b464ea", content_index=0, text="### Latest"),
        done(3, {**message, "status": "completed", "content": [part]}),
        {
            "type": "response.completed",
            "response": {
                **response,
                "status": "completed",
                "output": [keyword, video, search, {**message, "content": [part]}],
            },
        },
        frame=data_only,
    )
    summary = summarize(events)
    assert summary.tool_calls == []
    assert not [e for e in events if e.type == "tool_start"]
    assert (summary.text, summary.stop_reason) == ("### Latest", "stop")
    calls = [e for e in events if isinstance(e, ServerToolCall)]
    assert [(e.call_id, e.name) for e in calls] == [
        ("xs_call_24148162", "x_keyword_search"),
        ("ws_b7b464ea_call_55360208", "web_search_call"),
        ("xs_call_14963218", "view_x_video"),
    ]
    assert calls[0].arguments["input"] == json.loads(XS_QUERY)
    assert calls[2].arguments["input"] == json.loads(XS_VIDEO)
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(e.call_id, e.content.get("input")) for e in results] == [
        ("xs_call_24148162", XS_QUERY),
        ("ws_b7b464ea_call_55360208", None),
        ("xs_call_14963218", XS_VIDEO),
    ]


# A custom tool the client declared under a name of its own (OpenAI's, as in
# pydantic-ai's test_gpt5_freeform_text_streaming cassette) is still requested.
async def test_a_custom_tool_of_another_name_is_still_the_clients(serve_body: ServeBody) -> None:
    call = {**x_search("1", "execute_sql", "SELECT 1;"), "call_id": "call_2GHk"}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        added(0, {**call, "input": "", "status": "in_progress"}),
        on("response.custom_tool_call_input.done", 0, call["id"], input="SELECT 1;"),
        done(0, call),
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}},
    )
    summary = summarize(events)
    assert summary.tool_calls == [("call_2GHk", "execute_sql", {"input": "SELECT 1;"})]
    assert summary.stop_reason == "tool_use"


async def test_an_openai_custom_tool_named_like_xais_is_still_the_clients(
    serve_body: ServeBody,
) -> None:
    """xAI's sub-tool names are xAI's only in a Grok model's response: an OpenAI client
    may declare a freeform tool of its own named `web_search`, which it must run."""
    call = {**x_search("1", "web_search", "rxllm"), "call_id": "call_W"}
    response = {"id": "resp_1", "model": "gpt-5"}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        added(0, {**call, "input": "", "status": "in_progress"}),
        on("response.custom_tool_call_input.done", 0, call["id"], input="rxllm"),
        done(0, call),
        {"type": "response.completed", "response": {**response, "status": "completed"}},
    )
    summary = summarize(events)
    assert summary.tool_calls == [("call_W", "web_search", {"input": "rxllm"})]
    assert not [e for e in events if isinstance(e, ServerToolCall)]


# vercel/ai packages/xai/src/responses/xai-responses-language-model.ts ends a stream at
# `response.done` as at `response.completed` (the older name of the terminal event, which
# some Responses servers still send); a stream that ended with it read as truncated.
async def test_a_stream_ended_by_response_done_is_complete(serve_body: ServeBody) -> None:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    part = {"type": "output_text", "text": "hello", "annotations": []}
    response = {"id": "0d7f672c", "object": "response", "model": "grok-4.3"}
    usage = {"input_tokens": 197, "output_tokens": 199, "total_tokens": 396}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        added(0, {**message, "status": "in_progress", "content": []}),
        on("response.output_text.delta", 0, "msg_1", content_index=0, delta="hello"),
        done(0, {**message, "content": [part]}),
        {
            "type": "response.done",
            "response": {
                **response,
                "status": "completed",
                "output": [{**message, "content": [part]}],
                "usage": usage,
            },
        },
        frame=data_only,
    )
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.stop_reason) == ("hello", "done", "stop")
    assert summary.usage is not None and summary.usage.total_tokens == 396
