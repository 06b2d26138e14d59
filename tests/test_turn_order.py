"""A turn goes back in the order it came: `StreamRecord.output` keeps the turn's text
runs, reasoning parts and tool requests in stream order, `to_message()` places each
tool call among the content (`ToolCall.after`), and the Anthropic wire sends the blocks
in that order.

Why: with interleaved thinking (automatic with adaptive thinking), one response can
think between its tool calls. Sent back with every thinking block first, Anthropic
refuses the turn: replaying real signed blocks, `thinking1, tool_use1, thinking2,
tool_use2` is accepted and `thinking1, thinking2, tool_use1, tool_use2` is a 400
"`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be
modified" (nikships/droidproxy#97, #103; Anthropic's "Thinking in tool and multi-turn
workflows": "Echo the assistant message exactly as received")."""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm import ChatRequest, Message, ServerToolPart, StreamRecord, TextPart, ToolCall
from rxllm.events import Done, ReasoningDelta, TextDelta, ToolRequest
from rxllm.operators.telemetry import INPUT_MESSAGES, _input_messages
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers.anthropic import Anthropic
from rxllm.providers.google import Google
from rxllm.providers.openai_chat import OpenAIChat
from rxllm.providers.openai_responses import OpenAIResponses
from rxllm.request import ReasoningPart
from tests.providers.test_anthropic_shapes import START, STOP, delta, end, sse, start, stop
from tests.providers.test_probe_anthropic_4 import QUESTION, call, loop, text, thinking
from tests.support import Recorder, Serve

P = "anthropic"


def _record(*events: Any) -> StreamRecord:
    builder = RecordBuilder(P)
    for event in (*events, Done(provider=P, attempt=1, stop_reason="tool_use")):
        builder.add(event)
    return builder.build()


def _request(index: int, call_id: str) -> ToolRequest:
    return ToolRequest(
        provider=P, attempt=1, call_id=call_id, name="f", index=index, arguments={"n": index}
    )


def _reasoning(text: str, signature: str | None = None) -> ReasoningDelta:
    return ReasoningDelta(provider=P, attempt=1, text=text, signature=signature)


def _text(value: str) -> TextDelta:
    return TextDelta(provider=P, attempt=1, text=value)


async def test_interleaved_thinking_goes_back_between_its_calls(serve: Serve) -> None:
    """thinking, tool_use, thinking, tool_use: turn 2 sends the four blocks in that
    order (before: both thinking blocks first, the layout Anthropic refuses)."""
    first = sse(
        START,
        *thinking(0, "The weather first.", "SIG1"),
        *call(1, "toolu_A", "weather", '{"city": "Paris"}'),
        *thinking(2, "Now the time.", "SIG2"),
        *call(3, "toolu_B", "clock", '{"tz": "Europe/Paris"}'),
        end("tool_use"),
        STOP,
    )
    results = [Message.tool("toolu_A", "sunny"), Message.tool("toolu_B", "14:05")]
    record, body = await loop(serve, first, results)
    assert [type(part).__name__ for part in record.output] == [
        "ReasoningPart",
        "ToolRequest",
        "ReasoningPart",
        "ToolRequest",
    ]
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "The weather first.", "signature": "SIG1"},
        {"type": "tool_use", "id": "toolu_A", "name": "weather", "input": {"city": "Paris"}},
        {"type": "thinking", "thinking": "Now the time.", "signature": "SIG2"},
        {"type": "tool_use", "id": "toolu_B", "name": "clock", "input": {"tz": "Europe/Paris"}},
    ]
    assert body["messages"][2]["content"][0]["tool_use_id"] == "toolu_A"


async def test_text_between_blocks_keeps_its_place(serve: Serve) -> None:
    """thinking, text, tool_use, thinking, text, tool_use: each run of text is its own
    block where it came; `record.text` is still the whole text."""
    first = sse(
        START,
        *thinking(0, "Weather.", "S1"),
        *text(1, "Checking the weather."),
        *call(2, "toolu_A", "weather", "{}"),
        *thinking(3, "Time.", "S2"),
        *text(4, "And the time."),
        *call(5, "toolu_B", "clock", "{}"),
        end("tool_use"),
        STOP,
    )
    results = [Message.tool("toolu_A", "sunny"), Message.tool("toolu_B", "14:05")]
    record, body = await loop(serve, first, results)
    assert record.text == "Checking the weather.And the time."
    assert [block["type"] for block in body["messages"][1]["content"]] == [
        "thinking",
        "text",
        "tool_use",
        "thinking",
        "text",
        "tool_use",
    ]
    assert body["messages"][1]["content"][4] == {"type": "text", "text": "And the time."}


def test_to_message_places_each_call_among_the_content() -> None:
    record = _record(
        _reasoning("a", "S1"),
        _request(1, "c1"),
        _request(2, "c2"),
        _reasoning("b", "S2"),
        _text("done"),
        _request(4, "c3"),
    )
    message = record.to_message()
    assert message.content == [
        ReasoningPart(text="a", signature="S1"),
        ReasoningPart(text="b", signature="S2"),
        TextPart(text="done"),
    ]
    # c1 and c2 after the first part; c3 after them all (None: the usual place)
    assert [(call.id, call.after) for call in message.tool_calls] == [
        ("c1", 1),
        ("c2", 1),
        ("c3", None),
    ]
    assert message.tool_calls[0].arguments == {"n": 1}


def test_a_turn_in_the_usual_order_is_the_message_it_always_was() -> None:
    """Reasoning, text, calls: no call gets a place, and the message equals what
    `Message.assistant` builds, so every wire sends what it sent before."""
    record = _record(
        _reasoning("think "),
        _reasoning("more", "SIG"),
        _text("Hello "),
        _text("there."),
        _request(2, "c1"),
    )
    assert record.to_message() == Message.assistant(
        "Hello there.",
        tool_calls=[ToolCall(id="c1", name="f", arguments={"n": 2})],
        reasoning=[ReasoningPart(text="think more", signature="SIG")],
    )


def test_unsigned_reasoning_holds_the_place_where_it_began() -> None:
    """Plain reasoning (DeepSeek's `reasoning_content`) is one part that nothing closes
    until the end; it goes where its first delta came, before the text after it."""
    record = _record(_reasoning("thinking"), _text("answer"), _reasoning(" still"))
    assert record.output == [ReasoningPart(text="thinking still"), TextPart(text="answer")]


def test_a_refusal_goes_back_after_the_text() -> None:
    builder = RecordBuilder(P)
    for event in (
        _text("Partly: "),
        rxllm.events.Refusal(provider=P, attempt=1, text="I can't help with the rest."),
        Done(provider=P, attempt=1, stop_reason="stop"),
    ):
        builder.add(event)
    message = builder.build().to_message()
    assert message.content == [TextPart(text="Partly: \n\nI can't help with the rest.")]


def test_the_order_survives_a_record_saved_as_json() -> None:
    record = _record(_reasoning("a", "S1"), _request(1, "c1"), _reasoning("b", "S2"))
    again = StreamRecord.model_validate_json(record.model_dump_json())
    assert again.output == record.output
    assert again.to_message() == record.to_message()
    assert [call.after for call in again.to_message().tool_calls] == [1]


def test_a_record_without_output_builds_the_message_as_before() -> None:
    """A record made by hand (or saved before `output` existed): reasoning, text, calls."""
    record = StreamRecord(
        provider=P,
        text="hi",
        reasoning_parts=[ReasoningPart(text="r", signature="S")],
        terminal=Done(provider=P, attempt=1, stop_reason="stop"),
    )
    assert record.to_message() == Message.assistant(
        "hi", reasoning=[ReasoningPart(text="r", signature="S")]
    )


def test_wires_without_block_order_send_what_they_sent() -> None:
    """The chat wire sends one text and its calls; Gemini its text parts, then the
    calls: a call's place changes nothing there."""
    placed = Message(
        role="assistant",
        content=[TextPart(text="a"), TextPart(text="b")],
        tool_calls=[ToolCall(id="c1", name="f", after=1)],
    )
    plain = Message.assistant("ab", tool_calls=[ToolCall(id="c1", name="f")])
    for wire in (OpenAIChat(), Google()):
        bodies = [
            wire.build_body(ChatRequest(model="m", messages=[QUESTION, message]))
            for message in (placed, plain)
        ]
        key = "contents" if isinstance(wire, Google) else "messages"
        sent = [body[key][1] for body in bodies]
        if isinstance(wire, Google):  # two text parts where there were two
            assert [p.get("text") for p in sent[0]["parts"]] == ["a", "b", None]
        else:
            assert sent[0] == sent[1]


def test_a_place_beyond_the_content_is_last_and_a_negative_one_is_refused() -> None:
    message = Message(
        role="assistant",
        content=[TextPart(text="x")],
        tool_calls=[ToolCall(id="c1", name="f", after=7)],
    )
    blocks = Anthropic().build_body(ChatRequest(model="m", messages=[QUESTION, message]))
    assert [b["type"] for b in blocks["messages"][1]["content"]] == ["text", "tool_use"]
    try:
        ToolCall(id="c1", name="f", after=-1)
    except ValueError as error:
        assert "after" in str(error)
    else:
        raise AssertionError("a negative place was accepted")


# -- provider-run tools go back where they came ---------------------------------------

SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://weather.example/paris",
            "title": "Paris weather",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAw",
            "page_age": None,
        }
    ],
}


def _search(index: int) -> list[Any]:
    """A web search Anthropic runs: its call, its input in two fragments, its result."""
    return [
        start(index, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}),
        delta(index, {"type": "input_json_delta", "partial_json": '{"query": "Paris'}),
        delta(index, {"type": "input_json_delta", "partial_json": ' weather"}'}),
        stop(index),
        start(index + 1, SEARCH_RESULT),
        stop(index + 1),
    ]


async def test_a_search_between_thinking_blocks_goes_back_between_them(serve: Serve) -> None:
    """thinking, server_tool_use, web_search_tool_result, thinking, tool_use: the turn
    goes back whole, the search and its result as they came (the docs' multi-turn web
    search sends them back; vercel's and pydantic-ai's Anthropic models do). Before, both
    were left out and the two thinking blocks went back side by side."""
    first = sse(
        START,
        *thinking(0, "Search first.", "S1"),
        *_search(1),
        *thinking(3, "Now the clock.", "S2"),
        *call(4, "toolu_B", "clock", "{}"),
        end("tool_use"),
        STOP,
    )
    record, body = await loop(serve, first, [Message.tool("toolu_B", "14:05")])
    assert [event.type for event in record.server_tools] == [
        "server_tool_call",
        "server_tool_result",
    ]
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Search first.", "signature": "S1"},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "Paris weather"},
        },
        SEARCH_RESULT,
        {"type": "thinking", "thinking": "Now the clock.", "signature": "S2"},
        {"type": "tool_use", "id": "toolu_B", "name": "clock", "input": {}},
    ]


async def test_a_paused_turn_goes_back_to_be_continued(serve: Serve) -> None:
    """`pause_turn` after a search: "provide the response back as-is in a subsequent
    request to let Claude continue its turn". Before, a turn of server blocks alone
    became an empty message, and the history left it out."""
    first = sse(START, *_search(0), end("pause_turn"), STOP)
    recorder = Recorder(answers={"/messages": first})
    base_url = await serve(recorder.handle)
    async with rxllm.provider("anthropic", api_key="sk-probe", base_url=base_url) as p:
        record = await p.complete(ChatRequest(model="m", messages=[QUESTION]))
        assert isinstance(record.terminal, Done) and record.terminal.stop_reason == "pause"
        await p.complete(ChatRequest(model="m", messages=[QUESTION, record.to_message()]))
    sent = recorder.requests[-1]["body"]["messages"]
    assert [message["role"] for message in sent] == ["user", "assistant"]
    assert [block["type"] for block in sent[1]["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
    ]


def test_other_wires_leave_a_provider_run_tool_out() -> None:
    """The blocks are Anthropic's: the chat, Responses and Gemini wires send the turn as
    they would without them."""
    with_block = Message(
        role="assistant",
        content=[ServerToolPart(block=SEARCH_RESULT), TextPart(text="Sunny.")],
    )
    without = Message.assistant("Sunny.")
    for wire in (OpenAIChat(), OpenAIResponses(), Google()):
        bodies = [
            wire.build_body(ChatRequest(model="m", messages=[QUESTION, message]))
            for message in (with_block, without)
        ]
        assert bodies[0] == bodies[1], type(wire).__name__


def test_a_block_of_another_wire_is_not_sent_to_anthropic() -> None:
    foreign = Message(
        role="assistant",
        content=[
            ServerToolPart(block={"type": "web_search_call", "id": "ws_1"}),
            TextPart(text="Sunny."),
        ],
    )
    body = Anthropic().build_body(ChatRequest(model="m", messages=[QUESTION, foreign]))
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Sunny."}]


def test_telemetry_shows_a_provider_run_tool_in_the_input() -> None:
    message = Message(role="assistant", content=[ServerToolPart(block=SEARCH_RESULT)])
    shown = json.loads(str(_input_messages([QUESTION, message])[INPUT_MESSAGES]))
    result = {"type": "web_search", "content": SEARCH_RESULT["content"]}
    assert shown[1]["parts"] == [
        {
            "type": "server_tool_call_response",
            "id": "srvtoolu_1",
            "server_tool_call_response": result,
        }
    ]


def test_a_server_tool_without_its_block_says_nothing_of_one() -> None:
    """Only a wire that takes the block back sets `raw`; elsewhere the JSON has none."""
    call = rxllm.events.ServerToolCall(provider="google", attempt=1, call_id="c", name="x")
    assert "raw" not in call.model_dump_json()
    kept = rxllm.events.ServerToolResult(
        provider=P, attempt=1, call_id="c", name="web_search", raw=SEARCH_RESULT
    )
    assert rxllm.events.EventAdapter.validate_json(kept.model_dump_json()) == kept
