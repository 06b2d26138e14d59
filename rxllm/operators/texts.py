"""texts: the visible text of a stream, as strings."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc

from rxllm.events import TextDelta

__all__ = ["texts"]


def texts() -> Callable[[Observable[object]], Observable[str]]:
    """The `text` of each text event, as a plain `str`; every other event is skipped.

    ::

        source:  -t("Hel")-r-t("lo")-done-|
        texts()
        result:  -"Hel"------"lo"---------|

    Strings rather than `TextDelta`s: what a UI or a voice appends is the text itself
    (`of_type(TextDelta)` keeps the events, with their provider and attempt). Only the
    answer's text: reasoning and refusals are events of their own. How the turn ended
    is not in this stream; keep the terminal event from the source for that.

    Returns:
        An operator from events to strings.
    """

    def _texts(source: Observable[object]) -> Observable[str]:
        def subscribe(
            observer: abc.ObserverBase[str], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            def on_next(item: object) -> None:
                if isinstance(item, TextDelta):
                    observer.on_next(item.text)

            return source.subscribe(
                on_next, observer.on_error, observer.on_completed, scheduler=scheduler
            )

        return Observable(subscribe)

    return _texts
