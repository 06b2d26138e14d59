"""telemetry: real turns against the local provider, read back through the real
OpenTelemetry SDK (in-memory span exporter and metric reader)."""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes, http_attributes, server_attributes
from opentelemetry.trace import SpanKind, StatusCode
from reactivex.testing import ReactiveTest, TestScheduler

import rxllm
from rxllm.events import Done, TextDelta
from rxllm.local import LocalServer
from rxllm.operators import telemetry
from rxllm.operators.telemetry import GENAI_PROVIDER_NAMES, SECONDS_BUCKETS, TOKEN_BUCKETS
from rxllm.pipeline.provider import ProviderOptions, record_of
from rxllm.providers import wire_for
from tests.support import CAPTURES, HAVE_CAPTURES, NO_CAPTURES

KEY = "sk-telemetry-test-0123456789abcdefghijklmnop"
QUESTION = "Please greet the otters of the river."

# The global providers can be set once per process: these two serve every test here.
EXPORTER = InMemorySpanExporter()
READER = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
_TRACER_PROVIDER = TracerProvider()
_TRACER_PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(_TRACER_PROVIDER)
metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))


@pytest.fixture(autouse=True)
def otel() -> Iterator[None]:
    EXPORTER.clear()
    READER.get_metrics_data()  # delta temporality: what came before is read away
    yield
    EXPORTER.clear()


def ask(model: str = "local-model", text: str = QUESTION, **params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.system("Be brief."), rxllm.Message.user(text)],
        params=params,
    )


def local(server: LocalServer, **options: Any) -> rxllm.Provider:
    return rxllm.provider("local", api_key=KEY, base_url=server.url, telemetry=True, **options)


def the_span() -> ReadableSpan:
    spans = EXPORTER.get_finished_spans()
    assert len(spans) == 1, spans
    return spans[0]


def events_named(span: ReadableSpan, name: str) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == name]


def points() -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Each metric's data points: (attributes, point)."""
    found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    data = READER.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found.setdefault(metric.name, []).append((dict(point.attributes), point))
    return found


def all_values(span: ReadableSpan) -> str:
    """Every attribute and event value of the span, as one string to search."""
    values: list[Any] = [span.name, *(span.attributes or {}).values()]
    for event in span.events:
        values += [*(event.attributes or {}).values()]
    return json.dumps([str(v) for v in values])


async def test_a_plain_turn_is_one_span_with_the_conventions_attributes(
    local_server: LocalServer,
) -> None:
    record = await local(local_server).complete(ask())
    span = the_span()
    attrs = dict(span.attributes or {})
    assert span.name == "chat local-model" and span.kind is SpanKind.CLIENT
    assert span.status.status_code is StatusCode.UNSET
    usage = record.usage
    assert usage is not None and usage.reasoning_tokens > 0
    assert isinstance(record.terminal, Done)
    assert attrs == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "local",
        "gen_ai.request.model": "local-model",
        "gen_ai.request.stream": True,
        "gen_ai.response.model": "local-model",
        "gen_ai.response.id": record.terminal.response_id,
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.response.time_to_first_chunk": attrs["gen_ai.response.time_to_first_chunk"],
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.reasoning.output_tokens": usage.reasoning_tokens,
        "server.address": "127.0.0.1",
        "server.port": int(local_server.url.split(":")[2].split("/")[0]),
        "rxllm.provider": "local",
        "rxllm.outcome": "done",
        "rxllm.stop_reason": "stop",
        "rxllm.attempts": 1,
    }
    assert 0 < attrs["gen_ai.response.time_to_first_chunk"] <= record.duration
    [attempt] = events_named(span, "rxllm.attempt")
    assert attempt["rxllm.attempt.number"] == 1 and attempt["rxllm.attempt.outcome"] == "done"
    assert attempt["rxllm.attempt.committed"] is True
    [commit] = events_named(span, "rxllm.commit")
    assert (commit["rxllm.attempt.number"], commit["rxllm.commit.event"]) == (1, "reasoning")

    found = points()
    chunks = len(record.text.split(" ")) + 1  # the local provider streams word by word
    [(attributes, duration)] = found["gen_ai.client.operation.duration"]
    assert duration.count == 1 and tuple(duration.explicit_bounds) == SECONDS_BUCKETS
    assert attributes["gen_ai.provider.name"] == "local" and "error.type" not in attributes
    tokens = {a["gen_ai.token.type"]: p for a, p in found["gen_ai.client.token.usage"]}
    assert (tokens["input"].sum, tokens["output"].sum) == (usage.input_tokens, usage.output_tokens)
    assert tuple(tokens["input"].explicit_bounds) == TOKEN_BUCKETS
    [(_, first)] = found["gen_ai.client.operation.time_to_first_chunk"]
    assert first.count == 1 and first.sum == attrs["gen_ai.response.time_to_first_chunk"]
    [(chunk_attributes, per_chunk)] = found["gen_ai.client.operation.time_per_output_chunk"]
    assert chunk_attributes == {  # the required ones only: this one is recorded per chunk
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "local",
        "gen_ai.request.model": "local-model",
    }
    assert per_chunk.count >= chunks - 1  # every chunk after the first, reasoning too
    assert tuple(per_chunk.explicit_bounds) == SECONDS_BUCKETS


async def test_no_content_and_no_key_unless_asked(local_server: LocalServer) -> None:
    record = await local(local_server).complete(ask())
    seen = all_values(the_span())
    assert KEY not in seen
    assert "otters" not in seen and "Be brief" not in seen
    assert record.text.split(" ")[1] not in seen and "gen_ai.input.messages" not in seen


async def test_a_tool_turn_with_content_captured(local_server: LocalServer) -> None:
    tool = rxllm.Tool(
        name="get_weather",
        description="Weather for a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    request = rxllm.ChatRequest(
        model="local-model",
        messages=[rxllm.Message.system("Be brief."), rxllm.Message.user("Weather in Paris?")],
        tools=[tool],
    )
    provider = rxllm.provider("local", api_key=KEY, base_url=local_server.url)
    operator = telemetry(capture_content=True, request=request, provider="local")
    record = await record_of(provider.stream(request).pipe(operator), "local", request.model)
    assert [call.name for call in record.tool_calls] == ["get_weather"]
    captured = the_span()
    attrs = dict(captured.attributes or {})
    assert attrs["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attrs["rxllm.stop_reason"] == "tool_use"
    # The chat wire sends the system message in the history: it is recorded there
    # (`gen_ai.system_instructions` is for instructions a wire sends apart).
    assert json.loads(str(attrs["gen_ai.input.messages"])) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    ]
    assert "gen_ai.system_instructions" not in attrs
    assert json.loads(str(attrs["gen_ai.tool.definitions"])) == [
        {"type": "function", "name": "get_weather"}
    ]
    [message] = json.loads(str(attrs["gen_ai.output.messages"]))
    assert message["role"] == "assistant" and message["finish_reason"] == "tool_call"
    call = record.tool_calls[0]
    assert {"type": "text", "content": record.text} in message["parts"]
    assert {
        "type": "tool_call",
        "id": call.call_id,
        "name": "get_weather",
        "arguments": call.arguments,
    } in message["parts"]
    assert KEY not in all_values(captured)


async def test_typed_sampling_fields_and_params_are_request_attributes(
    local_server: LocalServer,
) -> None:
    request = rxllm.ChatRequest(
        model="local-model",
        messages=[rxllm.Message.user(QUESTION)],
        temperature=0.3,
        max_tokens=50,
        stop="END",
        params={"top_k": 4},
    )
    await local(local_server).complete(request)
    attrs = dict(the_span().attributes or {})
    assert attrs["gen_ai.request.temperature"] == 0.3
    assert attrs["gen_ai.request.max_tokens"] == 50
    assert attrs["gen_ai.request.stop_sequences"] == ("END",)
    assert attrs["gen_ai.request.top_k"] == 4
    assert "gen_ai.request.seed" not in attrs  # a field not set is not reported


async def test_a_degraded_turn_reports_each_attempt(local_server: LocalServer) -> None:
    record = await local(local_server).complete(ask("fault/reject_param", temperature=0.2))
    assert record.terminal.type == "done" and len(record.attempts) == 2
    span = the_span()
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.request.temperature"] == 0.2 and attrs["rxllm.attempts"] == 2
    assert span.status.status_code is StatusCode.UNSET and "error.type" not in attrs
    first, second = events_named(span, "rxllm.attempt")
    assert first["rxllm.attempt.outcome"] == "rejected" and first["error.type"] == "rejected"
    assert first["http.response.status_code"] == 400
    assert first["rxllm.attempt.committed"] is False and first["rxllm.attempt.dropped"] == ()
    assert second["rxllm.attempt.number"] == 2 and second["rxllm.attempt.outcome"] == "done"
    assert second["rxllm.attempt.dropped"] == ("temperature",)
    assert second["rxllm.attempt.committed"] is True
    [commit] = events_named(span, "rxllm.commit")
    assert commit["rxllm.attempt.number"] == 2
    names = [e.name for e in span.events]
    assert names == ["rxllm.attempt", "rxllm.commit", "rxllm.attempt"]


async def test_a_failed_turn_ends_in_error_with_its_kind(local_server: LocalServer) -> None:
    record = await local(local_server).complete(ask("fault/error_event"))
    assert record.terminal.type == "error"
    span = the_span()
    attrs = dict(span.attributes or {})
    assert span.status.status_code is StatusCode.ERROR
    assert attrs["error.type"] == record.terminal.error.kind == "stream_error"
    assert attrs["rxllm.outcome"] == "error"
    [(attributes, _)] = points()["gen_ai.client.operation.duration"]
    assert attributes["error.type"] == "stream_error"


async def test_a_consumer_leaving_early_records_what_was_seen(local_server: LocalServer) -> None:
    seen = []
    async for event in local(local_server).astream(ask("fault/hang")):
        seen.append(event)
        break  # the server keeps the stream open: only the consumer can end it
    span = the_span()
    attrs = dict(span.attributes or {})
    assert span.status.status_code is StatusCode.UNSET and "error.type" not in attrs
    assert attrs["rxllm.outcome"] == "cancelled"
    assert attrs["gen_ai.response.time_to_first_chunk"] > 0
    [cancelled] = events_named(span, "rxllm.cancelled")
    assert cancelled["rxllm.cancel.reason"] == "disposed by the consumer"
    [attempt] = events_named(span, "rxllm.attempt")
    assert attempt["rxllm.attempt.outcome"] == "cancelled" and attempt["rxllm.attempt.committed"]
    [(attributes, _)] = points()["gen_ai.client.operation.duration"]
    assert attributes["rxllm.outcome"] == "cancelled"


async def test_a_cancel_signal_ends_the_span_as_cancelled(local_server: LocalServer) -> None:
    stop = asyncio.Event()
    events = []
    async for event in local(local_server).astream(ask("fault/hang"), cancel=stop):
        events.append(event)
        stop.set()
    assert events[-1].type == "cancelled"
    span = the_span()
    assert span.status.status_code is StatusCode.UNSET
    assert dict(span.attributes or {})["rxllm.outcome"] == "cancelled"
    [cancelled] = events_named(span, "rxllm.cancelled")
    assert cancelled["rxllm.cancel.reason"] == "cancelled by caller"


async def test_a_fallback_turn_is_one_span_across_providers(local_server: LocalServer) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    first = rxllm.provider(
        "custom", base_url=dead, allow_private_network=True, max_attempts=1, telemetry=True
    )
    record = await rxllm.fallback([first, local(local_server)]).complete(ask())
    assert record.provider == "local" and record.terminal.type == "done"
    span = the_span()
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.provider.name"] == "local" and attrs["rxllm.attempts"] == 2
    assert attrs["server.port"] == int(local_server.url.split(":")[2].split("/")[0])
    failed, served = events_named(span, "rxllm.attempt")
    assert (failed["rxllm.attempt.provider"], failed["error.type"]) == ("custom", "transport")
    assert failed["gen_ai.provider.name"] == "custom"
    assert (served["rxllm.attempt.provider"], served["rxllm.attempt.number"]) == ("local", 2)
    assert served["rxllm.attempt.outcome"] == "done"


async def test_a_fallback_reports_the_model_asked_of_the_provider_that_served(
    local_server: LocalServer,
) -> None:
    """`(provider, model)` asks that provider for its own model: the span was named
    after the first leg's model and said it beside the serving provider, a pairing
    that never happened (gen_ai.request.model: "the name of the model requested")."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    first = rxllm.provider(
        "custom", base_url=dead, allow_private_network=True, max_attempts=1, telemetry=True
    )
    entries: list[Any] = [(first, "model-a"), (local(local_server), "model-b")]
    record = await rxllm.fallback(entries).complete(ask("model-a"))
    assert record.requested_model == "model-b" and record.terminal.type == "done"
    span = the_span()
    attrs = dict(span.attributes or {})
    assert span.name == "chat model-b" and attrs["gen_ai.request.model"] == "model-b"
    [(attributes, _)] = points()["gen_ai.client.operation.duration"]
    assert attributes["gen_ai.request.model"] == "model-b"


def test_the_operator_passes_events_through_and_ends_its_span() -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    scheduler = TestScheduler()
    text = TextDelta.make(provider="openai", text="hi")
    done = Done.make(provider="openai", stop_reason="stop", model="gpt-x")
    source = scheduler.create_hot_observable(
        ReactiveTest.on_next(210, text),
        ReactiveTest.on_next(220, done),
        ReactiveTest.on_completed(230),
    )
    operator = telemetry(tracer_provider, MeterProvider(metric_readers=[reader]))
    results = scheduler.start(lambda: source.pipe(operator))
    assert results.messages == [
        ReactiveTest.on_next(210, text),
        ReactiveTest.on_next(220, done),
        ReactiveTest.on_completed(230),
    ]
    [span] = exporter.get_finished_spans()
    assert span.name == "chat"  # no request given: the conventions' name without a model
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.provider.name"] == "openai" and attrs["gen_ai.response.model"] == "gpt-x"


# Names semantic-conventions-genai defines that no package publishes yet: #440 renamed
# `gen_ai.usage.cache_creation.input_tokens` (rxllm writes both names).
UNRELEASED = {"gen_ai.usage.cache_write.input_tokens"}


def test_attribute_and_metric_names_are_the_conventions() -> None:
    """Every `gen_ai.*`, `error.*`, `http.*` and `server.*` name rxllm writes is one the
    `opentelemetry-semantic-conventions` package publishes, or one of the conventions'
    renames not yet released (`UNRELEASED`) (the package does not carry bucket advice:
    those are checked above against the conventions' text)."""
    module = importlib.import_module("rxllm.operators.telemetry")
    sources = (
        gen_ai_attributes,
        gen_ai_metrics,
        error_attributes,
        server_attributes,
        http_attributes,
    )
    published = {
        value
        for source in sources
        for name, value in vars(source).items()
        if name.isupper() and isinstance(value, str)
    }
    ours = {
        value
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str) and not value.startswith("rxllm.")
    }
    ours |= set(module.REQUEST_PARAMS.values())
    assert ours and ours <= published | UNRELEASED, ours - published - UNRELEASED
    assert not UNRELEASED & published, "released now: move it out of UNRELEASED"
    assert len(ours) >= 25
    providers = {v.value for v in gen_ai_attributes.GenAiProviderNameValues}
    assert set(GENAI_PROVIDER_NAMES.values()) <= providers
    assert gen_ai_attributes.GenAiOperationNameValues.CHAT.value == "chat"


def test_without_opentelemetry_asking_for_telemetry_is_a_config_error() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if opentelemetry-api were not installed
        import rxllm
        from rxllm.operators import telemetry
        rxllm.provider("local", base_url="http://127.0.0.1:9/v1")  # without: fine
        for ask in (
            lambda: rxllm.provider("local", base_url="http://127.0.0.1:9/v1", telemetry=True),
            lambda: telemetry(),
        ):
            try:
                ask()
            except rxllm.ConfigError as exc:
                print(exc)
            else:
                raise SystemExit("no ConfigError")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all("pip install 'rxllm[otel]'" in line for line in lines)


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("local", "chatcmpl-local-"),
        ("anthropic", "msg_local_"),
        ("openai-responses", "resp_local_"),
    ],
)
async def test_the_response_id_of_each_wire(
    local_server: LocalServer, name: str, prefix: str
) -> None:
    provider = rxllm.provider(name, api_key=KEY, base_url=local_server.url, telemetry=True)
    record = await provider.complete(ask())
    assert isinstance(record.terminal, Done)
    response_id = record.terminal.response_id
    assert response_id is not None and response_id.startswith(prefix)
    assert dict(the_span().attributes or {})["gen_ai.response.id"] == response_id


@pytest.mark.skipif(not HAVE_CAPTURES, reason=NO_CAPTURES)
def test_gemini_response_id_from_a_capture() -> None:
    body = (CAPTURES / "gemini" / "code_execution.sse").read_bytes()
    events: list[Any] = []
    rxllm.replay(body, provider="google").subscribe(events.append)
    assert events[-1].type == "done" and events[-1].response_id == "n1P6abvRFaKdz7IPkcuQ2Aw"


async def test_a_consumer_exception_ends_the_span_in_error(local_server: LocalServer) -> None:
    failure = asyncio.get_running_loop().create_future()

    def on_next(event: Any) -> None:
        if event.type == "text":
            raise LookupError("the consumer's own bug")

    local(local_server).stream(ask()).subscribe(on_next, failure.set_result)
    assert isinstance(await asyncio.wait_for(failure, 10), LookupError)
    span = the_span()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "the consumer's own bug"
    assert dict(span.attributes or {})["error.type"] == "LookupError"
    # Not an `exception` span event: "Recording errors" does not recommend one.
    assert [e.name for e in span.events][-1] == "rxllm.attempt"
    assert not any(e.name == "exception" for e in span.events)


def test_reasoning_sent_back_is_a_reasoning_part_of_the_input() -> None:
    """The conventions' ReasoningPart {type: reasoning, content}: its text; the signature,
    an opaque blob, stays out of the span."""
    from rxllm.operators.telemetry import _input_messages

    turn = rxllm.Message.assistant(
        "Checking.", reasoning=[rxllm.ReasoningPart(text="think", signature="SIG")]
    )
    attrs = _input_messages([rxllm.Message.user("go"), turn])
    [_, assistant] = json.loads(str(attrs["gen_ai.input.messages"]))
    assert assistant["parts"] == [
        {"type": "reasoning", "content": "think"},
        {"type": "text", "content": "Checking."},
    ]
    assert "SIG" not in str(attrs)


# -- wire facts come from the provider's wire; same-name providers are told apart -------


def renamed(server: LocalServer | str, wire: str, name: str, **options: Any) -> rxllm.Provider:
    """A provider of `wire`'s protocol under another name (a gateway, a second endpoint),
    `rxllm.Provider(wire, ...)`, on the local server (which speaks each wire) or a URL."""
    protocol = wire_for(wire)
    protocol.name = name
    if isinstance(server, str):
        base = server
    else:
        base = server.root + "/v1beta" if wire == "google" else server.url
    settings = ProviderOptions(**options)
    return rxllm.Provider(protocol, api_key=KEY, base_url=base, options=settings)


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


@pytest.mark.parametrize(
    ("wire", "name", "operation"),
    [("google", "gemini-eu", "generate_content"), ("openai", "google", "chat")],
    ids=["gemini-wire-named-otherwise", "chat-wire-named-google"],
)
async def test_the_operation_is_the_wire_s_whatever_the_provider_s_name(
    local_server: LocalServer, wire: str, name: str, operation: str
) -> None:
    """`rxllm.Provider(wire, ...)` under a name of the user's: a Gemini wire named
    otherwise is still `generate_content`, an OpenAI-compatible endpoint named `google`
    (Gemini's own OpenAI-compatible endpoint) still `chat`."""
    provider = renamed(local_server, wire, name, telemetry=True)
    record = await provider.complete(ask())
    assert record.terminal.type == "done" and record.provider == name
    span = the_span()
    attrs = dict(span.attributes or {})
    assert span.name == f"{operation} local-model"
    assert (attrs["gen_ai.operation.name"], attrs["rxllm.provider"]) == (operation, name)
    [(attributes, _)] = points()["gen_ai.client.operation.duration"]
    assert attributes["gen_ai.operation.name"] == operation


@pytest.mark.parametrize(
    ("wire", "apart"),
    [("anthropic", True), ("google", True), ("openai-responses", True), ("openai", False)],
)
async def test_system_text_is_recorded_where_the_wire_sends_it_whatever_the_name(
    local_server: LocalServer, wire: str, apart: bool
) -> None:
    """`gen_ai.system_instructions` only for system text the wire sends apart from the
    history: decided by the provider's wire, not by its name (`gateway` here; `anthropic`
    for the chat wire)."""
    name = "anthropic" if wire == "openai" else "gateway"
    provider = renamed(local_server, wire, name)
    request = ask()
    operator = telemetry(capture_content=True, request=request, providers=[provider])
    record = await record_of(provider.stream(request).pipe(operator), name, request.model)
    assert record.terminal.type == "done"
    attrs = dict(the_span().attributes or {})
    roles = [m["role"] for m in json.loads(str(attrs["gen_ai.input.messages"]))]
    if apart:
        system = json.loads(str(attrs["gen_ai.system_instructions"]))
        assert (system, roles) == ([{"type": "text", "content": "Be brief."}], ["user"])
    else:
        assert "gen_ai.system_instructions" not in attrs and roles == ["system", "user"]


@pytest.mark.parametrize("served", [0, 1], ids=["the-first-serves", "the-second-serves"])
async def test_same_name_providers_in_a_fallback_report_their_own_server(
    local_server: LocalServer, served: int
) -> None:
    """Two providers named `local` on two servers: the span and its metrics name the
    server of the one that served, and each attempt's event the server it went to."""
    async with LocalServer(pace=0) as other:
        first = rxllm.provider(
            "local", api_key=KEY, base_url=local_server.url, max_attempts=1, telemetry=True
        )
        second = rxllm.provider("local", api_key=KEY, base_url=other.url, max_attempts=1)
        entries: list[Any] = [first, second] if served == 0 else [(first, "fault/http_500"), second]
        record = await rxllm.fallback(entries).complete(ask())
    assert record.terminal.type == "done" and len(record.attempts) == served + 1
    ports = [port_of(local_server.url), port_of(other.url)]
    span = the_span()
    attrs = dict(span.attributes or {})
    assert attrs["server.port"] == ports[served] and attrs["rxllm.attempts"] == served + 1
    attempts = events_named(span, "rxllm.attempt")
    assert [a["server.port"] for a in attempts] == ports[: served + 1]
    assert [a["server.address"] for a in attempts] == ["127.0.0.1"] * (served + 1)
    [(attributes, _)] = points()["gen_ai.client.operation.duration"]
    assert attributes["server.port"] == ports[served]


async def test_same_name_providers_of_two_wires_in_a_fallback(local_server: LocalServer) -> None:
    """Named alike, spoken apart: the chat-wire `gemini` fails, the Gemini-wire `gemini`
    serves; the span reports the operation of the one that served."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    failing = renamed(dead, "openai", "gemini", max_attempts=1, telemetry=True)
    serving = renamed(local_server, "google", "gemini")
    record = await rxllm.fallback([failing, serving]).complete(ask())
    assert record.terminal.type == "done" and record.provider == "gemini"
    span = the_span()
    assert span.name == "generate_content local-model"
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.operation.name"] == "generate_content"
    outcomes = [a["rxllm.attempt.outcome"] for a in events_named(span, "rxllm.attempt")]
    assert outcomes == ["rejected", "done"]


async def test_a_redirect_refused_is_its_http_status(local_server: LocalServer) -> None:
    """A redirect loop ends in a `policy` error with the 307 rxllm received: that response
    is `http.response.status_code` ("if one was received"), on the span and the attempt."""
    record = await local(local_server, allow_private_network=True).complete(
        ask("fault/redirect_loop")
    )
    error = record.terminal.error
    assert (error.kind, error.status) == ("policy", 307)
    span = the_span()
    assert (span.attributes or {})["http.response.status_code"] == 307
    [attempt] = events_named(span, "rxllm.attempt")
    assert attempt["http.response.status_code"] == 307
