"""A source's coroutine, stepped by the task that consumes its events, or by its own.

`astream()` reads events in the caller's task. Were the HTTP source a task of its own,
each event would cross tasks: queued by one, the other woken through the loop, and the
event, its wake-up and the source's next read all alive in between. At a thousand
streams those objects outlive the garbage collector's young generations, and every
full collection walks them (benchmarks/README.md, "one task per stream"). So the
source hands its coroutine to a `Job`, and whoever consumes the stream drives it:

- a `Driver` (the scheduler `astream` subscribes with) is stepped by the consumer,
  which calls `advance()` when it has no event to return: one task per stream, as a
  plain aiohttp loop has;
- anywhere else, and whenever the consumer stops driving it (the stream ended, was
  closed, or moved on to another attempt), the job runs in a task of its own (`spawn`).

`advance()` steps the coroutine exactly as its own task would: it waits on the future
the coroutine awaits, in the caller's task, and hands the coroutine what that wait
gave (a result, an exception, a cancellation). `cancel()` is `Task.cancel()`. A
cancelled job is never waited on by a consumer: its unwinding runs in its own task.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any

from reactivex.scheduler.eventloop import AsyncIOScheduler

__all__ = ["TASK_CANCELLED", "Driver", "Job", "consumer_waits", "running_loop", "start"]

TASK_CANCELLED = "the task reading the stream was cancelled (its event loop shutting down?)"
"""`cancelled`'s reason when a turn's task was cancelled by someone else than the turn
(the consumer's task, or the loop shutting down as `asyncio.run` returns): whoever is
still subscribed hears how the turn ended."""


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# Who steps a job.
_DRIVEN = 0  # a consumer, through `advance()`
_HANDING_OVER = 1  # spawned while the consumer was stepping or waiting on it
_OWN_TASK = 2


class Job:
    """One coroutine and its state between steps. `parked` tells a wait for the
    network from a consumer that has not asked for more."""

    __slots__ = (
        "_coro",
        "_loop",
        "_must_cancel",
        "_owner",
        "_started",
        "_waiting",
        "cancelled",
        "finished",
        "parked",
        "running",
    )

    def __init__(self, coro: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop) -> None:
        self._coro = coro
        self._loop = loop
        self._waiting: asyncio.Future[Any] | None = None  # what the coroutine awaits
        self._started = False
        self._must_cancel = False
        self._owner = _DRIVEN
        self.cancelled = False
        self.finished = False
        self.running = False  # inside `coro.send`
        self.parked = False  # a task waits on `_waiting` for it

    def cancel(self) -> None:
        """`Task.cancel()`: the coroutine gets `CancelledError` at its wait. Called from
        inside its own step (the source disposed by what it emitted), the job is only
        marked: the source sees its disposal and ends, as a task does not cancel itself."""
        if self.finished or self.cancelled:
            return
        self.cancelled = True
        if self.running:
            return
        waiting = self._waiting
        if waiting is None or not waiting.cancel():  # a cancelled future wakes its waiter
            self._must_cancel = True
        if not self.parked:
            self.spawn()  # nobody waits on it: its own task unwinds it

    def spawn(self) -> None:
        """From now on, run in a task of its own (at once, or when the consumer's
        current step or wait on it ends)."""
        if self.finished or self._owner != _DRIVEN:
            return
        if self.running or self.parked:
            self._owner = _HANDING_OVER
            return
        self._owner = _OWN_TASK
        self._loop.create_task(self._run_alone())

    @property
    def driven(self) -> bool:
        """Whether a consumer is to step it."""
        return self._owner == _DRIVEN and not self.finished

    async def _run_alone(self) -> None:
        while not self.finished:
            await self.advance()

    @types.coroutine
    def advance(self) -> Generator[Any, None, None]:
        """Step the coroutine once, in the calling task: first wait for what it awaits,
        unless that is done already. A cancellation of the calling task reaches the
        coroutine, then the caller; one that only cancelled the awaited future (this
        job's `cancel()`) reaches the coroutine alone."""
        waiting = self._waiting
        if self._started and not self._must_cancel and (waiting is None or not waiting.done()):
            self.parked = True
            try:
                yield waiting  # the task waits on it (None: one loop iteration, `sleep(0)`)
            except GeneratorExit:
                raise
            except BaseException as exc:  # what the wait raised, as a task hands it over
                self.parked = False
                ours = self.cancelled  # `cancel()` cancelled the future
                self._step(exc)
                self._hand_over()
                if isinstance(exc, asyncio.CancelledError) and not ours and _cancelling():
                    raise  # the caller was cancelled (a timeout in the source undoes its own)
                return
            finally:
                self.parked = False
            if self._owner == _HANDING_OVER:
                self._hand_over()  # its own task takes the step from here
                return
        self._step(None)
        if self._owner != _DRIVEN or self.cancelled:  # (`_hand_over`'s test: a step per read)
            self._hand_over()

    def _step(self, exc: BaseException | None) -> None:
        if self._must_cancel:
            self._must_cancel = False
            if not isinstance(exc, asyncio.CancelledError):
                exc = asyncio.CancelledError()
        self._started = True
        self.running = True
        try:
            if exc is None:
                self._waiting = self._coro.send(None)
            else:
                self._waiting = self._coro.throw(exc)
        except (StopIteration, asyncio.CancelledError):
            self.finished = True
            self._waiting = None
        except BaseException:
            self.finished = True
            self._waiting = None
            raise
        finally:
            self.running = False

    def _hand_over(self) -> None:
        """After a consumer's step: a job spawned or cancelled meanwhile goes on alone."""
        if self.finished or self._owner == _OWN_TASK:
            return
        if self._owner == _HANDING_OVER or self.cancelled:
            self._owner = _DRIVEN
            self.spawn()


def _cancelling() -> int:
    task = asyncio.current_task()
    return 0 if task is None else task.cancelling()


class Driver(AsyncIOScheduler):
    """The scheduler a stream's consumer subscribes with, to step its source itself.

    A source started under it (`start`) becomes its `job`, and `wake()` tells the
    consumer there is one. Only one job is driven: a new one replaces a job cancelled
    before it (a retry, a fallback: the old attempt unwinds in its own task), and runs
    in its own task beside one still live (two sources merged by user code, which
    the consumer could not wait on at once). After `close()`, every job runs alone.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.job: Job | None = None
        self._closed = False

    def wake(self) -> None:
        """Called when a job is there to drive: the consumer may be waiting for one."""

    @property
    def consumer_waits(self) -> bool:
        """Whether the consumer is waiting on its source now (or the source runs alone)."""
        job = self.job
        return job is None or not job.driven or job.parked

    def start(self, job: Job) -> None:
        current = self.job
        if self._closed or (current is not None and current.driven and not current.cancelled):
            job.spawn()
            return
        if current is not None:
            current.spawn()
        self.job = job
        self.wake()

    def close(self) -> None:
        """The consumer stops driving: the job (a drain after the terminal event, an
        unwinding after a hang-up) goes on in its own task."""
        self._closed = True
        job, self.job = self.job, None
        if job is not None:
            job.spawn()


def start(job: Job, scheduler: object) -> None:
    """Run `job` where `scheduler` says: driven by a consumer, or in its own task."""
    if isinstance(scheduler, Driver):
        scheduler.start(job)
    else:
        job.spawn()


def consumer_waits(scheduler: object) -> bool:
    """Whether a silence now is the provider's: always, unless the stream's consumer
    steps its source (a `Driver`) and has not asked for more. A deadline on silence
    (`read_timeout`, `idle_timeout`, `first_event_timeout`) fires only then: what the
    provider sent while the consumer was away is read when it asks again, so a
    period with nothing read and the consumer waiting at its end is the provider's
    silence, never the consumer's pause. A total deadline counts the whole turn,
    however the consumer paces it."""
    return not isinstance(scheduler, Driver) or scheduler.consumer_waits
