"""The command line, run as a user runs it: a subprocess of the installed entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rxllm.events import EventAdapter
from tests.support import CAPTURES, needs_captures

RXLLM = [sys.executable, "-m", "rxllm.cli"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RXLLM, *args], capture_output=True, text=True, timeout=120, env=env or dict(os.environ)
    )


def test_stream_without_a_key_uses_the_local_provider_and_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    result = run("stream", "What's the weather in Paris?", "--provider", "openai", env=env)
    assert result.returncode == 0, result.stderr
    assert "no OPENAI_API_KEY set: using the embedded local provider" in result.stderr
    out = result.stdout
    assert "[reasoning] The user asks about the weather" in out
    assert "Let me check the weather." in out
    assert "[tool_request] get_weather({'city': 'Paris', 'unit': 'celsius', 'days': 3})" in out
    assert "[usage] input 24" in out and "[done] tool_use" in out
    assert out.strip().splitlines()[-1].startswith("-- local (rxllm-local): tool_use;")


def test_stream_json_prints_one_valid_event_per_line() -> None:
    result = run("stream", "hello", "--json", "--no-tools")
    assert result.returncode == 0, result.stderr
    events = [EventAdapter.validate_json(line) for line in result.stdout.splitlines()]
    assert events[-1].type == "done" and {e.provider for e in events} == {"local"}
    assert "".join(getattr(e, "text", "") for e in events if e.type == "text").startswith("Hello")


@needs_captures
def test_replay_prints_the_events_of_a_capture() -> None:
    path = CAPTURES / "openai" / "chat_parallel_tool_calls.sse"
    result = run("replay", str(path), "--provider", "openai")
    assert result.returncode == 0, result.stderr
    call = "GetWeatherArgs({'city': 'Edinburgh', 'country': 'GB', 'units': 'c'})"
    assert f"[tool_request] {call}" in result.stdout
    assert "[done] tool_use (raw tool_calls)" in result.stdout


def test_bad_input_is_a_clear_message_not_a_traceback(tmp_path: Path) -> None:
    result = run("replay", str(tmp_path / "missing.sse"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "missing.sse" in result.stderr
    result = run("stream", "x", "--provider", "nope")
    assert result.returncode == 2 and "invalid choice: 'nope'" in result.stderr


def test_serve_runs_the_local_provider_standalone() -> None:
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [*RXLLM, "serve", "--port", str(port), "--pace", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        banner = server.stdout.readline()
        assert f"127.0.0.1:{port}/v1" in banner
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
            headers={"Content-Type": "application/json"},
        )
        deadline = time.monotonic() + 30
        with urllib.request.urlopen(request, timeout=max(1.0, deadline - time.monotonic())) as r:
            body = r.read()
        assert body.startswith(b"data: ") and body.rstrip().endswith(b"data: [DONE]")
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_stream_shows_a_recovered_turn() -> None:
    result = run(
        "stream", "hi", "--model", "fault/reject_param", "--param", "temperature=0.2", "--no-tools"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[retry] attempt 1 on local failed before any output (HTTP 400:")
    assert lines[0].endswith("attempt 2: without temperature")
    assert "; 2 attempts; " in lines[-1] and "[done] stop" in result.stdout


def test_stream_to_a_custom_loopback_url_needs_the_opt_in() -> None:
    from rxllm.local.server import shared_server_url

    url = shared_server_url()
    args = ("stream", "hello", "--provider", "custom", "--base-url", url, "--json", "--no-tools")
    refused = run(*args)
    last = EventAdapter.validate_json(refused.stdout.splitlines()[-1])
    assert last.type == "error" and last.error.kind == "policy", refused.stdout
    assert "allow_private_network" in last.error.message
    allowed = run(*args, "--allow-private-network")
    assert allowed.returncode == 0, allowed.stderr
    assert EventAdapter.validate_json(allowed.stdout.splitlines()[-1]).type == "done"


@needs_captures
def test_replay_without_a_provider_reads_it_from_the_first_events() -> None:
    path = CAPTURES / "anthropic" / "tool_use_input_json_delta.sse"
    result = run("replay", str(path))
    assert result.returncode == 0, result.stderr
    assert "replaying as anthropic" in result.stderr
    assert "[done]" in result.stdout
    gemini = run("replay", str(CAPTURES / "gemini" / "code_execution.sse"), "--json")
    assert gemini.returncode == 0, gemini.stderr
    assert "replaying as google" in gemini.stderr
    events = [EventAdapter.validate_json(line) for line in gemini.stdout.splitlines()]
    assert {e.provider for e in events} == {"google"}
    assert [e.type for e in events if e.type.startswith("server_tool")] == [
        "server_tool_call",
        "server_tool_result",
    ]


def test_replay_of_bytes_that_say_no_provider_asks_for_one(tmp_path: Path) -> None:
    path = tmp_path / "empty.sse"
    path.write_bytes(b": keepalive\n\ndata: [DONE]\n\n")
    result = run("replay", str(path))
    assert result.returncode == 2 and "pass --provider" in result.stderr


@needs_captures
def test_replay_with_the_wrong_provider_names_the_right_one() -> None:
    path = CAPTURES / "anthropic" / "text_ping.sse"
    result = run("replay", str(path), "--provider", "openai")
    assert result.returncode == 1
    assert "the bytes look like the anthropic wire" in result.stdout + result.stderr
