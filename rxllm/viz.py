"""Plots of a stream over time: `timeline(...)` draws one turn as a matplotlib Figure.

Events carry no clock (they are immutable values, and a replay has none), so the
times come from the caller: `await collect(provider.astream(request))` keeps each
event's arrival time, in seconds since the request. Plain events are drawn in their
order (x is the event's number), and a `StreamRecord` as its attempts, its first
output and its end, which is all a record knows about time.

matplotlib is an optional extra: `pip install 'rxllm[viz]'`.
"""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterable, Iterable, Sequence
from typing import TypeAlias

try:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
except ModuleNotFoundError as exc:  # pragma: no cover - exercised in a subprocess
    if exc.name != "matplotlib" and not (exc.name or "").startswith("matplotlib."):
        raise  # matplotlib is there and something it imports is not: say which
    raise ModuleNotFoundError(
        "rxllm.viz draws with matplotlib, which is not installed: pip install 'rxllm[viz]'",
        name="matplotlib",
    ) from exc

from rxllm.display import visible
from rxllm.events import Done, Event, Failed, StreamRecord, commits

__all__ = ["LANES", "TimedEvent", "collect", "timeline"]

TimedEvent: TypeAlias = tuple[float, Event]
"""An event and its arrival time, in seconds since the request."""

LANES = (
    "reasoning",
    "text",
    "refusal",
    "citation",
    "tool_start",
    "tool_request",
    "server_tool_call",
    "server_tool_result",
    "usage",
    "retry",
    "done",
    "error",
    "cancelled",
)
"""Lane order, top to bottom: output first, then what frames it."""

TERMINAL_COLORS = {"done": "tab:green", "error": "tab:red", "cancelled": "tab:orange"}
ATTEMPT_SHADES = ("tab:blue", "tab:purple")


async def collect(events: AsyncIterable[Event]) -> list[TimedEvent]:
    """Every event of an async stream (e.g. `provider.astream(request)`) with its
    arrival time, in seconds since this call."""
    started = time.monotonic()
    return [(time.monotonic() - started, event) async for event in events]


def timeline(
    source: StreamRecord | Iterable[Event] | Iterable[TimedEvent], *, title: str | None = None
) -> Figure:
    """One turn as a Figure: a lane per event kind, each attempt shaded, the point
    where output was first committed marked, and the terminal event highlighted.

    `source` is a list of `(seconds, event)` pairs (from `collect`), plain events
    (drawn in order, x is the event number), or a `StreamRecord` (its attempts laid
    end to end from their durations, its first output and its end). The title, and
    whatever the events say, are drawn as written (`$` starts no mathtext).
    """
    if isinstance(source, StreamRecord):
        return _record_timeline(source, title)
    pairs, timed = _pairs(source)
    lanes = [kind for kind in LANES if any(e.type == kind for _, e in pairs)]
    fig, ax = _figure(lanes)
    row = {kind: y for y, kind in enumerate(lanes)}

    # An attempt lasts from the previous one's end (its retry) to its own last event.
    spans: list[tuple[str, float, float]] = []
    for t, event in pairs:
        label = _label((event.attempt, event.provider))
        if spans and spans[-1][0] == label:
            spans[-1] = (label, spans[-1][1], t)
        else:
            spans.append((label, spans[-1][2] if spans else (0.0 if timed else -0.5), t))
    for i, (label, begin, end) in enumerate(spans):
        _attempt_span(ax, i, label, begin, end if timed else end + 0.5)

    for kind in lanes:
        xs = [t for t, e in pairs if e.type == kind]
        if kind in TERMINAL_COLORS:
            ax.scatter(
                xs,
                [row[kind]] * len(xs),
                s=160,
                marker="*",
                zorder=3,
                color=TERMINAL_COLORS[kind],
                label=kind,
            )
        elif kind == "retry":
            ax.scatter(xs, [row[kind]] * len(xs), s=60, marker="x", color="tab:orange", zorder=2)
        else:
            ax.scatter(xs, [row[kind]] * len(xs), s=60, marker="|", color="tab:gray", zorder=2)

    committed = next((t for t, e in pairs if commits(e)), None)
    if committed is not None:
        ax.axvline(committed, color="black", linestyle="--", linewidth=1, label="committed")
    last_t, last = pairs[-1]
    if last.type in TERMINAL_COLORS:
        ax.annotate(
            _literal(_terminal_text(last)),
            (last_t, row[last.type]),
            xytext=(-8, 8),
            ha="right",
            textcoords="offset points",
            color=TERMINAL_COLORS[last.type],
        )
    ax.set_xlabel("seconds since the request" if timed else "event number")
    fig.legend(loc="outside right upper", fontsize="small")
    ax.set_title(_literal(title or f"{last.provider}: {_terminal_text(last)}"))
    return fig


def _pairs(source: Iterable[Event] | Iterable[TimedEvent]) -> tuple[list[TimedEvent], bool]:
    """(time, event) pairs, and whether the times are real (else event numbers)."""
    pairs: list[TimedEvent] = []
    timed = True
    for i, item in enumerate(source):
        if isinstance(item, tuple):
            pairs.append((float(item[0]), item[1]))
        else:
            pairs.append((float(i), item))
            timed = False
    if not pairs:
        raise ValueError("timeline() needs at least one event")
    return pairs, timed


def _record_timeline(record: StreamRecord, title: str | None) -> Figure:
    terminal = record.terminal
    lanes = ["attempts", terminal.type]
    fig, ax = _figure(lanes)
    start = 0.0
    for i, attempt in enumerate(record.attempts):
        _attempt_span(
            ax, i, _label((attempt.number, attempt.provider)), start, start + attempt.duration
        )
        ax.broken_barh([(start, attempt.duration)], (-0.3, 0.6), color=ATTEMPT_SHADES[i % 2])
        start += attempt.duration
    if record.time_to_first_event is not None:
        ax.axvline(
            record.time_to_first_event,
            color="black",
            linestyle="--",
            linewidth=1,
            label="committed",
        )
    ax.scatter(
        [record.duration],
        [1],
        s=160,
        marker="*",
        zorder=3,
        color=TERMINAL_COLORS[terminal.type],
        label=terminal.type,
    )
    ax.annotate(
        _literal(_terminal_text(terminal)),
        (record.duration, 1),
        xytext=(-8, 8),
        ha="right",
        textcoords="offset points",
        color=TERMINAL_COLORS[terminal.type],
    )
    ax.set_xlabel("seconds since the request")
    fig.legend(loc="outside right upper", fontsize="small")
    ax.set_title(_literal(title or f"{record.provider}: {_terminal_text(terminal)}"))
    return fig


class _Timeline(Figure):
    """A bare Figure (not pyplot: no global figure registry to leak into, any backend)
    that shows itself as PNG as a notebook cell's result: IPython draws a bare Figure
    only once `%matplotlib inline` has set up a formatter for it."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")
        return buffer.getvalue()


def _figure(lanes: Sequence[str]) -> tuple[Figure, Axes]:
    fig = _Timeline(figsize=(10, 1.2 + 0.45 * len(lanes)), layout="constrained")
    ax = fig.add_subplot()
    ax.set_yticks(range(len(lanes)), labels=list(lanes))
    ax.set_ylim(len(lanes) - 0.5, -0.5)  # the first lane on top
    ax.grid(axis="x", alpha=0.3)
    return fig, ax


def _attempt_span(ax: Axes, i: int, label: str, begin: float, end: float) -> None:
    ax.axvspan(begin, end, color=ATTEMPT_SHADES[i % 2], alpha=0.12, zorder=0, label=label)


def _label(key: tuple[int, str]) -> str:
    return _literal(f"attempt {key[0]} ({key[1]})")


def _literal(text: str) -> str:
    """Text for matplotlib to draw as written (a title, what an event says): hidden
    characters shown and a split surrogate pair joined (`rxllm.display.visible`: a
    lone surrogate cannot be laid out), every `$` escaped (text between two is
    mathtext, and mathtext that does not parse raises when the figure is drawn)."""
    return visible(text).replace("$", r"\$")


def _terminal_text(event: Event) -> str:
    if isinstance(event, Done):
        return f"done ({event.stop_reason})"
    if isinstance(event, Failed):
        return f"error ({event.error.kind})"
    return event.type
