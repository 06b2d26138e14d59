"""The nineteenth round of unseen rejections (tests/rejections_extra, 20 cases): rejections a
server sends after `200 OK` and before any output, each in its wire's own error frame. The
chat wire's `data: {"error": ...}` (TGI's `{"error", "error_type"}` written with no space
after `data:`, vLLM's engine dying, LiteLLM's proxy relaying Vertex's 429, OpenRouter's chunk
with empty choices and an error); Anthropic's `event: error` (Claude and Claude on Vertex
overloaded, vLLM's /v1/messages turning its engine's death into an `internal_error`); the
Responses API's `response.failed` and bare `error` events (Azure's token rate limit,
Codex's overload, server error, context overflow and flagged prompt); Gemini's error object
as a chunk of the `?alt=sse` stream (Vertex's and Gemini's 429 and 503, one with no message).

Each frame is read by its own wire (`rxllm.replay` with the case's preset: Anthropic's,
Gemini's and the Responses wire read their cases themselves, as
`test_probe_rejections_9.original` now does for presets of those wires) and must get the
action and the wait of the same rejection over HTTP: the frame's error as its provider's HTTP
body, at the status the provider answers it with before streaming (`HTTP_STATUS`), read as
`sources.http` reads it. Over a loopback server a frame before any output is retried as that
reading says, and one after committed output ends the turn with nothing retried.

One reading was missing, and the frames of one server showed it: a generation that failed
in the server, said in words with no status, walked the static list.

- TGI writes an `InferError` in a stream as `{"error": "<its Display>", "error_type": ...}`
  and no status: "Request failed during generation: Server error: tensors used as indices
  must be long, byte or bool tensors" (tgi__sse_request_failed_during_generation_tensors_as_indices,
  TGI#369), "... Batch ID 408 not found in cache."
  (tgi__sse_request_failed_during_generation_batch_not_found_in_cache) and "Incomplete
  generation" (tgi__sse_incomplete_generation: 500 over HTTP). Before, all three were
  read as the body's fault (`static`): the degraded retry dropped `stream_options` and the
  sampling keys the shard's failure had nothing to do with. The same family in Ollama's
  words, "an error was encountered while running the model: unexpected EOF" (500 over
  HTTP, its mid-stream NDJSON error in docs.ollama.com "Errors that occur while
  streaming"), read the same. A generation or a model run that failed ("failed during
  generation", "error ... while running the model", "error occurred during inference",
  "incomplete generation") is now the server's trouble: the same body after a wait. As
  with the module's other words of server trouble, they are read where no status speaks,
  and at TGI's own status for a generation error, 424 (Failed Dependency: what the server
  depends on failed; SageMaker's 424 too), where before they were surfaced; a key the words
  name is still dropped first, and a 4xx other than 424 keeps its reading.

And in the every-envelope pass (the round's cases put together again in each envelope of
`test_probe_rejections_9`, as round sixteen's are in test_probe_rejections_42: 400
combinations), two of the server's own failures read as the body's once a frame kept their
words and lost their status and type: vLLM's "EngineCore encountered an issue. See stack
trace (above) for the root cause." (its `Internal Server Error` type, with spaces, is no
code) and OpenAI's "An error occurred while processing your request. You can retry your
request, ..." (its `server_error` lost), `static` on the chat wire's policy and surfaced on
the Responses wire's. An engine, worker or backend that "encountered an issue" (or an error
or a problem) is now the server's trouble as a server that "had an error" was, and so is an
error that "occurred while processing your request"; a server that merely "has an issue"
with what it was sent, an error while processing an image, and a request that failed to
parse keep their readings. The other differences have their reasons (`ENVELOPE_DIFFERENT`).
(vLLM's "2 validation errors for ChatCompletionStreamResponse" in TGI's and Ollama's frames,
with neither status nor type, read `static` here; since test_probe_rejections_47 a validation
error about a response class is the server's trouble, and they read as the case.)

The round's other 17 cases read right before, in their wires as over HTTP:
anthropic__sse_error_overloaded_details_null_request_id,
anthropic__sse_error_overloaded_first_event_opus,
azure_openai__responses_failed_rate_limit_exceeded_token_rate_limit,
gemini__sse_error_429_quota_exceeded_status_before_message,
gemini__sse_error_503_high_demand_mid_stream,
gemini__sse_error_503_without_message,
litellm__sse_midstream_fallback_vertex_429_resource_exhausted,
openai__responses_error_event_server_is_overloaded,
openai__responses_error_invalid_prompt_flagged_usage_policy,
openai__responses_failed_context_length_exceeded_input,
openai__responses_failed_server_error_retry_request_id,
openrouter__sse_empty_choices_error_502_worker_request_limit,
vertex__sse_error_429_resource_exhausted_in_stream,
vertex_anthropic__sse_error_overloaded_type_only,
vllm__messages_sse_error_internal_error_engine_dead_validation,
vllm__sse_engine_core_encountered_an_issue_code_500,
vllm__sse_internal_server_error_finish_reason_error_before_first_token.
One read otherwise than its HTTP twin by an earlier decision (`DIFFERENT`): OpenRouter's 502
degraded the body over HTTP (no upstream takes it) and backed off in a stream (the upstream
failed while streaming: test_probe_rejections_9). Since test_probe_rejections_48 its words,
"Worker local total request limit reached (33/32)", are a rate limit's, and both back off.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.degradation import Verdict, classify
from rxllm.events import Failed, Retry, TextDelta
from tests.rejection_rounds import assert_reads_as_its_file_says, openai_error, over_http
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_9 import (
    ENVELOPES,
    EXTRA,
    chat_wire_error,
    http_status,
    in_its_wire,
    original,
    policy,
    said_in,
    sent,
)
from tests.test_probe_rejections_16 import combination_id, combinations, reading
from tests.test_probe_rejections_19 import action_counts

# backoff 18, none 2
ROUND_NINETEEN = (
    "anthropic__sse_error_overloaded_details_null_request_id",
    "anthropic__sse_error_overloaded_first_event_opus",
    "azure_openai__responses_failed_rate_limit_exceeded_token_rate_limit",
    "gemini__sse_error_429_quota_exceeded_status_before_message",
    "gemini__sse_error_503_high_demand_mid_stream",
    "gemini__sse_error_503_without_message",
    "litellm__sse_midstream_fallback_vertex_429_resource_exhausted",
    "openai__responses_error_event_server_is_overloaded",
    "openai__responses_error_invalid_prompt_flagged_usage_policy",
    "openai__responses_failed_context_length_exceeded_input",
    "openai__responses_failed_server_error_retry_request_id",
    "openrouter__sse_empty_choices_error_502_worker_request_limit",
    "tgi__sse_incomplete_generation",
    "tgi__sse_request_failed_during_generation_batch_not_found_in_cache",
    "tgi__sse_request_failed_during_generation_tensors_as_indices",
    "vertex__sse_error_429_resource_exhausted_in_stream",
    "vertex_anthropic__sse_error_overloaded_type_only",
    "vllm__messages_sse_error_internal_error_engine_dead_validation",
    "vllm__sse_engine_core_encountered_an_issue_code_500",
    "vllm__sse_internal_server_error_finish_reason_error_before_first_token",
)

PLAIN = body(temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
SURFACE = ("surface", ())
BACKOFF = ("backoff", ())
STATIC = ("static", ())


def case(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXTRA / f"{name}.json").read_text())
    return loaded


def test_the_cases_are_round_nineteens() -> None:
    assert len(set(ROUND_NINETEEN)) == 20
    assert action_counts(ROUND_NINETEEN) == {"backoff": 18, "none": 2}
    assert all(case(name)["transport"] == "sse_after_200" for name in ROUND_NINETEEN)


@pytest.mark.parametrize("case_name", ROUND_NINETEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- each frame, read by its wire, as the same rejection over HTTP ------------------------

# The status each frame's rejection has over HTTP, where its provider answers it before
# streaming: the status the error names or its type stands for, or the provider's own for
# it (TGI's router/src/server.rs: a generation error is 424 Failed Dependency, an incomplete
# one 500; OpenAI's for its codes: rate_limit_exceeded 429, server_is_overloaded 503).
HTTP_STATUS = {
    "anthropic__sse_error_overloaded_details_null_request_id": 529,
    "anthropic__sse_error_overloaded_first_event_opus": 529,
    "vertex_anthropic__sse_error_overloaded_type_only": 529,
    "vllm__messages_sse_error_internal_error_engine_dead_validation": 500,
    "azure_openai__responses_failed_rate_limit_exceeded_token_rate_limit": 429,
    "openai__responses_error_event_server_is_overloaded": 503,
    "openai__responses_failed_server_error_retry_request_id": 500,
    "openai__responses_failed_context_length_exceeded_input": 400,
    "openai__responses_error_invalid_prompt_flagged_usage_policy": 400,
    "vertex__sse_error_429_resource_exhausted_in_stream": 429,
    "gemini__sse_error_503_high_demand_mid_stream": 503,
    "gemini__sse_error_429_quota_exceeded_status_before_message": 429,
    "gemini__sse_error_503_without_message": 503,
    "tgi__sse_request_failed_during_generation_tensors_as_indices": 424,
    "tgi__sse_request_failed_during_generation_batch_not_found_in_cache": 424,
    "tgi__sse_incomplete_generation": 500,
    "vllm__sse_engine_core_encountered_an_issue_code_500": 500,
    "vllm__sse_internal_server_error_finish_reason_error_before_first_token": 500,
    "litellm__sse_midstream_fallback_vertex_429_resource_exhausted": 429,
    "openrouter__sse_empty_choices_error_502_worker_request_limit": 502,
}


def http_body(found: dict[str, Any]) -> Any:
    """The frame's error as its provider's HTTP body: the frame's data where it is an error
    envelope already (the chat wire's, Anthropic's, Gemini's), the error object of a
    Responses event in OpenAI's envelope (`error` beside the event's `type`, or the failed
    response's `error`)."""
    data = next(
        json.loads(line[5:])
        for line in found["body"].splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]"
    )
    if data.get("type") == "response.failed":
        return {"error": data["response"]["error"]}
    if data.get("type") == "error" and found["preset"] == "openai-responses":
        return {"error": data["error"]}
    return data


# Twins whose HTTP reading differs from the frame's by a decision taken before: name -> why.
# (None now: OpenRouter's "Worker local total request limit reached" over HTTP at 502 walked
# the static list; since test_probe_rejections_48 a request limit reached is a rate limit's
# words, and the twins read alike.)
DIFFERENT: dict[str, str] = {}


def in_the_wire(name: str) -> Verdict:
    """`classify` of the error the case's frame ends its turn in, read by the case's own
    wire (its preset's), as the pipeline reads it before deciding on a retry."""
    found = case(name)
    return classify(in_its_wire(found).error, sent(found), policy(found))


def over_http_as_twin(name: str) -> Verdict:
    found = case(name)
    return response(HTTP_STATUS[name], http_body(found), sent(found), policy(found))


def test_every_case_has_a_twin() -> None:
    assert set(HTTP_STATUS) == set(ROUND_NINETEEN)
    assert set(DIFFERENT) <= set(ROUND_NINETEEN)


@pytest.mark.parametrize("case_name", ROUND_NINETEEN)
def test_the_frame_reads_as_the_same_rejection_over_http(case_name: str) -> None:
    framed, direct = in_the_wire(case_name), over_http_as_twin(case_name)
    got = (framed.action, framed.drop, framed.delay)
    if case_name in DIFFERENT:
        assert got != (direct.action, direct.drop, direct.delay), "now the same: unmark it"
        return
    assert got == (direct.action, direct.drop, direct.delay), (framed, direct)


# -- a generation that failed in the server: its trouble, a wait ---------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Request failed during generation: Server error: CUDA out of memory. Tried to allocate "
        "2.00 GiB",
        "Request failed during generation: Server error:",
        "an error was encountered while running the model: unexpected EOF",
        "An error was encountered while running the model: CUDA error\nCUDA error: out of memory",
        "Incomplete generation",
        "An error occurred during generation, please retry.",
        "Generation failed: the worker stopped responding",
        "error occurred while generating the response",
        "Inference failed during generation of the batch",
    ],
)
def test_a_failed_generation_is_the_servers_trouble(message: str) -> None:
    # in a frame with no status (TGI's string, OpenAI's envelope without one), and at TGI's
    # 424 and a 500 over HTTP
    assert in_band({"error": message, "error_type": "generation"}) == BACKOFF
    assert in_band(openai_error(message)["error"]) == BACKOFF
    assert over_http(message, PLAIN, 424) == BACKOFF
    assert over_http(message, PLAIN, 500) == BACKOFF


def in_band(error: Any, sent_body: dict[str, Any] = PLAIN) -> tuple[str, tuple[str, ...]]:
    read = frame(error, sent_body)
    return read.action, read.drop


@pytest.mark.parametrize(
    ("message", "sent_body", "status", "expected"),
    [
        # a key the words name is still the key's
        (
            "Request failed during generation: Input validation error: `top_k` must be strictly "
            "positive",
            body(top_k=0, temperature=0.2),
            None,
            ("drop", ("top_k",)),
        ),
        # the size, said inside it, is the conversation's
        (
            "An error occurred during generation: the prompt exceeds the model's maximum context "
            "length of 4096 tokens",
            PLAIN,
            None,
            SURFACE,
        ),
        # a generation that never began for want of the model's own support: the tools go
        (
            "error while running the model: the model does not support tools",
            WITH_TOOLS,
            None,
            ("drop", ("tools", "tool_choice")),
        ),
        # at a 4xx other than 424 the status speaks, as before
        ("Request failed during generation: bad input", PLAIN, 400, STATIC),
        ("Request failed during generation: bad input", PLAIN, 422, STATIC),
        # a config named "generation" is no generation that failed
        ("Error in generation_config: unknown field", PLAIN, None, STATIC),
        # nor is a generation the caller asks about
        ("generation parameters are invalid", PLAIN, None, STATIC),
        # a 424 that relays the model's answer to a client error (SageMaker's ModelError) reads
        # as before
        (
            'Received client error (400) from primary with message "{"error": "bad request"}"',
            PLAIN,
            424,
            SURFACE,
        ),
    ],
)
def test_failed_generations_near_the_rule(
    message: str,
    sent_body: dict[str, Any],
    status: int | None,
    expected: tuple[str, tuple[str, ...]],
) -> None:
    if status is None:
        assert in_band({"message": message}, sent_body) == expected
    else:
        assert over_http(message, sent_body, status) == expected


def test_a_424_with_the_servers_trouble_in_words_is_a_wait() -> None:
    # SageMaker's ModelError relaying its container's 5xx: the server's trouble by its words
    message = (
        'Received server error (500) from primary with message "An internal error has occurred."'
    )
    assert over_http(message, PLAIN, 424) == BACKOFF


# -- an engine's or a server's failure said as OpenAI and vLLM say it: a wait --------------


@pytest.mark.parametrize(
    "message",
    [
        "EngineCore encountered an issue. See stack trace (above) for the root cause.",
        "The engine encountered an unexpected error.",
        "Worker has encountered a fatal problem, restarting",
        "The backend ran into an issue while serving this request.",
        "An error occurred while processing your request. You can retry your request, or "
        "contact us through our help center at help.openai.com if the error persists.",
        "An unexpected error occurred while processing the request.",
    ],
)
def test_an_engine_or_server_failure_in_words_is_a_wait(message: str) -> None:
    # in a frame with no status and no code (an envelope that kept the words only)
    assert in_band({"message": message}) == BACKOFF
    assert in_band({"error": message}) == BACKOFF
    # over HTTP the 500 already said it
    assert over_http(message, PLAIN, 500) == BACKOFF


@pytest.mark.parametrize(
    ("message", "sent_body"),
    [
        # an issue or a problem the server merely has, or one it has with what was sent
        ("The server has an issue with the tools you sent", WITH_TOOLS),
        ("the server has an issue tracker: see the docs", PLAIN),
        # processing something else than the request: an image
        ("An error occurred while processing your image", body(True, temperature=0.2)),
        # parsing the request is the request's
        ("An error occurred while parsing the request body", PLAIN),
    ],
)
def test_failures_in_words_near_the_rule(message: str, sent_body: dict[str, Any]) -> None:
    # the body's, by words that name nothing: the static list, as before
    assert in_band({"message": message}, sent_body) == STATIC


# -- over a loopback server: retried before output, surfaced after -------------------------

# The head of a turn that has shown text, in each wire's framing.
_HEAD = {
    "anthropic": [
        ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hello"},
            },
        ),
    ],
    "google": [(None, {"candidates": [{"content": {"parts": [{"text": "Hello"}]}, "index": 0}]})],
    "openai-responses": [
        (
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "sequence_number": 1,
                "output_index": 0,
                "content_index": 0,
                "delta": "Hello",
            },
        )
    ],
    "custom": [(None, {"choices": [{"index": 0, "delta": {"content": "Hello"}}]})],
}
# One case of the round per wire.
_ONE_PER_WIRE = {
    "anthropic": "anthropic__sse_error_overloaded_details_null_request_id",
    "google": "vertex__sse_error_429_resource_exhausted_in_stream",
    "openai-responses": "openai__responses_error_event_server_is_overloaded",
    "custom": "tgi__sse_request_failed_during_generation_tensors_as_indices",
}


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    return "".join(
        (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
        for name, data in events
    ).encode()


async def _turn(
    serve: Callable[[Any], Awaitable[str]], preset: str, first: bytes
) -> tuple[rxllm.StreamRecord, list[dict[str, Any]], list[Any]]:
    """A turn against a server that answers the first request with `first` and every later
    one with the wire's short answer; the record, the bodies sent, and the events."""
    from tests.test_rejections import OK_STREAMS

    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        answer = first if len(bodies) == 1 else OK_STREAMS.get(preset, OK_STREAMS["openai"])
        return web.Response(body=answer, headers={"Content-Type": "text/event-stream"})

    url = await serve(handler)
    request = rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("hi")], params={"temperature": 0.2}
    )
    async with rxllm.provider(
        preset, api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    async with rxllm.provider(
        preset, api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        bodies.clear()
        record = await provider.complete(request)
    return record, bodies, events


@pytest.mark.parametrize("wire", _ONE_PER_WIRE)
async def test_a_frame_before_any_output_is_retried_with_the_same_body(
    serve: Callable[[Any], Awaitable[str]], wire: str
) -> None:
    record, bodies, events = await _turn(serve, wire, case(_ONE_PER_WIRE[wire])["body"].encode())
    assert len(bodies) == 2 and bodies[0] == bodies[1]
    assert [a.committed for a in record.attempts] == [False, True]
    assert record.terminal.type == "done" and record.text == "fine"
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and not retries[0].dropped


@pytest.mark.parametrize("wire", _ONE_PER_WIRE)
async def test_a_frame_after_committed_output_is_surfaced_unretried(
    serve: Callable[[Any], Awaitable[str]], wire: str
) -> None:
    framed = case(_ONE_PER_WIRE[wire])["body"].encode()
    record, bodies, events = await _turn(serve, wire, _sse(_HEAD[wire]) + framed)
    assert len(bodies) == 1 and len(record.attempts) == 1
    assert record.text == "Hello"
    end = record.terminal
    assert isinstance(end, Failed) and end.error.kind == "stream_error"
    assert end.error.retryable  # the same body may succeed: the caller's to decide, not ours
    assert not any(isinstance(event, Retry) for event in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"


async def test_a_wait_in_a_frame_is_the_wait_before_the_retry(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    # Gemini's RetryInfo inside the error chunk, as in its HTTP 429
    error = {
        "error": {
            "code": 429,
            "message": "Resource exhausted.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.2s"}
            ],
        }
    }
    _, _, events = await _turn(serve, "google", _sse([(None, error)]))
    retries = [event for event in events if isinstance(event, Retry)]
    assert [retry.delay for retry in retries] == [0.2]
    assert response(429, error, PLAIN).delay == 0.2


# -- the new readings take linear time ----------------------------------------------------

_HOSTILE = {
    "failed words": "failed " * 9_000 + "during generation",
    "error words": "an error was " * 6_000 + "encountered while running the model",
    "spaces": "request failed" + " " * 60_000 + "during generation",
    "occurred": "error occurred " * 6_000,
    "engine spaces": "engine" + " " * 60_000 + "core encountered",
    "worker words": "worker has " * 6_000,
    "processing words": "an error occurred while processing " * 3_000,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, WITH_TOOLS))
        verdicts.append(response(424, openai_error(text), WITH_TOOLS))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2


# == the round's cases in every envelope ===================================================
# What each frame says (its words, code, type, and the status of its HTTP twin), put back
# together in each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a
# chat-wire frame (`combinations`, as round sixteen's are in test_probe_rejections_42): 400
# combinations, each read as the case itself (its own wire's reading), unless the envelope
# loses what that reading rests on (`ENVELOPE_DIFFERENT`, with the reason).

_QUOTA = "gemini__sse_error_429_quota_exceeded_status_before_message/"
_WITHOUT_STATUS = ("tgi/sse", "ollama/sse")
# (Since test_probe_rejections_48 "Quota exceeded" at 429, a request limit reached and
# "Resource exhausted." in words read as their cases in the envelopes that marked them: only
# the quota in a frame with no status is still the account's.)
ENVELOPE_DIFFERENT: dict[str, str] = {
    _QUOTA + envelope: "the envelope keeps neither RESOURCE_EXHAUSTED, a rate-limit type nor "
    "the 429: quota words in a frame with no status are the account's, as OpenAI's "
    "insufficient_quota is (test_probe_rejections_9)"
    for envelope in _WITHOUT_STATUS
}


def in_envelope(name: str, envelope: str, in_band: bool) -> Verdict:
    """The case's rejection in `envelope` (`tests.test_probe_rejections_9.ENVELOPES`), over
    HTTP at its twin's status or as a chat-wire frame."""
    found = case(name)
    said = said_in(http_body(found), HTTP_STATUS[name])
    payload = ENVELOPES[envelope](said)
    if not in_band:
        return response(http_status(said), payload, sent(found), policy(found))
    return frame(chat_wire_error(payload), sent(found), policy(found))


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_NINETEEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    got = reading(in_envelope(case_name, envelope, in_band))
    expected = reading(original(case(case_name)))
    if combination_id(case_name, envelope, in_band) in ENVELOPE_DIFFERENT:
        assert got != expected, "now reads the same: unmark it"
        return
    assert got == expected


def test_the_combinations_are_round_nineteens() -> None:
    assert len(combinations(ROUND_NINETEEN)) == 400
    assert {key.split("/")[0] for key in ENVELOPE_DIFFERENT} <= set(ROUND_NINETEEN)


@pytest.mark.parametrize(
    "message",
    [
        "Error while decoding the image: invalid base64 data",
        "failure while decoding image",
        "Error while parsing image data: unsupported format",
        "failed when loading the image from its URL",
    ],
)
def test_an_image_that_could_not_be_read_is_no_failed_generation(message: str) -> None:
    """A review of this round's reading: "decoding" was one of a failed generation's words,
    so "Error while decoding the image" in a frame with no status read as the server's
    trouble (backoff), the same request sent again; it read `static` before the round. The
    image could not be read: with images in the body, they are removed, in a frame and
    over HTTP (as "Failed to decode image" already was)."""
    with_image = body(images=True, temperature=0.2)
    assert in_band(openai_error(message)["error"], with_image)[0] == "images"
    assert over_http(message, with_image, 400)[0] == "images"


def test_decoding_alone_is_no_failed_generation() -> None:
    # the request's own bytes, not the run: not the server's trouble in a frame
    message = "error while decoding: invalid utf-8 in request"
    assert in_band(openai_error(message)["error"]) == STATIC


@pytest.mark.parametrize(
    "message",
    [
        "Content generation failed due to safety filters",
        "Generation failed: the response was stopped by safety filters",
    ],
)
def test_a_generation_stopped_by_safety_filters_is_surfaced(message: str) -> None:
    """A review of this round's reading: "generation failed" is the server's trouble, so a
    generation the provider's safety filters stopped read as a wait, the same prompt sent
    again (`static` before the round, dropping keys that had nothing to do with it). A
    safety filter is a content policy, as a "content filter" is: surfaced."""
    assert in_band(openai_error(message)["error"]) == SURFACE
    assert over_http(message, PLAIN, 400) == SURFACE
