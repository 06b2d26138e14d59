"""OpenAI Responses streams of Responses-compatible servers that a sixth probe found
misread. Bodies are made by hand from Ollama's converter (`openai/responses.go`,
`ResponsesStreamConverter`: `processTextContent` adds the message at the current output
index; `processToolCalls` adds a chunk's calls from that same index and never moves it
on; `processCompletion` finishes the message only when no call was sent, and
`buildFinalOutput` then lists the calls without the message). Ids and values are made
up."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_3 import (
    COUNTS,
    CREATED,
    MESSAGE,
    ServeBody,
    counts,
    run,
    terminal,
)
from tests.support import summarize

THOUGHT, SAID = "Two cities.", "Let me check."
ARGUMENTS = ('{"city":"Paris"}', '{"city":"Rome"}')
REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": THOUGHT}],
    "encrypted_content": THOUGHT,  # Ollama's: the plain text
}


def call(number: int, arguments: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": f"fc_{number}",
        "type": "function_call",
        "status": status,
        "call_id": f"call_{number}",
        "name": "get_weather",
        "arguments": arguments,
    }


def call_events(index: int, number: int) -> list[dict[str, Any]]:
    """One call as Ollama's converter streams it: added, one delta, done, item done."""
    arguments = ARGUMENTS[number - 1]
    return [
        added(index, call(number, "", status="in_progress")),
        on("response.function_call_arguments.delta", index, f"fc_{number}", delta=arguments),
        on("response.function_call_arguments.done", index, f"fc_{number}", arguments=arguments),
        done(index, call(number, arguments)),
    ]


@pytest.mark.parametrize("thinks", [False, True])
async def test_calls_at_the_output_index_of_an_open_message_are_each_requested_once(
    serve_body: ServeBody, thinks: bool
) -> None:
    """A model that says something before its calls: Ollama adds the message at its
    output index and streams its text, then adds each call (one a chunk) at that same
    index, the message never marked done; the terminal lists the calls alone. A call
    added over the open message was read as part of it: the terminal's call, matched to
    no item shown, was requested a second time."""
    thinking = [
        added(0, {"id": "rs_1", "type": "reasoning", "summary": []}),
        on("response.reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta=THOUGHT),
        on("response.reasoning_summary_text.done", 0, "rs_1", summary_index=0, text=THOUGHT),
        done(0, REASONING),
    ]
    at = 1 if thinks else 0
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    events = await run(
        serve_body,
        CREATED,
        *(thinking if thinks else []),
        added(at, {**MESSAGE, "content": []}),
        on("response.content_part.added", at, "msg_1", content_index=0, part=part),
        on("response.output_text.delta", at, "msg_1", content_index=0, delta="Let me "),
        on("response.output_text.delta", at, "msg_1", content_index=0, delta="check."),
        *call_events(at, 1),
        *call_events(at, 2),
        terminal(*([REASONING] if thinks else []), call(1, ARGUMENTS[0]), call(2, ARGUMENTS[1])),
    )
    got = summarize(events)
    assert got.tool_calls == [
        ("call_1", "get_weather", {"city": "Paris"}),
        ("call_2", "get_weather", {"city": "Rome"}),
    ]
    thought = THOUGHT if thinks else ""
    assert (got.text, got.reasoning, got.stop_reason) == (SAID, thought, "tool_use")
    assert counts(got.usage) == COUNTS
