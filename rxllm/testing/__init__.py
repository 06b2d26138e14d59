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
or a function of the request's `Prompt` returning a `Script` or a `reply(...)`. Once
the turns run out, the local provider answers as usual: it calls an offered tool the
user asks about and answers a tool's result. The turns travel over real HTTP on
127.0.0.1, in the wire's own protocol, to the provider the wire is named after
(`openai`: OpenAI's own), so what the app sees and sends is what a real provider would
make it see and send.

The server runs on a thread of its own with its own event loop, so the provider
answers whatever loop the app runs on: `async with scripted(...)` in async code,
`with scripted(...)` in sync code (an app that calls `asyncio.run` itself, or sync
code that blocks a running loop while it waits). A function turn runs on that thread.
Leaving the block closes the provider's connections and stops the server, cutting a
response still streaming; nothing is left running.

A turn that cannot be played is refused where it is written (an unknown fault, a call
whose arguments are not a JSON object); one that fails while it plays (a function that
raises or returns something else) ends its request with a 404 error that names the
turn and says why, which no recovery retries.

With pytest (and pytest-asyncio), the `rxllm_scripted` fixture starts one and closes it
after the test: `llm = await rxllm_scripted(reply("hi"))`. It is registered when rxllm
is installed; or add `pytest_plugins = ["rxllm.testing.pytest_plugin"]`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, get_args

from rxllm.local.rejections import REJECTIONS
from rxllm.local.script import (
    FAULTS,
    HTTP_FAULTS,
    Prompt,
    Reasoning,
    Refuse,
    Say,
    Script,
    ToolUse,
    asked_tool,
    sample_arguments,
)
from rxllm.local.server import WIRES, LocalServer
from rxllm.local.server import Turn as ServerTurn
from rxllm.pipeline.provider import Provider, provider

__all__ = ["Call", "Prompt", "Reply", "Scripted", "Turn", "call", "fault", "reply", "scripted"]

Wire = Literal["openai", "openai-responses", "anthropic", "google"]
Stop = Literal["stop", "tool_use", "length", "pause"]

# Every name `fault()` plays, as `rxllm serve` lists them.
KNOWN_FAULTS = frozenset(FAULTS) | HTTP_FAULTS | frozenset(REJECTIONS)
# The key the provider sends: a placeholder (never redacted), as a test has no key.
PLACEHOLDER_KEY = "local"
# Seconds the server waits for itself to start, and lets responses still streaming
# finish when the block is left (then cuts them: the test is over).
START_SECONDS = 10.0
SHUTDOWN_SECONDS = 0.1


@dataclass(frozen=True)
class Call:
    """A tool call to script: `name` None is the offered tool the user asks about (else
    the first offered); `arguments` None are sampled from the tool's schema, else a
    dict that JSON can encode (a call's arguments are a JSON object)."""

    name: str | None = None
    arguments: dict[str, Any] | None = None
    call_id: str | None = None

    def __post_init__(self) -> None:
        for label, value in (("name", self.name), ("call_id", self.call_id)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"a call's {label} must be a str, got {type(value).__name__}")
            if value == "":  # else read as no value: the offered tool, a generated id
                raise ValueError(
                    f"a call's {label} is empty: leave it out to let the script choose one"
                )
        if self.arguments is None:
            return
        if not isinstance(self.arguments, dict):
            raise TypeError(
                f"arguments of call({self.name!r}) must be a dict (a JSON object), got "
                f"{type(self.arguments).__name__}: to script malformed arguments, play "
                "fault('malformed_tool') or a Script with a ToolUse of the exact JSON text"
            )
        try:
            json.dumps(self.arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"arguments of call({self.name!r}) are not JSON: {exc}") from None


def call(name: str | None = None, /, *, call_id: str | None = None, **arguments: Any) -> Call:
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
    stop: Stop | None = None
    """The finish; by default `tool_use` when there are calls, else `stop`."""
    fragment: int = field(default=6)

    def __post_init__(self) -> None:
        for label in ("text", "reasoning", "refusal"):
            value = getattr(self, label)
            if not isinstance(value, str):
                raise TypeError(f"reply's {label} must be a str, got {type(value).__name__}")
        if not isinstance(self.calls, tuple) or not all(isinstance(c, Call) for c in self.calls):
            raise TypeError("reply's calls takes a list of call(...): calls=[call('name', ...)]")
        if self.stop is not None and self.stop not in get_args(Stop):
            raise ValueError(f"reply's stop must be one of {get_args(Stop)}, got {self.stop!r}")
        if (
            isinstance(self.fragment, bool)
            or not isinstance(self.fragment, int)
            or self.fragment < 1
        ):
            raise ValueError(f"reply's fragment must be a positive int, got {self.fragment!r}")

    def __call__(self, prompt: Prompt) -> Script:
        return self.script(prompt)

    def script(self, prompt: Prompt, turn: int = 0) -> Script:
        """The script of this answer to `prompt`, as the `turn`-th turn: call ids are
        `call_scripted_<turn>_<n>`, the same whatever ran before (0: no turn number)."""
        steps: list[Reasoning | Say | Refuse | ToolUse] = []
        if self.reasoning:
            steps.append(Reasoning(self.reasoning))
        if self.text:
            steps.append(Say(self.text))
        if self.refusal:
            steps.append(Refuse(self.refusal))
        prefix = f"call_scripted_{turn}_" if turn else "call_scripted_"
        steps += [self._tool_use(c, prompt, f"{prefix}{n}") for n, c in enumerate(self.calls, 1)]
        stop = self.stop or ("tool_use" if self.calls else "stop")
        return Script(steps=tuple(steps), stop=stop, fragment=self.fragment)

    @staticmethod
    def _tool_use(spec: Call, prompt: Prompt, call_id: str) -> ToolUse:
        name = spec.name or asked_tool(prompt.text, prompt.tools) or next(iter(prompt.tools), None)
        if name is None:
            raise ValueError("call() without a name needs the request to offer a tool")
        arguments = spec.arguments
        if arguments is None:
            arguments = sample_arguments(prompt.tools.get(name, {}))
        return ToolUse(spec.call_id or call_id, name, json.dumps(arguments) if arguments else "")


Turn = Reply | Script | str | Callable[[Prompt], Script | Reply]
"""What one request gets: `reply(...)`, `fault(name)`, a `Script`, or a function of the
request's `Prompt` returning a `Script` or a `reply(...)`."""


def reply(
    text: str = "",
    *,
    reasoning: str = "",
    calls: list[Call] | tuple[Call, ...] = (),
    refusal: str = "",
    stop: Stop | None = None,
) -> Reply:
    """A scripted answer; see `Reply`."""
    if not isinstance(calls, list | tuple):
        raise TypeError("reply's calls takes a list of call(...): calls=[call('name', ...)]")
    return Reply(text, reasoning, tuple(calls), refusal, stop)


def fault(name: str) -> str:
    """A turn that plays one of the local provider's faults or rejections (`rxllm serve`
    lists them); an unknown name is a ValueError."""
    if name not in KNOWN_FAULTS:
        raise ValueError(f"unknown fault {name!r}; known: {', '.join(sorted(KNOWN_FAULTS))}")
    return name


def _on_wire(answer: Reply, wire: str) -> Reply:
    """`answer`, when `wire` can end a turn as it asks: only Anthropic pauses one (the
    other wires would end it `stop`, and a test of pause handling would test nothing)."""
    if answer.stop == "pause" and wire != "anthropic":
        raise ValueError(
            f"stop='pause' is Anthropic's pause_turn; the {wire} wire has no pause: "
            "script it with wire='anthropic'"
        )
    return answer


@dataclass(frozen=True)
class _Played:
    """A reply or a function turn, with its number (for its call ids). What it raises,
    the server answers with a 404 that says it (`LocalServer`)."""

    turn: Reply | Callable[[Prompt], Any]
    number: int
    wire: str

    def __call__(self, prompt: Prompt) -> Script:
        played = self.turn if isinstance(self.turn, Reply) else self.turn(prompt)
        if isinstance(played, Reply):
            return _on_wire(played, self.wire).script(prompt, self.number)
        if not isinstance(played, Script):
            raise TypeError(f"returned {type(played).__name__}, not a Script or reply(...)")
        return played


def _checked(turn: Any, number: int, wire: str) -> ServerTurn:
    if turn is reply or turn is Reply:
        raise TypeError(f"turn {number} is the function reply itself: call it, reply('...')")
    if isinstance(turn, str):
        return fault(turn)
    if isinstance(turn, Script):
        return turn
    if isinstance(turn, Reply):
        return _Played(_on_wire(turn, wire), number, wire)
    if callable(turn):
        return _Played(turn, number, wire)
    raise TypeError(
        f"turn {number} is not a turn ({type(turn).__name__}): a turn is reply(...), "
        "fault(name), a Script, or a function of the request's Prompt returning a Script "
        "or a reply(...)"
    )


class Scripted:
    """A local provider server playing `turns` on a thread of its own, and an rxllm
    provider talking to it: `async with` or `with` it."""

    def __init__(
        self, turns: tuple[ServerTurn, ...], wire: Wire, pace: float, options: Any
    ) -> None:
        self.server = LocalServer(pace=pace, turns=turns, shutdown_timeout=SHUTDOWN_SECONDS)
        self.wire = wire
        self._options = options
        self._provider: Provider | None = None
        self._thread: threading.Thread | None = None
        self._stop: Callable[[], object] | None = None
        self._stopped: Future[None] = Future()

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            raise RuntimeError("start it first: `async with scripted(...) as llm:`")
        return self._provider

    @property
    def base_url(self) -> str:
        """The server's URL for a provider of this wire, for an app that makes its own:
        `rxllm.provider(llm.wire, api_key="local", base_url=llm.base_url)`."""
        return self.server.base_url(self.wire)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The request bodies received, in order."""
        return self.server.requests

    @property
    def turns_left(self) -> int:
        return len(self.server.turns)

    async def start(self) -> Scripted:
        """Start the server and make the provider (`await llm.close()` when done)."""
        await asyncio.wait_for(asyncio.wrap_future(self._launch()), START_SECONDS)
        return self._connect()

    async def close(self) -> None:
        """Close the provider's connections and stop the server. A turn still
        streaming ends at once, `cancelled` (`Provider.aclose()`)."""
        if self._provider is not None:
            await self._provider.aclose()
        if self._halt():
            await asyncio.wrap_future(self._stopped)
            self._join()

    def __enter__(self) -> Scripted:
        self._launch().result(timeout=START_SECONDS)
        return self._connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # the provider's connections close with the loops they were made on (the
        # `asyncio.run` of sync code has ended): only the server is left to stop
        if self._halt():
            self._stopped.result(timeout=START_SECONDS)
            self._join()

    async def __aenter__(self) -> Scripted:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _launch(self) -> Future[None]:
        if self._thread is not None:
            raise RuntimeError("a scripted provider plays its turns once: make another")
        started: Future[None] = Future()
        self._thread = threading.Thread(
            target=asyncio.run, args=(self._serve(started),), name="rxllm-scripted", daemon=True
        )
        self._thread.start()
        return started

    async def _serve(self, started: Future[None]) -> None:
        """The server thread's loop: start, serve until halted, close."""
        try:
            try:
                await self.server.start()
            except BaseException as exc:
                started.set_exception(exc)
                return
            loop, halted = asyncio.get_running_loop(), asyncio.Event()
            self._stop = lambda: loop.call_soon_threadsafe(halted.set)
            started.set_result(None)
            try:
                await halted.wait()
            finally:
                await self.server.close()
        finally:
            self._stopped.set_result(None)

    def _connect(self) -> Scripted:
        """The provider for the started server; a bad option stops the server again.
        It is the provider the wire is named after (`openai`: OpenAI's own, with its
        name and body keys), so the app sees and sends what it does in production."""
        try:
            options = {"api_key": PLACEHOLDER_KEY, **self._options}
            self._provider = provider(self.wire, base_url=self.base_url, **options)
        except BaseException:
            if self._halt():
                self._stopped.result(timeout=START_SECONDS)
                self._join()
            raise
        return self

    def _halt(self) -> bool:
        """Ask the server to stop; False when it is not running."""
        stop, self._stop = self._stop, None
        if stop is None:
            return False
        stop()
        return True

    def _join(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=START_SECONDS)  # it has closed its loop already


def scripted(*turns: Turn, wire: Wire = "openai", pace: float = 0.0, **options: Any) -> Scripted:
    """A provider playing `turns` (`async with scripted(...) as llm:` or, in sync code,
    `with scripted(...) as llm:`, then `llm.provider`); `options` are the provider's
    (`idle_timeout=...`, `max_attempts=...`)."""
    if wire not in WIRES:
        raise ValueError(f"unknown wire {wire!r}: the local provider speaks {', '.join(WIRES)}")
    if isinstance(pace, bool) or not isinstance(pace, int | float) or not pace >= 0:
        raise ValueError(f"pace must be a number of seconds >= 0, got {pace!r}")
    checked = tuple(_checked(turn, number, wire) for number, turn in enumerate(turns, 1))
    guarded = options.get("ssrf_guard") is True and options.get("allow_private_network") is not True
    if "redirect_private" in checked and not guarded:
        raise ValueError(
            "fault('redirect_private') sends the client to http://10.0.0.1, a real address "
            "on many networks: play it only with a guard, scripted(..., ssrf_guard=True, "
            "allow_private_network=['127.0.0.1/32'])"
        )
    return Scripted(checked, wire, pace, options)
