"""A rejection is read by its start. `classify` runs some eighty patterns over an error's
text, about 20 µs of CPU per character on the event loop: read whole, a 64 KB error body
blocked the loop for over a second, and an in-stream error of a megabyte (200 OK, then
`data: {"error": {"message": "<1 MB>"}}`) for some 24 s. The text it reads is bounded,
whatever the body's length, and an in-stream error carries no more than an HTTP error body
does (`MAX_ERROR_BODY_BYTES`), redacted before it is cut."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

import rxllm
from rxllm import degradation
from rxllm.degradation import MAX_READ_CHARS, RecoveryPolicy, classify
from rxllm.error_body import parse_error_body
from rxllm.events import ErrorInfo, Failed
from rxllm.sources.http import MAX_ERROR_BODY_BYTES

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


# -- an in-stream error of a megabyte, over a loopback server ---------------------------

KEY = "sk-test-0123456789abcdef"
# The key everywhere, so that wherever the cut falls it falls inside one: cut before it is
# redacted, the key's start would show.
WORDS = "bad request: " + (KEY + " ") * (MEGABYTE // (len(KEY) + 1))


def data(payload: Any, event: str | None = None) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return ((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode()


IN_STREAM = {
    "anthropic": (
        "anthropic",
        data(
            {"type": "error", "error": {"type": "invalid_request_error", "message": WORDS}},
            "error",
        ),
    ),
    "google": (
        "google",
        data({"error": {"code": 400, "message": WORDS, "status": "INVALID_ARGUMENT"}}),
    ),
    "responses error": (
        "openai-responses",
        data({"type": "error", "code": "invalid_request_error", "message": WORDS, "param": None}),
    ),
    "responses failed": (
        "openai-responses",
        data(
            {
                "type": "response.failed",
                "response": {
                    "id": "resp_1",
                    "status": "failed",
                    "error": {"code": "server_error", "message": WORDS},
                },
            }
        ),
    ),
    "chat": ("openai", data({"error": {"message": WORDS, "type": "invalid_request_error"}})),
    "plain error frame": ("openai", data(WORDS, "error")),
    # (three bytes a character: the cut counts bytes, as the body's read does, and falls
    # between two characters)
    "anthropic, in euros": (
        "anthropic",
        data(
            {
                "type": "error",
                "error": {"type": "api_error", "message": "bad request: " + "€" * MEGABYTE},
            },
            "error",
        ),
    ),
}


@pytest.mark.parametrize(("wire", "body"), IN_STREAM.values(), ids=IN_STREAM.keys())
async def test_an_in_stream_error_of_a_megabyte_is_cut_as_an_error_body_is(
    serve_body: Callable[[bytes], Awaitable[str]], wire: str, body: bytes
) -> None:
    url = await serve_body(body)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider(
        wire, api_key=KEY, base_url=url, allow_private_network=True, max_attempts=1
    ) as provider:
        record = await provider.complete(request)
    end = record.terminal
    assert isinstance(end, Failed) and end.error.kind == "stream_error", end
    error = end.error
    assert error.raw is not None and error.message.strip()
    for text in (error.raw, error.message):
        assert len(text.encode("utf-8")) <= MAX_ERROR_BODY_BYTES
        assert "sk-test" not in text  # redacted, then cut: no key's start shows
    assert "bad request" in error.message
