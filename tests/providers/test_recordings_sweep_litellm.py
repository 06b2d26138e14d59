"""Recordings and chunk lists of LiteLLM (its tests, and the streams its proxy and its
`/v1/messages` and Responses bridges write), LangChain and openai-agents-python: the
shapes the earlier sweeps did not replay.

Each body is written by hand from the test or recording named beside it (its essential
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that project's own test expects.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.pipeline.record import RecordBuilder
from tests.support import Expect, check, replay_every_way, summarize

GPT_4O = "gpt-4o-2024-08-06"


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-parallel",
        "object": "chat.completion.chunk",
        "created": 1728933352,
        "model": GPT_4O,
        "system_fingerprint": "fp_a7d06e42a7",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _streamed_call(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    """A call as OpenAI streams one: id and name first, then its arguments in pieces."""
    opener = {"index": index, "id": call_id, "type": "function"}
    chunks = [_chunk({"tool_calls": [opener | {"function": {"name": name, "arguments": ""}}]})]
    for start in range(0, len(arguments), 9):
        piece = arguments[start : start + 9]
        chunks.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    return chunks


def _wrapper(*calls: tuple[str, dict[str, Any]]) -> str:
    uses = [{"recipient_name": name, "parameters": parameters} for name, parameters in calls]
    return json.dumps({"tool_uses": uses})


def test_a_parallel_wrapper_on_the_chat_wire_is_requested_as_the_calls_it_wraps() -> None:
    """BerriAI/litellm tests/test_litellm/litellm_core_utils/llm_response_utils/
    test_parallel_tool_call_shift.py: gpt-4o-2024-08-06 answers with five calls, two of
    them the `multi_tool_use.parallel` wrapper it sometimes sends in place of parallel
    calls (vercel/ai#2786: "Model tried to call unavailable tool
    'multi_tool_use.parallel'"), each wrapping `functions.<tool>` calls. LiteLLM expands
    every wrapper in place: get_weather, get_time, get_date, get_news, get_quote,
    get_forecast. Streamed, as the chat wire sends calls, the turn is those six requests
    in that order, each wrapped call under the wrapper's id and `_{n}`, as the Responses
    wire reads the wrapper. Before: the wrapper itself was a `tool_request` named
    `multi_tool_use.parallel`, a tool the client never declared."""
    calls = [
        ("0", "get_weather", "{}"),
        (
            "m1",
            "multi_tool_use.parallel",
            _wrapper(("functions.get_time", {"tz": "UTC"}), ("functions.get_date", {"tz": "UTC"})),
        ),
        ("2", "get_news", "{}"),
        ("m2", "multi_tool_use.parallel", _wrapper(("functions.get_quote", {"sym": "AAPL"}))),
        ("4", "get_forecast", "{}"),
    ]
    chunks = [_chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, arguments) in enumerate(calls):
        chunks += _streamed_call(index, call_id, name, arguments)
    chunks.append(_chunk({}, "tool_calls"))
    check(
        summarize(replay_every_way(_sse(*chunks), "openai")),
        Expect(
            tools=(
                ("0", "get_weather", {}),
                ("m1_0", "get_time", {"tz": "UTC"}),
                ("m1_1", "get_date", {"tz": "UTC"}),
                ("2", "get_news", {}),
                ("m2_0", "get_quote", {"sym": "AAPL"}),
                ("4", "get_forecast", {}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=GPT_4O,
        ),
    )


@pytest.mark.parametrize("arguments", ['{"tool_uses": "nope"}', '{"tool_uses": [42]}'])
def test_a_parallel_wrapper_that_wraps_no_call_is_requested_as_it_came(arguments: str) -> None:
    """BerriAI/litellm tests/test_litellm/litellm_core_utils/llm_response_utils/
    test_handle_invalid_parallel_tool_calls.py: a wrapper whose `tool_uses` holds no call
    to expand "must come back untouched". It is requested as it came, its arguments
    unchanged: nothing is invented from them, and nothing is dropped."""
    chunks = _streamed_call(0, "call_1", "multi_tool_use.parallel", arguments)
    body = _sse(*chunks, _chunk({}, "tool_calls"))
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(
            tools=(("call_1", "multi_tool_use.parallel", json.loads(arguments)),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=GPT_4O,
        ),
    )


def test_a_parallel_wrapper_cut_off_is_a_truncated_turn_that_shows_the_call() -> None:
    """The same wrapper, cut off before its arguments close and before the finish: the
    turn is `truncated`, nothing is requested, and the call shows as it came (its
    `tool_start`), as any call left open does."""
    arguments = _wrapper(("functions.get_time", {"tz": "UTC"}))
    chunks = _streamed_call(0, "m1", "multi_tool_use.parallel", arguments)[:3]
    events = replay_every_way(_sse(*chunks, done=False), "openai")
    check(summarize(events), Expect(terminal="error", error_kind="truncated"))
    starts = [(ev.call_id, ev.name) for ev in events if ev.type == "tool_start"]
    assert starts == [("m1", "multi_tool_use.parallel")]


CLAUDE = "claude-sonnet-4-6"


def _proxy_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A chunk as LiteLLM's proxy serves Claude on the chat wire: its thinking blocks on
    the delta, and again in `provider_specific_fields`."""
    blocks = delta.get("thinking_blocks")
    if blocks is not None:
        delta = delta | {"provider_specific_fields": {"thinking_blocks": blocks}}
    return {
        "id": "chatcmpl-litellm",
        "object": "chat.completion.chunk",
        "created": 1781043300,
        "model": CLAUDE,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _thinking(text: str, signature: str | None = None) -> dict[str, Any]:
    block = {"type": "thinking", "thinking": text}
    return block if signature is None else block | {"signature": signature}


def _parts(events: list[Any]) -> list[rxllm.ReasoningPart]:
    builder = RecordBuilder("custom", CLAUDE)
    for event in events:
        builder.add(event)
    return builder.build().reasoning_parts


def test_litellm_thinking_blocks_keep_the_signature_that_reasoning_content_cannot_carry() -> None:
    """BerriAI/litellm tests/test_litellm/llms/anthropic/chat/test_anthropic_chat_handler.py
    (test_streaming_thinking_blocks_are_replayable_after_signature_delta and the mock
    server of test_anthropic_completion_streaming_usage_matches_non_streaming_with_thinking):
    Claude's thinking through LiteLLM's chat wire. Each `thinking_delta` is a delta with
    `reasoning_content` and the same text in `thinking_blocks`; the `signature_delta` is a
    delta whose thinking block has the whole text again and the signature ("sig-final"),
    which LiteLLM expects to make the block replayable. The reasoning is said once,
    "Step 1. Step 2.", one part closed by its signature, as the Anthropic wire reads it.
    Before: the blocks were logged as a field with no event, and the signature was lost:
    the part could not go back to Claude (directly, or by a fallback) as signed thinking."""
    body = _sse(
        _proxy_chunk({"role": "assistant", "content": ""}),
        _proxy_chunk({"reasoning_content": "Step 1. ", "thinking_blocks": [_thinking("Step 1. ")]}),
        _proxy_chunk({"reasoning_content": "Step 2.", "thinking_blocks": [_thinking("Step 2.")]}),
        _proxy_chunk({"thinking_blocks": [_thinking("Step 1. Step 2.", "sig-final")]}),
        _proxy_chunk({"content": "The probability is 3/8."}),
        _proxy_chunk({}, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="The probability is 3/8.",
            reasoning="Step 1. Step 2.",
            signatures=1,
            model=CLAUDE,
        ),
    )
    assert _parts(events) == [rxllm.ReasoningPart(text="Step 1. Step 2.", signature="sig-final")]


def test_litellm_signed_and_redacted_thinking_blocks_are_parts_of_their_own() -> None:
    """openai/openai-agents-python tests/models/test_openai_chatcompletions_stream.py
    (test_stream_handler_segments_thinking_blocks_at_signature_deltas,
    test_stream_handler_preserves_redacted_thinking_without_summary; openai-agents-python#4177
    checked the shape against LiteLLM 1.83.0): a block's signature on a block of its own
    with empty text (`"thinking": "", "signature": "SIG-1"`), unsigned blocks with
    `"signature": ""`, and a `redacted_thinking` block with its opaque `data` and no
    `reasoning_content`. Three parts, in order: "step one" signed SIG-1, the redacted
    block, "step two" signed SIG-2, as openai-agents keeps them for replay. Before: the
    redacted block was dropped, and both signatures."""
    body = _sse(
        _proxy_chunk({"role": "assistant", "content": ""}),
        _proxy_chunk({"reasoning_content": "step ", "thinking_blocks": [_thinking("step ", "")]}),
        _proxy_chunk({"reasoning_content": "one", "thinking_blocks": [_thinking("one", "")]}),
        _proxy_chunk({"thinking_blocks": [_thinking("", "SIG-1")]}),
        _proxy_chunk({"thinking_blocks": [{"type": "redacted_thinking", "data": "BLOB"}]}),
        _proxy_chunk(
            {"reasoning_content": "step two", "thinking_blocks": [_thinking("step two", "")]}
        ),
        _proxy_chunk({"thinking_blocks": [_thinking("", "SIG-2")]}),
        _proxy_chunk({"content": "visible answer"}),
        _proxy_chunk({}, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="visible answer", reasoning="step onestep two", signatures=3, model=CLAUDE),
    )
    assert _parts(events) == [
        rxllm.ReasoningPart(text="step one", signature="SIG-1"),
        rxllm.ReasoningPart(signature="BLOB", redacted=True),
        rxllm.ReasoningPart(text="step two", signature="SIG-2"),
    ]


def test_thinking_blocks_alone_are_the_reasoning_said_once() -> None:
    """The same blocks with no `reasoning_content` beside them (a relay that keeps only
    the blocks): their text is the reasoning, and the signed block that repeats it whole
    (LiteLLM 1.83's) adds only its signature."""
    body = _sse(
        _proxy_chunk({"thinking_blocks": [_thinking("Step 1. ")]}),
        _proxy_chunk({"thinking_blocks": [_thinking("Step 2.")]}),
        _proxy_chunk({"thinking_blocks": [_thinking("Step 1. Step 2.", "sig-final")]}),
        _proxy_chunk({"content": "3/8"}, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="3/8", reasoning="Step 1. Step 2.", signatures=1, model=CLAUDE),
    )
    assert _parts(events) == [rxllm.ReasoningPart(text="Step 1. Step 2.", signature="sig-final")]


def _anthropic(*payloads: dict[str, Any], error: dict[str, Any] | None = None) -> bytes:
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    if error is not None:
        body += f"event: error\ndata: {json.dumps(error)}\n\n"
    return body.encode()


def _bridge_start(model: str) -> dict[str, Any]:
    """The `message_start` of LiteLLM's `/v1/messages` bridge (`AnthropicStreamWrapper`,
    its `_create_initial_usage_delta`): every count zero, the real ones come at the end."""
    zeros = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {"id": "msg_5d2e07c1", "type": "message", "role": "assistant", "content": []}
    message |= {"model": model, "stop_reason": None, "stop_sequence": None, "usage": zeros}
    return {"type": "message_start", "message": message}


def _bridge_text(text: str, index: int = 0) -> list[dict[str, Any]]:
    start = {"type": "content_block_start", "index": index}
    delta = {"type": "content_block_delta", "index": index}
    return [
        start | {"content_block": {"type": "text", "text": ""}},
        delta | {"delta": {"type": "text_delta", "text": text}},
    ]


def test_litellm_bridge_error_after_placeholder_usage_reports_no_usage() -> None:
    """BerriAI/litellm tests/test_litellm/llms/anthropic/experimental_pass_through/adapters/
    test_streaming_iterator_mid_stream_error.py: Claude on Bedrock Converse served on the
    Anthropic wire by LiteLLM's `/v1/messages` bridge; the upstream stream ends without
    its `messageStop` after "Creating a file", and the bridge ends the stream with an
    `error` event (`api_error`). The turn is that error, its text kept. The bridge's
    `message_start` counted nothing (zeros it fills in only at its final `message_delta`,
    which never came): no usage is known. Before: a usage of 0 tokens in all came before
    the error, as if the turn had cost nothing."""
    model = "bedrock-converse-sonnet-4-6"
    message = "Bedrock ConverseStream ended without a terminal 'messageStop' event"
    body = _anthropic(
        _bridge_start(model),
        *_bridge_text("Creating a file"),
        error={"type": "error", "error": {"type": "api_error", "message": message}},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(text="Creating a file", terminal="error", error_kind="stream_error"),
    )
    [error] = [ev for ev in events if ev.type == "error"]
    assert message in error.error.message and error.error.code == "api_error"


def test_litellm_bridge_turn_whose_upstream_sent_no_usage_has_none() -> None:
    """The same bridge when its upstream sent a finish and no usage: the held
    `message_delta` goes out with the placeholder zeros of its translate step (the
    bridge's own comment: "the held `message_delta` carries placeholder zeros"). The
    turn is its text and `end_turn`, with no usage. Before: a usage of 0 tokens."""
    model = "gemini-2.5-flash"
    body = _anthropic(
        _bridge_start(model),
        *_bridge_text("Hi!"),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
        {"type": "message_stop"},
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(text="Hi!", raw_stop_reason="end_turn", model=model),
    )


def test_litellm_bridge_cache_read_from_an_openai_style_upstream_is_read() -> None:
    """BerriAI/litellm .../adapters/test_streaming_iterator_cache_tokens.py: Claude
    through OpenRouter, served on the Anthropic wire by the bridge, whose final
    `message_delta` carries the whole usage (7009 prompt tokens, 7001 of them cached):
    `input_tokens` 8 (uncached), `cache_read_input_tokens` 7001, `output_tokens` 4, after
    a `message_start` of zeros. The usage is 8 + 4 + 7001 read from the cache = 7013."""
    model = "anthropic/claude-haiku-4.5"
    usage = {"input_tokens": 8, "output_tokens": 4, "cache_read_input_tokens": 7001}
    body = _anthropic(
        _bridge_start(model),
        *_bridge_text("OK"),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(text="OK", usage=(8, 4, 0, 7001, 7013), raw_stop_reason="end_turn", model=model),
    )


def test_langchain_file_search_then_a_file_cited_answer_then_a_call() -> None:
    """langchain-ai/langchain libs/partners/openai/tests/unit_tests/chat_models/
    test_responses_stream_annotations.py (gpt-4.1-mini-2025-04-14 with `file_search` and a
    `grade` function): a `file_search_call` added with no queries and done with
    `queries: ["query"]`, `results: null`, its progress events between; the answer's
    text with a `file_citation` annotation (`file_id`, `filename`, `index`) added between
    two deltas; a `grade` call streamed in five pieces; `sequence_number`s that jump
    (10 to 253, 261 to 512), the events between them left out of the recording; and a
    terminal response whose message text ("The answer is....") is the deltas', not the
    `output_text.done` text before it. The search is a provider-run tool (its call,
    then its result), the text is the deltas' once, the file citation has no URL and no
    event, and the turn ends with the call."""
    model = "gpt-4.1-mini-2025-04-14"

    def response(status: str, output: list[Any], usage: Any = None) -> dict[str, Any]:
        head = {"id": "resp_123", "object": "response", "created_at": 1757346128}
        return head | {"status": status, "model": model, "output": output, "usage": usage}

    searched = {"id": "fs_123", "type": "file_search_call", "status": "completed"}
    searched |= {"queries": ["query"], "results": None}
    citation = {"type": "file_citation", "file_id": "file-123", "filename": "my_file.pdf"}
    citation["index"] = 1430
    part = {"type": "output_text", "text": "The answer is...", "annotations": [citation]}
    message = {"id": "msg_123", "type": "message", "role": "assistant", "status": "completed"}
    call = {"id": "fc_123", "type": "function_call", "call_id": "call_123", "name": "grade"}
    called = call | {"arguments": '{"answer":"answer"}', "status": "completed"}
    on_message = {"item_id": "msg_123", "output_index": 1, "content_index": 0}
    on_call = {"item_id": "fc_123", "output_index": 2}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response("in_progress", [])},
        {"type": "response.in_progress", "response": response("in_progress", [])},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": searched | {"status": "in_progress", "queries": []},
        },
        {"type": "response.file_search_call.in_progress", "item_id": "fs_123", "output_index": 0},
        {"type": "response.file_search_call.searching", "item_id": "fs_123", "output_index": 0},
        {"type": "response.file_search_call.completed", "item_id": "fs_123", "output_index": 0},
        {"type": "response.output_item.done", "output_index": 0, "item": searched},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": message | {"status": "in_progress", "content": []},
        },
        {"type": "response.content_part.added", **on_message, "part": part | {"text": ""}},
        {"type": "response.output_text.delta", **on_message, "delta": "The answer"},
        {"type": "response.output_text.delta", **on_message, "delta": " is..."},
        {
            "type": "response.output_text.annotation.added",
            **on_message,
            "annotation_index": 0,
            "annotation": citation,
        },
        {"type": "response.output_text.delta", **on_message, "delta": "."},
        {"type": "response.output_text.done", **on_message, "text": "The answer is..."},
        {"type": "response.content_part.done", **on_message, "part": part},
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": message | {"content": [part]},
        },
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": call | {"arguments": "", "status": "in_progress"},
        },
        *(
            {"type": "response.function_call_arguments.delta", **on_call, "delta": piece}
            for piece in ('{"', "answer", '":"', 'answer"', "}")
        ),
        {
            "type": "response.function_call_arguments.done",
            **on_call,
            "arguments": '{"answer":"answer"}',
        },
        {"type": "response.output_item.done", "output_index": 2, "item": called},
        {
            "type": "response.completed",
            "response": response(
                "completed",
                [searched, message | {"content": [part | {"text": "The answer is...."}]}, called],
                {
                    "input_tokens": 17052,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 545,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 17597,
                },
            ),
        },
    ]
    numbers = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 253, 254, 255, 256, 257, 258, 259, 260, 261]
    numbers += [512, 514, 515, 516, 517]
    for event, number in zip(events, numbers, strict=True):
        event["sequence_number"] = number
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    replayed = replay_every_way(body, "openai-responses")
    check(
        summarize(replayed),
        Expect(
            text="The answer is....",
            tools=(("call_123", "grade", {"answer": "answer"}),),
            usage=(17052, 545, 0, 0, 17597),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )
    server = [(ev.type, ev.call_id) for ev in replayed if ev.type.startswith("server_tool")]
    assert server == [("server_tool_call", "fs_123"), ("server_tool_result", "fs_123")]
    assert not [ev for ev in replayed if ev.type == "citation"]


def test_gemini_grounding_on_a_final_chunk_without_content_is_cited() -> None:
    """BerriAI/litellm tests/test_litellm/llms/vertex_ai/gemini/
    test_gemini_streaming_grounding_annotations.py: with Google Search grounding, the
    answer's text comes in one chunk and the final chunk has no `content` at all, only
    `finishReason: STOP`, the `groundingMetadata` (one web chunk, one support over the
    whole answer) and the usage. LiteLLM once lost those annotations (they were read
    only beside content); here the source is a `citation` after the text."""
    answer = "According to web sources, the answer is 42."
    grounding = {
        "groundingChunks": [
            {"web": {"uri": "https://example.com/source", "title": "Example Source"}}
        ],
        "groundingSupports": [
            {"segment": {"startIndex": 0, "endIndex": 45}, "groundingChunkIndices": [0]}
        ],
    }
    body = _sse(
        {"candidates": [{"content": {"parts": [{"text": answer}], "role": "model"}, "index": 0}]},
        {
            "candidates": [{"finishReason": "STOP", "index": 0, "groundingMetadata": grounding}],
            "usageMetadata": {
                "promptTokenCount": 20,
                "candidatesTokenCount": 15,
                "totalTokenCount": 35,
            },
        },
        done=False,
    )
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(text=answer, usage=(20, 15, 0, 0, 35), raw_stop_reason="STOP"),
    )
    cited = [(ev.url, ev.title) for ev in events if ev.type == "citation"]
    assert cited == [("https://example.com/source", "Example Source")]
    assert [ev.type for ev in events][-3:] == ["citation", "usage", "done"]


def test_vertex_streamed_arguments_into_an_array_of_objects_keep_the_opening_signature() -> None:
    """BerriAI/litellm tests/test_litellm/llms/vertex_ai/gemini/test_partial_args_streaming.py
    (`streamFunctionCallArguments`, litellm#22206): a call opened by its name alone with
    `willContinue` and Gemini 3's `thoughtSignature` on that part; its arguments as
    `partialArgs` at `$.questions[0].text` (a string continued over two parts) and a
    `boolValue` at `$.questions[0].multiSelect`; then the empty `functionCall` that ends
    it. One call, `{"questions": [{"text": "What?", "multiSelect": false}]}`, carrying
    the opening part's signature, as LiteLLM's test keeps it."""

    def part(call: dict[str, Any]) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": call}]}}]}

    def more(**argument: Any) -> dict[str, Any]:
        return part({"partialArgs": [argument], "willContinue": True})

    opener = part({"name": "AskUser", "willContinue": True})
    opener["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = "sig123"
    last = part({})
    last["candidates"][0]["finishReason"] = "STOP"
    last["usageMetadata"] = {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8}
    text = "$.questions[0].text"
    body = _sse(
        opener,
        more(jsonPath=text, stringValue="What", willContinue=True),
        more(jsonPath=text, stringValue="?"),
        more(boolValue=False, jsonPath="$.questions[0].multiSelect"),
        last,
        done=False,
    )
    events = replay_every_way(body, "google")
    summary = summarize(events)
    [(call_id, name, arguments)] = summary.tool_calls
    assert (name, arguments) == (
        "AskUser",
        {"questions": [{"text": "What?", "multiSelect": False}]},
    )
    [request] = [ev for ev in events if ev.type == "tool_request"]
    assert request.call_id == call_id and request.signature == "sig123"
    assert (summary.stop_reason, summary.raw_stop_reason) == ("tool_use", "STOP")
    assert summary.usage is not None and summary.usage.total_tokens == 8


def _responses(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_chatgpt_codex_backend_completes_with_an_empty_output() -> None:
    """BerriAI/litellm tests/test_litellm/responses/
    test_streaming_iterator_output_recovery.py (litellm#25429): chatgpt.com's Codex
    backend ends with `response.completed` whose `output` is `[]`; the turn's items came
    only as `output_item.done` events, each whole, with no `output_item.added` and no
    deltas (LiteLLM now backfills them into the completed response). Each is read at
    its done event: the reasoning item (its `encrypted_content` the signature), the
    message's text, the call; the empty output adds nothing and takes nothing away."""
    model = "gpt-5.4"
    head = {"id": "resp_test", "object": "response", "created_at": 1700000000, "model": model}
    message = {"type": "message", "id": "msg_0", "role": "assistant", "status": "completed"}
    message["content"] = [{"type": "output_text", "text": "OK my lord", "annotations": []}]
    call = {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "shell"}
    call |= {"arguments": '{"cmd":"ls"}', "status": "completed"}
    reasoning = {"type": "reasoning", "id": "rs_0", "summary": [], "encrypted_content": "gAAAA"}
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 64},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 120,
    }
    body = _responses(
        {"type": "response.created", "response": head | {"status": "in_progress", "output": []}},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.output_item.done", "output_index": 2, "item": call},
        {
            "type": "response.completed",
            "response": head | {"status": "completed", "output": [], "usage": usage},
        },
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="OK my lord",
            signatures=1,
            tools=(("call_0", "shell", {"cmd": "ls"}),),
            usage=(36, 20, 12, 64, 120),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )
    assert [ev.type for ev in events][:2] == ["reasoning", "text"]


@pytest.mark.parametrize(
    ("kind", "code", "retryable"),
    [
        ("tokens", "rate_limit_exceeded", True),
        ("server_error", "internal_error", True),
        ("server_error", "vector_store_timeout", True),
        ("invalid_request_error", "content_policy_violation", False),
        ("invalid_request_error", "insufficient_quota", False),
        ("invalid_request_error", "context_length_exceeded", False),
        ("invalid_request_error", "invalid_prompt", False),
        ("invalid_request_error", "model_not_found", False),
    ],
)
def test_responses_error_events_say_whether_sending_again_may_help(
    kind: str, code: str, retryable: bool
) -> None:
    """BerriAI/litellm tests/test_litellm/responses/test_streaming_iterator_error_events.py:
    text streams ("partial "), then an `error` event with the error nested under `error`
    (`type`, `code`, `message`) halts the stream; LiteLLM maps each code to the exception
    the non-streaming path raises, and falls back mid-stream on the retriable ones (429,
    5xx, timeouts), never on a policy halt ("This content was flagged for possible
    cybersecurity risk. The response was halted mid-stream."), a quota, a context that
    is too long, a bad prompt or an unknown model. Here each is a `stream_error` after
    the text, with its code, and `retryable` as LiteLLM decides."""
    message = "This content was flagged for possible cybersecurity risk."
    head = {"id": "resp_1", "object": "response", "model": "gpt-5", "output": []}
    body = _responses(
        {"type": "response.created", "response": head | {"status": "in_progress"}},
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "partial ",
        },
        {"type": "error", "error": {"type": kind, "code": code, "message": message}},
    )
    events = replay_every_way(body, "openai-responses")
    check(summarize(events), Expect(text="partial ", terminal="error", error_kind="stream_error"))
    [failed] = [ev for ev in events if ev.type == "error"]
    assert (failed.error.code, failed.error.retryable) == (code, retryable)
    assert message in failed.error.message


def test_partial_url_citations_forwarded_by_litellm_cite_what_has_a_url() -> None:
    """openai/openai-agents-python tests/models/test_litellm_annotations.py: "Providers
    reached through LiteLLM may omit fields the OpenAI schema marks as required" (a
    KeyError there once aborted the whole turn): a `url_citation` with no payload, one
    whose payload has a title and no URL, one with `title`, `start_index` and
    `end_index` all `null`, and one without a title. The turn reads whole; the two that
    name a URL are citations (no title), the two that do not are left out."""
    annotations = [
        {"type": "url_citation"},
        {"type": "url_citation", "url_citation": {"title": "Missing URL"}},
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://example.com",
                "title": None,
                "start_index": None,
                "end_index": None,
            },
        },
        {
            "type": "url_citation",
            "url_citation": {"start_index": 0, "end_index": 5, "url": "https://example.org"},
        },
    ]
    body = _sse(
        _chunk({"role": "assistant", "content": "hi"}),
        _chunk({"annotations": annotations}, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(summarize(events), Expect(text="hi", model=GPT_4O))
    cited = [(ev.url, ev.title) for ev in events if ev.type == "citation"]
    assert cited == [("https://example.com", None), ("https://example.org", None)]


def test_claude_through_litellm_numbers_its_call_by_content_block() -> None:
    """BerriAI/litellm tests/local_testing/stream_chunk_testdata.py: claude-3-5-sonnet-20240620
    through LiteLLM's chat wire (2024): the answer's text, then a `sql_query` call at
    `index: 1` (the Anthropic content block's index: no call 0 ever comes) whose deltas
    keep `content: ""`, `function_call: null` and `type: "function"`, a second opener-like
    delta with `id: null`, `name: null` and `arguments: ""`, then the arguments in
    pieces and a finish with every delta field `null`. One call, with its arguments."""
    model = "claude-3-5-sonnet-20240620"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        full = {"content": None, "role": None, "function_call": None, "tool_calls": None}
        choice = {"finish_reason": finish, "index": 0, "delta": full | delta, "logprobs": None}
        return {
            "id": "chatcmpl-634a6ad3-483a-44a1-8cdd-3befbeb4ac2f",
            "choices": [choice],
            "created": 1722656356,
            "model": model,
            "object": "chat.completion.chunk",
            "system_fingerprint": None,
        }

    def call(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
        entry = {"id": call_id, "type": "function", "index": 1}
        entry["function"] = {"arguments": arguments, "name": name}
        return chunk({"content": "", "tool_calls": [entry]})

    words = ["To answer", " your", " question about", " how", " many rows are in the "]
    words += ["'users' table, I", "'ll", " need to", " run", " a SQL query.", " Let", " me"]
    words += [" ", "do that for", " you."]
    pieces = ['{"', 'query": ', '"SELECT C', "OUNT(*", ") ", "FROM use", 'rs;"}']
    body = _sse(
        chunk({"content": words[0], "role": "assistant"}),
        *(chunk({"content": word}) for word in words[1:]),
        call("toolu_01H3AjkLpRtGQrof13CBnWfK", "sql_query", ""),
        call(None, None, ""),
        *(call(None, None, piece) for piece in pieces),
        chunk({}, "tool_calls"),
    )
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(
            text="".join(words),
            tools=(
                (
                    "toolu_01H3AjkLpRtGQrof13CBnWfK",
                    "sql_query",
                    {"query": "SELECT COUNT(*) FROM users;"},
                ),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


def test_claude_on_databricks_through_litellm_signs_its_thinking_at_the_end() -> None:
    """BerriAI/litellm .../adapters/test_streaming_iterator_thinking_regression.py ("the
    real failing sequence", Claude on Databricks through LiteLLM): every delta has
    `content: ""` and the thinking twice, as `reasoning_content` and as a block with
    `"signature": ""`; then a block with empty text and an empty signature, then one
    with empty text and the signature ("sig_payload"), then the Chinese answer. One
    signed part of thinking, the answer as text."""
    model = "claude-4-6-opus"

    def chunk(content: str, thinking: str | None = None, signature: str = "") -> dict[str, Any]:
        delta: dict[str, Any] = {"content": content, "role": "assistant", "tool_calls": None}
        if thinking is not None:
            delta["reasoning_content"] = thinking
            delta["thinking_blocks"] = [
                {"type": "thinking", "thinking": thinking, "signature": signature}
            ]
        return _proxy_chunk(delta) | {"model": model}

    thoughts = ["The user is asking", ' "', "Hello", ', who are you?" in Chinese.']
    answer = ["你", "好\uff01我是 "]  # (a full-width exclamation mark)
    finish = _proxy_chunk({"content": ""}, "stop") | {"model": model}
    body = _sse(
        *(chunk("", thought) for thought in thoughts),
        chunk("", ""),
        chunk("", "", "sig_payload"),
        *(chunk(piece) for piece in answer),
        finish,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="".join(answer), reasoning="".join(thoughts), signatures=1, model=model),
    )
    assert _parts(events) == [rxllm.ReasoningPart(text="".join(thoughts), signature="sig_payload")]


def test_gemini_code_execution_rounds_in_one_chunk_keep_what_each_part_sent() -> None:
    """BerriAI/litellm tests/test_litellm/llms/vertex_ai/gemini/test_code_execution.py: one
    chunk holds text, three rounds of `executableCode` and `codeExecutionResult` (one run
    failed with its stderr, "Vertex may omit `language`" on one code part, a result
    without `output`), then the answer. Each round is a provider-run call and its
    result, in order, each result answering the code before it; a call's arguments
    and a result's content are the keys the part sent. Before: a code part without
    `language` was read as `"language": null`, a key the wire never had."""
    parts = [
        {"text": "Let me compute this with Python."},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
        {"executableCode": {"code": "print(1/0)"}},
        {
            "codeExecutionResult": {
                "outcome": "OUTCOME_FAILED",
                "output": "ZeroDivisionError: division by zero",
            }
        },
        {"executableCode": {"language": "PYTHON", "code": "print(2)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK"}},
        {"text": " The answer is 2."},
    ]
    body = _sse(
        {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "index": 0, "finishReason": "STOP"}
            ],
            "usageMetadata": {
                "promptTokenCount": 30,
                "candidatesTokenCount": 40,
                "totalTokenCount": 70,
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": "Z0Fzaf2xH9Xg",
        },
        done=False,
    )
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="Let me compute this with Python. The answer is 2.",
            usage=(30, 40, 0, 0, 70),
            raw_stop_reason="STOP",
            model="gemini-2.5-flash",
        ),
    )
    steps = [
        (ev.type, ev.arguments if ev.type == "server_tool_call" else ev.content)
        for ev in events
        if ev.type.startswith("server_tool")
    ]
    assert steps == [
        ("server_tool_call", {"language": "PYTHON", "code": "print(1)"}),
        ("server_tool_result", {"outcome": "OUTCOME_OK", "output": "1\n"}),
        ("server_tool_call", {"code": "print(1/0)"}),
        (
            "server_tool_result",
            {"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError: division by zero"},
        ),
        ("server_tool_call", {"language": "PYTHON", "code": "print(2)"}),
        ("server_tool_result", {"outcome": "OUTCOME_OK"}),
    ]
    calls = [ev.call_id for ev in events if ev.type == "server_tool_call"]
    results = [ev.call_id for ev in events if ev.type == "server_tool_result"]
    assert calls == results and len(set(calls)) == 3


def _bridge_turn(*message_events: dict[str, Any], call: bool) -> bytes:
    """A turn of DeepSeek (`reasoning_content`) through LiteLLM's chat-to-Responses bridge
    before its event-order fix: the reasoning item streamed and done, then a call or a
    message, then the message's part done as a `reasoning_text` part holding the whole
    reasoning again."""
    reasoning = "Let me think. Step two."
    head = {"id": "resp_1", "object": "response", "model": "deepseek-v4-flash", "output": []}
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    done = item | {"summary": [{"type": "summary_text", "text": reasoning}]}
    on_item = {"item_id": "rs_1", "output_index": 0, "summary_index": 0}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": head | {"status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.reasoning_summary_text.delta", **on_item, "delta": "Let me think."},
        {"type": "response.reasoning_summary_text.delta", **on_item, "delta": " Step two."},
        {"type": "response.reasoning_summary_text.done", **on_item, "text": reasoning},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
    ]
    if call:
        called = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "do_thing"}
        called |= {"arguments": '{"x":1}', "status": "completed"}
        events.append({"type": "response.output_item.done", "output_index": 1, "item": called})
    events += message_events
    index = 2 if call else 1
    on_part = {"item_id": "msg_1", "output_index": index, "content_index": 0}
    part = {"type": "reasoning_text", "text": reasoning}
    events.append({"type": "response.content_part.done", **on_part, "part": part})
    events.append({"type": "response.completed", "response": head | {"status": "completed"}})
    return _responses(*events)


def test_litellm_bridge_reasoning_repeated_in_a_ghost_message_is_said_once() -> None:
    """BerriAI/litellm tests/test_litellm/responses/litellm_completion_transformation/
    test_streaming_event_order.py: "Tool-call-only streams (reasoning + function_call, no
    assistant text) emitted a trailing message `output_text.done` / `content_part.done` /
    `output_item.done` trio for a message item that was never announced ... The content
    part also carried the reasoning text under a non-standard `reasoning_text` type."
    The reasoning is its item's, once, and the call is requested. Before: the ghost
    message's part was read as a second part of reasoning, the same text again."""
    ghost = {"item_id": "msg_1", "output_index": 2, "content_index": 0, "text": ""}
    body = _bridge_turn({"type": "response.output_text.done", **ghost}, call=True)
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            reasoning="Let me think. Step two.",
            tools=(("call_1", "do_thing", {"x": 1}),),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="deepseek-v4-flash",
        ),
    )


def test_litellm_bridge_reasoning_repeated_in_the_answers_part_is_said_once() -> None:
    """The same test file: "Previously the bridge stuffed the full reasoning text into the
    message's content part under a non-standard `reasoning_text` type whenever the final
    response carried `reasoning_content`": the answer streams as `output_text` deltas,
    then its `content_part.done` is a `reasoning_text` part with the reasoning. The
    answer is the text, the reasoning is said once, before it. Before: the reasoning
    came again after the answer, as a part of its own."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress"}
    message["content"] = []
    on_part = {"item_id": "msg_1", "output_index": 1, "content_index": 0}
    body = _bridge_turn(
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": message | {"content": []},
        },
        {
            "type": "response.content_part.added",
            **on_part,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {"type": "response.output_text.delta", **on_part, "delta": "Hello"},
        {"type": "response.output_text.delta", **on_part, "delta": " world"},
        {"type": "response.output_text.done", **on_part, "text": "Hello world"},
        call=False,
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="Hello world",
            reasoning="Let me think. Step two.",
            raw_stop_reason="completed",
            model="deepseek-v4-flash",
        ),
    )
    assert [ev.type for ev in events if ev.type in ("text", "reasoning")][-1] == "text"


def test_litellm_bridge_refusal_without_content_stops_a_block_never_started() -> None:
    """BerriAI/litellm .../adapters/test_streaming_iterator_stop_reason.py
    (test_content_filter_without_refusal_text): an OpenAI-style upstream ends with
    `content_filter` and no text; the `/v1/messages` bridge skips the blank first delta,
    so no block starts, yet closes "the" block (`content_block_stop` at index 0) before
    its `message_delta` (`stop_reason: refusal`, 12 input tokens, 0 output). The turn is
    a `content_filter` stop with that usage; the stop of a block that never started adds
    nothing and breaks nothing."""
    model = "openai-model"
    body = _anthropic(
        _bridge_start(model),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "refusal", "stop_sequence": None},
            "usage": {"input_tokens": 12, "output_tokens": 0},
        },
        {"type": "message_stop"},
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            usage=(12, 0, 0, 0, 12),
            stop_reason="content_filter",
            raw_stop_reason="refusal",
            model=model,
        ),
    )


@pytest.mark.parametrize("newer", [True, False])
def test_claude_cache_writes_through_litellm_are_cache_writes(newer: bool) -> None:
    """BerriAI/litellm litellm/llms/anthropic/chat/transformation.py `calculate_usage`:
    LiteLLM serves Claude's usage on the chat wire with `prompt_tokens` counting the
    cache writes and reads (`prompt_tokens += cache_creation_input_tokens`, `+=
    cache_read_input_tokens`), the reads in `prompt_tokens_details.cached_tokens`, and
    Anthropic's own `cache_creation_input_tokens` and `cache_read_input_tokens` beside
    them (what langchain-ai/langchain-litellm#54 reads from the proxy's stream); newer
    versions put the writes in `prompt_tokens_details.cache_creation_tokens` too. A turn
    that writes 5000 tokens to the cache: 10 uncached input tokens, 5000 written, 20
    output, 5030 in all. Before: the writes were read as 5010 uncached input tokens and
    no cache write, what prices them wrongly."""
    details: dict[str, Any] = {"cached_tokens": 0, "audio_tokens": None, "text_tokens": None}
    if newer:
        details["cache_creation_tokens"] = 5000
    usage = {
        "completion_tokens": 20,
        "prompt_tokens": 5010,
        "total_tokens": 5030,
        "completion_tokens_details": None,
        "prompt_tokens_details": details,
        "cache_creation_input_tokens": 5000,
        "cache_read_input_tokens": 0,
    }
    finish = _proxy_chunk({}, "stop") | {"usage": usage}
    body = _sse(_proxy_chunk({"role": "assistant", "content": "Noted."}), finish)
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(text="Noted.", usage=(10, 20, 0, 0, 5030), cache_write=5000, model=CLAUDE),
    )


def test_claude_cache_reads_through_litellm_said_only_beside_the_usage_are_read() -> None:
    """The same usage from a LiteLLM whose `prompt_tokens_details` is `null` (its streamed
    usage before the details were filled in, litellm#5364): the cache read only in
    `cache_read_input_tokens`, inside `prompt_tokens` (4115 = 19 + 4096). 19 uncached
    input tokens and 4096 read from the cache."""
    usage = {
        "completion_tokens": 13,
        "prompt_tokens": 4115,
        "total_tokens": 4128,
        "prompt_tokens_details": None,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 4096,
    }
    finish = _proxy_chunk({}, "stop") | {"usage": usage}
    body = _sse(_proxy_chunk({"role": "assistant", "content": "Again."}), finish)
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(text="Again.", usage=(19, 13, 0, 4096, 4128), model=CLAUDE),
    )


def test_litellm_bridge_compaction_polyfill_is_kept_and_its_usage_counted() -> None:
    """BerriAI/litellm litellm/llms/anthropic/experimental_pass_through/adapters/
    streaming_iterator.py (`_next_compaction_event`, `_augment_message_delta_usage`): the
    `/v1/messages` bridge's polyfill of `compact_20260112` for a model that cannot
    compact writes the summary as a `compaction` block (`"content": ""` at its start,
    the summary in one `compaction_delta`), then the answer, then a `message_delta` whose
    usage lists the polyfill's compaction call and the message as `iterations`. The
    summary is kept whole as the block's details (to go back as the block), the answer
    is the text, and the compaction's counts are added to the message's."""
    model = "gpt-5.4"
    summary = "Summary of the earlier turns."
    usage = {
        "input_tokens": 900,
        "output_tokens": 12,
        "iterations": [
            {"type": "compaction", "input_tokens": 5000, "output_tokens": 300},
            {"type": "message", "input_tokens": 900, "output_tokens": 12},
        ],
    }
    body = _anthropic(
        _bridge_start(model),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "compaction", "content": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": summary},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Go on."},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Go on.", usage=(5900, 312, 0, 0, 6212), raw_stop_reason="end_turn", model=model
        ),
    )
    [kept] = [ev for ev in events if ev.type == "reasoning"]
    assert (kept.text, kept.details) == ("", {"type": "compaction", "content": summary})
