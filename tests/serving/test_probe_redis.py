"""Probes of the Redis log: cursors past the end, large and odd events, Redis restarting."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from reactivex.subject import Subject
from redis.exceptions import RedisError

from rxllm.events import Done, Event, TextDelta, ToolRequest
from rxllm.serving import RedisLog, UnknownStream
from rxllm.serving.event_json import dump_event, load_event
from rxllm.serving.redis_log import CursorGone, Entry
from tests.serving.redis_server import RedisServer, require_redis


def sid() -> str:
    return f"s-{uuid.uuid4().hex}"


@pytest.fixture
async def log(redis_url: str, prefix: str) -> AsyncIterator[RedisLog]:
    async with RedisLog(redis_url, prefix=prefix) as running:
        yield running


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def collect(entries: AsyncIterator[Entry]) -> list[Entry]:
    async with asyncio.timeout(20):
        return [entry async for entry in entries]


def kinds(entries: list[Entry]) -> list[str]:
    return [event.type for _, event in entries]


async def test_a_resume_past_the_end_of_a_finished_log_is_gone_not_an_empty_stream(
    log: RedisLog,
) -> None:
    """A cursor of this turn's `ms` past the terminal names no entry: resume ended at
    once with nothing, no terminal (history raised `CursorGone` for the same cursor)."""
    name = sid()
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    source.on_next(TextDelta.make(provider="p", text="one"))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    entries = await collect(live)
    start_ms = entries[0][0].split("-")[0]
    for cursor in (f"{start_ms}-{len(entries)}", f"{start_ms}-{2**64 - 1}"):
        with pytest.raises(CursorGone):
            await collect(log.resume(name, after=cursor))
    assert await collect(log.resume(name, after=entries[-1][0])) == []
    assert await collect(log.resume(name, after=entries[0][0])) == entries[1:]


async def test_a_resume_past_where_a_running_log_ends_is_gone_once_it_ends(
    log: RedisLog,
) -> None:
    """A cursor ahead of a running log is followed (the live response names entries
    before they are stored); if the turn ends before reaching it, the resumer ended
    with no terminal at all."""
    name = sid()
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    source.on_next(TextDelta.make(provider="p", text="one"))
    first = await anext(live)
    start_ms = first[0].split("-")[0]
    ahead = asyncio.create_task(collect(log.resume(name, after=f"{start_ms}-5")))
    reached = asyncio.create_task(collect(log.resume(name, after=f"{start_ms}-1")))
    await asyncio.sleep(0.05)
    source.on_next(TextDelta.make(provider="p", text="two"))
    source.on_next(TextDelta.make(provider="p", text="three"))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    rest = await collect(live)
    assert kinds(rest) == ["text", "text", "done"]
    with pytest.raises(CursorGone):
        await ahead
    assert await reached == rest[1:]  # a cursor the log reaches is followed as before


async def test_a_redis_restart_drops_the_log_and_the_live_response_goes_on(
    prefix: str,
) -> None:
    """Redis restarts empty mid-turn: the lease is gone with everything else, which is
    no other writer. The producer read it as a stolen lease and cancelled the live
    response (and the upstream)."""
    binary = require_redis()
    with RedisServer(binary) as server:
        async with RedisLog(server.url, prefix=prefix, lease_ms=1000) as log:
            name = sid()
            source: Subject[Event] = Subject()
            live = await log.start(name, source)
            source.on_next(TextDelta.make(provider="p", text="one"))
            assert (await anext(live))[1].type == "text"
            await asyncio.sleep(0.05)
            resumer = log.resume(name)
            assert (await anext(resumer))[1].type == "text"
            following = asyncio.create_task(collect(resumer))
            await asyncio.sleep(0.05)
            server.stop()
            again = RedisServer(binary)
            again.port, again.url = server.port, server.url
            with again:
                source.on_next(TextDelta.make(provider="p", text="two"))
                await asyncio.sleep(0.4)  # the heartbeat (every 0.3 s) sees it too
                source.on_next(TextDelta.make(provider="p", text="three"))
                source.on_next(Done.make(provider="p", stop_reason="stop"))
                assert kinds(await collect(live)) == ["text", "text", "done"]
                assert await log.state(name) is None  # the log was not written again
                with pytest.raises((UnknownStream, RedisError)):  # a clear end, no hang
                    await following


async def test_large_and_odd_events_round_trip_exactly(log: RedisLog) -> None:
    name = sid()
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    events: list[Event] = [
        TextDelta.make(provider="p", text="\x00\u2028\ufeff\U0001f600\ud83d"),
        ToolRequest(
            provider="p", call_id="c", name="f", index=0, arguments={"x": "é\u2028" * 2_500_000}
        ),
        Done.make(provider="p", stop_reason="stop"),
    ]
    for event in events:
        source.on_next(event)
    assert [e for _, e in await collect(live)] == events
    assert [e for _, e in await collect(log.resume(name))] == events
    for event in events:
        assert load_event(dump_event(event)) == event


async def test_a_cancel_stops_a_producer_whose_log_was_dropped(
    redis_url: str, prefix: str, raw: aioredis.Redis
) -> None:
    """Redis stalls writes past half the lease: the producer drops its log and streams
    on, its lease expires. A cancel from another process then ended the log as
    `cancelled` and returned True, but was never published (no lease): the producer
    went on to `done`, its upstream never stopped."""
    async with (
        RedisLog(redis_url, prefix=prefix, lease_ms=200) as log,
        RedisLog(redis_url, prefix=prefix) as other,
    ):
        name = sid()
        source: Subject[Event] = Subject()
        live = await log.start(name, source)
        source.on_next(TextDelta.make(provider="p", text="one"))
        await anext(live)
        await asyncio.sleep(0.1)
        await raw.execute_command("CLIENT", "PAUSE", "300", "WRITE")
        source.on_next(TextDelta.make(provider="p", text="two"))
        assert (await anext(live))[1].type == "text"
        async with asyncio.timeout(5):
            while await raw.exists(log.keys(name)[2]):  # the lease expires
                await asyncio.sleep(0.05)
        assert await other.cancel(name, reason="user") is True
        rest = await collect(live)
        assert kinds(rest) == ["cancelled"] and rest[0][1].reason == "user"  # type: ignore[union-attr]
        assert kinds(await collect(other.resume(name)))[-1] == "cancelled"
        assert await other.state(name) == "cancelled"


async def test_a_running_ttl_shorter_than_the_lease_is_refused(redis_url: str) -> None:
    """The heartbeat refreshes the running keys every 0.3 lease: with `ttl_s=1` and a
    5 s lease, a turn quiet for 1.3 s left Redis while running (`state` None, resumers
    `UnknownStream`, the log dropped)."""
    with pytest.raises(ValueError, match="ttl_s"):
        RedisLog(redis_url, ttl_s=1, lease_ms=5000)
    async with RedisLog(redis_url, ttl_s=1, lease_ms=1000):
        pass
