"""Streams that chat applications' own stream parsers name and handle (enricoros/big-AGI's
AIX parsers, lobehub/lobehub's model-runtime streams and their tests, and the relays
those apps are pointed at), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential chunks, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what the source says the provider sent.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- chat completions family -------------------------------------------------------------


def _zen_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chat_1",
        "object": "chat.completion.chunk",
        "created": 1710000000,
        "model": "glm-5.2",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _inference_cost(cost: str, **counts: int) -> dict[str, Any]:
    """OpenCode Zen's last chunk before `[DONE]`: no id, no model, no choice."""
    return {
        "choices": [],
        "x-opencode-type": "inference-cost",
        "cost": cost,
        "normalizedUsage": counts,
    }


def test_opencode_zen_cost_in_a_trailing_inference_cost_chunk() -> None:
    """enricoros/big-AGI src/modules/aix/server/dispatch/chatGenerate/parsers/
    openai.parser.ts ("[OpenCode, 2026-07-11] Trailing cost-accounting event (no
    id/model/choices) - harvest cost/usage"), and the relays that strip it (new-api's
    OpenCode Go adaptor tests; anomalyco/opencode#24189): since July 2026 opencode.ai/zen
    puts the usage on the finish chunk, then sends `{"choices": [], "x-opencode-type":
    "inference-cost", "cost": "0.00002772", "normalizedUsage": {...}}` before `[DONE]`,
    the request's cost in USD as a decimal string. The usage is the finish chunk's, and
    the cost is the turn's (before: the chunk's three fields logged as having no event,
    no cost)."""
    usage = {
        "prompt_tokens": 90,
        "completion_tokens": 54,
        "total_tokens": 144,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 52},
    }
    body = _sse(
        _zen_chunk({"role": "assistant", "reasoning_content": "The user greets."}),
        _zen_chunk({"content": "hi"}),
        _zen_chunk({}, "stop", usage=usage),
        _inference_cost(
            "0.00002772",
            inputTokens=90,
            outputTokens=54,
            reasoningTokens=52,
            cacheReadTokens=0,
            cacheWrite5mTokens=0,
            cacheWrite1hTokens=0,
        ),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="hi",
            reasoning="The user greets.",
            usage=(90, 54, 52, 0, 144),
            cost=0.00002772,
            model="glm-5.2",
        ),
    )
    assert kinds(events)[-2:] == ["usage", "done"]


def test_opencode_zen_counts_only_in_its_inference_cost_chunk() -> None:
    """The same chunk where no usage came before it (new-api's OpenCode Go adaptor test
    `TestChatCostExtensionBecomesUsageFallback`: the finish chunk without usage, then
    `normalizedUsage` `{inputTokens: 12, outputTokens: 3, reasoningTokens: 2,
    cacheReadTokens: 88}`, which that relay writes back as 100 prompt tokens, 88 of them
    cached): its counts are the turn's usage, the input apart from the cache reads and
    the output with its reasoning, as rxllm counts them; its cost "0" is a cost of 0
    (before: no usage at all)."""
    body = _sse(
        _zen_chunk({"role": "assistant", "content": "OK"}, "stop"),
        _inference_cost("0", inputTokens=12, outputTokens=3, reasoningTokens=2, cacheReadTokens=88),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="OK", usage=(12, 3, 2, 88, 103), cost=0.0, model="glm-5.2"),
    )
