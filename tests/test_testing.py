"""`rxllm.testing`: an app's agent loop tested against scripted turns over real HTTP, on
every wire, through the public fixture as a user's test would use it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import rxllm
from rxllm.local import WIRES
from rxllm.testing import Scripted, call, fault, reply, scripted

WEATHER = rxllm.Tool(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    },
)
CLOCK = rxllm.Tool(name="get_time")


async def agent(p: rxllm.Provider, question: str) -> tuple[rxllm.StreamRecord, list[str]]:
    """A user's app: run tools until the model answers; returns the answer and the tools
    it ran."""
    messages = [rxllm.Message.user(question)]
    ran: list[str] = []
    for _ in range(5):
        record = await p.complete(
            rxllm.ChatRequest(model="m", messages=messages, tools=[WEATHER, CLOCK])
        )
        if not record.tool_calls:
            return record, ran
        messages.append(
            rxllm.Message.assistant(record.text, [c.to_call() for c in record.tool_calls])
        )
        for c in record.tool_calls:
            ran.append(f"{c.name}({c.arguments})")
            messages.append(rxllm.Message.tool(c.call_id, "21 degrees"))
    raise AssertionError("the agent loop did not end")


@pytest.mark.parametrize("wire", WIRES)
async def test_an_agent_loop_against_scripted_turns(wire: Any) -> None:
    async with scripted(
        reply(
            "Let me check.",
            reasoning="Weather needs a tool.",
            calls=[call("get_weather", city="Oslo")],
        ),
        reply("It is 21 degrees in Oslo.", calls=[call("get_time")]),
        reply("Sunny and 21 degrees.", reasoning="Both tools answered."),
        wire=wire,
    ) as llm:
        record, ran = await agent(llm.provider, "weather in Oslo?")
    assert ran == ["get_weather({'city': 'Oslo'})", "get_time({})"]
    assert record.text == "Sunny and 21 degrees." and record.reasoning == "Both tools answered."
    assert record.terminal.type == "done" and record.terminal.stop_reason == "stop"
    assert len(llm.requests) == 3 and llm.turns_left == 0


async def test_a_call_without_arguments_fits_the_tool_the_user_asks_about() -> None:
    async with scripted(reply(calls=[call()]), wire="google") as llm:
        record, ran = await agent(llm.provider, "what is the weather like?")
    assert ran == ["get_weather({'city': 'Paris', 'days': 1})"]
    # the turns ran out: the local provider answered the tool's result itself
    assert record.text.startswith("get_weather returned 21 degrees")


async def test_faults_and_retries_take_turns() -> None:
    """A rejected parameter, then the answer to rxllm's retry without it."""
    async with scripted(fault("reject_param"), reply("Recovered."), wire="openai") as llm:
        request = rxllm.ChatRequest(
            model="m", messages=[rxllm.Message.user("hi")], params={"temperature": 0.2}
        )
        record = await llm.provider.complete(request)
    assert record.text == "Recovered." and len(record.attempts) == 2
    assert "temperature" in llm.requests[0] and "temperature" not in llm.requests[1]


async def test_a_refusal_and_a_committed_error() -> None:
    async with scripted(reply(refusal="I can't."), fault("error_event")) as llm:
        ask = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        refused = await llm.provider.complete(ask)
        failed = await llm.provider.complete(ask)
    assert refused.refusal == "I can't." and refused.text == ""
    assert failed.terminal.type == "error" and failed.text  # output came before the error


async def test_the_fixture(rxllm_scripted: Callable[..., Awaitable[Scripted]]) -> None:
    llm = await rxllm_scripted(reply("From the fixture."), wire="anthropic")
    record = await llm.provider.complete(
        rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    )
    assert record.text == "From the fixture." and record.provider == "anthropic"


async def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown wire"):
        scripted(wire="carrier-pigeon")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="start it first"):
        _ = scripted().provider
    async with scripted(reply(calls=[call()])) as llm:  # no tool offered to pick from
        record = await llm.provider.complete(
            rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        )
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None and error.status == 404 and len(record.attempts) == 1
    assert "call() without a name needs the request to offer a tool" in error.message


async def test_options_reach_the_provider() -> None:
    async with scripted(fault("hang"), idle_timeout=0.2) as llm:
        record = await llm.provider.complete(
            rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        )
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None and error.kind == "stalled" and "idle_timeout" in error.message
