"""Rejections the local provider plays, as real endpoints word them, and what triggers each.

A rejection is chosen by model `fault/<name>` and plays only while its trigger holds
in the request body: a client that degrades its request (drops the parameter, the
images, the tools) gets the normal scripted answer on its retry, exactly as from an
endpoint that refused one feature. A trigger reads the body where its wire sends what
it looks at (`sent`): Gemini's sampling parameters and token limit inside
`generationConfig` in camelCase, Responses' token limit as `max_output_tokens`, images
in each wire's content parts. The three parameter rejections answer in the words and
envelope of the wire's own API (Anthropic's `{"type": "error", ...}`, Google's
`{"error": {code, message, status, details}}`); the others are one vendor's answer
(the table says whose) on every wire. `overloaded`, `rate_limited` and `quota_worded_429`
refuse every odd-numbered request instead (a per-server count), so a client that waits and sends
the same body again succeeds. The texts follow the shapes collected in
`../shared/rejections` (OpenAI, vLLM, Ollama, NVIDIA, OpenRouter, TGI, Groq,
Anthropic); they are written here, not copied.

| name | status | while |
|---|---|---|
| `reject_param` | 400, OpenAI `unsupported_parameter`, `temperature` | `temperature` is sent |
| `reject_two_params` | 400, vLLM pydantic `extra_forbidden` list | `top_p` or `seed` is sent |
| `reject_max_tokens` | 400, OpenAI "Use 'max_completion_tokens' instead." | a token limit is sent |
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

On the other wires the three parameter rejections, `reject_tools` and (Gemini)
`reject_images` say it as that API does. Responses: OpenAI's words for its own key
(`max_output_tokens` is "not supported with this model", no replacement named).
Anthropic: "`temperature` is deprecated for this model.", "top_p: Extra inputs are not
permitted", for the `max_tokens` it always needs "max_tokens: N > N-1, which is the
maximum allowed number of output tokens for <model>", and Ollama's tools refusal in
Anthropic's envelope, as Ollama's Anthropic API sends it. Gemini: `generationConfig`
fields it does not know (`Unknown name "topP" at 'generation_config'`, one
`fieldViolations` entry each), "Unable to submit request because it has a
maxOutputTokens value of N but the supported range is ...", "Image input modality is
not enabled for models/<model>" and "Function calling is not enabled for
models/<model>". On the chat wire the token limit refused is `max_tokens` only: OpenAI's
own provider sends `max_completion_tokens`, the key the refusal asks for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rxllm.local.wire_anthropic import PATH as ANTHROPIC_PATH
from rxllm.local.wire_google import PATH as GOOGLE_PATH
from rxllm.local.wire_openai_responses import PATH as RESPONSES_PATH

__all__ = ["REJECTIONS", "Refusal", "Rejection", "Sent", "refusal_for", "sent"]

Body = dict[str, Any]

# The wait `overloaded` and `rate_limited` ask for: long enough to be a real wait,
# short enough for a test suite.
WAIT_SECONDS = 0.05
# Image parts in the chat, Anthropic and Responses wires (Gemini's are `inlineData` or
# `fileData` of an image type).
IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})
# Where a wire sends a parameter under another name than the chat wire's: Gemini inside
# `generationConfig`, in camelCase; Responses its token limit as `max_output_tokens`.
GOOGLE_CONFIG = {
    "temperature": "temperature",
    "top_p": "topP",
    "seed": "seed",
    "max_tokens": "maxOutputTokens",
}
RESPONSES_KEYS = {"max_tokens": "max_output_tokens"}


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
    """What to answer (`refuse(body, route)`) while `trigger(body, route)` holds."""

    trigger: Callable[[Body, str], bool]
    refuse: Callable[[Body, str], Refusal]
    alternate: bool = False
    """Refuse only odd-numbered requests, whatever the body (transient refusals)."""


def refusal_for(name: str, body: Body, route: str, number: int) -> Refusal | None:
    """The refusal rejection `name` plays for request `number` (1-based, counted per
    rejection and server) on `route`, or None when the normal answer is due."""
    rejection = REJECTIONS[name]
    due = rejection.trigger(body, route) and (not rejection.alternate or number % 2 == 1)
    return rejection.refuse(body, route) if due else None


class Sent(NamedTuple):
    """A parameter as the request sends it: the wire's own key, and its value."""

    key: str
    value: Any


def sent(body: Body, route: str, name: str) -> Sent | None:
    """Parameter `name` (the chat wire's name: `temperature`, `max_tokens`, ...) where
    the wire of `route` sends it, or None when the body does not send it."""
    where: Any = body
    key = name
    if route == GOOGLE_PATH and name in GOOGLE_CONFIG:
        where, key = body.get("generationConfig"), GOOGLE_CONFIG[name]
    elif route == RESPONSES_PATH:
        key = RESPONSES_KEYS.get(name, name)
    return Sent(key, where[key]) if isinstance(where, dict) and key in where else None


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


def _anthropic(message: str) -> Refusal:
    """Anthropic's envelope for a request it cannot take (docs.claude.com/en/api/errors)."""
    error = {"type": "invalid_request_error", "message": message}
    return _json(400, {"type": "error", "error": error})


def _google(message: str, violations: list[dict[str, str]] | None = None) -> Refusal:
    """Google's envelope for a request it cannot take, with the fields it names in a
    `google.rpc.BadRequest` detail."""
    error: dict[str, Any] = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
    if violations:
        bad_request = "type.googleapis.com/google.rpc.BadRequest"
        error["details"] = [{"@type": bad_request, "fieldViolations": violations}]
    return _json(400, {"error": error})


def _unknown_fields(keys: list[str]) -> Refusal:
    """Gemini's refusal of `generationConfig` fields it does not take, one line each
    (as it refused `seed` before it knew it)."""
    lines = [
        f"Invalid JSON payload received. Unknown name {json.dumps(key)} at "
        "'generation_config': Cannot find field."
        for key in keys
    ]
    violations = [{"field": "generation_config", "description": line} for line in lines]
    return _google("\n".join(lines), violations)


def _model(body: Body) -> str:
    return str(body.get("model") or "rxllm-local")


def _sends(*names: str) -> Callable[[Body, str], bool]:
    return lambda body, route: any(sent(body, route, name) for name in names)


def _sent_all(body: Body, route: str, *names: str) -> list[Sent]:
    return [found for name in names if (found := sent(body, route, name))]


def _always(body: Body, route: str) -> bool:
    return True


def _parts(body: Body) -> Iterator[dict[str, Any]]:
    """Every content part of every message, in any wire: chat and Anthropic `messages`,
    Responses `input` items, Gemini `contents` and their `parts`."""
    items = body.get("input")
    for message in [
        *(body.get("messages") or ()),
        *(items if isinstance(items, list) else ()),
        *(body.get("contents") or ()),
    ]:
        content = (
            message.get("content", message.get("parts")) if isinstance(message, dict) else None
        )
        if isinstance(content, list):
            yield from (part for part in content if isinstance(part, dict))


def _is_image(part: dict[str, Any]) -> bool:
    data = part.get("inlineData") or part.get("fileData")
    if isinstance(data, dict):
        return str(data.get("mimeType", "")).startswith("image/")
    return part.get("type") in IMAGE_PART_TYPES


def _has_image(body: Body, route: str) -> bool:
    return any(_is_image(part) for part in _parts(body))


def _unsupported_temperature(body: Body, route: str) -> Refusal:
    if route == ANTHROPIC_PATH:  # Claude Opus 4.7's answer
        return _anthropic("`temperature` is deprecated for this model.")
    if route == GOOGLE_PATH:
        return _unknown_fields(["temperature"])
    return _openai(
        400,
        "Unsupported parameter: 'temperature' is not supported with this model.",
        "invalid_request_error",
        "temperature",
        "unsupported_parameter",
    )


def _extra_forbidden(body: Body, route: str) -> Refusal:
    """vLLM's pydantic errors as a Python repr inside `message`: one entry per
    forbidden key still sent, so a partial degradation is told what remains. Anthropic
    names the first such key, Gemini each one."""
    found = _sent_all(body, route, "top_p", "seed")
    if route == ANTHROPIC_PATH:
        return _anthropic(f"{found[0].key}: Extra inputs are not permitted")
    if route == GOOGLE_PATH:
        return _unknown_fields([key for key, _ in found])
    errors = [
        {
            "type": "extra_forbidden",
            "loc": ("body", key),
            "msg": "Extra inputs are not permitted",
            "input": value,
        }
        for key, value in found
    ]
    return _vllm(repr(errors))


def _unsupported_max_tokens(body: Body, route: str) -> Refusal:
    """OpenAI's refusal of `max_tokens` for a reasoning model; where the token limit
    cannot be refused by name (Anthropic needs it, Gemini takes it), the words for a
    limit above the model's."""
    key, value = sent(body, route, "max_tokens") or Sent("max_tokens", None)
    if route == ANTHROPIC_PATH:
        below = value - 1 if type(value) is int else 0
        return _anthropic(
            f"max_tokens: {value} > {below}, which is the maximum allowed number of output "
            f"tokens for {_model(body)}"
        )
    if route == GOOGLE_PATH:
        return _google(
            f"Unable to submit request because it has a maxOutputTokens value of {value} but "
            f"the supported range is from 1 (inclusive) to {value} (exclusive). Update the "
            "value and try again."
        )
    instead = " Use 'max_completion_tokens' instead." if key == "max_tokens" else ""
    return _openai(
        400,
        f"Unsupported parameter: '{key}' is not supported with this model.{instead}",
        "invalid_request_error",
        key,
        "unsupported_parameter",
    )


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


def _unsupported_images(body: Body, route: str) -> Refusal:
    """vLLM's refusal for a text-only model; Gemini's for a model without image input."""
    if route == GOOGLE_PATH:
        return _google(f"Image input modality is not enabled for models/{_model(body)}")
    return _vllm(f"{_model(body)} is not a multimodal model None")


def _unsupported_tools(body: Body, route: str) -> Refusal:
    """Ollama's refusal for a model without tools (its Anthropic-compatible API wraps
    it in Anthropic's envelope); Gemini's for a model without function calling (Gemma
    on the Gemini API)."""
    if route == GOOGLE_PATH:
        return _google(f"Function calling is not enabled for models/{_model(body)}")
    message = f"registry.ollama.ai/library/{_model(body)} does not support tools"
    if route == ANTHROPIC_PATH:
        return _anthropic(message)
    return _openai(400, message, "api_error", None, None)


REJECTIONS: dict[str, Rejection] = {
    "reject_param": Rejection(_sends("temperature"), _unsupported_temperature),
    "reject_two_params": Rejection(_sends("top_p", "seed"), _extra_forbidden),
    "reject_max_tokens": Rejection(_sends("max_tokens"), _unsupported_max_tokens),
    "reject_images": Rejection(_has_image, _unsupported_images),
    "reject_tools": Rejection(_sends("tools"), _unsupported_tools),
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
