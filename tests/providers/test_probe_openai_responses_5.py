"""OpenAI Responses streams of Responses-compatible servers that a fifth probe found
misread, and the two-turn agent loop over the wire. Stream bodies are made by hand from
the servers' sources: llama.cpp's `tools/server/server-task.cpp`
(`server_task_result_cmpl_partial::to_json_oaicompat_resp` and the final
`to_json_oaicompat_resp_stream`: no `output_index`, `content_index` or
`sequence_number` on any event; function-call items without `id`, their argument
deltas named by the `fc_` call id; no `function_call_arguments.done`) and LiteLLM's
chat-to-Responses bridge (`litellm/responses/litellm_completion_transformation/
streaming_iterator.py`: the reasoning item, then the message without an added event,
both at output index 0; the calls from output index 1). The history's input items are
checked against openai-python's `ResponseInputItemParam` (`ResponseReasoningItemParam`,
`ResponseFunctionToolCallParam`, `FunctionCallOutput` whose `output` is a string or a
list of `input_text` / `input_image`). Ids and values are made up."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm import ChatRequest, Message
from rxllm.events import Event, ReasoningDelta, ToolStart
from rxllm.providers import wire_for
from rxllm.request import ImagePart, ReasoningPart, TextPart, ToolCall
from tests.support import Recorder, Serve, ServeBody, replay_every_way, summarize

ARGUMENTS = {"fc_1": '{"city":"Paris"}', "fc_2": '{"city":"Rome"}'}
THOUGHT, ANSWER = "Two cities.", "Let me check."


def frames(*payloads: dict[str, Any]) -> bytes:
    """Events as these servers frame them: `event:` and `data:`, no sequence number."""
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


async def run(serve_body: ServeBody, *payloads: dict[str, Any]) -> list[Event]:
    """The events of the body, the same over HTTP as replayed in any chunking."""
    body = frames(*payloads)
    events = replay_every_way(body, "openai-responses")
    request = ChatRequest(model="qwen3", messages=[Message.user("hi")])
    base_url = await serve_body(body)
    async with rxllm.provider("openai-responses", api_key="sk-probe", base_url=base_url) as p:
        assert [event async for event in p.astream(request)] == events
    return events


def reasoning_items(events: list[Event]) -> int:
    return sum(1 for e in events if isinstance(e, ReasoningDelta) and e.details is not None)


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    usage = {
        "input_tokens": 30,
        "output_tokens": 12,
        "total_tokens": 42,
        "input_tokens_details": {"cached_tokens": 16},
    }
    response = {"id": "resp_1", "object": "response", "status": "completed", "model": "qwen3"}
    return {
        "type": "response.completed",
        "response": {**response, "output": list(output), "usage": usage},
    }


# -- llama.cpp: nothing numbered ---------------------------------------------------------

LLAMA_REASONING = {"id": "rs_l", "type": "reasoning", "summary": [], "encrypted_content": ""}
LLAMA_PART = {"type": "output_text", "annotations": [], "logprobs": [], "text": ANSWER}


def llama_call(call_id: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": "weather",
    }


def llama_stream(said: bool) -> list[dict[str, Any]]:
    """A llama.cpp turn: (with `said`) reasoning text and a message, then two calls."""
    response = {"id": "resp_1", "object": "response", "status": "in_progress"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
    ]
    thought = {**LLAMA_REASONING, "content": [{"type": "reasoning_text", "text": THOUGHT}]}
    message = {"type": "message", "id": "msg_l", "role": "assistant", "content": [LLAMA_PART]}
    if said:
        events += [
            {"type": "response.output_item.added", "item": {**LLAMA_REASONING, "content": []}},
            {"type": "response.reasoning_text.delta", "item_id": "rs_l", "delta": "Two "},
            {"type": "response.reasoning_text.delta", "item_id": "rs_l", "delta": "cities."},
            {"type": "response.output_item.added", "item": {**message, "content": []}},
            {
                "type": "response.content_part.added",
                "item_id": "msg_l",
                "part": {"type": "output_text", "text": ""},
            },
            {"type": "response.output_text.delta", "item_id": "msg_l", "delta": "Let me "},
            {"type": "response.output_text.delta", "item_id": "msg_l", "delta": "check."},
        ]
    for call_id, arguments in ARGUMENTS.items():
        events += [
            {"type": "response.output_item.added", "item": llama_call(call_id, "", "in_progress")},
            {
                "type": "response.function_call_arguments.delta",
                "item_id": call_id,
                "delta": arguments[:9],
            },
            {
                "type": "response.function_call_arguments.delta",
                "item_id": call_id,
                "delta": arguments[9:],
            },
        ]
    output: list[dict[str, Any]] = []
    if said:
        output = [thought, {**message, "status": "completed"}]
        events += [
            {"type": "response.output_item.done", "item": thought},
            {"type": "response.output_text.done", "item_id": "msg_l", "text": ANSWER},
            {"type": "response.content_part.done", "item_id": "msg_l", "part": LLAMA_PART},
            {"type": "response.output_item.done", "item": output[1]},
        ]
    calls = [
        llama_call(call_id, arguments, "completed") for call_id, arguments in ARGUMENTS.items()
    ]
    events += [{"type": "response.output_item.done", "item": call} for call in calls]
    return [*events, completed(*output, *calls)]


@pytest.mark.parametrize("said", [True, False], ids=["reasoning-text-calls", "calls-only"])
async def test_an_unnumbered_stream_reads_each_item_once(serve_body: ServeBody, said: bool) -> None:
    """llama.cpp's server numbers no event: every item read at output index 0, one on
    top of the other. The message was shown twice (its done item taken as another item
    at 0, the streamed part forgotten). Calls alone came out right only by the
    terminal's `output`: the second call's start and argument deltas went to the first."""
    events = await run(serve_body, *llama_stream(said))
    got = summarize(events)
    assert got.tool_calls == [
        ("fc_1", "weather", {"city": "Paris"}),
        ("fc_2", "weather", {"city": "Rome"}),
    ]
    assert [e.call_id for e in events if isinstance(e, ToolStart)] == ["fc_1", "fc_2"]
    assert (got.text, got.reasoning) == ((ANSWER, THOUGHT) if said else ("", ""))
    assert reasoning_items(events) == (1 if said else 0)
    assert (got.stop_reason, got.usage and got.usage.total_tokens) == ("tool_use", 42)


# -- LiteLLM's bridge: the message after its reasoning at output index 0 -----------------


async def test_a_message_after_its_reasoning_at_one_output_index_is_shown_once(
    serve_body: ServeBody,
) -> None:
    """LiteLLM's bridge adds the reasoning item at output index 0 and, once it is done,
    streams the message there too without an added event (`output_index=0 reserved for
    the message item`); its calls from index 1. The message's done item, another item
    at 0, was read as a message never streamed: the answer was shown twice."""
    summary = [{"type": "summary_text", "text": THOUGHT}]
    part = {"type": "output_text", "text": ANSWER, "annotations": []}
    message = {"id": "msg_b", "type": "message", "role": "assistant", "status": "completed"}
    call = {"type": "function_call", "id": "call_b", "call_id": "call_b", "name": "weather"}
    at0 = {"output_index": 0}
    text = {**at0, "item_id": "msg_b", "content_index": 0}
    reasoning = {**at0, "item_id": "rs_b", "summary_index": 0}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {"id": "resp_b", "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            **at0,
            "item": {"id": "rs_b", "type": "reasoning", "status": "in_progress", "summary": None},
        },
        {"type": "response.reasoning_summary_text.delta", **reasoning, "delta": THOUGHT},
        {"type": "response.reasoning_summary_text.done", **reasoning, "text": THOUGHT},
        {"type": "response.reasoning_summary_part.done", **reasoning, "part": summary[0]},
        {
            "type": "response.output_item.done",
            **at0,
            "item": {"id": "rs_b", "type": "reasoning", "summary": summary},
        },
        {"type": "response.output_text.delta", **text, "delta": "Let me "},
        {"type": "response.output_text.delta", **text, "delta": "check."},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**call, "arguments": "", "status": "in_progress"},
        },
        {
            "type": "response.function_call_arguments.delta",
            "output_index": 1,
            "item_id": "call_b",
            "delta": ARGUMENTS["fc_1"],
        },
        {
            "type": "response.function_call_arguments.done",
            "output_index": 1,
            "item_id": "call_b",
            "arguments": ARGUMENTS["fc_1"],
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**call, "arguments": ARGUMENTS["fc_1"], "status": "completed"},
        },
        {"type": "response.output_text.done", **text, "text": ANSWER},
        {"type": "response.content_part.done", **text, "part": part},
        {"type": "response.output_item.done", **at0, "item": {**message, "content": [part]}},
        completed(),
    )
    got = summarize(events)
    assert (got.text, got.reasoning, got.stop_reason) == (ANSWER, THOUGHT, "tool_use")
    assert got.tool_calls == [("call_b", "weather", {"city": "Paris"})]
    assert reasoning_items(events) == 1


# -- the agent loop: turn 2's input as OpenAI documents it -------------------------------


def openai_turn(encrypted: bool) -> bytes:
    """An OpenAI turn: a reasoning item (its encrypted content, or its id alone when the
    response is stored), a message, two parallel calls."""
    reasoning: dict[str, Any] = {"id": "rs_1", "type": "reasoning", "summary": []}
    done_reasoning = {**reasoning, "summary": [{"type": "summary_text", "text": THOUGHT}]}
    if encrypted:
        done_reasoning["encrypted_content"] = "ENC=="
    part = {"type": "output_text", "text": ANSWER, "annotations": []}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    payloads: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "item_id": "rs_1",
            "summary_index": 0,
            "delta": THOUGHT,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done_reasoning},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**message, "content": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "item_id": "msg_1",
            "content_index": 0,
            "delta": ANSWER,
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**message, "content": [part]},
        },
    ]
    for index, (item_id, arguments) in enumerate(ARGUMENTS.items(), start=2):
        call = {
            "id": item_id,
            "type": "function_call",
            "call_id": f"call_{index - 1}",
            "name": "weather",
        }
        payloads += [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**call, "arguments": ""},
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": index,
                "item_id": item_id,
                "delta": arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": {**call, "arguments": arguments},
            },
        ]
    payloads.append({**completed(), "response": {**completed()["response"], "model": "gpt-5"}})
    return frames(*payloads)


PNG = "https://example.com/radar.png"


async def second_input(
    serve: Serve, first: bytes, history: list[Message], store: bool | None
) -> Any:
    """Turn 1 from `first`, then turn 2 after it: the `input` the server received."""
    recorder = Recorder(answers={"/responses": first})
    base_url = await serve(recorder.handle)
    params: dict[str, Any] = {} if store is None else {"store": store}
    question = Message.user("Weather in Paris and Rome?")
    async with rxllm.provider("openai-responses", api_key="sk-probe", base_url=base_url) as p:
        record = await p.complete(ChatRequest(model="gpt-5", messages=[question], params=params))
        assert [call.call_id for call in record.tool_calls] == ["call_1", "call_2"]
        turn = [question, record.to_message(), *history]
        await p.complete(ChatRequest(model="gpt-5", messages=turn, params=params))
    return recorder.requests[1]["body"]["input"]


RESULTS = [
    Message.tool("call_1", "timeout after 10 s", is_error=True),
    Message(
        role="tool", tool_call_id="call_2", content=[TextPart(text="radar"), ImagePart(url=PNG)]
    ),
    Message.user("And tomorrow?"),
]
CALLS = [
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "weather",
        "arguments": '{"city": "Paris"}',
    },
    {
        "type": "function_call",
        "call_id": "call_2",
        "name": "weather",
        "arguments": '{"city": "Rome"}',
    },
]
OUTPUTS = [
    {"type": "function_call_output", "call_id": "call_1", "output": "timeout after 10 s"},
    {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": [
            {"type": "input_text", "text": "radar"},
            {"type": "input_image", "image_url": PNG, "detail": "auto"},
        ],
    },
]
QUESTION_ITEM = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "Weather in Paris and Rome?"}],
}
MESSAGE_ITEM = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
}
FOLLOW_UP = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "And tomorrow?"}],
}
SUMMARY = [{"type": "summary_text", "text": THOUGHT}]


async def test_a_stateless_loop_sends_the_encrypted_reasoning_first_without_ids(
    serve: Serve,
) -> None:
    """store=false: the reasoning item by its content, no `id` on any item (none can be
    looked up), the calls and their outputs as documented."""
    sent = await second_input(serve, openai_turn(encrypted=True), RESULTS, store=False)
    reasoning = {"type": "reasoning", "summary": SUMMARY, "encrypted_content": "ENC=="}
    assert sent == [QUESTION_ITEM, reasoning, MESSAGE_ITEM, *CALLS, *OUTPUTS, FOLLOW_UP]


async def test_a_stored_loop_sends_the_reasoning_by_id_right_before_the_calls(serve: Serve) -> None:
    """Stored (the default), the reasoning item by its id alone: right before the calls
    it preceded, never before the message, which goes without its own id."""
    dict_result = Message.tool("call_2", {"temp": 21, "sky": "clear"})
    sent = await second_input(serve, openai_turn(encrypted=False), [RESULTS[0], dict_result], None)
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": SUMMARY}
    dict_output = {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": '{"temp": 21, "sky": "clear"}',
    }
    assert sent == [QUESTION_ITEM, MESSAGE_ITEM, reasoning, *CALLS, OUTPUTS[0], dict_output]


@pytest.mark.parametrize(
    "reasoning",
    [
        ReasoningPart(text="Anthropic thinking", signature="EqQBCkYIBxgCKkA"),
        ReasoningPart(signature="EmwKAhgBEgwredacted", redacted=True),
        ReasoningPart(text="Gemini thought", signature="CiQBVKhc", details={"thought": True}),
        ReasoningPart(text="chat reasoning_content"),
        ReasoningPart(
            text="OpenRouter", details={"type": "reasoning.text", "id": "r1", "format": "x"}
        ),
    ],
    ids=[
        "anthropic-thinking",
        "anthropic-redacted",
        "gemini-thought",
        "chat-text",
        "openrouter-detail",
    ],
)
def test_reasoning_made_on_another_provider_is_never_sent_as_an_item(
    reasoning: ReasoningPart,
) -> None:
    """A history from another wire: its reasoning is no Responses item the API could take
    (an item needs an id it stored, or its own encrypted content), and the call that
    came with a signature goes as a plain function call."""
    call = ToolCall(id="toolu_01", name="weather", arguments={"city": "Paris"}, signature="SIG")
    turn = Message.assistant(ANSWER, tool_calls=[call], reasoning=[reasoning])
    for store in (False, True):
        request = ChatRequest(
            model="gpt-5",
            messages=[Message.user("?"), turn, Message.tool("toolu_01", "21")],
            params={"store": store},
        )
        sent = wire_for("openai-responses").build_body(request)
        assert [item["type"] for item in sent["input"]] == [
            "message",
            "message",
            "function_call",
            "function_call_output",
        ]
        assert sent["input"][2] == {
            "type": "function_call",
            "call_id": "toolu_01",
            "name": "weather",
            "arguments": '{"city": "Paris"}',
        }
