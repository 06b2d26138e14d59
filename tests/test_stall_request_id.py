"""A stalled turn names the request id of the response it cut off, as an error inside
the body does: over real HTTP, a loopback server answers with a request id header, then
says nothing more (or nothing at all)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import reactivex
from aiohttp import web
from reactivex.testing import ReactiveTest, TestScheduler

import rxllm
from rxllm.events import Failed, StreamRecord
from rxllm.fragments import RawChunk, ResponseHeaders, SourceItem
from rxllm.operators import deadlines, normalize
from rxllm.pipeline.provider import record_of
from rxllm.providers.openai_chat import ChatNormalizer
from tests.support import Serve

REQUEST_ID = "req_stall_0123456789"
ON_HANG_UP = 5.0  # the longest a handler waits for the client to hang up


def ask() -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


def text_chunk(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return b"data: " + json.dumps({"model": "m", "choices": [choice]}).encode() + b"\n\n"


async def hung_up(request: web.Request) -> None:
    """Say nothing until the client closes the connection (bounded, so that the server
    always shuts down)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + ON_HANG_UP
    while request.transport is not None and not request.transport.is_closing():
        if loop.time() > end:
            return
        await asyncio.sleep(0.01)


Silent = Callable[..., Awaitable[str]]


@pytest.fixture
def silent(serve: Serve) -> Silent:
    """A server that answers `200 OK` with `header: REQUEST_ID` (after `frames`), then
    goes silent; with `answer=False` it never answers at all. Returns the base URL."""

    async def start(*frames: bytes, header: str = "x-request-id", answer: bool = True) -> str:
        async def handler(request: web.Request) -> web.StreamResponse:
            await request.read()
            if not answer:
                await hung_up(request)
                return web.Response(status=503)
            response = web.StreamResponse(
                headers={"Content-Type": "text/event-stream", header: REQUEST_ID}
            )
            await response.prepare(request)
            for frame in frames:
                await response.write(frame)
            await hung_up(request)
            return response

        return await serve(handler)

    return start


async def complete(url: str, *, wire: str = "custom", **options: Any) -> StreamRecord:
    # Only the deadline a test names is armed (the defaults are minutes).
    options = {"first_event_timeout": None, "idle_timeout": None, "max_attempts": 1, **options}
    p = rxllm.provider(wire, base_url=url, api_key="k", allow_private_network=True, **options)
    async with asyncio.timeout(5), p:
        return await p.complete(ask())


def stall_of(record: StreamRecord, deadline: str) -> rxllm.ErrorInfo:
    assert record.terminal.type == "error", record.terminal
    error = record.terminal.error
    assert error.kind == "stalled" and error.message.startswith(f"{deadline} expired"), error
    return error


async def test_an_idle_stall_names_the_request_id(silent: Silent) -> None:
    url = await silent(text_chunk("Hello"))
    record = await complete(url, idle_timeout=0.2)
    assert record.text == "Hello"
    assert stall_of(record, "idle_timeout").request_id == REQUEST_ID


async def test_a_first_event_stall_names_the_request_id(silent: Silent) -> None:
    url = await silent()
    record = await complete(url, first_event_timeout=0.2)
    assert stall_of(record, "first_event_timeout").request_id == REQUEST_ID


async def test_a_total_stall_names_the_request_id(silent: Silent) -> None:
    url = await silent(text_chunk("Hello"))
    record = await complete(url, total_timeout=0.3)
    assert record.text == "Hello"
    assert stall_of(record, "total_timeout").request_id == REQUEST_ID


async def test_a_total_stall_names_it_while_the_attempt_deadlines_are_armed(
    silent: Silent,
) -> None:
    url = await silent(text_chunk("Hello"))
    record = await complete(url, total_timeout=0.2, idle_timeout=60, first_event_timeout=60)
    assert stall_of(record, "total_timeout").request_id == REQUEST_ID


async def test_anthropic_s_request_id_header_is_named_too(silent: Silent) -> None:
    # Anthropic's header is `request-id`: read as an error in the body reads it.
    url = await silent(header="request-id")
    record = await complete(url, wire="anthropic", first_event_timeout=0.2)
    assert stall_of(record, "first_event_timeout").request_id == REQUEST_ID


@pytest.mark.parametrize("deadline", ["first_event_timeout", "total_timeout"])
async def test_a_stall_before_any_response_names_no_request_id(
    silent: Silent, deadline: str
) -> None:
    url = await silent(answer=False)
    armed: dict[str, Any] = {deadline: 0.2}
    record = await complete(url, **armed)
    assert stall_of(record, deadline).request_id is None


async def test_each_attempt_s_stall_names_its_own_response(serve: Serve) -> None:
    answered = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal answered
        answered += 1
        await request.read()
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "x-request-id": f"req_{answered}"}
        )
        await response.prepare(request)
        await hung_up(request)
        return response

    url = await serve(handler)
    record = await complete(url, first_event_timeout=0.2, max_attempts=2)
    retried = [a for a in record.attempts if a.error is not None]
    assert len(retried) == 2, record.attempts  # the stall before output was retried
    assert stall_of(record, "first_event_timeout").request_id == "req_2"


async def test_the_read_timeout_of_the_source_names_the_request_id(silent: Silent) -> None:
    # The HTTP source's own watchdog: its failure goes through the source's `_fail`,
    # which reads the id from the response it holds.
    url = await silent()
    record = await complete(url, read_timeout=0.2)
    assert stall_of(record, "read_timeout").request_id == REQUEST_ID


async def test_a_deadline_a_user_composes_on_the_turn_names_it_too(silent: Silent) -> None:
    # The mechanism is the hang-up, not the provider's own deadlines: one composed
    # downstream of the settled turn learns the response it cut off alike.
    url = await silent(text_chunk("Hello"))
    p = rxllm.provider(
        "custom", base_url=url, max_attempts=1, allow_private_network=True,
        first_event_timeout=None, idle_timeout=None,
    )  # fmt: skip
    async with asyncio.timeout(5), p:
        events = p.stream(ask()).pipe(deadlines(idle=0.2, provider="custom"))
        record = await record_of(events, "custom", "m")
    assert stall_of(record, "idle_timeout").request_id == REQUEST_ID


# -- the same, in virtual time: what the source says, what the deadline names ----------

on_next = ReactiveTest.on_next


def normalized(scheduler: TestScheduler, *messages: Any) -> reactivex.Observable[Any]:
    source: reactivex.Observable[SourceItem] = scheduler.create_cold_observable(*messages)
    return source.pipe(normalize(lambda emit: ChatNormalizer(emit, "p")))


def stalled_in(
    scheduler: TestScheduler, watched: reactivex.Observable[Any], **limits: Any
) -> Failed:
    results = scheduler.start(lambda: watched.pipe(deadlines(provider="p", **limits)))
    failure: Any = results.messages[-2].value
    assert isinstance(failure.value, Failed) and failure.value.error.kind == "stalled"
    return failure.value


def stalled_with(source_messages: list[Any], **limits: Any) -> Failed:
    scheduler = TestScheduler()
    return stalled_in(scheduler, normalized(scheduler, *source_messages), **limits)


def chunk(text: str) -> RawChunk:
    return RawChunk("p", 1, "message", text_chunk(text).decode()[6:].strip())


HEADERS = ResponseHeaders({"x-request-id": REQUEST_ID})


def test_the_headers_the_normalizer_kept_name_an_idle_stall() -> None:
    failure = stalled_with([on_next(5, HEADERS), on_next(10, chunk("a"))], idle=40)
    assert failure.error.request_id == REQUEST_ID


def test_a_stall_before_the_headers_names_none() -> None:
    failure = stalled_with([on_next(500, HEADERS)], first_event=50)
    assert failure.error.request_id is None


def test_a_hang_up_that_closes_two_responses_names_neither() -> None:
    scheduler = TestScheduler()
    other = ResponseHeaders({"x-request-id": "req_other"})
    both = reactivex.merge(
        normalized(scheduler, on_next(5, HEADERS), on_next(10, chunk("a"))),
        normalized(scheduler, on_next(5, other), on_next(10, chunk("b"))),
    )
    assert stalled_in(scheduler, both, idle=40).error.request_id is None


def test_the_headers_are_never_an_item_of_the_stream() -> None:
    scheduler = TestScheduler()
    source = normalized(scheduler, on_next(5, HEADERS), on_next(10, chunk("a")))
    results = scheduler.start(lambda: source)
    items: list[Any] = [message.value for message in results.messages]
    assert [type(item.value).__name__ for item in items] == ["TextDelta"]
