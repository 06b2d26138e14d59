"""Load: 1,000 concurrent streams on loopback against one local server, faults mixed in.

Every stream opens its own aiohttp ClientSession (no `session=` given), as a
careless app would: 1,000 client connections and 1,000 server ones at once, well
under this test's file-descriptor limit (raised to the hard limit if it must be).
Every record must end as its fault implies; afterwards no task is left pending, no
file descriptor is left open, and the loop reported no exception. Bounded: 60 s.
`RXLLM_SKIP_LOAD=1` skips it.
"""

from __future__ import annotations

import asyncio
import gc
import os
import resource
import time
from collections import Counter
from typing import Any

import pytest

import rxllm
from rxllm.events import StreamRecord
from rxllm.local import LocalServer
from rxllm.pipeline.record import RecordBuilder

STREAMS = 1_000
PACE = 0.001
WEATHER = rxllm.Tool(name="get_weather", parameters={"type": "object", "properties": {}})

pytestmark = pytest.mark.skipif(
    os.environ.get("RXLLM_SKIP_LOAD") == "1", reason="RXLLM_SKIP_LOAD=1"
)

# kind -> (model, tools offered, provider options); `check` says how each must end
KINDS: dict[str, tuple[str, bool, dict[str, Any]]] = {
    "answer": ("rxllm-local", False, {}),
    "tool call": ("fault/weather", True, {}),
    "error event": ("fault/error_event", False, {}),
    "truncated": ("fault/truncated", False, {}),
    "http 500": ("fault/http_500", False, {"max_attempts": 1}),
    "malformed tool": ("fault/malformed_tool", True, {}),
    "cancelled": ("rxllm-local", False, {}),
}
ORDER = ["answer", *KINDS]  # answers twice as often as each fault


def check(kind: str, record: StreamRecord) -> None:
    terminal = record.terminal
    if kind == "answer":
        assert terminal.type == "done" and terminal.stop_reason == "stop"
        assert record.text.startswith("Hello from rxllm") and record.usage is not None
    elif kind == "tool call":
        assert terminal.type == "done" and terminal.stop_reason == "tool_use"
        assert [c.arguments for c in record.tool_calls] == [
            {"city": "Paris", "unit": "celsius", "days": 3}
        ]
    elif kind == "cancelled":
        assert terminal.type == "cancelled"
    else:
        assert terminal.type == "error", (kind, terminal)
        expected = {
            "error event": "stream_error",
            "truncated": "truncated",
            "http 500": "http",
            "malformed tool": "malformed_tool_arguments",
        }[kind]
        assert terminal.error.kind == expected and terminal.error.provider == "local"
        if kind == "http 500":
            assert terminal.error.status == 500 and len(record.attempts) == 1


async def one(server: LocalServer, kind: str, i: int) -> StreamRecord:
    model, tools, options = KINDS[kind]
    request = rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.user(f"weather? #{i}")],
        tools=[WEATHER] if tools else [],
    )
    provider = rxllm.provider("local", base_url=server.url, **options)
    if kind != "cancelled":
        return await provider.complete(request)
    cancel = asyncio.Event()
    events: list[Any] = []
    async for event in provider.astream(request, cancel=cancel):
        events.append(event)
        if len(events) == 3:
            cancel.set()
    builder = RecordBuilder("local", model)
    for event in events:
        builder.add(event)
    return builder.build()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_thousand_concurrent_streams_with_faults() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 4 * STREAMS + 256  # client and server ends, with room to spare
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
    try:
        asyncio.run(scenario())
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def scenario() -> None:
    loop = asyncio.get_running_loop()
    problems: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: problems.append(context))
    gc.collect()
    before = open_fds()
    started = time.monotonic()
    kinds = [ORDER[i % len(ORDER)] for i in range(STREAMS)]
    async with LocalServer(pace=PACE) as server:
        async with asyncio.timeout(60):
            records = await asyncio.gather(*(one(server, k, i) for i, k in enumerate(kinds)))
        elapsed = time.monotonic() - started
        for kind, record in zip(kinds, records, strict=True):
            check(kind, record)
        assert len(server.requests) == STREAMS
        assert server.disconnects >= kinds.count("cancelled") * 0.9
    for _ in range(50):  # transports close on the next loop iterations
        gc.collect()
        await asyncio.sleep(0.01)
        if open_fds() <= before:
            break
    left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not left, left[:5]
    assert open_fds() <= before, (before, open_fds())
    assert not problems, problems[:5]
    counts = Counter(kinds)
    print(f"\n{STREAMS} streams {dict(counts)} in {elapsed:.2f} s")
