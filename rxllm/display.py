"""Compact HTML for notebooks: events and StreamRecords render themselves in Jupyter.

`_repr_html_` on the event and record classes calls into here. Every string that came
from a provider or a user is escaped: a model's answer is untrusted text.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from rxllm.events import (
    Cancelled,
    Citation,
    Done,
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
    ToolStart,
    Usage,
    UsageUpdate,
)

__all__ = ["event_html", "events_html", "record_html", "summary", "summary_usage"]

# Colors by event type, for a small badge; what frames the output stands out.
COLORS = {
    "text": "#444",
    "reasoning": "#888",
    "retry": "#b8860b",
    "done": "#2e7d32",
    "error": "#c62828",
    "cancelled": "#ef6c00",
}
PREVIEW_CHARS = 2000
"""A record's text is shown up to this length: a long answer should not flood a cell."""


def summary(event: Event) -> str:
    """An event's interesting fields on one line, as plain text (not escaped)."""
    match event:
        case TextDelta() | ReasoningDelta() | Refusal():
            return repr(event.text)
        case ToolStart():
            return f"#{event.index} {event.name} (call {event.call_id})"
        case ToolRequest() | ServerToolCall():
            return f"{event.name}({event.arguments}) call {event.call_id}"
        case ServerToolResult():
            return f"{event.name} call {event.call_id}"
        case Citation():
            return f"{event.title or ''} {event.url}".strip()
        case UsageUpdate():
            return summary_usage(event.usage)
        case Retry():
            dropped = f" without {', '.join(event.dropped)}" if event.dropped else ""
            images = f", {event.images_removed} image(s) removed" if event.images_removed else ""
            return f"{event.reason.message} -> attempt {event.next_attempt}{dropped}{images}"
        case Done():
            return f"{event.stop_reason} (raw {event.raw_stop_reason})"
        case Failed():
            return f"{event.error.kind}: {event.error.message}"
        case Cancelled():
            return event.reason


def summary_usage(usage: Usage) -> str:
    return (
        f"input {usage.input_tokens}, output {usage.output_tokens} "
        f"(reasoning {usage.reasoning_tokens}), cache read {usage.cache_read_tokens}, "
        f"total {usage.total_tokens}"
    )


def _badge(kind: str) -> str:
    color = COLORS.get(kind, "#1565c0")
    return (
        f'<span style="color:#fff;background:{color};border-radius:3px;'
        f'padding:0 4px;font-family:monospace">{escape(kind)}</span>'
    )


def event_html(event: Event) -> str:
    """One event: its type as a badge, where it came from, and its fields in brief."""
    return (
        f'<div class="rxllm-event">{_badge(event.type)} '
        f"<small>{escape(event.provider)} #{event.attempt}</small> "
        f"<code>{escape(summary(event))}</code></div>"
    )


def events_html(events: Iterable[Event]) -> str:
    """A list of events as a numbered table."""
    rows = "".join(
        f"<tr><td>{i}</td><td>{_badge(e.type)}</td><td>{escape(e.provider)} #{e.attempt}</td>"
        f"<td><code>{escape(summary(e))}</code></td></tr>"
        for i, e in enumerate(events)
    )
    return (
        '<table class="rxllm-events"><tr><th>#</th><th>type</th><th>from</th>'
        f"<th>detail</th></tr>{rows}</table>"
    )


def record_html(record: StreamRecord) -> str:
    """A StreamRecord: outcome, text, tool calls, usage, attempts and timing."""
    terminal = record.terminal
    rows: list[tuple[str, str]] = [
        ("outcome", f"{_badge(terminal.type)} <code>{escape(summary(terminal))}</code>"),
        ("provider", escape(f"{record.provider} ({record.model or record.requested_model})")),
    ]
    for name in ("text", "reasoning", "refusal"):
        value: str = getattr(record, name)
        if value:
            cut = value[:PREVIEW_CHARS] + ("…" if len(value) > PREVIEW_CHARS else "")
            rows.append((name, f'<div style="white-space:pre-wrap">{escape(cut)}</div>'))
    for call in record.tool_calls:
        rows.append(("tool call", f"<code>{escape(summary(call))}</code>"))
    for citation in record.citations:
        rows.append(("citation", escape(summary(citation))))
    if record.usage is not None:
        rows.append(("usage", escape(summary_usage(record.usage))))
    for a in record.attempts:
        changes = ", ".join(
            [f"without {', '.join(a.dropped)}"] * bool(a.dropped)
            + [f"{a.images_removed} image(s) removed"] * bool(a.images_removed)
        )
        outcome = f"{a.status or ''} {a.error or ''}".strip() or "ok"
        rows.append(
            (
                f"attempt {a.number}",
                escape(
                    f"{a.provider}: {outcome}{'; ' + changes if changes else ''}; "
                    f"{'committed' if a.committed else 'nothing committed'}; {a.duration:.2f} s"
                ),
            )
        )
    first = record.time_to_first_event
    rows.append(
        (
            "time",
            f"first output {f'{first:.2f} s' if first else '-'}, total {record.duration:.2f} s",
        )
    )
    body = "".join(
        f'<tr><th style="text-align:left;vertical-align:top">{k}</th>'
        f'<td style="text-align:left">{v}</td></tr>'
        for k, v in rows
    )
    return f'<table class="rxllm-record">{body}</table>'
