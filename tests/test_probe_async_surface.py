"""The async surface as SDK users drive it: cancellation in each of asyncio's ways,
`aclose()` from another task, and a stream carried to another event loop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from rxllm.local.server import shared_server_url
from tests.support import Serve

HANG = rxllm.ChatRequest(model="fault/hang", messages=[rxllm.Message.user("hi")])


async def consume(events: AsyncIterator[Event]) -> list[str]:
    return [event.type async for event in events]


async def cancel_task(p: rxllm.Provider, turn: Callable[[], Awaitable[Any]]) -> None:
    task = asyncio.ensure_future(turn())
    await asyncio.sleep(0.2)  # the answer's first word came, then keepalives only
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def timeout(p: rxllm.Provider, turn: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await turn()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def wait_for(p: rxllm.Provider, turn: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(turn(), 0.2)


@pytest.mark.parametrize("way", [cancel_task, timeout, wait_for])
@pytest.mark.parametrize("call", ["complete", "astream"])
async def test_a_cancelled_turn_raises_hangs_up_and_leaves_nothing(
    local_server: LocalServer, way: Any, call: str
) -> None:
    """Never swallowed into a record or the end of a loop: `CancelledError` reaches the
    cancelled task, `asyncio.timeout` and `wait_for` raise `TimeoutError`; the server
    sees the hang-up, and no task or unretrieved exception is left behind."""
    loop = asyncio.get_running_loop()
    problems: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: problems.append(context))
    p = local_server.provider()

    def turn() -> Awaitable[Any]:
        return p.complete(HANG) if call == "complete" else consume(p.astream(HANG))

    await way(p, turn)
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    await p.aclose()
    gc.collect()
    await asyncio.sleep(0)
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
    assert problems == []


async def test_async_with_left_unread_sends_nothing(local_server: LocalServer) -> None:
    p = local_server.provider()
    async with p.astream(HANG) as events:
        pass
    assert local_server.requests == []
    assert await consume(events) == []  # closed: ends at once, as a spent SDK stream
    await p.aclose()


@pytest.fixture
def backing_off(serve: Serve) -> Callable[[], Awaitable[tuple[str, list[int]]]]:
    """A server that rate-limits every request with a long `Retry-After`: a turn's
    consumer waits out the backoff. Returns the base URL and the requests' count."""

    async def start() -> tuple[str, list[int]]:
        hits: list[int] = []

        async def handler(request: web.Request) -> web.Response:
            hits.append(1)
            error = {"message": "Rate limit reached, try again later", "type": "requests"}
            return web.json_response({"error": error}, status=429, headers={"Retry-After": "20"})

        return await serve(handler), hits

    return start


async def test_aclose_from_another_task_ends_a_consumer_waiting_out_a_backoff(
    backing_off: Any,
) -> None:
    """A stop button's `aclose()` ends the loop of the task that iterates, whatever it
    is waiting for (here a retry's backoff, with no response open): it was left
    waiting for ever."""
    url, hits = await backing_off()
    p = rxllm.provider("custom", base_url=url, allow_private_network=True)
    events = p.astream(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    retried = asyncio.Event()
    seen: list[str] = []

    async def reader() -> None:
        async for event in events:
            seen.append(event.type)
            retried.set()  # then asks for the next event, which waits out the backoff

    task = asyncio.ensure_future(reader())
    await asyncio.wait_for(retried.wait(), timeout=5)
    await events.aclose()
    await asyncio.wait_for(task, timeout=5)  # was: never done
    assert seen == ["retry"] and len(hits) == 1  # and no next attempt was sent
    await p.aclose()


async def test_aclose_from_another_task_ends_a_consumer_reading_the_body(
    local_server: LocalServer,
) -> None:
    p = local_server.provider()
    events = p.astream(HANG)
    first = asyncio.Event()

    async def reader() -> list[str]:
        seen: list[str] = []
        async for event in events:
            seen.append(event.type)
            first.set()
        return seen

    task = asyncio.ensure_future(reader())
    await asyncio.wait_for(first.wait(), timeout=5)
    await asyncio.sleep(0.1)  # the reader waits on the keepalives now
    await events.aclose()
    assert await asyncio.wait_for(task, timeout=5) == ["reasoning"]
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    await p.aclose()


def _text_chunk(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return b"data: " + json.dumps({"model": "m", "choices": [choice]}).encode() + b"\n\n"


async def test_a_paused_consumer_holds_the_server_back_not_the_memory(serve: Serve) -> None:
    """The source reads when the consumer asks (`rxllm.sources.job`): while it pauses,
    what the server sends waits in the sockets' bounded buffers, and the server, its
    writes no longer drained, stops: nothing piles up in the client."""
    written = [0]
    finished = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        frame = _text_chunk("x" * 4096)
        with contextlib.suppress(ConnectionError):
            for _ in range(64 * 1024 * 1024 // len(frame)):  # 64 MB: more than any buffer
                await response.write(frame)
                written[0] += len(frame)
            finished.set()
        return response

    p = rxllm.provider("custom", base_url=await serve(handler), allow_private_network=True)
    async with p.astream(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])) as s:
        assert (await anext(s)).type == "text"
        for _ in range(100):  # the consumer pauses until the server can write no more
            before = written[0]
            await asyncio.sleep(0.05)
            if written[0] == before:
                break
        assert not finished.is_set() and written[0] < 32 * 1024 * 1024
        assert (await anext(s)).type == "text"  # and reading goes on where it stopped
    await p.aclose()


@pytest.fixture
def local_server_url() -> Iterator[str]:
    yield shared_server_url(pace=0)


def test_a_stream_carried_to_another_event_loop_says_so(local_server_url: str) -> None:
    """A notebook's or script's second `asyncio.run` with a stream the first one
    started: a clear error, not asyncio's "Future attached to a different loop" from
    inside the source (stepped, from the wrong loop, in this task)."""
    p = rxllm.provider("local", base_url=local_server_url)
    events = p.astream(HANG)

    async def first() -> str:
        return (await asyncio.wait_for(anext(events), 10)).type

    async def rest() -> list[str]:
        return await asyncio.wait_for(consume(events), 10)

    assert asyncio.run(first()) == "reasoning"
    with pytest.raises(RuntimeError, match="started on another event loop"):
        asyncio.run(rest())
    assert asyncio.run(rest()) == []  # hung up: it ends at once from then on
    asyncio.run(p.aclose())
