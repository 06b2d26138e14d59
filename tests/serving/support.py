"""Helpers of the serving tests: run the encoder, read its SSE frames back, and check
them against the rules the `ai` client enforces (the Node test checks with the client
itself; this is the same list in Python, so a plain `pytest` without Node sees it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import reactivex
from reactivex import Observable

from rxllm.events import Event
from rxllm.serving import ui_message_stream

# `finishReason`s that both `ai` 5.x and 6.x accept (6.x dropped `unknown`).
FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}
# Every chunk type the `ai` package's schema knows: the keys each must carry, then the
# optional ones. Until 5.0.2xx, and in 6.0.0, the schema is a union of `strictObject`s:
# a key not listed refuses the chunk, and with it the whole stream. These are the keys
# of `ai@5.0.92` (the first whose `finish` takes a `finishReason`), which 6.0.0 accepts
# too; later versions read unknown keys, so what passes here passes there.
REQUIRED = {
    "start": (),
    "start-step": (),
    "text-start": ("id",),
    "text-delta": ("id", "delta"),
    "text-end": ("id",),
    "reasoning-start": ("id",),
    "reasoning-delta": ("id", "delta"),
    "reasoning-end": ("id",),
    "tool-input-start": ("toolCallId", "toolName"),
    "tool-input-available": ("toolCallId", "toolName", "input"),
    "tool-input-error": ("toolCallId", "toolName", "input", "errorText"),
    "tool-output-available": ("toolCallId", "output"),
    "tool-output-error": ("toolCallId", "errorText"),
    "source-url": ("sourceId", "url"),
    "message-metadata": ("messageMetadata",),
    "error": ("errorText",),
    "finish-step": (),
    "finish": (),
    "abort": (),
}
OPTIONAL = {
    "start": ("messageId", "messageMetadata"),
    "text-start": ("providerMetadata",),
    "text-delta": ("providerMetadata",),
    "text-end": ("providerMetadata",),
    "reasoning-start": ("providerMetadata",),
    "reasoning-delta": ("providerMetadata",),
    "reasoning-end": ("providerMetadata",),
    "tool-input-start": ("providerExecuted", "dynamic"),
    "tool-input-available": ("providerExecuted", "providerMetadata", "dynamic"),
    "tool-input-error": ("providerExecuted", "providerMetadata", "dynamic"),
    "tool-output-available": ("providerExecuted", "dynamic", "preliminary"),
    "tool-output-error": ("providerExecuted", "dynamic"),
    "source-url": ("title", "providerMetadata"),
    "finish": ("finishReason", "messageMetadata"),
}
DATA_KEYS = {"type", "id", "data", "transient"}


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON: a browser's JSON.parse refuses the frame")


@dataclass(frozen=True)
class Frame:
    id: str | None
    data: str

    @property
    def part(self) -> dict[str, Any]:
        # As strict as a browser's JSON.parse: no NaN or Infinity (Python reads them).
        part: dict[str, Any] = json.loads(self.data, parse_constant=_no_constant)
        return part


@dataclass(frozen=True)
class Stream:
    """What a client reads from the encoder's bytes."""

    raw: bytes
    frames: list[Frame]
    comments: list[str]

    @property
    def parts(self) -> list[dict[str, Any]]:
        return [f.part for f in self.frames if f.data != "[DONE]"]

    @property
    def types(self) -> list[str]:
        return [p["type"] for p in self.parts]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [p for p in self.parts if p["type"] == kind]

    def text(self, block: str | None = None) -> str:
        return "".join(
            p["delta"] for p in self.of("text-delta") if block is None or p["id"] == block
        )


def read_sse(raw: bytes) -> Stream:
    """SSE frames as a browser splits them (every frame ends with a blank line)."""
    text = raw.decode("utf-8")  # strict: the encoder's bytes are always UTF-8
    assert text.endswith("\n\n") or not text, text[-80:]
    frames: list[Frame] = []
    comments: list[str] = []
    for block in text.split("\n\n")[:-1]:
        frame_id, data = None, []
        for line in block.split("\n"):
            if line.startswith(":"):
                comments.append(line[1:].strip())
            elif line.startswith("id: "):
                frame_id = line[4:]
            else:
                assert line.startswith("data: "), line
                data.append(line[6:])
        if data:
            frames.append(Frame(frame_id, "\n".join(data)))
    return Stream(raw, frames, comments)


def check_rules(stream: Stream) -> None:
    """What the `ai` client rejects never appears; a message ends with `[DONE]`."""
    assert stream.frames and stream.frames[-1].data == "[DONE]"
    assert sum(f.data == "[DONE]" for f in stream.frames) == 1
    parts = stream.parts
    assert parts[:2] == [parts[0], {"type": "start-step"}] and parts[0]["type"] == "start"
    open_blocks: set[str] = set()
    started: set[str] = set()
    calls: set[str] = set()
    for part in parts:
        kind = part["type"]
        if kind.startswith("data-"):
            assert "data" in part and set(part) <= DATA_KEYS, part
            continue
        assert kind in REQUIRED, part
        for key in REQUIRED[kind]:
            assert key in part, (key, part)
        allowed = {"type", *REQUIRED[kind], *OPTIONAL.get(kind, ())}
        assert set(part) <= allowed, (set(part) - allowed, part)  # a strict schema refuses it
        if "providerMetadata" in part:  # a record of provider name -> record of JSON values
            meta = part["providerMetadata"]
            assert isinstance(meta, dict) and all(isinstance(v, dict) for v in meta.values())
        if kind in ("text-start", "reasoning-start"):
            assert part["id"] not in started, part  # ids are never reused
            started.add(part["id"])
            open_blocks.add(part["id"])
        elif kind in ("text-delta", "reasoning-delta"):
            assert part["id"] in open_blocks, part
        elif kind in ("text-end", "reasoning-end"):
            open_blocks.remove(part["id"])
        elif kind in ("tool-input-start", "tool-input-available", "tool-input-error"):
            calls.add(part["toolCallId"])
        elif kind in ("tool-output-available", "tool-output-error"):
            assert part["toolCallId"] in calls, part
        elif kind in ("finish", "abort", "error"):
            assert not open_blocks, (part, open_blocks)  # blocks end before the terminal
        if kind == "finish":
            assert part.get("finishReason", "stop") in FINISH_REASONS, part


def events_observable(events: Iterable[Event]) -> Observable[Event]:
    return reactivex.from_iterable(list(events))


async def encode(
    events: Observable[Event] | AsyncIterable[Any] | Iterable[Event], **options: Any
) -> Stream:
    """The whole UI message stream of `events`, read back."""
    source = events if isinstance(events, Observable | AsyncIterable) else events_observable(events)
    chunks = [chunk async for chunk in ui_message_stream(source, **options)]
    return read_sse(b"".join(chunks))


ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def another_app(redis_url: str, prefix: str) -> AsyncIterator[str]:
    """The example app in a process of its own on the same Redis log; yields its URL."""
    other = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "examples.serving.app", "--redis", redis_url),
        *("--prefix", prefix, "--port", "0"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    try:
        assert other.stdout is not None
        line = await asyncio.wait_for(other.stdout.readline(), 20)
        yield line.decode().split()[-1]
    finally:
        other.terminate()
        await other.wait()
