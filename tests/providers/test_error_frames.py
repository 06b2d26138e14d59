"""A frame the server labelled an error (`event: error`, llama.cpp's `error:` line) ends
the turn in `error(kind="stream_error")` on every wire, whatever its payload: never a
`done` (or `truncated`) that loses the failure, and never a `protocol` error that loses
its words. The text before it is kept.

The bodies are built by hand from each provider's streaming docs and from what proxies
and gateways send: Anthropic's `{"type": "error", "error": {...}}`, Google's
`{"error": {"code", "message", "status"}}`, the Responses `{"type": "error", "code",
"message", "param"}`, OpenAI-style and vLLM envelopes, llama.cpp's
`error: {"code": 400, "message": ..., "type": "invalid_request_error"}` line (before
ggml-org/llama.cpp#16109), a bare message, JSON that is no object, and no data at all.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, Event, Failed, TextDelta
from rxllm.fragments import Fragment, RawChunk
from rxllm.providers import wire_for
from tests.support import replay

WIRES = ("anthropic", "google", "openai-responses", "openai")


def frame(data: str, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


def frames(event: str | None, *payloads: dict[str, Any]) -> str:
    return "".join(frame(json.dumps(payload), event) for payload in payloads)


# Each wire's answer up to "Hello", then what would end it well: the error frame goes
# between, so a frame that is ignored shows as `done` (with the tail) or `truncated`.
HEAD = {
    "anthropic": frames(
        None,
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Hello"},
        },
    ),
    "google": frames(
        None,
        {"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}, "index": 0}]},
    ),
    "openai-responses": frames(
        None,
        {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1"}},
        {
            "type": "response.output_text.delta",
            "sequence_number": 1,
            "output_index": 0,
            "content_index": 0,
            "delta": "Hello",
        },
    ),
    "openai": frames(None, {"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hello"}}]}),
}
TAIL = {
    "anthropic": frames(
        None,
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ),
    "google": frames(
        None,
        {"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP"}]},
    ),
    "openai-responses": frames(
        None,
        {"type": "response.completed", "sequence_number": 3, "response": {"status": "completed"}},
    ),
    "openai": frames(None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    + "data: [DONE]\n\n",
}

LLAMA_CPP_MESSAGE = (
    "the request exceeds the available context size. try increasing the context size or "
    "enable context shift"
)
LLAMA_CPP_ERROR = {"code": 400, "message": LLAMA_CPP_MESSAGE, "type": "invalid_request_error"}


@dataclass(frozen=True)
class Shape:
    """An error frame as it is written on the wire, and what its error event says."""

    body: str
    message: str
    raw: str | None  # the frame's data, as the event's `raw`: compared as JSON if it is
    status: int | None = None
    code: str | None = None
    retry_after: float | None = None


def error_shape(data: str, message: str, **expected: Any) -> Shape:
    return Shape(frame(data, "error"), message, data, **expected)


SHAPES = {
    "bare message": error_shape("Internal server error", "Internal server error"),
    "html page": error_shape(
        "<html><body><h1>502 Bad Gateway</h1></body></html>", "502 Bad Gateway"
    ),
    "json string": error_shape('"upstream timed out"', "upstream timed out"),
    "json list": error_shape(
        '[{"message": "boom", "code": "upstream_error"}]', "boom", code="upstream_error"
    ),
    "no data": Shape("event: error\ndata:\n\n", "{wire} sent an error event without data", None),
    "message only": error_shape(
        json.dumps({"message": "upstream connect error", "code": 502}),
        "upstream connect error",
        status=502,
    ),
    "detail only": error_shape(json.dumps({"detail": "Gateway Timeout"}), "Gateway Timeout"),
    "other type": error_shape(
        json.dumps({"type": "exception", "message": "boom"}), "boom", code="exception"
    ),
    "error string": error_shape(
        json.dumps({"error": "Rate limit exceeded, please try again in 2s"}),
        "Rate limit exceeded, please try again in 2s",
        retry_after=2.0,
    ),
    "google envelope": error_shape(
        json.dumps(
            {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
        ),
        "The model is overloaded.",
        status=503,
        code="UNAVAILABLE",
    ),
    "responses event": error_shape(
        json.dumps(
            {
                "type": "error",
                "code": "server_error",
                "message": "The server had an error while processing your request.",
                "param": None,
                "sequence_number": 2,
            }
        ),
        "The server had an error while processing your request.",
        code="server_error",
    ),
    "llama.cpp error line": Shape(
        f"error: {json.dumps(LLAMA_CPP_ERROR)}\n\n",
        LLAMA_CPP_MESSAGE,
        json.dumps(LLAMA_CPP_ERROR),
        status=400,
        code="invalid_request_error",
    ),
}

# The shapes each wire got wrong: a wrong terminal (`done`, `truncated`, `protocol`), or
# an error whose message was not the provider's words (a dict's repr with "error" as
# its code, an HTML page's markup).
NOT_JSON_OBJECTS = ("html page", "json string", "json list", "no data")
"""Shapes the chat wire got wrong too."""
UNKNOWN_TO_THE_OTHERS = (
    "bare message",
    *NOT_JSON_OBJECTS,
    "message only",
    "detail only",
    "other type",
    "llama.cpp error line",
)
"""Shapes none of the other three wires read as an error of its own."""
BROKEN: dict[str, tuple[str, ...]] = {
    "anthropic": (*UNKNOWN_TO_THE_OTHERS, "error string", "google envelope", "responses event"),
    "google": (*UNKNOWN_TO_THE_OTHERS, "responses event"),
    "openai-responses": (*UNKNOWN_TO_THE_OTHERS, "error string"),
    "openai": NOT_JSON_OBJECTS,
}
CASES = [(wire, shape) for wire in WIRES for shape in BROKEN[wire]]


def check(events: list[Event], wire: str, shape: Shape) -> Failed:
    """One terminal, last; it is this frame's stream error; the text before it kept."""
    terminals = [ev for ev in events if isinstance(ev, Done | Failed | rxllm.Cancelled)]
    assert len(terminals) == 1 and events[-1] is terminals[0], events
    end = terminals[0]
    assert isinstance(end, Failed), end
    error = end.error
    assert (error.kind, error.provider) == ("stream_error", wire), error
    assert "".join(ev.text for ev in events if isinstance(ev, TextDelta)) == "Hello"
    assert error.message == shape.message.format(wire=wire)
    assert (error.status, error.code, error.retry_after) == (
        shape.status,
        shape.code,
        shape.retry_after,
    )
    if shape.raw is None:
        assert error.raw is None
    elif shape.raw.startswith(("{", "[", '"')):
        assert error.raw is not None and json.loads(error.raw) == json.loads(shape.raw)
    else:
        assert error.raw == shape.raw
    return end


@pytest.mark.parametrize("tail", [False, True], ids=["cut", "then-finish"])
@pytest.mark.parametrize(("wire", "name"), CASES)
def test_an_error_frame_ends_the_turn_in_a_stream_error(wire: str, name: str, tail: bool) -> None:
    """Cut after the frame, and followed by the wire's own successful end: the frame
    decides the terminal either way."""
    shape = SHAPES[name]
    body = HEAD[wire] + shape.body + (TAIL[wire] if tail else "")
    check(replay(body.encode(), wire), wire, shape)


@pytest.mark.parametrize(("wire", "name"), CASES)
def test_the_normalizer_settles_on_the_error_frame(wire: str, name: str) -> None:
    """At the normalizer itself: the error frame settles the attempt, so nothing the
    server sends after it (a finish, `[DONE]`) is read."""
    out: list[Fragment] = []
    normalizer = wire_for(wire).normalizer(out.append, wire)
    shape = SHAPES[name]
    data = "" if name == "no data" else (shape.raw or "")
    normalizer.feed(RawChunk(wire, 1, "error", data))
    assert normalizer.settled
    assert len(out) == 1 and isinstance(out[0], Failed)
    assert out[0].error.message == shape.message.format(wire=wire)


def test_text_held_back_by_think_tags_comes_out_before_the_error() -> None:
    """Together's splitter holds what may begin `<think>`; an error frame the chat wire
    does not read itself (JSON that is no object) still lets it out first."""
    body = frames(None, {"choices": [{"index": 0, "delta": {"content": "<thi"}}]})
    body += frame('"the model crashed"', "error")
    events = replay(body.encode(), "together")
    end = events[-1]
    assert isinstance(end, Failed) and end.error.kind == "stream_error"
    assert end.error.message == "the model crashed"
    assert "".join(ev.text for ev in events if isinstance(ev, TextDelta)) == "<thi"


# -- end to end, over a loopback server ------------------------------------------------

END_TO_END = [
    ("anthropic", "bare message"),
    ("google", "message only"),
    ("openai-responses", "error string"),
    ("openai", "no data"),
    ("google", "llama.cpp error line"),
]


@pytest.mark.parametrize(("wire", "name"), END_TO_END)
async def test_an_error_frame_over_http_ends_the_record_in_an_error(
    serve_body: Callable[[bytes], Awaitable[str]], wire: str, name: str
) -> None:
    shape = SHAPES[name]
    url = await serve_body((HEAD[wire] + shape.body + TAIL[wire]).encode())
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider(wire, api_key="test", base_url=url) as provider:
        events = [ev async for ev in provider.astream(request)]
        record = await provider.complete(request)
    end = check(events, wire, shape)
    assert record.text == "Hello"
    assert isinstance(record.terminal, Failed) and record.terminal.error == end.error
    assert len(record.attempts) == 1  # output was committed: nothing is retried


@pytest.mark.parametrize("falsy", [False, None, "", 0, {}])
def test_a_type_less_responses_chunk_whose_error_is_falsy_is_no_error(falsy: Any) -> None:
    # Only an error that says something fails the turn: `{"error": false}` says none came.
    body = HEAD["openai-responses"] + frames(None, {"error": falsy}) + TAIL["openai-responses"]
    events = replay(body.encode(), "openai-responses")
    assert isinstance(events[-1], Done)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"


_LISTED_429 = [
    {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}
]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("event", [None, "error"], ids=["data", "error-frame"])
def test_an_error_envelope_in_a_list_is_that_error_with_its_status(
    wire: str, event: str | None
) -> None:
    """Google's envelope, a list of one error (its OpenAI-compatible endpoint answers
    so): as a data chunk it was a `protocol` error ("expected a JSON object"), and as
    an error frame it had no status, so a rate limit read as no rate limit."""
    body = HEAD[wire] + frame(json.dumps(_LISTED_429), event)
    end = replay(body.encode(), wire)[-1]
    assert isinstance(end, Failed), end
    error = end.error
    assert (error.kind, error.status, error.code) == ("stream_error", 429, "RESOURCE_EXHAUSTED")
    assert error.message == "Resource exhausted" and error.retryable


async def test_a_200_whose_body_is_an_error_envelope_names_its_status(
    serve_body: Callable[[bytes], Awaitable[str]],
) -> None:
    """A 200 whose whole body is an error envelope: its status (429 here) is the one
    the recovery policy reads, so the rate limit is backed off, not surfaced."""
    url = await serve_body(json.dumps(_LISTED_429).encode())
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider("openai", api_key="test", base_url=url, max_attempts=1) as p:
        record = await p.complete(request)
    assert isinstance(record.terminal, Failed)
    assert (record.terminal.error.status, record.terminal.error.retryable) == (429, True)
