"""rxllm.viz draws real turns: lanes per event kind, attempts, commitment, the terminal."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings

import matplotlib
import pytest
from matplotlib import cbook
from matplotlib.figure import Figure

import rxllm
from rxllm import viz
from rxllm.events import Attempt, failed
from rxllm.local import LocalServer

matplotlib.use("Agg")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def lanes(fig: Figure) -> list[str]:
    return [label.get_text() for label in fig.axes[0].get_yticklabels()]


def legend(fig: Figure) -> list[str]:
    return [text.get_text() for legend in fig.legends for text in legend.get_texts()]


def png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=50)
    return buffer.getvalue()


async def test_a_recovered_turn_has_its_lanes_attempts_and_terminal(
    local_server: LocalServer,
) -> None:
    async with rxllm.provider("local", base_url=local_server.url) as p:
        request = rxllm.ChatRequest(
            model="fault/reject_param",
            messages=[rxllm.Message.user("hi")],
            params={"temperature": 0.2},
        )
        timed = await viz.collect(p.astream(request))
    times = [t for t, _ in timed]
    assert times == sorted(times) and times[0] >= 0
    fig = viz.timeline(timed)
    assert png(fig).startswith(PNG_SIGNATURE)
    assert lanes(fig) == ["reasoning", "text", "usage", "retry", "done"]
    assert legend(fig) == ["attempt 1 (local)", "attempt 2 (local)", "done", "committed"]
    ax = fig.axes[0]
    assert ax.get_xlabel() == "seconds since the request"
    assert ax.get_title() == "local: done (stop)"
    assert [t.get_text() for t in ax.texts] == ["done (stop)"]


async def test_a_committed_error_ends_in_the_error_lane(local_server: LocalServer) -> None:
    async with rxllm.provider("local", base_url=local_server.url) as p:
        request = rxllm.ChatRequest(model="fault/error_event", messages=[rxllm.Message.user("hi")])
        timed = await viz.collect(p.astream(request))
    fig = viz.timeline(timed, title="a committed error")
    assert lanes(fig)[-1] == "error" and "retry" not in lanes(fig)
    assert fig.axes[0].get_title() == "a committed error"
    assert "committed" in legend(fig) and "error" in legend(fig)
    assert png(fig).startswith(PNG_SIGNATURE)


async def test_plain_events_are_drawn_in_order_and_a_record_by_its_attempts(
    local_server: LocalServer,
) -> None:
    async with rxllm.provider("local", base_url=local_server.url) as p:
        request = rxllm.ChatRequest(
            model="fault/weather",
            messages=[rxllm.Message.user("weather?")],
            tools=[rxllm.Tool(name="get_weather", parameters={"type": "object"})],
        )
        events = [event async for event in p.astream(request)]
        record = await p.complete(request)
    fig = viz.timeline(events)
    assert fig.axes[0].get_xlabel() == "event number"
    assert {"tool_start", "tool_request"} <= set(lanes(fig))
    by_record = viz.timeline(record)
    assert lanes(by_record) == ["attempts", "done"]
    assert by_record.axes[0].get_title() == "local: done (tool_use)"
    assert png(by_record).startswith(PNG_SIGNATURE)


def test_nothing_to_draw_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least one event"):
        viz.timeline([])


def test_without_matplotlib_the_import_says_what_to_install() -> None:
    code = "import sys; sys.modules['matplotlib'] = None; import rxllm.viz"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert "pip install 'rxllm[viz]'" in result.stderr.splitlines()[-1]


def test_the_smallest_turns_draw() -> None:
    done = rxllm.Done(provider="p", stop_reason="stop")
    error = failed("p", "transport", "connection reset")
    for source in (
        [done],
        [error],
        [(0.0, error)],
        [rxllm.TextDelta(provider="p", text="no terminal")],
        rxllm.StreamRecord(provider="p", terminal=error),  # no attempt recorded
        rxllm.StreamRecord(provider="p", terminal=rxllm.Cancelled(provider="p")),
    ):
        fig = viz.timeline(source)
        assert png(fig).startswith(PNG_SIGNATURE)
    assert viz.timeline([error]).axes[0].get_title() == "p: error (transport)"


def test_a_very_long_stream_draws() -> None:
    events: list[rxllm.Event] = [rxllm.TextDelta(provider="p", text="x")] * 50_000
    fig = viz.timeline([*events, rxllm.Done(provider="p", stop_reason="length")])
    assert lanes(fig) == ["text", "done"]
    assert png(fig).startswith(PNG_SIGNATURE)


@pytest.mark.parametrize(
    "name",
    ["cost $5 or $6", "$\\frac{$", "half \ud83d of it", "nul\x00 rlo\u202e", "a\\$b$"],
)
def test_what_an_event_says_is_drawn_as_written(name: str) -> None:
    # Matplotlib reads text between two `$` as mathtext (an unparsable one raises when
    # the figure is drawn) and cannot lay out a lone surrogate: text from events is
    # drawn literally, hidden characters shown as their escapes.
    events: list[rxllm.Event] = [
        rxllm.TextDelta(provider=name, text="x"),
        rxllm.Done(provider=name, stop_reason="stop"),
    ]
    fig = viz.timeline(events)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Glyph")  # a NUL has no glyph to draw
        assert png(fig).startswith(PNG_SIGNATURE)
    record = rxllm.StreamRecord(
        provider=name,
        terminal=events[1],  # type: ignore[arg-type]
        attempts=[Attempt(number=1, provider=name, duration=0.1)],
        duration=0.1,
    )
    assert png(viz.timeline(record)).startswith(PNG_SIGNATURE)
    if "$" in name:  # drawn as the text it is, `$` and all
        assert drawn(fig.axes[0].title.get_text()) == f"{name}: done (stop)"
        given = viz.timeline(events, title=f"{name}.sse replayed").axes[0].title
        assert drawn(given.get_text()) == f"{name}.sse replayed"


def drawn(text: str) -> str:
    """What matplotlib draws of `text` when it is no mathtext (its `\\$` is a `$`)."""
    assert not cbook.is_math_text(text), text
    return text.replace(r"\$", "$")


def test_a_broken_matplotlib_install_is_not_called_missing() -> None:
    # matplotlib present but one of its own dependencies missing: installing the
    # extra again would not help, and the message must not say it would.
    code = "import sys; sys.modules['kiwisolver'] = None; import rxllm.viz"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert "kiwisolver" in last and "rxllm[viz]" not in last
