"""Streams as self-hosted OpenAI-compatible servers write them, read from the code that
writes them: mlx-lm's server.py, FastChat's openai_api_server.py, and the others each
test names, in shapes no other test replays.

Each body is written by hand from the writer named beside it (its essential chunks, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that writer means.
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


# -- mlx-lm -------------------------------------------------------------------------------


def _mlx(content: str, reasoning: str, calls: list[Any], finish: str | None = None) -> Any:
    """A chunk as mlx-lm's `generate_response` writes one: every delta holds the role, the
    content, `reasoning` and `tool_calls` (empty strings and an empty list when unsaid)."""
    return {
        "id": "chatcmpl-5d3c",
        "system_fingerprint": "0.28.3-0.29.2-macOS-15.5-arm64",
        "object": "chat.completion.chunk",
        "model": "mlx-community/Qwen3-4B-4bit",
        "created": 1760000000,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "delta": {
                    "role": "assistant",
                    "content": content,
                    "reasoning": reasoning,
                    "tool_calls": calls,
                },
            }
        ],
    }


def test_mlx_lm_reasoning_then_a_whole_call_then_usage_as_a_chat_completion() -> None:
    """ml-explore/mlx-lm mlx_lm/server.py (`handle_completion`): a `: keepalive 512/2048`
    comment while the prompt is processed; every delta carries `content`, `reasoning`
    and `tool_calls` whatever it says (`""`, `[]`); a call is parsed whole at its end tag
    and written in one delta (uuid id, index, arguments as a JSON string); the last
    delta is empty with `tool_calls` as its finish; with `include_usage` a chunk of
    `object: "chat.completion"` and no choices carries the usage (cached tokens in
    `prompt_tokens_details`). The reasoning, the call once, the usage, `tool_use`."""
    call = {
        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
        "type": "function",
        "id": "0b7d5c0e-6a57-4f0a-9d0f-1f3a2c4b5e6d",
        "index": 0,
    }
    usage = {
        "id": "chatcmpl-5d3c",
        "system_fingerprint": "0.28.3-0.29.2-macOS-15.5-arm64",
        "object": "chat.completion",
        "model": "mlx-community/Qwen3-4B-4bit",
        "created": 1760000000,
        "choices": [],
        "usage": {
            "prompt_tokens": 20,
            "completion_tokens": 30,
            "total_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 8},
        },
    }
    body = b": keepalive 512/2048\n\n" + _sse(
        _mlx("", "The user wants", []),
        _mlx("", " the weather.", []),
        _mlx("", "", [call]),
        _mlx("", "", [], "tool_calls"),
        usage,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="The user wants the weather.",
            tools=((call["id"], "get_weather", {"city": "Paris"}),),
            usage=(12, 30, 0, 8, 50),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="mlx-community/Qwen3-4B-4bit",
        ),
    )
    assert kinds(events) == ["reasoning", "tool_start", "tool_request", "usage", "done"]


# -- FastChat -----------------------------------------------------------------------------


def _fastchat(delta: dict[str, Any]) -> dict[str, Any]:
    """A chunk of FastChat's `chat_completion_stream_generator` (`exclude_unset`)."""
    return {
        "id": "chatcmpl-3xQzUJqHrGbcW9YfFhN7aT",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "vicuna-7b-v1.5",
        "choices": [{"index": 0, "delta": delta}],
    }


def test_fastchat_passes_its_workers_error_on_as_a_chunk_then_done() -> None:
    """lm-sys/FastChat fastchat/serve/openai_api_server.py
    (`chat_completion_stream_generator`): where the worker's streamed dict has a nonzero
    `error_code`, that dict is written as it came, `{"text": "**NETWORK ERROR DUE TO
    HIGH TRAFFIC...**\\n\\n(<the exception>)", "error_code": 50002}` (fastchat/
    constants.py: 50002 is CUDA_OUT_OF_MEMORY, base_model_worker.py writes it), then
    `data: [DONE]`. The turn failed, naming the worker's words; the text before it kept.
    Before: the chunk was logged as unknown keys and `[DONE]` read as a finished
    answer, `done(stop)`."""
    failure = {
        "text": "**NETWORK ERROR DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE."
        "**\n\n(CUDA out of memory. Tried to allocate 20.00 MiB)",
        "error_code": 50002,
    }
    for before, text in (([], ""), ([_fastchat({"content": "Hello"})], "Hello")):
        body = _sse(_fastchat({"role": "assistant"}), *before, failure)
        events = replay_every_way(body, "custom")
        check(summarize(events), Expect(text=text, terminal="error", error_kind="stream_error"))
        error = events[-1].error  # type: ignore[union-attr]
        assert "CUDA out of memory" in error.message
        assert error.raw is not None and '"error_code": 50002' in error.raw
