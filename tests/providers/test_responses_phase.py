"""An assistant message's `phase` on the Responses wire: gpt-5.3-codex and later label
each message `commentary` (a preamble) or `final_answer`, and ask for it back ("For
models like gpt-5.3-codex and beyond, when sending follow-up requests, preserve and
resend phase on all assistant messages — dropping it can degrade performance", the
`MessagePhase` reference; a preamble without it is taken for a final answer). The text
carries its message's phase (`TextDelta.phase`), the record keeps one text part per
message (`TextPart.phase`), and the next turn sends each message item with its phase.

Stream: vercel/ai `packages/openai/src/responses/__fixtures__/openai-phase.1.chunks.txt`
(gpt-5.3-codex: a commentary message, then the final answer), and the same shapes with a
call after the preamble and with a message that arrives whole."""

from __future__ import annotations

from typing import Any

import reactivex

from rxllm.events import Event, EventAdapter, StreamRecord, TextDelta
from rxllm.operators import dedupe_overlap, speaker_guard
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers.openai_responses import OpenAIResponses
from rxllm.request import ChatRequest, Message, TextPart
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody

RID, MODEL = "resp_phase_001", "gpt-5.3-codex"
COMMENTARY, FINAL = "I'm going to search for that", "The capital of France is Paris."
USAGE = {
    "input_tokens": 50,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 100,
    "output_tokens_details": {"reasoning_tokens": 20},
}


def response(status: str, *output: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": RID, "object": "response", "model": MODEL}
    return {**fields, "status": status, "output": list(output)}


def message(mid: str, phase: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "annotations": [], "text": text}] if text else []
    item = {"id": mid, "type": "message", "status": status, "content": content}
    return {**item, "role": "assistant", "phase": phase}


def streamed(index: int, mid: str, phase: str, deltas: list[str]) -> list[dict[str, Any]]:
    """A message item streamed as the recording streams it: added, its deltas, done."""
    whole = "".join(deltas)
    part = {"type": "output_text", "annotations": [], "text": whole}
    return [
        added(index, message(mid, phase, "", status="in_progress")),
        on("response.content_part.added", index, mid, content_index=0, part={**part, "text": ""}),
        *(on("response.output_text.delta", index, mid, content_index=0, delta=d) for d in deltas),
        on("response.output_text.done", index, mid, content_index=0, text=whole),
        on("response.content_part.done", index, mid, content_index=0, part=part),
        done(index, message(mid, phase, whole)),
    ]


def record_of(events: list[Event]) -> StreamRecord:
    builder = RecordBuilder("openai-responses")
    for event in events:
        builder.add(event)
    return builder.build()


def next_input(record: StreamRecord) -> list[dict[str, Any]]:
    messages = [Message.user("Capital of France?"), record.to_message(), Message.user("And?")]
    body = OpenAIResponses().request_body(ChatRequest(model=MODEL, messages=messages))
    items: list[dict[str, Any]] = body["input"][1:-1]
    return items


async def test_each_message_goes_back_with_its_phase(serve_body: ServeBody) -> None:
    events = await run(
        serve_body,
        {"type": "response.created", "response": response("in_progress")},
        *streamed(0, "msg_phase_commentary", "commentary", ["I'm going to", " search for that"]),
        *streamed(1, "msg_phase_final", "final_answer", ["The capital", " of France is Paris."]),
        {
            "type": "response.completed",
            "response": {
                **response(
                    "completed",
                    message("msg_phase_commentary", "commentary", COMMENTARY),
                    message("msg_phase_final", "final_answer", FINAL),
                ),
                "usage": USAGE,
            },
        },
    )
    texts = [(e.text, e.phase) for e in events if isinstance(e, TextDelta)]
    assert texts == [
        ("I'm going to", "commentary"),
        (" search for that", "commentary"),
        ("The capital", "final_answer"),
        (" of France is Paris.", "final_answer"),
    ]
    record = record_of(events)
    assert record.text == COMMENTARY + FINAL  # the deltas joined, as ever
    assert record.to_message().content == [
        TextPart(text=COMMENTARY, phase="commentary"),
        TextPart(text=FINAL, phase="final_answer"),
    ]
    assert next_input(record) == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": COMMENTARY, "annotations": []}],
            "phase": "commentary",
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": FINAL, "annotations": []}],
            "phase": "final_answer",
        },
    ]


async def test_a_preamble_before_a_call_keeps_its_phase(serve_body: ServeBody) -> None:
    """The shape the phase is for: a preamble, then a call; the message arrives whole
    at its done item (no deltas), its phase given there only."""
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "search",
        "arguments": '{"q": "capital of France"}',
        "status": "completed",
    }
    preamble = message("msg_1", "commentary", COMMENTARY)
    events = await run(
        serve_body,
        {"type": "response.created", "response": response("in_progress")},
        done(0, preamble),
        added(1, {**call, "arguments": "", "status": "in_progress"}),
        done(1, call),
        {
            "type": "response.completed",
            "response": {**response("completed", preamble, call), "usage": USAGE},
        },
    )
    assert [(e.text, e.phase) for e in events if isinstance(e, TextDelta)] == [
        (COMMENTARY, "commentary")
    ]
    items = next_input(record_of(events))
    assert [(item["type"], item.get("phase")) for item in items] == [
        ("message", "commentary"),
        ("function_call", None),
    ]


def test_text_without_a_phase_says_nothing_of_one() -> None:
    """Every other wire's text: no `phase` in the event's JSON, none in the request."""
    event = TextDelta.of("openai", 1, "hi")
    assert event.phase is None
    assert "phase" not in event.model_dump_json()
    phased = TextDelta.make(provider="openai-responses", attempt=1, text="hi", phase="commentary")
    assert EventAdapter.validate_json(phased.model_dump_json()) == phased
    assert "phase" not in TextPart(text="hi").model_dump()
    body = OpenAIResponses().request_body(
        ChatRequest(model="m", messages=[Message.user("q"), Message.assistant("a")])
    )
    assert "phase" not in body["input"][1]


def test_text_parts_of_one_phase_with_nothing_between_are_one_message() -> None:
    """A message written by hand in several text parts is one message item, as before."""
    turn = Message(role="assistant", content=[TextPart(text="a"), TextPart(text="b")])
    body = OpenAIResponses().request_body(ChatRequest(model="m", messages=[turn]))
    assert [item["content"][0]["text"] for item in body["input"]] == ["ab"]


def test_the_text_guards_keep_the_phase_of_the_text_they_pass_on() -> None:
    """`dedupe_overlap` cuts a repeated prefix and `speaker_guard` releases held text in
    events of their own: the phase goes with the text."""

    def phased(text: str) -> TextDelta:
        return TextDelta.make(provider="p", attempt=1, text=text, phase="commentary")

    repeated = [phased("one two three four five "), phased("three four five six")]
    deduped: list[Event] = []
    reactivex.from_iterable(repeated).pipe(dedupe_overlap()).subscribe(deduped.append)
    held: list[Event] = []
    guarded = [phased("Sure.\nUs"), phased("er: hi")]
    reactivex.from_iterable(guarded).pipe(speaker_guard(["User:"])).subscribe(held.append)
    for events in (deduped, held):
        texts = [e for e in events if isinstance(e, TextDelta)]
        assert len(texts) >= 2 and all(e.phase == "commentary" for e in texts), texts
    assert "".join(e.text for e in deduped if isinstance(e, TextDelta)).endswith(" six")
