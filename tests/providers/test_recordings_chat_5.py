"""Chat-completions recordings of the public SDKs' test suites, fifth sweep: the shapes
the earlier sweeps did not replay.

Each body is written by hand from the recording named beside it (its essential chunks,
ids and long text shortened), replayed through a preset whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what the recording and its own test
say.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, log_messages, replay_every_way, summarize

DEEPSEEK = "deepseek-v4-pro"


def _sse(*payloads: dict[str, Any]) -> bytes:
    return ("".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + "data: [DONE]\n\n").encode()


def _sglang(
    delta: dict[str, Any] | None,
    finish: str | None = None,
    matched_stop: int | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A chunk as the recording's server writes it: every delta key present (`null` where
    unused), SGLang's `matched_stop` on the choice, `usage: null` until the last one."""
    choices = []
    if delta is not None:
        full = {"role": None, "content": None, "reasoning_content": None, "tool_calls": None}
        choice = {"index": 0, "delta": full | delta, "logprobs": None}
        choices = [choice | {"finish_reason": finish, "matched_stop": matched_stop}]
    return {
        "id": "7334c29da064437e9d158710cdefbae6",
        "object": "chat.completion.chunk",
        "created": 1781043300,
        "model": DEEPSEEK,
        "choices": choices,
        "usage": usage,
    }


def test_sglang_matched_stop_is_known_and_the_turn_reads_whole() -> None:
    """vercel/ai packages/azure/src/__fixtures__/azure-deepseek-reasoning.1.chunks.txt
    (deepseek-v4-pro on Azure AI Foundry, an SGLang server behind the chat wire): every
    delta carries all its keys, `null` where unused; each choice has SGLang's
    `matched_stop` (`null`, then `1`, the id of the stop token that ended the turn, on the
    finish); the usage chunk has `prompt_tokens_details: null` and a top-level
    `reasoning_tokens: 0`. The turn is its reasoning, its text, the usage and `stop`.
    `matched_stop` says which token stopped the engine, as vLLM's `stop_reason` does:
    nothing an event carries, so it is a known key. Before: it was logged as a field
    the stream could not read, as if something had been dropped."""
    body = _sse(
        _sglang({"role": "assistant", "content": ""}),
        _sglang({"reasoning_content": "We"}),
        _sglang({"reasoning_content": " need to invent a holiday."}),
        _sglang({"content": "Knicks Day"}),
        _sglang({"content": " 🧡💙"}),
        _sglang({}, "stop", matched_stop=1),
        _sglang(
            None,
            usage={
                "prompt_tokens": 19,
                "total_tokens": 1739,
                "completion_tokens": 1720,
                "prompt_tokens_details": None,
                "reasoning_tokens": 0,
            },
        ),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "azure-openai")
    check(
        summarize(events),
        Expect(
            text="Knicks Day 🧡💙",
            reasoning="We need to invent a holiday.",
            usage=(19, 1720, 0, 0, 1739),
            model=DEEPSEEK,
        ),
    )
    assert not [message for message in messages if "has no event" in message]


def test_thought_tokens_counted_in_the_total_alone_are_the_reasoning() -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_openai/
    test_compatible_api_with_tool_calls_without_id.yaml: gemini-2.5-pro through Gemini's
    OpenAI-compatible endpoint calls `get_current_time` (id `function-call-...`, no
    `index`, arguments `{}`) with usage `prompt_tokens` 35, `completion_tokens` 12 and
    `total_tokens` 126: the 79 tokens between are its thoughts, which that endpoint counts
    in the total alone (no `completion_tokens_details`). The recording is of a
    non-streamed turn; here its call and usage come as the endpoint streams them, whole in
    the last chunk with the finish. The output is 12 + 79 = 91 tokens, 79 of them
    reasoning, and the total stays the wire's 126. Before: the usage said 35 + 12 = 47,
    and the 79 thought tokens billed as output were lost."""
    call = {
        "function": {"arguments": "{}", "name": "get_current_time"},
        "id": "function-call-2900024254458648715",
        "type": "function",
    }
    choice = {
        "delta": {"role": "assistant", "tool_calls": [call]},
        "finish_reason": "tool_calls",
        "index": 0,
    }
    body = _sse(
        {
            "choices": [choice],
            "created": 1769785752,
            "id": "mMl8af2XFseqqtsPtbCn6Qg",
            "model": "gemini-2.5-pro",
            "object": "chat.completion.chunk",
            "usage": {"completion_tokens": 12, "prompt_tokens": 35, "total_tokens": 126},
        }
    )
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(
            tools=(("function-call-2900024254458648715", "get_current_time", {}),),
            usage=(35, 91, 79, 0, 126),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gemini-2.5-pro",
        ),
    )
