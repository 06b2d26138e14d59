"""`python -m benchmarks.bytecodes`: the bytecodes each client runs, side by side.

At 1,000 streams a client's seconds move by a third from run to run on a shared
machine; the bytecodes it runs do not. This counts them, with `sys.settrace` and
`f_trace_opcodes`, in three phases of the `streams` scenario's clients (the same code
as `benchmarks.scale`), each client in a fresh child process with the garbage
collector off (so that a collection's work is nobody's):

- `first_pass`: the loop's pass over N streams' first steps, up to each connect
  (`scale`'s `first_pass` ends there too): every stream's first text waits for all of
  it. Per stream.
- `first_text`: from the launch to every stream's first text, the texts a second apart
  (`--first-pace`) so that none reads a second one before the count ends. Per stream.
- `event`: per text event once every stream has had its first, over `--events` events
  (`--event-streams` paced streams: few enough that the traced client keeps up with the
  pace, so that a read holds one event, as it does at full speed). With the socket
  reads per event: a read of several events costs less per event.

Each figure: the total, each library's part (`rxllm` is the library's own, `json` the
floor's `json.loads`, `benchmarks` each client's loop over what it reads) and the
functions that ran most. On one tree a phase's count repeats within 1% (the first
pass's to the bytecode); the tracer's slowness is not counted, only what runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import sysconfig
from collections import Counter
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, NoReturn

from benchmarks import scale
from benchmarks.clients import HollowRun
from benchmarks.server import ServerProcess

__all__ = ["main"]

PHASES = ("first_pass", "first_text", "event")
_ROOT = Path(__file__).resolve().parents[1]
_PLACES = (
    (str(_ROOT / "rxllm"), "rxllm"),
    (str(_ROOT / "benchmarks"), "benchmarks"),
    (sysconfig.get_paths()["purelib"], ""),
    (sysconfig.get_paths()["platlib"], ""),
    (sysconfig.get_paths()["stdlib"], ""),
)


class _Tally:
    """Bytecodes run and calls made (a coroutine's resumption is one), per code object,
    while tracing."""

    def __init__(self) -> None:
        self.ops: Counter[CodeType] = Counter()
        self.calls: Counter[CodeType] = Counter()
        self.skip: set[CodeType] = set()  # the counting's own functions

    def start(self) -> None:
        ops, calls = self.ops, self.calls

        def opcode(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "opcode":
                ops[frame.f_code] += 1
            return opcode

        def call(frame: FrameType, event: str, arg: Any) -> Any:
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            calls[frame.f_code] += 1
            return opcode

        sys.settrace(call)

    def report(self, client: str, phase: str, per: str, count: int, later_texts: int) -> NoReturn:
        """Stop, print the counts per `per` as JSON (the functions that ran at least once
        per `per`), and exit: nothing after is counted."""
        sys.settrace(None)
        for code in self.skip:
            self.ops.pop(code, None)
        libraries: Counter[str] = Counter()
        for code, ops in self.ops.items():
            libraries[_library(code.co_filename)] += ops
        reads = sum(n for code, n in self.calls.items() if code.co_name in _SOCKET_READS)
        out = {
            "client": client,
            "phase": phase,
            "per": per,
            "count": count,
            "bytecodes": sum(self.ops.values()) / count,
            "libraries": {name: ops / count for name, ops in libraries.most_common()},
            "functions": [
                [_name(code), ops / count] for code, ops in self.ops.most_common() if ops >= count
            ],
            "later_texts": later_texts / count,
            "reads": reads / count,
        }
        print(json.dumps(out))
        sys.stdout.flush()
        os._exit(0)


# asyncio's read from a socket into its protocol (`_SelectorSocketTransport._read_ready`
# calls one of them); not `data_received`, which aiohttp also calls with no data each
# time its reader asks the transport to resume (so once per `readline`).
_SOCKET_READS = frozenset({"_read_ready__data_received", "_read_ready__get_buffer"})


def _library(filename: str) -> str:
    """`rxllm`, `benchmarks`, a distribution's top package or a standard module's name;
    `<string>` for code compiled at run time (a dataclass's `__init__`)."""
    for place, name in _PLACES:
        if filename.startswith(place + os.sep):
            return name or Path(filename[len(place) + 1 :]).parts[0].removesuffix(".py")
    return filename


def _name(code: CodeType) -> str:
    """`path:line:qualified name`, the path from the project's root, or from where a
    library is installed."""
    filename = code.co_filename
    for place in (*(place for place, name in _PLACES if not name), str(_ROOT)):
        if filename.startswith(place + os.sep):
            filename = filename[len(place) + 1 :]
            break
    return f"{filename}:{code.co_firstlineno}:{code.co_qualname}"


def child(client: str, phase: str, base_url: str, streams: int, events: int) -> NoReturn:
    """Count `phase` for `client`'s `streams` streams in this (fresh) process, print
    the count and exit (`_Tally.report`)."""
    scale._raise_file_limit()
    gc.disable()
    tally = _Tally()
    started = False  # the client's warm-up stream is not counted
    firsts = texts = 0

    def start() -> None:
        nonlocal started
        started = True
        if phase == "event":
            return  # counted from the last stream's first text on
        if phase == "first_pass":  # where `scale`'s `first_pass` scenario ends it
            looking = scale.at_pass_end(end_of_pass)
            tally.skip.update((looking.__code__, end_of_pass.__code__))
        tally.start()

    def end_of_pass() -> NoReturn:
        tally.report(client, phase, "stream", streams, 0)

    def seen(first: bool) -> None:
        nonlocal firsts, texts
        if not started:
            return
        if not first:
            texts += 1  # for `first_text`, texts after a first one: it should see none
            if phase == "event" and firsts == streams and texts == events:
                tally.report(client, phase, "event", events, 0)
            return
        firsts += 1
        if firsts < streams:
            return
        if phase == "first_text":
            tally.report(client, phase, "stream", streams, texts)
        tally.start()  # (`event`) the window starts
        texts = 0

    async def run() -> None:
        await scale._STREAM_CLIENTS[client](base_url, streams, start, seen)

    tally.skip.update((seen.__code__, _Tally.report.__code__))
    asyncio.run(run())
    raise HollowRun(f"{client}'s streams ended before the {phase} count did")


def count(server: ServerProcess, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each phase for each client, in children of their own."""
    counts: dict[str, dict[str, Any]] = {}
    for phase in args.phase:
        if phase == "event":
            if args.event_streams * (args.deltas - 2) <= args.events:
                raise SystemExit(
                    f"{args.event_streams} streams of {args.deltas} deltas cannot give "
                    f"{args.events} events after their first"
                )
            url = server.base_url("text", args.deltas, rate=args.pace)
            streams = args.event_streams
        else:
            # The role chunk at once and each text a second apart (`--first-pace`): no
            # stream reads a second text before the last one's first (`later_texts` in
            # the JSON says if one did).
            url, streams = server.base_url("text", 3, rate=args.first_pace), args.streams
        counts[phase] = {
            client: scale._in_child(
                client, phase, url, str(streams), str(args.events), module="benchmarks.bytecodes"
            )
            for client in ("floor", "rxllm")
        }
    return counts


def report(counts: dict[str, dict[str, Any]], top: int) -> str:
    """The totals side by side; then, per phase, each library's part and rxllm's own
    functions that ran most."""
    lines = [
        f"{'phase':<11} {'per':<7} {'floor':>8} {'rxllm':>8} {'ratio':>6}  "
        f"{'rxllm own':>9}  socket reads (floor, rxllm)"
    ]
    for phase, clients in counts.items():
        floor, rx = clients["floor"], clients["rxllm"]
        lines.append(
            f"{phase:<11} {rx['per']:<7} {floor['bytecodes']:>8,.0f} {rx['bytecodes']:>8,.0f} "
            f"{rx['bytecodes'] / floor['bytecodes']:>5.2f}x  "
            f"{rx['libraries'].get('rxllm', 0):>9,.0f}  {floor['reads']:.2f}, {rx['reads']:.2f}"
        )
    for phase, clients in counts.items():
        lines.append(f"\n{phase}, bytecodes per {clients['rxllm']['per']} by library:")
        lines.append(f"  {'floor':>8} {'rxllm':>8}")
        parts = [client["libraries"] for client in clients.values()]
        for name in sorted(set().union(*parts), key=lambda n: -max(p.get(n, 0) for p in parts)):
            floor, rx = (part.get(name, 0) for part in parts)
            if max(floor, rx) >= 1:
                lines.append(f"  {floor:>8,.1f} {rx:>8,.1f}  {name}")
        lines.append(f"{phase}, rxllm's own functions that ran most:")
        own = [
            (name, ops) for name, ops in clients["rxllm"]["functions"] if name.startswith("rxllm")
        ]
        lines.extend(f"  {ops:>8,.1f}  {name}" for name, ops in own[:top])
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bytecodes", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--phase", nargs="+", choices=PHASES, default=list(PHASES))
    parser.add_argument(
        "--streams", type=int, default=100, help="streams launched, for the first two (100)"
    )
    parser.add_argument(
        "--event-streams", type=int, default=20, help="paced streams for `event` (20)"
    )
    parser.add_argument("--events", type=int, default=2000, help="events counted (2000)")
    parser.add_argument(
        "--deltas", type=int, default=200, help="text deltas per stream, for `event` (200)"
    )
    parser.add_argument("--pace", type=float, default=20, help="events per second, `event` (20)")
    parser.add_argument(
        "--first-pace", type=float, default=1, help="events per second, the first two (1)"
    )
    parser.add_argument("--top", type=int, default=25, help="functions listed per phase (25)")
    parser.add_argument("--json", help="also write the counts there")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.child:
        client, phase, url, streams, events = args.child
        child(client, phase, url, int(streams), int(events))
    with ServerProcess() as server:
        counts = count(server, args)
    print(report(counts, args.top))
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
