"""A TCP proxy on loopback in front of a redis-server that can lose one reply: the
request reaches Redis and runs, its answer never reaches the client (a connection
that breaks after the send, as a failover or a dying load balancer does)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class ReplyCutter:
    """`cut_reply_to(marker)`: the connection whose request holds `marker` is closed as
    soon as Redis answers that request, the answer unsent. `cuts` counts them."""

    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.marker: bytes | None = None
        self.cuts = 0
        self.url = ""
        self.writers: list[asyncio.StreamWriter] = []
        self.pipes: set[asyncio.Task[None]] = set()

    def cut_reply_to(self, marker: bytes) -> None:
        self.marker = marker

    async def _pipe(self, client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        from_redis, to_redis = await asyncio.open_connection("127.0.0.1", self.redis_port)
        self.writers += (to_client, to_redis)
        cut = asyncio.Event()

        async def upstream() -> None:
            while data := await client.read(65536):
                if self.marker is not None and self.marker in data:
                    self.marker = None
                    cut.set()
                to_redis.write(data)
                await to_redis.drain()

        async def downstream() -> None:
            while data := await from_redis.read(65536):
                if cut.is_set():  # Redis ran the request: its answer is lost
                    self.cuts += 1
                    return
                to_client.write(data)
                await to_client.drain()

        # Either side ending (or the cut) ends the connection, both ways.
        both = [asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream())]
        await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
        for task in both:
            task.cancel()
        await asyncio.gather(*both, return_exceptions=True)
        to_client.close()
        to_redis.close()

    def _accept(self, client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        pipe = asyncio.ensure_future(self._pipe(client, to_client))
        self.pipes.add(pipe)
        pipe.add_done_callback(self.pipes.discard)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ReplyCutter]:
        server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.url = f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
        try:
            yield self
        finally:
            server.close()
            for writer in self.writers:  # every read then ends, and so every pipe
                writer.close()
            if self.pipes:
                await asyncio.wait(self.pipes, timeout=5)
