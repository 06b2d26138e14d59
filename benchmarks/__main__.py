"""`python -m benchmarks` (or `rxllm bench`): rxllm's CPU cost per chunk against the floor.

A loopback server in a child process streams OpenAI-format chunks, one write per event;
two clients read the same bytes, runs interleaved: the floor (aiohttp lines plus
`json.loads`) and `provider.complete()`. The table gives the median CPU seconds per
chunk of each, in this process only, and their ratio. The project's bar is 1.5x.
`--telemetry` adds a third client, `provider.complete()` with the telemetry operator
into the real OpenTelemetry SDK, and reports its cost per chunk over rxllm's.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime
import gc
import io
import os
import platform
import pstats
import statistics
import sys
from collections.abc import Sequence
from typing import Any

import aiohttp

from benchmarks.clients import (
    CLIENTS,
    TELEMETRY_CLIENT,
    ClientName,
    HollowRun,
    Measurement,
    Target,
    check_record,
    measure,
    rxllm_client,
    target,
)
from benchmarks.server import SCENARIOS, Scenario, ServerProcess

__all__ = ["main"]

# The bar the project holds itself to: rxllm's CPU per chunk over the floor's.
TARGET_RATIO = 1.5


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="CPU seconds per chunk: rxllm's provider.complete() against the floor "
        "(aiohttp lines + json.loads) over the same loopback bytes.",
    )
    parser.add_argument(
        "--chunks",
        type=int,
        default=20_000,
        help="text deltas, or argument fragments of the tool call (default 20000)",
    )
    parser.add_argument(
        "--repeat", type=int, default=7, help="timed runs of each client (default 7)"
    )
    parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="all")
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed runs of each client first (default 1)"
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the server sleeps this long after each event, so each read holds about one "
        "event, as from a real model (default 0: as fast as it can; try 0.00005)",
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="after timing, cProfile one rxllm run per scenario and print its top N functions",
    )
    parser.add_argument(
        "--telemetry",
        action="store_true",
        help="also run rxllm with the telemetry operator on (spans and metrics into the "
        "OpenTelemetry SDK, in memory) and report its cost per chunk",
    )
    parser.add_argument(
        "--max-ratio",
        type=float,
        default=None,
        help="exit 1 if a median ratio exceeds this (off by default: times vary by machine)",
    )
    return parser


def machine() -> str:
    """CPU model, cores and Python: what a number needs next to it."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


async def _served(server: ServerProcess) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.get(f"{server.url}/stats") as response:
        served: list[dict[str, Any]] = await response.json()
        return served


def check_served(served: list[dict[str, Any]], targets: Sequence[Target], runs: int) -> None:
    """The server answered each of the `runs` requests per scenario with the whole
    body, and the same one."""
    for t in targets:
        stream = t.stream
        mine = [
            s for s in served if s["scenario"] == stream.scenario and s["chunks"] == stream.chunks
        ]
        if len(mine) != runs:
            raise HollowRun(f"the server saw {len(mine)} {stream.scenario} requests of {runs}")
        for s in mine:
            if s["digest"] != stream.digest or not s["complete"] or s["bytes"] != stream.size:
                raise HollowRun(f"the server did not send the whole {stream.scenario} body: {s}")


async def run(
    server: ServerProcess,
    scenarios: Sequence[Scenario],
    chunks: int,
    repeat: int,
    warmup: int,
    clients: Sequence[ClientName] = CLIENTS,
) -> dict[Scenario, list[Measurement]]:
    """Warm up, then time each client `repeat` times per scenario, interleaved (and
    alternating which goes first), so drift hits both alike."""
    targets = [target(server, scenario, chunks) for scenario in scenarios]
    results: dict[Scenario, list[Measurement]] = {}
    for t in targets:
        for _ in range(warmup):
            for client in clients:
                await measure(client, t)
        runs: list[Measurement] = []
        for i in range(repeat):
            order = clients if i % 2 == 0 else clients[::-1]
            for client in order:
                runs.append(await measure(client, t))
        results[t.scenario] = runs
    check_served(await _served(server), targets, (warmup + repeat) * len(clients))
    return results


def table(results: dict[Scenario, list[Measurement]]) -> tuple[str, dict[Scenario, float]]:
    """The report, and the median CPU ratio of rxllm over the floor in each scenario."""
    rows = [
        (
            "scenario",
            "client",
            "CPU s/chunk",
            "wall s/chunk",
            "CPU s/run (min-max)",
            "runs",
            "CPU vs floor",
        )
    ]
    ratios: dict[Scenario, float] = {}
    for scenario, runs in results.items():
        medians: dict[str, float] = {}
        for client in dict.fromkeys(m.client for m in runs):  # in the order they ran
            mine = [m for m in runs if m.client == client]
            cpu = statistics.median(m.cpu_per_chunk for m in mine)
            wall = statistics.median(m.wall_per_chunk for m in mine)
            medians[client] = cpu
            ratio = cpu / medians["floor"]
            if client == "rxllm":
                ratios[scenario] = ratio
            spread = f"{min(m.cpu for m in mine):.3f}-{max(m.cpu for m in mine):.3f}"
            rows.append(
                (
                    scenario,
                    client,
                    f"{cpu:.3e}",
                    f"{wall:.3e}",
                    spread,
                    str(len(mine)),
                    f"{ratio:.2f}x",
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines), ratios


def telemetry_cost(results: dict[Scenario, list[Measurement]]) -> str:
    """What the telemetry operator adds per chunk: median CPU with it over without."""
    parts = []
    for scenario, runs in results.items():
        medians = {
            client: statistics.median(m.cpu_per_chunk for m in runs if m.client == client)
            for client in ("rxllm", TELEMETRY_CLIENT)
        }
        extra = medians[TELEMETRY_CLIENT] - medians["rxllm"]
        ratio = medians[TELEMETRY_CLIENT] / medians["rxllm"]
        parts.append(f"{scenario} {ratio:.2f}x ({extra * 1e6:+.2f} µs per chunk)")
    return "telemetry on / off: " + ", ".join(parts)


async def profile(server: ServerProcess, scenario: Scenario, chunks: int, top: int) -> str:
    """cProfile one rxllm run: where its time goes, by own time."""
    t = target(server, scenario, chunks)
    await measure("rxllm", t)  # warm
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    record = await rxllm_client(t)
    profiler.disable()
    check_record(t, record)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


async def _main(args: argparse.Namespace) -> int:
    scenarios: list[Scenario] = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    with ServerProcess(pace=args.pace) as server:
        clients = (*CLIENTS, TELEMETRY_CLIENT) if args.telemetry else CLIENTS
        results = await run(server, scenarios, args.chunks, args.repeat, args.warmup, clients)
        report, ratios = table(results)
        today = datetime.date.today().isoformat()
        print(
            f"rxllm benchmark, {today}: {args.chunks} chunks per stream, median of "
            f"{args.repeat} interleaved runs, CPU time of the client process only"
        )
        print(f"machine: {machine()}")
        print()
        print(report)
        print()
        verdicts = ", ".join(
            f"{scenario} {ratio:.2f}x ({'within' if ratio <= TARGET_RATIO else 'OVER'} "
            f"the {TARGET_RATIO}x bar)"
            for scenario, ratio in ratios.items()
        )
        print(f"rxllm / floor: {verdicts}")
        if args.telemetry:
            print(telemetry_cost(results))
        for scenario in scenarios if args.profile else ():
            print(f"\ncProfile of one rxllm run, {scenario}:")
            print(await profile(server, scenario, args.chunks, args.profile))
    if args.max_ratio is not None and any(r > args.max_ratio for r in ratios.values()):
        return 1
    return 0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.chunks < 1 or args.repeat < 1 or args.warmup < 0:
        print("benchmarks: --chunks and --repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_main(args))
    except HollowRun as exc:
        print(f"benchmarks: a run was hollow: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
