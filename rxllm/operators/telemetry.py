"""telemetry: one OpenTelemetry GenAI span per turn, and the GenAI client metrics."""

from __future__ import annotations

import json
import time
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from reactivex import Observable, abc
from reactivex.disposable import Disposable, SingleAssignmentDisposable

from rxllm.errors import ConfigError
from rxllm.events import (
    Cancelled,
    Done,
    ErrorInfo,
    Event,
    Failed,
    ReasoningDelta,
    Refusal,
    Retry,
    TextDelta,
    ToolRequest,
    Usage,
    UsageUpdate,
)
from rxllm.request import SAMPLING_FIELDS, ChatRequest, ImagePart, Message, Part, TextPart

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

__all__ = ["GENAI_PROVIDER_NAMES", "require_otel", "telemetry"]

# Names from the OpenTelemetry GenAI semantic conventions (development status, now
# kept in open-telemetry/semantic-conventions-genai); tests check each against the
# `opentelemetry-semantic-conventions` package.
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
TOKEN_TYPE = "gen_ai.token.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
HTTP_STATUS = "http.response.status_code"

# The request's sampling fields and params that the conventions name (`params` holds
# the wire's own keys).
REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "stop": "gen_ai.request.stop_sequences",
}

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
TIME_TO_FIRST_CHUNK_METRIC = "gen_ai.client.operation.time_to_first_chunk"
TIME_PER_OUTPUT_CHUNK = "gen_ai.client.operation.time_per_output_chunk"
# The conventions' bucket advice: seconds doubling from 10 ms (all three time
# histograms), tokens in powers of four up to 64 Mi.
SECONDS_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                   40.96, 81.92)  # fmt: skip
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864)  # fmt: skip

GENAI_PROVIDER_NAMES = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gemini",  # generativelanguage.googleapis.com, as the conventions say
    "azure-openai": "azure.ai.openai",
    "deepseek": "deepseek",
    "groq": "groq",
    "mistral": "mistral_ai",
    "xai": "x_ai",
}
"""rxllm's provider names whose `gen_ai.provider.name` the conventions list; any other
(openrouter, nvidia, vllm, local, ...) is reported under its rxllm name, as they allow."""

# What is not an output chunk: the terminals, `retry`, and usage (accounting, not output).
_NOT_CHUNKS: frozenset[type] = frozenset({Done, Failed, Cancelled, Retry, UsageUpdate})


def require_otel() -> None:
    """Raise a `ConfigError` unless the OpenTelemetry API can be imported."""
    try:
        import opentelemetry.metrics
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        raise ConfigError(
            "telemetry needs the OpenTelemetry API: pip install 'rxllm[otel]' "
            "(or opentelemetry-api)"
        ) from None


def telemetry(
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    capture_content: bool = False,
    *,
    request: ChatRequest | None = None,
    provider: str | None = None,
    servers: Mapping[str, str] | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Report each subscription (one turn, settled) as one OpenTelemetry span,
    `chat {model}`, and the GenAI client metrics, as the GenAI semantic conventions
    name them; the events pass through unchanged.

    ::

        source:  -r--t-t-u-done|
        telemetry()
        result:  -r--t-t-u-done|
        span:    [chat m: attempt 1 (rejected) . commit . attempt 2 (done)]

    The span covers every attempt and fallback: an event per attempt (its number,
    provider, outcome, HTTP status, dropped keys, images removed, whether it
    committed) and one at the commitment point; at the end, the served model,
    response id, finish reasons, token counts, time to first chunk, and `error.type`
    (the `ErrorInfo.kind`) with an error status on failure. A cancelled turn, or a
    consumer that disposes early, ends the span with `rxllm.outcome = "cancelled"`
    and an unset status (the caller chose it; nothing failed), recording what was
    seen. Per output chunk this costs a clock read and an append: the span and the
    histograms are written at the start and the end of the turn only.

    Message content (`gen_ai.input.messages`, `gen_ai.output.messages`,
    `gen_ai.system_instructions`) is recorded only with `capture_content=True`; API
    keys never reach this operator.

    Args:
        tracer_provider: defaults to the global one (`opentelemetry.trace`).
        meter_provider: defaults to the global one (`opentelemetry.metrics`).
        capture_content: also record the messages sent and the answer.
        request: the turn's request: model, params and (with capture_content) messages.
        provider: rxllm's name of the first provider, known before any event.
        servers: each provider's base URL by rxllm name, for `server.address`/`port`.

    Raises:
        ConfigError: the OpenTelemetry API is not installed (`pip install 'rxllm[otel]'`).
    """
    require_otel()
    from opentelemetry import metrics, trace

    tracer = trace.get_tracer("rxllm", tracer_provider=tracer_provider)
    meter = (meter_provider or metrics.get_meter_provider()).get_meter("rxllm")
    instruments = _Instruments(
        tracer=tracer,
        duration=meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        ),
        tokens=meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        ),
        first_chunk=meter.create_histogram(
            TIME_TO_FIRST_CHUNK_METRIC,
            unit="s",
            description="Time to receive the first chunk of the response stream.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        ),
        per_chunk=meter.create_histogram(
            TIME_PER_OUTPUT_CHUNK,
            unit="s",
            description="Time per output chunk, after the first one.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        ),
    )
    endpoints = {name: _server(url) for name, url in (servers or {}).items()}

    def _telemetry(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            turn = _Turn(instruments, request, provider, endpoints, capture_content)
            gaps = turn.gaps
            handle = turn.handle
            last = 0.0

            def on_next(event: Event) -> None:
                nonlocal last
                if type(event) in _NOT_CHUNKS:
                    handle(event)
                else:  # the hot path: an output chunk
                    now = time.monotonic()
                    if last:
                        gaps.append(now - last)
                    else:
                        turn.first_chunk(event, now)
                    last = now
                    if capture_content:
                        turn.collect(event)
                try:
                    observer.on_next(event)
                except BaseException as exc:  # the consumer's own: it still ends the span
                    turn.fail(exc)
                    raise

            def on_error(error: Exception) -> None:
                turn.fail(error)
                observer.on_error(error)

            def on_completed() -> None:
                turn.end()
                observer.on_completed()

            upstream = SingleAssignmentDisposable()
            upstream.disposable = source.subscribe(
                on_next, on_error, on_completed, scheduler=scheduler
            )

            def dispose() -> None:
                upstream.dispose()  # hang up first: nothing more arrives
                turn.end(cancelled="disposed by the consumer")

            return Disposable(dispose)

        return Observable(subscribe)

    return _telemetry


@dataclass(frozen=True, slots=True)
class _Instruments:
    tracer: Tracer
    duration: Histogram
    tokens: Histogram
    first_chunk: Histogram
    per_chunk: Histogram


@dataclass(slots=True)
class _Attempt:
    """The attempt in progress, learned from the events (as `RecordBuilder` does)."""

    number: int
    provider: str | None
    started: float
    dropped: list[str] = field(default_factory=list)
    images_removed: int = 0
    committed: bool = False


class _Turn:
    """One subscription's span and measurements, written at its start and its end."""

    def __init__(
        self,
        instruments: _Instruments,
        request: ChatRequest | None,
        provider: str | None,
        endpoints: Mapping[str, tuple[str, int] | None],
        capture_content: bool,
    ) -> None:
        self.instruments = instruments
        self.request = request
        self.endpoints = endpoints
        self.started = time.monotonic()
        self.attempt = _Attempt(1, provider, self.started)
        self.attempts = 0
        self.first: float | None = None
        self.gaps = array("d")
        """Seconds between consecutive output chunks: recorded at the end, not per chunk."""
        self.usage: Usage | None = None
        self.ended = False
        self.capture = capture_content
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.tool_calls: list[ToolRequest] = []
        attributes: dict[str, AttributeValue] = {OPERATION: "chat", REQUEST_STREAM: True}
        if provider is not None:
            attributes.update(self._provider(provider))
        if request is not None:
            attributes[REQUEST_MODEL] = request.model
            typed = {
                name: getattr(request, name)
                for name in SAMPLING_FIELDS
                if getattr(request, name) is not None
            }
            attributes.update(_request_params({**request.params, **typed}))
            if capture_content:
                attributes.update(_input_messages(request.messages))
        from opentelemetry.trace import SpanKind

        name = f"chat {request.model}" if request is not None else "chat"
        self.span: Span = instruments.tracer.start_span(
            name, kind=SpanKind.CLIENT, attributes=attributes
        )

    # -- during the turn ---------------------------------------------------------------

    def handle(self, event: Event) -> None:
        """Everything but an output chunk: usage, a retry, a terminal."""
        if type(event) is UsageUpdate:
            self.usage = event.usage  # the latest usage wins
            if not self.attempt.committed:
                self._commit(event, time.monotonic())
        elif type(event) is Retry:
            self._end_attempt(event.attempt, event.provider, "rejected", event.reason)
            self.attempt = _Attempt(
                event.next_attempt,
                event.next_provider,
                time.monotonic() + event.delay,
                event.dropped,
                event.images_removed,
            )
        else:
            self.end(terminal=event)

    def first_chunk(self, event: Event, now: float) -> None:
        self.first = now
        if not self.attempt.committed:
            self._commit(event, now)

    def collect(self, event: Event) -> None:
        """Keep the answer for `gen_ai.output.messages` (only with capture_content)."""
        if type(event) is TextDelta:
            self.text.append(event.text)
        elif type(event) is ReasoningDelta:
            self.reasoning.append(event.text)
        elif type(event) is Refusal:
            self.refusal.append(event.text)
        elif type(event) is ToolRequest:
            self.tool_calls.append(event)

    def _commit(self, event: Event, now: float) -> None:
        attempt = self.attempt
        attempt.committed = True
        attempt.number, attempt.provider = event.attempt, event.provider
        self.span.add_event(
            "rxllm.commit",
            {
                "rxllm.attempt.number": event.attempt,
                "rxllm.attempt.provider": event.provider,
                "rxllm.commit.event": event.type,
                "rxllm.commit.elapsed": now - self.started,
            },
        )

    def _end_attempt(
        self, number: int, provider: str, outcome: str, error: ErrorInfo | None = None
    ) -> None:
        attempt = self.attempt
        self.attempts += 1
        attributes: dict[str, AttributeValue] = {
            "rxllm.attempt.number": number,
            "rxllm.attempt.provider": provider,
            PROVIDER: GENAI_PROVIDER_NAMES.get(provider, provider),
            "rxllm.attempt.outcome": outcome,
            "rxllm.attempt.dropped": attempt.dropped,
            "rxllm.attempt.images_removed": attempt.images_removed,
            "rxllm.attempt.committed": attempt.committed,
            "rxllm.attempt.duration": max(time.monotonic() - attempt.started, 0.0),
        }
        if error is not None:
            attributes[ERROR_TYPE] = error.kind
            if error.status is not None:
                attributes[HTTP_STATUS] = error.status
        self.span.add_event("rxllm.attempt", attributes)

    # -- the end -----------------------------------------------------------------------

    def fail(self, exc: BaseException) -> None:
        """A bug or the consumer's own exception, not a provider failure (those are
        `error` events): the span records it and ends in error."""
        if self.ended:
            return
        from opentelemetry.trace import Status, StatusCode

        self.span.record_exception(exc)
        self.span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))
        self.end(exception=type(exc).__qualname__)

    def end(
        self,
        terminal: Event | None = None,
        cancelled: str | None = None,
        exception: str | None = None,
    ) -> None:
        """End the span and record the metrics, once, with what was seen."""
        if self.ended:
            return
        self.ended = True
        from opentelemetry.trace import Status, StatusCode

        attempt = self.attempt
        number = terminal.attempt if terminal is not None else attempt.number
        provider = terminal.provider if terminal is not None else attempt.provider
        attributes: dict[str, AttributeValue] = {}
        if provider is not None:
            attributes.update(self._provider(provider))
        error_type: str | None = exception
        if type(terminal) is Done:
            outcome = "done"
            attributes[FINISH_REASONS] = [terminal.raw_stop_reason or terminal.stop_reason]
            attributes["rxllm.stop_reason"] = terminal.stop_reason
            if terminal.model:
                attributes[RESPONSE_MODEL] = terminal.model
            if terminal.response_id:
                attributes[RESPONSE_ID] = terminal.response_id
            self._end_attempt(number, provider or "unknown", outcome)
        elif type(terminal) is Failed:
            outcome = "error"
            error_type = terminal.error.kind
            if terminal.error.status is not None:
                attributes[HTTP_STATUS] = terminal.error.status
            self.span.set_status(Status(StatusCode.ERROR, terminal.error.message))
            self._end_attempt(number, provider or "unknown", outcome, terminal.error)
        elif type(terminal) is Cancelled or cancelled is not None:
            outcome = "cancelled"
            reason = terminal.reason if type(terminal) is Cancelled else cancelled
            self.span.add_event("rxllm.cancelled", {"rxllm.cancel.reason": reason or ""})
            self._end_attempt(number, provider or "unknown", outcome)
        else:  # completed without a terminal (not settled), or an exception
            outcome = "error" if exception else "incomplete"
            self._end_attempt(number, provider or "unknown", outcome)
        if error_type is not None:
            attributes[ERROR_TYPE] = error_type
        attributes["rxllm.outcome"] = outcome
        attributes["rxllm.attempts"] = self.attempts
        if self.first is not None:
            attributes[TIME_TO_FIRST_CHUNK] = self.first - self.started
        usage = self.usage
        if usage is not None:
            attributes.update(_usage(usage))
        if self.capture:
            attributes[OUTPUT_MESSAGES] = self._output_messages(terminal)
        self.span.set_attributes(attributes)
        self.span.end()
        metric_base: dict[str, AttributeValue] = {OPERATION: "chat"}
        if self.request is not None:
            metric_base[REQUEST_MODEL] = self.request.model
        self._record({**metric_base, **attributes}, error_type, outcome)

    def _record(
        self, span: Mapping[str, AttributeValue], error_type: str | None, outcome: str
    ) -> None:
        """The metrics, with the conventions' attributes (no content, low cardinality)."""
        now = time.monotonic()
        required = {key: span[key] for key in (OPERATION, PROVIDER, REQUEST_MODEL) if key in span}
        recommended = (RESPONSE_MODEL, SERVER_ADDRESS, SERVER_PORT)
        common = dict(required, **{key: span[key] for key in recommended if key in span})
        instruments = self.instruments
        ended = dict(common, **{"rxllm.outcome": outcome})
        if error_type is not None:
            ended[ERROR_TYPE] = error_type
        instruments.duration.record(now - self.started, ended)
        usage = self.usage
        if usage is not None:
            inputs = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
            instruments.tokens.record(inputs, dict(common, **{TOKEN_TYPE: "input"}))
            instruments.tokens.record(usage.output_tokens, dict(common, **{TOKEN_TYPE: "output"}))
        if self.first is not None:
            instruments.first_chunk.record(self.first - self.started, common)
            # The one metric recorded per chunk gets only the attributes the conventions
            # require: the SDK's cost per record grows with each (about 1 µs apiece).
            record = instruments.per_chunk.record
            for gap in self.gaps:
                record(gap, required)

    def _provider(self, provider: str) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {
            PROVIDER: GENAI_PROVIDER_NAMES.get(provider, provider),
            "rxllm.provider": provider,
        }
        endpoint = self.endpoints.get(provider)
        if endpoint is not None:
            attributes[SERVER_ADDRESS], attributes[SERVER_PORT] = endpoint
        return attributes

    def _output_messages(self, terminal: Event | None) -> str:
        parts: list[dict[str, Any]] = []
        if self.reasoning:
            parts.append({"type": "reasoning", "content": "".join(self.reasoning)})
        if self.text:
            parts.append({"type": "text", "content": "".join(self.text)})
        if self.refusal:
            parts.append({"type": "refusal", "content": "".join(self.refusal)})
        for call in self.tool_calls:
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
            )
        if type(terminal) is Done:
            finish = _FINISH.get(terminal.stop_reason) or terminal.raw_stop_reason or "stop"
        else:
            finish = "error" if type(terminal) is Failed else "cancelled"
        message = {"role": "assistant", "parts": parts, "finish_reason": finish}
        return json.dumps([message], ensure_ascii=False)


# rxllm's stop reasons as the conventions' output message `finish_reason`.
_FINISH = {"stop": "stop", "length": "length", "content_filter": "content_filter",
           "tool_use": "tool_call"}  # fmt: skip


def _usage(usage: Usage) -> dict[str, AttributeValue]:
    """The conventions count cached input inside `input_tokens` (rxllm keeps it apart)
    and reasoning inside `output_tokens` (as rxllm does)."""
    attributes: dict[str, AttributeValue] = {
        INPUT_TOKENS: usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        OUTPUT_TOKENS: usage.output_tokens,
    }
    if usage.cache_read_tokens:
        attributes[CACHE_READ_TOKENS] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes[CACHE_CREATION_TOKENS] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        attributes[REASONING_TOKENS] = usage.reasoning_tokens
    if usage.cost_usd is not None:
        attributes["rxllm.usage.cost_usd"] = usage.cost_usd
    return attributes


def _request_params(params: Mapping[str, Any]) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {}
    for key, value in params.items():
        name = REQUEST_PARAMS.get(key)
        if name is None:
            continue
        if key == "stop":
            value = [value] if isinstance(value, str) else value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                attributes[name] = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            attributes[name] = value
    return attributes


def _input_messages(messages: list[Message]) -> dict[str, AttributeValue]:
    """The conventions' JSON forms: system text apart, every other message with parts."""
    system: list[dict[str, Any]] = []
    chat: list[dict[str, Any]] = []
    for message in messages:
        parts = [_part(part) for part in message.content]
        if message.role == "system":
            system.extend(parts)
            continue
        if message.role == "tool":
            parts = [
                {
                    "type": "tool_call_response",
                    "id": message.tool_call_id,
                    "response": message.text,
                }
            ]
        parts += [
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
            for call in message.tool_calls
        ]
        chat.append({"role": message.role, "parts": parts})
    attributes: dict[str, AttributeValue] = {INPUT_MESSAGES: json.dumps(chat, ensure_ascii=False)}
    if system:
        attributes[SYSTEM_INSTRUCTIONS] = json.dumps(system, ensure_ascii=False)
    return attributes


def _part(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if not isinstance(part, ImagePart):  # reasoning sent back: its text (no signature)
        return {"type": "reasoning", "content": part.text}
    inline = part.inline
    if inline is not None:  # the bytes would swamp a span: their type only
        return {"type": "blob", "modality": "image", "mime_type": inline[0]}
    return {"type": "uri", "modality": "image", "uri": part.url}


def _server(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
