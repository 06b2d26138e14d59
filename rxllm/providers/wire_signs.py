"""Which wire's stream an event belongs to, by the signs each wire's events carry.

One piece of wire knowledge, pure, asked per event: by `rxllm.pipeline.sniff` to name
the wire of a recording, and by each wire to end a turn at the first event of another
API's stream (a base URL of another provider's, a relay's other route), where each
misread it its own way (the Anthropic wire failed at `[DONE]` with no word of what the
bytes were; the Responses and Gemini wires logged every event and ended `truncated`,
retried as if cut).

The signs (`event_api`), first match wins:

- an event `type` (or `event:` name) of Anthropic's Messages stream (`message_start`,
  `content_block_delta`, ...) -> `anthropic`; an error `{"type": "error", "error":
  {"type": "..._error", "message": ...}}` is Anthropic's shape too, but not one with a
  `sequence_number` (the Responses API's), nor one whose error has a `code` or `param`
  (OpenAI's error object);
- a `type` starting with `response.` -> `openai-responses`;
- a JSON object with `candidates`, `promptFeedback` or `usageMetadata` -> `google`;
- a JSON object with `choices`, or `object: "chat.completion.chunk"` -> `openai`.

A wire asks `other_api`, which names another API only for an event that carries no
sign of the wire's own (a chat chunk with choices is one whatever `type` or
`candidates` it carries; one with `choices: []` unless `candidates` or another wire's
`type` say otherwise, so Gemini's `usageMetadata` passed on beside it is no sign) and
is no error: every wire reads other wires' error shapes
on purpose, each its own way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ANTHROPIC_EVENTS", "event_api", "json_type", "other_api"]

ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
_GEMINI_KEYS = ("candidates", "promptFeedback", "usageMetadata")


def _is_gemini(payload: Mapping[str, Any]) -> bool:
    return any(key in payload for key in _GEMINI_KEYS)


# The API each wire reads, as an error message names it.
_APIS = {
    "anthropic": "Anthropic's Messages API",
    "openai-responses": "OpenAI's Responses API",
    "google": "Gemini's API",
    "openai": "OpenAI's Chat Completions API",
}


def _by_type(kind: Any, payload: Mapping[str, Any]) -> str | None:
    if kind.__class__ is not str:
        return None
    if kind in ANTHROPIC_EVENTS:
        return "anthropic"
    if kind.startswith("response."):
        return "openai-responses"
    if kind == "error":
        if "sequence_number" in payload:  # numbered events are the Responses API's alone
            return "openai-responses"
        error = payload.get("error")
        if not isinstance(error, dict) or "code" in error or "param" in error:
            return None  # an OpenAI-style error object: Anthropic's has a type and a message
        inner = error.get("type")
        if isinstance(inner, str) and inner.endswith("_error"):
            return "anthropic"
    return None


def event_api(kind: Any, payload: Mapping[str, Any]) -> str | None:
    """The wire (`anthropic`, `openai-responses`, `google`, `openai`) whose stream an
    event belongs to, by its `type` or `event:` name (`kind`) and its JSON object
    (`payload`, empty for a name alone), or None when it says nothing."""
    found = _by_type(kind, payload)
    if found is not None:
        return found
    if _is_gemini(payload):
        return "google"
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        return "openai"
    return None


def _is_own(wire: str, kind: Any, payload: Mapping[str, Any]) -> bool:
    """Whether an event carries a sign of `wire`'s own stream."""
    if wire == "openai":
        if payload.get("choices") or payload.get("object") == "chat.completion.chunk":
            return True
        # `choices: []` (the usage chunk's) is a chat chunk's too when nothing of another
        # wire's own says otherwise: a relay passing Gemini's usage on as it came
        # (`{"choices": [], "usageMetadata": {...}}`) is no Gemini chunk; `candidates`
        # or another wire's event `type` still are.
        return (
            payload.get("choices").__class__ is list
            and "candidates" not in payload
            and _by_type(kind, payload) is None
        )
    if wire == "google":
        return _is_gemini(payload)
    if kind.__class__ is not str:
        return False
    if wire == "anthropic":
        return kind in ANTHROPIC_EVENTS
    return wire == "openai-responses" and kind.startswith("response.")


def other_api(wire: str, kind: Any, payload: Mapping[str, Any]) -> str | None:
    """The API whose stream an event belongs to, with the provider that reads it (for
    an error message: "Anthropic's Messages API (provider 'anthropic' reads it)"), when
    it is another one's than `wire`'s; None for an event of `wire`'s own, an error
    event, or one that names no API (a lone `ping`)."""
    if kind == "error" or _is_own(wire, kind, payload):
        return None
    found = event_api(kind, payload)
    if found is None or found == wire:
        return None
    return f"{_APIS[found]} (provider {found!r} reads it)"


def json_type(value: Any) -> str:
    """What a wire value is, in JSON's words: a wire's error about a value of another type
    than its reference gives says so in the words of the JSON the provider sent, never
    Python's (`'list' object has no attribute 'get'`)."""
    if value is None:
        return "null"
    if value.__class__ is bool:
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
