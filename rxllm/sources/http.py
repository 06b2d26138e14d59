"""The aiohttp source: one POST per subscription, its SSE body as raw chunks.

Each subscription runs one asyncio task on the running loop. Disposing the
subscription closes the response and cancels the task at once, so the server sees
the disconnect. Failures of the transport become one `Failed` item, never `on_error`.
Redirects are followed here, by hand (`rxllm.sources.redirects`), and a guarded
source (`rxllm.sources.guard`) checks every hop before connecting.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from loguru import logger
from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.scheduler.eventloop import AsyncIOScheduler
from yarl import URL

from rxllm.error_body import parse_error_body, request_id_of, retry_after_of
from rxllm.errors import ConfigError
from rxllm.events import ErrorKind, failed
from rxllm.fragments import SourceItem
from rxllm.operators._link import Operator
from rxllm.sources.guard import AddressRefused, SsrfGuard
from rxllm.sources.pool import SessionPool
from rxllm.sources.raw import ChunkReader
from rxllm.sources.redirects import REDIRECTS, next_hop
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "HttpRequest",
    "RawTap",
    "http_source",
    "raw_tap",
    "read_error_body",
    "redact",
    "status_message",
]

# An error body is read to its end, for its message and structured fields; a hostile
# one must not be read whole (the biggest real ones, pydantic lists, are a few KB).
MAX_ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class HttpRequest:
    """What to send: built by a provider, sent by the source. `body` is JSON, encoded once."""

    url: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Never in the repr: they carry the key."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Strings (API keys) that must never appear in an error, a log or a record."""


# Shorter "keys" are placeholders (`ollama`, `EMPTY`, `lm-studio`, llama.cpp's
# `sk-no-key-required`), not secrets; every real provider key is 32 characters or more.
MIN_SECRET_CHARS = 20


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each real credential replaced, as a whole token. A placeholder key is
    left alone: redacting `ollama` would turn Ollama's "try pulling it first with:
    ollama pull llama3" into nonsense, and it protects nothing."""
    for secret in secrets:
        if len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", "[redacted]", text)
    return text


# Statuses that mean "nothing here": the URL is what is wrong, so the message shows it.
WRONG_PATH_STATUSES = frozenset({404, 405})


def status_message(status: int, message: str, url: URL, secrets: tuple[str, ...]) -> str:
    """`HTTP 404 from http://host/v1/chat/completions: Not Found`: the URL (without
    its query, where a key could ride) only for a wrong path, since elsewhere the
    provider's words say what is wrong (and the recovery layer reads them)."""
    # aiohttp's and many servers' plain 404 page repeats the status: "404: Not Found".
    message = message.removeprefix(f"{status}: ")
    if status not in WRONG_PATH_STATUSES:
        return f"HTTP {status}: {message}"
    return f"HTTP {status} from {redact(str(url.with_query(None)), secrets)}: {message}"


async def read_error_body(
    response: aiohttp.ClientResponse, *, timeout: float, limit: int = MAX_ERROR_BODY_BYTES
) -> bytes:
    """An error response's body to its end, or its first `limit` bytes.

    One `read()` returns only what has arrived, so a body sent in two writes would lose
    its tail (and OpenAI's `param` with it): read until the end. The whole read gets
    `timeout` seconds (a trickling body would renew a per-read timeout forever) and
    ends with what came so far; a body longer than `limit` is cut and its connection
    closed rather than drained.
    """
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            while size < limit:
                part = await response.content.read(limit - size)
                if not part:
                    return b"".join(parts)
                parts.append(part)
                size += len(part)
    except (aiohttp.ServerTimeoutError, TimeoutError, aiohttp.ClientPayloadError):
        pass  # what arrived still names the rejection better than "stalled" would
    response.close()
    return b"".join(parts)


RawTap = Callable[[str, int, bytes], None]
raw_tap: ContextVar[RawTap | None] = ContextVar("rxllm_raw_tap", default=None)
"""Set to `tap(provider, attempt, data)` to see each piece of a streamed (2xx) body as
it arrived, before decoding (`rxllm stream --raw` keeps them for a bug report). A
context variable, so the hot path pays one lookup per response and no option exists
that every layer would have to pass down."""


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _loop_of(scheduler: abc.SchedulerBase | None) -> asyncio.AbstractEventLoop:
    if isinstance(scheduler, AsyncIOScheduler):
        return scheduler._loop
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "an rxllm HTTP stream must be subscribed inside a running asyncio event loop "
            "(or with scheduler=AsyncIOScheduler(loop)); use astream() or complete() "
            "from async code"
        ) from None


@asynccontextmanager
async def _session_for(
    session: aiohttp.ClientSession | SessionPool | None, guard: SsrfGuard | None
) -> AsyncIterator[aiohttp.ClientSession]:
    """The given session, or the pool's, left open; else one of our own (guarded if
    asked), closed after."""
    if isinstance(session, SessionPool):
        yield session.session()
    elif session is not None:
        yield session
    elif guard is not None:
        async with guard.session() as guarded:
            yield guarded
    else:
        async with aiohttp.ClientSession() as own:
            yield own


@functools.lru_cache(maxsize=64)
def _client_timeout(connect: float) -> aiohttp.ClientTimeout:
    """One (immutable) timeout per provider setting, not one per stream. No `sock_read`:
    aiohttp would re-arm a timer on every read; the source's watchdog does its job."""
    # `connect` covers the wait for a pooled connection, DNS, TCP and TLS alike.
    return aiohttp.ClientTimeout(total=None, connect=connect)


def http_source(
    request: HttpRequest,
    *,
    provider: str,
    attempt: int = 1,
    session: aiohttp.ClientSession | SessionPool | None = None,
    guard: SsrfGuard | None = None,
    connect_timeout: float = 10.0,
    read_timeout: float = 300.0,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_response_bytes: int | None = None,
) -> Observable[SourceItem]:
    """A cold Observable of the raw chunks of one streamed POST.

    With no `session`, each subscription opens and closes its own; a given session is
    used and left open. With a `guard`, every destination (the URL and each redirect
    hop, their IP literals and every address their names resolve to) is checked before
    connecting; a refusal is `error(kind="policy")`. A given session has its own
    connector, which the guard cannot reach, so the two together are a `ConfigError`.
    """
    if guard is not None and isinstance(session, aiohttp.ClientSession):
        raise ConfigError(
            "a session passed in cannot be SSRF-guarded (its connector resolves names "
            "unchecked): drop session=..., or pass ssrf_guard=False to trust the URL"
        )
    timeout = _client_timeout(connect_timeout)

    def subscribe(
        observer: abc.ObserverBase[SourceItem], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        loop = _loop_of(scheduler)
        response: aiohttp.ClientResponse | None = None
        disposed = False
        progress = 0  # the response's headers, then each read: what the watchdog sees
        stalled = False
        watchdog: asyncio.TimerHandle | None = None

        def fail(
            kind: ErrorKind,
            message: str,
            status: int | None = None,
            raw: str | None = None,
            **fields: Any,
        ) -> None:
            message = redact(message, request.secrets)
            raw = redact(raw, request.secrets) if raw is not None else None
            observer.on_next(
                failed(
                    provider,
                    kind,
                    message,
                    attempt=attempt,
                    status=status,
                    raw=raw,
                    **fields,
                )
            )

        async def deliver(client: aiohttp.ClientSession) -> None:
            nonlocal response, progress
            url = URL(request.url)
            headers = dict(request.headers)
            for hops in itertools.count():
                if guard is not None:
                    guard.check(url)
                async with client.post(
                    url, data=request.body, headers=headers, timeout=timeout, allow_redirects=False
                ) as resp:
                    response = resp
                    progress += 1
                    location = resp.headers.get(aiohttp.hdrs.LOCATION)
                    if resp.status in REDIRECTS and location is not None:
                        hop = next_hop(url, resp.status, location, headers, request.secrets, hops)
                        if isinstance(hop, str):
                            fail("policy", hop, status=resp.status)
                            return
                        logger.bind(provider=provider, attempt=attempt).info(
                            "following a {} redirect to {}{}",
                            resp.status,
                            redact(str(hop.url), request.secrets),
                            " (another origin: credentials dropped)" if hop.cross_origin else "",
                        )
                        url, headers = hop.url, hop.headers
                        continue
                    await read(resp)
                    return

        async def read(resp: aiohttp.ClientResponse) -> None:
            if resp.status >= 300:
                data = await read_error_body(resp, timeout=read_timeout)
                text = data.decode("utf-8", "replace")
                body = parse_error_body(text)
                retry_after = retry_after_of(resp.headers)
                fail(
                    "rejected" if 400 <= resp.status < 500 else "http",
                    status_message(resp.status, body.message, resp.url, request.secrets),
                    status=resp.status,
                    raw=text,
                    param=body.param,
                    code=body.code,
                    retry_after=body.retry_after if retry_after is None else retry_after,
                    request_id=request_id_of(resp.headers),
                )
                return
            reader = ChunkReader(observer, provider, attempt, max_line_bytes)
            nonlocal progress
            received = 0
            tap = raw_tap.get()
            async for data in resp.content.iter_any():
                if tap is not None:
                    tap(provider, attempt, data)
                received += len(data)
                progress += 1
                if max_response_bytes is not None and received > max_response_bytes:
                    fail("limit", f"the response exceeds max_response_bytes ({max_response_bytes})")
                    return
                problem = reader.feed(data)
                if disposed:
                    return
                if problem is not None:
                    observer.on_next(problem)
                    return
            problem = reader.close()
            if problem is not None:
                observer.on_next(problem)

        def watch(seen: int) -> None:
            """`read_timeout` without a byte: one timer per period, not one per read, so
            a silence is noticed after `read_timeout` seconds and before twice that."""
            nonlocal watchdog, stalled
            if task is None or task.done():
                return
            if progress != seen:
                watchdog = loop.call_later(read_timeout, watch, progress)
                return
            stalled = True
            task.cancel()

        async def run() -> None:
            nonlocal response, watchdog
            watchdog = loop.call_later(read_timeout, watch, progress)
            try:
                async with _session_for(session, guard) as client:
                    await deliver(client)
            except asyncio.CancelledError:
                if not stalled or disposed:
                    logger.bind(provider=provider, attempt=attempt).debug("http source cancelled")
                    raise
                asyncio.current_task().uncancel()  # type: ignore[union-attr]
                fail(
                    "stalled",
                    f"read_timeout expired: no bytes from {provider} for {read_timeout:g} s",
                )
            except AddressRefused as exc:
                fail("policy", str(exc))
            except aiohttp.ConnectionTimeoutError:
                fail(
                    "stalled",
                    f"connect_timeout expired: no connection to {provider} "
                    f"within {connect_timeout:g} s",
                )
            except (aiohttp.ServerTimeoutError, TimeoutError):
                fail(
                    "stalled",
                    f"read_timeout expired: no bytes from {provider} for {read_timeout:g} s",
                )
            except aiohttp.ClientPayloadError as exc:
                fail("truncated", f"the connection closed mid-stream: {exc}")
            except aiohttp.ClientError as exc:
                fail("transport", f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # a bug: surface it, as Rx does
                observer.on_error(exc)
                return
            finally:
                response = None
                if watchdog is not None:
                    watchdog.cancel()
            observer.on_completed()

        task: asyncio.Task[None] | None = None

        def start() -> None:
            nonlocal task
            if not disposed:
                task = loop.create_task(run())

        def hang_up() -> None:
            nonlocal disposed
            if disposed:
                return
            disposed = True
            if response is not None:
                response.close()  # drop the connection now, not at the task's next step
            if task is not None and asyncio.current_task() is not task:
                task.cancel()

        # asyncio objects belong to their loop's thread: from another thread, the task
        # is started and stopped through the loop's thread-safe door.
        if _running_loop() is loop:
            start()
        else:
            loop.call_soon_threadsafe(start)

        def dispose() -> None:
            if _running_loop() is loop:
                hang_up()
            elif not loop.is_closed():
                loop.call_soon_threadsafe(hang_up)

        return Disposable(dispose)

    return Operator(subscribe)
