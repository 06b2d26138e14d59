"""`rxllm.testing` used as a user testing an app would: cleanup, sync code, other event
loops, a request still streaming at the end, and misuse that must fail clearly."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from typing import Any

import pytest

import rxllm
from rxllm.local import WIRES
from rxllm.local.script import Prompt, Say, Script
from rxllm.testing import Call, call, fault, reply, scripted

HI = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
WEATHER = rxllm.Tool(
    name="get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], tools=[WEATHER])


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def thread_names() -> list[str]:
    return sorted(t.name for t in threading.enumerate())


async def agent(p: rxllm.Provider) -> str:
    """A user's agent: run the weather tool until the model answers."""
    messages = [rxllm.Message.user("weather in Oslo?")]
    for _ in range(4):
        request = rxllm.ChatRequest(model="m", messages=messages, tools=[WEATHER])
        record = (await p.complete(request)).raise_for_error()
        if not record.tool_calls:
            return record.text
        messages.append(record.to_message())
        for c in record.tool_calls:
            messages.append(rxllm.Message.tool(c.call_id, f"21 degrees in {c.arguments['city']}"))
    raise AssertionError("the agent loop did not end")


def loop_turns() -> tuple[Any, ...]:
    return (reply("Checking.", calls=[call("get_weather", city="Oslo")]), reply("21 degrees."))


# -- cleanup ---------------------------------------------------------------------------


async def test_leaving_the_context_leaves_no_socket_thread_or_task() -> None:
    fds, threads = open_fds(), thread_names()
    async with scripted(*loop_turns(), wire="anthropic") as llm:
        assert await agent(llm.provider) == "21 degrees."
    # at once: no keep-alive connection of the provider left in its pool, no server
    assert open_fds() == fds
    assert thread_names() == threads
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_bad_option_leaves_no_server_behind() -> None:
    fds, threads = open_fds(), thread_names()
    with pytest.raises(rxllm.ConfigError, match="bogus"):
        async with scripted(reply("x"), bogus=1):
            pass
    assert open_fds() == fds and thread_names() == threads


async def test_leaving_with_a_request_still_streaming_does_not_wait_for_it() -> None:
    async with asyncio.timeout(5):  # the server's graceful shutdown waited 60 s and more
        async with scripted(fault("hang")) as llm:
            turn = asyncio.create_task(llm.provider.complete(HI))
            await asyncio.sleep(0.2)
        record = await turn
    assert record.terminal.type == "cancelled"  # the turn ends: its provider was closed


@pytest.mark.parametrize("wire", WIRES)
async def test_hang_stalls_on_every_wire_as_the_docs_say(wire: Any) -> None:
    """docs/testing.md: `scripted(fault("hang"), idle_timeout=0.2)` ends with
    `error(kind="stalled")`; on the Anthropic and Responses wires the hang sent no output
    first, so only the 600 s first-event deadline could end it."""
    async with asyncio.timeout(5), scripted(fault("hang"), wire=wire, idle_timeout=0.2) as llm:
        record = await llm.provider.complete(HI)
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None and error.kind == "stalled", record.terminal
    assert error.message.startswith("idle_timeout expired")


# -- sync code, other loops, concurrency ------------------------------------------------


def test_sync_code_uses_it_as_a_plain_context_manager() -> None:
    """A sync app (it runs its own event loop per call) tested from a sync test."""
    threads = thread_names()

    def sync_app(p: rxllm.Provider) -> str:
        return asyncio.run(agent(p))

    with scripted(*loop_turns(), reply("Again: 21 degrees."), wire="google") as llm:
        assert sync_app(llm.provider) == "21 degrees."
        assert asyncio.run(llm.provider.complete(HI)).text == "Again: 21 degrees."  # a new loop
    assert len(llm.requests) == 3 and llm.turns_left == 0
    assert thread_names() == threads


async def test_sync_app_code_that_blocks_the_running_loop() -> None:
    """Sync app code called from an async test blocks the loop while it waits for its
    own thread: a server on the test's loop could never answer it."""
    with (
        scripted(reply("From a blocked loop."), wire="openai-responses") as llm,
        concurrent.futures.ThreadPoolExecutor(1) as pool,
    ):
        work = pool.submit(asyncio.run, llm.provider.complete(HI))
        record = work.result(timeout=5)  # blocks this loop, as sync code does
    assert record.text == "From a blocked loop."


def test_started_in_one_loop_and_used_in_another() -> None:
    """A fixture's loop (module scope, `asyncio.run` in a helper) that is not the test's:
    requests to a server on a loop that no longer runs waited for the 300 s deadlines."""
    llm = asyncio.run(scripted(reply("Another loop.")).start())
    try:

        async def ask() -> rxllm.StreamRecord:
            async with asyncio.timeout(5):
                return await llm.provider.complete(HI)

        assert asyncio.run(ask()).text == "Another loop."
    finally:
        asyncio.run(llm.close())


async def test_two_scripted_providers_at_once_and_concurrent_turns() -> None:
    async with (
        scripted(*loop_turns(), wire="anthropic") as a,
        scripted(*loop_turns(), wire="openai") as b,
    ):
        answers = await asyncio.gather(agent(a.provider), agent(b.provider))
    assert list(answers) == ["21 degrees.", "21 degrees."]
    async with scripted(reply("1"), reply("2"), reply("3")) as llm:
        records = await asyncio.gather(*(llm.provider.complete(HI) for _ in range(3)))
    assert sorted(r.text for r in records) == ["1", "2", "3"]


async def test_call_ids_do_not_depend_on_what_ran_before() -> None:
    """A test that checks a call id passes alone and after other tests (pytest-xdist
    deals tests to workers in any order): ids come from the turn, not a global count."""
    ids = []
    for _ in range(2):
        async with scripted(reply(calls=[call("get_weather"), call("get_weather")])) as llm:
            ids.append([c.call_id for c in (await llm.provider.complete(ASK)).tool_calls])
    assert ids[0] == ids[1] and len(set(ids[0])) == 2


# -- misuse ------------------------------------------------------------------------------


def test_misuse_is_refused_where_it_is_written() -> None:
    with pytest.raises(ValueError, match=r"unknown fault 'rate_limit'.*rate_limited"):
        fault("rate_limit")
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        scripted("nope")
    with pytest.raises(TypeError, match=r"turn 2 is not a turn \(int\)"):
        scripted(reply("x"), 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the function reply itself"):
        scripted(reply)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"arguments .* must be a dict.*list"):
        Call("get_weather", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"arguments .* must be a dict.*str"):
        Call("get_weather", "city=Paris")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not JSON"):
        call("get_weather", when=object())
    with pytest.raises(TypeError, match="calls takes a list"):
        reply(calls=call("get_weather"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stop must be one of"):
        reply("x", stop="bogus")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be a str"):
        reply(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pace"):
        scripted(reply("x"), pace=-1)
    with pytest.raises(TypeError):
        call("get_weather", "call_1")  # type: ignore[call-arg]  # the id is a keyword
    # 10.0.0.1 is a real address on many networks: only a guard may be sent there
    with pytest.raises(ValueError, match="ssrf_guard=True"):
        scripted(fault("redirect_private"))
    scripted(fault("redirect_private"), ssrf_guard=True, allow_private_network=["127.0.0.1/32"])


def _boom(prompt: Prompt) -> Script:
    raise ZeroDivisionError("division by zero")


@pytest.mark.parametrize(
    ("turn", "says"),
    [
        (_boom, "ZeroDivisionError: division by zero"),
        (lambda prompt: "hi", "returned str, not a Script or reply(...)"),
        (lambda prompt: None, "returned NoneType, not a Script or reply(...)"),
        (Script(steps=(Say("x"),), stop="bogus"), "KeyError"),  # type: ignore[arg-type]
    ],
    ids=["raises", "returns-str", "returns-None", "bad-script"],
)
async def test_a_broken_turn_ends_in_an_error_that_says_why(turn: Any, says: str) -> None:
    """It was a 500 that rxllm retried, and the retry got the local provider's own
    answer: the test saw "Hello from rxllm's local provider!" as if all went well."""
    async with asyncio.timeout(5), scripted(turn, wire="anthropic") as llm:
        record = await llm.provider.complete(HI)
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None, record.text
    assert "scripted turn 1" in error.message and says in error.message
    assert len(record.attempts) == 1 and not record.text


async def test_a_function_may_return_a_reply() -> None:
    async with scripted(lambda prompt: reply(f"You said: {prompt.text}")) as llm:
        record = await llm.provider.complete(HI)
    assert record.text == "You said: hi"


async def test_turns_run_out_into_the_usual_answer_never_a_hang() -> None:
    async with asyncio.timeout(5), scripted(reply("Only one."), wire="google") as llm:
        first = await llm.provider.complete(HI)
        second = await llm.provider.complete(HI)
    assert first.text == "Only one." and second.terminal.type == "done" and second.text
    assert llm.turns_left == 0 and len(llm.requests) == 2
