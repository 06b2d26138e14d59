"""Where raw chunks come from: HTTP, or recorded bytes, through one SSE decoder.

A recording's source, `rxllm.sources.replay.replay_source`, loads with the first replay."""

from rxllm.fragments import RawChunk, SourceItem
from rxllm.sources.http import HttpRequest, http_source
from rxllm.sources.sse import SseDecoder, SseEvent, SseLineTooLong

__all__ = [
    "HttpRequest",
    "RawChunk",
    "SourceItem",
    "SseDecoder",
    "SseEvent",
    "SseLineTooLong",
    "http_source",
]
