"""Gemini's thought signatures on the OpenAI-compatible endpoint: each call's
`extra_content.google.thought_signature` (ai.google.dev/gemini-api/docs/thought-signatures,
"OpenAI compatibility"), on the call's first delta or on a delta of its own after it
(HKUDS/OpenHarness#338: "In streaming, Gemini sends it on a trailing index-less delta").
Gemini 3 answers 400 "Function call is missing a thought_signature in functionCall
parts" to a history that lost it (langroid/langroid#969, and many more), so the
signature reaches `ToolRequest.signature` and goes back in the next request where it
came. So does the signature Gemini gives the turn's text (below). Bodies are written
from those sources; the signatures are made up."""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm import ChatRequest, Message
from rxllm.events import ReasoningDelta, ToolRequest
from rxllm.providers.openai_chat import chat_messages
from rxllm.providers.presets import mistral
from rxllm.request import ReasoningPart
from tests.support import Recorder, Serve, kinds, log_messages, replay_every_way, summarize

MISTRAL_OPTIONS = mistral().options


def _sse(*deltas: dict[str, Any], finish: str = "tool_calls") -> bytes:
    def chunk(delta: dict[str, Any], finish_reason: str | None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        body = {"object": "chat.completion.chunk", "model": "gemini-3-flash", "choices": [choice]}
        return f"data: {json.dumps(body)}\n\n"

    frames = [chunk(delta, None) for delta in deltas] + [chunk({}, finish)]
    return "".join(frames).encode() + b"data: [DONE]\n\n"


def _call(index: int, call_id: str, city: str, **extra: Any) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": json.dumps({"city": city})}
    return {"index": index, "id": call_id, "type": "function", "function": function, **extra}


def _signed(signature: str) -> dict[str, Any]:
    return {"extra_content": {"google": {"thought_signature": signature}}}


def _requests(body: bytes) -> list[ToolRequest]:
    return [e for e in replay_every_way(body, "custom") if isinstance(e, ToolRequest)]


def test_the_signature_on_the_first_call_is_its_requests() -> None:
    # Gemini signs the first call of a turn; a parallel call after it has none.
    body = _sse(
        {"role": "assistant", "tool_calls": [_call(0, "c1", "Paris", **_signed("SIG_A"))]},
        {"tool_calls": [_call(1, "c2", "London")]},
    )
    requests = _requests(body)
    assert [(r.call_id, r.arguments, r.signature) for r in requests] == [
        ("c1", {"city": "Paris"}, "SIG_A"),
        ("c2", {"city": "London"}, None),
    ]


def test_a_signature_on_a_delta_of_its_own_after_the_call_is_the_calls() -> None:
    # Before: dropped (the delta had no index, id, name or arguments to read).
    body = _sse(
        {"role": "assistant", "tool_calls": [_call(0, "c1", "Paris")]},
        {"tool_calls": [_signed("SIG_B")]},
    )
    (request,) = _requests(body)
    assert (request.call_id, request.signature) == ("c1", "SIG_B")


def test_no_signature_is_no_extra_content_in_the_history() -> None:
    call = rxllm.ToolCall(id="c1", name="f", arguments={})
    (sent,) = chat_messages([Message.assistant(tool_calls=[call])])
    assert "extra_content" not in sent["tool_calls"][0]


async def test_the_next_turn_sends_the_signature_back_where_it_came(serve: Serve) -> None:
    """The whole loop over HTTP: the first turn's call, its result, and the second
    request's assistant message carrying the signature as Gemini wants it."""
    first = _sse({"role": "assistant", "tool_calls": [_call(0, "c1", "Paris", **_signed("SIG_A"))]})
    recorder = Recorder(answers={"/chat/completions": first})
    base_url = await serve(recorder.handle)
    question = Message.user("Weather in Paris?")
    async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as p:
        record = await p.complete(ChatRequest(model="gemini-3-flash", messages=[question]))
        assert [call.signature for call in record.tool_calls] == ["SIG_A"]
        history = [question, record.to_message(), Message.tool("c1", "sunny")]
        await p.complete(ChatRequest(model="gemini-3-flash", messages=history))
    assistant = recorder.requests[1]["body"]["messages"][1]
    assert assistant["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            "extra_content": {"google": {"thought_signature": "SIG_A"}},
        }
    ]


# Gemini 3 signs a turn's text too: on the endpoint, `extra_content.google.thought_signature`
# on the first text delta (discuss.ai.google.dev/t/109823: "We get `extra_content` in the
# first `delta`"), or on a last delta of its own after the text. The native wire gives it
# on a text part, and rxllm emits it as that wire does: `reasoning("", signature)` with the
# part's details (`{}` for text), before the text.
_SIGNED_TEXT = _sse(
    {"role": "assistant", "content": "Hello", **_signed("TSIG")},
    {"content": " there"},
    finish="stop",
)


def test_a_signature_on_a_text_delta_is_a_signed_reasoning_delta_before_it() -> None:
    # Before: dropped, logged "delta field 'extra_content' has no event".
    with log_messages() as logs:
        events = replay_every_way(_SIGNED_TEXT, "custom")
    assert kinds(events) == ["reasoning", "text", "done"]
    first = events[0]
    assert isinstance(first, ReasoningDelta)
    assert (first.text, first.signature, first.details) == ("", "TSIG", {})
    assert summarize(events).text == "Hello there"
    assert not [line for line in logs if "extra_content" in line]


def test_a_signature_on_a_delta_of_its_own_after_the_text_is_the_texts() -> None:
    body = _sse({"content": "Hello"}, {"role": "assistant", **_signed("LAST")}, finish="stop")
    events = replay_every_way(body, "custom")
    assert kinds(events) == ["text", "reasoning", "done"]
    assert [e.signature for e in events if isinstance(e, ReasoningDelta)] == ["LAST"]


async def test_the_next_turn_sends_the_texts_signature_back_on_the_message(
    serve: Serve,
) -> None:
    recorder = Recorder(answers={"/chat/completions": _SIGNED_TEXT})
    base_url = await serve(recorder.handle)
    question = Message.user("Hi")
    async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as p:
        record = await p.complete(ChatRequest(model="gemini-3-flash", messages=[question]))
        history = [question, record.to_message(), Message.user("And?")]
        await p.complete(ChatRequest(model="gemini-3-flash", messages=history))
    assistant = recorder.requests[1]["body"]["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": "Hello there",
        "extra_content": {"google": {"thought_signature": "TSIG"}},
    }


def test_an_endpoint_without_call_signatures_gets_no_text_signature() -> None:
    # Mistral and Groq refuse a message field they do not know.
    signed = ReasoningPart(signature="TSIG", details={})
    message = Message(role="assistant", content=[signed, rxllm.TextPart(text="Hello")])
    (sent,) = chat_messages([message], MISTRAL_OPTIONS)
    assert sent == {"role": "assistant", "content": "Hello"}
    (sent,) = chat_messages([message])
    assert sent["extra_content"] == {"google": {"thought_signature": "TSIG"}}


# With `include_thoughts` (extra_body google.thinking_config), the endpoint streams the
# thoughts as content flagged `extra_content.google.thought: true`, `<thought>` opening the
# first flagged delta and `</thought>` opening the first delta after them, then the text's
# signature on a delta of its own. The shapes are a fake server's copy of a probe of the
# real API (its tests: "thoughts marked and tagged, a closing signature"), weaker evidence
# than a capture; usage comes on every chunk there, left out here.
_THOUGHT = {"extra_content": {"google": {"thought": True}}}
_THOUGHTS = _sse(
    {"role": "assistant", "content": "<thought>**Planning** I consider", **_THOUGHT},
    {"role": "assistant", "content": " the question.", **_THOUGHT},
    {"role": "assistant", "content": "</thought>The answer is 4."},
    {"role": "assistant", **_signed("TEXTSIG")},
    finish="stop",
)


def test_flagged_thoughts_are_reasoning_without_their_tags() -> None:
    # Before: all of it text, '<thought>**Planning** I consider the question.</thought>...'
    events = replay_every_way(_THOUGHTS, "custom")
    assert kinds(events) == ["reasoning", "text", "reasoning", "done"]
    summary = summarize(events)
    assert summary.reasoning == "**Planning** I consider the question."
    assert summary.text == "The answer is 4."


def test_a_flagged_delta_without_content_leaves_the_next_content_text() -> None:
    body = _sse({"content": "", **_THOUGHT}, {"content": "Answer."}, finish="stop")
    summary = summarize(replay_every_way(body, "custom"))
    assert (summary.reasoning, summary.text) == ("", "Answer.")


async def test_thoughts_over_http_close_with_the_texts_signature(serve: Serve) -> None:
    recorder = Recorder(answers={"/chat/completions": _THOUGHTS})
    base_url = await serve(recorder.handle)
    question = Message.user("2 + 2?")
    async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as p:
        record = await p.complete(ChatRequest(model="gemini-3-flash", messages=[question]))
        assert (record.reasoning, record.text) == (
            "**Planning** I consider the question.",
            "The answer is 4.",
        )
        (part,) = record.reasoning_parts
        assert (part.signature, part.details) == ("TEXTSIG", {})
        history = [question, record.to_message(), Message.user("And 3 + 3?")]
        await p.complete(ChatRequest(model="gemini-3-flash", messages=history))
    assistant = recorder.requests[1]["body"]["messages"][1]
    assert assistant["content"] == "The answer is 4."
    assert assistant["extra_content"] == {"google": {"thought_signature": "TEXTSIG"}}
