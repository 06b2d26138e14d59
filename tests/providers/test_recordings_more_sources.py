"""Streamed recordings from repositories the captures do not come from.

simonw/llm and its plugins' cassettes and fixtures, googleapis/js-genai's recorded
replays. Each body is built by hand from the recording named beside it (its essential
lines), replayed whole and cut at arbitrary byte boundaries (`replay_every_way`), and
checked against what the recording's own test expects.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import replay_every_way, summarize


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"} | {
        "choices": [choice],
        **extra,
    }


def test_data_lines_written_without_blank_lines_are_one_event_each() -> None:
    """simonw/llm tests/fixtures/stream_tool_call.txt (gpt-4o-mini): every chunk on a
    `data:` line of its own, with no blank line between events, and the last line
    `data: [DONE]` without a line end. Its test (tests/test_tools.py,
    `test_tool_completion_stream`) expects one `read_files` call with
    `{"filenames": ["LICENSE.txt"]}`. vscode-copilot-chat's SSE fixtures are written
    the same way. Each line is a whole JSON value while the joined data is not: each
    line is its event."""
    opener = {"index": 0, "id": "call_eHh2", "type": "function"}
    chunks = [
        _chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [opener | {"function": {"name": "read_files", "arguments": ""}}],
                "refusal": None,
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'filenames":["'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'LICENSE.txt"]}'}}]}),
        _chunk({}, "tool_calls"),
    ]
    body = ("".join(f"data: {json.dumps(c)}\n" for c in chunks) + "data: [DONE]").encode()
    summary = summarize(replay_every_way(body, "openai"))
    assert summary.tool_calls == [("call_eHh2", "read_files", {"filenames": ["LICENSE.txt"]})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


def test_a_call_opened_with_null_arguments_and_finished_is_a_call_without_parameters() -> None:
    """simonw/llm tests/cassettes/test_tools_streaming/test_tools_streaming_variant_d.yaml
    (OpenRouter, provider Meta): the call's one delta has `"arguments": null`, then the
    `tool_calls` finish comes on a chunk with `content: ""` and the usage (with its
    cost). The test expects `llm_version` called with `{}`."""
    openrouter = {"provider": "Meta", "model": "muse-spark-1.1"}
    usage = {
        "prompt_tokens": 57,
        "completion_tokens": 17,
        "total_tokens": 74,
        "cost": 0.00007159,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    call = {"index": 0, "id": "0", "type": "function"}
    body = (
        "".join(
            f"data: {json.dumps(chunk | openrouter)}\n\n"
            for chunk in (
                _chunk({"role": "assistant", "content": ""}),
                _chunk(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            call | {"function": {"name": "llm_version", "arguments": None}}
                        ],
                    }
                ),
                _chunk({"role": "assistant", "content": ""}, "tool_calls", usage=usage),
            )
        )
        + "data: [DONE]\n\n"
    ).encode()
    summary = summarize(replay_every_way(body, "openrouter"))
    assert summary.tool_calls == [("0", "llm_version", {})]
    assert (summary.terminal, summary.stop_reason, summary.text) == ("done", "tool_use", "")
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (57, 17)
    assert summary.usage.cost_usd == pytest.approx(0.00007159)


def test_a_recorded_response_head_of_status_and_header_lines_is_not_the_stream() -> None:
    """googleapis/js-genai test/system/recordings/2052634315c3....resp (gemini-2.0-flash
    on Vertex): the recorder writes `Status code: 200 ` and the response headers, a
    blank line, then the SSE body. Those lines are fields no SSE reader knows, so they
    say nothing; the text, the usage and the finish are the body's."""
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "The"}]}}]},
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": " sky is blue."}]},
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 6,
                "candidatesTokenCount": 448,
                "totalTokenCount": 454,
                "trafficType": "ON_DEMAND",
            },
        },
    ]
    head = (
        "Status code: 200 \nContent-Type: text/event-stream\nVary: Origin\n"
        "Server: scaffolding on HTTPServer2\nContent-Disposition: attachment\n\n"
    )
    vertex = {"modelVersion": "gemini-2.0-flash", "responseId": "brV-aPjE"}
    body = (head + "".join(f"data: {json.dumps(c | vertex)}\n\n" for c in chunks)).encode()
    summary = summarize(replay_every_way(body, "google"))
    assert (summary.text, summary.terminal, summary.stop_reason) == (
        "The sky is blue.",
        "done",
        "stop",
    )
    assert summary.usage is not None and summary.usage.total_tokens == 454
