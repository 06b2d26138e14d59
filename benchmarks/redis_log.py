"""`python -m benchmarks.redis_log`: the Redis log's costs, JSON, beside their floors.

Starts its own redis-server (Debian's `redis-server` on PATH) on a free loopback port.

- tee CPU/event: `time.process_time()` of producing N events through `RedisLog.start`
  (tee to the live response, batched EVALSHA writer) minus the same feed without a log,
  per event; beside it, in the same run, the floor: a bare sequential `await xadd`
  loop and one pipelined by 16, each writing the same event JSON.
- live latency added: p99 of (upstream emit -> live entry) with the log, minus the p99
  of the same feed through rxllm's own async bridge without one.
- on a 2,000-event log: first resumed entry p99 (`resume(sid)`), and first frame of a
  resume from the middle as the HTTP resume does it (`history` through the cursor
  folded by `UIMessageEncoder.fold_json`, then `ui_message_stream` of the entries
  after it), beside the same through `ui_message_stream(resume(sid), after=...)`,
  which folds every entry as an event (`..._folding_events`); in a process that
  froze its start-up heap with
  `gc.freeze()` as a server should (docs/serving.md), and beside them the same
  without it (`without_gc_freeze`: CPython's full collections, 30-40 ms each over the
  ~70,000 objects the imports leave, are most of the tail); then, frozen, follow p99
  (producer emit -> a follower's entry); cancel -> upstream disposed p99 (`cancel`
  from another client); dead producer -> terminal (the producer stops writing and
  renewing, as a killed one; a follower gets `error(kind="stalled")`).

Targets (the issue's): tee <= bare xadd; added live latency <= 0.5 ms p99; first
resumed byte <= 25 ms p99; follow <= 5 ms p99; cancel <= 50 ms p99; dead producer ->
terminal <= lease + 3 s. No test asserts a time; the smoke test runs it tiny.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import reactivex
import redis.asyncio as aioredis
from reactivex import Observable
from reactivex.disposable import Disposable
from reactivex.subject import Subject

from rxllm.events import Done, Event, TextDelta
from rxllm.pipeline.aiter import EventStream
from rxllm.serving import RedisLog, UIMessageEncoder, ui_message_stream

__all__ = ["main", "run"]

TEXT = "a few words of a model's answer, "


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _text(i: int) -> TextDelta:
    return TextDelta.make(provider="bench", text=f"{TEXT}{i}")


def _done() -> Done:
    return Done.make(provider="bench", stop_reason="stop")


@contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on PATH (Debian: apt-get install redis-server)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()


async def _feed(subject: Subject[Event], n: int, pace: float) -> None:
    """N text events then `done`, one per loop turn (or `pace` seconds apart)."""
    for i in range(n):
        subject.on_next(_text(i))
        await asyncio.sleep(pace)
    subject.on_next(_done())
    subject.on_completed()


def _cpu(before: float) -> float:
    return time.process_time() - before


async def tee_cpu(url: str, n: int) -> dict[str, float]:
    """CPU seconds per event: the log's tee, the bare xadd loop, pipelined by 16."""
    events = [_text(i) for i in range(n)]
    client = aioredis.Redis.from_url(url)
    async with RedisLog(url, prefix=f"b{uuid.uuid4().hex[:8]}") as log:
        # without a log: the feed and a consumer of the same events
        gc.collect()
        subject: Subject[Event] = Subject()
        before = time.process_time()
        stream = EventStream(subject)
        feeding = asyncio.create_task(_feed(subject, n, 0))
        async for _ in stream:
            pass
        await feeding
        bare_feed = _cpu(before)

        gc.collect()
        subject = Subject()
        before = time.process_time()
        live = await log.start("tee", subject)
        feeding = asyncio.create_task(_feed(subject, n, 0))
        async for _ in live:
            pass  # ends once the terminal is in the log
        await feeding
        with_log = _cpu(before)

        gc.collect()
        key = f"bench:{uuid.uuid4().hex}"
        before = time.process_time()
        for event in events:
            await client.xadd(key, {"e": event.model_dump_json()})
        xadd = _cpu(before)

        gc.collect()
        key = f"bench:{uuid.uuid4().hex}"
        before = time.process_time()
        for start in range(0, n, 16):
            async with client.pipeline(transaction=False) as pipe:
                for event in events[start : start + 16]:
                    pipe.xadd(key, {"e": event.model_dump_json()})
                await pipe.execute()
        pipelined = _cpu(before)
    await client.aclose()
    return {
        "tee_us": (with_log - bare_feed) / n * 1e6,
        "xadd_sequential_us": xadd / n * 1e6,
        "xadd_pipelined_16_us": pipelined / n * 1e6,
    }


async def live_latency(url: str, n: int, pace: float) -> dict[str, float]:
    """p99 of emit -> live entry, with the log and through rxllm's bridge without."""

    async def measure(consume: Callable[[Subject[Event]], Any]) -> list[float]:
        subject: Subject[Event] = Subject()
        sent: list[float] = []
        got: list[float] = []
        iterator = await consume(subject)

        async def feed() -> None:
            for i in range(n):
                sent.append(time.perf_counter())
                subject.on_next(_text(i))
                await asyncio.sleep(pace)
            subject.on_next(_done())
            subject.on_completed()

        feeding = asyncio.create_task(feed())
        async for _ in iterator:
            got.append(time.perf_counter())
        await feeding
        return [b - a for a, b in zip(sent, got, strict=False)]

    async with RedisLog(url, prefix=f"b{uuid.uuid4().hex[:8]}") as log:

        async def with_log(subject: Subject[Event]) -> Any:
            return await log.start(f"lat-{uuid.uuid4().hex}", subject)

        async def without(subject: Subject[Event]) -> Any:
            return EventStream(subject)

        base = await measure(without)
        logged = await measure(with_log)
    return {
        "live_p99_ms": p99(logged) * 1e3,
        "bridge_p99_ms": p99(base) * 1e3,
        "added_p99_ms": (p99(logged) - p99(base)) * 1e3,
    }


async def resume_costs(url: str, size: int, repeat: int, pace: float) -> dict[str, Any]:
    prefix = f"b{uuid.uuid4().hex[:8]}"
    async with RedisLog(url, prefix=prefix, lease_ms=1000) as log:
        subject: Subject[Event] = Subject()
        live = await log.start("big", subject)
        for i in range(size - 1):
            subject.on_next(_text(i))
        subject.on_next(_done())
        async for _ in live:
            pass

        info = await log.info("big")
        assert info is not None
        middle = f"{info.start_ms}-{size // 2}"

        async def folded_resume() -> AsyncGenerator[bytes, None]:
            """The HTTP resume (examples/serving): fold the stored JSON through the
            cursor, then stream the entries after it."""
            encoder = UIMessageEncoder()
            async for page in log.history("big", through=middle):
                encoder.fold_json(page)
            return ui_message_stream(log.resume("big", after=middle), encoder=encoder)

        async def first_entry() -> None:
            entries = log.resume("big")
            await anext(entries)
            await entries.aclose()

        async def first_frame(stream: AsyncGenerator[bytes, None]) -> None:
            await anext(stream)
            await stream.aclose()

        async def first_folded_frame() -> None:
            await first_frame(await folded_resume())

        measures: dict[str, Callable[[], Awaitable[None]]] = {
            "entry": first_entry,
            "frame": first_folded_frame,
            "frame_after": lambda: first_frame(ui_message_stream(log.resume("big"), after=middle)),
        }

        async def first_resumed() -> tuple[dict[str, list[float]], dict[str, int]]:
            """The first entry of `resume(sid)`; the first frame of a resume from the
            middle (half the log folded unsent) as the HTTP resume does it, and
            through `ui_message_stream(log.resume(sid), after=...)`, which folds every
            entry as an event. One measure at a time: each pays for its own garbage
            (a collection is paid by whoever allocates when it is due)."""
            samples: dict[str, list[float]] = {}
            full: dict[str, int] = {}  # full collections during each: what moves the p99
            for name, measure in measures.items():
                samples[name] = []
                before = gc.get_stats()[2]["collections"]
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    await measure()
                    samples[name].append(time.perf_counter() - t0)
                full[name] = gc.get_stats()[2]["collections"] - before
            return samples, full

        # The tail of these is CPython's full collection, which walks every live
        # object of the process (tens of thousands after importing aiohttp, pydantic,
        # redis): measured as is, then as a server that froze its start-up heap
        # (`gc.freeze()`, as examples/serving does and docs/serving.md advises).
        # The rest of the run is that server: frozen until the end of this function.
        plain = await first_resumed()
        gc.collect()
        gc.freeze()
        frozen = await first_resumed()

        # follow: a follower at the tail of a running stream
        subject = Subject()
        live = await log.start("follow", subject)
        sent: dict[str, float] = {}
        delays: list[float] = []

        async def follow() -> None:
            async for entry_id, _ in log.resume("follow"):
                delays.append(time.perf_counter() - sent[entry_id])

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.05)
        start_ms = (await log.info("follow")).start_ms  # type: ignore[union-attr]
        for i in range(repeat * 10):
            sent[f"{start_ms}-{i}"] = time.perf_counter()
            subject.on_next(_text(i))
            await asyncio.sleep(pace)
        sent[f"{start_ms}-{repeat * 10}"] = time.perf_counter()
        subject.on_next(_done())
        await follower
        async for _ in live:
            pass

        # cancel -> upstream disposed, the cancel sent by another client
        cancels: list[float] = []
        async with RedisLog(url, prefix=prefix) as other:
            for i in range(repeat):
                closed = asyncio.get_running_loop().create_future()

                def forever(observer: Any, scheduler: Any = None, done: Any = closed) -> Any:
                    observer.on_next(_text(0))
                    return Disposable(lambda: done.done() or done.set_result(time.perf_counter()))

                upstream: Observable[Event] = reactivex.create(forever)
                live = await log.start(f"cancel-{i}", upstream)
                await anext(live)
                t0 = time.perf_counter()
                await other.cancel(f"cancel-{i}")
                cancels.append(await asyncio.wait_for(closed, 10) - t0)
                async for _ in live:
                    pass

        # dead producer -> terminal
        subject = Subject()
        live = await log.start("dead", subject)
        subject.on_next(_text(0))
        await anext(live)
        follower_entries: list[Any] = []

        async def watch() -> None:
            async for entry in log.resume("dead"):
                follower_entries.append(entry)

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.05)
        t0 = time.perf_counter()
        log._producers["dead"].drop_log()  # as if killed: no writes, no renewals
        await asyncio.wait_for(watcher, 30)
        dead = time.perf_counter() - t0
        assert follower_entries[-1][1].error.kind == "stalled"
        log._producers["dead"].stop("bench over")
    gc.unfreeze()

    return {
        **_resume_figures(*frozen),
        "without_gc_freeze": _resume_figures(*plain),
        "follow_p50_ms": statistics.median(delays) * 1e3,
        "follow_p99_ms": p99(delays) * 1e3,
        "cancel_to_upstream_closed_p50_ms": statistics.median(cancels) * 1e3,
        "cancel_to_upstream_closed_p99_ms": p99(cancels) * 1e3,
        "dead_producer_to_terminal_s": dead,
        "dead_producer_bound_s": 1.0 + 1.0,  # lease 1 s + the follower's block (<= lease)
    }


def _resume_figures(samples: dict[str, list[float]], full: dict[str, int]) -> dict[str, float]:
    names = {
        "entry": "first_resumed_entry",
        "frame": "first_resumed_frame_from_middle",
        "frame_after": "first_resumed_frame_from_middle_folding_events",
    }
    figures: dict[str, float] = {}
    for key, name in names.items():
        figures[f"{name}_p50_ms"] = statistics.median(samples[key]) * 1e3
        figures[f"{name}_p99_ms"] = p99(samples[key]) * 1e3
        figures[f"{name}_full_collections"] = full[key]
    return figures


async def run(events: int, size: int, repeat: int, pace: float) -> dict[str, Any]:
    with redis_server() as url:
        started = time.perf_counter()
        result: dict[str, Any] = {
            "events": events,
            "log_size": size,
            "repeat": repeat,
            "pace_s": pace,
            "tee_cpu": await tee_cpu(url, events),
            "live_latency": await live_latency(url, events, pace),
            "log": await resume_costs(url, size, repeat, pace),
        }
        result["targets"] = {
            "tee_us <= xadd_sequential_us": result["tee_cpu"]["tee_us"]
            <= result["tee_cpu"]["xadd_sequential_us"],
            "added_live_p99_ms <= 0.5": result["live_latency"]["added_p99_ms"] <= 0.5,
            "first_resumed_frame_p99_ms <= 25": result["log"][
                "first_resumed_frame_from_middle_p99_ms"
            ]
            <= 25,
            "follow_p99_ms <= 5": result["log"]["follow_p99_ms"] <= 5,
            "cancel_p99_ms <= 50": result["log"]["cancel_to_upstream_closed_p99_ms"] <= 50,
            "dead_producer <= lease + 3 s": result["log"]["dead_producer_to_terminal_s"] <= 1 + 3,
        }
        result["seconds"] = time.perf_counter() - started
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.redis_log", description=__doc__)
    parser.add_argument("--events", type=int, default=5_000, help="events for tee and latency")
    parser.add_argument("--size", type=int, default=2_000, help="entries of the resumed log")
    parser.add_argument("--repeat", type=int, default=100, help="samples per p99")
    parser.add_argument("--pace", type=float, default=0.001, help="seconds between events")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.events, args.size, args.repeat, args.pace))
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
