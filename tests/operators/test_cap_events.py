from __future__ import annotations

from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.operators import cap_events
from tests.operators.marbles import EVENTS


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
