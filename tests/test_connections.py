"""Connections: a provider keeps one pooled session, so turns reuse a connection;
`aclose()` / `async with` close it; a session passed in is the caller's."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from reactivex.scheduler.eventloop import AsyncIOScheduler, AsyncIOThreadSafeScheduler

import rxllm
from rxllm.local import LocalServer
from rxllm.local.server import shared_server_url

ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


async def test_ten_turns_reuse_one_connection() -> None:
    # Paced, so `[DONE]` and the body's end come after the terminal event (at the
    # usage chunk): only a drained body gives its connection back.
    async with LocalServer(pace=0.002) as server:
        async with rxllm.provider("local", base_url=server.url) as p:
            for _ in range(10):
                rec = await p.complete(ASK)
                assert rec.terminal.type == "done"
                await asyncio.sleep(0.02)  # the drain reads the body's end
        assert len(server.requests) == 10
        assert len(server.connections) == 1


async def test_turns_subscribed_without_a_scheduler_reuse_one_connection() -> None:
    # `p.stream(req).subscribe(...)` from async code, no scheduler given: the drain runs
    # on the running loop, as `complete()`'s does on the scheduler it passes.
    async with LocalServer(pace=0.002) as server:
        async with rxllm.provider("local", base_url=server.url) as p:
            for _ in range(5):
                ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                p.stream(ASK).subscribe(
                    on_error=ended.set_exception,
                    on_completed=functools.partial(ended.set_result, None),
                )
                await ended
                await asyncio.sleep(0.02)  # the drain reads the body's end
        assert len(server.requests) == 5
        assert len(server.connections) == 1


async def test_turns_started_at_once_after_the_last_reuse_one_connection() -> None:
    """A caller that starts its next turn as soon as `complete()` returns: the server
    paces `[DONE]` and its body's end after the finish (10 ms each), and each turn's
    completion waits for that end (`DONE_HOLD_SECONDS`), so the connection is back in the
    pool. Before the hold, such turns opened a second connection."""
    async with LocalServer(pace=0.01) as server:
        async with rxllm.provider("local", base_url=server.url) as p:
            for _ in range(5):
                rec = await p.complete(ASK)
                assert rec.terminal.type == "done"
        assert len(server.requests) == 5
        assert len(server.connections) == 1


async def test_a_body_held_open_after_its_last_event_does_not_hold_the_done() -> None:
    """`[DONE]`, then a server that keeps the body open: the turn completes `done` at the
    end of the hold, while the body is still open, and the next turn, on a new
    connection (the first is still draining), alike. A cancel fired while the body is
    held open after the `done` cancels nothing: the turn was done (when the `done`
    itself waited for the body's end, such a cancel turned it into `cancelled`)."""
    ended = asyncio.Event()
    release = asyncio.Event()
    peers: list[Any] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_CHUNKS + b"data: [DONE]\n\n")
        await release.wait()
        ended.set()
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with rxllm.provider(
            "openai", api_key="k", base_url=f"http://127.0.0.1:{port}/v1"
        ) as p:
            rec = await p.complete(ASK)
            assert rec.terminal.type == "done" and rec.text == "hi"
            cancel = asyncio.Event()
            seen = []
            async for event in p.astream(ASK, cancel=cancel):
                seen.append(event.type)
                cancel.set()  # on the text: the `done` came in the same read, before it
            assert seen == ["text", "done"]
            assert not ended.is_set()  # both bodies are still open
            release.set()
        assert len(peers) == 2 and peers[0] != peers[1]
    finally:
        release.set()
        await runner.cleanup()


_CHUNKS = b"".join(
    b"data: " + json.dumps(chunk).encode() + b"\n\n"
    for chunk in (
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "hi"}}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )
)


async def test_a_retry_reuses_the_connection(local_server: LocalServer) -> None:
    async with rxllm.provider("local", base_url=local_server.url) as p:
        rejected = ASK.model_copy(
            update={"model": "fault/reject_param", "params": {"temperature": 1}}
        )
        rec = await p.complete(rejected)
    assert rec.terminal.type == "done" and len(rec.attempts) == 2
    assert len(local_server.connections) == 1


async def test_a_cancelled_turn_closes_its_connection_at_once(local_server: LocalServer) -> None:
    async with rxllm.provider("local", base_url=local_server.url) as p:
        async for _event in p.astream(ASK.model_copy(update={"model": "fault/hang"})):
            break
        await asyncio.wait_for(local_server.disconnected.wait(), timeout=2)
        rec = await p.complete(ASK)  # the next turn needs a new connection
    assert rec.terminal.type == "done" and len(local_server.connections) == 2


async def test_aclose_closes_the_pool_and_the_provider_stays_usable(
    local_server: LocalServer,
) -> None:
    p = rxllm.provider("local", base_url=local_server.url)
    await p.complete(ASK)
    await asyncio.sleep(0.01)
    await p.aclose()
    rec = await p.complete(ASK)
    assert rec.terminal.type == "done" and len(local_server.connections) == 2
    await p.aclose()


async def test_aclose_ends_the_turns_still_streaming_with_cancelled(
    local_server: LocalServer,
) -> None:
    """Closing a session does not wake a response waiting for bytes: the turn waited
    for read_timeout (up to twice 5 s here) and ended `stalled`."""
    p = rxllm.provider("local", base_url=local_server.url, read_timeout=5)
    async with p.astream(ASK.model_copy(update={"model": "fault/hang"})) as events:
        seen = [event async for event in _until_first(events)]
        closing = asyncio.ensure_future(p.aclose())
        rest = [event async for event in events]  # a hang: only the cut can end it
        await closing
    assert seen and [e.type for e in rest][-1:] == ["cancelled"]
    assert rest[-1].reason == "the provider was closed (aclose()) while the turn streamed"
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=2)
    assert (await p.complete(ASK)).terminal.type == "done"  # usable after, as documented
    await p.aclose()


async def _until_first(events: Any) -> Any:
    async for event in events:
        yield event
        return


async def test_a_session_passed_in_is_used_and_left_open(local_server: LocalServer) -> None:
    async with aiohttp.ClientSession() as session:
        async with rxllm.provider("local", base_url=local_server.url, session=session) as p:
            await p.complete(ASK)
        assert not session.closed
        async with session.get(local_server.root + "/nowhere") as response:
            assert response.status in (404, 405)


async def test_a_session_that_raises_for_status_still_gets_rejections_read(
    local_server: LocalServer,
) -> None:
    """`ClientSession(raise_for_status=True)` would raise on the 400 before its body is
    read: the rejection must still be read and the body degraded, as with any session."""
    rejected = ASK.model_copy(update={"model": "fault/reject_param", "params": {"temperature": 1}})
    async with aiohttp.ClientSession(raise_for_status=True) as session:
        p = rxllm.provider("local", base_url=local_server.url, session=session)
        rec = await p.complete(rejected)
    assert rec.terminal.type == "done"
    assert [(a.status, a.dropped) for a in rec.attempts] == [(400, []), (None, ["temperature"])]


@pytest.mark.parametrize("scheduler", [AsyncIOScheduler, AsyncIOThreadSafeScheduler])
def test_subscribing_from_another_thread_works(scheduler: type[AsyncIOScheduler]) -> None:
    """The client's loop runs, idle, in one thread; the subscription is made from this
    one (and the server runs in a third, so nothing else wakes the client's loop)."""
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    try:
        p = rxllm.provider("local", base_url=shared_server_url(pace=0))
        done = threading.Event()
        events: list[Any] = []
        errors: list[Exception] = []
        subscription = p.stream(ASK).subscribe(
            events.append,
            errors.append,
            done.set,
            scheduler=scheduler(loop),
        )
        assert done.wait(10), "the stream never completed"
        subscription.dispose()
        assert not errors and events[-1].type == "done"
        assert "".join(e.text for e in events if e.type == "text").startswith("Hello")
        asyncio.run_coroutine_threadsafe(p.aclose(), loop).result(5)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(5)
        loop.close()


async def test_the_pool_does_not_cap_concurrent_streams(local_server: LocalServer) -> None:
    """A stream holds its connection to its end: with aiohttp's default cap (100), the
    101st concurrent stream would wait for the pool until connect_timeout failed it."""
    async with rxllm.provider("local", base_url=local_server.url) as p:
        await p.complete(ASK)
        assert p._pool is not None
        connector = p._pool.session().connector
        assert connector is not None and connector.limit == 0


async def test_a_rejected_turn_gives_its_connection_back(local_server: LocalServer) -> None:
    """The error body is read to its end, so a 4xx does not cost a connection."""
    async with rxllm.provider("local", base_url=local_server.url) as p:
        for _ in range(3):
            rec = await p.complete(ASK.model_copy(update={"model": "fault/bad_key"}))
            assert rec.terminal.type == "error" and rec.terminal.error.status == 401
    assert len(local_server.connections) == 1


@pytest.fixture
def local_server_url() -> str:
    return shared_server_url(pace=0)


def test_a_provider_outlives_its_event_loops(local_server_url: str) -> None:
    """Two `asyncio.run` calls, then a third to close: each loop gets its own pooled
    session, the first closed with its loop; nothing hangs or names the wrong loop."""
    p = rxllm.provider("local", base_url=local_server_url)

    async def turn() -> str:
        rec = await asyncio.wait_for(p.complete(ASK), 10)
        return rec.terminal.type

    assert asyncio.run(turn()) == "done"
    assert asyncio.run(turn()) == "done"
    asyncio.run(p.aclose())
    assert p._pool is not None and not p._pool._entries


async def test_cancelling_while_waiting_for_the_answer_closes_the_connection() -> None:
    """A server that accepts and never answers: leaving the stream closes the socket
    at once (the server reads EOF) and the pool keeps nothing half-open."""
    eof = asyncio.Event()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            pass
        eof.set()
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with rxllm.provider(
            "openai", api_key="k", base_url=f"http://127.0.0.1:{port}/v1"
        ) as p:

            async def consume() -> None:
                async for _event in p.astream(ASK):
                    pass

            task = asyncio.create_task(consume())
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.wait_for(eof.wait(), timeout=2)
            assert p._pool is not None
            connector = p._pool.session().connector
            assert connector is not None
            assert not connector._acquired
    finally:
        server.close()
        await server.wait_closed()


def test_closing_on_another_loop_leaves_an_idle_loop_nothing_to_report(
    local_server_url: str,
) -> None:
    """A provider used on loop A and closed on loop B while A is idle (pytest-asyncio's
    module-scoped loop beside the `rxllm_scripted` fixture's): the close scheduled on A
    ran only at A's shutdown, beside the shutdown's own close of the same generator,
    and asyncio logged "aclose(): asynchronous generator is already running" (a review
    of the composable surface)."""
    p = rxllm.provider("local", base_url=local_server_url)
    loop_a = asyncio.new_event_loop()
    reported: list[dict[str, Any]] = []
    loop_a.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        record = loop_a.run_until_complete(asyncio.wait_for(p.complete(ASK), 10))
        assert record.terminal.type == "done"
        assert p._pool is not None
        session = p._pool._entries[loop_a].session
        asyncio.run(p.aclose())  # loop B
        assert session.closed and not p._pool._entries
        loop_a.run_until_complete(loop_a.shutdown_asyncgens())
    finally:
        loop_a.close()
    assert not reported, reported
