"""Bad input at the public edges (session 39's probe): each gets a clear error at the
call, not a default the user never chose or a silent wrong result."""

from __future__ import annotations

import subprocess

import pytest

from tests.test_cli import RXLLM, run


@pytest.mark.parametrize("model", ["", "  "])
def test_an_empty_model_on_the_command_line_is_refused_not_replaced(model: str) -> None:
    # `--model "$MODEL"` with MODEL unset: was read as no --model, and the turn went to
    # the default model (gpt-4.1-mini with --provider openai), one nobody chose
    result = run("stream", "hi", "--no-tools", "--model", model)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"argument --model: expected a model name, got {model!r}" in result.stderr
    assert result.stdout == ""  # the turn never ran


@pytest.mark.parametrize("host", ["", " "])
def test_serve_on_an_empty_host_is_refused_not_opened_to_every_interface(host: str) -> None:
    # `--host "$HOST"` with HOST unset: aiohttp bound 0.0.0.0 and [::] (the local
    # server, its faults and redirects, open to the network) and printed http://:8765/v1
    try:
        result = subprocess.run(
            [*RXLLM, "serve", "--host", host, "--port", "0"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired as served:  # it listened instead of refusing
        pytest.fail(f"serve --host {host!r} listened: {served.stdout!r}")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "argument --host: expected a host to listen on" in result.stderr
    assert result.stdout == ""
