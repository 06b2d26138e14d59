"""Internal fragments a provider emits besides events: tool-argument pieces.

They never reach the user: `accumulate_tool_arguments` turns them into `ToolRequest`s.
Plain slotted dataclasses, because one is built per network chunk on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from rxllm.events import (
    Cancelled,
    Done,
    Failed,
    ReasoningDelta,
    TextDelta,
    ToolRequest,
    ToolStart,
    UsageUpdate,
)

__all__ = ["Fragment", "ToolArgs", "ToolEnd"]


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
    | UsageUpdate
    | Done
    | Failed
    | Cancelled
)
