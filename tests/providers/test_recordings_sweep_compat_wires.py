"""Other vendors' and servers' Anthropic-compatible (`/v1/messages`) and
Responses-compatible (`/v1/responses`) streams, read with the provider a client of that
wire uses (`anthropic` with a base_url, `openai-responses`): vLLM's Anthropic serving
(`vllm/entrypoints/anthropic/serving_messages.py`, and the later `serving.py`), Ollama's
converters (`openai/responses.go`; its `/v1/messages` after ollama#13934), SGLang's
Messages endpoint, DeepSeek's `api.deepseek.com/anthropic`, and the `sensitive` stop
reason Anthropic-wire readers map (hermes-agent, pi, openclaw), in shapes no other
test replays.

Each body is written by hand from the server code or the thread named beside it (its
essential events, in the order written; ids and long text shortened), replayed whole and
cut at arbitrary byte boundaries (`replay_every_way`), and checked against what a client
of that wire should get.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, replay_every_way, summarize

# -- Anthropic Messages -------------------------------------------------------------------


def _events(*payloads: dict[str, Any], done: bool = False) -> bytes:
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _start(model: str, usage: dict[str, int], **message: Any) -> dict[str, Any]:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    return {"type": "message_start", "message": body | {"model": model, "usage": usage} | message}


def _block(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _text(index: int, *pieces: str) -> list[dict[str, Any]]:
    deltas = [_delta(index, {"type": "text_delta", "text": piece}) for piece in pieces]
    return [_block(index, {"type": "text", "text": ""}), *deltas, _stop(index)]


def _end(stop_reason: str | None, usage: dict[str, int]) -> list[dict[str, Any]]:
    delta = {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": usage}
    return [delta, {"type": "message_stop"}]


def test_vllm_messages_usage_beside_the_message_and_done_after_message_stop() -> None:
    """vllm-project/vllm `vllm/entrypoints/anthropic/serving_messages.py`
    (`message_stream_converter`): `message_start` dumped with `exclude_unset`, so its
    message has only `id`, `content` and `model` (no `type`, `role` or usage), and the
    input count beside it, at the event's top level; the text block is stopped when the
    first call's chunk (the one with an id) arrives, the call's input follows as
    `input_json_delta`s, the closing `message_delta` carries both counts, and the body
    ends with `data: [DONE]` after `message_stop`. The text, the call, 20 in and 15 out."""
    model = "Qwen/Qwen3-8B"
    arguments = {"city": "Paris"}
    call = {"type": "tool_use", "id": "chatcmpl-tool-9f1", "name": "get_weather", "input": {}}
    events = replay_every_way(
        _events(
            {
                "type": "message_start",
                "message": {"id": "chatcmpl-7c2", "content": [], "model": model},
                "usage": {"input_tokens": 20, "output_tokens": 0},
            },
            *_text(0, "Let me ", "check."),
            _block(1, call),
            _delta(1, {"type": "input_json_delta", "partial_json": '{"city": '}),
            _delta(1, {"type": "input_json_delta", "partial_json": '"Paris"}'}),
            _stop(1),
            *_end("tool_use", {"input_tokens": 20, "output_tokens": 15}),
            done=True,
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Let me check.",
            tools=(("chatcmpl-tool-9f1", "get_weather", arguments),),
            usage=(20, 15, 0, 0, 35),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model=model,
        ),
    )


def test_vllm_messages_thinking_signed_with_a_uuid_at_its_stop() -> None:
    """vllm-project/vllm `vllm/entrypoints/anthropic/serving.py` (the later converter,
    `_ActiveBlockState`): a reasoning parser's output is a `thinking` block started with
    no `signature` key, and the block's `signature_delta` (a `uuid4().hex` vLLM makes
    up, so Claude Code keeps the block) is written only when the block stops, right
    before its `content_block_stop`. The thinking is read with that one signature, then
    the text."""
    signature = "3f2b9c0e8a7d4b1f9e6c5a4d3b2a1f0e"
    events = replay_every_way(
        _events(
            _start("Qwen/Qwen3-8B", {"input_tokens": 31, "output_tokens": 0}),
            _block(0, {"type": "thinking", "thinking": ""}),
            _delta(0, {"type": "thinking_delta", "thinking": "The user "}),
            _delta(0, {"type": "thinking_delta", "thinking": "greets me."}),
            _delta(0, {"type": "signature_delta", "signature": signature}),
            _stop(0),
            *_text(1, "Hello!"),
            *_end("end_turn", {"input_tokens": 31, "output_tokens": 9}),
        ),
        "anthropic",
    )
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="Hello!",
            reasoning="The user greets me.",
            signatures=1,
            usage=(31, 9, 0, 0, 40),
            raw_stop_reason="end_turn",
            model="Qwen/Qwen3-8B",
        ),
    )
    assert summary.signatures == [signature]


def test_vllm_messages_error_event_after_text_then_done() -> None:
    """vllm-project/vllm `serving_messages.py`: when the converter raises mid-stream (or
    meets a line that is not `data:`), it writes `event: error` with
    `{"type": "error", "error": {"type": "internal_error", "message": ...}}` and then
    `data: [DONE]`, with no `message_delta` or `message_stop`. The turn fails in a
    stream error naming vLLM's message and type; the text before it is kept."""
    events = replay_every_way(
        _events(
            {
                "type": "message_start",
                "message": {"id": "chatcmpl-3", "content": [], "model": "m"},
                "usage": {"input_tokens": 5, "output_tokens": 0},
            },
            _block(0, {"type": "text", "text": ""}),
            _delta(0, {"type": "text_delta", "text": "Partial"}),
            {
                "type": "error",
                "error": {"type": "internal_error", "message": "Invalid data format received"},
            },
            done=True,
        ),
        "anthropic",
    )
    check(summarize(events), Expect(text="Partial", terminal="error", error_kind="stream_error"))
    error = events[-1]
    assert error.type == "error"
    assert error.error.code == "internal_error"
    assert "Invalid data format received" in error.error.message


def test_ollama_messages_counts_the_input_only_in_the_closing_delta() -> None:
    """ollama/ollama#13934 (`/v1/messages`, streaming): Ollama's converter knows the
    prompt count only at the end, so `message_start` says 0 input tokens and the closing
    `message_delta` carries `{"input_tokens": 74, "output_tokens": 62}` (before that
    pull request it carried the output alone). The usage is 74 in, 62 out."""
    events = replay_every_way(
        _events(
            _start("qwen3:8b", {"input_tokens": 0, "output_tokens": 0}),
            *_text(0, "Sure."),
            *_end("end_turn", {"input_tokens": 74, "output_tokens": 62}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Sure.", usage=(74, 62, 0, 0, 136), raw_stop_reason="end_turn", model="qwen3:8b"
        ),
    )


def test_sglang_messages_closing_delta_without_the_input() -> None:
    """sgl-project/sglang#33419 (SGLang's `/v1/messages` after #25876): the input is
    counted in `message_start` only, and the closing `message_delta` says
    `{"output_tokens": 16}` alone (Anthropic repeats the input there). The input is
    `message_start`'s: 8 in, 16 out."""
    events = replay_every_way(
        _events(
            _start("Qwen/Qwen3-4B", {"input_tokens": 8, "output_tokens": 0}),
            *_text(0, "Hello there."),
            *_end("end_turn", {"output_tokens": 16}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Hello there.",
            usage=(8, 16, 0, 0, 24),
            raw_stop_reason="end_turn",
            model="Qwen/Qwen3-4B",
        ),
    )


def test_claude_code_router_zero_usage_everywhere_is_no_usage() -> None:
    """musistudio/llms#33 (claude-code-router's OpenAI-to-Anthropic transformer over
    kimi-k2-turbo-preview, whose counts sat in `choices[0].usage` where it did not look):
    `message_start` and the closing `message_delta` both say 0 input, 0 output and
    0 cache reads. Zeros everywhere are a placeholder, not a count: no usage event."""
    zeros = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0}
    events = replay_every_way(
        _events(
            _start("kimi-k2-turbo-preview", zeros),
            *_text(0, "Done."),
            *_end("end_turn", zeros),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(text="Done.", raw_stop_reason="end_turn", model="kimi-k2-turbo-preview"),
    )


def test_deepseek_anthropic_thinking_started_without_a_signature_key() -> None:
    """QuantumNous/new-api#4761 and #4762 (DeepSeek V4 through
    `api.deepseek.com/anthropic`): the thinking block starts as
    `{"type": "thinking", "thinking": ""}` with no `signature` key at all (Claude Code's
    block validation dropped it); ranxianglei/billion-context#147: the same endpoint
    then sends the block's `signature_delta`, which must come back with the thinking on
    the next turn (a 400 otherwise). The thinking with its one signature, then the text;
    the cache read of the closing delta counted."""
    signature = "ZGVlcHNlZWstc2lnbmF0dXJl"
    events = replay_every_way(
        _events(
            _start("deepseek-v4-flash", {"input_tokens": 18, "output_tokens": 0}),
            _block(0, {"type": "thinking", "thinking": ""}),
            _delta(0, {"type": "thinking_delta", "thinking": "Simple arithmetic."}),
            _delta(0, {"type": "signature_delta", "signature": signature}),
            _stop(0),
            *_text(1, "2 + 2 = 4."),
            *_end(
                "end_turn",
                {"input_tokens": 18, "output_tokens": 21, "cache_read_input_tokens": 64},
            ),
        ),
        "anthropic",
    )
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="2 + 2 = 4.",
            reasoning="Simple arithmetic.",
            signatures=1,
            usage=(18, 21, 0, 64, 103),
            raw_stop_reason="end_turn",
            model="deepseek-v4-flash",
        ),
    )
    assert summary.signatures == [signature]


def test_sensitive_stop_reason_is_a_content_filter() -> None:
    """NousResearch/hermes-agent#3911 ("when Anthropic blocks a response with
    `stop_reason='sensitive'` (content policy), the response has empty content blocks"),
    earendil-works/pi#4769 and openclaw/openclaw#27997 (pi's Anthropic reader maps
    `sensitive`, "content flagged by safety filters"): an Anthropic-wire endpoint ends a
    turn its safety review blocked with `stop_reason: "sensitive"` (Z.ai's word for that
    finish on its chat wire). The turn is a content filter, the raw word kept, not a
    turn that ended for some other reason; the text before the block is kept."""
    events = replay_every_way(
        _events(
            _start("glm-5", {"input_tokens": 12, "output_tokens": 0}),
            *_text(0, "I can"),
            *_end("sensitive", {"input_tokens": 12, "output_tokens": 2}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="I can",
            usage=(12, 2, 0, 0, 14),
            stop_reason="content_filter",
            raw_stop_reason="sensitive",
            model="glm-5",
        ),
    )


def test_ollama_messages_thinking_closed_by_a_call_and_the_input_estimated_first() -> None:
    """ollama/ollama `anthropic/anthropic.go` (`StreamConverter.Process`): `message_start`
    counts the input by Ollama's estimate (the request's length / 4) when the runner has
    not counted it yet, and the closing `message_delta` the runner's count; the thinking
    block has no signature at all; a call closes it, its whole arguments in one
    `input_json_delta` between the block's start (`input: {}`) and stop. The thinking,
    the call, the runner's counts (41 in, 30 out), not the estimate's."""
    arguments = {"path": "README.md"}
    call = {"type": "tool_use", "id": "call_k2j4", "name": "Read", "input": {}}
    events = replay_every_way(
        _events(
            _start("gpt-oss:20b", {"input_tokens": 57, "output_tokens": 0}),
            _block(0, {"type": "thinking", "thinking": ""}),
            _delta(0, {"type": "thinking_delta", "thinking": "Read the file "}),
            _delta(0, {"type": "thinking_delta", "thinking": "first."}),
            _stop(0),
            _block(1, call),
            _delta(1, {"type": "input_json_delta", "partial_json": json.dumps(arguments)}),
            _stop(1),
            *_end("tool_use", {"input_tokens": 41, "output_tokens": 30}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="Read the file first.",
            tools=(("call_k2j4", "Read", arguments),),
            usage=(41, 30, 0, 0, 71),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="gpt-oss:20b",
        ),
    )


def test_llama_cpp_messages_closes_every_block_only_at_the_end() -> None:
    """ggml-org/llama.cpp `tools/server/server-task.cpp`
    (`server_task_result_cmpl_final::to_json_anthropic_stream`): blocks are numbered
    thinking 0, text 1, calls from 2, and none is stopped while later ones stream: the
    text and the call's input arrive with the thinking still open; the `tool_use`
    block starts with no `input` key at all; only the final result closes them all, in
    order, the thinking with an empty `signature_delta` first, then `message_delta`
    with `stop_sequence: null` and the output count alone. The thinking, the text, the
    call with its whole input, 50 in (message_start's) and 20 out."""
    events = replay_every_way(
        _events(
            _start("qwen3-8b", {"input_tokens": 50, "output_tokens": 0}, stop_reason=None),
            _block(0, {"type": "thinking", "thinking": ""}),
            _delta(0, {"type": "thinking_delta", "thinking": "Check the file."}),
            _block(1, {"type": "text", "text": ""}),
            _delta(1, {"type": "text_delta", "text": "Reading."}),
            _block(2, {"type": "tool_use", "id": "call_abc", "name": "read"}),
            _delta(2, {"type": "input_json_delta", "partial_json": '{"path":'}),
            _delta(2, {"type": "input_json_delta", "partial_json": '"a.txt"}'}),
            _delta(0, {"type": "signature_delta", "signature": ""}),
            _stop(0),
            _stop(1),
            _stop(2),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
            {"type": "message_stop"},
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Reading.",
            reasoning="Check the file.",
            tools=(("call_abc", "read", {"path": "a.txt"}),),
            usage=(50, 20, 0, 0, 70),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="qwen3-8b",
        ),
    )


def test_a_gateway_moderators_content_filter_stop_reason() -> None:
    """infinigence/octollm `pkg/engines/moderator` (its README and Claude adapter): a
    gateway serving models on the Anthropic wire replaces output its moderation blocks
    with a notice ("检测到内容存在异常重复...") and ends the message with
    `stop_reason: "content_filter"`, OpenAI's word, streamed and whole alike. The turn
    is a content filter, the raw word kept, the notice its text; not a turn that ended
    for some other reason."""
    notice = "检测到内容存在异常重复，请调整后重试。"  # noqa: RUF001 (the notice as written)
    events = replay_every_way(
        _events(
            _start("glm-4.6", {"input_tokens": 30, "output_tokens": 0}),
            *_text(0, notice),
            *_end("content_filter", {"output_tokens": 12}),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text=notice,
            usage=(30, 12, 0, 0, 42),
            stop_reason="content_filter",
            raw_stop_reason="content_filter",
            model="glm-4.6",
        ),
    )


# -- OpenAI Responses ---------------------------------------------------------------------


def _responses(*payloads: dict[str, Any], numbered: bool = True) -> bytes:
    body = ""
    for number, payload in enumerate(payloads):
        if numbered:
            payload = payload | {"sequence_number": number}
        body += f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"
    return body.encode()


def _response(
    model: str, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }


def test_ollama_responses_call_at_the_unclosed_message_index() -> None:
    """ollama/ollama `openai/responses.go` (`ResponsesStreamConverter`): the reasoning
    item's summary deltas come with no `reasoning_summary_part.added`, and its done item
    holds the plain thinking as `encrypted_content`; after text, a call is added at the
    message's own output index (`processToolCalls` numbers from `c.outputIndex`, which
    only the reasoning advanced), the message item never closed, and
    `response.completed`'s output leaves the message out once a call was sent. The
    reasoning, the text once, the call, the usage."""
    model, thought = "qwen3:8b", "Need the weather."
    arguments = '{"city":"Paris"}'
    call = {
        "id": "fc_512_0",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_x1",
        "name": "get_weather",
        "arguments": arguments,
    }
    reasoning = {
        "id": "rs_77",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": thought}],
        "encrypted_content": thought,
    }
    message = {"id": "msg_9", "type": "message", "status": "in_progress", "role": "assistant"}
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    usage = {
        "input_tokens": 40,
        "output_tokens": 22,
        "total_tokens": 62,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    at0 = {"item_id": "rs_77", "output_index": 0, "summary_index": 0}
    at1 = {"item_id": "msg_9", "output_index": 1, "content_index": 0}
    events = replay_every_way(
        _responses(
            {"type": "response.created", "response": _response(model, "in_progress", [])},
            {"type": "response.in_progress", "response": _response(model, "in_progress", [])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "rs_77", "type": "reasoning", "summary": []},
            },
            {"type": "response.reasoning_summary_text.delta", **at0, "delta": thought},
            {"type": "response.reasoning_summary_text.done", **at0, "text": thought},
            {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": message | {"content": []},
            },
            {"type": "response.content_part.added", **at1, "part": part},
            {"type": "response.output_text.delta", **at1, "delta": "Checking.", "logprobs": []},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": call | {"status": "in_progress", "arguments": ""},
            },
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_512_0",
                "output_index": 1,
                "delta": arguments,
            },
            {
                "type": "response.function_call_arguments.done",
                "item_id": "fc_512_0",
                "output_index": 1,
                "arguments": arguments,
            },
            {"type": "response.output_item.done", "output_index": 1, "item": call},
            {
                "type": "response.completed",
                "response": _response(model, "completed", [reasoning, call], usage),
            },
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="Checking.",
            reasoning=thought,
            signatures=1,
            tools=(("call_x1", "get_weather", {"city": "Paris"}),),
            usage=(40, 22, 0, 0, 62),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )


def test_a_bridge_that_streams_only_response_completed() -> None:
    """volcengine/veadk-python#592 (Codex through LiteLLM's chat-to-Responses bridge to
    Volcengine Ark): streaming a chat backend, the bridge wrote a single
    `response.completed` (no `response.created`, no `output_text.delta`), the whole
    output inside it, then `data: [DONE]`; Codex's parser rejected it. The output is the
    turn: the text once, the call requested, the usage."""
    model = "doubao-seed-1-6"
    output = [
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.txt"}',
        },
    ]
    usage = {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}
    completed = {
        "type": "response.completed",
        "response": _response(model, "completed", output, usage),
    }
    events = replay_every_way(
        f"data: {json.dumps(completed)}\n\ndata: [DONE]\n\n".encode(), "openai-responses"
    )
    check(
        summarize(events),
        Expect(
            text="Reading it.",
            tools=(("call_1", "read_file", {"path": "a.txt"}),),
            usage=(30, 12, 0, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )


def test_lm_studio_responses_reasoning_only_in_its_done_event() -> None:
    """earendil-works/pi#4193 and #4191 (LM Studio's `/v1/responses`, a Qwen3 reasoning
    model): the reasoning item streams no delta at all; its whole text comes once, in
    `response.reasoning_text.done`, and the done item holds it under `content` as
    `reasoning_text` with an empty `summary` (pi read only summary deltas and lost it).
    The reasoning is read once, before the text."""
    model, thought = "qwen/qwen3-8b", "The user says hi."
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hi there.", "annotations": []}],
    }
    reasoning = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": thought}],
    }
    at1 = {"item_id": "msg_1", "output_index": 1, "content_index": 0}
    usage = {"input_tokens": 10, "output_tokens": 8, "total_tokens": 18}
    events = replay_every_way(
        _responses(
            {"type": "response.created", "response": _response(model, "in_progress", [])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": reasoning | {"content": []},
            },
            {
                "type": "response.reasoning_text.done",
                "item_id": "rs_1",
                "output_index": 0,
                "content_index": 0,
                "text": thought,
            },
            {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": message | {"status": "in_progress", "content": []},
            },
            {
                "type": "response.content_part.added",
                **at1,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
            {"type": "response.output_text.delta", **at1, "delta": "Hi there."},
            {"type": "response.output_text.done", **at1, "text": "Hi there."},
            {"type": "response.output_item.done", "output_index": 1, "item": message},
            {
                "type": "response.completed",
                "response": _response(model, "completed", [reasoning, message], usage),
            },
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="Hi there.",
            reasoning=thought,
            usage=(10, 8, 0, 0, 18),
            raw_stop_reason="completed",
            model=model,
        ),
    )


def test_a_gateway_moderators_responses_replacement_keeps_the_turn() -> None:
    """infinigence/octollm `pkg/engines/moderator/openai_response_adapter.go`: once its
    moderation blocks a Responses stream, every later text delta, done event, part and
    item is rewritten to hold the replacement notice (the item without its id), and
    `response.completed` carries a response of only `id`, `output` and `usage` (no
    `status`, no `model`). The text streamed before the block and the notice are the
    answer, said once each; the turn completes with its usage and the model
    `response.created` named."""
    model, notice = "glm-4.6", "Content blocked."
    replaced = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": notice}],
    }
    at0 = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    usage = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    events = replay_every_way(
        _responses(
            {"type": "response.created", "response": _response(model, "in_progress", [])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [],
                },
            },
            {
                "type": "response.content_part.added",
                **at0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
            {"type": "response.output_text.delta", **at0, "delta": "Sure: "},
            {"type": "response.output_text.delta", **at0, "delta": notice},
            {"type": "response.output_text.done", **at0, "text": notice},
            {
                "type": "response.content_part.done",
                **at0,
                "part": {"type": "output_text", "text": notice},
            },
            {"type": "response.output_item.done", "output_index": 0, "item": replaced},
            {
                "type": "response.completed",
                "response": {"id": "resp_1", "output": [replaced], "usage": usage},
            },
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="Sure: " + notice,
            usage=(5, 3, 0, 0, 8),
            raw_stop_reason="completed",
            model=model,
        ),
    )
