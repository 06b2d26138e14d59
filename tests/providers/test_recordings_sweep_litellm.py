"""Recordings and chunk lists of LiteLLM, LangChain (langchain, langchain-google),
LlamaIndex and openai-agents-python: the shapes the earlier sweeps did not replay.

Each body is written by hand from the test or recording named beside it (its essential
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that project's own test expects.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import Expect, check, replay_every_way, summarize

GPT_4O = "gpt-4o-2024-08-06"


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-parallel",
        "object": "chat.completion.chunk",
        "created": 1728933352,
        "model": GPT_4O,
        "system_fingerprint": "fp_a7d06e42a7",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _streamed_call(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    """A call as OpenAI streams one: id and name first, then its arguments in pieces."""
    opener = {"index": index, "id": call_id, "type": "function"}
    chunks = [_chunk({"tool_calls": [opener | {"function": {"name": name, "arguments": ""}}]})]
    for start in range(0, len(arguments), 9):
        piece = arguments[start : start + 9]
        chunks.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    return chunks


def _wrapper(*calls: tuple[str, dict[str, Any]]) -> str:
    uses = [{"recipient_name": name, "parameters": parameters} for name, parameters in calls]
    return json.dumps({"tool_uses": uses})


def test_a_parallel_wrapper_on_the_chat_wire_is_requested_as_the_calls_it_wraps() -> None:
    """BerriAI/litellm tests/test_litellm/litellm_core_utils/llm_response_utils/
    test_parallel_tool_call_shift.py: gpt-4o-2024-08-06 answers with five calls, two of
    them the `multi_tool_use.parallel` wrapper it sometimes sends in place of parallel
    calls (vercel/ai#2786: "Model tried to call unavailable tool
    'multi_tool_use.parallel'"), each wrapping `functions.<tool>` calls. LiteLLM expands
    every wrapper in place: get_weather, get_time, get_date, get_news, get_quote,
    get_forecast. Streamed, as the chat wire sends calls, the turn is those six requests
    in that order, each wrapped call under the wrapper's id and `_{n}`, as the Responses
    wire reads the wrapper. Before: the wrapper itself was a `tool_request` named
    `multi_tool_use.parallel`, a tool the client never declared."""
    calls = [
        ("0", "get_weather", "{}"),
        (
            "m1",
            "multi_tool_use.parallel",
            _wrapper(("functions.get_time", {"tz": "UTC"}), ("functions.get_date", {"tz": "UTC"})),
        ),
        ("2", "get_news", "{}"),
        ("m2", "multi_tool_use.parallel", _wrapper(("functions.get_quote", {"sym": "AAPL"}))),
        ("4", "get_forecast", "{}"),
    ]
    chunks = [_chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, arguments) in enumerate(calls):
        chunks += _streamed_call(index, call_id, name, arguments)
    chunks.append(_chunk({}, "tool_calls"))
    check(
        summarize(replay_every_way(_sse(*chunks), "openai")),
        Expect(
            tools=(
                ("0", "get_weather", {}),
                ("m1_0", "get_time", {"tz": "UTC"}),
                ("m1_1", "get_date", {"tz": "UTC"}),
                ("2", "get_news", {}),
                ("m2_0", "get_quote", {"sym": "AAPL"}),
                ("4", "get_forecast", {}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=GPT_4O,
        ),
    )


@pytest.mark.parametrize("arguments", ['{"tool_uses": "nope"}', '{"tool_uses": [42]}'])
def test_a_parallel_wrapper_that_wraps_no_call_is_requested_as_it_came(arguments: str) -> None:
    """BerriAI/litellm tests/test_litellm/litellm_core_utils/llm_response_utils/
    test_handle_invalid_parallel_tool_calls.py: a wrapper whose `tool_uses` holds no call
    to expand "must come back untouched". It is requested as it came, its arguments
    unchanged: nothing is invented from them, and nothing is dropped."""
    chunks = _streamed_call(0, "call_1", "multi_tool_use.parallel", arguments)
    body = _sse(*chunks, _chunk({}, "tool_calls"))
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(
            tools=(("call_1", "multi_tool_use.parallel", json.loads(arguments)),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=GPT_4O,
        ),
    )


def test_a_parallel_wrapper_cut_off_is_a_truncated_turn_that_shows_the_call() -> None:
    """The same wrapper, cut off before its arguments close and before the finish: the
    turn is `truncated`, nothing is requested, and the call shows as it came (its
    `tool_start`), as any call left open does."""
    arguments = _wrapper(("functions.get_time", {"tz": "UTC"}))
    chunks = _streamed_call(0, "m1", "multi_tool_use.parallel", arguments)[:3]
    events = replay_every_way(_sse(*chunks, done=False), "openai")
    check(summarize(events), Expect(terminal="error", error_kind="truncated"))
    starts = [(ev.call_id, ev.name) for ev in events if ev.type == "tool_start"]
    assert starts == [("m1", "multi_tool_use.parallel")]
