"""Body bytes -> raw chunks: the SSE reading the HTTP and replay sources share."""

from __future__ import annotations

from reactivex import abc

from rxllm.events import ErrorKind, Failed, failed
from rxllm.fragments import RawChunk, SourceItem
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES, SseDecoder, SseLineTooLong

__all__ = ["ChunkReader"]

# How much of a body that is not SSE an error quotes back.
_SNIPPET_BYTES = 300


# A NamedTuple's constructor is a Python function (a frame per call: twice the cost of
# `tuple.__new__` with the fields), and one chunk is built per event.
_new = tuple.__new__


class ChunkReader:
    """Turns body bytes into `RawChunk`s through one `SseDecoder`: the part that the
    HTTP and replay sources share. Returns a `Failed` when the body is unusable.

    Each chunk goes to `sink.on_next` looked up anew, never kept: a sink that stops
    (a terminal, a dispose) mid-read swaps it for a no-op (`rxllm.operators._link`)."""

    def __init__(
        self,
        sink: abc.ObserverBase[SourceItem],
        provider: str,
        attempt: int = 1,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self._sink = sink
        self._provider = provider
        self._attempt = attempt
        self._decoder = SseDecoder(max_line_bytes)
        self._head: bytes | None = b""  # the body's start, for "not an SSE stream"

    def feed(self, data: bytes) -> Failed | None:
        head = self._head
        if head is not None and len(head) < _SNIPPET_BYTES:
            self._head = head + data[: _SNIPPET_BYTES - len(head)]
        try:
            events = self._decoder.feed(data)
        except SseLineTooLong as exc:
            return self._failure("limit", str(exc))
        if events:
            self._head = None  # an SSE stream after all: no snippet to show, none kept
        sink, provider, attempt = self._sink, self._provider, self._attempt
        for ev in events:
            sink.on_next(_new(RawChunk, (provider, attempt, ev.event, ev.data)))
        return None

    def close(self) -> Failed | None:
        for ev in self._decoder.close():
            self._sink.on_next(RawChunk(self._provider, self._attempt, ev.event, ev.data))
        decoder = self._decoder
        if decoder.bytes and not decoder.events and not decoder.comments:
            snippet = (self._head or b"").decode("utf-8", "replace").strip()
            return self._failure("protocol", f"the response body is not an SSE stream: {snippet!r}")
        return None

    def _failure(self, kind: ErrorKind, message: str) -> Failed:
        return failed(self._provider, kind, message, attempt=self._attempt)
