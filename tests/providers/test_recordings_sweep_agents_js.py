"""Streams from JavaScript and TypeScript agents' and providers' test fixtures: Continue's
openai-adapters (its Anthropic, OpenAI and llama.cpp-style streams), OpenRouter's AI SDK
provider (OpenRouterTeam/ai-sdk-provider's chat model stream tests) and TypeScript SDK
(its Responses failure tests), Cline's and Roo Code's provider tests (OpenRouter's
usage-only chunk, Requesty's and Vercel AI Gateway's usage, MiniMax's Anthropic
endpoint), openai-node's chat stream index tests and TanStack AI's adapters (Anthropic,
OpenAI-compatible Responses), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential events, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize

# -- Anthropic Messages ------------------------------------------------------------------


def _events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _message_start(message_id: str, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "usage": usage,
    }
    return {"type": "message_start", "message": message}


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


def test_block_events_without_an_index_carry_a_call_too() -> None:
    """The reading of the Continue test above (a block event with no `index` is for the
    block started last; a start with none, the next place) applied to every block event
    of a turn: a text block, then a `tool_use` block started with `input: {}`, its input
    in two `input_json_delta`s, each start, delta and stop naming no index. The text,
    then the call with its streamed input, once; nothing read as a protocol error."""
    body = _events(
        _message_start("msg_noindex", "claude-sonnet-4-5", {"input_tokens": 3}),
        {"type": "content_block_start", "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Checking."}},
        {"type": "content_block_stop"},
        {
            "type": "content_block_start",
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "delta": {"type": "input_json_delta", "partial_json": '{"city":'},
        },
        {
            "type": "content_block_delta",
            "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'},
        },
        {"type": "content_block_stop"},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="Checking.",
            tools=(("toolu_1", "get_weather", {"city": "Paris"}),),
            usage=(3, 9, 0, 0, 12),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="claude-sonnet-4-5",
        ),
    )


def test_minimax_anthropic_endpoint_blocks_whole_in_their_start() -> None:
    """RooCodeInc/Roo-Code src/api/providers/__tests__/minimax.spec.ts (MiniMax-M2 at
    api.minimax.io/anthropic, read with the Anthropic SDK): a `thinking` block whose
    `content_block_start` already holds its thought (no signature), a `text` block
    whose start holds its text, and a `tool_use` block whose start holds its whole
    `input` (`{city: "London"}`), each stopped with no delta. Roo Code reads the
    reasoning, the text and the call from the starts. So does rxllm, once each: the
    call's input is the start's, and the unsigned thought ends with an empty signature
    (sent back as it came)."""
    body = _events(
        {
            "type": "message_start",
            "message": {
                "id": "msg_minimax",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "MiniMax-M2",
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "Let me think about this..."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "text", "text": "Checking the weather."},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {
                "type": "tool_use",
                "id": "tool-123",
                "name": "get_weather",
                "input": {"city": "London"},
            },
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Checking the weather.",
            reasoning="Let me think about this...",
            tools=(("tool-123", "get_weather", {"city": "London"}),),
            usage=(10, 20, 0, 0, 30),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="MiniMax-M2",
        ),
    )
    assert kinds(events) == [
        "reasoning",
        "text",
        "tool_start",
        "tool_request",
        "usage",
        "done",
    ]
    closing = [ev for ev in events if ev.type == "reasoning" and not ev.text]
    assert [ev.signature for ev in closing] == [""]


def test_tanstack_anthropic_stream_without_message_start_and_a_call_without_input() -> None:
    """TanStack/ai packages/typescript/ai-anthropic/tests/anthropic-adapter.test.ts ("does
    not emit TEXT_MESSAGE_END for tool_use content blocks"): no `message_start` at all,
    a text block, then a `tool_use` block whose start has no `input` key, its input in
    one `input_json_delta`, then `message_delta` (tool_use, 10 output tokens) and
    `message_stop`. TanStack finishes once, with `tool_calls`. rxllm reads the text, the
    call with its streamed input, and the output count alone (no model, no id)."""
    body = _events(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Let me check"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "tool_1", "name": "lookup_weather"},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"location":"Berlin"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 10},
        },
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Let me check",
            tools=(("tool_1", "lookup_weather", {"location": "Berlin"}),),
            usage=(0, 10, 0, 0, 10),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
        ),
    )


# -- OpenAI chat and its compatible family ------------------------------------------------


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(
    chunk_id: str, model: str, delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    """One chunk as OpenRouterTeam/ai-sdk-provider's stream tests write it."""
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1711357598,
        "model": model,
        "system_fingerprint": "fp_3bc1b5746c",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _usage(chunk_id: str, model: str, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1711357598,
        "model": model,
        "system_fingerprint": "fp_3bc1b5746c",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def test_openrouter_reasoning_details_win_over_reasoning_said_beside_them() -> None:
    """OpenRouterTeam/ai-sdk-provider src/chat/index.test.ts ("should prioritize
    reasoning_details over reasoning when both are present in streaming"): the first
    delta holds `reasoning` ("This should be ignored...") and a `reasoning.text` detail,
    the second `reasoning` ("Also ignored") and a `reasoning.summary` and a
    `reasoning.encrypted` detail, the third `reasoning` alone. The SDK reads the
    details where there are any (the text, the summary, the encrypted data as
    "[REDACTED]") and the plain field only when alone: the same thought is never said
    twice. The encrypted detail is the one signature, redacted."""
    cid, model = "chatcmpl-reasoning", "gpt-3.5-turbo-0125"
    body = _sse(
        _chunk(
            cid,
            model,
            {
                "role": "assistant",
                "content": "",
                "reasoning": "This should be ignored...",
                "reasoning_details": [{"type": "reasoning.text", "text": "Let me think..."}],
            },
        ),
        _chunk(
            cid,
            model,
            {
                "reasoning": "Also ignored",
                "reasoning_details": [
                    {"type": "reasoning.summary", "summary": "User wants a greeting"},
                    {"type": "reasoning.encrypted", "data": "secret"},
                ],
            },
        ),
        _chunk(cid, model, {"reasoning": " This reasoning is used"}),
        _chunk(cid, model, {"content": "Hello!"}),
        _chunk(cid, model, {}, "stop"),
        _usage(cid, model, 17, 30),
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            text="Hello!",
            reasoning="Let me think...User wants a greeting This reasoning is used",
            signatures=1,
            usage=(17, 30, 0, 0, 47),
            model=model,
        ),
    )
    redacted = [ev for ev in events if ev.type == "reasoning" and ev.redacted]
    assert [ev.signature for ev in redacted] == ["secret"]


def test_openrouter_gemini_3_call_after_an_encrypted_detail_finishing_stop() -> None:
    """ai-sdk-provider src/chat/index.test.ts ("should override finishReason to
    tool-calls in streaming when tool calls and encrypted reasoning are present",
    google/gemini-3-pro): a `reasoning.encrypted` detail (the thought signature), a
    whole call in one chunk, then `finish_reason: "stop"` ("Gemini 3 bug") and the
    usage. The SDK says `tool-calls` (raw `stop`) and the call; so does rxllm, the
    signature kept before the call."""
    cid, model = "chatcmpl-gemini3", "google/gemini-3-pro"
    call = {
        "index": 0,
        "id": "call_gemini3_123",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location":"SF"}'},
    }
    body = _sse(
        _chunk(
            cid,
            model,
            {
                "role": "assistant",
                "content": None,
                "reasoning_details": [
                    {"type": "reasoning.encrypted", "data": "encrypted_thoughtsig_data"}
                ],
            },
        ),
        _chunk(cid, model, {"tool_calls": [call]}),
        _chunk(cid, model, {}, "stop"),
        _usage(cid, model, 10, 20),
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            tools=(("call_gemini3_123", "get_weather", {"location": "SF"}),),
            signatures=1,
            usage=(10, 20, 0, 0, 30),
            stop_reason="tool_use",
            raw_stop_reason="stop",
            model=model,
        ),
    )
    assert kinds(events) == ["reasoning", "tool_start", "tool_request", "usage", "done"]


def test_openrouter_error_object_as_the_only_chunk_before_done() -> None:
    """ai-sdk-provider src/chat/index.test.ts ("should handle error stream parts"): the
    stream's one chunk is `{"error": {message, type: "server_error", param: null, code:
    null}}`, then `[DONE]`. The SDK emits the error and finishes with `error`. The turn
    fails with the message and `server_error` as its code; the `[DONE]` after it says
    nothing more."""
    message = (
        "The server had an error processing your request. Sorry about that! You can "
        "retry your request, or contact us through our help center at "
        "help.openrouter.com if you keep seeing this error."
    )
    body = _sse(
        {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
    )
    events = replay_every_way(body, "openrouter")
    check(summarize(events), Expect(text="", terminal="error", error_kind="stream_error"))
    error = events[-1].error  # type: ignore[union-attr]
    assert (error.message, error.code) == (message, "server_error")


def test_openrouter_file_annotations_and_images_are_said_but_no_text_or_citation() -> None:
    """ai-sdk-provider src/chat/index.test.ts ("should include file annotations in
    finish metadata when streamed", "should stream images"): a delta's `annotations`
    holding a `file` (FileParserPlugin: `{hash, name, content: [{type: text, ...}]}`),
    and a delta's `images` (`[{type: image_url, image_url: {url: data:...}, index}]`)
    with the finish in the same chunk. The SDK passes the files on in the finish's
    metadata and the image as a file part. rxllm has no event for either: the text is
    the text, nothing is cited, and each is logged, never read as text."""
    cid, model = "chatcmpl-file-annotations", "gpt-4o-mini"
    file_annotation = {
        "type": "file",
        "file": {
            "hash": "abc123def456",
            "name": "bitcoin.pdf",
            "content": [{"type": "text", "text": "Page 1 content"}],
        },
    }
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}
    body = _sse(
        _chunk(cid, model, {"role": "assistant", "content": "The title is Bitcoin."}),
        _chunk(cid, model, {"annotations": [file_annotation]}),
        _chunk(cid, model, {"images": [{**image, "index": 0}]}, "stop"),
        _usage(cid, model, 100, 20),
    )
    with log_messages() as logs:
        events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(text="The title is Bitcoin.", usage=(100, 20, 0, 0, 120), model=model),
    )
    assert not [ev for ev in events if ev.type == "citation"]
    assert any("file" in line and "citation" in line for line in logs)
    assert any("'images'" in line for line in logs)


def test_openrouter_call_arguments_cut_short_at_the_finish_are_no_call() -> None:
    """ai-sdk-provider src/chat/index.test.ts ("should emit tool-input-end without
    duplicate delta when partially-streamed tool call is flushed"): a call opened with
    empty arguments, then `{"` and `val`, then `finish_reason: "tool_calls"` and the
    usage. The SDK flushes the call with what it has. The arguments are not JSON: the
    turn ends in `malformed_tool_arguments`, never a call with invented arguments."""
    cid, model = "chatcmpl-flush", "gpt-3.5-turbo-0125"

    def call(arguments: str, **head: Any) -> dict[str, Any]:
        return {"tool_calls": [{"index": 0, **head, "function": {"arguments": arguments}}]}

    opened = call("", id="call_flush_test", type="function")
    opened["tool_calls"][0]["function"]["name"] = "test-tool"
    body = _sse(
        _chunk(cid, model, {"role": "assistant", "content": None, **opened}),
        _chunk(cid, model, call('{"')),
        _chunk(cid, model, call("val")),
        _chunk(cid, model, {}, "tool_calls"),
        _usage(cid, model, 53, 17),
    )
    events = replay_every_way(body, "openrouter")
    assert summarize(events).tool_calls == []
    error = events[-1].error  # type: ignore[union-attr]
    assert error.kind == "malformed_tool_arguments"
    assert "call_flush_test" in error.message and "test-tool" in error.message


def test_cline_openrouter_usage_only_chunk_whose_choice_is_empty() -> None:
    """cline/cline src/core/api/providers/__tests__/openrouter.test.ts ("should read
    cache_write_tokens from prompt_tokens_details", "should handle usage-only chunks
    when delta is missing"): the last chunk's `choices` is `[{}]` (no index, no delta,
    no finish) beside the usage: 1000 prompt tokens, of which
    `prompt_tokens_details.cached_tokens` 500 read and `cache_write_tokens` 300 written
    (anthropic/claude-sonnet-4.6), 200 completion tokens. Cline counts 500 reads and
    300 writes; the uncached input is what is left, 200."""
    cid, model = "gen-1", "anthropic/claude-sonnet-4.6"
    body = _sse(
        _chunk(cid, model, {"role": "assistant", "content": "Hi there"}),
        _chunk(cid, model, {}, "stop"),
        {
            "choices": [{}],
            "usage": {
                "prompt_tokens": 1000,
                "completion_tokens": 200,
                "prompt_tokens_details": {"cached_tokens": 500, "cache_write_tokens": 300},
            },
        },
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(text="Hi there", usage=(200, 200, 0, 500, 1200), cache_write=300, model=model),
    )


def test_continue_running_usage_on_every_chunk_keeps_the_text_and_the_last_count() -> None:
    """continuedev/continue packages/openai-adapters/src/apis/OpenAIStreamUsage.test.ts
    ("preserves content when every chunk carries a running usage object": "llama.cpp-
    based servers can instead attach a *running* usage object to every chunk"): each
    chunk, the role-only first, a `reasoning_content` one, two texts and the finish,
    carries `usage` with `completion_tokens` 1 to 5. Continue once swallowed such
    streams whole. All text and reasoning is read, and the last count is the turn's:
    10 in, 5 out."""

    def chunk(delta: dict[str, Any], completion: int, finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": 10,
                "total_tokens": 10 + completion,
                "completion_tokens": completion,
            },
        }

    body = _sse(
        chunk({"role": "assistant", "content": None}, 1),
        chunk({"reasoning_content": "think"}, 2),
        chunk({"content": "Hello"}, 3),
        chunk({"content": " world"}, 4),
        chunk({}, 5, "stop"),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="Hello world", reasoning="think", usage=(10, 5, 0, 0, 15), model="test-model"),
    )


def test_openai_node_calls_arriving_out_of_order_under_one_id() -> None:
    """openai/openai-node tests/lib/chat-completion-stream.index-validation.test.ts
    ("preserves valid tool-call indices that arrive out of order"): a whole call at
    tool index 1, then a whole call at index 0 with `finish_reason: "tool_calls"`, both
    with id `call_test`, name `test` and arguments `{}`. The SDK keeps two calls. So
    does rxllm, in the order they came, the repeated id renamed so that the results
    can be told apart."""

    def chunk(index: int, finish: str | None = None) -> dict[str, Any]:
        call = {
            "index": index,
            "id": "call_test",
            "type": "function",
            "function": {"name": "test", "arguments": "{}"},
        }
        return {
            "id": "chatcmpl-index-validation",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test",
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "tool_calls": [call]},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
        }

    body = _sse(chunk(1), chunk(0, "tool_calls"))
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            tools=(("call_test", "test", {}), ("call_test_2", "test", {})),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gpt-test",
        ),
    )


def test_requesty_cache_writes_are_caching_tokens() -> None:
    """RooCodeInc/Roo-Code src/api/providers/__tests__/requesty.spec.ts ("generates
    correct stream chunks", coding/claude-4-sonnet through router.requesty.ai): the last
    chunk's usage is 10 prompt and 20 completion tokens, with
    `prompt_tokens_details: {caching_tokens: 5, cached_tokens: 2}`. Requesty's own
    name for the cache writes of Anthropic models ("Requesty usage includes an extra
    field for Anthropic use cases": cline's and Roo Code's Requesty handlers read it
    as the cache writes and price the prompt OpenAI-style, the writes and reads inside
    it). So: 5 written, 2 read, 3 uncached. Before, the writes were counted as
    uncached input (8) and as no cache write."""
    body = _sse(
        {"id": "coding/claude-4-sonnet", "choices": [{"delta": {"content": "test response"}}]},
        {
            "id": "test-id",
            "choices": [{"delta": {}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 20,
                "prompt_tokens_details": {"caching_tokens": 5, "cached_tokens": 2},
            },
        },
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="test response", usage=(3, 20, 0, 2, 30), cache_write=5, model=None),
    )


def test_vercel_ai_gateway_cache_writes_beside_the_cached_prompt_and_a_cost() -> None:
    """RooCodeInc/Roo-Code src/api/providers/__tests__/vercel-ai-gateway.spec.ts
    ("handles usage info correctly with all Vercel AI Gateway specific fields",
    anthropic/claude-sonnet-4 through ai-gateway.vercel.sh/v1): the first chunk says
    `usage: null`, the last one's usage is 10 prompt and 5 completion tokens with
    `cache_creation_input_tokens: 2` at its top level, `prompt_tokens_details:
    {cached_tokens: 3}` and `cost: 0.005`. Roo Code reads 2 written, 3 read and the
    cost; the prompt holds both, so 5 are uncached."""
    model = "anthropic/claude-sonnet-4"
    body = _sse(
        {
            "id": "gen-vercel",
            "model": model,
            "choices": [{"delta": {"content": "Test response"}, "index": 0}],
            "usage": None,
        },
        {
            "id": "gen-vercel",
            "model": model,
            "choices": [{"delta": {}, "index": 0, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "total_tokens": 15,
                "cache_creation_input_tokens": 2,
                "prompt_tokens_details": {"cached_tokens": 3},
                "cost": 0.005,
            },
        },
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Test response",
            usage=(5, 5, 0, 3, 15),
            cache_write=2,
            cost=0.005,
            model=model,
        ),
    )


# -- OpenAI Responses ---------------------------------------------------------------------


def _responses(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads)


def _created(response_id: str) -> dict[str, Any]:
    return {
        "type": "response.created",
        "response": {"id": response_id, "model": "test-model", "status": "in_progress"},
    }


def _completed(
    response_id: str, output: list[dict[str, Any]], usage: tuple[int, int] = (1, 1)
) -> dict[str, Any]:
    return {
        "type": "response.completed",
        "response": {
            "id": response_id,
            "model": "test-model",
            "status": "completed",
            "output": output,
            "usage": {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        },
    }


def _weather_call(item_id: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "name": "lookup_weather",
        "arguments": arguments,
    }


def test_responses_calls_added_without_a_name_are_named_by_a_later_item() -> None:
    """TanStack/ai packages/typescript/ai-openai-compatible/tests/responses-text.test.ts
    (its OpenAI-compatible Responses adapter: "Some upstreams send `output_item.added`
    with no `name`, then carry the full function_call item (including name and
    arguments) in `output_item.done`"): three turns, each a `function_call` added with
    only its id, its arguments marked done, then named by (1) a second
    `output_item.added` for the same id and the terminal's item, (2) its
    `output_item.done`, after a delta, (3) only the `response.completed` output. TanStack
    requests `lookup_weather` once each time. Before, each was requested with an empty
    name, which no client can dispatch."""
    nyc, berlin = '{"location":"NYC"}', '{"location":"Berlin"}'

    def added(item_id: str, **named: Any) -> dict[str, Any]:
        item = {"type": "function_call", "id": item_id, **named}
        return {"type": "response.output_item.added", "output_index": 0, "item": item}

    def marked(item_id: str, arguments: str) -> dict[str, Any]:
        return {
            "type": "response.function_call_arguments.done",
            "item_id": item_id,
            "arguments": arguments,
        }

    turns = {
        "call_late_name": _responses(
            _created("resp-x"),
            added("call_late_name"),
            added("call_late_name", name="lookup_weather"),
            marked("call_late_name", nyc),
            _completed("resp-x", [_weather_call("call_late_name", nyc)]),
        ),
        "fc_bf": _responses(
            _created("resp-bf"),
            added("fc_bf"),
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_bf",
                "delta": '{"location":',
            },
            marked("fc_bf", nyc),
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": _weather_call("fc_bf", nyc),
            },
            _completed("resp-bf", [_weather_call("fc_bf", nyc)]),
        ),
        "fc_final": _responses(
            _created("resp-final"),
            added("fc_final"),
            marked("fc_final", berlin),
            _completed("resp-final", [_weather_call("fc_final", berlin)]),
        ),
    }
    for call_id, body in turns.items():
        events = replay_every_way(body, "openai-responses")
        arguments = {"location": "Berlin" if call_id == "fc_final" else "NYC"}
        check(
            summarize(events),
            Expect(
                tools=((call_id, "lookup_weather", arguments),),
                usage=(1, 1, 0, 0, 2),
                stop_reason="tool_use",
                raw_stop_reason="completed",
                model="test-model",
            ),
        )
        starts = [ev for ev in events if ev.type == "tool_start"]
        assert [(ev.call_id, ev.name) for ev in starts] == [(call_id, "lookup_weather")]


def test_responses_bare_deltas_and_a_terminal_whose_output_is_empty() -> None:
    """TanStack/ai .../ai-openai-compatible/tests/responses-text.test.ts ("emits
    STEP_STARTED and STEP_FINISHED for reasoning_text.delta", "... for
    reasoning_summary_text.delta"): `response.created`, then `reasoning_text.delta`s (or
    a `reasoning_summary_text.delta`) and an `output_text.delta` that name no item and
    no output index (no item was added), then `response.completed` with `output: []`
    and the usage. TanStack shows the reasoning, then the text. So does rxllm: the empty
    output takes nothing back, and says nothing again."""
    thinking = _responses(
        _created("resp-123"),
        {"type": "response.reasoning_text.delta", "delta": "Let me think about this..."},
        {"type": "response.reasoning_text.delta", "delta": " The answer is clear."},
        {"type": "response.output_text.delta", "delta": "The answer is 42."},
        _completed("resp-123", [], (10, 20)),
    )
    events = replay_every_way(thinking, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="The answer is 42.",
            reasoning="Let me think about this... The answer is clear.",
            usage=(10, 20, 0, 0, 30),
            raw_stop_reason="completed",
            model="test-model",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]
    summary = _responses(
        _created("resp-123"),
        {"type": "response.reasoning_summary_text.delta", "delta": "Summary of reasoning..."},
        {"type": "response.output_text.delta", "delta": "Final answer."},
        _completed("resp-123", [], (5, 2)),
    )
    check(
        summarize(replay_every_way(summary, "openai-responses")),
        Expect(
            text="Final answer.",
            reasoning="Summary of reasoning...",
            usage=(5, 2, 0, 0, 7),
            raw_stop_reason="completed",
            model="test-model",
        ),
    )


def _openrouter_response(status: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "test-model",
        "status": status,
        "output": [],
        "error": None,
        "incomplete_details": None,
        **fields,
    }


def test_openrouter_responses_error_event_the_stream_recovers_from() -> None:
    """OpenRouterTeam/typescript-sdk tests/unit/stream-failed-error.test.ts ("an error
    event followed by a successful completion does not throw"): OpenRouter's Responses
    stream opens with `{"type": "error", "code": "server_error", "message": "transient
    blip, recovered"}` (no `event:` line), then the text and `response.completed`, then
    `[DONE]`. OpenRouter's SDK reads "Hello world"; an error event throws only "when the
    stream never completes" (the same file: `response.created`, the error, `[DONE]`).
    rxllm holds an error event that comes before any output until the stream says more:
    the answer goes on, the error is logged; the body ends, the error ends the turn.
    Before, the error ended the turn at once and the answer after it was ignored."""
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello world", "annotations": []}],
    }
    blip = {
        "type": "error",
        "code": "server_error",
        "message": "transient blip, recovered",
        "param": None,
        "sequence_number": 0,
    }
    recovered = (
        _responses(
            blip,
            {
                "type": "response.output_text.delta",
                "delta": "Hello world",
                "item_id": "msg_1",
                "content_index": 0,
                "output_index": 0,
                "logprobs": [],
                "sequence_number": 1,
            },
            {
                "type": "response.completed",
                "sequence_number": 2,
                "response": _openrouter_response(
                    "completed", output=[message], output_text="Hello world"
                ),
            },
        )
        + b"data: [DONE]\n\n"
    )
    with log_messages() as logs:
        events = replay_every_way(recovered, "openai-responses")
    check(
        summarize(events),
        Expect(text="Hello world", raw_stop_reason="completed", model="test-model"),
    )
    assert any("transient blip, recovered" in line for line in logs)
    never_completed = (
        _responses(
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": _openrouter_response("in_progress"),
            },
            {**blip, "message": "mid-stream failure", "sequence_number": 1},
        )
        + b"data: [DONE]\n\n"
    )
    events = replay_every_way(never_completed, "openai-responses")
    check(summarize(events), Expect(terminal="error", error_kind="stream_error"))
    error = events[-1].error  # type: ignore[union-attr]
    assert (error.message, error.code) == ("mid-stream failure", "server_error")


def test_responses_text_said_only_in_its_part_added_event() -> None:
    """TanStack/ai .../ai-openai-compatible/tests/responses-text.test.ts ("emits
    TEXT_MESSAGE_START on content_part.added with output_text") and .../ai-openai/tests/
    openai-adapter.test.ts: `response.created`, then `response.content_part.added` whose
    `output_text` part already holds the text ("It is sunny"), no delta, no `.done` for
    the part or its item, then the terminal (`response.completed` with `output: []`, or
    the older `response.done` without `output`). TanStack's adapters show "It is sunny".
    rxllm says a part's text at its added event only when nothing else said it by the
    terminal (deltas, the part's or its item's done event, the terminal's item), so it
    is said once. Before, the text was lost unsaid: the added event was ignored."""
    added = {
        "type": "response.content_part.added",
        "part": {"type": "output_text", "text": "It is sunny"},
    }
    for terminal in (
        _completed("resp-123", [], (12, 4)),
        {
            "type": "response.done",
            "response": {
                "id": "resp-123",
                "model": "test-model",
                "status": "completed",
                "created_at": 1234567891,
                "usage": {"input_tokens": 12, "output_tokens": 4},
            },
        },
    ):
        events = replay_every_way(
            _responses(_created("resp-123"), added, terminal), "openai-responses"
        )
        check(
            summarize(events),
            Expect(
                text="It is sunny",
                usage=(12, 4, 0, 0, 16),
                raw_stop_reason="completed",
                model="test-model",
            ),
        )
    # Said by its deltas (or its done event) too: said once, as they say it.
    streamed = _responses(
        _created("resp-123"),
        added,
        {"type": "response.output_text.delta", "delta": "It is "},
        {"type": "response.output_text.delta", "delta": "sunny today"},
        {
            "type": "response.content_part.done",
            "part": {"type": "output_text", "text": "It is sunny today"},
        },
        _completed("resp-123", [], (12, 4)),
    )
    assert summarize(replay_every_way(streamed, "openai-responses")).text == "It is sunny today"
    whole = _responses(
        _created("resp-123"),
        added,
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "It is sunny", "annotations": []}],
            },
        },
        _completed("resp-123", [], (12, 4)),
    )
    assert summarize(replay_every_way(whole, "openai-responses")).text == "It is sunny"
