"""What a user asks for: a chat request, its messages and parts, its tools.

Validated (this is where data enters from a user); providers turn it into wire bodies.
"""

import base64
import json
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "SAMPLING_FIELDS",
    "ChatRequest",
    "ImagePart",
    "Message",
    "MessageLike",
    "Part",
    "ReasoningPart",
    "TextPart",
    "Tool",
    "ToolCall",
    "openai_message",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# Empty defaults are plain values: pydantic copies a mutable default for each object,
# and `default_factory=list` costs `import rxllm` ~3 ms (pydantic inspects the factory's
# signature, and a builtin's is read by compiling the tokenizer's patterns).


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
        """(media type, base64 data) for a data URL; None for a remote URL. The scheme
        is read in any case, and data without `;base64` (RFC 2397: percent-encoded
        bytes) is encoded, since the wires that take inline images take base64."""
        if self.url[:5].lower() != "data:":
            return None
        header, _, data = self.url[5:].partition(",")
        media_type, *flags = header.split(";")
        if "base64" not in (flag.strip().lower() for flag in flags):
            data = base64.b64encode(urllib.parse.unquote_to_bytes(data)).decode("ascii")
        return media_type.strip() or self.media_type or "application/octet-stream", data


class ReasoningPart(_Frozen):
    """Reasoning the assistant did, sent back in the conversation history with the
    provider's opaque `signature` (Anthropic refuses a thinking turn's tool calls sent
    back without its signed thinking blocks; a `redacted` block is its signature
    alone). `StreamRecord.to_message()` keeps them; a wire that takes no reasoning
    back leaves them out, as does Anthropic for a part without a signature, the
    Responses wire for a part that is not one of its reasoning items and OpenRouter
    for a part that is not one of its reasoning details."""

    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    details: dict[str, Any] | None = None
    """The block's own fields beyond its text and signature, as the provider sent them,
    so that its wire takes the block back as it came: a Responses reasoning item
    (`type: "reasoning"`, its `id` and `summary` parts; its `encrypted_content` is the
    signature) or an OpenRouter reasoning detail (`type: "reasoning.text"`, ...,
    `id`, `format`, `index`; its text, summary or data is `text` or `signature`), or
    a Gemini text or thought part (`{}`, `{"thought": true}`: its signature goes back
    on the turn's text). None for reasoning that came as text and a signature alone
    (Anthropic's thinking blocks, which are the only ones Anthropic takes back)."""


Part = Annotated[TextPart | ImagePart | ReasoningPart, Field(discriminator="type")]


class ToolCall(_Frozen):
    """A tool call the assistant made, as sent back in the conversation history."""

    id: str
    name: str
    arguments: dict[str, Any] = {}
    signature: str | None = None
    """The provider's opaque signature of the call, sent back as it came
    (`ToolRequest.to_call()` keeps it)."""

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)


class Message(_Frozen):
    """One message of the conversation. Built with `Message.user(...)` and its
    siblings, or validated from an OpenAI-style dict (`openai_message`)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: list[Part] = []
    tool_calls: list[ToolCall] = []
    tool_call_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _openai_style(cls, data: Any) -> Any:
        return openai_message(data) if isinstance(data, Mapping) else data

    @classmethod
    def system(cls, text: str) -> "Message":
        return cls(role="system", content=[TextPart(text=text)])

    @classmethod
    def user(cls, text: str, images: list[str] | None = None) -> "Message":
        if isinstance(images, str):  # a str is iterable: one image per character
            raise TypeError(f"images must be a list of URLs: images=[{images!r}]")
        parts: list[Part] = [TextPart(text=text)]
        parts += [ImagePart(url=url) for url in images or []]
        return cls(role="user", content=parts)

    @classmethod
    def assistant(
        cls,
        text: str = "",
        tool_calls: list[ToolCall] | None = None,
        reasoning: list[ReasoningPart] | None = None,
    ) -> "Message":
        """The assistant's turn: its reasoning (signed, for the providers that take it
        back) first, then its text and tool calls."""
        parts: list[Part] = list(reasoning or [])
        if text:
            parts.append(TextPart(text=text))
        return cls(role="assistant", content=parts, tool_calls=tool_calls or [])

    @classmethod
    def tool(cls, call_id: str, content: str) -> "Message":
        return cls(role="tool", content=[TextPart(text=content)], tool_call_id=call_id)

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [part for part in self.content if isinstance(part, ImagePart)]


class Tool(_Frozen):
    name: str = Field(min_length=1)
    """Letters, digits, `_` and `-` (Gemini also takes `.` and `:`), at most 128
    characters: what the providers take."""
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if _TOOL_NAME.fullmatch(name) is None:
            raise ValueError(
                f"tool name {name!r} is not one a provider takes: letters, digits, '_' and "
                "'-' (Gemini also '.' and ':'), at most 128 characters"
            )
        return name


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


MessageLike: TypeAlias = Message | Mapping[str, Any]
"""A `Message`, or an OpenAI-style message dict that validates into one."""

SAMPLING_FIELDS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
)
"""The sampling parameters that are `ChatRequest` fields: each wire writes them under
its own body keys (`WireProtocol.sampling_keys`)."""


class ChatRequest(_Frozen):
    """One turn to send: the model, the conversation, the tools, how to sample.

    The sampling fields are written by each wire under its own names (Responses
    `max_output_tokens`, Anthropic `stop_sequences`, Gemini `generationConfig`);
    a field a wire has no parameter for is a `ConfigError` when the request is sent
    to it. `params` holds every other body key, as the wire names it."""

    model: str = Field(min_length=1)
    messages: list[Message] = Field(min_length=1)
    """`Message`s, or OpenAI-style dicts (`{"role": "user", "content": "hi"}`, an
    assistant's `tool_calls`, a tool result's `tool_call_id`, content parts of type
    `text` and `image_url`), validated into `Message`s."""
    tools: list[Tool] = []
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, gt=0)
    """The most tokens to generate (OpenAI chat `max_tokens`, Responses
    `max_output_tokens`, Anthropic `max_tokens`, Gemini `maxOutputTokens`)."""
    stop: str | list[str] | None = None
    """Where to stop generating: one string or several (sent as a list)."""
    seed: int | None = None
    presence_penalty: float | None = Field(default=None, allow_inf_nan=False)
    frequency_penalty: float | None = Field(default=None, allow_inf_nan=False)
    params: dict[str, Any] = {}
    """Any other provider parameter, passed through as body keys under the wire's own
    names (`{"reasoning_effort": "low"}`, `{"top_k": 40}`). They add keys, never
    override what the wire writes from the request (model, messages, stream, tools,
    a sampling field above): that is a `ConfigError` when the request is sent."""

    if TYPE_CHECKING:
        # What a type checker shows callers: messages may be OpenAI-style dicts.
        def __init__(
            self,
            *,
            model: str,
            messages: Sequence[MessageLike],
            tools: Sequence[Tool] = (),
            temperature: float | None = None,
            top_p: float | None = None,
            max_tokens: int | None = None,
            stop: str | list[str] | None = None,
            seed: int | None = None,
            presence_penalty: float | None = None,
            frequency_penalty: float | None = None,
            params: Mapping[str, Any] = ...,
        ) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key in data:
                if key not in cls.model_fields:
                    raise ValueError(
                        f"ChatRequest has no field {key!r}: pass other provider parameters "
                        f"as params={{{key!r}: ...}}"
                    )
        return data


def openai_message(data: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-style message dict in `Message`'s own shape.

    A string `content` is one text part; `image_url` parts are image parts (their
    `detail` is dropped: no other wire has it); an assistant's `refusal` (and its
    `refusal` parts) is its text, after any other (`StreamRecord.to_message()` says
    why); an assistant's `tool_calls` of type `function` have their JSON `arguments`
    parsed; `developer` is the system role (as OpenAI's newer models name it); keys
    set to None (as the openai SDK's dumps write `refusal`, `audio`, ...) are left
    out. `Message`'s own shape passes unchanged.

    Raises:
        ValueError: a content or tool call that cannot be read, naming the field.
    """
    message = {key: value for key, value in data.items() if value is not None}
    if message.get("role") == "developer":
        message["role"] = "system"
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = [{"type": "text", "text": content}] if content else []
    elif isinstance(content, list):
        message["content"] = [_part(part, n) for n, part in enumerate(content)]
    elif content is not None and not isinstance(content, tuple):
        raise ValueError(
            "content must be a string or a list of parts ({'type': 'text', 'text': ...} or "
            "{'type': 'image_url', 'image_url': {'url': ...}}), "
            f"got {type(content).__name__}"
        )
    refusal = message.get("refusal")
    if isinstance(refusal, str):  # the openai SDK's dump of a refused turn
        del message["refusal"]
        if refusal:
            message["content"] = [*message.get("content", ()), {"type": "text", "text": refusal}]
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        message["tool_calls"] = [_tool_call(call, n) for n, call in enumerate(calls)]
    return message


def _part(part: Any, n: int) -> Any:
    if not isinstance(part, Mapping):
        return part
    if part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "text", "text": part["refusal"]}  # as the `refusal` key
    if part.get("type") != "image_url":
        return part
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    if not isinstance(url, str):
        raise ValueError(f"content[{n}].image_url must be {{'url': '<https or data URL>'}}")
    return {"type": "image", "url": url}


def _tool_call(call: Any, n: int) -> Any:
    if not isinstance(call, Mapping) or "function" not in call:
        return call
    function = call["function"]
    if not isinstance(function, Mapping):
        raise ValueError(f"tool_calls[{n}].function must be {{'name': ..., 'arguments': ...}}")
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise ValueError(
                f"tool_calls[{n}].function.arguments is not valid JSON ({exc})"
            ) from None
    return {"id": call.get("id"), "name": function.get("name"), "arguments": arguments}
