"""`check_speaker_names` (session 40, helper E): the names `speaker_guard` takes, checked
as it checks them, without building the operator (for the provider option, which checks
the names when given and builds a guard per stream)."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.operators.speaker_guard import DEFAULT_SPEAKERS, check_speaker_names, speaker_guard


def test_the_names_checked_are_the_names_guarded() -> None:
    assert check_speaker_names() == DEFAULT_SPEAKERS
    assert check_speaker_names(["Bob", "Alice"]) == ("Bob", "Alice")
    assert check_speaker_names(("x" * 30,)) == ("x" * 30,)  # "\n" + 30 + ":" fills the hold
    assert check_speaker_names(["Bob"], hold=5) == ("Bob",)


@pytest.mark.parametrize(
    ("names", "hold", "error"),
    [
        ("Bob", 32, TypeError),
        ([], 32, ValueError),
        ([3], 32, TypeError),
        (["a\nb"], 32, ValueError),
        (["a`b"], 32, ValueError),
        ([""], 32, ValueError),
        (["x" * 31], 32, ValueError),
        (["Bob"], 4, ValueError),
        (["Bob"], True, TypeError),
    ],
)
def test_a_bad_name_is_refused_as_speaker_guard_refuses_it(
    names: Any, hold: Any, error: type[Exception]
) -> None:
    with pytest.raises(error) as by_guard:
        speaker_guard(names, hold)
    with pytest.raises(error) as by_check:
        check_speaker_names(names, hold)
    assert str(by_check.value) == str(by_guard.value)
