"""cap_events: end a turn that emits more events than any real answer has."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc
from reactivex.disposable import SingleAssignmentDisposable

from rxllm.events import TERMINAL_TYPE_SET, Event, failed
from rxllm.operators._link import Operator, link

__all__ = ["cap_events"]

_TERMINALS = TERMINAL_TYPE_SET


def cap_events(limit: int) -> Callable[[Observable[Event]], Observable[Event]]:
    """Mirror the source until its `limit`-th non-terminal event; then emit
    `error(kind="limit")` naming `max_events`, complete, and unsubscribe.

    ::

        source:  -t-t-t-t-t-done|
        cap_events(3)
        result:  -t-t-t-x(limit)|

    Deadlines stop a stream that says nothing; this stops one that never stops
    talking (a server looping on tiny deltas), before it fills memory or a UI.

    Args:
        limit: the most non-terminal events one turn may emit.
    """

    def _cap_events(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            upstream = SingleAssignmentDisposable()
            count = 0

            def on_next(event: Event) -> None:
                nonlocal count
                if count > limit:
                    return
                if type(event) not in _TERMINALS:
                    count += 1
                    if count > limit:
                        upstream.dispose()
                        message = f"the turn emitted more than max_events ({limit}) events"
                        observer.on_next(
                            failed(event.provider, "limit", message, attempt=event.attempt)
                        )
                        observer.on_completed()
                        return
                observer.on_next(event)

            upstream.disposable = link(
                source, on_next, observer.on_error, observer.on_completed, scheduler
            )
            return upstream

        return Operator(subscribe)

    return _cap_events
