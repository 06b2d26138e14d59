"""deadlines: end a stream with `error(kind="stalled")` when output stops coming."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SerialDisposable, SingleAssignmentDisposable
from reactivex.scheduler import TimeoutScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler

from rxllm.events import TERMINAL_TYPE_SET, Failed, Retry, failed
from rxllm.operators._link import Operator, link

__all__ = ["deadlines"]

_T = TypeVar("_T")
_TERMINALS = TERMINAL_TYPE_SET


def _default_clock() -> abc.SchedulerBase:
    """The running loop's, when subscribed without a scheduler from async code: RxPY's
    TimeoutScheduler would start a thread per timer, one per stream."""
    try:
        return AsyncIOScheduler(asyncio.get_running_loop())
    except RuntimeError:
        return TimeoutScheduler.singleton()


def deadlines(
    *,
    first_event: float | None = None,
    idle: float | None = None,
    total: float | None = None,
    provider: str = "unknown",
    attempt: int = 1,
    scheduler: abc.SchedulerBase | None = None,
) -> Callable[[Observable[_T]], Observable[_T | Failed]]:
    """Mirror the source; when a deadline expires first, emit `error(kind="stalled")`
    naming it, complete, and unsubscribe from the source (closing its HTTP response).

    ::

        source:  -t-t-----------------t-done|
        deadlines(idle=5)
        result:  -t-t------x(stalled: idle_timeout)|

    - `first_event`: seconds from subscription to the first output.
    - `idle`: seconds without output after that (or from subscription, without
      `first_event`).
    - `total`: seconds from subscription to the terminal event, whatever comes.

    Output is anything but a terminal or `retry` event: text, reasoning, a tool start,
    a tool-argument fragment (a long tool call is not a stall), usage. A keepalive never
    reaches this operator (SSE comments and pings produce no fragment), so a server that
    only keeps the connection alive stalls. A terminal event stops every deadline.

    The idle timer is not re-armed per item (that would cost a timer per network
    chunk): items only count, and when the timer fires after output it re-arms for a
    full period. So a stall is reported no sooner than `idle` seconds after the last
    output, and no later than twice that.

    Args:
        first_event, idle, total: the deadlines in seconds; None turns one off.
        provider, attempt: named on the error (a `retry` event passing names the
            next attempt instead).
        scheduler: where the timers run (default: the subscription's; without one,
            the running event loop, or RxPY's TimeoutScheduler outside a loop).
    """

    def _deadlines(source: Observable[_T]) -> Observable[_T | Failed]:
        def subscribe(
            observer: abc.ObserverBase[_T | Failed],
            scheduler_: abc.SchedulerBase | None = None,
        ) -> abc.DisposableBase:
            clock = scheduler or scheduler_ or _default_clock()
            upstream = SingleAssignmentDisposable()
            watch = SerialDisposable()  # the first-event or idle timer
            whole = SingleAssignmentDisposable()  # the total timer
            stopped = False
            outputs = 0  # items of output so far
            last = (provider, attempt)

            def expire(which: str, seconds: float) -> None:
                nonlocal stopped
                stopped = True
                upstream.dispose()
                watch.dispose()
                whole.dispose()
                observer.on_next(
                    failed(
                        last[0],
                        "stalled",
                        f"{which} expired: no output from {last[0]} for {seconds:g} s"
                        if which != "total_timeout"
                        else f"total_timeout expired: the turn took more than {seconds:g} s",
                        attempt=last[1],
                    )
                )
                observer.on_completed()

            def arm_idle() -> None:
                assert idle is not None
                seen = outputs

                def fire(_: abc.SchedulerBase, __: Any = None) -> None:
                    if stopped:
                        return
                    if outputs != seen:
                        arm_idle()  # output came meanwhile: a full period from now
                    else:
                        expire("idle_timeout", idle)

                watch.disposable = clock.schedule_relative(idle, fire)

            def arm(which: str, seconds: float) -> SingleAssignmentDisposable:
                timer = SingleAssignmentDisposable()

                def fire(_: abc.SchedulerBase, __: Any = None) -> None:
                    if not stopped:
                        expire(which, seconds)

                timer.disposable = clock.schedule_relative(seconds, fire)
                return timer

            def on_next(item: _T) -> None:
                nonlocal outputs, last
                if stopped:
                    return
                kind: type = type(item)  # a type test, not isinstance: this runs per chunk
                if kind in _TERMINALS:
                    watch.dispose()
                    whole.dispose()
                elif kind is Retry:
                    assert isinstance(item, Retry)
                    last = (item.next_provider, item.next_attempt)
                else:
                    outputs += 1
                    if outputs == 1 and first_event is not None:
                        if idle is not None:
                            arm_idle()  # replaces (and so cancels) the first-event timer
                        else:
                            watch.dispose()
                observer.on_next(item)

            def on_completed() -> None:
                watch.dispose()
                whole.dispose()
                observer.on_completed()

            def on_error(error: Exception) -> None:
                watch.dispose()
                whole.dispose()
                observer.on_error(error)

            if total is not None:
                whole.disposable = arm("total_timeout", total)
            if first_event is not None:
                watch.disposable = arm("first_event_timeout", first_event)
            elif idle is not None:
                arm_idle()
            upstream.disposable = link(source, on_next, on_error, on_completed, scheduler_)
            return CompositeDisposable(upstream, watch, whole)

        return Operator(subscribe)

    return _deadlines
