"""Streams from the SDKs' own test fixtures and from the apps that read them (the
Anthropic SDKs' streaming fixtures, google-genai's tests, goose's and crush's recorded
provider lines, the chunks opencode's, Jan's, Open WebUI's, Hermes Agent's and elizaOS's
code and issues quote), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential events, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what the source and its own test say.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import reactivex.operators as ops

from rxllm import replay
from rxllm.events import (
    Done,
    ReasoningDelta,
    Refusal,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
)
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize

# -- Anthropic Messages ------------------------------------------------------------------


def _events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _message_start(message_id: str, model: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
    }
    if usage is not None:
        message["usage"] = usage
    return {"type": "message_start", "message": message}


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _text_block(index: int, text: str) -> tuple[dict[str, Any], ...]:
    return (
        _start(index, {"type": "text", "text": ""}),
        _delta(index, {"type": "text_delta", "text": text}),
        _stop(index),
    )


def _end(stop_reason: str, usage: dict[str, Any], **delta: Any) -> tuple[dict[str, Any], ...]:
    message_delta = {"stop_reason": stop_reason, "stop_sequence": None, **delta}
    return (
        {"type": "message_delta", "delta": message_delta, "usage": usage},
        {"type": "message_stop"},
    )


def test_a_compaction_summary_in_two_deltas_each_with_its_encrypted_content() -> None:
    """anthropics/anthropic-sdk-python tests/lib/streaming/fixtures/
    compaction_multi_delta_response.txt (claude-opus-4-7): a `compaction` block started
    with `content` and `encrypted_content` both `null`, then two `compaction_delta`s, each
    with a piece of the summary and an `encrypted_content` of its own, then the answer.
    The block is one reasoning delta whose details hold the whole summary and the last
    `encrypted_content` (the block as it ends, to send back), before the text."""
    body = _events(
        _message_start(
            "msg_01CompactionMultiDelta",
            "claude-opus-4-7",
            {"input_tokens": 30, "output_tokens": 1},
        ),
        _start(0, {"type": "compaction", "content": None, "encrypted_content": None}),
        _delta(
            0,
            {
                "type": "compaction_delta",
                "content": "Earlier conversation ",
                "encrypted_content": "EpwBopaque_chunk_one",
            },
        ),
        _delta(
            0,
            {
                "type": "compaction_delta",
                "content": "summarized in full.",
                "encrypted_content": "EpwBopaque_chunk_two",
            },
        ),
        _stop(0),
        *_text_block(1, "Hello there!"),
        *_end("end_turn", {"output_tokens": 8}),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Hello there!",
            usage=(30, 8, 0, 0, 38),
            raw_stop_reason="end_turn",
            model="claude-opus-4-7",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]
    assert events[0].model_dump()["details"] == {
        "type": "compaction",
        "content": "Earlier conversation summarized in full.",
        "encrypted_content": "EpwBopaque_chunk_two",
    }


def test_a_refusal_with_no_text_explained_in_its_stop_details() -> None:
    """anthropic-sdk-python fixtures/refusal_response.txt (claude-opus-4-7): an empty
    text block, then `message_delta` with stop_reason `refusal` and `stop_details`
    `{type: refusal, category: cyber, explanation}`, its usage 120 output tokens, 67 of
    them thinking (`output_tokens_details.thinking_tokens`). The SDK's test reads the
    category and explanation off the message. The turn is the explanation as a refusal
    (no text), the thinking counted as reasoning, and `content_filter`."""
    explanation = "This request was refused due to policy."
    body = _events(
        _message_start(
            "msg_01RefusalTestMessage", "claude-opus-4-7", {"input_tokens": 20, "output_tokens": 1}
        ),
        _start(0, {"type": "text", "text": ""}),
        _stop(0),
        *_end(
            "refusal",
            {"output_tokens": 120, "output_tokens_details": {"thinking_tokens": 67}},
            stop_details={"type": "refusal", "category": "cyber", "explanation": explanation},
        ),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="",
            refusal=explanation,
            usage=(20, 120, 67, 0, 140),
            stop_reason="content_filter",
            raw_stop_reason="refusal",
            model="claude-opus-4-7",
        ),
    )
    assert [type(ev) for ev in events[:1]] == [Refusal]


def test_the_last_message_delta_restates_every_count_and_names_the_container() -> None:
    """anthropic-sdk-python fixtures/message_delta_fields_response.txt: `message_start`
    counts 25 input, 10 cache writes, 5 cache reads; the final `message_delta` carries
    `container` `{id, expires_at}` and a whole usage again, every count moved (40 input,
    12 written, 7 read, 8 output of which 3 thinking, `server_tool_use`). "Every field
    the final `message_delta` carried must land on the accumulated message": the usage is
    the delta's, and `done` names the container."""
    body = _events(
        _message_start(
            "msg_01MessageDeltaFields",
            "claude-sonnet-4-5",
            {
                "input_tokens": 25,
                "cache_creation_input_tokens": 10,
                "cache_read_input_tokens": 5,
                "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 0},
                "output_tokens": 1,
                "service_tier": "standard",
            },
        ),
        *_text_block(0, "Hello there!"),
        *_end(
            "end_turn",
            {
                "input_tokens": 40,
                "cache_creation_input_tokens": 12,
                "cache_read_input_tokens": 7,
                "output_tokens": 8,
                "output_tokens_details": {"thinking_tokens": 3},
                "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0},
            },
            stop_details=None,
            container={"id": "container_01AbCdEfGh", "expires_at": "2025-01-01T00:00:00Z"},
        ),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Hello there!",
            usage=(40, 8, 3, 7, 67),
            cache_write=12,
            raw_stop_reason="end_turn",
            model="claude-sonnet-4-5",
        ),
    )
    done = events[-1]
    assert isinstance(done, Done) and done.container == "container_01AbCdEfGh"


def test_usage_first_said_in_the_message_delta_with_its_iterations() -> None:
    """anthropic-sdk-python fixtures/beta_usage_omitted_with_optional_fields_response.txt:
    `message_start` without `usage` at all; the `message_delta` holds every count (12
    input, 4 written, 3 read, 6 output of which 2 thinking), one `iterations` entry of
    type `message` with the same counts, `server_tool_use` and `fallback_credit`. The
    usage is the delta's, counted once (the one iteration is the turn, not more of it)."""
    body = _events(
        _message_start("msg_beta_usage_omitted_optional", "claude-test", None),
        *_text_block(0, "Hello"),
        *_end(
            "end_turn",
            {
                "input_tokens": 12,
                "cache_creation_input_tokens": 4,
                "cache_read_input_tokens": 3,
                "output_tokens": 6,
                "output_tokens_details": {"thinking_tokens": 2},
                "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0},
                "iterations": [
                    {
                        "type": "message",
                        "model": "claude-test",
                        "input_tokens": 12,
                        "cache_creation_input_tokens": 4,
                        "cache_read_input_tokens": 3,
                        "output_tokens": 6,
                    }
                ],
                "fallback_credit": {"status": {"type": "redeemed"}},
            },
        ),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Hello",
            usage=(12, 6, 2, 3, 25),
            cache_write=4,
            raw_stop_reason="end_turn",
            model="claude-test",
        ),
    )


def test_server_results_beside_a_client_call_one_of_a_tool_never_started() -> None:
    """anthropic-sdk-python fixtures/server_tool_result_response.txt
    (claude-sonnet-4-20250514): a `server_tool_use` web_search started with `input: {}`
    and no input deltas; a client `tool_use` with `caller: {type: direct}` and its input
    in one `input_json_delta`; a `web_search_tool_result` for the search; then a
    `code_execution_tool_result` for `svu_code_001`, a call this stream never started.
    The client call is the one tool request, the search a server call with `{}`, and both
    results are shown, the second named after its block type; `tool_use` ends it."""
    body = _events(
        _message_start(
            "msg_server_tool_result_test",
            "claude-sonnet-4-20250514",
            {
                "input_tokens": 50,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
                "service_tier": "standard",
            },
        ),
        _start(
            0, {"type": "server_tool_use", "id": "svu_web_001", "name": "web_search", "input": {}}
        ),
        _stop(0),
        _start(
            1,
            {
                "type": "tool_use",
                "id": "tu_client_001",
                "name": "ask_internal_tool",
                "caller": {"type": "direct"},
                "input": {},
            },
        ),
        _delta(1, {"type": "input_json_delta", "partial_json": '{"query":"test"}'}),
        _stop(1),
        _start(
            2,
            {
                "type": "web_search_tool_result",
                "tool_use_id": "svu_web_001",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://example.com",
                        "title": "Example Result",
                        "encrypted_content": "enc_abc123",
                        "page_age": None,
                    }
                ],
            },
        ),
        _stop(2),
        _start(
            3,
            {
                "type": "code_execution_tool_result",
                "tool_use_id": "svu_code_001",
                "content": {
                    "type": "code_execution_result",
                    "return_code": 0,
                    "stdout": "hello",
                    "stderr": "",
                    "content": [],
                },
            },
        ),
        _stop(3),
        *_end("tool_use", {"output_tokens": 20}),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("tu_client_001", "ask_internal_tool", {"query": "test"}),),
            usage=(50, 20, 0, 0, 70),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="claude-sonnet-4-20250514",
        ),
    )
    servers = [(ev.call_id, ev.name) for ev in events if isinstance(ev, ServerToolCall)]
    assert servers == [("svu_web_001", "web_search")]
    results = [(ev.call_id, ev.name) for ev in events if isinstance(ev, ServerToolResult)]
    assert results == [("svu_web_001", "web_search"), ("svu_code_001", "code_execution")]


def test_padded_data_lines_a_call_cut_by_max_tokens_and_no_final_blank_line() -> None:
    """anthropic-sdk-python fixtures/incomplete_partial_json_response.txt
    (claude-3-7-sonnet-20250219): every `data:` line has spaces before its last brace
    (`{...}          }`), a `ping` is written `{"type": "ping"}`, the `make_file` call's
    input stops mid-string when `message_delta` says `max_tokens`, and the body ends
    with `message_stop` and no blank line after it. The text is read, the call is never
    requested: the turn ends in `malformed_tool_arguments` naming the call and the
    limit, after the usage. The SDK's own test expects the same (its partial-JSON
    reader refuses the input)."""

    def padded(payload: dict[str, Any], pad: str) -> str:
        return f"event: {payload['type']}\ndata: {json.dumps(payload)[:-1]}{pad}}}"

    lines = [
        padded(
            _message_start(
                "msg_01UdjYBBipA9omjYhicnevgq",
                "claude-3-7-sonnet-20250219",
                {
                    "input_tokens": 450,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                    "service_tier": "standard",
                },
            ),
            "          ",
        ),
        padded(_start(0, {"type": "text", "text": ""}), "         "),
        'event: ping\ndata: {"type": "ping"}',
        padded(_delta(0, {"type": "text_delta", "text": "I'll save it in taxes.txt."}), "  "),
        padded(_stop(0), " "),
        padded(
            _start(
                1,
                {
                    "type": "tool_use",
                    "id": "toolu_01EKqbqmZrGRXy18eN7m9kvY",
                    "name": "make_file",
                    "input": {},
                },
            ),
            "     ",
        ),
        padded(_delta(1, {"type": "input_json_delta", "partial_json": ""}), "       "),
        padded(
            _delta(1, {"type": "input_json_delta", "partial_json": '{"filename": "taxes.txt'}),
            "   ",
        ),
        padded(
            _delta(
                1,
                {"type": "input_json_delta", "partial_json": '", "lines_of_text": [\n"# TAX",'},
            ),
            "        ",
        ),
        padded(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
                "usage": {"output_tokens": 124},
            },
            "    ",
        ),
        'event: message_stop\ndata: {"type":"message_stop" }',
    ]
    body = "\n\n".join(lines).encode()
    events = replay_every_way(body, "anthropic")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="I'll save it in taxes.txt.",
            usage=(450, 124, 0, 0, 574),
            terminal="error",
            error_kind="malformed_tool_arguments",
        ),
    )
    assert kinds(events) == ["text", "tool_start", "usage", "error"]
    error = events[-1].model_dump()["error"]
    assert "toolu_01EKqbqmZrGRXy18eN7m9kvY" in error["message"]
    assert "max_tokens" in error["message"]


def test_a_turn_without_usage_and_a_done_line_of_an_unknown_field() -> None:
    """anthropics/anthropic-sdk-typescript tests/api-resources/beta/MessageStream.test.ts
    (its mock server, claude-2.1): `message_start` and `message_delta` carry no `usage`
    at all, the text comes five characters at a time, and the body ends with
    `done: [DONE]`, a field the event-stream format does not know (ignored, with no
    `data`: no event). The turn is its text and `stop`, with no usage event (nothing
    was counted), and the stray line is no error."""
    message = _message_start("msg_01hhptzfxdaeehfxfv070yb6b8", "claude-2.1", None)
    body = (
        _events(
            message,
            _start(0, {"type": "text", "text": ""}),
            *(
                _delta(0, {"type": "text_delta", "text": piece})
                for piece in ("Hello", " ther", "e!")
            ),
            _stop(0),
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}},
            {"type": "message_stop"},
        )
        + b"done: [DONE]\n\n"
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Hello there!",
            usage=None,
            raw_stop_reason="end_turn",
            model="claude-2.1",
        ),
    )


def test_vllm_messages_endpoint_without_message_type_and_a_done_line_after_the_stop() -> None:
    """vllm-project/vllm vllm/entrypoints/anthropic/serving.py
    (`message_stream_converter`) and tests/entrypoints/anthropic/
    test_message_stream_converter.py (its reasoning, text and `Agent` call in one turn):
    vLLM's `/v1/messages` writes `message_start` without the message's `type` and `role`
    (pydantic's `exclude_unset`), `index` before `type` in every block event, closes a
    thinking block with a `signature_delta` of a fresh uuid4 hex, and after
    `message_stop` sends `data: [DONE]`, as its chat wire does. The turn is the
    reasoning (signed), the text, the call and its usage; the `[DONE]` after the
    terminal event is no error."""

    def block(index: int, kind: str, **fields: Any) -> dict[str, Any]:
        return {"index": index, "type": kind, **fields}

    signature = "5f0c1e2d3b4a49c8a7e6d5c4b3a29180"
    body = (
        _events(
            {
                "type": "message_start",
                "message": {
                    "id": "chatcmpl-9f1",
                    "content": [],
                    "model": "Qwen/Qwen3-0.6B",
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 25, "output_tokens": 0},
                },
            },
            block(0, "content_block_start", content_block={"type": "thinking", "thinking": ""}),
            block(
                0,
                "content_block_delta",
                delta={"type": "thinking_delta", "thinking": "Let me start."},
            ),
            block(
                0, "content_block_delta", delta={"type": "signature_delta", "signature": signature}
            ),
            block(0, "content_block_stop"),
            block(1, "content_block_start", content_block={"type": "text", "text": ""}),
            block(
                1,
                "content_block_delta",
                delta={"type": "text_delta", "text": "Sure, let me check. "},
            ),
            block(1, "content_block_stop"),
            block(
                2,
                "content_block_start",
                content_block={"type": "tool_use", "id": "call_1", "name": "Agent", "input": {}},
            ),
            block(
                2,
                "content_block_delta",
                delta={"type": "input_json_delta", "partial_json": '{"description":"x"}'},
            ),
            block(2, "content_block_stop"),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"input_tokens": 25, "output_tokens": 31},
            },
            {"type": "message_stop"},
        )
        + b"data: [DONE]\n\n"
    )
    events = replay_every_way(body, "anthropic")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="Sure, let me check. ",
            reasoning="Let me start.",
            signatures=1,
            tools=(("call_1", "Agent", {"description": "x"}),),
            usage=(25, 31, 0, 0, 56),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="Qwen/Qwen3-0.6B",
        ),
    )
    assert summary.signatures == [signature]


def test_a_line_break_as_text_on_an_open_tool_use_block() -> None:
    """sgl-project/sglang#24293 (its `/v1/messages` over the `qwen3_coder` parser): the
    `\\n` the parser emits between two `</tool_call><tool_call>` comes as a `text_delta`
    stamped with the index of the `tool_use` block still open, which the Anthropic SDKs
    refuse ("Content block is not a text block"). The line break is text, the first
    call's input is whole, and both calls are requested in order."""
    body = _events(
        _message_start("msg_sglang", "Qwen3-Coder", {"input_tokens": 10, "output_tokens": 0}),
        _start(0, {"type": "tool_use", "id": "call_a", "name": "read", "input": {}}),
        _delta(0, {"type": "input_json_delta", "partial_json": '{"path": "a.py"}'}),
        _delta(0, {"type": "text_delta", "text": "\n"}),
        _stop(0),
        _start(1, {"type": "tool_use", "id": "call_b", "name": "read", "input": {}}),
        _delta(1, {"type": "input_json_delta", "partial_json": '{"path": "b.py"}'}),
        _stop(1),
        *_end("tool_use", {"output_tokens": 30}),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="\n",
            tools=(("call_a", "read", {"path": "a.py"}), ("call_b", "read", {"path": "b.py"})),
            usage=(10, 30, 0, 0, 40),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="Qwen3-Coder",
        ),
    )


def test_llama_cpp_messages_endpoint_calls_without_input_and_a_late_empty_signature() -> None:
    """ggml-org/llama.cpp tools/server/server-task.cpp (`to_json_anthropic_partial`,
    `to_json_anthropic_stream`: its `/v1/messages`): `message_start` splits the prompt
    into `cache_read_input_tokens` and the uncached `input_tokens`; a `tool_use` block
    starts with `id` and `name` and no `input` key at all; each chunk's last event
    carries the server's `timings`; and the final chunk closes everything at once: the
    thinking block's `signature_delta` with an empty signature (llama.cpp signs
    nothing), then every block's stop, the calls' after the text's. A call whose
    arguments never came (no fragment) is a call with no parameters. The reasoning is
    unsigned, both calls are requested, the usage keeps the cache apart."""
    timings = {"prompt_n": 20, "prompt_ms": 5.1, "predicted_n": 3, "predicted_ms": 30.2}
    body = _events(
        _message_start(
            "chatcmpl-llama",
            "qwen3",
            {"cache_read_input_tokens": 12, "input_tokens": 8, "output_tokens": 0},
        ),
        _start(0, {"type": "thinking", "thinking": ""}),
        {
            **_delta(0, {"type": "thinking_delta", "thinking": "Weather, then time."}),
            "timings": timings,
        },
        _start(1, {"type": "tool_use", "id": "call_ll1", "name": "get_weather"}),
        {
            **_delta(1, {"type": "input_json_delta", "partial_json": '{"city":"Paris"}'}),
            "timings": timings,
        },
        _start(2, {"type": "tool_use", "id": "call_ll2", "name": "get_time"}),
        _delta(0, {"type": "signature_delta", "signature": ""}),
        _stop(0),
        _stop(1),
        _stop(2),
        *_end("tool_use", {"output_tokens": 25}),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="Weather, then time.",
            signatures=0,
            tools=(("call_ll1", "get_weather", {"city": "Paris"}), ("call_ll2", "get_time", {})),
            usage=(8, 25, 0, 12, 45),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="qwen3",
        ),
    )


def test_ollama_messages_endpoint_thinking_never_signed_and_a_call_in_one_fragment() -> None:
    """ollama/ollama anthropic/anthropic.go (`StreamConverter.Process`, its
    `/v1/messages` over a local model): a thinking block that never gets a
    `signature_delta` (Ollama signs nothing) and is closed by the text's arrival; the
    text closed in turn by a call, whose `tool_use` starts with `input: {}` and whose
    arguments come whole in one `input_json_delta`; `message_delta` restating
    `input_tokens` beside `output_tokens`. Reasoning, text and the call, in order; the
    usage counted once."""
    body = _events(
        _message_start("msg_0a1b2c", "qwen3:8b", {"input_tokens": 42, "output_tokens": 0}),
        _start(0, {"type": "thinking", "thinking": ""}),
        _delta(0, {"type": "thinking_delta", "thinking": "The user wants the weather."}),
        _stop(0),
        _start(1, {"type": "text", "text": ""}),
        _delta(1, {"type": "text_delta", "text": "Checking Paris."}),
        _stop(1),
        _start(2, {"type": "tool_use", "id": "call_4f2", "name": "get_weather", "input": {}}),
        _delta(2, {"type": "input_json_delta", "partial_json": '{"city":"Paris"}'}),
        _stop(2),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"input_tokens": 42, "output_tokens": 17},
        },
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Checking Paris.",
            reasoning="The user wants the weather.",
            tools=(("call_4f2", "get_weather", {"city": "Paris"}),),
            usage=(42, 17, 0, 0, 59),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="qwen3:8b",
        ),
    )
    assert kinds(events)[:4] == ["reasoning", "text", "tool_start", "tool_request"]


# -- Chat Completions --------------------------------------------------------------------


def _chat(*payloads: dict[str, Any]) -> bytes:
    return ("".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + "data: [DONE]\n\n").encode()


BEDROCK_CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"


def _databricks(
    delta: dict[str, Any], finish: str | None = None, completion: int | None = None
) -> dict[str, Any]:
    """A chunk as Databricks' serving endpoint writes Claude on Bedrock: the usage in
    every chunk, the prompt counted from the first, the rest `null` until the finish."""
    total = None if completion is None else 4982 + completion
    return {
        "model": BEDROCK_CLAUDE,
        "choices": [{"delta": {"role": "assistant", **delta}, "index": 0, "finish_reason": finish}],
        "usage": {"prompt_tokens": 4982, "completion_tokens": completion, "total_tokens": total},
        "object": "chat.completion.chunk",
        "id": "msg_bdrk_014pifLTHsNZz6Lmtw1ywgDJ",
        "created": 1753288340,
    }


def _fragment(index: int, arguments: str, call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": "developer__shell", "arguments": arguments},
        }
    return {"content": None, "tool_calls": [call]}


def test_databricks_claude_calls_numbered_from_one_after_text_and_usage_in_every_chunk() -> None:
    """block/goose crates/goose/src/providers/formats/openai.rs
    `test_streamed_multi_tool_response_to_messages` (Databricks serving Claude Sonnet 4
    on Bedrock, ids `msg_bdrk_...`, `toolu_bdrk_...`): text first, then two parallel
    `developer__shell` calls at tool indexes 1 and 2 (Bedrock's content-block numbers:
    the text was block 0), each opened with empty arguments and an empty fragment; every
    chunk has `role` and a `usage` whose `completion_tokens` and `total_tokens` are `null`
    until the finish (4982 prompt, 122 completion, 5104). goose's test wants both calls and
    the usage once. Two requests in order, and the finish's usage."""
    first, second = "toolu_bdrk_01RMTd7R9DzQjEEWgDwzcBsU", "toolu_bdrk_016bgVTGZdpjP8ehjMWp9cWW"
    body = _chat(
        _databricks({"content": "I'll run both"}),
        _databricks({"content": " `ls` commands in a single turn."}),
        _databricks(_fragment(1, "", first)),
        _databricks(_fragment(1, "")),
        _databricks(_fragment(1, '{"')),
        _databricks(_fragment(1, 'command": "l')),
        _databricks(_fragment(1, 's"}')),
        _databricks(_fragment(2, "", second)),
        _databricks(_fragment(2, "")),
        _databricks(_fragment(2, '{"')),
        _databricks(_fragment(2, 'command": "ls wor')),
        _databricks(_fragment(2, 'king_dir"}')),
        _databricks({"content": ""}, "tool_calls", completion=122),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="I'll run both `ls` commands in a single turn.",
            tools=(
                (first, "developer__shell", {"command": "ls"}),
                (second, "developer__shell", {"command": "ls working_dir"}),
            ),
            usage=(4982, 122, 0, 0, 5104),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=BEDROCK_CLAUDE,
        ),
    )


def _databricks_gemini(
    delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A chunk of Gemini served by Databricks' chat endpoint: the usage in every chunk,
    all `null` until the last."""
    blank = {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}
    return {
        "model": "gemini-3-pro",
        "choices": [{"delta": {"role": "assistant", **delta}, "index": 0, "finish_reason": finish}],
        "usage": usage or blank,
        "object": "chat.completion.chunk",
        "id": "dbx-gemini-1",
        "created": 1774000000,
    }


def test_databricks_gemini_signs_a_text_part_and_a_call_with_thought_signature() -> None:
    """block/goose#7997 and #8042 ("gemini models via databricks": `content` comes back
    as "an array of objects with `text` and `thoughtSignature`", every chunk's usage
    `null` until the end) and block/buzz#3569 (on that route "Gemini returns a
    `thoughtSignature` on every tool call and requires it echoed back", a field of the
    call beside `id`, `type` and `function`, where Gemini's own endpoint writes
    `extra_content`). Gemini 3 answers 400 to a history whose text or call lost its
    signature. The text part's signature is read as the native wire's is, a signed empty
    reasoning delta before the text; the call's rides on its request. Before: both were
    dropped without a word, and the next turn could not be sent."""
    body = _chat(
        _databricks_gemini(
            {"content": [{"type": "text", "text": "Let me check.", "thoughtSignature": "TSIG"}]}
        ),
        _databricks_gemini(
            {
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_weather_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        "thoughtSignature": "CSIG",
                    }
                ],
            }
        ),
        _databricks_gemini(
            {"content": ""},
            "tool_calls",
            {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43},
        ),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Let me check.",
            signatures=1,
            tools=(("call_weather_1", "get_weather", {"city": "Paris"}),),
            usage=(31, 12, 0, 0, 43),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gemini-3-pro",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "tool_start", "tool_request", "usage", "done"]
    signed = events[0]
    assert isinstance(signed, ReasoningDelta)
    assert (signed.text, signed.signature, signed.details) == ("", "TSIG", {})
    (request,) = [ev for ev in events if isinstance(ev, ToolRequest)]
    assert request.signature == "CSIG"
    assert not [message for message in messages if "thoughtSignature" in message]


def _envoy(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish is not None:
        choice["finish_reason"] = finish
    return {"choices": [choice], "object": "chat.completion.chunk"}


def test_bedrock_reasoning_through_a_gateway_as_an_object_of_text_then_signature() -> None:
    """envoyproxy/ai-gateway#1222 (its recorded stream of Claude on AWS Bedrock, served
    on the chat wire): `reasoning_content` is Bedrock Converse's reasoning delta passed
    through as an object, `{"text": "I nee"}`, `{"text": "d to calculate 27"}`, ..., the
    block's `{"signature": ...}` after its text (Converse's `ReasoningContentBlockDelta`:
    `text`, `signature` or `redactedContent`, one at a time). The text is reasoning, the
    signature ends it as a `signature_delta` does on Anthropic's wire, and the answer
    follows. Before: the first object ended the turn in a protocol error ("a reasoning
    delta is dict, not a string"), the whole answer lost."""
    body = _chat(
        _envoy({"content": "", "role": "assistant"}),
        _envoy({"role": "assistant", "reasoning_content": {"text": "I nee"}}),
        _envoy({"role": "assistant", "reasoning_content": {"text": "d to calculate 27"}}),
        _envoy({"role": "assistant", "reasoning_content": {"text": " * 453."}}),
        _envoy({"role": "assistant", "reasoning_content": {"signature": "EqQBCkYIBhgCSIG"}}),
        _envoy({"role": "assistant", "content": "27 * 453 = 12231"}),
        _envoy({}, "stop"),
    )
    events = replay_every_way(body, "openai")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="27 * 453 = 12231",
            reasoning="I need to calculate 27 * 453.",
            signatures=1,
            model=None,
        ),
    )
    assert summary.signatures == ["EqQBCkYIBhgCSIG"]
    assert kinds(events) == ["reasoning", "text", "done"]


def test_bedrock_redacted_reasoning_through_a_gateway() -> None:
    """envoyproxy/ai-gateway#1222, Converse's third kind of reasoning delta:
    `{"redactedContent": ...}`, reasoning the provider encrypted. It is a redacted
    reasoning delta carrying the opaque data, as Anthropic's `redacted_thinking` is
    read, to be sent back as it came."""
    body = _chat(
        _envoy({"role": "assistant", "reasoning_content": {"redactedContent": "UkVEQUNURUQ="}}),
        _envoy({"content": "Done."}),
        _envoy({}, "stop"),
    )
    events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="Done.", signatures=1, model=None))
    redacted = events[0]
    assert isinstance(redacted, ReasoningDelta)
    assert (redacted.text, redacted.signature, redacted.redacted) == ("", "UkVEQUNURUQ=", True)


def _openinference(
    content: str, finish: str | None = None, reasoning: str | None = None
) -> dict[str, Any]:
    delta = {"role": "assistant", "content": content, "reasoning": reasoning}
    return {
        "id": "gen-1768896871-9HgAQqS1Z72C6gApaidi",
        "provider": "OpenInference",
        "model": "openai/gpt-oss-120b:free",
        "object": "chat.completion.chunk",
        "created": 1768896871,
        "choices": [
            {
                "index": 0,
                "delta": delta | {"reasoning_details": []},
                "finish_reason": finish,
                "native_finish_reason": finish,
                "logprobs": None,
            }
        ],
    }


def test_openrouter_usage_on_a_choice_chunk_after_the_finish() -> None:
    """goose openai.rs `test_openrouter_streaming_usage_yielded_once` (OpenRouter,
    openai/gpt-oss-120b:free served by OpenInference): every delta has `reasoning` (`null`,
    once `""`) and `reasoning_details: []`; the finish `stop` comes in a chunk of its own,
    and the usage after it in a chunk that still has a choice (empty content, finish
    `null`), not an empty `choices`. goose wants the text and the usage once: 7007 prompt,
    49 completion. No reasoning is made of the empty values, and the finish waits for
    the usage."""
    usage_chunk = _openinference("")
    del usage_chunk["choices"][0]["delta"]["reasoning"]
    del usage_chunk["choices"][0]["delta"]["reasoning_details"]
    usage_chunk["usage"] = {"prompt_tokens": 7007, "completion_tokens": 49, "total_tokens": 7056}
    body = _chat(
        _openinference(""),
        _openinference("There", reasoning=""),
        _openinference(" are"),
        _openinference(" **47**"),
        _openinference(" files."),
        _openinference("", "stop"),
        usage_chunk,
    )
    for provider in ("openrouter", "openai"):
        events = replay_every_way(body, provider)
        check(
            summarize(events),
            Expect(
                text="There are **47** files.",
                usage=(7007, 49, 0, 0, 7056),
                model="openai/gpt-oss-120b:free",
            ),
        )
        assert kinds(events) == ["text", "usage", "done"]


def test_tetrate_claude_chunks_without_a_finish_key_and_usage_on_the_finish() -> None:
    """goose openai.rs `test_tetrate_claude_streaming_usage_yielded_once` (Tetrate's
    router, claude-sonnet-4-5-20250929): no chunk has `finish_reason` until the last
    (the key is absent, not `null`); the role comes alone; the call's second delta
    repeats `type` without an id; the finish chunk `tool_calls` carries the usage (12376
    prompt, 79 completion) in the same chunk. One call, and that usage."""
    model = "claude-sonnet-4-5-20250929"

    def chunk(choice: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "id": "msg_01BbvMfNhbdm2hmmTbWjaeYt",
            "choices": [{"index": 0, **choice}],
            "created": 1768898776,
            "model": model,
            "object": "chat.completion.chunk",
            **extra,
        }

    arguments = '{"command": "find ~/Desktop -type f | wc -l"}'
    body = _chat(
        chunk({"delta": {"role": "assistant"}}),
        chunk(
            {
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "toolu_011Yj5pGczhs1597iLXp5XJK",
                            "type": "function",
                            "function": {"name": "developer__shell", "arguments": ""},
                        }
                    ]
                }
            }
        ),
        chunk(
            {
                "delta": {
                    "tool_calls": [
                        {"index": 0, "type": "function", "function": {"arguments": arguments}}
                    ]
                }
            }
        ),
        chunk(
            {"delta": {}, "finish_reason": "tool_calls"},
            usage={"completion_tokens": 79, "prompt_tokens": 12376, "total_tokens": 12455},
        ),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                (
                    "toolu_011Yj5pGczhs1597iLXp5XJK",
                    "developer__shell",
                    {"command": "find ~/Desktop -type f | wc -l"},
                ),
            ),
            usage=(12376, 79, 0, 0, 12455),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


def test_an_empty_role_on_every_delta_and_a_proxys_progress_frame() -> None:
    """sst/opencode#28427 (zhipu/glm-5 behind a custom OpenAI-compatible server: every
    delta has `"role": ""`, which strict readers refuse) and sst/opencode#36428 (a
    gateway's tool-progress frame, `{"tool", "emoji", "label", "toolCallId", "status"}`,
    sent through the same stream as the chunks). The empty role is no role, the frame
    is no chunk of the turn (its fields are logged as unread), and the turn reads whole:
    its text, its call, `tool_use`."""
    model = "zhipu/glm-5"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-corenet-1",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": {"role": "", **delta}, "finish_reason": finish}],
        }

    call = {
        "index": 0,
        "id": "call_00_ldqno5lweRBQjYVaLOab5496",
        "type": "function",
        "function": {"name": "search_files", "arguments": '{"pattern": '},
    }
    progress = {
        "tool": "search_files",
        "emoji": "\U0001f50e",
        "label": "*",
        "toolCallId": "call_00_ldqno5lweRBQjYVaLOab5496",
        "status": "running",
    }
    body = _chat(
        chunk({"content": "Searching."}),
        chunk({"tool_calls": [call]}),
        progress,
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"*"}'}}]}, "tool_calls"),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Searching.",
            tools=(("call_00_ldqno5lweRBQjYVaLOab5496", "search_files", {"pattern": "*"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert any("toolCallId" in message for message in messages)


def _hyper(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-2ebd5e0026c4b4aba27316e7",
        "object": "chat.completion.chunk",
        "created": 1787170405,
        "model": "deepseek-v4-flash-0731",
        "choices": choices,
        **extra,
    }


def test_charm_hyper_usage_cost_is_an_object_of_usd_and_credits() -> None:
    """charmbracelet/crush internal/agent/testdata/TestCoderAgent/deepseek-v4/
    parallel_tool_calls.yaml (Charm's gateway hyper.charm.land, deepseek-v4-flash-0731,
    the title request with `max_tokens` 40): reasoning, a few words of text, the finish
    `length`, then the usage with 35 reasoning tokens of 41 and `cost` an object
    `{"usd": 0.0001716, "hypercredits": 0.003432}`, the price in dollars and in the
    gateway's credits. The cost is its `usd`. Before: the object was not read (only
    Perplexity's `total_cost`), and the turn's price was lost without a word."""
    body = _chat(
        _hyper({"role": "assistant"}),
        _hyper({"reasoning_content": "The user message is about using glob."}),
        _hyper({"content": "List .go files"}),
        _hyper({}, "length"),
        _hyper(
            None,
            usage={
                "prompt_tokens": 162,
                "completion_tokens": 41,
                "total_tokens": 203,
                "completion_tokens_details": {"reasoning_tokens": 35},
                "cost": {"usd": 0.00017160000000000002, "hypercredits": 0.003432},
            },
        ),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="List .go files",
            reasoning="The user message is about using glob.",
            usage=(162, 41, 35, 0, 203),
            cost=0.0001716,
            stop_reason="length",
            raw_stop_reason="length",
            model="deepseek-v4-flash-0731",
        ),
    )


def _siliconflow(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "gen-1768830385-zIIWH3CAe4AS4Y0mUEGZ",
        "provider": "SiliconFlow",
        "model": "moonshotai/kimi-k2-0905",
        "object": "chat.completion.chunk",
        "created": 1768830385,
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", **delta},
                "finish_reason": finish,
                "native_finish_reason": finish,
                "logprobs": None,
            }
        ],
        "system_fingerprint": "",
    }


def _kimi_call(index: int, arguments: str, name: str | None = None) -> dict[str, Any]:
    """A fragment as SiliconFlow writes Kimi's calls: `id` and `type` on every one, the
    id `null` after the first."""
    function = {"arguments": arguments} if name is None else {"name": name, "arguments": ""}
    call_id = None if name is None else f"functions.{name}:{index}"
    call = {"index": index, "id": call_id, "type": "function", "function": function}
    return {"content": None, "tool_calls": [call]}


def test_kimi_on_siliconflow_fragments_with_a_null_id_after_the_first() -> None:
    """charmbracelet/crush internal/agent/testdata/TestCoderAgent/openrouter-kimi-k2/
    parallel_tool_calls.yaml (OpenRouter, moonshotai/kimi-k2-0905 served by
    SiliconFlow): two parallel calls with Kimi's ids `functions.glob:0` and
    `functions.ls:1`; every fragment repeats `type` and carries `"id": null`, which is
    no new call; the second call's arguments `{}` come whole; the usage (with
    `is_byok: false` and `cost_details`) comes after the finish on a chunk that still has
    a choice. Two requests, the cost from `cost`."""
    usage_chunk = _siliconflow({"content": ""})
    usage_chunk["usage"] = {
        "prompt_tokens": 11669,
        "completion_tokens": 25,
        "total_tokens": 11694,
        "cost": 0.0047176,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0, "video_tokens": 0},
        "cost_details": {
            "upstream_inference_cost": None,
            "upstream_inference_prompt_cost": 0.0046676,
            "upstream_inference_completions_cost": 0.00005,
        },
        "completion_tokens_details": {"reasoning_tokens": 0, "image_tokens": 0},
    }
    body = _chat(
        _siliconflow({"content": ""}),
        _siliconflow(_kimi_call(0, "", "glob")),
        *(_siliconflow(_kimi_call(0, piece)) for piece in ('{"pattern', '":', ' "**', '/*.go"}')),
        _siliconflow(_kimi_call(1, "", "ls")),
        _siliconflow(_kimi_call(1, "{}")),
        _siliconflow({"content": ""}, "tool_calls"),
        usage_chunk,
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                ("functions.glob:0", "glob", {"pattern": "**/*.go"}),
                ("functions.ls:1", "ls", {}),
            ),
            usage=(11669, 25, 0, 0, 11694),
            cost=0.0047176,
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="moonshotai/kimi-k2-0905",
        ),
    )


def test_zai_coding_plan_chunks_without_a_finish_key_and_a_cached_prompt() -> None:
    """charmbracelet/crush internal/agent/testdata/TestCoderAgent/zai-glm4.6/
    parallel_tool_calls.yaml (api.z.ai/api/coding/paas/v4, glm-4.5-air, the title
    request): no choice has a `finish_reason` key until the last; every delta repeats
    `role`; the reasoning is a lone line break; the finish chunk holds the usage, 122 of
    the 149 prompt tokens read from the cache (`prompt_tokens_details.cached_tokens`).
    The input is the 27 uncached tokens, the cache read apart."""

    def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": {"role": "assistant", **delta}}
        if "finish_reason" in extra:
            choice = {"index": 0, "finish_reason": extra.pop("finish_reason"), **choice}
        return {
            "id": "2026030905215072ea5884f3624612",
            "created": 1773004910,
            "object": "chat.completion.chunk",
            "model": "glm-4.5-air",
            "choices": [choice],
            **extra,
        }

    body = _chat(
        chunk({"reasoning_content": "\n"}),
        *(chunk({"content": piece}) for piece in ("Parallel", " glob", " and", " ls commands")),
        chunk(
            {"content": ""},
            finish_reason="stop",
            usage={
                "prompt_tokens": 149,
                "completion_tokens": 9,
                "total_tokens": 158,
                "prompt_tokens_details": {"cached_tokens": 122},
            },
        ),
    )
    events = replay_every_way(body, "zai")
    check(
        summarize(events),
        Expect(
            text="Parallel glob and ls commands",
            reasoning="\n",
            usage=(27, 9, 0, 122, 158),
            model="glm-4.5-air",
        ),
    )


def test_llama_cpp_prompt_progress_on_chunks_before_the_first_token() -> None:
    """janhq/jan extensions/llamacpp-extension/src/index.ts (it always asks llama-server,
    b6399 and later, for `return_progress`, and quotes the chunk it gets back): while the
    prompt is read, chunks with an empty delta (`role`, `content: null`) and a top-level
    `prompt_progress` (`total`, `cache`, `processed`, `time_ms`); then the answer; the
    finish chunk with `usage` and `timings`. Progress is no part of the turn (logged as
    unread), and its `cache`, the tokens already in the KV cache, is no cache read."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
            "created": 1758113912,
            "id": "chatcmpl-UwZwgxQKyJMo7WzMzXlsi90YTUK2BJro",
            "model": "qwen",
            "system_fingerprint": "b1-e4912fc",
            "object": "chat.completion.chunk",
            **extra,
        }

    opening = {"role": "assistant", "content": None}
    body = _chat(
        chunk(opening, prompt_progress={"total": 36, "cache": 12, "processed": 20, "time_ms": 41}),
        chunk(opening, prompt_progress={"total": 36, "cache": 12, "processed": 36, "time_ms": 77}),
        chunk({"content": "Hello"}),
        chunk({"content": " there."}),
        chunk(
            {},
            "stop",
            usage={"completion_tokens": 2, "prompt_tokens": 36, "total_tokens": 38},
            timings={"prompt_n": 24, "prompt_ms": 77.2, "predicted_n": 2, "predicted_ms": 30.1},
        ),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="Hello there.", usage=(36, 2, 0, 0, 38), model="qwen"),
    )
    assert any("prompt_progress" in message for message in messages)


def test_open_webui_sources_frame_before_the_upstream_chunks() -> None:
    """open-webui/open-webui backend/open_webui/utils/middleware.py (`stream_wrapper`, the
    answer to an API caller of /api/chat/completions): the events gathered before the
    call, here the retrieved `sources` of a knowledge base, each written as a `data:` line
    of its own ahead of the upstream's chunks, which follow as they came. The frame is no
    chunk (its field logged as unread); the turn reads whole."""
    sources = {
        "sources": [
            {
                "source": {"id": "f0c1", "name": "handbook.pdf", "type": "file"},
                "document": ["Annual leave is 25 days."],
                "metadata": [{"file_id": "f0c1", "name": "handbook.pdf", "source": "handbook.pdf"}],
                "distances": [0.82],
            }
        ]
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-Bx7",
            "object": "chat.completion.chunk",
            "created": 1760000000,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    body = _chat(
        sources,
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "25 days [1]."}),
        chunk({}, "stop"),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="25 days [1].", model="gpt-4.1-mini-2025-04-14"),
    )
    assert any("sources" in message for message in messages)


def test_a_context_overflow_as_a_choiceless_chunk_of_error_type_and_error_message() -> None:
    """NousResearch/hermes-agent#65631 (DeepInfra) and #68451 (Venice, vLLM behind it,
    deepseek-v4-flash served with `max_model_len` 163840): a request over the context
    window is answered `200 OK` with one chunk, `choices: null` and the error in two
    top-level fields, `error_type` and `error_message`, the message an error object
    written as a string; then the body closes, or `[DONE]` comes. Hermes' own test of the
    fix writes the pair as `validation_error` and `{"error": {"message": ...}}`. The
    turn is a stream error with the server's words, not an empty turn that stopped (with
    `[DONE]`) or a body cut short (without). Before: both."""
    words = (
        "This model's maximum context length is 163840 tokens. However, you requested"
        " 171254 tokens (163062 in the messages, 8192 in the completion)."
    )
    chunk = {
        "id": "chatcmpl-6f2a0c",
        "object": "chat.completion.chunk",
        "created": 1784620800,
        "model": "deepseek-v4-flash",
        "choices": None,
        "error_type": "validation_error",
        "error_message": json.dumps({"error": {"message": words}}),
    }
    raw = f"data: {json.dumps(chunk)}\n\n".encode()
    for body in (raw, raw + b"data: [DONE]\n\n"):
        events = replay_every_way(body, "openai")
        check(summarize(events), Expect(text="", terminal="error", error_kind="stream_error"))
        error = events[-1].model_dump()["error"]
        assert error["message"] == words
        assert json.loads(error["raw"]) == chunk


def test_cerebras_restates_a_calls_whole_arguments_on_a_last_delta_with_its_id_and_name() -> None:
    """elizaOS/eliza#9766 (Cerebras, gpt-oss-120b, the raw stream captured live): a call's
    arguments stream in fragments after an opening delta of its id and name, then a last
    delta carries the id and name again with the whole arguments. That delta says the
    call again; the arguments are the fragments' `{"replyText":"PONG"}`, once. Before:
    the two joined, `{"replyText":"PONG"}{"replyText":"PONG"}`, and the turn failed on
    malformed arguments."""

    def chunk(calls: list[dict[str, Any]] | None, finish: str | None = None) -> dict[str, Any]:
        delta: dict[str, Any] = {} if calls is None else {"tool_calls": calls}
        return {
            "id": "chatcmpl-5c2e",
            "object": "chat.completion.chunk",
            "created": 1782470400,
            "model": "gpt-oss-120b",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def whole(arguments: str) -> dict[str, Any]:
        function = {"name": "HANDLE_RESPONSE", "arguments": arguments}
        return {"index": 0, "id": "call_x", "type": "function", "function": function}

    body = _chat(
        chunk([whole("")]),
        chunk([{"index": 0, "function": {"arguments": '{"replyText":"PO'}}]),
        chunk([{"index": 0, "function": {"arguments": 'NG"}'}}]),
        chunk([whole('{"replyText":"PONG"}')]),
        chunk(None, "tool_calls"),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            tools=(("call_x", "HANDLE_RESPONSE", {"replyText": "PONG"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gpt-oss-120b",
        ),
    )


def test_a_call_named_on_every_fragment_reads_in_linear_time() -> None:
    """Servers that name the call on every fragment (TGI: its id and name on each delta)
    must not make each fragment compare the arguments so far, as the rule above once did:
    100,000 fragments (10 MB of arguments) took minutes then, a few seconds now."""
    piece = "x" * 100

    def frame(payload: dict[str, Any]) -> str:
        return f"data: {json.dumps(payload)}\n\n"

    def fragment(arguments: str) -> str:
        call = {"index": 0, "id": "call_t", "function": {"name": "f", "arguments": arguments}}
        return frame({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})

    finish = frame({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    body = fragment('{"a":"') + fragment(piece) * 100_000 + fragment('"}') + finish
    events: list[Any] = []
    reader = threading.Thread(
        target=lambda: events.extend(replay(body, provider="openai").pipe(ops.to_list()).run()),
        daemon=True,
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is a few seconds here
    assert events, "the replay did not end within a minute"
    request = next(e for e in events if isinstance(e, ToolRequest))
    assert request.arguments == {"a": piece * 100_000} and events[-1].type == "done"


# -- Responses ---------------------------------------------------------------------------


def test_responses_rate_limit_as_a_bare_error_object_mid_stream() -> None:
    """sst/opencode#18897 (a provider path through the Responses API): a concurrency
    limit comes mid-stream as a chunk of its own, `{"error": {"type":
    "rate_limit_error", "message": ...}}`, with no top-level `type`, where the wire's own
    is an `error` event. It ends the turn in a stream error with the provider's message
    and its type as the code, worth retrying."""
    created = {
        "type": "response.created",
        "sequence_number": 0,
        "response": {
            "id": "resp_rl",
            "object": "response",
            "status": "in_progress",
            "model": "gpt-5.4",
            "output": [],
        },
    }
    message = "Concurrency limit exceeded for user, please retry later"
    body = "".join(
        f"data: {json.dumps(p)}\n\n"
        for p in (created, {"error": {"type": "rate_limit_error", "message": message}})
    ).encode()
    events = replay_every_way(body, "openai-responses")
    check(summarize(events), Expect(text="", terminal="error", error_kind="stream_error"))
    error = events[-1].model_dump()["error"]
    assert (error["message"], error["code"], error["retryable"]) == (
        message,
        "rate_limit_error",
        True,
    )


# -- Gemini ------------------------------------------------------------------------------


def _gemini(*payloads: dict[str, Any]) -> bytes:
    return "".join(f"data: {json.dumps(p)}\r\n\r\n" for p in payloads).encode()


def test_gemini_continuation_is_a_paused_turn() -> None:
    """googleapis/python-genai google/genai/tests/models/test_gc_continuation_token.py
    and test_generate_content_continuation_token.py (gemini-2.5-pro): a long answer ends
    a response with finishReason CONTINUATION and the candidate's `continuationToken`
    (bytes, base64 on the wire), its usage counting 32768 candidate and 500 thought
    tokens; the SDK sends the same request again with that token until a response ends
    in STOP ("is_resumable_finish_reason": CONTINUATION, not MAX_TOKENS, not STOP). The
    turn was paused, not finished for another reason: `pause`, as Anthropic's
    `pause_turn` is, the raw reason kept. Before: `other`, which an agent loop cannot
    tell from a turn that ended on its own."""
    text = {"content": {"parts": [{"text": "Hop 1 part. "}], "role": "model"}, "index": 0}
    body = _gemini(
        {"candidates": [text], "modelVersion": "gemini-2.5-pro", "responseId": "r1"},
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": "And on."}], "role": "model"},
                    "finishReason": "CONTINUATION",
                    "continuationToken": "dG9rZW5faG9wXzE=",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 32768,
                "thoughtsTokenCount": 500,
                "totalTokenCount": 33278,
            },
            "modelVersion": "gemini-2.5-pro",
            "responseId": "r1",
        },
    )
    with log_messages() as messages:
        events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="Hop 1 part. And on.",
            usage=(10, 33268, 500, 0, 33278),
            stop_reason="pause",
            raw_stop_reason="CONTINUATION",
            model="gemini-2.5-pro",
        ),
    )
    # The token has no event yet: it is logged, not dropped silently.
    assert any("continuationToken" in message for message in messages)


def test_gemini_json_lines_then_an_error_object() -> None:
    """googleapis/python-genai google/genai/tests/client/test_async_stream.py
    (`EVENT_STREAM_DATA_WITH_ERROR`): a stream of bare JSON lines, no `data:` prefix, a
    candidate with text, then `{"error": {"code": 500, "message": "Error", "status":
    "INTERNAL"}}`, which the SDK raises as a `ServerError` after yielding the text. The
    text comes first, then an error event with the status and Google's code."""
    body = (
        b'{"candidates":[{"content":{"parts":[{"text":"test"}],"role":"model"}}]}\n'
        b'{"error":{"code":500,"message":"Error","status":"INTERNAL"}}\n'
    )
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(text="test", terminal="error", error_kind="stream_error"),
    )
    error = events[-1].model_dump()["error"]
    assert (error["status"], error["code"], error["message"]) == (500, "INTERNAL", "Error")
