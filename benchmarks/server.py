"""The loopback streaming server of the benchmark, run in its own process.

It serves OpenAI Chat Completions streams built once per (scenario, size) and cached,
so every client gets exactly the same bytes; each SSE event is its own `write`. The
client measures `time.process_time()` in its own process, so none of this server's
CPU time is counted. `GET /stats` lists what each request was sent, so the runner can
check that both clients saw the same bytes, to the end.

Run alone: `python -m benchmarks.server --port 8766` (prints its base URL, then serves
until stdin closes or SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeAlias

from aiohttp import web

__all__ = [
    "ARGUMENT_CHARS_PER_FRAGMENT",
    "MODEL",
    "SCENARIOS",
    "Scenario",
    "ServerProcess",
    "Stream",
    "main",
    "stream_of",
]

# The project root, so the child imports this very package whatever the caller's cwd.
_ROOT = str(Path(__file__).resolve().parents[1])

Scenario: TypeAlias = Literal["text", "tool"]
SCENARIOS: tuple[Scenario, ...] = ("text", "tool")

MODEL = "gpt-4.1-mini"
SERVED_MODEL = "gpt-4.1-mini-2025-04-14"
TOOL_NAME = "write_file"
CALL_ID = "call_bench0000000000000000"
# The requirement: ~240 KB of arguments in 20,000 fragments, so 12 characters each.
ARGUMENT_CHARS_PER_FRAGMENT = 12

# Words of the text scenario, cycled; a few non-ASCII ones so UTF-8 is exercised.
_PROSE = (
    "The stream arrives token by token, and each token is one chunk; "
    "a café serves naïve users → quickly, with déjà vu. Streaming is mostly waiting:"
)
_WORDS = tuple(_PROSE.split(" "))


@dataclass(frozen=True)
class Stream:
    """One scenario's response body, event by event, and what a client must get from it."""

    scenario: Scenario
    chunks: int
    frames: tuple[bytes, ...]
    """Each SSE event (`data: ...\\n\\n`), written one at a time."""
    json_chunks: int
    """Events whose data is a JSON chunk (all but `[DONE]`): the floor's count."""
    text: str
    arguments_json: str
    digest: str
    """sha256 of the whole body."""
    fragment: int = ARGUMENT_CHARS_PER_FRAGMENT
    """Characters per tool-argument fragment (the tool scenario)."""

    @property
    def size(self) -> int:
        return sum(len(frame) for frame in self.frames)

    @property
    def arguments(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.arguments_json) if self.arguments_json else {}
        return parsed


def _frame(chunk: dict[str, Any]) -> bytes:
    return (
        b"data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"
    )


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    # The shape OpenAI sends with stream_options.include_usage: "usage": null on each chunk.
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": SERVED_MODEL,
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }


def _usage_chunk(completion_tokens: int) -> dict[str, Any]:
    chunk = _chunk({})
    chunk["choices"] = []
    chunk["usage"] = {
        "prompt_tokens": 42,
        "completion_tokens": completion_tokens,
        "total_tokens": 42 + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    return chunk


def text_deltas(chunks: int) -> list[str]:
    """The text scenario's deltas: words with their leading space, as tokenizers cut them."""
    return [("" if i == 0 else " ") + _WORDS[i % len(_WORDS)] for i in range(chunks)]


def tool_arguments(chunks: int, fragment: int = ARGUMENT_CHARS_PER_FRAGMENT) -> str:
    """A `write_file` call's JSON arguments of about `chunks * fragment` characters: a
    source file with quotes, backslashes and newlines, which the wire escapes once more."""
    target = chunks * fragment
    head = '{"path": "src/generated.py", "mode": "overwrite", "content": "'
    tail = '"}'
    lines: list[str] = []
    size = len(head) + len(tail)
    while size < target:
        n = len(lines)
        line = f'def handler_{n}(event: dict) -> str:\n    return "ok\\t{n}"\n'
        escaped = json.dumps(line, ensure_ascii=False)[1:-1]
        lines.append(escaped)
        size += len(escaped)
    return head + "".join(lines) + tail


def _split(text: str, parts: int) -> list[str]:
    size, extra = divmod(len(text), parts)
    pieces, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


@cache
def stream_of(
    scenario: Scenario, chunks: int, fragment: int = ARGUMENT_CHARS_PER_FRAGMENT
) -> Stream:
    """The body of `scenario` with `chunks` content chunks (text deltas or argument
    fragments of about `fragment` characters), framed as OpenAI sends it: a role chunk,
    the content chunks, a finish chunk, a usage chunk, then `[DONE]`."""
    if chunks < 1:
        raise ValueError("chunks must be at least 1")
    text, arguments = "", ""
    if scenario == "text":
        deltas = text_deltas(chunks)
        text = "".join(deltas)
        body = [_chunk({"role": "assistant", "content": "", "refusal": None})]
        body += [_chunk({"content": delta}) for delta in deltas]
        finish = "stop"
    elif scenario == "tool":
        arguments = tool_arguments(chunks, fragment)
        call = {
            "index": 0,
            "id": CALL_ID,
            "type": "function",
            "function": {"name": TOOL_NAME, "arguments": ""},
        }
        body = [_chunk({"role": "assistant", "content": None, "tool_calls": [call]})]
        body += [
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            for piece in _split(arguments, chunks)
        ]
        finish = "tool_calls"
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    body += [_chunk({}, finish), _usage_chunk(chunks)]
    frames = (*(_frame(chunk) for chunk in body), b"data: [DONE]\n\n")
    digest = hashlib.sha256(b"".join(frames)).hexdigest()
    return Stream(scenario, chunks, frames, len(body), text, arguments, digest, fragment)


# -- the server ---------------------------------------------------------------------------


def make_app(pace: float = 0.0) -> web.Application:
    """`POST /{scenario}/{chunks}/v1/chat/completions` streams; `GET /stats` reports.

    With `pace` (seconds), the server sleeps that long after each write, blocking its
    own process: the client then gets about one event per read, as from a real model,
    instead of the large reads a client slower than its server gets.

    `POST /{scenario}/{chunks}/{fragment}/v1/...` sets the characters per tool-argument
    fragment; `POST /{scenario}/{chunks}/{fragment}/{rate}/v1/...` paces each stream at
    `rate` events per second without blocking, so many streams run at once, each as
    from a real model (the role chunk at once, then one event every 1/rate s).
    """
    served: list[dict[str, Any]] = []

    async def completions(request: web.Request) -> web.StreamResponse:
        scenario = request.match_info["scenario"]
        if scenario not in SCENARIOS:
            raise web.HTTPNotFound(text=f"unknown scenario {scenario!r}")
        body = await request.json()
        if body.get("stream") is not True:
            raise web.HTTPBadRequest(text="this server only streams")
        info = request.match_info
        fragment = int(info.get("fragment") or ARGUMENT_CHARS_PER_FRAGMENT)
        stream = stream_of(scenario, int(info["chunks"]), fragment)
        rate = float(info.get("rate") or 0)
        record: dict[str, Any] = {
            "scenario": scenario,
            "chunks": stream.chunks,
            "fragment": stream.fragment,
            "digest": stream.digest,
            "bytes": 0,
            "complete": False,
        }
        served.append(record)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        sent = 0
        try:
            for i, frame in enumerate(stream.frames):  # one write per event, as servers flush
                if rate and i:
                    await asyncio.sleep(1 / rate)
                await response.write(frame)
                sent += len(frame)
                if pace:
                    time.sleep(pace)
        except ConnectionError:  # the client hung up (or, the floor, could not read a line)
            return response
        # Recorded before the end of the body, so a client that has seen its end (and
        # then asks for /stats) always finds it recorded.
        record["bytes"] = sent
        record["complete"] = True
        await response.write_eof()
        return response

    async def stats(request: web.Request) -> web.Response:
        return web.json_response(served)

    app = web.Application()
    app.router.add_post(r"/{scenario}/{chunks:\d+}/v1/chat/completions", completions)
    app.router.add_post(r"/{scenario}/{chunks:\d+}/{fragment:\d+}/v1/chat/completions", completions)
    app.router.add_post(
        r"/{scenario}/{chunks:\d+}/{fragment:\d+}/{rate:[\d.]+}/v1/chat/completions",
        completions,
    )
    app.router.add_get("/stats", stats)
    return app


async def serve(host: str, port: int, pace: float = 0.0, watch_stdin: bool = False) -> None:
    runner = web.AppRunner(make_app(pace), access_log=None)
    await runner.setup()
    # A deep backlog: a thousand clients connecting at once must not wait for SYN retries.
    site = web.TCPSite(runner, host, port, backlog=4096)
    await site.start()
    server = site._server
    assert server is not None
    bound = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
    print(f"http://{host}:{bound}", flush=True)

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if watch_stdin:  # the parent closing our stdin (or dying) stops us: no orphans
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        watcher = loop.create_task(reader.read())
        watcher.add_done_callback(lambda _: stop.set())
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--pace", type=float, default=0.0, help="seconds to sleep after each event (default 0)"
    )
    parser.add_argument(
        "--watch-stdin", action="store_true", help="stop when stdin closes (for a parent)"
    )
    args = parser.parse_args(argv)
    asyncio.run(serve(args.host, args.port, args.pace, args.watch_stdin))
    return 0


class ServerProcess:
    """`with ServerProcess() as server:` starts the server in a child process; `url` is
    its root, `base_url(scenario, chunks)` what a provider is given."""

    def __init__(self, host: str = "127.0.0.1", pace: float = 0.0) -> None:
        self.host = host
        self.pace = pace
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def base_url(
        self, scenario: Scenario, chunks: int, fragment: int | None = None, rate: float = 0
    ) -> str:
        if fragment is None and not rate:
            return f"{self.url}/{scenario}/{chunks}/v1"
        fragment = ARGUMENT_CHARS_PER_FRAGMENT if fragment is None else fragment
        paced = f"/{rate:g}" if rate else ""
        return f"{self.url}/{scenario}/{chunks}/{fragment}{paced}/v1"

    def __enter__(self) -> ServerProcess:
        pythonpath = os.environ.get("PYTHONPATH", "")
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.server",
                "--host",
                self.host,
                "--pace",
                repr(self.pace),
                "--watch-stdin",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=_ROOT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_ROOT, pythonpath]))},
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("http://"):
            self.close()
            raise RuntimeError(f"the benchmark server did not start (it said {line!r})")
        self.url = line
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
