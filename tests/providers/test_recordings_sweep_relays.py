"""Streams that relays and proxies write in one wire from another provider's upstream
(Gemini, Anthropic Messages and Responses as they write them), and the issues where
their users paste them: router-for-me/CLIProxyAPI's translators (OpenAI to Gemini,
Gemini to Claude, Claude to Responses, the Gemini streams its Gemini-to-Responses
translator reads) and issues (#1700, #2928, and its fork kittors/CliRelay's #1053),
1rgs/claude-code-proxy (OpenAI to Anthropic through LiteLLM),
maxnowack/anthropic-proxy (OpenRouter to Anthropic), justlovemaki/AIClient-2-API (chat
to Claude), MartialBE/one-hub (chat to Responses), LobeHub's heterogeneous-agent bridge
(an agent runtime to Anthropic), Wei-Shaw/claude-relay-service (the Responses streams
it reads), BerriAI/litellm#33315 (its `/v1/messages` adapter's empty blocks), a client
that works around them (Chevey339/kelivo's Gemini decoder tests), and Google's Code
Assist API as Gemini CLI reads it (google-gemini/gemini-cli), in shapes
no other test replays.

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


def test_code_assist_chunks_inside_a_response_envelope() -> None:
    """google-gemini/gemini-cli packages/core/src/code_assist/server.test.ts (Google's
    Code Assist API, `cloudcode-pa.googleapis.com/v1internal:streamGenerateContent`,
    which Gemini CLI and Antigravity call; CLIProxyAPI's `gemini-cli` translators answer
    in it too, each chunk wrapped as `{"response": ...}`): every chunk is
    `{"traceId": ..., "response": {candidates...}}`, a stray `id:` line between them.
    Gemini CLI reads each `response` as a chunk: "Hello", " World", then a call and
    `STOP`. Before: no chunk had candidates of its own, the answer was lost and the
    body read as cut short (`truncated`, retryable)."""

    def envelope(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": parts}, **extra.pop("candidate", {})}
        return {
            "traceId": "stream-trace-id",
            "response": {"candidates": [candidate], "modelVersion": "gemini-2.5-pro", **extra},
        }

    usage = {"promptTokenCount": 9, "candidatesTokenCount": 6, "totalTokenCount": 15}
    body = (
        _gemini(envelope([{"text": "Hello"}]))
        + b"id: 123\n"
        + _gemini(
            envelope([{"text": " World"}]),
            envelope(
                [{"functionCall": {"name": "test", "args": {}}}],
                candidate={"finishReason": "STOP", "safetyRatings": []},
                usageMetadata=usage,
            ),
        )
    )
    summary = summarize(replay_every_way(body, "google"))
    assert [(name, args) for _, name, args in summary.tool_calls] == [("test", {})]
    check(
        summary,
        Expect(
            text="Hello World",
            tools=tuple(summary.tool_calls),
            usage=(9, 6, 0, 0, 15),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
            model="gemini-2.5-pro",
        ),
    )


def test_kelivo_malformed_response_finish_is_a_failed_turn() -> None:
    """Chevey339/kelivo test/core/services/api/providers/google/google_decoder_test.dart
    ("marks MALFORMED_RESPONSE for retry when there are no tool calls"): a candidate with
    no parts and `finishReason: MALFORMED_RESPONSE`, after thoughts; the API sends it
    (googleapis/python-genai#2937: no member of google-genai's Python enum), and
    google-genai-kotlin's FinishReason says "token generation stopped because the
    response was malformed". Kelivo retries the turn: it is
    `error(kind="stream_error", code="MALFORMED_RESPONSE")`, its usage the failure's.
    Before: `done(other)`, a final, empty answer."""
    model = "gemini-3-pro-preview"
    usage = {"promptTokenCount": 40, "thoughtsTokenCount": 25, "totalTokenCount": 65}
    events = replay_every_way(
        _gemini(
            {
                "candidates": [
                    {"content": {"role": "model", "parts": [{"text": "Plan:", "thought": True}]}}
                ],
                "modelVersion": model,
            },
            {
                "candidates": [{"content": {"parts": []}, "finishReason": "MALFORMED_RESPONSE"}],
                "usageMetadata": usage,
                "modelVersion": model,
            },
        ),
        "google",
    )
    assert kinds(events) == ["reasoning", "usage", "error"]
    check(
        summarize(events),
        Expect(
            reasoning="Plan:",
            usage=(40, 25, 25, 0, 65),
            terminal="error",
            error_kind="stream_error",
        ),
    )
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert failure.error.code == "MALFORMED_RESPONSE"


def test_kelivo_usage_fixture_counts_the_thoughts_inside_the_candidates() -> None:
    """Chevey339/kelivo google_decoder_test.dart ("usage maps thoughts and cached content
    tokens"): `promptTokenCount` 80, `candidatesTokenCount` 12, `thoughtsTokenCount` 9,
    `cachedContentTokenCount` 4, `totalTokenCount` 92 (= prompt + candidates, as relays
    writing this wire from an OpenAI upstream count it). Kelivo reads 12 completion
    tokens, 9 of them reasoning, and 92 in all; so does rxllm: 76 uncached input, 4
    cached, 12 output. Before: 21 output and a total of 101."""
    usage = {
        "promptTokenCount": 80,
        "candidatesTokenCount": 12,
        "thoughtsTokenCount": 9,
        "cachedContentTokenCount": 4,
        "totalTokenCount": 92,
    }
    events = replay_every_way(
        _gemini(
            {
                "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
                "usageMetadata": usage,
            }
        ),
        "google",
    )
    check(summarize(events), Expect(text="ok", usage=(76, 12, 9, 4, 92), raw_stop_reason="STOP"))


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


def test_running_message_delta_without_a_stop_reason_while_a_call_streams() -> None:
    """lobehub/lobehub#18558 (packages/openapi/src/services/heterogeneous-direct.service.ts,
    an agent runtime's events written as Anthropic's): each usage update is a
    `message_delta` with `delta: {}` and the running `usage`, wherever it comes, and the
    stop its own `message_delta` later; anthropics/anthropic-sdk-typescript#1204: the
    SDK's stream accumulates any number of `message_delta`s (its test drives two). Here
    one comes while a call's arguments are still streaming. The SDK keeps reading the
    block: the text, the call whole, the later counts, `tool_use`, and the usage once.
    Before: the first `message_delta` ended the content, the call's arguments were cut
    at `{"path":` and the turn failed as `malformed_tool_arguments`."""
    call = {"type": "tool_use", "id": "toolu_01LhB3", "name": "LS", "input": {}}
    events = replay_every_way(
        _messages(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_hetero_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            },
            _block_start(0, {"type": "text", "text": ""}),
            _block_delta(0, {"type": "text_delta", "text": "Listing."}),
            _block_stop(0),
            _block_start(1, call),
            _block_delta(1, {"type": "input_json_delta", "partial_json": '{"path":'}),
            {
                "type": "message_delta",
                "delta": {},
                "usage": {"input_tokens": 120, "output_tokens": 8},
            },
            _block_delta(1, {"type": "input_json_delta", "partial_json": '"src"}'}),
            _block_stop(1),
            *_message_end("tool_use", {"input_tokens": 120, "output_tokens": 20}),
        ),
        "anthropic",
    )
    assert kinds(events) == ["text", "tool_start", "tool_request", "usage", "done"]
    check(
        summarize(events),
        Expect(
            text="Listing.",
            tools=(("toolu_01LhB3", "LS", {"path": "src"}),),
            usage=(120, 20, 0, 0, 140),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="claude-sonnet-4-5",
        ),
    )


def test_cliproxyapi_gemini_to_claude_triple_newlines_and_end_turn_after_a_call() -> None:
    """router-for-me/CLIProxyAPI internal/translator/gemini/claude/gemini_claude_response.go
    (a Gemini upstream to a Claude client, as it streamed before its signature work):
    every event ends in three newlines; `message_start` is its template with spaces
    after the colons, zero usage, the upstream's `responseId` and `modelVersion`; the
    thinking block never gets a signature; a call's block id is `{name}-{nanos}-{n}`, its
    `args` sent whole as one `input_json_delta`; the finish chunk's `message_delta` says
    `end_turn`, as the call came in an earlier chunk; `message_stop` only at `[DONE]`.
    Claude Code runs the call: the reasoning, the text, the call, `tool_use`."""
    start = (
        'event: message_start\ndata: {"type": "message_start", "message": {"id": "resp-8Jm2", '
        '"type": "message", "role": "assistant", "content": [], "model": "gemini-2.5-pro", '
        '"stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 0, '
        '"output_tokens": 0}}}\n\n\n'
    )
    call_id = "get_weather-1756200000123456789-1"
    rest = "".join(
        f"event: {p['type']}\ndata: {json.dumps(p, separators=(',', ':'))}\n\n\n"
        for p in (
            _block_start(0, {"type": "thinking", "thinking": ""}),
            _block_delta(0, {"type": "thinking_delta", "thinking": "Weather first."}),
            _block_stop(0),
            _block_start(1, {"type": "text", "text": ""}),
            _block_delta(1, {"type": "text_delta", "text": "Checking."}),
            _block_stop(1),
            _block_start(
                2, {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {}}
            ),
            _block_delta(2, {"type": "input_json_delta", "partial_json": '{"city":"Paris"}'}),
            _block_stop(2),
            *_message_end("end_turn", {"input_tokens": 12, "output_tokens": 30}),
        )
    )
    events = replay_every_way((start + rest).encode(), "anthropic")
    check(
        summarize(events),
        Expect(
            text="Checking.",
            reasoning="Weather first.",
            tools=((call_id, "get_weather", {"city": "Paris"}),),
            usage=(12, 30, 0, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="end_turn",
            model="gemini-2.5-pro",
        ),
    )


def test_cliproxyapi_codex_to_claude_a_text_delta_with_no_block_start() -> None:
    """router-for-me/CLIProxyAPI#1700 (Claude Code through the proxy to Codex,
    gpt-5.3-codex, the streamed output pasted): `message_start` with zero usage, a
    `content_block_delta` of text at index 0 with no `content_block_start` before it
    (and no stop after), then `message_delta` carrying the input count (10) beside the
    output (17), and `message_stop`. The text, its counts, `end_turn`."""
    events = replay_every_way(
        _messages(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_resp_0c1d",
                    "type": "message",
                    "role": "assistant",
                    "model": "gpt-5.3-codex",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            },
            _block_delta(0, {"type": "text_delta", "text": "ok"}),
            *_message_end("end_turn", {"input_tokens": 10, "output_tokens": 17}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="ok", usage=(10, 17, 0, 0, 27), raw_stop_reason="end_turn", model="gpt-5.3-codex"
        ),
    )


def test_litellm_messages_bridge_empty_text_block_between_two_thinking_blocks() -> None:
    """BerriAI/litellm#33315 (its `/v1/messages` adapter over a chat upstream, here a
    reasoner): before it, an empty `reasoning_content` chunk was an empty
    `thinking_delta` inside the open thinking block and an empty `content` chunk an empty
    `text_delta`; its follow-up (LIT-4435) leaves a payload-less chunk that opens a text
    block between two runs of thinking, empty, "an empty text block the Anthropic API
    rejects on the next turn". The thinking blocks start with `signature: ""` and get no
    signature. The reasoning (both runs), the answer, and no empty text; the turn goes
    back as two unsigned reasoning blocks and the text, no empty text block."""
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    events = replay_every_way(
        _messages(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_lit_4435",
                    "type": "message",
                    "role": "assistant",
                    "model": "deepseek-reasoner",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 5, "output_tokens": 0},
                },
            },
            _block_start(0, thinking),
            _block_delta(0, {"type": "thinking_delta", "thinking": "Step one."}),
            _block_delta(0, {"type": "thinking_delta", "thinking": ""}),
            _block_stop(0),
            _block_start(1, {"type": "text", "text": ""}),
            _block_delta(1, {"type": "text_delta", "text": ""}),
            _block_stop(1),
            _block_start(2, thinking),
            _block_delta(2, {"type": "thinking_delta", "thinking": " Step two."}),
            _block_stop(2),
            _block_start(3, {"type": "text", "text": ""}),
            _block_delta(3, {"type": "text_delta", "text": "Done."}),
            _block_stop(3),
            *_message_end("end_turn", {"output_tokens": 9}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Done.",
            reasoning="Step one. Step two.",
            usage=(5, 9, 0, 0, 14),
            raw_stop_reason="end_turn",
            model="deepseek-reasoner",
        ),
    )
    builder = RecordBuilder("anthropic", "deepseek-reasoner")
    for event in events:
        builder.add(event)
    message = builder.build().to_message()
    assert [(part.type, getattr(part, "text", None)) for part in message.content] == [
        ("reasoning", "Step one."),
        ("reasoning", " Step two."),
        ("text", "Done."),
    ]


def test_aiclient_2_api_openai_to_claude_without_message_start_or_block_start() -> None:
    """justlovemaki/AIClient-2-API src/converters/strategies/OpenAIConverter.js
    (`toClaudeStreamChunk`, a chat upstream to a Claude client: its `message_start` and
    block starts are commented out, "compatible with Claude Code but not Cherry
    Studio"): `reasoning_content` as `thinking_delta`s and `content` as `text_delta`s,
    all at index 0 with no `content_block_start`; at the finish `content_block_stop` 0, a
    `message_delta` whose usage is the finish chunk's (zeros when the upstream counts in a
    later chunk) and `message_stop`. The reasoning, then the text; zero counts are no
    usage; no model or id was said."""
    events = replay_every_way(
        _messages(
            _block_delta(0, {"type": "thinking_delta", "thinking": "A greeting."}),
            _block_delta(0, {"type": "text_delta", "text": "Hello"}),
            _block_delta(0, {"type": "text_delta", "text": " there."}),
            _block_stop(0),
            *_message_end(
                "end_turn",
                {
                    "input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 0,
                },
            ),
        ),
        "anthropic",
    )
    assert kinds(events) == ["reasoning", "text", "reasoning", "done"]  # its end: unsigned
    check(
        summarize(events),
        Expect(text="Hello there.", reasoning="A greeting.", raw_stop_reason="end_turn"),
    )


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


def test_one_hub_chat_to_responses_items_added_without_an_index_around_empty_messages() -> None:
    """MartialBE/one-hub relay/relay_util/responses_stream.go (a chat upstream, here a
    reasoner, to a Responses client): a new item wherever the chunk's kind changes, each
    `response.output_item.added` with no `output_index`; the role chunk's empty
    `content` opens a message item of `""` before the reasoning, and the finish chunk's
    empty delta one more after the call; the reasoning deltas name a `content_index`
    that runs on across items (no `summary_index`) and the reasoning item ends with
    `summary: []`, its text under `content`; the call's first delta is `""`. The
    reasoning, the text and the call, each once, and nothing from the empty messages."""
    base = {
        "id": "chatcmpl-9xQ2",
        "object": "response",
        "created_at": 1750000000,
        "model": "deepseek-reasoner",
        "status": "in_progress",
        "output": [],
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
    }
    arguments = '{"city":"Paris"}'
    items = {
        "msg_A": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": ""}],
        },
        "rs_B": {
            "type": "reasoning",
            "summary": [],
            "content": [{"type": "summary_text", "text": "Paris weather."}],
        },
        "msg_C": {"type": "message", "content": [{"type": "output_text", "text": "Checking."}]},
        "fc_D": {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": arguments,
        },
        "msg_E": {"type": "message", "content": [{"type": "output_text", "text": ""}]},
    }

    def item(item_id: str, status: str) -> dict[str, Any]:
        whole = {"id": item_id, **items[item_id], "status": status}
        if status == "in_progress":
            whole.update({"content": []} if "content" in whole else {})
            whole.update({"arguments": ""} if "arguments" in whole else {})
        return whole

    def message(index: int, item_id: str, content_index: int, text: str) -> list[dict[str, Any]]:
        where = {"item_id": item_id, "output_index": index, "content_index": content_index}
        part = {"type": "output_text", "text": ""}
        return [
            {"type": "response.output_item.added", "item": item(item_id, "in_progress")},
            {"type": "response.content_part.added", **where, "part": part},
            {"type": "response.output_text.delta", **where, "delta": text},
            {"type": "response.output_text.done", **where, "text": text},
            {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": item(item_id, "completed"),
            },
        ]

    reasoning = {"item_id": "rs_B", "output_index": 1}
    summary = {"type": "summary_text", "text": "Paris weather."}
    call = {"item_id": "fc_D", "output_index": 3}
    usage = {
        "input_tokens": 12,
        "output_tokens": 30,
        "total_tokens": 42,
        "output_tokens_details": {"reasoning_tokens": 9},
    }
    output = [item(item_id, "completed") for item_id in items]
    events = replay_every_way(
        _responses(
            {"type": "response.created", "response": base},
            {"type": "response.in_progress", "response": base},
            *message(0, "msg_A", 0, ""),
            {"type": "response.output_item.added", "item": item("rs_B", "in_progress")},
            {
                "type": "response.reasoning_summary_part.added",
                **reasoning,
                "content_index": 1,
                "part": {**summary, "text": ""},
            },
            {
                "type": "response.reasoning_summary_text.delta",
                **reasoning,
                "content_index": 1,
                "delta": "Paris ",
            },
            {
                "type": "response.reasoning_summary_text.delta",
                **reasoning,
                "content_index": 1,
                "delta": "weather.",
            },
            {
                "type": "response.reasoning_summary_text.done",
                **reasoning,
                "summary_index": 0,
                "text": summary["text"],
            },
            {
                "type": "response.reasoning_summary_part.done",
                **reasoning,
                "summary_index": 0,
                "part": summary,
            },
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": item("rs_B", "completed"),
            },
            *message(2, "msg_C", 1, "Checking."),
            {"type": "response.output_item.added", "item": item("fc_D", "in_progress")},
            {"type": "response.function_call_arguments.delta", **call, "delta": ""},
            {"type": "response.function_call_arguments.delta", **call, "delta": arguments},
            {"type": "response.function_call_arguments.done", **call, "arguments": arguments},
            {
                "type": "response.output_item.done",
                "output_index": 3,
                "item": item("fc_D", "completed"),
            },
            *message(4, "msg_E", 2, ""),
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": output, "usage": usage},
            },
        ),
        "openai-responses",
    )
    assert kinds(events) == ["reasoning", "text", "tool_start", "tool_request", "usage", "done"]
    check(
        summarize(events),
        Expect(
            text="Checking.",
            reasoning="Paris weather.",
            tools=(("call_1", "get_weather", {"city": "Paris"}),),
            usage=(12, 30, 9, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="deepseek-reasoner",
        ),
    )


def test_a_call_whose_whole_arguments_came_twice_as_deltas() -> None:
    """Wei-Shaw/claude-relay-service src/services/openaiResponsesToAnthropic.js (a
    Responses upstream to a Claude client): "Some upstream streams emit duplicated
    complete JSON payloads like: {"a":1}{"a":1}" (the relay keeps the last valid
    object). Here the call's whole arguments come as two
    `response.function_call_arguments.delta`s, then `function_call_arguments.done` and
    the done item say them once. The call is read with the arguments said done, once;
    the doubled deltas are not parsed as the call's input."""
    arguments = '{"path":"src"}'
    added = {
        "id": "fc_7Qd",
        "type": "function_call",
        "status": "in_progress",
        "call_id": "call_7Qd",
        "name": "LS",
        "arguments": "",
    }
    done = {**added, "status": "completed", "arguments": arguments}
    where = {"item_id": "fc_7Qd", "output_index": 0}
    usage = {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}
    events = replay_every_way(
        _responses(
            {"type": "response.created", "response": _response("in_progress", [])},
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
            {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
            {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
            {"type": "response.output_item.done", "output_index": 0, "item": done},
            {"type": "response.completed", "response": _response("completed", [done], usage=usage)},
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("call_7Qd", "LS", {"path": "src"}),),
            usage=(30, 12, 0, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="claude-opus-4-6",
        ),
    )
