"""The benchmark's clients over the same bytes: the floor, `provider.complete()`, and
(`--telemetry`) `provider.complete()` with the telemetry operator on.

The floor is the least a Python client can do with an SSE stream: aiohttp reads lines
and `json.loads` each `data:` chunk, nothing else. The rxllm client is the library as a
user calls it. Each run is timed with `time.process_time()` (this process only: the
server runs in another) and checked afterwards against what the server sent, so a
client that skipped work would fail rather than look fast.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

import aiohttp

import rxllm
from benchmarks.server import MODEL, TOOL_NAME, Scenario, ServerProcess, Stream, stream_of
from rxllm.operators import telemetry
from rxllm.pipeline.provider import Provider, record_of
from rxllm.sources.http import HttpRequest

__all__ = [
    "CLIENTS",
    "ClientName",
    "HollowRun",
    "Measurement",
    "Target",
    "floor",
    "measure",
    "rxllm_client",
    "rxllm_otel_client",
    "target",
]

ClientName: TypeAlias = Literal["floor", "rxllm", "rxllm+otel"]
CLIENTS: tuple[ClientName, ...] = ("floor", "rxllm")
TELEMETRY_CLIENT: ClientName = "rxllm+otel"
"""Run with `--telemetry`: the rxllm client with spans and metrics into the real SDK."""

# The key is a placeholder: the loopback server ignores it, but the `openai` provider
# wants one, and the floor sends the same headers.
_API_KEY = "sk-bench"


class HollowRun(AssertionError):
    """A client did not get what the server sent: its time would mean nothing."""


@dataclass(frozen=True)
class Target:
    """One scenario on one server: the provider and request for rxllm, and the exact
    POST (URL, body, headers) that rxllm would send, for the floor."""

    stream: Stream
    provider: Provider
    request: rxllm.ChatRequest
    http: HttpRequest

    @property
    def scenario(self) -> Scenario:
        return self.stream.scenario


@dataclass(frozen=True)
class Measurement:
    client: ClientName
    scenario: Scenario
    cpu: float
    """CPU seconds of this process for the whole run (connect to end of body)."""
    wall: float
    chunks: int
    """JSON chunks the server sent; both clients' times are divided by it."""

    @property
    def cpu_per_chunk(self) -> float:
        return self.cpu / self.chunks

    @property
    def wall_per_chunk(self) -> float:
        return self.wall / self.chunks


def target(server: ServerProcess, scenario: Scenario, chunks: int) -> Target:
    stream = stream_of(scenario, chunks)
    provider = rxllm.provider(
        "openai", api_key=_API_KEY, base_url=server.base_url(scenario, chunks)
    )
    tools = []
    if scenario == "tool":
        tools.append(
            rxllm.Tool(
                name=TOOL_NAME,
                description="Write a file.",
                parameters={
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "mode": {"type": "string"},
                        "content": {"type": "string"},
                    },
                    "required": ["path", "content"],
                },
            )
        )
    request = rxllm.ChatRequest(
        model=MODEL, messages=[rxllm.Message.user("Benchmark, please.")], tools=tools
    )
    return Target(stream, provider, request, provider.http_request(request))


async def floor(target: Target) -> int:
    """aiohttp reading lines plus `json.loads`, nothing else; returns the chunks parsed."""
    http = target.http
    loads = json.loads
    count = 0
    async with (
        aiohttp.ClientSession() as session,
        session.post(http.url, data=http.body, headers=dict(http.headers)) as response,
    ):
        if response.status != 200:
            raise HollowRun(f"the floor got HTTP {response.status}")
        async for line in response.content:
            if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                loads(line[6:])
                count += 1
    return count


async def rxllm_client(target: Target) -> rxllm.StreamRecord:
    """The library as a user calls it."""
    return await target.provider.complete(target.request)


async def rxllm_otel_client(target: Target) -> rxllm.StreamRecord:
    """The rxllm client with the telemetry operator, as `telemetry=True` applies it but
    into the benchmark's own SDK (`benchmarks.telemetry`)."""
    from benchmarks.telemetry import sdk  # the SDK only when this client runs

    otel = sdk()
    provider, request = target.provider, target.request
    traced = telemetry(
        otel.tracer_provider,
        otel.meter_provider,
        request=request,
        provider=provider.name,
        servers={provider.name: provider.base_url},
    )
    return await record_of(provider.stream(request).pipe(traced), provider.name, request.model)


def check_floor(target: Target, count: int) -> None:
    if count != target.stream.json_chunks:
        raise HollowRun(f"the floor parsed {count} chunks of {target.stream.json_chunks}")


def check_record(target: Target, record: rxllm.StreamRecord) -> None:
    """The record holds everything the server sent: all the text, or the whole call."""
    stream = target.stream
    terminal = record.terminal
    if not isinstance(terminal, rxllm.Done):
        raise HollowRun(f"rxllm ended with {terminal!r}")
    if record.usage is None or record.usage.output_tokens != stream.chunks:
        raise HollowRun(f"rxllm lost the usage chunk: {record.usage!r}")
    if stream.scenario == "text":
        if terminal.stop_reason != "stop" or record.text != stream.text:
            raise HollowRun(
                f"rxllm got {len(record.text)} characters of text of {len(stream.text)} "
                f"(stop reason {terminal.stop_reason})"
            )
        return
    calls = record.tool_calls
    if terminal.stop_reason != "tool_use" or len(calls) != 1:
        raise HollowRun(f"rxllm got {len(calls)} tool calls ({terminal.stop_reason})")
    if calls[0].name != TOOL_NAME or calls[0].arguments != stream.arguments:
        raise HollowRun("rxllm's tool arguments differ from those the server sent")


async def _run_floor(target: Target) -> Callable[[], None]:
    count = await floor(target)
    return lambda: check_floor(target, count)


async def _run_rxllm(target: Target) -> Callable[[], None]:
    record = await rxllm_client(target)
    return lambda: check_record(target, record)


async def _run_rxllm_otel(target: Target) -> Callable[[], None]:
    from benchmarks.telemetry import sdk

    exporter = sdk().exporter
    exporter.clear()
    record = await rxllm_otel_client(target)

    def check() -> None:
        check_record(target, record)
        spans = exporter.get_finished_spans()
        tokens = [(s.attributes or {}).get("gen_ai.usage.output_tokens") for s in spans]
        if tokens != [target.stream.chunks]:
            raise HollowRun(f"the telemetry client's span is missing or wrong: {tokens}")

    return check


_RUNNERS: dict[ClientName, Callable[[Target], Awaitable[Callable[[], None]]]] = {
    "floor": _run_floor,
    "rxllm": _run_rxllm,
    TELEMETRY_CLIENT: _run_rxllm_otel,
}


async def measure(client: ClientName, target: Target) -> Measurement:
    """One timed run of `client`, checked after the clock stops."""
    gc.collect()  # start each run from the same heap, not the last run's garbage
    cpu0, wall0 = time.process_time(), time.perf_counter()
    check = await _RUNNERS[client](target)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    check()
    return Measurement(client, target.scenario, cpu, wall, target.stream.json_chunks)
