"""Chat-completions recordings of the public SDKs' test suites, fourth sweep: the shapes
the earlier sweeps did not replay.

Each body is written by hand from the recording named beside it (its essential chunks,
ids and long text shortened), replayed through a preset whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what the recording and its own test
say.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, replay_every_way, summarize

QWEN = "qwen3-max"


def _sse(*payloads: dict[str, Any]) -> bytes:
    return ("".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + "data: [DONE]\n\n").encode()


def _qwen(delta: dict[str, Any] | None, finish: str | None = None, **top: Any) -> dict[str, Any]:
    """A chunk as Alibaba's compatible mode writes it: `usage: null` until the last one."""
    choices = [] if delta is None else [{"delta": delta, "finish_reason": finish, "index": 0}]
    return {
        "choices": choices,
        "object": "chat.completion.chunk",
        "usage": None,
        "created": 1770764942,
        "system_fingerprint": None,
        "model": QWEN,
        "id": "chatcmpl-3792851e",
    } | top


def test_qwen_explicit_cache_creation_is_a_cache_write() -> None:
    """vercel/ai packages/alibaba/src/__fixtures__/alibaba-reasoning.chunks.txt (qwen3-max
    through Alibaba Cloud Model Studio's OpenAI-compatible mode): `reasoning_content`
    deltas, then content, the finish, and a usage-only chunk. Here its usage is the one
    of a turn that created an explicit cache (`cache_control: {"type": "ephemeral"}` in
    the request): `prompt_tokens_details.cache_creation_input_tokens` beside
    `cached_tokens`, both inside `prompt_tokens` (alibabacloud.com/help/en/model-studio/
    context-cache: creation is billed at 125% of the input price, a hit at 10%; vercel/ai
    packages/alibaba/src/convert-alibaba-usage.test.ts reads 200 prompt tokens with 120
    read and 50 written as 30 uncached). Before: the 50 written tokens were counted as
    plain input (80) and no cache write was reported."""
    usage = {
        "prompt_tokens": 200,
        "completion_tokens": 75,
        "total_tokens": 275,
        "completion_tokens_details": {"reasoning_tokens": 25},
        "prompt_tokens_details": {
            "cached_tokens": 120,
            "cache_creation_input_tokens": 50,
            "cache_creation": {"ephemeral_5m_input_tokens": 50},
            "cache_type": "ephemeral",
        },
    }
    body = _sse(
        _qwen({"content": None, "role": "assistant", "reasoning_content": ""}),
        _qwen({"content": None, "reasoning_content": "We are asked:"}),
        _qwen({"content": None, "reasoning_content": " count the r's."}),
        _qwen({"content": "**Answer: ", "reasoning_content": None}),
        _qwen({"content": "3**", "reasoning_content": None}),
        _qwen({"content": "", "reasoning_content": None}, "stop"),
        _qwen(None, usage=usage),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="**Answer: 3**",
            reasoning="We are asked: count the r's.",
            usage=(30, 75, 25, 120, 275),
            cache_write=50,
            model=QWEN,
        ),
    )
