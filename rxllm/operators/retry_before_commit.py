"""retry_before_commit: switch to another attempt while nothing has been committed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reactivex import Observable, abc
from reactivex.disposable import SerialDisposable, SingleAssignmentDisposable
from reactivex.scheduler import CurrentThreadScheduler

from rxllm.events import Event, Failed, Retry, commits
from rxllm.operators._link import Operator, link

__all__ = ["Decide", "Switch", "retry_before_commit"]


@dataclass(frozen=True, slots=True)
class Switch:
    """Leave the failed attempt for `events`, announced by `retry`, after `delay` s."""

    retry: Retry
    events: Observable[Event]
    delay: float = 0.0


Decide = Callable[[Failed, bool], "Failed | Switch"]
"""Given an attempt's error and whether that attempt had committed, either the error
to surface (possibly enriched) or the attempt to switch to."""


def retry_before_commit(first: Observable[Event], decide: Decide) -> Observable[Event]:
    """Mirror `first`; when it fails, ask `decide` whether to surface the error or to
    switch to another attempt. Once an attempt has committed (emitted anything but a
    terminal or `retry` event), `decide` is told so, and the rules say it surfaces.

    ::

        first:    -x(rejected)|
        second:                 -t-t-done|
        result:   -r------------t-t-done|      (r: the `retry` event)

    RxPY's `catch` shape: a `SerialDisposable` holds the current attempt, so switching
    disposes the failed one (closing its HTTP response) and disposing the result
    disposes whichever attempt or scheduled wait is current. The first attempt is
    subscribed at once; the next one is scheduled on the subscription's scheduler,
    never subscribed inside the failing callback, so a chain of retries never grows
    the stack. Only `decide` is guarded;
    `on_error` passes through untouched: it is a bug or the consumer's own exception,
    never a reason to retry.

    Args:
        first: the first attempt (cold).
        decide: the policy, called once per failed attempt.
    """

    def subscribe(
        observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        current = SerialDisposable()
        scheduler_ = scheduler or CurrentThreadScheduler.singleton()

        def run(events: Observable[Event]) -> None:
            committed = False
            subscription = SingleAssignmentDisposable()
            current.disposable = subscription

            def on_next(event: Event) -> None:
                nonlocal committed
                if type(event) is not Failed:
                    if not committed:
                        committed = commits(event)
                    observer.on_next(event)
                    return
                try:
                    outcome = decide(event, committed)
                except Exception as error:  # the policy's bug, not the provider's failure
                    observer.on_error(error)
                    return
                if isinstance(outcome, Failed):
                    observer.on_next(outcome)
                    return
                # Close the failed attempt now; start the next one from the scheduler.
                current.disposable = scheduler_.schedule_relative(
                    outcome.delay, lambda _s, _st: run(outcome.events)
                )
                try:
                    observer.on_next(outcome.retry)
                except Exception as error:  # the consumer's: the failed attempt is gone
                    current.dispose()
                    observer.on_error(error)

            subscription.disposable = link(
                events, on_next, observer.on_error, observer.on_completed, scheduler
            )

        run(first)  # subscribed at once: the first request goes out without a loop hop
        return current

    return Operator(subscribe)
