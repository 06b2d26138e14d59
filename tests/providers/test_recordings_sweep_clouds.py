"""Streams of cloud platforms' model endpoints, from their SDKs' and integrations' code,
tests and docs: Databricks Model Serving (as LiteLLM's Databricks transformation and
its tests read it), and the others each test names, in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential chunks or
events, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what a client of that endpoint
should get.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- Databricks Model Serving -------------------------------------------------------------


def _databricks(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> Any:
    """A chunk of a Databricks serving endpoint's chat stream."""
    return {
        "id": "chatcmpl_6f1d0c2a",
        "object": "chat.completion.chunk",
        "created": 1744000000,
        "model": "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _summary(text: str, **signature: str) -> dict[str, Any]:
    """Databricks' reasoning content part: `{"type": "reasoning", "summary": [...]}`."""
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": text, **signature}]}


def test_databricks_reasoning_parts_in_the_content_list_are_the_reasoning() -> None:
    """Databricks serves Claude's thinking (and gpt-oss's reasoning) as a `reasoning` part
    of a content list, `{"type": "reasoning", "summary": [{"type": "summary_text", "text",
    "signature"}]}`, beside `{"type": "text", "text"}` parts: the response BerriAI/litellm#9700
    quotes, and LiteLLM's `DatabricksChatResponseIterator.chunk_parser` reads each streamed
    delta's `content` list so (`extract_reasoning_content`: every summary's text is
    reasoning, its signature the thinking block's; tests/test_litellm/llms/databricks/chat/
    test_databricks_chat_transformation.py, gpt-oss's summaries without a signature). The
    reasoning, signed once where a signature came, then the text. Before: the reasoning
    part was logged as a content chunk with no event, and the reasoning lost."""
    signature = "EqoBCkgIAhABGAIiQN6qnTjZq/CmpMmmjLoEKOpi+IB+7AH0zyUh4sQva4vTcn"
    usage = {"prompt_tokens": 41, "completion_tokens": 96, "total_tokens": 137}
    body = _sse(
        _databricks({"role": "assistant", "content": [_summary("I need five ")]}),
        _databricks({"role": "assistant", "content": [_summary("question pairs.")]}),
        _databricks({"role": "assistant", "content": [_summary("", signature=signature)]}),
        _databricks({"role": "assistant", "content": [{"type": "text", "text": "# 5 Question"}]}),
        _databricks({"role": "assistant", "content": " and Answer Pairs"}),
        _databricks({"role": "assistant", "content": ""}, "stop", usage=usage),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="# 5 Question and Answer Pairs",
            reasoning="I need five question pairs.",
            signatures=1,
            usage=(41, 96, 0, 0, 137),
            model="us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]
    assert events[2].signature == signature  # type: ignore[union-attr]

    # gpt-oss on Databricks: summaries without a signature.
    body = _sse(
        _databricks({"role": "assistant", "content": [_summary("The user greets.")]}),
        _databricks({"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]}, "stop"),
    )
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(
            text="Hi!",
            reasoning="The user greets.",
            model="us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        ),
    )
