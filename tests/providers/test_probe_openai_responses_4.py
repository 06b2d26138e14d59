"""OpenAI Responses streams whose terminal response rebuilds its `output` (fresh item ids,
other output indexes than the stream's), as vLLM's do: nothing the stream showed is read
again at the terminal, and nothing only the terminal holds is lost. Bodies are made by
hand from vLLM's sources (`entrypoints/openai/serving_responses.py` of late 2025, whose
gpt-oss stream numbered an item's done events one on from its deltas;
`responses/streaming_events.py` and `responses/serving.py` now, whose final `output` is
built again by `harmony_to_response_output` / the parser's `extract_response_outputs`
with `rs_`/`msg_`/`fc_` ids from `random_uuid`) and the streams vllm-project/vllm#24938,
#31761 and #36435 show; ids and values are made up. Every body is read whatever the
chunking, and over a loopback server: the same events."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.events import Event, ReasoningDelta, ToolStart
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_3 import (
    COUNTS,
    CREATED,
    ServeBody,
    counts,
    run,
    terminal,
)
from tests.support import summarize

THOUGHT = "The user greets. Answer."
ANSWER = "Hello!"
ARGUMENTS = '{"city":"Paris"}'


def reasoning_items(events: list[Event]) -> int:
    """How many reasoning items ended (each ends with one delta that carries its fields)."""
    return sum(1 for e in events if isinstance(e, ReasoningDelta) and e.details is not None)


def reasoning(item_id: str, status: str, text: str | None = None) -> dict[str, Any]:
    item = {"type": "reasoning", "id": item_id, "summary": [], "status": status}
    return item if text is None else {**item, "content": [{"type": "reasoning_text", "text": text}]}


def message(item_id: str, status: str, text: str | None = None) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    content = [] if text is None else [part]
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": status,
        "content": content,
    }


def call(item_id: str | None, call_id: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": "weather",
        "arguments": arguments,
        "status": status,
    }


def thought_events(index: int, item_id: str, done_at: int) -> list[dict[str, Any]]:
    """A gpt-oss analysis message as vLLM streams it: a reasoning item, its one part."""
    part = {"type": "reasoning_text", "text": THOUGHT}
    return [
        added(index, reasoning(item_id, "in_progress")),
        on(
            "response.reasoning_part.added",
            index,
            item_id,
            content_index=0,
            part={**part, "text": ""},
        ),
        on(
            "response.reasoning_text.delta",
            index,
            item_id,
            content_index=0,
            delta="The user greets.",
        ),
        on("response.reasoning_text.delta", index, item_id, content_index=0, delta=" Answer."),
        on("response.reasoning_text.done", done_at, item_id, content_index=0, text=THOUGHT),
        on("response.reasoning_part.done", done_at, item_id, content_index=0, part=part),
        done(done_at, reasoning(item_id, "completed", THOUGHT)),
    ]


def answer_events(index: int, item_id: str, done_at: int | None) -> list[dict[str, Any]]:
    """A gpt-oss final message as vLLM streams it (its part numbered on from the
    reasoning's: content_index 1); with its done events at `done_at`, or none."""
    part = {"type": "output_text", "text": ANSWER, "annotations": []}
    events = [
        added(index, message(item_id, "in_progress")),
        on(
            "response.content_part.added",
            index,
            item_id,
            content_index=1,
            part={**part, "text": ""},
        ),
        on("response.output_text.delta", index, item_id, content_index=1, delta="Hel"),
        on("response.output_text.delta", index, item_id, content_index=1, delta="lo!"),
    ]
    if done_at is not None:
        events += [
            on("response.output_text.done", done_at, item_id, content_index=1, text=ANSWER),
            on("response.content_part.done", done_at, item_id, content_index=1, part=part),
            done(done_at, message(item_id, "completed", ANSWER)),
        ]
    return events


@pytest.mark.parametrize("message_done", [True, False], ids=["message-done", "no-message-done"])
async def test_gpt_oss_done_events_numbered_one_on_are_read_once(
    serve_body: ServeBody, message_done: bool
) -> None:
    """vLLM's gpt-oss stream of late 2025 (`_process_harmony_streaming_events`) moved its
    output index on before it sent an item's done events: the reasoning item streamed at
    output_index 0 (vllm-project/vllm#24938) is done at 1, where the message is then
    added; the message's done events come at 2, or not at all when the stream ends
    first (#37071). The terminal's `output` is built again, fresh ids. The reasoning was
    shown twice (its `.done` read as a part that had no deltas), the answer twice (its
    done at 2 read as a message never streamed), and the reasoning item ended twice (the
    terminal's first item, at a position no done event named, read again)."""
    events = await run(
        serve_body,
        CREATED,
        *thought_events(0, "msg_r", done_at=1),
        *answer_events(1, "msg_a", done_at=2 if message_done else None),
        terminal(
            reasoning("rs_new", "completed", THOUGHT), message("msg_new", "completed", ANSWER)
        ),
    )
    got = summarize(events)
    assert (got.text, got.reasoning, got.stop_reason) == (ANSWER, THOUGHT, "stop")
    assert reasoning_items(events) == 1
    assert counts(got.usage) == COUNTS


async def test_gpt_oss_call_done_one_on_without_its_id_is_requested_once(
    serve_body: ServeBody,
) -> None:
    """The same late-2025 gpt-oss stream for a call: added at output_index 1 with the id
    of the item before it (`id=current_item_id` before the call's own `fc_` id is made)
    and one call id, its argument deltas under that `fc_` id (the first piece went into
    the added event, never sent), then `function_call_arguments.done` and the done item
    at 2, the item without `id` and with another call id (`fc_...`). The arguments' done
    event failed the stream ("not a function call"); read by its item id, the done item
    after it would have been a second call."""
    item = call("msg_r", "call_a", "", "in_progress")
    done_item = {**call(None, "fc_b", ARGUMENTS, "completed"), "item_id": "fc_x"}
    events = await run(
        serve_body,
        CREATED,
        *thought_events(0, "msg_r", done_at=1),
        added(1, item),
        on("response.function_call_arguments.delta", 1, "fc_x", delta='"Paris"}'),
        on("response.function_call_arguments.done", 2, "fc_x", arguments=ARGUMENTS),
        done(2, {**done_item, "output_index": 2, "sequence_number": -1}),
        terminal(
            reasoning("rs_new", "completed", THOUGHT),
            call("fc_new", "call_new", ARGUMENTS, "completed"),
        ),
    )
    got = summarize(events)
    assert got.tool_calls == [("call_a", "weather", {"city": "Paris"})]
    assert [e.call_id for e in events if isinstance(e, ToolStart)] == ["call_a"]
    assert (got.reasoning, got.stop_reason) == (THOUGHT, "tool_use")
    assert reasoning_items(events) == 1


@pytest.mark.parametrize("call_done", [True, False], ids=["call-done", "no-call-done"])
async def test_gpt_oss_call_rebuilt_at_the_terminal_is_requested_once(
    serve_body: ServeBody, call_done: bool
) -> None:
    """vLLM's gpt-oss stream now (`responses/streaming_events.py`): each item done at its
    own output index, the last one's done events only if a chunk comes after its stop
    token (#37071: often none); before #44608 the call's done item had `id: null`. The
    terminal's `output` holds the call again as `harmony_to_response_output` builds it:
    another item id and another call id. The call is requested once, as it streamed."""
    item = call("fc_1", "call_1", "", "in_progress")
    events_of_call = [
        added(1, item),
        on("response.function_call_arguments.delta", 1, "fc_1", delta='{"city":'),
        on("response.function_call_arguments.delta", 1, "fc_1", delta='"Paris"}'),
    ]
    if call_done:
        events_of_call += [
            on("response.function_call_arguments.done", 1, "fc_1", arguments=ARGUMENTS),
            done(1, call(None, "call_1", ARGUMENTS, "completed")),
        ]
    events = await run(
        serve_body,
        CREATED,
        *thought_events(0, "msg_r", done_at=0),
        *events_of_call,
        terminal(
            reasoning("rs_new", "completed", THOUGHT),
            call("fc_new", "call_new", ARGUMENTS, "completed"),
        ),
    )
    got = summarize(events)
    assert got.tool_calls == [("call_1", "weather", {"city": "Paris"})]
    assert [e.call_id for e in events if isinstance(e, ToolStart)] == ["call_1"]
    assert (got.text, got.reasoning, got.stop_reason) == ("", THOUGHT, "tool_use")
    assert reasoning_items(events) == 1


async def test_a_call_streamed_as_text_is_requested_from_the_terminal(
    serve_body: ServeBody,
) -> None:
    """vLLM's stream for a non-harmony model with a tool parser sent the call's markup as
    message text (vllm-project/vllm#36435: `<tool_call>...` in `output_text.delta` at
    output_index 1), while the terminal's `output`, parsed again from the whole text,
    holds a `function_call` at position 1 and no message. Position 1 was taken as the
    message already done: the call was lost without a word."""
    markup = '<tool_call>\n{"name": "weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    events = await run(
        serve_body,
        CREATED,
        added(0, reasoning("r1", "in_progress")),
        on("response.reasoning_text.delta", 0, "r1", content_index=0, delta=THOUGHT),
        on("response.reasoning_text.done", 0, "r1", content_index=0, text=THOUGHT),
        done(0, reasoning("r1", "completed", THOUGHT)),
        added(1, message("m1", "in_progress")),
        on("response.output_text.delta", 1, "m1", content_index=0, delta=markup),
        on("response.output_text.done", 1, "m1", content_index=0, text=markup),
        done(1, message("m1", "completed", markup)),
        terminal(
            reasoning("rs_new", "completed", THOUGHT),
            call("fc_new", "call_new", '{"city": "Paris"}', "completed"),
        ),
    )
    got = summarize(events)
    assert got.tool_calls == [("call_new", "weather", {"city": "Paris"})]
    assert (got.text, got.reasoning, got.stop_reason) == (markup, THOUGHT, "tool_use")
    assert reasoning_items(events) == 1


async def test_a_stream_of_the_terminal_response_alone_is_read_whole(
    serve_body: ServeBody,
) -> None:
    """A server that streams only the terminal response: every item is read there, once,
    at its position in `output`."""
    events = await run(
        serve_body,
        CREATED,
        terminal(
            reasoning("rs_1", "completed", THOUGHT),
            message("msg_1", "completed", ANSWER),
            call("fc_1", "call_1", ARGUMENTS, "completed"),
        ),
    )
    got = summarize(events)
    assert (got.text, got.reasoning, got.stop_reason) == (ANSWER, THOUGHT, "tool_use")
    assert got.tool_calls == [("call_1", "weather", {"city": "Paris"})]
    assert [e.index for e in events if isinstance(e, ToolStart)] == [2]
    assert reasoning_items(events) == 1


async def test_items_whose_done_events_were_lost_are_finished_by_the_terminal(
    serve_body: ServeBody,
) -> None:
    """An OpenAI stream that lost the done events of its message and of its call (ids kept
    in the terminal): the message's second part, which had no deltas, and the call's
    arguments come from the terminal; nothing streamed is shown again."""
    second = {"type": "output_text", "text": " Bye.", "annotations": []}
    whole = message("msg_1", "completed", ANSWER)
    whole["content"].append(second)
    events = await run(
        serve_body,
        CREATED,
        added(0, message("msg_1", "in_progress")),
        on("response.output_text.delta", 0, "msg_1", content_index=0, delta=ANSWER),
        added(1, call("fc_1", "call_1", "", "in_progress")),
        on("response.function_call_arguments.delta", 1, "fc_1", delta=ARGUMENTS),
        terminal(whole, call("fc_1", "call_1", ARGUMENTS, "completed")),
    )
    got = summarize(events)
    assert (got.text, got.stop_reason) == (ANSWER + " Bye.", "tool_use")
    assert got.tool_calls == [("call_1", "weather", {"city": "Paris"})]
