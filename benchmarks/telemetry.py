"""The telemetry client's OpenTelemetry SDK: real span and metric pipelines, in memory.

The `rxllm+otel` client (`--telemetry`) runs `provider.complete()` with the telemetry
operator on, into the real SDK: a synchronous span processor (the span is exported
before the run's clock stops) and a metric reader that aggregates every histogram
record. Its providers are passed to the operator, never installed globally, so the
benchmark leaves the process's OpenTelemetry state alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["Sdk", "sdk"]


@dataclass(frozen=True)
class Sdk:
    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader


@cache
def sdk() -> Sdk:
    """One SDK for the process: the telemetry client's spans and metrics go here."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return Sdk(tracer_provider, MeterProvider(metric_readers=[reader]), exporter, reader)
