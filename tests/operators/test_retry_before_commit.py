from __future__ import annotations

from typing import Any

import reactivex
from reactivex.testing import ReactiveTest, TestScheduler

from rxllm.events import Event, Failed, Retry
from rxllm.operators import retry_before_commit
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
