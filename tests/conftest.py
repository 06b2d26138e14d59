from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from rxllm.local import LocalServer


@pytest.fixture
async def local_server() -> AsyncIterator[LocalServer]:
    """The embedded local provider on a free loopback port, streaming without pauses."""
    async with LocalServer(pace=0) as server:
        yield server
