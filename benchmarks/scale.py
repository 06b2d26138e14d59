"""`python -m benchmarks.scale`: rxllm at scale, side by side with the floor in one run.

Six scenarios, each written to the JSON report (`--json`):

- `streams`: N concurrent streams (default 1,000) of text deltas (200) paced at a
  rate (20 events/s) from the loopback server. Each client runs in a fresh child
  process, so its CPU time and peak memory are its own: CPU for all streams, peak RSS
  growth per stream, time to first text (p50, p99) from the moment all streams are
  launched, and completed streams; and what says whether a run compared like with
  like: socket reads per chunk, the collector's time before the median first text, and
  the CPU ratio of each pair of neighbouring runs (`--gc-freeze`: each client freezes
  the heap it made before its streams). The floor is aiohttp lines plus `json.loads`
  over one unlimited connector; rxllm is `provider.astream()` with its own pool.
- `tool`: one tool call of 10 MB and one of 20 MB arguments, in 1 MB fragments, read
  by `provider.complete()`. The floor's `readline` cannot read lines that long: the
  report says what it raised. The figure: CPU and peak memory, and their growth when
  the arguments double.
- `connection`: the CPU and wall time of one short turn on a reused (pooled)
  connection versus a new one, for both clients.
- `first_pass`: N streams (`--streams`) launched at once, and the loop's first pass
  over them: each stream's first step, up to its connect. No response is read before
  that pass ends, so every stream's first text waits for all of it. Both clients, each
  in a fresh child process that exits at the pass's end: CPU per stream and the pass's
  wall time. `--instructions` also counts each client's instructions per stream with
  callgrind (`benchmarks.callgrind`), with the garbage collector and without: on a
  quiet machine, a figure steadier than the CPU time.
- `subscribe`: the CPU rxllm spends per stream before its request task runs (building
  the turn's pipeline and subscribing it), the garbage collector off, best of 5
  batches: what every stream pays before anything is on the wire.
- `import`: CPU time of `import rxllm` against `import aiohttp` alone, each in a fresh
  interpreter with its bytecode cached; and a fresh process's `import rxllm` with its
  first and second `complete()`, to show what import-time work moved to first use.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import gc
import hashlib
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from asyncio import selector_events
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import aiohttp
from reactivex.scheduler.eventloop import AsyncIOScheduler

import rxllm
from benchmarks.__main__ import machine
from benchmarks.callgrind import instructions, missing
from benchmarks.clients import _API_KEY, HollowRun
from benchmarks.server import MODEL, TOOL_NAME, ServerProcess, stream_of

__all__ = ["main"]

_ROOT = str(Path(__file__).resolve().parents[1])
SCALE_SCENARIOS = ("streams", "tool", "connection", "first_pass", "subscribe", "import")
MB = 1024 * 1024


# -- measuring one process --------------------------------------------------------------


def _status(field: str) -> int:
    """A `/proc/self/status` figure in bytes (VmRSS: now; VmHWM: the peak)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    """Make VmHWM start again from VmRSS (Linux), so a peak measures this run only."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        pass  # then the peak may include warm-up: it can only overstate growth


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# -- the streams scenario, one client per child process ---------------------------------


def _request() -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=MODEL, messages=[rxllm.Message.user("Benchmark, please.")])


Seen = Callable[[bool], None]
"""Told of each text a stream reads: True for its first (`benchmarks.bytecodes` counts
between these; the timed runs pass none)."""


async def _floor_streams(
    base_url: str, streams: int, start: Callable[[], None], seen: Seen | None = None
) -> list[float | None]:
    """The floor: aiohttp lines plus `json.loads`, over one unlimited connector. Returns
    each stream's first-text time (None for a stream that did not get all its chunks)."""
    provider = rxllm.provider("openai", api_key=_API_KEY, base_url=base_url)
    http = provider.http_request(_request())
    headers = dict(http.headers)
    loads = json.loads
    expected = stream_of("text", _chunks_of(base_url)).json_chunks

    async def one(session: aiohttp.ClientSession) -> float | None:
        first: float | None = None
        count = 0
        async with session.post(http.url, data=http.body, headers=headers) as response:
            async for line in response.content:
                if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                    chunk = loads(line[6:])
                    count += 1
                    if first is None:
                        choices = chunk["choices"]
                        if choices and choices[0]["delta"].get("content"):
                            first = time.perf_counter()
                            if seen is not None:
                                seen(True)
                    elif seen is not None:
                        seen(False)
        return first if count == expected else None

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await one(session)  # warm: code paths and the connector, not counted
        gc.collect()
        start()
        return await asyncio.gather(*(one(session) for _ in range(streams)))


async def _rxllm_streams(
    base_url: str, streams: int, start: Callable[[], None], seen: Seen | None = None
) -> list[float | None]:
    """rxllm as a server calls it: one provider, `astream` per user. The text is checked
    through a running digest, not kept: like the floor, a stream holds nothing it read."""
    request = _request()
    expected = hashlib.sha256(stream_of("text", _chunks_of(base_url)).text.encode()).digest()

    async def one(provider: rxllm.Provider) -> float | None:
        first: float | None = None
        text = hashlib.sha256()
        terminal = None
        async for event in provider.astream(request):
            if type(event) is rxllm.TextDelta:
                if first is None:
                    first = time.perf_counter()
                    if seen is not None:
                        seen(True)
                elif seen is not None:
                    seen(False)
                text.update(event.text.encode())
            terminal = event
        done = isinstance(terminal, rxllm.Done) and text.digest() == expected
        return first if done else None

    async with rxllm.provider("openai", api_key=_API_KEY, base_url=base_url) as provider:
        await one(provider)  # warm, as the floor
        gc.collect()
        start()
        return await asyncio.gather(*(one(provider) for _ in range(streams)))


def _chunks_of(base_url: str) -> int:
    # .../text/{chunks}/{fragment}/{rate}/v1
    return int(base_url.rstrip("/").split("/")[-4])


_StreamClient = Callable[[str, int, Callable[[], None], Seen | None], Awaitable[list[float | None]]]
_STREAM_CLIENTS: dict[str, _StreamClient] = {
    "floor": _floor_streams,
    "rxllm": _rxllm_streams,
}


class _Clock:
    """Started by a client after its warm-up stream, right before its streams: the
    common moment time to first text counts from, and the CPU, memory and socket-read
    baseline."""

    def __init__(self) -> None:
        self.t0 = self.cpu = 0.0
        self.rss = self.reads = 0

    def start(self) -> None:
        self.rss = _status("VmRSS")
        _reset_peak()
        self.reads = _SocketReads.count
        self.cpu = time.process_time()
        self.t0 = time.perf_counter()


# asyncio's read from a socket into its protocol (`_SelectorSocketTransport._read_ready`
# calls one of them); not `data_received`, which aiohttp also calls with no data each
# time its reader asks the transport to resume (so once per `readline`).
SOCKET_READS = ("_read_ready__data_received", "_read_ready__get_buffer")


class _SocketReads:
    """Counts asyncio's reads from a socket (`count`) once `install`ed: whether the
    clients compared read as many events a read. A run where one read several events a
    read while the other read one would compare unlike work (a read's cost is shared by
    its events). The count is one Python call a read, the same in both clients."""

    count = 0

    @classmethod
    def install(cls) -> None:
        transport: Any = selector_events._SelectorSocketTransport  # type: ignore[attr-defined]
        for name in SOCKET_READS:
            read = getattr(transport, name)

            def counted(self: Any, read: Callable[[Any], None] = read) -> None:
                cls.count += 1
                read(self)

            setattr(transport, name, counted)


class _CollectorPasses:
    """The garbage collector's passes (`gc.callbacks`): when each began and ended, and
    its generation. Time to first text at a thousand streams waits for every pass made
    before it, one of them over the whole heap (benchmarks/README.md, thirty-second
    round)."""

    def __init__(self) -> None:
        self.passes: list[tuple[float, float, int]] = []
        self._began = 0.0
        gc.callbacks.append(self._seen)

    def _seen(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.passes.append((self._began, time.perf_counter(), info["generation"]))

    def between(self, start: float, end: float) -> dict[str, float]:
        """The passes that ran between `start` and `end`: how many of each generation,
        and their seconds."""
        inside = [p for p in self.passes if start <= p[0] and p[1] <= end]
        counts = {f"gen{g}": sum(p[2] == g for p in inside) for g in (0, 1, 2)}
        return {**counts, "seconds": sum(p[1] - p[0] for p in inside)}


def child_streams(client: str, base_url: str, streams: int, freeze: bool = False) -> dict[str, Any]:
    """Run `streams` concurrent streams of `client` in this (fresh) process; `freeze`:
    `gc.freeze()` after the warm-up, as a server may once it has started, so that the
    collector's passes over the whole heap skip what the process made before."""
    _raise_file_limit()
    _SocketReads.install()
    collector = _CollectorPasses()
    clock = _Clock()

    def start() -> None:
        if freeze:
            gc.freeze()
        clock.start()

    async def run() -> tuple[list[float | None], float, int]:
        firsts = await _STREAM_CLIENTS[client](base_url, streams, start, None)
        return firsts, time.process_time() - clock.cpu, _status("VmHWM")

    firsts, cpu, peak = asyncio.run(run())
    reads = _SocketReads.count - clock.reads
    waits = [first - clock.t0 for first in firsts if first is not None]
    growth = max(0, peak - clock.rss)
    median_first = _percentile(waits, 0.5) if waits else 0.0
    return {
        "client": client,
        "streams": streams,
        "completed": len(waits),
        "cpu_s": cpu,
        "peak_rss_growth_bytes": growth,
        "memory_per_stream_bytes": growth / streams,
        "ttft_p50_s": median_first if waits else None,
        "ttft_p99_s": _percentile(waits, 0.99) if waits else None,
        "collector_to_p50": collector.between(clock.t0, clock.t0 + median_first),
        "socket_reads_per_chunk": reads
        / (streams * stream_of("text", _chunks_of(base_url)).json_chunks),
    }


def at_pass_end(report: Callable[[], object]) -> Callable[..., Any]:
    """Call `report` where the running loop's next pass ends: the streams' first steps
    run in it, and it ends where the loop looks for I/O again, before any response is
    read (there, not after that look, whose count of sockets ready varies from run to
    run). Returns what stands in for the selector's `select` from then on."""
    selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    select, looks = selector.select, 0

    def looking(timeout: float | None = None) -> Any:
        nonlocal looks
        looks += 1
        if looks == 2:
            report()
        return select(timeout)

    selector.select = looking
    return looking


def child_first_pass(client: str, base_url: str, streams: int, collect: bool = True) -> NoReturn:
    """Launch `streams` streams of `client` in this (fresh) process, print the CPU and
    wall time of the loop's pass over their first steps as JSON, and exit there
    (`collect=False`: with the garbage collector off)."""
    _raise_file_limit()
    if not collect:
        gc.disable()
    clock = _Clock()

    def report() -> NoReturn:
        cpu, wall = time.process_time() - clock.cpu, time.perf_counter() - clock.t0
        run = {"client": client, "streams": streams, "cpu_s": cpu, "wall_s": wall}
        print(json.dumps({**run, "collector": gc.isenabled()}))
        sys.stdout.flush()
        os._exit(0)  # nothing after the pass is measured, nor waited for

    def start() -> None:
        clock.start()
        at_pass_end(report)

    async def run() -> None:
        await _STREAM_CLIENTS[client](base_url, streams, start, None)

    asyncio.run(run())
    raise HollowRun(f"{client}'s streams all ended without the loop passing over them")


def first_pass_scenario(
    server: ServerProcess,
    streams: int,
    deltas: int,
    rate: float,
    repeat: int,
    counted: bool = False,
) -> dict[str, Any]:
    """Each client in its own child process, `repeat` times (`_runs`); `counted`: also
    the instructions a stream costs (`_first_pass_instructions`)."""
    base_url = server.base_url("text", deltas, rate=rate)
    runs = _runs("first_pass", base_url, streams, repeat)
    summary = {
        client: {
            key: float(statistics.median(run[key] for run in mine)) for key in ("cpu_s", "wall_s")
        }
        for client, mine in runs.items()
    }
    return {
        "streams": streams,
        "repeat": repeat,
        "runs": runs,
        "median": summary,
        "ratio": summary["rxllm"]["cpu_s"] / summary["floor"]["cpu_s"],
        "instructions": _first_pass_instructions(base_url, streams) if counted else None,
    }


def _first_pass_instructions(base_url: str, streams: int) -> dict[str, dict[str, float]]:
    """Instructions per stream of each client's first pass, counted by callgrind in
    runs of `streams` and a fifth of them (what the two share, the import and the
    warm-up stream, cancels out): with the garbage collector, and without it. On a
    quiet machine the count repeats within a few tenths of a percent (794,801 and
    793,123 for one tree); under load it moves too (809,711 with the tests running),
    as a connect that completes at once does more in the pass than one that waits."""
    few = streams // 5
    counts: dict[str, dict[str, float]] = {}
    for client in ("floor", "rxllm"):
        counts[client] = {}
        for collect in ("on", "off"):
            args = ["-m", "benchmarks.scale", "--child", "first_pass", client, base_url]
            many, some = (instructions([*args, str(n), collect]) for n in (streams, few))
            counts[client][f"gc_{collect}"] = (many - some) / (streams - few)
    return counts


def _runs(
    kind: str, base_url: str, streams: int, repeat: int, *more: str
) -> dict[str, list[dict[str, Any]]]:
    """`repeat` runs of each client's `kind` child, alternating which goes first;
    `more`: the child's arguments after the stream count."""
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], "rxllm": []}
    for i in range(repeat):
        for client in ("floor", "rxllm") if i % 2 == 0 else ("rxllm", "floor"):
            runs[client].append(_in_child(kind, client, base_url, str(streams), *more))
    return runs


def _in_child(*args: str, module: str = "benchmarks.scale", root: str = _ROOT) -> dict[str, Any]:
    """What `python -m module --child *args` printed last, as JSON; `root`: where the
    child imports `rxllm` and `benchmarks` from."""
    _cache_bytecode(root)
    out = subprocess.run(
        [sys.executable, "-m", module, "--child", *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@functools.cache
def _cache_bytecode(root: str) -> None:
    """Write `root`'s rxllm and benchmarks bytecode caches, once, before its first child:
    as an installed copy runs. A child that compiles its modules from source (a fresh
    checkout, or one edited since, with `PYTHONDONTWRITEBYTECODE` set, as on this
    machine) starts with the compiler's garbage freed in its heap, which its streams
    fill before its RSS grows: both clients' memory per stream read about 6 KB lower
    (the floor 14.8 KB against 20.6 KB, the same code in two checkouts) and the ratio
    1.31x against 1.20x (benchmarks/README.md, the twenty-eighth round)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "rxllm", "benchmarks"],
        check=True,
        capture_output=True,
        cwd=root,
    )


def streams_scenario(
    server: ServerProcess,
    streams: int,
    deltas: int,
    rate: float,
    repeat: int,
    freeze: bool = False,
) -> dict[str, Any]:
    """Each client in its own child process, `repeat` times (`_runs`); `freeze`: each
    calls `gc.freeze()` after its warm-up (`child_streams`)."""
    url = server.base_url("text", deltas, rate=rate)
    runs = _runs("streams", url, streams, repeat, *(["freeze"] if freeze else []))
    for client, mine in runs.items():
        for run in mine:
            if run["completed"] != streams:
                raise HollowRun(f"{client} completed {run['completed']} of {streams} streams")

    def median(client: str, key: str) -> float:
        return float(statistics.median(run[key] for run in runs[client]))

    figures = (
        "cpu_s",
        "memory_per_stream_bytes",
        "ttft_p50_s",
        "ttft_p99_s",
        "socket_reads_per_chunk",
    )
    summary: dict[str, dict[str, Any]] = {
        client: {key: median(client, key) for key in figures} for client in ("floor", "rxllm")
    }
    for client, mine in runs.items():  # (nested in each run: its medians one by one)
        summary[client]["collector_to_p50"] = {
            key: statistics.median(run["collector_to_p50"][key] for run in mine)
            for key in ("gen0", "gen1", "gen2", "seconds")
        }
    # (a floor of 0, a memory growth too small to see in a short run, has no ratio: NaN)
    ratios = {
        key: summary["rxllm"][key] / summary["floor"][key] if summary["floor"][key] else math.nan
        for key in figures
    }
    return {
        "streams": streams,
        "deltas": deltas,
        "rate": rate,
        "repeat": repeat,
        "gc_freeze": freeze,
        "runs": runs,
        "median": summary,
        "ratio": ratios,
        # Each client's i-th run, one right after the other (`_runs`): their spread
        # says how far a single run's ratio can be trusted on this machine.
        "cpu_ratio_by_pair": [
            mine["cpu_s"] / floor["cpu_s"]
            for floor, mine in zip(runs["floor"], runs["rxllm"], strict=True)
        ],
    }


# -- big tool arguments -------------------------------------------------------------------


async def _floor_tool(url: str, body: bytes, headers: dict[str, str]) -> str:
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, data=body, headers=headers) as response,
        ):
            async for line in response.content:
                if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                    json.loads(line[6:])
    except Exception as exc:  # what readline says of a 1 MB line
        return f"{type(exc).__name__}: {exc}"
    return "read every line"


def child_tool(base_url: str, megabytes: int) -> dict[str, Any]:
    """One `complete()` of a tool call of `megabytes` MB in 1 MB fragments, in this
    (fresh) process: CPU and peak memory growth; then the floor's attempt."""
    stream = stream_of("tool", megabytes, MB)
    tool = rxllm.Tool(
        name=TOOL_NAME,
        description="Write a file.",
        parameters={"type": "object", "properties": {"content": {"type": "string"}}},
    )
    request = rxllm.ChatRequest(
        model=MODEL, messages=[rxllm.Message.user("Benchmark, please.")], tools=[tool]
    )
    provider = rxllm.provider("openai", api_key=_API_KEY, base_url=base_url)

    async def run() -> dict[str, Any]:
        http = provider.http_request(request)
        body = http.body
        assert isinstance(body, bytes)  # `http_request` encodes the body at once
        floor = await _floor_tool(http.url, body, dict(http.headers))
        gc.collect()
        rss = _status("VmRSS")
        _reset_peak()
        cpu = time.process_time()
        record = await provider.complete(request)
        cpu = time.process_time() - cpu
        peak = _status("VmHWM")
        await provider.aclose()
        calls = record.tool_calls
        if len(calls) != 1 or calls[0].arguments != stream.arguments:
            raise HollowRun(f"rxllm did not get the {megabytes} MB call: {record.terminal!r}")
        return {
            "megabytes": megabytes,
            "argument_chars": len(stream.arguments_json),
            "rxllm_cpu_s": cpu,
            "rxllm_peak_rss_growth_bytes": max(0, peak - rss),
            "floor": floor,
        }

    return asyncio.run(run())


def tool_scenario(server: ServerProcess, sizes: Sequence[int], repeat: int) -> dict[str, Any]:
    runs: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
    for _ in range(repeat):
        for size in sizes:
            url = server.base_url("tool", size, MB)
            runs[size].append(_in_child("tool", url, str(size)))
    medians = {
        size: {
            "cpu_s": statistics.median(r["rxllm_cpu_s"] for r in mine),
            "peak_rss_growth_bytes": statistics.median(
                r["rxllm_peak_rss_growth_bytes"] for r in mine
            ),
            "floor": mine[0]["floor"],
        }
        for size, mine in runs.items()
    }
    result: dict[str, Any] = {"sizes_mb": list(sizes), "runs": runs, "median": medians}
    if len(sizes) == 2:
        small, big = sizes
        best = {size: min(r["rxllm_cpu_s"] for r in mine) for size, mine in runs.items()}
        result["growth"] = {
            "size": big / small,
            "cpu": medians[big]["cpu_s"] / medians[small]["cpu_s"],
            "cpu_best": best[big] / best[small],  # the least noisy figure on a shared machine
            "memory": medians[big]["peak_rss_growth_bytes"]
            / max(1, medians[small]["peak_rss_growth_bytes"]),
        }
    return result


# -- a turn on a reused connection versus a new one -------------------------------------


async def connection_scenario(server: ServerProcess, deltas: int, turns: int) -> dict[str, Any]:
    base_url = server.base_url("text", deltas)
    request = _request()
    stream = stream_of("text", deltas)
    http = rxllm.provider("openai", api_key=_API_KEY, base_url=base_url).http_request(request)
    headers = dict(http.headers)

    async def floor_turn(session: aiohttp.ClientSession) -> None:
        count = 0
        async with session.post(http.url, data=http.body, headers=headers) as response:
            async for line in response.content:
                if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                    json.loads(line[6:])
                    count += 1
        if count != stream.json_chunks:
            raise HollowRun(f"the floor parsed {count} of {stream.json_chunks} chunks")

    async def rxllm_turn(provider: rxllm.Provider) -> None:
        record = await provider.complete(request)
        if record.text != stream.text:
            raise HollowRun(f"rxllm got {record.terminal!r}")

    async def floor_new() -> None:
        async with aiohttp.ClientSession() as session:
            await floor_turn(session)

    async def rxllm_new() -> None:
        async with rxllm.provider("openai", api_key=_API_KEY, base_url=base_url) as provider:
            await rxllm_turn(provider)

    shared_session = aiohttp.ClientSession()
    shared = rxllm.provider("openai", api_key=_API_KEY, base_url=base_url)
    cases: dict[str, Callable[[], Awaitable[None]]] = {
        "floor reused": lambda: floor_turn(shared_session),
        "floor new": floor_new,
        "rxllm reused": lambda: rxllm_turn(shared),
        "rxllm new": rxllm_new,
    }
    times: dict[str, list[tuple[float, float]]] = {case: [] for case in cases}
    try:
        for turn in cases.values():
            await turn()  # warm (and, for "reused", open the connection)
            await asyncio.sleep(0.01)  # the drain gives the connection back
        for _ in range(turns):
            for case, turn in cases.items():
                gc.collect()
                cpu, wall = time.process_time(), time.perf_counter()
                await turn()
                times[case].append((time.process_time() - cpu, time.perf_counter() - wall))
                await asyncio.sleep(0.005)  # let the body's end return the connection
    finally:
        await shared_session.close()
        await shared.aclose()
    return {
        "deltas": deltas,
        "turns": turns,
        "median": {
            case: {
                "cpu_s": statistics.median(c for c, _ in runs),
                "wall_s": statistics.median(w for _, w in runs),
            }
            for case, runs in times.items()
        },
    }


# -- what a stream costs before its request goes out ----------------------------------


async def subscribe_scenario(server: ServerProcess, streams: int, batches: int = 5) -> float:
    """CPU seconds per stream to build and subscribe `streams` streams at once (each
    hangs up before its request task runs), best of `batches`, gc off."""
    provider = rxllm.provider("openai", api_key=_API_KEY, base_url=server.base_url("text", 20))
    request = _request()
    await provider.complete(request)  # warm
    best = float("inf")
    loop = AsyncIOScheduler(asyncio.get_running_loop())  # as astream and complete do
    gc.disable()
    try:
        for _ in range(batches):
            cpu = time.process_time()
            subscriptions = [
                provider.stream(request).subscribe(scheduler=loop) for _ in range(streams)
            ]
            best = min(best, (time.process_time() - cpu) / streams)
            for subscription in subscriptions:
                subscription.dispose()
    finally:
        gc.enable()
        await provider.aclose()
    return best


# -- import time ------------------------------------------------------------------------

_IMPORT = "import time; c = time.process_time(); import {0}; print(time.process_time() - c)"

# A fresh process's first turns after `import rxllm`: the first (with the provider's
# creation) pays what moved from import to first use, and a new connection; the second
# reuses the connection.
_FIRST_TURNS = """
import asyncio, time
c = time.process_time()
import rxllm
imported = time.process_time()

async def turns():
    cpu = []
    c = time.process_time()
    async with rxllm.provider("openai", api_key={key!r}, base_url={url!r}) as provider:
        for _ in range(2):
            request = rxllm.ChatRequest(
                model={model!r}, messages=[rxllm.Message.user("Benchmark, please.")]
            )
            record = await provider.complete(request)
            assert record.ok and record.text, record
            cpu.append(time.process_time() - c)
            c = time.process_time()
    return cpu

first, second = asyncio.run(turns())
print(imported - c, first, second)
"""


def _fresh_python(code: str) -> str:
    """`code`'s output in a fresh interpreter that reads and writes bytecode caches:
    without them (`PYTHONDONTWRITEBYTECODE` in the environment) every run would compile
    rxllm from source, which no installed copy does."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=_ROOT, env=env
    )
    return out.stdout


def import_scenario(server: ServerProcess, repeat: int) -> dict[str, Any]:
    """CPU of `import rxllm` and of `import aiohttp` alone, each in a fresh interpreter
    (bytecode cached: the first round warms the cache), interleaved; then, in other fresh
    interpreters, `import rxllm` and the CPU of a provider's creation with its first
    `complete()` of a 20-delta turn, and of its second."""
    times: dict[str, list[float]] = {"aiohttp": [], "rxllm": []}
    for i in range(repeat + 1):
        for module in times:
            cpu = float(_fresh_python(_IMPORT.format(module)))
            if i:  # the first round only warms the caches
                times[module].append(cpu)
    medians = {module: statistics.median(t) for module, t in times.items()}
    code = _FIRST_TURNS.format(key=_API_KEY, url=server.base_url("text", 20), model=MODEL)
    turns: dict[str, list[float]] = {"import": [], "first_turn": [], "second_turn": []}
    for _ in range(repeat):
        for name, cpu in zip(turns, map(float, _fresh_python(code).split()), strict=True):
            turns[name].append(cpu)
    return {
        "runs": times,
        "median_cpu_s": medians,
        "ratio": medians["rxllm"] / medians["aiohttp"],
        "first_turns": {
            "runs": turns,
            "median_cpu_s": {name: statistics.median(t) for name, t in turns.items()},
        },
    }


# -- the report -------------------------------------------------------------------------


def _report(results: dict[str, Any]) -> str:
    lines: list[str] = []
    streams = results.get("streams")
    if streams:
        floor, mine = streams["median"]["floor"], streams["median"]["rxllm"]
        ratio = streams["ratio"]
        lines += [
            f"{streams['streams']} concurrent streams x {streams['deltas']} text deltas at "
            f"{streams['rate']:g}/s (median of {streams['repeat']} runs per client"
            f"{', gc.freeze() after the warm-up' if streams.get('gc_freeze') else ''}):",
            f"  {'figure':<28}{'floor':>12}{'rxllm':>12}{'ratio':>8}",
            f"  {'CPU for all streams (s)':<28}{floor['cpu_s']:>12.2f}{mine['cpu_s']:>12.2f}"
            f"{ratio['cpu_s']:>7.2f}x",
            f"  {'memory per stream (KB)':<28}{floor['memory_per_stream_bytes'] / 1024:>12.1f}"
            f"{mine['memory_per_stream_bytes'] / 1024:>12.1f}"
            f"{ratio['memory_per_stream_bytes']:>7.2f}x",
            f"  {'time to first text p50 (ms)':<28}{floor['ttft_p50_s'] * 1e3:>12.0f}"
            f"{mine['ttft_p50_s'] * 1e3:>12.0f}{ratio['ttft_p50_s']:>7.2f}x",
            f"  {'time to first text p99 (ms)':<28}{floor['ttft_p99_s'] * 1e3:>12.0f}"
            f"{mine['ttft_p99_s'] * 1e3:>12.0f}{ratio['ttft_p99_s']:>7.2f}x",
            f"  {'collector to p50 text (ms)':<28}"
            f"{floor['collector_to_p50']['seconds'] * 1e3:>12.0f}"
            f"{mine['collector_to_p50']['seconds'] * 1e3:>12.0f}"
            f"{mine['collector_to_p50']['seconds'] / floor['collector_to_p50']['seconds']:>7.2f}x"
            if floor["collector_to_p50"]["seconds"]
            else "  collector to p50 text: none",
            "  its passes (young, middle, whole heap): floor "
            + ", ".join(f"{floor['collector_to_p50'][f'gen{g}']:g}" for g in (0, 1, 2))
            + "; rxllm "
            + ", ".join(f"{mine['collector_to_p50'][f'gen{g}']:g}" for g in (0, 1, 2)),
            f"  {'socket reads per JSON chunk':<28}{floor['socket_reads_per_chunk']:>12.3f}"
            f"{mine['socket_reads_per_chunk']:>12.3f}",
            "  CPU run by run (rxllm's over the floor's run beside it): "
            + ", ".join(f"{r:.2f}x" for r in streams["cpu_ratio_by_pair"]),
            f"  completed: floor {[r['completed'] for r in streams['runs']['floor']]}, "
            f"rxllm {[r['completed'] for r in streams['runs']['rxllm']]}",
            "",
        ]
    tool = results.get("tool")
    if tool:
        lines.append("one tool call in 1 MB fragments, provider.complete():")
        for size, m in tool["median"].items():
            lines.append(
                f"  {size:>3} MB: CPU {m['cpu_s']:.3f} s, peak memory growth "
                f"{m['peak_rss_growth_bytes'] / MB:.0f} MB; floor (readline): {m['floor']}"
            )
        if "growth" in tool:
            g = tool["growth"]
            lines.append(
                f"  {g['size']:g}x the arguments: {g['cpu']:.2f}x the CPU (best runs: "
                f"{g['cpu_best']:.2f}x), "
                f"{g['memory']:.2f}x the memory"
            )
        lines.append("")
    connection = results.get("connection")
    if connection:
        lines.append(
            f"one turn of {connection['deltas']} deltas (median of {connection['turns']}):"
        )
        for case, m in connection["median"].items():
            lines.append(
                f"  {case:<14} CPU {m['cpu_s'] * 1e3:7.2f} ms  wall {m['wall_s'] * 1e3:7.2f} ms"
            )
        lines.append("")
    first_pass = results.get("first_pass")
    if first_pass:
        floor, mine = first_pass["median"]["floor"], first_pass["median"]["rxllm"]
        n = first_pass["streams"]
        lines += [
            f"{n} streams launched at once, the loop's pass over their first steps (to "
            f"each connect; median of {first_pass['repeat']} runs per client):",
            f"  CPU per stream: floor {floor['cpu_s'] / n * 1e6:.0f} us, rxllm "
            f"{mine['cpu_s'] / n * 1e6:.0f} us ({first_pass['ratio']:.2f}x); the pass: "
            f"floor {floor['wall_s'] * 1e3:.0f} ms, rxllm {mine['wall_s'] * 1e3:.0f} ms",
        ]
        counts = first_pass.get("instructions")
        if counts:
            floor_on, mine_on = counts["floor"]["gc_on"], counts["rxllm"]["gc_on"]
            floor_off, mine_off = counts["floor"]["gc_off"], counts["rxllm"]["gc_off"]
            lines += [
                f"  instructions per stream (callgrind): floor {floor_on:,.0f}, rxllm "
                f"{mine_on:,.0f} ({mine_on / floor_on:.2f}x); the collector's part: floor "
                f"{floor_on - floor_off:,.0f}, rxllm {mine_on - mine_off:,.0f}",
            ]
        lines.append("")
    if "subscribe" in results:
        lines += [f"subscribing one stream: {results['subscribe'] * 1e6:.0f} us CPU", ""]
    imports = results.get("import")
    if imports:
        m = imports["median_cpu_s"]
        lines.append(
            f"import CPU: aiohttp {m['aiohttp'] * 1e3:.0f} ms, rxllm {m['rxllm'] * 1e3:.0f} ms "
            f"({imports['ratio']:.2f}x)"
        )
        t = imports["first_turns"]["median_cpu_s"]
        lines.append(
            f"a fresh process: import rxllm {t['import'] * 1e3:.0f} ms, provider + first "
            f"complete() {t['first_turn'] * 1e3:.1f} ms, second {t['second_turn'] * 1e3:.1f} ms CPU"
        )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__)
    parser.add_argument("--streams", type=int, default=1000, help="concurrent streams (1000)")
    parser.add_argument("--deltas", type=int, default=200, help="text deltas per stream (200)")
    parser.add_argument("--pace", type=float, default=20.0, help="events per second (20)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each client (3)")
    parser.add_argument(
        "--tool-mb", type=int, nargs="*", default=[10, 20], help="tool-call sizes (10 20)"
    )
    parser.add_argument("--turns", type=int, default=50, help="turns per connection case (50)")
    parser.add_argument("--scenario", choices=(*SCALE_SCENARIOS, "all"), nargs="*", default=["all"])
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="first_pass: also count instructions per stream with callgrind (minutes)",
    )
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="streams: each client calls gc.freeze() after its warm-up, as a server may",
    )
    parser.add_argument("--json", default="scale.json", help="where to write the report")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    return parser


async def _connection(args: argparse.Namespace, server: ServerProcess) -> dict[str, Any]:
    return await connection_scenario(server, 20, args.turns)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    why = missing() if args.instructions else None
    if why is not None:
        print(why, file=sys.stderr)
        return 2
    if args.child:
        kind, *rest = args.child
        if kind == "first_pass":
            # prints, and exits; a fourth argument "off": without the garbage collector
            child_first_pass(rest[0], rest[1], int(rest[2]), rest[3:] != ["off"])
        if kind == "streams":
            out = child_streams(rest[0], rest[1], int(rest[2]), rest[3:] == ["freeze"])
        else:
            out = child_tool(rest[0], int(rest[1]))
        print(json.dumps(out))
        return 0
    chosen = set(SCALE_SCENARIOS) if "all" in args.scenario else set(args.scenario)
    results: dict[str, Any] = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine(),
        "command": " ".join(["python -m benchmarks.scale", *argv]),
    }
    try:
        with ServerProcess() as server:
            if "streams" in chosen:
                results["streams"] = streams_scenario(
                    server, args.streams, args.deltas, args.pace, args.repeat, args.gc_freeze
                )
            if "tool" in chosen:
                results["tool"] = tool_scenario(server, args.tool_mb, args.repeat)
            if "connection" in chosen:
                results["connection"] = asyncio.run(_connection(args, server))
            if "first_pass" in chosen:
                results["first_pass"] = first_pass_scenario(
                    server, args.streams, args.deltas, args.pace, args.repeat, args.instructions
                )
            if "subscribe" in chosen:
                results["subscribe"] = asyncio.run(subscribe_scenario(server, args.streams))
            if "import" in chosen:
                results["import"] = import_scenario(server, max(5, args.repeat))
    except HollowRun as exc:
        print(f"benchmarks.scale: a run was hollow: {exc}", file=sys.stderr)
        return 1
    print(f"rxllm at scale, {results['date']}; machine: {results['machine']}\n")
    print(_report(results))
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
