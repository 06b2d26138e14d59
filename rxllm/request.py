"""What a user asks for: a chat request, its messages and parts, its tools.

Validated (this is where data enters from a user); providers turn it into wire bodies.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ChatRequest", "ImagePart", "Message", "Part", "TextPart", "Tool", "ToolCall"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    type: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
    """An image by URL: `https://...` or a `data:<media type>;base64,...` URL."""

    type: Literal["image"] = "image"
    url: str
    media_type: str | None = None

    @property
    def inline(self) -> tuple[str, str] | None:
        """(media type, base64 data) for a data URL; None for a remote URL."""
        if not self.url.startswith("data:"):
            return None
        header, _, data = self.url[5:].partition(",")
        media_type = header.split(";")[0] or self.media_type or "application/octet-stream"
        return media_type, data


Part = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class ToolCall(_Frozen):
    """A tool call the assistant made, as sent back in the conversation history."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    signature: str | None = None
    """The provider's opaque signature of the call, sent back as it came
    (`ToolRequest.to_call()` keeps it)."""

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)


class Message(_Frozen):
    role: Literal["system", "user", "assistant", "tool"]
    content: list[Part] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=[TextPart(text=text)])

    @classmethod
    def user(cls, text: str, images: list[str] | None = None) -> Message:
        parts: list[TextPart | ImagePart] = [TextPart(text=text)]
        parts += [ImagePart(url=url) for url in images or []]
        return cls(role="user", content=parts)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: list[ToolCall] | None = None) -> Message:
        return cls(
            role="assistant",
            content=[TextPart(text=text)] if text else [],
            tool_calls=tool_calls or [],
        )

    @classmethod
    def tool(cls, call_id: str, content: str) -> Message:
        return cls(role="tool", content=[TextPart(text=content)], tool_call_id=call_id)

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [part for part in self.content if isinstance(part, ImagePart)]


class Tool(_Frozen):
    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ChatRequest(_Frozen):
    model: str = Field(min_length=1)
    messages: list[Message] = Field(min_length=1)
    tools: list[Tool] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    """Provider parameters passed through as body keys (temperature, max_tokens, ...).
    They add keys, never override what the wire writes from the request (model,
    messages, stream, tools, ...): that is a `ConfigError` when the request is sent."""
