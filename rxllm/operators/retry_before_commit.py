"""retry_before_commit: switch to another attempt while nothing has been committed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import NamedTuple

from reactivex import Observable, abc
from reactivex.scheduler import CurrentThreadScheduler

from rxllm.events import Cancelled, Event, Failed, Retry, commits
from rxllm.operators._args import check_callable, check_observable
from rxllm.operators._link import _DETACHED, Link, Operator
from rxllm.operators._timers import Timer, after, default_clock, timed_on
from rxllm.sources.job import TASK_CANCELLED, running_loop

__all__ = ["Decide", "Switch", "retry_before_commit"]


class Switch(NamedTuple):
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

    RxPY's `catch` shape: one slot holds the current attempt (as a `SerialDisposable`), so switching
    disposes the failed one (closing its HTTP response) and disposing the result
    disposes whichever attempt or scheduled wait is current. The first attempt is
    subscribed at once; the `retry` event is emitted, then the next attempt is
    scheduled on the subscription's scheduler, never subscribed inside the failing
    callback, so a chain of retries never grows the stack. Subscribed without a
    scheduler, it starts from the running event loop (outside one: RxPY's trampoline,
    or its TimeoutScheduler for a wait), never by sleeping the thread. Only `decide`
    is guarded;
    `on_error` passes through untouched: it is a bug or the consumer's own exception,
    never a reason to retry.

    Args:
        first: the first attempt (cold).
        decide: the policy, called once per failed attempt.

    Raises:
        TypeError: `first` is not an Observable, or `decide` not callable.
    """
    check_observable("first", first)
    check_callable("decide", decide)

    def subscribe(
        observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        retrying = _Retrying(observer, decide, scheduler)
        retrying.run(first)  # subscribed at once: the first request goes out without a loop hop
        return retrying

    return Operator(subscribe)


class _Retrying(abc.DisposableBase):
    """One subscription: the current attempt, or the wait before the next one."""

    __slots__ = ("_current", "_decide", "_disposed", "_observer", "_scheduler")

    def __init__(
        self,
        observer: abc.ObserverBase[Event],
        decide: Decide,
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self._observer = observer
        self._decide = decide
        self._scheduler = scheduler
        self._current: _Attempt | Timer | _Backoff | None = None
        self._disposed = False

    def _replace(self, current: _Attempt | Timer | _Backoff | None) -> None:
        """What `SerialDisposable` does: the new one in, the old one stopped."""
        old, self._current = self._current, current
        if old is not None:
            old.cancel()
        if self._disposed and current is not None:
            self._current = None
            current.cancel()

    def run(self, events: Observable[Event]) -> None:
        attempt = _Attempt(self)
        self._replace(attempt)
        attempt.link_to(events, self._scheduler)  # (it may fail, and be replaced, meanwhile)

    def failed(self, event: Failed, committed: bool) -> None:
        observer = self._observer
        try:
            outcome = self._decide(event, committed)
        except Exception as error:  # the policy's bug, not the provider's failure
            observer.on_error(error)
            return
        if isinstance(outcome, Failed):
            observer.on_next(outcome)
            return
        self._replace(None)  # close the failed attempt now
        try:
            observer.on_next(outcome.retry)
        except Exception as error:  # the consumer's: the failed attempt is gone
            self.dispose()
            observer.on_error(error)
            return
        if self._disposed:  # the consumer left on the `retry` event
            return
        clock = self._scheduler or _clock_without_scheduler(outcome.delay)
        if outcome.delay > 0 and timed_on(clock) is not None:  # the running loop times it
            self._replace(_Backoff(self, outcome))
            return
        wait = after(clock, outcome.delay, self.run, outcome.events)
        if self._current is None:  # not started already by a clock that ran it at once
            self._replace(wait)

    def dispose(self) -> None:
        self._disposed = True
        self._replace(None)


def _clock_without_scheduler(delay: float) -> abc.SchedulerBase:
    """Where the next attempt starts when subscribed without a scheduler: on the running
    event loop (a later callback, never a sleep); outside a loop, RxPY's trampoline for
    no wait (it queues the attempt behind the running one, or runs it now when none
    runs), and its TimeoutScheduler for a wait (the trampoline would sleep the thread)."""
    if delay <= 0 and running_loop() is None:
        return CurrentThreadScheduler.singleton()
    return default_clock()


class _Backoff:
    """The wait before the next attempt, on the running loop: a task rather than a
    timer, so that a loop shutting down mid-wait (`asyncio.run` returning) cancels it
    and whoever is subscribed hears `cancelled`, not nothing. Rare enough (a rejection
    that asks to wait) for a task to cost nothing that shows."""

    __slots__ = ("_stopped", "_task")

    def __init__(self, retrying: _Retrying, switch: Switch) -> None:
        self._stopped = False
        self._task = asyncio.get_running_loop().create_task(self._wait(retrying, switch))

    async def _wait(self, retrying: _Retrying, switch: Switch) -> None:
        try:
            await asyncio.sleep(switch.delay)
        except asyncio.CancelledError:
            if not self._stopped:  # not by the turn: by its loop, or whoever holds the task
                retry, observer = switch.retry, retrying._observer
                observer.on_next(
                    Cancelled.make(
                        provider=retry.next_provider,
                        attempt=retry.next_attempt,
                        reason=TASK_CANCELLED,
                    )
                )
                observer.on_completed()
            raise
        retrying.run(switch.events)

    def cancel(self) -> None:
        self._stopped = True
        self._task.cancel()


class _Attempt(Link[Event]):
    """One attempt's subscription, and whether it has committed."""

    __slots__ = ("_retrying", "committed")

    def __init__(self, retrying: _Retrying) -> None:
        super().__init__()
        self._retrying: _Retrying | _Gone = retrying
        self.committed = False

    def _next(self, event: Event) -> None:
        if type(event) is not Failed:
            if not self.committed:
                self.committed = commits(event)
            self._retrying._observer.on_next(event)
            return
        assert isinstance(event, Failed)
        self._retrying.failed(event, self.committed)

    def _error(self, error: Exception) -> None:
        self._retrying._observer.on_error(error)

    def _completed(self) -> None:
        self._retrying._observer.on_completed()

    def cancel(self) -> None:
        self._retrying = _GONE  # what a source still emitting says now goes nowhere
        self.unlink()


class _Gone:
    """What a replaced attempt reports to: nothing, as after a dispose. A source that
    emits synchronously (a replay) is still inside its subscribe when its failure
    replaces it, so it cannot be unsubscribed yet, and goes on to complete."""

    __slots__ = ()
    _observer = _DETACHED

    def failed(self, event: Failed, committed: bool) -> None:
        pass


_GONE = _Gone()
