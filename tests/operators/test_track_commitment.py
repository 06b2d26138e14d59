from __future__ import annotations

from reactivex.testing.marbles import marbles_testing

from rxllm.events import UsageUpdate
from rxllm.operators import track_commitment
from tests.operators.marbles import EVENTS


def test_every_event_passes_as_it_comes() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-u-b-d-|", EVENTS).pipe(track_commitment()))
        assert results == exp("-a-u-b-d-|", EVENTS)


def test_usage_before_a_rejection_passes_at_once_it_commits_the_attempt() -> None:
    # DESIGN, Commitment: usage commits an attempt, as text does: the rejection after it
    # surfaces (`retry_before_commit` is told the attempt committed).
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-u-x-|", EVENTS).pipe(track_commitment()))
        assert results == exp("-u-x-|", EVENTS)


def test_the_usage_a_failure_carries_is_dropped_before_anything_committed() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-f-x-|", EVENTS).pipe(track_commitment()))
        assert results == exp("---x-|", EVENTS)


def test_the_usage_a_failure_carries_is_reported_once_the_attempt_committed() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-f-x-|", EVENTS).pipe(track_commitment()))
        assert results == exp("-a-u-x-|", EVENTS)
        reported = [r.value.value for r in results if r.value.kind == "N"][1]
        assert type(reported) is UsageUpdate  # an event, never the internal fragment


def test_each_subscription_starts_clean() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        tracked = cold("-a-f-x-|", EVENTS).pipe(track_commitment())
        assert start(tracked) == exp("-a-u-x-|", EVENTS)
    with marbles_testing() as (start, cold, _hot, exp):
        tracked = cold("-f-x-|", EVENTS).pipe(track_commitment())
        assert start(tracked) == exp("---x-|", EVENTS)
