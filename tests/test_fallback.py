"""rxllm.fallback over real loopback servers: the next provider only while nothing is
committed, one turn across providers (attempt numbers, deadlines, cancellation, the
record), each provider asked in its own wire and for its own model."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from reactivex.scheduler.eventloop import AsyncIOScheduler

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from tests.support import Serve

KEY = "sk-fallback-test-0123456789abcdefghij"


def ask(model: str = "m", **fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hello")], **fields)


def one_terminal(events: list[Event]) -> Event:
    terminals = [e for e in events if e.type in ("done", "error", "cancelled")]
    assert len(terminals) == 1 and terminals[0] is events[-1], [e.type for e in events]
    return terminals[0]


def dead_url() -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


class Silent:
    """A handler that answers `200 OK` and then only keepalive comments: no output,
    ever. It notes each request and the client hanging up."""

    def __init__(self) -> None:
        self.requests = 0
        self.arrived = asyncio.Event()
        self.hung_up = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        self.arrived.set()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            while True:
                await response.write(b": keepalive\n\n")
                await asyncio.sleep(0.02)
        except ConnectionResetError:
            self.hung_up.set()
        except asyncio.CancelledError:
            self.hung_up.set()
            raise
        return response


async def collect(events: Any) -> list[Event]:
    async with events as stream:
        return [e async for e in stream]


# -- each failure before commitment moves on ----------------------------------------------

FirstProvider = Callable[[LocalServer, str], rxllm.Provider]


def _rejecting(fault: str, **options: Any) -> FirstProvider:
    def make(server: LocalServer, silent_url: str) -> rxllm.Provider:
        server.turns.extend([fault] * 5)
        return server.provider("openai", **options)

    return make


FAILURES: dict[str, tuple[FirstProvider, str, int | None, int]] = {
    # name: (the first provider, the error's kind and status, the attempts it made)
    "http_500_after_its_own_retry": (_rejecting("http_500", max_attempts=2), "http", 500, 2),
    "context_length": (_rejecting("context_length"), "rejected", 400, 1),
    "bad_key_401": (_rejecting("bad_key"), "rejected", 401, 1),
    # an error event after 200 with nothing committed
    "error_after_200": (_rejecting("error_after_200", max_attempts=1), "stream_error", None, 1),
    "connect_failure": (
        lambda server, _: rxllm.provider("local", base_url=dead_url(), max_attempts=1),
        "transport",
        None,
        1,
    ),
    "first_event_stall": (
        lambda server, url: rxllm.provider(
            "local", base_url=url, first_event_timeout=0.2, max_attempts=1
        ),
        "stalled",
        None,
        1,
    ),
    "ssrf_refusal": (
        lambda server, _: rxllm.provider("custom", api_key=KEY, base_url=server.url),
        "policy",
        None,
        1,
    ),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
async def test_each_failure_before_commitment_moves_to_the_next_provider(
    failure: str, serve: Serve
) -> None:
    make, kind, status, tries = FAILURES[failure]
    silent = Silent()
    silent_url = await serve(silent.handle)
    async with LocalServer(pace=0) as first_server, LocalServer(pace=0) as second_server:
        first = make(first_server, silent_url)
        second = second_server.provider("anthropic")  # another wire: its own body
        events = await collect(rxllm.fallback([first, second]).astream(ask(top_p=0.5)))
        retries = [e for e in events if isinstance(e, rxllm.Retry)]
        assert [(r.attempt, r.next_attempt) for r in retries] == [
            (n, n + 1) for n in range(1, tries + 1)
        ]
        switch = retries[-1]
        assert (switch.provider, switch.next_provider) == (first.name, "anthropic")
        assert (switch.reason.kind, switch.reason.status) == (kind, status)
        assert switch.reason.provider == first.name
        after = events[events.index(switch) + 1 :]
        assert {(e.provider, e.attempt) for e in after} == {("anthropic", tries + 1)}
        assert one_terminal(events).type == "done"
        assert "".join(e.text for e in events if isinstance(e, rxllm.TextDelta))
        [body] = second_server.requests
        assert "max_tokens" in body and "stream_options" not in body  # Anthropic's body


async def test_failure_after_commitment_surfaces_without_falling_back(
    local_server: LocalServer,
) -> None:
    async with LocalServer(pace=0) as second_server:
        local_server.turns.append("reset_after_output")
        both = rxllm.fallback([local_server.provider(), second_server.provider("anthropic")])
        events = await collect(both.astream(ask()))
        error = one_terminal(events)
        assert isinstance(error, rxllm.Failed) and (error.provider, error.attempt) == ("local", 1)
        assert not any(e.type == "retry" for e in events)
        assert second_server.requests == []
        assert any(e.type in ("text", "reasoning") for e in events)  # committed output
        assert {e.provider for e in events} == {"local"}


async def test_the_record_across_providers_names_who_produced_what(
    local_server: LocalServer,
) -> None:
    async with LocalServer(pace=0) as second_server:
        local_server.turns.extend(["reject_param", "bad_key"])
        first = local_server.provider("openai", max_attempts=2)
        both = rxllm.fallback([first, second_server.provider("anthropic")])
        record = await both.complete(ask(temperature=0.2))
    assert record.provider == "anthropic" and record.terminal.provider == "anthropic"
    assert (record.requested_model, record.model) == ("m", "m")
    assert [(a.number, a.provider, a.status, a.committed) for a in record.attempts] == [
        (1, "local", 400, False),
        (2, "local", 401, False),
        (3, "anthropic", None, True),
    ]
    assert record.attempts[1].dropped == ["temperature"]
    assert record.usage is not None and record.text
    assert len(local_server.requests) == 2  # max_attempts is each provider's own


def usage_then_error(*, same_chunk: bool) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A 200 stream that says what the prompt cost and then rejects the request: the usage
    in the error's own chunk, or in a usage-only chunk before it."""
    usage = b'"usage":{"prompt_tokens":10,"completion_tokens":0,"total_tokens":10}'
    error = b'"error":{"message":"Input validation error: `top_p` must be < 1.0"}'
    if same_chunk:
        body = b"data: {" + error + b"," + usage + b"}\n\n"
    else:
        body = (
            b'data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[],'
            + usage
            + b"}\n\ndata: {"
            + error
            + b"}\n\n"
        )

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body)
        await response.write_eof()
        return response

    return handler


async def test_the_usage_a_rejection_carries_is_dropped_and_the_next_providers_reported(
    serve: Serve,
) -> None:
    handler = usage_then_error(same_chunk=True)
    first = rxllm.provider("local", base_url=await serve(handler), max_attempts=1)
    async with LocalServer(pace=0) as second_server:
        both = rxllm.fallback([first, second_server.provider("anthropic")])
        events = await collect(both.astream(ask()))
    usage = [e for e in events if isinstance(e, rxllm.UsageUpdate)]
    assert [(u.provider, u.attempt) for u in usage] == [("anthropic", 2)]
    assert usage[0].usage.input_tokens != 10
    assert events[0].type == "retry" and one_terminal(events).type == "done"


async def test_usage_in_a_chunk_of_its_own_commits_the_attempt(serve: Serve) -> None:
    """DESIGN, Commitment: usage commits an attempt. Once it has reached the consumer, the
    rejection that follows surfaces: no fallback behind the consumer's back."""
    handler = usage_then_error(same_chunk=False)
    first = rxllm.provider("local", base_url=await serve(handler), max_attempts=1)
    async with LocalServer(pace=0) as second_server:
        both = rxllm.fallback([first, second_server.provider("anthropic")])
        events = await collect(both.astream(ask()))
        assert second_server.requests == []
    assert [e.type for e in events] == ["usage", "error"]
    assert {(e.provider, e.attempt) for e in events} == {("local", 1)}


# -- each provider asked for its own model ------------------------------------------------


async def test_each_provider_may_be_asked_for_its_own_model(local_server: LocalServer) -> None:
    # was a TypeError: every provider got the request's one model name, so a fallback
    # from one vendor to another asked the second for the first one's model
    first = local_server.provider("openai")
    second = local_server.provider("anthropic")
    both = rxllm.fallback([(first, "fault/bad_key"), (second, "claude-local")])
    record = await both.complete(ask("gpt-local"))
    assert [body["model"] for body in local_server.requests] == ["fault/bad_key", "claude-local"]
    assert record.provider == "anthropic"
    assert (record.requested_model, record.model) == ("claude-local", "claude-local")
    local_server.turns.append("bad_key")
    events = await collect(rxllm.fallback([first, (second, "claude-local")]).astream(ask()))
    assert one_terminal(events).type == "done"
    assert local_server.requests[-1]["model"] == "claude-local"
    assert local_server.requests[-2]["model"] == "m"  # a bare provider: the request's


def test_a_provider_model_pair_is_checked_at_the_call() -> None:
    p = rxllm.provider("local", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError, match=r"put the \(provider, model\) pair in one"):
        rxllm.fallback((p, "m"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="with the model's name, got int 3"):
        rxllm.fallback([(p, 3)])  # type: ignore[list-item]
    with pytest.raises(rxllm.ConfigError, match="is empty"):
        rxllm.fallback([(p, " ")])
    with pytest.raises(TypeError, match=r"or \(provider, model\) pairs, got str"):
        rxllm.fallback(["openai"])  # type: ignore[list-item]
    assert rxllm.fallback([p, (p, "x")]).models == [None, "x"]


# -- a request one wire cannot express ----------------------------------------------------


async def test_a_provider_that_cannot_express_the_request_is_skipped_at_the_call(
    local_server: LocalServer,
) -> None:
    async with LocalServer(pace=0) as anthropic_server:
        anthropic = anthropic_server.provider("anthropic")  # has no seed parameter
        both = rxllm.fallback([anthropic, local_server.provider()])
        record = await both.complete(ask(seed=3))
        assert record.provider == "local" and record.terminal.type == "done"
        assert [(a.number, a.provider) for a in record.attempts] == [(1, "local")]
        assert anthropic_server.requests == [] and local_server.requests[0]["seed"] == 3
        with pytest.raises(rxllm.ConfigError, match=r"no provider can express.*anthropic.*seed"):
            rxllm.fallback([anthropic, anthropic]).stream(ask(seed=3))


# -- the whole turn's deadline --------------------------------------------------------------


async def test_a_later_providers_total_timeout_counts_from_the_turn_start(serve: Serve) -> None:
    # was: the second provider got a fresh total_timeout, so the turn took twice it,
    # and its expiry named attempt 1 (an attempt of the first provider's number)
    silent = Silent()
    url = await serve(silent.handle)
    async with LocalServer(pace=0) as second_server:
        first = rxllm.provider("local", base_url=url, total_timeout=0.3, max_attempts=1)
        second = second_server.provider("anthropic", total_timeout=0.3)
        record = await rxllm.fallback([first, second]).complete(ask())
    assert second_server.requests == []  # its 0.3 s had passed when the first gave up
    error = record.terminal
    assert isinstance(error, rxllm.Failed) and (error.provider, error.attempt) == ("local", 1)
    assert error.error.message == "total_timeout expired: the turn took more than 0.3 s"
    assert [(a.number, a.provider) for a in record.attempts] == [(1, "local")]


async def test_a_later_provider_gets_what_is_left_of_its_total_timeout(serve: Serve) -> None:
    stalls, hangs = Silent(), Silent()
    first = rxllm.provider(
        "local", base_url=await serve(stalls.handle), first_event_timeout=0.2, max_attempts=1
    )
    second = rxllm.provider(
        "anthropic",
        api_key=KEY,
        base_url=await serve(hangs.handle),
        total_timeout=0.6,
        max_attempts=1,
    )
    async with LocalServer(pace=0) as third_server:
        third = third_server.provider("openai")
        record = await rxllm.fallback([first, second, third]).complete(ask())
    assert record.provider == "local" and record.terminal.type == "done"
    assert [(a.number, a.provider, a.committed) for a in record.attempts] == [
        (1, "local", False),
        (2, "anthropic", False),
        (3, "local", True),
    ]
    assert record.attempts[1].error == "total_timeout expired: the turn took more than 0.6 s"
    assert third_server.requests[0]["model"] == "m"
    await asyncio.wait_for(hangs.hung_up.wait(), 5)


# -- cancellation --------------------------------------------------------------------------


async def test_a_cancel_during_the_next_providers_request_names_it_and_hangs_up(
    local_server: LocalServer, serve: Serve
) -> None:
    # was: `cancelled` named the provider that had failed (attempt 1), and the record
    # said it produced the turn, its duration stretched over the second's time
    silent = Silent()
    second = rxllm.provider("anthropic", api_key=KEY, base_url=await serve(silent.handle))
    local_server.turns.extend(["bad_key", "bad_key"])
    both = rxllm.fallback([local_server.provider(), second])
    stop = asyncio.Event()

    async def cancel_once_asked() -> None:
        await silent.arrived.wait()
        stop.set()

    for run in ("astream", "complete"):
        silent.arrived.clear()
        silent.hung_up.clear()
        stop.clear()
        canceller = asyncio.ensure_future(cancel_once_asked())
        if run == "astream":
            events = await collect(both.astream(ask(), cancel=stop))
            cancelled = one_terminal(events)
            assert [e.type for e in events] == ["retry", "cancelled"]
        else:
            record = await both.complete(ask(), cancel=stop)
            cancelled = record.terminal
            assert record.provider == "anthropic"
            assert [(a.number, a.provider, a.status) for a in record.attempts] == [
                (1, "local", 401),
                (2, "anthropic", None),
            ]
        await canceller
        assert isinstance(cancelled, rxllm.Cancelled)
        assert (cancelled.provider, cancelled.attempt) == ("anthropic", 2)
        await asyncio.wait_for(silent.hung_up.wait(), 5)


async def test_a_cancel_during_a_backoff_wait_ends_the_announced_attempt(
    local_server: LocalServer,
) -> None:
    # was: the announced attempt, which starts after the wait, had a negative duration
    local_server.turns.extend(["http_500"] * 2)
    async with LocalServer(pace=0) as second_server:
        both = rxllm.fallback([local_server.provider(), second_server.provider("anthropic")])
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, stop.set)  # within the 0.5 s backoff
        record = await both.complete(ask(), cancel=stop)
    assert all(a.duration >= 0 for a in record.attempts), record.attempts
    assert record.terminal.type == "cancelled"
    assert (record.terminal.provider, record.terminal.attempt) == ("local", 2)
    assert [(a.number, a.status) for a in record.attempts] == [(1, 500), (2, None)]
    assert len(local_server.requests) == 1 and second_server.requests == []


@pytest.mark.parametrize("how", ["break", "task_cancel"])
async def test_leaving_during_the_next_provider_hangs_up(how: str) -> None:
    first = rxllm.provider("local", base_url=dead_url(), max_attempts=1)
    seen: list[Event] = []
    spoke = asyncio.Event()
    async with LocalServer(pace=0.05) as second_server:
        both = rxllm.fallback([first, second_server.provider("anthropic")])

        async def consume() -> None:
            async with both.astream(ask()) as events:
                async for event in events:
                    seen.append(event)
                    if event.type == "text":
                        spoke.set()
                        if how == "break":
                            break

        task = asyncio.ensure_future(consume())
        if how == "task_cancel":
            await spoke.wait()
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.wait_for(second_server.disconnected.wait(), 5)
    assert seen[0].type == "retry" and {e.provider for e in seen[1:]} == {"anthropic"}
    assert not any(e.type in ("done", "error") for e in seen)


# -- the three ways to consume --------------------------------------------------------------


async def test_stream_subscribe_falls_back_and_completes_once(local_server: LocalServer) -> None:
    async with LocalServer(pace=0) as second_server:
        local_server.turns.append("quota")
        both = rxllm.fallback([local_server.provider(), second_server.provider("google")])
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        events: list[Event] = []
        both.stream(ask()).subscribe(
            events.append,
            finished.set_exception,
            lambda: finished.set_result(None),
            scheduler=AsyncIOScheduler(loop),
        )
        await asyncio.wait_for(finished, 5)
    assert one_terminal(events).type == "done"
    assert [e.provider for e in events][:2] == ["local", "google"]
    assert {"contents"} <= second_server.requests[0].keys()  # Gemini's body


# -- telemetry ------------------------------------------------------------------------------


async def test_the_span_of_a_turn_cancelled_during_the_next_provider_names_it(
    local_server: LocalServer, serve: Serve
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from tests.test_telemetry import EXPORTER, events_named, the_span

    EXPORTER.clear()
    silent = Silent()
    second = rxllm.provider("anthropic", api_key=KEY, base_url=await serve(silent.handle))
    local_server.turns.append("bad_key")
    first = local_server.provider("openai", telemetry=True)
    stop = asyncio.Event()
    canceller = asyncio.ensure_future(silent.arrived.wait())
    canceller.add_done_callback(lambda _: stop.set())
    await rxllm.fallback([first, second]).complete(ask(), cancel=stop)
    span = the_span()
    EXPORTER.clear()
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["rxllm.outcome"] == "cancelled"
    rejected, cut = events_named(span, "rxllm.attempt")
    assert (rejected["rxllm.attempt.provider"], rejected["rxllm.attempt.number"]) == ("local", 1)
    assert (cut["rxllm.attempt.provider"], cut["rxllm.attempt.number"]) == ("anthropic", 2)
