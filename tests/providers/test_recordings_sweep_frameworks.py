"""Streams recorded by Python agent frameworks and their instrumentation (VCR cassettes
and fixture streams of crewAI, Mirascope, simonw's llm plugins, Arize's OpenInference,
traceloop's OpenLLMetry): the shapes the earlier sweeps did not replay.

Each body is written by hand from the cassette named beside it (its essential chunks,
ids and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what the recording says and its own test
expects.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import ReasoningDelta, ServerToolCall, ServerToolResult
from tests.support import Expect, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _events(*payloads: dict[str, Any]) -> bytes:
    """Anthropic's framing, each payload padded inside its closing brace as the API
    pads it (`{...}      }`)."""
    out = ""
    for p in payloads:
        data = json.dumps(p, separators=(",", ":"))
        out += f"event: {p['type']}\ndata: {data[:-1]}      }}\n\n"
    return out.encode()


# -- chat completions family -------------------------------------------------------------

_MAVERICK = "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"


def _together(text: str, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "oNv2oWV-28Eivz-9acd505ccdeeaf82",
        "object": "chat.completion.chunk",
        "created": 1765543475,
        "choices": [
            {
                "index": 0,
                "text": text,
                "logprobs": None,
                "finish_reason": finish,
                "delta": {
                    "token_id": None,
                    "role": "assistant",
                    "content": text,
                    "reasoning": None,
                },
            }
        ],
        "model": _MAVERICK,
        "usage": None,
    }


def test_together_says_each_piece_twice_in_the_choice_text_and_the_delta() -> None:
    """Mirascope/mirascope python/tests/e2e/output/cassettes/test_call/
    together_meta_llama_Llama_4_Maverick_17B_128E_Instruct_FP8/stream.yaml: Together's
    v2 inference writes every piece both as the choice's `text` (its completions field)
    and as `delta.content`, with `token_id` and `reasoning` null in every delta and the
    role on every one; the finish comes on an empty piece and the usage alone after it
    (`choices: []`, `prompt_tokens_details: null`, a top-level `reasoning_tokens: 0`).
    The answer is said once: "4200 + 42 = 4242", 20 in, 79 out."""
    pieces = ["", "4200", " +", " ", "42", " =", " $\\boxed{", "424", "2", "}$"]
    usage_chunk = _together("") | {
        "choices": [],
        "usage": {
            "prompt_tokens": 20,
            "total_tokens": 99,
            "completion_tokens": 79,
            "prompt_tokens_details": None,
            "reasoning_tokens": 0,
        },
    }
    body = _sse(*(_together(p) for p in pieces), _together("", "stop"), usage_chunk)
    check(
        summarize(replay_every_way(body, "together")),
        Expect(text="4200 + 42 = $\\boxed{4242}$", usage=(20, 79, 0, 0, 99), model=_MAVERICK),
    )


def test_together_text_then_two_calls_each_fragment_typed_with_null_id_and_name() -> None:
    """Mirascope/mirascope python/tests/e2e/output/cassettes/test_call_with_tools/
    together_deepseek_ai_DeepSeek_V3_1/stream.yaml (deepseek-ai/DeepSeek-V3.1 at Together,
    "use parallel tool calling"): a sentence first, then two calls, each opened with its
    id, name and empty arguments and continued by fragments that repeat `type: function`
    with `id` and `name` null, every chunk with the choice `text` empty beside its delta;
    the finish `tool_calls` on an empty chunk and the usage alone after it. The text and
    both calls, each under its own id and whole; 191 in, 60 out; `tool_use`."""
    model = "deepseek-ai/DeepSeek-V3.1"

    def chunk(content: str = "", calls: Any = None, finish: str | None = None) -> dict[str, Any]:
        delta: dict[str, Any] = {"token_id": None, "role": "assistant", "content": content}
        if calls is not None:
            delta["tool_calls"] = calls
        delta["reasoning"] = None
        choice = {"index": 0, "text": content, "logprobs": None, "finish_reason": finish}
        return {
            "id": "oNv3T7X-28Eivz-9acd53734b7de3bb",
            "object": "chat.completion.chunk",
            "created": 1765543601,
            "choices": [choice | {"delta": delta}],
            "model": model,
            "usage": None,
        }

    def call(index: int, call_id: str | None, name: str | None, piece: str) -> list[Any]:
        function = {"name": name, "arguments": piece}
        return [{"id": call_id, "index": index, "type": "function", "function": function}]

    text = "I'll help you retrieve secrets using the provided passwords."
    chunks = [chunk(), chunk(text[:4]), chunk(text[4:])]
    calls = [
        ("call_8fb40ff4820f4e58b7058e95", "mellon"),
        ("call_e9e2649998244b0f91551cf5", "radiance"),
    ]
    for index, (call_id, password) in enumerate(calls):
        chunks.append(chunk(calls=call(index, call_id, "secret_retrieval_tool", "")))
        for piece in ('{"password":', f' "{password}', '"}'):
            chunks.append(chunk(calls=call(index, None, None, piece)))
    usage = {
        "prompt_tokens": 191,
        "total_tokens": 251,
        "completion_tokens": 60,
        "prompt_tokens_details": None,
        "reasoning_tokens": 0,
    }
    last = chunk() | {"choices": [], "usage": usage}
    body = _sse(*chunks, chunk(finish="tool_calls"), last)
    check(
        summarize(replay_every_way(body, "together")),
        Expect(
            text=text,
            tools=tuple(
                (call_id, "secret_retrieval_tool", {"password": password})
                for call_id, password in calls
            ),
            usage=(191, 60, 0, 0, 251),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


def _openrouter(content: str, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "gen-1788799043-tMKoIZLqNgmIeZRT4hKN",
        "object": "chat.completion.chunk",
        "created": 1788799043,
        "model": "openai/gpt-4o-mini",
        "provider": "OpenAI",
        "system_fingerprint": "fp_54940053b1",
        **extra,
        "choices": [
            {
                "index": 0,
                "delta": {"content": content, "role": "assistant"},
                "finish_reason": finish,
                "native_finish_reason": finish,
            }
        ],
    }


def test_openrouter_says_its_finish_twice_the_second_time_with_the_cost() -> None:
    """Arize-ai/openinference python/instrumentation/openinference-instrumentation-agno/
    tests/openinference/instrumentation/agno/fixtures/
    agent_run_openrouter_cost_stream.yaml: after `: OPENROUTER PROCESSING`, "pong" and
    "." with the role on each, then two chunks each with an empty piece and finish
    `stop` (and `native_finish_reason` `stop`), only the second with the usage: 15 in,
    2 out, `cost` 0.00000345 with its `cost_details` and zeroed `cache_write_tokens`,
    `video_tokens`, `image_tokens`. The turn ends once, "pong.", its cost the usage's."""
    usage = {
        "prompt_tokens": 15,
        "completion_tokens": 2,
        "total_tokens": 17,
        "cost": 0.00000345,
        "is_byok": False,
        "prompt_tokens_details": {
            "cached_tokens": 0,
            "cache_write_tokens": 0,
            "audio_tokens": 0,
            "video_tokens": 0,
        },
        "cost_details": {
            "upstream_inference_cost": 0.00000345,
            "upstream_inference_prompt_cost": 0.00000225,
            "upstream_inference_completions_cost": 0.0000012,
        },
        "completion_tokens_details": {"reasoning_tokens": 0, "image_tokens": 0, "audio_tokens": 0},
    }
    body = b": OPENROUTER PROCESSING\n\n" + _sse(
        _openrouter("pong"),
        _openrouter("."),
        _openrouter("", "stop"),
        _openrouter("", "stop", service_tier=None) | {"usage": usage},
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(text="pong.", usage=(15, 2, 0, 0, 17), cost=0.00000345, model="openai/gpt-4o-mini"),
    )
    assert kinds(events) == ["text", "usage", "done"]


def test_cerebras_leaves_the_finish_out_until_the_last_chunk() -> None:
    """crewAIInc/crewAI lib/crewai/tests/cassettes/llms/cerebras/
    test_cerebras_streaming_completion.yaml (llama3.1-8b): the chunks carry no
    `finish_reason` key at all (not `null`) until the last, which has `stop`, the usage
    (`completion_tokens_details` with prediction counts) and Cerebras's `time_info`
    beside it. (The cassette's two `GET /v1/tcp_warming` answers before it are plain
    text the SDK sends for itself, not part of the stream.)"""

    def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        choice = {"delta": delta, "index": 0} | extra.pop("choice", {})
        return {
            "id": "chatcmpl-e4b66146-cac9-459a-9909-ddd5fb56b3fd",
            "choices": [choice],
            "created": 1778106830,
            "model": "llama3.1-8b",
            "system_fingerprint": "fp_96e7e4453bc38316a23a",
            "object": "chat.completion.chunk",
            **extra,
        }

    usage = {
        "total_tokens": 54,
        "completion_tokens": 11,
        "completion_tokens_details": {
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
            "reasoning_tokens": 0,
        },
        "prompt_tokens": 43,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    time_info = {"created": 1778106830.7255669, "queue_time": 0.00023963, "total_time": 0.0096}
    body = _sse(
        chunk({"role": "assistant"}),
        chunk({"content": "One"}),
        chunk({"content": ", two, three. What's next?"}),
        chunk({}, choice={"finish_reason": "stop"}, usage=usage, time_info=time_info),
    )
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(text="One, two, three. What's next?", usage=(43, 11, 0, 0, 54), model="llama3.1-8b"),
    )


def _writer(
    content: str | None = None, calls: list[dict[str, Any]] | None = None, finish: str | None = None
) -> dict[str, Any]:
    """A Writer chunk: the choice's `message` the same object as its `delta`, both with
    Writer's tool data fields (`graph_data` of nulls, `llm_data`, `web_search_data`...)."""
    delta = {
        "content": content,
        "role": "assistant",
        "tool_calls": calls,
        "graph_data": {"sources": None, "status": None, "subqueries": None},
        "llm_data": None,
        "image_data": None,
        "translation_data": None,
        "web_search_data": None,
        "refusal": None,
    }
    choice = {"index": 0, "finish_reason": finish, "message": delta, "delta": delta}
    return {
        "id": "1908e68d-0a48-4394-a155-d160bca81742",
        "object": "chat.completion.chunk",
        "choices": [choice | {"logprobs": None, "trace_details": None}],
        "created": 1756221269,
        "model": "palmyra-x4",
        "usage": None,
        "system_fingerprint": "v1",
        "service_tier": None,
    }


def test_writer_repeats_each_delta_as_the_choice_message_and_sends_no_done() -> None:
    """traceloop/openllmetry packages/opentelemetry-instrumentation-writer/tests/cassettes/
    test_chat/test_writer_async_streaming_chat_multiple_tool_call_requests_with_events_
    with_content.yaml (api.writer.com/v1/chat, palmyra-x4): every choice carries the same
    object twice, as `message` and as `delta`, with Writer's tool data fields all null;
    calls open with `arguments: null` and go on with `id`, `type` and `name` null; the
    finish chunk has `tool_calls: null`, the usage comes alone (`prompt_token_details:
    null`) and the stream ends there, with no `[DONE]`. Seven calls in the recording, two
    kept here: each once, whole, under its own id; 212 in, 153 out; `tool_use`."""
    calls = [("chatcmpl-tool-5ac885d9b1b5", "Zakopane"), ("chatcmpl-tool-368eedfd835c", "Warsaw")]
    chunks = [_writer()]
    for index, (call_id, city) in enumerate(calls):
        opened = {"index": index, "id": call_id, "type": "function"}
        chunks.append(
            _writer(calls=[opened | {"function": {"name": "get_weather", "arguments": None}}])
        )
        for piece in ('{"location":', f' "{city}"}}'):
            more = {"index": index, "id": None, "type": None}
            chunks.append(_writer(calls=[more | {"function": {"name": None, "arguments": piece}}]))
    usage = {
        "prompt_tokens": 212,
        "total_tokens": 365,
        "completion_tokens": 153,
        "prompt_token_details": None,
        "completion_tokens_details": None,
    }
    last = _writer() | {"choices": [], "usage": usage}
    body = _sse(*chunks, _writer(finish="tool_calls"), last, done=False)
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(
            tools=tuple((call_id, "get_weather", {"location": city}) for call_id, city in calls),
            usage=(212, 153, 0, 0, 365),
            text="",
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="palmyra-x4",
        ),
    )


def test_writer_text_said_once_though_each_piece_is_also_the_message() -> None:
    """traceloop/openllmetry packages/opentelemetry-instrumentation-writer/tests/cassettes/
    test_metrics/test_writer_streaming_metrics.yaml (palmyra-x4): the first chunk's
    content is null, then each piece is the choice's `delta` and again its `message`.
    The text is said once."""
    pieces = ["Sure", ",", " here", "'s", " a", " joke", ":\n\n", "Why", " did", " it", "?"]
    body = _sse(_writer(), *(_writer(p) for p in pieces), _writer(finish="stop"), done=False)
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(text="".join(pieces), model="palmyra-x4"),
    )


def test_magistral_ends_its_thinking_with_an_empty_chunk_beside_the_first_text() -> None:
    """simonw/llm-mistral tests/fixtures/reasoning/magistral-high-stream.sse
    (magistral-small-latest): every chunk padded with Mistral's `p`; the thinking comes
    as content lists of `thinking` chunks, most marked `closed: true`, some not; the last
    list holds an empty `thinking` chunk and the first text ("3"), then the content turns
    into a plain string ("23") on the chunk with `stop` and the usage (`service_tier`
    inside it). The thinking is one reasoning, the answer "323", each said once."""

    def chunk(content: Any, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": {"content": content}, "finish_reason": finish}
        return {
            "id": "335cf94950be4e2cb4507cd8e29dd2d2",
            "object": "chat.completion.chunk",
            "created": 1791298607,
            "model": "magistral-small-latest",
            "choices": [choice],
            "p": "abcdefghijklm",
            **extra,
        }

    def thought(text: str, closed: bool = True) -> list[dict[str, Any]]:
        part = {"type": "thinking", "thinking": [{"type": "text", "text": text}]}
        return [part | {"closed": True}] if closed else [part]

    usage = {
        "prompt_tokens": 28,
        "total_tokens": 305,
        "completion_tokens": 277,
        "prompt_tokens_details": {"cached_tokens": 0},
        "service_tier": "standard",
    }
    first = chunk("")
    first["choices"][0]["delta"]["role"] = "assistant"
    del first["p"]
    body = _sse(
        first,
        chunk(""),
        chunk(thought("Okay, the")),
        chunk(thought(" user is asking for")),
        chunk(thought(" 17 \u00d7 19. I", closed=False)),
        chunk(thought(" know it is 323.")),
        chunk([{"type": "thinking", "thinking": []}, {"type": "text", "text": "3"}]),
        chunk("23", "stop", usage=usage),
    )
    check(
        summarize(replay_every_way(body, "mistral")),
        Expect(
            text="323",
            reasoning="Okay, the user is asking for 17 \u00d7 19. I know it is 323.",
            usage=(28, 277, 0, 0, 305),
            model="magistral-small-latest",
        ),
    )


# -- Anthropic Messages ------------------------------------------------------------------


def _message_start(message_id: str, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    message = {
        "model": model,
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "stop_details": None,
        "usage": usage,
    }
    return {"type": "message_start", "message": message}


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _json_block(index: int, block: dict[str, Any], *pieces: str) -> list[dict[str, Any]]:
    deltas = [_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces]
    return [_start(index, block), *deltas, _stop(index)]


def _text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    deltas = [_delta(index, {"type": "text_delta", "text": p}) for p in pieces]
    return [_start(index, {"type": "text", "text": ""}), *deltas, _stop(index)]


def _end(stop_reason: str, usage: dict[str, Any]) -> list[dict[str, Any]]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None, "stop_details": None}
    return [{"type": "message_delta", "delta": delta, "usage": usage}, {"type": "message_stop"}]


_START_USAGE = {
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    "service_tier": "standard",
    "inference_geo": "global",
}


def test_two_mcp_calls_the_server_ran_and_their_results_before_the_answer() -> None:
    """simonw/llm-anthropic tests/cassettes/test_anthropic/test_mcp_server_side_tool.yaml
    (claude-sonnet-4-6, beta `mcp-client-2025-11-20`, an `mcp_toolset` for the deepwiki
    server): `mcp_tool_use` blocks opened with `input: {}` and `server_name`, their input
    streamed (the first delta empty), each followed by its `mcp_tool_result` (`is_error`
    false, the content as text blocks), then the one-sentence answer; the final usage
    counts 4007 in, 245 out, `server_tool_use` all zero. Both calls are the server's
    (shown, never dispatched: no `tool_request`), each with its arguments and result, and
    the turn ends `stop`."""
    first, second = "mcptoolu_01PbkkWTpLrWH9wKk6kbgE4K", "mcptoolu_01BgcC6M6UBMRDveiriX3fhy"

    def use(call_id: str, name: str) -> dict[str, Any]:
        return {
            "type": "mcp_tool_use",
            "id": call_id,
            "name": name,
            "input": {},
            "server_name": "deepwiki",
        }

    def result(call_id: str, text: str) -> list[dict[str, Any]]:
        content = [{"type": "text", "text": text}]
        block = {"type": "mcp_tool_result", "tool_use_id": call_id, "is_error": False}
        return [_start(0, block | {"content": content}), _stop(0)]

    blocks = [
        *_json_block(
            0, use(first, "read_wiki_structure"), "", '{"repoName', '": "simonw', '/llm"}'
        ),
        *result(first, "Available pages for simonw/llm:\n\n- 1 Overview"),
        *_json_block(
            0,
            use(second, "ask_question"),
            "",
            '{"repoN',
            'ame"',
            ': "sim',
            'onw/llm"',
            ', "question"',
            ': "What does this repository do?"}',
        ),
        *result(second, "This repository, `simonw/llm`, provides a CLI tool."),
        *_text_block(0, "**", "`simonw/llm`** is a CLI tool and Python library."),
    ]
    for index, event in enumerate(blocks):  # each block at its own index, in order
        event["index"] = sum(1 for e in blocks[:index] if e["type"] == "content_block_stop")
    usage = {
        "input_tokens": 4007,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 245,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
    }
    body = _events(
        _message_start(
            "msg_011CdiPLDTXJznH4KWHARyGG",
            "claude-sonnet-4-6",
            {"input_tokens": 852, "output_tokens": 67} | _START_USAGE,
        ),
        *blocks,
        *_end("end_turn", usage),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="**`simonw/llm`** is a CLI tool and Python library.",
            usage=(4007, 245, 0, 0, 4252),
            raw_stop_reason="end_turn",
            model="claude-sonnet-4-6",
        ),
    )
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    question = {"repoName": "simonw/llm", "question": "What does this repository do?"}
    assert calls == [
        (first, "read_wiki_structure", {"repoName": "simonw/llm"}),
        (second, "ask_question", question),
    ]
    results = [e.call_id for e in events if isinstance(e, ServerToolResult)]
    assert results == [first, second]


def test_a_fallback_served_without_a_fallback_block() -> None:
    """Arize-ai/openinference python/instrumentation/openinference-instrumentation-
    anthropic/tests/openinference/anthropic/cassettes/test_server_side_fallback/
    test_anthropic_instrumentation_beta_messages_streaming_fallback.yaml: the request
    names `claude-fable-5` with `fallbacks: [{model: claude-opus-4-8}]`; the stream
    starts already as `claude-opus-4-8` (no `fallback` block), its text cut at 128
    tokens (`max_tokens`), and the final usage's `iterations` hold only the served
    `fallback_message` (42 in, 128 out), beside `output_tokens_details.thinking_tokens`
    0. The turn is the served model's: its text, 42 in, 128 out, `length`."""
    iterations = [
        {
            "input_tokens": 42,
            "output_tokens": 128,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "type": "fallback_message",
            "model": "claude-opus-4-8",
        }
    ]
    usage = {
        "input_tokens": 42,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 128,
        "output_tokens_details": {"thinking_tokens": 0},
        "iterations": iterations,
    }
    body = _events(
        _message_start(
            "msg_011CeTagmyNvN137DEtAYN5K",
            "claude-opus-4-8",
            {"input_tokens": 42, "output_tokens": 2} | _START_USAGE,
        ),
        _start(0, {"type": "text", "text": ""}),
        {"type": "ping"},
        _delta(0, {"type": "text_delta", "text": "I don"}),
        _delta(0, {"type": "text_delta", "text": "'t have a \"hidden chain\u2014"}),
        _delta(0, {"type": "text_delta", "text": "**Step 1: 20 \u00d7 "}),
        _stop(0),
        *_end("max_tokens", usage),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="I don't have a \"hidden chain\u2014**Step 1: 20 \u00d7 ",
            usage=(42, 128, 0, 0, 170),
            stop_reason="length",
            raw_stop_reason="max_tokens",
            model="claude-opus-4-8",
        ),
    )


def test_a_refusal_before_any_block_explained_only_in_its_stop_details() -> None:
    """simonw/llm-anthropic tests/cassettes/test_anthropic/test_refusal_raises.yaml
    (claude-fable-5-1, adaptive thinking `display: summarized`, asked for its raw chain
    of thought): `message_start` (`inference_geo: not_available`, 0 out) and then at once
    `message_delta` with stop_reason `refusal` and `stop_details` of category
    `reasoning_extraction` and an explanation; no content block at all. llm-anthropic's
    test expects the refusal raised with that explanation. The turn is the explanation as
    a refusal, no text, 97 in, 0 out, `content_filter`."""
    explanation = (
        "This request was blocked as it seems to violate Anthropic's Terms of Service "
        "restrictions on reverse engineering or duplicating model outputs."
    )
    start_usage = _START_USAGE | {"input_tokens": 97, "output_tokens": 0}
    start_usage["inference_geo"] = "not_available"
    del start_usage["service_tier"]
    stop_details = {
        "type": "refusal",
        "category": "reasoning_extraction",
        "explanation": explanation,
    }
    usage = {
        "input_tokens": 97,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
        "output_tokens_details": {"thinking_tokens": 0},
    }
    delta = {"stop_reason": "refusal", "stop_sequence": None, "stop_details": stop_details}
    body = _events(
        _message_start("msg_011Cef1BfCEZn512shRMGG4q", "claude-fable-5-1", start_usage),
        {"type": "message_delta", "delta": delta, "usage": usage},
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="",
            refusal=explanation,
            usage=(97, 0, 0, 0, 97),
            stop_reason="content_filter",
            raw_stop_reason="refusal",
            model="claude-fable-5-1",
        ),
    )
    assert kinds(events) == ["refusal", "usage", "done"]


def test_a_legacy_text_completions_stream_is_read_as_its_answer() -> None:
    """Arize-ai/openinference python/instrumentation/openinference-instrumentation-
    anthropic/tests/openinference/anthropic/cassettes/test_instrumentor/
    test_anthropic_instrumentation_completions_streaming.yaml (claude-2.1, `POST
    /v1/complete`, CRLF line ends): Anthropic's legacy Text Completions stream, one
    `completion` event a piece (`completion`, `stop_reason` null, `model`, `log_id`,
    padded inside the closing brace), a `ping` among them, and a last empty piece with
    `stop_reason: stop_sequence` and the `stop` that matched; no `message_*` event and
    no usage. The pieces are the answer and the last one ends the turn, `stop`. Before:
    each `completion` event was ignored as unknown and the body's end read as truncated
    and retryable, the answer lost."""

    def piece(text: str, stop_reason: str | None = None) -> dict[str, Any]:
        return {
            "type": "completion",
            "id": "compl_015dfgyiT7JLszAiMbGMtgeG",
            "completion": text,
            "stop_reason": stop_reason,
            "model": "claude-2.1",
            "stop": "\n\nHuman:" if stop_reason else None,
            "log_id": "compl_015dfgyiT7JLszAiMbGMtgeG",
        }

    payloads = [
        piece(" Light"),
        piece(" sc"),
        {"type": "ping"},
        piece("atters"),
        piece(" blue"),
        piece("."),
        piece("", "stop_sequence"),
    ]
    body = _events(*payloads).replace(b"\n", b"\r\n")
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text=" Light scatters blue.",
            raw_stop_reason="stop_sequence",
            model="claude-2.1",
        ),
    )
    assert events[-1].model_dump()["response_id"] == "compl_015dfgyiT7JLszAiMbGMtgeG"


# -- Gemini ------------------------------------------------------------------------------


def test_gemini_parallel_calls_in_one_chunk_without_ids() -> None:
    """crewAIInc/crewAI lib/crewai/tests/cassettes/llms/
    TestGeminiToolCallStreaming.test_gemini_streaming_multiple_tool_calls_unique_ids.yaml
    (gemini-2.0-flash, `alt=sse` with CRLF line ends): the whole answer in one chunk,
    two `functionCall` parts for the same function (Paris, London) with no `id`, and
    finish `STOP`. crewAI's test asks for two calls with distinct ids: two requests,
    distinct ids, the turn `tool_use`."""
    payload = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"functionCall": {"name": "get_current_temperature", "args": {"city": c}}}
                        for c in ("Paris", "London")
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 37,
            "candidatesTokenCount": 14,
            "totalTokenCount": 51,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 37}],
            "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 14}],
        },
        "modelVersion": "gemini-2.0-flash",
        "responseId": "h99baZTLOoSShMIPgYaAgQw",
    }
    body = f"data: {json.dumps(payload)}\r\n\r\n".encode()
    summary = summarize(replay_every_way(body, "google"))
    assert [(name, args) for _, name, args in summary.tool_calls] == [
        ("get_current_temperature", {"city": "Paris"}),
        ("get_current_temperature", {"city": "London"}),
    ]
    assert len({call_id for call_id, _, _ in summary.tool_calls}) == 2
    assert summary.usage is not None and summary.usage.total_tokens == 51
    assert (summary.terminal, summary.stop_reason, summary.raw_stop_reason) == (
        "done",
        "tool_use",
        "STOP",
    )


def _gemini_chunk(
    parts: list[dict[str, Any]], usage: dict[str, Any], response_id: str, finish: bool = False
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish:
        candidate["finishReason"] = "STOP"
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": "gemini-3-flash-preview",
        "responseId": response_id,
    }


def _pretty_array(*chunks: dict[str, Any]) -> bytes:
    """streamGenerateContent without `alt=sse`: one JSON array, pretty-printed, its
    elements separated by `\\n,\\n`."""
    return ("[" + "\n,\n".join(json.dumps(c, indent=2) for c in chunks) + "]").encode()


def test_gemini_3_as_a_pretty_printed_array_a_signed_call_then_an_empty_stop() -> None:
    """simonw/llm-gemini tests/cassettes/test_gemini/
    test_tools_with_gemini_3_thought_signatures.yaml (gemini-3-flash-preview, no
    `alt=sse`: a gzipped, pretty-printed JSON array): first a signed `functionCall`
    (`thoughtSignature` beside it, the thinking counted, 32, but not shown), then an
    empty text part with `STOP`, the usage the same in both. One call, its signature
    kept to send back; 60 in, 16 + 32 out; `tool_use`."""
    signature = "Et0BCtoBAXLI2nwMB4momyXTj+K3OPELPDi5Mq6bA5ZHuiKVF9m94gyxd+zdlC+s73nWx="
    usage = {
        "promptTokenCount": 60,
        "candidatesTokenCount": 16,
        "totalTokenCount": 108,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 60}],
        "thoughtsTokenCount": 32,
    }
    call = {"functionCall": {"name": "multiply", "args": {"y": 3, "x": 5}}}
    body = _pretty_array(
        _gemini_chunk([call | {"thoughtSignature": signature}], usage, "6XJFadi3PJOx-sAPgJ3S6Qs"),
        _gemini_chunk([{"text": ""}], usage, "6XJFadi3PJOx-sAPgJ3S6Qs", finish=True),
    )
    events = replay_every_way(body, "google")
    summary = summarize(events)
    assert [(name, args) for _, name, args in summary.tool_calls] == [
        ("multiply", {"y": 3, "x": 5})
    ]
    assert [e.signature for e in events if e.type == "tool_request"] == [signature]
    assert (summary.text, summary.reasoning) == ("", "")
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (60, 48)
    assert summary.usage.reasoning_tokens == 32
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


def test_gemini_3_array_whose_last_chunk_counts_more_prompt() -> None:
    """simonw/llm-gemini tests/cassettes/test_gemini/
    test_tools_with_gemini_3_thought_signatures.yaml, the second request (the call's
    result sent back): "5 times 3" and " is 15." each with a usage of 89 prompt tokens,
    then an empty text part with `STOP` whose usage counts 121 prompt tokens. The last
    count is the response's: "5 times 3 is 15.", 121 in, 9 out."""

    def usage(prompt: int, out: int) -> dict[str, Any]:
        return {
            "promptTokenCount": prompt,
            "candidatesTokenCount": out,
            "totalTokenCount": prompt + out,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        }

    rid = "6nJFaZPBLriWjMcPkf_q8Ac"
    body = _pretty_array(
        _gemini_chunk([{"text": "5 times 3"}], usage(89, 4), rid),
        _gemini_chunk([{"text": " is 15."}], usage(89, 9), rid),
        _gemini_chunk([{"text": ""}], usage(121, 9), rid, finish=True),
    )
    check(
        summarize(replay_every_way(body, "google")),
        Expect(
            text="5 times 3 is 15.",
            usage=(121, 9, 0, 0, 130),
            raw_stop_reason="STOP",
            model="gemini-3-flash-preview",
        ),
    )


# -- OpenAI Responses --------------------------------------------------------------------


def _responses(*payloads: dict[str, Any]) -> bytes:
    numbered = [p | {"sequence_number": n} for n, p in enumerate(payloads)]
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in numbered).encode()


def test_a_reasoning_item_added_already_encrypted_and_encrypted_again_when_done() -> None:
    """Arize-ai/openinference python/instrumentation/openinference-instrumentation-agno/
    tests/openinference/instrumentation/agno/fixtures/agent_run_reasoning_stream.yaml
    (o4-mini, `store: true`, summary `detailed`): the reasoning item is added with an
    `encrypted_content` of its own, then streams two summary parts (`summary_index` 0
    and 1, every delta with its `obfuscation`), and is done with another
    `encrypted_content`, the one `response.completed` lists; the response carries
    `reasoning.context`/`mode` and `tool_usage`, its usage `cache_write_tokens` beside
    `cached_tokens`. The two parts are one reasoning, a paragraph apart, signed once with
    the item's final blob; 36 in, 518 out of which 448 reasoning."""
    rs, msg = "rs_06a874b3b87dc3ad", "msg_06a874b3b87dc3ad"
    config = {"context": "current_turn", "effort": "high", "mode": "standard"}

    def response(status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return {
            "id": "resp_06a874b3b87dc3ad",
            "object": "response",
            "created_at": 1784827525,
            "status": status,
            "model": "o4-mini-2025-04-16",
            "output": output,
            "reasoning": config | {"summary": "detailed"},
            "tool_usage": {"web_search": {"num_requests": 0}},
            "usage": usage,
        }

    summaries = ["**Counting letters**\n\nThe user wants the r's.", "**Confirming**\n\nThree."]
    parts: list[dict[str, Any]] = []
    for index, summary in enumerate(summaries):
        at = {"item_id": rs, "output_index": 0, "summary_index": index}
        part = {"type": "summary_text", "text": summary}
        parts.append(
            at | {"type": "response.reasoning_summary_part.added", "part": part | {"text": ""}}
        )
        for piece in (summary[:9], summary[9:]):
            delta = {"delta": piece, "obfuscation": "9jOlI87"}
            parts.append(at | {"type": "response.reasoning_summary_text.delta"} | delta)
        parts.append(at | {"type": "response.reasoning_summary_text.done", "text": summary})
        parts.append(at | {"type": "response.reasoning_summary_part.done", "part": part})
    reasoning = {
        "id": rs,
        "type": "reasoning",
        "content": [],
        "encrypted_content": "gAAAAABqYk6LexQ6-final",
        "summary": [{"type": "summary_text", "text": s} for s in summaries],
    }
    text = "The letter \u201cr\u201d appears 3 times."
    output_text = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    message = {"id": msg, "type": "message", "status": "completed", "role": "assistant"}
    at = {"item_id": msg, "output_index": 1, "content_index": 0}
    deltas = [
        at | {"type": "response.output_text.delta", "delta": p, "logprobs": [], "obfuscation": "x"}
        for p in ("The letter \u201c", "r", "\u201d appears 3 times.")
    ]
    usage = {
        "input_tokens": 36,
        "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
        "output_tokens": 518,
        "output_tokens_details": {"reasoning_tokens": 448},
        "total_tokens": 554,
    }
    done_message = message | {"content": [output_text]}
    body = _responses(
        {"type": "response.created", "response": response("in_progress", [], None)},
        {"type": "response.in_progress", "response": response("in_progress", [], None)},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": reasoning | {"summary": [], "encrypted_content": "gAAAAABqYk6FCQ-added"},
        },
        *parts,
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": message | {"status": "in_progress", "content": []},
        },
        at | {"type": "response.content_part.added", "part": output_text | {"text": ""}},
        *deltas,
        at | {"type": "response.output_text.done", "text": text, "logprobs": []},
        at | {"type": "response.content_part.done", "part": output_text},
        {"type": "response.output_item.done", "output_index": 1, "item": done_message},
        {
            "type": "response.completed",
            "response": response("completed", [reasoning, done_message], usage),
        },
    )
    events = replay_every_way(body, "openai-responses")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text=text,
            reasoning="\n\n".join(summaries),
            signatures=1,
            usage=(36, 518, 448, 0, 554),
            raw_stop_reason="completed",
            model="o4-mini-2025-04-16",
        ),
    )
    assert summary.signatures == ["gAAAAABqYk6LexQ6-final"]
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


def test_openrouter_responses_a_bare_signed_reasoning_item_a_cost_and_done() -> None:
    """simonw/llm-openrouter tests/cassettes/test_llm_openrouter/test_reasoning.yaml
    (OpenRouter's /api/v1/responses, openai/gpt-5-nano, effort minimal): after a `: `
    comment, `data:` lines only (no `event:`); the reasoning item is added with no
    content and done with no summary but an `encrypted_content` (OpenRouter's, a `.`
    and a base64 tail naming the endpoint) and `format: openai-responses-v1`; the
    message's id is `msg_tmp_...`; the completed response's usage has OpenRouter's
    `cost` and `cost_details`; then `data: [DONE]`. The turn is "4", one empty
    reasoning carrying the blob with the item (its `format` kept to send back), 20 in,
    19 out, its cost 0.0000086."""
    rid, rs, msg = "gen-1785882693-G0Ba9AGVEVeNhHohmw0g", "rs_067d9e97", "msg_tmp_tx1kq1rrvym"
    response = {
        "id": rid,
        "object": "response",
        "created_at": 1785882693,
        "model": "openai/gpt-5-nano",
        "status": "in_progress",
        "completed_at": None,
        "output": [],
        "error": None,
        "incomplete_details": None,
        "max_output_tokens": 128,
        "store": False,
        "reasoning": {"effort": "minimal", "summary": "auto"},
        "prompt_cache_options": None,
        "usage": None,
    }
    blob = "gAAAAABqcmhGUY8i3Ww=.eyJlbmRwb2ludF9zbHVnIjoib3BlbmFpL2dwdC01LW5hbm8ifQ"
    reasoning = {
        "id": rs,
        "type": "reasoning",
        "status": "completed",
        "summary": [],
        "encrypted_content": blob,
        "format": "openai-responses-v1",
    }
    part = {"type": "output_text", "text": "4", "annotations": [], "logprobs": []}
    message = {"id": msg, "type": "message", "status": "completed", "role": "assistant"}
    at = {"output_index": 1, "item_id": msg, "content_index": 0}
    usage = {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 19,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 39,
        "cost": 0.0000086,
        "is_byok": False,
        "cost_details": {
            "upstream_inference_cost": 0.0000086,
            "upstream_inference_input_cost": 0.000001,
            "upstream_inference_output_cost": 0.0000076,
        },
    }
    completed = response | {
        "status": "completed",
        "completed_at": 1785882694,
        "output": [reasoning, message | {"content": [part]}],
        "reasoning": {"effort": "minimal", "summary": "detailed", "context": "current_turn"},
        "usage": usage,
    }
    payloads = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": rs, "type": "reasoning", "status": "in_progress", "summary": []},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": message | {"status": "in_progress", "content": []},
        },
        at | {"type": "response.content_part.added", "part": part | {"text": ""}},
        at | {"type": "response.output_text.delta", "delta": "4", "logprobs": []},
        at | {"type": "response.output_text.done", "text": "4", "logprobs": []},
        at | {"type": "response.content_part.done", "part": part},
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": message | {"content": [part]},
        },
        {"type": "response.completed", "response": completed},
    ]
    lines = [f"data: {json.dumps(p | {'sequence_number': n})}\n\n" for n, p in enumerate(payloads)]
    body = (": \n\n" + "".join(lines) + "data: [DONE]\n\n").encode()
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="4",
            signatures=1,
            usage=(20, 19, 0, 0, 39),
            cost=0.0000086,
            raw_stop_reason="completed",
            model="openai/gpt-5-nano",
        ),
    )
    thought = next(e for e in events if isinstance(e, ReasoningDelta))
    assert thought.signature == blob
    assert thought.model_dump()["details"]["format"] == "openai-responses-v1"


def test_gemini_calls_with_their_own_ids_one_per_chunk_only_the_first_signed() -> None:
    """Arize-ai/openinference python/instrumentation/openinference-instrumentation-
    google-genai/tests/cassettes/test_instrumentation/
    test_streaming_reasoning_with_multiple_tool_calls.yaml (gemini-3.5-flash, thoughts
    asked for at level LOW): two `functionCall`s in two chunks, each with Gemini's own
    `id`, only the first with a `thoughtSignature` (the 93 thinking tokens counted, no
    thought text), then an empty text part with `STOP`; the usage names its
    `serviceTier`. The calls keep Gemini's ids (the ids its function responses answer),
    the signature stays on the first, and the turn is `tool_use`: 71 in, 33 + 93 out."""

    def chunk(parts: list[dict[str, Any]], out: int, finish: bool = False) -> dict[str, Any]:
        usage = {
            "promptTokenCount": 71,
            "candidatesTokenCount": out,
            "totalTokenCount": 71 + out + 93,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 71}],
            "thoughtsTokenCount": 93,
            "serviceTier": "standard",
        }
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = "STOP"
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-3.5-flash",
            "responseId": "FyIhav7bJNyw4-EP6eCsqA0",
        }

    def call(call_id: str, city: str) -> dict[str, Any]:
        return {"functionCall": {"name": "get_weather", "args": {"location": city}, "id": call_id}}

    signature = "EvsDCvgDAQw51sfOm202VhDM/fOzDucl3NeMekkiE7gOacjnPJ069JpRTXprcfTE6Ax6="
    payloads = [
        chunk([call("dv8szvqe", "Boston") | {"thoughtSignature": signature}], 16),
        chunk([call("j80tal12", "New Delhi")], 33),
        chunk([{"text": ""}], 33, finish=True),
    ]
    body = "".join(f"data: {json.dumps(p)}\r\n\r\n" for p in payloads).encode()
    events = replay_every_way(body, "google")
    summary = summarize(events)
    assert summary.tool_calls == [
        ("dv8szvqe", "get_weather", {"location": "Boston"}),
        ("j80tal12", "get_weather", {"location": "New Delhi"}),
    ]
    assert [e.signature for e in events if e.type == "tool_request"] == [signature, None]
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (71, 126)
    assert (summary.usage.reasoning_tokens, summary.usage.total_tokens) == (93, 197)
    assert (summary.terminal, summary.stop_reason, summary.model) == (
        "done",
        "tool_use",
        "gemini-3.5-flash",
    )


def test_a_google_interactions_stream_says_what_it_is() -> None:
    """Arize-ai/openinference python/instrumentation/openinference-instrumentation-
    google-genai/tests/cassettes/test_interactions_instrumentation/
    test_interactions_with_thinking_stream.yaml (`POST /v1beta/interactions`,
    gemini-2.5-flash): Google's Interactions API streams another wire, each payload
    naming its `event_type` (`interaction.created`, `step.start` of a `thought` or
    `model_output` step, `step.delta` with a `thought_summary`, a `thought_signature` or
    text, `step.stop`, `interaction.completed` with the usage), then `event: done` with
    `data: [DONE]`. The Gemini wire reads `streamGenerateContent`: the stream ends in a
    protocol error that names the Interactions API, at its first event. Before: every
    payload was logged as fields no event carries (the answer lost unsaid) and the error
    blamed the `[DONE]` line."""
    interaction = {
        "id": "v1_Chc0UWdqYXJtSkt2T21qdU1QNF8zRzJBcxIX",
        "status": "in_progress",
        "object": "interaction",
        "model": "gemini-2.5-flash",
    }
    usage = {"total_tokens": 179, "total_input_tokens": 11, "total_output_tokens": 42}
    payloads = [
        ("interaction.created", {"interaction": interaction}),
        ("step.start", {"index": 0, "step": {"type": "model_output"}}),
        ("step.delta", {"index": 0, "delta": {"text": "The sky is blue.", "type": "text"}}),
        ("step.stop", {"index": 0}),
        (
            "interaction.completed",
            {"interaction": interaction | {"status": "completed", "usage": usage}},
        ),
    ]
    body = "".join(
        f"event: {name}\ndata: {json.dumps(data | {'event_type': name})}\n\n"
        for name, data in payloads
    )
    body += "event: done\ndata: [DONE]\n\n"
    events = replay_every_way(body.encode(), "google")
    assert kinds(events) == ["error"]
    error = events[-1].model_dump()["error"]
    assert error["kind"] == "protocol"
    assert "Interactions API" in error["message"]
