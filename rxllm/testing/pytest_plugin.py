"""The `rxllm_scripted` pytest fixture (registered as a pytest plugin when rxllm is
installed): `llm = await rxllm_scripted(reply("hi"), wire="google")`, closed after the
test. It needs pytest-asyncio, as any async fixture does; without it, pytest says so
when a test asks for the fixture (importing this plugin never fails)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from rxllm.testing import Scripted, scripted

_async_fixture: Any
try:
    from pytest_asyncio import fixture as _async_fixture
except ImportError:  # pragma: no cover - only without pytest-asyncio
    _async_fixture = pytest.fixture


@_async_fixture  # type: ignore[untyped-decorator]
async def rxllm_scripted() -> AsyncIterator[Callable[..., Awaitable[Scripted]]]:
    """Start scripted providers (`await rxllm_scripted(*turns, wire=..., **options)`);
    each is closed after the test."""
    started: list[Scripted] = []

    async def start(*turns: Any, **options: Any) -> Scripted:
        llm = await scripted(*turns, **options).start()
        started.append(llm)
        return llm

    yield start
    for llm in started:
        await llm.close()
