"""rxllm's operators composed as RxPY users compose them, on real streams from the
embedded local provider: subscribed without a scheduler, with RxPY's operators around
them, and with a consumer whose own code raises."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import reactivex
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

import rxllm
from rxllm.local import LocalServer
from rxllm.operators import cap_events, deadlines, texts


def ask(model: str, **params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model, messages=[rxllm.Message.user("weather in Paris?")], params=params
    )


@pytest.fixture
async def paced() -> AsyncIterator[LocalServer]:
    """A local server that paces its frames, so that a turn is still streaming when an
    operator cuts it."""
    async with LocalServer(pace=0.005) as server:
        yield server


class Consumer:
    """What a user's `.subscribe(on_next, on_error, on_completed)` sees, with an
    `on_next` that raises `bug` on the events `raise_on` picks."""

    def __init__(self, raise_on: Any = None) -> None:
        self.got: list[Any] = []
        self.errors: list[Exception] = []
        self.ended = asyncio.Event()
        self.bug = KeyError("the consumer's own bug")
        self._raise_on = raise_on

    def on_next(self, item: Any) -> None:
        self.got.append(item)
        if self._raise_on is not None and self._raise_on(item):
            raise self.bug

    def on_error(self, error: Exception) -> None:
        self.errors.append(error)
        self.ended.set()

    def on_completed(self) -> None:
        self.got.append("|")
        self.ended.set()

    def types(self) -> list[str]:
        return [getattr(item, "type", item) for item in self.got]

    async def run(self, events: Observable[Any], **subscribe: Any) -> Consumer:
        events.subscribe(self.on_next, self.on_error, self.on_completed, **subscribe)
        await asyncio.wait_for(self.ended.wait(), timeout=5)
        return self


def is_error(item: Any) -> bool:
    return getattr(item, "type", None) == "error"


async def test_subscribed_without_a_scheduler_a_degraded_retry_runs(
    local_server: LocalServer,
) -> None:
    """`p.stream(req).subscribe(...)` in async code, no scheduler: the rejection of
    `temperature` is retried without it. The next attempt was disposed as soon as it
    was subscribed: one request, a `retry` event, then nothing, for ever."""
    p = rxllm.provider("local", base_url=local_server.url)
    consumer = await Consumer().run(p.stream(ask("fault/reject_param", temperature=0.3)))
    assert consumer.types()[0] == "retry" and consumer.types()[-2:] == ["done", "|"]
    assert len(local_server.requests) == 2


async def test_subscribed_without_a_scheduler_a_retry_after_wait_runs_on_the_loop(
    local_server: LocalServer,
) -> None:
    """An overloaded server's `Retry-After` wait: it slept the event loop's thread
    (RxPY's CurrentThreadScheduler), then hung like the retry above."""
    p = rxllm.provider("local", base_url=local_server.url)
    consumer = await Consumer().run(p.stream(ask("fault/overloaded")))
    assert consumer.types()[0] == "retry" and consumer.types()[-2:] == ["done", "|"]


async def test_a_consumer_exception_on_a_user_cap_reaches_on_error_and_hangs_up(
    paced: LocalServer,
) -> None:
    """The cap unsubscribes the turn (hanging up) and then emits its limit error; what
    the consumer raises on it was lost: neither `on_error` nor completion came."""
    p = rxllm.provider("local", base_url=paced.url)
    consumer = Consumer(raise_on=is_error)
    await consumer.run(p.stream(ask("fault/answer")).pipe(cap_events(3)))
    assert consumer.errors == [consumer.bug]
    assert consumer.types()[-1] == "error" and consumer.got[-1].error.kind == "limit"
    await asyncio.wait_for(paced.disconnected.wait(), timeout=2)


async def test_a_consumer_exception_on_a_user_deadline_reaches_on_error(
    local_server: LocalServer,
) -> None:
    """It went to the event loop's exception handler ("Exception in callback")."""
    p = rxllm.provider("local", base_url=local_server.url)
    consumer = Consumer(raise_on=is_error)
    await consumer.run(p.stream(ask("fault/hang")).pipe(deadlines(idle=0.1, provider="local")))
    assert consumer.errors == [consumer.bug]
    assert consumer.got[-1].error.kind == "stalled"


async def test_a_failing_cancel_signal_reaches_on_error_not_the_signal(
    paced: LocalServer,
) -> None:
    """`cancel=` takes an Observable: when it fails, the turn ends with that error on
    `on_error` and hangs up. The error was raised back at the `Subject`'s caller, and
    the turn ran on."""
    p = rxllm.provider("local", base_url=paced.url)
    stop: Subject[None] = Subject()
    consumer = Consumer()
    p.stream(ask("fault/answer"), cancel=stop).subscribe(
        consumer.on_next, consumer.on_error, consumer.on_completed
    )
    await asyncio.sleep(0.05)
    stop.on_error(RuntimeError("the signal's bug"))
    await asyncio.wait_for(consumer.ended.wait(), timeout=5)
    assert [str(e) for e in consumer.errors] == ["the signal's bug"]
    assert "done" not in consumer.types()
    await asyncio.wait_for(paced.disconnected.wait(), timeout=2)


# What held when probed, kept as tests.


async def test_a_consumer_exception_on_text_is_on_error_never_an_error_event(
    paced: LocalServer,
) -> None:
    p = rxllm.provider("local", base_url=paced.url)
    consumer = Consumer(raise_on=lambda item: isinstance(item, str))
    await consumer.run(p.stream(ask("fault/answer")).pipe(texts()))
    assert consumer.errors == [consumer.bug] and len(consumer.got) == 1
    await asyncio.wait_for(paced.disconnected.wait(), timeout=2)


async def test_shared_by_two_subscribers_it_is_one_request(local_server: LocalServer) -> None:
    p = rxllm.provider("local", base_url=local_server.url)
    shared = p.stream(ask("fault/answer")).pipe(ops.share())
    words, kinds = Consumer(), Consumer()
    shared.pipe(texts()).subscribe(words.on_next, words.on_error, words.on_completed)
    await kinds.run(shared.pipe(ops.map(lambda event: event.type)))
    assert words.got[-1] == "|" and kinds.got[-2:] == ["done", "|"]
    assert "".join(words.got[:-1]).startswith("Hello from rxllm")
    assert len(local_server.requests) == 1


async def test_take_hangs_up_and_repeat_sends_the_request_again(
    paced: LocalServer,
) -> None:
    p = rxllm.provider("local", base_url=paced.url)
    consumer = await Consumer().run(p.stream(ask("fault/answer")).pipe(ops.take(3)))
    assert len(consumer.got) == 4
    await asyncio.wait_for(paced.disconnected.wait(), timeout=2)
    twice = await Consumer().run(
        p.stream(ask("fault/answer")).pipe(ops.repeat(2), ops.filter(lambda e: e.type == "done"))
    )
    assert twice.types() == ["done", "done", "|"]


async def test_rxpy_retry_does_not_see_provider_failures(local_server: LocalServer) -> None:
    """Failures are events: RxPY's `retry` and `catch` act on `on_error` only (bugs)."""
    p = rxllm.provider("local", base_url=local_server.url)
    consumer = await Consumer().run(p.stream(ask("fault/truncated")).pipe(ops.retry(3)))
    assert consumer.types()[-2:] == ["error", "|"] and len(local_server.requests) == 1


def test_a_subject_as_source_of_a_user_pipeline() -> None:
    source: Subject[rxllm.Event] = Subject()
    got: list[Any] = []
    source.pipe(cap_events(1), texts()).subscribe(got.append, got.append, lambda: got.append("|"))
    source.on_next(rxllm.TextDelta(provider="p", text="a"))
    source.on_next(rxllm.TextDelta(provider="p", text="b"))
    assert got == ["a", "|"] and source.observers == []


def test_of_an_observable_made_by_reactivex() -> None:
    got: list[Any] = []
    done = rxllm.Done(provider="p", stop_reason="stop")
    reactivex.of(rxllm.TextDelta(provider="p", text="a"), done).pipe(
        cap_events(5), texts()
    ).subscribe(got.append, got.append, lambda: got.append("|"))
    assert got == ["a", "|"]
