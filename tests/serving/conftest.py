from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from rxllm.local import LocalServer
from tests.serving.redis_server import RedisServer, require_redis


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """One redis-server per session (`--save "" --appendonly no`: nothing on disk)."""
    with RedisServer(require_redis()) as server:
        yield server.url


@pytest.fixture
def prefix() -> str:
    """A prefix per test: tests share the server, never keys or the cancel channel."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def paced_server() -> AsyncIterator[LocalServer]:
    """The local provider pacing its frames, so a stream is still running when a test
    acts on it."""
    async with LocalServer(pace=0.005) as server:
        yield server
