"""Shared test helpers: the real captures, random re-chunking, event summaries."""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from loguru import logger

import rxllm
from rxllm.events import Done, Event, Failed, ReasoningDelta, TextDelta, ToolRequest, UsageUpdate

# The captures are third-party recordings kept beside the project (CI has them there);
# they are read in place, never copied in.
CAPTURES = Path(
    os.environ.get("RXLLM_CAPTURES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "captures"
)


REJECTIONS = Path(
    os.environ.get("RXLLM_REJECTIONS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "rejections"
)
"""Real rejection bodies from OpenAI-compatible endpoints, beside the captures."""

HAVE_CAPTURES = CAPTURES.is_dir()
NO_CAPTURES = (
    "needs the real provider recordings (captures and rejection bodies), which are not "
    f"beside the project ({CAPTURES.parent}): CI has them; in a plain clone, put the "
    "shared folder beside the project or set RXLLM_CAPTURES and RXLLM_REJECTIONS"
)
"""The one reason every test that needs the shared recordings skips with."""
needs_captures = pytest.mark.skipif(not HAVE_CAPTURES, reason=NO_CAPTURES)
"""For a test that reads the captures without a parameter per capture."""


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Serve = Callable[[Handler], Awaitable[str]]
"""The `serve` fixture (tests/conftest.py): a handler in, the loopback base URL out."""
ServeBody = Callable[[bytes], Awaitable[str]]
"""The `serve_body` fixture (tests/conftest.py): fixed SSE bytes in, the base URL out."""


# One short complete turn of each wire a `Recorder` answers in.
ANTHROPIC_ANSWER = "".join(
    f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"
    for payload in (
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [],
                "usage": {"input_tokens": 3, "output_tokens": 0},
            },
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    )
).encode()
CHAT_ANSWER = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)
GEMINI_ANSWER = (
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},'
    b'"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"totalTokenCount":4}}\n\n'
)


class Recorder:
    """A loopback endpoint that records each request (path, query, headers, JSON body).
    It answers the first `refusals` with their (status, JSON body) in turn, then one
    short, complete turn of the wire it was asked in (`answers` replaces it, by path
    suffix)."""

    def __init__(
        self, *refusals: tuple[int, dict[str, Any]], answers: dict[str, bytes] | None = None
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        self.refusals = list(refusals)
        self.answers = answers or {}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(
            {
                "path": request.path,
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": await request.json(),
            }
        )
        if self.refusals:
            status, error = self.refusals.pop(0)
            return web.json_response(error, status=status)
        answer = ANTHROPIC_ANSWER if request.path.endswith("/messages") else CHAT_ANSWER
        if request.path.endswith(":streamGenerateContent"):
            answer = GEMINI_ANSWER
        for suffix, replacement in self.answers.items():
            if request.path.endswith(suffix):
                answer = replacement
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(answer)
        return response


async def drain(source: Any, timeout: float = 10) -> list[Any]:
    """Every item an Observable emits until it completes (subscribed on the running
    loop); its `on_error` raised here, and a source that never ends, after `timeout`."""
    items: list[Any] = []
    done = asyncio.get_running_loop().create_future()
    source.subscribe(items.append, done.set_exception, lambda: done.set_result(None))
    await asyncio.wait_for(done, timeout=timeout)
    return items


def capture(relative: str) -> bytes:
    """The bytes of a capture, e.g. `capture("openai/chat_text_usage.sse")`."""
    return (CAPTURES / relative).read_bytes()


def captures_of(folder: str) -> list[Path]:
    return sorted((CAPTURES / folder).glob("*.sse"))


def rechunk(data: bytes, seed: int, max_size: int = 17) -> list[bytes]:
    """`data` cut at random byte boundaries (inside UTF-8 characters and CRLFs too)."""
    rng = random.Random(seed)
    chunks, start = [], 0
    while start < len(data):
        size = rng.randint(1, max_size)
        chunks.append(data[start : start + size])
        start += size
    return chunks


def replay(data: Any, provider: str) -> list[Event]:
    events: list[Event] = []
    errors: list[Exception] = []
    rxllm.replay(data, provider=provider).subscribe(events.append, errors.append)
    assert not errors, errors
    return events


@dataclass
class Summary:
    """What a stream said, folded: the facts each capture test asserts."""

    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    signatures: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    usage: rxllm.Usage | None = None
    terminal: str = ""
    stop_reason: str | None = None
    raw_stop_reason: str | None = None
    error_kind: str | None = None
    model: str | None = None
    providers: set[str] = field(default_factory=set)


def summarize(events: list[Event]) -> Summary:
    out = Summary()
    for ev in events:
        out.providers.add(ev.provider)
        if isinstance(ev, TextDelta):
            out.text += ev.text
        elif isinstance(ev, ReasoningDelta):
            out.reasoning += ev.text
            if ev.signature:
                out.signatures.append(ev.signature)
        elif isinstance(ev, ToolRequest):
            out.tool_calls.append((ev.call_id, ev.name, ev.arguments))
        elif isinstance(ev, UsageUpdate):
            out.usage = ev.usage
        elif isinstance(ev, Done):
            out.terminal, out.stop_reason, out.raw_stop_reason = (
                "done",
                ev.stop_reason,
                ev.raw_stop_reason,
            )
            out.model = ev.model
        elif isinstance(ev, Failed):
            out.terminal, out.error_kind = "error", ev.error.kind
        elif isinstance(ev, rxllm.Refusal):
            out.refusal += ev.text
        elif isinstance(ev, rxllm.Cancelled):
            out.terminal = ev.type
    terminals = [ev for ev in events if ev.type in ("done", "error", "cancelled")]
    assert len(terminals) == 1 and events[-1] is terminals[0], "exactly one terminal, last"
    return out


# Random cuts: tiny pieces (inside every UTF-8 sequence and CRLF) and network-sized ones.
_CUTS = [(size, seed) for size in (1, 2, 3) for seed in range(3)] + [
    (size, seed) for size in (7, 17, 64, 1024) for seed in range(4)
]


def replay_every_way(data: bytes, provider: str) -> list[Event]:
    """The events of `data`, checked to be identical whatever the chunking."""
    whole = replay(data, provider)
    for max_size, seed in _CUTS:
        assert replay(rechunk(data, seed, max_size), provider) == whole, (max_size, seed)
    crlf = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    for seed in range(3):
        assert replay(rechunk(crlf, seed, 3), provider) == whole, ("crlf", seed)
    return whole


Call = tuple[str, str, dict[str, Any]]


@dataclass(frozen=True)
class Expect:
    """What a capture says, read from its bytes."""

    text: str | None = None
    """The whole visible text, exactly (None: see `text_has`)."""
    refusal: str = ""
    """What the model said in declining, exactly (never part of `text`)."""
    text_has: tuple[str, ...] = ()
    text_len: int | None = None
    reasoning: str | None = ""
    reasoning_has: tuple[str, ...] = ()
    reasoning_len: int | None = None
    signatures: int = 0
    tools: tuple[Call, ...] = ()
    usage: tuple[int, int, int, int, int] | None = None
    """(input, output incl. reasoning, reasoning, cache read, total)."""
    cache_write: int = 0
    cost: float | None = None
    terminal: str = "done"
    stop_reason: str | None = "stop"
    raw_stop_reason: str | None = "stop"
    error_kind: str | None = None
    model: str | None = None


def check(summary: Summary, expect: Expect) -> None:
    assert summary.refusal == expect.refusal
    if expect.text is not None:
        assert summary.text == expect.text
    for piece in expect.text_has:
        assert piece in summary.text
    if expect.text_len is not None:
        assert len(summary.text) == expect.text_len
    if expect.reasoning is not None:
        assert summary.reasoning == expect.reasoning
    for piece in expect.reasoning_has:
        assert piece in summary.reasoning
    if expect.reasoning_len is not None:
        assert len(summary.reasoning) == expect.reasoning_len
    assert len(summary.signatures) == expect.signatures
    assert tuple(summary.tool_calls) == expect.tools
    if expect.usage is None:
        assert summary.usage is None
    else:
        usage = summary.usage
        assert usage is not None
        got = (
            usage.input_tokens,
            usage.output_tokens,
            usage.reasoning_tokens,
            usage.cache_read_tokens,
            usage.total_tokens,
        )
        assert got == expect.usage
        assert usage.cache_write_tokens == expect.cache_write
        assert usage.total_tokens == (
            usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_tokens
            + usage.cache_write_tokens
        )
        if expect.cost is None:
            assert usage.cost_usd is None
        else:
            assert usage.cost_usd == pytest.approx(expect.cost)
    assert summary.terminal == expect.terminal
    if expect.terminal == "done":
        assert summary.stop_reason == expect.stop_reason
        assert summary.raw_stop_reason == expect.raw_stop_reason
        assert summary.model == expect.model
    else:
        assert summary.error_kind == expect.error_kind


def kinds(events: list[Event]) -> list[str]:
    """Event types in order, consecutive repeats of text/reasoning collapsed."""
    out: list[str] = []
    for event in events:
        if not (out and out[-1] == event.type and event.type in ("text", "reasoning")):
            out.append(event.type)
    return out


@contextmanager
def log_messages(level: str = "DEBUG") -> Iterator[list[str]]:
    """rxllm's log messages at `level` and above while the block runs (rxllm's logging
    is off by default: it is on for the block only)."""
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level=level)
    logger.enable("rxllm")
    try:
        yield messages
    finally:
        logger.disable("rxllm")
        logger.remove(sink)
