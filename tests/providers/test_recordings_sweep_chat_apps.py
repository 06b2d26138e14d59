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

from rxllm.events import ReasoningDelta
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


def _minimax_chunk(
    delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": "055ccc4cbe1ca0dc18037256237d0823",
        "object": "chat.completion.chunk",
        "created": 1762498892,
        "model": "MiniMax-M2",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "usage": None,
        **extra,
    }


def test_reasoning_details_as_one_object_per_delta_not_a_list() -> None:
    """lobehub/lobehub packages/model-runtime/src/core/streams/openai/openai.ts reads
    MiniMax M2's `reasoning_details` as a list of `{type, id, format, index, text}`
    (its test's chunks), or as one such object, or as a string; relays pass a provider's
    value on as it came, "objects and scalars" included (Layr-Labs/d-inference#630). One
    object per delta is that detail: its text is the reasoning, once, the detail's own
    fields kept; before, the turn ended at the first such delta in a `protocol` error
    ("'str' object has no attribute 'get'": the object's keys were read as details)."""
    thoughts = ['中文打招呼说"你好"\uff0c', "我需要用中文回复。"]

    def detail(n: int) -> dict[str, Any]:
        return {
            "type": "reasoning.text",
            "id": f"reasoning-text-{n + 1}",
            "format": "MiniMax-response-v1",
            "index": 0,
            "text": thoughts[n],
        }

    body = _sse(
        _minimax_chunk({"content": "", "role": "assistant", "reasoning_details": detail(0)}),
        _minimax_chunk({"reasoning_details": detail(1)}),
        _minimax_chunk({"content": "你好"}),
        _minimax_chunk({"content": "\uff01"}),
        _minimax_chunk(
            {"content": ""},
            "stop",
            usage={"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        ),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="你好\uff01",
            reasoning="".join(thoughts),
            usage=(10, 20, 0, 0, 30),
            model="MiniMax-M2",
        ),
    )
    closed = [e.details for e in events if isinstance(e, ReasoningDelta) and e.details]
    assert closed == [
        {
            "type": "reasoning.text",
            "id": "reasoning-text-2",
            "format": "MiniMax-response-v1",
            "index": 0,
        }
    ]


def test_reasoning_details_as_a_string_is_the_reasoning_text() -> None:
    """The same field as a string (LobeChat's second form of it: `typeof details ===
    'string'`): the reasoning's text, as `reasoning` is, and not said twice where
    `reasoning` beside it carries the same text; a number there has no event. Before,
    the turn ended in a `protocol` error at the first such delta."""
    body = _sse(
        _minimax_chunk({"role": "assistant", "reasoning_details": "The user greets. "}),
        _minimax_chunk({"reasoning_details": "Reply in kind.", "reasoning": "Reply in kind."}),
        _minimax_chunk({"reasoning_details": 0}),
        _minimax_chunk({"content": "Hello!"}, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="Hello!", reasoning="The user greets. Reply in kind.", model="MiniMax-M2"),
    )
