"""The UI message stream's reasoning parts are the record's: a signature or details that
close a reasoning block after another kind ended it (OpenRouter's Responses relay sends
the reasoning item's `output_item.done` after the answer's text) close that block, as
the record reads them, and add no empty reasoning part after the text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import rxllm
from rxllm.events import Done, Event, ReasoningDelta, TextDelta
from rxllm.pipeline.record import RecordBuilder
from tests.serving.support import check_rules, encode
from tests.serving.test_resume_fold import check_every_cut
from tests.serving.test_ui_message_stream_node import node_client, run_client
from tests.support import capture, needs_captures

__all__ = ["node_client"]  # the Node fixture, shared with the conformance test

P = "openai-responses"
LATE_ITEM = "openrouter/responses_api_reasoning_text.sse"
ITEM = {"type": "reasoning", "id": "rs_1", "summary": []}


def _late_close() -> list[Event]:
    return [
        ReasoningDelta(provider=P, text="Think."),
        TextDelta(provider=P, text="4"),
        ReasoningDelta(provider=P, text="", details=ITEM),
        Done(provider=P, stop_reason="stop"),
    ]


def _events(relative: str) -> list[Event]:
    events: list[Event] = []
    rxllm.replay(capture(relative), provider=P).subscribe(events.append)
    return events


def _record_reasoning(events: list[Event]) -> list[str]:
    builder = RecordBuilder(P)
    for event in events:
        builder.add(event)
    return [part.text for part in builder.build().reasoning_parts]


async def test_a_late_close_adds_no_empty_reasoning_part() -> None:
    stream = await encode(_late_close())
    check_rules(stream)
    assert stream.types == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert _record_reasoning(_late_close()) == ["Think."]


async def test_a_reasoning_item_without_text_is_still_its_own_part() -> None:
    """A Responses item with no summary (its details alone), or one after a block its
    signature closed: no block was left open, so it is a part of its own."""
    alone = [
        ReasoningDelta(provider=P, text="", details=ITEM),
        Done(provider=P, stop_reason="stop"),
    ]
    after_closed = [
        ReasoningDelta(provider=P, text="One.", signature="S1"),
        TextDelta(provider=P, text="a"),
        ReasoningDelta(provider=P, text="", details=ITEM),
        Done(provider=P, stop_reason="stop"),
    ]
    for events in (alone, after_closed):
        ends = (await encode(events)).of("reasoning-end")
        assert ends[-1]["providerMetadata"] == {"rxllm": {"details": ITEM}}
        assert len(ends) == len(_record_reasoning(events))


def test_a_resume_folds_the_late_close_as_the_live_response_sent_it() -> None:
    check_every_cut(_late_close())


@needs_captures
async def test_openrouter_s_late_reasoning_item_is_one_part() -> None:
    events = _events(LATE_ITEM)
    stream = await encode(events)
    check_rules(stream)
    assert len(stream.of("reasoning-start")) == len(_record_reasoning(events)) == 1
    check_every_cut(events)


@needs_captures
def test_the_ai_client_shows_the_record_s_reasoning(node_client: Path) -> None:
    """Before, the client built two reasoning parts from OpenRouter's turn: the thinking,
    then after the answer an empty one (no text, not redacted)."""
    events = _events(LATE_ITEM)

    async def body() -> bytes:
        return (await encode(events)).raw

    results = run_client(node_client, {"late item": asyncio.run(body())})["results"]
    assert len(results) == 4
    for result in results:
        assert not result["errors"], result
        parts = result["message"]["parts"]
        reasoning = [part["text"] for part in parts if part["type"] == "reasoning"]
        assert reasoning == _record_reasoning(events), result["version"]
