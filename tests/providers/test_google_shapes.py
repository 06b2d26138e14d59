"""Gemini stream shapes no capture holds, made by hand from the Gemini API and Vertex
references and google-genai's types (`FinishReason`, `PartialArg`,
`GenerateContentResponsePromptFeedback`, `GenerateContentResponseUsageMetadata`); ids
and values are made up. Every body is checked whatever the chunking."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from loguru import logger

import rxllm
from rxllm.events import (
    Done,
    Event,
    Failed,
    ReasoningDelta,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
    ToolStart,
)
from tests.support import replay_every_way, summarize

PROVIDER = "google"


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\r\n\r\n".encode() for p in payloads)


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(sse(*payloads), PROVIDER)


def chunk(
    *parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test"}
    if usage is not None:
        payload["usageMetadata"] = usage
    return payload


@contextmanager
def log(level: str = "DEBUG") -> Iterator[list[tuple[str, str]]]:
    records: list[tuple[str, str]] = []
    sink = logger.add(
        lambda m: records.append((m.record["level"].name, m.record["message"])), level=level
    )
    logger.enable("rxllm")
    try:
        yield records
    finally:
        logger.disable("rxllm")
        logger.remove(sink)


USAGE = {"promptTokenCount": 8, "totalTokenCount": 8}


# -- defects found ------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"])
def test_an_invalid_call_finish_is_an_error_with_its_finish_message(reason: str) -> None:
    """FinishReason MALFORMED_FUNCTION_CALL / UNEXPECTED_TOOL_CALL: the model's call is
    invalid, the candidate holds no part. It was `done("other")`: a turn with neither a
    call nor text that an agent loop takes for a final, empty answer, and the
    `finishMessage` saying what went wrong was only logged."""
    said = "Malformed function call: print(default_api.get_weather(city=Paris))"
    last = {
        "candidates": [{"content": {}, "finishReason": reason, "finishMessage": said, "index": 0}],
        "usageMetadata": USAGE,
        "modelVersion": "gemini-test",
    }
    events = run(chunk({"text": "Let me check."}), last)
    assert [e.type for e in events] == ["text", "usage", "error"]
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.code, error.error.retryable) == (
        "malformed_tool_arguments",
        reason,
        False,
    )
    assert reason in error.error.message and said in error.error.message
    assert error.error.raw is not None and json.loads(error.error.raw)["finishMessage"] == said


def test_an_invalid_call_finish_without_a_message_still_says_what() -> None:
    events = run(chunk({"text": ""}, finish="MALFORMED_FUNCTION_CALL"))
    error = events[-1]
    assert isinstance(error, Failed)
    assert error.error.message == "Gemini ended the turn with MALFORMED_FUNCTION_CALL"


def test_language_finish_is_a_content_filter() -> None:
    """FinishReason LANGUAGE: "the candidate content was flagged for using an unsupported
    language", worded as SAFETY and RECITATION are (both `content_filter`); it was
    `other`."""
    done = run(chunk({"text": "x"}, finish="LANGUAGE"))[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("content_filter", "LANGUAGE")


def test_other_candidates_are_ignored_with_one_warning() -> None:
    """candidateCount > 1: each chunk carries every candidate by `index`. Only candidate 0
    is one stream; the others were dropped without a word (the chat wire warns)."""
    with log("WARNING") as records:
        events = replay_every_way(
            sse(
                {
                    "candidates": [
                        {"content": {"parts": [{"text": "A"}]}, "index": 0},
                        {"content": {"parts": [{"text": "B"}]}, "index": 1},
                    ],
                    "modelVersion": "gemini-test",
                },
                {
                    "candidates": [
                        {
                            "content": {"parts": [{"text": "B2"}]},
                            "index": 1,
                            "finishReason": "STOP",
                        },
                        {"content": {"parts": [{"text": "A2"}]}, "index": 2},
                    ],
                    "modelVersion": "gemini-test",
                },
                {
                    "candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"}],
                    "modelVersion": "gemini-test",
                },
            ),
            PROVIDER,
        )
    assert summarize(events).text == "Aa"  # candidate 0 may omit its index (proto default)
    replays = len([e for e in records if e[0] == "WARNING"])
    warnings = {message for level, message in records if level == "WARNING"}
    assert warnings == {
        "candidate 1 ignored: only candidate 0 is read (candidateCount > 1 is not one stream)"
    }
    assert replays > 1  # once per stream: one per replay, never one per chunk or candidate


def test_a_prompt_block_message_is_logged() -> None:
    """PromptFeedback.blockReasonMessage (Vertex) explains the block; it was dropped."""
    with log() as records:
        events = run(
            {
                "promptFeedback": {
                    "blockReason": "OTHER",
                    "blockReasonMessage": "The prompt could not be submitted.",
                },
                "usageMetadata": USAGE,
                "modelVersion": "gemini-test",
            }
        )
    done = events[-1]
    assert isinstance(done, Done) and (done.stop_reason, done.raw_stop_reason) == (
        "content_filter",
        "OTHER",
    )
    assert ("DEBUG", "prompt blocked (OTHER): The prompt could not be submitted.") in records


# -- shapes that held ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("IMAGE_SAFETY", "content_filter"),
        ("IMAGE_PROHIBITED_CONTENT", "content_filter"),
        ("RECITATION", "content_filter"),
        ("NO_IMAGE", "other"),
        ("OTHER", "other"),
        ("TOO_MANY_TOOL_CALLS", "other"),
        ("FINISH_REASON_UNSPECIFIED", "other"),
    ],
)
def test_finish_reasons_that_end_in_done(reason: str, stop: str) -> None:
    events = run(chunk({"text": "x"}), chunk(finish=reason, usage=USAGE))
    assert [e.type for e in events] == ["text", "usage", "done"]
    done = events[-1]
    assert isinstance(done, Done) and (done.stop_reason, done.raw_stop_reason) == (stop, reason)


def test_a_prompt_block_without_candidates_then_nothing_more() -> None:
    events = run(
        {
            "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
            "usageMetadata": USAGE,
            "modelVersion": "gemini-test",
        }
    )
    assert [e.type for e in events] == ["usage", "done"]


def test_streamed_arguments_with_per_argument_will_continue_and_signatures() -> None:
    """PartialArg: `jsonPath`, a typed value (`stringValue`, `numberValue`, `boolValue`,
    `nullValue`) and its own `willContinue` (more of the same string follows); the
    functionCall's `willContinue` says more parts follow. thoughtSignature on the call's
    first part and on a text part."""
    events = run(
        chunk({"functionCall": {"name": "book", "willContinue": True}, "thoughtSignature": "S1"}),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "San ", "willContinue": True}
                    ],
                    "willContinue": True,
                }
            }
        ),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "José"},
                        {"jsonPath": "$.nights", "numberValue": 2},
                        {"jsonPath": "$.pets", "boolValue": True},
                        {"jsonPath": "$.note", "nullValue": "NULL_VALUE"},
                    ],
                    "willContinue": True,
                }
            }
        ),
        chunk({"functionCall": {}}),
        chunk({"text": "Booked.", "thoughtSignature": "S2"}, finish="STOP"),
    )
    assert [e.type for e in events] == [
        "reasoning",
        "tool_start",
        "tool_request",
        "reasoning",
        "text",
        "done",
    ]
    start, request = events[1], events[2]
    assert isinstance(start, ToolStart) and start.signature == "S1"
    assert isinstance(request, ToolRequest)
    assert request.arguments == {"city": "San José", "nights": 2, "pets": True, "note": None}
    signatures = [e.signature for e in events if isinstance(e, ReasoningDelta)]
    assert signatures == ["S1", "S2"]
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "tool_use"


def test_code_execution_parts_beside_text_and_a_call() -> None:
    events = run(
        chunk(
            {"functionCall": {"name": "save", "args": {"n": 4}}},
            {"executableCode": {"language": "PYTHON", "code": "print(2+2)", "id": "c1"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4\n", "id": "c1"}},
            {"text": "It is 4."},
            finish="STOP",
        )
    )
    assert [e.type for e in events] == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "tool_start",
        "tool_request",
        "done",
    ]
    call, result = events[0], events[1]
    assert isinstance(call, ServerToolCall) and call.call_id == "c1"
    assert isinstance(result, ServerToolResult) and result.content == {
        "outcome": "OUTCOME_OK",
        "output": "4\n",
    }


def test_usage_metadata_fields() -> None:
    """thoughtsTokenCount and toolUsePromptTokenCount counted, cachedContentTokenCount
    apart, candidatesTokenCount absent (a turn of thoughts only)."""
    usage = {
        "promptTokenCount": 100,
        "cachedContentTokenCount": 40,
        "toolUsePromptTokenCount": 7,
        "thoughtsTokenCount": 12,
        "totalTokenCount": 119,
    }
    events = run(chunk({"text": "hm", "thought": True}, finish="STOP", usage=usage))
    got = summarize(events).usage
    assert got == rxllm.Usage.of(
        input_tokens=67, output_tokens=12, reasoning_tokens=12, cache_read_tokens=40
    )
    assert got is not None and got.total_tokens == 119
