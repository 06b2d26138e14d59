"""of_type: the events of one class, typed as that class."""

from __future__ import annotations

from reactivex.testing.marbles import marbles_testing

from rxllm.events import Done, TextDelta, ToolStart, UsageUpdate
from rxllm.operators import of_type
from tests.operators.marbles import EVENTS


def test_keeps_the_events_of_the_class() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-s-u-b-d-|", EVENTS).pipe(of_type(TextDelta)))
        assert results == exp("-a-----b---|", EVENTS)


def test_the_terminal_class() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        assert start(cold("-a-u-d-|", EVENTS).pipe(of_type(Done))) == exp("-----d-|", EVENTS)


def test_tool_starts() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-s-a-t-d-|", EVENTS).pipe(of_type(ToolStart)))
        assert results == exp("-s---t---|", EVENTS)


def test_errors_pass_through() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-u-#", EVENTS).pipe(of_type(UsageUpdate)))
        assert results == exp("---u-#", EVENTS)
