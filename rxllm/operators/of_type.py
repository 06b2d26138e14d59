"""of_type: the events of one class, typed as that class."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from reactivex import Observable, abc

__all__ = ["of_type"]

_T = TypeVar("_T")


def of_type(cls: type[_T]) -> Callable[[Observable[object]], Observable[_T]]:
    """Keep the items that are instances of `cls`, typed as `cls`.

    ::

        source:  -t-r-u-t-done-|
        of_type(TextDelta)
        result:  -t-----t------|

    Unlike `ops.filter(lambda e: isinstance(e, cls))`, which keeps the source's type
    (`Observable[Event]`), the result is `Observable[cls]` for a type checker, so its
    fields need no narrowing downstream. Errors and completion pass through.

    Args:
        cls: the class to keep (`rxllm.ToolRequest`, `rxllm.UsageUpdate`, ...); at
            run time, anything `isinstance` takes (a tuple, `A | B`) works too.

    Returns:
        An operator from any items to those of `cls`.

    Raises:
        TypeError: `cls` is not a class (`None`, a string, a parametrized generic).
    """
    try:
        isinstance(None, cls)
    except TypeError:
        raise TypeError(f"of_type needs a class, got {cls!r}") from None

    def _of_type(source: Observable[object]) -> Observable[_T]:
        def subscribe(
            observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            def on_next(item: object) -> None:
                if isinstance(item, cls):
                    observer.on_next(item)

            return source.subscribe(
                on_next, observer.on_error, observer.on_completed, scheduler=scheduler
            )

        return Observable(subscribe)

    return _of_type
