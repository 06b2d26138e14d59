"""track_commitment: the first committing event, and the usage a failure brings."""

from __future__ import annotations

from collections.abc import Callable

from loguru import logger
from reactivex import Observable, abc

from rxllm.events import Event, UsageUpdate, commits
from rxllm.fragments import FailureUsage
from rxllm.operators._link import Link, Operator

__all__ = ["track_commitment"]


def track_commitment() -> Callable[[Observable[Event | FailureUsage]], Observable[Event]]:
    """Pass one attempt's events through, and the usage that comes with its failure
    (`FailureUsage`) as a `usage` event only if the attempt had committed before it.

    ::

        source:  -t-f-x(error)|      -u-f-x(rejected)|      -f-x(rejected)|
        track_commitment()
        result:  -t-u-x(error)|      -u---x(rejected)|      ---x(rejected)|

    (f: the failure's usage, u: usage.) Every event commits as `rxllm.events.commits`
    says, usage included: once a usage event has passed, a rejection that follows
    surfaces. The usage a failure carries is another thing: it is what the failed
    request cost, in the very chunk or event that rejects it (OpenRouter and vLLM put
    usage in the chunk that carries an error, Gemini on the finish that refuses the
    request, a failed Response on its `response.failed`). Reported before anything was
    committed, it would commit the attempt it describes and make a clean rejection
    unrecoverable; so it is dropped there, logged at debug, and the attempt that
    succeeds reports its own.
    """

    def _track_commitment(source: Observable[Event | FailureUsage]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            return _Track(observer).link_to(source, scheduler)

        return Operator(subscribe)

    return _track_commitment


class _Track(Link[Event | FailureUsage]):
    """One subscription: whether the attempt has committed."""

    __slots__ = ("_committed", "_observer")

    def __init__(self, observer: abc.ObserverBase[Event]) -> None:
        super().__init__()
        self._observer = observer
        self._committed = False

    def _next(self, item: Event | FailureUsage) -> None:
        if type(item) is FailureUsage:
            self._failure_usage(item)
            return
        if not self._committed and commits(item):
            self._committed = True
        self._observer.on_next(item)  # type: ignore[arg-type]

    def _failure_usage(self, item: FailureUsage) -> None:
        if self._committed:
            usage = UsageUpdate.make(provider=item.provider, attempt=item.attempt, usage=item.usage)
            self._observer.on_next(usage)
            return
        logger.bind(provider=item.provider, attempt=item.attempt).debug(
            "dropped the usage that came with a failure before anything was committed: {}",
            item.usage,
        )

    def _error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def _completed(self) -> None:
        self._observer.on_completed()
