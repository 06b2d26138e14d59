"""A Gemini 3 stream from pydantic-ai's `test_google` cassettes that no capture or test
held, its body built by hand from the recording's essential lines (signatures cut),
checked whatever the chunking."""

from __future__ import annotations

from rxllm.events import Citation, Done, ServerToolCall, ServerToolResult
from tests.providers.test_google import chunk
from tests.providers.test_google import run as run_google
from tests.support import log_messages, summarize

STORE = "fileSearchStores/testfilesearchgroundingstre-xd02p9o1zz8e"
ANSWER = "The capital of France is **Paris**. It is well-known for its"


def test_a_bare_file_search_call_and_response_are_one_server_tool_each() -> None:
    """pydantic-ai `tests/models/cassettes/test_google/
    test_google_model_file_search_grounding_gemini_3[True].yaml` (gemini-3-flash-preview,
    `fileSearch` with `includeServerSideToolInvocations`, streamed): the `toolCall` has
    no `args` and the `toolResponse` no `response`, each alone in a chunk with its thought
    signature; a usage-only count in between is lower than the last. The retrieved
    document comes only in the final chunk's grounding, with no uri (a store and the
    user's `customMetadata`): no citation, logged."""
    usage = {"promptTokenCount": 8, "candidatesTokenCount": 15, "totalTokenCount": 52}
    grounding = {
        "groundingChunks": [
            {
                "retrievedContext": {
                    "text": "Paris is the capital of France.",
                    "fileSearchStore": STORE,
                    "customMetadata": [{"key": "source_url", "stringValue": "https://x.example"}],
                }
            }
        ],
        "groundingSupports": [
            {"segment": {"endIndex": 35, "text": ANSWER[:35]}, "groundingChunkIndices": [0]}
        ],
    }
    last = chunk(
        {"text": "", "thoughtSignature": "SIG3"},
        finish="STOP",
        usage={
            "promptTokenCount": 126,
            "candidatesTokenCount": 44,
            "totalTokenCount": 787,
            "toolUsePromptTokenCount": 470,
            "thoughtsTokenCount": 147,
        },
    )
    last["candidates"][0]["groundingMetadata"] = grounding
    with log_messages() as logs:
        events = run_google(
            chunk(
                {"thoughtSignature": "SIG1", "toolCall": {"toolType": "FILE_SEARCH", "id": "std8"}},
                usage={**usage, "thoughtsTokenCount": 118},
            ),
            chunk(
                {
                    "thoughtSignature": "SIG2",
                    "toolResponse": {"toolType": "FILE_SEARCH", "id": "std8"},
                },
                usage={"promptTokenCount": 8, "totalTokenCount": 8},
            ),
            chunk({"text": ANSWER}, usage=usage),
            chunk({"text": " iconic landmarks."}, usage=usage),
            last,
        )
    assert [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)] == [
        ("std8", "file_search", {})
    ]
    assert [(e.call_id, e.content) for e in events if isinstance(e, ServerToolResult)] == [
        ("std8", {})
    ]
    assert not [e for e in events if isinstance(e, Citation)]
    assert any("grounding chunk without a uri" in m and "retrievedContext" in m for m in logs)
    got = summarize(events)
    assert got.text == ANSWER + " iconic landmarks."
    assert got.signatures == ["SIG1", "SIG2", "SIG3"]
    assert got.usage is not None
    assert (got.usage.input_tokens, got.usage.output_tokens) == (126 + 470, 44 + 147)
    assert (got.usage.reasoning_tokens, got.usage.total_tokens) == (147, 787)
    done = events[-1]
    assert isinstance(done, Done) and (done.stop_reason, done.raw_stop_reason) == ("stop", "STOP")
