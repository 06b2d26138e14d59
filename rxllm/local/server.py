"""The embedded local provider: an aiohttp.web server on 127.0.0.1 speaking each wire.

It plays scripted turns (`rxllm.local.script`) through per-protocol encoders, with
realistic pacing by default, and plays faults on request (model `fault/<name>`):
scripted stream faults (`FAULTS`), HTTP-level faults (`HTTP_FAULTS`), and rejections
as real endpoints word them (`rxllm.local.rejections.REJECTIONS`: `reject_param`,
`reject_two_params`, `reject_max_tokens`, `reject_images`, `reject_tools`,
`nvidia_opaque_500`, `openrouter_502`, `error_after_200`, `overloaded`,
`rate_limited`, `quota_worded_429`, `context_length`, `bad_key`, `quota`), each played
only while its trigger holds in the request body. Every error response carries an `x-request-id`.
It records what it received and whether clients hung up, so tests can check both ends.
The redirect faults (`redirect_private`, `redirect_other_origin`, `redirect_loop`)
answer 307; the other origin is a second loopback server, started on first use, that
records the headers it got and answers as usual.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib
import itertools
import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any

from aiohttp import web

from rxllm.local.rejections import REJECTIONS, Refusal, refusal_for
from rxllm.local.script import (
    FAULTS,
    HTTP_FAULTS,
    Prompt,
    Reasoning,
    Say,
    Script,
    script_for,
    words,
)

if TYPE_CHECKING:
    from rxllm.pipeline.provider import Provider

__all__ = ["WIRES", "LocalServer", "Turn", "shared_server_url"]

WIRES = ("openai", "openai-responses", "anthropic", "google")
"""The protocols the server speaks, as `LocalServer.provider` names them."""

Turn = Script | str | Callable[[Prompt], Script]
"""A scripted answer to one request: a script, a fault's name, or a function of what
the request asks (`rxllm.testing` builds these)."""

# Wire encoders by route; each module has PATH, prompt_of(body) -> Prompt and
# frames(script, body).
ENCODERS = ("wire_openai_chat", "wire_anthropic", "wire_openai_responses", "wire_google")

# What `hang` sends between keepalives, and the size of the `long_line` fault's line.
KEEPALIVE_SECONDS = 0.02
LONG_LINE_BYTES = 2 * 1024 * 1024
DRIP_SECONDS = 0.05
# Where `redirect_private` points: a private address no test may ever reach.
PRIVATE_REDIRECT_ORIGIN = "http://10.0.0.1"


def _encoders() -> list[ModuleType]:
    modules = []
    for name in ENCODERS:
        try:
            modules.append(importlib.import_module(f"rxllm.local.{name}"))
        except ModuleNotFoundError:  # a protocol whose encoder is not written yet
            continue
    return modules


class LocalServer:
    """`async with LocalServer(pace=0) as server:` then talk to `server.url`."""

    def __init__(
        self,
        pace: float = 0.02,
        host: str = "127.0.0.1",
        port: int = 0,
        turns: Iterable[Turn] = (),
        shutdown_timeout: float = 60.0,
    ) -> None:
        self.pace = pace
        self.shutdown_timeout = shutdown_timeout
        """Seconds `close()` lets the responses still streaming finish before it cuts
        them (aiohttp's graceful shutdown; a `hang` never finishes by itself)."""
        self.turns = collections.deque(turns)
        """What the next requests get, one each, before the usual story: a `Script`, a
        fault's name, or a function of the `Prompt` returning a `Script`."""
        self.host = host
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.turns_played = 0
        """How many of `turns` requests have taken."""
        self.in_flight = 0
        """Requests being answered now (a response still streaming among them)."""
        self.connections: set[Any] = set()
        """The client ends (host, port) requests came from: one per TCP connection."""
        self.disconnects = 0
        self.disconnected = asyncio.Event()
        self.rejection_counts: Counter[str] = Counter()
        """Requests received per rejection name (`overloaded` refuses the odd ones)."""
        self.other_origin_requests: list[dict[str, Any]] = []
        """What reached the other origin of `redirect_other_origin`: `headers`, `body`."""
        self._runner: web.AppRunner | None = None
        self._other_runner: web.AppRunner | None = None
        self._other_port = 0
        self.app = web.Application()
        self.other_app = web.Application()
        for encoder in _encoders():
            self.app.router.add_post(encoder.PATH, self._handler(encoder))
            self.other_app.router.add_post(encoder.PATH, self._other_origin_handler(encoder))

    @property
    def url(self) -> str:
        """The base URL to give a provider (`.../v1`)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    def base_url(self, wire: str) -> str:
        """The base URL a provider of `wire` is given (Gemini's paths begin `/v1beta`)."""
        return self.root + "/v1beta" if wire == "google" else self.url

    def provider(self, wire: str = "openai", **options: Any) -> Provider:
        """An rxllm provider talking to this server in `wire`'s protocol (`openai`,
        `openai-responses`, `anthropic`, `google`); `options` are the provider's."""
        from rxllm.pipeline.provider import provider

        if wire == "openai":
            return provider("local", base_url=self.url, **options)
        if wire not in WIRES:
            raise ValueError(f"unknown wire {wire!r}: the local server speaks {', '.join(WIRES)}")
        return provider(wire, api_key="local", base_url=self.base_url(wire), **options)

    async def start(self) -> LocalServer:
        self._runner = self._runner_of(self.app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1]
        return self

    def _runner_of(self, app: web.Application) -> web.AppRunner:
        return web.AppRunner(app, access_log=None, shutdown_timeout=self.shutdown_timeout)

    async def close(self) -> None:
        for runner in (self._runner, self._other_runner):
            if runner is not None:
                await runner.cleanup()
        self._runner = self._other_runner = None

    async def other_origin(self) -> str:
        """The root URL of the second server (same host, another port: another origin),
        started on first use."""
        if self._other_runner is None:
            self._other_runner = self._runner_of(self.other_app)
            await self._other_runner.setup()
            await web.TCPSite(self._other_runner, self.host, 0).start()
            self._other_port = self._other_runner.addresses[0][1]
        return f"http://{self.host}:{self._other_port}"

    def _other_origin_handler(self, encoder: ModuleType) -> Any:
        async def handle(request: web.Request) -> web.StreamResponse:
            body = await request.json()
            if "model" in request.match_info:
                body.setdefault("model", request.match_info["model"])
            self.other_origin_requests.append({"headers": dict(request.headers), "body": body})
            script = script_for(replace(encoder.prompt_of(body), model="answer"))
            return await self._stream(request, encoder.frames(script, body), self.pace)

        return handle

    async def __aenter__(self) -> LocalServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _handler(self, encoder: ModuleType) -> Any:
        async def handle(request: web.Request) -> web.StreamResponse:
            self.in_flight += 1
            try:
                return await answer(request)
            finally:
                self.in_flight -= 1

        async def answer(request: web.Request) -> web.StreamResponse:
            try:
                body = await request.json()
            except ValueError:
                return _error_response(400, {"error": {"message": "body is not JSON"}})
            if not isinstance(body, dict):
                kind = _JSON_NAMES.get(type(body).__name__, type(body).__name__)
                return _invalid(f"the body is a JSON {kind}, not an object")
            if "model" in request.match_info:
                body.setdefault("model", request.match_info["model"])
            self.requests.append(body)
            if request.transport is not None:
                self.connections.add(request.transport.get_extra_info("peername"))
            try:
                prompt = encoder.prompt_of(body)
            except (AttributeError, TypeError, ValueError) as exc:  # a shape the wire lacks
                return _invalid(f"the body does not fit {encoder.PATH} ({exc})")
            scripted = self.turns.popleft() if self.turns else None
            if scripted is not None:
                self.turns_played += 1
            if isinstance(scripted, str):  # a fault played as if the model had named it
                prompt = replace(prompt, model=f"fault/{scripted}")
            model = prompt.model
            fault = model.removeprefix("fault/") if model.startswith("fault/") else None
            if fault in HTTP_FAULTS:
                return await self._http_fault(fault, request, encoder, body)
            if fault in REJECTIONS:
                self.rejection_counts[fault] += 1
                # a scripted turn is one request's answer: the first of its kind, whatever
                # the requests before it (a transient refusal refuses odd ones only)
                number = 1 if isinstance(scripted, str) else self.rejection_counts[fault]
                refusal = refusal_for(fault, body, encoder.PATH, number)
                if refusal is not None:
                    return await self._refuse(request, refusal)
                if isinstance(scripted, str):  # scripted for a request it cannot refuse
                    return _script_error(
                        self.turns_played,
                        f"fault({fault!r}) refuses only a request that sends what it "
                        "rejects (rxllm.local.rejections), and this one does not",
                    )
                prompt = replace(prompt, model="answer")  # the trigger no longer holds
            elif fault is not None and fault not in FAULTS:
                known = sorted(FAULTS) + sorted(HTTP_FAULTS) + sorted(REJECTIONS)
                message = f"unknown fault {fault!r}; known: {known}"
                return _error_response(404, {"error": {"message": message}})
            if scripted is None or isinstance(scripted, str):
                frames: Iterable[bytes] = encoder.frames(script_for(prompt), body)
            else:
                try:  # rendered now, so that a broken script fails before the 200
                    script = scripted if isinstance(scripted, Script) else scripted(prompt)
                    frames = list(encoder.frames(script, body))
                except Exception as exc:  # the script's mistake, or its conflict with the
                    # request
                    reason = exc if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
                    return _script_error(self.turns_played, reason)
            return await self._stream(request, frames, self.pace)

        return handle

    async def _stream(
        self,
        request: web.Request,
        frames: Iterable[bytes],
        pause: float,
        headers: Mapping[str, str] | None = None,
        reset: bool = False,
    ) -> web.StreamResponse:
        """Send `frames` as an event stream, `pause` seconds apart; note a hang-up.
        With `reset`, drop the connection after them instead of ending the body."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                **(headers or {}),
            }
        )
        try:
            await response.prepare(request)
            for frame in frames:
                await response.write(frame)
                if pause:
                    await asyncio.sleep(pause)
            if reset and request.transport is not None:
                request.transport.abort()
                return response
            await response.write_eof()
        except ConnectionResetError:
            self._hung_up()
        except asyncio.CancelledError:
            self._hung_up()
            raise
        return response

    async def _refuse(self, request: web.Request, refusal: Refusal) -> web.StreamResponse:
        if refusal.event_stream:  # a 200 whose only event is the error
            headers = _with_request_id(refusal.headers)
            return await self._stream(request, [refusal.body.encode()], 0, headers)
        return web.Response(
            status=refusal.status,
            text=refusal.body,
            content_type="application/json",
            headers=_with_request_id(refusal.headers),
        )

    def _hung_up(self) -> None:
        self.disconnects += 1
        self.disconnected.set()

    async def _http_fault(
        self, fault: str, request: web.Request, encoder: ModuleType, body: dict[str, Any]
    ) -> web.StreamResponse:
        if fault == "http_500":
            return _error_response(
                500, {"error": {"message": "Internal server error", "type": "server_error"}}
            )
        if fault == "http_400_param":
            error = {
                "message": "Unrecognized request argument supplied: stream_options",
                "type": "invalid_request_error",
                "param": "stream_options",
                "code": None,
            }
            return _error_response(400, {"error": error})
        if fault == "not_sse":
            return web.json_response({"id": "x", "choices": [{"message": {"content": "hi"}}]})
        if fault == "long_line":
            return await self._stream(request, [b"data: " + b"x" * LONG_LINE_BYTES], 0)
        if fault.startswith("redirect_"):
            origin = {
                "redirect_private": PRIVATE_REDIRECT_ORIGIN,
                "redirect_other_origin": await self.other_origin(),
                "redirect_loop": "",
            }[fault]
            location = origin + str(request.rel_url)
            return web.Response(status=307, headers={"Location": location})
        if fault.startswith("reset_"):
            frames = list(encoder.frames(FAULTS["answer"], body))
            kept = frames[:1] if fault == "reset_before_output" else frames[:6]
            return await self._stream(request, kept, 0, reset=True)
        if fault == "slow_drip":
            drip = FAULTS["weather"]
            return await self._stream(request, encoder.frames(drip, body), DRIP_SECONDS)
        if fault == "invalid_utf8":
            frames = list(encoder.frames(FAULTS["answer"], body))
            say = next(i for i, f in enumerate(frames) if b"Hello" in f)
            frames[say] = frames[say].replace(b"Hello", b"Hel\xfflo", 1)
            return await self._stream(request, frames, 0)
        # hang: a little output (through the first word of the answer: the frames
        # before it commit nothing on some wires), then keepalives until a hang-up
        frames = list(encoder.frames(FAULTS["answer"], body))
        word = json.dumps(next(words(_first_text(FAULTS["answer"])))).encode()
        first = frames[: next(i for i, frame in enumerate(frames) if word in frame) + 1]
        keepalives = itertools.repeat(b": keepalive\n\n")
        return await self._stream(request, itertools.chain(first, keepalives), KEEPALIVE_SECONDS)


def _first_text(script: Script) -> str:
    return next(step.text for step in script.steps if isinstance(step, Reasoning | Say))


def _with_request_id(headers: Mapping[str, str]) -> dict[str, str]:
    """Every error carries a request id, as real providers' do (for support tickets)."""
    return {**headers, "x-request-id": f"req_local_{uuid.uuid4().hex[:24]}"}


def _error_response(status: int, payload: Any) -> web.Response:
    return web.json_response(payload, status=status, headers=_with_request_id({}))


def _script_error(turn: int, reason: object) -> web.Response:
    """A scripted turn that cannot answer its request: a status no recovery retries (a
    500 would be retried, and the retry answered as usual), so the test sees why."""
    error = {"message": f"scripted turn {turn}: {reason}", "type": "script_error"}
    return _error_response(404, {"error": error})


# What JSON calls the values Python reads a body as.
_JSON_NAMES = {
    "list": "array",
    "str": "string",
    "int": "number",
    "float": "number",
    "bool": "boolean",
    "NoneType": "null",
}


def _invalid(message: str) -> web.Response:
    """A request no endpoint could read: a 400, as a real one answers (a 500 would be
    retried as the server's trouble)."""
    return _error_response(400, {"error": {"message": message, "type": "invalid_request_error"}})


_shared: dict[str, str] = {}
_shared_lock = threading.Lock()


def shared_server_url(pace: float = 0.02) -> str:
    """The URL of a process-wide local server, started on first use in a daemon thread
    with its own event loop (so it serves whatever loop the caller runs)."""
    with _shared_lock:
        if "url" in _shared:
            return _shared["url"]
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            server = LocalServer(pace=pace)
            loop.run_until_complete(server.start())
            _shared["url"] = server.url
            ready.set()
            loop.run_forever()

        threading.Thread(target=run, name="rxllm-local-server", daemon=True).start()
        if not ready.wait(timeout=10):
            raise RuntimeError("the local provider's server did not start within 10 s")
        return _shared["url"]


def main(host: str = "127.0.0.1", port: int = 8765, pace: float = 0.02) -> None:
    """Serve until interrupted (`rxllm serve`)."""

    async def serve() -> None:
        async with LocalServer(pace=pace, host=host, port=port) as server:
            print(
                f"rxllm local provider on {server.url} (OpenAI chat: {server.url}/chat/completions)"
            )
            faults = sorted(FAULTS) + sorted(HTTP_FAULTS)
            print(json.dumps({"faults": faults, "rejections": sorted(REJECTIONS)}))
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
