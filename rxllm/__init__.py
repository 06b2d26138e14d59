"""rxllm: LLM provider streams as one normalized, reactive event stream."""

from loguru import logger

from rxllm.errors import ConfigError, RxllmError
from rxllm.events import (
    Attempt,
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
    Event,
    Failed,
    ReasoningDelta,
    Refusal,
    Retry,
    ServerToolCall,
    ServerToolResult,
    StreamRecord,
    TextDelta,
    ToolRequest,
    ToolStart,
    Usage,
    UsageUpdate,
)
from rxllm.pipeline import EventStream, Fallback, Provider, fallback, provider, replay
from rxllm.request import ChatRequest, ImagePart, Message, TextPart, Tool, ToolCall

# A library stays quiet unless its user asks (loguru's advice): logger.enable("rxllm").
logger.disable("rxllm")

__all__ = [
    "Attempt",
    "Cancelled",
    "ChatRequest",
    "Citation",
    "ConfigError",
    "Done",
    "ErrorInfo",
    "Event",
    "EventStream",
    "Fallback",
    "Failed",
    "ImagePart",
    "Message",
    "Provider",
    "ReasoningDelta",
    "Refusal",
    "Retry",
    "RxllmError",
    "ServerToolCall",
    "ServerToolResult",
    "StreamRecord",
    "TextDelta",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolRequest",
    "ToolStart",
    "Usage",
    "UsageUpdate",
    "fallback",
    "provider",
    "replay",
]
