"""Stream readings session 35 saw and left open, each decided from the source that
writes the shape (a gateway's converter, the provider's reference): fixed where rxllm
misread. Bodies are written by hand from that source, replayed whole and cut at
arbitrary byte boundaries, and over a loopback server."""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm.events import ReasoningDelta
from rxllm.providers.anthropic import anthropic_messages
from tests.support import Expect, ServeBody, check, log_messages, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


async def _chat_record(serve_body: ServeBody, body: bytes) -> rxllm.StreamRecord:
    base_url = await serve_body(body)
    async with rxllm.provider("openai", api_key="k", base_url=base_url) as provider:
        return await provider.complete(
            rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        )


def _sent_to_anthropic(record: rxllm.StreamRecord) -> list[dict[str, Any]]:
    """The turn's content blocks as the next Anthropic request writes them."""
    _, messages = anthropic_messages(
        [rxllm.Message.user("hi"), record.to_message(), rxllm.Message.user("and?")]
    )
    return [
        block
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
    ]


# -- Helicone's Anthropic-to-chat converter: interleaved thinking --------------------------

# Helicone/helicone packages/llm-mapper/transform/providers/anthropic/streamedResponse/
# toOpenai.ts (`AnthropicToOpenAIStreamConverter`, its AI Gateway serving Claude on the
# chat wire): each `thinking_delta` is a chunk's `delta.reasoning`, whatever block it is
# in; `server_tool_use` and `web_search_tool_result` blocks are skipped; each thinking
# block's whole text and signature are kept by block index and all written at
# `message_delta`, on the finish chunk, as untyped `reasoning_details` entries
# `{"thinking", "signature"}`; `message_stop` is a choiceless usage chunk, no `[DONE]`.
_CLAUDE = "claude-sonnet-4-5-20250929"
_FIRST = ["The user asks about Paris weather;", " I should search."]
_SECOND = ["The results say 18C and sunny;", " answer briefly."]
_SIG_FIRST = "EqQBCkgIBRABGAIqQFirstBlockSignatureXk3Q"
_SIG_SECOND = "EpUCCkgIBRABGAIqQSecondBlockSignatureR7mW"


def _claude_chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> Any:
    choices = []
    if delta is not None:
        choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "object": "chat.completion.chunk",
        "created": 1766265214,
        "model": _CLAUDE,
        "system_fingerprint": "",
        "choices": choices,
        **extra,
    }


def _interleaved(*between: dict[str, Any]) -> bytes:
    """Two thinking blocks (a web search between them, which the converter skips, and
    any chunks `between`), the answer, and both blocks signed at the finish."""
    entries = [
        {"thinking": "".join(_FIRST), "signature": _SIG_FIRST},
        {"thinking": "".join(_SECOND), "signature": _SIG_SECOND},
    ]
    return _sse(
        _claude_chunk({"role": "assistant", "content": ""}),
        *(_claude_chunk({"reasoning": piece}) for piece in _FIRST),
        *(_claude_chunk(delta) for delta in between),
        *(_claude_chunk({"reasoning": piece}) for piece in _SECOND),
        _claude_chunk({"content": "It is 18C and sunny in Paris."}),
        _claude_chunk({"reasoning_details": entries}, "stop"),
        _claude_chunk(
            None, usage={"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508}
        ),
        done=False,
    )


def test_helicone_interleaved_thinking_signs_no_block_with_another_blocks_signature() -> None:
    """The two blocks' thinking streamed as one run of reasoning, and their signatures
    came apart at the finish: no signature is that run's. Before, the first entry's
    signature closed the whole run (both blocks' thinking signed as the first block)
    and the second's closed an empty block; now the thinking is said once and stays
    plain reasoning, with no signature."""
    with log_messages() as logged:
        events = replay_every_way(_interleaved(), "openai")
    check(
        summarize(events),
        Expect(
            text="It is 18C and sunny in Paris.",
            reasoning="".join(_FIRST + _SECOND),
            signatures=0,
            usage=(412, 96, 0, 0, 508),
            model=_CLAUDE,
        ),
    )
    assert not [e for e in events if isinstance(e, ReasoningDelta) and e.signature is not None]
    assert any("signed apart" in message for message in logged)


async def test_helicone_interleaved_thinking_goes_back_to_anthropic_without_a_wrong_signature(
    serve_body: ServeBody,
) -> None:
    """What the record sends back to Anthropic (a fallback, a history moved to the
    native wire): before, a thinking block holding both blocks' thinking signed with the
    first's signature, and an empty one with the second's, which the API refuses
    ("Invalid `signature` in `thinking` block"); now no thinking block, as for any
    reasoning without its own signature, and the text as it came. A text chunk between
    the blocks (the model wrote before searching) changes nothing."""
    record = await _chat_record(serve_body, _interleaved({"content": "Searching. "}))
    assert record.reasoning == "".join(_FIRST + _SECOND)
    assert [part.signature for part in record.reasoning_parts] == [None]
    assert _sent_to_anthropic(record) == [
        {"type": "text", "text": "Searching. It is 18C and sunny in Paris."}
    ]


def test_helicone_one_thinking_block_keeps_its_signature() -> None:
    """One block signed at the finish (the shape a890b02 read) is still that block's."""
    body = _sse(
        _claude_chunk({"role": "assistant", "content": ""}),
        *(_claude_chunk({"reasoning": piece}) for piece in _FIRST),
        _claude_chunk({"content": "Done."}),
        _claude_chunk(
            {"reasoning_details": [{"thinking": "".join(_FIRST), "signature": _SIG_FIRST}]},
            "stop",
        ),
        done=False,
    )
    summary = summarize(replay_every_way(body, "openai"))
    assert (summary.reasoning, summary.signatures) == ("".join(_FIRST), [_SIG_FIRST])
