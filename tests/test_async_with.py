"""`async with p.astream(req) as events`: leaving the block hangs up at once, even
while the iterator object is still referenced."""

from __future__ import annotations

import asyncio

import pytest

import rxllm
from rxllm.local import LocalServer

HANG = rxllm.ChatRequest(model="fault/hang", messages=[{"role": "user", "content": "hi"}])


async def test_leaving_the_block_hangs_up_while_the_iterator_lives(
    local_server: LocalServer,
) -> None:
    p = rxllm.provider("local", base_url=local_server.url)
    async with p.astream(HANG) as events:
        async for event in events:
            assert event.provider == "local"
            break
    # `events` is still referenced here: the block's exit hung up, not the collector.
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    assert local_server.disconnects == 1
    with pytest.raises(StopAsyncIteration):
        await events.__anext__()


async def test_an_exception_out_of_the_block_hangs_up(local_server: LocalServer) -> None:
    p = rxllm.provider("local", base_url=local_server.url)
    with pytest.raises(LookupError):
        async with p.astream(HANG) as events:
            async for _event in events:
                raise LookupError("the consumer's own")
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    with pytest.raises(StopAsyncIteration):
        await events.__anext__()


async def test_an_iterator_dropped_in_another_thread_hangs_up_on_its_loop(
    local_server: LocalServer,
) -> None:
    """The source runs in the consumer's task: dropped elsewhere, the stream hands what
    is left of it to its loop, which unwinds it there."""
    p = rxllm.provider("local", base_url=local_server.url)
    held = [p.astream(HANG)]
    first = await anext(held[0])
    assert first.provider == "local"
    await asyncio.to_thread(held.clear)  # the last reference goes in that thread
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    assert local_server.disconnects == 1
    await p.aclose()
