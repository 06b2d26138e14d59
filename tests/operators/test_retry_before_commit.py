from __future__ import annotations

import asyncio
from typing import Any

import pytest
import reactivex
from reactivex import abc
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler

from rxllm.events import Event, Failed, Retry
from rxllm.operators import retry_before_commit
from rxllm.operators._link import Operator
from rxllm.operators.retry_before_commit import Switch
from tests.operators.marbles import EVENTS, P

on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed


def announce(failure: Failed, delay: float = 0.0) -> Retry:
    return Retry(
        provider=P, attempt=failure.attempt, reason=failure.error, next_attempt=2,
        next_provider=P, delay=delay,
    )  # fmt: skip


def test_a_failure_before_commitment_switches_to_the_next_attempt() -> None:
    scheduler = TestScheduler()
    first = scheduler.create_cold_observable(on_next(10, EVENTS["x"]), on_completed(20))
    second = scheduler.create_cold_observable(
        on_next(10, EVENTS["a"]), on_next(20, EVENTS["d"]), on_completed(30)
    )
    asked: list[tuple[Failed, bool]] = []

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        asked.append((failure, committed))
        return Switch(announce(failure, delay=5.0), second, delay=5.0)

    results = scheduler.start(lambda: retry_before_commit(first, decide))
    values = [(m.time, m.value.kind, getattr(m.value, "value", None)) for m in results.messages]
    assert [v[:2] for v in values] == [(210, "N"), (225, "N"), (235, "N"), (245, "C")]
    assert isinstance(values[0][2], Retry) and values[0][2].delay == 5.0
    assert values[1][2] == EVENTS["a"] and values[2][2] == EVENTS["d"]
    assert asked == [(EVENTS["x"], False)]
    # The failed attempt is disposed at its failure; the next starts after the wait.
    assert first.subscriptions == [ReactiveTest.subscribe(200, 210)]
    assert second.subscriptions == [ReactiveTest.subscribe(215, 245)]


def test_after_commitment_decide_is_told_and_its_error_surfaces() -> None:
    scheduler = TestScheduler()
    first = scheduler.create_cold_observable(
        on_next(10, EVENTS["a"]), on_next(20, EVENTS["x"]), on_completed(30)
    )
    seen: list[bool] = []

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        seen.append(committed)
        return failure

    results = scheduler.start(lambda: retry_before_commit(first, decide))
    assert [m.value.kind for m in results.messages] == ["N", "N", "C"]
    assert results.messages[1].value.value == EVENTS["x"] and seen == [True]


def test_usage_commits_and_retry_events_do_not() -> None:
    scheduler = TestScheduler()
    retry = announce(EVENTS["x"])
    first = scheduler.create_cold_observable(
        on_next(10, retry), on_next(20, EVENTS["x"]), on_completed(30)
    )
    second = scheduler.create_cold_observable(
        on_next(10, EVENTS["u"]), on_next(20, EVENTS["x"]), on_completed(30)
    )
    seen: list[bool] = []

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        seen.append(committed)
        return Switch(announce(failure), second) if len(seen) == 1 else failure

    scheduler.start(lambda: retry_before_commit(first, decide))
    assert seen == [False, True]


def test_disposing_during_the_wait_cancels_the_next_attempt() -> None:
    scheduler = TestScheduler()
    first = scheduler.create_cold_observable(on_next(10, EVENTS["x"]))
    second = scheduler.create_cold_observable(on_next(10, EVENTS["a"]), on_completed(20))

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        return Switch(announce(failure), second, delay=500.0)

    results = scheduler.start(lambda: retry_before_commit(first, decide), disposed=400)
    assert [m.time for m in results.messages] == [210]
    assert second.subscriptions == []


def test_on_error_passes_through_and_is_never_retried() -> None:
    boom = KeyError("consumer")
    calls: list[Any] = []

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        calls.append(failure)
        return failure

    errors: list[Exception] = []
    retry_before_commit(reactivex.throw(boom), decide).subscribe(on_error=errors.append)
    assert errors == [boom] and calls == []


def test_a_bug_in_decide_reaches_on_error() -> None:
    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        raise RuntimeError("policy bug")

    errors: list[Exception] = []
    events: list[Event] = []
    retry_before_commit(reactivex.of(EVENTS["x"]), decide).subscribe(events.append, errors.append)
    assert events == [] and str(errors[0]) == "policy bug"


def test_a_long_chain_of_retries_does_not_grow_the_stack() -> None:
    count = 0

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        nonlocal count
        count += 1
        if count > 3000:  # deeper than Python's recursion limit if nested
            return failure
        return Switch(announce(failure), reactivex.of(EVENTS["x"]))

    events: list[Event] = []
    retry_before_commit(reactivex.of(EVENTS["x"]), decide).subscribe(events.append)
    assert sum(isinstance(e, Retry) for e in events) == 3000 and events[-1] == EVENTS["x"]


def test_without_a_scheduler_a_failure_that_arrives_later_switches_to_the_next_attempt() -> None:
    """Subscribed with no scheduler (`p.stream(req).subscribe(print)` in async code),
    a failure arrives outside any RxPY trampoline, as an HTTP response read on the loop
    does: the next attempt was subscribed at once inside the wait's scheduling, then
    disposed as the "old" attempt, and the turn hung with no terminal event."""
    first: Subject[Event] = Subject()
    second: Subject[Event] = Subject()

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        return Switch(announce(failure), second)

    got: list[Any] = []
    retry_before_commit(first, decide).subscribe(got.append, got.append, lambda: got.append("|"))
    first.on_next(EVENTS["x"])
    assert first.observers == [] and len(second.observers) == 1
    second.on_next(EVENTS["a"])
    second.on_next(EVENTS["d"])
    second.on_completed()
    assert isinstance(got[0], Retry) and got[1:] == [EVENTS["a"], EVENTS["d"], "|"]


def test_the_retry_event_comes_before_the_next_attempt_even_when_it_starts_at_once() -> None:
    first: Subject[Event] = Subject()

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        return Switch(announce(failure), reactivex.of(EVENTS["a"], EVENTS["d"]))

    got: list[Any] = []
    retry_before_commit(first, decide).subscribe(got.append, got.append, lambda: got.append("|"))
    first.on_next(EVENTS["x"])
    assert [getattr(e, "type", e) for e in got] == ["retry", "text", "done", "|"]


def test_a_source_that_fails_and_completes_while_subscribing_still_switches() -> None:
    """A source of rxllm's own operators that emits at once (a replay) cannot be
    unsubscribed before its subscribe returns: its completion, after the failure that
    replaced it, ended the whole stream before the next attempt played."""

    def first(observer: abc.ObserverBase[Event], _: abc.SchedulerBase | None = None) -> Any:
        observer.on_next(EVENTS["x"])
        observer.on_completed()

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        return Switch(announce(failure), reactivex.of(EVENTS["a"], EVENTS["d"]))

    got: list[Any] = []
    retry_before_commit(Operator(first), decide).subscribe(
        got.append, got.append, lambda: got.append("|")
    )
    assert [getattr(e, "type", e) for e in got] == ["retry", "text", "done", "|"]


async def test_without_a_scheduler_a_wait_runs_on_the_loop_without_blocking_it() -> None:
    """The wait before the next attempt ran on RxPY's CurrentThreadScheduler, which
    sleeps the thread ("Do not schedule blocking work!"): in async code, the event loop
    stopped for the whole `Retry-After`. It runs on the loop's timer now."""
    first: Subject[Event] = Subject()
    calling = False
    subscribed_while_calling: list[bool] = []

    def second(observer: abc.ObserverBase[Event], _: abc.SchedulerBase | None = None) -> Any:
        subscribed_while_calling.append(calling)
        observer.on_next(EVENTS["a"])
        observer.on_next(EVENTS["d"])
        observer.on_completed()

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        return Switch(announce(failure, 0.01), reactivex.create(second), delay=0.01)

    got: list[Any] = []
    done = asyncio.Event()
    retry_before_commit(first, decide).subscribe(got.append, got.append, done.set)
    calling = True
    first.on_next(EVENTS["x"])
    calling = False
    await asyncio.wait_for(done.wait(), timeout=2)
    assert subscribed_while_calling == [False]
    assert [getattr(e, "type", e) for e in got] == ["retry", "text", "done"]


def test_disposing_on_the_retry_event_starts_no_next_attempt() -> None:
    scheduler = TestScheduler()
    first = scheduler.create_cold_observable(on_next(10, EVENTS["x"]))
    second = scheduler.create_cold_observable(on_next(10, EVENTS["a"]), on_completed(20))

    def decide(failure: Failed, committed: bool) -> Failed | Switch:
        return Switch(announce(failure), second)

    results = scheduler.start(lambda: retry_before_commit(first, decide).pipe(ops.take(1)))
    assert [m.value.kind for m in results.messages] == ["N", "C"]
    assert second.subscriptions == []


@pytest.mark.parametrize(
    ("args", "match"), [((None, lambda f, c: f), "first"), ((reactivex.empty(), None), "decide")]
)
def test_bad_arguments_are_refused_at_the_call(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(TypeError, match=match):
        retry_before_commit(*args)
