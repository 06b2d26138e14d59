"""A source's coroutine stepped by its consumer (`rxllm.sources.job`): it must see
every wait end as it would in a task of its own, and a consumer must never be left
waiting on a job nobody finishes. Real coroutines and futures; the last tests run
`astream` against a loopback server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.sources.job import Driver, Job
from tests.support import Serve


async def _drive(job: Job) -> int:
    """Step `job` to its end in this task; returns the steps it took."""
    steps = 0
    while not job.finished:
        await job.advance()
        steps += 1
    return steps


async def test_a_driven_job_gets_what_each_wait_gives_in_the_consumers_task() -> None:
    loop = asyncio.get_running_loop()
    given: asyncio.Future[str] = loop.create_future()
    failing: asyncio.Future[str] = loop.create_future()
    seen: list[Any] = []

    async def source() -> None:
        seen.append(await given)
        try:
            await failing
        except LookupError as exc:
            seen.append(f"raised {exc}")
        await asyncio.sleep(0)
        seen.append(asyncio.current_task())

    loop.call_soon(given.set_result, "result")
    loop.call_later(0.01, failing.set_exception, LookupError("gone"))
    tasks = len(asyncio.all_tasks())
    job = Job(source(), loop)
    steps = await _drive(job)
    assert seen == ["result", "raised gone", asyncio.current_task()]
    assert len(asyncio.all_tasks()) == tasks  # no task of its own
    assert steps == 4  # its start, then once per wait: each wait waited on, not polled


async def test_cancel_wakes_the_consumer_and_reaches_only_the_coroutine() -> None:
    loop = asyncio.get_running_loop()
    seen: list[str] = []

    async def source() -> None:
        try:
            await loop.create_future()  # never done
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    job = Job(source(), loop)
    await job.advance()  # started: it waits now
    loop.call_later(0.01, job.cancel)
    await job.advance()  # woken by the cancel, not raised here
    assert seen == ["cancelled"]
    assert job.finished
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_cancelling_the_consumer_reaches_the_coroutine_then_the_consumer() -> None:
    loop = asyncio.get_running_loop()
    seen: list[str] = []

    async def source() -> None:
        try:
            await loop.create_future()
        finally:
            seen.append("unwound")

    job = Job(source(), loop)
    consumer = asyncio.ensure_future(_drive(job))
    await asyncio.sleep(0.01)
    assert job.parked
    consumer.cancel()
    await asyncio.gather(consumer, return_exceptions=True)
    assert consumer.cancelled()
    assert seen == ["unwound"]
    assert job.finished


async def test_a_timeout_inside_the_source_stays_inside_it() -> None:
    """aiohttp's connect timeout cancels `current_task()`, the consumer's: the
    coroutine sees its `TimeoutError`, the consumer goes on."""
    loop = asyncio.get_running_loop()
    seen: list[str] = []

    async def source() -> None:
        try:
            async with asyncio.timeout(0.01):
                await loop.create_future()
        except TimeoutError:
            seen.append("timed out")

    job = Job(source(), loop)
    await _drive(job)
    assert seen == ["timed out"]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_job_cancelled_while_nobody_waits_unwinds_in_its_own_task() -> None:
    loop = asyncio.get_running_loop()
    unwound: asyncio.Future[asyncio.Task[Any] | None] = loop.create_future()

    async def source() -> None:
        try:
            await loop.create_future()
        finally:
            unwound.set_result(asyncio.current_task())

    job = Job(source(), loop)
    await job.advance()
    job.cancel()  # the consumer is elsewhere (handing out queued events)
    assert not job.driven
    assert await asyncio.wait_for(unwound, 1) is not asyncio.current_task()
    assert job.finished


async def test_spawned_while_waited_on_it_goes_on_in_its_own_task_after_the_wait() -> None:
    loop = asyncio.get_running_loop()
    gate: asyncio.Future[None] = loop.create_future()
    ran_in: list[asyncio.Task[Any] | None] = []

    async def source() -> None:
        await gate
        ran_in.append(asyncio.current_task())
        await asyncio.sleep(0)

    job = Job(source(), loop)
    await job.advance()
    loop.call_soon(job.spawn)
    loop.call_later(0.01, gate.set_result, None)
    await job.advance()  # returns after the wait, without stepping it
    assert not ran_in
    await asyncio.sleep(0.05)
    assert job.finished
    assert ran_in and ran_in[0] is not asyncio.current_task()


async def test_a_driver_drives_one_job_replacing_a_cancelled_one() -> None:
    loop = asyncio.get_running_loop()
    woken: list[str] = []

    class Consumer(Driver):
        def wake(self) -> None:
            woken.append("woken")

    async def waits() -> None:
        await loop.create_future()

    driver = Consumer(loop)
    first = Job(waits(), loop)
    driver.start(first)
    assert driver.job is first and woken == ["woken"]
    beside = Job(waits(), loop)
    driver.start(beside)  # another live source (user code merged two): its own task
    assert driver.job is first and not beside.driven
    await first.advance()
    first.cancel()
    retry = Job(waits(), loop)
    driver.start(retry)  # the next attempt
    assert driver.job is retry and retry.driven
    driver.close()
    assert driver.job is None and not retry.driven
    for job in (beside, retry):
        job.cancel()
    await asyncio.sleep(0.01)
    assert first.finished and beside.finished and retry.finished


def _chat_chunk(text: str) -> bytes:
    return b'data: {"choices":[{"index":0,"delta":{"content":"' + text.encode() + b'"}}]}\n\n'


_END = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


async def test_astream_runs_its_source_in_the_consumers_task(serve: Serve) -> None:
    """One task per stream: the consumer's. The request goes out within the first
    `__anext__`, before it ever waits."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for text in ("a", "b", "c"):
            await response.write(_chat_chunk(text))
            await asyncio.sleep(0.01)
        await response.write(_END)
        return response

    base_url = await serve(handler)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider("openai", api_key="sk-test", base_url=base_url) as provider:
        stream = provider.astream(request)
        step = stream.__anext__()
        waited_on = step.send(None)  # run the first `__anext__` to its first wait
        job = stream._sink.job  # type: ignore[union-attr]
        assert job is not None and job.parked and waited_on is job._waiting
        step.close()
        await stream.aclose()
        texts = []
        async with provider.astream(request) as events:
            async for event in events:
                assert not _source_tasks()
                texts.append(event.text if isinstance(event, rxllm.TextDelta) else event.type)
    assert texts == ["a", "b", "c", "done"]


def _source_tasks() -> list[asyncio.Task[Any]]:
    """Tasks running a source on its own (the server's tasks share the loop)."""
    return [t for t in asyncio.all_tasks() if "Job." in t.get_coro().__qualname__]


@pytest.mark.parametrize("deadline", ["read_timeout", "idle_timeout"])
async def test_a_slow_consumer_is_not_a_stalled_provider(serve: Serve, deadline: str) -> None:
    """The source reads only when the consumer asks: time the consumer spends
    elsewhere is not the provider's silence. A real silence still stalls."""
    silent = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for text in ("a", "b", "c"):
            await response.write(_chat_chunk(text))
            await asyncio.sleep(0.01)  # one read each, well within read_timeout
        if "/silent/" in request.path:
            await silent.wait()
        await response.write(_END)
        return response

    base_url = await serve(handler)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    options = {deadline: 0.05}
    async with rxllm.provider("openai", api_key="k", base_url=base_url, **options) as provider:
        slow: list[str] = []
        async for event in provider.astream(request):
            slow.append(event.type)
            await asyncio.sleep(0.2)  # four read timeouts per event
        assert slow[-1] == "done"
    silent_url = base_url.replace("/v1", "/silent/v1")
    async with rxllm.provider("openai", api_key="k", base_url=silent_url, **options) as provider:
        last = [event async for event in provider.astream(request)][-1]
    silent.set()
    assert isinstance(last, rxllm.Failed)
    assert last.error.kind == "stalled"
    assert deadline in last.error.message
