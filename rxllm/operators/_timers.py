"""Timers for rxllm's operators: the event loop's own when the clock is asyncio's.

RxPY's `AsyncIOScheduler.schedule_relative` wraps each `call_later` in three
disposables (each with a lock), two closures and a composite: a dozen objects per
timer, and a deadline keeps one armed per stream in flight. On the loop's thread
`loop.call_later` is all a timer needs.

So it is for RxPY's other wall clocks (its thread schedulers: `NewThreadScheduler`,
`ThreadPoolScheduler`, `EventLoopScheduler`, `TimeoutScheduler`) when a timer is armed
on an event loop's thread: what the timer does runs on that thread anyway (a turn's
source runs there), so their threads would only time the wait, and they time it
badly. They wait out a cancelled timer on the thread that timed it: a stream's
deadlines (600 s by default, cancelled when the attempt ends) kept a pool worker each,
and `ThreadPoolScheduler(1)` never ran the retry's wait queued behind them. On the
loop, cancelling frees the timer at once.

Any other scheduler (a test's virtual time, a class that times its own way), or any
scheduler in a thread without a running loop, times the wait as RxPY's operators use
it, with one difference: a timer armed on an event loop's thread calls back on that
thread, whichever thread the scheduler fires on. What a timer emits (a deadline's
error) never overlaps what the source emits, and what it subscribes (a retry's next
attempt) finds the loop the turn's first attempt found.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, Protocol

from reactivex import abc
from reactivex.scheduler import (
    EventLoopScheduler,
    NewThreadScheduler,
    ThreadPoolScheduler,
    TimeoutScheduler,
)
from reactivex.scheduler.eventloop import AsyncIOScheduler, AsyncIOThreadSafeScheduler

from rxllm.sources.job import running_loop

__all__ = [
    "Timer",
    "after",
    "call_on",
    "default_clock",
    "loop_scheduler",
    "on_its_loop",
    "timed_on",
]


class Timer(Protocol):
    """A timer that may still be stopped: `asyncio.TimerHandle` is one."""

    def cancel(self) -> None: ...


class _Scheduled:
    """A timer on any RxPY scheduler, calling back on the thread of the loop it was
    armed on (if any)."""

    __slots__ = ("_args", "_callback", "_disposable", "_loop", "_stopped")

    def __init__(
        self,
        clock: abc.SchedulerBase,
        seconds: float,
        callback: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> None:
        self._callback = callback
        self._args = args
        self._loop = running_loop()
        self._stopped = False
        self._disposable = clock.schedule_relative(seconds, self._fire)

    def _fire(self, _: abc.SchedulerBase, __: Any = None) -> None:
        call_on(self._loop, self._call)

    def _call(self) -> None:
        if not self._stopped:  # stopped after it fired, before its loop ran it
            self._callback(*self._args)

    def cancel(self) -> None:
        self._stopped = True
        self._disposable.dispose()


# RxPY's wall clocks, by the method that times a wait: a subclass that keeps it
# (ThreadPoolScheduler, rxllm's Driver) is one of them, a subclass that times its own
# way (a test's gated pool) is not.
_WALL_CLOCKS = frozenset(
    kind.schedule_relative
    for kind in (
        NewThreadScheduler,
        ThreadPoolScheduler,
        EventLoopScheduler,
        TimeoutScheduler,
        AsyncIOScheduler,
        AsyncIOThreadSafeScheduler,
    )
)


def timed_on(clock: abc.SchedulerBase) -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, when it times a wait on `clock` armed
    now: `clock` is that loop's asyncio scheduler, or one of RxPY's wall clocks (its
    thread schedulers above all, whose threads would only time the wait). None without
    a running loop, or for any other scheduler (virtual time, one that times its own
    way), whose waits are its own."""
    loop = running_loop()
    if loop is None:
        return None
    if isinstance(clock, AsyncIOScheduler) and clock._loop is loop:
        return loop
    return loop if type(clock).schedule_relative in _WALL_CLOCKS else None


def after(
    clock: abc.SchedulerBase, seconds: float, callback: Callable[..., Any], *args: Any
) -> Timer:
    """Call `callback(*args)` in `seconds` on `clock`; `.cancel()` stops it. Armed on an
    event loop's thread, the callback runs on that thread, whatever thread `clock`
    fires on; the loop times the wait itself when it can (`timed_on`)."""
    loop = timed_on(clock)
    if loop is not None:
        return loop.call_later(seconds, callback, *args)
    if isinstance(clock, AsyncIOScheduler) and not isinstance(clock, AsyncIOThreadSafeScheduler):
        # Armed in another thread (a stream subscribed there with the loop's scheduler):
        # `call_later` is not thread-safe (asyncio's debug mode refuses it outright).
        clock = AsyncIOThreadSafeScheduler(clock._loop)
    return _Scheduled(clock, seconds, callback, args)


def call_on(
    loop: asyncio.AbstractEventLoop | None, callback: Callable[..., Any], *args: Any
) -> None:
    """`callback(*args)` on `loop`'s thread: now when this is that thread (or there is
    no loop, or it has closed), else queued there (`call_soon_threadsafe`). Rx calls an
    observer from one thread at a time; a stream's source calls it from its loop's."""
    if loop is not None and running_loop() is not loop:
        try:
            loop.call_soon_threadsafe(callback, *args)
            return
        except RuntimeError:  # closed meanwhile: nothing runs there any more
            pass
    callback(*args)


def on_its_loop(
    callback: Callable[..., None], scheduler: abc.SchedulerBase | None
) -> Callable[..., None]:
    """`callback`, run on the thread of the event loop that a subscription made now
    with `scheduler` runs on (an asyncio scheduler's, else the running one), from
    whichever thread it is called (a signal fired in another thread); itself when
    there is no such loop."""
    loop = scheduler._loop if isinstance(scheduler, AsyncIOScheduler) else running_loop()
    if loop is None:
        return callback
    return functools.partial(call_on, loop, callback)


# Not a WeakKeyDictionary: each scheduler holds its loop, so no key would ever be freed.
_SCHEDULERS: dict[asyncio.AbstractEventLoop, AsyncIOScheduler] = {}


def loop_scheduler(loop: asyncio.AbstractEventLoop) -> AsyncIOScheduler:
    """The loop's one `AsyncIOScheduler` (it holds nothing but the loop): subscribing
    a stream need not build another.

    A scheduler keeps its loop alive, so a new loop drops the closed ones' (an app that
    calls `asyncio.run` per turn would otherwise keep every loop it ever ran)."""
    scheduler = _SCHEDULERS.get(loop)
    if scheduler is None:
        # Other threads' loops add theirs meanwhile: walk a copy (`list()` of a dict is
        # one step under the GIL), drop what is still there.
        for stale in [other for other in list(_SCHEDULERS) if other.is_closed()]:
            _SCHEDULERS.pop(stale, None)
        scheduler = _SCHEDULERS[loop] = AsyncIOScheduler(loop)
    return scheduler


def default_clock() -> abc.SchedulerBase:
    """Where a wait runs when subscribed without a scheduler: on the running loop, from
    async code (RxPY's TimeoutScheduler would start a thread per timer, one per stream,
    and its CurrentThreadScheduler would block the loop for the wait); on RxPY's
    TimeoutScheduler outside a loop, as RxPY's own time operators do."""
    loop = running_loop()
    return TimeoutScheduler.singleton() if loop is None else loop_scheduler(loop)
