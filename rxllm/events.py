"""The normalized event vocabulary: every provider's stream ends up as these."""

import math
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from rxllm.errors import error_for
from rxllm.request import Message, Part, ReasoningPart, ServerToolPart, TextPart, ToolCall

__all__ = [
    "Attempt",
    "Cancelled",
    "Done",
    "ErrorInfo",
    "ErrorKind",
    "Event",
    "EventAdapter",
    "Failed",
    "Citation",
    "ReasoningDelta",
    "Refusal",
    "Retry",
    "ServerToolCall",
    "ServerToolResult",
    "StopReason",
    "StreamRecord",
    "IS_TERMINAL",
    "TERMINAL_TYPES",
    "TextDelta",
    "ToolRequest",
    "ToolStart",
    "Usage",
    "UsageUpdate",
    "commits",
    "failed",
]

StopReason: TypeAlias = Literal["stop", "length", "tool_use", "content_filter", "pause", "other"]
ErrorKind: TypeAlias = Literal[
    "http",
    "rejected",
    "stream_error",
    "malformed_tool_arguments",
    "truncated",
    "stalled",
    "transport",
    "policy",
    "protocol",
    "limit",
]


_new = object.__new__
# BaseModel's own slots, set through their descriptors: `object.__setattr__(obj, name,
# value)` looks the name up along the class's MRO on every call (0.3 us of an event's
# 0.7 us), and the hot path builds an event per token.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

# Call sites name their fields in a few fixed orders; past this many, sets are not shared.
_MAX_FIELDS_SETS = 64


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    _defaults: ClassVar[dict[str, Any]] = {}
    _factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    _fields_sets: ClassVar[dict[tuple[str, ...], set[str]]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # Every field in declaration order (so repr and dumps read as usual); the
        # required ones are placeholders that `make`'s caller always overrides.
        cls._defaults = {
            name: None if field.is_required() or field.default_factory else field.default
            for name, field in cls.model_fields.items()
        }
        cls._fields_sets = {}
        # A default factory runs per object (a shared list would be one list for all).
        cls._factories = {
            name: field.default_factory  # type: ignore[misc]
            for name, field in cls.model_fields.items()
            if field.default_factory is not None
        }

    @classmethod
    def make(cls, **values: Any) -> Self:
        """Build without validation, for the hot path: the caller vouches for the types.

        Cheaper than both validation and `model_construct` (which resolves defaults and
        aliases on every call); defaults are resolved once per class.
        """
        obj = _new(cls)
        fields = cls._defaults.copy()  # copy and update: a third cheaper than {**a, **b}
        fields.update(values)
        if cls._factories:
            for name, factory in cls._factories.items():
                if name not in values:
                    fields[name] = factory()
        _set_dict(obj, fields)
        # One fields set per combination of names, shared: pydantic changes it only on
        # assignment (refused: frozen) and copies it before `model_copy` updates it. A
        # set per event was half the objects a stream keeps while its events wait for
        # the consumer, and so half of what the garbage collector walks at scale.
        key = tuple(values)
        fields_set = cls._fields_sets.get(key)
        if fields_set is None:
            fields_set = set(values)
            if len(cls._fields_sets) < _MAX_FIELDS_SETS:
                cls._fields_sets[key] = fields_set
        _set_fields_set(obj, fields_set)
        _set_extra(obj, None)
        _set_private(obj, None)
        return obj


class Usage(_Frozen):
    """Token accounting. `output_tokens` includes reasoning; cache reads and writes are
    counted apart from `input_tokens`, so `total_tokens` is the sum of the four."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def of(
        cls,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        reasoning_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        cost_usd: float | None = None,
    ) -> "Usage":
        """Build a usage whose total is consistent with its parts (no validation cost).
        Counts come from the wire, so each is made a whole, finite, non-negative number
        (a float, `inf`, a bool or a string from a hostile body counts as 0 or is cut)."""
        input_tokens = token_count(input_tokens)
        output_tokens = token_count(output_tokens)
        reasoning_tokens = token_count(reasoning_tokens)
        cache_read_tokens = token_count(cache_read_tokens)
        cache_write_tokens = token_count(cache_write_tokens)
        if (
            not isinstance(cost_usd, int | float)
            or isinstance(cost_usd, bool)
            or not math.isfinite(cost_usd)
            or cost_usd < 0
        ):
            cost_usd = None
        return cls.make(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            reasoning_tokens=reasoning_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            total_tokens=input_tokens + output_tokens + cache_read_tokens + cache_write_tokens,
            cost_usd=cost_usd,
        )


def token_count(value: object) -> int:
    """A count from the wire as a whole number: anything but a whole number or a finite
    float (a string, a bool, NaN, a negative number) is 0, so no sum fails on it."""
    if type(value) is int:
        return max(value, 0)
    if isinstance(value, float) and math.isfinite(value):
        return max(int(value), 0)
    return 0


class ErrorInfo(_Frozen):
    """What went wrong, with the provider's own structured fields where it sent them."""

    kind: ErrorKind
    message: str
    status: int | None = None
    provider: str
    retryable: bool = False
    """Whether the same request may succeed later (rate limits, overload, transport)."""
    should_retry: bool | None = None
    """What the server said of sending the same request again (`x-should-retry: true`
    or `false` on a rejection), or None where it said neither; `false` too where the
    transport knows (a certificate that failed its check fails it again). It outranks
    the status, as in the openai and anthropic SDKs; `retryable` is the conclusion drawn
    from both."""
    raw: str | None = None
    """The whole error body (read to its end, up to a cap) or the error event's data."""
    param: str | None = None
    """The request parameter the provider named (OpenAI's structured `param`)."""
    code: str | None = None
    """The provider's error code or type (`unsupported_parameter`, `rate_limit_exceeded`)."""
    retry_after: float | None = None
    """Seconds to wait before trying again, from `Retry-After` or the body."""
    request_id: str | None = None
    """The provider's request id (a response header), for support tickets."""


class _Event(_Frozen):
    provider: str
    attempt: int = 1

    def _repr_html_(self) -> str:
        """Jupyter's rich display (`rxllm.display`)."""
        from rxllm.display import event_html

        return event_html(self)  # type: ignore[arg-type]

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text/plain: `repr`, bounded (`rxllm.display.plain`): a provider's
        10 MB of text or arguments nested 960 deep must not fill or crash a notebook."""
        from rxllm.display import plain

        printer.text(plain(self))


class TextDelta(_Event):
    type: Literal["text"] = "text"
    text: str
    phase: str | None = Field(default=None, exclude_if=lambda phase: phase is None)
    """The Responses API's phase of the message the text is in (gpt-5.4 and later:
    `commentary` for a preamble, `final_answer`), which goes back with it (`to_message()`):
    the model takes a preamble sent back without it for a final answer. None elsewhere,
    and left out of the event's JSON then."""

    @classmethod
    def of(cls, provider: str, attempt: int, text: str) -> Self:
        """`make(provider=..., attempt=..., text=...)` at half its cost: the event every
        token of a streamed answer builds."""
        obj = _new(cls)
        fields = {
            "provider": provider,
            "attempt": attempt,
            "type": "text",
            "text": text,
            "phase": None,
        }
        _set_dict(obj, fields)
        _set_fields_set(obj, _TEXT_FIELDS_SET)
        _set_extra(obj, None)
        _set_private(obj, None)
        return obj


_TEXT_FIELDS_SET = {"provider", "attempt", "text"}  # shared, as `make` shares its sets


class ReasoningDelta(_Event):
    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    details: dict[str, Any] | None = None
    """The block's own fields beyond its text and signature (`ReasoningPart.details`),
    on the delta that ends the block: a Responses reasoning item's, an OpenRouter
    reasoning detail's. A delta with a signature or details closes its block."""


class ToolStart(_Event):
    type: Literal["tool_start"] = "tool_start"
    call_id: str
    name: str
    index: int
    signature: str | None = None
    """The provider's opaque signature of this call (Gemini's `thoughtSignature`)."""
    details: dict[str, Any] | None = Field(default=None, exclude_if=lambda d: d is None)
    """The call block's own fields beyond its id, name and arguments (`ToolCall.details`)."""


class ToolRequest(_Event):
    type: Literal["tool_request"] = "tool_request"
    call_id: str
    name: str
    index: int
    arguments: dict[str, Any]
    signature: str | None = None
    """The provider's opaque signature of this call, to send back with it in history
    (Gemini 3 rejects a follow-up turn whose function call lost its signature)."""
    details: dict[str, Any] | None = Field(default=None, exclude_if=lambda d: d is None)
    """The call block's own fields beyond its id, name and arguments, as the provider
    sent them, to send back with it (`ToolCall.details`): an Anthropic `tool_use`'s
    `caller`. None elsewhere, and left out of the event's JSON then."""

    def to_call(self, after: int | None = None) -> ToolCall:
        """This request as the assistant's tool call in the next request's history
        (`after`: where it goes among the message's content, `ToolCall.after`)."""
        return ToolCall(
            id=self.call_id,
            name=self.name,
            arguments=self.arguments,
            signature=self.signature,
            details=self.details,
            after=after,
        )


class Refusal(_Event):
    """The model declined (OpenAI `delta.refusal`, Responses `refusal` parts): never
    mixed into `text`."""

    type: Literal["refusal"] = "refusal"
    text: str


class Citation(_Event):
    """A source the answer cites (url_citation annotations, Anthropic citations,
    Gemini grounding chunks)."""

    type: Literal["citation"] = "citation"
    url: str
    title: str | None = None
    cited_text: str | None = None


class ServerToolCall(_Event):
    """A tool the provider runs itself (web search, code execution, MCP, file search):
    shown, never dispatched."""

    type: Literal["server_tool_call"] = "server_tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw: dict[str, Any] | None = Field(default=None, exclude_if=lambda raw: raw is None)
    """The provider's own block, as it goes back in the turn (`to_message()`): set by a
    wire that takes it back (Anthropic's `server_tool_use` and `mcp_tool_use`); None,
    and left out of the event's JSON, elsewhere."""


class ServerToolResult(_Event):
    """A provider-run tool's result, as the provider reported it (its JSON)."""

    type: Literal["server_tool_result"] = "server_tool_result"
    call_id: str
    name: str
    content: Any = None
    raw: dict[str, Any] | None = Field(default=None, exclude_if=lambda raw: raw is None)
    """The provider's own block, as it goes back in the turn (`to_message()`): set by a
    wire that takes it back (Anthropic's `*_tool_result` blocks); None, and left out of
    the event's JSON, elsewhere."""
    is_error: bool = Field(default=False, exclude_if=lambda is_error: not is_error)
    """The provider said its tool failed (a web search's error code, an MCP call's
    error, code that ran out of time): `content` is what it said of the failure. False,
    and left out of the event's JSON, for a result it gave as one."""


class UsageUpdate(_Event):
    type: Literal["usage"] = "usage"
    usage: Usage


class Retry(_Event):
    """A rejection before anything was committed was absorbed, and another attempt
    starts: informational, commits nothing. `provider` and `attempt` name the attempt
    that was rejected."""

    type: Literal["retry"] = "retry"
    reason: ErrorInfo
    next_attempt: int
    next_provider: str
    dropped: list[str] = Field(default_factory=list)
    """Body keys the next attempt no longer sends (relative to the full request), and the
    parts inside the others it no longer sends (`reasoning.effort`, `tools[0]`)."""
    images_removed: int = 0
    """Images the next attempt replaces with a notice."""
    delay: float = 0.0
    """Seconds waited before the next attempt (backoff honouring `retry_after`)."""


class Done(_Event):
    type: Literal["done"] = "done"
    stop_reason: StopReason
    raw_stop_reason: str | None = None
    model: str | None = None
    """The model that served the turn, when the wire said so (may differ from the request)."""
    response_id: str | None = None
    """The provider's id of this response (`chatcmpl-...`, `msg_...`, `resp_...`, Gemini's
    `responseId`), when the wire said so."""
    container: str | None = Field(default=None, exclude_if=lambda c: c is None)
    """The provider's container the turn's code ran in (Anthropic's `container.id`).
    The next request names it to continue there (`params={"container": ...}`), and must
    when the turn ended on a call that code made (programmatic tool calling: "container_id
    is required when there are pending tool uses generated by code execution with
    tools"). None elsewhere, and left out of the event's JSON then."""


class Failed(_Event):
    type: Literal["error"] = "error"
    error: ErrorInfo


class Cancelled(_Event):
    type: Literal["cancelled"] = "cancelled"
    reason: str = "cancelled by caller"


Event: TypeAlias = Annotated[
    TextDelta
    | ReasoningDelta
    | ToolStart
    | ToolRequest
    | Refusal
    | Citation
    | ServerToolCall
    | ServerToolResult
    | UsageUpdate
    | Retry
    | Done
    | Failed
    | Cancelled,
    Field(discriminator="type"),
]
EventAdapter: TypeAdapter[Event] = TypeAdapter(Event, config=ConfigDict(defer_build=True))

TERMINAL_TYPES = (Done, Failed, Cancelled)
TERMINAL_TYPE_SET: frozenset[type] = frozenset(TERMINAL_TYPES)


class _Terminality(dict[type, bool]):
    """Whether an event of a class ends its stream, learned once per class: one dict
    lookup per event, where `isinstance` on pydantic's classes (ABCs) costs five times
    more, and a subclass of a terminal class (a user's own `Done`) is terminal too."""

    def __missing__(self, cls: type) -> bool:
        terminal = self[cls] = issubclass(cls, TERMINAL_TYPES)
        return terminal


IS_TERMINAL: dict[type, bool] = _Terminality()
"""`IS_TERMINAL[type(event)]`: whether `event` is `done`, `error` or `cancelled`."""
"""For `type(event) in ...` on the hot path, cheaper than `isinstance` with a tuple."""


def failed(
    provider: str,
    kind: ErrorKind,
    message: str,
    *,
    attempt: int = 1,
    status: int | None = None,
    retryable: bool = False,
    raw: str | None = None,
    **fields: Any,
) -> Failed:
    """The terminal error event, built in one call (`fields`: ErrorInfo's optional ones)."""
    info = ErrorInfo.make(
        kind=kind,
        message=message,
        status=status,
        provider=provider,
        retryable=retryable,
        raw=raw,
        **fields,
    )
    return Failed.make(provider=provider, attempt=attempt, error=info)


def unterminated(provider: str, attempt: int = 1, request_id: str | None = None) -> Failed:
    """`error(kind="truncated")` for a stream that ended without its provider's terminal
    marker: whoever notices it (the normalizer of the attempt, or `settle_once` for a
    source of another kind) says it so."""
    message = f"the stream from {provider} ended without its terminal marker"
    return failed(
        provider, "truncated", message, attempt=attempt, retryable=True, request_id=request_id
    )


def named_call(call_id: str, name: str) -> str:
    """How an error's message names the tool call it is about, `tool call '<id>'
    ('<name>')`: every producer words it so, and the UI message stream finds the call
    of a `malformed_tool_arguments` error by it (`ErrorInfo` has no call field)."""
    return f"tool call {call_id!r} ({name!r})"


def commits(event: object) -> bool:
    """Whether an event commits its attempt: output the user may already have seen.
    Everything but the terminal events and `retry` does."""
    return not isinstance(event, Done | Failed | Cancelled | Retry)


class Attempt(_Frozen):
    number: int
    provider: str
    dropped: list[str] = Field(default_factory=list)
    images_removed: int = 0
    status: int | None = None
    error: str | None = None
    committed: bool = False
    duration: float = 0.0
    """Seconds from the attempt's start to its end (its rejection or the terminal)."""


Output: TypeAlias = Annotated[
    TextPart | ReasoningPart | ToolRequest | ServerToolCall | ServerToolResult,
    Field(discriminator="type"),
]
"""A part of `StreamRecord.output`."""


class StreamRecord(_Frozen):
    provider: str
    requested_model: str | None = None
    model: str | None = None
    text: str = ""
    reasoning: str = ""
    reasoning_parts: list[ReasoningPart] = Field(default_factory=list)
    """The reasoning as the provider delimited it: each block with the signature and
    details that closed it (Anthropic's thinking and redacted thinking, a Responses
    reasoning item, an OpenRouter reasoning detail), for `to_message()`."""
    refusal: str = ""
    """What the model said in declining, apart from `text`."""
    tool_calls: list[ToolRequest] = Field(default_factory=list)
    output: list[Output] = Field(default_factory=list)
    """The turn's text, reasoning and tool calls in the order they came: each run of
    text (between the other parts), each reasoning part, each tool request, and each
    provider-run tool's call and result that its wire takes back (`raw`).
    `to_message()` sends the turn back in this order."""
    citations: list[Citation] = Field(default_factory=list)
    server_tools: list[ServerToolCall | ServerToolResult] = Field(default_factory=list)
    """The provider-run tool calls and their results, in order."""
    usage: Usage | None = None
    terminal: Done | Failed | Cancelled
    attempts: list[Attempt] = Field(default_factory=list)
    time_to_first_event: float | None = None
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the turn ended in `done` (not `error`, not `cancelled`)."""
        return isinstance(self.terminal, Done)

    def to_message(self) -> Message:
        """This turn as the assistant's message in the next request's history: its
        signed reasoning, its text, its tool calls (each with its signature). An agent
        loop appends it, then one `Message.tool(...)` per call.

        A refusal the model wrote (OpenAI's, which its chat API takes back on the
        assistant message) goes back as the assistant's text, after any text, so the
        model sees that it declined: an empty turn would be left out of the history.
        Every wire takes text, while only OpenAI's chat wire has a `refusal` field (an
        endpoint that validates bodies strictly, as Mistral does, would reject it). A
        refusal that came with a `content_filter` stop does not go back: it is the
        provider's account of its filter (Anthropic's `stop_details.explanation`), not
        the model's words, and Anthropic asks for the refused turn to be removed or
        rephrased before the conversation goes on."""
        refusal = self.refusal
        if isinstance(self.terminal, Done) and self.terminal.stop_reason == "content_filter":
            refusal = ""
        if not self.output:  # a record built by hand, or by an earlier version
            return Message.assistant(
                "\n\n".join(part for part in (self.text, refusal) if part),
                tool_calls=[call.to_call() for call in self.tool_calls],
                reasoning=self.reasoning_parts,
            )
        content: list[Part] = []
        calls: list[tuple[ToolRequest, int]] = []  # each call, and the parts before it
        for part in self.output:
            if isinstance(part, ToolRequest):
                calls.append((part, len(content)))
            elif isinstance(part, ServerToolCall | ServerToolResult):
                if part.raw is not None:
                    content.append(ServerToolPart(block=part.raw))
            elif part.text or isinstance(part, ReasoningPart):
                content.append(part)
        if refusal:
            last = content[-1] if content else None
            if isinstance(last, TextPart):
                content[-1] = TextPart(text=f"{last.text}\n\n{refusal}", phase=last.phase)
            else:
                content.append(TextPart(text=refusal))
        tool_calls = [
            call.to_call(after=before if before < len(content) else None) for call, before in calls
        ]
        return Message(role="assistant", content=content, tool_calls=tool_calls)

    def raise_for_error(self) -> Self:
        """Raise the turn's error as a `rxllm.ProviderError` subclass (`RateLimitError`,
        `AuthenticationError`, `APITimeoutError`, ...; `rxllm.errors`), with the
        `ErrorInfo` as `.info` and this record as `.record`. A turn that ended in `done`
        or was `cancelled` (by its caller) is returned as it is:
        `text = (await p.complete(req)).raise_for_error().text`."""
        if isinstance(self.terminal, Failed):
            raise error_for(self.terminal.error, self)
        return self

    def _repr_html_(self) -> str:
        """Jupyter's rich display (`rxllm.display`)."""
        from rxllm.display import record_html

        return record_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text/plain: `repr`, bounded (`rxllm.display.plain`)."""
        from rxllm.display import plain

        printer.text(plain(self))
