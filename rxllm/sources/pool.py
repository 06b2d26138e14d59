"""A provider's pooled HTTP session: connections reused from one turn to the next."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncGenerator
from typing import Any, NamedTuple, Protocol

import aiohttp

from rxllm.sources.guard import GuardedResolver, SsrfGuard
from rxllm.sources.proxy import environment_proxy

__all__ = ["SessionPool"]


class Transfer(Protocol):
    """A response streaming over the pool's session (`rxllm.sources.http`)."""

    def cut(self, kind: None, message: str) -> None: ...


class _Entry(NamedTuple):
    session: aiohttp.ClientSession
    keeper: AsyncGenerator[None, None]


class SessionPool:
    """One `aiohttp.ClientSession` per event loop, created on first use (a session
    belongs to the loop it was made on), guarded when the provider is, and closed by
    `aclose()`. A turn that ends cleanly leaves its connection here for the next one,
    so a provider pays one TCP and TLS handshake, not one per turn and per retry.

    The pool has no connection limit (aiohttp's default is 100): a stream holds its
    connection for its whole length, so with a cap the 101st concurrent stream would
    wait for the pool until `connect_timeout` failed it. A caller who wants a cap
    passes a session of its own.

    `aclose()` with turns still streaming ends each of them with `cancelled` at once:
    closing a session does not wake a response waiting for bytes, which would wait for
    `read_timeout`. A turn waiting between attempts (a backoff) ends with `cancelled`
    when its wait is over, instead of sending its next attempt (`closings`).

    A provider used and forgotten without `aclose()` leaks nothing. A pool that is
    dropped closes its connections at once. A pool that outlives its loop (a provider
    kept in a global) is closed when the loop shuts down: each session is held open by
    a small async generator whose `finally` closes it, and the loop finalizes its async
    generators on shutdown (`asyncio.run`, pytest-asyncio) while it still runs.

    An unguarded session goes through the proxy the environment names, as the SDKs'
    httpx clients do: `HTTP_PROXY` for http URLs, `HTTPS_PROXY` for https ones (a
    CONNECT tunnel), `ALL_PROXY` for either without its own, none for a host `NO_PROXY`
    names (the variables are read when the session opens; lowercase wins, as in
    urllib). Not aiohttp's `trust_env=True`, which also sends `.netrc` credentials to
    any host they name (a `default` entry: to every host, and a request that carries
    its own `Authorization` is then refused): httpx reads no `.netrc` unless asked
    either. A guarded session never uses a proxy: the guard checks the address it
    connects to and pins the connection there, and through a proxy the proxy would
    resolve the name and connect, unchecked (`SsrfGuard.open`)."""

    def __init__(self, guard: SsrfGuard | None = None) -> None:
        self.guard = guard
        self._entries: dict[asyncio.AbstractEventLoop, _Entry] = {}
        self.streaming: set[Transfer] = set()
        """The responses streaming over the pool's sessions, which `aclose()` cuts (a
        source adds itself while it streams)."""
        self.closings = 0
        """How many times `aclose()` ran: a turn that was waiting between attempts when
        it did (a backoff) sends no next one (`rxllm.pipeline.provider`)."""
        weakref.finalize(self, _close_now, self._entries)

    def session(self) -> aiohttp.ClientSession:
        """The running loop's session, opened now if it has none (or it was closed)."""
        loop = asyncio.get_running_loop()
        entry = self._entries.get(loop)
        if entry is None or entry.session.closed:
            # Other threads' loops add and drop their entries meanwhile: walk a copy
            # (`list()` of a dict is one step under the GIL), drop what is still there.
            for stale in [other for other in list(self._entries) if other.is_closed()]:
                self._entries.pop(stale, None)  # closed with its loop
            if self.guard is not None:
                session, resolver = self.guard.open()
            else:
                session = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=0),
                    request_class=environment_proxy(),
                )
                resolver = None
            entry = self._entries[loop] = _Entry(session, _keeper(session, resolver))
        return entry.session

    async def aclose(self) -> None:
        """Close every connection: this loop's now, a running loop's on that loop, an
        idle loop's (another test's, between its runs) at once, as if dropped: a close
        scheduled there would run only when it runs again, and that loop's shutdown
        closes the same generator, which asyncio reports as already running."""
        current = asyncio.get_running_loop()
        self.closings += 1
        for transfer in list(self.streaming):  # each on its own loop
            transfer.cut(None, "the provider was closed (aclose()) while the turn streamed")
        entries = list(self._entries.items())
        for loop, _ in entries:  # not clear(): an entry another thread adds now stays
            self._entries.pop(loop, None)
        for loop, entry in entries:
            if loop is current:
                await entry.keeper.aclose()
            elif loop.is_running():
                asyncio.run_coroutine_threadsafe(entry.keeper.aclose(), loop)
            elif not loop.is_closed():
                _close_now({loop: entry})


def _close_now(entries: dict[asyncio.AbstractEventLoop, _Entry]) -> None:
    """Close the sessions' connections without awaiting: the pool is being dropped."""
    for entry in entries.values():
        connector = entry.session.connector
        if connector is not None and not connector.closed:
            # `close()` is a coroutine, and nothing can await it here. `_close()` is its
            # synchronous part: every transport closed now, the connector (and so the
            # session) marked closed; what is left to await is only the sockets' end.
            with contextlib.suppress(Exception):
                connector._close()
        # With the connections closed, the keeper's `finally` has nothing to wait for:
        # finish it now, so the loop is not left a task to close it.
        _finish_now(entry.keeper.aclose())
    entries.clear()


def _finish_now(step: Any) -> None:
    """Drive an async generator's step (`__anext__()`, `aclose()`: awaitables with
    `send`) that should not suspend to its end, synchronously."""
    try:
        step.send(None)
    except BaseException:  # StopIteration: it finished; anything else: it is over too
        return
    step.close()  # it wanted to wait after all: abandon it


def _keeper(
    session: aiohttp.ClientSession, resolver: GuardedResolver | None
) -> AsyncGenerator[None, None]:
    """An async generator, already started, whose closing closes `session`."""

    async def keep() -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await session.close()
            if resolver is not None:
                await resolver.close()

    keeper = keep()
    # Run it to its `yield` now, synchronously (nothing is awaited before it): the loop
    # registers it on first iteration, and only a started generator runs `finally`.
    _finish_now(keeper.__anext__())
    return keeper
