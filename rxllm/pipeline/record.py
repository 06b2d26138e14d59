"""Fold a stream's events into its StreamRecord."""

from __future__ import annotations

import time

from rxllm.events import (
    Attempt,
    Cancelled,
    Done,
    Event,
    Failed,
    ReasoningDelta,
    StreamRecord,
    TextDelta,
    ToolRequest,
    Usage,
    UsageUpdate,
    commits,
)

__all__ = ["RecordBuilder"]


class RecordBuilder:
    """Collects events as they pass (`add`), then builds the record (`build`)."""

    def __init__(self, provider: str, requested_model: str | None = None) -> None:
        self.provider = provider
        self.requested_model = requested_model
        self.started = time.monotonic()
        self.first_event: float | None = None
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: list[ToolRequest] = []
        self.usage: Usage | None = None
        self.terminal: Done | Failed | Cancelled | None = None
        self.committed: dict[tuple[int, str], bool] = {}

    def add(self, event: Event) -> None:
        if self.first_event is None:
            self.first_event = time.monotonic()
        key = (event.attempt, event.provider)
        self.committed[key] = self.committed.get(key, False) or commits(event)
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)
        elif isinstance(event, ToolRequest):
            self.tool_calls.append(event)
        elif isinstance(event, UsageUpdate):
            self.usage = event.usage  # the latest usage wins
        elif isinstance(event, Done | Failed | Cancelled):
            self.terminal = event

    def build(self) -> StreamRecord:
        terminal = self.terminal
        if terminal is None:
            raise RuntimeError("the stream completed without a terminal event")
        failure = terminal.error if isinstance(terminal, Failed) else None
        attempts = [
            Attempt(
                number=number,
                provider=provider,
                committed=committed,
                status=failure.status if failure and terminal.attempt == number else None,
                error=failure.message if failure and terminal.attempt == number else None,
            )
            for (number, provider), committed in sorted(self.committed.items())
        ]
        now = time.monotonic()
        return StreamRecord(
            provider=terminal.provider,
            requested_model=self.requested_model,
            model=terminal.model if isinstance(terminal, Done) else None,
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            tool_calls=self.tool_calls,
            usage=self.usage,
            terminal=terminal,
            attempts=attempts,
            time_to_first_event=(
                self.first_event - self.started if self.first_event is not None else None
            ),
            duration=now - self.started,
        )
