"""The async-iterator bridge: `async for event in provider.astream(request)`."""

from __future__ import annotations

import asyncio
from types import TracebackType

from reactivex import Observable, abc

from rxllm.events import Event
from rxllm.operators._link import Link
from rxllm.operators._timers import loop_scheduler
from rxllm.sources.job import Driver, running_loop

__all__ = ["EventStream"]


class _Sink(Link[Event], Driver):
    """What the running pipeline holds on to: the queue its events go to, and, for a
    stream that drives its own source, the scheduler the source's coroutine is handed
    to; its own link to the pipeline (`Link`), and so the stream's subscription. Kept
    apart from `EventStream` so that the pipeline never keeps the iterator alive:
    dropping the iterator must hang up."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        Driver.__init__(self, loop)
        Link.__init__(self)
        # A list read from `head` on, emptied once read: no storage kept between
        # events (a deque keeps a 64-slot block per stream).
        self.queue: list[Event] = []
        self.head = 0
        self.waiter: asyncio.Future[None] | None = None
        self.completed = False
        self.error: Exception | None = None

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def _next(self, event: Event) -> None:
        self.queue.append(event)
        waiter = self.waiter  # (`wake`, inline: this runs per event)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def pop(self) -> Event:
        queue = self.queue
        if len(queue) == 1:  # the one event a read gave, mostly (`head` is 0 then)
            return queue.pop()
        head = self.head
        event = queue[head]
        head += 1
        if head == len(queue):
            queue.clear()
            head = 0
        self.head = head
        return event

    def _error(self, error: Exception) -> None:
        self.error = error
        self.close()

    def _completed(self) -> None:
        self.completed = True
        self.close()

    def close(self) -> None:
        super().close()  # what the source still does (a drain, an unwinding) needs no consumer
        # A consumer waiting for an event sees why none will come: the stream ended, or
        # it was closed (`aclose()` from another task while this one waits out a backoff).
        self.wake()


class EventStream:
    """Iterates an Observable[Event] from async code.

    Subscribes on the first `__anext__`, inside the running loop. Events are produced
    on the same loop, so they are queued without a task hop. With `drive`, the
    stream's HTTP source runs in the consumer's own task, stepped whenever the queue
    is empty (`rxllm.sources.job`): one task per stream. That is for rxllm's own
    pipelines (`astream()`), in which whatever emits while the source waits (a
    deadline, a cancel signal) also disposes the source, which wakes the consumer;
    an Observable of any other making runs its sources in tasks of their own.

    A driven source reads when the consumer asks, as an HTTP client's stream does: a
    consumer that pauses leaves the rest in the socket's buffers, and its pause is
    never taken for the provider's silence (`read_timeout`, `idle_timeout` and
    `first_event_timeout` fire only while it waits, for a period in which nothing
    came), though `total_timeout` counts the whole turn.

    Hanging up (disposing the subscription, which closes the HTTP response) happens
    when the `async with` block is left, however (`break`, `return`, an exception), on
    `aclose()`, when the stream ends, or when the iterator is dropped. Python does not
    close an iterator that `async for` leaves: after a bare `async for ... break`,
    the turn stays open for as long as the iterator object lives (a variable holding
    it keeps it alive), so `async with` is the way that does not depend on that.
    `aclose()` from another task (a stop button) ends the iterating task's loop, as the
    end of the stream does; a closed or ended stream ends at once when iterated again.
    A stream lives on the loop it started on: iterated on another, it is a RuntimeError.
    """

    __slots__ = ("__weakref__", "_closed", "_drive", "_events", "_sink", "_subscription")

    def __init__(self, events: Observable[Event], *, drive: bool = False) -> None:
        self._events: Observable[Event] | None = events
        self._drive = drive
        self._sink: _Sink | None = None
        self._subscription: abc.DisposableBase | None = None
        self._closed = False

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        sink = self._sink
        if sink is None:
            sink = self._start()
        while not sink.queue:  # emptied when read to its end
            if sink.error is not None:
                error, sink.error = sink.error, None
                await self.aclose()
                raise error
            if sink.completed or self._closed:
                raise StopAsyncIteration
            if sink._loop is not asyncio.get_running_loop():
                await self.aclose()  # on its own loop, if that one still runs
                raise _another_loop()
            try:
                job = sink.job
                if job is not None and job.driven:
                    if job.parked:  # another task is stepping it
                        raise _second_consumer()
                    await job.advance()  # the source's next step, in this task
                    continue
                if sink.waiter is not None:
                    raise _second_consumer()
                sink.waiter = sink._loop.create_future()
                try:
                    await sink.waiter
                finally:
                    sink.waiter = None
            except asyncio.CancelledError:
                await self.aclose()
                raise
        return sink.pop()

    def _start(self) -> _Sink:
        """Subscribe. In a method of its own, so that the Observable is let go of here:
        the first `__anext__` waits for the first event, and what runs keeps what it
        needs (the states of the pipeline's operators), not the operators themselves."""
        loop = asyncio.get_running_loop()
        sink = self._sink = _Sink(loop)
        events, self._events = self._events, None
        if not self._closed and events is not None:
            scheduler = sink if self._drive else loop_scheduler(loop)
            self._subscription = sink.link_to(events, scheduler)
        return sink

    async def aclose(self) -> None:
        """Stop the stream: unsubscribe, closing the HTTP response. Idempotent."""
        self._hang_up()

    def _hang_up(self) -> None:
        self._closed = True
        sink = self._sink
        if sink is not None:
            sink.queue.clear()
            sink.head = 0
        if self._subscription is not None:
            subscription, self._subscription = self._subscription, None
            subscription.dispose()
        if sink is not None:  # what the source still has to do, it does in its own task
            loop = sink._loop
            if running_loop() is loop:
                sink.close()
            elif not loop.is_closed():  # dropped in another thread, or with the loop stopped
                loop.call_soon_threadsafe(sink.close)

    def __del__(self) -> None:
        # `break` out of `async for` drops the iterator without calling `aclose()`; the
        # last reference going away is the moment to hang up.
        self._hang_up()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _second_consumer() -> RuntimeError:
    """As an async generator's "already running": one stream has one consumer."""
    return RuntimeError(
        "this EventStream is already waiting for its next event in another task: "
        "one stream has one consumer (astream() again for another turn)"
    )


def _another_loop() -> RuntimeError:
    """Its source and its waits belong to the loop it started on (asyncio would say
    "attached to a different loop", from inside the source, stepped in this thread)."""
    return RuntimeError(
        "this EventStream was started on another event loop (an earlier asyncio.run()?): "
        "a stream lives on one loop; astream() the request again on this one"
    )
