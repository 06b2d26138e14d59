"""OpenAI Responses streaming: typed output items and one JSON event per SSE event.

Request: `POST {base}/responses` with `stream: true`; the conversation goes in `input`
as typed items (messages, `function_call`, `function_call_output`), leading system
text in `instructions`. Response: events whose JSON `type` names them
(`response.output_text.delta`, `response.function_call_arguments.delta`, ...). The
`event:` line repeats the type on OpenAI's wire but not on OpenRouter's, so only the
JSON `type` is read. The stream ends with `response.completed`, `response.incomplete`
or `response.failed` (an `error` event may come first); there is no `[DONE]`, though
OpenRouter sends one after the terminal event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from loguru import logger

from rxllm.degradation import RecoveryPolicy
from rxllm.events import StopReason, Usage
from rxllm.fragments import Emit, RawChunk
from rxllm.providers.base import REQUEST_KEYS, Normalizer, WireProtocol, stop_reason_of
from rxllm.request import ChatRequest, ImagePart, Message, TextPart

__all__ = ["OpenAIResponses", "ResponsesNormalizer", "responses_input", "responses_usage"]

# `incomplete_details.reason` -> stop reason; anything else is `other`, the raw kept.
INCOMPLETE_REASONS: dict[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}

# Reasoning parts (summary paragraphs, reasoning-text parts, reasoning items) arrive as
# separate pieces; joined with a blank line, as OpenAI's and pydantic-ai's clients show
# them, so that the record's reasoning reads as paragraphs and not one run-on line.
REASONING_PART_SEPARATOR = "\n\n"

# Lifecycle and bookkeeping events that carry nothing the normalized stream needs (the
# `.done` events repeat text already streamed as deltas). Others are logged at debug.
_IGNORED = frozenset(
    {
        "response.in_progress",
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
    }
)


def responses_usage(raw: dict[str, Any]) -> Usage:
    """Normalize a Responses usage object: cached input apart (OpenAI counts it inside
    `input_tokens`), reasoning counted once (`output_tokens` already includes it)."""
    details = raw.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    written = details.get("cache_write_tokens") or 0
    reasoning = (raw.get("output_tokens_details") or {}).get("reasoning_tokens") or 0
    cost = raw.get("cost")  # OpenRouter's
    return Usage.of(
        input_tokens=max((raw.get("input_tokens") or 0) - cached - written, 0),
        output_tokens=raw.get("output_tokens") or 0,
        reasoning_tokens=reasoning,
        cache_read_tokens=cached,
        cache_write_tokens=written,
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


def _input_text(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text or len(message.content) == 1:
                parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "input_image", "image_url": part.url, "detail": "auto"})
    return parts


def responses_input(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(instructions, input items) of a conversation: the leading system messages
    become `instructions`; a system message later on stays in place as an item."""
    leading: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.role
        if role == "system":
            if not items:
                leading.append(message.text)
            else:
                items.append({"type": "message", "role": "system", "content": _input_text(message)})
        elif role == "user":
            items.append({"type": "message", "role": "user", "content": _input_text(message)})
        elif role == "assistant":
            if message.text:
                content = [{"type": "output_text", "text": message.text}]
                items.append({"type": "message", "role": "assistant", "content": content})
            for call in message.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments_json,
                    }
                )
        else:  # tool
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.text,
                }
            )
    return ("\n\n".join(leading) if leading else None), items


def _code_of(error: dict[str, Any]) -> str | None:
    """The error's code, or its type where it has no code."""
    code = error.get("code") or error.get("type")
    return code if isinstance(code, str) else None


class ResponsesNormalizer(Normalizer):
    """Responses events -> fragments, dispatched on the JSON `type`.

    A function call is keyed by its `output_index` (unique in a response): it starts at
    `output_item.added` and ends at `function_call_arguments.done`, whose full text is
    authoritative, or at its `output_item.done`, whichever comes first. Encrypted
    reasoning is kept as a signature, taken from the item's `output_item.done` (OpenAI
    re-encrypts it there) or else from its `output_item.added`.
    """

    def __init__(self, emit: Emit, provider: str, attempt: int = 1) -> None:
        super().__init__(emit, provider, attempt)
        self.calls: dict[int, bool] = {}  # output_index -> ended
        self.pending_signatures: dict[int, str] = {}  # reasoning output_index -> blob
        self.reasoning_part: tuple[int, int] | None = None  # (output_index, part) of the last
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "response.output_text.delta": self._text,
            "response.refusal.delta": self._refusal,
            "response.reasoning_summary_text.delta": self._reasoning_summary,
            "response.reasoning_text.delta": self._reasoning_text,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.created": self._created,
            "response.completed": self._completed,
            "response.incomplete": self._incomplete,
            "response.failed": self._failed,
            "error": self._error,
        }

    def on_chunk(self, chunk: RawChunk) -> None:
        data = chunk.data
        if data == "[DONE]":  # OpenRouter's, after the terminal event; not a terminal itself
            return
        payload = json.loads(data)
        if not isinstance(payload, dict):
            raise ValueError(f"expected a JSON object, got {type(payload).__name__}")
        kind = payload.get("type")
        handler = self.handlers.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(payload)
        elif kind is None and isinstance(payload.get("error"), dict):
            self._error(payload)  # a proxy's bare `{"error": {...}}`
        elif kind not in _IGNORED:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored a Responses event of unknown type {!r}", kind
            )

    # -- content ----------------------------------------------------------------------

    def _text(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if delta:
            self.text(delta)

    def _refusal(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if delta:
            self.refusal(delta)

    def _reasoning_summary(self, payload: dict[str, Any]) -> None:
        self._reasoning_delta(payload, payload.get("summary_index", 0))

    def _reasoning_text(self, payload: dict[str, Any]) -> None:
        self._reasoning_delta(payload, payload.get("content_index", 0))

    def _reasoning_delta(self, payload: dict[str, Any], part: int) -> None:
        delta = payload.get("delta")
        if not delta:
            return
        key = (payload.get("output_index", 0), part)
        if key != self.reasoning_part:
            if self.reasoning_part is not None:
                delta = REASONING_PART_SEPARATOR + delta
            self.reasoning_part = key
        self.reasoning(delta)

    # -- output items and function calls ----------------------------------------------

    def _item_added(self, payload: dict[str, Any]) -> None:
        item = payload.get("item") or {}
        kind = item.get("type")
        index = payload.get("output_index", 0)
        if kind == "function_call":
            self._start_call(index, item)
        elif kind == "reasoning":
            blob = item.get("encrypted_content")
            if blob:
                self.pending_signatures[index] = blob

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = payload.get("item") or {}
        kind = item.get("type")
        index = payload.get("output_index", 0)
        if kind == "function_call":
            if index not in self.calls:
                self._start_call(index, item)
            self._end_call(index, item.get("arguments"))
        elif kind == "reasoning":
            pending = self.pending_signatures.pop(index, None)
            blob = item.get("encrypted_content") or pending
            if blob:
                self.reasoning("", signature=blob)

    def _start_call(self, index: int, item: dict[str, Any]) -> None:
        if index in self.calls:
            return
        self.calls[index] = False
        call_id = item.get("call_id") or item.get("id") or f"call_{index}"
        self.tool_start(call_id, item.get("name") or "", index)

    def _end_call(self, index: int, arguments: str | None) -> None:
        if self.calls.get(index) is False:
            self.calls[index] = True
            self.tool_end(index, arguments)

    def _arguments_delta(self, payload: dict[str, Any]) -> None:
        index = payload.get("output_index", 0)
        ended = self.calls.get(index)
        if ended is None:
            raise ValueError(f"arguments for output item {index}, which is not a function call")
        delta = payload.get("delta")
        if delta and not ended:
            self.tool_args(index, delta)

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        index = payload.get("output_index", 0)
        if index not in self.calls:
            raise ValueError(f"arguments for output item {index}, which is not a function call")
        self._end_call(index, payload.get("arguments"))

    # -- lifecycle and terminals ------------------------------------------------------

    def _response(self, payload: dict[str, Any]) -> dict[str, Any]:
        response: dict[str, Any] = payload.get("response") or {}
        model = response.get("model")
        if model:
            self.model = model
        return response

    def _created(self, payload: dict[str, Any]) -> None:
        self._response(payload)

    def _finish(self, response: dict[str, Any]) -> None:
        for index in sorted(self.pending_signatures):  # reasoning items never marked done
            self.reasoning("", signature=self.pending_signatures[index])
        self.pending_signatures.clear()
        usage = response.get("usage")
        if usage:
            self.usage(responses_usage(usage))

    def _completed(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        self._finish(response)
        self.done("tool_use" if self.calls else "stop", response.get("status") or "completed")

    def _incomplete(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        self._finish(response)
        reason = (response.get("incomplete_details") or {}).get("reason")
        self.done(stop_reason_of(reason, INCOMPLETE_REASONS), reason)

    def _failed(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        error = response.get("error") or {}
        message = str(error.get("message") or "the response failed")
        self.fail("stream_error", message, code=_code_of(error), raw=json.dumps(error))

    def _error(self, payload: dict[str, Any]) -> None:
        # OpenAI documents the fields at the top level; some servers nest them in `error`.
        nested = payload.get("error")
        error = nested if isinstance(nested, dict) else payload
        message = str(error.get("message") or "the server reported an error")
        self.fail("stream_error", message, code=_code_of(error), raw=json.dumps(error))


class OpenAIResponses(WireProtocol):
    """The OpenAI Responses wire, for OpenAI and the endpoints that speak it."""

    # Never dropped by a degraded retry: without them the request says something else.
    recovery = RecoveryPolicy(mandatory_body_keys=frozenset({"input", "instructions"}))
    request_keys: ClassVar[Mapping[str, str]] = {
        **REQUEST_KEYS,
        "input": "the Responses input is written from ChatRequest.messages",
        "instructions": "the instructions are the request's system messages (Message.system)",
    }

    def __init__(
        self,
        name: str = "openai-responses",
        default_base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        requires_api_key: bool = True,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.default_base_url = default_base_url
        self.api_key_env = api_key_env
        self.requires_api_key = requires_api_key
        self.extra_headers = dict(extra_headers or {})

    def url(self, base_url: str, request: ChatRequest) -> str:
        return base_url.rstrip("/") + "/responses"

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers | self.extra_headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        instructions, items = responses_input(request.messages)
        body: dict[str, Any] = {"model": request.model, "input": items, "stream": True}
        if instructions is not None:
            body["instructions"] = instructions
        if request.tools:
            # `strict: false` said outright: the Responses API otherwise rewrites a schema
            # into strict mode (every field required), unlike Chat Completions.
            body["tools"] = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": False,
                }
                for tool in request.tools
            ]
        return body

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> ResponsesNormalizer:
        return ResponsesNormalizer(emit, provider, attempt)
