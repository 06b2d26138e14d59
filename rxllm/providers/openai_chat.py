"""OpenAI Chat Completions streaming: the wire most of the field speaks.

Request: `POST {base}/chat/completions` with `stream: true` and
`stream_options.include_usage`. Response: `data:` chunks of `chat.completion.chunk`,
ending in `data: [DONE]`. Tool calls stream keyed by `index`: id and name only on the
first delta, arguments as JSON text fragments. The finish reason arrives before the
usage chunk (whose `choices` is empty), so the finish is held until usage, `[DONE]` or
the end of the body.

Every OpenAI-compatible endpoint is this module with a few declared options
(`ChatOptions`), never a copy of the loop. What the compatible endpoints add without
contradicting OpenAI is read here for all of them, since a key that is absent costs
one dict lookup:

- reasoning as `delta.reasoning_content` (DeepSeek, xAI, Z.ai, vLLM), `delta.reasoning`
  (Groq, OpenRouter, vLLM) or OpenRouter's `delta.reasoning_details` (also Snowflake):
  `reasoning.text` / `reasoning.summary` text, signatures, and `reasoning.encrypted`
  data kept as `ReasoningDelta.signature`. When `reasoning_details` carries the text,
  the plain field beside it repeats it and is not read again. A detail streams in
  fragments of one `type` and `index`; the delta that ends it (its signature, or an
  empty one when the next detail, other output or the finish comes) carries its other
  fields (`type`, `id`, `format`, `index`) as `details`, so that the record keeps it
  whole and OpenRouter gets it back as it came (`ChatOptions.reasoning_details`).
- `delta.content` as a list of typed chunks (Mistral: `text`, and `thinking` whose
  inner text chunks are reasoning).
- tool calls without `index` (Mistral), or whole in one delta (Ollama, Groq, xAI); a
  call whose name comes in a later delta than its first (vercel/ai#14722, vmlx's
  `name: ""` opener) starts when its name does, with the arguments held until then;
  `arguments` sent as a JSON object (TGI, llama.cpp) is read as that object's text.
- an `error` object inside a data chunk (OpenRouter) and `event: error` frames (Groq):
  the stream ends with `error(kind="stream_error")`, after any usage the chunk carried.
  OpenRouter's `finish_reason: "error"` (beside that object, or alone) is a failure too:
  it ends no tool call, so nothing of a failed turn is dispatched.
- chunks without a served model (Azure's prompt-filter chunk has `model: ""`) and
  chunks without choices; a duplicate finish chunk (OpenRouter) is ignored.
- no finish reason at all (Snowflake): `[DONE]` ends the turn.
- `annotations` of type `url_citation` (OpenRouter's web search, OpenAI's search
  models: `{url, title, content}`), on the delta or on a whole `message`, are
  `citation` events (`content` is the cited text); the same annotation repeated on a
  later chunk or on the message comes out once.
- Groq's `executed_tools` (compound models' built-in search, code execution,
  browsing: `{index?, type, arguments, output}`, on the delta or the message) are
  tools the provider ran: `server_tool_call` named after `type`, its `arguments` JSON
  string read as an object (anything else kept under `arguments`), when an entry is
  first seen; `server_tool_result` (the entry's other keys: `output`, and
  `search_results` where sent) once it carries an output. An entry is known by its
  `index`, else by its position; the call id is `{type}_{n}`, `n` counting them.

Only choice 0 is read: `n > 1` is not one stream. Other choices are ignored, with a
warning logged once per stream (the n3 capture: choices 1 and 2 are not events).

llama.cpp serving gpt-oss without a reasoning parser streams raw Harmony tokens
(`<|channel|>analysis<|message|>...<|start|>assistant<|channel|>final<|message|>...`)
as plain content; they come out as text, verbatim. Run `llama-server --jinja` with a
reasoning format to get `reasoning_content` instead, which is read as reasoning.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from loguru import logger

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import parse_error_payload
from rxllm.events import StopReason, Usage
from rxllm.fragments import Emit, RawChunk
from rxllm.providers.base import Normalizer, WireProtocol, stop_reason_of, text_or_none
from rxllm.providers.think_tags import ThinkTagSplitter
from rxllm.request import ChatRequest, ImagePart, Message, ReasoningPart, TextPart

__all__ = [
    "DEGRADES",
    "ChatNormalizer",
    "ChatOptions",
    "OpenAIChat",
    "chat_messages",
    "openai_usage",
    "short_call_id",
]

FINISH_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "eos": "stop",  # Together
    "eos_token": "stop",  # text-generation-inference: the model ended its answer
    "length": "length",
    "max_tokens": "length",
    "model_length": "length",  # Mistral: the model's context window was reached
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
    "content_filter": "content_filter",
    "sensitive": "content_filter",  # Z.ai: output blocked by its safety review
}

DEGRADES = RecoveryPolicy(degrade=True)
"""The family's policy: a rejection before commitment is retried with a degraded body
(`rxllm.degradation`); a bare 502 is a gateway fault, retried as it is."""

# xAI reports cost in ticks of 1e-10 USD (`cost_in_usd_ticks`); checked against the
# xai capture: 1 input, 290 cached and 222 output tokens of grok-3-mini at $0.30,
# $0.075 and $0.50 per million cost $0.00013305 = 1,330,500 ticks.
_USD_PER_TICK = 1e-10

# The C scanner behind `json.loads`, called directly: the same parse, without the
# decoder's two whitespace regex matches per call (about a fifth of a chunk's cost).
# (typeshed does not declare the attribute, hence the ignore).
_scan_json: Callable[[str, int], tuple[Any, int]]
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ChatOptions:
    """How one OpenAI-compatible endpoint differs from OpenAI's own. Each option is off
    (OpenAI's behaviour) by default and costs nothing per chunk while off."""

    reasoning_in_completion: bool = True
    """Whether `completion_tokens` already counts the reasoning tokens. OpenAI, and the
    family that copies it, say yes. xAI says no: its `total_tokens` is prompt +
    completion + reasoning (the xai capture: 291 + 26 + 196 = 513), so its reasoning is
    added to the output once."""

    stream_usage: bool = True
    """Send `stream_options.include_usage`. Mistral sends usage on its final chunk
    unasked (both mistral captures) and validates request bodies strictly, so the key
    is not sent there."""

    api_key_header: str | None = None
    """Send the key raw in this header instead of `Authorization: Bearer <key>`. Azure
    OpenAI authenticates API keys with an `api-key` header."""

    nested_usage: str | None = None
    """A top-level object whose `usage` stands in when the chunk has no `usage` of its
    own. Groq documents usage under `x_groq.usage` on the last chunk (newer responses
    repeat it at the top level too: the groq capture)."""

    think_tags: bool = False
    """Split `<think>...</think>` at the start of `content` into reasoning. Together
    serves DeepSeek-R1 with its chain of thought inside the content (the together
    capture); see `rxllm.providers.think_tags` for the exact rules."""

    extra_headers: dict[str, str] = field(default_factory=dict)
    """Headers every request of this endpoint carries."""

    short_tool_call_ids: bool = False
    """Send tool call ids as 9 characters of `[a-zA-Z0-9]`. Mistral rejects any other
    ("Tool call id was call_abc but must be a-z, A-Z, 0-9, with a length of 9."), so
    the ids of calls made elsewhere (a fallback, a history begun on another provider)
    are mapped: an id already of that form is kept, any other becomes 9 base-62
    characters of its SHA-256, the same for the call and for its result."""

    reasoning_with_tool_calls: bool = False
    """An assistant turn with tool calls carries its reasoning back as
    `reasoning_content` (the text of its `ReasoningPart`s). DeepSeek's thinking mode
    requires it ("for turns that do perform tool calls, the reasoning_content must be
    fully passed back to the API in all subsequent requests", else a 400); a turn
    without calls needs none, and older reasoners that refused it made no calls."""

    reasoning_details: bool = False
    """An assistant turn carries its reasoning back as OpenRouter's `reasoning_details`:
    each `ReasoningPart` that came from a reasoning detail, rebuilt as it came (its
    type, id, format and index, its text, summary or data, its signature), in order.
    OpenRouter documents passing them back unmodified ("Preserving reasoning blocks":
    "the entire sequence of consecutive reasoning blocks must match the outputs
    generated by the model"), for reasoning models to keep their reasoning across tool
    calls; parts that came otherwise are left out."""

    sampling_renames: dict[str, str] = field(default_factory=dict)
    """`ChatRequest` sampling fields this endpoint names otherwise (Mistral's
    `random_seed` for `seed`: its strict validation rejects `seed`)."""


_PLAIN = ChatOptions()


def openai_usage(raw: dict[str, Any], reasoning_in_completion: bool = True) -> Usage:
    """Normalize an OpenAI-style usage object: cached input apart, reasoning counted once.

    Reads the field's dialects too: DeepSeek's `prompt_cache_hit_tokens`, Together's
    top-level `cached_tokens`, OpenRouter's `prompt_tokens_details.cache_write_tokens`
    and `cost` (USD), xAI's `cost_in_usd_ticks`. `prompt_tokens` counts cache reads and
    writes everywhere in this family, so both are taken out of `input_tokens`.
    """
    prompt = raw.get("prompt_tokens") or 0
    completion = raw.get("completion_tokens") or 0
    prompt_details = raw.get("prompt_tokens_details") or {}
    cached = (
        prompt_details.get("cached_tokens")
        or raw.get("prompt_cache_hit_tokens")
        or raw.get("cached_tokens")
        or 0
    )
    cache_write = prompt_details.get("cache_write_tokens") or 0
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    cost = raw.get("cost")
    if not isinstance(cost, int | float):
        ticks = raw.get("cost_in_usd_ticks")
        cost = ticks * _USD_PER_TICK if isinstance(ticks, int | float) else None
    return Usage.of(
        input_tokens=max(prompt - cached - cache_write, 0),
        output_tokens=completion if reasoning_in_completion else completion + reasoning,
        reasoning_tokens=reasoning,
        cache_read_tokens=cached,
        cache_write_tokens=cache_write,
        cost_usd=float(cost) if cost is not None else None,
    )


def _content(message: Message) -> str | list[dict[str, Any]]:
    if not message.images:
        return message.text
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            # An empty text part beside an image (`Message.user("", images=[...])`) says
            # nothing, and endpoints that route to Anthropic reject it ("text content
            # blocks must be non-empty"); the Responses wire leaves it out alike.
            if part.text:
                parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "image_url", "image_url": {"url": part.url}})
    return parts


_NINE_ALNUM = re.compile(r"[a-zA-Z0-9]{9}")
_BASE62 = string.digits + string.ascii_letters


def short_call_id(call_id: str) -> str:
    """A tool call id as 9 characters of `[a-zA-Z0-9]` (`ChatOptions.short_tool_call_ids`):
    kept if it is one already, else derived from its SHA-256 (the same id, the same
    result, so a call and its tool message still match)."""
    if _NINE_ALNUM.fullmatch(call_id):
        return call_id
    n = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    chars = []
    for _ in range(9):
        n, r = divmod(n, 62)
        chars.append(_BASE62[r])
    return "".join(chars)


def chat_messages(
    messages: list[Message], options: ChatOptions | None = None
) -> list[dict[str, Any]]:
    """Messages in the Chat Completions shape, as the endpoint's `options` want them
    (tool call ids through `short_call_id`, reasoning beside tool calls)."""
    options = options or _PLAIN
    short_ids = options.short_tool_call_ids
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            call_id = message.tool_call_id
            if short_ids and call_id is not None:
                call_id = short_call_id(call_id)
            out.append({"role": "tool", "tool_call_id": call_id, "content": message.text})
        elif message.role == "assistant":
            if not message.text and not message.tool_calls:
                # Nothing to send: `content: null` is valid only beside tool calls (the
                # assistant message's schema), so an empty turn is left out, as in the
                # Responses wire.
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": short_call_id(call.id) if short_ids else call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_json},
                    }
                    for call in message.tool_calls
                ]
                if options.reasoning_with_tool_calls:
                    reasoning = "".join(
                        part.text for part in message.content if isinstance(part, ReasoningPart)
                    )
                    if reasoning:
                        entry["reasoning_content"] = reasoning
            if options.reasoning_details:
                details = [
                    detail
                    for part in message.content
                    if isinstance(part, ReasoningPart)
                    and (detail := _reasoning_detail(part)) is not None
                ]
                if details:
                    entry["reasoning_details"] = details
            out.append(entry)
        else:
            out.append({"role": message.role, "content": _content(message)})
    return out


def _reasoning_detail(part: ReasoningPart) -> dict[str, Any] | None:
    """A reasoning part that came from an OpenRouter reasoning detail, as that detail:
    its own fields, then its text, summary or data and its signature. Any other part
    is not one (no detail `type` to send it as)."""
    details = part.details
    if not details:
        return None
    kind = details.get("type")
    if kind == "reasoning.text":
        detail = {**details, "text": part.text}
        if part.signature is not None:
            detail["signature"] = part.signature
        return detail
    if kind == "reasoning.summary":
        return {**details, "summary": part.text}
    if kind == "reasoning.encrypted" and part.signature is not None:
        return {**details, "data": part.signature}
    return None


def _arguments_of(raw: Any) -> dict[str, Any]:
    """A provider-run tool's arguments as an object: a JSON object string read, an
    object as it is, nothing as `{}`, anything else kept whole under `arguments`."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"arguments": raw}


def _arguments_text(arguments: Any) -> str:
    """A call's `arguments` sent as a JSON object rather than its text (TGI and
    llama.cpp have sent it so): the object's JSON text. Anything else is not a call's
    arguments."""
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    raise ValueError(f"tool call arguments must be a JSON string, got {type(arguments).__name__}")


# A reasoning detail's content, which its fragments stream; its other fields describe it.
_DETAIL_CONTENT = frozenset({"text", "summary", "data", "signature"})


def _detail_fields(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning detail's own fields (`type`, `id`, `format`, `index`, ...), as sent."""
    return {name: value for name, value in item.items() if name not in _DETAIL_CONTENT}


def _status_of(error: dict[str, Any]) -> int | None:
    """The HTTP status an in-stream error names: Groq's `status_code`, OpenRouter's
    numeric `code`."""
    for key in ("status_code", "status", "code"):
        value = error.get(key)
        if isinstance(value, int) and 400 <= value < 600:
            return value
    return None


class ChatNormalizer(Normalizer):
    """Chat completion chunks -> fragments. Only choice 0 is read (n > 1 is not a
    single stream); other choices are ignored, with a warning once per stream."""

    def __init__(
        self, emit: Emit, provider: str, attempt: int = 1, options: ChatOptions | None = None
    ) -> None:
        super().__init__(emit, provider, attempt)
        self.options = options = options or ChatOptions()
        self.finish: str | None = None
        self.calls: dict[Any, int] = {}  # the wire's key of a call -> our index
        self.call_ids: dict[int, str] = {}
        self.last_call: int | None = None
        # calls whose name has not come yet: index -> [whether the id came, arguments]
        self.unnamed: dict[int, list[Any]] = {}
        self.think: ThinkTagSplitter | None = None
        self.content: Callable[[str], None] = self.text
        if options.think_tags:
            self.think = ThinkTagSplitter(self.text, self.reasoning)
            self.content = self.think.feed
        self._nested_usage = options.nested_usage
        self._reasoning_in_completion = options.reasoning_in_completion
        self.cited: set[tuple[str, str | None, str | None]] = set()
        self.server_tools: dict[Any, tuple[str, str, bool]] = {}  # key -> id, name, result
        self.warned_choices = False
        # The OpenRouter reasoning detail being streamed: its (type, index), its own
        # fields, and whether it said anything yet.
        self.detail_key: tuple[Any, Any] | None = None
        self.detail: dict[str, Any] | None = None
        self.detail_said = False

    def on_chunk(self, chunk: RawChunk) -> None:
        data = chunk.data
        if data == "[DONE]":
            self._settle()
            return
        try:  # json.loads without its wrapper: this is the hot path of every chunk
            payload, end = _scan_json(data, 0)
        except StopIteration:
            if chunk.event == "error":  # an error frame in plain words
                self._error(data)
                return
            payload, end = json.loads(data), len(data)  # raises the usual JSONDecodeError
        if end != len(data):
            payload = json.loads(data)  # trailing whitespace passes; anything else raises
        if payload.__class__ is not dict:
            raise ValueError(f"expected a JSON object, got {type(payload).__name__}")
        model = payload.get("model")
        if model:
            self.model = model
            if self.response_id is None:
                self.response_id = text_or_none(payload.get("id"))
        choices = payload.get("choices")
        if choices:
            for choice in choices:
                if choice.get("index", 0) == 0:
                    self._choice(choice)
                elif not self.warned_choices:
                    self.warned_choices = True
                    logger.bind(provider=self.provider, attempt=self.attempt).warning(
                        "choice {} ignored: only choice 0 is read (n > 1 is not one stream)",
                        choice.get("index"),
                    )
        usage = payload.get("usage")
        if not usage and self._nested_usage:
            usage = (payload.get(self._nested_usage) or {}).get("usage")
        if usage:
            self.usage(openai_usage(usage, self._reasoning_in_completion))
        error = payload.get("error")
        if error or chunk.event == "error":
            self._error(error if error is not None else payload)
        elif usage and self.finish is not None:
            self._settle()

    def end(self) -> None:
        if self.finish is not None:
            self._settle()
        elif self.think is not None:
            self.think.flush()  # the stream was cut: what was held is still output

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if delta:
            details = delta.get("reasoning_details")
            if details:
                self._reasoning_details(details, delta)
            else:
                if self.detail is not None:  # other output: the detail is complete
                    self._end_detail()
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if reasoning:
                    self.reasoning(reasoning)
            content = delta.get("content")
            if content:
                if content.__class__ is str:
                    self.content(content)
                else:
                    self._content_parts(content)
            refusal = delta.get("refusal")
            if refusal:
                self.refusal(refusal)
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                for call in tool_calls:
                    self._tool_call(call)
            annotations = delta.get("annotations")
            if annotations:
                self._annotations(annotations)
            executed = delta.get("executed_tools")
            if executed:
                self._executed_tools(executed)
        message = choice.get("message")
        if message:  # a whole message in a chunk: only what deltas cannot repeat
            annotations = message.get("annotations")
            if annotations:
                self._annotations(annotations)
            executed = message.get("executed_tools")
            if executed:
                self._executed_tools(executed)
        finish = choice.get("finish_reason")
        if finish and self.finish is None:
            if self.detail is not None:
                self._end_detail()
            self.finish = finish if isinstance(finish, str) else json.dumps(finish)
            if finish != "error":  # OpenRouter's failed turn: its calls are not complete
                if self.unnamed:
                    self._release_unnamed()
                for index in self.call_ids:  # a finish ends every call: dispatch them now
                    self.tool_end(index)

    def _annotations(self, annotations: list[dict[str, Any]]) -> None:
        """`url_citation` annotations as citations, each once per turn."""
        for annotation in annotations:
            if annotation.get("type") != "url_citation":
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "annotation of type {} is not a citation", annotation.get("type")
                )
                continue
            cited = annotation.get("url_citation") or annotation  # flat in some servers
            url = cited.get("url")
            if not url:
                continue
            key = (url, cited.get("title") or None, cited.get("content") or None)
            if key not in self.cited:
                self.cited.add(key)
                self.citation(*key)

    def _executed_tools(self, executed: list[dict[str, Any]]) -> None:
        """Groq's built-in tools: a call when first seen, a result once it has output."""
        for position, entry in enumerate(executed):
            index = entry.get("index")
            key = index if index is not None else ("position", position)
            known = self.server_tools.get(key)
            if known is None:
                name = str(entry.get("type") or "tool")
                call_id = f"{name}_{len(self.server_tools)}"
                known = (call_id, name, False)
                self.server_tools[key] = known
                self.server_tool_call(call_id, name, _arguments_of(entry.get("arguments")))
            call_id, name, reported = known
            if not reported and entry.get("output") is not None:
                self.server_tools[key] = (call_id, name, True)
                content = {
                    k: v for k, v in entry.items() if k not in ("index", "type", "arguments")
                }
                self.server_tool_result(call_id, name, content)

    def _reasoning_details(self, details: list[dict[str, Any]], delta: dict[str, Any]) -> None:
        """OpenRouter's typed reasoning items. The text they carry is the same text as
        the plain `reasoning` field beside them, so that field is read only when no item
        carried text (an encrypted-only delta)."""
        carried_text = False
        for item in details:
            kind = item.get("type")
            if kind == "reasoning.encrypted":
                data = item.get("data")
                if data:  # whole in one fragment: a block of its own
                    if self.detail is not None:
                        self._end_detail()
                    self.reasoning(signature=data, redacted=True, details=_detail_fields(item))
                continue
            if kind == "reasoning.text":
                text = item.get("text") or ""
            elif kind == "reasoning.summary":
                text = item.get("summary") or ""
            else:
                continue
            carried_text = True
            self._detail_fragment(kind, item)
            if text:
                self.detail_said = True
                self.reasoning(text)
            signature = item.get("signature") or None
            if signature:  # the signature ends the detail (Anthropic's, last)
                self._end_detail(signature)
        if not carried_text:
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.reasoning(reasoning)

    def _detail_fragment(self, kind: str, item: dict[str, Any]) -> None:
        """A fragment of a text or summary detail: the next fragment of the open detail
        when its type and index are the same (a field it did not send yet is taken
        from it), else the first of a new one."""
        key = (kind, item.get("index"))
        detail = self.detail
        if detail is not None and key == self.detail_key:
            for name, value in item.items():
                if value is not None and name not in _DETAIL_CONTENT:
                    detail[name] = value
            return
        if detail is not None:
            self._end_detail()
        self.detail_key, self.detail = key, _detail_fields(item)

    def _end_detail(self, signature: str | None = None) -> None:
        """The open detail is complete: one delta closes it with its own fields (and
        the signature that ended it), unless it said nothing at all."""
        detail, self.detail = self.detail, None
        said, self.detail_said = self.detail_said, False
        if detail is not None and (said or signature is not None):
            self.reasoning(signature=signature, details=detail)

    def _content_parts(self, parts: list[dict[str, Any]]) -> None:
        """Mistral's content as a list of typed chunks: `text`, and `thinking` whose
        own chunks (text) are reasoning."""
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if text:
                    self.content(text)
            elif kind == "thinking":
                thinking = part.get("thinking")
                if isinstance(thinking, str):
                    if thinking:
                        self.reasoning(thinking)
                    continue
                for inner in thinking or ():
                    text = inner.get("text") if inner.get("type") == "text" else None
                    if text:
                        self.reasoning(text)

    def _tool_call(self, call: dict[str, Any]) -> None:
        key = call.get("index")
        call_id = call.get("id")
        function = call.get("function") or {}
        name = function.get("name")
        if key is not None:
            index = self.calls.get(key)
            if (
                index is not None
                and call_id
                and name
                and call_id != self.call_ids[index]
                and index not in self.unnamed
            ):
                # A new id and name on a known index is a new call (Ollama has sent
                # every parallel call as index 0); a new id alone is not (some servers
                # send a fresh id on every fragment of one call).
                index = None
        elif self.last_call is not None and call_id in (None, self.call_ids[self.last_call]):
            index = self.last_call  # no index on the wire (Mistral): same id, same call
        else:
            index = None
        if index is None:
            if self.think is not None:
                self.think.flush()  # text held so far comes before the call
            index = len(self.call_ids)
            self.calls[key if key is not None else ("no-index", index)] = index
            self.call_ids[index] = call_id or f"call_{index}"
            if name:
                self.tool_start(self.call_ids[index], name, index)
            else:  # its name comes in a later delta: the call starts then
                self.unnamed[index] = [bool(call_id), []]
        elif self.unnamed and index in self.unnamed:
            self._name_call(index, call_id, name)
        self.last_call = index
        arguments = function.get("arguments")
        if arguments:
            if arguments.__class__ is not str:
                arguments = _arguments_text(arguments)
            held = self.unnamed.get(index) if self.unnamed else None
            if held is not None:
                held[1].append(arguments)
            else:
                self.tool_args(index, arguments)

    def _name_call(self, index: int, call_id: str | None, name: str | None) -> None:
        """A later delta of a call not started yet: its id if none came, and its name,
        which starts it with the arguments held so far."""
        held = self.unnamed[index]
        if call_id and not held[0]:
            held[0] = True
            self.call_ids[index] = call_id
        if name:
            del self.unnamed[index]
            self.tool_start(self.call_ids[index], name, index)
            for piece in held[1]:
                self.tool_args(index, piece)

    def _release_unnamed(self) -> None:
        """The turn ended with calls that never named their tool: they start as they
        are, with no name, rather than be dropped."""
        for index in list(self.unnamed):
            pieces = self.unnamed.pop(index)[1]
            logger.bind(provider=self.provider, attempt=self.attempt).warning(
                "tool call {} ended without a name", self.call_ids[index]
            )
            self.tool_start(self.call_ids[index], "", index)
            for piece in pieces:
                self.tool_args(index, piece)

    def _error(self, error: Any) -> None:
        """An error chunk after `200 OK` (TGI's validation string, llama.cpp's context
        error object): read by the same parser as HTTP error bodies, so the recovery
        layer sees the same `param`, `code` and wait wherever the rejection came."""
        if self.think is not None:
            self.think.flush()
        body = parse_error_payload(error)
        self.fail(
            "stream_error",
            body.message or str(error),
            status=_status_of(error) if isinstance(error, dict) else None,
            raw=json.dumps(error, ensure_ascii=False),
            param=body.param,
            code=body.code,
            retry_after=body.retry_after,
        )

    def _settle(self) -> None:
        if self.detail is not None:  # [DONE] without a finish (Snowflake)
            self._end_detail()
        if self.think is not None:
            self.think.flush()
        if self.finish == "error":  # OpenRouter's finish of a failed turn, no error object
            self.fail("stream_error", f"{self.provider} ended the turn with finish_reason 'error'")
        elif self.finish is not None:
            self.done(stop_reason_of(self.finish, FINISH_REASONS), self.finish)
        else:  # [DONE] with no finish reason (Snowflake never sends one)
            if self.unnamed:
                self._release_unnamed()
            self.done("tool_use" if self.calls else "stop")


class OpenAIChat(WireProtocol):
    """The OpenAI Chat Completions wire, for OpenAI and every compatible endpoint."""

    # `stream_options` is only asked for usage; a user may ask for more (or less).
    param_defaults: ClassVar[frozenset[str]] = frozenset({"stream_options"})

    def __init__(
        self,
        name: str = "openai",
        default_base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        requires_api_key: bool = True,
        options: ChatOptions | None = None,
        recovery: RecoveryPolicy = DEGRADES,
        ssrf_guard_by_default: bool = False,
    ) -> None:
        self.name = name
        self.recovery = recovery
        self.ssrf_guard_by_default = ssrf_guard_by_default
        self.default_base_url = default_base_url
        self.api_key_env = api_key_env
        self.requires_api_key = requires_api_key
        self.options = options or ChatOptions()
        if self.options.sampling_renames:  # the endpoint's own body keys
            self.sampling_keys = {**self.sampling_keys, **self.options.sampling_renames}

    def __repr__(self) -> str:
        return f"OpenAIChat({self.name!r}, {self.default_base_url!r}, {self.options})"

    def url(self, base_url: str, request: ChatRequest) -> str:
        # A query on the base URL (Azure's `?api-version=...`) stays after the path.
        base, mark, query = base_url.partition("?")
        return base.rstrip("/") + "/chat/completions" + mark + query

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            key_header = self.options.api_key_header
            if key_header:
                headers[key_header] = api_key
            else:
                headers["Authorization"] = f"Bearer {api_key}"
        return headers | self.options.extra_headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(request.messages, self.options),
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
        return body

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> ChatNormalizer:
        return ChatNormalizer(emit, provider, attempt, self.options)
