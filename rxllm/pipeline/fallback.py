"""`rxllm.fallback`: the next provider, only while nothing has been committed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import reactivex
from loguru import logger
from reactivex import Observable

from rxllm.errors import ConfigError
from rxllm.events import Event, Failed, Retry, StreamRecord
from rxllm.operators.retry_before_commit import Switch, retry_before_commit
from rxllm.pipeline.aiter import EventStream
from rxllm.pipeline.provider import Cancel, Provider, Turn, record_of, settled, traced
from rxllm.request import ChatRequest

__all__ = ["Fallback", "fallback"]


class Fallback:
    """Providers tried in order, with the surface of one `Provider`.

    Each provider runs its own turn first (its degraded and backed-off retries); when
    that turn fails before anything was committed, the next provider starts, announced
    by a `retry` event naming it. Once output is committed, an error surfaces as it
    is: the user has seen part of one provider's answer, and another provider's would
    not continue it. Attempts are numbered across providers, and every event names
    the provider that produced it.

    Like pydantic-ai's `FallbackModel`, a provider that cannot express the request
    (a `ConfigError` building its body) is skipped at the call; unlike it, any error
    before commitment moves on (there is no partial output to lose), and the user's
    own exceptions never do.
    """

    def __init__(self, providers: Sequence[Provider]) -> None:
        if isinstance(providers, Provider | Fallback):
            raise TypeError("fallback() takes a list of providers: rxllm.fallback([p1, p2])")
        providers = list(providers or ())  # once: a generator is read here, and only here
        if not providers:
            raise ConfigError("fallback() needs at least one provider")
        for candidate in providers:
            if not isinstance(candidate, Provider):
                raise TypeError(
                    f"fallback() takes providers (rxllm.provider(...)), "
                    f"got {type(candidate).__name__}"
                )
        self.providers = providers
        self.name = self.providers[0].name

    def __repr__(self) -> str:
        return f"Fallback({self.providers!r})"

    def _prepare(self, request: ChatRequest) -> list[tuple[str, Turn]]:
        """Each provider's turn for `request`, built now (bodies included), skipping
        the providers that cannot express it."""
        turns: list[tuple[str, Turn]] = []
        problems: list[str] = []
        for candidate in self.providers:
            try:
                turns.append((candidate.name, candidate.prepare(request)))
            except ConfigError as exc:
                problems.append(f"{candidate.name}: {exc}")
                logger.bind(provider=candidate.name).info("fallback skips {}: {}", candidate, exc)
        if not turns:
            raise ConfigError("no provider can express this request: " + "; ".join(problems))
        return turns

    def stream(self, request: ChatRequest, *, cancel: Cancel = None) -> Observable[Event]:
        """A cold Observable of one turn's events across the providers; exactly one
        terminal event ends it."""
        turns = self._prepare(request)

        def subscribe_turn(_: Any) -> Observable[Event]:
            remaining = iter(turns[1:])

            def decide(failure: Failed, committed: bool) -> Failed | Switch:
                following = None if committed else next(remaining, None)
                if following is None:
                    return failure
                name, turn = following
                number = failure.attempt + 1
                logger.bind(provider=failure.provider, attempt=failure.attempt).info(
                    "{} failed before anything was committed ({}); falling back to {}",
                    failure.provider,
                    failure.error.message,
                    name,
                )
                retry = Retry.make(
                    provider=failure.provider,
                    attempt=failure.attempt,
                    reason=failure.error,
                    next_attempt=number,
                    next_provider=name,
                )
                return Switch(retry, turn(number))

            return retry_before_commit(turns[0][1](1), decide)

        events = settled(reactivex.defer(subscribe_turn), turns[0][0], cancel)
        return traced(events, request, self.providers, turns[0][0])

    def astream(self, request: ChatRequest, *, cancel: Cancel = None) -> EventStream:
        """`async with fallback.astream(request) as events: async for event in events:`;
        leaving the `async with` block hangs up (see `EventStream`)."""
        return EventStream(self.stream(request, cancel=cancel), drive=True)

    async def complete(self, request: ChatRequest, *, cancel: Cancel = None) -> StreamRecord:
        """Stream the turn to its end and return its record (`record.provider` is the
        provider that produced the output)."""
        return await record_of(self.stream(request, cancel=cancel), self.name, request.model)

    async def aclose(self) -> None:
        """Close every provider."""
        for candidate in self.providers:
            await candidate.aclose()

    async def __aenter__(self) -> Fallback:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def fallback(providers: Sequence[Provider]) -> Fallback:
    """`rxllm.fallback([p1, p2])`: p2 only if p1's turn failed before committing."""
    return Fallback(providers)
