"""The example page in headless Chromium (Debian's, driven by Playwright): the `ai`
package's DefaultChatTransport and readUIMessageStream, bundled by esbuild, against the
example app over real HTTP and real Redis. A reload mid-stream resumes without
duplicates; a second app process serves the resume; Stop cancels the upstream."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import rxllm
from examples.serving.app import make_app
from rxllm.events import Failed, TextDelta, ToolRequest
from rxllm.local import LocalServer
from rxllm.serving import RedisLog
from tests.serving.support import ROOT, another_app

WEB = ROOT / "examples" / "serving" / "web"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
STAMP = WEB / "node_modules" / ".rxllm-lock-sha256"


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"needs Debian's chromium at {CHROMIUM} (apt-get install -y chromium)"
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "needs Node.js and npm to bundle the page (apt-get install -y nodejs npm)"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "needs the playwright package (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="module")
def bundle() -> Iterator[None]:
    """The page script, bundled from the locked `ai` package by esbuild."""
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}; .ci/run installs it")
        pytest.skip(f"browser test {reason}")
    lock = hashlib.sha256((WEB / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.is_file() or STAMP.read_text() != lock:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=WEB, check=True)
        STAMP.write_text(lock)
    subprocess.run(["npm", "run", "--silent", "build"], cwd=WEB, check=True)
    yield


class Served:
    def __init__(self, url: str, log: RedisLog, upstream: LocalServer) -> None:
        self.url = url
        self.log = log
        self.upstream = upstream


@pytest.fixture
async def served(redis_url: str, prefix: str, bundle: None) -> AsyncIterator[Served]:
    async with LocalServer(pace=0.03) as upstream, RedisLog(redis_url, prefix=prefix) as log:
        provider = rxllm.provider("local", base_url=upstream.url)
        runner = web.AppRunner(make_app(log, provider), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield Served(f"http://127.0.0.1:{runner.addresses[0][1]}", log, upstream)
        await runner.cleanup()
        await provider.aclose()


@pytest.fixture
async def page(bundle: None) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield await browser.new_page()
        finally:
            await browser.close()


async def open_chat(page: Any, base: str, chat: str, model: str) -> None:
    await page.goto(f"{base}/?chat={chat}&model={model}")
    await page.wait_for_function("window.rxllmReady === true")


async def status(page: Any, *wanted: str) -> str:
    condition = " || ".join(f"s === {w!r}" for w in wanted)
    await page.wait_for_function(
        f"(() => {{ const s = document.getElementById('status').textContent; "
        f"return {condition}; }})()",
        timeout=20_000,
    )
    value: str = await page.text_content("#status")
    return value


async def logged(log: RedisLog, chat: str) -> tuple[str, int]:
    """The turn's whole text and its tool calls, from the log."""
    text, calls = "", 0
    async for _, event in log.resume(chat):
        if isinstance(event, TextDelta):
            text += event.text
        elif isinstance(event, ToolRequest):
            calls += 1
    return text, calls


async def send_and_wait_for_parts(page: Any) -> None:
    """Send, and wait until the message has parts on screen."""
    await page.click("#send")
    await page.wait_for_function(
        "document.getElementById('message').textContent.length > 2", timeout=20_000
    )


async def test_a_reload_mid_stream_resumes_without_duplicates(served: Served, page: Any) -> None:
    chat = f"c{uuid.uuid4().hex[:12]}"
    await open_chat(page, served.url, chat, "rxllm-local")
    await send_and_wait_for_parts(page)
    assert await served.log.state(chat) == "running"  # reloaded mid-answer
    await page.reload()
    assert await status(page, "done", "idle") == "done"  # it resumed, to the end
    text, _ = await logged(served.log, chat)
    assert text and await page.text_content("#answer") == text  # once, not twice
    assert await page.text_content("#errors") == ""


async def test_a_second_app_process_serves_the_resume(
    served: Served, page: Any, redis_url: str, prefix: str
) -> None:
    async with another_app(redis_url, prefix) as other_url:
        chat = f"c{uuid.uuid4().hex[:12]}"
        await open_chat(page, served.url, chat, "fault/slow_drip")
        await send_and_wait_for_parts(page)
        await open_chat(page, other_url, chat, "fault/slow_drip")  # the other process
        assert await status(page, "done", "idle") == "done"
        text, calls = await logged(served.log, chat)
        assert await page.text_content("#answer") == text
        parts = await page.text_content("#message")
        assert calls == 1 and parts.count('"type":"tool-get_weather"') == 1
        assert parts.count('"type":"step-start"') == 1
        assert await page.text_content("#errors") == ""


async def test_stop_cancels_the_upstream(served: Served, page: Any) -> None:
    chat = f"c{uuid.uuid4().hex[:12]}"
    await open_chat(page, served.url, chat, "fault/hang")
    await send_and_wait_for_parts(page)
    await page.click("#stop")
    assert await status(page, "stopped") == "stopped"
    async with asyncio.timeout(10):
        await served.upstream.disconnected.wait()  # the model's response was closed
        while await served.log.state(chat) != "cancelled":
            await asyncio.sleep(0.02)


async def test_the_page_says_whether_sending_again_may_help(served: Served, page: Any) -> None:
    """An error's facts, the message's metadata before its `error` chunk, on the page:
    what failed and whether sending again may help, as the log's error event says."""
    chat = f"c{uuid.uuid4().hex[:12]}"
    await open_chat(page, served.url, chat, "fault/error_event")
    await page.click("#send")
    await page.wait_for_function(
        "document.getElementById('failure').textContent !== ''", timeout=20_000
    )
    events = [event async for _, event in served.log.resume(chat)]
    error = events[-1]
    assert isinstance(error, Failed)
    info = error.error
    what = info.kind if info.status is None else f"{info.kind}, status {info.status}"
    expected = (
        f"failed ({what}): send again"
        if info.retryable
        else f"failed ({what}): sending again will not help"
    )
    failure = await page.text_content("#failure")
    assert failure.startswith(expected), failure
    assert await page.text_content("#errors") != ""  # the error chunk's text
