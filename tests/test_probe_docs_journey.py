"""What docs/cli.md promises a new user of `rxllm serve` and `rxllm replay`, as they
would try it: each wire's own SDK path on the local server, and replay's exit status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from rxllm.local import LocalServer

RXLLM = [sys.executable, "-m", "rxllm.cli"]

# docs/cli.md, "serve": the path each wire's client posts to, with the smallest
# streaming request its own documentation shows.
ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "openai chat",
        "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    (
        "openai responses",
        "/v1/responses",
        {"model": "m", "stream": True, "input": "hi"},
    ),
    (
        "anthropic",
        "/v1/messages",
        {
            "model": "m",
            "max_tokens": 64,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        },
    ),
    (
        "gemini",
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
]


@pytest.mark.parametrize(("wire", "path", "body"), ROUTES, ids=[route[0] for route in ROUTES])
async def test_the_local_server_streams_each_wire_at_the_path_the_docs_list(
    wire: str, path: str, body: dict[str, Any]
) -> None:
    async with (
        LocalServer(pace=0) as server,
        aiohttp.ClientSession() as http,
        http.post(server.root + path, json=body) as response,
    ):
        assert response.status == 200, (wire, await response.text())
        assert response.headers["content-type"].startswith("text/event-stream")
        text = await response.text()
    assert text.startswith(("data: ", "event: ")), text[:80]
    assert "Hello" in text  # the local provider's answer, in that wire's frames


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RXLLM, *args], capture_output=True, text=True, timeout=120)


def test_replay_exits_0_for_a_done_turn_and_1_for_one_cut_short(tmp_path: Path) -> None:
    """docs/cli.md: replay's exit status is stream's, 0 for `done`, 1 otherwise."""
    raw = tmp_path / "turn.sse"
    streamed = run("stream", "hi", "--no-tools", "--raw", str(raw))
    assert streamed.returncode == 0, streamed.stderr
    whole = run("replay", str(raw))
    assert whole.returncode == 0, whole.stderr
    assert "[done] stop" in whole.stdout
    cut = tmp_path / "cut.sse"
    cut.write_bytes(raw.read_bytes()[: len(raw.read_bytes()) // 2])
    short = run("replay", str(cut))
    assert short.returncode == 1, short.stderr
    assert "[error] truncated" in short.stdout
