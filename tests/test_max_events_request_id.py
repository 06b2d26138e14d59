"""A turn ended by `max_events` names the request id of the response it cut off, as a
stall (`tests/test_stall_request_id.py`) and an error past the normalizer (6dcfc73) do:
`cap_events` hangs up as the deadlines do (`fragments.hang_up`), and learns the headers
of the response from the attempt's normalizer. Over real HTTP: a loopback server answers
with a request id header and more text deltas than the limit allows."""

from __future__ import annotations

import json

from aiohttp import web

import rxllm
from rxllm.events import Failed, Retry
from tests.support import Serve

LIMIT = 5


def _chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"id": "c", "model": "m", "choices": [choice]}).encode() + b"\n\n"


_LONG_TURN = (
    b"".join(_chunk({"content": f"word{i} "}) for i in range(4 * LIMIT))
    + _chunk({}, "stop")
    + b"data: [DONE]\n\n"
)


def _ask() -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("hi")], params={"temperature": 0.2}
    )


async def _turn(base_url: str) -> list[rxllm.Event]:
    async with rxllm.provider("vllm", base_url=base_url, max_events=LIMIT) as provider:
        return [event async for event in provider.astream(_ask())]


async def test_the_limit_names_the_request_id_of_the_response_it_cut_off(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "x-request-id": "req_cap_0123"}
        )
        await response.prepare(request)
        await response.write(_LONG_TURN)
        return response

    events = await _turn(await serve(handler))
    last = events[-1]
    assert isinstance(last, Failed) and last.error.kind == "limit", last
    assert last.error.request_id == "req_cap_0123"


async def test_after_a_retry_the_id_is_the_response_it_cut_off(serve: Serve) -> None:
    """The first attempt's rejection named its own id; the limit cuts off the second
    response, and names that one."""
    sent: list[dict[str, object]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        sent.append(await request.json())
        if len(sent) == 1:
            error = {
                "error": {
                    "message": "Unsupported parameter: 'temperature'",
                    "type": "invalid_request_error",
                    "param": "temperature",
                }
            }
            return web.json_response(error, status=400, headers={"x-request-id": "req_first"})
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "x-request-id": "req_second"}
        )
        await response.prepare(request)
        await response.write(_LONG_TURN)
        return response

    events = await _turn(await serve(handler))
    retries = [event for event in events if isinstance(event, Retry)]
    assert [r.reason.request_id for r in retries] == ["req_first"]
    last = events[-1]
    assert isinstance(last, Failed) and last.error.kind == "limit", last
    assert last.error.request_id == "req_second"


async def test_a_response_without_a_request_id_names_none(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_LONG_TURN)
        return response

    events = await _turn(await serve(handler))
    last = events[-1]
    assert isinstance(last, Failed) and last.error.kind == "limit", last
    assert last.error.request_id is None
