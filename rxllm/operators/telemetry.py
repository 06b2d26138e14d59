"""telemetry: one OpenTelemetry GenAI span per turn, and the GenAI client metrics."""

from __future__ import annotations

import json
import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard
from urllib.parse import urlsplit

from loguru import logger
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
    ServerToolCall,
    ServerToolResult,
    TextDelta,
    ToolRequest,
    Usage,
    UsageUpdate,
)
from rxllm.request import (
    SAMPLING_FIELDS,
    ChatRequest,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    ServerToolPart,
    TextPart,
    Tool,
)

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

    from rxllm.pipeline.provider import Provider

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
# semantic-conventions-genai #440 renamed `cache_creation` to `cache_write`, in no
# release yet: the released conventions, the Python semconv package and the contrib
# instrumentations write the old name. rxllm writes both (the same count) until the
# rename is released.
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
CACHE_WRITE_TOKENS = "gen_ai.usage.cache_write.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
TOKEN_TYPE = "gen_ai.token.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
OUTPUT_TYPE = "gen_ai.output.type"
CHOICE_COUNT = "gen_ai.request.choice.count"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
HTTP_STATUS = "http.response.status_code"

# The request's sampling fields and params that the conventions name. `params` holds
# the wire's own keys: OpenAI's and Anthropic's snake_case, Gemini's camelCase (at the
# top of `params` or inside its `generationConfig`).
REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "topP": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "topK": "gen_ai.request.top_k",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "maxOutputTokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "frequencyPenalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "presencePenalty": "gen_ai.request.presence_penalty",
    "stop": "gen_ai.request.stop_sequences",
    "stop_sequences": "gen_ai.request.stop_sequences",
    "stopSequences": "gen_ai.request.stop_sequences",
    # Conditionally required "if available, in the request, and !=1".
    "n": CHOICE_COUNT,
    "candidate_count": CHOICE_COUNT,
    "candidateCount": CHOICE_COUNT,
}
_STOP = frozenset({"stop", "stop_sequences", "stopSequences"})

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
(openrouter, nvidia, vllm, local, ...) is reported under its rxllm name, as they allow.
The google wire pointed at Vertex AI (`*aiplatform.googleapis.com`) is `gcp.vertex_ai`."""

# The wire facts (`gen_ai.operation.name`, which system text goes apart) are each
# wire's own (`WireProtocol.genai_operation`, `.system_apart`), read from the provider
# that sent an attempt; a provider known only by its name is read as
# `rxllm.provider(name)` builds it. Those of rxllm's names, once looked up:
_NAMED_WIRES: dict[str, tuple[str, str]] = {}

# What is not an output chunk: the terminals, `retry`, and usage (accounting, not output).
_NOT_CHUNKS: frozenset[type] = frozenset({Done, Failed, Cancelled, Retry, UsageUpdate})


def _broken(exc: Exception) -> None:
    """Telemetry failed (an SDK, processor, exporter or meter raised): the turn goes on
    unchanged, without it."""
    logger.opt(exception=exc).warning(
        "telemetry failed ({}); the turn goes on without it", type(exc).__qualname__
    )


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
    providers: Sequence[Provider] = (),
    served_by: Callable[[int], Provider | None] | None = None,
    asked: Callable[[int], str | None] | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Report each subscription (one turn, settled) as one OpenTelemetry span,
    `{operation} {model}` (`chat`; `generate_content` on Gemini's wire), and the GenAI
    client metrics, as the GenAI semantic conventions name them; the events pass
    through unchanged.

    ::

        source:  -r--t-t-u-done|
        telemetry()
        result:  -r--t-t-u-done|
        span:    [chat m: attempt 1 (rejected) . commit . attempt 2 (done)]

    The span covers every attempt and fallback (the conventions' span is the logical
    operation as the caller sees it, retries included): an event per attempt (its
    number, provider, outcome, HTTP status, dropped keys, images removed, whether it
    committed) and one at the commitment point; at the end, the served model,
    response id, finish reasons (`error` when no finish came), token counts, time to
    first chunk, and `error.type` (the `ErrorInfo.kind`) with an error status on
    failure. A cancelled turn, or a consumer that disposes early, ends the span with
    `rxllm.outcome = "cancelled"` and an unset status (the caller chose it; nothing
    failed), recording what was seen. Per output chunk this costs a clock read and an
    append: the span and the histograms are written at the start and the end of the
    turn only.

    Telemetry never changes the stream: a tracer, span processor, exporter or meter
    that raises is logged (a warning, when rxllm's logs are enabled) and the turn goes
    on, its events and terminal unchanged.

    Message content (`gen_ai.input.messages`, `gen_ai.output.messages`,
    `gen_ai.system_instructions`, `gen_ai.tool.definitions`) is recorded only with
    `capture_content=True`; API keys never reach this operator.

    Args:
        tracer_provider: defaults to the global one (`opentelemetry.trace`).
        meter_provider: defaults to the global one (`opentelemetry.metrics`).
        capture_content: also record the messages sent, the tools offered and the
            answer.
        request: the turn's request: model, params and (with capture_content) messages.
        provider: rxllm's name of the first provider, known before any event (by
            default, the first of `providers`).
        servers: each provider's base URL by rxllm name, for `server.address`/`port`
            (`providers` need none: each one's own is read).
        providers: the providers that may serve the turn, in the order tried. The
            provider that sent an attempt says what the span reports of it: its wire
            the operation and which system text is sent apart from the history, its
            base URL the server. A provider known only by its name (an event's, or
            `provider`'s) is read as `rxllm.provider(name)` builds it, so a wire under
            another name (`rxllm.Provider(wire, ...)`) needs to be given here.
        served_by: which provider sent attempt n, for providers that share a name (two
            `openai` endpoints in one fallback; rxllm's fallback says). Without it, an
            event is taken to be from the first of `providers` with its name.
        asked: the model attempt n asked for, where a provider was asked for its own
            (a fallback entry `(provider, model)`; rxllm's fallback says): the span and
            the metrics report the request model of the attempt that ended the turn.

    Raises:
        ConfigError: the OpenTelemetry API is not installed (`pip install 'rxllm[otel]'`).
    """
    require_otel()
    instruments = _instruments(tracer_provider, meter_provider)
    senders = _Senders(providers, servers or {}, served_by, asked)
    if provider is None and providers:
        provider = providers[0].name

    def _telemetry(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            try:
                turn = _Turn(instruments, request, provider, senders, capture_content)
            except Exception as exc:  # the turn runs untraced rather than not at all
                _broken(exc)
                return source.subscribe(observer, scheduler=scheduler)
            gaps = turn.gaps
            handle = turn.handle
            collect = turn.collect
            last = 0.0

            def on_next(event: Event) -> None:
                nonlocal last
                try:  # free in CPython 3.11+ unless something raises
                    if type(event) in _NOT_CHUNKS:
                        handle(event)
                    else:  # the hot path: an output chunk
                        now = time.monotonic()
                        previous, last = last, now  # kept even if what follows raises
                        if previous:
                            gaps.append(now - previous)
                        else:
                            turn.first_chunk(event, now)
                        if capture_content:
                            collect(event)
                except Exception as exc:
                    _broken(exc)
                try:
                    observer.on_next(event)
                except BaseException as exc:  # the consumer's own: it still ends the span
                    turn.safely(turn.fail, exc)
                    raise

            def on_error(error: Exception) -> None:
                turn.safely(turn.fail, error)
                observer.on_error(error)

            def on_completed() -> None:
                turn.safely(turn.end)
                observer.on_completed()

            upstream = SingleAssignmentDisposable()
            upstream.disposable = source.subscribe(
                on_next, on_error, on_completed, scheduler=scheduler
            )

            def dispose() -> None:
                upstream.dispose()  # hang up first: nothing more arrives
                turn.safely(turn.end, None, "disposed by the consumer")

            return Disposable(dispose)

        return Observable(subscribe)

    return _telemetry


def _instruments(
    tracer_provider: TracerProvider | None, meter_provider: MeterProvider | None
) -> _Instruments:
    """The tracer and the four histograms; a provider that raises is replaced by the
    API's no-op one (logged), so that asking for telemetry never breaks a stream."""
    from opentelemetry import metrics, trace

    tracer: Tracer
    try:
        tracer = trace.get_tracer("rxllm", tracer_provider=tracer_provider)
    except Exception as exc:
        _broken(exc)
        tracer = trace.NoOpTracer()
    try:
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("rxllm")
        return _Instruments(tracer, *_histograms(meter))
    except Exception as exc:
        _broken(exc)
        return _Instruments(tracer, *_histograms(metrics.NoOpMeter("rxllm")))


def _histograms(meter: Meter) -> tuple[Histogram, Histogram, Histogram, Histogram]:
    return (
        meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        ),
        meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        ),
        meter.create_histogram(
            TIME_TO_FIRST_CHUNK_METRIC,
            unit="s",
            description="Time to receive the first chunk of the response stream.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        ),
        meter.create_histogram(
            TIME_PER_OUTPUT_CHUNK,
            unit="s",
            description="Time per output chunk, after the first one.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        ),
    )


class _Instruments(NamedTuple):
    tracer: Tracer
    duration: Histogram
    tokens: Histogram
    first_chunk: Histogram
    per_chunk: Histogram


class _Sender(NamedTuple):
    """A provider that sends attempts, as the span reports it, read once: its wire's
    facts, and the conventions' provider attributes (`gen_ai.provider.name`,
    `rxllm.provider`, the server)."""

    name: str
    operation: str
    system_apart: str
    attributes: Mapping[str, AttributeValue]


def _sender(name: str, operation: str, system_apart: str, url: str | None) -> _Sender:
    endpoint = None if url is None else _server(url)
    genai_name = GENAI_PROVIDER_NAMES.get(name, name)
    vertex = endpoint is not None and endpoint[0].endswith("aiplatform.googleapis.com")
    if genai_name == "gcp.gemini" and vertex:  # the google provider pointed at Vertex AI
        genai_name = "gcp.vertex_ai"
    attributes: dict[str, AttributeValue] = {PROVIDER: genai_name, "rxllm.provider": name}
    if endpoint is not None:
        attributes[SERVER_ADDRESS], attributes[SERVER_PORT] = endpoint
    return _Sender(name, operation, system_apart, attributes)


def _sender_of(provider: Provider) -> _Sender:
    wire = provider.wire
    return _sender(provider.name, wire.genai_operation, wire.system_apart, provider.base_url)


def _named_wire(name: str) -> tuple[str, str]:
    """The wire facts of provider `name` as `rxllm.provider(name)` builds it; a name
    rxllm does not know gets the base wire's (`chat`, system text in the history)."""
    from rxllm.providers import PROVIDER_NAMES, WireProtocol, wire_for

    if name not in PROVIDER_NAMES:
        return WireProtocol.genai_operation, WireProtocol.system_apart
    facts = _NAMED_WIRES.get(name)
    if facts is None:
        wire = wire_for(name)
        facts = _NAMED_WIRES[name] = (wire.genai_operation, wire.system_apart)
    return facts


class _Senders:
    """The provider that sent an attempt, told apart by more than its name: the
    providers given, and `served_by` (attempt -> provider) where several share one."""

    __slots__ = ("_asked", "_by_name", "_given", "_served_by", "_servers")

    def __init__(
        self,
        providers: Sequence[Provider],
        servers: Mapping[str, str],
        served_by: Callable[[int], Provider | None] | None,
        asked: Callable[[int], str | None] | None = None,
    ) -> None:
        self._given = [(given, _sender_of(given)) for given in providers]
        self._by_name: dict[str, _Sender] = {}
        for _, sender in self._given:
            self._by_name.setdefault(sender.name, sender)  # the first of a name
        self._servers = servers
        self._served_by = served_by
        self._asked = asked

    def model(self, attempt: int) -> str | None:
        """The model attempt `attempt` asked for, where the caller says (else None)."""
        return None if self._asked is None else self._asked(attempt)

    def get(self, name: str, attempt: int) -> _Sender:
        """The provider `name` that sent attempt `attempt`."""
        if self._served_by is not None:
            provider = self._served_by(attempt)
            if provider is not None and provider.name == name:
                for given, sender in self._given:
                    if given is provider:
                        return sender
                return _sender_of(provider)
        found = self._by_name.get(name)
        if found is None:
            found = _sender(name, *_named_wire(name), self._servers.get(name))
        return found


class _Attempt:
    """The attempt in progress, learned from the events (as `RecordBuilder` does)."""

    __slots__ = ("committed", "dropped", "images_removed", "number", "provider", "started")

    def __init__(
        self,
        number: int,
        provider: str | None,
        started: float,
        dropped: list[str] | None = None,
        images_removed: int = 0,
    ) -> None:
        self.number = number
        self.provider = provider
        self.started = started
        self.dropped = [] if dropped is None else dropped
        self.images_removed = images_removed
        self.committed = False


class _Turn:
    """One subscription's span and measurements, written at its start and its end."""

    def __init__(
        self,
        instruments: _Instruments,
        request: ChatRequest | None,
        provider: str | None,
        senders: _Senders,
        capture_content: bool,
    ) -> None:
        self.instruments = instruments
        self.request = request
        self.senders = senders
        self.started = time.monotonic()
        self.attempt = _Attempt(1, provider, self.started)
        self.attempts = 0
        self.first: float | None = None
        self.gaps = array("d")
        """Seconds between consecutive output chunks: recorded at the end, not per chunk."""
        self.usage: Usage | None = None
        self.ended = False
        self.capture = capture_content
        self.output: list[tuple[str, list[str]] | dict[str, Any]] = []
        """The answer's parts in the order they came (only with capture_content): a run
        of deltas of one kind as (its part type, its pieces), joined at the end; any
        other part whole."""
        self.run: type | None = None
        """The type of the deltas the last part is a run of (None: a part whole)."""
        self.pieces: list[str] = []
        self.model = None if request is None else request.model
        first = None if provider is None else senders.get(provider, 1)
        self.operation = "chat" if first is None else first.operation
        attributes: dict[str, AttributeValue] = {OPERATION: self.operation, REQUEST_STREAM: True}
        if first is not None:
            attributes.update(first.attributes)
        if request is not None:
            attributes[REQUEST_MODEL] = request.model
            typed = {
                name: getattr(request, name)
                for name in SAMPLING_FIELDS
                if getattr(request, name) is not None
            }
            params = _flat_params(request.params)
            attributes.update(_request_params({**params, **typed}))
            output_type = "json" if request.response_format is not None else _output_type(params)
            if output_type is not None:
                attributes[OUTPUT_TYPE] = output_type
            if capture_content:
                apart = None if first is None else first.system_apart
                attributes.update(_input_messages(request.messages, system_apart=apart))
                if request.tools:
                    attributes[TOOL_DEFINITIONS] = _tool_definitions(request.tools)
        from opentelemetry.trace import INVALID_SPAN, SpanKind

        self.span: Span
        try:
            self.span = instruments.tracer.start_span(
                self._name(), kind=SpanKind.CLIENT, attributes=attributes
            )
        except Exception as exc:  # a span processor's on_start raised: metrics still count
            _broken(exc)
            self.span = INVALID_SPAN

    def _name(self) -> str:
        """The conventions' span name, `{gen_ai.operation.name} {gen_ai.request.model}`."""
        model = self.model
        return f"{self.operation} {model}" if model is not None else self.operation

    def safely(self, action: Callable[..., None], *args: Any) -> None:
        """`action(*args)`, logging (never raising) what the telemetry pipeline raises."""
        try:
            action(*args)
        except Exception as exc:
            _broken(exc)

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
        """Keep the answer for `gen_ai.output.messages` (only with capture_content), in
        order: a delta of the kind the last part is a run of joins it (one check and an
        append; an empty one adds nothing); any other starts a part."""
        part: dict[str, Any]
        if type(event) is self.run:  # a text, reasoning or refusal delta's type
            text = event.text  # type: ignore[union-attr]
            if text:  # the run goes on (a compaction, kept as reasoning, has no text)
                self.pieces.append(text)
                return
        if type(event) is TextDelta or type(event) is ReasoningDelta or type(event) is Refusal:
            if type(event) is ReasoningDelta and _compacted(event.details):
                part = _compaction(event.details)  # a part of its own
            elif type(event) is self.run:  # empty: nothing to add
                return
            elif type(event) is ReasoningDelta and _marker(event):
                return  # no content, and no reasoning: it adds nothing to the run
            else:
                self.run = type(event)
                self.pieces = [event.text]
                self.output.append((event.type, self.pieces))
                return
        elif type(event) is ToolRequest:
            part = {
                "type": "tool_call",
                "id": event.call_id,
                "name": event.name,
                "arguments": event.arguments,
            }
        elif type(event) is ServerToolCall or type(event) is ServerToolResult:
            part = _server_part(event)
        else:  # a citation, a tool start: no part of their own
            return
        self.run = None
        self.output.append(part)

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
        sender = self.senders.get(provider, number).attributes
        attributes: dict[str, AttributeValue] = {
            "rxllm.attempt.number": number,
            "rxllm.attempt.provider": provider,
            PROVIDER: sender[PROVIDER],
            "rxllm.attempt.outcome": outcome,
            "rxllm.attempt.dropped": attempt.dropped,
            "rxllm.attempt.images_removed": attempt.images_removed,
            "rxllm.attempt.committed": attempt.committed,
            "rxllm.attempt.duration": max(time.monotonic() - attempt.started, 0.0),
        }
        if SERVER_ADDRESS in sender:  # where it went: same-name providers told apart
            attributes[SERVER_ADDRESS] = sender[SERVER_ADDRESS]
            attributes[SERVER_PORT] = sender[SERVER_PORT]
        if error is not None:
            attributes[ERROR_TYPE] = error.kind
            status = _http_status(error)
            if status is not None:
                attributes[HTTP_STATUS] = status
        self.span.add_event("rxllm.attempt", attributes)

    # -- the end -----------------------------------------------------------------------

    def fail(self, exc: BaseException) -> None:
        """A bug or the consumer's own exception, not a provider failure (those are
        `error` events): the span ends in error, the exception's message as the status
        description. Not as an `exception` span event: the conventions' "Recording
        errors" does not recommend `Span.RecordException`."""
        if self.ended:
            return
        from opentelemetry.trace import Status, StatusCode

        name = type(exc).__qualname__
        self.span.set_status(Status(StatusCode.ERROR, str(exc) or name))
        self.end(exception=name)

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
        operation = "chat"
        if provider is not None:
            sender = self.senders.get(provider, number)
            attributes.update(sender.attributes)
            operation = sender.operation
        error_type: str | None = exception
        # A finish reason expected but not received (failed, cancelled, cut off) is
        # reported as `error` rather than left out (semantic-conventions-genai #363).
        finish = "error"
        status: Status | None = None
        if type(terminal) is Done:
            outcome = "done"
            finish = terminal.raw_stop_reason or terminal.stop_reason
            attributes["rxllm.stop_reason"] = terminal.stop_reason
            if terminal.model:
                attributes[RESPONSE_MODEL] = terminal.model
            if terminal.response_id:
                attributes[RESPONSE_ID] = terminal.response_id
        elif type(terminal) is Failed:
            outcome = "error"
            error_type = terminal.error.kind
            http_status = _http_status(terminal.error)
            if http_status is not None:
                attributes[HTTP_STATUS] = http_status
            status = Status(StatusCode.ERROR, terminal.error.message)
        elif type(terminal) is Cancelled or cancelled is not None:
            outcome = "cancelled"
        else:  # completed without a terminal (not settled), or an exception
            outcome = "error" if exception else "incomplete"
        attributes[FINISH_REASONS] = [finish]
        if error_type is not None:
            attributes[ERROR_TYPE] = error_type
        attributes["rxllm.outcome"] = outcome
        if self.first is not None:
            attributes[TIME_TO_FIRST_CHUNK] = self.first - self.started
        usage = self.usage
        if usage is not None:
            attributes.update(_usage(usage))
        asked = self.senders.model(number)
        renamed = asked is not None and self.model is not None and asked != self.model
        if renamed:  # a fallback ended on a provider asked for a model of its own
            self.model = attributes[REQUEST_MODEL] = asked
        metric_base: dict[str, AttributeValue] = {OPERATION: operation}
        if self.model is not None:
            metric_base[REQUEST_MODEL] = self.model
        try:
            span = self.span
            if status is not None:
                span.set_status(status)
            if outcome == "cancelled":
                reason = terminal.reason if type(terminal) is Cancelled else cancelled
                span.add_event("rxllm.cancelled", {"rxllm.cancel.reason": reason or ""})
            self._end_attempt(number, provider or "unknown", outcome, _error_of(terminal))
            attributes["rxllm.attempts"] = self.attempts
            if self.capture:
                attributes[OUTPUT_MESSAGES] = self._output_messages(terminal)
            if operation != self.operation or renamed:  # a fallback's other wire or model
                self.operation = operation
                attributes[OPERATION] = operation
                span.update_name(self._name())
            span.set_attributes(attributes)
            span.end()
        finally:  # a span pipeline that raised still leaves the metrics recorded
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
        # Token histograms for a turn that ended `done` only (semantic-conventions-genai
        # #530): they carry no `error.type`, and a failed or cancelled turn's partial
        # counts would skew the distribution; the span keeps what such a turn used.
        if usage is not None and outcome == "done":
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

    def _output_messages(self, terminal: Event | None) -> str:
        parts = [
            {"type": part[0], "content": "".join(part[1])} if type(part) is tuple else part
            for part in self.output
        ]
        # `finish_reason` is required by the released output schema (deprecated in
        # favour of `gen_ai.response.finish_reasons` since): kept, with the same rule.
        if type(terminal) is Done:
            finish = _FINISH.get(terminal.stop_reason) or terminal.raw_stop_reason or "stop"
        else:
            finish = "error"
        message = {"role": "assistant", "parts": parts, "finish_reason": finish}
        return json.dumps([message], ensure_ascii=False, default=str)


# rxllm's stop reasons as the conventions' output message `finish_reason`.
_FINISH = {"stop": "stop", "length": "length", "content_filter": "content_filter",
           "tool_use": "tool_call"}  # fmt: skip


def _http_status(error: ErrorInfo) -> int | None:
    """The status of the HTTP response an error came with (`http`, `rejected`, a
    redirect refused by `policy`): not the status-like code of an error inside a 200
    stream (`stream_error`: Anthropic's `overloaded_error` read as 529, OpenRouter's
    `code`), which no response had."""
    return None if error.kind == "stream_error" else error.status


def _error_of(terminal: Event | None) -> ErrorInfo | None:
    return terminal.error if type(terminal) is Failed else None


def _usage(usage: Usage) -> dict[str, AttributeValue]:
    """The conventions count cached input inside `input_tokens` (rxllm keeps it apart)
    and reasoning inside `output_tokens` (as rxllm does); a breakdown is written only
    when not zero."""
    attributes: dict[str, AttributeValue] = {
        INPUT_TOKENS: usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        OUTPUT_TOKENS: usage.output_tokens,
    }
    if usage.cache_read_tokens:
        attributes[CACHE_READ_TOKENS] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes[CACHE_WRITE_TOKENS] = usage.cache_write_tokens
        attributes[CACHE_CREATION_TOKENS] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        attributes[REASONING_TOKENS] = usage.reasoning_tokens
    if usage.cost_usd is not None:
        attributes["rxllm.usage.cost_usd"] = usage.cost_usd
    return attributes


def _flat_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The request's params with Gemini's `generationConfig` settings lifted beside
    the others (the wire puts them back there)."""
    flat = dict(params)
    for key in ("generationConfig", "generation_config"):
        config = flat.pop(key, None)
        if isinstance(config, Mapping):
            flat.update(config)
    return flat


def _request_params(params: Mapping[str, Any]) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {}
    for key, value in params.items():
        name = REQUEST_PARAMS.get(key)
        if name is None:
            continue
        if key in _STOP:
            value = [value] if isinstance(value, str) else value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                attributes[name] = value
        elif isinstance(value, bool) or not isinstance(value, int | float):
            continue
        elif name != CHOICE_COUNT or (isinstance(value, int) and value != 1):
            attributes[name] = value  # a choice count only when it is not the default 1
    return attributes


# The output format a request asks for, as `gen_ai.output.type` (text, json, image,
# speech): OpenAI's `response_format` and the Responses `text.format` (a JSON object
# or schema is `json`, as the openai-v2 instrumentation maps it), Anthropic's
# `output_format`, Gemini's `responseMimeType` (as the google-genai one maps it).
_JSON_FORMATS = frozenset({"json_object", "json_schema"})
_MIME_TYPES = {"application/json": "json", "text/plain": "text"}


def _output_type(params: Mapping[str, Any]) -> str | None:
    """The output format a user put in `params` in a wire's own form: OpenAI chat's
    `response_format`, Responses' `text.format`, Anthropic's `output_config.format` (and
    the beta `output_format`), Gemini's `responseMimeType`."""
    nested = [
        outer.get("format")
        for outer in (params.get("text"), params.get("output_config"))
        if isinstance(outer, Mapping)
    ]
    for given in (params.get("response_format"), *nested, params.get("output_format")):
        kind = given.get("type") if isinstance(given, Mapping) else given
        if isinstance(kind, str):
            return "json" if kind in _JSON_FORMATS else kind
    mime = params.get("responseMimeType", params.get("response_mime_type"))
    if isinstance(mime, str):
        return _MIME_TYPES.get(mime, mime)
    return None


def _tool_definitions(tools: list[Tool]) -> str:
    """The conventions' tool definitions, required properties only: a description and
    parameters "could be large, it's NOT RECOMMENDED to populate" them by default."""
    definitions = [{"type": "function", "name": tool.name} for tool in tools]
    return json.dumps(definitions, ensure_ascii=False)


def _input_messages(
    messages: list[Message], system_apart: str | None = None
) -> dict[str, AttributeValue]:
    """The conventions' JSON forms: system text the wire sends apart from the history
    (`system_apart`: "all", or "leading" for the system messages before any other) as
    `gen_ai.system_instructions`, every other message with its parts, in order."""
    system: list[dict[str, Any]] = []
    chat: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # provider-run tools' names by call id, for their results
    for message in messages:
        parts = [
            _part(part, names)
            for part in message.content
            if not (isinstance(part, ReasoningPart) and _marker(part))
        ]
        if message.role == "system" and (
            system_apart == "all" or (system_apart == "leading" and not chat)
        ):
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


def _part(part: Part, names: dict[str, str]) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if isinstance(part, ServerToolPart):
        return _server_block(part.block, names)
    if not isinstance(part, ImagePart):  # reasoning sent back: its text (no signature)
        if _compacted(part.details):
            return _compaction(part.details)
        return {"type": "reasoning", "content": part.text}
    modality = "document" if part.pdf else "image"  # the schemas' Modality enum
    inline = part.inline
    if inline is not None:
        # The bytes would swamp a span: left out as the conventions allow ("truncate
        # properties ... preserving JSON structure"), `content` kept, as the schema
        # requires it.
        return {"type": "blob", "modality": modality, "mime_type": inline[0], "content": ""}
    if part.media_type is None:
        return {"type": "uri", "modality": modality, "uri": part.url}
    # "Instrumentations SHOULD also set the mimeType field if the specific type is known."
    return {"type": "uri", "modality": modality, "mime_type": part.media_type, "uri": part.url}


def _server_block(block: Mapping[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A provider-run tool's block sent back in the history (`ServerToolPart`) as the
    call or result part it was in the output (`_server_part` of the event the anthropic
    wire read from it): a result is named after its call (`names`, by call id, filled
    as calls are read), else after its block type."""
    # A result is one of Anthropic's `*_tool_result` blocks (the wire whose blocks
    # `ServerToolPart` sends back), its call's id in `tool_use_id`; any other is a call.
    from rxllm.providers.base import server_result_failed  # late, as `_named_wire`'s

    suffix = "_tool_result"
    kind = block.get("type")
    kind = kind if isinstance(kind, str) else "server_tool"
    call_id = block.get("tool_use_id")
    if kind.endswith(suffix) or call_id is not None:
        content = block.get("content")
        if block.get("is_error") is True:  # an MCP failure, said beside its content
            content = {"is_error": True, "content": content}
        name = names.get(call_id) if isinstance(call_id, str) else None
        result = {"type": name or kind.removesuffix(suffix), "content": content}
        if server_result_failed(block):  # as `_server_part` of the event read from it
            result["is_error"] = True
        response: dict[str, Any] = {"type": "server_tool_call_response"}
        if isinstance(call_id, str):
            response["id"] = call_id
        response["server_tool_call_response"] = result
        return response
    call_id = block.get("id")
    name = block.get("name")
    name = name if isinstance(name, str) and name else kind
    call: dict[str, Any] = {"type": "server_tool_call"}
    if isinstance(call_id, str):
        call["id"] = call_id
        names[call_id] = name
    call["name"] = name
    call["server_tool_call"] = {"type": name, "arguments": block.get("input")}
    return call


def _compacted(details: Mapping[str, Any] | None) -> TypeGuard[Mapping[str, Any]]:
    """Whether reasoning's details are a compaction the wire kept as reasoning
    (Anthropic's `compaction` block, a Responses `compaction` item)."""
    return details is not None and details.get("type") == "compaction"


def _marker(reasoning: ReasoningDelta | ReasoningPart) -> bool:
    """Whether reasoning is a block of another kind that the wire keeps as reasoning
    for the history, with no content: Gemini's signature of a part (its details the
    part's fields, `{}` for text), Anthropic's `fallback` block. Reasoning whose
    content is withheld (a redacted block, a Responses or OpenRouter reasoning item
    with only its encrypted form) is reasoning still, an empty part as the
    conventions' ReasoningPart takes it."""
    details = reasoning.details
    if reasoning.text or reasoning.redacted or details is None or _compacted(details):
        return False  # a compaction is a part of its own
    kind = details.get("type")
    return not (isinstance(kind, str) and kind.startswith("reasoning"))


def _compaction(details: Mapping[str, Any]) -> dict[str, Any]:
    """The schemas' CompactionPart: its `id` and its summary (`content`, "the
    unencrypted compacted conversation summary, when available"), never the
    encrypted state (Anthropic's `encrypted_content`, a Responses item's signature)."""
    part: dict[str, Any] = {"type": "compaction"}
    for key in ("id", "content"):
        value = details.get(key)
        if isinstance(value, str):
            part[key] = value
    return part


def _server_part(event: ServerToolCall | ServerToolResult) -> dict[str, Any]:
    """A provider-run tool's call or result, as the output schema's server tool parts."""
    if isinstance(event, ServerToolCall):
        details = {"type": event.name, "arguments": event.arguments}
        return {
            "type": "server_tool_call",
            "id": event.call_id,
            "name": event.name,
            "server_tool_call": details,
        }
    result = {"type": event.name, "content": event.content}
    if event.is_error:
        # The conventions give a provider-run tool's failure no field of its own (the
        # response part takes any provider property beside `type`; `error.type` is the
        # span's, or an execute_tool span's for a tool the caller ran): the event's.
        result["is_error"] = True
    return {
        "type": "server_tool_call_response",
        "id": event.call_id,
        "server_tool_call_response": result,
    }


def _server(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
