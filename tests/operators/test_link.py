"""`link`: RxPY's subscription guarantees between rxllm's operators, without its wrappers."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.observer import AutoDetachObserver

import rxllm
from rxllm.operators import settle_once, track_commitment
from rxllm.operators._link import Operator, link
from tests.operators.marbles import EVENTS


def _operator(emit: Any) -> tuple[Operator[str], list[str]]:
    """An Operator that runs `emit(observer)` when subscribed; `log` records disposal."""
    log: list[str] = []

    def subscribe(observer: abc.ObserverBase[str], _: abc.SchedulerBase | None = None) -> Any:
        emit(observer)
        return Disposable(lambda: log.append("disposed"))

    return Operator(subscribe), log


def test_nothing_passes_after_completion_and_the_upstream_is_disposed() -> None:
    def emit(observer: abc.ObserverBase[str]) -> None:
        observer.on_next("a")
        observer.on_completed()
        observer.on_next("late")
        observer.on_completed()

    source, log = _operator(emit)
    got: list[str] = []
    link(source, got.append, None, lambda: got.append("|"))
    assert got == ["a", "|"]
    assert log == ["disposed"]


def test_nothing_passes_after_dispose() -> None:
    held: list[abc.ObserverBase[str]] = []
    source, log = _operator(held.append)
    got: list[str] = []
    subscription = link(source, got.append, got.append, lambda: got.append("|"))
    held[0].on_next("a")
    subscription.dispose()
    held[0].on_next("late")
    held[0].on_error(RuntimeError("late"))
    held[0].on_completed()
    assert got == ["a"]
    assert log == ["disposed"]


def test_an_error_while_subscribing_goes_to_on_error() -> None:
    def boom(_: abc.ObserverBase[str]) -> None:
        raise RuntimeError("boom")

    source, _log = _operator(boom)
    errors: list[Exception] = []
    link(source, print, errors.append)
    assert [str(e) for e in errors] == ["boom"]


def test_any_other_observable_is_subscribed_as_rxpy_does() -> None:
    got: list[int] = []
    link(reactivex.of(1, 2), got.append, None, lambda: got.append(0))
    assert got == [1, 2, 0]


def test_rxllm_operators_subscribe_to_each_other_without_autodetach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the outer subscription (the user's, RxPY's own) gets an AutoDetachObserver:
    a stream's operators link to each other directly."""
    made: list[object] = []
    init = AutoDetachObserver.__init__

    def counting(self: AutoDetachObserver[Any], *args: Any) -> None:
        made.append(self)
        init(self, *args)

    monkeypatch.setattr(AutoDetachObserver, "__init__", counting)
    source, _log = _operator(lambda o: (o.on_next(EVENTS["a"]), o.on_next(EVENTS["d"])))
    events = settle_once()(track_commitment()(source))
    got: list[rxllm.Event] = []
    events.subscribe(got.append)
    assert [e.type for e in got] == ["text", "done"]
    assert len(made) == 1
