"""`rxllm.replay`: recorded wire bytes through the same normalization as a live stream."""

from __future__ import annotations

from reactivex import Observable

from rxllm.events import Event
from rxllm.operators.settle_once import settle_once
from rxllm.pipeline.provider import events_of
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
    """
    source = replay_source(data, provider=provider, max_line_bytes=max_line_bytes)
    return events_of(source, wire_for(provider), provider).pipe(settle_once(provider))
