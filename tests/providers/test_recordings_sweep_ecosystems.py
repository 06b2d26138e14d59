"""Streams from the recordings and fixtures of SDKs and frameworks outside Python and
TypeScript: Ruby (crmne/ruby_llm's VCR cassettes), PHP (prism-php/prism's and
openai-php/client's fixtures), Go, Rust, Java, .NET, Swift, Elixir and Dart, and the
SDKs of the providers those fixtures speak to (perplexityai/perplexity-py's stream
types), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential events or
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Failed
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize

# -- OpenAI Responses ---------------------------------------------------------------------


def _responses(*payloads: dict[str, Any], event_lines: bool = True) -> bytes:
    """`data:` frames of the payloads, each after an `event:` line naming its type unless
    `event_lines` is off."""
    out = ""
    for payload in payloads:
        out += f"event: {payload['type']}\n" if event_lines else ""
        out += f"data: {json.dumps(payload)}\n\n"
    return out.encode()


def test_perplexity_response_failed_with_its_error_beside_the_type() -> None:
    """perplexityai/perplexity-py src/perplexity/types/response_stream_chunk.py
    (generated from Perplexity's OpenAPI spec): the Agent API's `ResponseFailedEvent`
    is `{type: "response.failed", error: {message, code, type}, sequence_number}`, the
    error beside the type and no `response` object, where OpenAI nests it in
    `response.error`. The turn fails with Perplexity's message and code. Before: the
    message was "the response failed", no code, and `{}` as the raw error."""
    body = _responses(
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {
                "id": "resp_pplx_1",
                "created_at": 1764000000,
                "model": "openai/gpt-5.4",
                "object": "response",
                "output": [],
                "status": "in_progress",
            },
        },
        {
            "type": "response.output_text.delta",
            "content_index": 0,
            "delta": "Southern Brazil",
            "item_id": "msg_1",
            "output_index": 0,
            "sequence_number": 1,
        },
        {
            "type": "response.failed",
            "sequence_number": 2,
            "error": {
                "message": "upstream model timed out",
                "code": "timeout",
                "type": "server_error",
            },
        },
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(text="Southern Brazil", terminal="error", error_kind="stream_error"),
    )
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert (failure.error.message, failure.error.code) == ("upstream model timed out", "timeout")
    assert failure.error.raw is not None and "upstream model timed out" in failure.error.raw


def test_perplexity_agent_response_completed_with_the_response_fields_at_the_top() -> None:
    """prism-php/prism tests/Fixtures/perplexity/agent-stream-basic-text-1.sse (its
    Perplexity Agent API stream, read by src/Providers/Perplexity/Concerns/
    ExtractsAgentResponse.php): text deltas with no item id or output index, then
    `response.completed` with the response's `status`, `id`, `model`, `usage` and
    `output` (a `search_results` item, then the message whole) beside the type, no
    `response` object and no `event:` lines. Prism reads the usage from that chunk. The
    text is said once, the usage and the model kept; the search results have no event
    (logged). Before: the usage and the model were dropped unsaid."""
    body = _responses(
        {"type": "response.output_text.delta", "delta": "I am Qwen, a large"},
        {"type": "response.output_text.delta", "delta": "-scale language model."},
        {
            "type": "response.completed",
            "status": "completed",
            "id": "2aac4169-004c-48c6-8da3-bb9d4db974bb",
            "model": "sonar",
            "usage": {"input_tokens": 4, "output_tokens": 97, "total_tokens": 101},
            "output": [
                {
                    "type": "search_results",
                    "results": [
                        {
                            "title": "What is an AI Assistant?",
                            "url": "https://www.simpplr.com/glossary/ai-assistant/",
                            "date": "2025-07-14",
                            "snippet": "An AI Assistant is a software application",
                            "source": "web",
                        }
                    ],
                },
                {
                    "type": "message",
                    "content": [
                        {"type": "output_text", "text": "I am Qwen, a large-scale language model."}
                    ],
                },
            ],
            "error": None,
        },
        event_lines=False,
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="I am Qwen, a large-scale language model.",
            usage=(4, 97, 0, 0, 101),
            raw_stop_reason="completed",
            model="sonar",
        ),
    )
    assert kinds(events) == ["text", "usage", "done"]
    assert any("search_results" in message for message in messages)


# -- Gemini -------------------------------------------------------------------------------


def test_gemini_pro_says_stop_on_every_chunk_of_the_answer() -> None:
    """microsoft/semantic-kernel dotnet/src/Connectors/Connectors.Google.UnitTests/
    TestData/chat_stream_response.json (its streaming test's body, a JSON array as
    `streamGenerateContent` without `alt=sse` sends): five chunks of one answer, each
    with `finishReason: "STOP"`, its safety ratings and the same usage, as gemini-pro
    streamed (LiteLLM #2195: "Vertex/Gemini streaming chunks always have
    finish_reason='stop'"; one-hub #402: "upstream vertex/gemini is like this").
    Semantic Kernel's test reads every chunk's text. The answer is read whole, the
    finish said once. Before: only the first chunk's text, the rest ignored as parts
    after the finish."""
    ratings = [
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
    ]

    def chunk(text: str, **extra: Any) -> dict[str, Any]:
        candidate = {
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
            "safetyRatings": ratings,
        }
        usage = {"promptTokenCount": 9, "candidatesTokenCount": 27, "totalTokenCount": 36}
        return {"candidates": [candidate], **extra, "usageMetadata": usage}

    chunks = [
        chunk(
            "The world is a vast and complex place, but", promptFeedback={"safetyRatings": ratings}
        ),
        chunk(" also of challenges and difficulties."),
        chunk(" It is a place of infinite possibilities.\n\nThe world"),
        chunk(" is worth exploring."),
    ]
    body = ("[\n" + "\n,\n".join(json.dumps(c, indent=2) for c in chunks) + "\n]").encode()
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="The world is a vast and complex place, but also of challenges and"
            " difficulties. It is a place of infinite possibilities.\n\nThe world is worth"
            " exploring.",
            usage=(9, 27, 0, 0, 36),
            raw_stop_reason="STOP",
        ),
    )
    assert kinds(events) == ["text", "usage", "done"]
