"""Streams from JavaScript and TypeScript agents' and providers' test fixtures: Continue's
openai-adapters (its Anthropic, OpenAI and llama.cpp-style streams), OpenRouter's AI SDK
provider (OpenRouterTeam/ai-sdk-provider's chat model stream tests), Cline's and Roo
Code's provider tests (OpenRouter's usage-only chunk, MiniMax's Anthropic endpoint),
openai-node's chat stream index tests and TanStack AI's adapters, in shapes no other
test replays.

Each body is written by hand from the source named beside it (its essential events, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, replay_every_way, summarize

# -- Anthropic Messages ------------------------------------------------------------------


def _events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def test_continue_anthropic_text_deltas_without_an_index_or_a_block_start() -> None:
    """continuedev/continue packages/openai-adapters/src/test/token-usage.test.ts
    ("Anthropic should track usage in streaming responses"): `message_start` whose
    message is only its usage (10 input, 2 cache reads: no id, no model, no content),
    two `content_block_delta`s of text with no `index` and no `content_block_start`
    before them, a `message_delta` with usage and no `delta`, then `message_stop`.
    Continue reads "Hello world", 10 input and 5 output tokens, 2 of them cached (no
    stop reason was said: `other`).
    A text delta needs no block to be read; before, the missing `index` was a
    `KeyError` and the turn a protocol error."""
    body = _events(
        {
            "type": "message_start",
            "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 2}},
        },
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hello"}},
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": " world"}},
        {"type": "message_delta", "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Hello world", usage=(10, 5, 0, 2, 17), stop_reason="other", raw_stop_reason=None
        ),
    )
