"""Resumable streams on Redis Streams: a producer writes a turn's events to a log that
any process can replay and follow, cancel, or declare stalled.

Keys (prefix configurable; `{sid}` is the Cluster hash tag, so one slot per stream):

- `rxllm:{sid}:log`    one entry per event, field `e` = the event's JSON (events, not
                       encoded parts: any encoder can serve them), ids `<start_ms>-<seq>`
                       assigned by the producer, so the live response names them too;
- `rxllm:{sid}:meta`   `state` (running|done|error|cancelled), `owner`, `message_id`,
                       `start_ms`;
- `rxllm:{sid}:lease`  the producer's token, `SET NX PX`, renewed by its heartbeat;
- `rxllm:{sid}:cancel` a cancel request's reason, announced by `PUBLISH rxllm:cancel`.

The producer owns the upstream subscription in a task, so a client's disconnect is
not a stop. Each event goes to the live response at once and to a writer that sends
what queued meanwhile in one `EVALSHA` per batch, in order, fenced on the lease. A
Redis failure never breaks the live response: a batch is retried for half the lease,
then the log is dropped (its lease expires and a resumer declares it stalled).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import redis.asyncio as aioredis
from loguru import logger
from reactivex import Observable, abc
from reactivex.scheduler.eventloop import AsyncIOScheduler
from redis.exceptions import RedisError

from rxllm.events import IS_TERMINAL, Cancelled, Event, Retry, failed
from rxllm.operators._args import check_count, check_seconds
from rxllm.serving.event_json import dump_event, load_event
from rxllm.serving.redis_scripts import APPEND, CANCEL, REGISTER, RENEW, TERMINATE

__all__ = [
    "CursorGone",
    "Live",
    "RedisLog",
    "StreamInfo",
    "StreamRunning",
    "UnknownStream",
    "check_cursor",
    "check_sid",
]

State: TypeAlias = Literal["running", "done", "error", "cancelled"]
Entry: TypeAlias = tuple[str, Event]
"""A log entry: its id (`<start_ms>-<seq>`) and the event."""

SID = re.compile(r"[A-Za-z0-9_-]{1,128}")
CURSOR = re.compile(r"0|[0-9]{1,20}-[0-9]{1,20}")
# Each half of a Redis stream id is an unsigned 64-bit number: Redis refuses more.
MAX_ID_PART = 2**64 - 1
# XRANGE page size and the longest XREAD BLOCK: a follower checks the lease at least
# this often, so a dead producer's turn ends within lease + 3 s.
PAGE = 512
MAX_BLOCK_MS = 3_000
# A resume's first page is small: its first frame waits for no more entries than the
# UI stream takes at once (64), then pages are full.
FIRST_PAGE = 64
# The heartbeat renews the lease at this fraction of it (10 s lease: every 3 s).
RENEW_FRACTION = 0.3
# Events in one EVALSHA at most: a script blocks Redis while it runs.
MAX_BATCH = 512
CANCEL_CHANNEL = "cancel"


class UnknownStream(LookupError):
    """No stream with this id: never started, or expired."""

    def __init__(self, sid: str) -> None:
        super().__init__(f"no stream {sid!r} (never started, or expired)")
        self.sid = sid


class StreamRunning(RuntimeError):
    """A live producer already holds this stream."""

    def __init__(self, sid: str) -> None:
        super().__init__(f"stream {sid!r} is running: cancel it or wait for its end")
        self.sid = sid


class CursorGone(LookupError):
    """The cursor names no entry of the stream's log: before its first entry (a previous
    turn's, or trimmed away: a replay from it would miss events), or another turn's, or
    after the end of a finished log."""

    def __init__(self, sid: str, after: str) -> None:
        super().__init__(
            f"cursor {after!r} names no entry of stream {sid!r} (another turn's, trimmed "
            "away, or never written)"
        )
        self.sid = sid
        self.after = after


def check_sid(sid: str) -> str:
    if not isinstance(sid, str) or not SID.fullmatch(sid):
        raise ValueError(f"bad stream id {sid!r}: expected 1-128 of [A-Za-z0-9_-]")
    return sid


def check_cursor(after: str) -> tuple[int, int]:
    """The cursor as (ms, seq); `"0"` (from the start) is (0, 0)."""
    if not isinstance(after, str) or not CURSOR.fullmatch(after):
        raise ValueError(f"bad cursor {after!r}: expected '0' or a log id '<ms>-<seq>'")
    if after == "0":
        return (0, 0)
    ms, seq = (int(part) for part in after.split("-"))
    if ms > MAX_ID_PART or seq > MAX_ID_PART:
        raise ValueError(f"bad cursor {after!r}: each part of a log id is at most 2**64 - 1")
    return (ms, seq)


def _id(raw: bytes | str) -> tuple[int, int]:
    text = raw.decode() if isinstance(raw, bytes) else raw
    ms, seq = text.split("-")
    return (int(ms), int(seq))


class _FairPool(aioredis.BlockingConnectionPool):
    """A bounded pool that serves its waiters in turn. redis-py's hands a freed
    connection to whoever asks first: a follower whose `XREAD BLOCK` timed out asks
    again at once, so followers of quiet streams kept a full pool from the readers
    waiting for it for good. Once the pool is full, askers queue on a lock (FIFO) and
    only the first waits for a connection."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._queue = asyncio.Lock()
        self._waiting = 0

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        if not self._waiting and self.can_get_connection():
            # Nobody waits and one is free: take it (new ones connect in parallel).
            return await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
        self._waiting += 1
        try:
            async with self._queue:
                return await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
        finally:
            self._waiting -= 1


def _pool(url: str, size: int) -> _FairPool:
    pool: _FairPool = _FairPool.from_url(
        url, max_connections=size, timeout=None, socket_connect_timeout=2.0
    )
    return pool


def _as_sent(response: Any, **kwargs: Any) -> Any:
    return response


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True)
class StreamInfo:
    state: State
    message_id: str
    start_ms: int
    owner: str


_STATE_OF: dict[str, State] = {"done": "done", "error": "error", "cancelled": "cancelled"}


class Live:
    """The producer's entries as they happen: the live response, for one reader (a
    second concurrent one raises `RuntimeError`; `resume` serves any number). It ends
    once the terminal is in the log (or the log was dropped), so a resume after it
    finds the stream finished. Leaving it early (`aclose`, `break`) is a disconnect,
    never a stop: the producer goes on."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self._queue: deque[Entry] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._closed = False

    def _push(self, entry: Entry) -> None:
        if self._closed:
            return
        self._queue.append(entry)
        self._wake()

    def _end(self) -> None:
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> Live:
        return self

    async def __anext__(self) -> Entry:
        while not self._queue:
            if self._ended or self._closed:
                raise StopAsyncIteration
            if self._waiter is not None:
                # One wake-up slot: a second reader would leave one of the two waiting
                # forever. Another reader follows the log instead.
                raise RuntimeError(
                    f"the live entries of stream {self.sid!r} have one reader: "
                    "read the log with resume() for another"
                )
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()

    async def aclose(self) -> None:
        self._closed = True
        self._queue.clear()
        self._wake()


class RedisLog:
    """Resumable streams on Redis Streams (floor: Redis 7.0).

    `await log.start(sid, provider.stream(req))` registers the stream and returns its
    `Live` entries; `log.resume(sid, after)` replays and follows it from any process;
    `log.cancel(sid)` stops it from any process; `log.state(sid)` says where it is.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "rxllm",
        lease_ms: int = 10_000,
        ttl_s: int = 600,
        retention_s: int = 3600,
        max_events: int = 100_000,
        max_connections: int = 1024,
    ) -> None:
        # Each checked by name at the call: Redis takes milliseconds and counts as
        # integers, so a NaN lease failed `start` in a Lua script's words, and a NaN or
        # fractional max_events a turn whose log never ended.
        check_count("lease_ms", lease_ms, 10)
        check_count("max_events", max_events, 2)
        for name, seconds in (("ttl_s", ttl_s), ("retention_s", retention_s)):
            if check_seconds(name, seconds) < 1:
                raise ValueError(f"{name} must be at least 1, got {seconds}")
        if isinstance(max_connections, bool) or not isinstance(max_connections, int):
            raise TypeError(f"max_connections must be an int, got {type(max_connections).__name__}")
        if max_connections < 3:
            raise ValueError(
                f"max_connections ({max_connections}) must be at least 3: the cancel "
                "listener's, a writer's and a reader's"
            )
        if ttl_s * 1000 < lease_ms:
            # The heartbeat refreshes the running keys once per 0.3 lease: a shorter TTL
            # lets a turn that is quiet for a moment leave Redis while it runs.
            raise ValueError(f"ttl_s ({ttl_s}) must be at least the lease ({lease_ms} ms)")
        self.prefix = prefix
        self.lease_ms = lease_ms
        self.ttl_ms = round(ttl_s * 1000)
        self.retention_ms = round(retention_s * 1000)
        self.max_events = max_events
        self.block_ms = min(MAX_BLOCK_MS, lease_ms)
        self.channel = f"{prefix}:{CANCEL_CHANNEL}"
        # A follower holds a connection while its XREAD blocks (up to 3 s), so readers
        # have a pool of their own: however many follow, the producers' writes, lease
        # renewals and terminals never wait behind them. The writers' pool (a quarter,
        # at least 2) also holds the cancel listener's connection for good, and serves
        # `cancel`. Both wait for a free connection rather than fail when all are busy;
        # together they open at most `max_connections`.
        writers = max(2, max_connections // 4)
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=_pool(url, writers))
        readers = _pool(url, max_connections - writers)
        self._readers = aioredis.Redis(connection_pool=readers)
        # XRANGE as Redis sends it, a list per entry: redis-py's reply callback makes a
        # tuple and a dict of each more, which the garbage collector then walks (a
        # resume reads thousands). A second client on the same pool keeps the first as is.
        self._pages = aioredis.Redis(connection_pool=readers)
        self._pages.set_response_callback("XRANGE", _as_sent)
        self._register = self.redis.register_script(REGISTER)
        self._append = self.redis.register_script(APPEND)
        self._terminate = self.redis.register_script(TERMINATE)
        self._renew = self.redis.register_script(RENEW)
        self._cancel = self.redis.register_script(CANCEL)
        self._producers: dict[str, _Producer] = {}
        self._listener: asyncio.Task[None] | None = None
        self._listening: asyncio.Event | None = None
        self._closed = False

    def keys(self, sid: str) -> tuple[str, str, str, str]:
        """The stream's keys: log, meta, lease, cancel."""
        base = f"{self.prefix}:{{{sid}}}"
        return (f"{base}:log", f"{base}:meta", f"{base}:lease", f"{base}:cancel")

    # -- the producer ---------------------------------------------------------------

    async def start(
        self, sid: str, events: Observable[Event], *, message_id: str | None = None
    ) -> Live:
        """Register stream `sid` and produce `events` into it from a task; returns once
        registered, with the live entries. A finished stream of the same id is
        replaced (a chat's next turn); a running one raises `StreamRunning`."""
        check_sid(sid)
        if not isinstance(events, Observable):
            # Checked before registering: a failure after it would hold the stream.
            raise TypeError(
                f"events must be an Observable of events (provider.stream(...)), "
                f"not {type(events).__name__}"
            )
        if self._closed:
            raise RuntimeError("this RedisLog is closed")
        if sid in self._producers:
            raise StreamRunning(sid)
        await self._listen()
        token = uuid.uuid4().hex
        message_id = message_id or f"msg-{uuid.uuid4().hex}"
        reply = await self._register(
            keys=list(self.keys(sid)), args=[token, self.lease_ms, self.ttl_ms, message_id]
        )
        if _text(reply[0]) == "running":
            raise StreamRunning(sid)
        producer = _Producer(self, sid, token, int(reply[1]), events)
        self._producers[sid] = producer
        producer.begin(_text(reply[2]))
        return producer.live

    # -- readers --------------------------------------------------------------------

    async def info(self, sid: str) -> StreamInfo | None:
        fields = await self._readers.hgetall(self.keys(check_sid(sid))[1])
        if not fields:
            return None
        meta = {_text(k): _text(v) for k, v in fields.items()}
        state = meta.get("state") or "running"
        return StreamInfo(
            state=_STATE_OF.get(state, "running"),
            message_id=meta.get("message_id") or "",
            start_ms=int(meta.get("start_ms") or 0),
            owner=meta.get("owner") or "",
        )

    async def state(self, sid: str) -> State | None:
        """`running`, `done`, `error`, `cancelled`, or None for an unknown stream."""
        info = await self.info(sid)
        return None if info is None else info.state

    async def resume(self, sid: str, after: str = "0") -> AsyncGenerator[Entry, None]:
        """The entries after `after` (`"0"`: all), then the new ones as they come, to
        the terminal. An unknown stream raises `UnknownStream`, as does one replaced
        by its next turn while this reader lagged; a cursor before the first entry, of
        another turn, or past the end of the finished log raises `CursorGone` (never a
        partial replay, nor one without its terminal)."""
        check_sid(sid)
        turn = await self._turn(sid, after)
        log = self.keys(sid)[0]
        last = "-" if after == "0" else f"({after}"
        count = FIRST_PAGE
        while True:
            page = await self._read_page(log, last, "+", count)
            for raw_id, fields in page:
                entry_id = raw_id.decode()
                if not entry_id.startswith(turn):
                    raise UnknownStream(sid)
                event = load_event(fields[1])
                yield entry_id, event
                if IS_TERMINAL[type(event)]:
                    return
                last = f"({entry_id}"
            if len(page) < count:
                break
            count = PAGE
        position = "0-0" if last == "-" else last[1:]
        async with contextlib.aclosing(self._follow(sid, log, turn, position)) as batches:
            async for batch in batches:
                for entry_id, data in batch:
                    event = load_event(data)
                    yield entry_id, event
                    if IS_TERMINAL[type(event)]:
                        return
                    position = entry_id
        # The stream is finished and no terminal came after `position`: it is the
        # terminal itself, or past the end of the log (which ended before it).
        if not await self._read_page(log, position, position, 1):
            raise CursorGone(sid, after)

    async def history(self, sid: str, through: str) -> AsyncGenerator[list[bytes], None]:
        """The stored JSON of the events from the first entry through `through`, a page
        (up to 512) at a time: what a resume after `through` folds unsent, read
        without making an event of each (`UIMessageEncoder.fold_json`). A cursor the
        log has not reached yet (the live response names an entry before it is
        stored) is waited for, as `resume` follows; one after the end of a finished
        log raises `CursorGone`. `"0"` yields nothing, but checks, as `resume` does,
        that the stream is known (`UnknownStream`) and its log whole (`CursorGone`)."""
        check_sid(sid)
        turn = await self._turn(sid, through, whole=True)
        if through == "0":
            return
        target = check_cursor(through)
        log = self.keys(sid)[0]
        last = "-"
        while True:
            page = await self._read_page(log, last, through)
            if not page:
                break
            # Ids only grow and an older turn's log is deleted with it, so a page
            # whose last id is this turn's holds nothing else.
            last_id = page[-1][0].decode()
            if not last_id.startswith(turn):
                raise UnknownStream(sid)
            yield [fields[1] for _, fields in page]
            if _id(last_id) >= target:
                return
            last = f"({last_id}"
            if len(page) < PAGE:
                break
        # The live response names an entry as it happens and the writer stores it a
        # moment later (up to half a lease while Redis stalls), so a client's cursor
        # may be ahead of the log: wait for the log to reach it, as a follower does.
        # Folding only what is stored would leave the encoder behind the client.
        position = "0-0" if last == "-" else last[1:]
        async with contextlib.aclosing(self._follow(sid, log, turn, position)) as batches:
            async for batch in batches:
                through_cursor = [data for entry_id, data in batch if _id(entry_id) <= target]
                if through_cursor:
                    yield through_cursor
                if _id(batch[-1][0]) >= target:
                    return
        raise CursorGone(sid, through)  # the log ended before the cursor

    async def _follow(
        self, sid: str, log: str, turn: str, position: str
    ) -> AsyncGenerator[list[tuple[str, bytes]], None]:
        """The entries after `position` as they are written, `(id, event JSON)`, a batch
        per `XREAD BLOCK`, checking the lease between blocks; ends once the stream is
        finished and nothing is left to read (a reader stops at the terminal itself)."""
        finished = await self._check_stall(sid)
        while True:
            # Once the state is final its terminal is in the log: read without blocking.
            block = None if finished else self.block_ms
            reply: Any = await self._readers.xread({log: position}, count=PAGE, block=block)
            if not reply:
                if finished:
                    return
                finished = await self._check_stall(sid)
                continue
            batch = []
            for raw_id, fields in reply[0][1]:
                position = raw_id.decode()
                if not position.startswith(turn):
                    raise UnknownStream(sid)
                batch.append((position, fields[b"e"]))
            yield batch

    async def _turn(self, sid: str, after: str, *, whole: bool = False) -> str:
        """The id prefix of the stream's turn, `<start_ms>-`, once its log is known to
        hold every entry after `after` (`whole`: every entry)."""
        cursor = check_cursor(after)
        log, meta, _, _ = self.keys(sid)
        async with self._readers.pipeline(transaction=False) as pipe:
            pipe.hget(meta, "start_ms")
            pipe.xrange(log, count=1)
            start_ms, first = await pipe.execute()
        if start_ms is None:
            raise UnknownStream(sid)
        # The log's first entry is `<start_ms>-0`, or, when nothing was logged, the
        # terminal a resumer or a cancel wrote at the turn's last id (`TERMINATE`),
        # which every id of the turn comes before; anything else was trimmed away.
        oldest = _id(first[0][0]) if first else (int(start_ms), 0)
        if oldest == (int(start_ms), MAX_ID_PART):
            oldest = (int(start_ms), 0)
        trimmed = oldest != (int(start_ms), 0)
        if (whole or after == "0") and trimmed:
            raise CursorGone(sid, after)
        # A cursor of this turn is `<start_ms>-<seq>`: a later `ms` names no entry here.
        if after != "0" and (cursor < oldest or cursor[0] != int(start_ms)):
            raise CursorGone(sid, after)
        # Every id of this turn starts so: another start is the next turn's.
        return f"{int(start_ms)}-"

    async def _read_page(self, log: str, low: str, high: str, count: int = PAGE) -> list[list[Any]]:
        """Up to `count` entries of `log` from `low` to `high` (XRANGE bounds), as Redis
        sends them: `[id, [b"e", event JSON]]` (`e` is an entry's only field)."""
        reply: Any = await self._pages.xrange(log, low, high, count=count)
        page: list[list[Any]] = reply
        return page

    async def _check_stall(self, sid: str) -> bool:
        """Whether the stream is finished. A running stream whose lease is gone has a
        dead producer: end it as `error(kind="stalled")`, unless a racer ended it first."""
        stalled = failed("unknown", "stalled", "the stream's producer stopped (its lease expired)")
        outcome = await self._end(sid, "error", stalled, self._readers)
        if outcome == "unknown":
            raise UnknownStream(sid)
        return outcome in _STATE_OF

    async def _end(self, sid: str, state: str, event: Event, client: aioredis.Redis) -> str:
        """Write the terminal `event` (TERMINATE) with no lease, as a resumer or a cancel
        (on `client`'s pool); returns `won`, `leased`, `unknown`, or the state another
        racer already set."""
        log, meta, lease, _ = self.keys(sid)
        reply = await self._terminate(
            keys=[log, meta, lease],
            args=[state, dump_event(event), self.retention_ms, "", "", MAX_ID_PART],
            client=client,
        )
        return _text(reply[0]) or ""

    # -- cancel ---------------------------------------------------------------------

    async def cancel(self, sid: str, reason: str = "user") -> bool:
        """Ask the stream to stop, from any process; idempotent. True if it reached a
        running stream. An unknown stream keeps the request for a late producer; a
        finished one is left as it is."""
        _, meta, lease, cancel = self.keys(check_sid(sid))
        reply = await self._cancel(
            keys=[meta, lease, cancel], args=[reason, self.ttl_ms, self.channel, sid]
        )
        if _text(reply[0]) != "running":
            return False
        if len(reply) == 1:  # no lease: its producer is gone, so cancel ends it here
            cancelled = Cancelled.make(provider="unknown", reason=reason)
            await self._end(sid, "cancelled", cancelled, self.redis)
        return True

    async def _listen(self) -> None:
        """Subscribe once to the cancel channel, before the first stream registers."""
        if self._listening is None:
            self._listening = asyncio.Event()
            self._listener = asyncio.create_task(self._listen_forever(self._listening))
        await self._listening.wait()

    async def _listen_forever(self, ready: asyncio.Event) -> None:
        while not self._closed:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                ready.set()
                async for message in pubsub.listen():
                    producer = self._producers.get(_text(message["data"]) or "")
                    if producer is not None:
                        producer.poll_cancel()
            except (RedisError, OSError) as exc:
                # A dead connection is not a dead stream: the heartbeat also reads the
                # cancel key, so a request is still seen, later.
                logger.warning("cancel channel lost ({}); resubscribing", exc)
                ready.set()
                await asyncio.sleep(self.lease_ms * RENEW_FRACTION / 1000)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # typed from redis 8.2

    async def aclose(self) -> None:
        """Cancel the streams this process produces (reason `shutdown`), let their
        terminals reach the log, and close the connections."""
        self._closed = True
        producers = list(self._producers.values())
        for producer in producers:
            producer.stop("shutdown")
        if producers:
            await asyncio.wait([p.task for p in producers if p.task is not None])
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        # The clients were given their pools, so closing them leaves the connections open.
        await self.redis.connection_pool.disconnect()
        await self._readers.connection_pool.disconnect()

    async def __aenter__(self) -> RedisLog:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _Producer:
    """One stream's producer: the upstream subscription, the tee, the writer and the
    heartbeat, all ending with the task."""

    def __init__(
        self, log: RedisLog, sid: str, token: str, start_ms: int, events: Observable[Event]
    ) -> None:
        self.log = log
        self.sid = sid
        self.token = token
        self.start_ms = start_ms
        self.events = events
        self.live = Live(sid)
        self.seq = 0
        self.pending: list[Entry] = []
        self.wake = asyncio.Event()
        self.ended = False
        self.writing = True
        self.last = ("unknown", 1)
        self.subscription: abc.DisposableBase | None = None
        self.task: asyncio.Task[None] | None = None
        self.heartbeat: asyncio.Task[None] | None = None
        self.reads: set[asyncio.Task[None]] = set()

    def begin(self, cancel_reason: str | None) -> None:
        """Subscribe now (a hot source loses nothing) and run the rest in a task."""
        if cancel_reason is not None:  # cancelled before it started: never subscribe
            self.stop(cancel_reason)
        else:
            loop = asyncio.get_running_loop()
            self.subscription = self.events.subscribe(
                self.on_next, self.on_error, self.on_completed, scheduler=AsyncIOScheduler(loop)
            )
            if self.ended:  # it ended (a limit) while subscribing: let it go now
                self.dispose()
            else:
                self.heartbeat = asyncio.create_task(self.beat())
        self.task = asyncio.create_task(self.run(), name=f"rxllm-log:{self.sid}")

    async def run(self) -> None:
        try:
            await self.write_all()
        finally:
            self.dispose()
            if self.heartbeat is not None:
                self.heartbeat.cancel()
            self.live._end()
            self.log._producers.pop(self.sid, None)

    # -- the tee: every event to the live response at once, and to the writer -------

    def on_next(self, event: Event) -> None:
        if self.ended:
            logger.bind(sid=self.sid).debug("event after the terminal dropped: {}", event.type)
            return
        if type(event) is Retry:  # a cancel from now on cuts the announced attempt
            assert isinstance(event, Retry)
            self.last = (event.next_provider, event.next_attempt)
        else:
            self.last = (event.provider, event.attempt)
        if self.seq >= self.log.max_events - 1 and not IS_TERMINAL[type(event)]:
            # One place left: the terminal. A live log is never trimmed.
            self.dispose()
            limit = f"the stream reached the log's max_events ({self.log.max_events})"
            self.emit(failed(event.provider, "limit", limit, attempt=event.attempt))
            return
        self.emit(event)

    def on_error(self, error: Exception) -> None:
        logger.bind(sid=self.sid).opt(exception=error).error("upstream raised")
        provider, attempt = self.last
        self.emit(failed(provider, "protocol", f"the upstream raised: {error!r}", attempt=attempt))

    def on_completed(self) -> None:
        if not self.ended:
            provider, attempt = self.last
            ended = "the upstream ended without a terminal"
            self.emit(failed(provider, "truncated", ended, attempt=attempt))

    def emit(self, event: Event) -> None:
        if self.ended:
            return
        entry = (f"{self.start_ms}-{self.seq}", event)
        self.seq += 1
        if IS_TERMINAL[type(event)]:
            self.ended = True
        self.live._push(entry)
        if self.writing:
            self.pending.append(entry)
        self.wake.set()

    def stop(self, reason: str) -> None:
        """Dispose the upstream and end with `cancelled`, as rxllm's own cancel does."""
        if self.ended:
            return
        self.dispose()
        self.emit(Cancelled.make(provider=self.last[0], attempt=self.last[1], reason=reason))

    def dispose(self) -> None:
        if self.subscription is not None:
            subscription, self.subscription = self.subscription, None
            subscription.dispose()

    def poll_cancel(self) -> None:
        """A cancel was published: read its reason, then stop."""

        async def read() -> None:
            with contextlib.suppress(RedisError, OSError):
                reason = _text(await self.log.redis.get(self.log.keys(self.sid)[3]))
                self.stop(reason or "cancelled")

        task = asyncio.get_running_loop().create_task(read())
        self.reads.add(task)  # a task nobody holds may be collected before it runs
        task.add_done_callback(self.reads.discard)

    # -- the writer -----------------------------------------------------------------

    def drop_log(self) -> None:
        """Stop writing and renewing: the live response goes on without the log, and
        the lease expires, so a resumer declares the stream stalled."""
        self.writing = False
        self.pending.clear()
        if self.heartbeat is not None and self.heartbeat is not asyncio.current_task():
            self.heartbeat.cancel()

    def gone(self) -> None:
        """Redis lost the stream (a restart, a flush): nobody else writes it, so the
        live response goes on, without the log."""
        logger.bind(sid=self.sid).error("the stream left Redis: the log is dropped")
        self.drop_log()

    async def write_all(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.pending and self.writing:
                batch = self.pending[:MAX_BATCH]
                del self.pending[:MAX_BATCH]
                await self.write(batch)
            if self.ended and (not self.pending or not self.writing):
                return

    async def write(self, batch: Sequence[Entry]) -> None:
        entry_id, last = batch[-1]
        terminal = IS_TERMINAL[type(last)]
        body = batch[:-1] if terminal else batch
        args: list[Any] = [self.token, self.log.max_events, self.log.ttl_ms]
        for eid, event in body:
            args.append(eid)
            args.append(dump_event(event))
        outcome = await self.send(body, args, (last, entry_id) if terminal else None)
        if outcome == "gone":
            self.gone()
        elif outcome in ("fenced", "over"):
            logger.bind(sid=self.sid).warning("lost the stream to another writer ({})", outcome)
            self.drop_log()
            self.stop("the stream's lease was lost")

    async def send(
        self, body: Sequence[Entry], args: list[Any], terminal: tuple[Event, str] | None
    ) -> str:
        """One round trip: the entries (APPEND), then the terminal (TERMINATE). Retried
        for half the lease; then the log is dropped and the live response goes on."""
        keys = list(self.log.keys(self.sid)[:3])
        budget = self.log.lease_ms / 2000
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        delay = 0.01
        while True:
            try:
                return await asyncio.wait_for(
                    self.round_trip(keys, body, args, terminal),
                    max(deadline - loop.time(), 0.001),
                )
            except (RedisError, OSError, TimeoutError) as exc:
                if loop.time() + delay >= deadline:
                    logger.bind(sid=self.sid).error(
                        "Redis failed for half the lease ({}): the log is dropped, the "
                        "live response goes on",
                        exc,
                    )
                    self.drop_log()
                    return "dropped"
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.2)

    async def round_trip(
        self,
        keys: list[str],
        body: Sequence[Entry],
        args: list[Any],
        terminal: tuple[Event, str] | None,
    ) -> str:
        # Two plain EVALSHAs rather than a pipeline: redis-py checks SCRIPT EXISTS on
        # every pipeline that holds a script, a round trip per batch.
        if body:
            outcome = _text(await self.log._append(keys=keys, args=args)) or ""
            if outcome != "ok":
                return outcome
        if terminal is not None:
            event, at = terminal
            reply = await self.log._terminate(
                keys=keys,
                args=[event.type, dump_event(event), self.log.retention_ms, self.token, at],
            )
            outcome = _text(reply[0]) or ""
            return "ok" if outcome == "won" else outcome
        return "ok"

    # -- the heartbeat --------------------------------------------------------------

    async def beat(self) -> None:
        lease, meta, log, cancel = (self.log.keys(self.sid)[i] for i in (2, 1, 0, 3))
        period = self.log.lease_ms * RENEW_FRACTION / 1000
        while not self.ended:
            await asyncio.sleep(period)
            try:
                reply = await self.log._renew(
                    keys=[lease, meta, log, cancel],
                    args=[self.token, self.log.lease_ms, self.log.ttl_ms],
                )
            except (RedisError, OSError) as exc:
                logger.bind(sid=self.sid).warning("lease renewal failed: {}", exc)
                continue
            answer = _text(reply[0])
            if answer == "gone":
                self.gone()
                return
            if answer == "fenced":
                self.drop_log()
                self.stop("the stream's lease was lost")
                return
            reason = _text(reply[1])
            if reason is not None:
                self.stop(reason)
