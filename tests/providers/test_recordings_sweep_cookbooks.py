"""Streams printed in the providers' own cookbooks and docs notebooks: raw SSE lines a
notebook shows (a `curl --no-buffer` cell's output), and SDK chunk objects a notebook
prints, written back as the wire JSON they were parsed from (each field under its wire
name, `None` as `null`; what the SDK adds and the wire never sends, such as the
`[DONE]` it consumes, is said beside it).

Each body is written by hand from the notebook named beside it (its essential events,
long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that notebook shows its reader.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, replay_every_way, summarize


def _data(*payloads: dict[str, Any], crlf: bool = False, done: bool = False) -> bytes:
    """Unnamed SSE events, one JSON payload each (`[DONE]` after them if `done`)."""
    end = "\r\n\r\n" if crlf else "\n\n"
    lines = [f"data: {json.dumps(p, ensure_ascii=False)}{end}" for p in payloads]
    if done:
        lines.append(f"data: [DONE]{end}")
    return "".join(lines).encode()


# -- Gemini ---------------------------------------------------------------------------


_GEMINI_RATINGS = [
    {"category": f"HARM_CATEGORY_{name}", "probability": "NEGLIGIBLE"}
    for name in ("SEXUALLY_EXPLICIT", "HATE_SPEECH", "HARASSMENT", "DANGEROUS_CONTENT")
]


def test_gemini_rest_streaming_every_chunk_says_stop_and_none_says_usage() -> None:
    """google-gemini/cookbook quickstarts/rest/Streaming_REST.ipynb: `curl
    ...gemini-pro:streamGenerateContent?alt=sse --no-buffer`, its output as printed: six
    `data:` events (CRLF as Gemini ends them), each a candidate with one text part,
    `finishReason: "STOP"`, `index: 0` and four safety ratings; the first carries
    `promptFeedback` too; no `usageMetadata` anywhere. gemini-pro said STOP on every
    chunk, not only the last: the story is the six texts in order, one `done` at the
    end of the body, and no usage."""
    texts = [
        "In the quaint, sunlit cottage nestled amidst a lush meadow, resided two feline",
        " companions named Mittens and Whiskers.",
        " on the other hand, was a playful and mischievous white tomcat.\n\n",
        ' a sweet fragrance.\n\n"My, what a lovely day it is," Mittens purred.',
        ' known as the "冒险伙伴" (Adventure Buddies) of the meadow, their love for each',
        " other and for adventure stronger than ever.",
    ]
    chunks: list[dict[str, Any]] = [
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                    "safetyRatings": _GEMINI_RATINGS,
                }
            ]
        }
        for text in texts
    ]
    chunks[0]["promptFeedback"] = {"safetyRatings": _GEMINI_RATINGS}
    check(
        summarize(replay_every_way(_data(*chunks, crlf=True), "google")),
        Expect(text="".join(texts), raw_stop_reason="STOP"),
    )


# -- OpenAI chat and its compatible servers ------------------------------------------------


def _chunk(
    chunk_id: str, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1716471247,
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **extra,
    }


def test_openai_cookbook_include_usage_chunk_with_no_choices_after_the_stop() -> None:
    """openai/openai-cookbook examples/How_to_stream_completions.ipynb, section 4
    (`stream_options={"include_usage": True}`, gpt-3.5-turbo, "What's 1+1? Answer in one
    word."): the printed chunks are a role chunk with empty content, "2", a `stop`
    chunk with an empty delta, each with `usage: null`, then `choices: []` with usage
    1 completion + 19 prompt = 20. The SDK ends at `data: [DONE]`, which the wire sends
    after them. The answer "2", the usage of the last chunk, `stop`."""
    chunk_id, model = "chatcmpl-8ZB9m2Ubv8FJs3CIb84WvYwqZCHST", "gpt-3.5-turbo-0613"
    body = _data(
        _chunk(chunk_id, model, {"role": "assistant", "content": ""}, usage=None),
        _chunk(chunk_id, model, {"content": "2"}, usage=None),
        _chunk(chunk_id, model, {}, "stop", usage=None),
        {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": 1716471247,
            "model": model,
            "system_fingerprint": None,
            "choices": [],
            "usage": {"completion_tokens": 1, "prompt_tokens": 19, "total_tokens": 20},
        },
        done=True,
    )
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(text="2", usage=(19, 1, 0, 0, 20), model=model),
    )


def test_groq_cookbook_three_whole_calls_and_usage_in_x_groq_of_the_finish() -> None:
    """groq/groq-api-cookbook streaming-tool-use/streaming-tool-use.ipynb
    (llama3-70b-8192, "What is the weather in Paris, Tokyo and Madrid?"), the printed
    `ChatCompletionChunk`s: a role chunk with empty content and `x_groq: {id}` (no usage
    yet), three chunks each holding one whole call (its index, id, name and arguments
    at once), then the `tool_calls` finish whose `x_groq.usage` holds the counts (934
    prompt, 121 completion, Groq's timings beside them) and no top-level `usage`. The
    SDK ends at `data: [DONE]`. Three calls dispatched with their arguments, the
    usage, `tool_use`."""
    chunk_id, model = "chatcmpl-14f9b8e2-0b43-4587-b3c5-9274cbd9c658", "llama3-70b-8192"
    request = "req_01hyjthc9rfz2t31hma8xwj8kj"

    def call(index: int, call_id: str, city: str) -> dict[str, Any]:
        function = {"arguments": json.dumps({"city": city}, separators=(",", ":"))}
        function["name"] = "get_weather"
        entry = {"index": index, "id": call_id, "function": function, "type": "function"}
        return {"content": None, "role": None, "function_call": None, "tool_calls": [entry]}

    usage = {
        "completion_time": 0.387109752,
        "completion_tokens": 121,
        "prompt_time": 0.213729859,
        "prompt_tokens": 934,
        "queue_time": 0.08143180000000003,
        "total_time": 0.6008396109999999,
        "total_tokens": 1055,
    }
    body = _data(
        _chunk(chunk_id, model, {"content": "", "role": "assistant"}, x_groq={"id": request}),
        _chunk(chunk_id, model, call(0, "call_h53x", "Paris")),
        _chunk(chunk_id, model, call(1, "call_2nr3", "Tokyo")),
        _chunk(chunk_id, model, call(2, "call_4py5", "Madrid")),
        _chunk(chunk_id, model, {}, "tool_calls", x_groq={"usage": usage, "id": request}),
        done=True,
    )
    check(
        summarize(replay_every_way(body, "groq")),
        Expect(
            text="",
            tools=(
                ("call_h53x", "get_weather", {"city": "Paris"}),
                ("call_2nr3", "get_weather", {"city": "Tokyo"}),
                ("call_4py5", "get_weather", {"city": "Madrid"}),
            ),
            usage=(934, 121, 0, 0, 1055),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
