"""A chat backend whose turns survive the connection: aiohttp.web, the local provider,
and rxllm.serving's Redis log. Any process running this app can resume or cancel a
turn another one produces.

    python -m examples.serving.app --redis redis://127.0.0.1:6379/0 --port 8080

- `POST /api/chat`                 the AI SDK's chat body; starts the turn, streams it live
- `GET  /api/chat/{id}/stream`     resume: 204 unknown (or finished, unless `?replay=1`),
                                   else replay and follow; `?after=` or `Last-Event-ID`
                                   resumes after that entry (410 if it is gone)
- `POST /api/chat/{id}/cancel`     stop the turn wherever it runs: 404 unknown, 200 else
- `GET  /`                         a page using the AI SDK (`static/`, built by esbuild)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import uuid
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

import rxllm
from rxllm.events import ErrorInfo
from rxllm.serving import (
    UI_MESSAGE_STREAM_HEADERS,
    RedisLog,
    UIMessageEncoder,
    UnknownStream,
    generic_error_text,
    ui_message_stream,
)
from rxllm.serving.redis_log import CursorGone, StreamRunning, check_cursor, check_sid

__all__ = ["make_app", "main"]

MAX_BODY = 1024 * 1024
STATIC = Path(__file__).parent / "static"
LOG: web.AppKey[RedisLog] = web.AppKey("log", RedisLog)
PROVIDER: web.AppKey[rxllm.Provider] = web.AppKey("provider", rxllm.Provider)
MODEL: web.AppKey[str] = web.AppKey("model", str)
ErrorText = Callable[[ErrorInfo], str]
ERROR_TEXT: web.AppKey[ErrorText] = web.AppKey("error_text")


def provider_words(info: ErrorInfo) -> str:
    """An error's own message (`--error-details`): the provider's words, which can
    name the account, the model or a host; for a local demo, not a public server."""
    return info.message


def make_app(
    log: RedisLog,
    provider: rxllm.Provider,
    model: str = "rxllm-local",
    error_text: ErrorText = generic_error_text,
) -> web.Application:
    """The app; `log` and `provider` stay the caller's to close. `error_text`: what an
    error says to the browser, live and on resume (default: what failed, never the
    provider's words)."""
    app = web.Application(client_max_size=MAX_BODY)
    app[LOG], app[PROVIDER], app[MODEL] = log, provider, model
    app[ERROR_TEXT] = error_text
    app.router.add_post("/api/chat", chat)
    app.router.add_get("/api/chat/{id}/stream", resume)
    app.router.add_post("/api/chat/{id}/cancel", cancel)
    app.router.add_get("/", page)
    if STATIC.is_dir():
        app.router.add_static("/static", STATIC)
    return app


def _sid(value: Any) -> str:
    try:
        return check_sid(value)
    except ValueError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None


def _request(body: Any, default_model: str) -> rxllm.ChatRequest:
    """The AI SDK's UI messages (text parts) as a chat request."""
    messages = []
    for message in body.get("messages") or []:
        role = message.get("role") if isinstance(message, dict) else None
        parts = message.get("parts") or [] if isinstance(message, dict) else []
        text = "".join(
            p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"
        )
        if role == "user":
            messages.append(rxllm.Message.user(text))
        elif role == "assistant" and text:
            messages.append(rxllm.Message.assistant(text))
        elif role == "system":
            messages.append(rxllm.Message.system(text))
    if not messages:
        raise web.HTTPBadRequest(text="the body has no messages")
    model = body.get("model") if isinstance(body.get("model"), str) else default_model
    return rxllm.ChatRequest(model=model, messages=messages)


async def _send(request: web.Request, frames: AsyncGenerator[bytes, None]) -> web.StreamResponse:
    response = web.StreamResponse(headers=UI_MESSAGE_STREAM_HEADERS)
    await response.prepare(request)
    try:
        async for frame in frames:
            await response.write(frame)
    except ConnectionResetError:
        pass  # the browser went away: a disconnect, never a stop (the producer goes on)
    except (UnknownStream, CursorGone):
        pass  # the turn expired or was replaced mid-resume: the message ended with `error`
    finally:
        await frames.aclose()
    return response


async def chat(request: web.Request) -> web.StreamResponse:
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="the body is not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body is not a JSON object")
    sid = _sid(body.get("id"))
    turn = _request(body, request.app[MODEL])
    log = request.app[LOG]
    message_id = body.get("messageId")
    if not isinstance(message_id, str) or not message_id:
        message_id = f"msg-{uuid.uuid4().hex}"
    try:
        live = await log.start(sid, request.app[PROVIDER].stream(turn), message_id=message_id)
    except StreamRunning as exc:
        raise web.HTTPConflict(text=str(exc)) from None
    # The live entries carry their log ids, so the browser's cursor is the log's.
    frames = ui_message_stream(live, message_id=message_id, error_text=request.app[ERROR_TEXT])
    return await _send(request, frames)


async def resume(request: web.Request) -> web.StreamResponse:
    sid = _sid(request.match_info["id"])
    after = request.query.get("after") or request.headers.get("Last-Event-ID") or "0"
    try:
        cursor = check_cursor(after)
    except ValueError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    log = request.app[LOG]
    info = await log.info(sid)
    if info is None:
        return web.Response(status=204)  # useChat: no active stream
    if info.state != "running" and request.query.get("replay") != "1":
        return web.Response(status=204)  # useChat would add the parts a second time
    if after != "0" and cursor < (info.start_ms, 0):
        raise web.HTTPGone(text=f"cursor {after} is before the first entry")
    # The encoder folds what the client has from the stored JSON, page by page (the
    # same block ids, nothing sent), then streams what follows the cursor.
    encoder = UIMessageEncoder(info.message_id, error_text=request.app[ERROR_TEXT])
    try:
        async for page in log.history(sid, through=after):
            encoder.fold_json(page)
    except UnknownStream:
        return web.Response(status=204)
    except CursorGone as exc:
        raise web.HTTPGone(text=str(exc)) from None
    frames = ui_message_stream(log.resume(sid, after=after), encoder=encoder)
    return await _send(request, frames)


async def cancel(request: web.Request) -> web.Response:
    sid = _sid(request.match_info["id"])
    log = request.app[LOG]
    state = await log.state(sid)
    if state is None:
        raise web.HTTPNotFound(text=f"no stream {sid!r}")
    reached = state == "running" and await log.cancel(sid, reason="user")
    return web.json_response({"cancelled": reached, "state": await log.state(sid)})


async def page(request: web.Request) -> web.StreamResponse:
    index = STATIC / "index.html"
    if index.is_file():
        return web.FileResponse(index)
    return web.Response(
        text="<!doctype html><title>rxllm chat</title><p>Build the page: see "
        "examples/serving/README.md.</p>",
        content_type="text/html",
    )


async def _serve(
    redis_url: str, prefix: str, host: str, port: int, pace: float, error_text: ErrorText
) -> None:
    from rxllm.local import LocalServer

    async with LocalServer(pace=pace) as local, RedisLog(redis_url, prefix=prefix) as log:
        provider = rxllm.provider("local", base_url=local.url)
        app = make_app(log, provider, error_text=error_text)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        print(f"serving on http://{host}:{runner.addresses[0][1]}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
            await provider.aclose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--prefix", default="rxllm", help="the Redis keys' prefix")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--pace", type=float, default=0.02, help="local provider pacing (s)")
    parser.add_argument(
        "--error-details",
        action="store_true",
        help="send an error's own message to the browser (default: what failed, never the "
        "provider's words, which can name the account, the model or a host)",
    )
    args = parser.parse_args(argv)
    # What is alive now (modules, classes, pydantic's schemas) lives as long as the
    # server: frozen out of the collector, a full collection no longer walks it, which
    # cuts a resume's worst case from ~40 ms to under 20 (benchmarks/redis_log.py).
    gc.collect()
    gc.freeze()
    with contextlib.suppress(KeyboardInterrupt):
        error_text = provider_words if args.error_details else generic_error_text
        asyncio.run(_serve(args.redis, args.prefix, args.host, args.port, args.pace, error_text))


if __name__ == "__main__":
    main()
