"""Errors that carry their context: the URL of a wrong path (never the key), the
Gemini version path a base URL lacks, and replay's reading of a str."""

from __future__ import annotations

from pathlib import Path

import pytest

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer

KEY = "sk-test-" + "k" * 40
HI = [{"role": "user", "content": "hi"}]


async def test_a_wrong_path_says_the_url(local_server: LocalServer) -> None:
    base = f"{local_server.root}/nope?key={KEY}"
    p = rxllm.provider("openai", api_key=KEY, base_url=base)
    rec = await p.complete(rxllm.ChatRequest(model="rxllm-local", messages=HI))
    assert rec.terminal.type == "error"
    url = f"{local_server.root}/nope/chat/completions"
    assert rec.terminal.error.message == f"HTTP 404 from {url}: Not Found"
    assert KEY not in rec.model_dump_json()
    with pytest.raises(rxllm.NotFoundError, match=f"from {url}"):
        rec.raise_for_error()


async def test_google_without_its_version_path_gets_a_hint(local_server: LocalServer) -> None:
    p = rxllm.provider("google", api_key=KEY, base_url=local_server.root)
    rec = await p.complete(rxllm.ChatRequest(model="rxllm-local", messages=HI))
    assert rec.terminal.type == "error"
    message = rec.terminal.error.message
    assert message.startswith(f"HTTP 404 from {local_server.root}/models/rxllm-local")
    assert "ends with its version, /v1beta" in message
    assert f"base_url={local_server.root!r} missing it?" in message


async def test_google_with_its_version_path_streams(local_server: LocalServer) -> None:
    p = rxllm.provider("google", api_key=KEY, base_url=f"{local_server.root}/v1beta")
    rec = await p.complete(rxllm.ChatRequest(model="rxllm-local", messages=HI))
    assert rec.ok and rec.text


BODY = (
    'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


def replayed(data: str | Path) -> list[Event]:
    events: list[Event] = []
    rxllm.replay(data, provider="openai").subscribe(events.append)
    return events


def test_replay_reads_a_one_line_str_that_is_not_sse_as_a_path(tmp_path: Path) -> None:
    path = tmp_path / "turn.sse"
    path.write_text(BODY)
    assert replayed(str(path)) == replayed(BODY) == replayed(path)
    assert [e.type for e in replayed(str(path))] == ["text", "done"]


def test_replay_reads_a_one_line_sse_str_as_the_body() -> None:
    one_line = 'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}'
    assert [e.type for e in replayed(one_line)] == ["text", "done"]


def test_replay_of_a_str_naming_no_file_says_what_to_pass(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.sse")
    with pytest.raises(FileNotFoundError, match=r"no file .*missing\.sse.*pass a Path"):
        rxllm.replay(missing, provider="openai")
