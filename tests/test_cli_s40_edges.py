"""The command line at its edges (session 40, helper E): values a shell hands over
empty, a key given twice, two outputs on one file: each said as the user's mistake,
never read as something else, nor left to lose a file unsaid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rxllm.local.server import shared_server_url
from tests.support import CAPTURES, needs_captures
from tests.test_cli import run


@pytest.mark.parametrize("key", ["", "  "])
def test_an_empty_api_key_is_a_usage_error_not_the_env_key(key: str) -> None:
    # `--api-key "$KEY"` with KEY unset: was read as no --api-key, so the env var's key
    # was sent (here to a server that takes any key), or, without one, the turn went to
    # the local provider with a note that the env var is unset
    env = {**os.environ, "OPENAI_API_KEY": "sk-from-the-env"}
    args = ("stream", "hi", "--no-tools", "--provider", "openai", "--api-key", key)
    result = run(*args, "--base-url", shared_server_url(), env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"argument --api-key: expected a key, got {key!r}" in result.stderr
    assert result.stdout == ""  # the turn never ran
    unset = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    result = run(*args, env=unset)
    assert result.returncode == 2 and "local provider" not in result.stderr, result.stderr
    assert f"argument --api-key: expected a key, got {key!r}" in result.stderr


def test_a_given_api_key_is_still_sent() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    args = ("stream", "hi", "--no-tools", "--provider", "openai", "--api-key", "sk-given")
    result = run(*args, "--base-url", shared_server_url(), env=env)
    assert result.returncode == 0, result.stderr
    assert "[done] stop" in result.stdout


def test_an_empty_key_env_var_is_said_to_be_empty_not_unset() -> None:
    env = {**os.environ, "OPENAI_API_KEY": ""}
    result = run("stream", "hi", "--no-tools", "--provider", "openai", env=env)
    assert result.returncode == 0, result.stderr
    assert "(OPENAI_API_KEY is empty: using the embedded local provider" in result.stderr


@pytest.mark.parametrize("option", ["--image", "--tool-choice"])
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_image_or_tool_choice_is_refused_by_name(option: str, value: str) -> None:
    # --image '' was "cannot read the image file '.': Is a directory" (Path('') is '.'),
    # and --tool-choice '' "--tool-choice : the tool offered is get_weather"
    result = run("stream", "hi", option, value)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"argument {option}: expected " in result.stderr
    assert f"got {value!r}" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("option", ["--record", "--raw", "--plot"])
def test_an_empty_file_to_write_is_refused_not_called_a_directory(option: str) -> None:
    # was "rxllm: --record : is a directory" (Path('') is '.'), of a path the user never
    # named: `--record "$OUT"` with OUT unset
    result = run("stream", "hi", "--no-tools", option, "")
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.strip() == f"rxllm: {option}: expected a file to write, got ''"


def test_an_empty_schema_file_or_recording_is_refused_by_what_it_is() -> None:
    # were "argument --json-schema: : Is a directory" and "[Errno 2] No such file or
    # directory: ''"
    result = run("stream", "hi", "--no-tools", "--json-schema", "")
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert "argument --json-schema: expected a JSON Schema's file, got ''" in result.stderr
    result = run("replay", "")
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.strip() == "rxllm: expected a recording's file (-: stdin), got ''"


def test_a_param_given_twice_is_refused_not_the_last_one_sent() -> None:
    # was dict(args.params): temperature=3 went out, and temperature=2 was lost unsaid
    result = run("stream", "hi", "--no-tools", "--param", "temperature=2", "--param", "top_p=1",
                 "--param", "temperature=3")  # fmt: skip
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.strip() == (
        "rxllm: --param temperature=... is given more than once (2, 3): give it once"
    )
    once = run("stream", "hi", "--no-tools", "--param", "temperature=2", "--param", "top_p=1")
    assert once.returncode == 0, once.stderr


def test_two_outputs_naming_one_file_are_refused(tmp_path: Path) -> None:
    # was run: the wire bytes went to turn.out as they came, and the record then
    # overwrote them, the --raw file lost unsaid
    same = tmp_path / "turn.out"
    result = run(
        "stream", "hi", "--no-tools", "--record", str(same), "--raw", f"{tmp_path}/./turn.out"
    )
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.strip() == (
        f"rxllm: --record and --raw name the same file ({tmp_path}/./turn.out): give each its own"
    )
    assert not same.exists()  # the turn never ran
    apart = run(
        "stream", "hi", "--no-tools", "--record", str(same), "--raw", str(tmp_path / "t.sse")
    )
    assert apart.returncode == 0, apart.stderr
    assert same.read_text().startswith("{") and (tmp_path / "t.sse").read_bytes().startswith(
        b"data:"
    )


@needs_captures
def test_a_replay_plotted_onto_its_own_recording_is_refused(tmp_path: Path) -> None:
    # was run: a recording without a suffix (or `.raw`, a format matplotlib writes) was
    # read, then overwritten by the timeline's PNG
    pytest.importorskip("matplotlib")
    recording = tmp_path / "turn"
    body = (CAPTURES / "openai" / "chat_text_usage.sse").read_bytes()
    recording.write_bytes(body)
    result = run("replay", str(recording), "--plot", str(recording))
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.strip() == (
        f"rxllm: --plot {recording} is the recording replayed: it would be overwritten"
    )
    assert recording.read_bytes() == body
