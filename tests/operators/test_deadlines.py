from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex
from reactivex.testing import ReactiveTest, TestScheduler

from rxllm.events import Failed
from rxllm.operators import deadlines
from tests.operators.marbles import BOOM, EVENTS, P, raise_on

on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed


def run(source_messages: list[Any], disposed: int = 1000, **limits: float) -> tuple[Any, Any]:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(*source_messages)
    results = scheduler.start(
        lambda: source.pipe(deadlines(provider=P, **limits)), disposed=disposed
    )
    return results.messages, source


def stalled(messages: list[Any]) -> tuple[int, str]:
    failure = messages[-2].value.value
    assert isinstance(failure, Failed) and failure.error.kind == "stalled"
    assert messages[-1].value.kind == "C" and messages[-1].time == messages[-2].time
    return messages[-2].time, failure.error.message


def test_output_in_time_passes_untouched() -> None:
    messages, _ = run(
        [on_next(10, EVENTS["a"]), on_next(30, EVENTS["b"]), on_next(50, EVENTS["d"]),
         on_completed(60)],
        first_event=20, idle=25, total=100,
    )  # fmt: skip
    assert [m.time for m in messages] == [210, 230, 250, 260]


def test_no_first_output_expires_the_first_event_deadline() -> None:
    messages, source = run([on_next(500, EVENTS["a"])], first_event=50, idle=10)
    time, message = stalled(messages)
    assert time == 250 and message.startswith("first_event_timeout expired")
    assert source.subscriptions == [ReactiveTest.subscribe(200, 250)]


@pytest.mark.parametrize(("first_event", "idle"), [(50, 40), (45, 40), (7, 40), (50, 3)])
def test_the_first_event_deadline_expires_on_time_in_looks_of_the_idle_timer(
    first_event: float, idle: float
) -> None:
    """Before the first output the idle timer's looks watch `first_event`: equal looks,
    none longer than a quarter of `idle`, that end at `first_event`, never before."""
    messages, _ = run([on_next(500, EVENTS["a"])], first_event=first_event, idle=idle)
    time, message = stalled(messages)
    assert time == pytest.approx(200 + first_event)
    assert message == f"first_event_timeout expired: no output from {P} for {first_event:g} s"


class _Armings(TestScheduler):
    """A test scheduler that notes when each timer is armed."""

    def __init__(self) -> None:
        super().__init__()
        self.armed: list[float] = []

    def schedule_relative(self, duetime: Any, action: Any, state: Any = None) -> Any:
        self.armed.append(self.clock)
        return super().schedule_relative(duetime, action, state)


def test_the_first_output_arms_no_timer() -> None:
    """One timer watches the first event and then the silences: the first output only
    counts (it cancelled the first-event timer and armed the idle one, per stream)."""
    scheduler = _Armings()
    source = scheduler.create_cold_observable(on_next(5, EVENTS["a"]), on_next(500, EVENTS["b"]))
    scheduler.start(
        lambda: source.pipe(deadlines(provider=P, first_event=50, idle=40)), disposed=236
    )
    assert 205 not in scheduler.armed
    assert [t for t in scheduler.armed if t > 200] == [210, 220, 230]  # a look each 10


def test_silence_after_output_expires_the_idle_deadline_never_early() -> None:
    messages, source = run([on_next(10, EVENTS["a"]), on_next(500, EVENTS["b"])], idle=40)
    time, message = stalled(messages)
    assert 210 + 40 <= time <= 210 + 40 + 40 / 4  # at most a quarter period late
    assert message == f"idle_timeout expired: no output from {P} for 40 s"
    assert source.subscriptions == [ReactiveTest.subscribe(200, time)]


@pytest.mark.parametrize("last", [211, 219, 222, 230])
def test_the_idle_deadline_is_never_early_and_at_most_a_quarter_period_late(last: int) -> None:
    # Output at 210 and at `last`, then silence: the looks every 10 (from 200) see it.
    messages, _ = run([on_next(10, EVENTS["a"]), on_next(last - 200, EVENTS["b"])], idle=40)
    time, _message = stalled(messages)
    assert last + 40 <= time <= last + 40 + 10


def test_steady_fragments_keep_a_long_call_alive() -> None:
    drip = [on_next(t, EVENTS["m"]) for t in range(10, 400, 15)]
    messages, _ = run([*drip, on_next(400, EVENTS["D"]), on_completed(410)], idle=40)
    assert messages[-1].value.kind == "C" and messages[-2].value.value == EVENTS["D"]


def test_the_total_deadline_ignores_output() -> None:
    steady = [on_next(t, EVENTS["a"]) for t in range(10, 400, 10)]
    messages, _ = run(steady, total=95, idle=40)
    time, message = stalled(messages)
    assert time == 295 and message.startswith("total_timeout expired")


def test_a_terminal_event_stops_every_deadline() -> None:
    messages, _ = run([on_next(10, EVENTS["d"])], first_event=50, idle=10, total=60)
    assert [m.time for m in messages] == [210]  # the source never completes; no error


def test_disposing_cancels_the_timers() -> None:
    messages, _ = run([], disposed=230, first_event=50, total=60)
    assert messages == []


async def test_without_a_scheduler_the_timers_run_on_the_running_loop() -> None:
    """Not on RxPY's TimeoutScheduler, which starts a thread per timer: at a thousand
    streams subscribed with `.subscribe()`, a thousand sleeping threads."""
    threads = threading.active_count()
    got: list[Any] = []
    done = asyncio.Event()
    reactivex.never().pipe(deadlines(first_event=0.01, provider="p")).subscribe(
        got.append, on_completed=done.set
    )
    assert threading.active_count() == threads
    await asyncio.wait_for(done.wait(), timeout=2)
    assert [e.error.kind for e in got] == ["stalled"]


def test_a_consumer_exception_on_the_stall_error_reaches_on_error() -> None:
    """The error is emitted from a timer, with the source already unsubscribed: what the
    observer raises on it goes to its `on_error` (it went to the scheduler: the test's
    `start`, or the event loop's "Exception in callback" log, and the observer never
    heard of it)."""
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, EVENTS["a"]))
    results = scheduler.start(
        lambda: source.pipe(deadlines(provider=P, idle=20), raise_on("error"))
    )
    assert results.messages == [on_next(210, EVENTS["a"]), ReactiveTest.on_error(230, BOOM)]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 230)]


def test_no_timer_is_left_armed_after_dispose() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, EVENTS["a"]))
    scheduler.start(
        lambda: source.pipe(deadlines(provider=P, first_event=500, idle=300, total=700)),
        disposed=300,
    )
    assert [item for item, _ in scheduler._queue.items if not item.is_cancelled()] == []


def test_each_subscription_has_its_own_timers() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, EVENTS["a"]))
    stalls = source.pipe(deadlines(provider=P, idle=20))
    first, second = scheduler.create_observer(), scheduler.create_observer()
    scheduler.schedule_absolute(100, lambda s, _: stalls.subscribe(first, scheduler=s))
    scheduler.schedule_absolute(130, lambda s, _: stalls.subscribe(second, scheduler=s))
    scheduler.start()
    assert [m.time for m in first.messages] == [110, 130, 130]
    assert [m.time for m in second.messages] == [140, 160, 160]


@pytest.mark.parametrize(
    "limits",
    [
        {"idle": -1},
        {"idle": 0},
        {"first_event": "5"},
        {"total": float("nan")},
        {"total": float("inf")},
        {"idle": True},
        {"idle": 1, "scheduler": 1},
        {"idle": 1, "provider": 5},
        {"idle": 1, "attempt": 0},
    ],
)
def test_bad_deadlines_are_refused_at_the_call(limits: dict[str, Any]) -> None:
    """They failed at subscription or in a timer (a `str`), or expired at once (0, a
    negative number): a deadline is a finite number of seconds above zero, as the
    provider options `*_timeout` are."""
    with pytest.raises((TypeError, ValueError), match=list(limits)[-1]):
        deadlines(**limits)


def test_elapsed_time_shortens_the_total_deadline_and_the_message_names_the_total() -> None:
    """A turn that began before this subscription (a fallback's later provider) has
    what is left of its total."""
    messages, _ = run([on_next(10, EVENTS["a"]), on_next(500, EVENTS["b"])], total=100, elapsed=60)
    time, message = stalled(messages)
    assert time == 240
    assert message == "total_timeout expired: the turn took more than 100 s"


@pytest.mark.parametrize(("total", "elapsed"), [(10, 10), (10, 11), (10, -1)])
def test_an_elapsed_time_not_below_the_total_is_refused(total: float, elapsed: float) -> None:
    with pytest.raises(ValueError, match="elapsed"):
        deadlines(total=total, elapsed=elapsed)


def test_composed_without_a_provider_it_names_the_events_provider() -> None:
    """`p.stream(req).pipe(deadlines(idle=30))`, as docs/operators.md composes it, said
    "no output from unknown" (a review of the composable surface): the stall names the
    provider and attempt of the last event that passed, as `cap_events` and
    `cancel_on` do; "unknown" only before any event."""
    scheduler = TestScheduler()
    later = EVENTS["a"].model_copy(update={"attempt": 2})
    source = scheduler.create_cold_observable(on_next(10, EVENTS["a"]), on_next(20, later))
    messages = scheduler.start(lambda: source.pipe(deadlines(idle=40))).messages
    _, message = stalled(messages)
    failure = messages[-2].value.value
    assert (failure.provider, failure.attempt, failure.error.provider) == (P, 2, P)
    assert message == f"idle_timeout expired: no output from {P} for 40 s"
    silent = scheduler.create_cold_observable(on_next(500, EVENTS["a"]))
    messages = TestScheduler().start(lambda: silent.pipe(deadlines(first_event=40))).messages
    assert messages[0].value.value.provider == "unknown"
