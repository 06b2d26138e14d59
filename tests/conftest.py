from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from aiohttp import web

from rxllm.local import LocalServer
from tests.support import CAPTURES, HAVE_CAPTURES, NO_CAPTURES, Handler, Serve, ServeBody


@pytest.fixture
async def local_server() -> AsyncIterator[LocalServer]:
    """The embedded local provider on a free loopback port, streaming without pauses."""
    async with LocalServer(pace=0) as server:
        yield server


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Serve `handler` for every request on a free loopback port; returns the base URL
    to give a provider (`http://127.0.0.1:<port>/v1`; every path reaches `handler`)."""
    runners: list[web.AppRunner] = []

    async def start(handler: Handler) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        return f"http://127.0.0.1:{runner.addresses[0][1]}/v1"

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
def serve_body(serve: Serve) -> ServeBody:
    """Serve fixed SSE bytes to any POST on a loopback port; returns the base URL."""

    async def start(body: bytes) -> str:
        async def handler(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(body)
            return response

        return await serve(handler)

    return start


# Without the captures (a user's clone), every test that reads them skips with one
# reason that says how to get them, instead of failing on a missing file or skipping
# as "got empty parameter set".
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if HAVE_CAPTURES:
        return
    for mark in item.iter_markers("skip"):
        if "empty parameter set" in str(mark.kwargs.get("reason", "")):
            pytest.skip(NO_CAPTURES)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    except FileNotFoundError as exc:
        if not HAVE_CAPTURES and str(CAPTURES) in str(exc.filename):
            pytest.skip(NO_CAPTURES)
        raise


@pytest.fixture
def logs() -> Iterator[list[str]]:
    """Every rxllm log line down to TRACE, with its bound fields and any exception (the
    tests that no secret ever shows read them all)."""
    from loguru import logger

    lines: list[str] = []

    def sink(message: Any) -> None:
        record = message.record
        lines.append(f"{message} {record['extra']!r} {record['exception']!r}")

    sink_id = logger.add(sink, level="TRACE", backtrace=True, diagnose=True)
    logger.enable("rxllm")
    try:
        yield lines
    finally:
        logger.disable("rxllm")
        logger.remove(sink_id)
