"""The data that crosses layers inside a pipeline, before it becomes events.

Sources emit `RawChunk`s (one SSE event of one attempt); a provider's normalizer reads
them and emits `Fragment`s: events, plus tool-argument pieces that never reach the
user (`accumulate_tool_arguments` turns them into `ToolRequest`s). Sources, providers
and operators all import these types from here, and none of them from each other.
Plain slotted tuples and dataclasses, because one is built per network chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeAlias

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
    UsageUpdate,
)

__all__ = [
    "ChunkNormalizer",
    "Emit",
    "Fragment",
    "RawChunk",
    "ResponseHeaders",
    "SourceItem",
    "ToolArgs",
    "ToolEnd",
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


@dataclass(slots=True, frozen=True)
class ToolArgs:
    """A piece of the JSON text of tool call `index`'s arguments."""

    index: int
    delta: str


@dataclass(slots=True, frozen=True)
class ToolEnd:
    """Tool call `index` is complete. `arguments`, when given, is the provider's
    authoritative full JSON text and replaces the accumulated pieces."""

    index: int
    arguments: str | None = None


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
    """The streamed response's headers, where the source has them (its request id)."""

    def feed(self, chunk: RawChunk) -> None: ...

    def end(self) -> None: ...
