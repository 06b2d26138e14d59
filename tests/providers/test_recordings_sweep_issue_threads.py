"""Streams users pasted into issue and pull-request threads, where the body of an odd
provider or self-hosted server broke some client: SGLang, vLLM, TGI, Foundry Local,
Open WebUI in front of Ollama, OpenRouter, the Anthropic-compatible endpoints of Z.ai,
Ollama and llama-server, LiteLLM's and other proxies' bridges, an MLX Responses server
(raullenchai/Rapid-MLX), in shapes no other test replays.

Each body is written by hand from the thread named beside it (its essential chunks or
events, in the order pasted; ids and long text shortened), replayed whole and cut at
arbitrary byte boundaries (`replay_every_way`), and checked against what a client of
that wire should get.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import Expect, check, log_messages, replay_every_way, summarize

# -- OpenAI chat and its compatible family ------------------------------------------------


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(
    model: str, delta: dict[str, Any], finish: str | None = None, **choice: Any
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1740634121,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **choice}],
    }


def test_sglang_empty_string_finish_reason_on_every_chunk() -> None:
    """sgl-project/sglang#3912 (SGLang 0.4.3, deepseek-r1-distill-llama-70b): every chunk
    of the answer says `"finish_reason": ""` (not null) beside `matched_stop: null`, its
    delta `role`, `content` and `tool_calls` keys written null where unused, and
    `usage: null` on the chunk; a strict client failed to deserialize the empty string.
    An empty finish reason is no finish: the text goes on until the real one."""
    model = "deepseek-r1:70b"

    def sglang(content: str | None, finish: str) -> dict[str, Any]:
        delta = {"role": None, "content": content, "tool_calls": None}
        chunk = _chunk(model, delta, finish, logprobs=None, matched_stop=None)
        return chunk | {"usage": None}

    events = replay_every_way(
        _sse(sglang("", ""), sglang("*****", ""), sglang(" done", ""), sglang(None, "stop")),
        "vllm",
    )
    check(summarize(events), Expect(text="***** done", model=model))


def test_vllm_call_cut_at_max_tokens_but_finished_as_tool_calls_is_malformed() -> None:
    """vllm-project/vllm#47963 (and #37937, gpt-oss-120b with the openai tool parser):
    a call whose arguments reached `max_tokens` mid-string came back with
    `finish_reason: "tool_calls"`: the serving code overrides `length` whenever a call
    was parsed, so the unterminated JSON looks complete. The call is never requested:
    the turn ends in `malformed_tool_arguments` naming the call, with what arrived."""
    model = "gpt-oss-120b"
    opened = {"id": "chatcmpl-tool-1", "type": "function", "index": 0}
    events = replay_every_way(
        _sse(
            _chunk(model, {"role": "assistant", "content": ""}),
            _chunk(model, {"reasoning": " tool"}),
            _chunk(model, {"tool_calls": [opened | {"function": {"name": "write_file"}}]}),
            _chunk(model, {"tool_calls": [{"index": 0, "function": {"arguments": '{"content'}}]}),
            _chunk(model, {"tool_calls": [{"index": 0, "function": {"arguments": '": "AI'}}]}),
            _chunk(model, {}, "tool_calls"),
        ),
        "vllm",
    )
    summary = summarize(events)
    check(
        summary,
        Expect(text="", reasoning=" tool", terminal="error", error_kind="malformed_tool_arguments"),
    )
    error = events[-1]
    assert error.type == "error"
    assert "chatcmpl-tool-1" in error.error.message and "write_file" in error.error.message
    assert error.error.raw == '{"content": "AI'


@pytest.mark.parametrize(
    ("server", "ids"),
    [
        # vLLM: each call's first fragment has its id, the rest `id: ""`
        ("vllm", [("chatcmpl-tool-c9Z", ""), ("chatcmpl-tool-Hfz", "")]),
        # SGLang: the ids "0" and "1", said again on every fragment
        ("sglang", [("0", "0"), ("1", "1")]),
    ],
)
def test_two_calls_at_index_zero_told_apart_by_their_ids(
    server: str, ids: list[tuple[str, str]]
) -> None:
    """InternLM/lmdeploy#3412 (the reporter's comparison of the servers' streamed calls,
    as the openai SDK parsed them): vLLM and SGLang both stream two calls one after the
    other at `index: 0`, the second told from the first only by its new id; vLLM writes
    `id: ""` on a call's continuations, SGLang the call's own id again. Two calls, each
    with its arguments."""
    model = "qwen2.5-72b-instruct"

    def fragment(call_id: str, name: str | None, arguments: str) -> dict[str, Any]:
        call = {"index": 0, "id": call_id, "type": "function"}
        call["function"] = {"name": name, "arguments": arguments}
        return _chunk(model, {"tool_calls": [call]})

    (first, first_rest), (second, second_rest) = ids
    events = replay_every_way(
        _sse(
            fragment(first, "get_weather", ""),
            fragment(first_rest, None, '{"city": "Paris"}'),
            fragment(second, "get_time", ""),
            fragment(second_rest, None, '{"tz": "CET"}'),
            _chunk(model, {}, "tool_calls"),
        ),
        "vllm",
    )
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                (first, "get_weather", {"city": "Paris"}),
                (second, "get_time", {"tz": "CET"}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


def test_open_webui_stop_on_every_empty_chunk_before_the_answer() -> None:
    """open-webui/open-webui#23921 (and #16377; its `/api/chat/completions` in front of
    Ollama's deepseek-r1:32b): `openai_chat_chunk_message_template` sets
    `finish_reason: "stop"` on every chunk whose content, reasoning and calls are all
    empty, so the first chunk (Ollama's empty opening) and the one between thinking and
    answer say `stop` with an empty delta, then the stream goes on; every chunk has an id
    of its own (`{model}-{uuid4}`). API clients closed the turn at the first chunk, "the
    model seems to hang after 'let me think'". The turn ends at `[DONE]`: all the
    reasoning and the answer are read, with the last chunk's usage."""
    model = "deepseek-r1:32b"

    def template(n: int, delta: dict[str, Any], **more: Any) -> dict[str, Any]:
        finish = None if delta else "stop"
        choice = {"index": 0, "logprobs": None, "finish_reason": finish, "delta": delta}
        chunk_id = f"{model}-6f1c0d2e-0000-4000-8000-00000000000{n}"
        body = {"id": chunk_id, "created": 1745200000, "model": model, "choices": [choice]}
        return body | {"object": "chat.completion.chunk", **more}

    usage = {"prompt_tokens": 4, "completion_tokens": 40, "total_tokens": 44}
    events = replay_every_way(
        _sse(
            template(1, {}),
            template(2, {"reasoning_content": "Okay, the user"}),
            template(3, {"reasoning_content": " says hi."}),
            template(4, {}),
            template(5, {"content": "Hello!"}),
            template(6, {"content": " How can I help?"}),
            template(7, {}, usage=usage),
        ),
        "openai",
    )
    check(
        summarize(events),
        Expect(
            text="Hello! How can I help?",
            reasoning="Okay, the user says hi.",
            usage=(4, 40, 0, 0, 44),
            model=model,
        ),
    )


def test_litellm_oci_ids_per_chunk_and_calls_renamed_empty_then_stop_twice() -> None:
    """BerriAI/litellm#40040 and #39507 (its OCI Generative AI streams, `oci-llama`, as
    observed before the fixes): every chunk carries a completion id of its own, no
    `finish_reason` key until the end; the call's continuation fragments say
    `"name": ""` beside `type` and `index` and no id; the turn ends on two back-to-back
    `stop` chunks. One call, named by its first fragment, with its arguments; the
    response's id the first chunk's; `stop` after a call is a stop to run it."""

    def oci(n: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta}
        if finish is not None:
            choice["finish_reason"] = finish
        body = {"id": f"chatcmpl-3f9ee602-{n:04d}", "created": 1788688081, "model": "oci-llama"}
        return body | {"object": "chat.completion.chunk", "choices": [choice]}

    def fragment(arguments: str, **first: str) -> dict[str, Any]:
        function = {"arguments": arguments, "name": first.pop("name", "")}
        return {"tool_calls": [{**first, "function": function, "type": "function", "index": 0}]}

    events = replay_every_way(
        _sse(
            oci(1, {"content": ""}),
            oci(2, fragment("", id="chatcmpl-tool-a165800d4d7789c7", name="get_weather")),
            oci(3, fragment('{"city": "')),
            oci(4, fragment('Paris"}')),
            oci(5, {}, "stop"),
            oci(6, {}, "stop"),
        ),
        "openai",
    )
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="",
            tools=(("chatcmpl-tool-a165800d4d7789c7", "get_weather", {"city": "Paris"}),),
            stop_reason="tool_use",
            model="oci-llama",
        ),
    )
    assert events[-1].type == "done" and events[-1].response_id == "chatcmpl-3f9ee602-0001"


def test_bedrock_access_gateway_one_call_at_index_one_after_reasoning() -> None:
    """aws-samples/bedrock-access-gateway#134 (claude-3-7-sonnet through the gateway's
    chat endpoint, thinking on): the gateway numbered the call by Bedrock's content
    block, so the one call of the turn, after the reasoning and the text, came at
    `tool_calls[].index` 1 (the openai SDK's accumulator indexes a list with it). Every
    chunk says `usage: null` and `system_fingerprint: "fp"`. One call, with its
    arguments, after the reasoning and the text."""
    model = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"

    def gateway(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "finish_reason": finish, "logprobs": None, "delta": delta}
        return {
            "id": "chatcmpl-63471c7a",
            "created": 1743536580,
            "model": model,
            "system_fingerprint": "fp",
            "choices": [choice],
            "object": "chat.completion.chunk",
            "usage": None,
        }

    opened = {"index": 1, "id": "tooluse_2ZNq3", "type": "function"}
    events = replay_every_way(
        _sse(
            gateway({"role": "assistant", "content": "", "reasoning_content": "Weather asked."}),
            gateway({"content": "I'll check the current"}),
            gateway({"content": " weather in New York for you."}),
            gateway(
                {"tool_calls": [opened | {"function": {"name": "get_weather", "arguments": ""}}]}
            ),
            gateway(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "type": "function",
                            "function": {"arguments": '{"city": "NYC"}'},
                        }
                    ]
                }
            ),
            gateway({}, "tool_calls"),
        ),
        "openai",
    )
    check(
        summarize(events),
        Expect(
            text="I'll check the current weather in New York for you.",
            reasoning="Weather asked.",
            tools=(("tooluse_2ZNq3", "get_weather", {"city": "NYC"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


def test_tgi_choice_index_counting_the_tokens_is_the_one_choice() -> None:
    """huggingface/text-generation-inference#1648 (TGI 1.4.3, zephyr-7b-beta, before the
    fix): each chunk's one choice carried the token's position as its `index`, from 1
    (`"index": 1` "I", 2 "'", 3 "m" with `finish_reason: "length"`), `id: ""`, `object:
    "text_completion"`, `data:` with no space. A choice index is the choice's place among
    `n`, so the chunks read as other choices than 0: the answer was dropped with a
    warning and the stream read as cut short, its finish on an ignored choice. An index
    that counts up by one with every chunk, each chunk holding only that choice, counts
    tokens: it is the one choice."""
    frames = [
        ("I", 1, None),
        ("'", 2, None),
        ("m", 3, "length"),
    ]
    body = b""
    for content, index, finish in frames:
        chunk = {
            "id": "",
            "object": "text_completion",
            "created": 1710508199,
            "model": "HuggingFaceH4/zephyr-7b-beta",
            "system_fingerprint": "1.4.3-sha-e6bb3ff",
            "choices": [
                {
                    "index": index,
                    "delta": {"role": "assistant", "content": content},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
        }
        body += b"data:" + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="I'm",
            stop_reason="length",
            raw_stop_reason="length",
            model="HuggingFaceH4/zephyr-7b-beta",
        ),
    )


def test_foundry_local_choice_index_counting_from_zero_is_the_one_choice() -> None:
    """microsoft/foundry-local#263 (v0.7.117, qwen2.5-1.5b-instruct; #144 before it): the
    one choice's `index` goes up by one with every chunk from 0 ("Wh" at 0, "isper" at
    1, ...), each choice carrying its piece both as `delta` and as `message`, beside
    .NET fields the wire does not have (`CreatedAt`, `IsDelta: false`, `Successful`,
    `HttpStatusCode`...) and `tool_calls: []`. Only the first piece was read, the rest
    ignored as other choices. The whole text is the answer."""

    def foundry(content: str, index: int, finish: str | None = None) -> dict[str, Any]:
        piece = {
            "role": "assistant",
            "content": content,
            "name": None,
            "tool_call_id": None,
            "function_call": None,
            "tool_calls": [],
        }
        choice = {
            "delta": piece,
            "message": piece,
            "index": index,
            "finish_reason": finish,
            "finish_details": None,
            "logprobs": None,
        }
        return {
            "model": "qwen2.5-1.5b-instruct-generic-gpu:3",
            "choices": [choice],
            "usage": None,
            "system_fingerprint": None,
            "service_tier": None,
            "created": 1758888848,
            "CreatedAt": "2025-09-26T12:14:08+00:00",
            "id": f"chat.id.{index + 1}",
            "StreamEvent": None,
            "IsDelta": False,
            "Successful": True,
            "error": None,
            "HttpStatusCode": 0,
            "HeaderValues": None,
            "object": "chat.completion.chunk",
        }

    events = replay_every_way(
        _sse(
            foundry("Wh", 0), foundry("isper", 1), foundry(" quietly.", 2), foundry("", 3, "stop")
        ),
        "openai",
    )
    check(
        summarize(events),
        Expect(text="Whisper quietly.", model="qwen2.5-1.5b-instruct-generic-gpu:3"),
    )


def test_two_choices_interleaved_under_one_id_are_no_count() -> None:
    """The counting rule above against `n` = 2: a stream interleaves its choices, each
    chunk one choice, all under the completion's one id, and here each choice's first
    chunk already carries text (OpenAI's and vLLM's first chunks are empty role chunks;
    a server need not send one). Choice 1's first chunk follows choice 0's at index 1,
    as a count from 0 would: the shared id says it is the other choice. Choice 0 alone
    is the answer; before, "B0" was read into it."""

    def chunk(index: int, content: str | None, finish: str | None = None) -> dict[str, Any]:
        delta = {} if content is None else {"role": "assistant", "content": content}
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        return {
            "id": "chatcmpl-n2",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [choice],
        }

    body = _sse(
        chunk(0, "A0"),
        chunk(1, "B0"),
        chunk(0, "A1"),
        chunk(1, "B1"),
        chunk(0, None, "stop"),
        chunk(1, None, "stop"),
    )
    events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="A0A1", stop_reason="stop", model="m"))


def test_openrouter_upstream_network_error_behind_a_stop_finish_is_the_error() -> None:
    """earendil-works/pi#8511 (OpenRouter, `stealth/ox-alpha`; also
    OleksandrChekhovskyi/hax#15, whose test writes the same chunk): when the routed
    provider fails mid-stream with a network error, OpenRouter ends the stream with a
    normal-looking chunk, empty `content` and `finish_reason: "stop"`, the real cause
    only in `native_finish_reason: "network_error"`, and no usage. Read by
    `finish_reason` alone it was a successful, empty answer ("the completion sound
    plays, but no text appears and no error is surfaced"). The upstream's word is a
    failed turn's: the turn is an error, retryable, naming it."""
    model = "stealth/ox-alpha"

    def routed(
        content: str, finish: str | None = None, native: str | None = None
    ) -> dict[str, Any]:
        chunk = _chunk(model, {"role": "assistant", "content": content}, finish)
        chunk["choices"][0] |= {"native_finish_reason": native, "logprobs": None}
        return chunk | {"id": "gen-1", "provider": "Stealth"}

    events = replay_every_way(_sse(routed(""), routed("", "stop", "network_error")), "openrouter")
    check(summarize(events), Expect(text="", terminal="error", error_kind="stream_error"))
    error = events[-1]
    assert error.type == "error"
    assert error.error.retryable
    assert "network_error" in error.error.message


# -- Anthropic Messages -------------------------------------------------------------------


def _events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _message_start(message_id: str, model: str, usage: dict[str, int]) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return {"type": "message_start", "message": message}


def _text_block(index: int, text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


def test_meridian_error_between_the_closing_delta_and_message_stop() -> None:
    """rynfar/meridian#185 and its src/__tests__/proxy-stream-error-recovery.test.ts (an
    Anthropic Messages proxy in front of the Claude Agent SDK): when the upstream fails
    after `message_start` (a 429), the proxy closes the lifecycle with a `message_delta`
    saying `max_tokens` and 0 output tokens, then `event: error` (`rate_limit_error`),
    then `message_stop`; the error moved ahead of `message_stop` because clients stop
    reading there. The turn is the rate limit (retryable, 429), the text kept, not a
    `length` finish."""
    events = replay_every_way(
        _events(
            _message_start("msg_1", "claude-sonnet-4-5", {"input_tokens": 10, "output_tokens": 1}),
            *_text_block(0, "Starting to respond..."),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
                "usage": {"output_tokens": 0},
            },
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "429 Too Many Requests - rate limit exceeded",
                },
            },
            {"type": "message_stop"},
        ),
        "anthropic",
    )
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="Starting to respond...",
            usage=(10, 1, 0, 0, 11),
            terminal="error",
            error_kind="stream_error",
        ),
    )
    error = events[-1]
    assert error.type == "error"
    assert (error.error.status, error.error.code, error.error.retryable) == (
        429,
        "rate_limit_error",
        True,
    )


def test_zai_anthropic_endpoint_counts_the_input_only_in_the_closing_delta() -> None:
    """zai-org/GLM-5#139 (`POST api.z.ai/api/anthropic/v1/messages`, glm-5.3): the
    `message_start` usage is always `{"input_tokens": 0, "output_tokens": 0}`; the input,
    the cache reads and the output are only in the final `message_delta`. The usage is
    that delta's: 14 input, 128 read from the cache, 2 output."""
    events = replay_every_way(
        _events(
            _message_start("msg_2026", "glm-5.3", {"input_tokens": 0, "output_tokens": 0}),
            *_text_block(0, "OK"),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"input_tokens": 14, "output_tokens": 2, "cache_read_input_tokens": 128},
            },
            {"type": "message_stop"},
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(text="OK", usage=(14, 2, 0, 128, 144), raw_stop_reason="end_turn", model="glm-5.3"),
    )


def _block(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _end(stop_reason: str, output_tokens: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def test_ollama_anthropic_endpoint_starts_thinking_over_an_open_text_block() -> None:
    """ollama/ollama#17101 (`/v1/messages`, gemma4:26b through Claude Code, "API Error:
    Content block not found"): the model wrote `---\\n` before thinking, so Ollama's
    converter started a text block at index 0, streamed it, then started the thinking
    block at the same index 0 without stopping the text block, streamed the thinking
    and stopped index 0 once. Each delta is read by its own type under the block that
    index names last: the text, the thinking, then the answer's text block."""
    events = replay_every_way(
        _events(
            _message_start("msg_1", "gemma4:26b", {"input_tokens": 12, "output_tokens": 0}),
            _block(0, {"type": "text", "text": ""}),
            _delta(0, {"type": "text_delta", "text": "---"}),
            _delta(0, {"type": "text_delta", "text": "\n"}),
            _block(0, {"type": "thinking", "thinking": ""}),
            _delta(0, {"type": "thinking_delta", "thinking": "The user says hello."}),
            _stop(0),
            _block(1, {"type": "text", "text": ""}),
            _delta(1, {"type": "text_delta", "text": "Hello!"}),
            _stop(1),
            *_end("end_turn", 20),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="---\nHello!",
            reasoning="The user says hello.",
            usage=(12, 20, 0, 0, 32),
            raw_stop_reason="end_turn",
            model="gemma4:26b",
        ),
    )


def test_litellm_messages_bridge_ends_a_tool_turn_with_end_turn() -> None:
    """BerriAI/litellm#34692 (`ollama_chat/qwen3.5:4b` through the proxy's `/v1/messages`,
    LiteLLM 1.96.0, Ollama 0.32.5): a spurious empty text block, then the `tool_use`
    block with its whole input in one `input_json_delta`, then `message_delta` with
    `stop_reason: "end_turn"`, not `tool_use` (Ollama's `stop` mapped as is); Claude Code
    took the turn for a final answer and dropped the call. The call is complete and
    requested, and the turn stops for it (`tool_use`, the raw word kept)."""
    arguments = {"file_path": "test.txt", "content": "hello"}
    events = replay_every_way(
        _events(
            _message_start("msg_1", "qwen3.5:4b", {"input_tokens": 12, "output_tokens": 0}),
            _block(0, {"type": "text", "text": ""}),
            _stop(0),
            _block(1, {"type": "tool_use", "id": "8a359e89-1", "name": "Write", "input": {}}),
            _delta(1, {"type": "input_json_delta", "partial_json": json.dumps(arguments)}),
            _stop(1),
            *_end("end_turn", 30),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("8a359e89-1", "Write", arguments),),
            usage=(12, 30, 0, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="end_turn",
            model="qwen3.5:4b",
        ),
    )


def test_llama_cpp_anthropic_endpoint_signs_its_thinking_with_an_empty_signature() -> None:
    """ggml-org/llama.cpp#18551 (llama-server's `/v1/messages`, Qwen3-4B-Thinking): a
    thinking block closed by a `signature_delta` whose signature is the empty string
    (Claude Code needs the delta to keep the block; llama-server has no signature to
    give), then the text. The thinking is read, and an empty signature is no signature."""
    events = replay_every_way(
        _events(
            _message_start("msg_1", "qwen3-4b", {"input_tokens": 12, "output_tokens": 0}),
            _block(0, {"type": "thinking", "thinking": ""}),
            _delta(0, {"type": "thinking_delta", "thinking": "A greeting."}),
            _delta(0, {"type": "signature_delta", "signature": ""}),
            _stop(0),
            *_text_block(1, "Hi"),
            *_end("end_turn", 5),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(
            text="Hi",
            reasoning="A greeting.",
            usage=(12, 5, 0, 0, 17),
            raw_stop_reason="end_turn",
            model="qwen3-4b",
        ),
    )


def test_bedrock_invocation_metrics_on_message_stop_are_logged_not_counted_again() -> None:
    """langchain-ai/langchain-aws#164 (and BerriAI/litellm#34373, #36878: Claude through
    Bedrock's InvokeModelWithResponseStream, the Anthropic events as a relay passes
    them on): `message_stop` carries `amazon-bedrock-invocationMetrics` (the input and
    output counts `message_start` and `message_delta` already gave, the latencies, and
    the cache reads and writes). The usage is the Messages events' (langchain-aws
    counted it twice); the metrics are no event, so they are logged with their values,
    not dropped unsaid."""
    model = "claude-3-5-sonnet-20240620"
    metrics = {
        "inputTokenCount": 16,
        "outputTokenCount": 337,
        "invocationLatency": 4151,
        "firstByteLatency": 136,
    }
    with log_messages() as logs:
        events = replay_every_way(
            _events(
                _message_start("msg_bdrk_01", model, {"input_tokens": 16, "output_tokens": 1}),
                *_text_block(0, "Hi"),
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 337},
                },
                {"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics},
            ),
            "anthropic",
        )
    check(
        summarize(events),
        Expect(
            text="Hi",
            usage=(16, 337, 0, 0, 353),
            raw_stop_reason="end_turn",
            model=model,
        ),
    )
    assert any("amazon-bedrock-invocationMetrics" in m and "4151" in m for m in logs)


# -- OpenAI Responses -----------------------------------------------------------------------


def test_rapid_mlx_response_completed_saying_incomplete_is_a_length_stop() -> None:
    """raullenchai/Rapid-MLX#866 (its `/v1/responses` after the fix, a reasoning model cut
    by `max_output_tokens` mid-think): `response.created`, `response.in_progress`, the
    reasoning item added and done with its partial summary (`status: "incomplete"`),
    then the terminal as `response.completed` (not `response.incomplete`) whose
    response says `status: "incomplete"` and `incomplete_details.reason:
    "max_output_tokens"`. The turn stopped at its length, the partial thought kept."""

    def response(status: str, output: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
        body = {"id": "resp_1", "object": "response", "model": "deepseek-v4-flash"}
        return body | {"status": status, "output": output, **more}

    thought = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "The user asks for"}],
        "status": "incomplete",
    }
    usage = {"input_tokens": 12, "output_tokens": 30, "total_tokens": 42}
    events = replay_every_way(
        _events(
            {"type": "response.created", "response": response("in_progress", [])},
            {"type": "response.in_progress", "response": response("in_progress", [])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**thought, "summary": [], "status": "in_progress"},
            },
            {"type": "response.output_item.done", "output_index": 0, "item": thought},
            {
                "type": "response.completed",
                "response": response(
                    "incomplete",
                    [thought],
                    incomplete_details={"reason": "max_output_tokens"},
                    usage=usage,
                ),
            },
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="The user asks for",
            usage=(12, 30, 0, 0, 42),
            stop_reason="length",
            raw_stop_reason="max_output_tokens",
            model="deepseek-v4-flash",
        ),
    )


def _responses_head(model: str) -> list[dict[str, Any]]:
    """A Responses stream up to its first text delta ("Half"), sequence numbers kept."""

    def response(status: str) -> dict[str, Any]:
        return {"id": "resp_1", "object": "response", "status": status, "model": model}

    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        {"type": "response.created", "sequence_number": 0, "response": response("in_progress")},
        {"type": "response.in_progress", "sequence_number": 1, "response": response("in_progress")},
        {
            "type": "response.output_item.added",
            "sequence_number": 2,
            "output_index": 0,
            "item": message | {"content": []},
        },
        {
            "type": "response.content_part.added",
            "sequence_number": 3,
            **where,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {"type": "response.output_text.delta", "sequence_number": 4, **where, "delta": "Half"},
    ]


def _named(*payloads: dict[str, Any], done: bool = False) -> bytes:
    """Each payload under an `event:` line of its `type` (none for a payload without one),
    then, with `done`, an OpenAI-style `data: [DONE]`."""
    out = ""
    for p in payloads:
        out += (f"event: {p['type']}\n" if "type" in p else "") + f"data: {json.dumps(p)}\n\n"
    return (out + ("data: [DONE]\n\n" if done else "")).encode()


def test_lm_studio_responses_call_arguments_only_in_their_done_event() -> None:
    """BerriAI/litellm#25321 (a comment: LM Studio's `/v1/responses` serving
    qwen3.5-35b-a3b): a function call's arguments come whole in
    `response.function_call_arguments.done`, with no `.delta` before it (LiteLLM's
    Messages bridge read only the deltas, and Claude Code got `input: {}`). The call is
    requested with those arguments, once."""
    model = "qwen3.5-35b-a3b"
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "Read"}
    arguments = '{"file_path":"/tmp/a.txt"}'

    def response(status: str, **more: Any) -> dict[str, Any]:
        return {"id": "resp_lms", "object": "response", "model": model, "status": status} | more

    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    events = replay_every_way(
        _named(
            {"type": "response.created", "response": response("in_progress", output=[])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": call | {"arguments": "", "status": "in_progress"},
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "item_id": "fc_1",
                "arguments": arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": call | {"arguments": "", "status": "completed"},
            },
            {"type": "response.completed", "response": response("completed", usage=usage)},
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("call_1", "Read", {"file_path": "/tmp/a.txt"}),),
            usage=(10, 5, 0, 0, 15),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )


def test_vllm_responses_reasoning_deltas_each_under_the_next_content_index() -> None:
    """vllm-project/vllm#35184 (its simple Responses streaming path, gpt-oss-120b, as
    pasted there): every `response.reasoning_text.delta` of the one reasoning item
    names the next `content_index` (8, 9, 10, ... one per delta), with no part
    announced or closed between them. The index counts the deltas, not parts: the
    reasoning is one text, as the deltas joined say it, not a paragraph per word.
    Before: a blank line was put between every two deltas."""
    model = "gpt-oss-120b"
    item_id = "04429e29-baa2-4255-96a9-343a414c4cbe"
    words = [" The", " user", " says", " hello", "."]
    thought = {"type": "reasoning", "id": item_id, "summary": []}
    whole = thought | {
        "content": [{"type": "reasoning_text", "text": "".join(words)}],
        "status": "completed",
    }
    message = {"type": "message", "id": "msg_1", "role": "assistant"}
    said = message | {
        "content": [{"type": "output_text", "text": "Hello!", "annotations": []}],
        "status": "completed",
    }
    where = {"item_id": "msg_1", "output_index": 1, "content_index": 0}

    def response(status: str, **more: Any) -> dict[str, Any]:
        return {
            "id": "resp_a35e27c4",
            "object": "response",
            "model": model,
            "status": status,
        } | more

    deltas = [
        {
            "content_index": 8 + n,
            "delta": word,
            "item_id": item_id,
            "output_index": 0,
            "sequence_number": 3 + n,
            "type": "response.reasoning_text.delta",
        }
        for n, word in enumerate(words)
    ]
    usage = {
        "input_tokens": 10,
        "output_tokens": 20,
        "total_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 8},
    }
    events = replay_every_way(
        _named(
            {"type": "response.created", "response": response("in_progress", output=[])},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": thought | {"content": [], "status": "in_progress"},
            },
            *deltas,
            {"type": "response.output_item.done", "output_index": 0, "item": whole},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": message | {"content": [], "status": "in_progress"},
            },
            {"type": "response.output_text.delta", **where, "delta": "Hello!"},
            {"type": "response.output_item.done", "output_index": 1, "item": said},
            {
                "type": "response.completed",
                "response": response("completed", output=[whole, said], usage=usage),
            },
        ),
        "openai-responses",
    )
    check(
        summarize(events),
        Expect(
            text="Hello!",
            reasoning=" The user says hello.",
            usage=(10, 20, 8, 0, 30),
            raw_stop_reason="completed",
            model=model,
        ),
    )


def test_litellm_responses_bridge_error_written_as_a_chat_error_frame() -> None:
    """BerriAI/litellm#40243 (its "before": Codex CLI through the proxy's `/v1/responses`):
    after `response.created`, `response.in_progress` and the first output events, a
    provider's mid-stream failure arrived as a Chat-style `data: {"error": {...}}` frame
    (no `event:`, no `type`, the code the string "500" and the message prefixed with
    `litellm.InternalServerError:`), then the body ended: no `response.failed`, no
    `[DONE]`; Codex said "stream disconnected before completion" with no reason. The
    frame is the turn's error, its words kept, the streamed text before it kept."""
    error = {
        "message": "litellm.InternalServerError: upstream connection reset",
        "type": "internal_server_error",
        "param": None,
        "code": "500",
    }
    events = replay_every_way(
        _named(*_responses_head("gpt-5"), {"error": error}), "openai-responses"
    )
    check(summarize(events), Expect(text="Half", terminal="error", error_kind="stream_error"))
    failed = events[-1]
    assert failed.type == "error"
    assert failed.error.message == error["message"]
    assert failed.error.raw is not None and json.loads(failed.error.raw) == error


def test_bamboo_responses_failed_with_only_an_error_type_then_done() -> None:
    """bigduu/Bamboo-agent#405 (its Responses proxy, on a mid-stream upstream failure):
    `{"type": "response.failed", "response": {"status": "failed", "error": {"message",
    "type": "api_error"}}}` (no response id, the error's `type` where OpenAI writes
    `code`), then `data: [DONE]`; before the fix only `[DONE]` came and the truncated
    text read as the answer. The failure is the turn's error with its message, the
    `type` as its code."""
    failed = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": {"message": "upstream stream closed", "type": "api_error"},
        },
    }
    events = replay_every_way(
        _named(*_responses_head("gpt-5"), failed, done=True), "openai-responses"
    )
    check(summarize(events), Expect(text="Half", terminal="error", error_kind="stream_error"))
    error = events[-1]
    assert error.type == "error"
    assert (error.error.message, error.error.code) == ("upstream stream closed", "api_error")
