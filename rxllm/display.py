"""Compact HTML for notebooks: events and StreamRecords render themselves in Jupyter.

`_repr_html_` on the event and record classes calls into here. What a provider wrote
(text, tool arguments, citations, error messages) is untrusted, and `_html` is the one
place any text becomes HTML: cut to a preview, its hidden characters made visible,
escaped. Nothing from an event lands in an attribute, a style or a link; the markup
and its attributes are this module's own constants.
"""

from __future__ import annotations

import reprlib
import unicodedata
from collections.abc import Iterable
from html import escape
from itertools import islice
from typing import Any

from pydantic import BaseModel

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
from rxllm.fragments import is_high_half

__all__ = [
    "Html",
    "event_html",
    "events_html",
    "plain",
    "record_html",
    "summary",
    "summary_usage",
    "visible",
]

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
SUMMARY_CHARS = 500
"""Each string an event's one-line summary quotes (a name, a message, a URL, the
text of a delta) is cut here, so what rxllm says around it is always shown."""

# Jupyter typesets `$...$` and `\(...\)` in HTML outputs with MathJax, which would show
# "$5 and $10" as math; MathJax 2 skips elements of class `tex2jax_ignore`, MathJax 3
# those of class `mathjax_ignore`. A long unbroken token (base64, a URL) wraps rather
# than widening the output past the screen.
_ROOT = 'class="{} tex2jax_ignore mathjax_ignore" style="overflow-wrap:anywhere"'

_KEPT = frozenset("\t\n\r\u200c\u200d")
"""Control and format characters that belong in text: whitespace, and the joiners
that emoji sequences and scripts such as Persian are written with."""
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf"})


def visible(text: str) -> str:
    """`text` as it can be shown, still plain text (not escaped).

    A UTF-16 surrogate pair a provider split over two deltas is joined again, and a
    lone half becomes U+FFFD (UTF-8 cannot encode it, and Jupyter's messages and
    notebook files are UTF-8). Control and invisible format characters (NUL, terminal
    escapes, bidirectional overrides, zero-width spaces) are written as their Python
    escapes (`\\x00`, `\\u202e`), so none hides text or reorders what is around it.
    """
    if text.isascii() and text.isprintable():
        return text
    joined = _joined(text)
    return joined if joined.isprintable() else "".join(map(_shown, joined))


def _joined(text: str) -> str:
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _shown(char: str) -> str:
    if char in _KEPT or unicodedata.category(char) not in _HIDDEN_CATEGORIES:
        return char
    return repr(char)[1:-1]


def _html(value: object, limit: int = PREVIEW_CHARS) -> str:
    """The one place text becomes HTML: cut to `limit` characters (saying how long it
    was), made `visible`, escaped, quotes included."""
    text = value if isinstance(value, str) else str(value)
    head = _joined(text[: limit + 1])  # one more: a surrogate pair at the cut stays whole
    if len(head) > limit or len(text) > limit + 1:
        return escape(f"{visible(head[:limit])}… ({len(text):,} characters in all)")
    return escape(visible(head))


def _brief(text: str) -> str:
    """`text` cut to SUMMARY_CHARS, for a summary that goes on after it."""
    if len(text) <= SUMMARY_CHARS:
        return text
    end = SUMMARY_CHARS + is_high_half(text[SUMMARY_CHARS - 1])  # keep a pair
    return text[:end] + "…"


class _Bounded(reprlib.Repr):
    """`repr`, with every string, collection and nesting level bounded: a tool's
    arguments may be megabytes, or nested as deep as the JSON reader goes (deeper
    than `repr` can recurse from inside IPython). Dicts keep their own order, and
    pydantic models read as their own repr."""

    def __init__(self, chars: int) -> None:
        super().__init__()
        self.maxstring = self.maxother = chars
        self.maxlevel = 12
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = 100
        self.maxdeque = self.maxarray = 100
        self.maxlong = 100

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, BaseModel):
            name = type(x).__name__
            if level <= 0:
                return f"{name}({self.fillvalue})"
            fields = ", ".join(f"{key}={self.repr1(value, level - 1)}" for key, value in x)
            return f"{name}({fields})"
        return super().repr1(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{" + self.fillvalue + "}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}"
            for key, value in islice(x.items(), self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append(self.fillvalue)
        return "{" + ", ".join(pieces) + "}"


_SUMMARY_REPR = _Bounded(SUMMARY_CHARS)
_PLAIN_REPR = _Bounded(PREVIEW_CHARS)


def plain(value: object) -> str:
    """`repr(value)` bounded, for Jupyter's text/plain (`_repr_pretty_`): each string
    cut to PREVIEW_CHARS (its middle elided), at most 100 items of a list or dict,
    nesting past 12 levels elided. What fits is exactly repr's text."""
    return _PLAIN_REPR.repr(value)


def summary(event: Event) -> str:
    """An event's interesting fields on one line, as plain text (not escaped); each
    quoted string is cut to SUMMARY_CHARS."""
    match event:
        case TextDelta() | ReasoningDelta() | Refusal():
            return _SUMMARY_REPR.repr(event.text)
        case ToolStart():
            return f"#{event.index} {_brief(event.name)} (call {_brief(event.call_id)})"
        case ToolRequest() | ServerToolCall():
            arguments = _SUMMARY_REPR.repr(event.arguments)
            return f"{_brief(event.name)}({arguments}) call {_brief(event.call_id)}"
        case ServerToolResult():
            failed = " failed" if event.is_error else ""
            return f"{_brief(event.name)} call {_brief(event.call_id)}{failed}"
        case Citation():
            return f"{_brief(event.title or '')} {_brief(event.url)}".strip()
        case UsageUpdate():
            return summary_usage(event.usage)
        case Retry():
            dropped = f" without {_brief(', '.join(event.dropped))}" if event.dropped else ""
            images = f", {event.images_removed} image(s) removed" if event.images_removed else ""
            return (
                f"{_brief(event.reason.message)} -> attempt {event.next_attempt}{dropped}{images}"
            )
        case Done():
            raw = _brief(event.raw_stop_reason) if event.raw_stop_reason is not None else None
            return f"{event.stop_reason} (raw {raw})"
        case Failed():
            return f"{event.error.kind}: {_brief(event.error.message)}"
        case Cancelled():
            return _brief(event.reason)


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
        f'padding:0 4px;font-family:monospace">{_html(kind)}</span>'
    )


class Html(str):
    """HTML text: a `str` everywhere, shown rendered as a cell's result in Jupyter
    (`_repr_html_`), where a plain `str` shows as its quoted source."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return str(self)


def event_html(event: Event) -> str:
    """One event: its type as a badge, where it came from, and its fields in brief."""
    return (
        f"<div {_ROOT.format('rxllm-event')}>{_badge(event.type)} "
        f"<small>{_html(event.provider)} #{_html(event.attempt)}</small> "
        f"<code>{_html(summary(event))}</code></div>"
    )


def events_html(events: Iterable[Event]) -> Html:
    """A list of events as a numbered table (shown as one in a notebook)."""
    rows = "".join(
        f"<tr><td>{i}</td><td>{_badge(e.type)}</td>"
        f"<td>{_html(e.provider)} #{_html(e.attempt)}</td>"
        f"<td><code>{_html(summary(e))}</code></td></tr>"
        for i, e in enumerate(events)
    )
    return Html(
        f"<table {_ROOT.format('rxllm-events')}><tr><th>#</th><th>type</th><th>from</th>"
        f"<th>detail</th></tr>{rows}</table>"
    )


def record_html(record: StreamRecord) -> str:
    """A StreamRecord: outcome, text, tool calls, usage, attempts and timing."""
    terminal = record.terminal
    model = record.model or record.requested_model
    rows: list[tuple[str, str]] = [
        ("outcome", f"{_badge(terminal.type)} <code>{_html(summary(terminal))}</code>"),
        ("provider", _html(f"{record.provider} ({_brief(model) if model else None})")),
    ]
    for name in ("text", "reasoning", "refusal"):
        value: str = getattr(record, name)
        if value:
            rows.append((name, f'<div style="white-space:pre-wrap">{_html(value)}</div>'))
    for call in record.tool_calls:
        rows.append(("tool call", f"<code>{_html(summary(call))}</code>"))
    for citation in record.citations:
        rows.append(("citation", _html(summary(citation))))
    if record.usage is not None:
        rows.append(("usage", _html(summary_usage(record.usage))))
    for a in record.attempts:
        changes = ", ".join(
            [f"without {_brief(', '.join(a.dropped))}"] * bool(a.dropped)
            + [f"{a.images_removed} image(s) removed"] * bool(a.images_removed)
        )
        outcome = f"{a.status or ''} {_brief(a.error or '')}".strip() or "ok"
        rows.append(
            (
                f"attempt {_html(a.number)}",
                _html(
                    f"{a.provider}: {outcome}{'; ' + changes if changes else ''}; "
                    f"{'committed' if a.committed else 'nothing committed'}; {a.duration:.2f} s"
                ),
            )
        )
    first = record.time_to_first_event
    rows.append(
        (
            "time",
            _html(
                f"first output {f'{first:.2f} s' if first is not None else '-'}, "
                f"total {record.duration:.2f} s"
            ),
        )
    )
    body = "".join(
        f'<tr><th style="text-align:left;vertical-align:top">{k}</th>'
        f'<td style="text-align:left">{v}</td></tr>'
        for k, v in rows
    )
    return f"<table {_ROOT.format('rxllm-record')}>{body}</table>"
