"""Shapes from public recordings of the Anthropic Messages and Gemini streams that are
not among the captures (pydantic-ai's VCR cassettes), each body built by hand from the
recording's essential lines (ids shortened, long values cut), checked whatever the
chunking."""

from __future__ import annotations

from typing import Any

from rxllm.events import Done, ServerToolCall, UsageUpdate
from tests.providers.test_anthropic_shapes import STOP, delta, run, start, stop
from tests.providers.test_google import chunk
from tests.providers.test_google import run as run_google
from tests.support import summarize


def test_a_compacted_turn_counts_the_compaction_cache_read_once() -> None:
    """pydantic-ai `test_anthropic_compaction_usage_with_cache_streaming.yaml`
    (claude-sonnet-4-6): `message_start` reports the first sampling, the compaction
    (input 100, cache read 55096); the final `message_delta` gives the message's own
    counts, `cache_read_input_tokens: 0`, and the iterations. Billed is their sum (the
    compaction docs): the cache read once, not 55096 from `message_start` plus the
    compaction iteration's 55096 again."""
    counts = {"cache_creation_input_tokens": 0}
    message_start = {
        "type": "message_start",
        "message": {
            "id": "msg_011CduoCRono7pFKoTWpPAia",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "usage": {
                "input_tokens": 100,
                "cache_read_input_tokens": 55096,
                "output_tokens": 7,
                **counts,
            },
        },
    }
    iterations: list[dict[str, Any]] = [
        {
            "type": "compaction",
            "input_tokens": 100,
            "output_tokens": 83,
            "cache_read_input_tokens": 55096,
            **counts,
        },
        {
            "type": "message",
            "input_tokens": 181,
            "output_tokens": 8,
            "cache_read_input_tokens": 0,
            **counts,
        },
    ]
    events = run(
        message_start,
        start(0, {"type": "compaction", "content": None}),
        delta(0, {"type": "compaction_delta", "content": "Next step: Say hello to the user."}),
        stop(0),
        start(1, {"type": "text", "text": ""}),
        delta(1, {"type": "text_delta", "text": "Hello! \U0001f44b"}),
        stop(1),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {
                "input_tokens": 181,
                "cache_read_input_tokens": 0,
                "output_tokens": 8,
                "iterations": iterations,
                **counts,
            },
            "context_management": {"applied_edits": []},
        },
        STOP,
    )
    usage = [e.usage for e in events if isinstance(e, UsageUpdate)][-1]
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (281, 91, 55096)
    assert usage.total_tokens == 281 + 91 + 55096
    assert summarize(events).text == "Hello! \U0001f44b"


FILE_STORE = "fileSearchStores/testfilesearchstream-df5lsen5e6i5"
SEARCH = 'print(file_search.query(query="what is the capital of France?"))'


def test_an_answer_after_a_finish_on_a_file_search_step_is_read() -> None:
    """pydantic-ai `test_google_model_file_search_tool_stream.yaml` (gemini-2.5-pro,
    `fileSearch`): the chunk of the search's `executableCode` already says
    `finishReason: STOP`; the whole answer follows in three chunks, the last with
    STOP again. The answer is the turn's text, not parts to ignore."""
    grounding = {
        "groundingChunks": [
            {
                "retrievedContext": {
                    "text": "Paris is the capital of France.",
                    "fileSearchStore": FILE_STORE,
                }
            }
        ]
    }
    step = chunk(
        {"executableCode": {"language": "PYTHON", "code": SEARCH}},
        finish="STOP",
        usage={"promptTokenCount": 15, "candidatesTokenCount": 36, "totalTokenCount": 500},
    )
    step["candidates"][0]["groundingMetadata"] = grounding
    events = run_google(
        chunk({"executableCode": {"language": "PYTHON", "code": SEARCH}, "thought": True}),
        step,
        chunk({"text": "The capital of France"}),
        chunk({"text": " is Paris. A famous landmark in Paris is the Eiffel"}),
        chunk(
            {"text": " Tower."},
            finish="STOP",
            usage={
                "promptTokenCount": 15,
                "candidatesTokenCount": 53,
                "totalTokenCount": 805,
                "toolUsePromptTokenCount": 526,
                "thoughtsTokenCount": 211,
            },
        ),
    )
    got = summarize(events)
    answer = "The capital of France is Paris. A famous landmark in Paris is the Eiffel Tower."
    assert got.text == answer
    # The thought step and the step after it: each a code run, as pydantic-ai reads them.
    assert [(e.name, e.arguments["code"]) for e in events if isinstance(e, ServerToolCall)] == [
        ("code_execution", SEARCH),
        ("code_execution", SEARCH),
    ]
    assert got.usage is not None and got.usage.total_tokens == 805
    done = events[-1]
    assert isinstance(done, Done) and (done.stop_reason, done.raw_stop_reason) == ("stop", "STOP")
