"""The local provider calls only tools it was offered, the one the user asks about, with
arguments that fit the tool's schema, and answers a tool's result instead of calling
again: an agent loop against it ends, on every wire."""

from __future__ import annotations

from typing import Any

import pytest

import rxllm
from rxllm.local import WIRES, LocalServer
from rxllm.local.script import Prompt, asked_tool, sample_arguments, script_for

STOCK = rxllm.Tool(
    name="get_stock_price",
    description="The latest price of a stock",
    parameters={
        "type": "object",
        "properties": {
            "symbol": {"type": "string"},
            "currency": {"type": "string", "enum": ["USD", "EUR"]},
            "days": {"type": "integer"},
        },
        "required": ["symbol"],
    },
)
WEATHER = rxllm.Tool(
    name="get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def provider(server: LocalServer, wire: str) -> rxllm.Provider:
    return server.provider(wire)


def ask(messages: list[rxllm.Message], tools: list[rxllm.Tool]) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="local", messages=messages, tools=tools)


@pytest.mark.parametrize("wire", WIRES)
async def test_only_an_offered_tool_is_called(local_server: LocalServer, wire: str) -> None:
    question = rxllm.Message.user("What is the stock price of ACME today?")
    record = await provider(local_server, wire).complete(ask([question], [STOCK]))
    (call,) = record.tool_calls
    assert call.name == "get_stock_price"
    assert call.arguments == {"symbol": "example symbol", "currency": "USD", "days": 1}
    assert record.terminal.type == "done" and record.terminal.stop_reason == "tool_use"


@pytest.mark.parametrize("wire", WIRES)
async def test_no_tool_fits_so_it_answers(local_server: LocalServer, wire: str) -> None:
    question = rxllm.Message.user("What's the weather in Paris?")
    record = await provider(local_server, wire).complete(ask([question], [STOCK]))
    assert record.tool_calls == [], "get_weather was not offered"
    assert record.text.startswith("Hello from rxllm's local provider!")


@pytest.mark.parametrize("wire", WIRES)
async def test_an_agent_loop_ends(local_server: LocalServer, wire: str) -> None:
    """Call, run the tool, send its result back: the next turn answers with it."""
    p = provider(local_server, wire)
    messages = [rxllm.Message.user("What's the weather in Paris?")]
    turns = 0
    while turns < 5:
        turns += 1
        record = await p.complete(ask(messages, [WEATHER, STOCK]))
        assert record.terminal.type == "done"
        if not record.tool_calls:
            break
        messages.append(
            rxllm.Message.assistant(record.text, [c.to_call() for c in record.tool_calls])
        )
        for call in record.tool_calls:
            assert call.name == "get_weather"
            messages.append(rxllm.Message.tool(call.call_id, '{"temperature": 21}'))
    assert turns == 2
    assert record.text.startswith("get_weather returned ")
    assert "21" in record.text and record.terminal.stop_reason == "stop"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_call_id_is_new_in_its_conversation(local_server: LocalServer, wire: str) -> None:
    """The weather asked again after its answer, then a call forced after a result: each
    call gets an id the conversation has not used, as a provider's are (an app keeping
    results by call id, as the AI SDK's chat does, would otherwise give the later call
    the earlier one's result); the same conversation gets the same ids again."""
    p = provider(local_server, wire)
    messages: list[rxllm.Message] = []
    ids: list[str] = []
    for city in ("Paris", "Rome", "Oslo"):
        messages.append(rxllm.Message.user(f"What's the weather in {city}?"))
        request = ask(messages, [WEATHER])
        record = await p.complete(request)
        (call,) = record.tool_calls
        assert (await p.complete(request)).tool_calls[0].call_id == call.call_id
        ids.append(call.call_id)
        messages += [record.to_message(), rxllm.Message.tool(call.call_id, "sunny")]
        answer = await p.complete(ask(messages, [WEATHER]))
        messages.append(answer.to_message())
    forced = rxllm.ChatRequest(
        model="local", messages=messages, tools=[WEATHER], tool_choice="get_weather"
    )
    ids += [call.call_id for call in (await p.complete(forced)).tool_calls]
    assert len(ids) == 4 and len(set(ids)) == 4, ids


@pytest.mark.parametrize("wire", WIRES)
async def test_each_response_of_a_conversation_has_its_own_id(
    local_server: LocalServer, wire: str
) -> None:
    """A call, its result answered, then code execution in two turns: every response has
    an id of its own, as a provider's do, and so every call (rxllm names the calls a wire
    sends without an id after their response: Groq's executed tools on the chat wire);
    the same request gets the same id again."""
    p = provider(local_server, wire)
    messages = [rxllm.Message.user("What's the weather in Paris?")]
    response_ids: list[str | None] = []
    call_ids: list[set[str]] = []
    for model in ("local", "local", "fault/code_execution", "fault/code_execution"):
        request = rxllm.ChatRequest(model=model, messages=messages, tools=[WEATHER])
        record = await p.complete(request)
        again = await p.complete(request)
        assert isinstance(record.terminal, rxllm.Done) and isinstance(again.terminal, rxllm.Done)
        assert again.terminal.response_id == record.terminal.response_id
        response_ids.append(record.terminal.response_id)
        call_ids.append({c.call_id for c in [*record.tool_calls, *record.server_tools]})
        messages = [*messages, record.to_message()]
        messages += [rxllm.Message.tool(c.call_id, "sunny") for c in record.tool_calls]
        if not record.tool_calls:
            messages.append(rxllm.Message.user("Again, please."))
    assert None not in response_ids and len(set(response_ids)) == 4, response_ids
    # the weather call, nothing, one provider-run tool, another one
    assert [len(ids) for ids in call_ids] == [1, 0, 1, 1], call_ids
    assert len(set().union(*call_ids)) == 3, call_ids


@pytest.mark.parametrize("wire", WIRES)
async def test_an_agent_loop_with_to_message(local_server: LocalServer, wire: str) -> None:
    """`record.to_message()` is the assistant's turn for the history on every wire: its
    reasoning (sent back where the wire takes it), text and calls."""
    p = provider(local_server, wire)
    messages = [rxllm.Message.user("What's the weather in Paris?")]
    first = await p.complete(ask(messages, [WEATHER]))
    (call,) = first.tool_calls
    turn = first.to_message()
    assert turn.tool_calls == [call.to_call()] and turn.text == first.text
    messages += [turn, rxllm.Message.tool(call.call_id, '{"temperature": 21}')]
    record = await p.complete(ask(messages, [WEATHER]))
    assert record.terminal.type == "done" and record.tool_calls == []
    assert "21" in record.text


def test_the_asked_tool_is_the_one_whose_name_the_user_says() -> None:
    tools: dict[str, Any] = {"get_stock_price": {}, "getWeather": {}, "send_email": {}}
    assert asked_tool("stock price of ACME?", tools) == "get_stock_price"
    assert asked_tool("Weather in Rome", tools) == "getWeather"  # camelCase words too
    assert asked_tool("email my boss", tools) == "send_email"
    assert asked_tool("get me something", tools) is None  # `get` says no tool
    assert asked_tool("stock price", {}) is None


def test_sample_arguments_fit_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": ["integer", "null"]},
            "hourly": {"type": "boolean", "default": False},
            "where": {"type": "object", "properties": {"lat": {"type": "number"}}},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    assert sample_arguments(schema) == {
        "city": "Paris",
        "unit": "celsius",
        "days": 1,
        "hourly": False,
        "where": {"lat": 1.5},
        "tags": [],
    }
    assert sample_arguments({"type": "object"}) == {}


def test_a_fault_wins_over_everything() -> None:
    prompt = Prompt("fault/refusal", "stock price", {"get_stock_price": {}}, ("x", "y"))
    assert script_for(prompt).steps[0].__class__.__name__ == "Refuse"


def test_the_server_names_the_wires_it_speaks(local_server: LocalServer) -> None:
    assert [local_server.provider(wire).name for wire in WIRES] == [
        "local",
        "openai-responses",
        "anthropic",
        "google",
    ]
    with pytest.raises(ValueError, match="the local server speaks openai, openai-responses"):
        local_server.provider("carrier-pigeon")


@pytest.mark.parametrize("wire", WIRES)
async def test_a_tool_result_with_an_image_is_answered(
    local_server: LocalServer, wire: str
) -> None:
    """A result with an image: the chat wire sends its images as a user message after
    the tool messages, which the local server took for the user speaking again (it
    answered its greeting instead of the result)."""
    p = provider(local_server, wire)
    messages = [rxllm.Message.user("What's the weather in Paris?")]
    first = await p.complete(ask(messages, [WEATHER]))
    (call,) = first.tool_calls
    result = rxllm.Message(
        role="tool",
        tool_call_id=call.call_id,
        content=[
            rxllm.TextPart(text='{"temperature": 21}'),
            rxllm.ImagePart(url="data:image/png;base64,iVBORw0KGgo="),
        ],
    )
    record = await p.complete(ask([*messages, first.to_message(), result], [WEATHER]))
    assert record.text.startswith("get_weather returned "), record.text
