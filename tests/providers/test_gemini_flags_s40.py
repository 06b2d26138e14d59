"""Gemini's `thought` is a boolean and `finishMessage` a string (`Part`, `Candidate` in
the Gemini API reference); a relay that writes either in another JSON type. A `thought`
that is not JSON's true marks no thought: the answer stays the answer, never hidden as
reasoning ("false" was truthy). A finish message of another type is quoted as the JSON
that came, never as Python's repr of it. Bodies made by hand; values made up."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.events import Failed, ReasoningDelta, TextDelta
from tests.providers.test_probe_google import chunk, run


@pytest.mark.parametrize("flag", ["false", "true", 0, 1, [], {}, None])
def test_a_thought_that_is_not_true_is_the_answer(flag: Any) -> None:
    events = run(
        chunk({"text": "The answer.", "thought": flag}),
        chunk({"text": ""}, finish="STOP"),
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer."
    assert not any(isinstance(e, ReasoningDelta) and e.text for e in events)
    assert events[-1].type == "done"


def test_a_thought_that_is_true_is_reasoning() -> None:  # the guard: the reference's shape
    events = run(
        chunk({"text": "Thinking.", "thought": True}),
        chunk({"text": "The answer."}, finish="STOP"),
    )
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Thinking."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer."


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (["bad", "call"], '["bad", "call"]'),
        ({"reason": "bad call"}, '{"reason": "bad call"}'),
        (7, "7"),
        ("Malformed function call: x(", "Malformed function call: x("),
    ],
)
def test_a_finish_message_is_quoted_as_it_came(message: Any, said: str) -> None:
    finished = chunk({"text": ""}, finish="MALFORMED_FUNCTION_CALL")
    finished["candidates"][0]["finishMessage"] = message
    events = run(chunk({"text": "Calling."}), finished)
    terminal = events[-1]
    assert isinstance(terminal, Failed), terminal
    assert terminal.error.message.endswith(f"MALFORMED_FUNCTION_CALL: {said}"), terminal
    assert "['" not in terminal.error.message and "{'" not in terminal.error.message
