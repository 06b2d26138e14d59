"""settle_once: exactly one terminal event, then completion."""

from __future__ import annotations

from collections.abc import Callable

from loguru import logger
from reactivex import Observable, abc

from rxllm.events import IS_TERMINAL, Cancelled, Done, Event, unterminated
from rxllm.operators._args import check_seconds, check_str
from rxllm.operators._link import Link, Operator
from rxllm.operators._timers import Timer, after, loop_scheduler
from rxllm.sources.job import running_loop

__all__ = ["settle_once"]


def settle_once(
    provider: str = "unknown", drain: float = 0.0, hold: float = 0.0
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Pass events through until the first terminal one (`done`, `error`, `cancelled`),
    emit it, complete, and unsubscribe from the source: at once, or after letting it
    finish for up to `drain` seconds.

    ::

        source:  -t-t-done-t-|            -t-t-|
        settle_once()
        result:  -t-t-done|               -t-t-error(truncated)|

    A source that completes without a terminal event was cut off: the stream ends with
    `error(kind="truncated")`. Events after the terminal are dropped and logged.
    `on_error` is passed on: it means a bug, not a provider failure.

    An exception the observer raises on the terminal event goes to its `on_error`,
    and the source is unsubscribed (closing the HTTP response): the source cannot
    report it, since the stream is already settled. Raised on any other event, it
    propagates to the source, which reports it with `on_error`. Raised by the
    observer's `on_completed` (or its `on_next` of what an operator emits at completion:
    `to_list`), it goes to the running loop's exception handler, or without a loop
    propagates to whoever drives the stream.

    With `drain`, a source still running after a `done` or `error` is left to end on
    its own, for at most `drain` seconds on the subscription's scheduler (subscribed
    without one, on the running event loop's), even when the result is unsubscribed
    meanwhile: an HTTP body read to its end gives its connection back to the pool,
    while one closed early costs the next turn a new connection (and TLS handshake).
    What it still emits is dropped and logged. Unsubscribing before the terminal event,
    or after a `cancelled`, still unsubscribes the source at once.

    With `hold`, after a `done` whose source is still running, the completion waits for
    the source to end, for at most `hold` seconds (then the drain goes on)::

        source:  -t-done-|                -t-done------...
        settle_once(drain=D, hold=3)
        result:  -t-done-|                -t-done---|      (the source drains)

    A server that ends its body a moment after its last event (`data: [DONE]`, then the
    chunked body's end) has its connection back in the pool before the caller, whose
    turn ends at the completion (`async for`, `complete()`), starts the next one, as an
    SDK that reads the body to its end before its stream stops (openai-python's) would;
    without the hold, a turn started at once opens another connection while the previous
    one drains. The `done` itself is never delayed.

    Args:
        provider: named on the truncation error when the source emitted nothing.
        drain: seconds the source may take to end after the terminal event (finite,
            0 or more).
        hold: seconds the completion after a `done` may wait for the source to end
            (finite, 0 or more).

    Raises:
        TypeError, ValueError: `provider` is not a `str`, or `drain` or `hold` not a
            finite number of seconds, 0 or more.
    """
    check_str("provider", provider)
    check_seconds("drain", drain, zero=True)
    check_seconds("hold", hold, zero=True)

    def _settle_once(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            settle = _Settle(observer, scheduler, provider, drain, hold)
            return settle.link_to(source, scheduler)

        return Operator(subscribe)

    return _settle_once


class _Settle(Link[Event]):
    """One subscription: whether it has settled, and whether its source is draining."""

    __slots__ = (
        "_drain",
        "_draining",
        "_held",
        "_hold",
        "_last",
        "_observer",
        "_provider",
        "_scheduler",
        "_settled",
        "_timer",
    )

    def __init__(
        self,
        observer: abc.ObserverBase[Event],
        scheduler: abc.SchedulerBase | None,
        provider: str,
        drain: float,
        hold: float,
    ) -> None:
        super().__init__()
        self._observer = observer
        self._scheduler = scheduler
        self._drain = drain
        self._hold = hold
        self._held: Event | None = None  # a `done` whose completion waits for the source
        self._settled = False
        self._draining = False
        self._provider = provider
        self._last: Event | None = None  # who a truncation error names
        self._timer: Timer | None = None  # the hold's, then the drain's

    def _unsubscribe(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.unlink()

    def _clock(self) -> abc.SchedulerBase | None:
        clock = self._scheduler
        if clock is None:  # subscribed without one: the running loop's, from async code
            loop = running_loop()
            clock = None if loop is None else loop_scheduler(loop)
        return clock

    def _let_drain(self, event: Event) -> None:
        """Unsubscribe from the source now, or once it had `drain` s to end."""
        clock = self._clock()
        if self._drain <= 0 or clock is None or isinstance(event, Cancelled):
            self._unsubscribe()
            return
        try:
            timer = after(clock, self._drain, self._unsubscribe)
        except Exception:  # the scheduler cannot time it (disposed): no drain, then
            logger.opt(exception=True).debug("the drain could not be scheduled")
            self._unsubscribe()
            return
        self._draining = True
        self._timer = timer

    def _next(self, event: Event) -> None:
        if self._settled:
            logger.bind(provider=event.provider, attempt=event.attempt).debug(
                "dropped a late {} event after the terminal event", event.type
            )
            return
        self._last = event
        if IS_TERMINAL[type(event)]:
            self._settled = True
            try:
                self._observer.on_next(event)
            except Exception as exc:
                self._unsubscribe()
                _after_settling(self._observer.on_error, exc)
                return
            if self._hold > 0 and isinstance(event, Done) and self._held_until_end(event):
                return
            self._let_drain(event)
            _after_settling(self._observer.on_completed)
            return
        self._observer.on_next(event)

    def _held_until_end(self, event: Event) -> bool:
        """Complete when the source ends or `hold` s pass; False: not timed."""
        clock = self._clock()
        if clock is None:
            return False
        try:
            self._timer = after(clock, self._hold, self._release)
        except Exception:  # the scheduler cannot time it (disposed): completed at once
            logger.opt(exception=True).debug("the hold could not be scheduled")
            return False
        self._held = event
        return True

    def _release(self) -> None:
        """The hold ran out: complete, the source left to drain."""
        self._timer = None
        event, self._held = self._held, None
        if event is not None:
            self._let_drain(event)
            _after_settling(self._observer.on_completed)

    def _end_hold(self) -> None:
        """The source ended within the hold: complete now."""
        self._held = None
        self._unsubscribe()
        _after_settling(self._observer.on_completed)

    def _completed(self) -> None:
        if self._draining:  # the source ended within its drain time
            self._unsubscribe()
            return
        if self._held is not None:  # the source ended within the hold
            self._end_hold()
            return
        if not self._settled:
            last = self._last
            provider = self._provider if last is None else last.provider
            attempt = 1 if last is None else last.attempt
            self._next(unterminated(provider, attempt))

    def _error(self, error: Exception) -> None:
        if self._held is not None:  # the turn was done: how its body ended is no concern now
            logger.opt(exception=error).debug("the source failed after its last event")
            self._end_hold()
        elif not self._settled:
            self._observer.on_error(error)
        elif self._draining:  # the observer has completed: nobody is left to tell
            logger.opt(exception=error).debug("the source failed while draining")
            self._unsubscribe()
        else:  # what the observer raised after the end, back from a source that caught it
            raise error

    def dispose(self) -> None:
        if not self._draining:
            self._unsubscribe()


def _after_settling(action: Callable[..., None], *args: object) -> None:
    """Call the observer once the stream is settled: what it raises (its own
    `on_completed`, or an `on_next` an operator calls at completion, `to_list`'s) cannot
    go back to the source, which would report it to this settled subscription. It goes
    to the running loop's exception handler, as an exception in a callback of the loop
    does; without a loop it propagates to whoever drives the stream (a source that
    catches it and reports it here has it raised again, by `on_error`)."""
    try:
        action(*args)
    except Exception as exc:
        loop = running_loop()
        if loop is None:
            raise
        loop.call_exception_handler(
            {"message": "an observer raised after its stream had ended", "exception": exc}
        )
