"""A contract probe of DESIGN.md's promises through the public API, as a user of a
provider's own SDK would call it, against loopback servers that send the bytes written
here (hand-made from the providers' references). Each case failed before its fix."""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm.events import Failed
from tests.support import Serve, ServeBody, replay_every_way, summarize

KEY = "sk-probe-contract-0123456789abcdef"
ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


# -- Gemini: text written in the part that holds the call ---------------------------------


def gemini(*parts: dict[str, Any]) -> bytes:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}
    payload = {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "r1"}
    return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"


async def test_text_beside_a_call_in_one_gemini_part_is_said_before_the_call(
    serve_body: ServeBody,
) -> None:
    """Gemini's `Part` holds one kind of data (a oneof), but its JSON has a member for
    each, and a relay may write a call's text in the call's own part. google-genai reads
    such a part as both (`response.text` joins every part's text, `function_calls` takes
    every part's call); rxllm dropped the text without a word (DESIGN: nothing a
    provider says is silently dropped). Now the text comes first, as for a chunk whose
    text and call are two parts."""
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
    body = gemini({"text": "Let me check. ", **call})
    events = replay_every_way(body, "google")
    said = summarize(events)
    assert said.text == "Let me check. "
    assert [ev.type for ev in events] == ["text", "tool_start", "tool_request", "done"]
    assert said.tool_calls[0][1:] == ("get_weather", {"city": "Paris"})
    async with rxllm.provider(
        "google", api_key=KEY, base_url=await serve_body(body), allow_private_network=True
    ) as p:
        rec = await p.complete(ASK)
    assert rec.text == "Let me check. " and rec.terminal.type == "done"
    assert [(c.name, c.arguments) for c in rec.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_a_call_part_without_text_reads_as_before() -> None:
    """The near miss: a call's part with no text (or an empty one) says no text."""
    for part in ({}, {"text": ""}):
        body = gemini({**part, "functionCall": {"name": "f", "args": {}}})
        events = replay_every_way(body, "google")
        assert [ev.type for ev in events] == ["tool_start", "tool_request", "done"]


def test_a_thought_beside_a_call_in_one_part_is_reasoning() -> None:
    """A thought written in the call's part is reasoning, as a thought part is."""
    body = gemini({"text": "plan", "thought": True, "functionCall": {"name": "f", "args": {}}})
    said = summarize(replay_every_way(body, "google"))
    assert (said.reasoning, said.text) == ("plan", "")
    assert [name for _, name, _ in said.tool_calls] == ["f"]


__all__ = ["Failed", "Serve"]
