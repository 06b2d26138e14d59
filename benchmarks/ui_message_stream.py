"""`python -m benchmarks.ui_message_stream`: the UI message stream encoder's CPU per
event against a bare `json.dumps` floor, as JSON.

Three ways over the same in-memory events, runs interleaved:

- `floor`: per event one dict of the part a hand-written encoder would send and
  `b"data: " + json.dumps(part).encode() + b"\\n\\n"`: no blocks, ids or checks;
- `fold`: `UIMessageEncoder.frames(event)` per event (what a log resume pays);
- `stream`: `ui_message_stream(observable)` drained: the fold plus the async driver
  (subscription, batching, keep-alive timer), what a live response pays.

Scenarios: `text` (text deltas, as most of a turn is) and `mixed` (reasoning, text,
a citation every 50 events, a tool call, usage). Each run is checked: the frames
must carry every delta and end in `[DONE]` (`HollowRun` otherwise). No test asserts a
time; tests/serving/test_ui_message_stream_benchmark.py runs this tiny.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import reactivex

from benchmarks.__main__ import machine
from benchmarks.clients import HollowRun
from rxllm.events import (
    Citation,
    Done,
    Event,
    ReasoningDelta,
    TextDelta,
    ToolRequest,
    ToolStart,
    Usage,
    UsageUpdate,
)
from rxllm.serving.ui_message_stream import UIMessageEncoder, ui_message_stream

__all__ = ["SCENARIOS", "Way", "events_of", "main", "measure"]

Scenario = Literal["text", "mixed"]
Way = Literal["floor", "fold", "stream"]
SCENARIOS: tuple[Scenario, ...] = ("text", "mixed")
WAYS: tuple[Way, ...] = ("floor", "fold", "stream")
_WORDS = ("Hello", " streams", " über", " 🚀", " are", " boring", " to", " consume,\n")
P = "openai"


def events_of(scenario: Scenario, count: int) -> list[Event]:
    """`count` content events and a `done`, built without validation as the pipeline does."""
    events: list[Event] = []
    if scenario == "text":
        events += [TextDelta.make(provider=P, text=_WORDS[i % 8]) for i in range(count)]
    else:
        thinking = count // 4
        events += [ReasoningDelta.make(provider=P, text=_WORDS[i % 8]) for i in range(thinking)]
        for i in range(count - thinking - 2):
            events.append(TextDelta.make(provider=P, text=_WORDS[i % 8]))
            if i % 50 == 49:
                events.append(Citation.make(provider=P, url="https://example.com/a", title="A"))
        arguments = {"city": "Paris", "days": 3}
        events.append(ToolStart.make(provider=P, call_id="c1", name="get_weather", index=0))
        events.append(
            ToolRequest.make(
                provider=P, call_id="c1", name="get_weather", index=0, arguments=arguments
            )
        )
        usage = Usage.of(input_tokens=10, output_tokens=count)
        events.append(UsageUpdate.make(provider=P, usage=usage))
    events.append(Done.make(provider=P, stop_reason="stop"))
    return events


def _floor_part(event: Event) -> dict[str, Any]:
    if isinstance(event, TextDelta | ReasoningDelta):
        return {"type": "text-delta", "id": "t1", "delta": event.text}
    return {"type": event.type}


def _floor(events: list[Event]) -> list[bytes]:
    return [b"data: " + json.dumps(_floor_part(e)).encode() + b"\n\n" for e in events]


def _fold(events: list[Event]) -> list[bytes]:
    encoder = UIMessageEncoder()
    return [encoder.frames(event) for event in events]


def _stream(events: list[Event]) -> list[bytes]:
    async def drain() -> list[bytes]:
        return [chunk async for chunk in ui_message_stream(reactivex.from_iterable(events))]

    return asyncio.run(drain())


_RUNNERS: dict[Way, Callable[[list[Event]], list[bytes]]] = {
    "floor": _floor,
    "fold": _fold,
    "stream": _stream,
}


def check(way: Way, events: list[Event], frames: list[bytes]) -> None:
    """The run did the work: every delta is in its frames, and the stream ended."""
    body = b"".join(frames)
    deltas = sum(isinstance(e, TextDelta | ReasoningDelta) for e in events)
    sent = body.count(b'-delta"')
    if sent != deltas:
        raise HollowRun(f"{way}: {sent} deltas of {deltas}")
    if way != "floor" and not body.endswith(b"data: [DONE]\n\n"):
        raise HollowRun(f"{way}: no [DONE] at the end")


def measure(way: Way, events: list[Event]) -> float:
    """CPU seconds per event of one checked run."""
    gc.collect()
    start = time.process_time()
    frames = _RUNNERS[way](events)
    cpu = time.process_time() - start
    check(way, events, frames)
    return cpu / len(events)


def run(
    scenarios: Sequence[Scenario], count: int, repeat: int, warmup: int
) -> dict[str, dict[str, Any]]:
    """Median CPU per event of each way in each scenario, and each over the floor's."""
    report: dict[str, dict[str, Any]] = {}
    for scenario in scenarios:
        events = events_of(scenario, count)
        for _ in range(warmup):
            for way in WAYS:
                measure(way, events)
        runs: dict[Way, list[float]] = {way: [] for way in WAYS}
        for i in range(repeat):
            for way in WAYS if i % 2 == 0 else WAYS[::-1]:
                runs[way].append(measure(way, events))
        medians = {way: statistics.median(times) for way, times in runs.items()}
        report[scenario] = {
            "events": len(events),
            "cpu_s_per_event": medians,
            "cpu_s_per_event_min_max": {w: [min(t), max(t)] for w, t in runs.items()},
            "vs_floor": {w: medians[w] / medians["floor"] for w in WAYS},
        }
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.ui_message_stream",
        description="CPU per event of the UI message stream encoder vs a bare json.dumps floor",
    )
    parser.add_argument("--events", type=int, default=20_000, help="per run (default 20000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per way (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="all")
    args = parser.parse_args(argv)
    if args.events < 10 or args.repeat < 1 or args.warmup < 0:
        print("benchmarks: --events must be at least 10, --repeat at least 1", file=sys.stderr)
        return 2
    scenarios = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    try:
        results = run(scenarios, args.events, args.repeat, args.warmup)
    except HollowRun as exc:
        print(f"benchmarks: a run was hollow: {exc}", file=sys.stderr)
        return 1
    report = {
        "benchmark": "ui_message_stream",
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "repeat": args.repeat,
        "scenarios": results,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
