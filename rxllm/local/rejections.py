"""Rejections the local provider plays, as real endpoints word them, and what triggers each.

A rejection is chosen by model `fault/<name>` and plays only while its trigger holds
in the request body: a client that degrades its request (drops the parameter, the
images, the tools) gets the normal scripted answer on its retry, exactly as from an
endpoint that refused one feature. `overloaded`, `rate_limited` and `quota_worded_429`
refuse every odd-numbered request instead (a per-server count), so a client that waits and sends
the same body again succeeds. The texts follow the shapes collected in
`../shared/rejections` (OpenAI, vLLM, Ollama, NVIDIA, OpenRouter, TGI, Groq,
Anthropic); they are written here, not copied.

| name | status | while |
|---|---|---|
| `reject_param` | 400, OpenAI `unsupported_parameter`, `temperature` | `temperature` is sent |
| `reject_two_params` | 400, vLLM pydantic `extra_forbidden` list | `top_p` or `seed` is sent |
| `reject_max_tokens` | 400, OpenAI "Use 'max_completion_tokens' instead." | `max_tokens` is sent |
| `reject_images` | 400, vLLM "<model> is not a multimodal model None" | a message has an image |
| `reject_tools` | 400, Ollama "... does not support tools" | `tools` is sent |
| `nvidia_opaque_500` | 500, NVIDIA NIM "Internal server error" | `stream_options` is sent |
| `openrouter_502` | 502, OpenRouter "Provider returned error" | `stream_options` is sent |
| `error_after_200` | 200, one TGI error event about `top_p` | `top_p` is sent |
| `overloaded` | 503 + `Retry-After: 0.05` (Anthropic route: 529) | odd-numbered requests |
| `rate_limited` | 429, Groq "Please try again in 0.05s" | odd-numbered requests |
| `quota_worded_429` | 429, a rate limit in quota words (below) | odd-numbered requests |
| `context_length` | 400, `context_length_exceeded`, param `messages` | always |
| `bad_key` | 401, `invalid_api_key` | always |
| `quota` | 429, `insufficient_quota` | always |
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["REJECTIONS", "Refusal", "Rejection", "refusal_for"]

Body = dict[str, Any]

# The wait `overloaded` and `rate_limited` ask for: long enough to be a real wait,
# short enough for a test suite.
WAIT_SECONDS = 0.05
ANTHROPIC_PATH = "/v1/messages"
GOOGLE_PATH = "/v1beta/models/{model}:streamGenerateContent"
# Image parts in the chat, Anthropic and Responses wires.
IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})


@dataclass(frozen=True)
class Refusal:
    """One answer that refuses: an error status and body, or (`event_stream`) a
    `200 OK` event stream whose only event is `body`."""

    status: int
    body: str
    headers: Mapping[str, str] = field(default_factory=dict)
    event_stream: bool = False


@dataclass(frozen=True)
class Rejection:
    """What to answer (`refuse(body, route)`) while `trigger(body)` holds."""

    trigger: Callable[[Body], bool]
    refuse: Callable[[Body, str], Refusal]
    alternate: bool = False
    """Refuse only odd-numbered requests, whatever the body (transient refusals)."""


def refusal_for(name: str, body: Body, route: str, number: int) -> Refusal | None:
    """The refusal rejection `name` plays for request `number` (1-based, counted per
    rejection and server) on `route`, or None when the normal answer is due."""
    rejection = REJECTIONS[name]
    due = rejection.trigger(body) and (not rejection.alternate or number % 2 == 1)
    return rejection.refuse(body, route) if due else None


def _json(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Refusal:
    return Refusal(status, json.dumps(payload, indent=2), dict(headers or {}))


def _openai(status: int, message: str, kind: str, param: str | None, code: str | None) -> Refusal:
    """OpenAI's envelope, which most compatible servers copy."""
    error = {"message": message, "type": kind, "param": param, "code": code}
    return _json(status, {"error": error})


def _vllm(message: str) -> Refusal:
    """vLLM's flat envelope: a numeric `code`, no structured param."""
    error = {"object": "error", "message": message, "type": "BadRequestError"}
    return _json(400, {**error, "param": None, "code": 400})


def _model(body: Body) -> str:
    return str(body.get("model") or "rxllm-local")


def _sends(*keys: str) -> Callable[[Body], bool]:
    return lambda body: any(key in body for key in keys)


def _always(body: Body) -> bool:
    return True


def _has_image(body: Body) -> bool:
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES for part in content
        ):
            return True
    return False


def _extra_forbidden(body: Body, route: str) -> Refusal:
    """vLLM's pydantic errors as a Python repr inside `message`: one entry per
    forbidden key still sent, so a partial degradation is told what remains."""
    errors = [
        {
            "type": "extra_forbidden",
            "loc": ("body", key),
            "msg": "Extra inputs are not permitted",
            "input": body[key],
        }
        for key in ("top_p", "seed")
        if key in body
    ]
    return _vllm(repr(errors))


def _overloaded(body: Body, route: str) -> Refusal:
    headers = {"Retry-After": f"{WAIT_SECONDS:g}"}
    if route == ANTHROPIC_PATH:
        anthropic = {"type": "overloaded_error", "message": "Overloaded"}
        return _json(529, {"type": "error", "error": anthropic}, headers)
    error: dict[str, str | None] = {
        "message": "The engine is currently overloaded, please try again later.",
        "type": "server_error",
        "param": None,
        "code": "overloaded",
    }
    return _json(503, {"error": error}, headers)


def _rate_limited(body: Body, route: str) -> Refusal:
    message = (
        f"Rate limit reached for model `{_model(body)}` in organization `org_local` service "
        "tier `on_demand` on requests per minute (RPM): Limit 30, Used 30, Requested 1. "
        f"Please try again in {WAIT_SECONDS:g}s. "
        "Visit https://console.groq.com/docs/rate-limits for more information."
    )
    error = {"message": message, "type": "requests", "code": "rate_limit_exceeded"}
    return _json(429, {"error": error})


def _quota_worded_429(body: Body, route: str) -> Refusal:
    """A per-minute rate limit whose words speak of quota and billing (Azure links its
    quota page, Gemini's free tier says "You exceeded your current quota"), with the
    wait it names: the words must not make a rate limit an account refusal."""
    if route == GOOGLE_PATH:
        details = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": "GenerateContentInputTokensPerModelPerMinute"}],
            },
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{WAIT_SECONDS:g}s",
            },
        ]
        error = {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits.",
            "status": "RESOURCE_EXHAUSTED",
            "details": details,
        }
        return _json(429, {"error": error})
    message = (
        "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
        "2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. "
        "Please retry after 1 second. Please go here: https://aka.ms/oai/quotaincrease if "
        "you would like to further increase the default rate limit."
    )
    # Azure sends the precise wait in milliseconds beside the whole seconds of its words.
    headers = {"retry-after-ms": f"{WAIT_SECONDS * 1000:g}", "retry-after": "1"}
    return _json(429, {"error": {"code": "429", "message": message}}, headers)


def _openrouter_502(body: Body, route: str) -> Refusal:
    metadata = {
        "raw": "error code: 502",  # an upstream gateway page, nothing named
        "provider_name": "Local Upstream",
    }
    error = {"code": 502, "message": "Provider returned error", "metadata": metadata}
    return _json(502, {"error": error, "user_id": "user_local"})


def _tgi_top_p(body: Body, route: str) -> Refusal:
    """TGI validates after `200 OK`: the stream's first and only event is the error."""
    error = {
        "error": "Input validation error: `top_p` must be > 0.0 and < 1.0",
        "error_type": "validation",
    }
    event = f"data:{json.dumps(error, separators=(',', ':'))}\n\n"
    return Refusal(200, event, {"Content-Type": "text/event-stream"}, event_stream=True)


REJECTIONS: dict[str, Rejection] = {
    "reject_param": Rejection(
        _sends("temperature"),
        lambda body, route: _openai(
            400,
            "Unsupported parameter: 'temperature' is not supported with this model.",
            "invalid_request_error",
            "temperature",
            "unsupported_parameter",
        ),
    ),
    "reject_two_params": Rejection(_sends("top_p", "seed"), _extra_forbidden),
    "reject_max_tokens": Rejection(
        _sends("max_tokens"),
        lambda body, route: _openai(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "invalid_request_error",
            "max_tokens",
            "unsupported_parameter",
        ),
    ),
    "reject_images": Rejection(
        _has_image, lambda body, route: _vllm(f"{_model(body)} is not a multimodal model None")
    ),
    "reject_tools": Rejection(
        _sends("tools"),
        lambda body, route: _openai(
            400,
            f"registry.ollama.ai/library/{_model(body)} does not support tools",
            "api_error",
            None,
            None,
        ),
    ),
    "nvidia_opaque_500": Rejection(
        _sends("stream_options"),
        lambda body, route: _json(
            500, {"message": "Internal server error", "type": "internal_server_error", "code": 500}
        ),
    ),
    "openrouter_502": Rejection(_sends("stream_options"), _openrouter_502),
    "error_after_200": Rejection(_sends("top_p"), _tgi_top_p),
    "overloaded": Rejection(_always, _overloaded, alternate=True),
    "rate_limited": Rejection(_always, _rate_limited, alternate=True),
    "quota_worded_429": Rejection(_always, _quota_worded_429, alternate=True),
    "context_length": Rejection(
        _always,
        lambda body, route: _openai(
            400,
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9131 tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            "messages",
            "context_length_exceeded",
        ),
    ),
    "bad_key": Rejection(
        _always,
        lambda body, route: _openai(
            401,
            "Incorrect API key provided: sk-loca**********************key1. You can find "
            "your API key at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            None,
            "invalid_api_key",
        ),
    ),
    "quota": Rejection(
        _always,
        lambda body, route: _openai(
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            None,
            "insufficient_quota",
        ),
    ),
}
"""Rejections by name, chosen with model `fault/<name>`."""
