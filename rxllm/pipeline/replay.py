"""`rxllm.replay`: recorded wire bytes through the same normalization as a live stream."""

from __future__ import annotations

from reactivex import Observable

from rxllm.degradation import classify
from rxllm.events import Event, Failed
from rxllm.operators.retry_before_commit import retry_before_commit
from rxllm.operators.settle_once import settle_once
from rxllm.operators.track_commitment import track_commitment
from rxllm.pipeline.provider import events_of, surfaced
from rxllm.providers import wire_for
from rxllm.sources.replay import ReplayData, replay_source
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

__all__ = ["replay"]


def replay(
    data: ReplayData, provider: str = "openai", *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Observable[Event]:
    """The normalized events of a recorded stream body.

    `data` is bytes, text, a Path, or an iterable of bytes taken as the exact network
    chunks. Emits synchronously on subscribe: no event loop or network is needed.
    A recording cannot be sent again, so nothing is retried; an error still says, as
    a live one would, whether the provider's policy deems it `retryable`.
    """
    wire = wire_for(provider)
    source = replay_source(data, provider=provider, max_line_bytes=max_line_bytes)
    events = events_of(source, wire, provider).pipe(track_commitment())

    def surface(failure: Failed, _committed: bool) -> Failed:
        return surfaced(failure, classify(failure.error, {}, wire.recovery))

    return retry_before_commit(events, surface).pipe(settle_once(provider))
