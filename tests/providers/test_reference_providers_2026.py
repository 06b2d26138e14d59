"""Chat-completions streams of US and EU inference providers, from their own API
references and docs pages for their 2025-2026 features, in shapes no other test replays:
Mistral's Conversations API (docs.mistral.ai, Agents & Conversations; its SSE types as
the Mistral OpenAPI spec names them), SambaNova Cloud's closing usage chunk, Fireworks
AI's `perf_metrics`, Inception's diffusion mode (`diffusing`), OpenRouter's image
output (openrouter.ai/docs, Image Generation) and Perplexity's Sonar extras
(docs.perplexity.ai, Chat Completions: `images`, `related_questions`, `usage.cost`).
(Other wires' streams where a chat stream was asked: tests/providers/test_other_wires.py.)

Each body is written by hand from the page named beside it (its essential chunks, ids
and long values made up or shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what a client of that endpoint
should get.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Citation, Failed
from tests.support import (
    Expect,
    Recorder,
    Serve,
    check,
    log_messages,
    replay_every_way,
    summarize,
)


def sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads)
    return body + (b"data: [DONE]\n\n" if done else b"")


def chunk(
    delta: dict[str, Any], finish: str | None = None, model: str = "m", **fields: Any
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chat-1",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": model,
        "choices": [choice],
        **fields,
    }


# ---------------------------------------------- Mistral: the Conversations API's stream


def conversation_events(*payloads: dict[str, Any]) -> bytes:
    """Events as `POST /v1/conversations` with `stream: true` writes them: `event:`
    naming the type, which the JSON's `type` repeats; no `[DONE]`."""
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


_STARTED = {
    "type": "conversation.response.started",
    "created_at": "2025-05-27T10:00:00Z",
    "conversation_id": "conv_0681",
}


def _output(text: str) -> dict[str, Any]:
    return {
        "type": "message.output.delta",
        "created_at": "2025-05-27T10:00:01Z",
        "output_index": 0,
        "id": "msg_0681",
        "content_index": 0,
        "model": "mistral-medium-2505",
        "agent_id": None,
        "role": "assistant",
        "content": text,
    }


def test_mistral_conversations_stream_read_as_chat_is_a_protocol_error() -> None:
    """docs.mistral.ai, Agents & Conversations: `POST /v1/conversations` streams its own
    events (`conversation.response.started`, `message.output.delta`,
    `tool.execution.started`/`done`, `conversation.response.done` with the usage),
    not chat completion chunks: no wire of rxllm reads them. A client pointing the
    `mistral` preset's base URL at it (livekit/agents#5527 moved its Mistral plugin to
    that API) got the usage and a retryable `truncated` error, the text dropped with
    only a log line per field. It is a `protocol` error naming that API, as soon as
    its first event comes, and nothing else."""
    body = conversation_events(
        _STARTED,
        _output("Hello"),
        {
            "type": "tool.execution.started",
            "created_at": "2025-05-27T10:00:02Z",
            "output_index": 1,
            "id": "tool_exec_1",
            "name": "web_search",
        },
        {
            "type": "tool.execution.done",
            "created_at": "2025-05-27T10:00:03Z",
            "output_index": 1,
            "id": "tool_exec_1",
            "name": "web_search",
            "info": {},
        },
        _output(" there"),
        {
            "type": "conversation.response.done",
            "created_at": "2025-05-27T10:00:04Z",
            "usage": {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14},
        },
    )
    events = replay_every_way(body, "mistral")
    assert [e.type for e in events] == ["error"]
    (failed,) = events
    assert isinstance(failed, Failed)
    assert failed.error.kind == "protocol"
    assert "Conversations API" in failed.error.message
    assert "conversation.response.started" in failed.error.message
    assert "/chat/completions" in failed.error.message


def test_mistral_conversations_error_event_read_as_chat_is_a_protocol_error() -> None:
    """The same API's failure event (`conversation.response.error`: `message`, `code`),
    first: the same error, never a retry of a body that cannot be read."""
    body = conversation_events(
        {
            "type": "conversation.response.error",
            "created_at": "2025-05-27T10:00:00Z",
            "message": "Agent not found",
            "code": 3000,
        }
    )
    events = replay_every_way(body, "mistral")
    (failed,) = events
    assert isinstance(failed, Failed)
    assert failed.error.kind == "protocol"
    assert "conversation.response.error" in failed.error.message


async def test_mistral_conversations_stream_over_http_is_not_retried(serve: Serve) -> None:
    """Live, the same stream from a loopback server: one attempt, the protocol error,
    no text; where before each of the preset's attempts got the same unreadable body
    and the turn ended `truncated` after them all."""
    requests = []

    async def handler(request: web.Request) -> web.StreamResponse:
        requests.append(request.path)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(conversation_events(_STARTED, _output("Hello")))
        return response

    base_url = await serve(handler)
    async with rxllm.provider(
        "mistral", base_url=base_url, api_key="k", allow_private_network=True
    ) as p:
        record = await p.complete(
            rxllm.ChatRequest(model="mistral-medium-latest", messages=[rxllm.Message.user("hi")])
        )
    assert isinstance(record.terminal, Failed)
    assert record.terminal.error.kind == "protocol"
    assert record.text == ""
    assert len(requests) == 1


# ---------------------------------------------- SambaNova Cloud: its closing usage chunk


def test_sambanova_usage_chunk_with_its_timings_after_the_finish() -> None:
    """docs.sambanova.ai, OpenAI compatibility (streaming): the finish, then a chunk
    with `choices: []` whose `usage` holds, beside the counts, the server's timings
    and throughput (`time_to_first_token`, `total_latency`, `completion_tokens_per_sec`,
    `completion_tokens_after_first_per_sec`, `start_time`, `end_time`), its own
    `stop_reason` and `is_last_response: true`. The counts are the usage; the turn is
    done by the finish, and the rest says nothing a user needs."""
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 3,
        "total_tokens": 43,
        "completion_tokens_after_first_per_sec": 512.4,
        "completion_tokens_per_sec": 91.7,
        "end_time": 1750000001.12,
        "is_last_response": True,
        "start_time": 1750000001.08,
        "stop_reason": "stop",
        "time_to_first_token": 0.031,
        "total_latency": 0.033,
        "total_tokens_per_sec": 1303.0,
    }
    model = "Meta-Llama-3.3-70B-Instruct"
    body = sse(
        chunk({"role": "assistant", "content": ""}, model=model),
        chunk({"content": "Hi there"}, model=model),
        chunk({"content": "!"}, model=model),
        chunk({}, "stop", model=model),
        {**chunk({}, model=model), "choices": [], "usage": usage},
    )
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(text="Hi there!", usage=(40, 3, 0, 0, 43), model=model),
    )


# ---------------------------------------------- Fireworks AI: perf_metrics in the last chunk


def test_fireworks_perf_metrics_beside_the_usage_are_logged() -> None:
    """docs.fireworks.ai, Chat Completions (`perf_metrics_in_response: true`): the last
    chunk carries `perf_metrics` (hyphenated keys: `prompt-tokens`,
    `cached-prompt-tokens`, `server-time-to-first-token`, `server-processing-time`)
    beside the usage, and a reasoning model's thoughts come as `reasoning_content`.
    The metrics are no token counts: the usage is the `usage` object's, cached tokens
    from its `prompt_tokens_details`; the metrics are logged, once."""
    model = "accounts/fireworks/models/deepseek-r1-0528"
    last = chunk({}, "stop", model=model)
    last["usage"] = {
        "prompt_tokens": 20,
        "completion_tokens": 9,
        "total_tokens": 29,
        "prompt_tokens_details": {"cached_tokens": 16},
    }
    last["perf_metrics"] = {
        "prompt-tokens": 20,
        "cached-prompt-tokens": 16,
        "server-time-to-first-token": 0.12,
        "server-processing-time": 0.31,
    }
    body = sse(
        chunk({"role": "assistant", "reasoning_content": "Two plus two."}, model=model),
        chunk({"reasoning_content": None, "content": "4"}, model=model),
        last,
    )
    with log_messages() as logs:
        events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="4", reasoning="Two plus two.", usage=(4, 9, 0, 16, 29), model=model),
    )
    assert sum("perf_metrics" in line for line in logs) >= 1


# ---------------------------------------------- Inception Labs: Mercury's diffusion mode

_MERCURY = "mercury-2"


def _mercury(params: dict[str, Any]) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=_MERCURY, messages=[rxllm.Message.user("Why is the sky blue?")], params=params
    )


async def test_inception_diffusing_is_refused_before_sending(serve: Serve) -> None:
    """Inception's `diffusing: true` (its API reference; LiteLLM's and Agno's Inception
    pages pass it in `extra_body`) makes Mercury stream the denoising itself: each chunk's
    `delta.content` is the whole text so far, noisy drafts first, each replacing the
    last (poe-api-bridge's verify_chat_completions_replace.py keeps only the latest).
    The chat wire appends content, so the user got every draft and then the answer
    joined into one text ("Tha sky iz blThe sky is blue bec...The sky is blue
    because..."). rxllm's text events cannot take a text back, so the flag is a
    ConfigError at the call whatever its value (the chat wire's `request_keys`, as for
    `model` or `stream`), with no request sent; without it Mercury streams its answer
    as deltas."""
    recorder = Recorder()
    base_url = await serve(recorder.handle)
    for value in (True, False):
        with pytest.raises(rxllm.ConfigError, match="params may not set 'diffusing'"):
            async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as p:
                await p.complete(_mercury({"diffusing": value}))
    assert recorder.requests == []
    async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as p:
        record = await p.complete(_mercury({}))
    assert record.text == "ok"
    assert [r["body"].get("diffusing", "absent") for r in recorder.requests] == ["absent"]


# ---------------------------------------------- OpenRouter: image output


def test_openrouter_image_output_keeps_the_text_and_counts_the_image_tokens() -> None:
    """openrouter.ai/docs, Image Generation (`modalities: ["image", "text"]`, streamed):
    the text, then a delta whose `images` holds the picture as a data URL
    (`{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`), then
    the finish and the usage with its `cost` and `image_tokens`. The contract has no
    image event: the text is whole and never mixed with the data URL, the image is
    logged, the usage and cost are the turn's."""
    model = "google/gemini-2.5-flash-image"
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 1310,
        "total_tokens": 1322,
        "cost": 0.0393,
        "is_byok": False,
        "cost_details": {"upstream_inference_cost": None},
        "completion_tokens_details": {"reasoning_tokens": 0, "image_tokens": 1290},
    }
    body = sse(
        chunk({"role": "assistant", "content": "A sunset over the ridge."}, model=model),
        chunk({"role": "assistant", "content": "", "images": [image]}, model=model),
        chunk({"role": "assistant", "content": ""}, "stop", model=model),
        {**chunk({}, model=model), "choices": [], "usage": usage, "provider": "Google"},
    )
    with log_messages() as logs:
        events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            text="A sunset over the ridge.", usage=(12, 1310, 0, 0, 1322), cost=0.0393, model=model
        ),
    )
    assert any("images" in line for line in logs)


# ---------------------------------------------- Perplexity: Sonar's extras


@pytest.mark.parametrize("provider", ["custom", "openrouter"])
def test_perplexity_images_and_related_questions_beside_search_results(provider: str) -> None:
    """docs.perplexity.ai, Chat Completions (`return_images`, `return_related_questions`):
    chunks carry `search_results` and `citations` on every chunk, `images`
    (`{image_url, origin_url, height, width}`) and `related_questions`, and the last
    one's usage has `search_context_size`, `citation_tokens`, `num_search_queries` and
    a `cost` object whose `total_cost` is the turn's. Each source is cited once, with
    its title; images and questions have no event (logged); the cost is read."""
    results = [{"title": "Météo Paris", "url": "https://example.com/paris", "date": "2025-06-01"}]
    extras: dict[str, Any] = {
        "citations": ["https://example.com/paris"],
        "search_results": results,
    }
    usage = {
        "prompt_tokens": 8,
        "completion_tokens": 11,
        "total_tokens": 19,
        "search_context_size": "low",
        "citation_tokens": 230,
        "num_search_queries": 1,
        "cost": {
            "input_tokens_cost": 0.000008,
            "output_tokens_cost": 0.000011,
            "request_cost": 0.005,
            "total_cost": 0.005019,
        },
    }
    first = chunk({"role": "assistant", "content": "Sunny, 24°C [1]."}, model="sonar", **extras)
    first["images"] = [
        {
            "image_url": "https://img.example.com/1.jpg",
            "origin_url": "https://example.com/paris",
            "height": 480,
            "width": 640,
        }
    ]
    first["related_questions"] = ["Will it rain tomorrow?"]
    body = sse(first, chunk({}, "stop", model="sonar", usage=usage, **extras))
    with log_messages() as logs:
        events = replay_every_way(body, provider)
    check(
        summarize(events),
        Expect(text="Sunny, 24°C [1].", usage=(8, 11, 0, 0, 19), cost=0.005019, model="sonar"),
    )
    cited = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cited == [("https://example.com/paris", "Météo Paris")]
    assert any("images" in line for line in logs)
    assert any("related_questions" in line for line in logs)
