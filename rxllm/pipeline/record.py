"""Fold a stream's events into its StreamRecord."""

from __future__ import annotations

import time
from typing import Any

from rxllm.events import (
    Attempt,
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
    Event,
    Failed,
    ReasoningDelta,
    Refusal,
    Retry,
    ServerToolCall,
    ServerToolResult,
    StreamRecord,
    TextDelta,
    ToolRequest,
    Usage,
    UsageUpdate,
    commits,
)
from rxllm.request import ReasoningPart, TextPart

__all__ = ["RecordBuilder"]

ServerTool = ServerToolCall | ServerToolResult


class _Attempt:
    __slots__ = (
        "committed",
        "dropped",
        "ended",
        "error",
        "images_removed",
        "number",
        "provider",
        "started",
        "status",
    )

    def __init__(self, number: int, provider: str, started: float) -> None:
        self.number = number
        self.provider = provider
        self.started = started
        self.ended: float | None = None
        self.committed = False
        self.dropped: list[str] = []
        self.images_removed = 0
        self.status: int | None = None
        self.error: str | None = None

    def end(self, error: ErrorInfo | None = None) -> None:
        self.ended = time.monotonic()
        if error is not None:
            self.status, self.error = error.status, error.message

    def build(self, now: float) -> Attempt:
        return Attempt.make(
            number=self.number,
            provider=self.provider,
            dropped=self.dropped,
            images_removed=self.images_removed,
            status=self.status,
            error=self.error,
            committed=self.committed,
            # never below zero: an attempt a retry announces starts after the backoff
            # wait, and a turn cancelled during that wait ends before it began
            duration=max((self.ended if self.ended is not None else now) - self.started, 0.0),
        )


class _Run:
    """A run of text deltas of one phase, with nothing else between them."""

    __slots__ = ("phase", "pieces")

    def __init__(self, first: TextDelta) -> None:
        self.phase = first.phase
        self.pieces = [first.text]

    def part(self) -> TextPart:
        return TextPart(text="".join(self.pieces), phase=self.phase)


class RecordBuilder:
    """Collects events as they pass (`add`), then builds the record (`build`).

    Attempts are learned from the events: each names its attempt, and a `retry` event
    closes the rejected attempt (its status and error) and opens the next one (what
    it dropped, the images it removed), so attempts that produced no output are
    recorded too. `time_to_first_event` is the wait for the first output the user
    could see (a committing event), retries included."""

    def __init__(self, provider: str, requested_model: str | None = None) -> None:
        self.provider = provider
        self.requested_model = requested_model
        self.started = time.monotonic()
        self.first_event: float | None = None
        self.reasoning: list[str] = []
        self.reasoning_parts: list[ReasoningPart] = []
        self.open_reasoning: list[str] = []  # the block a signature has not closed yet
        # The turn in order: runs of text (the record's text is theirs, joined), reasoning
        # parts, tool requests, server tools taken back; the open reasoning block holds
        # its place from its first delta on.
        self.output: list[_Run | ReasoningPart | ToolRequest | ServerTool | None] = []
        self.open_at = -1  # where the open reasoning block goes in `output`
        self.tool_calls: list[ToolRequest] = []
        self.refusal: list[str] = []
        self.citations: list[Citation] = []
        self.server_tools: list[ServerToolCall | ServerToolResult] = []
        self.usage: Usage | None = None
        self.terminal: Done | Failed | Cancelled | None = None
        self.attempts: dict[tuple[int, str], _Attempt] = {}

    def _attempt(self, number: int, provider: str) -> _Attempt:
        attempt = self.attempts.get((number, provider))
        if attempt is None:
            attempt = self.attempts[number, provider] = _Attempt(number, provider, self.started)
        return attempt

    def add(self, event: Event) -> None:
        attempt = self._attempt(event.attempt, event.provider)
        if commits(event):
            attempt.committed = True
            if self.first_event is None:
                self.first_event = time.monotonic()
        if isinstance(event, TextDelta):
            output = self.output
            last = output[-1] if output else None
            if last.__class__ is _Run and last.phase == event.phase:
                last.pieces.append(event.text)
            else:
                output.append(_Run(event))
        elif isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)
            self._reasoning_part(event)
        elif isinstance(event, ToolRequest):
            self.tool_calls.append(event)
            self.output.append(event)
        elif isinstance(event, Refusal):
            self.refusal.append(event.text)
        elif isinstance(event, Citation):
            self.citations.append(event)
        elif isinstance(event, ServerToolCall | ServerToolResult):
            self.server_tools.append(event)
            if event.raw is not None:  # its wire takes it back
                self.output.append(event)
        elif isinstance(event, UsageUpdate):
            self.usage = event.usage  # the latest usage wins
        elif isinstance(event, Retry):
            attempt.end(event.reason)
            following = self._attempt(event.next_attempt, event.next_provider)
            following.started = time.monotonic() + event.delay
            following.dropped = event.dropped
            following.images_removed = event.images_removed
        elif isinstance(event, Done | Failed | Cancelled):
            self.terminal = event
            attempt.end(event.error if isinstance(event, Failed) else None)

    def _reasoning_part(self, event: ReasoningDelta) -> None:
        """A signature or details close the block its deltas opened; a redacted block
        is its signature alone."""
        if event.redacted:
            self._close_reasoning()
            part = ReasoningPart(
                text=event.text, signature=event.signature, redacted=True, details=event.details
            )
            self.reasoning_parts.append(part)
            self.output.append(part)
            return
        if self.open_at < 0:
            self.open_at = len(self.output)
            self.output.append(None)
        self.open_reasoning.append(event.text)
        if event.signature is not None or event.details is not None:
            self._close_reasoning(event.signature, event.details)

    def _close_reasoning(
        self, signature: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        text = "".join(self.open_reasoning)
        self.open_reasoning.clear()
        at, self.open_at = self.open_at, -1
        if text or signature is not None or details is not None:
            part = ReasoningPart(text=text, signature=signature, details=details)
            self.reasoning_parts.append(part)
            if at >= 0:
                self.output[at] = part
            else:  # a signature alone, with no delta before it
                self.output.append(part)

    def build(self) -> StreamRecord:
        terminal = self.terminal
        if terminal is None:
            raise RuntimeError("the stream completed without a terminal event")
        now = time.monotonic()
        self._close_reasoning()  # a block nothing closed (plain reasoning text)
        return StreamRecord.make(
            provider=terminal.provider,
            requested_model=self.requested_model,
            model=terminal.model if isinstance(terminal, Done) else None,
            text="".join(
                piece for run in self.output if isinstance(run, _Run) for piece in run.pieces
            ),
            reasoning="".join(self.reasoning),
            reasoning_parts=self.reasoning_parts,
            refusal="".join(self.refusal),
            tool_calls=self.tool_calls,
            output=[
                part.part() if isinstance(part, _Run) else part
                for part in self.output
                if part is not None  # the place of a block that said nothing
            ],
            citations=self.citations,
            server_tools=self.server_tools,
            usage=self.usage,
            terminal=terminal,
            attempts=[a.build(now) for _, a in sorted(self.attempts.items())],
            time_to_first_event=(
                self.first_event - self.started if self.first_event is not None else None
            ),
            duration=now - self.started,
        )
