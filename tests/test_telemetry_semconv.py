"""telemetry against the OpenTelemetry GenAI semantic conventions, clause by clause:
each test names the clause it checks (semantic-conventions-genai `gen-ai-spans.md`,
`gen-ai-metrics.md`, the registry and the message JSON schemas; the general
`recording-errors.md`), and reads the span and the metrics back through the real SDK.
These tests give the operator their own tracer and meter providers (the global ones
belong to tests/test_telemetry.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from opentelemetry import metrics as metrics_api
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from reactivex import Observable
from reactivex.testing import ReactiveTest, TestScheduler

import rxllm
from rxllm.events import (
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
    ErrorKind,
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
from rxllm.local import LocalServer
from rxllm.operators import telemetry
from rxllm.pipeline.provider import record_of
from tests.support import capture, needs_captures

on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed


class Sdk:
    """A tracer provider and a meter provider of the real SDK, read back in memory."""

    def __init__(self, *processors: SpanProcessor) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        for processor in processors:
            self.tracer_provider.add_span_processor(processor)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def operator(self, **options: Any) -> Callable[[Observable[Event]], Observable[Event]]:
        return telemetry(self.tracer_provider, self.meter_provider, **options)

    def span(self) -> ReadableSpan:
        [span] = self.exporter.get_finished_spans()
        return span

    def attributes(self) -> dict[str, Any]:
        return dict(self.span().attributes or {})

    def points(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        found.setdefault(metric.name, []).append(dict(point.attributes or {}))
        return found


def replay(operator: Callable[[Observable[Event]], Observable[Event]], *events: Event) -> list[Any]:
    """The events through `operator` on a test scheduler: the messages it emitted."""
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        *(on_next(210 + 10 * i, event) for i, event in enumerate(events)),
        on_completed(210 + 10 * len(events)),
    )
    return list(scheduler.start(lambda: source.pipe(operator)).messages)


def expected(*events: Event) -> list[Any]:
    return [
        *(on_next(210 + 10 * i, event) for i, event in enumerate(events)),
        on_completed(210 + 10 * len(events)),
    ]


def request(*messages: rxllm.Message, **fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model="m-1", messages=list(messages) or [rxllm.Message.user("hi")], **fields
    )


TEXT = TextDelta.make(provider="openai", text="Hello")
DONE = Done.make(provider="openai", stop_reason="stop", raw_stop_reason="stop", model="m-1")


# -- robustness: telemetry never changes the stream nor raises into it -----------------


class Raising(SpanProcessor):
    """A span processor (a user's, or a vendor's) that raises where it is told to."""

    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if self.where == "start":
            raise RuntimeError("processor broke on start")

    def on_end(self, span: ReadableSpan) -> None:
        if self.where == "end":
            raise RuntimeError("processor broke on end")


class BrokenExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise ConnectionError("collector unreachable")


@pytest.mark.parametrize(
    "processor",
    [Raising("start"), Raising("end"), SimpleSpanProcessor(BrokenExporter())],
    ids=["on_start", "on_end", "exporter"],
)
def test_a_broken_span_pipeline_changes_nothing_in_the_stream(processor: SpanProcessor) -> None:
    """The SDK calls span processors without catching what they raise (its exporters
    are caught by SimpleSpanProcessor): the turn's events, its terminal above all, must
    still arrive, and the metrics still be recorded."""
    sdk = Sdk(processor)
    assert replay(sdk.operator(request=request()), TEXT, DONE) == expected(TEXT, DONE)
    assert "gen_ai.client.operation.duration" in sdk.points()


class _RaisingHistogram:
    def record(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("meter broke on record")


class _RaisingMeter:
    def __init__(self, where: str) -> None:
        self.where = where

    def create_histogram(self, *args: Any, **kwargs: Any) -> Any:
        if self.where == "create":
            raise RuntimeError("meter broke on create")
        return _RaisingHistogram()


class RaisingMeterProvider(metrics_api.MeterProvider):
    def __init__(self, where: str) -> None:
        self.where = where

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        if self.where == "get_meter":
            raise RuntimeError("meter provider broke")
        return _RaisingMeter(self.where)


@pytest.mark.parametrize("where", ["get_meter", "create", "record"])
def test_a_meter_provider_that_raises_changes_nothing_in_the_stream(where: str) -> None:
    sdk = Sdk()
    operator = telemetry(sdk.tracer_provider, RaisingMeterProvider(where), request=request())
    assert replay(operator, TEXT, DONE) == expected(TEXT, DONE)
    assert sdk.span().name == "chat m-1"  # the span does not depend on the metrics


# -- the span: finish reasons, status, operation name ----------------------------------


FAILED = Failed.make(
    provider="openai",
    error=ErrorInfo(kind="stream_error", message="overloaded", provider="openai"),
)


@pytest.mark.parametrize(
    ("terminal", "status"),
    [
        (FAILED, StatusCode.ERROR),
        (Cancelled.make(provider="openai"), StatusCode.UNSET),
        (None, StatusCode.UNSET),  # completed without a terminal: not settled
    ],
    ids=["error", "cancelled", "no terminal"],
)
def test_a_turn_without_a_finish_reports_error_as_its_finish_reason(
    terminal: Event | None, status: StatusCode
) -> None:
    """gen-ai-spans / client-inference, `gen_ai.response.finish_reasons`: "If a finish
    reason was expected but not received, for example because generation failed, was
    cancelled, or a stream ended before the final event, instrumentations SHOULD report
    `error` for that position instead of omitting it." (semantic-conventions-genai #363)"""
    sdk = Sdk()
    events = [TEXT] if terminal is None else [TEXT, terminal]
    replay(sdk.operator(request=request(), capture_content=True), *events)
    attributes = sdk.attributes()
    assert attributes["gen_ai.response.finish_reasons"] == ("error",)
    assert sdk.span().status.status_code is status
    [message] = json.loads(attributes["gen_ai.output.messages"])
    assert message["finish_reason"] == "error"


@needs_captures
@pytest.mark.parametrize(
    ("provider", "path", "status"),
    [
        ("anthropic", "anthropic/docs_overloaded_error_event.sse", 529),
        ("openrouter", "openrouter/midstream_error_with_usage.sse", 400),
    ],
)
def test_an_error_inside_a_stream_is_no_http_status(provider: str, path: str, status: int) -> None:
    """`http.response.status_code` is "HTTP response status code": an error sent inside
    a 200 stream (Anthropic's `overloaded_error` event, which rxllm reads as 529;
    OpenRouter's mid-stream error, its `code` 400) came with no such response. The
    span and its attempt event say `error.type = stream_error`, with no HTTP status."""
    sdk = Sdk()
    events: list[Event] = []
    operator = sdk.operator(request=request(), provider=provider)
    rxllm.replay(capture(path), provider=provider).pipe(operator).subscribe(events.append)
    terminal = events[-1]
    assert isinstance(terminal, Failed)
    assert (terminal.error.kind, terminal.error.status) == ("stream_error", status)
    attributes = sdk.attributes()
    assert attributes["error.type"] == "stream_error"
    assert "http.response.status_code" not in attributes
    [attempt] = [e.attributes or {} for e in sdk.span().events if e.name == "rxllm.attempt"]
    assert attempt["error.type"] == "stream_error"
    assert "http.response.status_code" not in attempt


@pytest.mark.parametrize("kind", ["http", "rejected"])
def test_an_http_error_response_is_its_status(kind: ErrorKind) -> None:
    """A response of 4xx (`rejected`) or another error status (`http`): its status is
    `http.response.status_code`, on the span and on its attempt's event."""
    sdk = Sdk()
    error = ErrorInfo(kind=kind, message="no", provider="openai", status=503)
    replay(sdk.operator(request=request()), Failed.make(provider="openai", error=error))
    assert sdk.attributes()["http.response.status_code"] == 503
    [attempt] = [e.attributes or {} for e in sdk.span().events if e.name == "rxllm.attempt"]
    assert attempt["http.response.status_code"] == 503


def test_gemini_generate_content_is_its_own_operation() -> None:
    """The registry's well-known `gen_ai.operation.name` values: `chat` is "Chat
    completion operation such as OpenAI Chat API", `generate_content` is "Multimodal
    content generation operation such as Gemini Generate Content" (and it is what the
    opentelemetry-instrumentation-google-genai package reports)."""
    sdk = Sdk()
    done = Done.make(provider="google", stop_reason="stop", raw_stop_reason="STOP")
    replay(sdk.operator(request=request(), provider="google"), done)
    span = sdk.span()
    assert span.name == "generate_content m-1"
    attributes = sdk.attributes()
    assert attributes["gen_ai.operation.name"] == "generate_content"
    assert attributes["gen_ai.provider.name"] == "gcp.gemini"
    [duration] = sdk.points()["gen_ai.client.operation.duration"]
    assert duration["gen_ai.operation.name"] == "generate_content"


def test_a_fallback_that_ends_on_gemini_names_the_operation_that_served() -> None:
    sdk = Sdk()
    done = Done.make(provider="google", attempt=2, stop_reason="stop")
    replay(sdk.operator(request=request(), provider="openai"), done)
    assert sdk.span().name == "generate_content m-1"
    assert sdk.attributes()["gen_ai.operation.name"] == "generate_content"


async def test_a_gemini_turn_on_the_wire(local_server: LocalServer) -> None:
    sdk = Sdk()
    provider = local_server.provider("google")
    req = rxllm.ChatRequest(model="local-model", messages=[rxllm.Message.user("hi")])
    servers = {"google": local_server.root + "/v1beta"}
    operator = sdk.operator(request=req, provider="google", servers=servers)
    record = await record_of(provider.stream(req).pipe(operator), "google", req.model)
    assert record.terminal.type == "done"
    assert sdk.span().name == "generate_content local-model"


def test_same_name_providers_are_told_apart_by_the_attempts_they_sent() -> None:
    """Two `openai` providers on two endpoints: `served_by` (attempt -> provider, as
    rxllm's fallback gives it) says which one sent each attempt, so each attempt's event
    and the span name the right server; a name alone would say the first's."""
    first = rxllm.provider("openai", api_key="k", base_url="https://a.example/v1")
    second = rxllm.provider("openai", api_key="k", base_url="https://b.example:8443/v1")
    sdk = Sdk()
    operator = sdk.operator(
        request=request(),
        providers=[first, second],
        served_by=lambda attempt: first if attempt < 3 else second,
    )
    reason = ErrorInfo(kind="http", message="busy", provider="openai", status=503)
    events = [
        Retry.make(
            provider="openai", attempt=n, reason=reason, next_attempt=n + 1, next_provider="openai"
        )
        for n in (1, 2)
    ]
    done = Done.make(provider="openai", attempt=3, stop_reason="stop")
    replay(operator, *events, done)
    attempts = [e.attributes or {} for e in sdk.span().events if e.name == "rxllm.attempt"]
    servers = [(a["rxllm.attempt.number"], a["server.address"], a["server.port"]) for a in attempts]
    assert servers == [(1, "a.example", 443), (2, "a.example", 443), (3, "b.example", 8443)]
    attributes = sdk.attributes()
    assert (attributes["server.address"], attributes["server.port"]) == ("b.example", 8443)

    by_name = Sdk()  # without served_by: the first of that name
    replay(by_name.operator(request=request(), providers=[first, second]), done)
    assert by_name.attributes()["server.address"] == "a.example"


def test_a_vertex_ai_endpoint_is_gcp_vertex_ai() -> None:
    """`gcp.vertex_ai`: "Used when accessing the 'aiplatform.googleapis.com' endpoint";
    `gcp.gemini` for 'generativelanguage.googleapis.com'."""
    sdk = Sdk()
    vertex = (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google"
    )
    done = Done.make(provider="google", stop_reason="stop")
    replay(sdk.operator(request=request(), provider="google", servers={"google": vertex}), done)
    attributes = sdk.attributes()
    assert attributes["gen_ai.provider.name"] == "gcp.vertex_ai"
    assert attributes["server.address"] == "us-central1-aiplatform.googleapis.com"


def test_a_consumer_exception_is_not_recorded_as_a_span_event() -> None:
    """recording-errors.md: "It is NOT RECOMMENDED to record the error via a span event,
    for example, by using `Span.RecordException`"; the status description SHOULD carry
    the additional information, "for example, an exception message"."""
    sdk = Sdk()
    scheduler = TestScheduler()
    source: Observable[Event] = scheduler.create_hot_observable(
        on_next(210, TEXT), on_next(220, DONE)
    )

    def boom(event: Event) -> None:
        raise LookupError("the consumer's own bug")

    source.pipe(sdk.operator(request=request())).subscribe(boom)
    with pytest.raises(LookupError):  # RxPY's rule: it propagates (no on_error given)
        scheduler.start()
    span = sdk.span()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "the consumer's own bug"
    assert dict(span.attributes or {})["error.type"] == "LookupError"
    assert [e.name for e in span.events if e.name == "exception"] == []


# -- request attributes -----------------------------------------------------------------


def test_choice_count_and_output_type_from_the_request() -> None:
    """`gen_ai.request.choice.count`: Conditionally Required "if available, in the
    request, and !=1"; `gen_ai.output.type`: Conditionally Required "when applicable
    and if the request includes an output format" (`json` for a JSON object or schema,
    as the openai-v2 instrumentation maps `response_format`)."""
    sdk = Sdk()
    schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": {}}}
    replay(sdk.operator(request=request(params={"n": 3, "response_format": schema})), DONE)
    attributes = sdk.attributes()
    assert attributes["gen_ai.request.choice.count"] == 3
    assert attributes["gen_ai.output.type"] == "json"

    single = Sdk()
    replay(single.operator(request=request(params={"n": 1})), DONE)
    assert "gen_ai.request.choice.count" not in single.attributes()


def test_gemini_generation_config_params_are_request_attributes() -> None:
    """Gemini names its settings in camelCase inside `generationConfig` (the
    google-genai instrumentation maps top_k, candidate_count, response_mime_type...)."""
    sdk = Sdk()
    config = {"topK": 40, "candidateCount": 2, "responseMimeType": "application/json"}
    params = {"generationConfig": config, "topP": 0.5}
    replay(sdk.operator(request=request(params=params), provider="google"), DONE)
    attributes = sdk.attributes()
    assert attributes["gen_ai.request.top_k"] == 40
    assert attributes["gen_ai.request.top_p"] == 0.5
    assert attributes["gen_ai.request.choice.count"] == 2
    assert attributes["gen_ai.output.type"] == "json"


def test_responses_text_format_is_the_output_type() -> None:
    sdk = Sdk()
    params = {"text": {"format": {"type": "json_object"}}}
    replay(sdk.operator(request=request(params=params), provider="openai-responses"), DONE)
    assert sdk.attributes()["gen_ai.output.type"] == "json"


@pytest.mark.parametrize(
    "fields",
    [
        {"response_format": "json"},
        {"response_format": rxllm.JsonSchema(name="a", schema={"type": "object"})},
        {"params": {"output_config": {"format": {"type": "json_schema", "schema": {}}}}},
    ],
    ids=["field-json", "field-schema", "anthropic-output-config"],
)
def test_an_output_format_in_any_form_is_the_output_type(fields: dict[str, Any]) -> None:
    """The portable `ChatRequest.response_format` (which no wire key in `params`
    carries) and Anthropic's `output_config.format` are output formats too."""
    sdk = Sdk()
    replay(sdk.operator(request=request(**fields), provider="anthropic"), DONE)
    assert sdk.attributes()["gen_ai.output.type"] == "json"


def test_no_output_format_is_no_output_type() -> None:
    sdk = Sdk()
    replay(sdk.operator(request=request(params={"output_config": {"effort": "low"}})), DONE)
    assert "gen_ai.output.type" not in sdk.attributes()


# -- content capture: where system text goes, the JSON schemas --------------------------


SYSTEM_AND_USER = (rxllm.Message.system("Be brief."), rxllm.Message.user("hi"))


def test_system_messages_of_a_chat_wire_stay_in_the_chat_history() -> None:
    """`gen_ai.system_instructions` "SHOULD be used when the corresponding provider or
    API allows to provide system instructions or messages separately from the chat
    history. Instructions that are part of the chat history SHOULD be recorded in
    `gen_ai.input.messages` attribute instead." OpenAI's chat wire sends them as
    messages (and the openai-v2 instrumentation records them with role `system`)."""
    sdk = Sdk()
    replay(
        sdk.operator(request=request(*SYSTEM_AND_USER), provider="openai", capture_content=True),
        DONE,
    )
    attributes = sdk.attributes()
    assert "gen_ai.system_instructions" not in attributes
    assert json.loads(attributes["gen_ai.input.messages"]) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
    ]


@pytest.mark.parametrize("provider", ["anthropic", "google", "openai-responses"])
def test_system_text_a_wire_sends_apart_is_system_instructions(provider: str) -> None:
    sdk = Sdk()
    operator = sdk.operator(
        request=request(*SYSTEM_AND_USER), provider=provider, capture_content=True
    )
    replay(operator, Done.make(provider=provider, stop_reason="stop"))
    attributes = sdk.attributes()
    assert json.loads(attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    assert [m["role"] for m in json.loads(attributes["gen_ai.input.messages"])] == ["user"]


def test_a_later_system_message_of_the_responses_wire_stays_in_place() -> None:
    """The Responses wire sends the leading system text as `instructions` and a later
    system message as an item of the input, where it was."""
    sdk = Sdk()
    messages = (*SYSTEM_AND_USER, rxllm.Message.system("Now in French."))
    operator = sdk.operator(
        request=request(*messages), provider="openai-responses", capture_content=True
    )
    replay(operator, DONE)
    attributes = sdk.attributes()
    assert json.loads(attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    roles = [m["role"] for m in json.loads(attributes["gen_ai.input.messages"])]
    assert roles == ["user", "system"]


# The parts' required properties, as the conventions' JSON schemas list them
# (model/gen-ai/gen-ai-input-messages.json and gen-ai-output-messages.json).
REQUIRED = {
    "text": {"content"},
    "reasoning": {"content"},
    "tool_call": {"name"},
    "tool_call_response": {"response"},
    "blob": {"modality", "content"},
    "uri": {"modality", "uri"},
    "server_tool_call": {"name", "server_tool_call"},
    "server_tool_call_response": {"server_tool_call_response"},
}


def check_parts(messages: list[dict[str, Any]]) -> None:
    for message in messages:
        assert {"role", "parts"} <= set(message)
        for part in message["parts"]:
            missing = REQUIRED.get(part["type"], set()) - set(part)
            assert not missing, (part, missing)


def test_an_inline_image_is_a_blob_part_the_schema_accepts() -> None:
    """BlobPart requires `type`, `modality` and `content`; the conventions allow an
    instrumentation to truncate a property "preserving JSON structure": the bytes are
    left out (an empty `content`), the part stays valid."""
    sdk = Sdk()
    image = "data:image/png;base64,iVBORw0KGgo="
    user = rxllm.Message.user("what is it?", images=[image, "https://example.com/cat.png"])
    replay(sdk.operator(request=request(user), capture_content=True), DONE)
    [message] = json.loads(sdk.attributes()["gen_ai.input.messages"])
    check_parts([message])
    assert message["parts"][1:] == [
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": ""},
        {"type": "uri", "modality": "image", "uri": "https://example.com/cat.png"},
    ]
    assert "iVBORw0KGgo" not in json.dumps(sdk.attributes())


def test_a_pdf_is_a_document() -> None:
    """The Modality enum of the message schemas has `document` (semantic-conventions-
    genai CHANGELOG, unreleased: "Enables capturing PDF/DOCX (and similar) parts that
    today have to fall through to the free-form `string` branch"): a PDF, inline or by
    URL, is a `document`, with its MIME type ("Instrumentations SHOULD also set the
    mimeType field if the specific type is known"), an image an `image`."""
    sdk = Sdk()
    user = rxllm.Message(
        role="user",
        content=[
            rxllm.TextPart(text="Summarize these."),
            rxllm.ImagePart(url=b"%PDF-1.4 made up"),
            rxllm.ImagePart(url="https://example.com/paper.pdf", media_type="application/pdf"),
            rxllm.ImagePart(url="https://example.com/cat", media_type="image/webp"),
        ],
    )
    replay(sdk.operator(request=request(user), capture_content=True), DONE)
    [message] = json.loads(sdk.attributes()["gen_ai.input.messages"])
    check_parts([message])
    assert message["parts"][1:] == [
        {"type": "blob", "modality": "document", "mime_type": "application/pdf", "content": ""},
        {
            "type": "uri",
            "modality": "document",
            "mime_type": "application/pdf",
            "uri": "https://example.com/paper.pdf",
        },
        {
            "type": "uri",
            "modality": "image",
            "mime_type": "image/webp",
            "uri": "https://example.com/cat",
        },
    ]


def test_server_tool_calls_and_results_are_output_parts() -> None:
    """ServerToolCallPart and ServerToolCallResponsePart of the output messages schema:
    a provider-run tool is part of what the model returned."""
    sdk = Sdk()
    call = ServerToolCall.make(
        provider="anthropic", call_id="srv_1", name="web_search", arguments={"query": "otters"}
    )
    result = ServerToolResult.make(
        provider="anthropic", call_id="srv_1", name="web_search", content=[{"url": "u"}]
    )
    done = Done.make(provider="anthropic", stop_reason="stop", raw_stop_reason="end_turn")
    replay(sdk.operator(request=request(), capture_content=True), call, result, done)
    [message] = json.loads(sdk.attributes()["gen_ai.output.messages"])
    check_parts([message])
    assert message["parts"] == [
        {
            "type": "server_tool_call",
            "id": "srv_1",
            "name": "web_search",
            "server_tool_call": {"type": "web_search", "arguments": {"query": "otters"}},
        },
        {
            "type": "server_tool_call_response",
            "id": "srv_1",
            "server_tool_call_response": {"type": "web_search", "content": [{"url": "u"}]},
        },
    ]


def test_output_parts_are_in_the_order_the_model_gave_them() -> None:
    """The output message's `parts` "make up the message content", in order: a
    run of deltas of one kind is one part, and a part of another kind between two runs
    keeps them apart, rather than all the text gathered into one part after the
    reasoning and the provider-run tools put after it."""
    sdk = Sdk()
    events: list[Event] = [
        ReasoningDelta.make(provider="anthropic", text="Let me "),
        ReasoningDelta.make(provider="anthropic", text="search."),
        ServerToolCall.make(provider="anthropic", call_id="s1", name="web_search"),
        ServerToolResult.make(provider="anthropic", call_id="s1", name="web_search"),
        TextDelta.make(provider="anthropic", text="Found "),
        Citation.make(provider="anthropic", url="https://example.com/a"),  # no part of its own
        TextDelta.make(provider="anthropic", text="one."),
        ReasoningDelta.make(provider="anthropic", text="Now the tool."),
        TextDelta.make(provider="anthropic", text="Calling it."),
        ToolRequest.make(provider="anthropic", call_id="c1", name="f", index=0, arguments={}),
        Refusal.make(provider="anthropic", text="No more."),
        DONE,
    ]
    replay(sdk.operator(request=request(), capture_content=True), *events)
    [message] = json.loads(sdk.attributes()["gen_ai.output.messages"])
    check_parts([message])
    assert [(part["type"], part.get("content")) for part in message["parts"]] == [
        ("reasoning", "Let me search."),
        ("server_tool_call", None),
        ("server_tool_call_response", None),
        ("text", "Found one."),
        ("reasoning", "Now the tool."),
        ("text", "Calling it."),
        ("tool_call", None),
        ("refusal", "No more."),
    ]


def test_an_empty_delta_splits_no_run() -> None:
    """A delta without text (a thinking block's closing signature, an empty text
    delta) adds nothing to the run it is in; a redacted thinking block alone is still
    a reasoning part, as it was."""
    sdk = Sdk()
    events: list[Event] = [
        ReasoningDelta.make(provider="anthropic", text="", signature="S0", redacted=True),
        TextDelta.make(provider="anthropic", text="A"),
        ReasoningDelta.make(provider="anthropic", text="Think "),
        ReasoningDelta.make(provider="anthropic", text="", signature="S1"),
        ReasoningDelta.make(provider="anthropic", text="again."),
        TextDelta.make(provider="anthropic", text="B"),
        TextDelta.make(provider="anthropic", text=""),
        TextDelta.make(provider="anthropic", text="C"),
        DONE,
    ]
    replay(sdk.operator(request=request(), capture_content=True), *events)
    [message] = json.loads(sdk.attributes()["gen_ai.output.messages"])
    assert message["parts"] == [
        {"type": "reasoning", "content": ""},
        {"type": "text", "content": "A"},
        {"type": "reasoning", "content": "Think again."},
        {"type": "text", "content": "BC"},
    ]


def test_a_marker_without_content_is_no_reasoning_part() -> None:
    """Anthropic's `fallback` block and Gemini's signature of a text part, each kept as
    reasoning without text for the history, are no reasoning part, in the output or
    sent back in the input: they add nothing to the run they are in. Reasoning that
    has content withheld, a redacted block, an encrypted Responses item, still is."""
    fallback = {"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}}
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    sdk = Sdk()
    events: list[Event] = [
        TextDelta.make(provider="anthropic", text="A"),
        ReasoningDelta.make(provider="anthropic", text="", details=fallback),
        TextDelta.make(provider="anthropic", text="B"),
        ReasoningDelta.make(provider="google", text="", signature="G", details={}),
        TextDelta.make(provider="google", text="C"),
        ReasoningDelta.make(provider="anthropic", text="", signature="R", redacted=True),
        ReasoningDelta.make(provider="openai-responses", text="", signature="E", details=item),
        DONE,
    ]
    turn = rxllm.Message(
        role="assistant",
        content=[
            rxllm.TextPart(text="A"),
            rxllm.ReasoningPart(details=fallback),
            rxllm.ReasoningPart(signature="G", details={}),
            rxllm.TextPart(text="B"),
            rxllm.ReasoningPart(signature="R", redacted=True),
        ],
    )
    history = request(rxllm.Message.user("hi"), turn)
    replay(sdk.operator(request=history, capture_content=True), *events)
    [output] = json.loads(sdk.attributes()["gen_ai.output.messages"])
    [_, sent_back] = json.loads(sdk.attributes()["gen_ai.input.messages"])
    check_parts([output, sent_back])
    assert output["parts"] == [
        {"type": "text", "content": "ABC"},
        {"type": "reasoning", "content": ""},
    ]
    assert sent_back["parts"] == [
        {"type": "text", "content": "A"},
        {"type": "text", "content": "B"},
        {"type": "reasoning", "content": ""},
    ]


@needs_captures
def test_gemini_s_text_signature_is_no_reasoning_part() -> None:
    """Gemini 3 answering without its thoughts shown signs the text: the output is
    that text alone."""
    sdk = Sdk()
    operator = sdk.operator(request=request(), provider="google", capture_content=True)
    body = capture("gemini/vertex_text_flex.sse")
    events: list[Event] = []
    rxllm.replay(body, provider="google").pipe(operator).subscribe(events.append)
    assert any(isinstance(e, ReasoningDelta) and e.signature for e in events)
    [message] = json.loads(sdk.attributes()["gen_ai.output.messages"])
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert message["parts"] == [{"type": "text", "content": text}]


@needs_captures
def test_a_search_turn_s_output_parts_follow_its_stream() -> None:
    """Anthropic's web search, recorded: reasoning, a search and its results, text,
    a second search and its results, then the answer (its citations between pieces of
    text): seven parts in that order, each text part the text between the searches."""
    sdk = Sdk()
    events: list[Event] = []
    body = capture("anthropic/web_search_server_tool.sse")
    operator = sdk.operator(request=request(), provider="anthropic", capture_content=True)
    rxllm.replay(body, provider="anthropic").pipe(operator).subscribe(events.append)
    assert events[-1].type == "done"
    [message] = json.loads(sdk.attributes()["gen_ai.output.messages"])
    check_parts([message])
    parts = message["parts"]
    assert [part["type"] for part in parts] == [
        "reasoning",
        "server_tool_call",
        "server_tool_call_response",
        "text",
        "server_tool_call",
        "server_tool_call_response",
        "text",
    ]
    calls = [e.call_id for e in events if isinstance(e, ServerToolCall)]
    assert [parts[1]["id"], parts[4]["id"]] == calls
    texts: list[list[str]] = [[]]
    for event in events:
        if isinstance(event, ServerToolCall):
            texts.append([])
        elif isinstance(event, TextDelta):
            texts[-1].append(event.text)
    assert [parts[3]["content"], parts[6]["content"]] == ["".join(run) for run in texts[1:]]


@needs_captures
async def test_server_tools_sent_back_are_the_parts_they_were_as_output() -> None:
    """A provider-run tool's blocks sent back in the history (`ServerToolPart`, as
    `to_message()` keeps Anthropic's) are the input schema's ServerToolCallPart and
    ServerToolCallResponsePart, as they were in the output message of the turn that
    gave them: the assistant's turn reads the same in the span that received it and in
    the next one's input."""
    body = capture("anthropic/web_search_server_tool.sse")
    first = Sdk()
    operator = first.operator(request=request(), provider="anthropic", capture_content=True)
    record = await record_of(rxllm.replay(body, provider="anthropic").pipe(operator), "anthropic")
    [output] = json.loads(first.attributes()["gen_ai.output.messages"])

    turn = record.to_message()
    assert sum(isinstance(part, rxllm.ServerToolPart) for part in turn.content) == 4
    second = Sdk()
    history = request(rxllm.Message.user("Weather in San Francisco?"), turn)
    replay(second.operator(request=history, provider="anthropic", capture_content=True), DONE)
    [_, sent_back] = json.loads(second.attributes()["gen_ai.input.messages"])
    check_parts([sent_back])
    assert sent_back["parts"] == output["parts"]


def test_an_mcp_result_sent_back_names_its_call_and_says_its_error() -> None:
    """Anthropic's `mcp_tool_result` names no tool: the part names the call it answers
    (by `tool_use_id`), and an `is_error` result says so beside its content, as the
    anthropic wire's `server_tool_result` does, and in the part, as any failed
    provider-run tool's part does (tests/test_telemetry_server_tool_error.py)."""
    sdk = Sdk()
    call = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "kb"}
    result = {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": True,
        "content": [{"type": "text", "text": "not found"}],
    }
    turn = rxllm.Message(
        role="assistant",
        content=[
            rxllm.ServerToolPart(block={**call, "input": {}}),
            rxllm.ServerToolPart(block=result),
        ],
    )
    replay(sdk.operator(request=request(turn), capture_content=True), DONE)
    [message] = json.loads(sdk.attributes()["gen_ai.input.messages"])
    check_parts([message])
    assert message["parts"] == [
        {
            "type": "server_tool_call",
            "id": "mcptoolu_1",
            "name": "lookup",
            "server_tool_call": {"type": "lookup", "arguments": {}},
        },
        {
            "type": "server_tool_call_response",
            "id": "mcptoolu_1",
            "server_tool_call_response": {
                "type": "lookup",
                "content": {"is_error": True, "content": [{"type": "text", "text": "not found"}]},
                "is_error": True,
            },
        },
    ]


def anthropic_sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(
        f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()
        for payload in payloads
    )


async def test_a_compaction_is_a_compaction_part_out_and_back() -> None:
    """CompactionPart of the input and output schemas ("compacted conversation state
    sent to or received from the model": `id`, and `content`, "the unencrypted
    compacted conversation summary, when available"). Anthropic's compaction block,
    which the wire keeps as an empty reasoning delta whose details are the block, is
    one in the turn's output and in the history sent back, never an empty reasoning
    part; its encrypted content stays out."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test"}
    body = anthropic_sse(
        {"type": "message_start", "message": {**message, "content": [], "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Long chat."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "compaction", "content": None},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {
                "type": "compaction_delta",
                "content": "The summary.",
                "encrypted_content": "EC1",
            },
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "compaction"}, "usage": {}},
        {"type": "message_stop"},
    )
    first = Sdk()
    operator = first.operator(request=request(), provider="anthropic", capture_content=True)
    record = await record_of(rxllm.replay(body, provider="anthropic").pipe(operator), "anthropic")
    assert record.terminal.type == "done"
    parts = [
        {"type": "reasoning", "content": "Long chat."},
        {"type": "compaction", "content": "The summary."},
    ]
    [output] = json.loads(first.attributes()["gen_ai.output.messages"])
    assert output["parts"] == parts

    second = Sdk()
    history = request(rxllm.Message.user("Go on."), record.to_message())
    replay(second.operator(request=history, provider="anthropic", capture_content=True), DONE)
    [_, sent_back] = json.loads(second.attributes()["gen_ai.input.messages"])
    assert sent_back["parts"] == parts
    assert "EC1" not in json.dumps([first.attributes(), second.attributes()])


def test_a_responses_compaction_item_sent_back_is_a_compaction_part() -> None:
    """The Responses wire keeps a `compaction` item as a reasoning part: its
    `encrypted_content` the signature, its other fields the details; the part has its
    `id` and no summary (none is sent)."""
    sdk = Sdk()
    compacted = rxllm.ReasoningPart(
        signature="ENCRYPTED", details={"type": "compaction", "id": "cmp_1"}
    )
    turn = rxllm.Message(role="assistant", content=[compacted, rxllm.TextPart(text="Done.")])
    replay(sdk.operator(request=request(turn), capture_content=True), DONE)
    [message] = json.loads(sdk.attributes()["gen_ai.input.messages"])
    assert message["parts"] == [
        {"type": "compaction", "id": "cmp_1"},
        {"type": "text", "content": "Done."},
    ]
    assert "ENCRYPTED" not in json.dumps(sdk.attributes())


def test_tool_definitions_with_content_capture_only() -> None:
    """`gen_ai.tool.definitions` (Opt-In, the tool definitions JSON schema): `type` and
    `name` are required; the description and parameters "could be large, it's NOT
    RECOMMENDED to populate non-required properties by default"."""
    tool = rxllm.Tool(name="get_weather", description="Weather.", parameters={"type": "object"})
    captured = Sdk()
    replay(captured.operator(request=request(tools=[tool]), capture_content=True), DONE)
    definitions = json.loads(captured.attributes()["gen_ai.tool.definitions"])
    assert definitions == [{"type": "function", "name": "get_weather"}]

    plain = Sdk()
    replay(plain.operator(request=request(tools=[tool])), DONE)
    assert "gen_ai.tool.definitions" not in plain.attributes()


# -- usage -------------------------------------------------------------------------------


USAGE = UsageUpdate.make(provider="openai", usage=Usage.of(input_tokens=12, output_tokens=5))


@pytest.mark.parametrize(
    ("terminal", "recorded"),
    [
        (DONE, True),
        (FAILED, False),
        (Cancelled.make(provider="openai"), False),
        (None, False),  # completed without a terminal: not settled
    ],
    ids=["done", "error", "cancelled", "no terminal"],
)
def test_token_usage_histogram_for_a_turn_that_ended_done_only(
    terminal: Event | None, recorded: bool
) -> None:
    """semantic-conventions-genai #530 (changelog.d, unreleased): "the token usage
    histograms should not be recorded for failed operations while the usage counters
    should" (the issue: they carry no `error.type`, and "Distributions and outliers
    among failed operations are not meaningful"; its option 2 "limits histograms to
    successful operations only"). A cancelled turn is no successful operation either.
    What such a turn used stays on its span; the duration is recorded for every turn."""
    sdk = Sdk()
    events: list[Event] = [TEXT, USAGE] if terminal is None else [TEXT, USAGE, terminal]
    replay(sdk.operator(request=request()), *events)
    attributes = sdk.attributes()
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (
        12,
        5,
    )
    points = sdk.points()
    assert len(points["gen_ai.client.operation.duration"]) == 1
    tokens = points.get("gen_ai.client.token.usage", [])
    assert sorted(p["gen_ai.token.type"] for p in tokens) == (
        ["input", "output"] if recorded else []
    )


def test_a_successful_turn_that_used_no_tokens_records_zero() -> None:
    """#530: "a successful zero-token operation should still record `0`"."""
    sdk = Sdk()
    zero = UsageUpdate.make(provider="openai", usage=Usage.of(input_tokens=0, output_tokens=0))
    replay(sdk.operator(request=request()), zero, DONE)
    data = sdk.reader.get_metrics_data()
    sums = {
        dict(point.attributes or {})["gen_ai.token.type"]: (point.count, point.sum)
        for resource in (data.resource_metrics if data else [])
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "gen_ai.client.token.usage"
        for point in metric.data.data_points
        if isinstance(point, HistogramDataPoint)
    }
    assert sums == {"input": (1, 0), "output": (1, 0)}


def test_cache_writes_under_the_current_name_and_the_released_one() -> None:
    """semantic-conventions-genai #440 renamed `gen_ai.usage.cache_creation.input_tokens`
    to `gen_ai.usage.cache_write.input_tokens` (not yet in a release: the released
    conventions, the Python semconv package and the contrib instrumentations still
    write the old name). Both are written, with the same count."""
    sdk = Sdk()
    usage = Usage.of(input_tokens=10, output_tokens=5, cache_read_tokens=100, cache_write_tokens=40)
    replay(
        sdk.operator(request=request()), UsageUpdate.make(provider="anthropic", usage=usage), DONE
    )
    attributes = sdk.attributes()
    assert attributes["gen_ai.usage.input_tokens"] == 150  # cached input included
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 100
    assert attributes["gen_ai.usage.cache_write.input_tokens"] == 40
    assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 40


async def test_without_telemetry_no_operator_is_built(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zero cost when off: a provider that did not ask for telemetry never builds the
    operator (so nothing of OpenTelemetry runs per event)."""

    def refuse(**options: Any) -> Any:
        raise AssertionError("telemetry built for a provider that did not ask for it")

    pipeline = sys.modules["rxllm.pipeline.provider"]  # the package's `provider` shadows it
    monkeypatch.setattr(pipeline, "telemetry", refuse)
    record = await local_server.provider("openai").complete(request())
    assert record.terminal.type == "done"
