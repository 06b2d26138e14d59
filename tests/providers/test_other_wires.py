"""Another wire's stream where a wire's own was asked (a base URL of another provider's,
a relay's route that speaks another wire): every wire ends the turn at its first event
in one `protocol` error naming that API and the provider that reads it, asked of one
piece of wire knowledge (`rxllm.providers.wire_signs`, which `rxllm replay`'s sniffing
asks too). Before, only the chat wire did (d5ccb7f): the Anthropic wire failed at a
chat stream's `[DONE]` ("a data line is not JSON") with no word of what the bytes
were, and the Responses and Gemini wires logged every event and ended `truncated`,
retried as if cut, three attempts of the same answer.

Each stream is a short complete turn written by hand from its wire's reference
(Anthropic's Streaming Messages, OpenAI's Streaming API responses and Chat Completions
streaming, Gemini's `streamGenerateContent?alt=sse`), replayed whole and cut at
arbitrary byte boundaries (`replay_every_way`); the near misses are what each wire
reads on purpose from other wires' shapes, read as before.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Failed
from rxllm.pipeline.sniff import sniff_provider
from rxllm.providers.wire_signs import event_api, other_api
from tests.support import Serve, replay_every_way, summarize


def _typed(*payloads: dict[str, Any]) -> bytes:
    """Events as Anthropic's and the Responses API's streams write them: `event:` naming
    the JSON's `type`."""
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _data(*payloads: dict[str, Any] | str) -> bytes:
    """`data:` lines alone, as chat and Gemini streams write them."""
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads
    )


def _chat(delta: dict[str, Any], finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **fields,
    }


_STREAMS = {
    # Anthropic's Messages stream (docs.anthropic.com, Streaming Messages)
    "anthropic": _typed(
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "content": []}},
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ),
    # the Responses API's stream (platform.openai.com, Streaming API responses)
    "openai-responses": _typed(
        {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1"}},
        {
            "type": "response.output_text.delta",
            "sequence_number": 1,
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hi",
        },
        {"type": "response.completed", "sequence_number": 2, "response": {"id": "resp_1"}},
    ),
    # Gemini's `streamGenerateContent?alt=sse` (ai.google.dev, Text generation)
    "google": _data(
        {
            "candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}}],
            "modelVersion": "gemini-2.5-flash",
        },
        {
            "candidates": [{"content": {"parts": [{"text": "!"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
        },
    ),
    # a Chat Completions stream (platform.openai.com, Streaming)
    "openai": _data(_chat({"role": "assistant", "content": "Hi"}), _chat({}, "stop"), "[DONE]"),
}
_WIRES = sorted(_STREAMS)
_ENDPOINTS = {
    "anthropic": "/v1/messages",
    "openai-responses": "/v1/responses",
    "google": "streamGenerateContent",
    "openai": "/v1/chat/completions",
}


@pytest.mark.parametrize("wire", _WIRES)
def test_each_stream_is_read_by_its_own_wire(wire: str) -> None:
    """The streams below are their wires' own: read whole by the wire, and sniffed as
    it (the shared signs name the same wire the recording's reader does)."""
    summary = summarize(replay_every_way(_STREAMS[wire], wire))
    assert summary.text.startswith("Hi")
    assert summary.terminal == "done"
    assert sniff_provider(_STREAMS[wire]) == wire


@pytest.mark.parametrize(("wire", "other"), [(w, o) for w in _WIRES for o in _WIRES if w != o])
def test_another_wires_stream_is_one_protocol_error_naming_it(wire: str, other: str) -> None:
    """Every wire, every other wire's stream: the first event ends the turn in one
    `protocol` error naming that API and the provider that reads it, and where this
    wire reads; no text, no retry (before, on the Anthropic wire a chat stream failed
    at its `[DONE]` and the other streams ended `truncated`; on the Responses and Gemini
    wires every other stream ended `truncated`)."""
    events = replay_every_way(_STREAMS[other], wire)
    assert [event.type for event in events] == ["error"]
    error = events[-1].error
    assert error.kind == "protocol"
    assert f"provider {other!r} reads it" in error.message
    assert _ENDPOINTS[wire] in error.message


@pytest.mark.parametrize(("wire", "other"), [(w, o) for w in _WIRES for o in _WIRES if w != o])
async def test_another_wires_stream_over_http_is_one_attempt(
    serve: Serve, wire: str, other: str
) -> None:
    """Live: the same request gets the same stream, so one attempt (before: the chat,
    Responses and Gemini wires sent it three times, each ending `truncated`)."""
    requests = []

    async def handler(request: web.Request) -> web.StreamResponse:
        requests.append(request.path)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_STREAMS[other])
        return response

    base_url = await serve(handler)
    async with rxllm.provider(
        wire, base_url=base_url, api_key="k", allow_private_network=True
    ) as p:
        record = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    assert isinstance(record.terminal, Failed)
    assert record.terminal.error.kind == "protocol"
    assert f"provider {other!r} reads it" in record.terminal.error.message
    assert len(requests) == 1


# ------------------------------------------------------------------------ near misses


def test_the_signs_are_sniffs() -> None:
    """`event_api` is what sniffing reads per event; `other_api` names no API for a
    wire's own event, an error event, or one that says nothing."""
    assert event_api("message_start", {}) == "anthropic"
    assert event_api("response.created", {}) == "openai-responses"
    assert event_api(None, {"usageMetadata": {}}) == "google"
    assert event_api(None, {"object": "chat.completion.chunk"}) == "openai"
    assert event_api("ping", {"type": "ping"}) is None
    anthropic_error = {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}
    assert event_api("error", anthropic_error) == "anthropic"
    for wire in _WIRES:
        assert other_api(wire, "error", anthropic_error) is None
        assert other_api(wire, "ping", {"type": "ping"}) is None
    # a chat chunk with choices is the chat wire's whatever else it carries
    assert other_api("openai", "message_start", _chat({}, type="message_start")) is None
    assert other_api("google", None, {"candidates": [], "choices": [{}]}) is None


@pytest.mark.parametrize("wire", _WIRES)
def test_error_events_of_other_wires_are_read_as_errors(wire: str) -> None:
    """Every wire reads other wires' error shapes as errors, as before: Anthropic's
    `error` event, and OpenAI's error object where an event would be."""
    for payload, message in (
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "Overloaded",
        ),
        (
            {"error": {"message": "upstream failed", "type": "server_error", "code": None}},
            "upstream failed",
        ),
    ):
        events = replay_every_way(_data(payload), wire)
        assert events[-1].type == "error", payload
        error = events[-1].error
        assert "reads it" not in error.message, (payload, error.message)
        assert message in error.message, (payload, error.message)


def test_gemini_wire_reads_a_relays_done_and_code_assists_envelope() -> None:
    """A relay's `data: [DONE]` after a Gemini stream is passed over, and Code Assist's
    `{"response": {...}}` envelope is opened, as before: neither is another API's."""
    inner = json.loads(_STREAMS["google"].split(b"\n\n")[0].removeprefix(b"data: "))
    body = _data({"response": inner, "traceId": "t"}) + _STREAMS["google"].split(b"\n\n", 1)[1]
    summary = summarize(replay_every_way(body + b"data: [DONE]\n\n", "google"))
    assert summary.text == "Hi!"
    assert summary.terminal == "done"


def test_responses_wire_reads_openrouters_done() -> None:
    """OpenRouter's `[DONE]` after the terminal event is no chat stream's sign."""
    summary = summarize(
        replay_every_way(_STREAMS["openai-responses"] + b"data: [DONE]\n\n", "openai-responses")
    )
    assert summary.text == "Hi"
    assert summary.terminal == "done"


def test_chat_wire_reads_chunks_beside_other_wires_words() -> None:
    """A chat chunk with choices is one whatever `type` or `candidates` it carries, a
    final usage chunk with no choices but its `object` is one too, and a lone `ping`
    names no API (logged)."""
    body = _data(
        {"type": "ping"},
        _chat({"content": "Hi"}, type="message_start"),
        _chat({"content": " there"}, candidates=[]),
        _chat({}, "stop"),
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
            "usageMetadata": {"promptTokenCount": 1},
        },
        "[DONE]",
    )
    summary = summarize(replay_every_way(body, "openai"))
    assert summary.text == "Hi there"
    assert summary.terminal == "done"
    assert summary.usage is not None and summary.usage.output_tokens == 2


def test_anthropic_wire_reads_a_lone_ping_and_unknown_events_as_before() -> None:
    """An unknown event that names no API is logged and passed over, as before."""
    stream = _STREAMS["anthropic"]
    body = _typed({"type": "ping"}, {"type": "some_new_event", "x": 1}) + stream
    summary = summarize(replay_every_way(body, "anthropic"))
    assert summary.text == "Hi"
    assert summary.terminal == "done"
