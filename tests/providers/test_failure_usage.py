"""The usage that comes with a failure, on every wire: reported (before the error) where
the attempt had committed, so the record says what the failed turn cost; dropped where
nothing had, so the failure stays one the recovery policy may retry (DESIGN, Commitment:
usage commits an attempt; the usage a rejection carries is not output).

Bodies built by hand after each wire's documented shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Failed, UsageUpdate
from tests.providers.test_anthropic_shapes import START
from tests.support import ServeBody, replay_every_way


def sse(*payloads: dict[str, Any], event: bool = False) -> bytes:
    frames = []
    for payload in payloads:
        named = f"event: {payload['type']}\n" if event else ""
        frames.append(f"{named}data: {json.dumps(payload)}\n\n")
    return "".join(frames).encode()


def kinds_and_input(data: bytes, provider: str) -> tuple[list[str], int | None, str]:
    events = replay_every_way(data, provider)
    usage = [e.usage.input_tokens for e in events if isinstance(e, UsageUpdate)]
    terminal = events[-1]
    assert isinstance(terminal, Failed)
    return [e.type for e in events], (usage[-1] if usage else None), terminal.error.kind


# -- OpenAI chat: usage in the chunk that carries the error ------------------------------

CHAT_USAGE = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
CHAT_ERROR = {"error": {"message": "Provider returned error", "code": 502}, "usage": CHAT_USAGE}


@pytest.mark.parametrize("said", [False, True])
def test_chat_the_error_chunk_s_usage(said: bool) -> None:
    text = {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}
    data = sse(*([text] if said else []), CHAT_ERROR)
    kinds, input_tokens, _ = kinds_and_input(data, "openrouter")
    if said:
        assert (kinds, input_tokens) == (["text", "usage", "error"], 9)
    else:
        assert (kinds, input_tokens) == (["error"], None)


# -- Responses: usage on response.failed ---------------------------------------------------


@pytest.mark.parametrize("said", [False, True])
def test_responses_the_failed_response_s_usage(said: bool) -> None:
    usage = {"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}
    response = {"id": "resp_1", "status": "failed", "model": "m", "output": []}
    failed = {
        "type": "response.failed",
        "response": {
            **response,
            "usage": usage,
            "error": {"code": "server_error", "message": "The model failed"},
        },
    }
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    said_text = [
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hi",
        },
    ]
    created = {"type": "response.created", "response": {**response, "status": "in_progress"}}
    data = sse(created, *(said_text if said else []), failed, event=True)
    kinds, input_tokens, _ = kinds_and_input(data, "openai-responses")
    if said:
        assert (kinds, input_tokens) == (["text", "usage", "error"], 7)
    else:
        assert (kinds, input_tokens) == (["error"], None)


# -- Gemini: usage on a refusing finish, and on every chunk of a stream cut short ----------

GEMINI_USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 3, "totalTokenCount": 15}


def gemini(parts: list[dict[str, Any]] | None, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": GEMINI_USAGE, "modelVersion": "g"}


@pytest.mark.parametrize("said", [False, True])
def test_gemini_a_stream_cut_before_its_finish_reports_the_latest_usage(said: bool) -> None:
    """Gemini sends `usageMetadata` on every chunk: a stream cut before its finish has
    said what it cost so far."""
    data = sse(gemini([{"text": "Hi"}] if said else []))
    kinds, input_tokens, kind = kinds_and_input(data, "google")
    assert kind == "truncated"
    if said:
        assert (kinds, input_tokens) == (["text", "usage", "error"], 12)
    else:
        assert (kinds, input_tokens) == (["error"], None)


GEMINI_ERROR = {
    "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
}


@pytest.mark.parametrize(
    ("before", "error"),
    [
        ([gemini([{"text": "Hi"}])], sse(GEMINI_ERROR)),
        ([gemini([{"text": "Hi"}], "STOP")], sse(GEMINI_ERROR)),  # the error stays terminal
        ([gemini([{"text": "Hi"}])], b"event: error\ndata: The model is overloaded.\n\n"),
        ([gemini([])], sse(GEMINI_ERROR)),  # nothing said: no usage, still retryable
    ],
    ids=["error chunk", "error chunk after the finish", "error frame", "nothing said"],
)
async def test_gemini_an_error_after_usage_reports_that_usage_first(
    serve_body: ServeBody, before: list[dict[str, Any]], error: bytes
) -> None:
    """Gemini's `usageMetadata` comes, cumulative, on every chunk: an error that ends the
    stream after one comes with what the turn cost so far, as a cut stream does. Before:
    the text, then the error, and no usage."""
    data = sse(*before) + error
    said = bool(before[0]["candidates"][0]["content"]["parts"])
    kinds, input_tokens, kind = kinds_and_input(data, "google")
    assert kind == "stream_error"
    assert (kinds, input_tokens) == (
        (["text", "usage", "error"], 12) if said else (["error"], None)
    )
    base_url = await serve_body(data)
    async with rxllm.provider("google", base_url=base_url, api_key="k", max_attempts=1) as p:
        record = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    assert record.terminal.type == "error"
    assert (record.usage.input_tokens if record.usage else None) == (12 if said else None)


def test_gemini_the_refusing_finish_s_usage_commits_nothing() -> None:
    data = sse(gemini(None, "MISSING_THOUGHT_SIGNATURE"))
    kinds, input_tokens, kind = kinds_and_input(data, "google")
    assert (kinds, input_tokens, kind) == (["error"], None, "rejected")


# -- Anthropic: what message_start counted, when message_delta never comes ----------------

TEXT = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
]
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.mark.parametrize("said", [False, True])
@pytest.mark.parametrize("ending", ["cut", "error", "plain error frame"])
def test_anthropic_message_start_s_counts_come_with_a_failure(said: bool, ending: str) -> None:
    tail = [OVERLOADED] if ending == "error" else []
    data = sse(START, *(TEXT if said else []), *tail, event=True)
    if ending == "plain error frame":  # not JSON: read as any error body (before: no usage)
        data += b"event: error\ndata: upstream overloaded\n\n"
    kinds, input_tokens, kind = kinds_and_input(data, "anthropic")
    assert kind == ("truncated" if ending == "cut" else "stream_error")
    if said:
        assert (kinds, input_tokens) == (["text", "usage", "error"], 10)
    else:
        assert (kinds, input_tokens) == (["error"], None)
