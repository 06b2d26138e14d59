"""Assembly: source + provider + operators, the async bridges and the stream record."""

from rxllm.pipeline.aiter import EventStream
from rxllm.pipeline.fallback import Fallback, fallback
from rxllm.pipeline.provider import Provider, ProviderOptions, provider, record_of
from rxllm.pipeline.replay import replay

__all__ = [
    "EventStream",
    "Fallback",
    "Provider",
    "ProviderOptions",
    "fallback",
    "provider",
    "record_of",
    "replay",
]
