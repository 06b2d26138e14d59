"""The data that crosses layers inside a pipeline, before it becomes events.

Sources emit `RawChunk`s (one SSE event of one attempt); a provider's normalizer reads
them and emits `Fragment`s: events, plus tool-argument pieces that never reach the
user (`accumulate_tool_arguments` turns them into `ToolRequest`s) and the usage a
failure brings (`track_commitment` decides whether it is reported). Sources, providers
and operators all import these types from here, and none of them from each other.
NamedTuples, because one is built per network chunk: immutable, and a quarter of a
frozen dataclass's cost to build (and to define, at import).

One fact travels the other way, without an item: `hang_up` disposes a stream and
learns which response that closed (its headers), so that an operator that ends a
stream from a timer (a deadline) names the provider's request id as an error inside
the body does; no stream pays anything for it until something hangs up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import NamedTuple, Protocol, TypeAlias

from reactivex import abc

from rxllm.events import (
    Cancelled,
    Citation,
    Done,
    Failed,
    ReasoningDelta,
    Refusal,
    ServerToolCall,
    ServerToolResult,
    TextDelta,
    ToolRequest,
    ToolStart,
    Usage,
    UsageUpdate,
)

__all__ = [
    "ChunkNormalizer",
    "Emit",
    "FailureUsage",
    "Fragment",
    "RawChunk",
    "ResponseHeaders",
    "SourceItem",
    "ToolArgs",
    "ToolEnd",
    "closing",
    "hang_up",
]


class RawChunk(NamedTuple):
    """One dispatched SSE event: its `event:` name and its `data`. A NamedTuple:
    immutable, and a quarter of a frozen dataclass's cost to build, once per chunk."""

    provider: str
    attempt: int
    event: str
    data: str


class ResponseHeaders(NamedTuple):
    """The headers of the response a source streams, before its first chunk: an error
    the provider reports inside the body names the response's request id from them."""

    headers: Mapping[str, str]


SourceItem: TypeAlias = RawChunk | ResponseHeaders | Failed | Cancelled
"""What a source emits: the response's headers, then raw chunks; or one `Failed` for a
transport-level failure, or one `Cancelled` when its provider was closed mid-stream."""


class ToolArgs(NamedTuple):
    """A piece of the JSON text of tool call `index`'s arguments."""

    # The field hides `tuple.index`, which no fragment is asked for.
    index: int  # type: ignore[assignment]
    delta: str


class ToolEnd(NamedTuple):
    """Tool call `index` is complete. `arguments`, when given, is the provider's
    authoritative full JSON text and replaces the accumulated pieces; `signature`, the
    call's signature when it came after the call's start (Gemini's OpenAI-compatible
    stream sends it on a delta of its own)."""

    index: int  # type: ignore[assignment]
    arguments: str | None = None
    signature: str | None = None


class FailureUsage(NamedTuple):
    """The usage that comes with a failure (in the chunk, the event or the finish that
    ends the attempt in an error): what the failed request cost. It commits nothing:
    `track_commitment` reports it as a `usage` event only where the attempt had already
    committed."""

    provider: str
    attempt: int
    usage: Usage


Fragment: TypeAlias = (
    TextDelta
    | ReasoningDelta
    | ToolStart
    | ToolArgs
    | ToolEnd
    | ToolRequest
    | Refusal
    | Citation
    | ServerToolCall
    | ServerToolResult
    | UsageUpdate
    | FailureUsage
    | Done
    | Failed
    | Cancelled
)


Emit: TypeAlias = Callable[[Fragment], None]


class ChunkNormalizer(Protocol):
    """What `operators.normalize` drives: one provider's reader of one attempt's chunks
    (`rxllm.providers.base.Normalizer` is the implementation every wire shares)."""

    provider: str
    attempt: int
    settled: bool
    """True once a terminal fragment was emitted: later chunks are ignored."""
    response_headers: Mapping[str, str] | None
    """The streamed response's headers, where the source has them (its request id): for
    an error inside the body, and for whoever hangs up on the stream (`hang_up`)."""
    secrets: tuple[str, ...]
    """The request's credentials, which no error it reports may quote."""

    def feed(self, chunk: RawChunk) -> None: ...

    def end(self) -> None: ...


# The headers of the responses that a `hang_up` in progress has closed so far: set only
# for the length of its `dispose()` call, which runs up the chain synchronously.
_HANGING_UP: ContextVar[list[Mapping[str, str]] | None] = ContextVar(
    "rxllm_hanging_up", default=None
)


def hang_up(subscription: abc.DisposableBase) -> Mapping[str, str] | None:
    """Dispose `subscription`, and return the headers of the response that closed: the
    one an operator upstream (`operators.normalize`) had when it was disposed.

    None when no response had answered yet (a stall before the headers), when the
    hang-up closed several (a merge of streams: naming one would mislead), or when
    something in between disposes later than at once.
    """
    closed: list[Mapping[str, str]] = []
    token = _HANGING_UP.set(closed)
    try:
        subscription.dispose()
    finally:
        _HANGING_UP.reset(token)
    return closed[0] if len(closed) == 1 else None


def closing(headers: Mapping[str, str] | None) -> None:
    """Called by a stream that is being disposed with the headers of its response (None
    if none came): a `hang_up` in progress takes them; any other dispose, nothing."""
    if headers is not None:
        closed = _HANGING_UP.get()
        if closed is not None:
            closed.append(headers)
