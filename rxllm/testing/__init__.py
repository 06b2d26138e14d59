"""Test an app built on rxllm without a network: a provider that plays scripted turns.

```python
from rxllm.testing import call, fault, reply, scripted

async with scripted(
    reply("Let me check.", calls=[call("get_weather", city="Paris")]),
    reply("It is 21 °C in Paris."),
    wire="anthropic",                      # any wire: openai, openai-responses, google
) as llm:
    record = await my_agent(llm.provider)  # a real rxllm.Provider
    assert llm.requests[1]["messages"][-1]["content"][0]["type"] == "tool_result"
```

Each request the provider sends takes the next turn, in order (a request rxllm retries
is a request: `fault("reject_param")` then `reply(...)` plays a rejection and the
answer to the retry). A turn is `reply(...)`, `fault(name)` (any of the local
provider's faults and rejections: `rxllm.local.FAULTS`, `HTTP_FAULTS`, `REJECTIONS`)
or a function of the request's `Prompt` returning a `Script`. Once the turns run out,
the local provider answers as usual: it calls an offered tool the user asks about and
answers a tool's result. The turns travel over real HTTP on 127.0.0.1, in the wire's
own protocol, so what the app sees is what a real provider would make it see.

With pytest (and pytest-asyncio), the `rxllm_scripted` fixture starts one and closes it
after the test: `llm = await rxllm_scripted(reply("hi"))`. It is registered when rxllm
is installed; or add `pytest_plugins = ["rxllm.testing.pytest_plugin"]`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from rxllm.local.script import (
    Prompt,
    Reasoning,
    Refuse,
    Say,
    Script,
    ToolUse,
    asked_tool,
    sample_arguments,
)
from rxllm.local.server import WIRES, LocalServer, Turn
from rxllm.pipeline.provider import Provider

__all__ = ["Call", "Prompt", "Reply", "Scripted", "call", "fault", "reply", "scripted"]

Wire = Literal["openai", "openai-responses", "anthropic", "google"]

_call_ids = itertools.count(1)


@dataclass(frozen=True)
class Call:
    """A tool call to script: `name` None is the offered tool the user asks about (else
    the first offered); `arguments` None are sampled from the tool's schema."""

    name: str | None = None
    arguments: dict[str, Any] | None = None
    call_id: str | None = None


def call(name: str | None = None, /, call_id: str | None = None, **arguments: Any) -> Call:
    """`call("get_weather", city="Paris")`; `call()` picks an offered tool and fits its
    schema; `call("get_time")` with no keywords samples the tool's schema too."""
    return Call(name, arguments or None, call_id)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: reasoning, text (or a refusal), then tool calls."""

    text: str = ""
    reasoning: str = ""
    calls: tuple[Call, ...] = ()
    refusal: str = ""
    stop: Literal["stop", "tool_use", "length", "pause"] | None = None
    """The finish; by default `tool_use` when there are calls, else `stop`."""
    fragment: int = field(default=6)

    def __call__(self, prompt: Prompt) -> Script:
        steps: list[Reasoning | Say | Refuse | ToolUse] = []
        if self.reasoning:
            steps.append(Reasoning(self.reasoning))
        if self.text:
            steps.append(Say(self.text))
        if self.refusal:
            steps.append(Refuse(self.refusal))
        steps += [self._tool_use(c, prompt) for c in self.calls]
        stop = self.stop or ("tool_use" if self.calls else "stop")
        return Script(steps=tuple(steps), stop=stop, fragment=self.fragment)

    @staticmethod
    def _tool_use(spec: Call, prompt: Prompt) -> ToolUse:
        name = spec.name or asked_tool(prompt.text, prompt.tools) or next(iter(prompt.tools), None)
        if name is None:
            raise ValueError("call() without a name needs the request to offer a tool")
        arguments = spec.arguments
        if arguments is None:
            arguments = sample_arguments(prompt.tools.get(name, {}))
        call_id = spec.call_id or f"call_scripted_{next(_call_ids)}"
        return ToolUse(call_id, name, json.dumps(arguments) if arguments else "")


def reply(
    text: str = "",
    *,
    reasoning: str = "",
    calls: list[Call] | tuple[Call, ...] = (),
    refusal: str = "",
    stop: Literal["stop", "tool_use", "length", "pause"] | None = None,
) -> Reply:
    """A scripted answer; see `Reply`."""
    return Reply(text, reasoning, tuple(calls), refusal, stop)


def fault(name: str) -> str:
    """A turn that plays one of the local provider's faults or rejections."""
    return name


class Scripted:
    """A local provider server playing `turns`, and an rxllm provider talking to it."""

    def __init__(self, turns: tuple[Turn, ...], wire: Wire, pace: float, options: Any) -> None:
        self.server = LocalServer(pace=pace, turns=turns)
        self.wire = wire
        self._options = options
        self._provider: Provider | None = None

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            raise RuntimeError("start it first: `async with scripted(...) as llm:`")
        return self._provider

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The request bodies received, in order."""
        return self.server.requests

    @property
    def turns_left(self) -> int:
        return len(self.server.turns)

    async def start(self) -> Scripted:
        await self.server.start()
        self._provider = self.server.provider(self.wire, **self._options)
        return self

    async def close(self) -> None:
        await self.server.close()

    async def __aenter__(self) -> Scripted:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def scripted(*turns: Turn, wire: Wire = "openai", pace: float = 0.0, **options: Any) -> Scripted:
    """A provider playing `turns` (`async with scripted(...) as llm:` then `llm.provider`);
    `options` are the provider's (`idle_timeout=...`, `max_attempts=...`)."""
    if wire not in WIRES:
        raise ValueError(f"unknown wire {wire!r}: the local provider speaks {', '.join(WIRES)}")
    return Scripted(turns, wire, pace, options)
