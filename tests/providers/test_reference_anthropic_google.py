"""Anthropic Messages and Gemini stream shapes from the providers' references that no
other test holds, each body built by hand from the reference (ids and opaque values made
up) and checked whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm import Message
from rxllm.events import Done, ReasoningDelta, ServerToolCall, ServerToolResult
from rxllm.providers.anthropic import anthropic_messages
from tests.support import log_messages, replay, replay_every_way, summarize
from tests.test_reasoning_history import record_of


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def start(usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-sonnet-4-6",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return {"type": "message_start", "message": message}


def block(index: int, content_block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content_block}


def delta(index: int, value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": value}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def text(index: int, value: str) -> list[dict[str, Any]]:
    return [
        block(index, {"type": "text", "text": ""}),
        delta(index, {"type": "text_delta", "text": value}),
        stop(index),
    ]


def end(reason: str, output_tokens: int) -> list[dict[str, Any]]:
    message_delta = {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    return [message_delta, {"type": "message_stop"}]


def sent_back(events: list[Any]) -> list[dict[str, Any]]:
    """The assistant turn's blocks as the next request sends them."""
    turn = record_of(events, "anthropic").to_message()
    _, messages = anthropic_messages([Message.user("question"), turn, Message.user("next")])
    blocks: list[dict[str, Any]] = messages[1]["content"]
    return blocks


# The three results an advisor call may give (anthropic-sdk-python
# `types/beta/beta_advisor_tool_result_block.py`: `BetaAdvisorResultBlock`,
# `BetaAdvisorRedactedResultBlock` "Round-trip verbatim", `BetaAdvisorToolResultError`).
_ADVICE = (
    {"type": "advisor_result", "text": "Use a worker pool of 4.", "stop_reason": "end_turn"},
    {"type": "advisor_redacted_result", "encrypted_content": "EqQBCgIYAh", "stop_reason": None},
    {"type": "advisor_tool_result_error", "error_code": "max_uses_exceeded"},
)


def test_advisor_calls_are_server_tool_steps_and_go_back_as_they_came() -> None:
    """The advisor tool (platform.claude.com `agents-and-tools/tool-use/advisor-tool`,
    beta `advisor-tool-2026-03-01`): the executor emits a `server_tool_use` named
    `advisor` with an empty input and no input deltas, the advisor runs server-side and
    its `advisor_tool_result` arrives whole, then the executor goes on. Each call is a
    server tool call with no arguments and each result its content as sent (a failure
    said inside it), never text of the answer; the turn goes back with every block as it
    came, which the API needs to continue it."""
    frames: list[dict[str, Any]] = [start({"input_tokens": 812, "output_tokens": 3})]
    for number, advice in enumerate(_ADVICE):
        call_id = f"srvtoolu_0{number}"
        call = {"type": "server_tool_use", "id": call_id, "name": "advisor", "input": {}}
        result = {"type": "advisor_tool_result", "tool_use_id": call_id, "content": advice}
        frames += [block(2 * number, call), stop(2 * number)]
        frames += [block(2 * number + 1, result), stop(2 * number + 1)]
    frames += text(6, "Here is the plan.")
    frames += end("end_turn", 95)
    events = replay_every_way(sse(*frames), "anthropic")

    summary = summarize(events)
    assert summary.text == "Here is the plan."
    assert (summary.stop_reason, summary.raw_stop_reason) == ("stop", "end_turn")
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (812, 95)
    calls = [e for e in events if isinstance(e, ServerToolCall)]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        (f"srvtoolu_0{number}", "advisor", {}) for number in range(3)
    ]
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(r.call_id, r.name, r.content) for r in results] == [
        (f"srvtoolu_0{number}", "advisor", advice) for number, advice in enumerate(_ADVICE)
    ]
    blocks = sent_back(events)
    assert (
        blocks[:6]
        == [frame["content_block"] for frame in frames if frame["type"] == "content_block_start"][
            :6
        ]
    )
    assert blocks[6] == {"type": "text", "text": "Here is the plan."}


def test_omitted_thinking_is_its_signature_alone_and_goes_back_empty() -> None:
    """Extended thinking with `display: "omitted"` (the Messages reference,
    `ThinkingConfigEnabled.display`: "thinking content is redacted but a signature is
    returned for multi-turn continuity"): the thinking block streams no
    `thinking_delta`, only its `signature_delta`. That is one reasoning event with no
    text and the signature, and the turn of calls goes back with the block, its
    thinking empty, before its call, as the API asks of a tool-use turn with thinking
    on."""
    frames: list[dict[str, Any]] = [
        start({"input_tokens": 40, "output_tokens": 2}),
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, {"type": "signature_delta", "signature": "EuYBCkQYAiJA"}),
        stop(0),
        block(1, {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}),
        delta(1, {"type": "input_json_delta", "partial_json": ""}),
        delta(1, {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}),
        stop(1),
        *end("tool_use", 60),
    ]
    events = replay_every_way(sse(*frames), "anthropic")

    reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
    assert [(r.text, r.signature, r.redacted) for r in reasoning] == [("", "EuYBCkQYAiJA", False)]
    summary = summarize(events)
    assert summary.tool_calls == [("toolu_01", "get_weather", {"city": "Paris"})]
    assert (summary.stop_reason, summary.raw_stop_reason) == ("tool_use", "tool_use")
    assert sent_back(events) == [
        {"type": "thinking", "thinking": "", "signature": "EuYBCkQYAiJA"},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
    ]


def test_a_container_s_expiry_and_skills_are_logged_beside_its_id() -> None:
    """A turn that ran code in a container (the Messages reference, `BetaContainer`:
    `id`, `expires_at` "The time at which the container will expire", `skills` "Skills
    loaded in the container"; Agent Skills in the API): the id is the `Done`'s, for the
    next request to name; the fields no event carries are logged at debug, as every
    other field of `message_delta` is, not dropped unsaid: the expiry says until when
    that id can be named."""
    container = {
        "id": "container_011CPR5CNjB747bTd36fQLFk",
        "expires_at": "2025-10-08T20:07:31.157Z",
        "skills": [{"type": "anthropic", "skill_id": "xlsx", "version": "latest"}],
    }
    message_delta = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None, "container": container},
        "usage": {"output_tokens": 12},
    }
    frames = [
        start({"input_tokens": 30, "output_tokens": 1}),
        *text(0, "The spreadsheet is ready."),
        message_delta,
        {"type": "message_stop"},
    ]
    events = replay_every_way(sse(*frames), "anthropic")
    done = events[-1]
    assert isinstance(done, Done)
    assert done.container == "container_011CPR5CNjB747bTd36fQLFk"
    with log_messages() as logs:
        replay(sse(*frames), "anthropic")
    said = "\n".join(logs)
    assert "2025-10-08T20:07:31.157Z" in said
    assert "xlsx" in said


# -- Gemini ----------------------------------------------------------------------------


def gemini_sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\r\n\r\n" for p in payloads)


def rating(category: str, probability: str, blocked: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"category": category, "probability": probability}
    if blocked:
        out["blocked"] = True
    return out


def test_the_safety_rating_that_filtered_a_gemini_answer_is_logged() -> None:
    """A Gemini answer stopped by its safety filters (ai.google.dev `safety-settings`;
    `SafetyRating.blocked`: "Indicates whether the content was filtered out because of
    this rating"): the last chunk has `finishReason: SAFETY` and the ratings, one marked
    `blocked`. The turn is `done("content_filter")`, the text before it kept; the
    category that filtered it is no event's, so it is logged at debug rather than
    dropped, as Anthropic's refusal category is."""
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 9, "totalTokenCount": 21}
    first = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "Step one is"}]}, "index": 0}
        ],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r-1",
    }
    filtered = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": ""}]},
                "finishReason": "SAFETY",
                "index": 0,
                "safetyRatings": [
                    rating("HARM_CATEGORY_HARASSMENT", "NEGLIGIBLE"),
                    rating("HARM_CATEGORY_DANGEROUS_CONTENT", "HIGH", blocked=True),
                ],
            }
        ],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r-1",
    }
    data = gemini_sse(first, filtered)
    summary = summarize(replay_every_way(data, "google"))
    assert summary.text == "Step one is"
    assert (summary.stop_reason, summary.raw_stop_reason) == ("content_filter", "SAFETY")
    with log_messages() as logs:
        replay(data, "google")
    said = "\n".join(logs)
    assert "HARM_CATEGORY_DANGEROUS_CONTENT" in said
    assert "HARM_CATEGORY_HARASSMENT" not in said  # not what filtered it


def test_the_safety_rating_that_blocked_a_gemini_prompt_is_logged() -> None:
    """A prompt Gemini blocks (ai.google.dev `safety-settings`, `promptFeedback`: "sent
    only in the first stream chunk and only if no candidates were generated"): one chunk
    with the block reason and the prompt's ratings, one marked `blocked`, and the usage.
    `done("content_filter")` with the block reason; the category is logged with it."""
    blocked = {
        "promptFeedback": {
            "blockReason": "SAFETY",
            "safetyRatings": [
                rating("HARM_CATEGORY_SEXUALLY_EXPLICIT", "NEGLIGIBLE"),
                rating("HARM_CATEGORY_HATE_SPEECH", "HIGH", blocked=True),
            ],
        },
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r-2",
    }
    data = gemini_sse(blocked)
    summary = summarize(replay_every_way(data, "google"))
    assert (summary.text, summary.stop_reason, summary.raw_stop_reason) == (
        "",
        "content_filter",
        "SAFETY",
    )
    with log_messages() as logs:
        replay(data, "google")
    said = "\n".join(logs)
    assert "HARM_CATEGORY_HATE_SPEECH" in said
    assert "HARM_CATEGORY_SEXUALLY_EXPLICIT" not in said


def test_gemini_usage_breakdowns_are_logged_beside_the_counts() -> None:
    """`usageMetadata` (ai.google.dev `UsageMetadata`; Vertex adds `trafficType`) holds,
    beside the counts rxllm reads, the per-modality breakdowns (`promptTokensDetails`,
    `cacheTokensDetails`, `candidatesTokensDetails`, `toolUsePromptTokensDetails`: an
    audio or image token is priced apart) and the traffic type (on-demand or
    provisioned throughput, as Anthropic's `service_tier`). No event carries them: they
    are logged at debug, once, with the usage the turn reports, where they were dropped
    unsaid; the counts are read as before."""
    usage = {
        "promptTokenCount": 1290,
        "cachedContentTokenCount": 1024,
        "candidatesTokenCount": 40,
        "thoughtsTokenCount": 60,
        "totalTokenCount": 1390,
        "trafficType": "PROVISIONED_THROUGHPUT",
        "promptTokensDetails": [
            {"modality": "TEXT", "tokenCount": 32},
            {"modality": "AUDIO", "tokenCount": 1258},
        ],
        "cacheTokensDetails": [{"modality": "AUDIO", "tokenCount": 1024}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 40}],
    }
    chunks = [
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
            "usageMetadata": {"trafficType": "PROVISIONED_THROUGHPUT"},
            "modelVersion": "gemini-2.5-pro",
            "responseId": "r-3",
        }
        for text in ("The speaker ", "asks about")
    ]
    chunks.append(
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": " the weather."}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-pro",
            "responseId": "r-3",
        }
    )
    data = gemini_sse(*chunks)
    summary = summarize(replay_every_way(data, "google"))
    assert summary.text == "The speaker asks about the weather."
    assert summary.usage is not None
    counted = summary.usage
    assert (counted.input_tokens, counted.cache_read_tokens) == (1290 - 1024, 1024)
    assert (counted.output_tokens, counted.reasoning_tokens) == (40 + 60, 60)
    assert counted.total_tokens == 1390
    with log_messages() as logs:
        replay(data, "google")
    said = [line for line in logs if "AUDIO" in line]
    assert len(said) == 1
    assert "PROVISIONED_THROUGHPUT" in said[0]
    assert "cacheTokensDetails" in said[0]
