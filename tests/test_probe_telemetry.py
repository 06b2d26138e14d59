"""telemetry probed from wire bytes built by hand after each provider's usage
documentation: the token counts the conventions ask for (`gen_ai.usage.input_tokens`
"SHOULD include all types of input tokens, including cached tokens"; the reasoning
count "SHOULD be included in `gen_ai.usage.output_tokens`"), the raw finish reasons,
and a consumer that hangs up early (the span ended once, one duration recorded)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from reactivex.subject import Subject

import rxllm
from rxllm.events import Done, Event, TextDelta
from rxllm.operators import telemetry


class Sdk:
    """The real SDK's tracer and meter providers, read back in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def points(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        found: list[tuple[dict[str, Any], Any]] = []
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found += [(dict(p.attributes or {}), p) for p in metric.data.data_points]
        return found


REQUEST = rxllm.ChatRequest(model="m-1", messages=[rxllm.Message.user("hi")])


def sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def named(name: str, payload: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n"


def chunk(**fields: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-x", **fields}


# OpenAI: `prompt_tokens` already counts `cached_tokens`; `completion_tokens` counts
# `reasoning_tokens`.
OPENAI = sse(
    chunk(choices=[{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]),
    chunk(choices=[{"index": 0, "delta": {}, "finish_reason": "content_filter"}]),
    chunk(
        choices=[],
        usage={
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens_details": {"reasoning_tokens": 5},
        },
    ),
)
# Anthropic: `input_tokens` counts neither cache reads nor cache writes.
START = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [],
    "stop_reason": None,
    "usage": {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 40,
        "output_tokens": 1,
    },
}
ANTHROPIC = (
    named("message_start", {"type": "message_start", "message": START})
    + named(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    + named(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    )
    + named("content_block_stop", {"type": "content_block_stop", "index": 0})
    + named(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "refusal"},
            "usage": {"output_tokens": 7},
        },
    )
    + named("message_stop", {"type": "message_stop"})
).encode()
# Gemini: `promptTokenCount` counts `cachedContentTokenCount`; `candidatesTokenCount`
# does not count `thoughtsTokenCount`.
GOOGLE = sse(
    {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Hi"}]},
                "finishReason": "SAFETY",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "cachedContentTokenCount": 60,
            "candidatesTokenCount": 5,
            "thoughtsTokenCount": 3,
            "totalTokenCount": 108,
        },
        "modelVersion": "gemini-x",
        "responseId": "r1",
    },
    done=False,
)


@pytest.mark.parametrize(
    ("provider", "body", "expected"),
    [
        (
            "openai",
            OPENAI,
            {
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.cache_read.input_tokens": 60,
                "gen_ai.usage.output_tokens": 20,
                "gen_ai.usage.reasoning.output_tokens": 5,
                "gen_ai.response.finish_reasons": ("content_filter",),
            },
        ),
        (
            "anthropic",
            ANTHROPIC,
            {
                "gen_ai.usage.input_tokens": 150,
                "gen_ai.usage.cache_read.input_tokens": 100,
                "gen_ai.usage.cache_write.input_tokens": 40,
                "gen_ai.usage.cache_creation.input_tokens": 40,
                "gen_ai.usage.output_tokens": 7,
                "gen_ai.response.finish_reasons": ("refusal",),
            },
        ),
        (
            "google",
            GOOGLE,
            {
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.cache_read.input_tokens": 60,
                "gen_ai.usage.output_tokens": 8,
                "gen_ai.usage.reasoning.output_tokens": 3,
                "gen_ai.response.finish_reasons": ("SAFETY",),
            },
        ),
    ],
)
def test_token_counts_from_each_wire_are_the_conventions(
    provider: str, body: bytes, expected: dict[str, Any]
) -> None:
    sdk = Sdk()
    operator = telemetry(
        sdk.tracer_provider, sdk.meter_provider, request=REQUEST, provider=provider
    )
    events: list[Event] = []
    rxllm.replay(body, provider=provider).pipe(operator).subscribe(events.append)
    assert events[-1].type == "done"
    [span] = sdk.exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert {key: attributes.get(key) for key in expected} == expected
    tokens = {a["gen_ai.token.type"]: p.sum for a, p in sdk.points("gen_ai.client.token.usage")}
    assert tokens == {
        "input": expected["gen_ai.usage.input_tokens"],
        "output": expected["gen_ai.usage.output_tokens"],
    }


def test_a_consumer_that_hangs_up_twice_ends_the_span_once() -> None:
    sdk = Sdk()
    source: Subject[Event] = Subject()
    operator = telemetry(
        sdk.tracer_provider, sdk.meter_provider, request=REQUEST, provider="openai"
    )
    subscription = source.pipe(operator).subscribe(lambda event: None)
    source.on_next(TextDelta.make(provider="openai", text="Hel"))
    subscription.dispose()
    subscription.dispose()
    source.on_next(Done.make(provider="openai", stop_reason="stop"))  # late: nobody listens
    source.on_completed()
    [span] = sdk.exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert span.status.status_code is StatusCode.UNSET and "error.type" not in attributes
    assert attributes["rxllm.outcome"] == "cancelled"
    assert attributes["gen_ai.response.finish_reasons"] == ("error",)
    [(duration_attributes, duration)] = sdk.points("gen_ai.client.operation.duration")
    assert duration.count == 1 and duration_attributes["rxllm.outcome"] == "cancelled"
