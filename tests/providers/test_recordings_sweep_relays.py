"""Streams that relays and proxies write in one wire from another provider's upstream
(Gemini, Anthropic Messages and Responses as they write them), and the issues where
their users paste them: router-for-me/CLIProxyAPI's translators (OpenAI to Gemini,
Gemini and Codex to Claude), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential events or
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what a client of that wire should
see.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, log_messages, replay_every_way, summarize

# -- Gemini as relays write it ------------------------------------------------------------


def _gemini(*payloads: dict[str, Any]) -> bytes:
    """`alt=sse` frames of the payloads."""
    return b"".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n".encode() for p in payloads)


def _candidate(
    model: str, parts: list[dict[str, Any]], finish: str | None = None
) -> dict[str, Any]:
    """A chunk as CLIProxyAPI's OpenAI-to-Gemini translator writes it: the upstream's
    model under `model` (not `modelVersion`), no response id."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "model": model}


def test_cliproxyapi_openai_to_gemini_counts_the_thoughts_inside_the_candidates() -> None:
    """router-for-me/CLIProxyAPI internal/translator/openai/gemini/openai_gemini_response.go
    (an OpenAI-compatible upstream, deepseek-reasoner, to a Gemini client): the role
    chunk with empty `parts`, `reasoning_content` as a thought part, the text, the calls
    held until the finish and written all at once with `STOP` (no ids), then the
    upstream's usage-only chunk as `candidates: []` with `usageMetadata` whose
    `candidatesTokenCount` is `completion_tokens` (reasoning included) beside
    `thoughtsTokenCount` = `reasoning_tokens` and `totalTokenCount` = prompt +
    completion. Gemini's own candidates exclude the thoughts and its total adds them;
    here the total says the thoughts are inside: 15 output, 5 of them reasoning.
    Before: the thoughts were counted twice (20 output, a total of 40 against the
    relay's 35)."""
    model = "deepseek-reasoner"
    usage = {
        "promptTokenCount": 20,
        "candidatesTokenCount": 15,
        "totalTokenCount": 35,
        "thoughtsTokenCount": 5,
    }
    calls = [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}},
    ]
    with log_messages() as logs:
        events = replay_every_way(
            _gemini(
                _candidate(model, []),
                _candidate(model, [{"thought": True, "text": "The user wants both."}]),
                _candidate(model, [{"text": "Checking."}]),
                _candidate(model, calls, "STOP"),
                {"candidates": [], "usageMetadata": usage, "model": model},
            ),
            "google",
        )
    summary = summarize(events)
    assert [name for _, name, _ in summary.tool_calls] == ["get_weather", "get_time"]
    assert len({call_id for call_id, _, _ in summary.tool_calls}) == 2
    check(
        summary,
        Expect(
            text="Checking.",
            reasoning="The user wants both.",
            tools=tuple(summary.tool_calls),
            usage=(20, 15, 5, 0, 35),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
        ),
    )
    assert [c[2] for c in summary.tool_calls] == [{"city": "Paris"}, {"tz": "CET"}]
    # the relay's `model` is no Gemini field: logged, not read as the model
    assert any("['model']" in m for m in logs)
