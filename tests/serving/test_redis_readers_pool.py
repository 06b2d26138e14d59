"""Readers never starve the producer of Redis connections. A follower holds a connection
while its `XREAD BLOCK` waits; when followers shared one pool with the producer, those
beyond the pool took every connection the producer writes and renews its lease with:
its log was dropped, its lease expired, and a turn whose live response got `done` read
back as `error(kind="stalled")` for every resumer (review 7, finding 1)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from reactivex.subject import Subject

from rxllm.events import Done, Event, TextDelta
from rxllm.serving import RedisLog
from tests.serving.test_redis_log import collect, sid


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.mark.parametrize("max_connections", [3, 8])
async def test_more_followers_than_the_pool_holds_never_starve_the_producer(
    redis_url: str, prefix: str, raw: aioredis.Redis, max_connections: int
) -> None:
    """Twice as many followers as connections follow a turn while it streams: the turn
    ends `done` in Redis, every follower gets every entry, and the log never opens
    more than `max_connections` (the cancel listener's included)."""
    before = len(await raw.client_list())
    async with RedisLog(
        redis_url, prefix=prefix, lease_ms=2_000, max_connections=max_connections
    ) as log:
        name = sid()
        source: Subject[Event] = Subject()
        live = await log.start(name, source)
        source.on_next(TextDelta.make(provider="p", text="0"))
        followers = [
            asyncio.create_task(collect(log.resume(name))) for _ in range(2 * max_connections)
        ]
        for n in range(1, 11):  # a turn that takes a while, as the followers block
            await asyncio.sleep(0.1)
            source.on_next(TextDelta.make(provider="p", text=str(n)))
        source.on_next(Done.make(provider="p", stop_reason="stop"))
        sent = await collect(live)
        got = await asyncio.gather(*followers)
        assert await log.state(name) == "done"
        assert all(entries == sent for entries in got)
        assert [event.type for _, event in sent] == ["text"] * 11 + ["done"]
        assert len(await raw.client_list()) - before <= max_connections


@pytest.mark.parametrize("max_connections", [3, 8])
async def test_followers_of_a_quiet_stream_leave_the_readers_waiting_their_turn(
    redis_url: str, prefix: str, max_connections: int
) -> None:
    """Followers of a quiet stream hold every reader's connection, each `XREAD BLOCK`
    timing out and starting again at once: the readers beyond them still get theirs in
    turn (redis-py's pool gave a freed connection to whoever asked first, so these
    waited as long as the stream stayed quiet)."""
    async with RedisLog(
        redis_url, prefix=prefix, lease_ms=2_000, max_connections=max_connections
    ) as log:
        name = sid()
        source: Subject[Event] = Subject()
        await log.start(name, source)
        source.on_next(TextDelta.make(provider="p", text="0"))
        following: asyncio.Queue[None] = asyncio.Queue()

        async def follow() -> list[str]:
            entries = log.resume(name)
            first = await anext(entries)
            following.put_nowait(None)
            return [event.type for _, event in [first, *await collect(entries)]]

        followers = [asyncio.create_task(follow()) for _ in range(2 * max_connections)]
        async with asyncio.timeout(10):  # a guard: it hung before
            for _ in followers:
                await following.get()
        source.on_next(Done.make(provider="p", stop_reason="stop"))
        assert await asyncio.gather(*followers) == [["text", "done"]] * len(followers)
        assert await log.state(name) == "done"


async def test_a_pool_too_small_for_a_writer_a_reader_and_the_listener_is_refused(
    redis_url: str,
) -> None:
    with pytest.raises(ValueError, match="max_connections"):
        RedisLog(redis_url, max_connections=2)
