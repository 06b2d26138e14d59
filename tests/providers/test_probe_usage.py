"""Usage shapes a probe found miscounted: each written by hand from the provider's
documentation, a public issue thread or an SDK's fixture of real numbers (named beside
it), replayed through the provider whole and cut at arbitrary byte boundaries. The
rule (DESIGN.md, Usage): reasoning counted once, cached input apart from
`input_tokens`, so that the normalized total is what the provider itself summed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Usage
from tests.support import (
    Serve,
    ServeBody,
    captures_of,
    needs_captures,
    replay,
    replay_every_way,
    summarize,
)


def _sse(*payloads: dict[str, Any]) -> bytes:
    frames = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (frames + "data: [DONE]\n\n").encode()


def _chat(usage: dict[str, Any]) -> bytes:
    """A chat turn: a word, the finish, then the usage chunk (`choices: []`)."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    return _sse(
        chunk({"content": "Hi"}, None), chunk({}, "stop"), head | {"choices": [], "usage": usage}
    )


def _responses(usage: dict[str, Any]) -> bytes:
    """A Responses turn: one text delta, then `response.completed` with the usage."""
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed"}
    text = {"type": "output_text", "text": "Hi", "annotations": []}
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress",
                                                   "output": [], "usage": None}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": message | {"content": [], "status": "in_progress"}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
         "item_id": "msg_1", "delta": "Hi"},
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                                                    "output": [message | {"content": [text]}],
                                                    "usage": usage}},
    ]  # fmt: skip
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(e | {'sequence_number': n})}\n\n"
        for n, e in enumerate(events)
    ).encode()


def _usage(data: bytes, provider: str) -> Usage:
    usage = summarize(replay_every_way(data, provider)).usage
    assert usage is not None
    return usage


def _counts(usage: Usage) -> tuple[int, int, int, int, int]:
    """(input, output incl. reasoning, reasoning, cache read, total)."""
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        usage.cache_read_tokens,
        usage.total_tokens,
    )


# ------------------------------------------ a cache larger than the prompt is apart


# vercel/ai#12485 (packages/xai convert-xai-chat-usage.test.ts, "cached_tokens exceeding
# prompt_tokens (non-inclusive reporting)"): xAI's grok-4-1-fast-non-reasoning reports
# `prompt_tokens` without its cached tokens, 4142 + 4328 + 254 = 8724. Before: the
# prompt, taken as holding the cache, was cut to 0 input tokens and a total of 4582.
XAI_UNCACHED_PROMPT = {
    "prompt_tokens": 4142,
    "completion_tokens": 254,
    "total_tokens": 8724,
    "prompt_tokens_details": {"cached_tokens": 4328},
}


@pytest.mark.parametrize("provider", ["xai", "custom"])
def test_a_cache_larger_than_the_prompt_is_not_taken_out_of_it(provider: str) -> None:
    usage = _usage(_chat(XAI_UNCACHED_PROMPT), provider)
    assert _counts(usage) == (4142, 254, 0, 4328, 8724)


def test_a_responses_cache_larger_than_the_input_is_not_taken_out_of_it() -> None:
    # The same fix "applies to both chat completions and responses APIs" (vercel/ai#12485,
    # convert-xai-responses-usage.ts): `input_tokens` 4142 beside 4328 cached.
    usage = _usage(
        _responses(
            {
                "input_tokens": 4142,
                "input_tokens_details": {"cached_tokens": 4328},
                "output_tokens": 254,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 8724,
            }
        ),
        "openai-responses",
    )
    assert _counts(usage) == (4142, 254, 0, 4328, 8724)


def test_a_responses_total_that_adds_the_cache_says_it_is_apart() -> None:
    # The exclusive reading with a cache smaller than the input: only the total tells.
    usage = _usage(
        _responses(
            {
                "input_tokens": 500,
                "input_tokens_details": {"cached_tokens": 200},
                "output_tokens": 50,
                "total_tokens": 750,
            }
        ),
        "openai-responses",
    )
    assert _counts(usage) == (500, 50, 0, 200, 750)


def test_openai_responses_usage_still_takes_the_cache_out_of_the_input() -> None:
    # OpenAI's own: `input_tokens` holds the cache, `output_tokens` the reasoning (the
    # xAI Responses fixture of vercel/ai too: 216 + 923 = 1139 with 192 cached, 323 of
    # reasoning).
    usage = _usage(
        _responses(
            {
                "input_tokens": 216,
                "input_tokens_details": {"cached_tokens": 192},
                "output_tokens": 923,
                "output_tokens_details": {"reasoning_tokens": 323},
                "total_tokens": 1139,
            }
        ),
        "openai-responses",
    )
    assert _counts(usage) == (24, 923, 323, 192, 1139)


# ---------------------------------- the wire's total says where the reasoning is


# Google Cloud, "Reasoning for Grok Models" (Vertex AI partner models): "The reasoning
# token count is outputted in the reasoning_tokens field, separated from the
# completion_tokens"; its example: 663 + 50 + 124 = 837, 654 cached. The same wire
# through a custom base URL, where the reasoning was taken as inside the completion
# (before: 50 output tokens, a total of 713).
GROK_ON_VERTEX = {
    "completion_tokens": 50,
    "completion_tokens_details": {
        "accepted_prediction_tokens": 0,
        "audio_tokens": 0,
        "reasoning_tokens": 124,
        "rejected_prediction_tokens": 0,
    },
    "cost_in_usd_ticks": 0,
    "num_sources_used": 0,
    "prompt_tokens": 663,
    "prompt_tokens_details": {
        "audio_tokens": 0,
        "cached_tokens": 654,
        "image_tokens": 0,
        "text_tokens": 663,
    },
    "total_tokens": 837,
}


@pytest.mark.parametrize("provider", ["xai", "custom", "openai"])
def test_reasoning_apart_from_the_completion_is_added_once(provider: str) -> None:
    usage = _usage(_chat(GROK_ON_VERTEX), provider)
    assert _counts(usage) == (9, 174, 124, 654, 837)


# A gateway serving grok-4 in OpenAI's convention (doc.302.ai's example response):
# `completion_tokens` 123 = 11 text + 112 reasoning, 686 + 123 = 809. Through the xai
# preset the reasoning was added again (before: 235 output tokens, a total of 921).
GROK_REASONING_INSIDE = {
    "prompt_tokens": 686,
    "completion_tokens": 123,
    "total_tokens": 809,
    "prompt_tokens_details": {"cached_tokens": 679, "text_tokens": 686},
    "completion_tokens_details": {"text_tokens": 11, "reasoning_tokens": 112},
}


@pytest.mark.parametrize("provider", ["xai", "custom"])
def test_reasoning_inside_the_completion_is_not_added_again(provider: str) -> None:
    usage = _usage(_chat(GROK_REASONING_INSIDE), provider)
    assert _counts(usage) == (7, 123, 112, 679, 809)


async def test_the_record_of_a_live_xai_turn_counts_the_reasoning_once(serve: Serve) -> None:
    # The same usage over HTTP (a loopback server in xAI's place): the record's usage.
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_chat(GROK_REASONING_INSIDE))
        return response

    base_url = await serve(handler)
    async with rxllm.provider("xai", base_url=base_url, api_key="xai-test") as p:
        record = await p.complete(
            rxllm.ChatRequest(model="grok-4", messages=[rxllm.Message.user("hi")])
        )
    assert record.text == "Hi"
    assert record.usage is not None
    assert _counts(record.usage) == (7, 123, 112, 679, 809)


@pytest.mark.parametrize("with_total", [True, False], ids=["with total", "without total"])
def test_reasoning_larger_than_the_completion_is_apart_from_it(with_total: bool) -> None:
    # router-for-me/CLIProxyAPI#5733: its OpenAI-compatible endpoint in front of Gemini
    # sent `completion_tokens` 0 beside `reasoning_tokens` 60 (21 + 60 = 81). Before:
    # an output of 0 that "includes" 60 reasoning tokens.
    raw: dict[str, Any] = {
        "prompt_tokens": 21,
        "completion_tokens": 0,
        "completion_tokens_details": {"reasoning_tokens": 60},
    }
    if with_total:
        raw["total_tokens"] = 81
    usage = _usage(_chat(raw), "custom")
    assert _counts(usage) == (21, 60, 60, 0, 81)


def test_without_a_total_each_preset_keeps_its_own_reading() -> None:
    # Nothing in the counts tells: OpenAI's family counts reasoning in the completion,
    # xAI apart from it (the preset's `reasoning_in_completion=False`).
    raw = {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 40},
        "completion_tokens_details": {"reasoning_tokens": 30},
    }
    assert _counts(_usage(_chat(raw), "openai")) == (60, 50, 30, 40, 150)
    assert _counts(_usage(_chat(raw), "xai")) == (60, 80, 30, 40, 180)


def test_hostile_counts_still_make_a_usage() -> None:
    # Counts of the wrong type count as 0 (as `Usage.of` reads them), never a traceback.
    raw = {
        "prompt_tokens": "12",
        "completion_tokens": 3.0,
        "total_tokens": True,
        "prompt_tokens_details": {"cached_tokens": float("nan")},
        "completion_tokens_details": {"reasoning_tokens": -5},
    }
    events = replay(_chat(raw), "custom")
    usage = summarize(events).usage
    assert usage is not None
    assert _counts(usage) == (0, 3, 0, 0, 3)
    assert events[-1].type == "done"
    # Before: each ended a whole turn in `error(kind="protocol")`, a TypeError of the
    # arithmetic done before `Usage.of` could read the counts.
    raw = {"input_tokens": "12", "input_tokens_details": {"cached_tokens": 3}, "output_tokens": 1}
    events = replay(_responses(raw), "openai-responses")
    usage = summarize(events).usage
    assert usage is not None
    assert _counts(usage) == (0, 1, 0, 3, 4)
    assert events[-1].type == "done"


# -------------------------------------- every capture's total is the wire's own


_WIRE_TOTAL = re.compile(rb'"(?:total_tokens|totalTokenCount)"\s*:\s*(\d+)')
_PROVIDERS = {"gemini": "google"}


def _usage_captures() -> list[Path]:
    folders = ["openai", "openai-responses", "azure-openai", "deepseek", "gemini", "groq"]
    folders += ["llamacpp", "mistral", "openrouter", "snowflake", "together", "vllm"]
    folders += ["xai", "zai"]
    paths = [path for folder in folders for path in captures_of(folder)]
    return [path for path in paths if _WIRE_TOTAL.search(path.read_bytes())]


@needs_captures
@pytest.mark.parametrize("path", _usage_captures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_normalized_total_is_the_total_the_provider_sent(path: Path) -> None:
    data = path.read_bytes()
    totals = _WIRE_TOTAL.findall(data)
    provider = _PROVIDERS.get(path.parent.name, path.parent.name)
    if b"response.created" in data:
        provider = "openai-responses"
    usage = summarize(replay(data, provider)).usage
    assert usage is not None
    assert usage.total_tokens == int(totals[-1])


# ------------------------------------------ Anthropic: a zero in message_delta


def _anthropic(start: dict[str, Any], delta: dict[str, Any]) -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude"}
    events = [
        ("message_start", {"message": message | {"content": [], "stop_reason": None,
                                                 "usage": start}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": delta}),
        ("message_stop", {}),
    ]  # fmt: skip
    return "".join(
        f"event: {name}\ndata: {json.dumps({'type': name} | payload)}\n\n"
        for name, payload in events
    ).encode()


def test_a_zero_in_message_delta_does_not_erase_the_input_counted_at_the_start() -> None:
    # Anthropic's delta counts are cumulative: a compatible server's `message_delta` with
    # `input_tokens: 0` beside the output (envoyproxy/ai-gateway#1631: "The message_delta
    # event typically has input_tokens=0 ... which overwrites the correct input token
    # count"; #2292 merges delta fields "only when non-zero"). Before: 0 input tokens.
    start = {
        "input_tokens": 317,
        "cache_creation_input_tokens": 4425,
        "cache_read_input_tokens": 12,
        "output_tokens": 1,
    }
    delta = {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 16,
    }
    usage = _usage(_anthropic(start, delta), "anthropic")
    assert _counts(usage) == (317, 16, 0, 12, 317 + 16 + 12 + 4425)
    assert usage.cache_write_tokens == 4425


def test_counts_first_given_in_message_delta_are_read() -> None:
    # The other way round (envoyproxy/ai-gateway#2290, sgl-project/sglang#20678): the
    # start says 0, the delta holds the turn's counts.
    start = {"input_tokens": 0, "output_tokens": 0}
    delta = {"input_tokens": 4522, "cache_creation_input_tokens": 4511, "output_tokens": 5}
    usage = _usage(_anthropic(start, delta), "anthropic")
    assert _counts(usage) == (4522, 5, 0, 0, 9038)
    assert usage.cache_write_tokens == 4511


@pytest.mark.parametrize(
    "start",
    [
        {"input_tokens": 8834, "output_tokens": 0},  # QwenCloud's: no cache counts
        {"input_tokens": 8834, "cache_read_input_tokens": 0, "output_tokens": 0},  # Kimi's
    ],
)
async def test_a_zero_input_beside_a_cache_count_is_the_split_of_the_prompt(
    serve_body: ServeBody, start: dict[str, Any]
) -> None:
    # Kimi's and QwenCloud's Anthropic-compatible endpoints count the whole prompt as
    # input in `message_start`, then split it in `message_delta` (maximhq/bifrost#5355,
    # #5510): a prompt read whole from the cache is 0 input beside 8834 cached. Before:
    # 8834 input and 8834 cached, a total of 18094.
    delta = {
        "input_tokens": 0,
        "output_tokens": 426,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 8834,
    }
    data = _anthropic(start, delta)
    base_url = await serve_body(data)
    async with rxllm.provider("anthropic", base_url=base_url, api_key="k", max_attempts=1) as p:
        record = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    assert record.terminal.type == "done"
    assert record.usage is not None
    assert _counts(record.usage) == (0, 426, 0, 8834, 9260)
    assert _counts(_usage(data, "anthropic")) == (0, 426, 0, 8834, 9260)


def test_a_gemini_count_of_the_wrong_type_counts_as_zero() -> None:
    # Before: `error(kind="protocol")` ("the end of the stream could not be read
    # (TypeError)") after a whole answer, from the sums done before `Usage.of`.
    chunk = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Hi"}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": "12",
            "candidatesTokenCount": 2,
            "thoughtsTokenCount": 3.0,
            "cachedContentTokenCount": None,
            "totalTokenCount": 17,
        },
        "modelVersion": "gemini-2.5-flash",
    }
    events = replay_every_way(f"data: {json.dumps(chunk)}\r\n\r\n".encode(), "google")
    assert [event.type for event in events] == ["text", "usage", "done"]
    usage = summarize(events).usage
    assert usage is not None
    assert _counts(usage) == (0, 5, 3, 0, 5)


def test_openrouter_cache_writes_inside_the_prompt_are_taken_out_of_it() -> None:
    # openrouter.ai/docs, Usage Accounting: 194 prompt tokens of which 100 written to the
    # cache, 194 + 2 = 196.
    usage = _usage(
        _chat(
            {
                "completion_tokens": 2,
                "completion_tokens_details": {"reasoning_tokens": 0},
                "cost": 0.95,
                "cost_details": {"upstream_inference_cost": 19},
                "prompt_tokens": 194,
                "prompt_tokens_details": {
                    "cached_tokens": 0,
                    "cache_write_tokens": 100,
                    "audio_tokens": 0,
                },
                "total_tokens": 196,
            }
        ),
        "openrouter",
    )
    assert _counts(usage) == (94, 2, 0, 0, 196)
    assert (usage.cache_write_tokens, usage.cost_usd) == (100, 0.95)
