"""What a user asks for: a chat request, its messages and parts, its tools.

Validated (this is where data enters from a user); providers turn it into wire bodies.
"""

import base64
import json
import os
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from rxllm.errors import ConfigError

__all__ = [
    "SAMPLING_FIELDS",
    "TOOL_CHOICE_MODES",
    "ChatRequest",
    "ImagePart",
    "ImageSource",
    "JsonSchema",
    "Message",
    "MessageLike",
    "Part",
    "ReasoningPart",
    "ResponseFormatLike",
    "ServerToolPart",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolChoiceLike",
    "forces_a_call",
    "image_type",
    "is_image_url",
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
    phase: str | None = Field(default=None, exclude_if=lambda phase: phase is None)
    """An assistant's text as the Responses API labelled its message (`commentary`,
    `final_answer`; `TextDelta.phase`), sent back on that wire's message item."""


ImageSource: TypeAlias = str | bytes | os.PathLike[str]
"""An image as `ImagePart(url=...)` and `Message.user(images=[...])` take it: a URL, or
an image file (`pathlib.Path`) or its bytes, read into a `data:` URL."""


class ImagePart(_Frozen):
    """An image by URL: one the provider fetches (`https://...`, Gemini's `gs://...`)
    or a `data:<media type>;base64,...` URL. An image file (`pathlib.Path`) or its
    bytes are read into a data URL, of the type the bytes say (PNG, JPEG, GIF, WebP),
    else `media_type`, else the type a file's suffix says. A str that is not a URL (a
    file's path) is refused: a provider would refuse it as an image it cannot fetch,
    which a retry takes for an endpoint without image input.

    A PDF goes the same way (`pdf`): each wire sends it as its documents go (Anthropic's
    `document` block, OpenAI's `file` and `input_file` parts, Gemini's PDF data)."""

    type: Literal["image"] = "image"
    url: str
    media_type: str | None = None
    detail: str | None = None
    """OpenAI's `detail` (`low`, `high`, `auto`), sent by the OpenAI wires; the others
    have no such setting."""

    if TYPE_CHECKING:
        # What a type checker shows callers: a file or bytes, read into a data URL.
        def __init__(
            self,
            *,
            url: ImageSource,
            media_type: str | None = None,
            detail: str | None = None,
            type: Literal["image"] = ...,
        ) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(
            data.get("url"), bytes | bytearray | memoryview | os.PathLike
        ):
            return {**data, "url": _data_url(data["url"], data.get("media_type"))}
        return data

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        if not is_image_url(url):
            raise ValueError(
                f"image {_shown(url)} is not a URL a provider can read: pass an image file "
                "as pathlib.Path(...) or its bytes (read into a data: URL), or an https:// "
                "or data:<media type>;base64,... URL"
            )
        if url[:5].lower() == "data:" and (problem := _data_url_problem(url)):
            # refused here for the reason a path is: a provider refuses it as an image it
            # cannot read, which a retry takes for an endpoint without image input
            raise ValueError(
                f"image {_shown(url)} is not a data URL a provider can read: {problem}; "
                "pass the image file as pathlib.Path(...) or its bytes to have it encoded"
            )
        return url

    @property
    def inline(self) -> tuple[str, str] | None:
        """(media type, base64 data) for a data URL; None for a remote URL. The scheme
        is read in any case, and data without `;base64` (RFC 2397: percent-encoded
        bytes) is encoded, since the wires that take inline images take base64. The
        media type is the URL's, else `media_type`, else the one the bytes say."""
        if self.url[:5].lower() != "data:":
            return None
        media_type, is_base64, _, data = _data_url_parts(self.url)
        if not is_base64:
            data = base64.b64encode(urllib.parse.unquote_to_bytes(data)).decode("ascii")
        # a URL that names no type (`data:;base64,...`): the bytes' own, as a file's
        sniffed = image_type(data) or (PDF if data.startswith(_PDF_BASE64) else None)
        return media_type or self.media_type or sniffed or "application/octet-stream", data

    @property
    def pdf(self) -> bool:
        """Whether the part is a PDF document: its bytes or its data URL say so, or, for
        a remote URL, `media_type="application/pdf"`."""
        inline = self.inline
        if inline is None:
            return (self.media_type or "").lower() == PDF
        media_type, data = inline
        return data.startswith(_PDF_BASE64) or media_type.lower() == PDF


# A PDF's media type, and its bytes' first ones (`%PDF-`) in base64.
PDF = "application/pdf"
_PDF_BASE64 = "JVBERi"


# A URL a provider may fetch or read: `data:`, or `scheme://` (https, Gemini's gs, the
# `file://` a local vLLM reads under --allowed-local-media-path, ...). Text, compiled by
# `re`'s cache at the first image part: a text-only turn never reads it.
_IMAGE_URL = r"(?i)(?:data:|[a-z][a-z0-9+.-]*://)"


def is_image_url(text: str) -> bool:
    """Whether `text` is an image URL as `ImagePart` takes it, rather than a file's path."""
    return re.match(_IMAGE_URL, text) is not None


# The characters of base64 (standard and URL-safe alphabets, padding, line breaks), and
# how much of a data URL's payload is looked at: its start is where a pasted path, a
# second `data:...;base64,` header or a bytes repr (`b'...`) shows, and reading 30 MB of
# image with a pattern would cost 80 ms a request.
_BASE64_HEAD = r"[A-Za-z0-9+/=_\-\s]*"
_HEAD_CHARS = 256


def _data_url_parts(url: str) -> tuple[str, bool, bool, str]:
    """The data URL `url` as RFC 2397 writes it: its media type, whether it is marked
    `;base64`, whether a comma ends its header, and its data."""
    header, comma, data = url[5:].partition(",")
    media_type, *flags = header.split(";")
    is_base64 = any(flag.strip().lower() == "base64" for flag in flags)
    return media_type.strip(), is_base64, bool(comma), data


def _data_url_problem(url: str) -> str | None:
    """What makes the data URL `url` unreadable as one (RFC 2397), or None: no comma
    before its data, no data, or data marked base64 that does not begin as base64."""
    media_type, is_base64, comma, data = _data_url_parts(url)
    if not comma:
        return "no ',' between its media type and its data"
    if not data.strip():
        return "it holds no data"
    if is_base64 and re.fullmatch(_BASE64_HEAD, data[:_HEAD_CHARS]) is None:
        return "its data, marked base64, is not base64"
    # Unmarked data is percent-encoded bytes (RFC 2397), which is encoded again: an
    # image's base64 sent so would reach the provider as text, an image it cannot read.
    if not is_base64 and (
        media_type.lower() == "base64" or image_type(data) or data.startswith(_PDF_BASE64)
    ):
        return "its data is base64, but not marked so: write data:<media type>;base64,<data>"
    return None


def image_type(data: str) -> str | None:
    """The image type (PNG, JPEG, GIF or WebP: those OpenAI's and Anthropic's APIs
    take) that base64 `data`'s first bytes say, or None when they say none of them."""
    try:
        head = base64.b64decode(data[:16])
    except ValueError:  # not base64 (binascii.Error is a ValueError)
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _data_url(
    image: bytes | bytearray | memoryview | os.PathLike[str], media_type: str | None
) -> str:
    """An image or PDF file, or its bytes, as a `data:` URL: of the type its bytes say,
    else `media_type`, else (a file) the type its suffix says."""
    name = "the bytes given"
    if isinstance(image, os.PathLike):
        path = Path(image)
        name = repr(str(path))
        try:
            image = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"cannot read the image file {name}: {exc.strerror}") from None
        if media_type is None:
            import mimetypes  # only a file pays for it

            media_type = mimetypes.guess_type(path)[0]
    data = base64.b64encode(image).decode("ascii")
    media_type = image_type(data) or (PDF if data.startswith(_PDF_BASE64) else media_type)
    if media_type is None or not (media_type.startswith("image/") or media_type == PDF):
        raise ValueError(
            f"the image type of {name} is unknown: neither its bytes (PNG, JPEG, GIF, WebP, "
            "PDF) nor a file's suffix say it; give it as ImagePart(url=..., "
            "media_type='image/...' or 'application/pdf')"
        )
    return f"data:{media_type};base64,{data}"


def _a_number(value: Any) -> Any:
    """A number field's value as given, unless it is a bool or a str: pydantic would read
    True as 1 (`max_tokens=True` asked for one token) and "0.2" as 0.2, which the SDKs
    send as they are, for the provider to refuse."""
    if isinstance(value, bool | str):
        raise ValueError(f"should be a number, got {type(value).__name__} {value!r}")
    return value


def _a_list(value: Any, info: ValidationInfo) -> Any:
    """A list field's value as given, unless it is one item: pydantic would iterate a
    model as its fields (an error for each), and of a dict say only "Input should be a
    valid list"."""
    if isinstance(value, BaseModel | Mapping):
        name = info.field_name
        raise ValueError(f"{name} must be a list, even of one: {name}=[{_shown(value)}]")
    return value


def _shown(value: object) -> str:
    """A value's repr for an error message, cut short (an image may be megabytes)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}...{text[-10:]}"


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
    on the turn's text), or reasoning that came inside `<think>` tags in the content
    (`{"think_tags": true}`: it goes back there, `ChatOptions.reasoning_back`), or a
    block of Anthropic's own that no event carries, unsigned, its details the whole
    block (a `compaction` summary, a model `fallback`), or a Responses `compaction`
    item. None for reasoning that came as text and a signature alone (Anthropic's
    thinking blocks)."""


class ServerToolPart(_Frozen):
    """A tool the provider ran within the assistant's turn (web search, code execution,
    MCP): its call or its result, as the provider's own block. `StreamRecord.to_message()`
    keeps it where it came, for the wire that gave it: Anthropic continues a paused turn
    from it (`pause_turn`: "provide the response back as-is") and refuses a turn whose
    thinking blocks, once around it, were moved together. The other wires leave it out."""

    type: Literal["server_tool"] = "server_tool"
    block: dict[str, Any]


Part = Annotated[TextPart | ImagePart | ReasoningPart | ServerToolPart, Field(discriminator="type")]


class ToolCall(_Frozen):
    """A tool call the assistant made, as sent back in the conversation history."""

    # Neither may be empty: a tool message answers a call by its id (and one of "" was
    # refused deep in the body's building), and no wire takes a call without a name.
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = {}
    signature: str | None = None
    """The provider's opaque signature of the call, sent back as it came
    (`ToolRequest.to_call()` keeps it)."""
    details: dict[str, Any] | None = Field(default=None, exclude_if=lambda d: d is None)
    """The call block's own fields beyond its id, name and arguments, as the provider
    sent them, which its wire sends back with the call (`ToolRequest.to_call()` keeps
    them): an Anthropic `tool_use`'s `caller`, which names the code execution that made
    a programmatic call. Other wires leave them out."""
    after: int | None = Field(default=None, ge=0)
    """How many of the message's content parts came before this call in the turn;
    None: after all of them. `StreamRecord.to_message()` sets it for a call that came
    before some of the turn's reasoning or text, so that a wire whose blocks keep their
    order sends each call where it was: Anthropic refuses a tool-use turn whose
    thinking blocks were moved (thinking, call, thinking, call sent back as thinking,
    thinking, call, call: "thinking blocks ... cannot be modified")."""

    _after_number = field_validator("after", mode="before")(_a_number)

    @property
    def arguments_json(self) -> str:
        """The arguments as JSON text, as the OpenAI wires send them.

        Raises:
            ConfigError: arguments JSON cannot hold (a set, a datetime, NaN), as the
                request's other values are refused when its body is encoded.
        """
        try:
            return json.dumps(self.arguments, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"the request cannot be sent as JSON: the arguments of tool call "
                f"{self.id!r} ({self.name!r}): {exc}"
            ) from None


class Message(_Frozen):
    """One message of the conversation. Built with `Message.user(...)` and its
    siblings, or validated from an OpenAI-style dict (`openai_message`)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: list[Part] = []
    tool_calls: list[ToolCall] = []
    tool_call_id: str | None = None
    is_error: bool = False
    """A tool message whose content is the tool's failure, not its result: Anthropic's
    `is_error`, Gemini's `error` key; the OpenAI wires have no such field and send the
    content as it is."""

    @model_validator(mode="before")
    @classmethod
    def _openai_style(cls, data: Any) -> Any:
        return openai_message(data) if isinstance(data, Mapping) else data

    @model_validator(mode="after")
    def _answers_a_call(self) -> "Message":
        # Every wire needs it: OpenAI's `tool_call_id`, Anthropic's `tool_use_id`, the
        # Responses `call_id`, and Gemini finds the function's name by it.
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs its tool_call_id: the id of the call it answers")
        if self.is_error and self.role != "tool":
            raise ValueError("is_error is a tool message's: the result of a call that failed")
        return self

    @classmethod
    def system(cls, text: str) -> "Message":
        return cls(role="system", content=[TextPart(text=text)])

    @classmethod
    def user(cls, text: str, images: Sequence[ImageSource | ImagePart] | None = None) -> "Message":
        """The user's turn: its text, then its images (URLs, image files or bytes, or
        `ImagePart`s, as they are: one with its `detail`)."""
        if not isinstance(text, str):
            raise TypeError(
                f"Message.user takes its text as one str, got {type(text).__name__}: join "
                "the texts, and pass images as images=[...]"
            )
        if isinstance(images, str | bytes | bytearray | os.PathLike):  # one image, not a list
            raise TypeError(f"images must be a list: images=[{_shown(images)}]")
        parts: list[Part] = [TextPart(text=text)]
        parts += [
            image if isinstance(image, ImagePart) else ImagePart(url=image)
            for image in images or []
        ]
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
    def tool(
        cls, call_id: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> "Message":
        """The result of the call `call_id`: a str as it is, a dict or a list (any
        other JSON value) as its JSON text, as pydantic-ai sends a tool's return value
        (Gemini's wire sends a JSON object back as the structured `response`).
        `is_error`: the call failed, and `content` says how."""
        if not isinstance(content, str):
            try:
                content = json.dumps(content, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise TypeError(
                    f"Message.tool: the result is not JSON ({exc}): pass it as a str, "
                    "json.dumps(result, default=str) say"
                ) from None
        return cls(
            role="tool", content=[TextPart(text=content)], tool_call_id=call_id, is_error=is_error
        )

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [part for part in self.content if isinstance(part, ImagePart)]


class Tool(_Frozen):
    """A function the model may call: its name, what it does, and the JSON schema of
    its arguments. Validated from a dict of these fields, or of the openai SDK's tool
    shapes (`_openai_tool`)."""

    name: str = Field(min_length=1)
    """Letters, digits, `_` and `-` (Gemini also takes `.` and `:`), at most 128
    characters: what some provider takes. Each wire checks its own rule when it builds a
    body (`WireProtocol.tool_names`: OpenAI's 64 characters, Anthropic's no dots)."""
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @model_validator(mode="before")
    @classmethod
    def _openai_shape(cls, data: Any) -> Any:
        return _openai_tool(data) if isinstance(data, Mapping) else data

    @field_validator("parameters")
    @classmethod
    def _an_object(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        # Every provider takes a call's arguments as an object; OpenAI refuses another
        # type naming `tools[0].function.parameters`, and a retry would drop the tools.
        kind = parameters.get("type")
        if isinstance(kind, str) and kind.lower() != "object":
            raise ValueError(
                f"parameters is the JSON Schema of the call's arguments, an object, not "
                f"{kind!r}: name the value as a property, {{'type': 'object', 'properties': "
                f"{{'value': {{'type': {kind!r}}}}}, 'required': ['value']}}"
            )
        return parameters

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


class JsonSchema(_Frozen):
    """A JSON Schema the answer follows (`ChatRequest.response_format`): its name, the
    schema, what it is for, and whether OpenAI follows it strictly."""

    # Dumped as `schema`, the name it is given by, so a request's dump loads back.
    model_config = ConfigDict(
        frozen=True, extra="forbid", serialize_by_alias=True, validate_by_name=True
    )

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    """What the schema is called: OpenAI's wires require one ("Must be a-z, A-Z, 0-9, or
    contain underscores and dashes, with a maximum length of 64"); the others send none."""
    schema_: dict[str, Any] = Field(alias="schema")
    """The JSON Schema of the answer (given as `schema=`)."""
    description: str | None = None
    """What the answer is for, sent where the wire has a place for it (OpenAI's)."""
    strict: bool | None = None
    """OpenAI's `strict`: whether the answer follows the schema exactly (which then has
    to be in its strict subset: every property required, `additionalProperties: false`);
    unset, OpenAI's default (not strict). Anthropic and Gemini always follow the schema
    and take no such setting."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            name: str,
            schema: Mapping[str, Any],
            description: str | None = None,
            strict: bool | None = None,
        ) -> None: ...


MessageLike: TypeAlias = Message | Mapping[str, Any]
"""A `Message`, or an OpenAI-style message dict that validates into one."""

ToolChoiceLike: TypeAlias = Literal["auto", "required", "none"] | str | Mapping[str, Any]
"""A `ChatRequest.tool_choice`: a mode, a tool's name, or an SDK's dict of one of them."""

ResponseFormatLike: TypeAlias = Literal["json"] | JsonSchema | Mapping[str, Any] | type[BaseModel]
"""A `ChatRequest.response_format`: `"json"`, a `JsonSchema`, an SDK's dict of one of
them, or a pydantic model class (its JSON Schema)."""

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


TOOL_CHOICE_MODES = ("auto", "required", "none")
"""The modes of `ChatRequest.tool_choice`; any other value names a tool."""


def forces_a_call(choice: str | None) -> bool:
    """Whether a `ChatRequest.tool_choice` forces a tool call: `required` or a tool's
    name, not `auto`, `none` or unset."""
    return choice is not None and choice not in ("auto", "none")


# Anthropic's choice types as the field's modes; `tool` names one.
_ANTHROPIC_MODES = {"auto": "auto", "any": "required", "none": "none"}


def _sdk_tool_choice(choice: Mapping[str, Any]) -> str:
    """The `ChatRequest.tool_choice` an SDK's tool choice dict stands for: the openai
    SDK's named function (chat's `{"type": "function", "function": {"name": ...}}`, the
    Responses API's flat `{"type": "function", "name": ...}`), anthropic's `{"type":
    "auto" | "any" | "none"}` (`any` is `required`) and `{"type": "tool", "name": ...}`.

    Raises:
        ValueError: any other dict (OpenAI's `allowed_tools` and `custom`, a Responses
            built-in tool's choice, Anthropic's `disable_parallel_tool_use`, a key these
            shapes lack), which goes in params; a shape naming a mode, which the field
            would read as that mode.
    """
    kind = choice.get("type")
    kind = kind if isinstance(kind, str) else None
    rest = choice.keys() - {"type"}
    name: object = None
    if kind in _ANTHROPIC_MODES and not rest:
        return _ANTHROPIC_MODES[kind]
    if kind == "function" and rest == {"function"}:
        function = choice["function"]
        if isinstance(function, Mapping) and function.keys() == {"name"}:
            name = function["name"]
    elif kind in ("function", "tool") and rest == {"name"}:
        name = choice["name"]
    if isinstance(name, str) and name:
        if name in TOOL_CHOICE_MODES:
            raise ValueError(
                f"tool_choice {dict(choice)!r} names a tool the field reads as its mode "
                f"{name!r}: a tool named 'auto', 'required' or 'none' cannot be chosen by "
                "name; rename it"
            )
        return name
    if kind in ("auto", "any", "tool") and "disable_parallel_tool_use" in rest:
        flag = choice["disable_parallel_tool_use"]
        field = _sdk_tool_choice(
            {key: value for key, value in choice.items() if key != "disable_parallel_tool_use"}
        )
        raise ValueError(
            "Anthropic's disable_parallel_tool_use is a setting the field does not hold: pass "
            f"tool_choice={field!r}, params={{'disable_parallel_tool_use': {flag!r}}} (it joins "
            "the choice Anthropic is sent), or the whole dict as params={'tool_choice': ...} "
            "without the field"
        )
    raise ValueError(
        f"tool_choice {dict(choice)!r} is not a choice the field holds ('auto', 'required', "
        "'none', a tool's name, or an SDK's shape of one of them): pass it as "
        "params={'tool_choice': ...} without the field, in the form of the provider it is "
        "sent to"
    )


# Where the SDKs' output format dicts hold a JSON Schema's fields: the openai SDK's
# chat `{"type": "json_schema", "json_schema": {...}}`, the Responses `text.format` flat.
_SCHEMA_FIELDS = frozenset({"name", "schema", "description", "strict"})


def _sdk_response_format(given: Mapping[str, Any]) -> "Literal['json'] | JsonSchema | None":
    """The `ChatRequest.response_format` an SDK's output format dict stands for: `{"type":
    "text"}` (OpenAI's, the default) is none; `{"type": "json_object"}` is `"json"`; a
    JSON Schema as Chat Completions' `response_format` (`{"type": "json_schema",
    "json_schema": {"name", "schema", "description", "strict"}}`) or the Responses
    `text.format` (the same fields beside `type`; without a name, as Anthropic's
    `output_config.format`, named after the schema's title, else `response`) is a
    `JsonSchema`. A dict without `type` is `JsonSchema`'s own fields.

    Raises:
        ValueError: any other dict (another type, a key these shapes lack), which goes in
            params; Chat Completions' wrapper without a name.
    """
    kind = given.get("type")
    if kind is None:
        return JsonSchema.model_validate(given)
    rest = given.keys() - {"type"}
    if kind in ("text", "json_object") and not rest:
        return None if kind == "text" else "json"
    if kind == "json_schema":
        inner = given.get("json_schema")
        if rest == {"json_schema"} and isinstance(inner, Mapping):
            fields, wrapped = dict(inner), True  # Chat Completions' wrapper
        else:
            fields, wrapped = {key: value for key, value in given.items() if key != "type"}, False
        if "schema" in fields and fields.keys() <= _SCHEMA_FIELDS:
            if "name" not in fields and not wrapped:
                # Anthropic's `output_config.format`, which names no schema: after its
                # title, as a pydantic model's schema has it, for the wires that need one
                title = (
                    fields["schema"].get("title") if isinstance(fields["schema"], Mapping) else None
                )
                fields["name"] = schema_name(title if isinstance(title, str) else "response")
            if "name" not in fields:
                raise ValueError(
                    f"response_format {dict(given)!r} has no name: a JSON Schema needs one "
                    "(OpenAI's wires require it): add 'name'"
                )
            return JsonSchema.model_validate(fields)
    raise ValueError(
        f"response_format {dict(given)!r} is not a format the field holds ('json', a "
        "JsonSchema, or an SDK's shape of one of them: {'type': 'json_object'}, {'type': "
        "'json_schema', ...}): pass it as params without the field, in the form of the "
        "provider it is sent to"
    )


def _response_format(given: Any) -> Any:
    """What `ChatRequest.response_format` holds for `given`: an SDK's dict read
    (`_sdk_response_format`), a pydantic model class as its JSON Schema named after it."""
    if isinstance(given, Mapping):
        return _sdk_response_format(given)
    if isinstance(given, type) and issubclass(given, BaseModel):
        return JsonSchema.model_validate(
            {"name": schema_name(given.__name__), "schema": given.model_json_schema()}
        )
    if given is None or given == "json" or isinstance(given, JsonSchema):
        return given
    raise ValueError(  # said once, not as each member of the union refusing it
        f"response_format takes 'json' (any JSON object), a JsonSchema, an SDK's dict of "
        f"one ({{'type': 'json_object'}}, ...) or a pydantic model class, got {_shown(given)}; "
        "leave it unset for text"
    )


def schema_name(name: str) -> str:
    """`name` as a `JsonSchema.name`: each character OpenAI refuses as `_`, at most 64
    (a generic model class is `Page[int]`, a file `my weather.json`)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "schema"


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
    """`Tool`s, or dicts of its fields or of the openai SDK's function tool shapes; each
    name once (every provider refuses a name twice: "Tool names must be unique")."""
    tool_choice: Literal["auto", "required", "none"] | str | None = None
    """Whether the model calls a tool: `"auto"` (it decides, every provider's default
    with tools), `"required"` (it calls at least one), `"none"` (it answers in text),
    or a tool's name (it calls that tool). Each wire writes it in its own form (OpenAI
    chat's `tool_choice`, `{"type": "function", "function": {"name": ...}}` for a
    name; the Responses `tool_choice`; Anthropic's `{"type": "auto" | "any" | "none" |
    "tool"}`; Gemini's `toolConfig.functionCallingConfig` mode `AUTO`, `ANY` (with
    `allowedFunctionNames` for a name) or `NONE`). `"required"` or a name needs `tools`,
    a name one of them; the same setting also in params (`tool_choice`, Gemini's
    `toolConfig.functionCallingConfig`) is a `ConfigError` when the request is sent, and
    so is a forced choice with Anthropic's extended thinking, which it refuses. A forced
    choice forces a call on every request that carries it: the request that sends the
    result back needs `"auto"` (or none), or the model calls again. The modes win over
    a tool of the same name.

    The SDKs' dicts of these are read as the value they stand for: the openai SDK's
    `{"type": "function", "function": {"name": ...}}` and the Responses API's `{"type":
    "function", "name": ...}` as the name, anthropic's `{"type": "auto" | "any" |
    "none"}` as the mode (`any` is `"required"`) and `{"type": "tool", "name": ...}` as
    the name. Any other dict (OpenAI's `allowed_tools`, a Responses built-in tool's
    choice, Anthropic's `disable_parallel_tool_use`) is refused, to go in params
    (`{"tool_choice": ...}`, `{"disable_parallel_tool_use": True}` beside the field)."""
    response_format: Literal["json"] | JsonSchema | None = None
    """The form of the answer: plain text (unset), `"json"` (any JSON object: JSON mode),
    or a `JsonSchema` it follows. Each wire writes it in its own form: OpenAI chat's
    `response_format` (`{"type": "json_object"}`, `{"type": "json_schema", "json_schema":
    {...}}`; every chat preset), the Responses `text.format` (beside a `text.verbosity`
    given in params), Anthropic's `output_config.format` (a schema only: `"json"` is a
    `ConfigError` there), Gemini's `generationConfig.responseMimeType`
    `application/json` with `responseJsonSchema`. The same setting also in params
    (`response_format`, `text.format`, `output_config.format`, `output_format`,
    Gemini's `responseMimeType`, `responseSchema`, `responseJsonSchema`) is a
    `ConfigError` when the request is sent.

    The SDKs' dicts are read as what they stand for: `{"type": "json_object"}` as
    `"json"`, `{"type": "text"}` as unset, Chat Completions' `{"type": "json_schema",
    "json_schema": {"name", "schema", "description", "strict"}}` and the Responses
    `text.format` (`{"type": "json_schema", "name", "schema", ...}`) as a `JsonSchema`;
    a pydantic model class as its `model_json_schema()`, named after the class."""
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, gt=0)
    """The most tokens to generate (OpenAI's and Azure's chat `max_completion_tokens`,
    the compatible servers' `max_tokens`, Responses `max_output_tokens`, Anthropic
    `max_tokens`, Gemini `maxOutputTokens`)."""
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
            tools: Sequence[Tool | Mapping[str, Any]] = (),
            tool_choice: ToolChoiceLike | None = None,
            response_format: ResponseFormatLike | None = None,
            temperature: float | None = None,
            top_p: float | None = None,
            max_tokens: int | None = None,
            stop: str | list[str] | None = None,
            seed: int | None = None,
            presence_penalty: float | None = None,
            frequency_penalty: float | None = None,
            params: Mapping[str, Any] = ...,
        ) -> None: ...

    _lists = field_validator("messages", "tools", mode="before")(_a_list)
    _numbers = field_validator(
        "temperature",
        "top_p",
        "max_tokens",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        mode="before",
    )(_a_number)

    @field_validator("stop")
    @classmethod
    def _stop_text(cls, stop: str | list[str] | None) -> str | list[str] | None:
        # an empty sequence stops nowhere, or everywhere: `stop=os.environ.get("STOP", "")`
        if stop == "" or (isinstance(stop, list) and "" in stop):
            raise ValueError(
                "a stop sequence is empty: give the text to stop at, or leave stop unset"
            )
        return stop

    @field_validator("tools")
    @classmethod
    def _named_once(cls, tools: list[Tool]) -> list[Tool]:
        seen: set[str] = set()
        for tool in tools:
            if tool.name in seen:
                raise ValueError(f"tool name {tool.name!r} is given twice: each tool once")
            seen.add(tool.name)
        return tools

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _sdk_shapes(cls, choice: Any) -> Any:
        return _sdk_tool_choice(choice) if isinstance(choice, Mapping) else choice

    @field_validator("response_format", mode="before")
    @classmethod
    def _output_shapes(cls, given: Any) -> Any:
        return _response_format(given)

    @model_validator(mode="after")
    def _chosen_tool_offered(self) -> "ChatRequest":
        choice = self.tool_choice
        if not forces_a_call(choice):
            return self
        names = [tool.name for tool in self.tools]
        if not names:
            raise ValueError(
                f"tool_choice={choice!r} needs tools to choose from: offer them in "
                "ChatRequest.tools (for a provider's own tools in params, set its tool "
                "choice in params too)"
            )
        if choice != "required" and choice not in names:
            raise ValueError(
                f"tool_choice names {choice!r}, which is not among the tools ({', '.join(names)}): "
                "name one of them, or 'auto', 'required' or 'none'"
            )
        return self

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
    `detail` is kept for the OpenAI wires); an assistant's `refusal` (and its
    `refusal` parts) is its text, after any other (`StreamRecord.to_message()` says
    why); an assistant's `tool_calls` of type `function` have their JSON `arguments`
    parsed; `developer` is the system role (as OpenAI's newer models name it); keys
    set to None (as the openai SDK's dumps write `refusal`, `audio`, ...) are left
    out, and so are an assistant's `annotations` (the answer's url citations, in every
    dump of `choices[0].message`: output the API does not take back). `Message`'s own
    shape passes unchanged.

    Raises:
        ValueError: a content or tool call that cannot be read, naming the field.
    """
    message = {key: value for key, value in data.items() if value is not None}
    if message.get("role") == "assistant" and isinstance(message.get("annotations"), list):
        del message["annotations"]
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
    if not isinstance(url, str | bytes | os.PathLike):  # ImagePart reads a file or bytes
        raise ValueError(f"content[{n}].image_url must be {{'url': '<https or data URL>'}}")
    detail = image.get("detail") if isinstance(image, Mapping) else None
    return {"type": "image", "url": url, "detail": detail}


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


def _openai_tool(data: Mapping[str, Any]) -> dict[str, Any]:
    """A tool as `Tool`'s fields, from them or from the openai SDK's function tool
    shapes: Chat Completions' `{"type": "function", "function": {name, description,
    parameters, strict}}` and the Responses API's flat `{"type": "function", name,
    ...}`; the anthropic SDK's `input_schema` is the `parameters`. Keys set to None
    are left out.

    `strict` is read as what rxllm sends: every wire offers tools non-strict (Chat
    Completions' default; the Responses wire says `strict: false`), so `strict: true`,
    whose schema adherence would be lost, is refused rather than dropped.

    Raises:
        ValueError: a tool of another type (the provider's own: `web_search`, `custom`,
            ...), or `strict: true`; each saying how to send it instead.
    """
    fields = dict(data)
    kind = fields.pop("type", "function")
    if kind == "custom" and "input_schema" in fields:
        kind = "function"  # the anthropic SDK's ToolParam says `custom` of its functions
    fields.pop("cache_control", None)  # the anthropic SDK's: rxllm sets no prompt cache
    if kind != "function":
        raise ValueError(
            f"a tool of type {kind!r} is the provider's own, not a function: send the "
            "provider's tool list as it takes it, in ChatRequest.params={'tools': [...]}, "
            "with no ChatRequest.tools (the two are not merged)"
        )
    function = fields.pop("function", None)
    if function is not None:
        if not isinstance(function, Mapping):
            raise ValueError("function must be {'name': ..., 'parameters': ...}")
        fields = {**function, **fields}  # what else the wrapper holds is still validated
    fields = {key: value for key, value in fields.items() if value is not None}
    if "input_schema" in fields and "parameters" not in fields:  # the anthropic SDK's name
        fields["parameters"] = fields.pop("input_schema")
    if fields.pop("strict", False):
        raise ValueError(
            "strict: true is not sent: rxllm offers tools non-strict on every wire. For "
            "OpenAI's strict mode, send the tool list as the wire takes it, in "
            "ChatRequest.params={'tools': [...]}, with no ChatRequest.tools"
        )
    return fields
