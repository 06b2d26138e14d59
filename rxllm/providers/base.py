"""What every wire protocol provides, and the emitting helpers its normalizer shares.

A provider module holds wire knowledge only: how to build the request body, and how
to read that provider's chunks into fragments. Transport lives in `rxllm.sources`,
stream mechanics in `rxllm.operators`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeAlias

from loguru import logger
from reactivex import Observable

from rxllm.degradation import RecoveryPolicy
from rxllm.events import (
    Done,
    ErrorKind,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolStart,
    Usage,
    UsageUpdate,
    failed,
)
from rxllm.fragments import Emit, RawChunk, SourceItem, ToolArgs, ToolEnd
from rxllm.request import ChatRequest

__all__ = ["Normalizer", "RawOperator", "WireProtocol", "stop_reason_of"]

RawOperator: TypeAlias = Callable[[Observable[SourceItem]], Observable[SourceItem]]


def stop_reason_of(raw: str | None, table: Mapping[str, StopReason]) -> StopReason:
    """Map a provider's finish reason; an unknown one is `other` (the raw value is kept
    on the event by the caller)."""
    if raw is None:
        return "other"
    return table.get(raw, "other")


class Normalizer(ABC):
    """Reads one attempt's raw chunks and emits fragments. One instance per attempt, so
    its state never outlives the stream it belongs to.

    Subclasses implement `on_chunk` (and `end`, for what the end of the body means);
    the helpers build events without validation, since they run once per chunk.
    """

    def __init__(self, emit: Emit, provider: str, attempt: int = 1) -> None:
        self.emit = emit
        self.provider = provider
        self.attempt = attempt
        self.model: str | None = None
        self.settled = False

    def feed(self, chunk: RawChunk) -> None:
        if self.settled:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored a chunk after the terminal event: {}", chunk.event
            )
            return
        self.on_chunk(chunk)

    @abstractmethod
    def on_chunk(self, chunk: RawChunk) -> None: ...

    def end(self) -> None:  # noqa: B027 - optional hook; the default is right for most
        """The body ended. By default nothing: no terminal seen means truncated."""

    # -- emitting helpers -------------------------------------------------------------

    def text(self, text: str) -> None:
        self.emit(TextDelta.make(provider=self.provider, attempt=self.attempt, text=text))

    def reasoning(
        self, text: str = "", signature: str | None = None, redacted: bool = False
    ) -> None:
        self.emit(
            ReasoningDelta.make(
                provider=self.provider,
                attempt=self.attempt,
                text=text,
                signature=signature,
                redacted=redacted,
            )
        )

    def tool_start(self, call_id: str, name: str, index: int, signature: str | None = None) -> None:
        self.emit(
            ToolStart.make(
                provider=self.provider,
                attempt=self.attempt,
                call_id=call_id,
                name=name,
                index=index,
                signature=signature,
            )
        )

    def tool_args(self, index: int, delta: str) -> None:
        self.emit(ToolArgs(index, delta))

    def tool_end(self, index: int, arguments: str | None = None) -> None:
        self.emit(ToolEnd(index, arguments))

    def usage(self, usage: Usage) -> None:
        self.emit(UsageUpdate.make(provider=self.provider, attempt=self.attempt, usage=usage))

    def done(self, stop_reason: StopReason, raw_stop_reason: str | None = None) -> None:
        self.settled = True
        self.emit(
            Done.make(
                provider=self.provider,
                attempt=self.attempt,
                stop_reason=stop_reason,
                raw_stop_reason=raw_stop_reason,
                model=self.model,
            )
        )

    def fail(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        raw: str | None = None,
        **fields: Any,
    ) -> None:
        """End the attempt with an error; `fields`: ErrorInfo's optional structured ones
        (`param`, `code`, `retry_after`) where the provider sent them. A wire states
        what the provider said; whether it may be retried is the recovery policy's."""
        self.settled = True
        # A provider may send an error with an empty message; the event always says what.
        message = message.strip() or f"{self.provider} reported a {kind} without a message"
        self.emit(
            failed(
                self.provider,
                kind,
                message,
                attempt=self.attempt,
                status=status,
                raw=raw,
                **fields,
            )
        )


class WireProtocol(ABC):
    """One provider's wire: where to send, what to send, how to read what comes back."""

    name: str
    default_base_url: str
    api_key_env: str | None = None
    """The environment variable holding the API key; None where no key is needed."""
    requires_api_key: bool = True
    mandatory_body_keys: ClassVar[frozenset[str]] = frozenset()
    recovery: RecoveryPolicy = RecoveryPolicy()
    """How this provider's rejections are read (`rxllm.degradation`): by default no
    degraded bodies, only backoff on rate limits and overload."""
    ssrf_guard_by_default: bool = False
    """Whether the SSRF guard (`rxllm.sources.guard`) is on unless the user says: on
    where the URL is anyone's (`custom`); off for a provider's own endpoint and for the
    localhost-first presets, whose point is a server on this machine."""

    @abstractmethod
    def url(self, base_url: str, request: ChatRequest) -> str: ...

    @abstractmethod
    def headers(self, api_key: str | None) -> dict[str, str]: ...

    @abstractmethod
    def build_body(self, request: ChatRequest) -> dict[str, Any]: ...

    @abstractmethod
    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> Normalizer: ...

    def preprocess(self) -> Sequence[RawOperator]:
        """Operators on raw chunks for this wire's quirks, applied before normalizing."""
        return ()
