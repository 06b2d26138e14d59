"""Gemini stream shapes a probe of the wire found mishandled, made by hand from the
Gemini API reference and google-genai's types (`GroundingChunk`, `GroundingChunkImage`,
`GroundingChunkRetrievedContext`); ids and values are made up. Every body is checked
whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, Event, Failed, ServerToolCall, ServerToolResult
from tests.providers.test_google import RESPONSE_ID, gid
from tests.support import log_messages, replay, replay_every_way, summarize

PROVIDER = "google"


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\r\n\r\n".encode() for p in payloads)


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(sse(*payloads), PROVIDER)


def chunk(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": RESPONSE_ID}


def citations(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(ev.url, ev.title) for ev in events if isinstance(ev, Citation)]


def test_an_image_grounding_chunk_cites_the_page_it_came_from() -> None:
    """google-genai `GroundingChunk.image` ("a grounding chunk from an image search
    result"): `GroundingChunkImage` {sourceUri: "the URI of the image search result
    page", imageUri, title, domain}; Google Search with image search also sends
    `imageSearchQueries`. The page is the source, repeated cumulatively like the rest."""
    grounding = {
        "imageSearchQueries": ["golden retriever"],
        "groundingChunks": [
            {
                "image": {
                    "sourceUri": "https://dogs.example/golden",
                    "imageUri": "https://img.example/golden.jpg",
                    "title": "Golden retrievers",
                    "domain": "dogs.example",
                }
            },
            {"web": {"uri": "https://kennel.example/", "title": "kennel.example"}},
        ],
    }
    first = chunk({"text": "A golden retriever."})
    last = chunk({"text": " Friendly."}, finish="STOP")
    for payload in (first, last):
        payload["candidates"][0]["groundingMetadata"] = grounding
    events = run(first, last)
    assert citations(events) == [
        ("https://dogs.example/golden", "Golden retrievers"),
        ("https://kennel.example/", "kennel.example"),
    ]
    assert [ev.type for ev in events] == ["text", "citation", "citation", "text", "done"]
    assert summarize(events).text == "A golden retriever. Friendly."


def test_a_grounding_chunk_without_a_uri_is_logged_not_dropped() -> None:
    """A File Search grounding chunk (ai.google.dev/gemini-api/docs/file-search;
    `GroundingChunkRetrievedContext` {title, text, fileSearchStore}, `uri` absent) names
    no URL a citation could hold: it is logged at debug, once per turn, by its kind."""
    grounding = {
        "groundingChunks": [
            {
                "retrievedContext": {
                    "title": "handbook.pdf",
                    "text": "Leave is 25 days a year.",
                    "fileSearchStore": "fileSearchStores/handbook-123",
                }
            }
        ]
    }
    first = chunk({"text": "You get 25 days."})
    last = chunk({"text": ""}, finish="STOP")
    for payload in (first, last):
        payload["candidates"][0]["groundingMetadata"] = grounding
    events = run(first, last)
    assert citations(events) == []
    assert summarize(events).text == "You get 25 days."
    with log_messages() as messages:
        assert replay(sse(first, last), PROVIDER) == events
    assert [m for m in messages if m.startswith("no event carries")] == [
        "no event carries the grounding chunk without a uri fields ['retrievedContext']"
    ]
    assert all("Leave is 25 days" not in m for m in messages)


def test_a_citation_source_without_a_uri_is_logged_not_dropped() -> None:
    """ai.google.dev/api/generate-content#CitationSource: every field optional
    (startIndex, endIndex, uri, license); one without a `uri` cites nothing a citation
    event could hold, and is logged at debug by its fields, once per turn."""
    first = chunk({"text": "def quicksort(xs):"})
    first["candidates"][0]["citationMetadata"] = {
        "citationSources": [
            {"startIndex": 0, "endIndex": 17, "uri": "https://github.com/a/b"},
            {"startIndex": 4, "endIndex": 9, "license": "mit"},
        ]
    }
    last = chunk({"text": " ..."}, finish="RECITATION")
    last["candidates"][0]["citationMetadata"] = first["candidates"][0]["citationMetadata"]
    events = run(first, last)
    assert citations(events) == [("https://github.com/a/b", None)]
    with log_messages() as messages:
        assert replay(sse(first, last), PROVIDER) == events
    assert [m for m in messages if m.startswith("no event carries")] == [
        "no event carries the citation source without a uri fields "
        "['endIndex', 'license', 'startIndex']"
    ]


def test_a_function_call_without_a_name_is_a_malformed_call_not_dropped() -> None:
    """google-genai `FunctionCall`: `name` is optional on the wire; a part with `args`
    (or an `id`) but no name, and no streamed call open for it to continue, is a call
    whose function is unknown: it cannot be dispatched, and left out (as it was, logged)
    the turn ended `done` with its text, which an agent loop takes for the final answer.
    It ends the turn as Gemini's own MALFORMED_FUNCTION_CALL does. A bare `{}`
    (Vertex's terminator of a streamed call) says nothing and is not logged."""
    body = (
        chunk({"text": "Let me look."}, {"functionCall": {"id": "c1", "args": {"q": "x"}}}),
        chunk({"functionCall": {}}, finish="STOP"),
    )
    events = run(*body)
    assert [ev.type for ev in events] == ["text", "error"]
    error = events[-1]
    assert isinstance(error, Failed) and error.error.kind == "malformed_tool_arguments"
    assert error.error.message == (
        "Gemini sent a function call that names no function (keys ['args', 'id'])"
    )
    with log_messages() as messages:
        events = run(chunk({"text": "Done."}), chunk({"functionCall": {}}, finish="STOP"))
    assert [ev.type for ev in events] == ["text", "done"]
    assert not [m for m in messages if "functionCall" in m]


def test_a_missing_thought_signature_finish_is_a_rejection_not_a_done() -> None:
    """google-genai FinishReason MISSING_THOUGHT_SIGNATURE: "request has at least one
    thought signature missing". The conversation sent back was refused, as Gemini 3's
    400 "function call ... is missing a thought_signature" refuses it before streaming;
    the turn holds no answer. It was `done("other")`, which an agent loop takes for a
    final, empty answer."""
    said = "Function call is missing a thought_signature in functionCall parts."
    last = {
        "candidates": [
            {"content": {"role": "model"}, "finishReason": "MISSING_THOUGHT_SIGNATURE",
             "finishMessage": said, "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        "modelVersion": "gemini-test",
    }  # fmt: skip
    events = run(last)
    # a usage before a rejection, with nothing else, is dropped (track_commitment)
    assert [ev.type for ev in events] == ["error"]
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.code, error.error.retryable) == (
        "rejected",
        "MISSING_THOUGHT_SIGNATURE",
        False,
    )
    assert "MISSING_THOUGHT_SIGNATURE" in error.error.message and said in error.error.message


def test_built_in_tool_calls_and_responses_are_server_tools() -> None:
    """ai.google.dev/gemini-api/docs/tool-combination: with
    `toolConfig.includeServerSideToolInvocations`, Gemini 3 reports the built-in tools
    it ran as `toolCall` {toolType, args, id} and `toolResponse` {toolType, response,
    id} parts, each with a thought signature, beside the `functionCall` of a custom
    tool. Provider-run tools are server_tool_call / server_tool_result (DESIGN.md); they
    were only logged at debug."""
    body = (
        chunk(
            {
                "toolCall": {
                    "toolType": "GOOGLE_SEARCH_WEB",
                    "args": {"queries": ["northernmost city in the United States"]},
                    "id": "a7b3k9p2",
                },
                "thoughtSignature": "SIG1",
            },
            {
                "toolResponse": {
                    "toolType": "GOOGLE_SEARCH_WEB",
                    "response": {"search_suggestions": "<div>...</div>"},
                    "id": "a7b3k9p2",
                },
                "thoughtSignature": "SIG2",
            },
        ),
        chunk(
            {"toolCall": {"toolType": "URL_CONTEXT", "args": {"urls": ["https://x.example"]}}},
            {"toolResponse": {"toolType": "URL_CONTEXT", "response": {"urls_metadata": []}}},
            {
                "functionCall": {
                    "name": "getWeather",
                    "args": {"city": "Utqiagvik, Alaska"},
                    "id": "m4q8z1v6",
                },
                "thoughtSignature": "SIG3",
            },
            finish="STOP",
        ),
    )
    events = run(*body)
    assert [ev.type for ev in events] == [
        "reasoning", "server_tool_call", "reasoning", "server_tool_result",
        "server_tool_call", "server_tool_result",
        "reasoning", "tool_start", "tool_request", "done",
    ]  # fmt: skip
    calls = [(ev.call_id, ev.name, ev.arguments) for ev in events if isinstance(ev, ServerToolCall)]
    assert calls == [
        (
            "a7b3k9p2",
            "google_search_web",
            {"queries": ["northernmost city in the United States"]},
        ),
        (gid("url_context", 0), "url_context", {"urls": ["https://x.example"]}),
    ]
    results = [
        (ev.call_id, ev.name, ev.content) for ev in events if isinstance(ev, ServerToolResult)
    ]
    assert results == [
        ("a7b3k9p2", "google_search_web", {"search_suggestions": "<div>...</div>"}),
        (gid("url_context", 0), "url_context", {"urls_metadata": []}),
    ]
    summary = summarize(events)
    assert summary.text == ""
    assert summary.tool_calls == [("m4q8z1v6", "getWeather", {"city": "Utqiagvik, Alaska"})]
    assert summary.stop_reason == "tool_use"
