"""Gemini and Vertex shapes from public recordings and SDK tests that no other test
covers, each body built by hand from the source's essential lines (ids shortened, long
values cut), checked whatever the chunking."""

from __future__ import annotations

from rxllm.events import Done, Failed
from tests.providers.test_google import chunk, run
from tests.support import kinds, log_messages, replay, replay_every_way, summarize


def test_vertex_model_armor_blocks_the_prompt() -> None:
    """pydantic-ai `test_google_model_armor_prompt_template_text_gets_blocked.yaml`
    (Vertex, gemini-2.5-flash, `modelArmorConfig`): a response of `promptFeedback` with
    blockReason MODEL_ARMOR and its message, no candidates, and a `usageMetadata` that
    holds only Vertex's `trafficType`. It is a filtered answer (pydantic-ai raises its
    content-filter error), with no usage event, since no token was counted."""
    message = "The prompt violated Prompt Injection and Jailbreak filters."
    with log_messages() as logged:
        events = run(
            {
                "promptFeedback": {
                    "blockReason": "MODEL_ARMOR",
                    "blockReasonMessage": message,
                },
                "usageMetadata": {"trafficType": "ON_DEMAND"},
                "modelVersion": "gemini-2.5-flash",
                "createTime": "2026-05-27T16:53:45.443719Z",
                "responseId": "mSEX",
            }
        )
    assert kinds(events) == ["done"]
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("content_filter", "MODEL_ARMOR")
    assert f"prompt blocked (MODEL_ARMOR): {message}" in logged


def test_vertex_model_armor_blocks_the_response() -> None:
    """pydantic-ai `test_google_model_armor_response_template_real_block.yaml`: the
    answer itself is blocked, a candidate with finishReason MODEL_ARMOR, its
    `finishMessage`, `avgLogprobs` and no content at all; the tokens spent are counted."""
    events = run(
        {
            "candidates": [
                {
                    "avgLogprobs": -1.11,
                    "finishMessage": "The response violated Responsible AI Safety settings.",
                    "finishReason": "MODEL_ARMOR",
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 19,
                "candidatesTokenCount": 6,
                "thoughtsTokenCount": 27,
                "totalTokenCount": 52,
                "trafficType": "ON_DEMAND",
            },
            "modelVersion": "gemini-2.5-flash",
        }
    )
    assert kinds(events) == ["usage", "done"]
    got = summarize(events)
    assert got.text == "" and got.usage is not None
    assert (got.usage.input_tokens, got.usage.output_tokens, got.usage.total_tokens) == (
        19,
        33,
        52,
    )
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("content_filter", "MODEL_ARMOR")


def test_a_prompt_block_stays_terminal_across_later_chunks() -> None:
    """The AI SDK's `google-streaming-prompt-feedback-20759.test.ts`: a stream that
    opens with `promptFeedback.blockReason` SAFETY, then a candidate with text, then an
    unspecified block reason with usage. The block is the answer: no text, the usage
    counted, `done("content_filter")` with SAFETY as the raw reason."""
    events = run(
        {"promptFeedback": {"blockReason": "SAFETY"}},
        chunk({"text": "Fixture text."}, finish="STOP"),
        {
            "promptFeedback": {"blockReason": "BLOCK_REASON_UNSPECIFIED"},
            "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10},
        },
    )
    assert kinds(events) == ["usage", "done"]
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("content_filter", "SAFETY")


def test_a_json_error_written_into_the_stream_outside_sse_framing() -> None:
    """Gemini and Vertex abort a `200 OK` stream by writing the error object into the
    body as plain, pretty-printed JSON, without `data:` (maximhq/bifrost#5262; litellm
    #5479, #5650 and #14747 show the first line, `{`, of such a body; python-genai reads
    lines without `data:` as JSON and raises the error: its tests/client/
    test_async_stream.py `EVENT_STREAM_DATA_WITH_ERROR` expects `errors.ServerError`).
    The text before it stays; the turn ends in that error, its status and code kept,
    not in a `truncated` that has lost them."""
    data = (
        b'data: {"candidates": [{"content": {"role": "model","parts": [{"text": "Once"}]}}],'
        b'"usageMetadata": {"trafficType": "ON_DEMAND"},"modelVersion": "gemini-2.5-flash"}\r\n'
        b"\r\n"
        b"{\n"
        b'  "error": {\n'
        b'    "code": 429,\n'
        b'    "message": "Resource exhausted. Please try again later.",\n'
        b'    "status": "RESOURCE_EXHAUSTED"\n'
        b"  }\n"
        b"}\n"
    )
    events = replay_every_way(data, "google")
    assert kinds(events) == ["text", "error"]
    end = events[-1]
    assert isinstance(end, Failed)
    assert (end.error.kind, end.error.status, end.error.code) == (
        "stream_error",
        429,
        "RESOURCE_EXHAUSTED",
    )
    assert end.error.message == "Resource exhausted. Please try again later."


def test_a_chunk_field_no_event_carries_is_said() -> None:
    """A chunk's own field the wire does not read (here a part written at the top level,
    outside `candidates`) is logged, as a candidate's are: before, it went unsaid."""
    data = (
        b'data: {"functionCall": {"name": "f", "args": {}}}\n\n'
        b'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}]}, '
        b'"finishReason": "STOP"}], "createTime": "2026-12-02T00:00:00Z"}\n\n'
    )
    with log_messages() as messages:
        events = replay(data, "google")
    assert kinds(events) == ["text", "done"]
    said = [m for m in messages if "response chunk fields" in m]
    assert said == ["no event carries the response chunk fields ['functionCall']"]
