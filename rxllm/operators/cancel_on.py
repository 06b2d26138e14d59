"""cancel_on: end a stream with `cancelled` when a signal fires."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SingleAssignmentDisposable

from rxllm.events import IS_TERMINAL, Cancelled, Event, Retry
from rxllm.operators._args import check_observable, check_str
from rxllm.operators._link import Operator, link
from rxllm.operators._timers import on_its_loop

__all__ = ["cancel_on"]


def cancel_on(
    signal: Observable[Any], provider: str = "unknown", reason: str = "cancelled by caller"
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Mirror the source until `signal` emits; then emit `cancelled`, complete, and
    unsubscribe from the source (which closes its HTTP response).

    ::

        source:  -t-t-t-t-done|
        signal:  -----x
        cancel_on(signal)
        result:  -t-t-cancelled|

    An exception the observer raises on `cancelled` goes to its `on_error`. As with
    RxPY's `take_until`, a signal that completes without an item cancels nothing, and
    a signal that fails ends the stream with its error on `on_error` (a bug, not a
    provider failure), unsubscribing the source. Once the source's terminal event has
    come, the signal is let go: a signal the observer fires while it handles that
    event (a `Subject` it calls on `done`) cancels nothing, and the stream still has
    exactly one terminal event. A signal fired in another thread than the event loop
    the stream runs on is handled on that loop, so `cancelled` comes after the event
    being delivered, never during it.

    Args:
        signal: any observable; its first item cancels.
        provider: named on the event when the source has emitted nothing yet. After
            that, the event names the last event's provider and attempt, or, after a
            `retry`, the attempt it announced (the one the cancel cut).
        reason: the `cancelled` event's reason.

    Raises:
        TypeError: `signal` is not an Observable, or `provider` or `reason` not a `str`.
    """
    check_observable("signal", signal)
    check_str("provider", provider)
    check_str("reason", reason)

    def _cancel_on(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            upstream = SingleAssignmentDisposable()
            watcher = SingleAssignmentDisposable()
            last = (provider, 1)
            stopped = False

            def on_next(event: Event) -> None:
                nonlocal last, stopped
                if type(event) is Retry:  # a cancel from now on cuts the announced attempt
                    assert isinstance(event, Retry)
                    last = (event.next_provider, event.next_attempt)
                elif IS_TERMINAL[type(event)]:
                    # Settled: nothing is left to cancel, and a second terminal event
                    # would break the stream's contract. The source completes on its own.
                    stopped = True
                    watcher.dispose()
                else:
                    last = (event.provider, event.attempt)
                observer.on_next(event)

            def stop() -> bool:
                """Unsubscribe the source and the signal, once; False if stopped."""
                nonlocal stopped
                if stopped:
                    return False
                stopped = True
                upstream.dispose()
                watcher.dispose()
                return True

            def on_signal(_: Any) -> None:
                if not stop():
                    return
                cancelled = Cancelled.make(provider=last[0], attempt=last[1], reason=reason)
                try:
                    observer.on_next(cancelled)
                except Exception as exc:
                    # The signal's source cannot report what the observer raised on the
                    # event that ends its stream: it is that observer's `on_error`.
                    observer.on_error(exc)
                    return
                observer.on_completed()

            def on_signal_error(error: Exception) -> None:
                if stop():
                    observer.on_error(error)

            def on_done() -> None:
                nonlocal stopped
                stopped = True
                watcher.dispose()
                observer.on_completed()

            # A signal fired in another thread ends the stream on the source's loop,
            # never while the loop's thread is inside `on_next`.
            watcher.disposable = link(
                signal,
                on_its_loop(on_signal, scheduler),
                on_its_loop(on_signal_error, scheduler),
                scheduler=scheduler,
            )
            if not stopped:
                upstream.disposable = link(source, on_next, observer.on_error, on_done, scheduler)
            return CompositeDisposable(upstream, watcher)

        return Operator(subscribe)

    return _cancel_on
