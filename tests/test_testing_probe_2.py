"""`rxllm.testing` as an app developer uses it: the provider a wire names is the one the
app uses in production, and every turn plays what it scripts or says why it cannot."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rxllm
from rxllm.local import WIRES
from rxllm.testing import fault, reply, scripted

HI = rxllm.ChatRequest(model="gpt-4.1-mini", messages=[rxllm.Message.user("hi")])


async def test_the_openai_wire_is_openais_own_provider() -> None:
    """It was the `local` preset: events said `provider="local"` where production says
    `openai`, and `max_tokens` went as `max_tokens` where OpenAI's provider sends
    `max_completion_tokens` (its API reference: `max_tokens` is deprecated there)."""
    request = HI.model_copy(update={"max_tokens": 50})
    async with scripted(reply("Hi."), wire="openai") as llm:
        events = [event async for event in llm.provider.astream(request)]
    assert {event.provider for event in events} == {"openai"}
    assert llm.requests[0]["max_completion_tokens"] == 50 and "max_tokens" not in llm.requests[0]


@pytest.mark.parametrize("wire", WIRES)
async def test_an_app_that_makes_its_own_provider_gets_the_base_url(wire: Any) -> None:
    """An app that builds its provider from settings (a base URL) rather than taking one."""
    async with scripted(reply("From settings."), wire=wire) as llm:
        app_provider = rxllm.provider(wire, api_key="local", base_url=llm.base_url)
        async with app_provider:
            record = await app_provider.complete(HI)
    assert record.text == "From settings." and record.provider == wire


async def test_a_pause_is_refused_on_a_wire_without_one() -> None:
    """`reply(stop="pause")` on the OpenAI wire ended `stop`: a test of the app's
    pause handling passed through the app's `stop` branch instead."""
    with pytest.raises(ValueError, match="stop='pause' is Anthropic's pause_turn"):
        scripted(reply("Searching.", stop="pause"), wire="google")
    async with asyncio.timeout(5), scripted(lambda prompt: reply(stop="pause")) as llm:
        record = await llm.provider.complete(HI)
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None and "scripted turn 1: stop='pause'" in error.message
    async with scripted(reply("Searching.", stop="pause"), wire="anthropic") as llm:
        paused = await llm.provider.complete(HI)
    assert paused.terminal.type == "done" and paused.terminal.stop_reason == "pause"


@pytest.mark.parametrize(
    ("name", "wire", "status"), [("rate_limited", "openai", 429), ("overloaded", "anthropic", 529)]
)
async def test_every_scripted_transient_refusal_refuses(name: str, wire: Any, status: int) -> None:
    """Two rate limits, then the answer: the second `fault("rate_limited")` played the
    local provider's greeting, as the server refuses only odd-numbered such requests."""
    async with scripted(fault(name), fault(name), reply("Recovered."), wire=wire) as llm:
        record = await llm.provider.complete(HI)
    assert record.text == "Recovered."
    assert [attempt.status for attempt in record.attempts] == [status, status, None]


async def test_a_rejection_the_request_cannot_trigger_says_so() -> None:
    """`fault("reject_param")` rejects `temperature`; scripted for a request without it,
    the turn played the local provider's greeting, and the app's test saw success."""
    async with asyncio.timeout(5), scripted(fault("reject_param"), reply("Unused.")) as llm:
        record = await llm.provider.complete(HI)
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None and not record.text, record.text
    assert "scripted turn 1: fault('reject_param')" in error.message
    assert len(record.attempts) == 1 and llm.turns_left == 1
