"""The async-iterator bridge: `async for event in provider.astream(request)`."""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType

from reactivex import Observable, abc

from rxllm.events import Event
from rxllm.operators._link import attach
from rxllm.operators._timers import loop_scheduler

__all__ = ["EventStream"]


class _Sink:
    """What the running pipeline holds on to. Kept apart from `EventStream` so that
    the pipeline never keeps the iterator alive: dropping the iterator must hang up."""

    __slots__ = ("completed", "error", "queue", "waiter")

    def __init__(self) -> None:
        self.queue: deque[Event] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.completed = False
        self.error: Exception | None = None

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def on_next(self, event: Event) -> None:
        self.queue.append(event)
        self.wake()

    def on_error(self, error: Exception) -> None:
        self.error = error
        self.wake()

    def on_completed(self) -> None:
        self.completed = True
        self.wake()


class EventStream:
    """Iterates an Observable[Event] from async code.

    Subscribes on the first `__anext__`, inside the running loop. Events are produced
    on the same loop, so they are queued without a task hop.

    Hanging up (disposing the subscription, which closes the HTTP response) happens
    when the `async with` block is left, however (`break`, `return`, an exception), on
    `aclose()`, when the stream ends, or when the iterator is dropped. Python does not
    close an iterator that `async for` leaves: after a bare `async for ... break`,
    the turn stays open for as long as the iterator object lives (a variable holding
    it keeps it alive), so `async with` is the way that does not depend on that.
    """

    def __init__(self, events: Observable[Event]) -> None:
        self._events = events
        self._sink = _Sink()
        self._subscription: abc.DisposableBase | None = None
        self._closed = False

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        sink = self._sink
        if self._subscription is None and not self._closed:
            scheduler = loop_scheduler(asyncio.get_running_loop())
            self._subscription = attach(self._events, sink, scheduler)
        while not sink.queue:
            if sink.error is not None:
                error, sink.error = sink.error, None
                await self.aclose()
                raise error
            if sink.completed or self._closed:
                raise StopAsyncIteration
            sink.waiter = asyncio.get_running_loop().create_future()
            try:
                await sink.waiter
            except asyncio.CancelledError:
                await self.aclose()
                raise
            finally:
                sink.waiter = None
        return sink.queue.popleft()

    async def aclose(self) -> None:
        """Stop the stream: unsubscribe, closing the HTTP response. Idempotent."""
        self._hang_up()

    def _hang_up(self) -> None:
        self._closed = True
        self._sink.queue.clear()
        if self._subscription is not None:
            subscription, self._subscription = self._subscription, None
            subscription.dispose()

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
