from __future__ import annotations

from reactivex.testing.marbles import marbles_testing

from rxllm.operators import track_commitment
from tests.operators.marbles import EVENTS

# A group such as "(u,a)" spans its five characters, so sources are padded to line up.


def test_content_passes_and_usage_after_content_is_not_held() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-u-b-d-|", EVENTS).pipe(track_commitment()))
        assert results == exp("-a-u-b-d-|", EVENTS)


def test_a_usage_prelude_is_released_just_before_the_first_content() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-u-a-----d-|", EVENTS).pipe(track_commitment()))
        assert results == exp("---(u,a)-d-|", EVENTS)


def test_a_usage_prelude_is_released_before_done_without_content() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-u-d----|", EVENTS).pipe(track_commitment()))
        assert results == exp("---(u,d)|", EVENTS)


def test_a_usage_prelude_before_a_rejection_is_dropped() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-u-x-|", EVENTS).pipe(track_commitment()))
        assert results == exp("---x-|", EVENTS)


def test_only_the_latest_usage_of_a_prelude_is_released() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        lookup = {**EVENTS, "v": EVENTS["u"].model_copy(update={"attempt": 2})}
        results = start(cold("-u-v-s----|", lookup).pipe(track_commitment()))
        assert results == exp("-----(v,s)|", lookup)


def test_each_subscription_starts_clean() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        tracked = cold("-u-a----|", EVENTS).pipe(track_commitment())
        assert start(tracked) == exp("---(u,a)|", EVENTS)
    with marbles_testing() as (start, cold, _hot, exp):
        tracked = cold("-u-x-|", EVENTS).pipe(track_commitment())
        assert start(tracked) == exp("---x-|", EVENTS)
