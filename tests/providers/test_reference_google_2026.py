"""Gemini `streamGenerateContent?alt=sse` shapes read field by field from Google's
current references (ai.google.dev/api/generate-content, Vertex AI's
GenerateContentResponse, google-genai's `types.py` / `types.ts`: `FinishReason`,
`BlockedReason`, `Part`, `FunctionCall`/`PartialArg`, `GroundingChunk`,
`CitationMetadata`, `UsageMetadata`, `ModelStatus`) that no other test holds. Each body
is built by hand from the reference (ids, signatures and values made up) and checked
whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Event
from tests.support import kinds, log_messages, replay, replay_every_way, summarize

RESPONSE_ID = "ref-2026"


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\r\n\r\n".encode() for p in payloads)


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(sse(*payloads), "google")


def chunk(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A chunk of candidate 0 holding `parts`, with the candidate's other `fields`."""
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    candidate.update(fields)
    if finish:
        candidate["finishReason"] = finish
    payload: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": "gemini-3-pro-preview",
        "responseId": RESPONSE_ID,
    }
    if usage is not None:
        payload["usageMetadata"] = usage
    return payload


def test_part_metadata_beside_a_text_part_is_logged_not_dropped() -> None:
    """`Part.partMetadata` ("custom metadata associated with the Part ... the name of a
    file/source from which the Part originates or a way to multiplex multiple Part
    streams", Gemini API only) rides beside a part's data, as `thoughtSignature` does.
    The text is read as ever; the metadata, which no event carries, is logged by name
    once per turn, as the candidate's unread fields are: never dropped unsaid, whether
    beside text, a thought or code."""
    meta = {"source": "notes.md"}
    body = sse(
        chunk({"text": "Thinking.", "thought": True, "partMetadata": meta}),
        chunk({"text": "Hello", "partMetadata": meta}),
        chunk({"text": " world", "partMetadata": meta}),
        chunk({"executableCode": {"language": "PYTHON", "code": "1"}, "partMetadata": meta}),
        chunk({"text": "."}, finish="STOP"),
    )
    events = replay_every_way(body, "google")
    with log_messages() as logged:
        replay(body, "google")
    got = summarize(events)
    assert (got.text, got.reasoning) == ("Hello world.", "Thinking.")
    assert kinds(events) == ["reasoning", "text", "server_tool_call", "text", "done"]
    unread = [line for line in logged if "partMetadata" in line]
    assert unread == ["no event carries the part fields ['partMetadata']"]


def test_streamed_argument_paths_read_rfc_9535_escapes_in_bracketed_names() -> None:
    """`PartialArg.jsonPath` is "a JSON Path (RFC 9535) to the argument being streamed".
    RFC 9535 writes a name that is no identifier in brackets (`$['owner\\'s']`,
    `$["say \\"hi\\""]`), its quote, backslash and control characters escaped and any
    character as `\\uXXXX` (a pair for one outside the BMP), as normalized paths
    (section 2.7) do. The escapes are read: the argument is named `owner's`, never
    `owner\\'s`."""

    def call(**fields: Any) -> dict[str, Any]:
        return {"functionCall": fields}

    events = run(
        chunk(call(name="file_note", id="fc_1", willContinue=True)),
        chunk(
            call(
                partialArgs=[
                    {"jsonPath": "$['owner\\'s']", "stringValue": "Ada"},
                    {"jsonPath": '$["say \\"hi\\""]', "boolValue": True},
                    {"jsonPath": "$['C:\\\\dir']['caf\\u00e9']", "numberValue": 2},
                    {"jsonPath": "$['tab\\tkey'][0]", "stringValue": "x"},
                    {"jsonPath": "$['\\ud83d\\ude00']", "nullValue": "NULL_VALUE"},
                ],
                willContinue=True,
            )
        ),
        chunk(call(), finish="STOP"),
    )
    arguments = {
        "owner's": "Ada",
        'say "hi"': True,
        "C:\\dir": {"café": 2},
        "tab\tkey": ["x"],
        "\U0001f600": None,
    }
    got = summarize(events)
    assert got.tool_calls == [("fc_1", "file_note", arguments)]
    assert got.stop_reason == "tool_use"
