"""Streams that relays and proxies write in one wire from another provider's upstream
(Gemini, Anthropic Messages and Responses as they write them), and the issues where
their users paste them: router-for-me/CLIProxyAPI's translators (OpenAI to Gemini,
Claude to Responses, the Gemini streams its Gemini-to-Responses translator reads) and
issues (#2928, and its fork kittors/CliRelay's #1053), 1rgs/claude-code-proxy (OpenAI
to Anthropic through LiteLLM), maxnowack/anthropic-proxy (OpenRouter to Anthropic), in
shapes no other test replays.

Each body is written by hand from the source named beside it (its essential events or
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what a client of that wire should
see.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Failed
from rxllm.pipeline.record import RecordBuilder
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize

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


def test_gemini_trailing_signatures_each_alone_after_the_text() -> None:
    """router-for-me/CLIProxyAPI internal/translator/gemini/openai/responses/
    trailing_signature_test.go (the Gemini 3 streams its Gemini-to-Responses translator
    reads, CLIProxyAPI#5513): the answer's text, then two chunks each holding only
    `{"text": "", "thoughtSignature": ...}`, the second with `STOP`. Both signatures
    belong to the turn, in order, and there is no reasoning text; the relay carries
    them back to Gemini in that order."""
    model = "gemini-3-flash-preview"

    def chunk(part: dict[str, Any], **candidate: Any) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"parts": [part], "role": "model"}, **candidate}],
            "modelVersion": model,
            "responseId": "issue-5513-cache-recovery",
        }

    events = replay_every_way(
        _gemini(
            chunk({"text": "recovery answer"}),
            chunk({"text": "", "thoughtSignature": "Q2lnMQ=="}),
            chunk({"text": "", "thoughtSignature": "Q2lnMg=="}, finishReason="STOP"),
        ),
        "google",
    )
    summary = summarize(events)
    assert summary.signatures == ["Q2lnMQ==", "Q2lnMg=="]
    check(
        summary, Expect(text="recovery answer", signatures=2, raw_stop_reason="STOP", model=model)
    )


# -- Anthropic Messages as relays write it --------------------------------------------------


def _messages(*payloads: dict[str, Any], done: bool = False) -> bytes:
    """Named SSE events, each under its own `type`; `done`: an OpenAI-style `data: [DONE]`
    after them."""
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _message_end(stop_reason: str, usage: dict[str, int]) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage,
        },
        {"type": "message_stop"},
    ]


# 1rgs/claude-code-proxy (server.py, `handle_streaming`: LiteLLM's OpenAI-style chunks to
# Anthropic events) opens every message with zero usage, the requested model, a text block
# at index 0 and a ping, before any chunk has come.
_CCP_OPENING = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_5f0c2a9e4b7d41c3a8e6f1b2",
            "type": "message",
            "role": "assistant",
            "model": "openai/gpt-4.1",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 0,
            },
        },
    },
    _block_start(0, {"type": "text", "text": ""}),
    {"type": "ping"},
]


def test_claude_code_proxy_calls_started_without_a_stop_between_and_a_done_line() -> None:
    """1rgs/claude-code-proxy server.py (`handle_streaming`, an OpenAI upstream through
    LiteLLM): the opening text block at 0 closed when the first call comes, each call a
    `tool_use` block from 1 up started while the one before is open (no
    `content_block_stop` between), its arguments as they came, then at the finish the
    stops of 1..n, `message_delta` with the output count alone, `message_stop` and an
    OpenAI-style `data: [DONE]` ("to match Anthropic's behavior"). Claude Code reads the
    text and both calls, each whole; the `[DONE]` after the end is passed over."""
    first = {"file_path": "src/app.py"}
    second = {"file_path": "src/util.py"}
    events = replay_every_way(
        _messages(
            *_CCP_OPENING,
            _block_delta(0, {"type": "text_delta", "text": "Reading both files."}),
            _block_stop(0),
            _block_start(1, {"type": "tool_use", "id": "call_Qm1", "name": "Read", "input": {}}),
            _block_delta(1, {"type": "input_json_delta", "partial_json": json.dumps(first)}),
            _block_start(2, {"type": "tool_use", "id": "call_Qm2", "name": "Read", "input": {}}),
            _block_delta(2, {"type": "input_json_delta", "partial_json": '{"file_path": '}),
            _block_delta(2, {"type": "input_json_delta", "partial_json": '"src/util.py"}'}),
            _block_stop(1),
            _block_stop(2),
            *_message_end("tool_use", {"output_tokens": 42}),
            done=True,
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Reading both files.",
            tools=(("call_Qm1", "Read", first), ("call_Qm2", "Read", second)),
            usage=(0, 42, 0, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="openai/gpt-4.1",
        ),
    )


def test_claude_code_proxy_error_stop_reason_is_a_failed_turn() -> None:
    """1rgs/claude-code-proxy server.py: where its translation of the upstream's stream
    raises, it ends the message with `message_delta` `{"stop_reason": "error"}` and
    `{"output_tokens": 0}`, `message_stop`, then `data: [DONE]`; the text so far stays in
    the open block at 0. "error" is no stop reason of Anthropic's: the turn failed, and
    reads as `error(kind="stream_error", code="error")` after the text that came.
    Before: `done(other)`, the cut answer passed off as a finished turn."""
    with log_messages() as logs:
        events = replay_every_way(
            _messages(
                *_CCP_OPENING,
                _block_delta(0, {"type": "text_delta", "text": "The first step is"}),
                *_message_end("error", {"output_tokens": 0}),
                done=True,
            ),
            "anthropic",
        )
    assert kinds(events) == ["text", "error"]
    summary = summarize(events)
    check(summary, Expect(text="The first step is", terminal="error", error_kind="stream_error"))
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert failure.error.code == "error"
    assert failure.error.message == "anthropic ended the turn with stop_reason 'error'"
    assert any("after the terminal event" in m for m in logs)  # the [DONE], passed over


def test_anthropic_proxy_thinking_in_the_text_block_and_a_call_over_it_at_index_0() -> None:
    """maxnowack/anthropic-proxy index.js (OpenRouter's chat stream to Anthropic events):
    one `text` block at index 0 takes both the upstream's `delta.reasoning`, as
    `thinking_delta`s, and its `delta.content`, as `text_delta`s; each call is a
    `tool_use` block at the upstream's own tool index, so the first starts at 0 over the
    open text block (never stopped); at `[DONE]` only the call blocks are stopped, then
    `tool_use` with the upstream's `completion_tokens`. The reasoning, the text, then
    both calls whole; the reasoning goes back as one unsigned block."""
    events = replay_every_way(
        _messages(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_k3v9x0q2m8c1z7w4",
                    "type": "message",
                    "role": "assistant",
                    "model": "deepseek/deepseek-r1",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            },
            {"type": "ping"},
            _block_start(0, {"type": "text", "text": ""}),
            _block_delta(0, {"type": "thinking_delta", "thinking": "Two folders: "}),
            _block_delta(0, {"type": "thinking_delta", "thinking": "list both."}),
            _block_delta(0, {"type": "text_delta", "text": "Listing them."}),
            _block_start(0, {"type": "tool_use", "id": "call_0x1", "name": "LS", "input": {}}),
            _block_delta(0, {"type": "input_json_delta", "partial_json": '{"path":'}),
            _block_delta(0, {"type": "input_json_delta", "partial_json": '"."}'}),
            _block_start(1, {"type": "tool_use", "id": "call_0x2", "name": "LS", "input": {}}),
            _block_delta(1, {"type": "input_json_delta", "partial_json": '{"path":"src"}'}),
            _block_stop(0),
            _block_stop(1),
            *_message_end("tool_use", {"output_tokens": 31}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Listing them.",
            reasoning="Two folders: list both.",
            signatures=0,
            tools=(("call_0x1", "LS", {"path": "."}), ("call_0x2", "LS", {"path": "src"})),
            usage=(0, 31, 0, 0, 31),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="deepseek/deepseek-r1",
        ),
    )
    builder = RecordBuilder("anthropic", "deepseek/deepseek-r1")
    for event in events:
        builder.add(event)
    parts = builder.build().reasoning_parts
    assert [(p.text, p.signature) for p in parts] == [("Two folders: list both.", "")]


# -- Responses as relays write it -----------------------------------------------------------


def _responses(*payloads: dict[str, Any]) -> bytes:
    """Named SSE events numbered in order, as the relays write them."""
    return "".join(
        f"event: {p['type']}\ndata: {json.dumps({**p, 'sequence_number': n})}\n\n"
        for n, p in enumerate(payloads)
    ).encode()


def _response(status: str, output: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_c1a2",
        "object": "response",
        "created_at": 1776643200,
        "status": status,
        "model": "claude-opus-4-6",
        "output": output,
        **fields,
    }


def _message(text: str | None, status: str = "completed") -> dict[str, Any]:
    content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "id": "msg_c1a2",
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def test_cliproxyapi_claude_to_responses_done_events_with_an_empty_text() -> None:
    """router-for-me/CLIProxyAPI#2928 (a Claude-compatible upstream, GLM, to codex exec
    through `/v1/responses`) and kittors/CliRelay#1053 (the same translator, Claude
    models): the text streams in `response.output_text.delta`s, but
    `response.output_text.done`, `response.content_part.done` and the message's
    `response.output_item.done` carry `text: ""`, and so here does the terminal's
    output. Codex and pi take the done text as the whole and show an empty reply; the
    deltas are the answer, said once."""
    where = {"item_id": "msg_c1a2", "output_index": 0, "content_index": 0}
    empty_part = {"type": "output_text", "text": "", "annotations": []}
    usage = {"input_tokens": 10, "output_tokens": 4, "total_tokens": 14}
    events = replay_every_way(
        _responses(
            {"type": "response.created", "response": _response("in_progress", [])},
            {"type": "response.in_progress", "response": _response("in_progress", [])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": _message(None, "in_progress"),
            },
            {"type": "response.content_part.added", **where, "part": empty_part},
            {"type": "response.output_text.delta", **where, "delta": "Hello"},
            {"type": "response.output_text.delta", **where, "delta": " world."},
            {"type": "response.output_text.done", **where, "text": ""},
            {"type": "response.content_part.done", **where, "part": empty_part},
            {"type": "response.output_item.done", "output_index": 0, "item": _message("")},
            {
                "type": "response.completed",
                "response": _response("completed", [_message("")], usage=usage),
            },
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="Hello world.",
            usage=(10, 4, 0, 0, 14),
            raw_stop_reason="completed",
            model="claude-opus-4-6",
        ),
    )
