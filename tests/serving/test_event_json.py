"""The log's event JSON: pydantic's as it was, and a lone surrogate kept, both ways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from rxllm.events import (
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
    Event,
    EventAdapter,
    Failed,
    ReasoningDelta,
    ServerToolResult,
    TextDelta,
    ToolRequest,
)
from rxllm.serving.event_json import dump_event, json_or_none, load_event
from tests.hypothesis_support import BODIES, outcome, wire_of

P = "openai"
HALVES: list[Event] = [
    TextDelta(provider=P, text="smile \ud83d"),
    TextDelta(provider=P, text="\ude00!"),
    ReasoningDelta(provider=P, text="\ud83e", signature="s\udd14"),
    ToolRequest(provider=P, call_id="c", name="f", index=0, arguments={"k\ud800": ["x\udfff"]}),
    ServerToolResult(provider=P, call_id="s", name="search", content={"hits": ["\ud83d"]}),
    Citation(provider=P, url="https://a.example", title="\udc00"),
    Failed(
        provider=P, error=ErrorInfo(kind="http", message="\ud83d", provider=P, raw='{"m":"\ud83d"}')
    ),
    Cancelled(provider=P, reason="\ud83d"),
]


@pytest.mark.parametrize("event", HALVES, ids=lambda e: e.type)
def test_a_lone_surrogate_round_trips(event: Event) -> None:
    data = dump_event(event)
    assert data.isascii()  # redis-py writes it as UTF-8: every half is an escape
    assert json.loads(data) == event.model_dump()
    assert load_event(data) == event
    assert load_event(data.encode()) == event
    assert json_or_none(data) == event.model_dump()


def test_without_a_lone_surrogate_the_json_is_pydantics() -> None:
    for event in [
        TextDelta(provider=P, text="smile \U0001f600 é"),
        Done(provider=P, stop_reason="stop"),
    ]:
        assert dump_event(event) == event.model_dump_json()
        assert load_event(dump_event(event)) == event


@pytest.mark.parametrize("path", BODIES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_stdlib_reading_gives_the_same_event(path: Path) -> None:
    """What `load_event` falls back to, the stdlib's JSON then `validate_python`,
    makes the event `validate_json` makes, for every event of every capture."""
    for event in outcome(path.read_bytes(), wire_of(path)):
        data = event.model_dump_json()
        assert EventAdapter.validate_python(json.loads(data)) == event
        assert EventAdapter.validate_python(json.loads(data)) == EventAdapter.validate_json(data)


def test_what_is_not_an_event_raises_as_validation_does() -> None:
    for bad in (
        b"not json",
        b'{"type": "text", "text": "\\ud83d"',  # cut short: neither JSON reads it
        b'{"type": "text"}',
        b'{"type": "nope", "provider": "p"}',
        b'{"type": "text", "provider": "p", "text": 3, "x": "\\ud83d"}',
    ):
        with pytest.raises(ValidationError):
            load_event(bad)
    assert json_or_none(b"not json") is None
