"""Moonshot's Kimi refuses a forced tool choice while the model thinks: 400 "tool_choice
'required' is incompatible with thinking enabled" (AstrBotDevs/AstrBot#7805, the body in
tests/rejections_extra/moonshot__tool_choice_required_incompatible_with_thinking_enabled
.json) and "tool_choice 'specified' is incompatible with thinking enabled" for a named
tool (can1357/oh-my-pi#827, #1077: kimi-k2.6, which thinks by default). kimi-k2-thinking
thinks always, kimi-k2.5 unless `thinking` is `{"type": "disabled"}`
(platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model). As with Anthropic's
extended thinking, such a choice is a ConfigError at the call, with no request sent."""

from __future__ import annotations

from typing import Any

import pytest

import rxllm
from tests.support import Recorder, Serve

KEY = "sk-moonshot-test-0123456789abcdef"
TOOLS = [rxllm.Tool(name="get_time", description="The time now.")]
REFUSED = (
    400,
    {
        "error": {
            "message": "tool_choice 'required' is incompatible with thinking enabled",
            "type": "invalid_request_error",
        }
    },
)
OFF = {"thinking": {"type": "disabled"}}
ON = {"thinking": {"type": "enabled"}}


def ask(model: str, choice: str, params: dict[str, Any]) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.user("What time is it?")],
        tools=TOOLS,
        tool_choice=choice,
        params=params,
    )


@pytest.mark.parametrize("choice", ["required", "get_time"])
@pytest.mark.parametrize(
    ("model", "params"),
    [
        ("kimi-k2.5", {}),
        ("kimi-k2.6", {}),
        ("kimi-k2-thinking", {}),
        ("kimi-k2-thinking-turbo", {}),
        ("kimi-k2.7-code-highspeed", {}),
        ("kimi-k2.6", ON),
    ],
)
async def test_a_forced_choice_while_kimi_thinks_is_refused_before_sending(
    serve: Serve, model: str, params: dict[str, Any], choice: str
) -> None:
    # Before: the request went, the 400 came back, and the turn went on as the
    # degraded retry had it, or ended in the 400.
    recorder = Recorder(REFUSED)
    with pytest.raises(rxllm.ConfigError, match=f"moonshot refuses tool_choice={choice!r}"):
        async with rxllm.provider(
            "moonshot", api_key=KEY, base_url=await serve(recorder.handle)
        ) as p:
            await p.complete(ask(model, choice, params))
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("model", "params", "choice", "sent"),
    [
        ("kimi-k2.5", OFF, "required", "required"),
        ("kimi-k2.6", OFF, "get_time", {"type": "function", "function": {"name": "get_time"}}),
        ("kimi-k2.5", {}, "auto", "auto"),
        ("kimi-k2-thinking", ON, "none", "none"),
        ("moonshot-v1-8k", {}, "required", "required"),  # no thinking
        ("kimi-k2-turbo-preview", {}, "required", "required"),
    ],
)
async def test_the_choices_thinking_allows_are_sent(
    serve: Serve, model: str, params: dict[str, Any], choice: str, sent: Any
) -> None:
    recorder = Recorder()
    async with rxllm.provider("moonshot", api_key=KEY, base_url=await serve(recorder.handle)) as p:
        record = await p.complete(ask(model, choice, params))
    assert record.ok, record.terminal
    [only] = recorder.requests
    assert only["body"]["tool_choice"] == sent
    assert only["body"].get("thinking") == params.get("thinking")


async def test_a_fallback_moves_on_to_a_provider_that_takes_the_choice(serve: Serve) -> None:
    moonshot, openai = Recorder(REFUSED), Recorder()
    first = rxllm.provider("moonshot", api_key=KEY, base_url=await serve(moonshot.handle))
    second = rxllm.provider("openai", api_key=KEY, base_url=await serve(openai.handle))
    record = await rxllm.fallback([first, second]).complete(ask("kimi-k2.6", "get_time", {}))
    await first.aclose()
    await second.aclose()
    assert record.ok and record.provider == "openai"
    assert moonshot.requests == []
    [only] = openai.requests
    assert only["body"]["tool_choice"] == {"type": "function", "function": {"name": "get_time"}}
