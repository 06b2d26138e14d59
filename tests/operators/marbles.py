"""Named events for marble diagrams (one letter, one event), and a consumer that raises."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from rxllm.events import Cancelled, Done, TextDelta, ToolStart, Usage, UsageUpdate, failed
from rxllm.fragments import FailureUsage, ToolArgs, ToolEnd

P = "openai"

EVENTS: dict[str | float, Any] = {
    "a": TextDelta(provider=P, text="Hel"),
    "b": TextDelta(provider=P, text="lo"),
    "s": ToolStart(provider=P, call_id="call_1", name="f", index=0),
    "t": ToolStart(provider=P, call_id="call_2", name="g", index=1),
    "u": UsageUpdate(provider=P, usage=Usage.of(input_tokens=3, output_tokens=5)),
    "f": FailureUsage(P, 1, Usage.of(input_tokens=3, output_tokens=5)),  # `u`, with a failure
    "d": Done(provider=P, stop_reason="stop", raw_stop_reason="stop"),
    "D": Done(provider=P, stop_reason="tool_use", raw_stop_reason="tool_calls"),
    "x": failed(P, "stream_error", "overloaded"),
    "c": Cancelled(provider=P),
    "m": ToolArgs(0, '{"x"'),
    "n": ToolArgs(0, ": 1}"),
    "o": ToolArgs(1, '{"y": [1,'),
    "p": ToolArgs(1, " 2]}"),
    "z": ToolArgs(0, '{"x": '),
    "e": ToolEnd(0),
    "E": ToolEnd(1),
}


# What a consumer raises in its own `on_next` (one instance, so marbles can compare it).
BOOM = KeyError("a consumer's own bug")


def raise_on(*types: str) -> Callable[[Observable[Any]], Observable[Any]]:
    """A consumer's `on_next` that raises `BOOM` on events of `types`, unguarded, as a
    subscriber's own code would (RxPY's `map` would turn it into `on_error` itself)."""

    def _raise_on(source: Observable[Any]) -> Observable[Any]:
        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            def on_next(item: Any) -> None:
                if getattr(item, "type", None) in types:
                    raise BOOM
                observer.on_next(item)

            return source.subscribe(
                on_next, observer.on_error, observer.on_completed, scheduler=scheduler
            )

        return Observable(subscribe)

    return _raise_on


def reporting(items: Iterable[Any]) -> Observable[Any]:
    """A source that, like the HTTP source, reports what its observer raises with
    `on_error` (and stops there)."""

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        try:
            for item in items:
                observer.on_next(item)
        except Exception as exc:
            observer.on_error(exc)
        else:
            observer.on_completed()
        return Disposable()

    return Observable(subscribe)
