"""The Responses request body: where an assistant turn's reasoning items go back.

The API refuses a reasoning item "provided without its required following item": one
followed by another reasoning item (openai/codex#1235, UKGovernmentBEIS/inspect_ai#1990),
or, stored, by a message without its own `msg_` id (mastra-ai/mastra#11103), which rxllm
does not keep; a call after it passes without one. Models of the gpt-5 family write
several reasoning items in one response (reasoning, a `commentary` message, reasoning, a
call): the message goes first, each reasoning item right before a call. Bodies are built
by hand from the API reference (openai-python `types/responses/response_input_item_param.py`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers.openai_responses import OpenAIResponses
from rxllm.request import ChatRequest, Message, ReasoningPart, ToolCall

P = "openai-responses"
QUESTION = Message.user("Weather in Paris?")
CALL = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
RESULT = Message.tool("call_1", '{"temp": 21}')


def item(n: int) -> dict[str, Any]:
    return {"id": f"rs_{n}", "type": "reasoning", "summary": []}


def part(n: int) -> ReasoningPart:
    """Reasoning item `n` as the record keeps it: its fields, its encrypted content."""
    return ReasoningPart(signature=f"enc-{n}", details=item(n))


def sent(n: int) -> dict[str, Any]:
    """Reasoning item `n` as a stateless request sends it back."""
    return {**item(n), "encrypted_content": f"enc-{n}"}


MESSAGE = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
}
FUNCTION_CALL = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city": "Paris"}',
}


def turn_input(turn: Message) -> list[dict[str, Any]]:
    """The input items a stateless request sends for the assistant `turn`."""
    params = {"store": False, "include": ["reasoning.encrypted_content"]}
    request = ChatRequest(model="gpt-5", messages=[QUESTION, turn, RESULT], params=params)
    body = OpenAIResponses().build_body(request)
    return body["input"][1:-1]  # type: ignore[no-any-return]


def test_each_reasoning_item_goes_right_before_a_call_of_its_turn() -> None:
    turn = Message.assistant("Let me check.", tool_calls=[CALL], reasoning=[part(1), part(2)])
    assert turn_input(turn) == [MESSAGE, sent(2), FUNCTION_CALL]


def test_a_turn_without_calls_sends_no_reasoning() -> None:
    # Stored, a reasoning item before a message without its id is refused; before a
    # new user message the API sets a turn's reasoning aside anyway.
    turn = Message.assistant("Let me check.", reasoning=[part(1)])
    assert turn_input(turn) == [MESSAGE]


def test_parallel_calls_follow_their_one_reasoning_item() -> None:
    calls = [ToolCall(id=f"call_{n}", name="f") for n in range(3)]
    turn = Message.assistant(tool_calls=calls, reasoning=[part(1)])
    assert [entry["type"] for entry in turn_input(turn)] == [
        "reasoning",
        "function_call",
        "function_call",
        "function_call",
    ]


def test_reasoning_items_beyond_the_turns_items_leave_out_the_earliest() -> None:
    # Three reasoning items and one call: only the last one has an item to precede.
    turn = Message.assistant(tool_calls=[CALL], reasoning=[part(1), part(2), part(3)])
    assert turn_input(turn) == [sent(3), FUNCTION_CALL]


@pytest.mark.parametrize("reasoning", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("text", ["", "Let me check."])
@pytest.mark.parametrize("calls", [0, 1, 3])
def test_no_reasoning_item_is_left_without_its_following_item(
    reasoning: int, text: str, calls: int
) -> None:
    tool_calls = [ToolCall(id=f"call_{n}", name="f") for n in range(calls)]
    turn = Message.assistant(
        text, tool_calls=tool_calls, reasoning=[part(n) for n in range(reasoning)]
    )
    request = ChatRequest(model="gpt-5", messages=[QUESTION, turn, Message.user("?")])
    items = OpenAIResponses().build_body(request)["input"][1:-1]
    kinds = [entry["type"] for entry in items]
    for position, kind in enumerate(kinds):
        if kind == "reasoning":  # always right before a call
            assert position + 1 < len(kinds) and kinds[position + 1] == "function_call"
    assert kinds.count("reasoning") == min(reasoning, calls)
    assert len(items) - kinds.count("reasoning") == len(tool_calls) + (1 if text else 0)


def responses_sse(*payloads: dict[str, Any]) -> bytes:
    return "".join(
        f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n" for payload in payloads
    ).encode()


def test_an_interleaved_turn_goes_back_with_its_call_after_its_reasoning() -> None:
    # gpt-5 family: reasoning, a `commentary` message, reasoning again, then the call.
    first = {**item(1), "encrypted_content": "enc-1"}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
    }
    second = {**item(2), "encrypted_content": "enc-2"}
    call = {**FUNCTION_CALL, "id": "fc_1", "status": "completed"}
    output = [first, message, second, call]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"model": "gpt-5", "status": "in_progress"}}
    ]
    for index, entry in enumerate(output):
        events.append({"type": "response.output_item.added", "output_index": index, "item": entry})
        events.append({"type": "response.output_item.done", "output_index": index, "item": entry})
    completed = {"model": "gpt-5", "status": "completed", "output": output}
    events.append({"type": "response.completed", "response": completed})
    received: list[rxllm.Event] = []
    rxllm.replay(responses_sse(*events), provider=P).subscribe(on_next=received.append)
    builder = RecordBuilder(P)
    for event in received:
        builder.add(event)
    record = builder.build()
    assert record.ok and len(record.reasoning_parts) == 2
    # the message first; the reasoning that led to the call before it
    assert turn_input(record.to_message()) == [MESSAGE, sent(2), FUNCTION_CALL]
