"""Damaged input never breaks the contract: every provider, fed cut, corrupted or
foreign captures, ends with exactly one terminal event and never calls on_error."""

from __future__ import annotations

import random
from typing import Any

import pytest

import rxllm
from rxllm.providers import PROVIDER_NAMES
from tests.support import CAPTURES

BODIES = sorted(CAPTURES.glob("*/*.sse"))
WIRES = [name for name in PROVIDER_NAMES if name not in {"local", "custom"}]


def outcome(data: Any, provider: str) -> list[Any]:
    events: list[Any] = []
    errors: list[Exception] = []
    completed: list[bool] = []
    rxllm.replay(data, provider=provider).subscribe(
        events.append, errors.append, lambda: completed.append(True)
    )
    assert not errors, (provider, errors)
    assert completed == [True]
    terminals = [e for e in events if e.type in ("done", "error", "cancelled")]
    assert len(terminals) == 1 and events[-1] is terminals[0], [e.type for e in events]
    return events


def damaged(data: bytes, rng: random.Random) -> bytes:
    """One of: cut anywhere, bytes flipped, a line dropped, a chunk of another body."""
    kind = rng.randrange(4)
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 1:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if kind == 2:
        lines = data.split(b"\n")
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    other = rng.choice(BODIES).read_bytes()
    cut = rng.randrange(len(data) + 1)
    return data[:cut] + other[: rng.randrange(len(other) + 1)]


@pytest.mark.parametrize("provider", WIRES)
def test_every_capture_read_by_every_wire_ends_once(provider: str) -> None:
    for path in BODIES:
        outcome(path.read_bytes(), provider)


@pytest.mark.parametrize("provider", WIRES)
def test_damaged_captures_end_once_with_a_clear_event(provider: str) -> None:
    rng = random.Random(provider)
    for path in BODIES:
        data = path.read_bytes()
        for _ in range(6):
            events = outcome(damaged(data, rng), provider)
            last = events[-1]
            if last.type == "error":
                assert last.error.message and last.error.provider == provider


@pytest.mark.parametrize("provider", WIRES)
@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\n\n",
        b"data: \n\n",
        b"data: null\n\n",
        b"data: []\n\n",
        b"data: 42\n\n",
        b'data: "x"\n\n',
        b"data: {}\n\n",
        b'data: {"choices": null}\n\n',
        b'data: {"type": null}\n\n',
        b"<html>502 Bad Gateway</html>",
        b"\xff\xfe\x00garbage",
    ],
)
def test_hostile_bodies_end_once(provider: str, body: bytes) -> None:
    outcome(body, provider)


def _data(*payloads: str) -> bytes:
    return b"".join(b"data: " + p.encode() + b"\n\n" for p in payloads)


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (  # tool-call arguments as a number: the accumulator once raised on_error
            "openai",
            _data(
                '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c",'
                '"type":"function","function":{"name":"f","arguments":5}}]}}]}'
            ),
        ),
        ("openai", _data('{"choices":[{"index":0,"delta":{"reasoning_content":7}}]}')),
        ("openai", _data('{"choices":[{"index":0,"delta":{"refusal":["no"]}}]}')),
        (
            "openai-responses",
            _data(
                '{"type":"response.output_text.delta","item_id":"m","output_index":0,'
                '"content_index":0,"delta":5}'
            ),
        ),
        ("google", _data('{"candidates":[{"index":0,"content":{"parts":[{"text":5}]}}]}')),
    ],
)
def test_a_wire_string_of_another_type_is_a_protocol_error(provider: str, body: bytes) -> None:
    """Events are built unvalidated on the hot path: a number where the wire sends text
    must end the turn as a chunk that cannot be read, not reach the user as an event
    holding a number, nor break the stream with on_error."""
    events = outcome(body, provider)
    assert events[-1].type == "error" and events[-1].error.kind == "protocol"
    assert all(isinstance(getattr(e, "text", ""), str) for e in events)
