"""`rxllm.replay`: recorded wire bytes through the same normalization as a live stream."""

from __future__ import annotations

import functools

from reactivex import Observable

from rxllm.degradation import classify
from rxllm.errors import ConfigError
from rxllm.events import Event, Failed
from rxllm.operators._link import Operator, forward
from rxllm.operators.retry_before_commit import retry_before_commit
from rxllm.operators.settle_once import settle_once
from rxllm.pipeline.provider import events_of, surfaced
from rxllm.pipeline.sniff import MAX_BYTES, sniff_provider
from rxllm.providers import WireProtocol, wire_for
from rxllm.sources.replay import ReplayData, read_recording, replay_source
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

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
    file; one naming no file is a `FileNotFoundError`. Emits synchronously on
    subscribe: no event loop or network is needed.

    Besides an SSE body, a recording may be gzip-compressed, an HTTP response dump
    (status line and headers first; a status that is not 2xx is that error), or JSON:
    Gemini's array of chunks (`streamGenerateContent` without `alt=sse`) or one JSON
    payload a line, each object replayed as one event (`rxllm.sources.replay`). What
    is no recording of a stream ends in an error that says what it is.
    A recording cannot be sent again, so nothing is retried; an error still says, as
    a live one would, whether the provider's policy deems it `retryable`.

    When the replay ends in an error and the first data events clearly belong to
    another wire than `provider`'s (`rxllm.pipeline.sniff`), the error's message says
    which provider the bytes look like: the usual sign of a wrong `provider`.
    """
    # here: RxPY's operator module costs `import rxllm` ~4 ms, and only a replay needs it
    from reactivex import operators as ops

    wire = wire_for(provider)
    if isinstance(max_line_bytes, bool) or not isinstance(max_line_bytes, int):
        raise TypeError(f"max_line_bytes must be an int, got {type(max_line_bytes).__name__}")
    if max_line_bytes <= 0:
        raise ConfigError(f"max_line_bytes must be greater than 0, got {max_line_bytes}")
    recording = read_recording(data)
    source = replay_source(recording, provider=provider, max_line_bytes=max_line_bytes)
    events = events_of(source, wire, provider)

    def surface(failure: Failed, _committed: bool) -> Failed:
        return surfaced(failure, classify(failure.error, {}, wire.recovery))

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

    settled = retry_before_commit(events, surface).pipe(settle_once(provider), ops.map(hint))
    return Operator(functools.partial(forward, settled))  # rxllm's: `for` over it is an error
