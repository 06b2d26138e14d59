"""A rejection is read by its start. `classify` runs some eighty patterns over an error's
text, about 20 µs of CPU per character on the event loop: read whole, a 64 KB error body
blocked the loop for over a second, and an in-stream error of a megabyte (200 OK, then
`data: {"error": {"message": "<1 MB>"}}`) for some 24 s. The text it reads is bounded,
whatever the body's length."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from rxllm import degradation
from rxllm.degradation import MAX_READ_CHARS, RecoveryPolicy, classify
from rxllm.error_body import parse_error_body
from rxllm.events import ErrorInfo

MEGABYTE = 1024 * 1024
BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "temperature": 0.2,
    "top_p": 0.9,
}
POLICY = RecoveryPolicy(degrade=True)

# Words no pattern reads, to pad a body to a megabyte.
PADDING = "lorem ipsum dolor sit amet "


def padded(start: str, end: str = "") -> str:
    return start + " " + PADDING * (MEGABYTE // len(PADDING)) + end


def http_error(raw: str, status: int | None = 400) -> ErrorInfo:
    """The error as the HTTP source builds it: the body's message, the whole body as raw."""
    body = parse_error_body(raw)
    return ErrorInfo(
        kind="rejected", status=status, provider="p", retryable=False, raw=raw, **body._asdict()
    )


# -- the text classify reads -----------------------------------------------------------

_STRING_AT = {"search": 1, "match": 1, "fullmatch": 1, "findall": 1, "finditer": 1, "split": 1}
_STRING_AT["sub"] = 2


@pytest.fixture
def longest(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of the longest string `degradation` hands to the `re` module's functions
    (every pattern it runs on an error's words goes through them). That is the text read,
    at most `MAX_READ_CHARS`, or that text as read for names, which quotes the locations
    in it ("/top_p" is "'top_p'"): longer by a quote or two a location, less than double."""
    seen = [0]

    def spied(name: str) -> Callable[..., Any]:
        real = getattr(re, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            string = kwargs.get("string", args[_STRING_AT[name]])
            seen[0] = max(seen[0], len(string))
            return real(*args, **kwargs)

        return call

    module = SimpleNamespace(**{name: getattr(re, name) for name in dir(re)})
    for name in _STRING_AT:
        setattr(module, name, spied(name))
    monkeypatch.setattr(degradation, "re", module)
    return seen


HUGE = {
    "one long message in JSON": json.dumps({"error": {"message": padded("Bad request:")}}),
    "many strings in JSON": json.dumps(
        {"error": {"message": "Bad request", "details": [PADDING] * (MEGABYTE // len(PADDING))}}
    ),
    "plain text": padded("Bad request:"),
    "an HTML page": "<html><body>" + "<p>error</p>\n" * (MEGABYTE // 13) + "</body></html>",
}


@pytest.mark.parametrize("raw", HUGE.values(), ids=HUGE.keys())
@pytest.mark.parametrize("status", [400, 403, 429, 500, None])
def test_the_patterns_read_a_bounded_text_of_a_megabyte_body(
    longest: list[int], raw: str, status: int | None
) -> None:
    classify(http_error(raw, status), BODY, POLICY)
    assert 0 < longest[0] < 2 * MAX_READ_CHARS


def test_the_patterns_read_a_bounded_text_of_a_megabyte_message(longest: list[int]) -> None:
    # (a message as long as its body: an `ErrorInfo` built by hand, or by a wire that
    # passes the provider's message on as it came)
    error = ErrorInfo(
        kind="stream_error",
        message=padded("Bad request:"),
        provider="p",
        retryable=False,
        raw=json.dumps({"message": padded("Bad request:")}),
    )
    classify(error, BODY, POLICY)
    assert 0 < longest[0] < 2 * MAX_READ_CHARS


# The words that decide at the start, and a megabyte on, words that would decide otherwise
# ("Invalid API key" refuses the account): only the start is read.
DECIDED_AT_THE_START = {
    "JSON": json.dumps(
        {
            "error": {
                "message": padded(
                    "Unsupported parameter: 'temperature' is not supported with this model.",
                    " Invalid API key provided.",
                ),
                "type": "invalid_request_error",
            }
        }
    ),
    "plain text": padded(
        "Unsupported parameter: 'temperature' is not supported with this model.",
        " Invalid API key provided.",
    ),
}


@pytest.mark.parametrize("raw", DECIDED_AT_THE_START.values(), ids=DECIDED_AT_THE_START.keys())
def test_a_megabyte_rejection_is_read_by_its_start(raw: str) -> None:
    verdict = classify(http_error(raw), BODY, POLICY)
    assert verdict.action == "drop" and verdict.drop == ("temperature",), verdict
