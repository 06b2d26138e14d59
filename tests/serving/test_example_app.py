"""The example app (examples/serving) over real HTTP: real Redis, the local provider."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import rxllm
from examples.serving.app import make_app, provider_words
from rxllm.local import LocalServer
from rxllm.serving import RedisLog
from tests.serving.support import another_app, check_rules, read_sse


class App:
    def __init__(self, url: str, session: aiohttp.ClientSession, log: RedisLog) -> None:
        self.url = url
        self.session = session
        self.log = log

    def chat(self, sid: str, model: str = "rxllm-local", text: str = "hi") -> Any:
        body = {
            "id": sid,
            "model": model,
            "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": text}]}],
            "trigger": "submit-message",
        }
        return self.session.post(f"{self.url}/api/chat", json=body)


@contextlib.asynccontextmanager
async def running(
    redis_url: str, prefix: str, server: LocalServer, **options: Any
) -> AsyncIterator[App]:
    """The example app on a loopback port (`options`: make_app's)."""
    async with RedisLog(redis_url, prefix=prefix) as log:
        provider = rxllm.provider("local", base_url=server.url)
        runner = web.AppRunner(make_app(log, provider, **options), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port = runner.addresses[0][1]
        async with aiohttp.ClientSession() as session:
            yield App(f"http://127.0.0.1:{port}", session, log)
        await runner.cleanup()
        await provider.aclose()


@pytest.fixture
async def app(redis_url: str, prefix: str, paced_server: LocalServer) -> AsyncIterator[App]:
    async with running(redis_url, prefix, paced_server) as app:
        yield app


def sid() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


async def read_all(response: aiohttp.ClientResponse) -> bytes:
    async with asyncio.timeout(20):
        return await response.read()


async def until_state(app: App, name: str, *states: str) -> None:
    async with asyncio.timeout(10):
        while await app.log.state(name) not in states:
            await asyncio.sleep(0.01)


async def test_chat_streams_a_whole_message(app: App) -> None:
    async with app.chat(sid()) as response:
        assert response.status == 200
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = read_sse(await read_all(response))
    check_rules(stream)
    assert stream.text().startswith("Hello from rxllm's local provider!")
    assert stream.types[-1] == "finish"
    assert stream.frames[-1].id is not None  # an entry's last frame names it


async def test_a_reload_mid_stream_resumes_without_duplicates(app: App) -> None:
    name = sid()
    seen = b""
    async with app.chat(name, model="fault/slow_drip") as response:
        while seen.count(b"\n\n") < 4:  # a few frames, then the tab reloads
            seen += await response.content.readany()
    first = read_sse(seen[: seen.rindex(b"\n\n") + 2])
    # An entry's id rides on its last frame: the client keeps what its last id covers.
    last = max(i for i, f in enumerate(first.frames) if f.id is not None)
    kept, cursor = first.frames[: last + 1], first.frames[last].id
    assert cursor is not None
    assert await app.log.state(name) == "running"  # a disconnect is not a stop

    resume = f"{app.url}/api/chat/{name}/stream"
    async with app.session.get(resume, headers={"Last-Event-ID": cursor}) as response:
        assert response.status == 200
        rest = read_sse(await read_all(response))
    async with app.session.get(resume, params={"replay": "1"}) as response:
        whole = read_sse(await read_all(response))
    check_rules(whole)
    assert whole.types[-1] == "finish" and "tool-input-available" in whole.types
    # what the client had, then what the resume sent: the whole message, once
    assert [f.data for f in (*kept, *rest.frames)] == [f.data for f in whole.frames]


async def test_resume_while_running_replays_then_follows(app: App) -> None:
    name = sid()
    async with app.chat(name, model="fault/slow_drip") as response:
        head = await response.content.readany()
        async with app.session.get(f"{app.url}/api/chat/{name}/stream") as resumed:
            assert resumed.status == 200
            replay = read_sse(await read_all(resumed))
        live = read_sse(head + await read_all(response))
    check_rules(replay)
    assert replay.parts == live.parts  # the same message, from its start
    assert replay.parts[0]["messageId"] == live.parts[0]["messageId"]


async def test_resume_answers(app: App) -> None:
    resume = f"{app.url}/api/chat/{{}}/stream"
    async with app.session.get(resume.format("never-seen")) as response:
        assert response.status == 204  # useChat: no active stream
    name = sid()
    async with app.chat(name) as response:
        await read_all(response)
    await until_state(app, name, "done")
    async with app.session.get(resume.format(name)) as response:
        assert response.status == 204  # finished: useChat would add the parts twice
    async with app.session.get(resume.format(name), params={"replay": "1"}) as response:
        assert response.status == 200
        check_rules(read_sse(await read_all(response)))
    for params, status in (({"after": "1-0", "replay": "1"}, 410), ({"after": "x"}, 400)):
        async with app.session.get(resume.format(name), params=params) as response:
            assert response.status == status, params
    async with app.session.get(resume.format("bad!id")) as response:
        assert response.status == 400


async def test_bad_chat_bodies(app: App) -> None:
    post = f"{app.url}/api/chat"
    async with app.session.post(post, data=b"x" * (1024 * 1024 + 1)) as response:
        assert response.status == 413
    async with app.session.post(post, data=b"{not json") as response:
        assert response.status == 400
    async with app.session.post(post, json={"id": "a:b", "messages": []}) as response:
        assert response.status == 400
    async with app.session.post(post, json={"id": "ok", "messages": []}) as response:
        assert response.status == 400


async def test_cancel(app: App, paced_server: LocalServer) -> None:
    cancel = f"{app.url}/api/chat/{{}}/cancel"
    async with app.session.post(cancel.format("never-seen")) as response:
        assert response.status == 404
    async with app.session.post(cancel.format("bad!id")) as response:
        assert response.status == 400
    name = sid()
    async with app.chat(name, model="fault/hang") as live:
        head = await live.content.readany()
        async with app.session.post(cancel.format(name)) as response:
            assert response.status == 200
            assert (await response.json())["cancelled"] is True
        stream = read_sse(head + await read_all(live))
    check_rules(stream)
    assert stream.parts[-1] == {"type": "abort"}
    assert stream.parts[-2]["messageMetadata"] == {"rxllm": {"cancel_reason": "user"}}
    async with asyncio.timeout(5):
        await paced_server.disconnected.wait()  # the upstream was closed
    await until_state(app, name, "cancelled")
    async with app.session.post(cancel.format(name)) as response:
        assert response.status == 200  # finished: nothing to do
        assert await response.json() == {"cancelled": False, "state": "cancelled"}


async def test_a_second_app_process_serves_the_resume(
    app: App, redis_url: str, prefix: str
) -> None:
    async with another_app(redis_url, prefix) as other_url:
        name = sid()
        async with app.chat(name, model="fault/slow_drip") as live:
            head = await live.content.readany()
            async with app.session.get(f"{other_url}/api/chat/{name}/stream") as resumed:
                assert resumed.status == 200
                replay = read_sse(await read_all(resumed))
            mine = read_sse(head + await read_all(live))
        check_rules(replay)
        assert replay.parts == mine.parts


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({}, "The model provider is overloaded; try again."),
        ({"error_text": provider_words}, "The server is overloaded, try again later."),
    ],
    ids=["default", "--error-details"],
)
async def test_an_error_says_what_failed_unless_the_app_sends_its_words(
    redis_url: str, prefix: str, paced_server: LocalServer, options: dict[str, Any], said: str
) -> None:
    """Live and on resume: the resume's encoder says it as the live response did."""
    async with running(redis_url, prefix, paced_server, **options) as app:
        name = sid()
        async with app.chat(name, model="fault/error_event") as response:
            live = read_sse(await read_all(response))
        await until_state(app, name, "error")
        resume = f"{app.url}/api/chat/{name}/stream"
        async with app.session.get(resume, params={"replay": "1"}) as response:
            replay = read_sse(await read_all(response))
    for stream in (live, replay):
        check_rules(stream)
        assert [p["errorText"] for p in stream.of("error")] == [said]
