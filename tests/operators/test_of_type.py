"""of_type: the events of one class, typed as that class."""

from __future__ import annotations

from typing import Any

import pytest
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


@pytest.mark.parametrize("cls", [None, "text", list[int]])
def test_what_is_not_a_class_is_refused_at_the_call(cls: Any) -> None:
    """It was accepted, and raised `isinstance() arg 2 must be a type` at each item."""
    with pytest.raises(TypeError, match="of_type"):
        of_type(cls)


def test_a_union_of_classes_is_a_class_test() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-s-u-d-|", EVENTS).pipe(of_type(TextDelta | Done)))  # type: ignore[arg-type]
        assert results == exp("-a-----d-|", EVENTS)
