"""Probes of the pipeline above the wires, over real HTTP (the local provider on
loopback): each is a defect found and fixed, kept so that it stays fixed."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import reactivex
from aiohttp import web
from reactivex.scheduler.eventloop import AsyncIOScheduler
from reactivex.subject import Subject

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from rxllm.serving import RedisLog, ui_message_stream
from tests.serving.redis_server import RedisServer, require_redis
from tests.support import Serve

TERMINALS = ("done", "error", "cancelled")


class Recorder:
    """Every notification, in order: events by type, then `completed` or the error."""

    def __init__(self, on_event: Any = None) -> None:
        self.seen: list[str] = []
        self.ended = asyncio.Event()
        self._on_event = on_event

    def on_next(self, event: Event) -> None:
        self.seen.append(event.type)
        if self._on_event is not None:
            self._on_event(event)

    def on_error(self, error: Exception) -> None:
        self.seen.append(f"on_error: {error!r}")
        self.ended.set()

    def on_completed(self) -> None:
        self.seen.append("completed")
        self.ended.set()


def ask(model: str = "answer") -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")])


async def test_a_cancel_signal_fired_on_the_terminal_event_adds_no_second_terminal(
    local_server: LocalServer,
) -> None:
    """An app that fires its cancel `Subject` when it sees `done` (a stop button reset
    at the end of each turn) must not get `cancelled` after `done`: exactly one
    terminal event, then on_completed (DESIGN: Events)."""
    provider = local_server.provider("openai")
    for turn in (provider, rxllm.fallback([provider])):
        seen = await _stopped_at_the_end(turn)
        assert [s for s in seen if s in TERMINALS] == ["done"]
        assert seen[-2:] == ["done", "completed"]


async def _stopped_at_the_end(turn: rxllm.Provider | rxllm.Fallback) -> list[str]:
    """What an observer sees that fires the turn's cancel signal on the terminal."""
    signal: Subject[bool] = Subject()

    def stop_on_terminal(event: Event) -> None:
        if event.type in TERMINALS:
            signal.on_next(True)

    recorder = Recorder(stop_on_terminal)
    loop = asyncio.get_running_loop()
    turn.stream(ask(), cancel=signal).subscribe(
        recorder.on_next, recorder.on_error, recorder.on_completed, scheduler=AsyncIOScheduler(loop)
    )
    await asyncio.wait_for(recorder.ended.wait(), 5)
    await asyncio.sleep(0.05)  # anything late would show now
    return recorder.seen


async def test_a_reasoning_items_details_ride_on_its_ui_block_end(
    local_server: LocalServer,
) -> None:
    """A Responses reasoning item's own fields (its `id` above all, which the API takes
    the item back by) are `details` on the delta that ends the block; the UI message
    stream keeps them beside the signature, so a conversation rebuilt from the UI
    messages can send the item back as the record's `reasoning_parts` would. Nothing a
    provider says is silently dropped (DESIGN: Rules from the field)."""
    provider = local_server.provider("openai-responses")
    request = rxllm.ChatRequest(
        model="answer",
        messages=[rxllm.Message.user("hi")],
        params={"include": ["reasoning.encrypted_content"]},
    )
    record = await provider.complete(request)
    (part,) = record.reasoning_parts
    assert part.details is not None and part.details["id"]
    body = b"".join([chunk async for chunk in ui_message_stream(provider.stream(request))])
    parts = [json.loads(frame[6:]) for frame in body.split(b"\n\n") if frame[6:7] == b"{"]
    (end,) = [p for p in parts if p["type"] == "reasoning-end"]
    expected = {"signature": part.signature, "details": part.details}
    assert end["providerMetadata"]["rxllm"] == expected


async def test_a_log_cancel_during_a_backoff_names_the_attempt_it_cut(serve: Serve) -> None:
    """Cancelled through the Redis log while a retry waits out its backoff, the turn
    ends naming the attempt the `retry` event announced, as `cancel=` does
    (`operators.cancel_on`): the rejected attempt was already closed by the retry, and
    a record folded from the log would otherwise end it twice and leave the cut one
    open."""
    binary = require_redis()

    async def overloaded(request: web.Request) -> web.Response:
        error = {"error": {"message": "overloaded", "type": "server_error"}}
        return web.json_response(error, status=503, headers={"Retry-After": "1"})

    url = await serve(overloaded)
    provider = rxllm.provider("custom", base_url=url, api_key="k", ssrf_guard=False)
    loop = asyncio.get_running_loop()
    cancel = asyncio.Event()
    loop.call_later(0.3, cancel.set)
    with RedisServer(binary) as server:
        async with RedisLog(server.url, prefix=f"probe{uuid.uuid4().hex[:8]}") as log:
            live = await log.start("turn", provider.stream(ask()))
            await asyncio.wait_for(cancel.wait(), 3)
            await log.cancel("turn", "user stop")
            from_log = [event async for _, event in live]
            stored = [event async for _, event in log.resume("turn")]
    direct = [event async for event in provider.astream(ask(), cancel=_after(0.3))]
    expected = [("retry", 1), ("cancelled", 2)]
    assert [(e.type, e.attempt) for e in direct] == expected
    assert [(e.type, e.attempt) for e in from_log] == expected
    assert [(e.type, e.attempt) for e in stored] == expected


def _after(seconds: float) -> asyncio.Event:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, event.set)
    return event


async def _empty_event_stream(request: web.Request) -> web.StreamResponse:
    """`200 OK`, a keepalive, and a clean end: no output, no terminal marker."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(b": keepalive\n\n")
    return response


async def test_a_body_ending_before_any_output_falls_back(
    serve: Serve, local_server: LocalServer
) -> None:
    """A body that ends cleanly with nothing said and no terminal marker is truncated
    before anything was committed: the fallback moves on to the next provider, as it
    does after a connection reset there (DESIGN: "next provider only while nothing is
    committed"), instead of ending the turn with the first provider's error."""
    url = await serve(_empty_event_stream)
    empty = rxllm.provider("custom", base_url=url, api_key="k", ssrf_guard=False, max_attempts=1)
    record = await rxllm.fallback([empty, local_server.provider("anthropic")]).complete(ask())
    assert record.terminal.type == "done" and record.provider == "anthropic"
    assert record.text.startswith("Hello from rxllm")
    assert [(a.number, a.provider, a.committed) for a in record.attempts] == [
        (1, "custom", False),
        (2, "anthropic", True),
    ]
    assert record.attempts[0].error == "the stream from custom ended without its terminal marker"


async def test_a_truncated_retry_names_its_own_attempt(serve: Serve) -> None:
    """After a retry, a body that ends without its terminal marker is that attempt's
    error (attempt 2), not the rejected attempt's, which the `retry` already closed."""
    calls = 0

    async def overloaded_then_empty(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls == 1:
            error = {"error": {"message": "overloaded", "type": "server_error"}}
            return web.json_response(error, status=503, headers={"Retry-After": "0.01"})
        return await _empty_event_stream(request)

    url = await serve(overloaded_then_empty)
    provider = rxllm.provider("custom", base_url=url, api_key="k", ssrf_guard=False, max_attempts=2)
    events = [event async for event in provider.astream(ask())]
    assert [(e.type, e.attempt) for e in events] == [("retry", 1), ("error", 2)]
    last = events[-1]
    assert isinstance(last, rxllm.Failed)
    assert last.error.kind == "truncated" and last.error.retryable


async def test_a_log_whose_upstream_ends_early_names_the_attempt_it_was_on() -> None:
    """An upstream that stops without a terminal event (an Observable of the user's
    making) ends the log's turn naming the attempt that was running, not attempt 1."""
    binary = require_redis()
    reason = rxllm.ErrorInfo(kind="http", message="HTTP 503", provider="p", retryable=True)
    retry = rxllm.Retry(provider="p", attempt=1, reason=reason, next_attempt=2, next_provider="q")
    text = rxllm.TextDelta(provider="q", attempt=2, text="Hel")
    for upstream in (reactivex.of(retry), reactivex.of(retry, text)):
        with RedisServer(binary) as server:
            async with RedisLog(server.url, prefix=f"probe{uuid.uuid4().hex[:8]}") as log:
                live = await log.start("turn", upstream)
                events = [event async for _, event in live]
        last = events[-1]
        assert isinstance(last, rxllm.Failed) and last.error.kind == "truncated"
        assert (last.provider, last.attempt) == ("q", 2)
