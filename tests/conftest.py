from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from rxllm.local import LocalServer


@pytest.fixture
async def local_server() -> AsyncIterator[LocalServer]:
    """The embedded local provider on a free loopback port, streaming without pauses."""
    async with LocalServer(pace=0) as server:
        yield server


@pytest.fixture
async def serve_body() -> AsyncIterator[Callable[[bytes], Awaitable[str]]]:
    """Serve fixed SSE bytes to any POST on a loopback port; returns the base URL."""
    runners: list[web.AppRunner] = []

    async def start(body: bytes) -> str:
        async def handler(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(body)
            return response

        app = web.Application()
        app.router.add_post("/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        return f"http://127.0.0.1:{runner.addresses[0][1]}/v1"

    yield start
    for runner in runners:
        await runner.cleanup()
