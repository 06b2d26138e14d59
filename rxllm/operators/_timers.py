"""Timers for rxllm's operators: the event loop's own when the clock is asyncio's.

RxPY's `AsyncIOScheduler.schedule_relative` wraps each `call_later` in three
disposables (each with a lock), two closures and a composite: a dozen objects per
timer, and a deadline keeps one armed per stream in flight. On the loop's thread
`loop.call_later` is all a timer needs; any other scheduler (a test's virtual time,
a thread's) is used as RxPY's operators use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from reactivex import abc
from reactivex.scheduler import TimeoutScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler, AsyncIOThreadSafeScheduler

from rxllm.sources.job import running_loop

__all__ = ["Timer", "after", "default_clock", "loop_scheduler"]


class Timer(Protocol):
    """A timer that may still be stopped: `asyncio.TimerHandle` is one."""

    def cancel(self) -> None: ...


class _Scheduled:
    """A timer on any RxPY scheduler."""

    __slots__ = ("_disposable",)

    def __init__(self, disposable: abc.DisposableBase) -> None:
        self._disposable = disposable

    def cancel(self) -> None:
        self._disposable.dispose()


def after(
    clock: abc.SchedulerBase, seconds: float, callback: Callable[..., Any], *args: Any
) -> Timer:
    """Call `callback(*args)` in `seconds` on `clock`; `.cancel()` stops it."""
    # Not the thread-safe subclass: that one is for other threads.
    if isinstance(clock, AsyncIOScheduler) and not isinstance(clock, AsyncIOThreadSafeScheduler):
        return clock._loop.call_later(seconds, callback, *args)

    def action(_: abc.SchedulerBase, __: Any = None) -> None:
        callback(*args)

    return _Scheduled(clock.schedule_relative(seconds, action))


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
