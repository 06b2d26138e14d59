"""Bad input at the public edges (session 39's prober, part D): each gets an error that
says what was wrong with it, where it is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rxllm
from rxllm.testing import Call, call
from tests.support import replay
from tests.test_cli import run


def test_replay_of_a_str_naming_a_directory_says_it_is_a_directory(tmp_path: Path) -> None:
    # was FileNotFoundError: "replay: no file '/tmp/...'", of a path that exists
    with pytest.raises(IsADirectoryError, match=r"^replay: '.*' is a directory: pass the path"):
        rxllm.replay(str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"^replay: no file '.*missing\.sse'"):
        rxllm.replay(str(tmp_path / "missing.sse"))
    recording = tmp_path / "turn.sse"
    recording.write_bytes(b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n')
    assert replay(str(recording), "openai")[0] == rxllm.TextDelta(provider="openai", text="hi")


@pytest.mark.parametrize(
    ("given", "label"),
    [(lambda: call(""), "name"), (lambda: call("get_time", call_id=""), "call_id")],
    ids=["name", "call_id"],
)
def test_a_scripted_call_with_an_empty_name_or_id_is_refused(given: Any, label: str) -> None:
    # was taken as no name (the offered tool the user asks about) or no id (a generated
    # one): `call(name)` with a name read from an unset variable called another tool
    with pytest.raises(ValueError, match=rf"^a call's {label} is empty: leave it out"):
        given()


def test_a_scripted_call_without_a_name_or_id_still_picks_them() -> None:
    assert call() == Call(None, None, None)
    assert call("get_time", call_id="c1", tz="UTC") == Call("get_time", {"tz": "UTC"}, "c1")


@pytest.mark.parametrize("schema", ['{"type":"object"}', ' {"type": "object", "properties": {}}'])
def test_an_inline_json_schema_on_the_command_line_says_it_takes_a_file(schema: str) -> None:
    # was "argument --json-schema: {...}: No such file or directory"
    result = run("stream", "hi", "--no-tools", "--json-schema", schema)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "argument --json-schema: takes a FILE's path, and " in result.stderr
    assert "looks like inline JSON: save the schema to a file" in result.stderr
    assert result.stdout == ""  # the turn never ran


def test_a_json_schema_file_still_asks_for_json(tmp_path: Path) -> None:
    path = tmp_path / "weather.json"
    path.write_text('{"type": "object", "properties": {"city": {"type": "string"}}}')
    result = run("stream", "Paris?", "--no-tools", "--json", "--json-schema", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith('{"provider":"local"')
    missing = run("stream", "hi", "--json-schema", str(tmp_path / "nofile.json"))
    assert missing.returncode == 2 and "nofile.json: No such file or directory" in missing.stderr


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (("bench", "--bogus"), "usage: rxllm bench [-h] [-- BENCHMARK_OPTIONS ...]\n"),
        (("serve", "--bogus"), "usage: rxllm serve [-h]"),
        (("replay", "turn.sse", "--bogus"), "usage: rxllm replay [-h]"),
        (("stream", "hi", "--bogus"), "usage: rxllm stream [-h]"),
    ],
)
def test_an_unknown_option_of_a_command_shows_that_commands_usage(
    command: tuple[str, ...], usage: str
) -> None:
    # was the top parser's "usage: rxllm [-h] [--version] COMMAND ..." and "rxllm: error"
    result = run(*command)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(usage), result.stderr
    assert f"rxllm {command[0]}: error: unrecognized arguments: --bogus\n" in result.stderr
    assert result.stdout == ""
