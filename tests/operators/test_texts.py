"""texts: the visible text of a stream, as strings."""

from __future__ import annotations

from reactivex.testing.marbles import marbles_testing

from rxllm.events import ReasoningDelta, Refusal
from rxllm.operators import texts
from tests.operators.marbles import EVENTS

STRINGS = {
    **EVENTS,
    "r": ReasoningDelta(provider="p", text="hmm"),
    "f": Refusal(provider="p", text="no"),
}


def test_text_events_become_their_strings() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-s-u-b-d-|", EVENTS).pipe(texts()))
        assert results == exp("-A-----B---|", {"A": "Hel", "B": "lo"})


def test_reasoning_and_refusals_are_not_the_answer() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-r-a-f-d-|", STRINGS).pipe(texts()))
        assert results == exp("---A-----|", {"A": "Hel"})


def test_errors_pass_through() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        assert start(cold("-a-#", EVENTS).pipe(texts())) == exp("-A-#", {"A": "Hel"})
