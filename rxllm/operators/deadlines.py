"""deadlines: end a stream with `error(kind="stalled")` when output stops coming."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc

from rxllm.error_body import request_id_of
from rxllm.events import IS_TERMINAL, Failed, Retry, failed
from rxllm.fragments import hang_up
from rxllm.operators._args import check_count, check_scheduler, check_seconds, check_str
from rxllm.operators._link import _UNLINKED, Link, Operator
from rxllm.operators._timers import Timer, after, default_clock
from rxllm.sources.job import consumer_waits

__all__ = ["deadlines"]

_T = TypeVar("_T")

# How many looks of the idle timer make one `idle` period: a stall is reported at most
# `idle / _LOOKS` late, for `_LOOKS` timers per quiet period.
_LOOKS = 4


def deadlines(
    *,
    first_event: float | None = None,
    idle: float | None = None,
    total: float | None = None,
    elapsed: float = 0.0,
    provider: str | None = None,
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
    - `total`: seconds from subscription to the terminal event, whatever comes; with
      `elapsed`, seconds of the turn already spent before this subscription (a
      fallback's earlier providers), it fires `total - elapsed` after subscription.

    Output is anything but a terminal or `retry` event: text, reasoning, a tool start,
    a tool-argument fragment (a long tool call is not a stall), usage. A keepalive never
    reaches this operator (SSE comments and pings produce no fragment), so a server that
    only keeps the connection alive stalls. A terminal event stops every deadline.

    The idle timer is not re-armed per item (that would cost a timer per network
    chunk): items only count, and a timer looks every quarter of `idle` whether any
    came; four looks in a row without output are a stall. So a stall is reported no
    sooner than `idle` seconds after the last output, and no later than a quarter
    period after that. The same timer watches `first_event` before the first output,
    in equal looks of at most a quarter of `idle` (one look without `idle`), so that it
    expires `first_event` after subscription, and the first output arms no timer.

    The error names the request id of the response it cuts off (`ErrorInfo.request_id`,
    for a support ticket), when an operator upstream knew its headers and said so as it
    was disposed (`operators.normalize` does: see `fragments.hang_up`); None when no
    response had answered yet, or between attempts. A deadline that cuts off a rejection
    whose body was still arriving (a 429 sent at once, its body a byte at a time) emits
    that rejection instead, as its source said it when disposed: its status, its wait
    and what of its body came (`sources.http`), so that the verdict is the status. A
    first-event or idle deadline that cuts off a turn its provider had already said was
    complete (a finish read, the usage or `[DONE]` that may follow it not yet come) ends
    it as the end of the body would have, `done`, as its normalizer said when disposed
    (`operators.normalize`); the total deadline, which watches a whole turn, fails it.

    An exception the observer raises on the `stalled` error goes to its `on_error`:
    the error comes from a timer, and the source is already unsubscribed.

    Args:
        first_event, idle, total: the deadlines in seconds (finite, above zero); None
            turns one off.
        elapsed: seconds of `total` already spent (zero or more, less than `total`).
        provider, attempt: named on the error (a `retry` event passing names the
            next attempt instead). Without `provider`, the error names the provider and
            attempt of the last event that passed (composed after `provider.stream()`,
            the turn's), and "unknown" before any.
        scheduler: where the timers run (default: the subscription's; without one,
            the running event loop, or RxPY's TimeoutScheduler outside a loop).

    Raises:
        TypeError, ValueError: an argument of the wrong type, or a deadline of zero,
            below zero, or not finite.
    """
    for name, seconds in (("first_event", first_event), ("idle", idle), ("total", total)):
        if seconds is not None:
            check_seconds(name, seconds)
    check_seconds("elapsed", elapsed, zero=True)
    if total is not None and elapsed >= total:
        raise ValueError(f"elapsed ({elapsed:g} s) must be less than total ({total:g} s)")
    if provider is not None:
        check_str("provider", provider)
    check_count("attempt", attempt, 1)
    check_scheduler("scheduler", scheduler)

    # The looks `first_event` takes: as many as keep each within an idle look's period.
    first_looks = (
        1 if first_event is None or idle is None else math.ceil(first_event * _LOOKS / idle)
    )

    def _deadlines(source: Observable[_T]) -> Observable[_T | Failed]:
        def subscribe(
            observer: abc.ObserverBase[_T | Failed],
            scheduler_: abc.SchedulerBase | None = None,
        ) -> abc.DisposableBase:
            clock = scheduler or scheduler_ or default_clock()
            watch = _Watch(observer, clock, first_event, first_looks, idle, provider, attempt)
            watch.start(source, scheduler_, total, elapsed)
            return watch

        return Operator(subscribe)

    return _deadlines


class _Watch(Link[Any]):
    """One subscription's deadlines: its timers, its output count, its upstream."""

    __slots__ = (
        "_clock",
        "_first_event",
        "_first_looks",
        "_idle",
        "_last",
        "_learns",
        "_observer",
        "_outputs",
        "_quiet",
        "_watch",
        "_whole",
    )

    def __init__(
        self,
        observer: abc.ObserverBase[Any],
        clock: abc.SchedulerBase,
        first_event: float | None,
        first_looks: int,
        idle: float | None,
        provider: str | None,
        attempt: int,
    ) -> None:
        super().__init__()
        self._observer = observer
        self._clock = clock
        self._first_event = first_event
        self._first_looks = first_looks
        self._idle = idle
        self._last = (provider or "unknown", attempt)  # who an expiry names
        self._learns = provider is None  # names the provider of the events passing
        self._outputs = 0  # items of output so far
        self._quiet = 0  # looks in a row that saw no output
        self._watch: Timer | None = None  # the timer of the first-event and idle deadlines
        self._whole: Timer | None = None  # the total timer

    def start(
        self,
        source: Observable[Any],
        scheduler: abc.SchedulerBase | None,
        total: float | None,
        elapsed: float,
    ) -> None:
        clock = self._clock
        if total is not None:
            self._whole = after(clock, total - elapsed, self._expire, "total_timeout", total)
        if self._first_event is not None or self._idle is not None:
            self._look_later()
        self.link_to(source, scheduler)  # (it may expire, or be disposed, meanwhile)

    def _stop_timers(self) -> None:
        watch, whole, self._watch, self._whole = self._watch, self._whole, None, None
        if watch is not None:
            watch.cancel()
        if whole is not None:
            whole.cancel()

    def _watched(self) -> tuple[str, float, int]:
        """The deadline the looks watch now, and the looks in a row without output that
        expire it: `first_event` until the first output, `idle` from then on (or from
        the start, without `first_event`)."""
        if self._outputs == 0 and self._first_event is not None:
            return "first_event_timeout", self._first_event, self._first_looks
        assert self._idle is not None
        return "idle_timeout", self._idle, _LOOKS

    def _look_later(self) -> None:
        _, seconds, looks = self._watched()
        self._watch = after(self._clock, seconds / looks, self._looked, self._outputs)

    def _looked(self, seen: int) -> None:
        if self.stopped:
            return
        if self._outputs != seen or not consumer_waits(self._clock):
            self._quiet = 0  # output came since the last look, or nobody asked for it
        else:
            self._quiet += 1
            which, seconds, looks = self._watched()
            if self._quiet == looks:
                self._expire(which, seconds)
                return
        self._look_later()

    def _expire(self, which: str, seconds: float) -> None:
        if self.stopped:
            return
        # The response it cuts off, which names its request id, the rejection it cut
        # short, if its source was reading one, and how the turn ends if its provider had
        # said it was complete.
        headers, rejection, ended = hang_up(self)
        request_id = None if headers is None else request_id_of(headers)
        provider, attempt = self._last
        if ended is not None and rejection is None and which != "total_timeout":
            # A finish came, the usage or `[DONE]` that may follow it did not: the turn is
            # done, as the end of the body would have made it (the first-event and idle
            # deadlines watch an attempt's fragments as its normalizer emits them; the
            # total deadline watches a whole turn's events, and fails it)
            self._end_as(ended)
            return
        try:
            self._observer.on_next(
                rejection  # its body was still arriving: the status is the verdict
                if rejection is not None
                else failed(
                    provider,
                    "stalled",
                    f"{which} expired: no output from {provider} for {seconds:g} s"
                    if which != "total_timeout"
                    else f"total_timeout expired: the turn took more than {seconds:g} s",
                    attempt=attempt,
                    request_id=request_id,
                )
            )
        except Exception as exc:
            # Raised in a timer, with the source unsubscribed: neither can report what
            # the observer raised on the event that ends its stream. Its `on_error` does.
            self._observer.on_error(exc)
            return
        self._observer.on_completed()

    def _end_as(self, ended: tuple[Any, ...]) -> None:
        try:
            for item in ended:
                self._observer.on_next(item)
        except Exception as exc:  # raised in a timer: as `_expire` reports it
            self._observer.on_error(exc)
            return
        self._observer.on_completed()

    def _next(self, item: Any) -> None:
        if self._upstream is _UNLINKED:  # expired, or disposed, while subscribing
            return
        kind: type = type(item)  # a type test, not isinstance: this runs per chunk
        if IS_TERMINAL[kind]:
            self._stop_timers()
        elif kind is Retry:
            self._last = (item.next_provider, item.next_attempt)
        else:
            self._outputs += 1
            if self._learns and isinstance(named := getattr(item, "provider", None), str):
                self._last = (named, getattr(item, "attempt", self._last[1]))
            if self._outputs == 1 and self._idle is None and self._first_event is not None:
                self._stop_watch()  # with `idle`, the next look is its first
        self._observer.on_next(item)

    def _stop_watch(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()

    def _completed(self) -> None:
        self._stop_timers()
        self._observer.on_completed()

    def _error(self, error: Exception) -> None:
        self._stop_timers()
        self._observer.on_error(error)

    def dispose(self) -> None:
        self._stop_timers()
        self.unlink()
