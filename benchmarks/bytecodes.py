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

`--against TREE` counts a third client beside them: rxllm's, importing the `rxllm` of
another checkout or worktree (say, the commit before a change), so that what a change
bought reads off one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import sys
import sysconfig
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, NoReturn

import rxllm
from benchmarks import scale
from benchmarks.clients import HollowRun
from benchmarks.server import ServerProcess

__all__ = ["main"]

PHASES = ("first_pass", "first_text", "event")
# Where this process imports its own code from, as imported (`--against` links another
# tree's `rxllm` beside this `benchmarks`): `rxllm/...` and `benchmarks/...` in the names.
_OWN = ((str(Path(rxllm.__file__).parent), "rxllm"), (str(Path(__file__).parent), "benchmarks"))
_INSTALLED = tuple(sysconfig.get_paths()[key] for key in ("purelib", "platlib", "stdlib"))


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
        reads = sum(n for code, n in self.calls.items() if code.co_name in scale.SOCKET_READS)
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
            "rxllm_from": str(Path(rxllm.__file__).resolve().parent),
        }
        print(json.dumps(out))
        sys.stdout.flush()
        os._exit(0)


def _library(filename: str) -> str:
    """`rxllm`, `benchmarks`, a distribution's top package or a standard module's name;
    `<string>` for code compiled at run time (a dataclass's `__init__`)."""
    return _path(filename).split(os.sep, 1)[0].removesuffix(".py")


def _path(filename: str) -> str:
    """`filename` from its package's folder on (`rxllm/...`), or from where a library
    is installed (`aiohttp/...`, `asyncio/...`)."""
    for place, name in _OWN:
        if filename.startswith(place + os.sep):
            return name + filename[len(place) :]
    for place in _INSTALLED:
        if filename.startswith(place + os.sep):
            return filename[len(place) + 1 :]
    return filename


def _name(code: CodeType) -> str:
    return f"{_path(code.co_filename)}:{code.co_firstlineno}:{code.co_qualname}"


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


def count(
    server: ServerProcess, args: argparse.Namespace, against: str | None = None
) -> dict[str, dict[str, Any]]:
    """Each phase for each client, in children of their own; `against`: a folder where
    a third client's children (`against`, rxllm's client) import another tree's rxllm."""
    roots = {"floor": scale._ROOT, "rxllm": scale._ROOT}
    if against is not None:
        roots["against"] = against
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
                "floor" if client == "floor" else "rxllm",
                phase,
                url,
                str(streams),
                str(args.events),
                module="benchmarks.bytecodes",
                root=root,
            )
            for client, root in roots.items()
        }
    return counts


@contextlib.contextmanager
def _beside(tree: str | None) -> Iterator[str | None]:
    """A folder where `rxllm` is `tree`'s and `benchmarks` this one (links to both),
    for the duration; None without a tree. Its children write the bytecode through the
    links, as this tree's do (`scale._cache_bytecode`)."""
    if tree is None:
        yield None
        return
    package = Path(tree, "rxllm").resolve()
    if not (package / "__init__.py").is_file():
        raise SystemExit(f"--against {tree}: no rxllm package there (a checkout or worktree?)")
    with tempfile.TemporaryDirectory(prefix="rxllm-against-") as folder:
        os.symlink(package, Path(folder, "rxllm"))
        os.symlink(Path(__file__).resolve().parent, Path(folder, "benchmarks"))
        yield folder


def report(counts: dict[str, dict[str, Any]], top: int) -> str:
    """The totals side by side (with `against`, that tree's rxllm too, and how much more
    this tree's own code runs); then, per phase, each library's part and rxllm's own
    functions that ran most."""
    against = any("against" in clients for clients in counts.values())
    head = f"{'phase':<11} {'per':<7} {'floor':>8} {'rxllm':>8} {'ratio':>6}  {'rxllm own':>9}"
    if against:
        head += f"  {'against':>8} {'its own':>8} {'change':>7}"
    lines = [head + "  socket reads (floor, rxllm)"]
    for phase, clients in counts.items():
        floor, rx = clients["floor"], clients["rxllm"]
        own = rx["libraries"].get("rxllm", 0)
        line = (
            f"{phase:<11} {rx['per']:<7} {floor['bytecodes']:>8,.0f} {rx['bytecodes']:>8,.0f} "
            f"{rx['bytecodes'] / floor['bytecodes']:>5.2f}x  {own:>9,.0f}"
        )
        if against:
            other = clients["against"]
            its_own = other["libraries"].get("rxllm", 0)
            line += f"  {other['bytecodes']:>8,.0f} {its_own:>8,.0f} {own - its_own:>+7,.0f}"
        lines.append(f"{line}  {floor['reads']:.2f}, {rx['reads']:.2f}")
    if against:
        first = next(iter(counts.values()))
        lines.append(f"(against: rxllm from {first['against']['rxllm_from']})")
    for phase, clients in counts.items():
        lines.append(f"\n{phase}, bytecodes per {clients['rxllm']['per']} by library:")
        lines.append(f"  {'floor':>8} {'rxllm':>8}")
        parts = [clients[client]["libraries"] for client in ("floor", "rxllm")]
        for name in sorted(set().union(*parts), key=lambda n: -max(p.get(n, 0) for p in parts)):
            floor, rx = (part.get(name, 0) for part in parts)
            if max(floor, rx) >= 1:
                lines.append(f"  {floor:>8,.1f} {rx:>8,.1f}  {name}")
        lines.append(f"{phase}, rxllm's own functions that ran most:")
        own_functions = [
            (name, ops) for name, ops in clients["rxllm"]["functions"] if name.startswith("rxllm")
        ]
        lines.extend(f"  {ops:>8,.1f}  {name}" for name, ops in own_functions[:top])
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
    parser.add_argument(
        "--against",
        metavar="TREE",
        help="also count rxllm as another checkout or worktree has it (an A/B in one run)",
    )
    parser.add_argument("--json", help="also write the counts there")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.child:
        client, phase, url, streams, events = args.child
        child(client, phase, url, int(streams), int(events))
    with ServerProcess() as server, _beside(args.against) as against:
        counts = count(server, args, against)
    print(report(counts, args.top))
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
