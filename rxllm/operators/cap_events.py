"""cap_events: end a turn that emits more events than any real answer has."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc

from rxllm.error_body import request_id_of
from rxllm.events import IS_TERMINAL, Event, failed
from rxllm.fragments import hang_up
from rxllm.operators._args import check_count
from rxllm.operators._link import Operator, attach

__all__ = ["cap_events"]


def cap_events(limit: int) -> Callable[[Observable[Event]], Observable[Event]]:
    """Mirror the source until its `limit`-th non-terminal event; then emit
    `error(kind="limit")` naming `max_events`, complete, and unsubscribe.

    ::

        source:  -t-t-t-t-t-done|
        cap_events(3)
        result:  -t-t-t-x(limit)|

    Deadlines stop a stream that says nothing; this stops one that never stops
    talking (a server looping on tiny deltas), before it fills memory or a UI.

    The source is unsubscribed before the limit error is emitted, so an exception the
    observer raises on that error goes to its `on_error`. It is hung up as a deadline
    hangs up (`fragments.hang_up`): the error names the request id of the response it
    cuts off, where an operator upstream knew its headers (`operators.normalize`), for
    a support ticket. Each subscription counts from zero.

    Args:
        limit: the most non-terminal events one turn may emit (an `int`, 0 or more).

    Raises:
        TypeError, ValueError: `limit` is not an `int`, or is negative.
    """
    check_count("limit", limit, 0)

    def _cap_events(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            cap = _Cap(observer, limit)
            cap.attach(attach(source, cap, scheduler))
            return cap

        return Operator(subscribe)

    return _cap_events


class _Cap(abc.DisposableBase):
    """One subscription: the events counted so far, and its upstream."""

    __slots__ = ("_count", "_limit", "_observer", "_upstream")

    def __init__(self, observer: abc.ObserverBase[Event], limit: int) -> None:
        self._observer = observer
        self._limit = limit
        self._count = 0
        self._upstream: abc.DisposableBase | None = None

    def attach(self, upstream: abc.DisposableBase) -> None:
        if self._count > self._limit:  # over the limit while subscribing
            upstream.dispose()
        else:
            self._upstream = upstream

    def on_next(self, event: Event) -> None:
        limit = self._limit
        if self._count > limit:
            return
        if not IS_TERMINAL[type(event)]:
            self._count += 1
            if self._count > limit:
                upstream, self._upstream = self._upstream, None
                headers = None if upstream is None else hang_up(upstream).headers
                message = f"the turn emitted more than max_events ({limit}) events"
                try:
                    self._observer.on_next(
                        failed(
                            event.provider,
                            "limit",
                            message,
                            attempt=event.attempt,
                            request_id=None if headers is None else request_id_of(headers),
                        )
                    )
                except Exception as exc:
                    # The source is unsubscribed: it cannot report what the observer
                    # raised on the event that ends the stream. Its `on_error` does.
                    self._observer.on_error(exc)
                    return
                self._observer.on_completed()
                return
        self._observer.on_next(event)

    def on_error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def on_completed(self) -> None:
        self._observer.on_completed()

    def dispose(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.dispose()
