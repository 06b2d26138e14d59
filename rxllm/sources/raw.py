"""Body bytes -> raw chunks: the SSE reading the HTTP and replay sources share."""

from __future__ import annotations

import json

from reactivex import abc

from rxllm.error_body import (
    MAX_MESSAGE_CHARS,
    envelope_status,
    error_envelope,
    parse_error_payload,
)
from rxllm.events import ErrorKind, Failed, failed
from rxllm.fragments import RawChunk, SourceItem
from rxllm.secrets import redact_head
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES, SseDecoder, SseLineTooLong

__all__ = ["ChunkReader", "cut_short", "whole_response"]

# How much of a body that is not SSE an error quotes back, and of a last line cut short.
_SNIPPET_CHARS = 300
_CUT_LINE_CHARS = 80
# How much of a body's start is kept until it shows itself SSE: a JSON error object in
# place of the stream is read whole, as far as an error body is (`MAX_ERROR_BODY_BYTES`).
_HEAD_BYTES = 64 * 1024


# Keys of a whole response (a request answered without streaming) -> what it is.
_WHOLE_RESPONSES = {
    ("object", "chat.completion"): "an OpenAI chat completion",
    ("object", "response"): "an OpenAI Responses API response",
    ("type", "message"): "an Anthropic message",
}


def whole_response(value: object) -> str | None:
    """What whole (unstreamed) response `value` is, or None."""
    if not isinstance(value, dict):
        return None
    for (key, kind), what in _WHOLE_RESPONSES.items():
        if value.get(key) == kind:
            return what
    return None


# A NamedTuple's constructor is a Python function (a frame per call: twice the cost of
# `tuple.__new__` with the fields), and one chunk is built per event.
_new = tuple.__new__


class ChunkReader:
    """Turns body bytes into `RawChunk`s through one `SseDecoder`: the part that the
    HTTP and replay sources share. Returns a `Failed` when the body is unusable.

    Each chunk goes to `sink.on_next` looked up anew, never kept: a sink that stops
    (a terminal, a dispose) mid-read swaps it for a no-op (`rxllm.operators._link`)."""

    __slots__ = ("_attempt", "_decoder", "_head", "_provider", "_secrets", "_sink")

    def __init__(
        self,
        sink: abc.ObserverBase[SourceItem],
        provider: str,
        attempt: int = 1,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self._sink = sink
        self._provider = provider
        self._attempt = attempt
        # The request's credentials: a quote of the body is redacted before it is cut.
        self._secrets = secrets
        self._decoder = SseDecoder(
            max_line_bytes, provider=provider, attempt=attempt, secrets=secrets
        )
        # The body's start, until it shows itself SSE: for "not an SSE stream", or the
        # error object a server sent in place of the stream.
        self._head: bytes | None = b""

    def feed(self, data: bytes) -> Failed | None:
        text = self._decoder.one_data(data)  # an SSE stream's reads are mostly one event each
        if text is not None:
            self._head = None  # an SSE stream, then (a store, not a test per read)
            self._sink.on_next(_new(RawChunk, (self._provider, self._attempt, "message", text)))
            return None
        head = self._head
        if head is not None and len(head) < _HEAD_BYTES:
            self._head = head + data[: _HEAD_BYTES - len(head)]
        problem = None
        try:
            events = self._decoder.feed(data)
        except SseLineTooLong as exc:
            events, problem = exc.events, self._failure("limit", str(exc))
        if events or self._decoder.comments or self._decoder.fields:
            self._head = None  # an SSE stream after all: no snippet to show, none kept
        sink, provider, attempt = self._sink, self._provider, self._attempt
        for ev in events:
            sink.on_next(_new(RawChunk, (provider, attempt, ev.event, ev.data)))
        return problem

    def close(self) -> Failed | None:
        decoder = self._decoder
        cut = decoder.unended_line()
        if not cut_short(cut):
            cut = b""
        for ev in decoder.close(last_line=not cut):
            self._sink.on_next(RawChunk(self._provider, self._attempt, ev.event, ev.data))
        if cut:
            line = cut[:_HEAD_BYTES].decode("utf-8", "replace")  # not a line of megabytes
            snippet = redact_head(line, self._secrets, _CUT_LINE_CHARS)
            return self._failure(
                "truncated", f"the body ends in the middle of its last line: {snippet!r}..."
            )
        if decoder.bytes and not (decoder.events or decoder.comments or decoder.fields):
            text = (self._head or b"").decode("utf-8", "replace").strip().lstrip("\ufeff")
            if not text:  # only line breaks (and a BOM): an SSE stream that said nothing
                return None
            error = error_envelope(text)
            if error is not None:
                return self._rejection(error, text)
            snippet = redact_head(text, self._secrets, _SNIPPET_CHARS)
            what = whole_response(_first_json(text))
            if what is not None:  # a server or gateway that dropped `stream: true`
                return self._failure(
                    "protocol",
                    f"the endpoint answered a whole response, not a stream ({what}): it "
                    f"ignored the request to stream: {snippet!r}",
                )
            return self._failure("protocol", f"the response body is not an SSE stream: {snippet!r}")
        return None

    def _rejection(self, error: object, text: str) -> Failed:
        """A `200 OK` whose body is an error object, not the stream (gateways and
        OpenAI-compatible servers that fail before streaming): that error, with its
        words and fields, as if it had come as the stream's first event. With no words
        the envelope reads (Baidu's `error_msg` beside its `error_code`), the message is
        what was sent, redacted, as for the same object in a frame (`stream_error`)."""
        body = parse_error_payload(error)
        message = body.message or redact_head(text, self._secrets, MAX_MESSAGE_CHARS)
        return failed(
            self._provider,
            "stream_error",
            message,
            attempt=self._attempt,
            status=envelope_status(error),
            raw=text,
            **body.fields(),
        )

    def _failure(self, kind: ErrorKind, message: str) -> Failed:
        return failed(self._provider, kind, message, attempt=self._attempt)


def _first_json(text: str) -> object:
    """The JSON value `text` begins with, or None (not JSON, or cut off)."""
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except (ValueError, RecursionError):
        return None


def cut_short(line: bytes) -> bool:
    """Whether `line`, the last of a body and ended by no line break, is a `data:` line
    cut in the middle: its value is not whole JSON (nor `[DONE]`). A whole last line
    that lacks only its line break is not: many servers and recordings omit it. Without
    this, a connection closed cleanly mid-line would hand the provider half a JSON value,
    a `protocol` error, where the stream was truncated."""
    if not line.startswith(b"data:"):
        return False
    value = line[5:].strip()
    if not value or value == b"[DONE]":
        return False
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return True
    return False
