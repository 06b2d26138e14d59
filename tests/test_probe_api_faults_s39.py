"""Bad input at the public edges (session 39's prober, part D): each gets an error that
says what was wrong with it, where it is given."""

from __future__ import annotations

from pathlib import Path

import pytest

import rxllm
from tests.support import replay


def test_replay_of_a_str_naming_a_directory_says_it_is_a_directory(tmp_path: Path) -> None:
    # was FileNotFoundError: "replay: no file '/tmp/...'", of a path that exists
    with pytest.raises(IsADirectoryError, match=r"^replay: '.*' is a directory: pass the path"):
        rxllm.replay(str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"^replay: no file '.*missing\.sse'"):
        rxllm.replay(str(tmp_path / "missing.sse"))
    recording = tmp_path / "turn.sse"
    recording.write_bytes(b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n')
    assert replay(str(recording), "openai")[0] == rxllm.TextDelta(provider="openai", text="hi")
