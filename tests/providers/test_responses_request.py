"""The Responses request body: where an assistant turn's reasoning items go back.

The API refuses a reasoning item "provided without its required following item": one
followed by another reasoning item (openai/codex#1235, UKGovernmentBEIS/inspect_ai#1990),
or one named by its id (stored) followed by a message without its own `msg_` id
(mastra-ai/mastra#11103), which rxllm does not keep; a call after it passes without one.
Models of the gpt-5 family write several reasoning items in one response (reasoning, a
`commentary` message, reasoning, a call). Sent by their encrypted content, without ids
(as codex sends them), reasoning items go back where they came; named by their ids, each
goes right before a call, after the message. Bodies are built by hand from the API
reference (openai-python `types/responses/response_input_item_param.py`).
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
    """Reasoning item `n` as a stateless request sends it back: by its content."""
    return {"type": "reasoning", "summary": [], "encrypted_content": f"enc-{n}"}


def stored(n: int) -> ReasoningPart:
    """Reasoning item `n` as a stored turn keeps it: its fields alone, sent by its id."""
    return ReasoningPart(details=item(n))


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


def turn_input(turn: Message, store: bool = False) -> list[dict[str, Any]]:
    """The input items a stateless (or stored) request sends for the assistant `turn`."""
    params: dict[str, Any] = {"store": store}
    if not store:
        params["include"] = ["reasoning.encrypted_content"]
    request = ChatRequest(model="gpt-5", messages=[QUESTION, turn, RESULT], params=params)
    body = OpenAIResponses().build_body(request)
    # the turn's items: what follows them answers its calls (RESULT, or not run)
    return [entry for entry in body["input"][1:] if entry["type"] != "function_call_output"]


def test_encrypted_reasoning_goes_back_where_it_came() -> None:
    turn = Message.assistant("Let me check.", tool_calls=[CALL], reasoning=[part(1), part(2)])
    assert turn_input(turn) == [sent(1), MESSAGE, sent(2), FUNCTION_CALL]
    # newer models use the reasoning of earlier turns: kept without calls too
    assert turn_input(Message.assistant("Let me check.", reasoning=[part(1)])) == [
        sent(1),
        MESSAGE,
    ]


def test_reasoning_by_id_goes_right_before_a_call_after_the_message() -> None:
    turn = Message.assistant("Let me check.", tool_calls=[CALL], reasoning=[stored(1)])
    assert turn_input(turn, store=True) == [MESSAGE, item(1), FUNCTION_CALL]
    # stored, before a message without its msg_ id it is refused: a turn without calls
    # sends none
    assert turn_input(Message.assistant("Let me check.", reasoning=[stored(1)]), True) == [MESSAGE]


def test_parallel_calls_follow_their_one_reasoning_item() -> None:
    calls = [ToolCall(id=f"call_{n}", name="f") for n in range(3)]
    for reasoning, store in (([part(1)], False), ([stored(1)], True)):
        turn = Message.assistant(tool_calls=calls, reasoning=reasoning)
        assert [entry["type"] for entry in turn_input(turn, store)] == [
            "reasoning",
            "function_call",
            "function_call",
            "function_call",
        ]


def test_reasoning_items_beyond_the_turns_items_leave_out_the_earliest() -> None:
    # Three reasoning items and one call: only the last one has an item to precede.
    turn = Message.assistant(tool_calls=[CALL], reasoning=[part(1), part(2), part(3)])
    assert turn_input(turn) == [sent(3), FUNCTION_CALL]


@pytest.mark.parametrize("store", [False, True], ids=["by content", "by id"])
@pytest.mark.parametrize("reasoning", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("text", ["", "Let me check."])
@pytest.mark.parametrize("calls", [0, 1, 3])
def test_no_reasoning_item_is_left_without_its_following_item(
    reasoning: int, text: str, calls: int, store: bool
) -> None:
    tool_calls = [ToolCall(id=f"call_{n}", name="f") for n in range(calls)]
    parts = [part(n) if not store else stored(n) for n in range(reasoning)]
    turn = Message.assistant(text, tool_calls=tool_calls, reasoning=parts)
    params: dict[str, Any] = {"store": store}
    request = ChatRequest(
        model="gpt-5", messages=[QUESTION, turn, Message.user("?")], params=params
    )
    items = [
        entry
        for entry in OpenAIResponses().build_body(request)["input"][1:-1]
        if entry["type"] != "function_call_output"  # its calls, answered as not run
    ]
    kinds = [entry["type"] for entry in items]
    for position, kind in enumerate(kinds):
        if kind == "reasoning":
            following = kinds[position + 1] if position + 1 < len(kinds) else None
            # by id: only a call may follow (a message would need its own id)
            assert following == "function_call" or (not store and following == "message")
    precedable = calls if store else calls + (1 if text else 0)
    assert kinds.count("reasoning") == min(reasoning, precedable)
    assert len(items) - kinds.count("reasoning") == len(tool_calls) + (1 if text else 0)


def responses_sse(*payloads: dict[str, Any]) -> bytes:
    return "".join(
        f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n" for payload in payloads
    ).encode()


def test_an_interleaved_turn_goes_back_in_the_order_it_came() -> None:
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
    assert turn_input(record.to_message()) == [sent(1), MESSAGE, sent(2), FUNCTION_CALL]
