from __future__ import annotations

from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.events import Cancelled
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
