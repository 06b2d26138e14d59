"""Streams from the recordings and fixtures of SDKs and frameworks outside Python and
TypeScript, in shapes no other test replays: PHP (prism-php/prism's and
openai-php/client's fixtures), Go (sashabaranov/go-openai's stream tests,
tmc/langchaingo's httprr recordings), .NET (microsoft/semantic-kernel's TestData), Rust
(jeremychone/rust-genai's yakbak recordings), and the providers' and relays' own word on
the shapes those fixtures hold (perplexityai/perplexity-py's stream types, Gemini relay
issues from LiteLLM, one-hub, CLIProxyAPI, kelivo (Dart) and req_llm (Elixir)).

Each body is written by hand from the source named beside it (its essential events or
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Failed
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize

# -- OpenAI chat and its compatible family ------------------------------------------------


def _sse(*payloads: dict[str, Any] | str, done: bool = True, sep: str = "\n\n") -> bytes:
    """`data:` frames of the payloads (a string is written as it is), each ended by `sep`,
    then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}{sep}" for frame in frames)
    return (body + (f"data: [DONE]{sep}" if done else "")).encode()


def _chunk(
    model: str, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if delta is not None:
        choice["delta"] = delta
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1752800000,
        "model": model,
        "choices": [choice],
        **extra,
    }


def test_deepseek_zero_as_text_and_as_reasoning_is_kept() -> None:
    """prism-php/prism tests/Fixtures/deepseek/stream-zero-delta-1.sse and
    stream-zero-reasoning-1.sse (a PHP `empty()` that dropped the string "0"): deltas
    of `content: "0"` between other digits, and `reasoning_content: "0"` beside `content:
    null`, the answer on the finish chunk beside `reasoning_content: null`. Every "0" is
    kept, in its place."""
    usage = {"prompt_tokens": 7, "completion_tokens": 8, "total_tokens": 15}
    chat = _sse(
        _chunk("deepseek-chat", {"role": "assistant", "content": ""}),
        _chunk("deepseek-chat", {"content": "410"}),
        _chunk("deepseek-chat", {"content": "0"}),
        _chunk("deepseek-chat", {"content": "50"}),
        _chunk("deepseek-chat", {"content": ""}, "stop", usage=usage),
    )
    check(
        summarize(replay_every_way(chat, "deepseek")),
        Expect(text="410050", usage=(7, 8, 0, 0, 15), model="deepseek-chat"),
    )
    reasoner = _sse(
        _chunk(
            "deepseek-reasoner", {"role": "assistant", "content": None, "reasoning_content": ""}
        ),
        _chunk("deepseek-reasoner", {"content": None, "reasoning_content": "result is "}),
        _chunk("deepseek-reasoner", {"content": None, "reasoning_content": "0"}),
        _chunk("deepseek-reasoner", {"content": None, "reasoning_content": " not found"}),
        _chunk(
            "deepseek-reasoner", {"content": "Done", "reasoning_content": None}, "stop", usage=usage
        ),
    )
    check(
        summarize(replay_every_way(reasoner, "deepseek")),
        Expect(
            text="Done",
            reasoning="result is 0 not found",
            usage=(7, 8, 0, 0, 15),
            model="deepseek-reasoner",
        ),
    )


def test_requesty_finish_choice_with_no_delta_and_lines_with_no_blank_line() -> None:
    """prism-php/prism tests/Fixtures/requesty/stream-cached-tokens-1.sse: `data:` lines
    with no blank line between them, the finish on a choice with no `delta` at all,
    beside the usage with cached tokens. The text, the cache read apart from the input,
    the finish."""
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "prompt_tokens_details": {"cached_tokens": 60},
    }
    body = _sse(
        _chunk("openai/gpt-4o", {"role": "assistant", "content": "Hello"}),
        _chunk("openai/gpt-4o", {"content": " there"}),
        _chunk("openai/gpt-4o", None, "stop", usage=usage),
        sep="\n",
    )
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(text="Hello there", usage=(40, 10, 0, 60, 110), model="openai/gpt-4o"),
    )


def test_openrouter_mistral_two_whole_calls_with_the_finish_then_usage_on_a_role_chunk() -> None:
    """tmc/langchaingo llms/openai/testdata/
    TestFunctionParallelCall-streaming-openrouter-mistral-medium-3.httprr: after
    `: OPENROUTER PROCESSING`, one chunk holds both calls whole (ids, names, arguments)
    and `finish_reason: "tool_calls"`; then a chunk of `delta: {role, content: ""}`,
    `finish_reason: null`, carries the usage and its cost. Both calls are requested in
    order, with the usage, and the turn is `tool_use`."""
    model = "mistralai/mistral-medium-3"
    calls = [
        {
            "id": "GQe2XRHv1",
            "function": {
                "name": "getCurrentWeather",
                "arguments": '{"location": "Boston, MA", "unit": "fahrenheit"}',
            },
            "index": 0,
            "type": "function",
        },
        {
            "id": "LyNv9vSHA",
            "function": {"name": "getCurrentTime", "arguments": '{"location": "Boston, MA"}'},
            "index": 1,
            "type": "function",
        },
    ]
    usage = {
        "prompt_tokens": 191,
        "completion_tokens": 34,
        "total_tokens": 225,
        "cost": 0.0001444,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "cost_details": {"upstream_inference_cost": 0.0001444},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    body = b": OPENROUTER PROCESSING\n\n" + _sse(
        _chunk(model, {"role": "assistant", "content": ""}, provider="Mistral"),
        _chunk(
            model,
            {"role": "assistant", "content": None, "tool_calls": calls},
            "tool_calls",
            provider="Mistral",
        ),
        _chunk(model, {"role": "assistant", "content": ""}, provider="Mistral", usage=usage),
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                (
                    "GQe2XRHv1",
                    "getCurrentWeather",
                    {"location": "Boston, MA", "unit": "fahrenheit"},
                ),
                ("LyNv9vSHA", "getCurrentTime", {"location": "Boston, MA"}),
            ),
            usage=(191, 34, 0, 0, 225),
            cost=0.0001444,
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


def test_go_openai_event_names_and_a_finish_on_every_chunk() -> None:
    """sashabaranov/go-openai chat_stream_test.go (TestCreateChatCompletionStream): each
    chunk after an `event: message` line, each with text and the legacy
    `finish_reason: "max_tokens"`, `object: "completion"`, then `event: done` before
    `data: [DONE]`. go-openai hands back both chunks' text. Both are read, the turn
    `length`."""
    body = b""
    for number, text in ((1, "response1"), (2, "response2")):
        chunk = _chunk("gpt-3.5-turbo", {"content": text}, "max_tokens", id=str(number))
        chunk["object"] = "completion"
        body += b"event: message\n" + _sse(chunk, done=False)
    body += b"event: done\ndata: [DONE]\n\n"
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(
            text="response1response2",
            stop_reason="length",
            raw_stop_reason="max_tokens",
            model="gpt-3.5-turbo",
        ),
    )


def test_openai_php_ping_and_keepalive_frames_between_chunks() -> None:
    """openai-php/client tests/Fixtures/Streams/ChatCompletionPing.txt and
    ChatCompletionKeepAlive.txt (claude-3-7-sonnet behind an OpenAI-compatible
    endpoint): `data: {"type": "ping"}` and `data: {"type": "keepalive"}` between the
    chunks, no blank lines. Neither is text nor ends the turn; each is logged."""
    model = "claude-3-7-sonnet-20250219"
    for word in ("ping", "keepalive"):
        body = _sse(
            _chunk(model, {"role": "assistant"}, id="msg_0111RgCFCqN68mJbev6Rq1cz"),
            json.dumps({"type": word}),
            _chunk(model, {"content": "Hello!"}, id="msg_0111RgCFCqN68mJbev6Rq1cz"),
            _chunk(model, {}, "stop", id="msg_0111RgCFCqN68mJbev6Rq1cz"),
            sep="\n",
        )
        with log_messages() as messages:
            events = replay_every_way(body, "openai")
        check(summarize(events), Expect(text="Hello!", model=model))
        assert any("'type'" in message for message in messages)


def test_tgi_messages_api_chunks_as_semantic_kernel_replays_them() -> None:
    """microsoft/semantic-kernel dotnet/src/Connectors/Connectors.HuggingFace.UnitTests/
    TestData/chatcompletion_test_stream_response.txt (TGI 1.4.4's Messages API,
    teknium/OpenHermes-2.5-Mistral-7B): `data:` with no space, `id: ""`, `object:
    "text_completion"`, the role on every delta, token logprobs on every choice, the
    last chunk's `finish_reason: "length"`, and no `[DONE]`. The text, and `length`."""
    model = "teknium/OpenHermes-2.5-Mistral-7B"

    def chunk(token: str, finish: str | None = None) -> dict[str, Any]:
        logprobs = {"content": [{"token": token, "logprob": -0.0063, "top_logprobs": []}]}
        return {
            "id": "",
            "object": "text_completion",
            "created": 1712154497,
            "model": model,
            "system_fingerprint": "1.4.4-sha-6c4496a",
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": token},
                    "logprobs": logprobs,
                    "finish_reason": finish,
                }
            ],
        }

    tokens = ["Deep", " learning", " is", " a", " subset", " of", " machine", " learning"]
    chunks = [chunk(token) for token in tokens] + [chunk(".", "length")]
    body = "".join(f"data:{json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks).encode()
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(
            text="Deep learning is a subset of machine learning.",
            stop_reason="length",
            raw_stop_reason="length",
            model=model,
        ),
    )


def test_mistral_call_with_no_id_and_no_index_whole_with_its_finish() -> None:
    """microsoft/semantic-kernel dotnet/src/Connectors/Connectors.MistralAI.UnitTests/
    TestData/chat_completions_streaming_function_call_response.txt (mistral-small-latest,
    2024): the call whole in one chunk with neither an `id` nor an `index`, beside
    `content: null`, `finish_reason: "tool_calls"` and the usage, then `data: [DONE]`
    with no line end. The call is requested under an id made for it."""
    model = "mistral-small-latest"
    call = {
        "function": {
            "name": "WeatherPlugin-GetWeather",
            "arguments": '{"location": "Paris", "unit": "celsius"}',
        }
    }
    usage = {"prompt_tokens": 118, "total_tokens": 149, "completion_tokens": 31}
    body = _sse(
        _chunk(model, {"role": "assistant", "content": ""}, logprobs=None),
        _chunk(model, {"content": None, "tool_calls": [call]}, "tool_calls", usage=usage),
    ).removesuffix(b"\n\n")
    events = replay_every_way(body, "mistral")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                (
                    events[0].model_dump()["call_id"],
                    "WeatherPlugin-GetWeather",
                    {"location": "Paris", "unit": "celsius"},
                ),
            ),
            usage=(118, 31, 0, 0, 149),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "usage", "done"]


def test_semantic_kernel_two_chunks_each_with_text_a_call_and_the_finish() -> None:
    """microsoft/semantic-kernel dotnet/src/Connectors/Connectors.OpenAI.UnitTests/
    TestData/filters_streaming_multiple_function_calls_test_response.txt: two chunks,
    each with `content`, one whole call (index 0, then index 1) and `finish_reason:
    "tool_calls"`. Semantic Kernel runs both functions. Both texts and both calls are
    read; a finish before more of the turn does not end it."""
    calls = [
        {
            "index": index,
            "id": str(index + 1),
            "type": "function",
            "function": {
                "name": f"MyPlugin-Function{index + 1}",
                "arguments": f'{{\n"parameter": "function{index + 1}-value"\n}}',
            },
        }
        for index in (0, 1)
    ]
    body = _sse(
        *(
            _chunk(
                "gpt-4",
                {
                    "role": "assistant",
                    "content": "Test chat streaming response",
                    "tool_calls": [call],
                },
                "tool_calls",
                system_fingerprint=None,
            )
            for call in calls
        )
    )
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(
            text="Test chat streaming responseTest chat streaming response",
            tools=(
                ("1", "MyPlugin-Function1", {"parameter": "function1-value"}),
                ("2", "MyPlugin-Function2", {"parameter": "function2-value"}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gpt-4",
        ),
    )


def test_semantic_kernel_a_chunk_that_is_not_json_after_text() -> None:
    """microsoft/semantic-kernel dotnet/src/Connectors/Connectors.OpenAI.UnitTests/
    TestData/chat_completion_invalid_streaming_test_response.txt: a text chunk, then
    `data: {"id":}]}`, then `[DONE]`; Semantic Kernel's test expects an exception. The
    text is kept and the turn fails as a protocol error naming the line; `[DONE]` after
    it ends nothing."""
    body = _sse(
        _chunk("gpt-4-0125-preview", {"content": "Test chat streaming response"}),
        '{"id":}]}',
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="Test chat streaming response", terminal="error", error_kind="protocol"),
    )
    failure = events[-1]
    assert isinstance(failure, Failed) and '{"id":}]}' in failure.error.message


def test_rust_genai_finish_on_the_call_chunk_then_again_with_the_usage() -> None:
    """jeremychone/rust-genai tests/data/yakbak/openai/stream_tool_call_with_finish_reason/
    response_000.txt (an OpenAI-compatible server rust-genai replays): the call whole in
    the first chunk beside `finish_reason: "tool_calls"`, then a chunk of `content: ""`
    that says `tool_calls` again, with the usage. One call, its usage, `tool_use`."""
    model = "yakbak-openai-compat-model"
    call = {
        "id": "call_yakbak_fixture_0",
        "index": 0,
        "type": "function",
        "function": {
            "name": "get_weather",
            "arguments": '{"city": "Paris", "country": "France", "unit": "C"}',
        },
    }
    usage = {"prompt_tokens": 163, "completion_tokens": 11, "total_tokens": 174}
    body = _sse(
        _chunk(model, {"role": "assistant", "tool_calls": [call]}, "tool_calls"),
        _chunk(model, {"role": "assistant", "content": ""}, "tool_calls", usage=usage),
    )
    check(
        summarize(replay_every_way(body, "openai")),
        Expect(
            text="",
            tools=(
                (
                    "call_yakbak_fixture_0",
                    "get_weather",
                    {"city": "Paris", "country": "France", "unit": "C"},
                ),
            ),
            usage=(163, 11, 0, 0, 174),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


# -- OpenAI Responses ---------------------------------------------------------------------


def _events(*payloads: dict[str, Any], event_lines: bool = True) -> bytes:
    """`data:` frames of the payloads, each after an `event:` line naming its type unless
    `event_lines` is off."""
    out = ""
    for payload in payloads:
        out += f"event: {payload['type']}\n" if event_lines else ""
        out += f"data: {json.dumps(payload)}\n\n"
    return out.encode()


def test_perplexity_response_failed_with_its_error_beside_the_type() -> None:
    """perplexityai/perplexity-py src/perplexity/types/response_stream_chunk.py
    (generated from Perplexity's OpenAPI spec): the Agent API's `ResponseFailedEvent`
    is `{type: "response.failed", error: {message, code, type}, sequence_number}`, the
    error beside the type and no `response` object, where OpenAI nests it in
    `response.error`. The turn fails with Perplexity's message and code. Before: the
    message was "the response failed", no code, and `{}` as the raw error."""
    body = _events(
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {
                "id": "resp_pplx_1",
                "created_at": 1764000000,
                "model": "openai/gpt-5.4",
                "object": "response",
                "output": [],
                "status": "in_progress",
            },
        },
        {
            "type": "response.output_text.delta",
            "content_index": 0,
            "delta": "Southern Brazil",
            "item_id": "msg_1",
            "output_index": 0,
            "sequence_number": 1,
        },
        {
            "type": "response.failed",
            "sequence_number": 2,
            "error": {
                "message": "upstream model timed out",
                "code": "timeout",
                "type": "server_error",
            },
        },
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(text="Southern Brazil", terminal="error", error_kind="stream_error"),
    )
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert (failure.error.message, failure.error.code) == ("upstream model timed out", "timeout")
    assert failure.error.raw is not None and "upstream model timed out" in failure.error.raw


def test_perplexity_agent_response_completed_with_the_response_fields_at_the_top() -> None:
    """prism-php/prism tests/Fixtures/perplexity/agent-stream-basic-text-1.sse (its
    Perplexity Agent API stream, read by src/Providers/Perplexity/Concerns/
    ExtractsAgentResponse.php): text deltas with no item id or output index, then
    `response.completed` with the response's `status`, `id`, `model`, `usage` and
    `output` (a `search_results` item, then the message whole) beside the type, no
    `response` object and no `event:` lines. Prism reads the usage from that chunk. The
    text is said once, the usage and the model kept; the search results have no event
    (logged). Before: the usage and the model were dropped unsaid."""
    body = _events(
        {"type": "response.output_text.delta", "delta": "I am Qwen, a large"},
        {"type": "response.output_text.delta", "delta": "-scale language model."},
        {
            "type": "response.completed",
            "status": "completed",
            "id": "2aac4169-004c-48c6-8da3-bb9d4db974bb",
            "model": "sonar",
            "usage": {"input_tokens": 4, "output_tokens": 97, "total_tokens": 101},
            "output": [
                {
                    "type": "search_results",
                    "results": [
                        {
                            "title": "What is an AI Assistant?",
                            "url": "https://www.simpplr.com/glossary/ai-assistant/",
                            "date": "2025-07-14",
                            "snippet": "An AI Assistant is a software application",
                            "source": "web",
                        }
                    ],
                },
                {
                    "type": "message",
                    "content": [
                        {"type": "output_text", "text": "I am Qwen, a large-scale language model."}
                    ],
                },
            ],
            "error": None,
        },
        event_lines=False,
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="I am Qwen, a large-scale language model.",
            usage=(4, 97, 0, 0, 101),
            raw_stop_reason="completed",
            model="sonar",
        ),
    )
    assert kinds(events) == ["text", "usage", "done"]
    assert any("search_results" in message for message in messages)


def test_rust_genai_error_event_after_a_delta_and_a_delta_after_it() -> None:
    """jeremychone/rust-genai tests/data/yakbak/openai_resp/stream_error_after_delta/
    response_000.txt: a text delta, then `event: error` with `code: null`, `param:
    "input"` and the message at the top level, then another delta ("must not escape").
    The first text is kept, the turn fails with the message and the param, and the
    delta after the error is no text."""
    body = _events(
        {
            "type": "response.output_text.delta",
            "item_id": "msg_test",
            "output_index": 0,
            "content_index": 0,
            "delta": "Partial answer",
            "sequence_number": 1,
        },
        {
            "type": "error",
            "code": None,
            "message": "Something went wrong",
            "param": "input",
            "sequence_number": 2,
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_test",
            "output_index": 0,
            "content_index": 0,
            "delta": "must not escape",
            "sequence_number": 3,
        },
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(text="Partial answer", terminal="error", error_kind="stream_error"),
    )
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert (failure.error.message, failure.error.param) == ("Something went wrong", "input")


def test_rust_genai_response_completed_without_an_output_field() -> None:
    """jeremychone/rust-genai tests/data/yakbak/openai_resp/tools_completed_no_output_field/
    response_000.txt (gpt-5.4, `store: false`): a function call streamed and done, then
    `response.completed` whose response has no `output` key at all (and `tool_usage`
    beside the usage). The call is requested once, with the usage, `tool_use`."""
    item_id = "fc_0ccc47239f28adf2016a174323b98c81"
    arguments = '{"city":"Paris","country":"France","unit":"C"}'
    call = {"id": item_id, "type": "function_call", "call_id": "call_Y1aseRzSQSAMbKJIpnv6l73i"}
    response = {"id": "resp_0ccc47239f28", "object": "response", "model": "gpt-5.4"}
    usage = {
        "input_tokens": 82,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 26,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 108,
    }
    tool_usage = {"web_search": {"num_requests": 0}}
    events_in = [
        {
            "type": "response.created",
            "response": {**response, "status": "in_progress", "output": []},
        },
        {
            "type": "response.output_item.added",
            "item": {**call, "status": "in_progress", "arguments": "", "name": "get_weather"},
            "output_index": 0,
        },
        *(
            {
                "type": "response.function_call_arguments.delta",
                "delta": piece,
                "item_id": item_id,
                "obfuscation": "0skqdSmOBNAaEY",
                "output_index": 0,
            }
            for piece in ('{"city":"Paris",', '"country":"France",', '"unit":"C"}')
        ),
        {
            "type": "response.function_call_arguments.done",
            "arguments": arguments,
            "item_id": item_id,
            "output_index": 0,
        },
        {
            "type": "response.output_item.done",
            "item": {**call, "status": "completed", "arguments": arguments, "name": "get_weather"},
            "output_index": 0,
        },
        {
            "type": "response.completed",
            "response": {
                **response,
                "status": "completed",
                "tool_usage": tool_usage,
                "usage": usage,
            },
        },
    ]
    for number, event in enumerate(events_in):
        event["sequence_number"] = number
    events = replay_every_way(_events(*events_in), "openai-responses")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                (
                    "call_Y1aseRzSQSAMbKJIpnv6l73i",
                    "get_weather",
                    {"city": "Paris", "country": "France", "unit": "C"},
                ),
            ),
            usage=(82, 26, 0, 0, 108),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="gpt-5.4",
        ),
    )


# -- Anthropic Messages -------------------------------------------------------------------


def test_minimax_messages_through_opencode_go_with_a_ping_after_the_stop() -> None:
    """jeremychone/rust-genai tests/data/yakbak/opencode_go/minimax_stream/response_000.txt
    (MiniMax-M2.7 on an Anthropic-compatible endpoint): `message_start` counts 9 input
    tokens, the thinking block's signature is a hex digest, the text opens with two
    newlines, `message_delta` says 26 input and 40 output tokens, and after
    `message_stop` comes `event: ping` with `"cost": "0"`. The thinking with its
    signature, the text as sent, the later usage, `end_turn`; the late ping ends
    nothing."""
    signature = "cf998538a5ae3257fc4eb2ffeb97387fc2af13c1716362c717b4e88d7b219c74"
    usage = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {
        "id": "0643924650f0f926ec267c756d7dcacd",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "MiniMax-M2.7",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 9, "output_tokens": 0, **usage},
        "service_tier": "standard",
    }
    body = _events(
        {"type": "message_start", "message": message},
        {"type": "ping"},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "The user wants one word.\n"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": signature},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "\n\nHello!"},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"input_tokens": 26, "output_tokens": 40, **usage},
        },
        {"type": "message_stop"},
        {"type": "ping", "cost": "0"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="\n\nHello!",
            reasoning="The user wants one word.\n",
            signatures=1,
            usage=(26, 40, 0, 0, 66),
            raw_stop_reason="end_turn",
            model="MiniMax-M2.7",
        ),
    )


# -- Gemini -------------------------------------------------------------------------------


def test_gemini_pro_says_stop_on_every_chunk_of_the_answer() -> None:
    """microsoft/semantic-kernel dotnet/src/Connectors/Connectors.Google.UnitTests/
    TestData/chat_stream_response.json (its streaming test's body, a JSON array as
    `streamGenerateContent` without `alt=sse` sends): five chunks of one answer, each
    with `finishReason: "STOP"`, its safety ratings and the same usage, as gemini-pro
    streamed (LiteLLM #2195: "Vertex/Gemini streaming chunks always have
    finish_reason='stop'"; one-hub #402: "upstream vertex/gemini is like this").
    Semantic Kernel's test reads every chunk's text. The answer is read whole, the
    finish said once. Before: only the first chunk's text, the rest ignored as parts
    after the finish."""
    ratings = [
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
    ]

    def chunk(text: str, **extra: Any) -> dict[str, Any]:
        candidate = {
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
            "safetyRatings": ratings,
        }
        usage = {"promptTokenCount": 9, "candidatesTokenCount": 27, "totalTokenCount": 36}
        return {"candidates": [candidate], **extra, "usageMetadata": usage}

    chunks = [
        chunk(
            "The world is a vast and complex place, but", promptFeedback={"safetyRatings": ratings}
        ),
        chunk(" also of challenges and difficulties."),
        chunk(" It is a place of infinite possibilities.\n\nThe world"),
        chunk(" is worth exploring."),
    ]
    body = ("[\n" + "\n,\n".join(json.dumps(c, indent=2) for c in chunks) + "\n]").encode()
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="The world is a vast and complex place, but also of challenges and"
            " difficulties. It is a place of infinite possibilities.\n\nThe world is worth"
            " exploring.",
            usage=(9, 27, 0, 0, 36),
            raw_stop_reason="STOP",
        ),
    )
    assert kinds(events) == ["text", "usage", "done"]


def test_a_relay_appends_an_openai_done_to_a_gemini_stream() -> None:
    """prism-php/prism tests/Fixtures/vertex/stream-basic-1.sse: Gemini chunks
    (`finishReason: null` until the last, which says STOP, the usage on each,
    `modelVersion`), then `data: [DONE]`, as relays that speak both wires append it
    (antigravity2api-nodejs#73: "Gemini-format responses should not end with [DONE]",
    strict clients failing on "Raw response: [DONE]"). The answer is whole and done;
    the marker is logged. A `[DONE]` before any finish ends nothing: the turn is cut
    short. Before: a protocol error, "a data line is not JSON: '[DONE]'", after the
    whole answer."""

    def chunk(text: str, output: int, finish: str | None = None) -> dict[str, Any]:
        candidate = {
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": finish,
        }
        usage = {
            "promptTokenCount": 10,
            "candidatesTokenCount": output,
            "totalTokenCount": 10 + output,
        }
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-1.5-flash",
        }

    answer = [chunk("Hello", 1), chunk(", I am", 3), chunk(" a helpful AI assistant.", 8, "STOP")]
    with log_messages() as messages:
        events = replay_every_way(_sse(*answer), "google")
    check(
        summarize(events),
        Expect(
            text="Hello, I am a helpful AI assistant.",
            usage=(10, 8, 0, 0, 18),
            raw_stop_reason="STOP",
            model="gemini-1.5-flash",
        ),
    )
    assert any("[DONE]" in message for message in messages)
    cut = replay_every_way(_sse(*answer[:2]), "google")
    check(
        summarize(cut),
        Expect(
            text="Hello, I am", usage=(10, 3, 0, 0, 13), terminal="error", error_kind="truncated"
        ),
    )


def test_gemini_max_tokens_on_the_only_chunk_with_thoughts_and_a_service_tier() -> None:
    """tmc/langchaingo llms/googleai/testdata/
    TestGoogleAITruncationIsReportedWhenStreaming.httprr (gemini-2.5-flash through
    google-genai's Go SDK, maxOutputTokens 200): one chunk, its text and `finishReason:
    "MAX_TOKENS"`, the usage with 189 thought tokens beside 7 of answer and a new
    `serviceTier` field. langchaingo reports the truncation. The text, `length`, and
    the thoughts counted in the output; the tier logged with the fields no event
    carries."""
    usage = {
        "promptTokenCount": 9,
        "candidatesTokenCount": 7,
        "totalTokenCount": 205,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 9}],
        "thoughtsTokenCount": 189,
        "serviceTier": "standard",
    }
    payload = {
        "candidates": [
            {
                "content": {"parts": [{"text": "The water cycle, also known as"}], "role": "model"},
                "finishReason": "MAX_TOKENS",
                "index": 0,
            }
        ],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "FB2IauKaKPLnnsEP2viZiQw",
    }
    with log_messages() as messages:
        events = replay_every_way(_sse(payload, done=False), "google")
    check(
        summarize(events),
        Expect(
            text="The water cycle, also known as",
            usage=(9, 196, 189, 0, 205),
            stop_reason="length",
            raw_stop_reason="MAX_TOKENS",
            model="gemini-2.5-flash",
        ),
    )
    assert any("serviceTier" in message for message in messages)


def test_a_relay_stamps_stop_on_the_empty_chunks_before_the_answer() -> None:
    """router-for-me/CLIProxyAPI#5651 (its OpenAI-to-Gemini stream translator, the frames
    compared one by one in Chevey339/kelivo#1003, a Dart client): every contentless
    upstream chunk (the reasoning ones, then the finish and the usage) becomes `parts:
    []` with `finishReason: "STOP"`, so the stream opens with two of them, then the
    answer's chunks with no finish, then two more. Kelivo stopped at the first and showed
    an empty reply. The answer is read whole; the finish that came before any part did
    not end it. Before: no text at all, `done` as if the model said nothing."""

    def chunk(text: str | None, usage: dict[str, Any] | None = None) -> dict[str, Any]:
        parts = [] if text is None else [{"text": text}]
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if text is None:
            candidate["finishReason"] = "STOP"
        payload: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": "google/gemini-3.8-flash",
        }
        if usage is not None:
            payload["usageMetadata"] = usage
        return payload

    usage = {"promptTokenCount": 12, "candidatesTokenCount": 4, "totalTokenCount": 16}
    body = _sse(
        chunk(None),
        chunk(None),
        chunk("Bonjour"),
        chunk(" le monde."),
        chunk(None),
        chunk(None, usage),
        done=False,
    )
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="Bonjour le monde.",
            usage=(12, 4, 0, 0, 16),
            raw_stop_reason="STOP",
            model="google/gemini-3.8-flash",
        ),
    )


def test_rust_genai_gemini_call_with_its_own_id_and_an_empty_text_part() -> None:
    """jeremychone/rust-genai tests/data/yakbak/gemini/builtin_with_functions/
    response_000.txt (gemini-3.7-flash): one chunk holding a `functionCall` with its own
    `id`, signed, then an empty text part, `STOP`, and the usage with 76 thought tokens
    and a `serviceTier`. The call is requested under Gemini's id with its signature;
    the turn is `tool_use`."""
    signature = "EoQDCoEDARFNMg/tvHidTxhVZmaXxlmQevhSoqMMhovELrpSSFN121nvjNF+d8riVARQ"
    call = {"name": "get_weather", "args": {"unit": "C", "city": "Cairo"}, "id": "call_3091305"}
    payload = {
        "candidates": [
            {
                "content": {
                    "parts": [{"functionCall": call, "thoughtSignature": signature}, {"text": ""}],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 90,
            "candidatesTokenCount": 22,
            "totalTokenCount": 188,
            "thoughtsTokenCount": 76,
            "serviceTier": "standard",
        },
        "modelVersion": "gemini-3.7-flash",
        "responseId": "QFiDas-DJqmSjrEPraSZsAQ",
    }
    events = replay_every_way(_sse(payload, done=False), "google")
    check(
        summarize(events),
        Expect(
            text="",
            signatures=1,
            tools=(("call_3091305", "get_weather", {"unit": "C", "city": "Cairo"}),),
            usage=(90, 98, 76, 0, 188),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
            model="gemini-3.7-flash",
        ),
    )
    requests = [event for event in events if event.type == "tool_request"]
    assert requests[0].model_dump()["signature"] == signature


def test_req_llm_gemini_finish_in_a_candidate_with_no_content() -> None:
    """agentjido/req_llm#638 (Elixir: "Gemini SSE Stream loses finish-reason in some
    cases"): the answer's last text in a chunk with no finish, then a final event of
    `{"candidates": [{"finishReason": "STOP"}], "usageMetadata": {...}}`, a candidate
    with neither content nor index. req_llm's decoder matched only candidates with
    parts and reported the turn incomplete. The turn is done, with its usage."""

    def chunk(candidate: dict[str, Any]) -> dict[str, Any]:
        usage = {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8}
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
        }

    body = _sse(
        chunk({"content": {"role": "model", "parts": [{"text": "Hello there."}]}, "index": 0}),
        chunk({"finishReason": "STOP"}),
        done=False,
    )
    check(
        summarize(replay_every_way(body, "google")),
        Expect(
            text="Hello there.",
            usage=(5, 3, 0, 0, 8),
            raw_stop_reason="STOP",
            model="gemini-2.5-flash",
        ),
    )
