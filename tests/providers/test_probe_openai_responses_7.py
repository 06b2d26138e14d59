"""OpenAI Responses streams of public recordings not replayed before (vercel/ai
`packages/openai/src/responses/__fixtures__`), each checked against its own content, and
the turn after each built from what the stream gave. Bodies are built by hand from the
recordings' essential lines, each naming its source; ids are the recordings' own, long
values (encrypted content, fingerprints) shortened."""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm.events import Event, ServerToolCall, ServerToolResult, StreamRecord
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers.openai_responses import OpenAIResponses
from rxllm.request import ChatRequest, Message
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, summarize


def response(rid: str, model: str, status: str, **fields: Any) -> dict[str, Any]:
    return {"id": rid, "object": "response", "model": model, "status": status, **fields}


def record_of(events: list[Event]) -> StreamRecord:
    builder = RecordBuilder("openai-responses")
    for event in events:
        builder.add(event)
    return builder.build()


def next_input(record: StreamRecord, store: bool = True) -> list[dict[str, Any]]:
    """The input of the turn after `record`, as rxllm writes it."""
    messages = [Message.user("hi"), record.to_message(), Message.user("go on")]
    params = {} if store else {"store": False}
    request = ChatRequest(model="gpt-5.2", messages=messages, params=params)
    items: list[dict[str, Any]] = OpenAIResponses().request_body(request)["input"]
    return items[1:-1]


def server_tools(events: list[Event]) -> list[tuple[str, str, str]]:
    return [
        (e.type, e.call_id, e.name)
        for e in events
        if isinstance(e, ServerToolCall | ServerToolResult)
    ]


# -- vercel/ai ...__fixtures__/openai-compaction.1.chunks.txt ------------------------------
# gpt-5.2, `store: false`, server-side compaction: a streamed message (output index 0),
# then a `compaction` item (index 1) whose `encrypted_content` carries the compacted
# context; the terminal's `output` holds both. OpenAI's compaction guide: "For stateless
# input-array chaining, append output items as usual ... the compaction item carries
# context needed for the next window."
COMPACTION_ID = "cmp_0e2ed64344ac7f31016994b3"
COMPACTED = "gAAAAABplLP7-compacted"
ANSWER = ["### Testing", " strategies", ": unit vs integration", "."]
COMPACTION_USAGE = {
    "input_tokens": 51097,
    "input_tokens_details": {"cached_tokens": 49792},
    "output_tokens": 2505,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 53602,
}


def compaction_stream() -> list[dict[str, Any]]:
    rid, model, mid = "resp_0e2ed643", "gpt-5.2-2025-12-11", "msg_0e2ed643"
    whole = "".join(ANSWER)
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": whole}
    message = {"id": mid, "type": "message", "status": "completed", "role": "assistant"}
    compaction = {"id": COMPACTION_ID, "type": "compaction", "encrypted_content": COMPACTED}
    final = response(rid, model, "completed", store=False, usage=COMPACTION_USAGE)
    return [
        {"type": "response.created", "response": response(rid, model, "in_progress")},
        {"type": "response.in_progress", "response": response(rid, model, "in_progress")},
        added(0, {**message, "status": "in_progress", "content": []}),
        on("response.content_part.added", 0, mid, content_index=0, part={**part, "text": ""}),
        *(on("response.output_text.delta", 0, mid, content_index=0, delta=d) for d in ANSWER),
        on("response.output_text.done", 0, mid, content_index=0, text=whole),
        on("response.content_part.done", 0, mid, content_index=0, part=part),
        done(0, {**message, "content": [part]}),
        added(1, {"id": COMPACTION_ID, "type": "compaction"}),
        done(1, compaction),
        {
            "type": "response.completed",
            "response": {**final, "output": [{**message, "content": [part]}, compaction]},
        },
    ]


async def test_a_compaction_item_goes_back_in_the_next_turn(serve_body: ServeBody) -> None:
    events = await run(serve_body, *compaction_stream())
    summary = summarize(events)
    assert (summary.text, summary.reasoning) == ("".join(ANSWER), "")
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (1305, 49792)
    assert summary.usage.total_tokens == 53602
    # the compacted context, kept once, and sent back after the turn's message (where
    # the response put it), by its content: nothing is stored under `store: false`
    items = next_input(record_of(events), store=False)
    assert [entry["type"] for entry in items] == ["message", "compaction"]
    assert items[1] == {"type": "compaction", "encrypted_content": COMPACTED}
    assert items[0]["content"][0]["text"] == "".join(ANSWER)


async def test_a_compaction_item_seen_only_in_the_terminal_goes_back_too(
    serve_body: ServeBody,
) -> None:
    stream = compaction_stream()
    events = await run(serve_body, *stream[:-3], stream[-1])  # its added and done lost
    assert next_input(record_of(events))[-1] == {
        "type": "compaction",
        "encrypted_content": COMPACTED,
    }


# -- vercel/ai ...__fixtures__/programmatic-tool-calling.1.chunks.txt ---------------------
# gpt-5.6-sol with `programmatic_tool_calling`: a reasoning item (encrypted, no summary),
# a `program` item OpenAI runs (JavaScript; added with `code: ""`, done with its code and
# an opaque `fingerprint`), then the `function_call` the program makes of a client tool,
# whose `caller` names the program's call id.
PROGRAM_CALL = "call_voPdoCqf8APY4DMpam3bdmxq"
CODE = (
    'const inventory = await tools.getInventory({sku: "sku_123"});\n'
    'const demand = await tools.getDemand({sku: "sku_123"});\n'
    "text(JSON.stringify({inventory, demand}));\n"
)
PROGRAM_USAGE = {
    "input_tokens": 631,
    "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
    "output_tokens": 87,
    "output_tokens_details": {"reasoning_tokens": 37},
    "total_tokens": 718,
}


def program_call(call_id: str, name: str, fid: str, arguments: str) -> dict[str, Any]:
    caller = {"type": "program", "caller_id": PROGRAM_CALL}
    item = {"id": fid, "type": "function_call", "status": "in_progress", "arguments": arguments}
    return {**item, "call_id": call_id, "caller": caller, "name": name}


async def test_a_program_is_run_by_the_provider_and_its_call_is_requested(
    serve_body: ServeBody,
) -> None:
    rid, model = "resp_0bac52ec", "gpt-5.6-sol"
    reasoning = {"id": "rs_0bac52ec", "type": "reasoning", "content": [], "summary": []}
    program = {"id": "cm_0bac52ec", "type": "program", "call_id": PROGRAM_CALL}
    arguments = json.dumps({"sku": "sku_123"}, separators=(",", ":"))
    call = program_call("call_VgDSZztLociNcutQZWkC2fmL", "getInventory", "fc_0bac52ec", arguments)
    output = [
        {**reasoning, "encrypted_content": "gAAAAABqYUYA-final"},
        {**program, "code": CODE, "fingerprint": "gAAAAABqYUYA-fp2"},
        call,
    ]
    events = await run(
        serve_body,
        {"type": "response.created", "response": response(rid, model, "in_progress")},
        added(0, {**reasoning, "encrypted_content": "gAAAAABqYUX_-added"}),
        done(0, {**reasoning, "encrypted_content": "gAAAAABqYUYA-done"}),
        added(1, {**program, "code": "", "fingerprint": "gAAAAABqYUYA-fp1"}),
        done(1, {**program, "code": CODE, "fingerprint": "gAAAAABqYUYA-fp2"}),
        added(2, {**call, "arguments": ""}),
        on("response.function_call_arguments.delta", 2, "fc_0bac52ec", delta=arguments),
        on("response.function_call_arguments.done", 2, "fc_0bac52ec", arguments=arguments),
        done(2, call),
        {
            "type": "response.completed",
            "response": response(rid, model, "completed", output=output, usage=PROGRAM_USAGE),
        },
    )
    summary = summarize(events)
    assert summary.tool_calls == [
        ("call_VgDSZztLociNcutQZWkC2fmL", "getInventory", {"sku": "sku_123"})
    ]
    assert summary.signatures == ["gAAAAABqYUYA-done"]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    assert summary.usage is not None
    assert (summary.usage.output_tokens, summary.usage.reasoning_tokens) == (87, 37)
    # the program OpenAI runs is shown, not dropped: its code once done
    assert server_tools(events) == [
        ("server_tool_call", PROGRAM_CALL, "program"),
        ("server_tool_result", PROGRAM_CALL, "program"),
    ]
    result = next(e for e in events if isinstance(e, ServerToolResult))
    assert result.content["code"] == CODE
    assert result.content["fingerprint"] == "gAAAAABqYUYA-fp2"
    # the turn after keeps the reasoning by its encrypted content and the call by its id
    items = next_input(record_of(events), store=False)
    blobs = [entry.get("encrypted_content") for entry in items if entry["type"] == "reasoning"]
    assert blobs == ["gAAAAABqYUYA-done"]
    calls = [entry for entry in items if entry["type"] == "function_call"]
    assert [(c["call_id"], c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("call_VgDSZztLociNcutQZWkC2fmL", "getInventory", {"sku": "sku_123"})
    ]


# -- vercel/ai ...__fixtures__/programmatic-tool-calling.2.chunks.txt ---------------------
# The turn after: the program goes on and calls the second tool; a response whose usage
# is all zeros (the program's work is counted in the turn that wrote it).
async def test_the_programs_next_call_is_requested_with_the_zero_usage_it_reports(
    serve_body: ServeBody,
) -> None:
    rid, model = "resp_0bac52ec_2", "gpt-5.6-sol"
    arguments = json.dumps({"sku": "sku_123"}, separators=(",", ":"))
    call = program_call("call_8GZvm5Bs4q0YSJIFH8hZeIcp", "getDemand", "fc_0bac5203", arguments)
    zero = {
        "input_tokens": 0,
        "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
        "output_tokens": 0,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 0,
    }
    events = await run(
        serve_body,
        {"type": "response.created", "response": response(rid, model, "in_progress")},
        added(0, {**call, "arguments": ""}),
        on("response.function_call_arguments.delta", 0, "fc_0bac5203", delta=arguments),
        on("response.function_call_arguments.done", 0, "fc_0bac5203", arguments=arguments),
        done(0, call),
        {
            "type": "response.completed",
            "response": response(rid, model, "completed", output=[call], usage=zero),
        },
    )
    summary = summarize(events)
    assert summary.tool_calls == [
        ("call_8GZvm5Bs4q0YSJIFH8hZeIcp", "getDemand", {"sku": "sku_123"})
    ]
    assert summary.usage == rxllm.Usage()
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


# -- vercel/ai ...__fixtures__/openai-shell-container-multiturn.1.chunks.txt --------------
# gpt-5.2 offered a hosted shell (`container_reference`) answers from what it ran in the
# turn before: a plain message, text deltas then every done event repeating them.
async def test_a_message_whose_done_events_repeat_its_deltas_is_shown_once(
    serve_body: ServeBody,
) -> None:
    rid, model, mid = "resp_07226f71", "gpt-5.2-2025-12-11", "msg_07226f71"
    deltas = ["The", " architecture", " is", " **", "x", "86", "_", "64", "**", " (", "64"]
    deltas += ["-bit", " Intel", "/", "AMD", ")."]
    whole = "".join(deltas)
    assert whole == "The architecture is **x86_64** (64-bit Intel/AMD)."
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": whole}
    message = {"id": mid, "type": "message", "status": "completed", "role": "assistant"}
    usage = {
        "input_tokens": 802,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 822,
    }
    final = response(rid, model, "completed", output=[{**message, "content": [part]}])
    events = await run(
        serve_body,
        {"type": "response.created", "response": response(rid, model, "in_progress")},
        added(0, {**message, "status": "in_progress", "content": []}),
        on("response.content_part.added", 0, mid, content_index=0, part={**part, "text": ""}),
        *(on("response.output_text.delta", 0, mid, content_index=0, delta=d) for d in deltas),
        on("response.output_text.done", 0, mid, content_index=0, text=whole),
        on("response.content_part.done", 0, mid, content_index=0, part=part),
        done(0, {**message, "content": [part]}),
        {"type": "response.completed", "response": {**final, "usage": usage}},
    )
    summary = summarize(events)
    assert summary.text == whole
    assert [e.text for e in events if e.type == "text"] == deltas
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (802, 20)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
