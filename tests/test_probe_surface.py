"""The surface a new user meets: the command line (what a provider wrote cannot drive
the terminal, the private-redirect fault never leaves the machine, an image file is
sent) and the local provider (a call fitted to the offered schema, a 400 for a body
it cannot read)."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import rxllm
from rxllm.cli import Printer
from rxllm.events import Done, EventAdapter, Failed, TextDelta, ToolStart
from rxllm.local.server import LocalServer
from rxllm.testing import reply, scripted

RXLLM = [sys.executable, "-m", "rxllm.cli"]

# A stream whose text, model, tool name and call id carry terminal escapes: set the
# window title, clear the screen, hide text (SGR 8), and a bidirectional override.
HOSTILE = (
    b'data: {"id":"x","model":"m\\u001b[31m","choices":[{"index":0,"delta":{"content":'
    b'"hi \\u001b]0;PWNED\\u0007 \\u001b[2J there\\u202eevil"},"finish_reason":null}]}\n\n'
    b'data: {"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    b'"id":"c\\u001b[1m","type":"function","function":{"name":"get\\u001b[8mX",'
    b'"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}\n\n'
    b"data: [DONE]\n\n"
)
# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [*RXLLM, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )


def test_replay_prints_a_providers_terminal_escapes_as_escapes(tmp_path: Path) -> None:
    capture = tmp_path / "hostile.sse"
    capture.write_bytes(HOSTILE)
    result = run("replay", str(capture))
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\u202e" not in result.stdout
    assert "hi \\x1b]0;PWNED\\x07 \\x1b[2J there\\u202eevil" in result.stdout
    assert "[tool_start] get\\x1b[8mX (call c\\x1b[1m)" in result.stdout
    # --json keeps the text as the provider sent it, escaped by JSON
    result = run("replay", str(capture), "--json")
    texts = [EventAdapter.validate_json(line) for line in result.stdout.splitlines()]
    assert isinstance(texts[0], TextDelta) and "\x1b]0;PWNED\x07" in texts[0].text


def test_the_printer_keeps_colors_its_own_and_line_ends_the_providers() -> None:
    out = io.StringIO()
    printer = Printer(out, as_json=False, color=True)
    printer(TextDelta(provider="p", text="a\nb\tc\x1b[2J"))
    printer(ToolStart(provider="p", call_id="c1", name="f\x1b]8;;http://x\x07", index=0))
    printer(Done(provider="p", stop_reason="stop"))
    assert out.getvalue() == (
        "a\nb\tc\\x1b[2J\n\033[36m[tool_start] f\\x1b]8;;http://x\\x07 (call c1)\n"
        "\033[0m\033[32m[done] stop (raw None)\n\033[0m"
    )


def test_the_private_redirect_fault_is_refused_by_the_guard_not_sent() -> None:
    """`fault/redirect_private` answers 307 to http://10.0.0.1, a real address on many
    networks: the CLI plays it, as rxllm.testing does, only with the guard on."""
    result = run("stream", "--model", "fault/redirect_private", "--json", "hi")
    events = [EventAdapter.validate_json(line) for line in result.stdout.splitlines()]
    assert result.returncode == 1, result.stderr
    assert [e.type for e in events] == ["error"]
    assert isinstance(events[0], Failed) and events[0].error.kind == "policy"
    assert "10.0.0.1 is private" in events[0].error.message
    assert "--allow-private-network lets" not in result.stderr  # no advice to open it


def test_an_image_file_is_sent_as_a_data_url(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PIXEL)
    with scripted(reply("A dot."), wire="openai") as llm:
        result = run(
            "stream",
            "--provider",
            "custom",
            "--api-key",
            "sk-test",
            "--base-url",
            llm.server.url,
            "--allow-private-network",
            "--no-tools",
            "--image",
            "dot.png",
            "What is this?",
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        parts = llm.requests[0]["messages"][0]["content"]
    url = f"data:image/png;base64,{base64.b64encode(PIXEL).decode()}"
    assert {"type": "image_url", "image_url": {"url": url}} in parts
    assert json.dumps(parts).count("dot.png") == 0


def test_an_image_that_is_neither_url_nor_image_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    for value, message in (
        ("missing.png", "or an image file: cannot read the image file 'missing.png'"),
        ("notes.txt", "or an image file: the image type of 'notes.txt' is unknown"),
        # a scheme without // is no URL (a Windows path's drive): it was sent as one
        ("C:\\Users\\me\\cat.png", "cannot read the image file"),
        ("gs:bucket/cat.png", "cannot read the image file"),
    ):
        result = run("stream", "--image", value, "hi", cwd=tmp_path)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert message in result.stderr, result.stderr


async def test_the_local_weather_call_fits_the_offered_tools_schema() -> None:
    """docs/testing.md: the local provider calls the tool the user asks about "with
    arguments fitted to its schema"; the weather story's own arguments (city, unit,
    days) are kept only where the offered `get_weather` allows them."""
    schemas: dict[str, dict[str, Any]] = {
        # OpenAI's function-calling example: `location` required, `unit` an enum
        "location": {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
        # strict mode: no other key
        "strict": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
        # an open schema takes the story as it is
        "open": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    got: dict[str, dict[str, Any]] = {}
    async with scripted(wire="anthropic") as llm:
        for label, schema in schemas.items():
            tool = rxllm.Tool(name="get_weather", description="Weather.", parameters=schema)
            request = rxllm.ChatRequest(
                model="m", messages=[rxllm.Message.user("weather in Paris?")], tools=[tool]
            )
            record = (await llm.provider.complete(request)).raise_for_error()
            got[label] = record.tool_calls[0].arguments
    assert got["location"]["location"] == "Paris" and got["location"]["unit"] == "celsius"
    assert got["strict"] == {"city": "Paris", "unit": "C"}
    assert got["open"] == {"city": "Paris", "unit": "celsius", "days": 3}


async def test_the_local_server_answers_a_body_it_cannot_read_with_a_400() -> None:
    """`rxllm serve` is for any client: a body that is not a request of the route's
    wire is the client's mistake, a 400 as a real endpoint answers, not a 500 (which a
    client retries as the server's trouble) with a traceback in the server's log."""
    routes = (
        "/v1/chat/completions",
        "/v1/messages",
        "/v1/responses",
        "/v1beta/models/m:streamGenerateContent",
    )
    bodies = ("[]", '"hi"', '{"messages": ["hi"], "contents": "hi", "input": 5, "tools": "x"}')
    async with LocalServer(pace=0) as server, aiohttp.ClientSession() as http:
        for route in routes:
            for body in bodies:
                headers = {"content-type": "application/json"}
                async with http.post(server.root + route, data=body, headers=headers) as response:
                    error = (await response.json())["error"]
                assert response.status == 400, (route, body)
                assert error["type"] == "invalid_request_error"
        assert error["message"].startswith("the body does not fit /v1beta/models/")


@pytest.mark.parametrize(
    ("model", "logged"),
    [
        ("m\x1b]0;PWNED\x07", b"model=m\\x1b]0;PWNED\\x07 -> 200"),  # a terminal escape
        ("evil\rgood", b"model=evil\\rgood -> 200"),  # a \r would print over the line
    ],
)
def test_serve_logs_what_a_client_sent_with_its_escapes_shown(model: str, logged: bytes) -> None:
    """`rxllm serve` logs each request's model to the operator's terminal: a client's
    `model` (or path) is not the terminal's to obey."""
    server = subprocess.Popen(
        [*RXLLM, "serve", "--port", "0", "--pace", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,  # bytes: text mode would read a \r as a line end
    )
    try:
        assert server.stdout is not None and server.stderr is not None
        url = server.stdout.readline().split()[4].decode()  # rxllm local provider on URL
        body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
        request = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
        log = server.stderr.readline()
        assert log.startswith(b"POST /v1/chat/completions " + logged), log
    finally:
        server.terminate()
        server.wait(timeout=10)
