"""The command line, run as a user runs it: a subprocess of the installed entry point."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web

from rxllm.cli import Printer, wants_color
from rxllm.events import (
    Done,
    EventAdapter,
    ReasoningDelta,
    Refusal,
    Retry,
    StreamRecord,
    TextDelta,
)
from tests.support import CAPTURES, Serve, needs_captures

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
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stderr is not None
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
        log = server.stderr.readline()
        assert log.startswith("POST /v1/chat/completions model=m -> 200 ("), log
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
    assert "--allow-private-network lets the SSRF guard reach" in refused.stderr
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


def test_version_and_help_with_examples() -> None:
    from importlib.metadata import version

    assert run("--version").stdout.strip() == f"rxllm {version('rxllm')}"
    help_text = run("--help").stdout
    assert "examples:" in help_text and "rxllm stream --json" in help_text
    assert "--api-key KEY" in run("stream", "--help").stdout


def test_json_into_a_reader_that_leaves_ends_quietly() -> None:
    # `rxllm stream --json | head -1`: the reader closes the pipe while events still come.
    child = subprocess.Popen(
        [*RXLLM, "stream", "--json", "hi"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    assert EventAdapter.validate_json(child.stdout.readline()).type == "reasoning"
    child.stdout.close()
    assert child.wait(timeout=60) == 0
    assert child.stderr.read() == ""


def test_ctrl_c_says_cancelled_and_ends_the_json_with_one_cancelled_event() -> None:
    child = subprocess.Popen(
        [*RXLLM, "stream", "--json", "--model", "fault/hang", "hi"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job inherits SIGINT ignored; a user's terminal does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert child.stdout is not None
    first = child.stdout.readline()  # streaming has begun; `hang` now sends only keepalives
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert err.strip().splitlines()[-1] == "rxllm: cancelled"
    # --json readers see exactly one terminal, last (it was missing)
    events = [EventAdapter.validate_json(line) for line in [first, *out.splitlines()]]
    terminals = [e for e in events if e.type in ("done", "error", "cancelled")]
    assert terminals == [events[-1]] and events[-1].type == "cancelled"
    assert getattr(events[-1], "reason", None) == "interrupted (Ctrl-C)"


def test_a_missing_key_is_command_line_advice() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    url = "http://127.0.0.1:9/v1"
    result = run("stream", "hi", "--provider", "anthropic", "--base-url", url, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        "rxllm: --provider anthropic needs an API key: pass --api-key KEY or set ANTHROPIC_API_KEY"
    )


def test_bench_passes_what_follows_the_dashes_to_the_benchmarks() -> None:
    result = run("bench", "--", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: python -m benchmarks")


def test_record_raw_and_plot_keep_a_recovered_turn(tmp_path: Path) -> None:
    record_path, raw_path, plot_path = tmp_path / "r.json", tmp_path / "r.sse", tmp_path / "r.png"
    args = (
        "stream",
        "hi",
        "--model",
        "fault/error_after_200",
        "--param",
        "top_p=0.9",
        "--no-tools",
    )
    result = run(
        *args, "--record", str(record_path), "--raw", str(raw_path), "--plot", str(plot_path)
    )
    assert result.returncode == 0, result.stderr
    record = StreamRecord.model_validate_json(record_path.read_text())
    assert [a.committed for a in record.attempts] == [False, True]
    assert record.terminal.type == "done" and record.text.startswith("Hello from rxllm")
    raw = raw_path.read_bytes()
    # Both 200 bodies as they came: the first ends in its error event, then the retry.
    first, marker, second = raw.partition(b"\n: rxllm: retry {")
    assert marker and b"error" in first and b"Hello" in second
    assert plot_path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    replayed = run("replay", str(raw_path), "--json", "--plot", str(tmp_path / "replay.png"))
    assert replayed.returncode == 0, replayed.stderr  # it ended `error`, exit 1
    events = [EventAdapter.validate_json(line) for line in replayed.stdout.splitlines()]
    retry = events[0]  # the turn as it went: the retry, then the attempt that ended it
    assert isinstance(retry, Retry) and retry.next_attempt == 2 and retry.dropped == ["top_p"]
    assert retry.reason.message == record.attempts[0].error
    assert {e.attempt for e in events[1:]} == {2} and events[-1].type == "done"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == record.text
    assert (tmp_path / "replay.png").read_bytes().startswith(b"\x89PNG")
    shown = run("replay", str(raw_path))
    assert shown.stdout.startswith("[retry] attempt 1 on openai failed before any output")
    assert "attempt 2: without top_p" in shown.stdout


def test_colors_only_for_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert wants_color(Terminal()) and not wants_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(Terminal())
    out = Terminal()
    printer = Printer(out, as_json=False, color=True)
    printer(TextDelta(provider="p", text="hi"))
    printer(Done(provider="p", stop_reason="stop"))
    assert out.getvalue() == "hi\n\033[32m[done] stop (raw None)\n\033[0m"
    assert "\033[" not in run("stream", "hi", "--no-tools").stdout  # piped: plain


def test_live_text_kinds_each_get_one_mark() -> None:
    """Reasoning and refusal deltas run on like text, marked once where each begins."""
    out = io.StringIO()
    printer = Printer(out, as_json=False)
    for event in (
        ReasoningDelta(provider="p", text="Think"),
        ReasoningDelta(provider="p", text="ing."),
        Refusal(provider="p", text="I can't"),
        Refusal(provider="p", text=" help."),
        TextDelta(provider="p", text="Sorry."),
        Done(provider="p", stop_reason="stop"),
    ):
        printer(event)
    assert out.getvalue() == (
        "[reasoning] Thinking.\n[refusal] I can't help.\nSorry.\n[done] stop (raw None)\n"
    )


def test_a_utf16_pair_split_across_deltas_prints_as_one_character() -> None:
    """A provider may cut a surrogate pair between deltas (JSON `"\\ud83d"`, then
    `"\\ude00"`): the printer joins it, and replaces a half never paired, where
    writing it would raise; `--json` keeps each half as its escape."""
    events = (
        TextDelta(provider="p", text="a\ud83d"),
        TextDelta(provider="p", text="\ude00b"),
        TextDelta(provider="p", text="c\ud83d"),
        Done(provider="p", stop_reason="stop"),
    )
    out = io.StringIO()
    printer = Printer(out, as_json=False)
    for event in events:
        printer(event)
    assert out.getvalue() == "a\U0001f600bc\ufffd\n[done] stop (raw None)\n"
    out.getvalue().encode("utf-8")  # what stdout must be able to write
    lines = io.StringIO()
    as_json = Printer(lines, as_json=True)
    for event in events:
        as_json(event)
    texts = [json.loads(line).get("text") for line in lines.getvalue().splitlines()]
    assert texts == ["a\ud83d", "\ude00b", "c\ud83d", None]


def test_a_base_url_that_cannot_be_used_is_said_before_streaming() -> None:
    for url, message in (
        ("http://127.0.0.1:99999/v1", "Port out of range"),
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://", "expected an http:// or https:// URL with a host"),
        ("ftp://127.0.0.1/v1", "expected an http:// or https:// URL with a host"),
    ):
        result = run("stream", "hi", "--provider", "openai", "--api-key", "k", "--base-url", url)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"argument --base-url: {url!r} is not a URL" in result.stderr or (
            f"got {url!r}" in result.stderr
        )
        assert message in result.stderr and result.stdout == ""
    # user:password@ and a key that goes in the Authorization header: two credentials
    url = "http://user:pw@127.0.0.1:9/v1"
    both = run("stream", "hi", "--provider", "openai", "--api-key", "k", "--base-url", url)
    assert both.returncode == 2 and "Traceback" not in both.stderr, both.stderr
    assert "rxllm: base_url holds user:password@" in both.stderr
    custom = run("stream", "hi", "--provider", "custom")
    assert custom.returncode == 2
    assert (
        custom.stderr.strip()
        == "rxllm: --provider custom needs --base-url URL (the endpoint's base URL)"
    )


def test_an_api_key_with_a_line_break_is_refused_without_printing_it() -> None:
    from rxllm.local.server import shared_server_url

    env = {**os.environ, "OPENAI_API_KEY": "sk-SECRET-KEY\r"}  # pasted from a CRLF file
    result = run("stream", "hi", "--provider", "openai", "--base-url", shared_server_url(), env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == (
        "rxllm: the API key from OPENAI_API_KEY holds a line break or control character"
    )
    result = run("stream", "hi", "--provider", "anthropic", "--api-key", "sk-SECRET-KEY\nx: y")
    assert result.returncode == 2 and "from --api-key" in result.stderr
    assert "SECRET" not in result.stdout + result.stderr


def test_arguments_that_are_not_utf8_are_refused_by_name() -> None:
    not_utf8 = os.fsdecode(b"hi \xff")  # as Python reads such bytes from argv
    for args, name in (
        ((not_utf8,), "prompt"),
        (("hi", "--model", not_utf8), "--model"),
        (("hi", "--param", f"user={not_utf8}"), "--param"),
    ):
        result = run("stream", *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"argument {name}: not UTF-8 text: b'" in result.stderr
        assert result.stdout == ""


def test_param_values_that_json_cannot_send_are_refused() -> None:
    for param, message in (
        ("temperature=NaN", "temperature=NaN: JSON cannot carry NaN"),
        ("top_p=1e999", "top_p=1e999: JSON cannot carry 1e999"),
        ("x=" + "[" * 100_000, "x=...: the JSON value is nested too deeply"),
        (
            'response_format={"type": json_object}',
            'response_format={"type": json_object}: not valid JSON (Expecting value',
        ),
    ):
        result = run("stream", "hi", "--no-tools", "--param", param)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"argument --param: {message}" in result.stderr and result.stdout == ""
    # a bare word is still a string, JSON still JSON
    assert run("stream", "hi", "--no-tools", "--param", "user=bob").returncode == 0


def test_a_base_url_without_a_provider_is_named_as_where_the_turn_streams_from() -> None:
    """`--base-url` alone streams the local wire from that URL: the banner names it, not
    the embedded server the turn never reached."""
    result = run("stream", "hi", "--no-tools", "--base-url", "http://127.0.0.1:9/v1")
    assert "(streaming from the OpenAI-compatible server at http://127.0.0.1:9/v1)" in (
        result.stderr
    )
    assert "embedded local provider" not in result.stderr


def test_a_turn_that_cannot_be_kept_or_sent_is_refused_before_it_runs(tmp_path: Path) -> None:
    for args, message in (
        (("",), "rxllm: the prompt is empty: pass the text to send"),
        (
            ("hi", "--param", "model=gpt-x"),
            "rxllm: --param model=...: the model is set with --model",
        ),
        (
            ("hi", "--record", str(tmp_path / "no" / "r.json")),
            f"rxllm: --record {tmp_path}/no/r.json: no directory",
        ),
        (("hi", "--plot", str(tmp_path)), f"rxllm: --plot {tmp_path}: is a directory"),
        (
            ("hi", "--raw", str(tmp_path / "no" / "turn.sse")),
            f"rxllm: --raw {tmp_path}/no/turn.sse: no directory",
        ),
    ):
        result = run("stream", "--no-tools", *args)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and result.stdout == ""  # the turn never ran


OPENAI_TURN = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def test_replay_reads_stdin_and_a_pipe_once() -> None:
    for name in ("-", "/dev/stdin"):  # the provider sniffed from the same bytes it replays
        result = subprocess.run(
            [*RXLLM, "replay", name, "--json"], input=OPENAI_TURN, capture_output=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        events = [EventAdapter.validate_json(line) for line in result.stdout.splitlines()]
        assert [e.type for e in events] == ["text", "done"]
        assert isinstance(events[0], TextDelta) and events[0].text == "Hi"


def test_replay_of_nothing_or_of_endless_bytes_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sse"
    empty.write_bytes(b"")
    for args in ((str(empty),), (str(empty), "--provider", "openai", "--json")):
        result = run("replay", *args)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.strip() == f"rxllm: {empty} is empty: nothing to replay"
    endless = run("replay", "/dev/zero", "--provider", "openai")
    assert endless.returncode == 2 and "Traceback" not in endless.stderr, endless.stderr
    assert (
        endless.stderr.strip() == "rxllm: /dev/zero is larger than 256 MiB: not a recorded response"
    )


def test_serve_refuses_a_port_or_pace_out_of_range() -> None:
    result = run("serve", "--port", "99999")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "argument --port: a port is 0 to 65535 (0: any free one), got 99999" in result.stderr
    result = run("serve", "--pace", "-1")
    assert (
        result.returncode == 2 and "argument --pace: expected seconds (0 or more)" in result.stderr
    )


def test_ctrl_c_keeps_the_record_of_what_came(tmp_path: Path) -> None:
    record_path = tmp_path / "r.json"
    child = subprocess.Popen(
        [*RXLLM, "stream", "--json", "--model", "fault/hang", "hi", "--record", str(record_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert child.stdout is not None
    first = EventAdapter.validate_json(child.stdout.readline())
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130 and err.strip().splitlines()[-1] == "rxllm: cancelled"
    record = StreamRecord.model_validate_json(record_path.read_text())
    assert record.terminal.type == "cancelled" and record.terminal.reason == "interrupted (Ctrl-C)"
    assert record.reasoning.startswith(getattr(first, "text", ""))


@pytest.mark.parametrize("json_flag", [["--json"], []], ids=["json", "text"])
def test_a_reader_that_left_keeps_the_record_of_what_came(
    tmp_path: Path, json_flag: list[str]
) -> None:
    """`rxllm stream --json --record turn.json hi | head -1`: the record was never
    written. Here the reader has left before the first event, so the first print fails."""
    record_path, raw_path = tmp_path / "r.json", tmp_path / "r.sse"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        child = subprocess.run(
            [
                *RXLLM,
                "stream",
                "hi",
                *json_flag,
                "--record",
                str(record_path),
                "--raw",
                str(raw_path),
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert child.returncode == 0 and "Traceback" not in child.stderr, child.stderr
    record = StreamRecord.model_validate_json(record_path.read_text())
    assert record.terminal.type == "cancelled"
    assert record.terminal.reason == "the output was closed (its reader left)"
    assert record.reasoning  # the event the reader missed is in the record
    assert raw_path.read_bytes().startswith(b"data: ")


def test_python_dash_m_rxllm_is_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rxllm", "--version"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and result.stdout.startswith("rxllm "), result.stderr


KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2


def test_the_banner_shows_no_password_or_key_written_into_the_base_url() -> None:
    """The URL as `Provider`'s repr shows it, its credentials redacted."""
    password, query_key = "hunter2-secret-password", "AIza" + "x" * 35
    url = f"http://me:{password}@127.0.0.1:9/v1?key={query_key}"
    result = run("stream", "hi", "--no-tools", "--base-url", url)
    banner = "(streaming from the OpenAI-compatible server at http://me:[redacted]@127.0.0.1:9"
    assert f"{banner}/v1?key=[redacted])" in result.stderr, result.stderr
    refused = run("stream", "hi", "--base-url", f"ftp://me:{password}@127.0.0.1/v1")
    assert refused.returncode == 2 and "ftp://me:[redacted]@127.0.0.1/v1" in refused.stderr
    for shown in (result.stdout, result.stderr, refused.stderr):
        assert password not in shown and query_key not in shown


async def test_raw_keeps_every_byte_but_a_key_the_server_echoed(
    serve: Serve, tmp_path: Path
) -> None:
    """A 200 stream whose error event quotes the key, cut between two reads: the --raw
    file has the key redacted, and replays as the turn went."""

    async def handler(request: web.Request) -> web.StreamResponse:
        key = request.headers["Authorization"].removeprefix("Bearer ")
        chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
        chunk["choices"] = [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]
        error = {"error": {"message": f"Incorrect API key provided: {key}", "code": 401}}
        body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(error)}\n\n".encode()
        cut = body.index(key.encode()) + 10
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body[:cut])
        await asyncio.sleep(0.05)  # two reads, the key cut between them
        await response.write(body[cut:])
        return response

    url = await serve(handler)
    raw_path = tmp_path / "turn.sse"
    args = ("stream", "hi", "--provider", "custom", "--base-url", url, "--api-key", KEY)
    args += ("--allow-private-network", "--no-tools", "--json", "--raw", str(raw_path))
    streamed = await _run_async(*args)
    raw = raw_path.read_bytes()
    assert KEY.encode() not in raw and KEY[:10].encode() not in raw
    assert b"Incorrect API key provided: [redacted]" in raw
    replayed = await _run_async("replay", str(raw_path), "--provider", "custom", "--json")
    assert replayed == streamed
    last = EventAdapter.validate_json(streamed.splitlines()[-1])
    assert last.type == "error" and last.error.message.endswith("[redacted]")


async def _run_async(*args: str) -> str:
    """The command run without blocking the loop that serves it; its stdout."""
    child = await asyncio.create_subprocess_exec(
        *RXLLM, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(child.communicate(), timeout=120)
    assert b"Traceback" not in err, err.decode()
    return out.decode()
