"""rxllm events as the Vercel AI SDK's UI message stream (SSE), for `useChat` and friends.

Field names and rules follow the `ai` package (5.0.92 and later, 6.x): its chunk
schema in `packages/ai/src/ui-message-stream/ui-message-chunks.ts` and the way
`processUIMessageStream` reads them. The client throws on a delta before its start
and on output for a tool call it has not seen; its `finishReason` enum has no
`pause` (and 6.x no `unknown`); until 5.0.2xx, and in 6.0.0, the schema is strict, so
a key it does not list refuses the chunk (before 5.0.92, `finish` has no
`finishReason`). Everything here is built so none of that is sent.

`UIMessageEncoder` is the pure fold, one event in, the parts to send out; it holds
everything a message needs to stay consistent (open blocks, block ids, seen calls),
so earlier events can be folded through it unsent (a resume) and the ids repeat:
`fold_json` does that from the log's stored JSON, without building an event or a part
for the deltas that make up most of a turn.
`ui_message_stream` drives it over a live Observable or an async iterable, adding
`[DONE]`, `id:` lines for log entries and keep-alive comments.
"""

from __future__ import annotations

import asyncio
import json
import math
import reprlib
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Mapping,
)
from types import MappingProxyType
from typing import Any, Final, TypeAlias

from loguru import logger
from pydantic_core import from_json
from reactivex import Observable, abc
from reactivex.scheduler.eventloop import AsyncIOScheduler

from rxllm.degradation import too_long
from rxllm.events import (
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
    TextDelta,
    ToolRequest,
    ToolStart,
    UsageUpdate,
    _Event,
    named_call,
)
from rxllm.fragments import is_high_half, whole_characters
from rxllm.operators._args import check_callable, check_seconds, check_str
from rxllm.serving.event_json import json_or_none, load_event

__all__ = [
    "DONE_FRAME",
    "FINISH_REASONS",
    "KEEPALIVE_FRAME",
    "UI_MESSAGE_STREAM_HEADERS",
    "Part",
    "UIMessageEncoder",
    "encode_frame",
    "entry_position",
    "generic_error_text",
    "ui_message_stream",
]

Part: TypeAlias = dict[str, Any]
"""One UI message chunk, as its JSON object (`{"type": "text-delta", "id": "t1", ...}`)."""

UI_MESSAGE_STREAM_HEADERS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-vercel-ai-ui-message-stream": "v1",
        # nginx buffers proxied responses unless told not to: the stream would stall.
        "x-accel-buffering": "no",
    }
)
"""The response headers of a UI message stream (`ui-message-stream-headers.ts`), but
`connection: keep-alive`: a hop-by-hop header the server sets itself (and HTTP/2
forbids)."""

FINISH_REASONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "stop": "stop",
        "length": "length",
        "tool_use": "tool-calls",
        "content_filter": "content-filter",
        # The client knows no `pause`: the raw reason rides in messageMetadata.rxllm.
        "pause": "other",
        "other": "other",
    }
)
"""rxllm's `stop_reason` -> the `finishReason` the `ai` client accepts."""

DONE_FRAME: Final = b"data: [DONE]\n\n"
KEEPALIVE_FRAME: Final = b": keep-alive\n\n"
"""An SSE comment: proxies and load balancers see traffic, the client ignores it."""

STREAM_FAILED: Final = "The stream failed."
"""The errorText when the source itself breaks (a bug): its exception is not sent."""
STREAM_CUT: Final = "The stream ended without a terminal event."
TOOL_FAILED: Final = "The provider's tool failed."
"""The errorText of a provider-run tool that failed without a word of why."""


_FAILED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "http": "The model provider refused the request",
        "rejected": "The model provider refused the request",
        "stream_error": "The model provider reported an error",
        "malformed_tool_arguments": "The model wrote a tool call that could not be read",
        "truncated": "The model provider's answer was cut off",
        "stalled": "The model provider stopped responding",
        "transport": "The model provider could not be reached",
        "policy": "The server refused to connect to the model provider",
        "protocol": "The model provider's answer could not be read",
        "limit": "The answer went past the server's limits",
    }
)
"""What failed, by the error's kind, when its status says nothing more."""

_FAILED_WITH_STATUS: Final[Mapping[int, str]] = MappingProxyType(
    {
        401: "The model provider refused the server's access",
        402: "The model provider refused the server's access",
        403: "The model provider refused the server's access",
        404: "The model provider does not know the model or its endpoint",
        408: "The model provider timed out",
        413: "The request is too large for the model provider",
        503: "The model provider is overloaded",
        529: "The model provider is overloaded",  # Anthropic's `overloaded_error`
    }
)


def generic_error_text(info: ErrorInfo) -> str:
    """What an error says to the browser by default: what failed, by the error's kind,
    status and `retryable` (then "; try again."), and nothing the provider or the
    server said. A provider's message can name the account (Groq's 429 names the
    organization's id), an upstream URL, or a host and port the server connects to;
    the `ai` package's own server masks an error unless told otherwise
    (`createUIMessageStream` and `toUIMessageStream`: `onError = () => "An error
    occurred."`, "prevent leaking server error details to the client by default",
    from 5.0.2xx and in later 6.x). Pass `error_text=lambda info: info.message` to send
    the provider's words instead."""
    return f"{_what_failed(info)}{'; try again.' if info.retryable else '.'}"


def _what_failed(info: ErrorInfo) -> str:
    if info.kind not in ("http", "rejected", "stream_error"):
        return _FAILED[info.kind]
    if too_long(info):
        return "The conversation is too long for the model"
    status = info.status
    if status is None:
        return _FAILED[info.kind]
    if status == 429:
        return "The model provider is busy" if info.retryable else "A usage limit was reached"
    if status < 400:  # a redirect not followed
        return _FAILED["protocol"]
    if status >= 500 and status not in _FAILED_WITH_STATUS:
        return "The model provider had an error"
    return _FAILED_WITH_STATUS.get(status, _FAILED[info.kind])


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _finite(value: Any) -> Any:
    """`value` with NaN and the infinities as None. Python's JSON reads and writes them
    (`NaN`), JSON does not: a browser's `JSON.parse` refuses the frame, and the client
    the whole stream. `null` is what the SDK's own server, `JSON.stringify`, writes."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _frame_bytes(text: str) -> bytes:
    """UTF-8 of JSON text; a lone surrogate (a JSON escape of half a character)
    becomes U+FFFD and a pair split in two code units is joined."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return whole_characters(text).encode()


def encode_frame(part: Part) -> bytes:
    """`data: <compact JSON>\\n\\n`, always valid UTF-8 and valid JSON (a non-finite
    number, which a provider's body may hold, is `null`)."""
    try:
        text = _dumps(part)
    except ValueError:  # NaN or an infinity: rare, so the walk is paid only then
        text = _dumps(_finite(part))
    return b"data: " + _frame_bytes(text) + b"\n\n"


def entry_position(entry_id: str) -> tuple[int, int]:
    """A log entry id (a Redis stream id, `<ms>-<seq>`, or `<ms>`) as comparable numbers."""
    ms, _, seq = entry_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        raise ValueError(f"not a log entry id (<ms>-<seq>): {entry_id!r}") from None


def _signs_a_part(event: ReasoningDelta) -> bool:
    """Whether a reasoning event is only Gemini's signature of a part: no text, and
    details that are the part's fields (`{}` for a text part, `{"thought": true}`,
    `{"functionCall": true}`, ...). Every other wire's details are a block of its own,
    named by its `type` (a Responses item, an OpenRouter detail, Anthropic's
    compaction or fallback)."""
    details = event.details
    return (
        not event.text
        and not event.redacted
        and event.signature is not None
        and details is not None
        and "type" not in details
    )


_PROVIDER_TOOL: Final[Mapping[str, bool]] = MappingProxyType(
    {"providerExecuted": True, "dynamic": True}
)
"""The keys of every chunk of a tool the provider runs (`server_tool_*`). It is not one
of the app's tools, so it is dynamic, as the SDK's own server sends a provider-executed
tool its tool set does not list (`stream-text.ts`, `toUIMessageStream`): a
`dynamic-tool` part, which a typed UI renders by its `toolName` and `validateUIMessages`
with the app's tools accepts. A static `tool-<name>` part is refused there ("No tool
schema found for tool part web_search"), and the client and such a validation disagree
on the part's type (later versions turn a finished one dynamic). Not on a result for a
call the client holds as the app's own: that part is static (`_server_tool_result`)."""


class UIMessageEncoder:
    """The fold of one assistant message: `parts(event)` returns the UI message chunks
    the event adds, `frames(event)` the same as SSE bytes (with `[DONE]` after the
    terminal). Deterministic: the same events give the same parts, ids included
    (`t1`, `r1`, `s1`, ... in event order), so a replay from the first event repeats
    them; fold earlier events with `parts` and send only what follows.

    - A text, reasoning or refusal block ends (`*-end`) before another content kind
      and before the terminal parts. Citations do not end a text block: a source
      annotates the text around it (the SDK's own `streamText` sends them inside an
      open block), and ending it would cut the answer into pieces.
    - A delta ending in half a UTF-16 surrogate pair keeps that half for the next
      delta of its block; one left at the block's end is sent as U+FFFD.
    - `error_text(info)`, a str, is the only text of an error that is sent (default:
      `generic_error_text`, what failed, never the provider's words; its `message`
      with `error_text=lambda info: info.message`), in the `error` part, the
      `tool-input-error` of each call left open and each `data-rxllm-retry`; `raw`
      never is, but the input text of the call a
      `malformed_tool_arguments` error names: that call's `tool-input-error` input,
      as the SDK's own server sends it. Its facts, `kind`, `status`, `retryable` and
      `retry_after`, go before the `error` part as the message's metadata
      (`rxllm.error`), so a UI can offer "try again" only when it may help.
    - A provider-run tool that failed (`ServerToolResult.is_error`) is a
      `tool-output-error`, its errorText what the provider sent as the tool's result
      (`_tool_error`): the tool's output, not an `ErrorInfo`.
    - `retries=True` sends each absorbed rejection as a transient `data-rxllm-retry`.
    - An event after the terminal is dropped and logged.
    """

    __slots__ = (
        "_block",
        "_block_id",
        "_calls",
        "_counts",
        "_delta_prefix",
        "_details",
        "_error_text",
        "_handlers",
        "_held",
        "_message_id",
        "_pending",
        "_phase",
        "_redacted",
        "_retries",
        "_server_calls",
        "_signature",
        "_started",
        "_text_signature",
        "_unclosed",
        "finished",
    )

    def __init__(
        self,
        message_id: str | None = None,
        *,
        error_text: Callable[[ErrorInfo], str] = generic_error_text,
        retries: bool = False,
    ) -> None:
        if message_id is not None:
            check_str("message_id", message_id)  # the client refuses another `messageId`
        check_callable("error_text", error_text)
        self._message_id = message_id
        self._error_text = error_text
        self._retries = retries
        self._started = False
        self.finished = False
        """Whether the terminal event has been folded (nothing follows it)."""
        self._block: str | None = None  # "text" | "reasoning" | "refusal"
        self._block_id = ""
        self._phase: str | None = None  # the open text block's `TextDelta.phase`
        self._delta_prefix = b""  # the frame of a text delta in the open block, up to its text
        self._held = ""  # a high surrogate waiting for its pair
        self._signature: str | None = None
        self._details: dict[str, Any] | None = None
        self._redacted = False
        # The last reasoning block was ended by another kind before a signature or
        # details closed it: a later close is that block's (`_reasoning`).
        self._unclosed = False
        # Gemini's signature of a text part, for the text block's end (`_reasoning`)
        self._text_signature: dict[str, Any] | None = None
        self._counts = {"t": 0, "r": 0, "s": 0}
        self._pending: dict[str, str] = {}  # call id -> tool name, input not yet complete
        self._calls: set[str] = set()  # call ids whose input the client has
        self._server_calls: set[str] = set()  # those of them the provider runs (dynamic)
        self._handlers: dict[type, Callable[[Any, list[Part]], None]] = {
            TextDelta: self._text,
            ReasoningDelta: self._reasoning,
            Refusal: self._refusal,
            ToolStart: self._tool_start,
            ToolRequest: self._tool_request,
            ServerToolCall: self._server_tool_call,
            ServerToolResult: self._server_tool_result,
            Citation: self._citation,
            UsageUpdate: self._usage,
            Retry: self._retry,
            Done: self._done,
            Failed: self._failed,
            Cancelled: self._cancelled,
        }

    def parts(self, event: Event) -> list[Part]:
        """The chunks `event` adds to the message (none for an event after the terminal)."""
        handler = self._handlers.get(type(event))
        if handler is None and not isinstance(event, _Event):
            raise _not_an_event(event)
        if self.finished:
            logger.bind(provider=event.provider, attempt=event.attempt).warning(
                "UI message stream: a {} event after the terminal event is dropped", event.type
            )
            return []
        out = self._start()
        if handler is None:  # a kind newer than this encoder: nothing the client knows
            logger.bind(provider=event.provider, attempt=event.attempt).debug(
                "UI message stream: no part for a {} event", event.type
            )
        else:
            handler(event, out)
        return out

    def frames(self, event: Event, entry_id: str | None = None) -> bytes:
        """`parts(event)` as SSE frames, then `data: [DONE]` if `event` is the terminal.
        With `entry_id` (the log entry the event came from), the last frame carries
        `id: <entry_id>`: a client that saw it has every frame of that entry."""
        if (
            type(event) is TextDelta
            and self._block == "text"
            and not self._held
            and event.phase == self._phase
        ):
            # Most of a turn: a delta into the open text block, framed without the dict.
            text = event.text
            if text and not is_high_half(text[-1]):
                data = self._delta_prefix + _frame_bytes(_dumps(text)) + b"}\n\n"
                return data if entry_id is None else b"id: " + entry_id.encode() + b"\n" + data
        was_finished = self.finished
        data = b"".join([encode_frame(part) for part in self.parts(event)])
        if self.finished and not was_finished:
            data += DONE_FRAME
        return _with_id(data, entry_id)

    def fold(self, event: Event) -> None:
        """Take in `event` unsent (the client has its frames already): the state
        `parts(event)` leaves, without building the parts of a delta into the open
        block of its kind."""
        if isinstance(event, TextDelta):
            continued = self._continue_block(event.type, event.text, None, False, None, event.phase)
        elif isinstance(event, Refusal):
            continued = self._continue_block(event.type, event.text, None, False)
        elif isinstance(event, ReasoningDelta):
            continued = self._continue_block(
                "reasoning", event.text, event.signature, event.redacted, event.details
            )
        else:
            continued = False
        if not continued:
            self.parts(event)

    def fold_json(self, events: Iterable[bytes | str]) -> None:
        """Take in events unsent from their JSON as a log stores it (a resume's entries
        up to its cursor): the state `parts` of each leaves. A delta into the open
        block of its kind, most of a turn, is only read as a dict for its type and
        text, never validated into an event (about a third of the cost); anything
        else is validated and folded in full, and raises as validation does. (The
        other fields of such a delta go unchecked: the producer wrote them from a
        valid event.)"""
        for data in events:
            try:
                fields = from_json(data, cache_strings=False)
            except ValueError:
                fields = json_or_none(data)  # a lone surrogate's escape, or not JSON
            if type(fields) is dict and self._continue_block(
                fields.get("type"),
                fields.get("text"),
                fields.get("signature"),
                fields.get("redacted", False),
                fields.get("details"),
                fields.get("phase"),
            ):
                continue
            self.parts(load_event(data))

    def _continue_block(
        self,
        kind: object,
        text: object,
        signature: object,
        redacted: object,
        details: object = None,
        phase: object = None,
    ) -> bool:
        """Fold a delta that continues the open block of its kind, and say so: such a
        delta changes nothing but the held half character (`_delta`). False for
        anything else, which the caller folds in full."""
        if self._block is None or kind != self._block or type(text) is not str:
            return False
        if kind == "text" and phase != self._phase:
            return False  # another message item's text: a block of its own (`_text`)
        if kind == "reasoning" and (
            signature is not None
            or redacted is not False
            or details is not None
            or self._signature is not None
            or self._details is not None
            or self._redacted
        ):
            return False  # a signature, details or a redaction end the block (`_reasoning`)
        self._delta(text)
        return True

    def close(self, error_text: str = STREAM_CUT) -> list[Part]:
        """End a message whose source stopped without a terminal event, as an error
        (`[]` once the terminal was folded)."""
        if self.finished:
            return []
        out = self._start()
        self._fail(error_text, out)
        self.finished = True
        return out

    def _start(self) -> list[Part]:
        """The message's first parts, before its first event's (then nothing)."""
        if self._started:
            return []
        self._started = True
        start: Part = {"type": "start"}
        if self._message_id is not None:
            start["messageId"] = self._message_id
        return [start, {"type": "start-step"}]

    # --- blocks ---------------------------------------------------------------

    def _open(self, kind: str, out: list[Part], phase: str | None = None) -> str:
        """The id of the open `kind` block, opening one (and ending another) if needed."""
        if self._block == kind:
            return self._block_id
        self._end_block(out)
        prefix = "r" if kind == "reasoning" else "t"
        self._counts[prefix] += 1
        self._block, self._block_id = kind, f"{prefix}{self._counts[prefix]}"
        if kind == "reasoning":
            start: Part = {"type": "reasoning-start", "id": self._block_id}
            if self._redacted:
                start["providerMetadata"] = {"rxllm": {"redacted": True}}
        else:
            start = {"type": "text-start", "id": self._block_id}
            self._phase = phase
            if phase is not None:
                start["providerMetadata"] = {"rxllm": {"phase": phase}}
            self._delta_prefix = b'data: {"type":"text-delta","id":"%s","delta":' % (
                self._block_id.encode()
            )
            if kind == "refusal":
                start["providerMetadata"] = {"rxllm": {"refusal": True}}
        out.append(start)
        return self._block_id

    def _end_block(self, out: list[Part]) -> None:
        kind = self._block
        if kind is None:
            return
        block_id = self._block_id
        if self._held:  # half a character never completed
            self._held = ""
            delta_type = "reasoning-delta" if kind == "reasoning" else "text-delta"
            out.append({"type": delta_type, "id": block_id, "delta": "\ufffd"})
        if kind == "reasoning":
            end: Part = {"type": "reasoning-end", "id": block_id}
            meta: dict[str, Any] = {}
            if self._signature is not None:
                meta["signature"] = self._signature
            if self._details is not None:
                meta["details"] = self._details
            if self._redacted:
                meta["redacted"] = True
            if meta:
                end["providerMetadata"] = {"rxllm": meta}
            self._unclosed = not meta
            self._signature, self._details, self._redacted = None, None, False
        else:
            end = {"type": "text-end", "id": block_id}
            if kind == "text" and self._text_signature is not None:
                end["providerMetadata"] = {"rxllm": self._text_signature}
                self._text_signature = None
        out.append(end)
        self._block = None

    def _delta(self, text: str) -> str:
        """`text` with a held high surrogate before it, holding back a trailing one."""
        if self._held:
            text, self._held = self._held + text, ""
        if text and is_high_half(text[-1]):
            text, self._held = text[:-1], text[-1]
        return text

    def _text(self, event: TextDelta, out: list[Part]) -> None:
        if self._block == "text" and event.phase != self._phase:
            # A Responses message item of another phase (a preamble, then the answer):
            # a text part of its own, as the record keeps it and the SDK's own OpenAI
            # provider sends each message item.
            self._end_block(out)
        block_id = self._open("text", out, event.phase)
        delta = self._delta(event.text)
        if delta:
            out.append({"type": "text-delta", "id": block_id, "delta": delta})

    def _refusal(self, event: Refusal, out: list[Part]) -> None:
        block_id = self._open("refusal", out)
        delta = self._delta(event.text)
        if delta:
            out.append({"type": "text-delta", "id": block_id, "delta": delta})

    def _reasoning(self, event: ReasoningDelta, out: list[Part]) -> None:
        if self._block != "reasoning" and _signs_a_part(event):
            # Gemini's signature of the part it came on, with no thoughts to close: no
            # reasoning of its own. A text part's goes on the text block's end (the
            # open one, else the next), where the `ai` client keeps it on the text
            # part; a call's is on the call, and a code part's is never sent back.
            if event.details is not None and event.details.keys() <= {"thought"}:
                self._text_signature = {"signature": event.signature, "details": event.details}
            return
        if (
            self._unclosed
            and self._block != "reasoning"
            and not event.text
            and not event.redacted
            and (event.signature is not None or event.details is not None)
        ):
            # The close of the block another kind ended (OpenRouter's Responses relay
            # ends its reasoning item after the answer's text), as the record reads it:
            # the client has ended that part, and a part for it alone would be empty.
            self._unclosed = False
            return
        # A signature or details close a thinking block (Anthropic sends the signature
        # last, a Responses item its fields), and each redacted block is opaque data of
        # its own: either way, a new block follows.
        if self._block == "reasoning" and (
            self._signature is not None
            or self._details is not None
            or self._redacted
            or event.redacted
        ):
            self._end_block(out)
        if self._block != "reasoning":
            self._end_block(out)
            self._redacted = event.redacted
        block_id = self._open("reasoning", out)
        if event.signature is not None:
            self._signature = event.signature
        if event.details is not None:
            self._details = event.details
        if event.redacted:  # encrypted: there is nothing to show
            return
        delta = self._delta(event.text)
        if delta:
            out.append({"type": "reasoning-delta", "id": block_id, "delta": delta})

    # --- tools and sources ----------------------------------------------------

    def _tool_start(self, event: ToolStart, out: list[Part]) -> None:
        self._end_block(out)
        self._pending[event.call_id] = event.name
        out.append(
            {"type": "tool-input-start", "toolCallId": event.call_id, "toolName": event.name}
        )

    def _tool_request(self, event: ToolRequest, out: list[Part]) -> None:
        self._end_block(out)
        self._pending.pop(event.call_id, None)
        self._calls.add(event.call_id)
        part: Part = {
            "type": "tool-input-available",
            "toolCallId": event.call_id,
            "toolName": event.name,
            "input": event.arguments,
        }
        if event.signature is not None:
            part["providerMetadata"] = {"rxllm": {"signature": event.signature}}
        out.append(part)

    def _server_tool_call(self, event: ServerToolCall, out: list[Part]) -> None:
        self._end_block(out)
        self._calls.add(event.call_id)
        self._server_calls.add(event.call_id)
        out += (
            {
                "type": "tool-input-start",
                "toolCallId": event.call_id,
                "toolName": event.name,
                **_PROVIDER_TOOL,
            },
            {
                "type": "tool-input-available",
                "toolCallId": event.call_id,
                "toolName": event.name,
                "input": event.arguments,
                **_PROVIDER_TOOL,
            },
        )

    def _server_tool_result(self, event: ServerToolResult, out: list[Part]) -> None:
        self._end_block(out)
        call_id = event.call_id
        output: Part = (
            {"type": "tool-output-error", "toolCallId": call_id, "errorText": _tool_error(event)}
            if event.is_error
            else {"type": "tool-output-available", "toolCallId": call_id, "output": event.content}
        )
        if call_id in self._server_calls:
            output.update(_PROVIDER_TOOL)
        elif call_id in self._calls or call_id in self._pending:
            # A call the client holds as one of the app's own (a static part, its input
            # complete or still streaming): 5.x looks a `dynamic` output up among the
            # dynamic parts only ("must be preceded by a tool-input-available"), so the
            # output goes to the part the client has, as a server-run tool's does. Its
            # input never completing no longer fails it: it has its output.
            self._pending.pop(call_id, None)
            self._calls.add(call_id)
        else:
            # The client throws on output for a call it has not seen: give it the call.
            self._calls.add(call_id)
            self._server_calls.add(call_id)
            out.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": call_id,
                    "toolName": event.name,
                    "input": None,
                    **_PROVIDER_TOOL,
                }
            )
            output.update(_PROVIDER_TOOL)
        out.append(output)

    def _citation(self, event: Citation, out: list[Part]) -> None:
        self._counts["s"] += 1
        part: Part = {"type": "source-url", "sourceId": f"s{self._counts['s']}", "url": event.url}
        if event.title is not None:
            part["title"] = event.title
        if event.cited_text is not None:
            part["providerMetadata"] = {"rxllm": {"cited_text": event.cited_text}}
        out.append(part)

    # --- metadata -------------------------------------------------------------

    def _usage(self, event: UsageUpdate, out: list[Part]) -> None:
        out.append(
            {
                "type": "message-metadata",
                "messageMetadata": {
                    "rxllm": {
                        "usage": event.usage.model_dump(),
                        "provider": event.provider,
                        "attempt": event.attempt,
                    }
                },
            }
        )

    def _retry(self, event: Retry, out: list[Part]) -> None:
        if not self._retries:
            return
        reason = event.reason
        data = {
            "reason": {
                "kind": reason.kind,
                "message": self._error_message(reason),
                "status": reason.status,
                "retryable": reason.retryable,
            },
            "provider": event.provider,
            "attempt": event.attempt,
            "next_provider": event.next_provider,
            "next_attempt": event.next_attempt,
            "dropped": list(event.dropped),
            "images_removed": event.images_removed,
            "delay": event.delay,
        }
        # Transient: the client hands it to onData and keeps it out of the message.
        out.append({"type": "data-rxllm-retry", "data": data, "transient": True})

    def _error_message(self, info: ErrorInfo) -> str:
        """`error_text(info)`, which must be a str: the client's schema refuses any
        other `errorText` (`errorText: 5`), and with it the whole stream."""
        text = self._error_text(info)
        if not isinstance(text, str):
            raise TypeError(
                f"error_text must return a str, got {type(text).__name__}: {reprlib.repr(text)}"
            )
        return text

    # --- terminals ------------------------------------------------------------

    def _done(self, event: Done, out: list[Part]) -> None:
        self._end_block(out)
        meta: dict[str, Any] = {"stop_reason": event.stop_reason}
        for key in ("raw_stop_reason", "model", "response_id"):
            value = getattr(event, key)
            if value is not None:
                meta[key] = value
        out += (
            {"type": "finish-step"},
            {
                "type": "finish",
                "finishReason": FINISH_REASONS.get(event.stop_reason, "other"),
                "messageMetadata": {"rxllm": meta},
            },
        )
        self.finished = True

    def _failed(self, event: Failed, out: list[Part]) -> None:
        self._fail(self._error_message(event.error), out, event.error)
        self.finished = True

    def _fail(self, error_text: str, out: list[Part], info: ErrorInfo | None = None) -> None:
        self._end_block(out)
        for call_id, name in self._pending.items():
            out.append(
                {
                    "type": "tool-input-error",
                    "toolCallId": call_id,
                    "toolName": name,
                    "input": _input_text(info, call_id, name),
                    "errorText": error_text,
                }
            )
        self._pending.clear()
        if info is not None:
            # The `error` chunk takes only its text, and `useChat` stops reading at it
            # (its `onError` throws): a `finish`'s metadata would never reach the UI.
            facts = {
                "kind": info.kind,
                "status": info.status,
                "retryable": info.retryable,
                "retry_after": info.retry_after,
            }
            out.append({"type": "message-metadata", "messageMetadata": {"rxllm": {"error": facts}}})
        out += (
            {"type": "error", "errorText": error_text},
            {"type": "finish", "finishReason": "error"},
        )

    def _cancelled(self, event: Cancelled, out: list[Part]) -> None:
        self._end_block(out)
        # `abort` takes a `reason` only in later 6.x: 5.x until 5.0.2xx and 6.0.0 check
        # chunks with strict schemas, which refuse the key, and so the whole stream.
        meta = {"rxllm": {"cancel_reason": event.reason}}
        out += ({"type": "message-metadata", "messageMetadata": meta}, {"type": "abort"})
        self.finished = True


def _not_an_event(value: object) -> TypeError:
    return TypeError(
        "a UI message stream is made of rxllm events (rxllm.events: TextDelta, Done, ...), "
        f"got {type(value).__name__}: {reprlib.repr(value)}"
    )


def _tool_error(event: ServerToolResult) -> str:
    """The errorText of a provider-run tool that failed: what the provider said of the
    failure (its `content`, the error object a result would have been: Anthropic's
    `{"type": "web_search_tool_result_error", "error_code": ...}`), a string as it is,
    else its JSON, as the SDK's own server writes a provider-executed tool's error
    (`toUIMessageStream`, ai 6). It is the tool's output, sent as a result's would be."""
    content = event.content
    if isinstance(content, str) and content:
        return content
    if content is None or content == "":
        return TOOL_FAILED
    try:
        return _dumps(content)
    except ValueError:  # NaN or an infinity (`encode_frame`)
        return _dumps(_finite(content))
    except TypeError:  # no JSON value (a hand-built event's): nothing to quote
        return TOOL_FAILED


def _input_text(info: ErrorInfo | None, call_id: str, name: str) -> str | None:
    """The input text of the call a `malformed_tool_arguments` error names (its `raw`),
    as the SDK's own server sends an invalid call's input (the client keeps it as the
    part's `rawInput`, and the next turn shows the model what it wrote); None for
    every other call: its input never came. The error names its call in its message,
    `tool call '<id>' ('<name>')` (DESIGN.md: naming provider, call id and tool)."""
    if info is None or info.kind != "malformed_tool_arguments" or info.raw is None:
        return None
    return info.raw if named_call(call_id, name) in info.message else None


def _with_id(data: bytes, entry_id: str | None) -> bytes:
    """`data` with `id: <entry_id>` on its last frame (nothing when there is no frame)."""
    if entry_id is None or not data:
        return data
    end_of_previous = data.rfind(b"\n\n", 0, len(data) - 2)
    last = end_of_previous + 2 if end_of_previous >= 0 else 0
    return data[:last] + b"id: " + entry_id.encode() + b"\n" + data[last:]


Item: TypeAlias = Event | tuple[str, Event]
"""An event, or a log entry: (entry id, event)."""


class _Inbox:
    """Items from the source, waiting for the response; the source never waits on the
    response (an Observable cannot), except an async iterable's pump, held back when
    the response falls `_AHEAD` items behind."""

    __slots__ = ("closed", "completed", "error", "items", "space", "waiter")

    def __init__(self) -> None:
        self.items: deque[Item] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.space: asyncio.Future[None] | None = None
        self.completed = False
        self.error: BaseException | None = None
        self.closed = False
        """The response has ended: the pump takes nothing more."""

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def on_next(self, item: Item) -> None:
        self.items.append(item)
        self._wake()

    def on_error(self, error: BaseException) -> None:
        self.error = error
        self._wake()

    def on_completed(self) -> None:
        self.completed = True
        self._wake()

    async def wait(self, timeout: float | None) -> bool:
        """Until something arrives (True) or `timeout` seconds pass (False)."""
        loop = asyncio.get_running_loop()
        waiter = self.waiter = loop.create_future()
        timer = None
        if timeout is not None and timeout > 0:
            timer = loop.call_later(timeout, _resolve, waiter)
        try:
            await waiter
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()
        return bool(self.items) or self.completed or self.error is not None

    def close(self) -> None:
        self.closed = True
        self.items.clear()
        if self.space is not None and not self.space.done():
            self.space.set_result(None)

    def take(self) -> list[Item]:
        items = list(self.items)
        self.items.clear()
        if self.space is not None and not self.space.done():
            self.space.set_result(None)
        return items


def _entry(item: tuple[Any, ...]) -> tuple[str, Event]:
    """A log entry's id and event, or a TypeError saying what a log entry is."""
    if len(item) != 2 or not isinstance(item[0], str):
        raise TypeError(f"a log entry is an (entry_id: str, event) pair, got {reprlib.repr(item)}")
    return item[0], item[1]


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_AHEAD = 64
"""Items an async iterable may run ahead of the response. A log's page (512 entries)
is then written in a few chunks rather than one: the first frames go out sooner, and
the events waiting are few and young, so the garbage collector seldom promotes them
(at 512, a resume from the middle of a 2,000-entry log met a full collection, 30-40 ms
without `gc.freeze()`, about one time in twenty; at 64, rarely)."""


async def _pump(source: AsyncIterable[Item], inbox: _Inbox) -> None:
    iterator: AsyncIterator[Item] | None = None
    try:
        # inside the `try`: a source that fails to begin is a source that breaks, not
        # a pump that dies alone while the response waits on it for ever
        iterator = aiter(source)
        async for item in iterator:
            if inbox.closed:
                break
            inbox.on_next(item)
            if len(inbox.items) >= _AHEAD:
                inbox.space = asyncio.get_running_loop().create_future()
                await inbox.space
        inbox.on_completed()
    except Exception as exc:
        inbox.on_error(exc)
    finally:
        close = getattr(iterator, "aclose", None)  # None too when `aiter` failed
        if close is not None:
            await close()


async def ui_message_stream(
    events: Observable[Event] | AsyncIterable[Event] | AsyncIterable[tuple[str, Event]],
    *,
    message_id: str | None = None,
    keepalive: float | None = 15.0,
    after: str | None = None,
    error_text: Callable[[ErrorInfo], str] = generic_error_text,
    retries: bool = False,
    encoder: UIMessageEncoder | None = None,
) -> AsyncGenerator[bytes, None]:
    """The UI message stream of one assistant message, as SSE bytes to write to the
    response (with `UI_MESSAGE_STREAM_HEADERS`); ends after `data: [DONE]`.

    `events` is a cold Observable (subscribed here, disposed when the response ends
    or the consumer stops) or an async iterable of events, or of log entries
    `(entry_id, event)`: then each entry's last frame carries `id: <entry_id>`, and
    with `after` the entries at or before it (ids compared as Redis stream ids) are
    folded unsent, so a resumed response continues exactly where the client stopped.
    Whatever arrived together is written together; after `keepalive` seconds without
    a frame, `: keep-alive` (None: never). A source that stops without a terminal
    event, breaks, or gives what is no event (a TypeError) still ends the message (an
    `error` part; the exception is raised after it, never sent). `error_text` and
    `retries`: see `UIMessageEncoder`.

    `encoder` continues a message whose start the client has: an encoder that
    folded it (`fold_json` of a log's entries through the cursor, the cheap way to
    resume; then `message_id`, `error_text` and `retries` are the encoder's own).
    """
    if not isinstance(events, Observable) and not hasattr(events, "__aiter__"):
        hint = (
            " (reactivex.from_iterable(events) makes one)" if isinstance(events, Iterable) else ""
        )
        raise TypeError(
            "ui_message_stream takes an Observable of events or an async iterable of "
            f"events or (entry_id, event) pairs, got {type(events).__name__}{hint}"
        )
    if keepalive is not None:
        check_seconds("keepalive", keepalive)
    if after is not None:
        check_str("after", after)  # a log entry id, `<ms>-<seq>`
    if encoder is None:
        encoder = UIMessageEncoder(message_id, error_text=error_text, retries=retries)
    elif not isinstance(encoder, UIMessageEncoder):
        raise TypeError(f"encoder must be a UIMessageEncoder, got {type(encoder).__name__}")
    cursor = entry_position(after) if after is not None else None
    inbox = _Inbox()
    subscription: abc.DisposableBase | None = None
    pump: asyncio.Task[None] | None = None
    if isinstance(events, Observable):
        loop = asyncio.get_running_loop()
        subscription = events.subscribe(
            inbox.on_next, inbox.on_error, inbox.on_completed, scheduler=AsyncIOScheduler(loop)
        )
    else:
        pump = asyncio.create_task(_pump(events, inbox))
    try:
        while not encoder.finished:
            if not inbox.items:
                if inbox.error is not None or inbox.completed:
                    break
                if not await inbox.wait(keepalive):
                    yield KEEPALIVE_FRAME
                continue
            chunks = []
            try:
                for item in inbox.take():
                    if isinstance(item, tuple):
                        entry_id, event = _entry(item)
                        if cursor is not None and entry_position(entry_id) <= cursor:
                            encoder.fold(event)  # the client has these frames already
                            continue
                        chunks.append(encoder.frames(event, entry_id))
                    else:
                        chunks.append(encoder.frames(item))
            except Exception as exc:
                # An item that cannot be framed (no event, or error_text failing on it):
                # the message ends as for a source that breaks, then this is raised.
                inbox.error = exc
            data = b"".join(chunks)
            if data:
                yield data
        if not encoder.finished:
            if inbox.error is None:
                logger.warning("UI message stream: the source ended without a terminal event")
            cut = STREAM_CUT if inbox.error is None else STREAM_FAILED
            yield b"".join([encode_frame(part) for part in encoder.close(cut)]) + DONE_FRAME
            if inbox.error is not None:
                raise inbox.error
    finally:
        if subscription is not None:
            subscription.dispose()
        if pump is not None and not pump.done():
            # A cancel can be lost: Python 3.11's `asyncio.wait_for` swallows one that
            # meets a finished send (redis-py sends so), and the pump would go on,
            # to wait for space forever. Closed, it stops at its next item.
            inbox.close()
            pump.cancel()
            await asyncio.wait({pump})
