"""The UI message stream keeps the Responses API's message items apart: a preamble
(`phase: "commentary"`, gpt-5.4 and later) and the answer (`"final_answer"`) are two
text parts, each with its phase, as the record keeps them (two text parts) and as the
AI SDK's own OpenAI provider sends them (a text part per message item, its `phase` in
the part's provider metadata). Before, they were one text part, the preamble run into
the answer ("Checking.It is 4.") and the phase gone."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import rxllm
from rxllm.events import Done, Event, TextDelta
from rxllm.pipeline.record import RecordBuilder
from tests.serving.support import check_rules, encode
from tests.serving.test_resume_fold import check_every_cut
from tests.serving.test_ui_message_stream_node import node_client, run_client

__all__ = ["node_client"]  # the Node fixture, shared with the conformance test

P = "openai-responses"


def _event(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


def _message(index: int, item_id: str, phase: str, pieces: list[str]) -> list[str]:
    """A message item as the Responses API streams it (added, its text part, deltas,
    done), with the item's `phase`."""
    item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
    item |= {"content": [], "phase": phase}
    text = "".join(pieces)
    part = {"type": "output_text", "text": text, "annotations": []}
    at = {"item_id": item_id, "output_index": index, "content_index": 0}
    return [
        _event({"type": "response.output_item.added", "output_index": index, "item": item}),
        _event({"type": "response.content_part.added", **at, "part": {**part, "text": ""}}),
        *[_event({"type": "response.output_text.delta", **at, "delta": p}) for p in pieces],
        _event({"type": "response.output_text.done", **at, "text": text}),
        _event(
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": {**item, "status": "completed", "content": [part]},
            }
        ),
    ]


RESPONSE = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-5.4"}
BODY = "".join(
    [
        _event({"type": "response.created", "response": {**RESPONSE, "output": []}}),
        *_message(0, "msg_a", "commentary", ["Check", "ing."]),
        *_message(1, "msg_b", "final_answer", ["It is ", "4."]),
        _event(
            {
                "type": "response.completed",
                "response": {**RESPONSE, "status": "completed", "output": []},
            }
        ),
    ]
).encode()


def _events() -> list[Event]:
    events: list[Event] = []
    rxllm.replay(BODY, provider=P).subscribe(events.append)
    return events


def _record_texts(events: list[Event]) -> list[tuple[str, str | None]]:
    builder = RecordBuilder(P)
    for event in events:
        builder.add(event)
    content = builder.build().to_message().content
    return [(part.text, part.phase) for part in content if part.type == "text"]


async def test_a_preamble_and_the_answer_are_two_text_parts() -> None:
    events = _events()
    stream = await encode(events)
    check_rules(stream)
    starts = stream.of("text-start")
    assert [s.get("providerMetadata") for s in starts] == [
        {"rxllm": {"phase": "commentary"}},
        {"rxllm": {"phase": "final_answer"}},
    ]
    texts = [stream.text(s["id"]) for s in starts]
    assert list(zip(texts, ["commentary", "final_answer"], strict=True)) == _record_texts(events)
    assert texts == ["Checking.", "It is 4."]


async def test_text_without_a_phase_is_one_part_as_before() -> None:
    events = [
        TextDelta(provider=P, text="a"),
        TextDelta(provider=P, text="b"),
        Done(provider=P, stop_reason="stop"),
    ]
    stream = await encode(events)
    assert stream.of("text-start") == [{"type": "text-start", "id": "t1"}]


def test_a_resume_folds_the_phases_as_the_live_response_sent_them() -> None:
    """The cheap folds (the event, the stored JSON) see the phase change too."""
    check_every_cut(_events())


def test_the_ai_client_keeps_the_preamble_apart(node_client: Path) -> None:
    async def body() -> bytes:
        return (await encode(_events())).raw

    results = run_client(node_client, {"phases": asyncio.run(body())})["results"]
    assert len(results) == 4
    for result in results:
        assert not result["errors"], result
        texts = [
            (part["text"], part["providerMetadata"]["rxllm"]["phase"])
            for part in result["message"]["parts"]
            if part["type"] == "text"
        ]
        assert texts == [("Checking.", "commentary"), ("It is 4.", "final_answer")], result
