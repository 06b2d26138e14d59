"""The families behind the third batch of real rejections, in wordings no case holds.

The cases themselves are in tests/rejections_extra (replayed by test_probe_rejections_2).
These rejections are written the way the recorded ones are, but their exact words were not
collected anywhere: they check that `classify` reads the family, not the recorded string.
"""

from __future__ import annotations

import pytest

from rxllm.degradation import RecoveryPolicy, classify
from rxllm.events import ErrorInfo

BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "temperature": 0.1,
    "reasoning_effort": "low",
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "tool_choice": "auto",
    "max_tokens": 10,
}


@pytest.mark.parametrize(
    ("message", "action", "drop"),
    [
        # a key named only as the condition of another's refusal stays
        ("temperature is not supported when reasoning_effort is set", "drop", ("temperature",)),
        ("max_tokens must be at most 8192 while reasoning_effort is high", "drop", ("max_tokens",)),
        # ... unless nothing else is named: then the clause names what is refused
        ("Error while parsing 'temperature': unsupported", "drop", ("temperature",)),
        # "tool calls" in prose: a capability when refused, the history when it is not
        ("This model does not support tool calls.", "drop", ("tools", "tool_choice")),
        ("No tool call found for function call output with call_id call_abc.", "surface", ()),
        ("Each message must have a non-empty content", "surface", ()),
        # what is refused is no part of the body
        ("Invalid value for header 'OpenAI-Beta'", "surface", ()),
        ("Unexpected endpoint or method. (POST /chat/completions)", "surface", ()),
        # the deployment's state
        ("The function is DEGRADED and cannot be invoked", "backoff", ()),
    ],
)
def test_family_read_in_new_words(message: str, action: str, drop: tuple[str, ...]) -> None:
    error = ErrorInfo(kind="http", message=message, status=400, provider="p", retryable=False)
    verdict = classify(error, BODY, RecoveryPolicy(degrade=True))
    assert (verdict.action, verdict.drop) == (action, drop)
