"""cap_events: end a turn that emits more events than any real answer has."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc

from rxllm.error_body import request_id_of
from rxllm.events import IS_TERMINAL, Event, failed
from rxllm.fragments import hang_up
from rxllm.operators._args import check_count
from rxllm.operators._link import Link, Operator

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
            return _Cap(observer, limit).link_to(source, scheduler)

        return Operator(subscribe)

    return _cap_events


class _Cap(Link[Event]):
    """One subscription: the events counted so far."""

    __slots__ = ("_count", "_limit", "_observer")

    def __init__(self, observer: abc.ObserverBase[Event], limit: int) -> None:
        super().__init__()
        self._observer = observer
        self._limit = limit
        self._count = 0

    def _next(self, event: Event) -> None:
        limit = self._limit
        if self._count > limit:  # (over the limit while subscribing: not linked yet)
            return
        if not IS_TERMINAL[type(event)]:
            self._count += 1
            if self._count > limit:
                headers = hang_up(self).headers  # (None while subscribing)
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

    def _error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def _completed(self) -> None:
        self._observer.on_completed()
