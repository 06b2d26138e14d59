"""settle_once: exactly one terminal event, then completion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loguru import logger
from reactivex import Observable, abc
from reactivex.disposable import Disposable, SerialDisposable, SingleAssignmentDisposable

from rxllm.events import TERMINAL_TYPES, Cancelled, Event, failed
from rxllm.operators._link import Operator, link

__all__ = ["settle_once"]


def settle_once(
    provider: str = "unknown", drain: float = 0.0
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
    propagates to the source, which reports it with `on_error`.

    With `drain`, a source still running after a `done` or `error` is left to end on
    its own, for at most `drain` seconds on the subscription's scheduler, even when the
    result is unsubscribed meanwhile: an HTTP body read to its end gives its connection
    back to the pool, while one closed early costs the next turn a new connection (and
    TLS handshake). What it still emits is dropped and logged. Unsubscribing before the
    terminal event, or after a `cancelled`, still unsubscribes the source at once.

    Args:
        provider: named on the truncation error when the source emitted nothing.
        drain: seconds the source may take to end after the terminal event.
    """

    def _settle_once(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            upstream = SingleAssignmentDisposable()
            drain_timer = SerialDisposable()
            settled = False
            draining = False
            last_provider, last_attempt = provider, 1

            def let_drain(event: Event) -> None:
                """Unsubscribe from the source now, or once it had `drain` s to end."""
                nonlocal draining
                if drain <= 0 or scheduler is None or isinstance(event, Cancelled):
                    upstream.dispose()
                    return
                draining = True

                def stop(_: abc.SchedulerBase, __: Any = None) -> None:
                    upstream.dispose()

                drain_timer.disposable = scheduler.schedule_relative(drain, stop)

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
                    let_drain(event)
                    observer.on_completed()
                    return
                observer.on_next(event)

            def on_completed() -> None:
                if draining:  # the source ended within its drain time
                    drain_timer.dispose()
                    upstream.dispose()
                    return
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
                elif draining:  # the observer has completed: nobody is left to tell
                    logger.opt(exception=error).debug("the source failed while draining")
                    drain_timer.dispose()
                    upstream.dispose()

            def dispose() -> None:
                if not draining:
                    upstream.dispose()

            upstream.disposable = link(source, on_next, on_error, on_completed, scheduler)
            return Disposable(dispose)

        return Operator(subscribe)

    return _settle_once
