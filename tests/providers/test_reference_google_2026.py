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

from rxllm.events import Citation, Event
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


def citations(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(ev.url, ev.title) for ev in events if isinstance(ev, Citation)]


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


def test_an_image_stream_with_thought_images_and_an_image_finish() -> None:
    """Gemini 3 Pro Image (`responseModalities: ["TEXT", "IMAGE"]`): thought text and
    thought images (`inlineData` with `thought: true`), then the image, whose part
    carries the signature (ai.google.dev/gemini-api/docs/image-generation: "thought
    signatures ... on the first part after the thoughts and on every inlineData
    image"), then a caption. No event carries an image: each is logged, never text;
    the signature rides on an empty reasoning event marked as the image's
    (`{"inlineData": true}`), so it never goes back on the caption. The image finish
    reasons are read as the reference words them: IMAGE_RECITATION ("may be a
    recitation from a source") filters, IMAGE_OTHER ("a reason not otherwise
    specified") is other."""
    usage = {
        "promptTokenCount": 12,
        "candidatesTokenCount": 1300,
        "thoughtsTokenCount": 180,
        "totalTokenCount": 1492,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
        "candidatesTokensDetails": [
            {"modality": "IMAGE", "tokenCount": 1290},
            {"modality": "TEXT", "tokenCount": 10},
        ],
    }
    for reason, stop in (
        ("STOP", "stop"),
        ("IMAGE_RECITATION", "content_filter"),
        ("IMAGE_OTHER", "other"),
    ):
        events = run(
            chunk({"text": "**Composing the scene**", "thought": True}),
            chunk({"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}, "thought": True}),
            chunk(
                {
                    "inlineData": {"mimeType": "image/png", "data": "iVBORw0L"},
                    "thoughtSignature": "sig-image",
                }
            ),
            chunk({"text": "A cat on a mat.", "thoughtSignature": "sig-text"}),
            chunk(finish=reason, usage=usage),
        )
        got = summarize(events)
        assert (got.text, got.reasoning) == ("A cat on a mat.", "**Composing the scene**")
        assert got.signatures == ["sig-image", "sig-text"]
        marks = [ev.details for ev in events if ev.type == "reasoning" and ev.signature]
        assert marks == [{"inlineData": True}, {}]
        assert (got.stop_reason, got.raw_stop_reason) == (stop, reason)
        assert got.usage is not None
        assert (got.usage.output_tokens, got.usage.reasoning_tokens) == (1480, 180)
        assert got.usage.total_tokens == 1492


def test_prompt_block_reasons_of_both_apis_are_a_filtered_answer() -> None:
    """`promptFeedback.blockReason`: the Gemini API's `BlockReason` (SAFETY, OTHER,
    BLOCKLIST, PROHIBITED_CONTENT, IMAGE_SAFETY) and Vertex's `BlockedReason`, which adds
    MODEL_ARMOR and JAILBREAK ("the prompt was blocked as a jailbreak attempt"). Each is
    the provider's answer, `done("content_filter")` with the reason kept, the prompt's
    tokens counted; never a stream cut short, never text."""
    for reason in ("BLOCKLIST", "IMAGE_SAFETY", "JAILBREAK"):
        events = run(
            {
                "promptFeedback": {"blockReason": reason},
                "usageMetadata": {"promptTokenCount": 31, "totalTokenCount": 31},
                "modelVersion": "gemini-2.5-flash",
                "createTime": "2026-11-02T10:00:00.000000Z",
                "responseId": "blk",
            }
        )
        assert kinds(events) == ["usage", "done"]
        got = summarize(events)
        assert (got.stop_reason, got.raw_stop_reason) == ("content_filter", reason)
        assert got.usage is not None and got.usage.input_tokens == 31


def test_a_google_maps_grounding_chunk_cites_the_place_once() -> None:
    """Grounding with Google Maps (`tools: [{googleMaps: {enableWidget: true}}]`):
    `groundingChunks[].maps` {uri, title, placeId, text, placeAnswerSources
    {reviewSnippets[] {reviewId, googleMapsUri, title}}} and the grounding's
    `googleMapsWidgetContextToken`, repeated on the chunks that follow. The place is
    the source: one citation by its uri and title, whatever the repeats; the review
    links inside it and the widget token, which no event carries, add none."""
    grounding = {
        "groundingChunks": [
            {
                "maps": {
                    "uri": "https://maps.google.com/?cid=1234567890",
                    "title": "Caffe Reggio",
                    "placeId": "places/ChIJA1",
                    "placeAnswerSources": {
                        "reviewSnippets": [
                            {
                                "reviewId": "places/ChIJA1/reviews/r1",
                                "googleMapsUri": "https://maps.google.com/?cid=1234567890&r=1",
                                "title": "Best espresso",
                            }
                        ]
                    },
                }
            }
        ],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 12, "text": "Caffe Reggio"},
                "groundingChunkIndices": [0],
            }
        ],
        "googleMapsWidgetContextToken": "widgetcontent/AcBXPQ",
    }
    events = run(
        chunk({"text": "Caffe Reggio"}, groundingMetadata=grounding),
        chunk({"text": " serves espresso."}, finish="STOP", groundingMetadata=grounding),
    )
    assert citations(events) == [("https://maps.google.com/?cid=1234567890", "Caffe Reggio")]
    assert kinds(events) == ["text", "citation", "text", "done"]
    assert summarize(events).text == "Caffe Reggio serves espresso."


def test_vertex_rag_and_file_search_chunks_cite_what_has_a_uri() -> None:
    """Vertex RAG Engine / Vertex AI Search grounding: `retrievedContext` {uri (a
    `gs://` object), title, text, ragChunk {text, pageSpan}} beside the grounding's
    `retrievalQueries` and `retrievalMetadata`; and a Gemini API File Search chunk
    (`retrievedContext` {title, text, fileSearchStore}, no uri). The document with a uri
    is cited once; the one without is logged (it names no page), as are the queries."""
    grounding = {
        "retrievalQueries": ["refund policy"],
        "retrievalMetadata": {},
        "groundingChunks": [
            {
                "retrievedContext": {
                    "uri": "gs://acme-docs/policies/refunds.pdf",
                    "title": "refunds.pdf",
                    "text": "Refunds are issued within 30 days.",
                    "ragChunk": {
                        "text": "Refunds are issued within 30 days.",
                        "pageSpan": {"firstPage": 2, "lastPage": 2},
                    },
                }
            },
            {
                "retrievedContext": {
                    "title": "faq.md",
                    "text": "See the refunds page.",
                    "fileSearchStore": "fileSearchStores/acme-abc123",
                }
            },
        ],
    }
    body = sse(chunk({"text": "Within 30 days."}, finish="STOP", groundingMetadata=grounding))
    events = replay_every_way(body, "google")
    with log_messages() as logged:
        replay(body, "google")
    assert citations(events) == [("gs://acme-docs/policies/refunds.pdf", "refunds.pdf")]
    assert "no event carries the grounding chunk without a uri fields ['retrievedContext']" in (
        logged
    )
    assert "no event carries the grounding fields ['retrievalMetadata', 'retrievalQueries']" in (
        logged
    )


def test_recitation_sources_of_both_apis_cite_each_uri_once() -> None:
    """`citationMetadata`: the Gemini API's `citationSources[]` {startIndex, endIndex,
    uri, license} and Vertex's `citations[]` {startIndex, endIndex, uri, title, license,
    publicationDate {year, month, day}}, sent again on later chunks as the answer grows.
    Each uri is one citation (Vertex's title kept), the text untouched; a RECITATION
    finish on the last chunk filters the answer."""
    studio = {"citationSources": [{"startIndex": 0, "endIndex": 40, "uri": "https://a.example/"}]}
    vertex = {
        "citations": [
            {
                "startIndex": 0,
                "endIndex": 40,
                "uri": "https://b.example/poem",
                "title": "A poem",
                "license": "CC-BY-4.0",
                "publicationDate": {"year": 1923, "month": 10},
            }
        ]
    }
    events = run(
        chunk({"text": "Whose woods these are"}, citationMetadata=studio),
        chunk({"text": " I think I know."}, citationMetadata=studio),
        chunk({"text": " His house"}, citationMetadata=vertex),
        chunk(finish="RECITATION", citationMetadata=vertex),
    )
    assert citations(events) == [("https://a.example/", None), ("https://b.example/poem", "A poem")]
    got = summarize(events)
    assert got.text == "Whose woods these are I think I know. His house"
    assert (got.stop_reason, got.raw_stop_reason) == ("content_filter", "RECITATION")


def test_logprobs_and_a_model_status_say_nothing_to_the_answer() -> None:
    """`responseLogprobs: true, logprobs: 2`: each candidate carries `avgLogprobs` and a
    `logprobsResult` {topCandidates[] {candidates[] {token, tokenId, logProbability}},
    chosenCandidates[], logProbabilitySum}; a chunk of a model Google is retiring
    carries `modelStatus` {modelStage: "DEPRECATED", retirementTime, message} (Gemini API
    only). Scores are no event and the answer is untouched; the model status, which no
    event carries either, is logged by name, once."""

    def scored(text: str, logprob: float, **fields: Any) -> dict[str, Any]:
        token = {"token": text, "tokenId": 7, "logProbability": logprob}
        result = {
            "topCandidates": [{"candidates": [token]}],
            "chosenCandidates": [token],
            "logProbabilitySum": logprob,
        }
        payload = chunk({"text": text}, avgLogprobs=logprob, logprobsResult=result, **fields)
        payload["modelStatus"] = {
            "modelStage": "DEPRECATED",
            "retirementTime": "2027-01-15T00:00:00Z",
            "message": "gemini-2.0-flash will be retired; use gemini-2.5-flash.",
        }
        return payload

    body = sse(scored("Paris", -0.01), scored(".", -0.2, finishReason="STOP"))
    events = replay_every_way(body, "google")
    with log_messages() as logged:
        replay(body, "google")
    assert kinds(events) == ["text", "done"]
    got = summarize(events)
    assert (got.text, got.stop_reason) == ("Paris.", "stop")
    assert [line for line in logged if "modelStatus" in line] == [
        "no event carries the response chunk fields ['modelStatus']"
    ]


def test_gemini_3_code_runs_that_fail_or_time_out_are_server_tool_results() -> None:
    """Code execution on Gemini 3: `executableCode` {language, code, id} carrying the
    thoughts' signature, its `codeExecutionResult` {outcome, output, id}; the `Outcome`
    values OUTCOME_FAILED ("output contains the stderr and stdout") and
    OUTCOME_DEADLINE_EXCEEDED ("ran for too long, and was cancelled", no output) are
    results like OUTCOME_OK, each matched to its call by id (or, without one, to the
    latest run); the explanation after them is the only text."""
    events = run(
        chunk({"text": "Let me compute.", "thought": True}),
        chunk(
            {
                "executableCode": {"language": "PYTHON", "code": "1/0", "id": "ex_1"},
                "thoughtSignature": "sig-code",
            }
        ),
        chunk(
            {
                "codeExecutionResult": {
                    "outcome": "OUTCOME_FAILED",
                    "output": "ZeroDivisionError: division by zero\n",
                    "id": "ex_1",
                }
            }
        ),
        chunk({"executableCode": {"language": "PYTHON", "code": "while True: pass"}}),
        chunk({"codeExecutionResult": {"outcome": "OUTCOME_DEADLINE_EXCEEDED"}}),
        chunk({"text": "Division by zero fails; the loop never ends."}, finish="STOP"),
    )
    calls = [(ev.call_id, ev.arguments["code"]) for ev in events if ev.type == "server_tool_call"]
    results = [
        (ev.call_id, ev.content["outcome"]) for ev in events if ev.type == "server_tool_result"
    ]
    assert calls[0] == ("ex_1", "1/0") and calls[1][1] == "while True: pass"
    assert results == [("ex_1", "OUTCOME_FAILED"), (calls[1][0], "OUTCOME_DEADLINE_EXCEEDED")]
    got = summarize(events)
    assert got.text == "Division by zero fails; the loop never ends."
    assert (got.reasoning, got.signatures) == ("Let me compute.", ["sig-code"])
    assert (got.stop_reason, got.raw_stop_reason) == ("stop", "STOP")


def test_streamed_arguments_that_cannot_be_built_are_the_call_s_malformed_arguments() -> None:
    """Partial arguments that build no object (a leaf set as a string, then a path through
    it: incompatible shapes at one path; a `jsonPath` that is no RFC 9535 path) are the
    call's malformed arguments (DESIGN.md: `malformed_tool_arguments` naming the call),
    no longer a `protocol` error about an unexpected chunk."""

    def call(**fields: Any) -> dict[str, Any]:
        return {"functionCall": fields}

    for partial_args in (
        [
            {"jsonPath": "$.city", "stringValue": "Rome"},
            {"jsonPath": "$.city.zip", "numberValue": 1},
        ],
        [{"jsonPath": "city", "stringValue": "Rome"}],
    ):
        events = run(
            chunk(call(name="book", id="fc_9", willContinue=True)),
            chunk(call(partialArgs=partial_args, willContinue=True)),
            chunk(call(), finish="STOP"),
        )
        assert kinds(events) == ["tool_start", "error"]
        error = events[-1].error
        assert error.kind == "malformed_tool_arguments"
        assert "tool call 'fc_9' ('book')" in error.message


def test_null_members_of_a_part_are_absent() -> None:
    """A relay writing this wire from structs may write every member of a `Part`, the
    unused ones as `null` (`{"text": "...", "functionCall": null, "inlineData": null}`;
    CLIProxyAPI's empty-completion check reads a part `{"functionCall": null}` as
    empty). Part is a union ("exactly one field ... should be set"): a null member is
    no member. The text is read, no call is made of a null, and no null is logged as a
    field no event carries (an image beside a null call is logged once, as the part no
    event carries); the turn ends in `stop`, not in a `protocol` error."""
    nulls = {"functionCall": None, "inlineData": None, "executableCode": None}
    body = sse(
        chunk({"text": "Hello", "thoughtSignature": None, **nulls}),
        chunk({"text": " there", "thought": None, **nulls}, {"functionCall": None}),
        chunk({"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}, "functionCall": None}),
        chunk({"text": ".", **nulls}, finish="STOP"),
    )
    events = replay_every_way(body, "google")
    with log_messages() as logged:
        replay(body, "google")
    assert kinds(events) == ["text", "done"]
    got = summarize(events)
    assert (got.text, got.stop_reason, got.signatures) == ("Hello there.", "stop", [])
    unread = [line for line in logged if "no event carries" in line]
    assert unread == ["no event carries a part with keys ['functionCall', 'inlineData']"]


def test_parallel_streamed_calls_keep_their_ids_and_falsy_values() -> None:
    """Vertex with `toolConfig.functionCallingConfig.streamFunctionCallArguments` and
    parallel calls (Gemini 3): each call opens with its `name` and `id` (the first with
    the thoughts' signature), streams its `partialArgs` and ends at its `{}` part, and a
    call without parameters comes whole (`{name, id}`, no args, no `willContinue`).
    Values that are falsy (`numberValue: 0`, `boolValue: false`, `stringValue: ""`,
    `nullValue`) are arguments like any other, each call under its own id, in order."""

    def call(**fields: Any) -> dict[str, Any]:
        return {"functionCall": fields}

    events = run(
        chunk(
            {**call(name="set_alarm", id="fc_a", willContinue=True), "thoughtSignature": "sig"},
            call(
                partialArgs=[
                    {"jsonPath": "$.hour", "numberValue": 0},
                    {"jsonPath": "$.repeat", "boolValue": False},
                ],
                willContinue=True,
            ),
        ),
        chunk(
            call(partialArgs=[{"jsonPath": "$.label", "stringValue": ""}], willContinue=True),
            call(),
            call(name="set_timer", id="fc_b", willContinue=True),
        ),
        chunk(
            call(
                partialArgs=[
                    {"jsonPath": "$.seconds", "numberValue": 90},
                    {"jsonPath": "$.sound", "nullValue": "NULL_VALUE"},
                ]
            ),
            call(name="list_alarms", id="fc_c"),
            finish="STOP",
        ),
    )
    got = summarize(events)
    assert got.tool_calls == [
        ("fc_a", "set_alarm", {"hour": 0, "repeat": False, "label": ""}),
        ("fc_b", "set_timer", {"seconds": 90, "sound": None}),
        ("fc_c", "list_alarms", {}),
    ]
    assert got.signatures == ["sig"]
    assert (got.stop_reason, got.raw_stop_reason) == ("tool_use", "STOP")
