"""How rxllm's own operators subscribe to each other: RxPY's contract, a lighter path.

RxPY's `Observable.subscribe` wraps every observer in an `AutoDetachObserver` (a
gate checked on each item, a `SingleAssignmentDisposable` with its lock) and wraps
its disposable once more. Over a turn's chain of operators that is one extra Python
call per event per operator and a dozen objects per operator per stream: at a
thousand concurrent streams, most of rxllm's memory and a third of its CPU (the
garbage collector walking them).

An `Operator` is an Observable whose subscribe function never keeps
`observer.on_next` beyond one call (it reads the attribute each time). `attach`
(or `link`, given callables) subscribes to one with a `_Link`: its `on_next` is the
downstream's own, so an item costs no gate, and stopping (a terminal, or dispose)
swaps it for a no-op, which gates exactly as `AutoDetachObserver` does. An operator's
state that subclasses `Link` is its own link (`state.link_to(source, scheduler)`, which
returns it: no `attach`, no check of what it is): one object less per operator per stream,
and one place for what each state did apart (keep its upstream, stop once, dispose the
upstream of a state stopped while it was subscribing). Any other Observable (a user's,
RxPY's) is subscribed the usual way.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Generic, NoReturn, Protocol, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.internal import default_error

__all__ = ["Link", "Observer", "Operator", "attach", "forward", "link"]

_T = TypeVar("_T")
_T_contra = TypeVar("_T_contra", contravariant=True)

Subscribe = Callable[[abc.ObserverBase[_T], abc.SchedulerBase | None], abc.DisposableBase]


class Operator(Observable[_T]):
    """An Observable made by rxllm, which `link` may subscribe to directly: its
    subscribe function looks `observer.on_next` up at each item, never keeps it."""

    _subscribe: Subscribe[_T]  # called directly (`Link.link_to`, `forward`)

    def __init__(self, subscribe: Subscribe[_T]) -> None:
        # Not Observable.__init__: its lock is for a few of RxPY's operators (`delay`,
        # `take_while`...) and is made here only when one of them asks for it.
        self._subscribe = subscribe

    @functools.cached_property
    def lock(self) -> threading.RLock:  # type: ignore[override]
        return threading.RLock()

    def __iter__(self) -> NoReturn:
        # RxPY's `__getitem__` (slicing) would make `for event in observable` call it
        # with 0, 1, 2... for ever: a loop that never ends instead of an error.
        raise TypeError(
            "an Observable is not iterable: subscribe to it (.subscribe(on_next, ...)), "
            "or `async for event in provider.astream(request)`"
        )


def _ignore(_: Any) -> None:
    pass


class Observer(Protocol[_T_contra]):
    """What `attach` links to: any object with the three methods (an rxllm operator's
    per-subscription state is one)."""

    def on_next(self, value: _T_contra, /) -> None: ...
    def on_error(self, error: Exception, /) -> None: ...
    def on_completed(self) -> None: ...


class _Detached:
    """Where a stopped `_Link`'s terminals go: an error is raised (RxPY's default),
    completion is dropped."""

    __slots__ = ()

    def on_next(self, _: Any) -> None:
        pass

    def on_error(self, error: Exception) -> None:
        default_error(error)

    def on_completed(self) -> None:
        pass


_DETACHED = _Detached()


class _Callbacks(Generic[_T]):
    """Three callables as one observer."""

    __slots__ = ("on_completed", "on_error", "on_next")

    def __init__(
        self,
        on_next: Callable[[_T], None],
        on_error: Callable[[Exception], None],
        on_completed: Callable[[], None],
    ) -> None:
        self.on_next = on_next
        self.on_error = on_error
        self.on_completed = on_completed


class Link(abc.DisposableBase, Generic[_T]):
    """An operator's state for one subscription that is its own `_Link`: what `attach`
    would wrap it in, one object less per operator per stream.

    A subclass reads items in `_next`, its source's terminals in `_error` and
    `_completed`. Its `on_next` is its `_next`, set on the class when it is defined: an
    upstream's call finds the function there, so no bound method is made per item nor
    kept per link (seven a stream, and a slower call); a link that stops shadows it with
    a no-op of its own (an instance attribute, in a dict made then). A terminal stops the
    link after it is handled, as `_Link` does: nothing more gets through, the upstream
    is disposed. So does `unlink` (the default `dispose`); called while `link_to` is
    still subscribing, it stops the link once the subscription is known, and until
    then what the source says still gets through (a source that plays synchronously
    ends inside its subscribe; what it reports there is the subclass's to judge).
    """

    __slots__ = ("__dict__", "_upstream")  # the dict: made when an `on_next` is set
    on_next: Callable[[_T], None]  # a subclass's `_next` (`__init_subclass__`)

    def __init__(self) -> None:
        self._upstream: abc.DisposableBase | None = None  # or `_UNLINKED`

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.on_next = cls._next  # type: ignore[assignment]

    @property
    def stopped(self) -> bool:
        return self._upstream is _UNLINKED

    def _next(self, item: _T) -> None:
        raise NotImplementedError

    def _error(self, error: Exception) -> None:
        raise NotImplementedError

    def _completed(self) -> None:
        raise NotImplementedError

    def on_error(self, error: Exception) -> None:
        if self.on_next is _ignore:
            return
        self.on_next = _ignore
        try:
            self._error(error)
        finally:
            self.unlink()

    def on_completed(self) -> None:
        if self.on_next is _ignore:
            return
        self.on_next = _ignore
        try:
            self._completed()
        finally:
            self.unlink()

    def dispose(self) -> None:
        self.unlink()

    def unlink(self) -> None:
        """Stop: nothing more from the source, which is disposed (or will be, once
        `link_to` has its subscription)."""
        upstream, self._upstream = self._upstream, _UNLINKED
        if upstream is None:  # still subscribing
            return
        self.on_next = _ignore
        if upstream is not _UNLINKED:
            upstream.dispose()

    def link_to(self, source: Observable[_T], scheduler: abc.SchedulerBase | None) -> Link[_T]:
        """Subscribe to `source`: directly when it is an `Operator`, else as RxPY does
        (its wrappers gate what reaches this link). Returns the link, which is the
        subscription."""
        upstream: Any
        if type(source) is not Operator:
            upstream = source.subscribe(
                self.on_next, self.on_error, self.on_completed, scheduler=scheduler
            )
        else:
            try:  # an Operator's subscribe function, as `Observable._subscribe_core` calls it
                upstream = source._subscribe(self, scheduler)  # type: ignore[arg-type]
            except Exception as error:
                if self.on_next is _ignore:
                    raise
                self.on_error(error)
                return self
            if getattr(upstream, "dispose", None) is None:  # a dispose function, or None
                upstream = Disposable(upstream)
        if self._upstream is _UNLINKED:  # it stopped while subscribing
            self.on_next = _ignore
            upstream.dispose()
        else:
            self._upstream = upstream
        return self


_UNLINKED = Disposable()  # a `Link`'s upstream once it has stopped


class _Link(Link[_T]):
    """The link `attach` makes for any other observer: its `on_next` is the
    observer's own (no gate per item), its terminals the observer's."""

    __slots__ = ("_downstream",)

    def __init__(self, downstream: Observer[_T]) -> None:
        self.on_next = downstream.on_next
        self._upstream = None
        self._downstream: Observer[_T] = downstream

    def _error(self, error: Exception) -> None:
        self._downstream.on_error(error)

    def _completed(self) -> None:
        self._downstream.on_completed()

    def unlink(self) -> None:
        super().unlink()
        self._downstream = _DETACHED  # let go of the downstream


def attach(
    source: Observable[_T], observer: Observer[_T], scheduler: abc.SchedulerBase | None = None
) -> abc.DisposableBase:
    """`source.subscribe(observer, scheduler=scheduler)`, with the same guarantees
    (nothing after a terminal or dispose; the upstream disposed after a terminal; an
    exception raised while subscribing goes to `on_error`), and without RxPY's
    wrappers when `source` is an `Operator`: the link keeps `observer.on_next` and
    the observer itself, no other callable. A `Link` links itself, and is returned."""
    if isinstance(observer, Link):
        return observer.link_to(source, scheduler)
    if type(source) is not Operator:
        return source.subscribe(
            observer.on_next, observer.on_error, observer.on_completed, scheduler=scheduler
        )
    return _Link(observer).link_to(source, scheduler)


def link(
    source: Observable[_T],
    on_next: Callable[[_T], None],
    on_error: Callable[[Exception], None] | None = None,
    on_completed: Callable[[], None] | None = None,
    scheduler: abc.SchedulerBase | None = None,
) -> abc.DisposableBase:
    """`attach` with three callables (`source.subscribe(on_next, on_error,
    on_completed, scheduler=scheduler)`)."""
    if type(source) is not Operator:
        return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)
    callbacks = _Callbacks(on_next, on_error or default_error, on_completed or _nothing)
    return attach(source, callbacks, scheduler)


def _nothing() -> None:
    pass


def forward(
    source: Observable[_T], observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None
) -> abc.DisposableBase:
    """Subscribe `observer` itself to `source` (as `defer` does with the Observable it
    builds), directly when `source` is an `Operator`."""
    if type(source) is Operator:
        return source._subscribe(observer, scheduler)
    return source.subscribe(observer, scheduler=scheduler)
