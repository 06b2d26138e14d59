"""Any point of cancellation gives exactly one terminal event, over real HTTP.

The local provider on loopback streams a text turn or a tool-call turn, pacing its
frames; the client stops after the k-th event (k drawn by hypothesis, 0 = before the
first) in three ways: a `cancel=asyncio.Event()` given to `astream`, the same signal
given to `stream` with a plain subscriber, and `break` out of `async for`. The events
the turn would have produced are known beforehand: the server's own frames for the
request, replayed.

Each example runs in a fresh event loop with its own server, so what it leaves
behind (tasks, exceptions reported to the loop) is checked too.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reactivex.scheduler.eventloop import AsyncIOScheduler

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from rxllm.local.script import script_for
from rxllm.local.wire_openai_chat import frames, prompt_of
from tests.hypothesis_support import examples, outcome

# A frame every 4 ms: enough for a cancel (two loop iterations) to act before the next
# frame arrives, short enough that a whole turn takes about 0.2 s.
PACE = 0.004
WEATHER = rxllm.Tool(name="get_weather", parameters={"type": "object", "properties": {}})
TURNS = {
    "text": rxllm.ChatRequest(model="rxllm-local", messages=[rxllm.Message.user("hello")]),
    "tool call": rxllm.ChatRequest(
        model="fault/weather", messages=[rxllm.Message.user("weather?")], tools=[WEATHER]
    ),
}
TERMINALS = ("done", "error", "cancelled")
# A cancel after event k with at least this many events still to come cannot race the
# end: two paced frames at least separate them (see PACE).
MARGIN = 3


def natural(request: rxllm.ChatRequest) -> list[Event]:
    """The events the local provider's answer to `request` makes, uncancelled."""
    body = rxllm.provider("local", base_url="http://127.0.0.1:9/v1").wire.build_body(request)
    return outcome(b"".join(frames(script_for(prompt_of(body)), body)), "local")


NATURAL = {name: natural(request) for name, request in TURNS.items()}


def run(scenario: Callable[[LocalServer], Awaitable[None]]) -> None:
    """Run `scenario` against a fresh server in a fresh loop; nothing may be left over."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        problems: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, context: problems.append(context))
        async with LocalServer(pace=PACE) as server:
            async with asyncio.timeout(10):
                await scenario(server)
        gc.collect()  # a dropped iterator hangs up in __del__
        await asyncio.sleep(0)
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not left, left
        assert not problems, problems

    asyncio.run(main())


async def hung_up(server: LocalServer) -> None:
    await asyncio.wait_for(server.disconnected.wait(), timeout=5)
    assert server.disconnects == 1


def check_cut(events: list[Event], expected: list[Event], k: int) -> bool:
    """`events` is the turn cut after at least k events by one `cancelled`, or (when
    the cancel came within MARGIN of the end) the whole turn. True if cancelled."""
    types = [e.type for e in events]
    assert sum(t in TERMINALS for t in types) == 1 and types[-1] in TERMINALS, types
    if events[-1].type == "done":
        assert k > len(expected) - MARGIN, (k, types)
        assert events == expected
        return False
    assert events[-1].type == "cancelled", types
    assert k < len(expected), "a cancel after the terminal event changed nothing"
    assert events[-1].provider == "local" and events[-1].reason
    body = events[:-1]
    assert len(body) >= k and body == expected[: len(body)]
    return True


@pytest.mark.parametrize("turn", sorted(TURNS))
@settings(max_examples=examples(10))
@given(data=st.data())
def test_a_cancel_signal_in_astream_ends_with_one_cancelled(turn: str, data: st.DataObject) -> None:
    expected = NATURAL[turn]
    k = data.draw(st.integers(0, len(expected)), label="cancel after event")

    async def scenario(server: LocalServer) -> None:
        cancel = asyncio.Event()
        provider = rxllm.provider("local", base_url=server.url)
        stream = provider.astream(TURNS[turn], cancel=cancel)
        events: list[Event] = []
        if k == 0:
            cancel.set()
        async for event in stream:
            events.append(event)
            if len(events) == k:
                cancel.set()
        with pytest.raises(StopAsyncIteration):  # nothing after the terminal event
            await stream.__anext__()
        if k == len(expected):
            assert events == expected  # a cancel after the end changes nothing
        elif check_cut(events, expected, k) and k > 0:
            await hung_up(server)

    run(scenario)


@pytest.mark.parametrize("turn", sorted(TURNS))
@settings(max_examples=examples(10))
@given(data=st.data())
def test_a_cancel_signal_to_a_subscriber_ends_with_one_cancelled_then_completion(
    turn: str, data: st.DataObject
) -> None:
    expected = NATURAL[turn]
    k = data.draw(st.integers(0, len(expected)), label="cancel after event")

    async def scenario(server: LocalServer) -> None:
        loop = asyncio.get_running_loop()
        cancel = asyncio.Event()
        provider = rxllm.provider("local", base_url=server.url)
        events: list[Event] = []
        errors: list[Exception] = []
        completed = loop.create_future()
        after: list[Event] = []

        def on_next(event: Event) -> None:
            (after if completed.done() else events).append(event)
            if len(events) == k:
                cancel.set()

        subscription = provider.stream(TURNS[turn], cancel=cancel).subscribe(
            on_next,
            errors.append,
            lambda: completed.set_result(True),
            scheduler=AsyncIOScheduler(loop),
        )
        if k == 0:
            cancel.set()
        await completed
        if k > 0 and check_cut(events, expected, k):
            await hung_up(server)
        elif k == 0:
            assert [e.type for e in events] == ["cancelled"]
        await asyncio.sleep(3 * PACE)  # room for a late frame to (wrongly) arrive
        subscription.dispose()
        assert not errors and not after

    run(scenario)


@pytest.mark.parametrize("turn", sorted(TURNS))
@settings(max_examples=examples(5))
@given(data=st.data())
def test_break_after_any_event_hangs_up(turn: str, data: st.DataObject) -> None:
    expected = NATURAL[turn]
    # Leaving after the terminal event is not leaving early: 1..len-1.
    k = data.draw(st.integers(1, len(expected) - 1), label="break after event")

    async def scenario(server: LocalServer) -> None:
        provider = rxllm.provider("local", base_url=server.url)
        events: list[Event] = []
        async for event in provider.astream(TURNS[turn]):
            events.append(event)
            if len(events) == k:
                break
        assert events == expected[:k]
        if k <= len(expected) - MARGIN:
            await hung_up(server)

    run(scenario)
