"""Where raw chunks come from: HTTP, or recorded bytes, through one SSE decoder."""

from rxllm.fragments import RawChunk, SourceItem
from rxllm.sources.http import HttpRequest, http_source
from rxllm.sources.replay import replay_source
from rxllm.sources.sse import SseDecoder, SseEvent, SseLineTooLong

__all__ = [
    "HttpRequest",
    "RawChunk",
    "SourceItem",
    "SseDecoder",
    "SseEvent",
    "SseLineTooLong",
    "http_source",
    "replay_source",
]
