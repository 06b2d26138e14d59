"""`rxllm.fallback`: the next provider, only while nothing has been committed."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import reactivex
from loguru import logger
from reactivex import Observable, abc

from rxllm.errors import ConfigError
from rxllm.events import Event, Failed, Retry, StreamRecord
from rxllm.operators._link import Operator, attach
from rxllm.operators.retry_before_commit import Switch, retry_before_commit
from rxllm.operators.telemetry import telemetry
from rxllm.pipeline.aiter import EventStream
from rxllm.pipeline.provider import Cancel, Provider, Turn, record_of, settled
from rxllm.request import ChatRequest

__all__ = ["Entry", "Fallback", "fallback"]

Entry = Provider | tuple[Provider, str]
"""A provider, asked for the request's model, or `(provider, model)`: that provider
asked for `model` instead (each vendor names its models its own way)."""


class _Leg(NamedTuple):
    """One provider's part of a fallback turn, prepared at the call."""

    name: str
    provider: Provider
    turn: Turn
    request: ChatRequest
    """The request as this provider gets it (its own model, when one was given)."""
    total_timeout: float | None


class Fallback:
    """Providers tried in order, with the surface of one `Provider`.

    Each provider runs its own turn first (its degraded and backed-off retries); when
    that turn fails before anything was committed, the next provider starts, announced
    by a `retry` event naming it. Once output is committed, an error surfaces as it
    is: the user has seen part of one provider's answer, and another provider's would
    not continue it. Attempts are numbered across providers, and every event names
    the provider that produced it.

    A fallback turn is one turn: each provider's `total_timeout` counts from the
    turn's start, every provider before it included, so a provider that starts late
    gets what is left of it, and one whose `total_timeout` has already passed is not
    started. `max_attempts` stays each provider's own, with one exception: a wait the
    provider names (`Retry-After`, "try again in 20s") says it cannot answer before
    then, and a deadline that expired says it may take as long again, so while a later
    provider can be asked now, that one is asked instead of retrying. The last
    provider retries as its own policy says.

    An entry `(provider, model)` asks that provider for `model` instead of the
    request's (`record.requested_model` is the one asked of the provider that ended
    the turn). A provider that cannot express the request (a `ConfigError` building
    its body) is skipped at the call (logged); when none can, the `ConfigError` names
    each one's reason. Any error before commitment moves on (there is no partial
    output to lose); the user's own exceptions never do.
    """

    def __init__(self, providers: Iterable[Entry]) -> None:
        if isinstance(providers, Provider | Fallback):
            raise TypeError("fallback() takes a list of providers: rxllm.fallback([p1, p2])")
        if _is_pair(providers):
            raise TypeError(
                "fallback() takes a list of providers: put the (provider, model) pair in "
                "one: rxllm.fallback([(p1, 'model'), p2])"
            )
        entries = list(providers or ())  # once: a generator is read here, and only here
        if not entries:
            raise ConfigError("fallback() needs at least one provider")
        self.providers: list[Provider] = []
        self.models: list[str | None] = []
        """The model each provider is asked for; None: the request's."""
        for entry in entries:
            candidate, model = _entry(entry)
            self.providers.append(candidate)
            self.models.append(model)
        self.name = self.providers[0].name

    def __repr__(self) -> str:
        shown = [
            p if model is None else (p, model)
            for p, model in zip(self.providers, self.models, strict=True)
        ]
        return f"Fallback({shown!r})"

    def _prepare(self, request: ChatRequest) -> list[_Leg]:
        """Each provider's turn for `request`, built now (bodies included), skipping
        the providers that cannot express it."""
        legs: list[_Leg] = []
        problems: list[str] = []
        for candidate, model in zip(self.providers, self.models, strict=True):
            asked = request
            if model is not None and isinstance(request, ChatRequest):
                asked = request.model_copy(update={"model": model})
            try:
                turn = candidate.prepare(asked)
            except ConfigError as exc:
                problems.append(f"{candidate.name}: {exc}")
                logger.bind(provider=candidate.name).info("fallback skips {}: {}", candidate, exc)
                continue
            legs.append(
                _Leg(candidate.name, candidate, turn, asked, candidate.options.total_timeout)
            )
        if not legs:
            raise ConfigError("no provider can express this request: " + "; ".join(problems))
        return legs

    def stream(self, request: ChatRequest, *, cancel: Cancel = None) -> Observable[Event]:
        """A cold Observable of one turn's events across the providers; exactly one
        terminal event ends it."""
        return self._stream(self._prepare(request), cancel)

    def _stream(
        self,
        legs: list[_Leg],
        cancel: Cancel,
        on_leg: Callable[[_Leg], None] | None = None,
    ) -> Observable[Event]:
        first = legs[0]
        if any(candidate.options.telemetry for candidate in self.providers):
            return reactivex.defer(functools.partial(_traced, legs, cancel, on_leg))

        def subscribe_turn(_: Any) -> Observable[Event]:
            return _Run(legs, on_leg).events()

        return settled(reactivex.defer(subscribe_turn), first.name, cancel)

    def astream(self, request: ChatRequest, *, cancel: Cancel = None) -> EventStream:
        """`async with fallback.astream(request) as events: async for event in events:`;
        leaving the `async with` block hangs up (see `EventStream`)."""
        return EventStream(self.stream(request, cancel=cancel), drive=True)

    async def complete(self, request: ChatRequest, *, cancel: Cancel = None) -> StreamRecord:
        """Stream the turn to its end and return its record: `record.provider` is the
        provider that produced the output, `record.requested_model` the model that
        provider was asked for."""
        legs = self._prepare(request)
        started: list[_Leg] = []
        events = self._stream(legs, cancel, started.append)
        record = await record_of(events, self.name, legs[0].request.model)
        asked = (started[-1] if started else legs[0]).request.model
        if record.requested_model != asked:
            record = record.model_copy(update={"requested_model": asked})
        return record

    async def aclose(self) -> None:
        """Close every provider."""
        for candidate in self.providers:
            await candidate.aclose()

    async def __aenter__(self) -> Fallback:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def fallback(providers: Iterable[Entry]) -> Fallback:
    """`rxllm.fallback([p1, p2])`: p2 only if p1's turn failed before committing.

    An entry may be `(provider, model)`, to ask that provider for its own model:
    `rxllm.fallback([(openai, "gpt-4.1-mini"), (anthropic, "claude-sonnet-4-5")])`."""
    return Fallback(providers)


def _traced(
    legs: list[_Leg], cancel: Cancel, on_leg: Callable[[_Leg], None] | None, _: Any
) -> Observable[Event]:
    """One subscription of a fallback turn in one span (a provider asked for telemetry),
    its telemetry told by the run which provider sent each attempt: providers may share
    a name (two `openai` endpoints), not a wire nor a server."""
    run = _Run(legs, on_leg)
    first = legs[0]
    operator = telemetry(
        request=first.request,
        providers=[leg.provider for leg in legs],
        served_by=run.served_by,
        asked=run.asked,
    )
    return settled(run.events(), first.name, cancel).pipe(operator)


def _is_pair(value: object) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], Provider)
        and isinstance(value[1], str)
    )


def _entry(entry: object) -> tuple[Provider, str | None]:
    """A provider and the model it is asked for (None: the request's), or a TypeError
    saying what an entry may be."""
    if isinstance(entry, Provider):
        return entry, None
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], Provider):
        model = entry[1]
        if not isinstance(model, str):
            raise TypeError(
                f"fallback() takes (provider, model) with the model's name, got "
                f"{type(model).__name__} {model!r} for {entry[0]!r}"
            )
        if not model.strip():
            raise ConfigError(f"fallback(): the model for {entry[0]!r} is empty")
        return entry[0], model
    raise TypeError(
        f"fallback() takes providers (rxllm.provider(...)) or (provider, model) pairs, "
        f"got {type(entry).__name__}"
    )


class _Run:
    """One subscription of a fallback turn: when it started, the provider serving it,
    and the providers still to try."""

    __slots__ = ("_legs", "_next", "_on_leg", "_senders", "_started")

    def __init__(self, legs: list[_Leg], on_leg: Callable[[_Leg], None] | None) -> None:
        self._legs = legs
        self._on_leg = on_leg
        self._next = 1  # the index of the next leg to try
        self._started = time.monotonic()
        self._senders: list[tuple[int, _Leg]] = []
        """Each provider's leg started, with the number of its first attempt, in order."""

    def events(self) -> Observable[Event]:
        first = self._start(self._legs[0], 1, 0.0)
        return retry_before_commit(first, self.decide)

    def _start(self, leg: _Leg, number: int, elapsed: float) -> Observable[Event]:
        """The leg's turn from attempt `number`, `elapsed` seconds into the turn."""
        if self._on_leg is not None:
            self._on_leg(leg)
        self._senders.append((number, leg))
        events = leg.turn(number, elapsed)
        if leg is self._legs[-1]:  # nobody after it: its waits are waited out
            return events
        return Operator(functools.partial(self._subscribe_leg, events))

    def _subscribe_leg(
        self,
        events: Observable[Event],
        observer: abc.ObserverBase[Event],
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        return attach(events, _WaitsPassedOver(observer, self), scheduler)

    def _leg_of(self, attempt: int) -> _Leg | None:
        """The leg that sent attempt `attempt` (numbers run on across providers), or
        None before any started."""
        for first, leg in reversed(self._senders):
            if first <= attempt:
                return leg
        return None

    def served_by(self, attempt: int) -> Provider | None:
        """The provider that sent attempt `attempt`."""
        leg = self._leg_of(attempt)
        return None if leg is None else leg.provider

    def asked(self, attempt: int) -> str | None:
        """The model attempt `attempt` asked for (a `(provider, model)` entry's own)."""
        leg = self._leg_of(attempt)
        return None if leg is None else leg.request.model

    def following(self) -> _Leg | None:
        """The next provider whose `total_timeout` has not passed yet, if any (those
        whose time has passed are skipped for good: it only passes further)."""
        while self._next < len(self._legs):
            leg = self._legs[self._next]
            total = leg.total_timeout
            if total is None or time.monotonic() - self._started < total:
                return leg
            self._next += 1
            logger.bind(provider=leg.name).info(
                "fallback skips {}: its total_timeout ({:g} s) has passed", leg.name, total
            )
        return None

    def decide(self, failure: Failed, committed: bool) -> Failed | Switch:
        leg = None if committed else self.following()
        if leg is None:
            return failure
        self._next += 1
        elapsed = time.monotonic() - self._started
        number = failure.attempt + 1
        logger.bind(provider=failure.provider, attempt=failure.attempt).info(
            "{} failed before anything was committed ({}); falling back to {}",
            failure.provider,
            failure.error.message,
            leg.name,
        )
        retry = Retry.make(
            provider=failure.provider,
            attempt=failure.attempt,
            reason=failure.error,
            next_attempt=number,
            next_provider=leg.name,
        )
        return Switch(retry, self._start(leg, number, elapsed))


class _WaitsPassedOver:
    """A leg's events on their way to the fallback's `retry_before_commit`, except a
    backoff the next provider answers sooner: one whose wait the provider named
    (`Retry-After`, "try again in 20s": it cannot answer before then), or one after a
    deadline expired (the provider already took the whole deadline in silence, and
    may well take it again). While a later provider can be asked now, that retry
    becomes the failure it announced, so the fallback moves on, and the leg's wait is
    cancelled with the leg."""

    __slots__ = ("_observer", "_run")

    def __init__(self, observer: abc.ObserverBase[Event], run: _Run) -> None:
        self._observer = observer
        self._run = run

    def on_next(self, event: Event) -> None:
        if (
            type(event) is Retry
            and event.delay > 0
            and (event.reason.retry_after or event.reason.kind == "stalled")
            and self._run.following() is not None
        ):
            assert isinstance(event, Retry)
            event = Failed.make(provider=event.provider, attempt=event.attempt, error=event.reason)
        self._observer.on_next(event)

    def on_error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def on_completed(self) -> None:
        self._observer.on_completed()
