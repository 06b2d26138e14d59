"""Turns subscribed from async code with a thread scheduler (RxPY's ThreadPoolScheduler,
NewThreadScheduler, EventLoopScheduler, whose waits the loop times, or one that times
its own on its threads), or cancelled from another thread, while their HTTP source runs
on the loop. Every call to the observer comes from the loop's thread, one at a time,
and every attempt runs on the loop the first one found. Without a running loop, the
scheduler given times the waits."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
import reactivex
from aiohttp import web
from reactivex import Observable, abc
from reactivex.scheduler import EventLoopScheduler, NewThreadScheduler, ThreadPoolScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler, AsyncIOThreadSafeScheduler
from reactivex.subject import Subject

import rxllm
from rxllm.events import Event, Failed, Retry
from rxllm.local.server import shared_server_url
from rxllm.operators import deadlines, retry_before_commit
from rxllm.operators.retry_before_commit import Switch
from tests.operators.marbles import EVENTS, P
from tests.support import Handler, Recorder, Serve

# A scheduler that times its own waits (GatedPool) holds a pool thread for each of the
# deadlines a provider arms by default until it is due (RxPY's EventLoopScheduler waits
# out a cancelled item): off, where not tested.
QUIET = {"first_event_timeout": None, "idle_timeout": None}

THREAD_SCHEDULERS: list[Callable[[], abc.SchedulerBase]] = [
    lambda: ThreadPoolScheduler(4),
    NewThreadScheduler,
]


class Consumer:
    """An observer that notes each call, the thread it came from, and whether it began
    while another was still running. `during_text` runs inside the first text event's
    `on_next`; `ended` is resolved on the loop when the stream completes or fails."""

    def __init__(self, during_text: Callable[[], None] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        self.ended: asyncio.Future[None] = self.loop.create_future()
        self.events: list[Event] = []
        self.errors: list[Exception] = []
        self.threads: set[int] = set()
        self.overlapped = False
        self._inside = 0
        self._lock = threading.Lock()
        self._during_text = during_text

    def _enter(self) -> None:
        with self._lock:
            self._inside += 1
            self.overlapped |= self._inside > 1
        self.threads.add(threading.get_ident())

    def _leave(self) -> None:
        with self._lock:
            self._inside -= 1

    def _end(self) -> None:
        self.loop.call_soon_threadsafe(self._resolve)

    def _resolve(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)

    def subscribe(
        self, events: Observable[Event], scheduler: abc.SchedulerBase | None
    ) -> abc.DisposableBase:
        return events.subscribe(self.on_next, self.on_error, self.on_completed, scheduler=scheduler)

    def on_next(self, event: Event) -> None:
        self._enter()
        try:
            self.events.append(event)
            hook, self._during_text = self._during_text, None
            if hook is not None and event.type == "text":
                hook()
            elif hook is not None:
                self._during_text = hook
        finally:
            self._leave()

    def on_error(self, error: Exception) -> None:
        self._enter()
        self.errors.append(error)
        self._leave()
        self._end()

    def on_completed(self) -> None:
        self._enter()
        self._leave()
        self._end()

    def kinds(self) -> list[str]:
        return [event.type for event in self.events]


def ask(**params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], params=params)


TEXT_CHUNK = {
    "id": "c",
    "object": "chat.completion.chunk",
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}],
}


def one_text_then_silence(until: asyncio.Event) -> Handler:
    """A handler that sends one text chunk, then nothing until `until` is set."""

    async def handle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"data: {json.dumps(TEXT_CHUNK)}\n\n".encode())
        await until.wait()
        return response

    return handle


@pytest.mark.parametrize("make_scheduler", THREAD_SCHEDULERS, ids=["pool", "new_thread"])
async def test_a_retry_under_a_thread_scheduler_runs_on_the_turns_loop(
    serve: Serve, make_scheduler: Callable[[], abc.SchedulerBase]
) -> None:
    """The next attempt finds the loop the first one found (it used to end the turn
    with `on_error`: "must be subscribed inside a running asyncio event loop", when the
    retry was timed on a worker thread)."""
    rejection = {
        "error": {
            "message": "Unsupported parameter: 'temperature' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_parameter",
        }
    }
    recorder = Recorder((400, rejection))
    url = await serve(recorder.handle)
    consumer = Consumer()
    async with rxllm.provider("openai", api_key="sk-test", base_url=url) as p:
        subscription = consumer.subscribe(p.stream(ask(temperature=0.2)), make_scheduler())
        await asyncio.wait_for(consumer.ended, 10)
        subscription.dispose()
    assert consumer.errors == []
    assert consumer.kinds() == ["retry", "text", "done"]
    assert [r["body"].get("temperature") for r in recorder.requests] == [0.2, None]
    assert consumer.threads == {threading.get_ident()}


async def test_a_fallback_under_a_thread_scheduler_starts_the_next_provider_on_the_loop(
    serve: Serve,
) -> None:
    first = Recorder((500, {"error": {"message": "boom"}}))
    second = Recorder()
    consumer = Consumer()
    p1 = rxllm.provider(
        "openai", api_key="sk-test", base_url=await serve(first.handle), max_attempts=1
    )
    p2 = rxllm.provider("openai", api_key="sk-test", base_url=await serve(second.handle))
    async with rxllm.fallback([p1, p2]) as both:
        subscription = consumer.subscribe(both.stream(ask()), ThreadPoolScheduler(4))
        await asyncio.wait_for(consumer.ended, 10)
        subscription.dispose()
    assert consumer.errors == []
    assert consumer.kinds() == ["retry", "text", "done"]
    assert (len(first.requests), len(second.requests)) == (1, 1)


class GatedPool(ThreadPoolScheduler):
    """A ThreadPoolScheduler whose timers of `seconds` fire when the test says so
    (`release`) and say when they have (`fired`): the race between a timer's thread
    and the loop's, made to happen every time. It times its own waits (its own
    `schedule_relative`), so rxllm leaves them to it, on its threads."""

    def __init__(self, seconds: float) -> None:
        super().__init__(4)
        self.seconds = seconds
        self.release = threading.Event()
        self.fired = threading.Event()

    def schedule_relative(self, duetime: Any, action: Any, state: Any = None) -> Any:
        if self.to_seconds(duetime) != self.seconds:
            return super().schedule_relative(duetime, action, state)

        def gated(scheduler: abc.SchedulerBase, state_: Any) -> Any:
            self.release.wait(10)
            try:
                return action(scheduler, state_)
            finally:
                self.fired.set()

        return super().schedule(gated, state)


async def test_a_deadline_fired_on_a_worker_thread_never_overlaps_an_event(
    serve: Serve,
) -> None:
    """`total_timeout` expires on the pool's thread while the loop's thread is inside
    the consumer's `on_next` for a text event: its error waits for that call to
    return, and comes from the loop's thread (Rx's observer calls are serialized)."""
    total = 321.0
    pool = GatedPool(total)
    fired_in_time: list[bool] = []

    def expire_now() -> None:  # on the loop's thread, inside on_next(text)
        pool.release.set()
        fired_in_time.append(pool.fired.wait(10))

    consumer = Consumer(during_text=expire_now)
    silence = asyncio.Event()
    url = await serve(one_text_then_silence(silence))
    async with rxllm.provider(
        "openai", api_key="sk-test", base_url=url, total_timeout=total, **QUIET
    ) as p:
        subscription = consumer.subscribe(p.stream(ask()), pool)
        try:
            await asyncio.wait_for(consumer.ended, 10)
        finally:
            subscription.dispose()
            silence.set()  # the handler returns, or the server's cleanup waits for it
    assert fired_in_time == [True]
    assert not consumer.overlapped
    assert consumer.errors == []
    assert consumer.kinds() == ["text", "error"]
    error = consumer.events[-1]
    assert error.type == "error" and error.error.kind == "stalled"
    assert error.error.message.startswith("total_timeout expired")
    assert consumer.threads == {threading.get_ident()}


@pytest.mark.parametrize("subscribed", ["in_the_loop", "from_another_thread"])
async def test_a_cancel_fired_in_another_thread_never_overlaps_an_event(
    serve: Serve, subscribed: str
) -> None:
    """The signal fires in another thread while the loop's thread is inside the
    consumer's `on_next` for a text event: `cancelled` waits for that call to return,
    and comes from the loop's thread, whether the stream was subscribed in the loop or
    from another thread (with `AsyncIOThreadSafeScheduler(loop)`, as documented)."""
    signal: Subject[bool] = Subject()
    fired_in_time: list[bool] = []

    def cancel_from_a_thread() -> None:  # on the loop's thread, inside on_next(text)
        canceller = threading.Thread(target=signal.on_next, args=(True,))
        canceller.start()
        canceller.join(10)
        fired_in_time.append(not canceller.is_alive())

    consumer = Consumer(during_text=cancel_from_a_thread)
    silence = asyncio.Event()
    url = await serve(one_text_then_silence(silence))
    async with rxllm.provider("openai", api_key="sk-test", base_url=url) as p:
        events = p.stream(ask(), cancel=signal)
        if subscribed == "in_the_loop":
            subscription = consumer.subscribe(events, None)
        else:
            scheduler = AsyncIOThreadSafeScheduler(asyncio.get_running_loop())
            subscription = await asyncio.to_thread(consumer.subscribe, events, scheduler)
        try:
            await asyncio.wait_for(consumer.ended, 10)
        finally:
            subscription.dispose()
            silence.set()
    assert fired_in_time == [True]
    assert not consumer.overlapped
    assert consumer.errors == []
    assert consumer.kinds() == ["text", "cancelled"]
    assert consumer.threads == {threading.get_ident()}


def test_the_loops_own_scheduler_given_in_another_thread_arms_timers_thread_safely() -> None:
    """Subscribed from a plain thread with `AsyncIOScheduler(loop)` (the loop running
    elsewhere): the deadlines' timers are armed from that thread, where the loop's
    `call_later` is not safe (asyncio's debug mode refuses it: the turn used to end
    with `on_error` "Non-thread-safe operation invoked on an event loop other than
    the current one")."""
    loop = asyncio.new_event_loop()
    loop.set_debug(True)
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    try:
        p = rxllm.provider("local", base_url=shared_server_url(pace=0))
        ended = threading.Event()
        events: list[Event] = []
        errors: list[Exception] = []

        def failed(error: Exception) -> None:
            errors.append(error)
            ended.set()

        subscription = p.stream(ask()).subscribe(
            events.append, failed, ended.set, scheduler=AsyncIOScheduler(loop)
        )
        assert ended.wait(10), "the stream never ended"
        subscription.dispose()
        asyncio.run_coroutine_threadsafe(p.aclose(), loop).result(5)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(5)
        loop.close()
    assert errors == []
    assert events[-1].type == "done"


class CountedThreads:
    """A thread factory for RxPY's thread schedulers that counts the threads it starts."""

    def __init__(self) -> None:
        self.started = 0

    def __call__(self, target: Callable[[], None]) -> threading.Thread:
        self.started += 1
        return threading.Thread(target=target, daemon=True)


REJECTIONS = {
    # Retried at once, without the parameter.
    "dropped_parameter": (
        400,
        {
            "error": {
                "message": "Unsupported parameter: 'temperature' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_parameter",
            }
        },
    ),
    # Retried after a backoff wait.
    "server_error": (500, {"error": {"message": "boom"}}),
}


@pytest.mark.parametrize("rejection", list(REJECTIONS))
@pytest.mark.parametrize("kind", ["pool_of_one", "event_loop", "new_thread"])
async def test_a_retry_under_a_thread_scheduler_is_not_held_by_cancelled_deadlines(
    serve: Serve, kind: str, rejection: str
) -> None:
    """With the default deadlines (600 s to the first event): RxPY's thread schedulers
    wait out a cancelled timer on the thread that timed it, so the first attempt's
    deadline kept `ThreadPoolScheduler(1)`'s one worker, and the retry's wait, queued
    behind it, never ran (the turn never ended). Armed on the loop's thread, their
    waits are the loop's: the turn ends `done` after attempt 2, and the scheduler
    starts no thread for it."""
    threads = CountedThreads()
    pool = ThreadPoolScheduler(1)
    scheduler: abc.SchedulerBase = {
        "pool_of_one": lambda: pool,
        "event_loop": lambda: EventLoopScheduler(threads),
        "new_thread": lambda: NewThreadScheduler(threads),
    }[kind]()
    recorder = Recorder(REJECTIONS[rejection])
    url = await serve(recorder.handle)
    consumer = Consumer()
    try:
        async with rxllm.provider("openai", api_key="sk-test", base_url=url) as p:
            subscription = consumer.subscribe(p.stream(ask(temperature=0.2)), scheduler)
            await asyncio.wait_for(consumer.ended, 10)
            subscription.dispose()
        # The pool's one worker is free once the turn has ended: no timer holds it.
        await asyncio.wait_for(asyncio.wrap_future(pool.executor.submit(int)), 10)
    finally:
        pool.executor.shutdown(wait=False, cancel_futures=True)
        if isinstance(scheduler, EventLoopScheduler):
            scheduler.dispose()
    assert consumer.errors == []
    assert consumer.kinds() == ["retry", "text", "done"]
    assert consumer.events[-1].attempt == 2
    assert len(recorder.requests) == 2
    assert consumer.threads == {threading.get_ident()}
    assert threads.started == 0


@pytest.mark.parametrize("kind", ["pool", "event_loop", "new_thread"])
def test_on_a_plain_thread_the_waits_run_on_the_schedulers_threads(kind: str) -> None:
    """No event loop runs in this thread: the retry's wait and the next attempt's
    first-event deadline are timed by the scheduler given, and fire on its threads."""
    threads = CountedThreads()
    scheduler: abc.SchedulerBase = {
        "pool": lambda: ThreadPoolScheduler(2),
        "event_loop": lambda: EventLoopScheduler(threads),
        "new_thread": lambda: NewThreadScheduler(threads),
    }[kind]()
    second: Observable[Event] = reactivex.never().pipe(
        deadlines(first_event=0.05, provider=P, attempt=2)
    )

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        if failure.error.kind == "stalled":  # the second attempt's deadline: surfaced
            return failure
        retry = Retry(
            provider=P, attempt=1, reason=failure.error, next_attempt=2, next_provider=P,
            delay=0.02,
        )  # fmt: skip
        return Switch(retry, second, delay=0.02)

    seen: list[tuple[Event, int]] = []
    ended = threading.Event()

    def on_next(event: Event) -> None:
        seen.append((event, threading.get_ident()))

    subscription = retry_before_commit(reactivex.of(EVENTS["x"]), decide).subscribe(
        on_next, lambda _: ended.set(), ended.set, scheduler=scheduler
    )
    try:
        assert ended.wait(10), "the stream never ended"
    finally:
        subscription.dispose()
        if isinstance(scheduler, ThreadPoolScheduler):
            scheduler.executor.shutdown(wait=False)
        elif isinstance(scheduler, EventLoopScheduler):
            scheduler.dispose()
    assert [event.type for event, _ in seen] == ["retry", "error"]
    expired = seen[-1][0]
    assert isinstance(expired, Failed) and expired.attempt == 2
    assert expired.error.message.startswith("first_event_timeout expired")
    assert threading.get_ident() not in {thread for _, thread in seen}
    assert threads.started >= (0 if kind == "pool" else 1)


def test_a_loop_ending_in_a_backoff_under_a_thread_scheduler_ends_the_turn() -> None:
    """The wait a rejection asked for (429, `retry-after: 30`) runs on the loop, as it
    does without a scheduler: `asyncio.run` returning during it ends the turn with
    `cancelled` for the attempt that never started (it was timed on the pool, and the
    subscriber heard nothing after `retry`)."""
    heard: list[Any] = []
    pool = ThreadPoolScheduler(2)

    async def main() -> None:
        async def handler(request: web.Request) -> web.Response:
            return web.json_response(
                {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                status=429,
                headers={"retry-after": "30"},
            )

        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        p = rxllm.provider("openai", api_key="sk-test", base_url=url)
        p.stream(ask()).subscribe(
            heard.append,
            lambda error: heard.append(("on_error", error)),
            lambda: heard.append("on_completed"),
            scheduler=pool,
        )
        async with asyncio.timeout(10):
            while not heard:
                await asyncio.sleep(0.01)
        # main returns during the 30 s wait: asyncio.run cancels what is left

    try:
        asyncio.run(main())
    finally:
        pool.executor.shutdown(wait=False, cancel_futures=True)
    assert [getattr(event, "type", event) for event in heard] == [
        "retry",
        "cancelled",
        "on_completed",
    ]
    assert (heard[1].provider, heard[1].attempt) == ("openai", 2)


def _pending_event_waits() -> list[asyncio.Task[Any]]:
    """The running loop's tasks still waiting on an `asyncio.Event` (a `cancel=`'s)."""
    return [
        task
        for task in asyncio.all_tasks()
        if not task.done() and getattr(task.get_coro(), "__qualname__", "") == "Event.wait"
    ]


async def test_an_asyncio_event_cancels_a_stream_subscribed_from_another_thread(
    serve: Serve,
) -> None:
    """`cancel=asyncio.Event()` on a stream subscribed from another thread with
    `AsyncIOThreadSafeScheduler(loop)`, as documented: the event is waited on on the
    loop, and setting it there ends the turn with `cancelled` (the turn used to end
    with `on_error` "There is no current event loop in thread ...", sending nothing)."""
    loop = asyncio.get_running_loop()
    cancel = asyncio.Event()
    silence = asyncio.Event()
    consumer = Consumer(during_text=lambda: None)
    asked: list[web.Request] = []
    handle = one_text_then_silence(silence)

    async def counted(request: web.Request) -> web.StreamResponse:
        asked.append(request)
        return await handle(request)

    url = await serve(counted)
    async with rxllm.provider("openai", api_key="sk-test", base_url=url) as p:
        events = p.stream(ask(), cancel=cancel)
        scheduler = AsyncIOThreadSafeScheduler(loop)
        subscription = await asyncio.to_thread(consumer.subscribe, events, scheduler)
        try:
            async with asyncio.timeout(10):
                while not consumer.events and not consumer.ended.done():
                    await asyncio.sleep(0.01)
            # set from a thread, as a thread's user would
            await asyncio.to_thread(loop.call_soon_threadsafe, cancel.set)
            await asyncio.wait_for(consumer.ended, 10)
        finally:
            subscription.dispose()
            silence.set()
    assert consumer.errors == []
    assert len(asked) == 1
    assert consumer.kinds() == ["text", "cancelled"]
    assert consumer.threads == {threading.get_ident()}
    assert _pending_event_waits() == []


async def test_a_stream_with_an_asyncio_event_disposed_from_another_thread(
    serve: Serve,
) -> None:
    """Disposing, from another thread, a stream subscribed on the loop with
    `cancel=asyncio.Event()` stops the wait on the event on the loop: in asyncio's
    debug mode `dispose()` used to raise "Non-thread-safe operation invoked on an event
    loop other than the current one", leaving the wait pending ("Task was destroyed but
    it is pending!" when the event went)."""
    loop = asyncio.get_running_loop()
    was_debug = loop.get_debug()
    loop.set_debug(True)
    reported: list[dict[str, Any]] = []
    previous_handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        cancel = asyncio.Event()
        silence = asyncio.Event()
        consumer = Consumer()
        url = await serve(one_text_then_silence(silence))
        async with rxllm.provider("openai", api_key="sk-test", base_url=url) as p:
            subscription = consumer.subscribe(p.stream(ask(), cancel=cancel), None)
            try:
                async with asyncio.timeout(10):
                    while not consumer.events:
                        await asyncio.sleep(0.01)
                assert len(_pending_event_waits()) == 1
                await asyncio.to_thread(subscription.dispose)
                async with asyncio.timeout(10):
                    while _pending_event_waits():
                        await asyncio.sleep(0.01)
            finally:
                silence.set()
        del cancel
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous_handler)
        loop.set_debug(was_debug)
    assert consumer.errors == []
    assert consumer.kinds() == ["text"]
    assert not consumer.ended.done()
    assert reported == []
