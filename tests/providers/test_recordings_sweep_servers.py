"""Streams as self-hosted OpenAI-compatible servers write them, read from the code that
writes them: mlx-lm's server.py, FastChat's openai_api_server.py, and the others each
test names, in shapes no other test replays.

Each body is written by hand from the writer named beside it (its essential chunks, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that writer means.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- mlx-lm -------------------------------------------------------------------------------


def _mlx(content: str, reasoning: str, calls: list[Any], finish: str | None = None) -> Any:
    """A chunk as mlx-lm's `generate_response` writes one: every delta holds the role, the
    content, `reasoning` and `tool_calls` (empty strings and an empty list when unsaid)."""
    return {
        "id": "chatcmpl-5d3c",
        "system_fingerprint": "0.28.3-0.29.2-macOS-15.5-arm64",
        "object": "chat.completion.chunk",
        "model": "mlx-community/Qwen3-4B-4bit",
        "created": 1760000000,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "delta": {
                    "role": "assistant",
                    "content": content,
                    "reasoning": reasoning,
                    "tool_calls": calls,
                },
            }
        ],
    }


def test_mlx_lm_reasoning_then_a_whole_call_then_usage_as_a_chat_completion() -> None:
    """ml-explore/mlx-lm mlx_lm/server.py (`handle_completion`): a `: keepalive 512/2048`
    comment while the prompt is processed; every delta carries `content`, `reasoning`
    and `tool_calls` whatever it says (`""`, `[]`); a call is parsed whole at its end tag
    and written in one delta (uuid id, index, arguments as a JSON string); the last
    delta is empty with `tool_calls` as its finish; with `include_usage` a chunk of
    `object: "chat.completion"` and no choices carries the usage (cached tokens in
    `prompt_tokens_details`). The reasoning, the call once, the usage, `tool_use`."""
    call = {
        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
        "type": "function",
        "id": "0b7d5c0e-6a57-4f0a-9d0f-1f3a2c4b5e6d",
        "index": 0,
    }
    usage = {
        "id": "chatcmpl-5d3c",
        "system_fingerprint": "0.28.3-0.29.2-macOS-15.5-arm64",
        "object": "chat.completion",
        "model": "mlx-community/Qwen3-4B-4bit",
        "created": 1760000000,
        "choices": [],
        "usage": {
            "prompt_tokens": 20,
            "completion_tokens": 30,
            "total_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 8},
        },
    }
    body = b": keepalive 512/2048\n\n" + _sse(
        _mlx("", "The user wants", []),
        _mlx("", " the weather.", []),
        _mlx("", "", [call]),
        _mlx("", "", [], "tool_calls"),
        usage,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="The user wants the weather.",
            tools=((call["id"], "get_weather", {"city": "Paris"}),),
            usage=(12, 30, 0, 8, 50),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="mlx-community/Qwen3-4B-4bit",
        ),
    )
    assert kinds(events) == ["reasoning", "tool_start", "tool_request", "usage", "done"]


# -- FastChat -----------------------------------------------------------------------------


def _fastchat(delta: dict[str, Any]) -> dict[str, Any]:
    """A chunk of FastChat's `chat_completion_stream_generator` (`exclude_unset`)."""
    return {
        "id": "chatcmpl-3xQzUJqHrGbcW9YfFhN7aT",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "vicuna-7b-v1.5",
        "choices": [{"index": 0, "delta": delta}],
    }


def test_fastchat_passes_its_workers_error_on_as_a_chunk_then_done() -> None:
    """lm-sys/FastChat fastchat/serve/openai_api_server.py
    (`chat_completion_stream_generator`): where the worker's streamed dict has a nonzero
    `error_code`, that dict is written as it came, `{"text": "**NETWORK ERROR DUE TO
    HIGH TRAFFIC...**\\n\\n(<the exception>)", "error_code": 50002}` (fastchat/
    constants.py: 50002 is CUDA_OUT_OF_MEMORY, base_model_worker.py writes it), then
    `data: [DONE]`. The turn failed, naming the worker's words; the text before it kept.
    Before: the chunk was logged as unknown keys and `[DONE]` read as a finished
    answer, `done(stop)`."""
    failure = {
        "text": "**NETWORK ERROR DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE."
        "**\n\n(CUDA out of memory. Tried to allocate 20.00 MiB)",
        "error_code": 50002,
    }
    for before, text in (([], ""), ([_fastchat({"content": "Hello"})], "Hello")):
        body = _sse(_fastchat({"role": "assistant"}), *before, failure)
        events = replay_every_way(body, "custom")
        check(summarize(events), Expect(text=text, terminal="error", error_kind="stream_error"))
        error = events[-1].error  # type: ignore[union-attr]
        assert "CUDA out of memory" in error.message
        assert error.raw is not None and '"error_code": 50002' in error.raw


# -- text-generation-webui ------------------------------------------------------------------


def _textgen(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A chunk of text-generation-webui's `chat_streaming_chunk` (with `include_usage`:
    `usage: null` on every chunk but the last)."""
    return {
        "id": "chatcmpl-1760000000123456789",
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": "Qwen3-8B-Q4_K_M.gguf",
        "system_fingerprint": None,
        "choices": [{"index": 0, "finish_reason": finish, "delta": delta, "logprobs": None}],
        "usage": None,
    }


def test_text_generation_webui_calls_whole_on_the_finish_chunk_then_a_usage_chunk() -> None:
    """oobabooga/text-generation-webui modules/api/completions.py
    (`chat_completions_common`): a role chunk with `refusal: null` and empty content, the
    reasoning as `reasoning_content` deltas, the text; calls parsed from the text are
    sent whole (ids, indexes, arguments as JSON strings) on the finish chunk itself,
    `tool_calls` its finish; then a usage chunk with `choices: []` and `[DONE]`
    (modules/api/script.py, `EventSourceResponse(..., sep="\\n")`). Each call once, in
    order, after the reasoning and the text."""
    calls = [
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
            "id": "call_k3j4h5g6f7",
            "index": 0,
        },
        {
            "type": "function",
            "function": {"name": "get_time", "arguments": json.dumps({"tz": "CET"})},
            "id": "call_a1b2c3d4e5",
            "index": 1,
        },
    ]
    usage = {**_textgen({}), "choices": []}
    usage["usage"] = {"prompt_tokens": 50, "completion_tokens": 60, "total_tokens": 110}
    body = _sse(
        _textgen({"role": "assistant", "refusal": None, "content": ""}),
        _textgen({"reasoning_content": "Two lookups."}),
        _textgen({"content": "Checking."}),
        _textgen({"tool_calls": calls}, "tool_calls"),
        usage,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="Checking.",
            reasoning="Two lookups.",
            tools=(
                ("call_k3j4h5g6f7", "get_weather", {"city": "Paris"}),
                ("call_a1b2c3d4e5", "get_time", {"tz": "CET"}),
            ),
            usage=(50, 60, 0, 0, 110),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="Qwen3-8B-Q4_K_M.gguf",
        ),
    )


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def test_text_generation_webui_messages_unsigned_thinking_then_a_call_written_at_the_finish() -> (
    None
):
    """oobabooga/text-generation-webui modules/api/anthropic.py (`StreamConverter`, its
    `/v1/messages` over its chat stream): `message_start` counting 0 input tokens, a
    `ping`, a thinking block with no signature key at all, closed at the finish; each
    call written only then, as a `tool_use` block whose whole input is one
    `input_json_delta`; `message_delta` waits for the usage chunk and carries both
    counts; an sse-starlette ping comment between. The reasoning, the call, the counts
    of `message_delta`, `tool_use`."""
    model = "Qwen3-8B-Q4_K_M.gguf"
    start = {
        "id": "msg_1760000000123456789",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    body = "".join(
        (
            _event("message_start", {"type": "message_start", "message": start}),
            _event("ping", {"type": "ping"}),
            _event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "thinking", "thinking": ""},
                },
            ),
            _event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": "The weather, then."},
                },
            ),
            _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {
                        "type": "tool_use",
                        "id": "call_k3j4h5g6f7",
                        "name": "get_weather",
                        "input": {},
                    },
                },
            ),
            _event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
                },
            ),
            _event("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ": ping - 2026-01-01 00:00:15.000000\n\n",
            _event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                    "usage": {"input_tokens": 40, "output_tokens": 25},
                },
            ),
            _event("message_stop", {"type": "message_stop"}),
        )
    ).encode()
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="The weather, then.",
            tools=(("call_k3j4h5g6f7", "get_weather", {"city": "Paris"}),),
            usage=(40, 25, 0, 0, 65),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model=model,
        ),
    )


def test_text_generation_webui_messages_error_event_before_any_message() -> None:
    """oobabooga/text-generation-webui modules/api/script.py (`_anthropic_generate`): an
    `OpenAIError` raised once the stream has begun (the chat path's checks run at its
    first chunk: "max_tokens must be greater than 0.") is written as `event: error`,
    `{"type": "error", "error": {"type": "invalid_request_error", ...}}`, with no
    `message_start` before it. The turn failed with those words, a 400's type."""
    body = _event(
        "error",
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "max_tokens must be greater than 0.",
            },
        },
    ).encode()
    events = replay_every_way(body, "anthropic")
    check(summarize(events), Expect(terminal="error", error_kind="stream_error"))
    error = events[-1].error  # type: ignore[union-attr]
    assert "max_tokens must be greater than 0." in error.message
    assert error.code == "invalid_request_error"


# -- tabbyAPI -------------------------------------------------------------------------------


def _tabby(choices: list[dict[str, Any]], usage: Any = None) -> dict[str, Any]:
    """A chunk of tabbyAPI's `ChatCompletionStreamChunk.model_dump_json()`."""
    return {
        "id": "chatcmpl-9f8e7d6c5b4a",
        "choices": choices,
        "created": 1720000000,
        "model": "Qwen2.5-7B-Instruct-exl2",
        "object": "chat.completion.chunk",
        "usage": usage,
    }


def _tabby_text(text: str) -> dict[str, Any]:
    return {
        "index": 0,
        "finish_reason": None,
        "delta": {"role": "assistant", "content": text, "tool_calls": None},
        "logprobs": None,
    }


def test_tabbyapi_calls_with_no_index_on_a_stop_finish() -> None:
    """theroyallab/tabbyAPI endpoints/OAI/utils/chat_completion.py
    (`_create_stream_chunk`, `postprocess_tool_call`; types in endpoints/OAI/types/
    tools.py): where the template's tool start stopped the text, the calls are generated
    apart and sent whole on the finish chunk, `finish_reason: "stop"` (the stop string's),
    `delta: {"role": null, "content": null, "tool_calls": [...]}`, each call with a
    nine-character id and no `index`; then the usage chunk with no choices and
    `[DONE]`. Both calls, in order, and the turn stopped for them."""
    calls = [
        {
            "id": "3f2a9c1b7",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
            "type": "function",
        },
        {
            "id": "8d4e6f0a2",
            "function": {"name": "get_time", "arguments": json.dumps({"tz": "CET"})},
            "type": "function",
        },
    ]
    finish = {
        "index": 0,
        "finish_reason": "stop",
        "delta": {"role": None, "content": None, "tool_calls": calls},
        "logprobs": None,
    }
    body = _sse(
        _tabby([_tabby_text("Let me check. ")]),
        _tabby([finish]),
        _tabby([], {"prompt_tokens": 80, "completion_tokens": 40, "total_tokens": 120}),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="Let me check. ",
            tools=(
                ("3f2a9c1b7", "get_weather", {"city": "Paris"}),
                ("8d4e6f0a2", "get_time", {"tz": "CET"}),
            ),
            usage=(80, 40, 0, 0, 120),
            stop_reason="tool_use",
            raw_stop_reason="stop",
            model="Qwen2.5-7B-Instruct-exl2",
        ),
    )


def test_tabbyapi_generator_error_with_its_trace_and_no_done() -> None:
    """theroyallab/tabbyAPI common/networking.py (`get_generator_error`), written by
    `stream_generate_chat_completion` where generation raised: `{"error": {"message":
    "Chat completion aborted. Please check the server console.", "trace": "<Python
    traceback>"}}` (the trace with `send_tracebacks` on), then nothing. The turn failed
    with the message, the text before it kept, the trace in `raw` only."""
    failure = {
        "error": {
            "message": "Chat completion aborted. Please check the server console.",
            "trace": 'Traceback (most recent call last):\n  File "backends/exllamav2/model.py"'
            ", line 1290, in generate_gen\nRuntimeError: CUDA error: out of memory\n",
        }
    }
    body = _sse(_tabby([_tabby_text("Partial")]), failure, done=False)
    events = replay_every_way(body, "custom")
    check(summarize(events), Expect(text="Partial", terminal="error", error_kind="stream_error"))
    error = events[-1].error  # type: ignore[union-attr]
    assert error.message == "Chat completion aborted. Please check the server console."
    assert error.raw is not None and "CUDA error: out of memory" in error.raw


# -- llamafile, KoboldCpp -------------------------------------------------------------------


def _llamafiler(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    """A chunk of llamafile's llamafiler (`v1_chat_completions`): the object says
    `chat.completion`, not a chunk; `usage: null` until the last with `include_usage`."""
    return {
        "id": "chatcmpl-Yq3xZ8",
        "object": "chat.completion",
        "model": "LLaMA_CPP",
        **top,
        "system_fingerprint": "fp_7c1d0b2a",
        "choices": [{"index": 0, "logprobs": None, "finish_reason": finish, "delta": delta}],
        "usage": None,
        "created": 1750000000,
    }


def test_llamafile_prefill_progress_chunks_then_the_answer() -> None:
    """Mozilla-Ocho/llamafile llamafile/server/v1_chat_completions.cpp: while the prompt
    is read, the role chunk is sent again and again with `x_prefill_progress` (0.25,
    0.75...), then once without it; every chunk's object is `chat.completion`; the last
    has empty content, the finish and the usage together, then `[DONE]`. The progress
    chunks say nothing: the text once, the usage, `stop`."""
    role = {"role": "assistant", "content": ""}
    usage = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
    body = _sse(
        _llamafiler(role, x_prefill_progress=0.25),
        _llamafiler(role, x_prefill_progress=0.75),
        _llamafiler(role),
        _llamafiler({"content": "Hi"}),
        _llamafiler({"content": " there"}),
        {**_llamafiler({"content": ""}, "stop"), "usage": usage},
    )
    events = replay_every_way(body, "llamacpp")
    check(summarize(events), Expect(text="Hi there", usage=(9, 3, 0, 0, 12), model="LLaMA_CPP"))
    assert kinds(events) == ["text", "usage", "done"]


def _kobold(text: str, finish: str) -> dict[str, Any]:
    """A chunk of KoboldCpp's `handle_sse_stream` (api_format 4): the id is the word
    `koboldcpp`, the role on every delta, the global finish reason on every chunk."""
    return {
        "id": "koboldcpp",
        "object": "chat.completion.chunk",
        "created": 1710000000,
        "model": "koboldcpp/Mistral-7B-Instruct-v0.2.Q4_K_M",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "delta": {"role": "assistant", "content": text},
            }
        ],
    }


def test_koboldcpp_done_with_no_line_end_after_the_finish() -> None:
    """LostRuins/koboldcpp koboldcpp.py (`send_oai_sse_event`): `[DONE]` is written as
    `data: [DONE]` with no line end (every other event ends in a blank line), then the
    connection is closed; the chunks before the finish say `"null"` as their finish
    reason. Per the SSE spec an event cut before its blank line is not dispatched: the
    finish before it ends the turn, `stop` or `length`, the text whole."""
    for finish, last in (("stop", ""), ("length", " wor")):
        body = _sse(_kobold("Hello", "null"), _kobold(last, finish), done=False) + b"data: [DONE]"
        events = replay_every_way(body, "custom")
        check(
            summarize(events),
            Expect(
                text="Hello" + last,
                stop_reason=finish,
                raw_stop_reason=finish,
                model="koboldcpp/Mistral-7B-Instruct-v0.2.Q4_K_M",
            ),
        )


def test_koboldcpp_error_finish_after_text() -> None:
    """LostRuins/koboldcpp koboldcpp.py (`handle_sse_stream`, later versions): where the
    generation's stop reason is -2 (failed), the closing chunk says `finish_reason:
    "error"` (`"error" if sr==-2`), its delta only the role, after the text already
    sent. The turn failed, its words naming the finish; the text before it kept."""

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-A3",
            "object": "chat.completion.chunk",
            "created": 1760000000,
            "model": "koboldcpp/gemma-3-12b-it-Q4_K_M",
            "choices": [{"index": 0, "finish_reason": finish, "delta": delta}],
        }

    body = _sse(
        chunk({"role": "assistant", "content": "Hel"}, None),
        chunk({"role": "assistant"}, "error"),
    )
    events = replay_every_way(body, "custom")
    check(summarize(events), Expect(text="Hel", terminal="error", error_kind="stream_error"))
    assert events[-1].error.code == "error"  # type: ignore[union-attr]


def _kobold_responses(status: str, deltas: list[str], final: str) -> bytes:
    """KoboldCpp's `/v1/responses` stream (api_format 8): created, the message item and
    its part added at once, text deltas, `output_text.done` with the whole pending
    output, the item done (no `content_part.done`), then `response.completed` whatever
    the outcome, its `status` saying it."""
    rid, iid = "resp-A123456", "msg_0123456"
    base = {
        "id": rid,
        "object": "response",
        "created_at": 1760000000,
        "model": "koboldcpp/gemma-3-12b-it-Q4_K_M",
        "status": "in_progress",
        "output": [],
    }
    message = {
        "type": "message",
        "id": iid,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": final, "annotations": [], "logprobs": []}],
    }
    usage = {
        "input_tokens": 9,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 12,
    }
    place = {"item_id": iid, "output_index": 0, "content_index": 0}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": base},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            **place,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *(
            {"type": "response.output_text.delta", **place, "logprobs": [], "delta": piece}
            for piece in deltas
        ),
        {"type": "response.output_text.done", **place, "text": final},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {
            "type": "response.completed",
            "response": {**base, "status": status, "output": [message], "usage": usage},
        },
    ]
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': number})}\n\n"
        for number, event in enumerate(events)
    ).encode()


def test_koboldcpp_responses_completed_and_completed_saying_failed() -> None:
    """LostRuins/koboldcpp koboldcpp.py (`handle_sse_stream`, api_format 8, its
    `/v1/responses`): `response.completed` ends every stream, `status: "failed"` in it
    where the generation failed (`"completed" if currfinishreason != "error" else
    "failed"`). The text once and `stop`; the failed one a failed turn, its text kept."""
    model = "koboldcpp/gemma-3-12b-it-Q4_K_M"
    body = _kobold_responses("completed", ["Hello", " world"], "Hello world")
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="Hello world",
            usage=(9, 3, 0, 0, 12),
            raw_stop_reason="completed",
            model=model,
        ),
    )
    events = replay_every_way(_kobold_responses("failed", ["Hel"], "Hel"), "openai-responses")
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.error_kind) == ("Hel", "error", "stream_error")
    assert summary.tool_calls == []


# -- Xinference, LocalAI, mistral.rs --------------------------------------------------------


def test_xinference_calls_sharing_one_id_and_usage_of_minus_one() -> None:
    """xorbitsai/inference xinference/model/llm/utils.py (`_tool_calls_completion_chunk`):
    the calls parsed from the model's text come whole in one chunk, every call with the
    same id (`call_<the chunk's uuid>`) and no index, `content: null`, `tool_calls` as the
    finish; where the engine's result carried no usage the chunk says
    `{"prompt_tokens": -1, "completion_tokens": -1, "total_tokens": -1}`: not counted.
    Both calls, told apart; no usage event. Before: a usage event of 0 tokens in and out,
    as if the turn had been counted and cost nothing."""
    uid = "5e0c3a1f-2b4d-4c6e-8f9a-0b1c2d3e4f5a"

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"call_{uid}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }

    chunk = {
        "id": f"chatcmpl-{uid}",
        "model": "qwen2.5-instruct",
        "object": "chat.completion.chunk",
        "created": 1730000000,
        "choices": [
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        call("get_weather", {"city": "Paris"}),
                        call("get_time", {"tz": "CET"}),
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": -1, "completion_tokens": -1, "total_tokens": -1},
    }
    for done in (True, False):
        events = replay_every_way(_sse(chunk, done=done), "custom")
        summary = summarize(events)
        check(
            summary,
            Expect(
                text="",
                tools=(
                    (f"call_{uid}", "get_weather", {"city": "Paris"}),
                    (f"call_{uid}_2", "get_time", {"tz": "CET"}),
                ),
                stop_reason="tool_use",
                raw_stop_reason="tool_calls",
                model="qwen2.5-instruct",
            ),
        )
        assert "usage" not in kinds(events)


def test_localai_calls_named_then_argued_under_the_request_id() -> None:
    """mudler/LocalAI core/http/endpoints/openai/chat.go (`processTools`, the stream
    writer; types in core/schema/openai.go): each parsed call is two chunks, its name
    (`arguments: ""`) then its whole arguments beside the text to return (`""`), both
    under the request's uuid as the call id, so parallel calls share it at indexes 0 and
    1; then an empty closing delta, `tool_calls`, with the usage of the last event (all
    zeros on this path) and `[DONE]`. Both calls, each once, told apart; no usage."""
    rid = "4b1f7a2e-9c3d-4e5f-8a6b-7c8d9e0f1a2b"
    zeros = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "created": 1740000000,
            "object": "chat.completion.chunk",
            "id": rid,
            "model": "qwen3-8b",
            "choices": [{"index": 0, "finish_reason": finish, "delta": delta}],
            "usage": zeros,
        }

    def call(index: int, function: dict[str, Any]) -> dict[str, Any]:
        return {"index": index, "id": rid, "type": "function", "function": function}

    def named(index: int, name: str) -> dict[str, Any]:
        return chunk(
            {"role": "assistant", "tool_calls": [call(index, {"name": name, "arguments": ""})]}
        )

    def argued(index: int, arguments: dict[str, Any]) -> dict[str, Any]:
        function = {"name": "", "arguments": json.dumps(arguments)}
        return chunk({"role": "assistant", "content": "", "tool_calls": [call(index, function)]})

    body = _sse(
        named(0, "get_weather"),
        argued(0, {"city": "Paris"}),
        named(1, "get_time"),
        argued(1, {"tz": "CET"}),
        chunk({"content": ""}, "tool_calls"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                (rid, "get_weather", {"city": "Paris"}),
                (f"{rid}_2", "get_time", {"tz": "CET"}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="qwen3-8b",
        ),
    )


def test_mistral_rs_error_in_plain_words_then_done() -> None:
    """EricLBuehler/mistral.rs mistralrs-server-core/src/chat_completion.rs
    (`ChatCompletionStreamer::poll_next`): a model, validation or internal error met
    while streaming is written as the event's data in plain words, not JSON
    (`Event::default().data(msg)`), then `data: [DONE]`; axum's keep-alive is an empty
    comment. The turn fails with the server's words in the message, the text before them
    kept (a `protocol` error: words that are no chunk are not read as a rejection)."""

    def chunk(text: str) -> dict[str, Any]:
        return {
            "id": "1",
            "choices": [
                {
                    "finish_reason": None,
                    "index": 0,
                    "delta": {"content": text, "role": "assistant", "tool_calls": None},
                    "logprobs": None,
                }
            ],
            "created": 1750000000,
            "model": "mistralai/Mistral-7B-Instruct-v0.3",
            "system_fingerprint": "local",
            "object": "chat.completion.chunk",
            "usage": None,
        }

    words = "Failed to decode token: CUDA_ERROR_OUT_OF_MEMORY"
    body = b":\n\n" + _sse(chunk("Hello"), words)
    events = replay_every_way(body, "custom")
    check(summarize(events), Expect(text="Hello", terminal="error", error_kind="protocol"))
    assert words in events[-1].error.message  # type: ignore[union-attr]


# -- TensorRT-LLM, LMDeploy, mlx-omni-server ------------------------------------------------


def test_tensorrt_llm_data_lines_ending_in_a_space_and_usage_from_the_role_chunk() -> None:
    """NVIDIA/TensorRT-LLM tensorrt_llm/serve/postprocess_handlers.py
    (`chat_stream_post_processor`): every chunk is written `f"data: {json} \\n\\n"`, a
    space after the JSON; with `continuous_usage_stats` the role chunk already carries
    the prompt's usage (0 completion tokens, the cached ones in `prompt_tokens_details`)
    and each chunk its running count; the finish chunk has `stop_reason` (the stop
    token's id) beside `finish_reason`, and `avg_decoded_tokens_per_iter`; then the
    usage chunk with no choices, the same counts, and `[DONE]`. The text once, the last
    count once more, `stop`."""
    model = "meta-llama/Llama-3.1-8B-Instruct"

    def usage(completion: int) -> dict[str, Any]:
        return {
            "prompt_tokens": 12,
            "total_tokens": 12 + completion,
            "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": 4},
        }

    def chunk(delta: dict[str, Any], completion: int, finish: str | None = None) -> Any:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "avg_decoded_tokens_per_iter": 1.0}
        if finish is not None:
            choice["finish_reason"], choice["stop_reason"] = finish, 128009
        return {
            "id": "chatcmpl-7f3e",
            "object": "chat.completion.chunk",
            "created": 1750000000,
            "model": model,
            "choices": [choice],
            "usage": usage(completion),
        }

    frames = [
        chunk({"role": "assistant"}, 0),
        chunk({"content": "Hi", "reasoning_content": ""}, 1),
        chunk({"content": " there", "reasoning_content": ""}, 2),
        chunk({"content": "", "reasoning_content": ""}, 2, "stop"),
        {**chunk({}, 2), "choices": []},
    ]
    body = "".join(f"data: {json.dumps(frame)} \n\n" for frame in frames) + "data: [DONE]\n\n"
    events = replay_every_way(body.encode(), "custom")
    check(summarize(events), Expect(text="Hi there", usage=(8, 2, 0, 4, 14), model=model))
    assert kinds(events) == ["usage", "text", "usage", "text", "usage", "done"]


def test_lmdeploy_running_usage_on_every_chunk_and_null_fields() -> None:
    """InternLM/lmdeploy lmdeploy/serve/openai/api_server.py
    (`completion_stream_generator` of `chat_completions_v1`): with `include_usage`,
    every chunk carries the usage so far (`model_dump_json`, so `tool_calls` and
    `reasoning_content` are `null` where unsaid, the role on every delta, `logprobs:
    null`); the reasoning parser's `reasoning_content`, then the text; the finish on
    the last chunk beside its own usage; `[DONE]`. The reasoning, the text, the last
    usage, `stop`."""

    def chunk(
        content: str, reasoning: str | None, completion: int, finish: str | None = None
    ) -> Any:
        delta = {
            "role": "assistant",
            "content": content,
            "reasoning_content": reasoning,
            "tool_calls": None,
        }
        return {
            "id": "7",
            "object": "chat.completion.chunk",
            "created": 1740000000,
            "model": "internlm3-8b-instruct",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": completion,
                "total_tokens": 10 + completion,
            },
        }

    body = _sse(
        chunk("", "Greet.", 1),
        chunk("Hi", None, 2),
        chunk(" there", None, 3),
        chunk("", None, 4, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="Hi there",
            reasoning="Greet.",
            usage=(10, 4, 0, 0, 14),
            model="internlm3-8b-instruct",
        ),
    )


def _omni(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def test_mlx_omni_server_placeholder_signature_and_a_stop_of_no_block() -> None:
    """madroidmaq/mlx-omni-server src/mlx_omni_server/chat/anthropic/
    anthropic_messages_adapter.py (`generate_stream`): `message_start` counting nothing;
    a thinking block that is still open at the end gets `signature_delta`
    `"placeholder_signature_hash"` before its stop; the usage and the stop reason only in
    `message_delta`. With no output at all, `content_block_stop` of index 0 comes with no
    block started. The reasoning with that signature and `length`; an empty answer and
    `stop`."""
    model = "mlx-community/Qwen3-4B-4bit"
    start = _omni(
        {
            "type": "message_start",
            "message": {
                "id": "msg_0123456789abcdef01234567",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": model,
                "stop_reason": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        }
    )

    def closing(reason: str, input_tokens: int, output_tokens: int) -> str:
        usage = {"input_tokens": input_tokens, "output_tokens": output_tokens}
        delta = {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": usage}
        return _omni(delta) + _omni({"type": "message_stop"})

    def delta(inner: dict[str, Any]) -> str:
        return _omni({"type": "content_block_delta", "index": 0, "delta": inner})

    thinking = {"type": "thinking", "thinking": ""}
    body = (
        start
        + _omni({"type": "content_block_start", "index": 0, "content_block": thinking})
        + delta({"type": "thinking_delta", "thinking": "Count the letters."})
        + delta({"type": "signature_delta", "signature": "placeholder_signature_hash"})
        + _omni({"type": "content_block_stop", "index": 0})
        + closing("max_tokens", 30, 64)
    )
    events = replay_every_way(body.encode(), "anthropic")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="",
            reasoning="Count the letters.",
            signatures=1,
            usage=(30, 64, 0, 0, 94),
            stop_reason="length",
            raw_stop_reason="max_tokens",
            model=model,
        ),
    )
    assert summary.signatures == ["placeholder_signature_hash"]

    empty = start + _omni({"type": "content_block_stop", "index": 0}) + closing("end_turn", 0, 0)
    events = replay_every_way(empty.encode(), "anthropic")
    check(summarize(events), Expect(text="", raw_stop_reason="end_turn", model=model))
