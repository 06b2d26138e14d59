"""Named events for marble diagrams: one letter, one event."""

from __future__ import annotations

from typing import Any

from rxllm.events import Cancelled, Done, TextDelta, ToolStart, Usage, UsageUpdate, failed
from rxllm.fragments import ToolArgs, ToolEnd

P = "openai"

EVENTS: dict[str | float, Any] = {
    "a": TextDelta(provider=P, text="Hel"),
    "b": TextDelta(provider=P, text="lo"),
    "s": ToolStart(provider=P, call_id="call_1", name="f", index=0),
    "t": ToolStart(provider=P, call_id="call_2", name="g", index=1),
    "u": UsageUpdate(provider=P, usage=Usage.of(input_tokens=3, output_tokens=5)),
    "d": Done(provider=P, stop_reason="stop", raw_stop_reason="stop"),
    "D": Done(provider=P, stop_reason="tool_use", raw_stop_reason="tool_calls"),
    "x": failed(P, "stream_error", "overloaded"),
    "c": Cancelled(provider=P),
    "m": ToolArgs(0, '{"x"'),
    "n": ToolArgs(0, ": 1}"),
    "o": ToolArgs(1, '{"y": [1,'),
    "p": ToolArgs(1, " 2]}"),
    "z": ToolArgs(0, '{"x": '),
    "e": ToolEnd(0),
    "E": ToolEnd(1),
}
