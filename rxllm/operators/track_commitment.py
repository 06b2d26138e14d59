"""track_commitment: hold a usage-only prelude, so that it alone commits nothing."""

from __future__ import annotations

from collections.abc import Callable

from loguru import logger
from reactivex import Observable, abc

from rxllm.events import Event, Failed, UsageUpdate
from rxllm.operators._link import Operator, attach

__all__ = ["track_commitment"]


def track_commitment() -> Callable[[Observable[Event]], Observable[Event]]:
    """Pass one attempt's events through, holding back usage that arrives before any
    content, so that every event this operator lets through before the terminal
    commits the attempt (`rxllm.events.commits`), and a rejection that follows a
    usage-only prelude can still be retried.

    ::

        source:  -u-t-t-done|        -u-x(rejected)|
        track_commitment()
        result:  ---ut-t-done|       ---x(rejected)|

    Held usage is released just before the first content or the `done` that follows
    it. Before an error it is dropped and logged at debug: some endpoints count the
    prompt of a request they then reject (vLLM and OpenRouter can send usage in the
    chunk that carries the error). It describes a request that produced nothing, and
    reporting it would commit an attempt the user never saw, making an otherwise
    clean rejection unrecoverable. The usage of the attempt that succeeds is the one
    the turn reports. Text held by a text guard arrives here only when released, so
    it commits then.
    """

    def _track_commitment(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            track = _Track(observer)
            return attach(source, track, scheduler)

        return Operator(subscribe)

    return _track_commitment


class _Track:
    """One subscription: the usage held back, and whether content has come."""

    __slots__ = ("_content_seen", "_held", "_observer")

    def __init__(self, observer: abc.ObserverBase[Event]) -> None:
        self._observer = observer
        self._held: UsageUpdate | None = None
        self._content_seen = False

    def on_next(self, event: Event) -> None:
        if self._content_seen:
            self._observer.on_next(event)
            return
        if type(event) is UsageUpdate:
            self._held = event  # the latest usage wins
            return
        held = self._held
        if type(event) is Failed:
            if held is not None:
                logger.bind(provider=event.provider, attempt=event.attempt).debug(
                    "dropped the usage that came before a rejection: {}", held.usage
                )
            self._observer.on_next(event)
            return
        self._content_seen = True
        if held is not None:
            self._held = None
            self._observer.on_next(held)
        self._observer.on_next(event)

    def on_error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def on_completed(self) -> None:
        held = self._held
        if held is not None:  # cut off before any content: nothing was said
            logger.bind(provider=held.provider, attempt=held.attempt).debug(
                "dropped the usage of an attempt that ended without content"
            )
        self._observer.on_completed()
