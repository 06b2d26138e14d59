"""rxllm.fallback probed over real loopback servers: a wait the provider names is not
waited out while a later provider can answer."""

from __future__ import annotations

import asyncio

from aiohttp import web

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from tests.support import Serve

RATE_LIMITED = {
    "error": {
        "message": "Rate limit reached for requests",
        "type": "requests",
        "code": "rate_limit_exceeded",
    }
}


def ask(model: str = "m") -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hello")])


class RateLimited:
    """A handler that answers every request `429` with `Retry-After: 30`, as OpenAI's
    rate limits do; it counts the requests, and notes a second one."""

    def __init__(self) -> None:
        self.requests = 0
        self.asked_again = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if self.requests > 1:
            self.asked_again.set()
        return web.json_response(RATE_LIMITED, status=429, headers={"Retry-After": "30"})


async def test_a_wait_the_provider_names_moves_on_to_the_next_provider(serve: Serve) -> None:
    # was: the first provider waited out its Retry-After twice (60 s) before the next
    # one, idle all along, was asked
    limited = RateLimited()
    first = rxllm.provider("local", base_url=await serve(limited.handle))
    events: list[Event] = []
    async with LocalServer(pace=0) as second_server:
        both = rxllm.fallback([first, second_server.provider("anthropic")])
        async with both.astream(ask()) as stream:
            async for event in stream:
                events.append(event)
                if event.type == "retry" and event.next_provider == "local":
                    break  # the old behaviour: a retry of the same provider after the wait
        assert len(second_server.requests) == 1
    [retry] = [e for e in events if isinstance(e, rxllm.Retry)]
    assert (retry.provider, retry.attempt) == ("local", 1)
    assert (retry.next_provider, retry.next_attempt, retry.delay) == ("anthropic", 2, 0.0)
    assert (retry.reason.status, retry.reason.retry_after) == (429, 30.0)
    assert events[-1].type == "done" and events[-1].provider == "anthropic"
    assert limited.requests == 1


async def test_the_record_shows_the_wait_named_and_the_provider_that_answered(
    serve: Serve,
) -> None:
    limited = RateLimited()
    first = rxllm.provider("local", base_url=await serve(limited.handle))
    async with LocalServer(pace=0) as second_server:
        both = rxllm.fallback([first, second_server.provider("anthropic")])
        # were it asked again (after its wait), the turn would end there, cancelled
        record = await both.complete(ask(), cancel=limited.asked_again)
    assert record.provider == "anthropic" and record.terminal.type == "done"
    assert [(a.number, a.provider, a.status) for a in record.attempts] == [
        (1, "local", 429),
        (2, "anthropic", None),
    ]


async def test_the_last_provider_still_waits_the_wait_it_names(
    local_server: LocalServer, serve: Serve
) -> None:
    limited = RateLimited()
    last = rxllm.provider("local", base_url=await serve(limited.handle))
    local_server.turns.append("bad_key")
    both = rxllm.fallback([local_server.provider("anthropic"), last])
    retries: list[rxllm.Retry] = []
    async with both.astream(ask()) as stream:
        async for event in stream:
            if isinstance(event, rxllm.Retry):
                retries.append(event)
                if event.next_provider == event.provider:
                    break  # the wait itself is not this test's to sit through
    switch, backoff = retries
    assert (switch.provider, switch.next_provider, switch.next_attempt) == ("anthropic", "local", 2)
    assert switch.reason.status == 401
    assert (backoff.attempt, backoff.next_attempt, backoff.delay) == (2, 3, 30.0)
    assert limited.requests == 1


async def test_a_computed_backoff_stays_with_the_provider(local_server: LocalServer) -> None:
    # a server error that names no wait is retried by its provider first, as documented
    local_server.turns.extend(["http_500", "http_500"])
    async with LocalServer(pace=0) as second_server:
        both = rxllm.fallback([local_server.provider(), second_server.provider("anthropic")])
        record = await both.complete(ask())
        assert second_server.requests == []
    assert [(a.number, a.provider, a.status) for a in record.attempts] == [
        (1, "local", 500),
        (2, "local", 500),
        (3, "local", None),
    ]
    assert record.terminal.type == "done"


async def test_a_provider_whose_deadline_expired_is_not_asked_again(
    serve: Serve, local_server: LocalServer
) -> None:
    # was: the stalled provider was retried (twice, after 1 s and 2 s) before the next
    # one was asked: with the default first_event_timeout, half an hour of silence
    asked = []
    finished = asyncio.Event()

    async def silent(request: web.Request) -> web.StreamResponse:
        asked.append(1)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await finished.wait()  # not a byte until the test is over
        return response

    url = await serve(silent)
    first = rxllm.provider(
        "custom", base_url=url, allow_private_network=True, first_event_timeout=0.3
    )
    both = rxllm.fallback([first, local_server.provider()])
    record = await asyncio.wait_for(both.complete(ask()), 10)
    assert [(a.number, a.provider) for a in record.attempts] == [(1, "custom"), (2, "local")]
    assert "first_event_timeout" in (record.attempts[0].error or "")
    assert record.terminal.type == "done" and len(asked) == 1
    finished.set()
    await first.aclose()
