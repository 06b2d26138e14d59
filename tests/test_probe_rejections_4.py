"""The families behind the fourth batch of real rejections, in wordings no case holds.

The cases themselves are in tests/rejections_extra (replayed by test_probe_rejections_2):
an endpoint refused by its path (Bedrock, a gateway), a message's `content` refused by
its field name (SambaNova), a key written as a path under the request (`parameter.`,
`body.`: DashScope, Cerebras), a reasoning setting refused by its word and value (Ollama's
`think value "medium"`), and a 403 that refuses a key, not the caller (OpenAI's logprobs).
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
    "logprobs": True,
    "top_logprobs": 3,
    "max_tokens": 10,
    "user": "u",
}


@pytest.mark.parametrize(
    ("status", "message", "action", "drop"),
    [
        # the endpoint, by its path: no body reaches another one
        (400, "The model 'm' does not support the '/v1/completions' API", "surface", ()),
        (400, "/v1/chat/completions is not supported for this model.", "surface", ()),
        # ... while a path inside a URL is only a link
        (400, "Invalid request, see https://api.example.com/v1/docs/errors", "static", ()),
        # a message's field by its name
        (400, "Expected a string for 'content', got an array.", "surface", ()),
        (400, "content part type 'input_audio' is not supported", "surface", ()),
        # a key as a path rooted at the request
        (400, "request.temperature must be at most 1.0", "drop", ("temperature",)),
        (422, "body.max_tokens: Input should be less than 8192", "drop", ("max_tokens",)),
        # a reasoning setting refused by its word and value
        (400, "reasoning effort 'xhigh' is not supported here", "drop", ("reasoning_effort",)),
        (400, 'thinking level "max" is not supported', "drop", ("reasoning_effort",)),
        (400, "temperature is not supported while reasoning is enabled", "drop", ("temperature",)),
        # a 403 that refuses a key of the body, not the caller
        (403, "Logprobs are not permitted for this model.", "drop", ("logprobs", "top_logprobs")),
        (403, "This account is not allowed to request logprobs.", "surface", ()),
        (403, "Project proj_1 does not have access to model m", "surface", ()),
        (403, "Forbidden", "surface", ()),
    ],
)
def test_family_read_in_new_words(
    status: int, message: str, action: str, drop: tuple[str, ...]
) -> None:
    error = ErrorInfo(kind="http", message=message, status=status, provider="p", retryable=False)
    verdict = classify(error, BODY, RecoveryPolicy(degrade=True))
    assert (verdict.action, verdict.drop) == (action, drop)
