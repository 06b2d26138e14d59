"""RedisLog against a real redis-server, with the local provider as the upstream."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from reactivex.subject import Subject
from redis.exceptions import RedisError

import rxllm
from rxllm.events import Done, ErrorInfo, Event, Failed, TextDelta, ToolRequest
from rxllm.local import LocalServer
from rxllm.serving import RedisLog, UIMessageEncoder, UnknownStream, ui_message_stream
from rxllm.serving.event_json import dump_event, load_event
from rxllm.serving.redis_log import CursorGone, Entry, StreamRunning
from tests.serving.redis_proxy import ReplyCutter
from tests.serving.redis_server import RedisServer, require_redis
from tests.serving.support import read_sse

ROOT = Path(__file__).resolve().parents[2]


def ask(model: str = "rxllm-local") -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")])


def upstream(server: LocalServer, model: str = "rxllm-local") -> Any:
    return rxllm.provider("local", base_url=server.url).stream(ask(model))


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


# The lease of the tests that let a producer's lease lapse. Its heartbeat renews it
# every 0.3 of it, so this process may stall for 0.7 of it (1.4 s) before the lease
# lapses on its own; it did at 200 ms when the machine was busy (the whole suite on
# two cores): the heartbeat found it gone and cancelled the live response ("the
# stream's lease was lost") before the test made Redis stall.
LEASE_MS = 2_000


async def logged(raw: aioredis.Redis, log: RedisLog, name: str, count: int) -> None:
    """Wait until the log of `name` holds `count` entries."""
    async with asyncio.timeout(20):
        while await raw.xlen(log.keys(name)[0]) < count:
            await asyncio.sleep(0.01)


async def outlive_the_log(
    raw: aioredis.Redis, log: RedisLog, name: str, source: Subject[Event], live: Any, event: Event
) -> Entry:
    """Redis stalls writes while the producer emits `event`, until the producer has
    dropped its log (its writes failed for half the lease) and its lease has expired:
    the producer streams on live without the log. Returns the live entry of `event`.

    Redis is paused until both have happened, not for a set time: a pause that ended
    first (this process run late on a busy machine) let the producer's write through,
    to find its lease gone and cancel the live response. Writes it sent while paused
    run once Redis resumes, and find the lease gone."""
    producer = log._producers[name]
    lease = log.keys(name)[2]
    # The pause's own end is a bound, should this process die with Redis paused.
    await raw.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    try:
        source.on_next(event)
        entry: Entry = await anext(live)
        async with asyncio.timeout(30):  # a guard: both take a lease (2 s) at most
            while producer.writing:  # the log is dropped
                await asyncio.sleep(0.01)
            while await raw.exists(lease):  # the lease expires (reads go on)
                await asyncio.sleep(0.01)
    finally:
        await raw.execute_command("CLIENT", "UNPAUSE")
    return entry


async def test_resume_from_start_middle_and_last(log: RedisLog, local_server: LocalServer) -> None:
    name = sid()
    live = await collect(await log.start(name, upstream(local_server)))
    assert kinds(live)[-1] == "done" and "text" in kinds(live)
    assert await log.state(name) == "done"

    assert await collect(log.resume(name)) == live
    middle = len(live) // 2
    assert await collect(log.resume(name, after=live[middle][0])) == live[middle + 1 :]
    assert await collect(log.resume(name, after=live[-1][0])) == []
    # ids are the producer's: <start_ms>-<seq>, the same in the live response and the log
    start_ms = live[0][0].split("-")[0]
    assert [entry_id for entry_id, _ in live] == [f"{start_ms}-{i}" for i in range(len(live))]


async def test_follow_while_running_sees_what_live_sees(
    log: RedisLog, paced_server: LocalServer
) -> None:
    name = sid()
    live_entries = await log.start(name, upstream(paced_server, "fault/slow_drip"))
    first = await anext(live_entries)
    following = asyncio.create_task(collect(log.resume(name, after=first[0])))
    live = [first, *await collect(live_entries)]
    assert await following == live[1:]
    assert kinds(live)[-1] == "done" and "tool_request" in kinds(live)


async def test_a_second_reader_of_the_live_entries_is_an_error_not_a_hang(log: RedisLog) -> None:
    """The live entries have one reader (the live response); another reads the log
    (`resume`). A second concurrent reader used to take the first one's wake-up slot,
    and one of the two waited forever."""
    source: Subject[Event] = Subject()
    live = await log.start(sid(), source)
    first = asyncio.create_task(anext(live))
    await asyncio.sleep(0)  # the first reader waits
    with pytest.raises(RuntimeError, match="one reader"):
        async with asyncio.timeout(5):
            await anext(live)
    source.on_next(TextDelta.make(provider="p", text="x"))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    async with asyncio.timeout(5):
        assert (await first)[1].type == "text"
        assert kinds(await collect(live)) == ["done"]


async def test_a_disconnect_is_not_a_stop(log: RedisLog, paced_server: LocalServer) -> None:
    name = sid()
    live = await log.start(name, upstream(paced_server, "fault/slow_drip"))
    await anext(live)
    await live.aclose()  # the client went away; the producer goes on
    assert kinds(await collect(log.resume(name)))[-1] == "done"
    assert paced_server.disconnects == 0


async def test_resumer_in_another_process(
    log: RedisLog, redis_url: str, paced_server: LocalServer
) -> None:
    name = sid()
    live_entries = await log.start(name, upstream(paced_server, "fault/slow_drip"))
    first = await anext(live_entries)
    peer = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.serving.redis_peer",
        "resume",
        redis_url,
        log.prefix,
        name,
        first[0],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    live = [first, *await collect(live_entries)]
    async with asyncio.timeout(20):
        out, _ = await peer.communicate()
    assert peer.returncode == 0
    seen = [json.loads(line) for line in out.decode().splitlines()]
    assert [entry_id for entry_id, _ in seen] == [entry_id for entry_id, _ in live[1:]]
    assert [event for _, event in seen] == [event.model_dump(mode="json") for _, event in live[1:]]


async def test_sigkilled_producer_ends_stalled(
    redis_url: str, prefix: str, paced_server: LocalServer
) -> None:
    name = sid()
    producer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.serving.redis_peer",
            "produce",
            redis_url,
            prefix,
            name,
            paced_server.url,
            "fault/hang",
            "1000",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    try:
        assert producer.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(producer.stdout.readline), 20)
        assert line.strip() == b"started"
        async with RedisLog(redis_url, prefix=prefix, lease_ms=1000) as log:
            entries = log.resume(name)
            first = await anext(entries)  # it produced something, then dies
            os.kill(producer.pid, signal.SIGKILL)
            rest = await collect(entries)
            assert first[1].type != "error"
            terminal = rest[-1][1]
            assert terminal.type == "error" and terminal.error.kind == "stalled"
            assert await log.state(name) == "error"
            # every reader agrees: the terminal is in the log, written once
            again = await collect(log.resume(name))
            assert again == [first, *rest]
    finally:
        producer.kill()
        producer.wait()


async def test_cancel_before_the_producer_starts(log: RedisLog, local_server: LocalServer) -> None:
    name = sid()
    assert await log.cancel(name, reason="changed my mind") is False
    live = await collect(await log.start(name, upstream(local_server)))
    assert kinds(live) == ["cancelled"]
    assert live[0][1].reason == "changed my mind"  # type: ignore[union-attr]
    assert local_server.requests == []  # the upstream was never asked
    assert await log.state(name) == "cancelled"
    assert await collect(log.resume(name)) == live


async def test_cancel_while_running_closes_the_upstream(
    log: RedisLog, paced_server: LocalServer
) -> None:
    name = sid()
    live_entries = await log.start(name, upstream(paced_server, "fault/hang"))
    await anext(live_entries)
    follower = asyncio.create_task(collect(log.resume(name)))
    assert await log.cancel(name, reason="user") is True
    live = await collect(live_entries)
    assert live[-1][1].type == "cancelled" and live[-1][1].reason == "user"  # type: ignore[union-attr]
    async with asyncio.timeout(5):
        await paced_server.disconnected.wait()
    assert kinds(await follower)[-1] == "cancelled"
    assert await log.state(name) == "cancelled"
    assert await log.cancel(name) is False  # idempotent: already over


async def test_cancel_after_done_changes_nothing(
    log: RedisLog, local_server: LocalServer, raw: aioredis.Redis
) -> None:
    name = sid()
    live = await collect(await log.start(name, upstream(local_server)))
    assert await log.cancel(name) is False
    assert await log.state(name) == "done"
    assert await raw.xlen(log.keys(name)[0]) == len(live)
    assert await raw.exists(log.keys(name)[3]) == 0


async def test_cancel_with_no_producer_left_ends_it(
    log: RedisLog, raw: aioredis.Redis, paced_server: LocalServer
) -> None:
    name = sid()
    live = await log.start(name, upstream(paced_server, "fault/hang"))
    await anext(live)
    producer = log._producers[name]
    producer.drop_log()  # this producer stops talking to Redis, as a dead one would
    await raw.delete(log.keys(name)[2])  # and its lease expires
    assert await log.cancel(name, reason="user") is True
    entries = await collect(log.resume(name))
    assert entries[-1][1].type == "cancelled"
    assert await log.state(name) == "cancelled"
    producer.stop("test over")  # the live side still ran; end it before its server
    await collect(live)


async def test_terminal_races_have_one_winner(
    redis_url: str, prefix: str, raw: aioredis.Redis
) -> None:
    """The producer's terminal, a cancel and a resumer finding the lease gone, in every
    order Redis happens to see them: one terminal entry, and everyone reads it."""
    # A short lease, so a resumer blocked in XREAD looks again soon (<= the lease).
    async with RedisLog(redis_url, prefix=prefix, lease_ms=1000) as log:

        async def race(i: int) -> tuple[str, list[str]]:
            name = f"race-{i}"
            source: Subject[Event] = Subject()
            live = await log.start(name, source)
            source.on_next(TextDelta.make(provider="p", text="hi"))
            resumer = log.resume(name)
            assert (await anext(resumer))[1].type == "text"

            async def finish() -> None:
                await asyncio.sleep(0)
                source.on_next(Done.make(provider="p", stop_reason="stop"))

            async def expire() -> None:
                await raw.delete(log.keys(name)[2])  # the lease ends now

            moves = [finish(), expire(), log.cancel(name), collect(resumer)]
            order = list(range(len(moves)))
            order = order[i % 4 :] + order[: i % 4]
            results = await asyncio.gather(*(moves[k] for k in order))
            followed = results[order.index(3)]
            await collect(live)
            entries = await collect(log.resume(name))
            state = await log.state(name)
            assert state is not None
            terminals = [e.type for _, e in entries if e.type in ("done", "error", "cancelled")]
            assert len(terminals) == 1 and terminals[0] == state
            assert followed[-1] == entries[-1]  # the resumer got the winner's terminal
            return state, terminals

        outcomes = []
        for batch in range(4):
            outcomes += await asyncio.gather(*(race(batch * 25 + i) for i in range(25)))
    assert len(outcomes) == 100
    winners = {state for state, _ in outcomes}
    assert winners <= {"done", "error", "cancelled"}


async def test_every_key_has_a_ttl(
    redis_url: str, prefix: str, paced_server: LocalServer, raw: aioredis.Redis
) -> None:
    async with RedisLog(redis_url, prefix=prefix, ttl_s=600, retention_s=3600) as log:
        name = sid()
        live = await log.start(name, upstream(paced_server, "fault/hang"))
        await anext(live)
        await log.cancel(name, reason="user")  # so the cancel key exists too
        await collect(live)
        await asyncio.sleep(0)
    keys = [key async for key in raw.scan_iter(match=f"{prefix}:*")]
    assert {k.decode().rsplit(":", 1)[1] for k in keys} == {"log", "meta", "cancel"}
    for key in keys:
        ttl = await raw.pttl(key)
        assert 0 < ttl <= 3600_000, (key, ttl)
    log_key = f"{prefix}:{{{name}}}:log".encode()
    assert await raw.pttl(log_key) > 600_000  # the terminal set the retention


async def test_running_keys_have_the_running_ttl(
    log: RedisLog, paced_server: LocalServer, raw: aioredis.Redis
) -> None:
    name = sid()
    live = await log.start(name, upstream(paced_server, "fault/hang"))
    await anext(live)
    async with asyncio.timeout(5):
        while not await raw.exists(log.keys(name)[0]):
            await asyncio.sleep(0.01)
    for key in log.keys(name)[:3]:
        assert 0 < await raw.pttl(key) <= 600_000, key
    await log.cancel(name)
    await collect(live)


async def test_a_fenced_producer_stops_writing_and_hangs_up(
    log: RedisLog, paced_server: LocalServer, raw: aioredis.Redis
) -> None:
    name = sid()
    live = await log.start(name, upstream(paced_server, "fault/slow_drip"))
    await anext(live)
    _, _, lease, _ = log.keys(name)
    await raw.set(lease, "another-owner", px=10_000)  # another producer took the stream
    written = await raw.xlen(log.keys(name)[0])
    rest = await collect(live)
    assert rest[-1][1].type == "cancelled"
    async with asyncio.timeout(5):
        await paced_server.disconnected.wait()
    # nothing after the theft reached the log, and the thief's stream is left running
    assert await raw.xlen(log.keys(name)[0]) <= written + 1
    assert await log.state(name) == "running"
    assert await raw.get(lease) == b"another-owner"


async def test_a_redis_failure_never_breaks_the_live_response(
    prefix: str, paced_server: LocalServer
) -> None:
    with RedisServer(require_redis()) as server:
        async with RedisLog(server.url, prefix=prefix, lease_ms=LEASE_MS) as log:
            name = sid()
            live = await log.start(name, upstream(paced_server, "fault/slow_drip"))
            first = await anext(live)
            server.stop()  # Redis dies mid-stream
            rest = await collect(live)
    entries = [first, *rest]
    assert entries[-1][1].type == "done" and "tool_request" in kinds(entries)


async def test_a_batch_whose_reply_was_lost_is_sent_again_without_harm(
    redis_url: str, prefix: str
) -> None:
    """The connection breaks after Redis ran a batch, before its answer arrived: the
    batch is sent again, and entries already in the log are not added twice (XADD
    refuses an id at or below the last: the log was dropped, and the turn, which ended
    well, read back as `stalled` once its lease expired)."""
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    async with (
        ReplyCutter(port).running() as cutter,
        RedisLog(cutter.url, prefix=prefix, lease_ms=2000) as log,
    ):
        name = sid()
        source: Subject[Event] = Subject()
        live = await log.start(name, source)
        source.on_next(TextDelta.make(provider="p", text="the scripts are loaded now"))
        await asyncio.sleep(0.2)
        cutter.cut_reply_to(b"reply-lost")
        source.on_next(TextDelta.make(provider="p", text="reply-lost"))
        await asyncio.sleep(0.2)
        source.on_next(TextDelta.make(provider="p", text="after"))
        source.on_next(Done.make(provider="p", stop_reason="stop"))
        entries = await collect(live)
        assert cutter.cuts == 1
        assert await log.state(name) == "done"
        assert await collect(log.resume(name)) == entries
        assert kinds(entries) == ["text", "text", "text", "done"]


async def test_the_log_never_exceeds_max_events(
    redis_url: str, prefix: str, local_server: LocalServer, raw: aioredis.Redis
) -> None:
    async with RedisLog(redis_url, prefix=prefix, max_events=4) as log:
        name = sid()
        live = await collect(await log.start(name, upstream(local_server)))
        assert len(live) == 4
        terminal = live[-1][1]
        assert terminal.type == "error" and terminal.error.kind == "limit"
        assert await raw.xlen(log.keys(name)[0]) == 4
        assert await collect(log.resume(name)) == live


async def test_events_after_the_terminal_are_dropped(log: RedisLog) -> None:
    name = sid()
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    source.on_next(TextDelta.make(provider="p", text="late"))
    assert kinds(await collect(live)) == ["done"]
    assert kinds(await collect(log.resume(name))) == ["done"]


async def test_bad_input(log: RedisLog, local_server: LocalServer) -> None:
    with pytest.raises(UnknownStream):
        await anext(log.resume("never-started"))
    assert await log.state("never-started") is None
    for bad in ("", "a" * 129, "a/b", "a:b", "{x}"):
        with pytest.raises(ValueError, match="bad stream id"):
            await log.state(bad)
    name = sid()
    await collect(await log.start(name, upstream(local_server)))
    for cursor in ("x", "1-", "-1", "1-2-3"):
        with pytest.raises(ValueError, match="bad cursor"):
            await anext(log.resume(name, after=cursor))
    with pytest.raises(CursorGone):
        await anext(log.resume(name, after="1-0"))  # before the first entry


async def test_a_cursor_past_64_bits_is_a_bad_cursor_not_a_redis_error(
    log: RedisLog, local_server: LocalServer
) -> None:
    """The regex takes 20 digits a side; Redis refuses more than 2**64 - 1 with an
    `Invalid stream ID` from deep inside the read."""
    name = sid()
    await collect(await log.start(name, upstream(local_server)))
    for cursor in (f"{2**64}-0", f"1-{2**64}", "99999999999999999999-0"):
        with pytest.raises(ValueError, match="bad cursor"):
            await anext(log.resume(name, after=cursor))
        with pytest.raises(ValueError, match="bad cursor"):
            await anext(log.history(name, through=cursor))
    with pytest.raises(CursorGone):  # the largest id is a cursor, of no entry here
        await anext(log.resume(name, after=f"{2**64 - 1}-0"))


async def test_start_refuses_what_is_not_an_observable_before_registering(
    log: RedisLog, local_server: LocalServer
) -> None:
    """An async iterable or a list is a TypeError at once, and leaves nothing behind:
    it used to fail after the registration, so the stream stayed `running` (this
    process answered StreamRunning to every later start) and `aclose` raised."""
    name = sid()
    for wrong in ([TextDelta.make(provider="p", text="x")], entries_of([])):
        with pytest.raises(TypeError, match="Observable"):
            await log.start(name, wrong)  # type: ignore[arg-type]
    assert await log.state(name) is None
    assert kinds(await collect(await log.start(name, upstream(local_server))))[-1] == "done"


async def test_aclose_closes_its_connections(
    redis_url: str, prefix: str, raw: aioredis.Redis
) -> None:
    """The clients share a pool they were given, and a client leaves a pool it was
    given open: the connections stayed until the garbage collector found them."""
    before = len(await raw.client_list())
    log = RedisLog(redis_url, prefix=prefix)
    source: Subject[Event] = Subject()
    live = await log.start(sid(), source)
    source.on_next(TextDelta.make(provider="p", text="x"))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    await collect(live)
    assert len(await raw.client_list()) > before
    await log.aclose()
    async with asyncio.timeout(5):
        while len(await raw.client_list()) != before:
            await asyncio.sleep(0.01)


async def test_a_running_stream_cannot_be_started_twice_but_a_finished_one_is_replaced(
    log: RedisLog, local_server: LocalServer, paced_server: LocalServer
) -> None:
    name = sid()
    live = await log.start(name, upstream(paced_server, "fault/hang"))
    with pytest.raises(StreamRunning):
        await log.start(name, upstream(paced_server, "fault/hang"))
    await log.cancel(name)
    first_turn = await collect(live)
    second_turn = await collect(await log.start(name, upstream(local_server)))
    assert kinds(first_turn)[-1] == "cancelled" and kinds(second_turn)[-1] == "done"
    assert await collect(log.resume(name)) == second_turn
    with pytest.raises(CursorGone):  # a cursor of the previous turn
        await anext(log.resume(name, after=first_turn[0][0]))


async def test_a_lagging_reader_never_mixes_two_turns(log: RedisLog) -> None:
    name = sid()
    first_turn: Subject[Event] = Subject()
    await log.start(name, first_turn)
    first_turn.on_next(TextDelta.make(provider="p", text="one"))
    reader = log.resume(name)
    assert (await anext(reader))[1].type == "text"  # then it lags
    first_turn.on_next(Done.make(provider="p", stop_reason="stop"))
    async with asyncio.timeout(10):
        while await log.state(name) != "done":
            await asyncio.sleep(0.01)
    second_turn: Subject[Event] = Subject()
    live = await log.start(name, second_turn)  # the chat's next message
    second_turn.on_next(TextDelta.make(provider="p", text="two"))
    with pytest.raises(UnknownStream):
        async with asyncio.timeout(10):
            async for _, event in reader:
                assert event.type == "text" and event.text == "one"  # never the next turn's
    second_turn.on_next(Done.make(provider="p", stop_reason="stop"))
    assert kinds(await collect(live)) == ["text", "done"]


async def long_log(log: RedisLog, name: str) -> list[Entry]:
    """A turn of 1,100 text entries and its terminal: more than two pages."""
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    for i in range(1100):
        source.on_next(TextDelta.make(provider="p", text=f"word {i} "))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    return await collect(live)


async def test_resume_pages_through_a_long_log(log: RedisLog) -> None:
    name = sid()
    entries = await long_log(log, name)
    assert await collect(log.resume(name)) == entries
    for cut in (0, 63, 64, 100, 575, 576, 1099):  # the first page is 64, then 512
        assert await collect(log.resume(name, after=entries[cut][0])) == entries[cut + 1 :]


async def test_history_pages_the_stored_json_through_a_cursor(log: RedisLog) -> None:
    name = sid()
    entries = await long_log(log, name)
    stored = [event.model_dump_json().encode() for _, event in entries]
    for cut in (0, 1, 510, 511, 512, 1023, 1024, len(entries) - 1):
        pages = [page async for page in log.history(name, through=entries[cut][0])]
        assert all(0 < len(page) <= 512 for page in pages)
        assert [data for page in pages for data in page] == stored[: cut + 1]
    assert [page async for page in log.history(name, through="0")] == []
    with pytest.raises(UnknownStream):
        await anext(log.history(sid(), through="0"))
    with pytest.raises(CursorGone):  # before the first entry: a previous turn's
        await anext(log.history(name, through="1-0"))


async def test_a_resume_folds_the_history_then_sends_exactly_the_rest(
    log: RedisLog, local_server: LocalServer
) -> None:
    """The HTTP resume's shape: fold the stored JSON through the cursor, then stream
    the entries after it; the bytes are the whole response's after that entry."""
    name = sid()
    entries = await collect(await log.start(name, upstream(local_server, "fault/weather")))
    whole = b"".join([chunk async for chunk in ui_message_stream(log.resume(name))])
    for cut in range(len(entries)):
        after = entries[cut][0]
        encoder = UIMessageEncoder()
        async for page in log.history(name, through=after):
            encoder.fold_json(page)
        rest = ui_message_stream(log.resume(name, after=after), encoder=encoder)
        mark = whole.index(b"\n\n", whole.index(b"id: " + after.encode())) + 2
        assert b"".join([chunk async for chunk in rest]) == whole[mark:], cut


async def test_a_resume_from_a_cursor_the_log_has_not_stored_yet(
    log: RedisLog, raw: aioredis.Redis
) -> None:
    """The live response names an entry as it happens; the writer stores it a moment
    later, longer while Redis stalls. A client that reconnects meanwhile (to another
    process) holds a cursor ahead of the log: `history` waits for the log to reach
    it, so the encoder folds every entry the client has. Folding only what was stored
    left it behind: here it still had block `t1` open and sent `three` into it, a
    block the client had closed (the `ai` client throws on that)."""
    name = sid()
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    source.on_next(TextDelta.make(provider="p", text="one"))
    async with asyncio.timeout(5):
        while await raw.xlen(log.keys(name)[0]) < 1:
            await asyncio.sleep(0.01)
    await raw.execute_command("CLIENT", "PAUSE", "300", "WRITE")  # Redis stalls writes
    source.on_next(ToolRequest.make(provider="p", call_id="c", name="f", index=0, arguments={}))
    source.on_next(TextDelta.make(provider="p", text="two"))  # opens block t2
    seen = [await anext(live) for _ in range(3)]
    cursor = seen[-1][0]
    assert await raw.xlen(log.keys(name)[0]) == 1  # the client is ahead of the log

    encoder = UIMessageEncoder()
    async for page in log.history(name, through=cursor):
        encoder.fold_json(page)
    source.on_next(TextDelta.make(provider="p", text="three"))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    rest = ui_message_stream(log.resume(name, after=cursor), encoder=encoder)
    got = b"".join([chunk async for chunk in rest])
    await collect(live)
    whole = b"".join([chunk async for chunk in ui_message_stream(log.resume(name))])
    mark = whole.index(b"\n\n", whole.index(b"id: " + cursor.encode())) + 2
    assert got == whole[mark:]
    assert b'"id":"t2","delta":"three"' in got


async def test_a_cursor_that_names_no_entry_of_the_turn_is_gone(log: RedisLog) -> None:
    """Every id of a turn is `<start_ms>-<seq>`. A cursor with a later `ms` is no
    entry of this turn (resume waited for the turn to end and then sent nothing, no
    terminal); one past the end of a finished log is none either (history now waits
    for a cursor ahead of the log, so it must know when none will come)."""
    name = sid()
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    source.on_next(TextDelta.make(provider="p", text="one"))
    first = await anext(live)
    start_ms = int(first[0].split("-")[0])
    later_turn = f"{start_ms + 1}-0"
    async with asyncio.timeout(5):  # not a wait for the turn's end
        with pytest.raises(CursorGone):
            await anext(log.resume(name, after=later_turn))
        with pytest.raises(CursorGone):
            await anext(log.history(name, through=later_turn))
    source.on_next(Done.make(provider="p", stop_reason="stop"))
    entries = [first, *await collect(live)]
    past_the_end = f"{start_ms}-{len(entries) + 5}"
    with pytest.raises(CursorGone):
        async with asyncio.timeout(10):
            [page async for page in log.history(name, through=past_the_end)]
    # the terminal itself is a cursor like any other: nothing follows it
    assert await collect(log.resume(name, after=entries[-1][0])) == []
    pages = [page async for page in log.history(name, through=entries[-1][0])]
    assert sum(len(page) for page in pages) == len(entries)


# --- lone surrogates: half a character in an event ------------------------------------

EMOJI = "\U0001f600"
SURROGATE_TURNS: dict[str, list[Event]] = {
    # A provider split the emoji's UTF-16 pair across two deltas: two lone halves.
    "split_pair": [
        TextDelta.make(provider="p", text="smile \ud83d"),
        TextDelta.make(provider="p", text="\ude00!"),
        Done.make(provider="p", stop_reason="stop"),
    ],
    # Halves never paired: a low one alone, a high one the block never completes, one
    # in a tool's arguments (not a delta: the fold validates it in full) and in the
    # terminal (written by TERMINATE).
    "never_paired": [
        TextDelta.make(provider="p", text="a\udc00b"),
        TextDelta.make(provider="p", text="c\ud83d"),
        ToolRequest(provider="p", call_id="c1", name="f", index=0, arguments={"k": "x\ud800"}),
        Failed(provider="p", error=ErrorInfo(kind="http", message="half \ud83d", provider="p")),
    ],
}


async def produce(log: RedisLog, name: str, events: list[Event]) -> list[Entry]:
    """The live entries of `events`, each given time to reach the writer before the
    next: the events after one it fails to write are those a broken live response loses."""
    source: Subject[Event] = Subject()
    live = await log.start(name, source)
    for event in events:
        source.on_next(event)
        await asyncio.sleep(0.01)
    return await collect(live)


def _words(info: ErrorInfo) -> str:
    """The error's own message (where a lone half can be), sent instead of the default."""
    return info.message


async def entries_of(items: list[Entry]) -> AsyncIterator[Entry]:
    for item in items:
        yield item


@pytest.mark.parametrize("turn", list(SURROGATE_TURNS))
async def test_a_lone_surrogate_is_logged_and_read_back_as_it_was(
    log: RedisLog, raw: aioredis.Redis, turn: str
) -> None:
    events = SURROGATE_TURNS[turn]
    name = sid()
    live = await produce(log, name, events)
    assert [event for _, event in live] == events  # the live response is whole
    assert await log.state(name) == events[-1].type
    assert await raw.xlen(log.keys(name)[0]) == len(events)
    assert await collect(log.resume(name)) == live  # the halves as they were
    for cut in range(len(live)):
        assert await collect(log.resume(name, after=live[cut][0])) == live[cut + 1 :]
    stored = [data for page in [p async for p in log.history(name, live[-1][0])] for data in page]
    assert [load_event(data) for data in stored] == events


@pytest.mark.parametrize("turn", list(SURROGATE_TURNS))
async def test_a_resume_sends_what_the_live_response_sent_around_a_lone_surrogate(
    log: RedisLog, turn: str
) -> None:
    """The frames of the live entries, of a resume from the start, and of a resume
    after each entry (history folded by fold_json, or every entry folded as an event)
    are the same bytes: the pair joined into its character, a lone half as U+FFFD."""
    name = sid()
    live = await produce(log, name, SURROGATE_TURNS[turn])
    frames = ui_message_stream(entries_of(live), error_text=_words)
    whole = b"".join([chunk async for chunk in frames])
    stream = read_sse(whole)  # strict UTF-8
    if turn == "split_pair":
        assert stream.text() == f"smile {EMOJI}!"
    else:
        assert stream.text() == "a\ufffdbc\ufffd"
        assert stream.of("tool-input-available")[0]["input"] == {"k": "x\ufffd"}
        assert stream.of("error")[0]["errorText"] == "half \ufffd"
    resumed = ui_message_stream(log.resume(name), error_text=_words)
    assert b"".join([chunk async for chunk in resumed]) == whole
    for entry_id, _ in live:
        mark = whole.index(b"\n\n", whole.index(b"id: " + entry_id.encode())) + 2
        encoder = UIMessageEncoder(error_text=_words)
        async for page in log.history(name, through=entry_id):
            encoder.fold_json(page)
        rest = ui_message_stream(log.resume(name, after=entry_id), encoder=encoder)
        assert b"".join([chunk async for chunk in rest]) == whole[mark:], entry_id
        folding = ui_message_stream(log.resume(name), after=entry_id, error_text=_words)
        assert b"".join([chunk async for chunk in folding]) == whole[mark:], entry_id


# -- probes: cursors past the end, large and odd events, Redis restarting ----------


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
        RedisLog(redis_url, prefix=prefix, lease_ms=LEASE_MS) as log,
        RedisLog(redis_url, prefix=prefix) as other,
    ):
        name = sid()
        source: Subject[Event] = Subject()
        live = await log.start(name, source)
        source.on_next(TextDelta.make(provider="p", text="one"))
        await anext(live)
        await logged(raw, log, name, 1)
        two = TextDelta.make(provider="p", text="two")
        assert (await outlive_the_log(raw, log, name, source, live, two))[1] == two
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


async def test_a_resumer_s_terminal_takes_no_id_the_live_response_sent(
    redis_url: str, prefix: str, raw: aioredis.Redis
) -> None:
    """Redis stalls writes past half the lease: the producer drops its log and streams
    on live, past the log's last entry. The resumer that found the lease gone wrote its
    `stalled` terminal right after that entry, at the id the live response had already
    sent for a text: a client that had seen that text resumed after the terminal and
    got no terminal at all."""
    async with (
        RedisLog(redis_url, prefix=prefix, lease_ms=LEASE_MS) as log,
        RedisLog(redis_url, prefix=prefix) as other,
    ):
        name = sid()
        source: Subject[Event] = Subject()
        live = await log.start(name, source)
        source.on_next(TextDelta.make(provider="p", text="one"))
        first, _ = await anext(live)
        await logged(raw, log, name, 1)  # "one" is in the log
        two = TextDelta.make(provider="p", text="two")
        seen, _ = await outlive_the_log(raw, log, name, source, live, two)
        whole = await collect(other.resume(name))  # finds the lease gone: stalled
        assert [entry_id for entry_id, _ in whole][:1] == [first]
        assert kinds(whole) == ["text", "error"] and whole[-1][0] not in (first, seen)
        for cursor in (first, seen):
            rest = await collect(other.resume(name, after=cursor))
            assert kinds(rest) == ["error"] and rest[0][1].error.kind == "stalled"  # type: ignore[union-attr]
        source.on_completed()
        await collect(live)


async def test_a_cancel_of_a_stream_that_logged_nothing_is_its_whole_log(
    redis_url: str, prefix: str, raw: aioredis.Redis
) -> None:
    """The terminal a cancel writes for a dead producer is the log's only entry: a log
    read from the start is whole, not trimmed, and a client that saw the live
    response's first id still gets the terminal after it."""
    async with (
        RedisLog(redis_url, prefix=prefix, lease_ms=LEASE_MS) as log,
        RedisLog(redis_url, prefix=prefix) as other,
    ):
        name = sid()
        source: Subject[Event] = Subject()
        live = await log.start(name, source)
        one = TextDelta.make(provider="p", text="one")
        seen, _ = await outlive_the_log(raw, log, name, source, live, one)
        assert await other.cancel(name, reason="user") is True
        assert kinds(await collect(other.resume(name))) == ["cancelled"]
        assert kinds(await collect(other.resume(name, after=seen))) == ["cancelled"]
        await collect(live)
