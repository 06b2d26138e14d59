"""The local provider's transport faults, each met as DESIGN.md says: a reset before
output is retried as it is, after output it surfaces with what came; a slow steady
tool call is no stall; bytes that are not UTF-8 are replaced (WHATWG), not fatal."""

from __future__ import annotations

from typing import Any

import rxllm
from rxllm.local import LocalServer


def ask(model: str, tools: bool = False) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.user("weather in Paris?")],
        tools=[rxllm.Tool(name="get_weather")] if tools else [],
    )


def local(server: LocalServer, **options: Any) -> rxllm.Provider:
    return rxllm.provider("local", base_url=server.url, **options)


async def test_a_reset_before_output_is_retried_then_surfaces(local_server: LocalServer) -> None:
    rec = await local(local_server, max_attempts=2).complete(ask("fault/reset_before_output"))
    assert len(local_server.requests) == 2, "nothing was committed: one identical retry"
    assert local_server.requests[0] == local_server.requests[1]
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind in ("truncated", "transport")
    assert rec.terminal.error.retryable
    assert [a.committed for a in rec.attempts] == [False, False]


async def test_a_reset_after_output_surfaces_with_what_came(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/reset_after_output"))
    assert len(local_server.requests) == 1, "output was committed: never retried"
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind in ("truncated", "transport")
    assert rec.reasoning  # what arrived before the reset is kept


async def test_a_slow_drip_is_not_a_stall(local_server: LocalServer) -> None:
    rec = await local(local_server, idle_timeout=0.2).complete(ask("fault/slow_drip", True))
    assert rec.terminal.type == "done" and rec.duration > 0.5
    assert rec.tool_calls[0].arguments == {"city": "Paris", "unit": "celsius", "days": 3}


async def test_bytes_that_are_not_utf8_are_replaced(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/invalid_utf8"))
    assert rec.terminal.type == "done"
    assert rec.text.startswith("Hel\ufffdlo from rxllm")
