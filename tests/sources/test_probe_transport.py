"""The transport and SSE layers probed against real loopback servers: a body closed
cleanly in the middle of a line, the line cap at its exact boundary with bytes that are
not UTF-8, and a `200 OK` whose body is an error object instead of the stream."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Event
from tests.support import Serve

KEY = "sk-probe-transport-0123456789abcdefghij"


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


HELLO = chunk({"role": "assistant", "content": "Hel"})
FINISH = chunk({"content": "lo"}, "stop")
DONE = b"data: [DONE]\n\n"


def ask(**params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], params=params)


async def events(url: str, request: rxllm.ChatRequest | None = None, **options: Any) -> list[Event]:
    async with rxllm.provider("openai", api_key=KEY, base_url=url, **options) as provider:
        return [ev async for ev in provider.astream(request or ask())]


def whole_body(body: bytes) -> Any:
    """A handler that answers with `body` and its Content-Length: the body ends cleanly."""

    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        headers = {"Content-Type": "text/event-stream", "x-request-id": "req_cut"}
        return web.Response(body=body, headers=headers)

    return handler


async def test_a_body_closed_cleanly_mid_line_is_truncated_not_a_protocol_error(
    serve: Serve,
) -> None:
    # Every byte the server announced arrived, but the last `data:` line stops in the
    # middle of its JSON: the stream was cut, as `rxllm.replay` says of the same bytes.
    body = HELLO + FINISH[:60]
    evs = await events(await serve(whole_body(body)), max_attempts=1)
    assert [ev.type for ev in evs] == ["text", "error"]
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "truncated" and error.request_id == "req_cut"
    assert "middle of its last line" in error.message
    replayed: list[Event] = []
    rxllm.replay(body, provider="openai").subscribe(replayed.append)
    assert replayed[-1].error.kind == "truncated"  # type: ignore[union-attr]


async def test_a_whole_last_line_without_its_line_break_still_counts(serve: Serve) -> None:
    evs = await events(await serve(whole_body(HELLO + FINISH + DONE.rstrip())), max_attempts=1)
    assert [ev.type for ev in evs] == ["text", "text", "done"]


async def test_the_line_cap_counts_bytes_not_replacement_characters(serve: Serve) -> None:
    # A line of invalid UTF-8 (each byte decodes to U+FFFD, three bytes) exactly at the cap.
    bad = HELLO.replace(b'"Hel"', b'"H' + b"\xff" * 200 + b'l"')
    body = bad + FINISH + DONE
    cap = max(len(line) for line in body.split(b"\n"))
    assert cap == len(bad) - 2
    url = await serve(whole_body(body))
    evs = await events(url, max_line_bytes=cap, max_attempts=1)
    assert [ev.type for ev in evs] == ["text", "text", "done"]
    assert evs[0].text == "H" + "\ufffd" * 200 + "l"  # type: ignore[union-attr]
    evs = await events(url, max_line_bytes=cap - 1, max_attempts=1)
    assert evs[-1].type == "error" and evs[-1].error.kind == "limit"


OPENAI_REJECTION = {
    "error": {
        "message": "Unrecognized request argument supplied: seed",
        "type": "invalid_request_error",
        "param": "seed",
        "code": None,
    }
}


async def test_a_200_whose_body_is_an_error_object_is_that_error(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.json_response(OPENAI_REJECTION, headers={"x-request-id": "req_json"})

    evs = await events(await serve(handler), ask(seed=1), max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "stream_error"
    assert error.message == "Unrecognized request argument supplied: seed"
    assert error.param == "seed" and error.code == "invalid_request_error"
    assert error.request_id == "req_json"
    assert error.raw is not None and json.loads(error.raw) == OPENAI_REJECTION


async def test_a_200_error_object_before_the_stream_is_degraded_like_an_error_event(
    serve: Serve,
) -> None:
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if len(bodies) == 1:
            return web.json_response(OPENAI_REJECTION)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(HELLO + FINISH + DONE)
        return response

    evs = await events(await serve(handler), ask(seed=1, user="u"))
    assert [ev.type for ev in evs] == ["retry", "text", "text", "done"]
    assert "seed" in bodies[0] and "seed" not in bodies[1] and bodies[1]["user"] == "u"


async def test_a_captive_portal_page_stays_a_protocol_error(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.Response(
            text="<html><body>Sign in to the Wi-Fi</body></html>", content_type="text/html"
        )

    evs = await events(await serve(handler), max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "protocol" and "Sign in to the Wi-Fi" in error.message


async def test_a_body_of_blank_keepalive_lines_is_a_stream_that_said_nothing(
    serve: Serve,
) -> None:
    # Blank lines are valid SSE that dispatch nothing (some servers' keepalive): the
    # stream ended before its terminal marker, not "not an SSE stream: ''".
    evs = await events(await serve(whole_body(b"\xef\xbb\xbf\n\n\r\n\r")), max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "truncated" and error.request_id == "req_cut"


@pytest.mark.parametrize(
    "body",
    [
        b"event: response.output_item.done\n\n",  # openai/codex's incomplete_sse fixture
        b"id: 7\n\nretry: 3000\n\n",
        b"event: ping\r\n\r\n",
    ],
)
async def test_a_body_of_field_lines_that_dispatch_nothing_is_cut_short(
    serve: Serve, body: bytes
) -> None:
    # `event:`, `id:` and `retry:` lines are SSE framing even when no `data` follows: the
    # stream was cut before its events, not "not an SSE stream".
    evs = await events(await serve(whole_body(body)), max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "truncated" and error.request_id == "req_cut"


@pytest.mark.parametrize("line", [b"hello: world\n\n", b"events: x\n\n"])
async def test_a_line_of_no_known_field_is_still_no_sse(serve: Serve, line: bytes) -> None:
    evs = await events(await serve(whole_body(line)), max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    assert error.kind == "protocol" and "not an SSE stream" in error.message


async def test_events_before_an_over_long_line_do_not_depend_on_the_chunking(
    serve: Serve,
) -> None:
    long_line = b"data: " + b"x" * 5000 + b"\n\n"
    cap = 4096

    def writes(*parts: bytes) -> Any:
        async def handler(request: web.Request) -> web.StreamResponse:
            await request.read()
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for part in parts:
                await response.write(part)
                await asyncio.sleep(0.05)  # one network read each
            return response

        return handler

    one_read = await events(
        await serve(writes(HELLO + long_line)), max_line_bytes=cap, max_attempts=1
    )
    two_reads = await events(
        await serve(writes(HELLO, long_line)), max_line_bytes=cap, max_attempts=1
    )
    assert [ev.type for ev in one_read] == ["text", "error"]
    assert one_read[-1].error.kind == "limit"  # type: ignore[union-attr]
    assert [ev.model_dump() for ev in one_read] == [ev.model_dump() for ev in two_reads]


async def test_a_rejection_whose_body_stalls_still_names_its_request_id(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        headers = {"Content-Type": "application/json", "x-request-id": "req_slow_400"}
        response = web.StreamResponse(status=400, headers=headers)
        response.content_length = 100
        await response.prepare(request)
        await response.write(b'{"error": {"message": "bad')
        await asyncio.sleep(2)  # bounded: the client hangs up long before
        return response

    evs = await events(await serve(handler), first_event_timeout=0.5, max_attempts=1)
    error = evs[-1].error  # type: ignore[union-attr]
    # The deadline cut off its body, not the rejection: its status stands.
    assert (error.kind, error.status, error.request_id) == ("rejected", 400, "req_slow_400")
    assert error.raw == '{"error": {"message": "bad'
