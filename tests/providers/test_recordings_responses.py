"""OpenAI Responses streams rebuilt from public recordings that are not among the
captures, checked against what the recording itself says (its terminal response, or the
oracle its project asserts). Bodies are built by hand from the recordings' essential
lines, each naming its source; ids are the recordings' own, long values shortened."""

from __future__ import annotations

import functools
import json
from typing import Any

from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_3 import run as probe_run
from tests.support import ServeBody, summarize


def frames(*payloads: dict[str, Any]) -> bytes:
    """Events as OpenAI frames them: `event:` and `data:`, the payload as recorded."""
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


# The events of the body as recorded (no `sequence_number` added), the same over HTTP as
# replayed in any chunking.
run = functools.partial(probe_run, frame=frames)


def response(status: str) -> dict[str, Any]:
    return {"id": "resp_parallel", "object": "response", "model": "gpt-5.4", "status": status}


USAGE = {
    "input_tokens": 34,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 28,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 62,
}

# vercel/ai packages/openai/src/responses/__fixtures__/issue-19067-parallel-tool-call-wrapper
# .chunks.txt: gpt-5.4 sends its `multi_tool_use.parallel` wrapper as a function call named
# `parallel`; vercel's test ("expands a Responses API parallel wrapper into declared tool
# calls") expects the two calls it wraps, `weather` then `cityAttractions`.
WRAPPED = json.dumps(
    {
        "tool_uses": [
            {"recipient_name": "functions.weather", "parameters": {"location": "San Francisco"}},
            {"recipient_name": "functions.cityAttractions", "parameters": {"city": "Rome"}},
        ]
    },
    separators=(",", ":"),
)


def wrapper(arguments: str, status: str = "completed", name: str = "parallel") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": "fc_parallel",
        "call_id": "call_parallel",
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def streamed(arguments: str, name: str = "parallel") -> list[dict[str, Any]]:
    return [
        {"type": "response.created", "response": response("in_progress")},
        added(0, wrapper("", "in_progress", name)),
        on("response.function_call_arguments.delta", 0, "fc_parallel", delta=arguments[:40]),
        on("response.function_call_arguments.delta", 0, "fc_parallel", delta=arguments[40:]),
        on("response.function_call_arguments.done", 0, "fc_parallel", arguments=arguments),
        done(0, wrapper(arguments, name=name)),
    ]


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    body = {**response("completed"), "output": list(output), "usage": USAGE}
    return {"type": "response.completed", "response": body}


async def test_a_parallel_wrapper_call_is_requested_as_the_calls_it_wraps(
    serve_body: ServeBody,
) -> None:
    events = await run(serve_body, *streamed(WRAPPED), completed())
    summary = summarize(events)
    assert summary.tool_calls == [
        ("call_parallel_0", "weather", {"location": "San Francisco"}),
        ("call_parallel_1", "cityAttractions", {"city": "Rome"}),
    ]
    assert [e.name for e in events if e.type == "tool_start"] == ["weather", "cityAttractions"]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


async def test_a_parallel_wrapper_seen_only_in_the_terminal_is_unwrapped_too(
    serve_body: ServeBody,
) -> None:
    # the same call, whole in a stream that shows the terminal response alone
    events = await run(serve_body, completed(wrapper(WRAPPED)))
    assert [name for _, name, _ in summarize(events).tool_calls] == ["weather", "cityAttractions"]


async def test_a_client_tool_named_parallel_is_requested_as_it_came(
    serve_body: ServeBody,
) -> None:
    arguments = json.dumps({"tasks": ["a", "b"], "limit": 2})
    events = await run(serve_body, *streamed(arguments), completed())
    assert summarize(events).tool_calls == [
        ("call_parallel", "parallel", {"tasks": ["a", "b"], "limit": 2})
    ]


async def test_a_parallel_wrapper_cut_off_by_the_token_limit_is_malformed(
    serve_body: ServeBody,
) -> None:
    # its arguments stop mid-JSON and no done event comes: judged as any call left open
    cut = {
        **response("incomplete"),
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [wrapper(WRAPPED[:50], "incomplete")],
        "usage": USAGE,
    }
    events = await run(
        serve_body,
        {"type": "response.created", "response": response("in_progress")},
        added(0, wrapper("", "in_progress")),
        on("response.function_call_arguments.delta", 0, "fc_parallel", delta=WRAPPED[:50]),
        {"type": "response.incomplete", "response": cut},
    )
    summary = summarize(events)
    assert (summary.terminal, summary.error_kind) == ("error", "malformed_tool_arguments")
    assert [(e.call_id, e.name) for e in events if e.type == "tool_start"] == [
        ("call_parallel", "parallel")
    ]


# vercel/ai packages/openai/src/responses/__fixtures__/github-copilot-id-rotation.1.chunks.txt:
# GitHub Copilot's Responses proxy gives every event a fresh `item_id` (capture-id-N), the
# done items and the terminal's output items ids of their own as well. Each item is read
# once, at its output index.
async def test_item_ids_that_change_on_every_event_are_read_once(serve_body: ServeBody) -> None:
    summary_text = "**Counting character occurrences**"
    answer = ["There", " are", " **3**", " letter **“r”**s."]
    whole = "".join(answer)
    part = {"annotations": [], "logprobs": [], "text": whole, "type": "output_text"}
    reasoning = {"content": [], "encrypted_content": None, "summary": [], "type": "reasoning"}
    summary_item = {**reasoning, "summary": [{"text": summary_text, "type": "summary_text"}]}
    message = {"content": [part], "phase": "final_answer", "role": "assistant", "type": "message"}
    usage = {**USAGE, "input_tokens": 19, "output_tokens": 105, "total_tokens": 124}
    usage["output_tokens_details"] = {"reasoning_tokens": 44}
    final = {
        **response("completed"),
        "id": "capture-id-69",
        "output": [{**summary_item, "id": "capture-id-70"}, {**message, "id": "capture-id-71"}],
        "usage": usage,
    }
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response("in_progress"), "id": "capture-id-1"}},
        added(0, {**reasoning, "id": "capture-id-3"}),
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "capture-id-5",
            "output_index": 0,
            "summary_index": 0,
            "delta": summary_text,
        },
        {
            "type": "response.reasoning_summary_text.done",
            "item_id": "capture-id-6",
            "output_index": 0,
            "summary_index": 0,
            "text": summary_text,
        },
        done(0, {**summary_item, "id": "capture-id-8"}),
        added(1, {**message, "content": [], "status": "in_progress", "id": "capture-id-9"}),
        *(
            on("response.output_text.delta", 1, f"capture-id-{11 + n}", content_index=0, delta=d)
            for n, d in enumerate(answer)
        ),
        on("response.output_text.done", 1, "capture-id-66", content_index=0, text=whole),
        on("response.content_part.done", 1, "capture-id-67", content_index=0, part=part),
        done(1, {**message, "id": "capture-id-68"}),
        {"type": "response.completed", "copilot_usage": {"total_nano_aiu": 1}, "response": final},
    )
    summary = summarize(events)
    assert (summary.text, summary.reasoning) == (whole, summary_text)
    usage_seen = summary.usage
    assert usage_seen is not None
    assert (usage_seen.input_tokens, usage_seen.reasoning_tokens) == (19, 44)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


# vercel/ai packages/openai/src/responses/__fixtures__/openai-tool-search.1.chunks.txt: a
# server tool search (gpt-5.4) is a `tool_search_call` then a `tool_search_output`, both
# with `call_id: null`; the output is the result of that search (vercel's stream pairs the
# two under the call's item id), not of a call of its own.
TOOL = {"type": "function", "name": "get_weather", "defer_loading": True, "parameters": {}}


def tool_search(status: str, **fields: Any) -> dict[str, Any]:
    item = {"id": "tsc_08a1", "type": "tool_search_call", "status": status, "call_id": None}
    return {**item, "execution": "server", **fields}


async def test_a_server_tool_search_output_is_the_result_of_the_search_before_it(
    serve_body: ServeBody,
) -> None:
    output = {"id": "tso_08a1", "type": "tool_search_output", "status": "completed"}
    output = {**output, "call_id": None, "execution": "server", "tools": [TOOL]}
    searched = tool_search("completed", arguments={"paths": ["get_weather"]})
    events = await run(
        serve_body,
        {"type": "response.created", "response": response("in_progress")},
        added(0, tool_search("in_progress", arguments={})),
        done(0, searched),
        added(1, {**output, "status": "in_progress"}),
        done(1, output),
        completed(searched, output),
    )
    calls = [(e.call_id, e.name) for e in events if e.type == "server_tool_call"]
    results = [(e.call_id, e.name) for e in events if e.type == "server_tool_result"]
    assert calls == [("tsc_08a1", "tool_search_call")]
    assert results == [("tsc_08a1", "tool_search_call")] * 2
    assert [e.content for e in events if e.type == "server_tool_result"][-1]["tools"] == [TOOL]


# vercel/ai ...__fixtures__/openai-client-tool-search.1.chunks.txt: a client tool search's
# added item says `call_NHis…`, its done item and the response `call_RWTII…`; the answer
# (`tool_search_output`) must name the call the response holds, as vercel's stream does.
async def test_a_client_tool_search_is_requested_under_its_done_call_id(
    serve_body: ServeBody,
) -> None:
    first = {"id": "tsc_0514", "type": "tool_search_call", "status": "in_progress"}
    first = {**first, "arguments": {}, "call_id": "call_NHis", "execution": "client"}
    goal = {"goal": "Find a tool that can provide current weather information."}
    last = {**first, "status": "completed", "arguments": goal, "call_id": "call_RWTII"}
    events = await run(
        serve_body,
        {"type": "response.created", "response": response("in_progress")},
        added(0, first),
        done(0, last),
        completed(last),
    )
    assert [(e.call_id, e.name) for e in events if e.type == "tool_start"] == [
        ("call_RWTII", "tool_search_call")
    ]
    assert summarize(events).tool_calls == [
        ("call_RWTII", "tool_search_call", {"arguments": goal, "execution": "client"})
    ]
