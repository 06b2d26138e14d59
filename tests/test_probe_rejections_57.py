"""Rejections that name a family of the body's keys, not the keys.

"Sampling parameters are not supported for reasoning models" and "presence and frequency
penalties are unsupported" walked the static list: no key is spelled. The sampling family
(the keys that shape how a token is drawn: OpenAI's reasoning guide's list beside vLLM's
SamplingParams) is one entry of the capabilities list; penalties in the plural after the
words of their names are the keys those words own, a word each, joined by "and", "or" or a
comma (the mechanism that reads "Parallel function calling" as `parallel_tool_calls`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.rejection_rounds import both_ways
from tests.test_probe_rejections_7 import body

SAMPLED = body(
    temperature=0.2,
    top_p=0.9,
    presence_penalty=0.5,
    frequency_penalty=0.3,
    logit_bias={"1": 2},
    max_tokens=50,
    seed=7,
)
SAMPLING = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "logit_bias")


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        (
            "Sampling parameters are not supported for reasoning models",
            SAMPLED,
            ("drop", SAMPLING),
        ),
        ("sampling params are not supported with this model", SAMPLED, ("drop", SAMPLING)),
        (
            "presence and frequency penalties are unsupported",
            SAMPLED,
            ("drop", ("presence_penalty", "frequency_penalty")),
        ),
        (
            "Presence, frequency and repetition penalties are not supported",
            body(presence_penalty=0.5, repetition_penalty=1.1, temperature=0.2),
            ("drop", ("presence_penalty", "repetition_penalty")),
        ),
        # a word's key not in the body: the others' words still name theirs
        (
            "presence and frequency penalties are unsupported",
            body(frequency_penalty=0.3, temperature=0.2),
            ("drop", ("frequency_penalty",)),
        ),
    ],
)
def test_a_family_names_its_keys(message: str, sent: dict[str, Any], expected: Any) -> None:
    assert both_ways(message, sent) == [expected, expected]


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        # the family named without a refusal
        ("sampling parameters were adjusted", SAMPLED),
        # the family named where the body holds none of its keys
        ("Sampling parameters are not supported for reasoning models", body(max_tokens=50)),
        ("presence and frequency penalties are unsupported", body(max_tokens=50)),
    ],
)
def test_near_the_rule(message: str, sent: dict[str, Any]) -> None:
    assert both_ways(message, sent) == [("static", ()), ("static", ())]


def test_the_keys_kept() -> None:
    sent = body(temperature=0.2, stream=True)
    verdict = both_ways("Sampling parameters are not supported for reasoning models", sent)
    assert verdict == [("drop", ("temperature",)), ("drop", ("temperature",))]
