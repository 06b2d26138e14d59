"""A capability's phrase narrowed by the word right before it.

"Parallel function calling is not supported" read "function calling", the tools'
capability, and dropped every tool key (`tools`, `tool_choice`, `parallel_tool_calls`):
the body lost its tools where only parallel calls were refused. A word right before a
capability's phrase that is part of one of its keys' names alone ("parallel" of
`parallel_tool_calls`, "top" of `top_logprobs`) narrows the capability to that key, where
the body holds it; any other word (or none) leaves the capability whole, as before. The
words spelled as the key ("parallel tool calls are not supported by this provider", a
gateway's check on `parallel_tool_calls: true`) were read as that key already.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.rejection_rounds import both_ways
from tests.test_probe_rejections_7 import TOOLS, body

TOOLED = body(tools=TOOLS, tool_choice="auto", parallel_tool_calls=True, temperature=0.2)
LOGPROBS = body(logprobs=True, top_logprobs=5, temperature=0.2)


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        ("Parallel function calling is not supported", TOOLED, ("drop", ("parallel_tool_calls",))),
        (
            "parallel tool use is not supported for this model",
            TOOLED,
            ("drop", ("parallel_tool_calls",)),
        ),
        (
            "Top log probabilities are not supported for this model",
            LOGPROBS,
            ("drop", ("top_logprobs",)),
        ),
    ],
)
def test_a_qualified_capability_is_its_key(
    message: str, sent: dict[str, Any], expected: Any
) -> None:
    assert both_ways(message, sent) == [expected, expected]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no qualifier: the capability whole, as before
        (
            "Function calling is not supported",
            TOOLED,
            ("drop", ("tools", "tool_choice", "parallel_tool_calls")),
        ),
        ("Log probabilities are not supported", LOGPROBS, ("drop", ("logprobs", "top_logprobs"))),
        # a word of no key's name
        (
            "Forced function calling is not supported",
            TOOLED,
            ("drop", ("tools", "tool_choice", "parallel_tool_calls")),
        ),
        # the qualified key not in the body: the capability whole
        (
            "Parallel function calling is not supported",
            body(tools=TOOLS, tool_choice="auto"),
            ("drop", ("tools", "tool_choice")),
        ),
        # spelled as the key: that key, as before
        (
            "parallel tool calls are not supported by this provider",
            TOOLED,
            ("drop", ("parallel_tool_calls",)),
        ),
    ],
)
def test_near_the_rule(message: str, sent: dict[str, Any], expected: Any) -> None:
    assert both_ways(message, sent) == [expected, expected]
