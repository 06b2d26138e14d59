"""Bad input at the public edges (session 39's probe): each gets a clear error at the
call, not a default the user never chose or a silent wrong result."""

from __future__ import annotations

import pytest

from tests.test_cli import run


@pytest.mark.parametrize("model", ["", "  "])
def test_an_empty_model_on_the_command_line_is_refused_not_replaced(model: str) -> None:
    # `--model "$MODEL"` with MODEL unset: was read as no --model, and the turn went to
    # the default model (gpt-4.1-mini with --provider openai), one nobody chose
    result = run("stream", "hi", "--no-tools", "--model", model)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"argument --model: expected a model name, got {model!r}" in result.stderr
    assert result.stdout == ""  # the turn never ran
