"""Which wire protocol recorded bytes speak, read from their first data events.

A pure function, for `rxllm replay FILE` without `--provider` and for the error a
replay with the wrong provider ends in. It names a wire, never a preset: OpenAI-
compatible bytes (Groq, OpenRouter, vLLM, ...) are `openai`, since their events carry
nothing that tells the server apart reliably.

The signs, first match wins, event by event (`rxllm.providers.wire_signs.event_api`,
which each wire asks too, to end a turn at another API's stream):

- an `event:` name or a data `type` of Anthropic's Messages stream (`message_start`,
  `content_block_delta`, ...) -> `anthropic`; an error `{"type": "error", "error":
  {"type": "..._error", "message": ...}}` is Anthropic's shape too, but not one with a
  `sequence_number` (the Responses API's, which also nests `{"type": "server_error",
  "code", "message", "param"}`), nor one whose error has a `code` or `param`;
- an `event:` name or a data `type` starting with `response.` -> `openai-responses`;
- a JSON object with `candidates`, `promptFeedback` or `usageMetadata` -> `google`;
- a JSON object with `choices`, or `object: "chat.completion.chunk"` -> `openai`.

Events that say nothing (comments, `[DONE]`, keepalives, other errors) are skipped;
after `MAX_EVENTS` data events or `MAX_BYTES` bytes without a sign, the answer is None.
Then `sniff_not_a_stream` may say what the bytes are instead (rxllm's own record or
events, a whole response), as a replay of them would.
A recording is read as a replay reads it (`rxllm.sources.replay`): gzip is
decompressed, an HTTP response dump's head set aside, and the values of a JSON body
(Gemini's array, NDJSON) are its events.
"""

from __future__ import annotations

import json
import re

from rxllm.providers.wire_signs import event_api
from rxllm.sources.replay import json_documents, not_a_stream, read_recording

__all__ = ["MAX_BYTES", "MAX_EVENTS", "sniff_not_a_stream", "sniff_provider"]

MAX_EVENTS = 16
MAX_BYTES = 1 << 20

_LINE_END = re.compile(r"\r\n|\r|\n")


def _events(data: bytes) -> list[tuple[str, str]]:
    """(event name, data) of the first data events of `data`, per the SSE framing, or
    the first values of a JSON body."""
    body = b"".join(read_recording(data[:MAX_BYTES], limit=MAX_BYTES).chunks)
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if text.lstrip()[:1] in ("[", "{"):
        documents, _ = json_documents(text, most=MAX_EVENTS)
        return [("", document) for document in documents]
    events: list[tuple[str, str]] = []
    name, lines = "", list[str]()
    for line in _LINE_END.split(text):
        if not line:
            if lines:
                events.append((name, "\n".join(lines)))
                if len(events) >= MAX_EVENTS:
                    return events
            name, lines = "", list[str]()
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            lines.append(value)
    if lines:
        events.append((name, "\n".join(lines)))
    return events[:MAX_EVENTS]


def sniff_provider(data: bytes) -> str | None:
    """The wire (`anthropic`, `openai-responses`, `google`, `openai`) that the first
    data events of `data` belong to, or None when they do not say."""
    for name, body in _events(data):
        found = event_api(name, {})
        if found:
            return found
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            continue
        if not isinstance(payload, dict):
            continue
        found = event_api(payload.get("type"), payload)
        if found:
            return found
    return None


def sniff_not_a_stream(data: bytes) -> str | None:
    """What `data` is when its first JSON value shows that it holds no provider's
    stream (rxllm's own record or events, a whole response, Ollama's native API: the
    message a replay of it ends with, `rxllm.sources.replay.not_a_stream`), or None."""
    for _, body in _events(data)[:1]:
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            return None
        return not_a_stream(payload) if isinstance(payload, dict) else None
    return None
