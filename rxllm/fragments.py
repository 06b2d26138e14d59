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
stream from above its attempts (a deadline's timer, `cap_events`' count) names the
provider's request id as an error inside the body does, and the rejection the source
was reading when it was cut off (a 429 whose body was still arriving), which is the
verdict rather than the wait; no stream pays anything for it until something hangs up.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol, TypeAlias

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
    "STRICT_JSON",
    "ChunkNormalizer",
    "Closed",
    "Emit",
    "FailureUsage",
    "Fragment",
    "RawChunk",
    "ResponseHeaders",
    "SourceItem",
    "ToolArgs",
    "ToolEnd",
    "ToolInputCut",
    "closing",
    "hang_up",
    "hanging_up",
    "has_half",
    "is_high_half",
    "whole_characters",
    "whole_value",
]


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _finite(number: str) -> float:
    value = float(number)
    if not math.isfinite(value):
        raise ValueError(f"{number[:40]} is beyond a float's range")
    return value


STRICT_JSON = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite)
"""JSON as JSON has it, for a call's arguments: `json.loads` reads NaN and Infinity,
which JSON has not, and reads a number beyond a float's range (`1e400`) as one; this
refuses them (a ValueError), so no such value reaches a tool, and breaks whatever writes
it as JSON again (a browser refuses them, and so would the provider the call goes back
to). `operators.accumulate_tool_arguments` reads every call's arguments with it; the
chat wire's DSML splitter checks a value at its close with it."""


# A UTF-16 half. JSON escapes a character past U+FFFF as its pair ("\\ud83d\\ude00"),
# and a writer that cuts text by UTF-16 code units (JavaScript's `slice`) may send the
# halves in two chunks, each a lone surrogate once decoded, which no UTF-8 writer takes.
has_half = re.compile("[\ud800-\udfff]").search


def is_high_half(char: str) -> bool:
    """Whether `char` is the first (high) half of a UTF-16 pair: one that ends a text
    waits for its other half, which may come in the next."""
    return "\ud800" <= char <= "\udbff"


def whole_characters(text: str) -> str:
    """`text` with each pair of UTF-16 halves joined into its character, and a half
    with no other U+FFFD, as a byte UTF-8 cannot decode is in an SSE stream."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def whole_value(value: Any) -> Any:
    """`value` read from JSON with each string's (and key's) lone half U+FFFD, as a lone
    half in text is (`whole_characters`): no UTF-8 writer takes one."""
    if isinstance(value, str):
        return whole_characters(value) if has_half(value) is not None else value
    if isinstance(value, dict):
        return {whole_value(key): whole_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_value(item) for item in value]
    return value


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


class ToolInputCut(NamedTuple):
    """Tool call `index` takes free text (a custom tool's input, which its wire streams
    as the JSON text of `{"input": text}`), and the turn stopped before the input was
    complete: `text` is what came of it. The call stays open; the turn's end reports it
    cut off, not as JSON that is not valid."""

    index: int  # type: ignore[assignment]
    text: str


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
    | ToolInputCut
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
    halves_possible: bool
    """True once a chunk may have held a lone UTF-16 half (which pydantic-core's parser
    refuses): text from then on is checked for halves to join."""

    def feed(self, chunk: RawChunk) -> None: ...

    def end(self) -> None: ...


class Closed(NamedTuple):
    """What a `hang_up` closed: each is None unless exactly one stream said it."""

    headers: Mapping[str, str] | None
    """The headers of the response it cut off, which name its request id."""
    rejection: Failed | None
    """The rejection the source was reading when it was cut off: the status and headers
    (`Retry-After`) of a 4xx or 5xx that had come, with what of its body had; the stream
    would have ended with it, so it says why the stream ended better than a deadline."""
    ended: tuple[Fragment, ...] | None = None
    """What the normalizer it cut off ends the turn with where its provider had already
    said the turn was complete (a finish seen, the usage or `[DONE]` still to come): the
    end of the body would have ended it so, and a stall after it is no failure."""


# What the streams that a `hang_up` in progress has closed said so far: their responses'
# headers, and their rejections. Set only for the length of its `dispose()` call, which
# runs up the chain synchronously.
_HANGING_UP: ContextVar[
    tuple[list[Mapping[str, str]], list[Failed], list[tuple[Fragment, ...]]] | None
] = ContextVar("rxllm_hanging_up", default=None)


def hang_up(subscription: abc.DisposableBase) -> Closed:
    """Dispose `subscription`, and return what closed: the headers of the response an
    operator upstream (`operators.normalize`) had when it was disposed, and the rejection
    a source (`sources.http`) was reading.

    Either is None when none came (a stall before the headers, a 2xx), when the hang-up
    closed several (a merge of streams: naming one would mislead), or when something in
    between disposes later than at once.
    """
    headers: list[Mapping[str, str]] = []
    rejections: list[Failed] = []
    endings: list[tuple[Fragment, ...]] = []
    token = _HANGING_UP.set((headers, rejections, endings))
    try:
        subscription.dispose()
    finally:
        _HANGING_UP.reset(token)
    return Closed(
        headers[0] if len(headers) == 1 else None,
        rejections[0] if len(rejections) == 1 else None,
        endings[0] if len(endings) == 1 else None,
    )


def hanging_up() -> bool:
    """Whether a `hang_up` is in progress: whoever is disposed has someone to tell."""
    return _HANGING_UP.get() is not None


def closing(
    headers: Mapping[str, str] | None,
    rejection: Failed | None = None,
    ended: tuple[Fragment, ...] | None = None,
) -> None:
    """Called by a stream that is being disposed with the headers of its response (None
    if none came) and what its turn ends with if complete (`Closed.ended`), and by a
    source with the rejection it was reading: a `hang_up` in progress takes them; any
    other dispose, nothing."""
    closed = _HANGING_UP.get()
    if closed is None:
        return
    if headers is not None:
        closed[0].append(headers)
    if rejection is not None:
        closed[1].append(rejection)
    if ended is not None:
        closed[2].append(ended)
