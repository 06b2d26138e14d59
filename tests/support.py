"""Shared test helpers: the real captures, random re-chunking, event summaries."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rxllm
from rxllm.events import Done, Event, Failed, ReasoningDelta, TextDelta, ToolRequest, UsageUpdate

# The captures are third-party recordings kept beside the project (CI has them there);
# they are read in place, never copied in.
CAPTURES = Path(
    os.environ.get("RXLLM_CAPTURES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "captures"
)


def capture(relative: str) -> bytes:
    """The bytes of a capture, e.g. `capture("openai/chat_text_usage.sse")`."""
    return (CAPTURES / relative).read_bytes()


def captures_of(folder: str) -> list[Path]:
    return sorted((CAPTURES / folder).glob("*.sse"))


def rechunk(data: bytes, seed: int, max_size: int = 17) -> list[bytes]:
    """`data` cut at random byte boundaries (inside UTF-8 characters and CRLFs too)."""
    rng = random.Random(seed)
    chunks, start = [], 0
    while start < len(data):
        size = rng.randint(1, max_size)
        chunks.append(data[start : start + size])
        start += size
    return chunks


def replay(data: Any, provider: str) -> list[Event]:
    events: list[Event] = []
    errors: list[Exception] = []
    rxllm.replay(data, provider=provider).subscribe(events.append, errors.append)
    assert not errors, errors
    return events


@dataclass
class Summary:
    """What a stream said, folded: the facts each capture test asserts."""

    text: str = ""
    reasoning: str = ""
    signatures: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    usage: rxllm.Usage | None = None
    terminal: str = ""
    stop_reason: str | None = None
    raw_stop_reason: str | None = None
    error_kind: str | None = None
    model: str | None = None
    providers: set[str] = field(default_factory=set)


def summarize(events: list[Event]) -> Summary:
    out = Summary()
    for ev in events:
        out.providers.add(ev.provider)
        if isinstance(ev, TextDelta):
            out.text += ev.text
        elif isinstance(ev, ReasoningDelta):
            out.reasoning += ev.text
            if ev.signature:
                out.signatures.append(ev.signature)
        elif isinstance(ev, ToolRequest):
            out.tool_calls.append((ev.call_id, ev.name, ev.arguments))
        elif isinstance(ev, UsageUpdate):
            out.usage = ev.usage
        elif isinstance(ev, Done):
            out.terminal, out.stop_reason, out.raw_stop_reason = (
                "done",
                ev.stop_reason,
                ev.raw_stop_reason,
            )
            out.model = ev.model
        elif isinstance(ev, Failed):
            out.terminal, out.error_kind = "error", ev.error.kind
        else:
            out.terminal = ev.type
    terminals = [ev for ev in events if ev.type in ("done", "error", "cancelled")]
    assert len(terminals) == 1 and events[-1] is terminals[0], "exactly one terminal, last"
    return out
