"""`python -m benchmarks.hot_path`: what one event costs in rxllm's synchronous path.

The server's frames (`benchmarks.server.stream_of`) are fed, one read per event, to
the real pipeline of `provider.stream()` with its HTTP source replaced by a feeder:
SSE framing, the normalizer, `TextDelta`, every operator and the consumer, in this
process, without a network or an event loop hop. Beside it, the floor's own work per
event on the same frames: the lines split, `json.loads` of the `data:` line.

- default: CPU microseconds per event, best and median of `--repeat` runs;
- `--instructions`: instructions per event counted by `valgrind --tool=callgrind`
  (the garbage collector off, hash seed and address layout fixed). Each client runs
  twice in a child under valgrind, with N and 3N events, each run building both bodies
  and their feeders, so what the two runs share (the import, building the bodies)
  cancels out. The
  floor's count repeats within a few tenths of a percent; the whole pipeline's has
  moved by several percent between runs of one tree (48,332 and 51,970 a text event);
- `--normalizer`: also rxllm's chat normalizer alone on the same events (no framing,
  operators or consumer), whose instructions repeat exactly: the measure for a change
  to a wire's reading.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from reactivex.subject import Subject

import rxllm
from benchmarks.callgrind import instructions, missing
from benchmarks.server import SCENARIOS, Scenario, stream_of
from rxllm.fragments import RawChunk, ResponseHeaders, SourceItem
from rxllm.operators._link import Operator, link
from rxllm.operators._timers import loop_scheduler
from rxllm.sources.raw import ChunkReader

__all__ = ["feed_floor", "feed_rxllm", "frames_for", "main"]

CLIENTS = ("floor", "rxllm")


def frames_for(scenario: Scenario, events: int, also_built: int = 0) -> tuple[bytes, ...]:
    """The frames of a body of `events` content frames; the body of `also_built` is
    built too (and dropped), so that two runs of different sizes build the same."""
    if also_built:
        stream_of(scenario, also_built)
    return stream_of(scenario, events).frames


@contextmanager
def _fed_source(frames: tuple[bytes, ...]) -> Iterator[None]:
    """`rxllm.pipeline.provider`'s HTTP source replaced by one that feeds `frames`."""
    module = importlib.import_module("rxllm.pipeline.provider")
    real = getattr(module, "http_source")  # noqa: B009 - a module attribute, swapped

    def fed(request: Any, *, provider: str, attempt: int = 1, **_: Any) -> Operator[SourceItem]:
        def subscribe(observer: Any, scheduler: Any = None) -> Any:
            observer.on_next(ResponseHeaders({}))
            reader = ChunkReader(observer, provider, attempt)
            for frame in frames:
                reader.feed(frame)
            reader.close()
            observer.on_completed()

        return Operator(subscribe)

    setattr(module, "http_source", fed)  # noqa: B010
    try:
        yield
    finally:
        setattr(module, "http_source", real)  # noqa: B010


def feed_rxllm(frames: tuple[bytes, ...]) -> Callable[[], int]:
    """One turn through the whole pipeline per call; returns the events it got."""
    provider = rxllm.provider(
        "openai", api_key="sk-bench-0123456789abcdefghij", base_url="http://x"
    )
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    loop = asyncio.new_event_loop()
    scheduler = loop_scheduler(loop)

    def turn() -> int:
        events: list[rxllm.Event] = []
        with _fed_source(frames):
            link(provider.stream(request), events.append, None, None, scheduler).dispose()
        if not events or events[-1].type != "done":  # a hollow run must not look fast
            raise RuntimeError(f"the turn did not end done: {events[-1:]}")
        return len(events)

    return turn


def feed_normalizer(frames: tuple[bytes, ...]) -> Callable[[], int]:
    """rxllm's chat wire normalizer alone, fed the frames' events (read once, before):
    no SSE framing, operators or consumer; the events it emits are counted. Nothing in
    it waits or reads a clock, so its instructions repeat exactly from run to run,
    where the whole pipeline's move by a few percent."""
    provider = rxllm.provider("openai", api_key="sk-bench-0123456789abcdefghij")
    items: list[SourceItem] = []
    read: Subject[SourceItem] = Subject()
    read.subscribe(items.append)
    reader = ChunkReader(read, "openai", 1)
    for frame in frames:
        reader.feed(frame)
    chunks = [item for item in items if isinstance(item, RawChunk)]

    def turn() -> int:
        events: list[object] = []
        normalizer = provider.wire.normalizer(events.append, "openai", 1)
        for chunk in chunks:
            normalizer.feed(chunk)
        return len(events)

    return turn


def feed_floor(frames: tuple[bytes, ...]) -> Callable[[], int]:
    """The floor's work per event: its lines, and `json.loads` of each `data:` line."""

    def turn() -> int:
        count = 0
        for frame in frames:
            for line in frame.splitlines(keepends=True):
                if line.startswith(b"data: {"):
                    json.loads(line[6:])
                    count += 1
        return count

    return turn


_FEEDERS = {"floor": feed_floor, "rxllm": feed_rxllm, "normalizer": feed_normalizer}


def cpu_per_event(client: str, scenario: Scenario, events: int, repeat: int) -> list[float]:
    frames = frames_for(scenario, events)
    turn = _FEEDERS[client](frames)
    turn()  # warm
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        turn()
        times.append((time.process_time() - start) / len(frames))
    return times


def _child(client: str, scenario: Scenario, events: int, also_built: int) -> None:
    # Both bodies and both feeders are built (a feeder may read its frames first), so
    # that the two runs differ only in the turn counted.
    feed = _FEEDERS[client]
    turn, _ = feed(frames_for(scenario, events)), feed(frames_for(scenario, also_built))
    gc.disable()
    print(turn())


def _instructions(client: str, scenario: Scenario, events: int, also_built: int) -> int:
    args = ["-m", "benchmarks.hot_path", "--child", client, scenario, str(events)]
    return instructions([*args, str(also_built)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hot_path", description=__doc__)
    parser.add_argument("--scenario", choices=SCENARIOS, default="text")
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    parser.add_argument(
        "--normalizer",
        action="store_true",
        help="also rxllm's chat normalizer alone (no framing, operators or consumer)",
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        client, scenario, events, also_built = args.child
        _child(client, scenario, int(events), int(also_built))
        return 0
    print(f"{args.scenario}: one read per event, {args.events} events")
    clients = (*CLIENTS, "normalizer") if args.normalizer else CLIENTS
    if args.instructions:
        why = missing()
        if why is not None:
            print(why, file=sys.stderr)
            return 2
        small, big = args.events, 3 * args.events
        per_event = {}
        for client in clients:
            sizes = ((small, big), (big, small))  # each run builds both bodies
            counts = [_instructions(client, args.scenario, n, other) for n, other in sizes]
            per_event[client] = (counts[1] - counts[0]) / (big - small)
            print(f"  {client:10} {per_event[client]:9,.0f} instructions per event")
        print(f"  ratio      {per_event['rxllm'] / per_event['floor']:.2f}x")
        return 0
    medians = {}
    for client in clients:
        times = cpu_per_event(client, args.scenario, args.events, args.repeat)
        medians[client] = statistics.median(times)
        print(f"  {client:10} {min(times) * 1e6:6.2f} us best, {medians[client] * 1e6:6.2f} median")
    print(f"  ratio      {medians['rxllm'] / medians['floor']:.2f}x (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
