"""settle_once: exactly one terminal event, then completion."""

from __future__ import annotations

from collections.abc import Callable

from loguru import logger
from reactivex import Observable, abc
from reactivex.disposable import SingleAssignmentDisposable

from rxllm.events import TERMINAL_TYPES, Event, failed

__all__ = ["settle_once"]


def settle_once(provider: str = "unknown") -> Callable[[Observable[Event]], Observable[Event]]:
    """Pass events through until the first terminal one (`done`, `error`, `cancelled`),
    emit it, complete, and unsubscribe from the source at once.

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
    propagates to the source, which reports it with `on_error`.

    Args:
        provider: named on the truncation error when the source emitted nothing.
    """

    def _settle_once(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            upstream = SingleAssignmentDisposable()
            settled = False
            last_provider, last_attempt = provider, 1

            def on_next(event: Event) -> None:
                nonlocal settled, last_provider, last_attempt
                if settled:
                    logger.bind(provider=event.provider, attempt=event.attempt).debug(
                        "dropped a late {} event after the terminal event", event.type
                    )
                    return
                last_provider, last_attempt = event.provider, event.attempt
                if isinstance(event, TERMINAL_TYPES):
                    settled = True
                    try:
                        observer.on_next(event)
                    except Exception as exc:
                        upstream.dispose()
                        observer.on_error(exc)
                        return
                    upstream.dispose()
                    observer.on_completed()
                    return
                observer.on_next(event)

            def on_completed() -> None:
                if not settled:
                    on_next(
                        failed(
                            last_provider,
                            "truncated",
                            f"the stream from {last_provider} ended without its terminal marker",
                            attempt=last_attempt,
                            retryable=True,
                        )
                    )

            def on_error(error: Exception) -> None:
                if not settled:
                    observer.on_error(error)

            upstream.disposable = source.subscribe(
                on_next, on_error, on_completed, scheduler=scheduler
            )
            return upstream

        return Observable(subscribe)

    return _settle_once
