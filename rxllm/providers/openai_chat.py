"""OpenAI Chat Completions streaming: the wire most of the field speaks.

Request: `POST {base}/chat/completions` with `stream: true` and
`stream_options.include_usage`. Response: `data:` chunks of `chat.completion.chunk`,
ending in `data: [DONE]`. Tool calls stream keyed by `index`: id and name only on the
first delta, arguments as JSON text fragments. The finish reason arrives before the
usage chunk (whose `choices` is empty), so the finish is held until usage, `[DONE]` or
the end of the body.

Every OpenAI-compatible endpoint is this module with a few declared options
(`ChatOptions`), never a copy of the loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rxllm.events import StopReason, Usage
from rxllm.providers.base import Emit, Normalizer, WireProtocol, stop_reason_of
from rxllm.request import ChatRequest, ImagePart, Message, TextPart
from rxllm.sources.raw import RawChunk

__all__ = ["ChatNormalizer", "ChatOptions", "OpenAIChat", "chat_messages", "openai_usage"]

FINISH_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "eos": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
    "content_filter": "content_filter",
}


@dataclass(frozen=True)
class ChatOptions:
    """How one OpenAI-compatible endpoint differs from OpenAI's own."""

    reasoning_in_completion: bool = True
    """Whether `completion_tokens` already counts reasoning tokens (OpenAI: yes; xAI: no)."""
    stream_usage: bool = True
    """Send `stream_options.include_usage` (some servers reject the key)."""
    extra_headers: dict[str, str] = field(default_factory=dict)


def openai_usage(raw: dict[str, Any], reasoning_in_completion: bool = True) -> Usage:
    """Normalize an OpenAI-style usage object: cached input apart, reasoning counted once."""
    prompt = raw.get("prompt_tokens") or 0
    completion = raw.get("completion_tokens") or 0
    prompt_details = raw.get("prompt_tokens_details") or {}
    cached = prompt_details.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or 0
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    cost = raw.get("cost")
    return Usage.of(
        input_tokens=max(prompt - cached, 0),
        output_tokens=completion if reasoning_in_completion else completion + reasoning,
        reasoning_tokens=reasoning,
        cache_read_tokens=cached,
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


def _content(message: Message) -> str | list[dict[str, Any]]:
    if not message.images:
        return message.text
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "image_url", "image_url": {"url": part.url}})
    return parts


def chat_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in the Chat Completions shape."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text}
            )
        elif message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_json},
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        else:
            out.append({"role": message.role, "content": _content(message)})
    return out


class ChatNormalizer(Normalizer):
    """Chat completion chunks -> fragments. Only choice 0 is read (n > 1 is not a
    single stream); other choices are ignored."""

    def __init__(
        self, emit: Emit, provider: str, attempt: int = 1, options: ChatOptions | None = None
    ) -> None:
        super().__init__(emit, provider, attempt)
        self.options = options or ChatOptions()
        self.finish: str | None = None
        self.calls: dict[Any, int] = {}  # the wire's key of a call -> our index
        self.call_ids: dict[int, str] = {}
        self.last_call: int | None = None

    def on_chunk(self, chunk: RawChunk) -> None:
        data = chunk.data
        if data == "[DONE]":
            self._settle()
            return
        payload = json.loads(data)
        if not isinstance(payload, dict):
            raise ValueError(f"expected a JSON object, got {type(payload).__name__}")
        model = payload.get("model")
        if model:
            self.model = model
        for choice in payload.get("choices") or ():
            if choice.get("index", 0) == 0:
                self._choice(choice)
        usage = payload.get("usage")
        if usage:
            self.usage(openai_usage(usage, self.options.reasoning_in_completion))
        error = payload.get("error")
        if error or chunk.event == "error":
            self._error(error if error is not None else payload)
        elif usage and self.finish is not None:
            self._settle()

    def end(self) -> None:
        if self.finish is not None:
            self._settle()

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if delta:
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.reasoning(reasoning)
            content = delta.get("content")
            if content:
                self.text(content)
            refusal = delta.get("refusal")
            if refusal:
                self.text(refusal)
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                for call in tool_calls:
                    self._tool_call(call)
        finish = choice.get("finish_reason")
        if finish and self.finish is None:
            self.finish = finish
            for index in self.call_ids:  # a finish ends every call: dispatch them now
                self.tool_end(index)

    def _tool_call(self, call: dict[str, Any]) -> None:
        key = call.get("index")
        call_id = call.get("id")
        function = call.get("function") or {}
        if key is not None:
            index = self.calls.get(key)
        elif self.last_call is not None and call_id in (None, self.call_ids[self.last_call]):
            index = self.last_call  # no index on the wire (Mistral): same id, same call
        else:
            index = None
        if index is None:
            index = len(self.calls)
            self.calls[key if key is not None else ("no-index", index)] = index
            self.call_ids[index] = call_id or f"call_{index}"
            self.tool_start(self.call_ids[index], function.get("name") or "", index)
        self.last_call = index
        arguments = function.get("arguments")
        if arguments:
            self.tool_args(index, arguments)

    def _error(self, error: Any) -> None:
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("error") or error)
            code = error.get("code")
        else:
            message, code = str(error), None
        status = code if isinstance(code, int) and 400 <= code < 600 else None
        self.fail("stream_error", message, status=status, raw=json.dumps(error))

    def _settle(self) -> None:
        if self.finish is not None:
            self.done(stop_reason_of(self.finish, FINISH_REASONS), self.finish)
        else:  # [DONE] with no finish reason (some servers never send one)
            self.done("tool_use" if self.calls else "stop")


class OpenAIChat(WireProtocol):
    """The OpenAI Chat Completions wire, for OpenAI and every compatible endpoint."""

    def __init__(
        self,
        name: str = "openai",
        default_base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        requires_api_key: bool = True,
        options: ChatOptions | None = None,
    ) -> None:
        self.name = name
        self.default_base_url = default_base_url
        self.api_key_env = api_key_env
        self.requires_api_key = requires_api_key
        self.options = options or ChatOptions()

    def url(self, base_url: str, request: ChatRequest) -> str:
        return base_url.rstrip("/") + "/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers | self.options.extra_headers

    def build_body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(request.messages),
            "stream": True,
        }
        if self.options.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in request.tools
            ]
        body.update(request.params)
        return body

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> ChatNormalizer:
        return ChatNormalizer(emit, provider, attempt, self.options)
