from __future__ import annotations

from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.operators import cap_events
from tests.operators.marbles import BOOM, EVENTS, raise_on


def test_within_the_cap_everything_passes() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-b-u-d-|", EVENTS).pipe(cap_events(3)))
        assert results == exp("-a-b-u-d-|", EVENTS)


def test_past_the_cap_the_turn_ends_with_a_limit_error() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        *(ReactiveTest.on_next(10 * i, EVENTS["a"]) for i in range(1, 6)),
        ReactiveTest.on_completed(60),
    )
    results = scheduler.start(lambda: source.pipe(cap_events(3))).messages
    assert [m.time for m in results] == [210, 220, 230, 240, 240]
    error = results[3].value.value.error
    assert error.kind == "limit" and "max_events (3)" in error.message
    assert source.subscriptions == [ReactiveTest.subscribe(200, 240)]


def test_a_consumer_exception_on_the_limit_error_reaches_on_error() -> None:
    """The source is unsubscribed before the limit error is emitted (its HTTP response
    closed), so it cannot report what the observer raises on it: that observer's
    `on_error` does, as with `settle_once`'s terminal. (It was lost: no `on_error`, no
    completion, the turn silent for ever.)"""
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        *(ReactiveTest.on_next(10 * i, EVENTS["a"]) for i in range(1, 6)),
        ReactiveTest.on_completed(60),
    )
    results = scheduler.start(lambda: source.pipe(cap_events(2), raise_on("error")))
    assert results.messages == [
        ReactiveTest.on_next(210, EVENTS["a"]),
        ReactiveTest.on_next(220, EVENTS["a"]),
        ReactiveTest.on_error(230, BOOM),
    ]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 230)]


def test_the_same_capped_observable_counts_afresh_for_each_subscription() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-a-b-d-|", EVENTS).pipe(cap_events(3), ops.repeat(2)))
    nexts = [m.value.value.type for m in results if m.value.kind == "N"]
    assert nexts == ["text", "text", "text", "error"] * 2
    assert results[-1].value.kind == "C"


@pytest.mark.parametrize("limit", [-1, "3", None, 2.5, True])
def test_bad_limits_are_refused_at_the_call(limit: Any) -> None:
    """`cap_events(-1)` was accepted and dropped every event, the terminal too, and
    never completed; the others failed at the first event."""
    with pytest.raises((TypeError, ValueError), match="limit"):
        cap_events(limit)


def test_a_source_that_plays_inside_its_subscribe_is_capped_and_disposed() -> None:
    """A source that emits synchronously (a replay) goes over the cap before its
    subscription is known: the turn ends at the cap all the same, nothing passes after
    it, and the source is disposed once its subscribe returns."""
    from reactivex.disposable import Disposable

    from rxllm.operators._link import Operator

    disposed: list[bool] = []

    def subscribe(observer: Any, _: Any = None) -> Any:
        for _ in range(5):
            observer.on_next(EVENTS["a"])
        observer.on_next(EVENTS["d"])
        observer.on_completed()
        return Disposable(lambda: disposed.append(True))

    seen: list[Any] = []
    ended: list[str] = []
    Operator(subscribe).pipe(cap_events(2)).subscribe(
        seen.append, lambda e: ended.append(f"error {e}"), lambda: ended.append("completed")
    )
    assert [event.type for event in seen] == ["text", "text", "error"]
    assert seen[-1].error.kind == "limit" and ended == ["completed"]
    assert disposed == [True]
