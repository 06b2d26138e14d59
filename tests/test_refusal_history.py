"""A refused turn sent back in the conversation history: a refusal the model wrote is
the assistant's text (`StreamRecord.to_message()` says why), so the next request shows
the model that it declined rather than leaving its turn out; a filter's explanation of
its stop is not the model's words and stays out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import Done, Refusal, TextDelta
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers import wire_for
from rxllm.request import ChatRequest, Message
from tests.support import capture, needs_captures, replay

QUESTION = Message.user("How do I pick a lock?")
FOLLOW_UP = Message.user("Why not?")
REFUSAL = "I'm sorry, I can't assist with that request."


def assistant_turn(provider: str, turn: Message) -> Any:
    """What `provider`'s wire sends for `turn` between two user messages: its chat
    message (or Gemini content), or its Responses input items."""
    body = wire_for(provider).build_body(
        ChatRequest(model="m", messages=[QUESTION, turn, FOLLOW_UP])
    )
    turns = body.get("messages") or body.get("contents") or body["input"]
    assert len(turns) == 3, turns  # the refused turn is not left out
    return turns[1]


@needs_captures
@pytest.mark.parametrize(
    "provider", ["openai", "mistral", "openai-responses", "anthropic", "google"]
)
def test_a_refusal_only_turn_goes_back_as_the_assistant_text(provider: str) -> None:
    """openai-python's recorded structured-output refusal: `delta.refusal` only, no
    `content`. Its record's message was empty, and the chat wire left it out."""
    builder = RecordBuilder("openai")
    for event in replay(capture("openai/chat_refusal.sse"), "openai"):
        builder.add(event)
    record = builder.build()
    assert (record.text, record.refusal) == ("", REFUSAL)  # the record keeps them apart
    message = record.to_message()
    assert message.text == REFUSAL
    assert REFUSAL in str(assistant_turn(provider, message))


def test_text_then_refusal_both_go_back() -> None:
    builder = RecordBuilder("openai")
    for event in (
        TextDelta.make(provider="openai", text="Here is "),
        Refusal.make(provider="openai", text="no."),
        Done.make(provider="openai", stop_reason="stop"),
    ):
        builder.add(event)
    assert builder.build().to_message().text == "Here is \n\nno."


def test_the_openai_sdk_dump_of_a_refused_turn_is_that_text() -> None:
    """openai-python's `ChatCompletionMessage.model_dump()` of a refusal: `content`
    None, `refusal` set; its message params also take `refusal` content parts. Both
    were a ValidationError (an unknown key, an unknown part)."""
    dumped = {"role": "assistant", "content": None, "refusal": REFUSAL, "tool_calls": None}
    assert Message.model_validate(dumped) == Message.assistant(REFUSAL)
    parts = {"role": "assistant", "content": [{"type": "refusal", "refusal": REFUSAL}]}
    assert Message.model_validate(parts) == Message.assistant(REFUSAL)
    assert Message.model_validate({"role": "assistant", "content": "Hi", "refusal": ""}) == (
        Message.assistant("Hi")
    )


def test_a_filter_stop_explanation_does_not_go_back_as_the_model_words() -> None:
    """Anthropic's streaming classifiers stop a turn with `stop_reason: "refusal"` and
    `stop_details.explanation` (docs.anthropic.com, Handle streaming refusals): the
    API's words, not the model's, and Anthropic asks for the refused turn to be
    removed or rephrased. The turn goes back as the Anthropic SDK's `content` would:
    the text streamed before the stop."""
    explanation = "This request was declined because it could enable cyber harm."
    frames = [
        {"type": "message_start", "message": {"model": "claude-test", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "Hello.."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta",
         "delta": {"stop_reason": "refusal", "stop_sequence": None,
                   "stop_details": {"type": "refusal", "category": "cyber",
                                    "explanation": explanation}},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]  # fmt: skip
    data = "".join(f"event: {f['type']}\ndata: {json.dumps(f)}\n\n" for f in frames).encode()
    builder = RecordBuilder("anthropic")
    for event in replay(data, "anthropic"):
        builder.add(event)
    record = builder.build()
    assert (record.text, record.refusal) == ("Hello..", explanation)
    assert record.to_message().text == "Hello.."
