"""OpenAI Responses streaming events of the reference (openai-python
`types/responses/response_stream_event.py` and the events it unions) that no earlier
test read as the contract says: audio output's transcript, the progress events of the
items read at their done item, a function call named only when done, and the items of
a stream that ask nothing of the client. Bodies are made by hand from those
definitions; ids and values are made up. Each is read whatever the chunking, and over a
loopback server: the same events."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.events import TextDelta, ToolRequest, ToolStart
from tests.providers.test_openai_responses_shapes import COMPLETED, CREATED, on
from tests.providers.test_probe_openai_responses_3 import run
from tests.support import ServeBody, log_messages, summarize


# Audio output: `response.audio.transcript.delta` carries what the model says (`delta`),
# `response.audio.transcript.done` carries nothing but its type; neither names an output
# item. The chat wire reads `delta.audio.transcript` as the turn's text: so does this one.
async def test_the_audio_transcript_is_the_text_once(serve_body: ServeBody) -> None:
    events = await run(
        serve_body,
        CREATED,
        {"type": "response.audio.delta", "delta": "UklGRg=="},
        {"type": "response.audio.transcript.delta", "delta": "Hello"},
        {"type": "response.audio.transcript.delta", "delta": " there."},
        {"type": "response.audio.done"},
        # a server that repeats the whole transcript at its end, as the Realtime API's
        # `response.audio_transcript.done` does: said once
        {"type": "response.audio.transcript.done", "transcript": "Hello there."},
        COMPLETED,
    )
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " there."]
    assert (summarize(events).text, summarize(events).stop_reason) == ("Hello there.", "stop")


async def test_a_transcript_only_at_its_done_event_is_the_text(serve_body: ServeBody) -> None:
    events = await run(
        serve_body,
        CREATED,
        {"type": "response.audio.transcript.done", "transcript": "Whole."},
        COMPLETED,
    )
    assert summarize(events).text == "Whole."


# The progress events of the items read whole at their done item, each named
# `response.<item type>.<status>` in the reference, and audio output's bytes: known,
# with no event of their own (DESIGN: what has no event is logged at debug), each type
# once a stream. They were logged as of an unknown type, each time.
PROGRESS = [
    ("web_search_call", "ws_1", ["in_progress", "searching", "searching", "completed"]),
    ("file_search_call", "fs_1", ["in_progress", "searching", "completed"]),
    ("code_interpreter_call", "ci_1", ["in_progress", "interpreting", "completed"]),
    ("image_generation_call", "ig_1", ["in_progress", "generating", "partial_image"]),
    ("mcp_list_tools", "mcpl_1", ["in_progress", "failed"]),
    ("mcp_call", "mcp_1", ["in_progress", "completed", "failed"]),
    ("compaction", "cmp_1", ["compacting"]),
]


@pytest.mark.parametrize(
    ("item", "item_id", "events"),
    [
        # gpt-5.1's `apply_patch` (vercel/ai openai-apply-patch-tool.1.chunks.txt): the
        # diff of the call's operation, whole in its done item
        ("apply_patch_call_operation_diff", "apc_1", ["delta", "delta", "done"]),
        ("shell_call_command", "sh_1", ["added", "delta", "done"]),
    ],
)
async def test_an_items_field_streamed_is_known(
    serve_body: ServeBody, item: str, item_id: str, events: list[str]
) -> None:
    """`response.<item type>_<field>.<event>`: a field of an item streamed, which its
    done item repeats whole; known as the item's progress is."""
    payloads = [on(f"response.{item}.{event}", 0, item_id, delta="x") for event in events]
    with log_messages() as messages:
        await run(serve_body, CREATED, *payloads, COMPLETED)
    assert not [m for m in messages if "unknown type" in m]


async def test_progress_events_are_known_and_logged_once_a_type(serve_body: ServeBody) -> None:
    payloads: list[dict[str, Any]] = [CREATED]
    for index, (item, item_id, statuses) in enumerate(PROGRESS):
        for status in statuses:
            payloads.append(on(f"response.{item}.{status}", index, item_id))
    payloads += [{"type": "response.audio.delta", "delta": "UklGRg=="}]
    payloads += [{"type": "response.audio.delta", "delta": "AAAA"}, {"type": "response.audio.done"}]
    with log_messages() as messages:
        events = await run(serve_body, *payloads, COMPLETED)
    assert [e.type for e in events] == ["usage", "done"]
    kinds = [f"response.{item}.{status}" for item, _, statuses in PROGRESS for status in statuses]
    kinds += ["response.audio.delta", "response.audio.done"]
    said = [m for m in messages if "response." in m and "sequence_number" not in m]
    assert not [m for m in said if "unknown type" in m]
    # once a stream: `run` reads the body 40 ways, each a stream of its own
    runs = said.count("'response.audio.done' has no event")
    assert runs > 1
    for kind in dict.fromkeys(kinds):
        assert said.count(f"{kind!r} has no event") == runs, kind


# Raw reasoning over Responses (gpt-oss on vLLM, Ollama, LM Studio): `reasoning_text`
# parts, beside or instead of a summary's `summary_text` parts; each is reasoning, said
# once whatever done events repeat it. vLLM frames a reasoning-text part with
# `response.reasoning_part.added` / `.done` (vllm `entrypoints/openai/responses`), the
# shape of `content_part.added` / `.done`.
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def thought(kind: str, delta: str, index: int = 0) -> dict[str, Any]:
    field = "summary_index" if "summary" in kind else "content_index"
    return on(kind, 0, "rs_1", delta=delta, **{field: index})


async def test_reasoning_text_and_a_summary_each_said_once(serve_body: ServeBody) -> None:
    raw = {"type": "reasoning_text", "text": "Think hard."}
    summary = {"type": "summary_text", "text": "Sum."}
    with log_messages() as messages:
        events = await run(
            serve_body,
            CREATED,
            {"type": "response.output_item.added", "output_index": 0, "item": REASONING},
            on(
                "response.reasoning_part.added",
                0,
                "rs_1",
                content_index=0,
                part={**raw, "text": ""},
            ),
            thought("response.reasoning_text.delta", "Think "),
            thought("response.reasoning_text.delta", "hard."),
            on("response.reasoning_text.done", 0, "rs_1", content_index=0, text="Think hard."),
            on("response.reasoning_part.done", 0, "rs_1", content_index=0, part=raw),
            on("response.content_part.done", 0, "rs_1", content_index=0, part=raw),
            thought("response.reasoning_summary_text.delta", "Sum."),
            on("response.reasoning_summary_text.done", 0, "rs_1", summary_index=0, text="Sum."),
            on("response.reasoning_summary_part.done", 0, "rs_1", summary_index=0, part=summary),
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**REASONING, "summary": [summary], "content": [raw]},
            },
            COMPLETED,
        )
    assert summarize(events).reasoning == "Think hard.\n\nSum."
    assert not [m for m in messages if "unknown type" in m]


async def test_a_reasoning_part_whole_at_its_reasoning_part_done(serve_body: ServeBody) -> None:
    """A part with no deltas whose text only its `reasoning_part.done` holds (the done
    item without `content`): it was dropped, the event logged as of an unknown type."""
    raw = {"type": "reasoning_text", "text": "Whole thought."}
    events = await run(
        serve_body,
        CREATED,
        {"type": "response.output_item.added", "output_index": 0, "item": REASONING},
        on("response.reasoning_part.done", 0, "rs_1", content_index=0, part=raw),
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        COMPLETED,
    )
    assert summarize(events).reasoning == "Whole thought."


# A function call whose `call_id` its added item leaves out, first given by its done item
# (or, that never coming, by the terminal response's item): the call is the client's to
# answer by that call_id, which the API looks up. It was started and requested under the
# item's id, which no answer can name.
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "name": "get",
    "arguments": "",
    "status": "in_progress",
}
NAMED = {**CALL, "call_id": "call_late", "arguments": '{"a": 1}', "status": "completed"}
ARGUMENTS = [
    on("response.function_call_arguments.delta", 0, "fc_1", delta='{"a":'),
    on("response.function_call_arguments.delta", 0, "fc_1", delta=" 1}"),
]
MARKED = on("response.function_call_arguments.done", 0, "fc_1", arguments='{"a": 1}')
ADDED = {"type": "response.output_item.added", "output_index": 0, "item": CALL}
DONE = {"type": "response.output_item.done", "output_index": 0, "item": NAMED}
TERMINAL = {**COMPLETED, "response": {**COMPLETED["response"], "output": [NAMED]}}


@pytest.mark.parametrize(
    "events",
    [
        [ADDED, *ARGUMENTS, MARKED, DONE, TERMINAL],
        [ADDED, *ARGUMENTS, DONE, TERMINAL],
        [ADDED, MARKED, DONE, TERMINAL],
        [ADDED, *ARGUMENTS, MARKED, TERMINAL],  # no done item: the terminal's names it
        [ADDED, *ARGUMENTS, TERMINAL],
    ],
    ids=["marked-then-done", "done", "marked-without-deltas", "terminal", "terminal-unmarked"],
)
async def test_a_call_named_only_when_done_is_requested_once_by_that_name(
    serve_body: ServeBody, events: list[dict[str, Any]]
) -> None:
    got = await run(serve_body, CREATED, *events)
    calls = [(e.type, e.call_id) for e in got if isinstance(e, ToolStart | ToolRequest)]
    assert calls == [("tool_start", "call_late"), ("tool_request", "call_late")]
    assert summarize(got).tool_calls == [("call_late", "get", {"a": 1})]
    assert summarize(got).stop_reason == "tool_use"


async def test_a_call_no_item_names_goes_by_its_id(serve_body: ServeBody) -> None:
    """Its arguments marked done, no done item, a terminal without output: requested as
    it was before, under its item id."""
    got = await run(serve_body, CREATED, ADDED, *ARGUMENTS, MARKED, COMPLETED)
    assert summarize(got).tool_calls == [("fc_1", "get", {"a": 1})]


# The client's own answers echoed in a stream's output (a conversation's or an agents'
# stream that replays the items it was sent): nothing the client is asked to do. Not a
# tool_request, nor a result of the provider's; each logged as an item with no event.
ECHOED = [
    {"type": "function_call_output", "id": "fco_1", "call_id": "call_1", "output": "42"},
    {"type": "custom_tool_call_output", "id": "ctco_1", "call_id": "call_2", "output": "ok"},
    {"type": "computer_call_output", "id": "cuo_1", "call_id": "call_3", "output": {}},
    {"type": "mcp_approval_response", "id": "mcpa_1", "approval_request_id": "mcpr_1"},
]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "terminal-only"])
async def test_the_clients_own_outputs_in_a_stream_ask_nothing(
    serve_body: ServeBody, streamed: bool
) -> None:
    answer = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "It is 42.", "annotations": []}],
    }
    output = [*ECHOED, answer]
    items = [
        {"type": f"response.output_item.{event}", "output_index": index, "item": item}
        for index, item in enumerate(output)
        for event in ("added", "done")
    ]
    terminal = {**COMPLETED, "response": {**COMPLETED["response"], "output": output}}
    with log_messages() as messages:
        events = await run(serve_body, CREATED, *(items if streamed else ()), terminal)
    assert [e.type for e in events] == ["text", "usage", "done"]
    assert (summarize(events).text, summarize(events).stop_reason) == ("It is 42.", "stop")
    for item in ECHOED:
        assert f"an output item of type {item['type']!r} has no event" in messages
