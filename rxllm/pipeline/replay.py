"""`rxllm.replay`: recorded wire bytes through the same normalization as a live stream."""

from __future__ import annotations

from typing import TYPE_CHECKING

import reactivex
from reactivex import Observable, abc
from reactivex.scheduler import CurrentThreadScheduler

from rxllm.degradation import classify
from rxllm.errors import ConfigError
from rxllm.events import Event, Failed, Retry, failed
from rxllm.operators._link import Operator, forward
from rxllm.operators.retry_before_commit import Switch, retry_before_commit
from rxllm.operators.settle_once import settle_once
from rxllm.pipeline.provider import events_of, surfaced
from rxllm.providers import WireProtocol, wire_for
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

if TYPE_CHECKING:
    from rxllm.sources.replay import Body, ReplayData

__all__ = ["replay", "wire_family"]

# The module of each wire protocol -> the name `sniff_provider` gives its bytes.
_FAMILIES = {
    "rxllm.providers.openai_chat": "openai",
    "rxllm.providers.openai_responses": "openai-responses",
    "rxllm.providers.anthropic": "anthropic",
    "rxllm.providers.google": "google",
}


def wire_family(wire: WireProtocol) -> str | None:
    """The wire protocol a provider speaks, by the name `sniff_provider` uses
    (`groq` and every preset of the chat core speak `openai`)."""
    return _FAMILIES.get(type(wire).__module__)


def replay(
    data: ReplayData, provider: str = "openai", *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Observable[Event]:
    """The normalized events of a recorded stream body.

    `data` is bytes, text, a Path, or an iterable of bytes taken as the exact network
    chunks. A one-line str that does not begin as SSE or JSON does (`data:`, `event:`,
    a `:` comment, `[`, `{`) is a file's path, so `replay("capture.sse")` reads the
    file; one naming no file is a `FileNotFoundError`, a directory an
    `IsADirectoryError`. Emits synchronously on subscribe: no event loop or network
    is needed.

    Besides an SSE body, a recording may be gzip-compressed, an HTTP response dump
    (status line and headers first; a status that is not 2xx is that error), or JSON:
    Gemini's array of chunks (`streamGenerateContent` without `alt=sse`) or one JSON
    payload a line, each object replayed as one event (`rxllm.sources.replay`). What
    is no recording of a stream ends in an error that says what it is.
    A recording cannot be sent again, so nothing is retried; an error still says, as
    a live one would, whether the provider's policy deems it `retryable`. A turn that
    `rxllm stream --raw` kept after it retried holds each attempt's body, and the
    `retry` events between them (`rxllm.sources.replay.bodies_of`): a body that ended
    in an error is followed, as the live turn was, by those `retry` events and the
    next body's events (each replayed event names `provider`).

    When the replay ends in an error and the first data events clearly belong to
    another wire than `provider`'s (`rxllm.pipeline.sniff`), the error's message says
    which provider the bytes look like: the usual sign of a wrong `provider`.
    """
    # here: only a replay needs RxPY's operators (~4 ms of `import rxllm`), and reading
    # and sniffing a recording (~12 M instructions)
    from reactivex import operators as ops

    from rxllm.pipeline.sniff import MAX_BYTES, sniff_provider
    from rxllm.sources.replay import bodies_of, read_recording, replay_source

    wire = wire_for(provider)
    if isinstance(max_line_bytes, bool) or not isinstance(max_line_bytes, int):
        raise TypeError(f"max_line_bytes must be an int, got {type(max_line_bytes).__name__}")
    if max_line_bytes <= 0:
        raise ConfigError(f"max_line_bytes must be greater than 0, got {max_line_bytes}")
    recording = read_recording(data)
    bodies = bodies_of(recording)
    # the attempt whose body ended in an error -> the body that followed it
    following = dict(zip((body.number for body in bodies), bodies[1:], strict=False))

    def retries(body: Body) -> list[Retry]:
        """The body's retry events, from the replay's provider as all its events are."""
        update = {"provider": provider, "next_provider": provider}
        return [retry.model_copy(update=update) for retry in body.retries]

    def events(body: Body, announced: list[Retry]) -> Observable[Event]:
        number = body.number
        if body.recording.chunks:
            source = replay_source(
                body.recording, provider=provider, attempt=number, max_line_bytes=max_line_bytes
            )
            played = events_of(source, wire, provider, number)
        else:  # the turn retried, and ended before another body came
            message = (
                f"the recording ends where attempt {number} began: no body of it was kept "
                "(an HTTP error's body is in the turn's record)"
            )
            played = reactivex.of(failed(provider, "truncated", message, attempt=number))
        return reactivex.concat(reactivex.of(*announced), played) if announced else played

    def decide(failure: Failed, _committed: bool) -> Failed | Switch:
        body = following.get(failure.attempt)
        if body is None:
            return surfaced(failure, classify(failure.error, {}, wire.recovery))
        first, *rest = retries(body)
        return Switch(first, events(body, rest))  # no delay: a replay has no clock

    def hint(event: Event) -> Event:
        if not isinstance(event, Failed):
            return event
        head = bytearray()
        for chunk in recording.chunks:
            head += chunk[: MAX_BYTES - len(head)]
            if len(head) >= MAX_BYTES:
                break
        looks_like = sniff_provider(bytes(head))
        if looks_like is None or looks_like == wire_family(wire):
            return event
        message = (
            f"{event.error.message} (the bytes look like the {looks_like} wire, not "
            f"{provider}'s: replay them with provider={looks_like!r})"
        )
        error = event.error.model_copy(update={"message": message})
        return event.model_copy(update={"error": error})

    first = events(bodies[0], retries(bodies[0]))
    settled = retry_before_commit(first, decide).pipe(settle_once(provider), ops.map(hint))
    # Every body plays on RxPY's trampoline, so that the next one too is played before
    # `subscribe` returns, from async code as well (the loop's scheduler would wait).
    trampoline = CurrentThreadScheduler.singleton()

    def subscribe(
        observer: abc.ObserverBase[Event], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return forward(settled, observer, trampoline)

    return Operator(subscribe)  # rxllm's: `for` over it is an error
