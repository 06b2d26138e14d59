"""The families behind the fifth batch of real rejections, in wordings no case holds.

The cases themselves are in tests/rejections_extra (replayed by test_probe_rejections_2):
in-band errors after `200 OK` (vLLM, SGLang, Groq's `event: error`, LiteLLM's proxy, whose
`code` is the status as a string), the model's own limit exceeded (Moonshot's "model token
limit", "model max length"), the history's function calls and responses (Gemini), images
refused by a model that is "not a vision model", and an error body carried as the JSON
string of another envelope's `message` (Google's streaming endpoint). Here each family is
read in words the recorded cases do not hold, and in the validator formats that name
unknown fields beside the fields they know (serde, Jackson, Go's encoding/json).
"""

from __future__ import annotations

import json
import threading

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict, classify
from rxllm.error_body import parse_error_body
from rxllm.events import ErrorInfo

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}, IMAGE]}],
    "stream": True,
    "temperature": 0.1,
    "top_k": 5,
    "seed": 7,
    "max_tokens": 8192,
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "tool_choice": "auto",
}
TEXT_ONLY = {**BODY, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}


def verdict(
    message: str, status: int | None = 400, body: dict[str, object] = BODY, code: str | None = None
) -> Verdict:
    error = ErrorInfo(
        kind="http" if status else "stream_error",
        message=message,
        status=status,
        provider="p",
        retryable=False,
        code=code,
    )
    return classify(error, body, RecoveryPolicy(degrade=True))


@pytest.mark.parametrize(
    ("message", "action", "drop"),
    [
        # validators that list the fields they know after the one they refuse: the list
        # is no refusal (serde, Jackson), nor does it read as a missing `model`
        (
            "Failed to deserialize the JSON body into the target type: unknown field `top_k`, "
            "expected one of `model`, `messages`, `temperature` at line 1 column 88",
            "drop",
            ("top_k",),
        ),
        (
            'JSON parse error: Unrecognized field "top_k" (class ai.ChatRequest), not marked as '
            'ignorable (3 known properties: "model", "messages", "temperature"])',
            "drop",
            ("top_k",),
        ),
        ('json: unknown field "top_k"', "drop", ("top_k",)),
        ("1710180280865.0 is not of type 'integer' - 'seed'", "drop", ("seed",)),
        # the model's own limit, exceeded: the size of the conversation (with max_tokens)
        ("Your request exceeded model token limit: 131072", "surface", ()),
        ("The prompt is larger than the model's context limit", "surface", ()),
        ("model max length exceeded, max length:4096", "surface", ()),
        # ... while max_tokens alone too large is a key to drop
        (
            "max_tokens is too large: 100000. This model supports at most 32768",
            "drop",
            ("max_tokens",),
        ),
        # the history's function calls and responses are the conversation
        ("Function response turn must come right after a function call turn.", "surface", ()),
        ("Each function call must have a matching function response", "surface", ()),
        # ... while the capability refused by name drops the tools
        ("This model does not support function call", "drop", ("tools", "tool_choice")),
        # a model that is no vision model, or takes text only, refuses the images
        ("This is not a vision model.", "images", ()),
        ("glm-4 is not a multimodal model", "images", ()),
        ("Only text content is supported for this model.", "images", ()),
        ("This endpoint is text-only", "images", ()),
    ],
)
def test_family_read_in_new_words(message: str, action: str, drop: tuple[str, ...]) -> None:
    result = verdict(message)
    assert (result.action, result.drop) == (action, drop)


def test_text_only_refuses_nothing_without_images() -> None:
    assert verdict("Only text content is supported", body=TEXT_ONLY).action == "static"


@pytest.mark.parametrize(
    ("code", "action"),
    [("500", "backoff"), ("503", "backoff"), ("429", "backoff"), ("401", "surface")],
)
def test_an_error_event_whose_code_is_a_status_reads_as_that_status(code: str, action: str) -> None:
    # LiteLLM's proxy after its 200 OK: the status only as the string code
    message = "litellm.APIConnectionError: OpenAIException - Connection closed."
    assert verdict(message, status=None, code=code).action == action


def test_a_code_that_is_no_status_stays_a_code() -> None:
    # Zhipu's business codes are four digits: no status, so no backoff for a server error
    assert verdict("temperature参数非法", status=None, code="1214").drop == ("temperature",)


GOOGLE_BODY = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"},
        ],
    }
}


def test_an_error_body_carried_as_the_message_is_read_with_its_wait() -> None:
    wrapped = {
        "error": {
            "message": json.dumps(GOOGLE_BODY, indent=2),
            "code": 429,
            "status": "Too Many Requests",
        }
    }
    body = parse_error_body(json.dumps(wrapped))
    assert (body.message, body.code, body.retry_after) == (
        GOOGLE_BODY["error"]["message"],
        "RESOURCE_EXHAUSTED",
        12.0,
    )
    error = ErrorInfo(
        kind="http",
        message=body.message,
        status=429,
        provider="p",
        retryable=True,
        raw=json.dumps(wrapped),
        **body.fields(),
    )
    result = classify(error, BODY, RecoveryPolicy(degrade=True))
    assert (result.action, result.delay) == ("backoff", 12.0)


@pytest.mark.parametrize(
    "message",
    [
        '{"detail": [{"loc": ["body", "top_k"], "msg": "extra fields not permitted"}]}',
        "[1, 2, 3]",
        "{not json",
    ],
)
def test_a_message_that_is_no_error_body_stays_the_message(message: str) -> None:
    body = parse_error_body(json.dumps({"error": {"message": message, "type": "t"}}))
    assert (body.message, body.code) == (message, "t")


@pytest.mark.parametrize(
    ("text", "wait"),
    [
        ("Rate limit reached for model m. Please try again in 1m30s.", 90.0),
        ("Please retry in 32.5s.", 32.5),
        ("Too many requests, try again in 20 seconds", 20.0),
    ],
)
def test_the_wait_in_words_is_the_retry_after(text: str, wait: float) -> None:
    assert parse_error_body(json.dumps({"error": {"message": text}})).retry_after == wait


_HOSTILE = {
    "model words": "model " * 10_922,
    "expected lists": "expected one of " * 4_096,
    "function calls": "function call " * 4_681,
    "text only": "not a only text " * 4_096,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_words_are_read_in_linear_time(text: str) -> None:
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p", retryable=False)
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, BODY, RecoveryPolicy(degrade=True))),
        daemon=True,
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is a fraction of a second
    assert verdicts
