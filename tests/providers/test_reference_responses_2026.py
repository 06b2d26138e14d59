"""OpenAI Responses streaming events of the current reference (openai-python
`types/responses/response_stream_event.py` and the types it unions: `response_error.py`,
`response_computer_tool_call.py` with `computer_action_list.py`, `mcp_tool_call_error.py`,
`response_function_web_search.py`, ...) replayed as a client of `/v1/responses` would
receive them, each checked against what the contract says it must produce. Bodies are
built by hand from the reference's types; ids and opaque values are made up. Each is read
whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import Event, Failed
from tests.support import Expect, check, replay_every_way, summarize

P = "openai-responses"


def wire(*payloads: dict[str, Any]) -> bytes:
    """Events as OpenAI frames them: `event:` naming the type, each numbered from 0."""
    out = []
    for number, payload in enumerate(payloads):
        payload = {**payload, "sequence_number": number}
        out.append(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(wire(*payloads), P)


RESPONSE = {"id": "resp_1", "object": "response", "model": "gpt-5.2", "output": []}
CREATED = {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}
IN_PROGRESS = {"type": "response.in_progress", "response": {**RESPONSE, "status": "in_progress"}}
USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 100},
    "output_tokens": 40,
    "output_tokens_details": {"reasoning_tokens": 16},
    "total_tokens": 160,
}
# (input without the cache, output with the reasoning, reasoning, cache read, total)
COUNTED = (20, 40, 16, 100, 160)


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    response = {**RESPONSE, "status": "completed", "output": list(output), "usage": USAGE}
    return {"type": "response.completed", "response": response}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def on(kind: str, index: int, item_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "output_index": index, "item_id": item_id, **fields}


# -- response.failed: every code of `ResponseError` -----------------------------------------

# `response_error.py`'s `code` literals (and `data_residency_mismatch`, `bio_policy`, which
# later versions of the reference add): OpenAI's own trouble (its server, its rate limit,
# its file search's vector store timing out) may be over when the same request is sent
# again; a prompt or an image it refuses is refused again.
_SERVERS_TROUBLE = ("server_error", "rate_limit_exceeded", "vector_store_timeout")
_REQUESTS_FAULT = (
    "invalid_prompt",
    "invalid_image",
    "invalid_image_format",
    "invalid_base64_image",
    "invalid_image_url",
    "image_too_large",
    "image_too_small",
    "image_parse_error",
    "image_content_policy_violation",
    "invalid_image_mode",
    "image_file_too_large",
    "unsupported_image_media_type",
    "empty_image_file",
    "failed_to_download_image",
    "image_file_not_found",
    "data_residency_mismatch",
    "bio_policy",
)


@pytest.mark.parametrize(
    ("code", "retryable"),
    [(code, True) for code in _SERVERS_TROUBLE] + [(code, False) for code in _REQUESTS_FAULT],
)
def test_each_failure_code_of_the_reference_says_whether_sending_again_may_help(
    code: str, retryable: bool
) -> None:
    """A background response's lifecycle (`response.queued`, `response.in_progress`)
    ended by `response.failed` whose `error` is a `ResponseError`: `code` and `message`
    only, no `type` and no status. Each is a stream error with its code and message; a
    vector store that timed out ("vector_store_timeout") is OpenAI's trouble as a
    `server_error` is, and was read as a fault of the request, never to be sent again."""
    message = f"The response failed ({code})."
    failed = {
        "type": "response.failed",
        "response": {**RESPONSE, "status": "failed", "error": {"code": code, "message": message}},
    }
    queued = {"type": "response.queued", "response": {**RESPONSE, "status": "queued"}}
    events = run(
        {**CREATED, "response": {**RESPONSE, "status": "queued"}}, queued, IN_PROGRESS, failed
    )
    check(summarize(events), Expect(terminal="error", error_kind="stream_error"))
    [end] = [ev for ev in events if isinstance(ev, Failed)]
    assert (end.error.code, end.error.message) == (code, message)
    assert end.error.retryable is retryable
