from __future__ import annotations

from typing import Any

import pytest
import reactivex
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.events import Cancelled, Event, Retry
from rxllm.operators import cancel_on
from tests.operators.marbles import BOOM, EVENTS, P, raise_on


def test_signal_ends_the_stream_with_cancelled() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        signal = cold("------x", {"x": True})
        results = start(cold("-a-b-a-b-a-d-|", EVENTS).pipe(cancel_on(signal, P)))
    values = [m.value for m in results]
    assert [v.kind for v in values] == ["N", "N", "N", "N", "C"]
    assert isinstance(values[-2].value, Cancelled) and values[-2].value.provider == P
    assert results[-1].time == 206


def test_no_signal_mirrors_the_source() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        signal = cold("-", {})
        results = start(cold("-a-b-d-|", EVENTS).pipe(cancel_on(signal, P)))
        assert results == exp("-a-b-d-|", EVENTS)


def test_cancel_unsubscribes_the_source() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        ReactiveTest.on_next(10, EVENTS["a"]), ReactiveTest.on_next(50, EVENTS["d"])
    )
    signal = scheduler.create_cold_observable(ReactiveTest.on_next(20, True))
    results = scheduler.start(lambda: source.pipe(cancel_on(signal, P, reason="user")))
    assert source.subscriptions == [ReactiveTest.subscribe(200, 220)]
    assert results.messages[-2].value.value == Cancelled(provider=P, reason="user")


def test_a_consumer_exception_on_cancelled_reaches_on_error() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        signal = cold("---x", {"x": True})
        results = start(cold("-a-b-d-|", EVENTS).pipe(cancel_on(signal, P), raise_on("cancelled")))
        assert results == exp("-a-#", EVENTS, error=BOOM)


def test_a_failing_signal_reaches_on_error_and_unsubscribes_the_source() -> None:
    """As with RxPY's `take_until`: the signal's error is the observer's `on_error`, and
    the source is unsubscribed. (It was raised at whoever called the signal's
    `on_error`, a `Subject`'s caller or the scheduler, and the stream ran on.)"""
    boom = RuntimeError("the signal's bug")
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        ReactiveTest.on_next(10, EVENTS["a"]),
        ReactiveTest.on_next(50, EVENTS["d"]),
        ReactiveTest.on_completed(60),
    )
    signal = scheduler.create_cold_observable(ReactiveTest.on_error(20, boom))
    results = scheduler.start(lambda: source.pipe(cancel_on(signal, P)))
    assert results.messages == [
        ReactiveTest.on_next(210, EVENTS["a"]),
        ReactiveTest.on_error(220, boom),
    ]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 220)]
    assert signal.subscriptions == [ReactiveTest.subscribe(200, 220)]


def test_a_signal_that_completes_without_an_item_cancels_nothing() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-b-d-|", EVENTS).pipe(cancel_on(cold("--|"), P)))
        assert results == exp("-a-b-d-|", EVENTS)


def test_a_subject_signal_cancels_and_the_source_is_unsubscribed() -> None:
    stop: Subject[None] = Subject()
    source: Subject[Event] = Subject()
    got: list[Any] = []
    source.pipe(cancel_on(stop, P)).subscribe(got.append, got.append, lambda: got.append("|"))
    source.on_next(EVENTS["a"])
    stop.on_next(None)
    assert got[0] == EVENTS["a"] and isinstance(got[1], Cancelled) and got[2] == "|"
    assert source.observers == [] and stop.observers == []
    source.on_next(EVENTS["b"])
    assert len(got) == 3


def test_disposing_unsubscribes_the_source_and_the_signal() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(ReactiveTest.on_next(10, EVENTS["a"]))
    signal = scheduler.create_cold_observable(ReactiveTest.on_next(500, True))
    scheduler.start(lambda: source.pipe(cancel_on(signal, P)), disposed=300)
    assert source.subscriptions == [ReactiveTest.subscribe(200, 300)]
    assert signal.subscriptions == [ReactiveTest.subscribe(200, 300)]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((None,), "signal"),
        ((reactivex.never(), None), "provider"),
        ((reactivex.never(), P, 1), "reason"),
    ],
)
def test_bad_arguments_are_refused_at_the_call(args: tuple[Any, ...], match: str) -> None:
    """`cancel_on(None)` failed at subscription (`'NoneType' object has no attribute
    'subscribe'`); a provider that is not a `str` made an invalid `cancelled` event."""
    with pytest.raises(TypeError, match=match):
        cancel_on(*args)


def test_a_cancel_after_a_retry_names_the_attempt_it_announced() -> None:
    """During a backoff wait, or the next provider's request, the cancel cuts the
    attempt the `retry` announced, not the one that failed."""
    retry = Retry(
        provider=P,
        attempt=1,
        reason=EVENTS["x"].error,
        next_attempt=2,
        next_provider="anthropic",
    )
    with marbles_testing() as (start, cold, _hot, _exp):
        signal = cold("----x", {"x": True})
        results = start(cold("-a-r------|", {**EVENTS, "r": retry}).pipe(cancel_on(signal, P)))
    cancelled = results[-2].value.value
    assert isinstance(cancelled, Cancelled)
    assert (cancelled.provider, cancelled.attempt) == ("anthropic", 2)
