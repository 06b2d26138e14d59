"""What every wire protocol provides, and the emitting helpers its normalizer shares.

A provider module holds wire knowledge only: how to build the request body, and how
to read that provider's chunks into fragments. Transport lives in `rxllm.sources`,
stream mechanics in `rxllm.operators`.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal, NamedTuple, TypeAlias

from loguru import logger
from pydantic_core import from_json
from reactivex import Observable

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import (
    MAX_ERROR_BODY_BYTES,
    MAX_MESSAGE_CHARS,
    envelope_status,
    error_envelope,
    parse_error_body,
    parse_error_payload,
    request_id_of,
)
from rxllm.errors import ConfigError
from rxllm.events import (
    Citation,
    Done,
    ErrorInfo,
    ErrorKind,
    ReasoningDelta,
    Refusal,
    ServerToolCall,
    ServerToolResult,
    StopReason,
    TextDelta,
    ToolStart,
    Usage,
    UsageUpdate,
    failed,
)
from rxllm.fragments import (
    Emit,
    FailureUsage,
    RawChunk,
    SourceItem,
    ToolArgs,
    ToolEnd,
    ToolInputCut,
)
from rxllm.providers.call_ids import answer_each_call, response_tag
from rxllm.providers.wire_signs import json_type
from rxllm.request import (
    SAMPLING_FIELDS,
    TOOL_CHOICE_MODES,
    ChatRequest,
    JsonSchema,
    Part,
    ReasoningPart,
)
from rxllm.secrets import redact_head, redact_said

__all__ = [
    "REQUEST_KEYS",
    "SAMPLING_ALIASES",
    "TOOL_CHOICE_KEYS",
    "Normalizer",
    "RawOperator",
    "ToolNames",
    "WireProtocol",
    "chat_response_format",
    "cited_source",
    "endpoint",
    "gemini_text_signature",
    "json_schema_fields",
    "read_json",
    "response_format_given",
    "server_result_content",
    "server_result_failed",
    "stop_reason_of",
    "text_or_none",
    "thinking_switch",
]

RawOperator: TypeAlias = Callable[[Observable[SourceItem]], Observable[SourceItem]]

# What every wire writes from the request itself, and why params may not: a request's
# params add keys to the body, they never change what the request says (DESIGN.md,
# "params (extra body keys) may not override model, messages, stream...").
REQUEST_KEYS: Mapping[str, str] = {
    "model": "the model is ChatRequest.model",
    "messages": "the conversation is ChatRequest.messages",
    "stream": "rxllm streams every request",
}


# The names the wires and their users give each `ChatRequest` sampling field: the same
# setting under another name in params is the field set twice, whichever wire the request
# goes to (one would be lost, or the endpoint would take both: Anthropic's `max_tokens`
# beside an unknown `max_completion_tokens`, Mistral's strict validation refusing the
# second). OpenAI's chat names, the Responses API's, Anthropic's, Gemini's (camelCase and
# snake_case, both of which it reads) and Mistral's `random_seed`.
SAMPLING_ALIASES: Mapping[str, frozenset[str]] = {
    "temperature": frozenset({"temperature"}),
    "top_p": frozenset({"top_p", "topP"}),
    "max_tokens": frozenset(
        {"max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"}
    ),
    "stop": frozenset({"stop", "stop_sequences", "stopSequences"}),
    "seed": frozenset({"seed", "random_seed"}),
    "presence_penalty": frozenset({"presence_penalty", "presencePenalty"}),
    "frequency_penalty": frozenset({"frequency_penalty", "frequencyPenalty"}),
}


# The keys the wires give `ChatRequest.tool_choice`: OpenAI's, the Responses API's and
# Anthropic's `tool_choice`, Gemini's `toolConfig` (camelCase and snake_case). In params
# they are the field set twice, whichever wire the request goes to: a fallback shares
# the request, and one wire's form is another's 400 (Anthropic refuses `"required"`,
# Gemini an unknown `tool_choice`) or is dropped by a degraded retry. A Gemini
# `toolConfig` without `functionCallingConfig` holds other settings
# (`includeServerSideToolInvocations`, `retrievalConfig`), which the google wire keeps.
TOOL_CHOICE_KEYS = frozenset({"tool_choice", "toolConfig", "tool_config"})
_FUNCTION_CALLING = frozenset({"functionCallingConfig", "function_calling_config"})


def tool_choice_given(params: Mapping[str, Any]) -> str | None:
    """The key of `params` that sets the tool choice (`TOOL_CHOICE_KEYS`), or None."""
    for key in sorted(params.keys() & TOOL_CHOICE_KEYS):
        value = params[key]
        if (
            key != "tool_choice"
            and isinstance(value, Mapping)
            and not value.keys() & _FUNCTION_CALLING
        ):
            continue  # Gemini's other tool settings: not the choice
        return key
    return None


# Gemini's settings of the answer's form (`generationConfig`, at the top level of params
# or inside a `generationConfig` dict, camelCase or snake_case).
_GEMINI_OUTPUT = frozenset(
    {
        "responseMimeType",
        "response_mime_type",
        "responseSchema",
        "response_schema",
        "responseJsonSchema",
        "response_json_schema",
    }
)


def response_format_given(params: Mapping[str, Any]) -> str | None:
    """Where `params` set the form of the answer, as `params[...]`, or None: OpenAI chat's
    `response_format`, Anthropic's `output_format` (its deprecated beta form), the
    Responses `text.format` and Anthropic's `output_config.format` (a `text` holding only
    `verbosity`, an `output_config` only `effort`, are other settings), Gemini's
    `responseMimeType`, `responseSchema` or `responseJsonSchema`. In params beside
    `ChatRequest.response_format` they are the field set twice, whichever wire the
    request goes to: a fallback shares the request, and one wire's form is another's 400
    ("Unknown name", "Extra inputs are not permitted") or a key a degraded retry drops,
    the answer then in prose."""
    for key in ("response_format", "output_format"):
        if key in params:
            return f"params[{key!r}]"
    for key in ("text", "output_config"):
        value = params.get(key)
        if isinstance(value, Mapping) and "format" in value:
            return f"params[{key!r}]['format']"
    for key in sorted(params.keys() & _GEMINI_OUTPUT):
        return f"params[{key!r}]"
    for key in ("generationConfig", "generation_config"):
        config = params.get(key)
        if isinstance(config, Mapping):
            for name in sorted(config.keys() & _GEMINI_OUTPUT):
                return f"params[{key!r}][{name!r}]"
    return None


def chat_response_format(output: Literal["json"] | JsonSchema) -> dict[str, Any]:
    """`ChatRequest.response_format` as Chat Completions' `response_format`: `{"type":
    "json_object"}`, or `{"type": "json_schema", "json_schema": {"name", "description",
    "schema", "strict"}}` (the description and `strict` where set)."""
    if output == "json":
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": json_schema_fields(output)}


def json_schema_fields(output: JsonSchema) -> dict[str, Any]:
    """A `JsonSchema`'s fields as OpenAI's wires name them, those unset left out."""
    fields: dict[str, Any] = {"name": output.name}
    if output.description is not None:
        fields["description"] = output.description
    fields["schema"] = output.schema_
    if output.strict is not None:
        fields["strict"] = output.strict
    return fields


def thinking_switch(params: Mapping[str, Any]) -> bool | None:
    """What the `thinking` switch of params says, where they hold one: on unless its type
    is `disabled` (Anthropic's `enabled` with its budget and `adaptive`, Moonshot's and
    Z.ai's `enabled`); None without one, where the model's own default holds (off on
    Anthropic, on for Moonshot's thinking Kimi models)."""
    switch = params.get("thinking")
    return switch.get("type") != "disabled" if isinstance(switch, Mapping) else None


def text_or_none(value: object) -> str | None:
    """A wire field that should be a string (an id), or None when it is not one."""
    return value if isinstance(value, str) and value else None


def server_result_content(block: Mapping[str, Any]) -> Any:
    """What an Anthropic `*_tool_result` block gave, as its wire and the relays that pass
    it on (LiteLLM's chat wire) write it: its `content`, an MCP failure's said beside it
    (`is_error`)."""
    content = block.get("content")
    return {"is_error": True, "content": content} if block.get("is_error") is True else content


def server_result_failed(block: Mapping[str, Any]) -> bool:
    """Whether such a block says its tool failed: its content an error object, typed
    `<tool>_tool_result_error` with an `error_code` (`web_search_tool_result_error`,
    `web_fetch_`, `code_execution_`, `bash_code_execution_`,
    `text_editor_code_execution_`, `tool_search_`), or an MCP result's `is_error`.
    The web fetch tool's page shows its error object typed `web_fetch_tool_error`
    (the SDKs' type is `web_fetch_tool_result_error`), and proxies that run the tool
    themselves for Bedrock write what the page shows: both are the error. So is code
    that ran and failed: a `code_execution_result`, `bash_code_execution_result` or
    `encrypted_code_execution_result` whose `return_code` is not 0, as Gemini's
    outcome `OUTCOME_FAILED` is."""
    if block.get("is_error") is True:
        return True
    content = block.get("content")
    if content.__class__ is not dict:
        return False
    kind, code = content.get("type"), content.get("return_code")
    return (isinstance(kind, str) and kind.endswith(_RESULT_ERRORS)) or (
        code.__class__ is int and code != 0  # (not a bool: True is no exit status)
    )


# The ends of a provider-run tool's error object's type (`server_result_failed`).
_RESULT_ERRORS = ("_tool_result_error", "_tool_error")


def cited_source(citation: Any) -> tuple[str, str | None, str | None] | None:
    """An Anthropic citation's source, as its wire and the relays that pass it on
    (Databricks serving Claude) write it: the URL (a web search result's `url`, a search
    result's `source`), the title and the cited text; None for one with no URL (a
    document's `char_location` or `page_location`: an index into the client's documents)."""
    if citation.__class__ is not dict:
        return None
    url = citation.get("url")
    if not url and citation.get("type") == "search_result_location":
        url = citation.get("source")
    if not isinstance(url, str) or not url:
        return None
    title = citation.get("title") or citation.get("document_title")
    cited = citation.get("cited_text")
    return url, title if isinstance(title, str) else None, cited if isinstance(cited, str) else None


def gemini_text_signature(content: Sequence[Part]) -> str | None:
    """The last signature Gemini gave a turn's text: a reasoning part whose details are a
    text or thought part's (`{}`, `{"thought": true}`), as both of Gemini's wires (its
    own, and its OpenAI-compatible endpoint) mark one; no other wire's details are
    either. Each wire puts it back on the turn's text."""
    signature = None
    for part in content:
        if (
            isinstance(part, ReasoningPart)
            and part.signature
            and not part.redacted
            and part.details is not None
            and part.details.keys() <= {"thought"}
        ):
            signature = part.signature
    return signature


def stop_reason_of(raw: str | None, table: Mapping[str, StopReason]) -> StopReason:
    """Map a provider's finish reason; an unknown one is `other` (the raw value is kept
    on the event by the caller)."""
    if not isinstance(raw, str):
        return "other"
    return table.get(raw, "other")


def endpoint(base_url: str, path: str) -> str:
    """The URL of `path` under `base_url`: after the base's path, and before its query
    (Azure's `?api-version=...`, a gateway's key), which joins any query `path` has.
    Not cached here: the provider keeps one string per URL for its streams (a URL may
    hold a key, which goes when the provider does)."""
    base, _, query = base_url.partition("?")
    url = base.rstrip("/") + path
    if query:
        url += ("&" if "?" in path else "?") + query
    return url


def read_json(text: str) -> Any:
    """`json.loads(text)`, read first by pydantic-core's parser (jiter, installed with
    pydantic), which reads a provider's chunk in about two thirds of the time of the
    standard library's C scanner. What it refuses (invalid JSON, nesting past its depth,
    a string with a lone surrogate) the standard library reads again, so every value
    and every error is `json.loads`'s own; NaN, Infinity and integers of any size read
    alike in both."""
    try:
        return from_json(text)
    except (ValueError, TypeError):  # TypeError: a str that UTF-8 cannot encode
        return json.loads(text)


def _not_a_string(what: str, value: object) -> TypeError:
    return TypeError(f"{what} is {json_type(value)}, not a string")


def _events_of_lines(data: str) -> list[str] | None:
    """The events of `data` whose lines are each a whole JSON value (or `[DONE]`): a
    server or recorder that wrote its events without the blank line between them
    (simonw/llm's stream_tool_call.txt, vscode-copilot-chat's fixtures), whose lines the
    SSE rules join into one value. None for data that is not so (a value of several lines
    that parses whole never gets here)."""
    lines = data.split("\n")
    if len(lines) < 2:
        return None
    for line in lines:
        if line.strip() != "[DONE]":
            try:
                json.loads(line)
            except (ValueError, RecursionError):
                return None
    return lines


def _error_text(text: str, secrets: tuple[str, ...]) -> str:
    """An error's message or raw text as the event carries it: redacted, then cut on a
    character's boundary to the bytes an HTTP error body is read to
    (`MAX_ERROR_BODY_BYTES`), so that an error a stream sends (a megabyte in one `data:`
    line) is no longer than one a rejection's body holds. Redacted first: cut first, a
    key the cut falls in would show its start, which `redact` no longer recognizes."""
    cap = MAX_ERROR_BODY_BYTES
    shown = redact_head(text, secrets, cap)  # characters: up to 4 bytes each
    data = shown.encode("utf-8", "surrogatepass")
    if len(data) <= cap:
        return shown
    end = cap
    while data[end] & 0xC0 == 0x80:  # a continuation byte: the cut is inside a character
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass")


class Normalizer(ABC):
    """Reads one attempt's raw chunks and emits fragments. One instance per attempt, so
    its state never outlives the stream it belongs to.

    Subclasses implement `on_chunk` (and `end`, for what the end of the body means;
    `release`, where they hold output back); the helpers build events without
    validation, since they run once per chunk. A frame labelled an error goes through
    `error_frame`, which ends the turn in an error whatever the wire made of it.
    """

    # Slots: one instance per stream, so its attributes are not a dict per stream.
    __slots__ = (
        "attempt",
        "call_tag",
        "calls_offered",
        "chunk_data",
        "emit",
        "halves_possible",
        "model",
        "provider",
        "response_headers",
        "response_id",
        "secrets",
        "settled",
    )

    def __init__(self, emit: Emit, provider: str, attempt: int = 1) -> None:
        self.emit = emit
        self.provider = provider
        self.attempt = attempt
        self.model: str | None = None
        self.response_id: str | None = None
        self.chunk_data = ""
        """The data of the chunk being read (`feed`), which `response_tag` reads when the
        response has no id; empty between chunks, so a stream in flight does not keep
        its last chunk's text."""
        self.call_tag: str | None = None
        self.settled = False
        self.response_headers: Mapping[str, str] | None = None
        """The response's headers, from the source: an error in the body names the
        response's request id."""
        self.secrets: tuple[str, ...] = ()
        """The request's credentials (`HttpRequest.secrets`): an error the provider
        sends inside the body may quote them, and `fail` redacts them as the HTTP
        source redacts a rejection's."""
        self.calls_offered = True
        """Whether the request offered the model tools to call (`HttpRequest.calls_offered`),
        which a wire that finds calls written in the text reads (the chat wire's DSML);
        True where no request is known (a replay)."""
        self.halves_possible = False
        """A chunk held a string pydantic-core's parser refuses, a lone UTF-16 half among
        them, which `json.loads` reads (`read_chunk`): from then on `operators.normalize`
        joins the halves a provider cut apart. Until then no text can hold one."""

    def read_chunk(self, data: str) -> Any:
        """A chunk's JSON (`read_json`), noting a chunk only the standard library reads
        (`halves_possible`): its strings may hold lone UTF-16 halves."""
        try:
            return from_json(data)
        except (ValueError, TypeError):
            self.halves_possible = True
        return read_json(data)

    def response_tag(self) -> str:
        """The tag of the ids rxllm gives this response's calls that came without one
        (`call_ids.response_tag`: `{name}_{tag}_{index}`), made at the first such call."""
        tag = self.call_tag
        if tag is None:
            tag = self.call_tag = response_tag(self.response_id, self.chunk_data)
        return tag

    def feed(self, chunk: RawChunk) -> None:
        if self.settled:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored a chunk after the terminal event: {}", chunk.event
            )
            return
        if chunk.event == "error":  # the one test every chunk pays for error frames
            self.error_frame(chunk)
            return
        data = chunk.data
        if not data or data.isspace():
            # An event with empty data (`data:` alone) carries nothing to lose: a
            # keepalive some proxies send. Any other data that is not the wire's is an
            # error, since skipping it could drop part of the answer.
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "skipped an event with empty data: {}", chunk.event
            )
            return
        self.chunk_data = data
        try:
            self.on_chunk(chunk)
        except (ValueError, TypeError, AttributeError):
            # Events written without the blank line between them: the SSE rules join
            # their `data` lines into one value that is no JSON; each line is its event.
            lines = None if self.settled else _events_of_lines(data)
            if lines is not None:
                for line in lines:
                    self.feed(chunk._replace(data=line))
                return
            # Not the wire's shape: an error envelope in place of a chunk (a list of
            # one, as Google's OpenAI-compatible endpoint sends) is that error; anything
            # else is a chunk that cannot be read (a `protocol` error).
            payload = error_envelope(data.strip())
            if payload is None or self.settled:
                raise
            self.stream_error(payload, data)
        finally:
            self.chunk_data = ""

    @abstractmethod
    def on_chunk(self, chunk: RawChunk) -> None: ...

    def end(self) -> None:  # noqa: B027 - optional hook; the default is right for most
        """The body ended. By default nothing: no terminal seen means truncated."""

    def release(self) -> None:  # noqa: B027 - optional hook; most wires hold nothing back
        """Let out the output this wire holds back (the chat wire's think-tag splitter
        holds what may be the start of a tag): called before `stream_error` ends the
        turn, so that no text the provider sent before its error is lost."""

    # -- emitting helpers -------------------------------------------------------------

    # These build events without validation (the hot path): a wire value that is not a
    # string is caught here, for every wire, as a chunk that cannot be read (a `protocol`
    # error), never an event holding a number.

    def text(self, text: str, phase: str | None = None) -> None:
        if text.__class__ is not str:
            raise _not_a_string("a text delta", text)
        if phase is None:
            self.emit(TextDelta.of(self.provider, self.attempt, text))
        else:
            self.emit(
                TextDelta.make(provider=self.provider, attempt=self.attempt, text=text, phase=phase)
            )

    def reasoning(
        self,
        text: str = "",
        signature: str | None = None,
        redacted: bool = False,
        details: dict[str, Any] | None = None,
    ) -> None:
        if text.__class__ is not str:
            raise _not_a_string("a reasoning delta", text)
        if signature is not None and signature.__class__ is not str:
            raise _not_a_string("a reasoning signature", signature)
        self.emit(
            ReasoningDelta.make(
                provider=self.provider,
                attempt=self.attempt,
                text=text,
                signature=signature,
                redacted=redacted,
                details=details,
            )
        )

    def tool_start(
        self,
        call_id: str,
        name: str,
        index: int,
        signature: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.emit(
            ToolStart.make(
                provider=self.provider,
                attempt=self.attempt,
                call_id=call_id,
                name=name,
                index=index,
                signature=signature,
                details=details,
            )
        )

    def tool_args(self, index: int, delta: str) -> None:
        if delta.__class__ is not str:
            raise _not_a_string("a tool-argument fragment", delta)
        self.emit(ToolArgs(index, delta))

    def tool_end(
        self, index: int, arguments: str | None = None, signature: str | None = None
    ) -> None:
        if signature is not None and signature.__class__ is not str:
            raise _not_a_string("a tool call's signature", signature)
        self.emit(ToolEnd(index, arguments, signature))

    def tool_input_cut(self, index: int, text: str) -> None:
        """Custom tool call `index`'s free-text input was cut off by the turn's stop
        (`ToolInputCut`): `text` is what came of it."""
        self.emit(ToolInputCut(index, text))

    def refusal(self, text: str) -> None:
        if text.__class__ is not str:
            raise _not_a_string("a refusal delta", text)
        self.emit(Refusal.make(provider=self.provider, attempt=self.attempt, text=text))

    def citation(self, url: str, title: str | None = None, cited_text: str | None = None) -> None:
        self.emit(
            Citation.make(
                provider=self.provider,
                attempt=self.attempt,
                url=url,
                title=title,
                cited_text=cited_text,
            )
        )

    def server_tool_call(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        raw: dict[str, Any] | None = None,
    ) -> None:
        self.emit(
            ServerToolCall.make(
                provider=self.provider,
                attempt=self.attempt,
                call_id=call_id,
                name=name,
                arguments=arguments,
                raw=raw,
            )
        )

    def server_tool_result(
        self,
        call_id: str,
        name: str,
        content: Any,
        raw: dict[str, Any] | None = None,
        is_error: bool = False,
    ) -> None:
        self.emit(
            ServerToolResult.make(
                provider=self.provider,
                attempt=self.attempt,
                call_id=call_id,
                name=name,
                content=content,
                raw=raw,
                is_error=is_error,
            )
        )

    def usage(self, usage: Usage) -> None:
        self.emit(UsageUpdate.make(provider=self.provider, attempt=self.attempt, usage=usage))

    def failure_usage(self, usage: Usage) -> None:
        """The usage that comes with the failure about to be emitted (in its chunk, its
        event or its finish): reported only where the attempt had committed already."""
        self.emit(FailureUsage(self.provider, self.attempt, usage))

    def done(
        self,
        stop_reason: StopReason,
        raw_stop_reason: str | None = None,
        container: str | None = None,
    ) -> None:
        self.settled = True
        if raw_stop_reason is not None and raw_stop_reason.__class__ is not str:
            # A reason in another JSON type (a proto enum's number, `"finishReason": 1`,
            # from a relay dumping Gemini's messages) is kept as its JSON text.
            raw_stop_reason = json.dumps(raw_stop_reason)
        self.emit(
            Done.make(
                provider=self.provider,
                attempt=self.attempt,
                stop_reason=stop_reason,
                raw_stop_reason=raw_stop_reason,
                model=self.model,
                response_id=self.response_id,
                container=container,
            )
        )

    def fail(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        raw: str | None = None,
        **fields: Any,
    ) -> None:
        """End the attempt with an error; `fields`: ErrorInfo's optional structured ones
        (`param`, `code`, `retry_after`) where the provider sent them. A wire states
        what the provider said; whether it may be retried is the recovery policy's."""
        self.settled = True
        # A provider may send an error with an empty message; the event always says what.
        message = message.strip() or f"{self.provider} reported a {kind} without a message"
        message = _error_text(message, self.secrets)
        if raw is not None:
            raw = _error_text(raw, self.secrets)
        if fields.get("request_id") is None and self.response_headers is not None:
            fields["request_id"] = request_id_of(self.response_headers)
        redact_said(fields, self.secrets)
        self.emit(
            failed(
                self.provider,
                kind,
                message,
                attempt=self.attempt,
                status=status,
                raw=raw,
                **fields,
            )
        )

    def another_api(self, api: str, kind: Any, raw: str, wanted: str) -> None:
        """End the attempt at an event of another API's stream (`api`, as
        `rxllm.providers.wire_signs.other_api` names it; `kind`, its type): a base URL or a
        relay's route that speaks another wire. Every event of it would be as unreadable,
        and the same request gets the same stream, so the first ends the turn, a protocol
        error saying what the wire reads (`wanted`), never retried as if cut."""
        what = f" ({kind!r})" if kind.__class__ is str else ""
        self.fail(
            "protocol", f"{self.provider} sent an event of {api}{what}, not {wanted}", raw=raw
        )

    # -- error frames -----------------------------------------------------------------

    def error_frame(self, chunk: RawChunk) -> None:
        """A frame the server labelled an error (`event: error`, or llama.cpp's `error:`
        line, which the SSE decoder reads as one) always ends the turn in an error.

        A JSON object is the wire's to read first (`on_chunk`), with its documented
        shapes and what they stand for (Anthropic's `overloaded_error` is status 529).
        Whatever that reading leaves unsettled (an object with no field the wire knows,
        a bare message, JSON that is no object, no data at all) ends here, read by the
        shared reader of error bodies: a frame labelled error is never dropped, even
        after the turn looked complete. An object whose own `type` names one of the
        wire's content events is read as that event first; one the wire cannot read
        raises, as any chunk does (a `protocol` error)."""
        data = chunk.data
        try:
            payload: Any = json.loads(data)
        except (ValueError, RecursionError):  # plain words, nothing, or nested past reading
            payload = None
        if payload.__class__ is dict:
            self.chunk_data = data
            try:
                self.on_chunk(chunk)
            finally:
                self.chunk_data = ""
            if self.settled:
                return
        if not data.strip():
            self.release()
            self.fail("stream_error", f"{self.provider} sent an error event without data")
            return
        self.stream_error(payload, data)

    def stream_error(self, payload: Any, raw: str) -> None:
        """End the turn with `error(kind="stream_error")` read from an error payload of
        any shape (any provider's envelope, a list, a string) by the reader of HTTP
        error bodies (`rxllm.error_body`), so that the recovery policy sees the same
        status, code, param and wait wherever the error came. `payload` is the decoded
        error, or None for a frame that is not JSON, whose text is then read as an error
        page is; `raw` is what the provider sent. What the wire holds back comes first."""
        self.release()
        body = parse_error_body(raw) if payload is None else parse_error_payload(payload)
        # no words: what it sent, redacted before it is cut, so no key shows its start
        message = body.message or redact_head(raw.strip(), self.secrets, MAX_MESSAGE_CHARS)
        self.fail(
            "stream_error",
            message,
            status=envelope_status(payload),
            raw=raw,
            **body.fields(),  # no header inside a stream: the body's own word on a retry
        )


class ToolNames(NamedTuple):
    """The tool names an endpoint takes (`WireProtocol.tool_names`): the rule, and the
    rule in words, for the error."""

    pattern: re.Pattern[str]
    says: str


class WireProtocol(ABC):
    """One provider's wire: where to send, what to send, how to read what comes back."""

    name: str
    default_base_url: str
    api_key_env: str | None = None
    """The environment variable holding the API key; None where no key is needed."""
    requires_api_key: bool = True
    recovery: RecoveryPolicy = RecoveryPolicy()
    """How this provider's rejections are read (`rxllm.degradation`): by default no
    degraded bodies, only backoff on rate limits and overload. Its
    `mandatory_body_keys` are the keys this provider needs in every body: a degraded
    retry never drops them, and params may not overwrite one the wire wrote."""
    tool_names: ToolNames | None = None
    """The tool names this endpoint takes, where it is stricter than `rxllm.Tool`: a name
    it refuses is a `ConfigError` when the body is built. Its 400 would name the tool's
    definition, and a degraded retry would drop every tool."""
    request_keys: ClassVar[Mapping[str, str]] = REQUEST_KEYS
    """Body keys the wire writes from the request itself, each with why params may not
    set it: refused in params always, whether or not this request wrote it."""
    ssrf_guard_by_default: bool = False
    """Whether the SSRF guard (`rxllm.sources.guard`) is on unless the user says: on
    where the URL is anyone's (`custom`); off for a provider's own endpoint and for the
    localhost-first presets, whose point is a server on this machine."""
    param_defaults: ClassVar[frozenset[str]] = frozenset()
    """Keys the wire writes only as a default that params may replace (Anthropic's
    `max_tokens`). Any other key the wire wrote for a request is refused in its params."""
    sampling_keys: Mapping[str, str] = {name: name for name in SAMPLING_FIELDS}
    """The body key of each `ChatRequest` sampling field (OpenAI's names by default);
    a field missing here is one this wire has no parameter for."""
    genai_operation: str = "chat"
    """The OpenTelemetry GenAI `gen_ai.operation.name` of a turn on this wire (the
    registry's `chat`, or `generate_content` for Gemini's): what `telemetry` reports."""
    system_apart: Literal["none", "leading", "all"] = "none"
    """Which system messages this wire sends apart from the chat history (`none`: all
    stay in it as messages; `leading`: those before any other message; `all`): those
    are the GenAI conventions' `gen_ai.system_instructions`, the rest stay in
    `gen_ai.input.messages`."""

    @property
    def mandatory_body_keys(self) -> frozenset[str]:
        return self.recovery.mandatory_body_keys

    @abstractmethod
    def url(self, base_url: str, request: ChatRequest) -> str: ...

    @abstractmethod
    def headers(self, api_key: str | None) -> dict[str, str]: ...

    def build_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body for `request`: what the wire writes from it, then its params.

        Raises:
            ConfigError: params would set a key the wire writes from the request
                (`request_keys`), or overwrite one it wrote for this request (tools, a
                mandatory key) and that is not one of its `param_defaults`; a tool's
                name is not one the endpoint takes (`tool_names`).

        A call no tool message answers is sent answered as not run (`answer_each_call`).
        """
        for key in request.params:
            why = self.request_keys.get(key)
            if why is not None:
                raise ConfigError(f"params may not set {key!r}: {why}")
        rule = self.tool_names
        if rule is not None:
            for tool in request.tools:
                if rule.pattern.fullmatch(tool.name) is None:
                    raise ConfigError(
                        f"tool name {tool.name!r} is not one {self.name} takes: {rule.says}"
                    )
        messages = answer_each_call(request.messages)
        if messages is not request.messages:
            request = request.model_copy(update={"messages": messages})
        body = self.request_body(request)
        # The sampling fields, the tool choice and the answer's form go in as params would
        # (a degraded retry drops them by their body key alike), the user's params after
        # them. A key they write has merged the same key of params (Gemini's
        # `toolConfig`, the Responses `text`, Anthropic's `output_config`).
        written = self.tool_choice_params(request) | self.response_format_params(request)
        params = {key: value for key, value in request.params.items() if key not in written}
        self.add_params(body, self.sampling_params(request) | written | params)
        return body

    def tool_choice_params(self, request: ChatRequest) -> dict[str, Any]:
        """`ChatRequest.tool_choice` under this wire's body keys (`tool_choice_body`);
        nothing for none, or for `auto` and `none` where nothing offers tools (neither
        `ChatRequest.tools` nor params' own `tools`): that is what every provider does
        without tools, and endpoints refuse a choice without them ("'tool_choice' is only
        allowed when 'tools' are specified", vLLM's "When using `tool_choice`, `tools`
        must be set.", Gemini's "Function calling config is set without
        function_declarations.": tests/rejections_extra).

        Raises:
            ConfigError: the tool choice also in params, under any of its keys
                (`TOOL_CHOICE_KEYS`); what `tool_choice_body` refuses.
        """
        choice = request.tool_choice
        if choice is None:
            return {}
        given = tool_choice_given(request.params)
        if given is not None:
            raise ConfigError(
                f"tool_choice is set twice, as ChatRequest.tool_choice and in params[{given!r}]: "
                "keep one"
            )
        if not request.tools and "tools" not in request.params:
            return {}  # only `auto` or `none` validate without tools
        return self.tool_choice_body(choice, request)

    def tool_choice_body(self, choice: str, request: ChatRequest) -> dict[str, Any]:
        """The body keys of a tool choice: `auto`, `required`, `none` (`TOOL_CHOICE_MODES`)
        or a tool's name. By default the OpenAI chat form, which every chat preset takes:
        the mode as it is, a name as `{"type": "function", "function": {"name": ...}}`.
        A key returned here replaces the same key of the request's params, so a wire that
        writes one the user may also give merges it (Gemini's `toolConfig`)."""
        if choice in TOOL_CHOICE_MODES:
            return {"tool_choice": choice}
        return {"tool_choice": {"type": "function", "function": {"name": choice}}}

    def response_format_params(self, request: ChatRequest) -> dict[str, Any]:
        """`ChatRequest.response_format` under this wire's body keys
        (`response_format_body`); nothing when unset.

        Raises:
            ConfigError: the form of the answer also in params (`response_format_given`);
                what `response_format_body` refuses.
        """
        output = request.response_format
        if output is None:
            return {}
        given = response_format_given(request.params)
        if given is not None:
            raise ConfigError(
                f"response_format is set twice, as ChatRequest.response_format and in {given}: "
                "keep one"
            )
        return self.response_format_body(output, request)

    def response_format_body(
        self, output: Literal["json"] | JsonSchema, request: ChatRequest
    ) -> dict[str, Any]:
        """The body keys of the answer's form: `"json"` or a `JsonSchema`. By default Chat
        Completions' `response_format` (`chat_response_format`), which every chat preset
        takes. A key returned here replaces the same key of the request's params, so a
        wire that writes one the user may give for another setting merges it (the
        Responses `text`, Anthropic's `output_config`)."""
        return {"response_format": chat_response_format(output)}

    def sampling_params(self, request: ChatRequest) -> dict[str, Any]:
        """The request's sampling fields that are set, under this wire's body keys.

        Raises:
            ConfigError: a field this wire has no parameter for, or one also in params,
                under any of its names (`SAMPLING_ALIASES`).
        """
        params: dict[str, Any] = {}
        if request.model_fields_set.isdisjoint(SAMPLING_FIELDS):
            return params  # most requests set none: no field to look at one by one
        for name in SAMPLING_FIELDS:
            value = getattr(request, name)
            if value is None:
                continue
            key = self.sampling_keys.get(name)
            if key is None:
                raise ConfigError(
                    f"{self.name} has no {name!r} parameter: leave ChatRequest.{name} unset "
                    "for this provider"
                )
            for given in sorted(({key} | SAMPLING_ALIASES[name]) & request.params.keys()):
                raise ConfigError(
                    f"{name} is set twice, as ChatRequest.{name} and in params[{given!r}]: keep one"
                )
            params[key] = [value] if name == "stop" and isinstance(value, str) else value
        return params

    @abstractmethod
    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The body as the wire writes it from the request, before any params."""

    def add_params(self, body: dict[str, Any], params: Mapping[str, Any]) -> None:
        """Add params to `body` as top-level keys (a wire with another layout, such as
        Gemini's `generationConfig`, overrides this and calls `refuse_overwrite`)."""
        self.refuse_overwrite(body, params)
        body.update(params)

    def refuse_overwrite(self, body: Mapping[str, Any], keys: Iterable[str]) -> None:
        """Raise `ConfigError` for a key of `keys` that the wire already wrote in `body`
        and that params may not replace."""
        for key in keys:
            if key not in body or key in self.param_defaults:
                continue
            if key in self.mandatory_body_keys:
                why = f"it is a mandatory key of {self.name}, which rxllm writes"
            elif key == "tools":
                why = "this request's ChatRequest.tools are written there"
            else:
                why = f"{self.name} writes it for this request"
            raise ConfigError(f"params may not set {key!r}: {why}")

    def hint(self, error: ErrorInfo, base_url: str) -> str | None:
        """What to check, added to an error that surfaces, when this wire knows a
        likely cause (a base URL missing the wire's version path); None if not."""
        return None

    def calls_offered(self, body: Mapping[str, Any]) -> bool:
        """Whether `body` offers the model tools it may call, as the body sent says (a
        retry's may have lost its tools: `rxllm.degradation`). Read by a normalizer that
        finds calls written in the text (`Normalizer.calls_offered`); True by default,
        where the wire's normalizer reads calls only where the provider marks them."""
        return True

    @abstractmethod
    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> Normalizer: ...

    def preprocess(self) -> Sequence[RawOperator]:
        """Operators on raw chunks for this wire's quirks, applied before normalizing."""
        return ()
