"""How rxllm's own operators subscribe to each other: RxPY's contract, a lighter path.

RxPY's `Observable.subscribe` wraps every observer in an `AutoDetachObserver` (a
gate checked on each item, a `SingleAssignmentDisposable` with its lock) and wraps
its disposable once more. Over a turn's chain of operators that is one extra Python
call per event per operator and a dozen objects per operator per stream: at a
thousand concurrent streams, most of rxllm's memory and a third of its CPU (the
garbage collector walking them).

An `Operator` is an Observable whose subscribe function never keeps
`observer.on_next` beyond one call (it reads the attribute each time). `link`
subscribes to one with a `_Link`: its `on_next` is the downstream callable itself,
so an item costs no gate, and stopping (a terminal, or dispose) swaps it for a no-op,
which gates exactly as `AutoDetachObserver` does. Any other Observable (a user's,
RxPY's) is subscribed the usual way.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.internal import default_error

__all__ = ["Operator", "forward", "link"]

_T = TypeVar("_T")

Subscribe = Callable[[abc.ObserverBase[_T], abc.SchedulerBase | None], abc.DisposableBase]


class Operator(Observable[_T]):
    """An Observable made by rxllm, which `link` may subscribe to directly: its
    subscribe function looks `observer.on_next` up at each item, never keeps it."""

    def __init__(self, subscribe: Subscribe[_T]) -> None:
        # Not Observable.__init__: its lock is for a few of RxPY's operators (`delay`,
        # `take_while`...) and is made here only when one of them asks for it.
        self._subscribe = subscribe

    @functools.cached_property
    def lock(self) -> threading.RLock:  # type: ignore[override]
        return threading.RLock()


def _ignore(_: Any) -> None:
    pass


def _nothing() -> None:
    pass


class _Link(abc.DisposableBase, Generic[_T]):
    """The observer `link` hands an `Operator`, and the subscription it returns."""

    __slots__ = ("_on_completed", "_on_error", "_upstream", "on_next")

    def __init__(
        self,
        on_next: Callable[[_T], None],
        on_error: Callable[[Exception], None],
        on_completed: Callable[[], None],
    ) -> None:
        self.on_next = on_next  # the downstream's own: no gate per item
        self._on_error = on_error
        self._on_completed = on_completed
        self._upstream: abc.DisposableBase | None = None

    def on_error(self, error: Exception) -> None:
        if self.on_next is _ignore:
            return
        self.on_next = _ignore
        try:
            self._on_error(error)
        finally:
            self.dispose()

    def on_completed(self) -> None:
        if self.on_next is _ignore:
            return
        self.on_next = _ignore
        try:
            self._on_completed()
        finally:
            self.dispose()

    def dispose(self) -> None:
        self.on_next = _ignore
        self._on_error = default_error
        self._on_completed = _nothing  # let go of the downstream's closures
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.dispose()


def link(
    source: Observable[_T],
    on_next: Callable[[_T], None],
    on_error: Callable[[Exception], None] | None = None,
    on_completed: Callable[[], None] | None = None,
    scheduler: abc.SchedulerBase | None = None,
) -> abc.DisposableBase:
    """`source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)`, with
    the same guarantees (nothing after a terminal or dispose; the upstream disposed
    after a terminal; an exception raised while subscribing goes to `on_error`), and
    without RxPY's wrappers when `source` is an `Operator`."""
    if type(source) is not Operator:
        return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)
    observer = _Link(on_next, on_error or default_error, on_completed or _nothing)
    try:
        upstream = source._subscribe_core(observer, scheduler)  # type: ignore[arg-type]
    except Exception as error:
        if observer.on_next is _ignore:
            raise
        observer.on_error(error)
        return observer
    if not isinstance(upstream, abc.DisposableBase):  # a dispose function, or None
        upstream = Disposable(upstream)
    if observer.on_next is _ignore:  # it ended, or was disposed, while subscribing
        upstream.dispose()
    else:
        observer._upstream = upstream
    return observer


def forward(
    source: Observable[_T], observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None
) -> abc.DisposableBase:
    """Subscribe `observer` itself to `source` (as `defer` does with the Observable it
    builds), directly when `source` is an `Operator`."""
    if type(source) is Operator:
        return source._subscribe_core(observer, scheduler)
    return source.subscribe(observer, scheduler=scheduler)
