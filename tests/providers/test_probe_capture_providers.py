"""Shapes of the captured OpenAI-compatible providers that their captures lack, written by
hand from each provider's own reference (named beside it), replayed whole and cut at
arbitrary byte boundaries, and streamed once end to end over a loopback server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Citation, Event
from tests.support import ServeBody, Summary, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any]) -> bytes:
    frames = "".join(f"data: {json.dumps(payload)}\n\n" for payload in payloads)
    return (frames + "data: [DONE]\n\n").encode()


def _chunk(
    model: str, delta: dict[str, Any], finish: str | None = None, **top: Any
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": model,
        "choices": [choice],
        **top,
    }


async def _streamed(serve_body: ServeBody, body: bytes, provider: str) -> list[Event]:
    """The events of `body` served over HTTP on loopback to `provider`'s preset."""
    base_url = await serve_body(body)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider(
        provider, api_key="k", base_url=base_url, allow_private_network=True, max_attempts=1
    ) as p:
        return [event async for event in p.astream(request)]


def _citations(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(ev.url, ev.title) for ev in events if isinstance(ev, Citation)]


def _usage(summary: Summary) -> tuple[int, int, int, int, int]:
    usage = summary.usage
    assert usage is not None
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        usage.cache_read_tokens,
        usage.total_tokens,
    )


# ---------------------------------------- think tags where the provider documents them

# console.groq.com/docs/reasoning: `reasoning_format` `raw` "Includes reasoning within
# <think> tags in the main text content", and "the format defaults to raw or parsed when
# JSON mode or tool use are enabled": a qwen/qwen3-32b turn without tools thinks inside
# `content`. Groq's chunk: `x_groq.id` on the first, usage in `x_groq` and at the top
# level on the last (as in the groq capture).
_GROQ_QWEN = "qwen/qwen3-32b"
_GROQ_USAGE = {
    "queue_time": 0.05,
    "prompt_tokens": 14,
    "prompt_time": 0.002,
    "completion_tokens": 21,
    "completion_time": 0.05,
    "total_tokens": 35,
    "total_time": 0.052,
}
GROQ_RAW = _sse(
    _chunk(_GROQ_QWEN, {"role": "assistant", "content": ""}, x_groq={"id": "req_01"}),
    _chunk(_GROQ_QWEN, {"content": "<think>"}),
    _chunk(_GROQ_QWEN, {"content": "\nOkay, the user says hi"}),
    _chunk(_GROQ_QWEN, {"content": ". Greet back.\n</th"}),
    _chunk(_GROQ_QWEN, {"content": "ink>\n\nHello"}),
    _chunk(_GROQ_QWEN, {"content": "! How can I help?"}),
    _chunk(
        _GROQ_QWEN,
        {},
        "stop",
        x_groq={"id": "req_01", "usage": _GROQ_USAGE},
        usage=_GROQ_USAGE,
    ),
)

# NVIDIA NIM's DeepSeek-R1 (and Nemotron with "detailed thinking on") write their
# reasoning inside `content` between leading `<think>` tags, and NIM repeats a cumulative
# usage snapshot on every chunk: pipecat's `NvidiaLLMService` (services/nvidia/llm.py)
# strips the leading think block and keeps only the latest usage.
_NIM_R1 = "deepseek-ai/deepseek-r1"


def _nim_usage(completion: int) -> dict[str, Any]:
    return {"prompt_tokens": 9, "completion_tokens": completion, "total_tokens": 9 + completion}


NVIDIA_R1 = _sse(
    _chunk(_NIM_R1, {"role": "assistant", "content": ""}, usage=_nim_usage(0)),
    _chunk(_NIM_R1, {"content": "<think>\n"}, usage=_nim_usage(2)),
    _chunk(_NIM_R1, {"content": "2 + 2 is 4."}, usage=_nim_usage(8)),
    _chunk(_NIM_R1, {"content": "\n</think>\n\n"}, usage=_nim_usage(11)),
    _chunk(_NIM_R1, {"content": "**4**"}, usage=_nim_usage(14)),
    _chunk(_NIM_R1, {"content": ""}, "stop", usage=_nim_usage(14)),
)


@pytest.mark.parametrize(
    ("provider", "body", "reasoning", "text", "usage", "model"),
    [
        (
            "groq",
            GROQ_RAW,
            "Okay, the user says hi. Greet back.\n",
            "Hello! How can I help?",
            (14, 21, 0, 0, 35),
            _GROQ_QWEN,
        ),
        ("nvidia", NVIDIA_R1, "2 + 2 is 4.\n", "**4**", (9, 14, 0, 0, 23), _NIM_R1),
    ],
    ids=["groq-raw-reasoning-format", "nvidia-deepseek-r1"],
)
async def test_reasoning_inside_think_tags_is_reasoning(
    serve_body: ServeBody,
    provider: str,
    body: bytes,
    reasoning: str,
    text: str,
    usage: tuple[int, int, int, int, int],
    model: str,
) -> None:
    # Before: the tags and the whole chain of thought were the answer's text.
    events = replay_every_way(body, provider)
    for got in (events, await _streamed(serve_body, body, provider)):
        summary = summarize(got)
        assert (summary.reasoning, summary.text) == (reasoning, text)
        assert "<think>" not in summary.text and "</think>" not in summary.reasoning
        assert _usage(summary) == usage  # the latest cumulative snapshot, once
        assert (summary.stop_reason, summary.raw_stop_reason, summary.model) == (
            "stop",
            "stop",
            model,
        )
        assert summary.providers == {provider}
        assert kinds([ev for ev in got if ev.type != "usage"]) == ["reasoning", "text", "done"]


def test_a_groq_answer_without_think_tags_is_left_alone() -> None:
    # gpt-oss on Groq: reasoning in its own field; the content is the answer, untouched,
    # leading whitespace and a tag-like word later in it too.
    model = "openai/gpt-oss-20b"
    body = _sse(
        _chunk(model, {"role": "assistant", "content": ""}),
        _chunk(model, {"reasoning": "Say hi.", "channel": "analysis"}),
        _chunk(model, {"content": "\n"}),
        _chunk(model, {"content": "Use <think> tags? No."}),
        _chunk(model, {}, "stop", x_groq={"id": "req_2", "usage": _nim_usage(5)}),
    )
    summary = summarize(replay_every_way(body, "groq"))
    assert (summary.reasoning, summary.text) == ("Say hi.", "\nUse <think> tags? No.")
    assert _usage(summary) == (9, 5, 0, 0, 14)


# ------------------------------------------------------- Z.ai web search sources

# docs.z.ai (Web Search in Chat): a `web_search` tool in the request makes the answer
# carry, at the top level of the chunk, `web_search`: the pages read, each `{title,
# content, link, media, icon, refer, publish_date}`, which the text cites as `[ref_n]`.
_GLM = "glm-4.6"
_PAGES = [
    {
        "title": "Weather in Paris",
        "content": "Sunny, 24 C.",
        "link": "https://weather.example/paris",
        "media": "weather.example",
        "icon": "https://weather.example/favicon.ico",
        "refer": "ref_1",
        "publish_date": "2025-07-01",
    },
    {
        "title": "Paris forecast",
        "content": "Clear skies.",
        "link": "https://forecast.example/fr/paris",
        "media": "forecast.example",
        "icon": "",
        "refer": "ref_2",
        "publish_date": "2025-07-01",
    },
]
ZAI_WEB_SEARCH = _sse(
    _chunk(_GLM, {"role": "assistant", "reasoning_content": "Check the results."}),
    _chunk(_GLM, {"role": "assistant", "content": ""}, web_search=_PAGES),
    _chunk(_GLM, {"role": "assistant", "content": "Sunny, 24 C [ref_1]"}),
    _chunk(_GLM, {"role": "assistant", "content": ", clear [ref_2]."}, web_search=_PAGES),
    _chunk(
        _GLM,
        {"role": "assistant", "content": ""},
        "stop",
        usage={
            "prompt_tokens": 900,
            "completion_tokens": 30,
            "total_tokens": 930,
            "prompt_tokens_details": {"cached_tokens": 512},
            "completion_tokens_details": {"reasoning_tokens": 6},
        },
    ),
)


async def test_zai_web_search_pages_are_citations_once_each(serve_body: ServeBody) -> None:
    # Before: the `web_search` list had no event (logged at debug only).
    events = replay_every_way(ZAI_WEB_SEARCH, "zai")
    for got in (events, await _streamed(serve_body, ZAI_WEB_SEARCH, "zai")):
        assert _citations(got) == [
            ("https://weather.example/paris", "Weather in Paris"),
            ("https://forecast.example/fr/paris", "Paris forecast"),
        ]
        summary = summarize(got)
        assert summary.text == "Sunny, 24 C [ref_1], clear [ref_2]."
        assert summary.reasoning == "Check the results."
        assert _usage(summary) == (388, 30, 6, 512, 930)
        assert (summary.stop_reason, summary.model, summary.providers) == (
            "stop",
            _GLM,
            {"zai"},
        )
