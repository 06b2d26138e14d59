"""Streams from AI gateways' and relays' code and test fixtures, and from the chat apps
that read them: Portkey's stream transforms (Anthropic, Bedrock, Gemini), Envoy AI
Gateway's data-plane test, Kong's ai-proxy streaming spec and fixtures, TensorZero's
OpenAI-compatible streaming, new-api's relay tests and its `/v1/messages` converter, a
GitHub Copilot gateway's (caozhiyuan/copilot-api) stream tests, and LobeChat's
model-runtime stream tests (LiteLLM, Azure, Qwen-VL, Spark), in shapes no other test
replays.

Each body is written by hand from the source named beside it (its essential chunks,
ids and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize

# -- OpenAI chat and its compatible family ------------------------------------------------


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def test_litellm_closes_a_thinking_block_with_a_call_of_no_id_no_name_at_index_minus_one() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/openai/openai.test.ts
    ("should handle claude reasoning in litellm openai mode", claude-3-7-sonnet-latest
    through LiteLLM's proxy): the thinking streams as `reasoning_content` beside
    `thinking_blocks` (on the delta and again on the chunk), then, where the thinking
    block stops, `tool_calls: [{function: {arguments: "{}"}, type: "function", index:
    -1}]`: no id, no name. LiteLLM's `check_empty_tool_call_args` wrote it at every
    block stop that was not text (`tool_index` starts at -1; thinking was excluded
    later). LobeChat shows the reasoning, then the text, then `stop`, and no call.
    Before: a nameless call with a made-up id was requested and the turn said
    `tool_use`."""
    model = "claude-3-7-sonnet-latest"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta}
        if finish is not None:
            choice["finish_reason"] = finish
        return {
            "id": "1",
            "created": 1740505568,
            "model": model,
            "object": "chat.completion.chunk",
            "choices": [choice],
            **extra,
        }

    def thinking(text: str) -> list[dict[str, Any]]:
        return [{"type": "thinking", "thinking": text, "signature_delta": None}]

    body = _sse(
        chunk(
            {
                "thinking_blocks": thinking("我需要找出394的所有质"),
                "reasoning_content": "我需要找出394的所有质",
                "content": "",
                "role": "assistant",
            },
            thinking_blocks=thinking("我需要找出394的所有质"),
        ),
        chunk(
            {
                "thinking_blocks": thinking("因数。\n\n质因数是"),
                "reasoning_content": "因数。\n\n质因数是",
                "content": "",
            },
            thinking_blocks=thinking("因数。\n\n质因数是"),
        ),
        chunk(
            {
                "content": "",
                "tool_calls": [{"function": {"arguments": "{}"}, "type": "function", "index": -1}],
            }
        ),
        chunk({"content": "要找出394的质因数 "}),
        chunk({"content": "2和197。"}),
        chunk({}, "stop"),
        done=False,
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="要找出394的质因数 2和197。",
            reasoning="我需要找出394的所有质因数。\n\n质因数是",
            model=model,
        ),
    )
    assert kinds(events) == ["reasoning", "text", "done"]
    assert any("no id and no name" in message for message in messages)


def _portkey(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    model: str = "claude-3-7-sonnet-20250219",
    **extra: Any,
) -> dict[str, Any]:
    """A chunk as Portkey's gateway writes one from a native stream (its `provider` key
    beside the OpenAI ones)."""
    choice = {"delta": delta or {}, "index": 0, "logprobs": None, "finish_reason": finish}
    return {
        "id": "portkey-6b8a7f1c-2a7e-4c0e-9f4e-8d1b2c3a4e5f",
        "object": "chat.completion.chunk",
        "created": 1740000000,
        "model": model,
        "provider": "anthropic",
        "choices": [choice],
        **extra,
    }


def test_portkey_writes_an_anthropic_error_event_as_its_type_in_finish_reason() -> None:
    """Portkey-AI/gateway src/providers/anthropic/chatComplete.ts
    (`AnthropicChatCompleteStreamChunkTransform`; the same in its Vertex AI and
    Bedrock transforms of Claude): Anthropic's mid-stream `error` event becomes a chunk
    of `model: ""` whose one choice (no index) has `delta: {content: ""}` and the error's
    type as `finish_reason`, then `data: [DONE]`; the message is not kept. The turn
    failed: an error that names the type, the text before it kept, nothing of it
    dispatched. Before: `done` with stop reason `other`, a success."""
    failure = _portkey({"content": ""}, "overloaded_error", model="")
    del failure["choices"][0]["index"], failure["choices"][0]["logprobs"]
    body = _sse(
        _portkey({"content": ""}),
        _portkey({"content": "Autumn leaves"}),
        failure,
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="Autumn leaves", terminal="error", error_kind="stream_error"),
    )
    error = events[-1].model_dump()["error"]
    assert error["code"] == "overloaded_error"
    assert "overloaded_error" in error["message"]


def test_portkey_claude_thinking_in_content_blocks_with_its_signature_and_a_redacted_block() -> (
    None
):
    """Portkey-AI/gateway src/providers/anthropic/chatComplete.ts with
    `strict_open_ai_compliance: false`, the setting Portkey's "Thinking Mode" page
    requires ("the thinking content is in `response_chunk.choices[0].delta.content_blocks`"):
    each Anthropic block event becomes `content_blocks: [{index, delta}]`, the block's
    start or delta with its `type` deleted: `{thinking: "", signature: ""}` at a thinking
    block's start, `{thinking}` pieces, `{signature}`, a redacted block's start as
    `{data}`, and the text blocks' `{text}` beside the same text in `content`. The
    `message_delta` becomes the finish (`end_turn`, as Anthropic said it) with the usage,
    the cache counts beside it under Anthropic's names. The thinking is reasoning, the
    signature and the redacted data kept, the text said once."""
    body = _sse(
        _portkey({"content": ""}),
        _portkey({"content_blocks": [{"index": 0, "delta": {"thinking": "", "signature": ""}}]}),
        _portkey({"content_blocks": [{"index": 0, "delta": {"thinking": "The user wants "}}]}),
        _portkey({"content_blocks": [{"index": 0, "delta": {"thinking": "a haiku."}}]}),
        _portkey(
            {"content_blocks": [{"index": 0, "delta": {"signature": "EqQBCgIYAhIM1gbcDa9G"}}]}
        ),
        _portkey({"content_blocks": [{"index": 1, "delta": {"data": "EmwKAhgBEgy3va3pzix"}}]}),
        _portkey({"content_blocks": [{"index": 2, "delta": {"text": ""}}]}),
        _portkey(
            {"content": "Autumn", "content_blocks": [{"index": 2, "delta": {"text": "Autumn"}}]}
        ),
        _portkey(
            {"content": " leaves", "content_blocks": [{"index": 2, "delta": {"text": " leaves"}}]}
        ),
        _portkey(
            {},
            "end_turn",
            usage={
                "completion_tokens": 50,
                "prompt_tokens": 30,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 20,
                "total_tokens": 200,
            },
        ),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Autumn leaves",
            reasoning="The user wants a haiku.",
            signatures=2,
            usage=(30, 50, 0, 100, 200),
            cache_write=20,
            raw_stop_reason="end_turn",
            model="claude-3-7-sonnet-20250219",
        ),
    )
    reasoning = [e for e in events if e.type == "reasoning"]
    assert [(e.signature, e.redacted) for e in reasoning if e.signature] == [
        ("EqQBCgIYAhIM1gbcDa9G", False),
        ("EmwKAhgBEgy3va3pzix", True),
    ]
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


def test_portkey_claude_parallel_calls_both_at_index_0() -> None:
    """Portkey-AI/gateway src/providers/anthropic/chatComplete.ts: a `tool_use` block's
    start is a call opener `{index: toolIndex, id, type, function: {name, arguments:
    ""}}`, and `toolIndex` is set by `toolIndex ? toolIndex + 1 : 0`, so the second call
    of a turn is at index 0 again (0 is falsy); its `input_json_delta` pieces follow at
    that index, and the finish is Anthropic's `tool_use`. Two calls, each with its own
    arguments, as Ollama's parallel calls at index 0 are read."""

    def opener(call_id: str) -> dict[str, Any]:
        function = {"name": "get_weather", "arguments": ""}
        call = {"index": 0, "id": call_id, "type": "function", "function": function}
        return _portkey({"tool_calls": [call]})

    def piece(arguments: str) -> dict[str, Any]:
        return _portkey({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})

    body = _sse(
        _portkey({"content": ""}),
        _portkey({"content_blocks": [{"index": 0, "delta": {"text": ""}}]}),
        _portkey(
            {
                "content": "Checking both.",
                "content_blocks": [{"index": 0, "delta": {"text": "Checking both."}}],
            }
        ),
        opener("toolu_01A"),
        piece(""),
        piece('{"city": "Paris"}'),
        opener("toolu_01B"),
        piece('{"city": '),
        piece('"London"}'),
        _portkey(
            {},
            "tool_use",
            usage={
                "completion_tokens": 90,
                "prompt_tokens": 400,
                "cache_read_input_tokens": 1200,
                "total_tokens": 1690,
            },
        ),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Checking both.",
            tools=(
                ("toolu_01A", "get_weather", {"city": "Paris"}),
                ("toolu_01B", "get_weather", {"city": "London"}),
            ),
            usage=(400, 90, 0, 1200, 1690),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="claude-3-7-sonnet-20250219",
        ),
    )


def test_qwen_vl_content_as_a_list_of_parts_without_a_type() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/qwen.test.ts ("should
    handle vision model stream"; `QwenAIStream`, added with qwen-vl in lobehub#3114) and
    higress-group/higress#1221 (qwen-vl-plus's answer as DashScope gives it): a Qwen-VL
    delta's `content` is a list of parts with no `type`, `[{"text": ...}]`, and an image
    part `[{"image": url}]`. LobeChat shows the text and the image as a markdown link.
    The text part is text; the image part has no event (logged). Before: the text was
    lost, the turn read as empty."""
    model = "qwen-vl-plus"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "chatcmpl-3",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [choice],
        }

    body = _sse(
        chunk({"role": "assistant", "content": [{"text": "图中是一只小狗"}]}),
        chunk({"content": [{"text": "在草地上。"}]}),
        chunk({"content": [{"image": "https://hello.mock/test.png"}]}),
        chunk({}, "stop"),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="图中是一只小狗在草地上。", model=model))
    assert any("hello.mock/test.png" in message for message in messages)


def test_azure_chunks_with_empty_strings_for_role_finish_reason_and_logprobs() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/openai/openai.test.ts
    ("should handle content with tool_calls but is an empty object", the chunk quoted in
    its comment: gpt-4o-2024-05-13 on Azure): every delta has `role: ""` and
    `tool_calls: []`, the choice `finish_reason: ""` and `logprobs: ""`, the chunk
    `prompt_annotations`. An empty finish reason is no finish, an empty call list no
    call; the text reads, the turn ends at the real finish."""

    def chunk(delta: dict[str, Any], finish: str, **extra: Any) -> dict[str, Any]:
        choice = {
            "index": 0,
            "delta": {"role": "", "tool_calls": [], **delta},
            "finish_reason": finish,
            "logprobs": "",
        }
        return {
            "id": "chatcmpl-A7pokGUqSov0JuMkhiHhWU9GRtAgJ",
            "object": "chat.completion.chunk",
            "created": 1726430846,
            "model": "gpt-4o-2024-05-13",
            "choices": [choice],
            **extra,
        }

    annotations = [{"prompt_index": 0, "content_filter_results": None}]
    body = _sse(
        chunk({"content": "", "role": "assistant"}, "", prompt_annotations=annotations),
        chunk({"content": "Some"}, "", prompt_annotations=annotations),
        chunk({"content": " contents"}, ""),
        chunk({"content": ""}, "stop"),
    )
    events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="Some contents", model="gpt-4o-2024-05-13"))


def test_litellm_echoes_stream_options_and_sends_empty_choices_after_the_finish() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/openai/openai.test.ts
    ("should streaming litellm token usage", gpt-4o-mini through LiteLLM): every chunk
    echoes `stream_options: {include_usage: true}`; after the `stop` chunk comes a chunk
    whose one choice has an empty delta and no finish, then the usage on another such
    chunk (not on an empty `choices`). The finish waits for that usage: 1797 prompt,
    1720 completion."""

    def chunk(choice: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-c1f6a6a6-fcf8-463a-96bf-cf634d3e98a5",
            "created": 1741188068,
            "model": "gpt-4o-mini",
            "object": "chat.completion.chunk",
            "system_fingerprint": "fp_06737a9306",
            "choices": [choice],
            "stream_options": {"include_usage": True},
            **extra,
        }

    usage = {
        "completion_tokens": 1720,
        "prompt_tokens": 1797,
        "total_tokens": 3517,
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        "prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": 0},
    }
    body = _sse(
        chunk({"index": 0, "delta": {"content": " #"}}),
        chunk({"index": 0, "delta": {"content": "."}}),
        chunk({"finish_reason": "stop", "index": 0, "delta": {}}),
        chunk({"index": 0, "delta": {}}),
        chunk({"index": 0, "delta": {}}, usage=usage),
        done=False,
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text=" #.", usage=(1797, 1720, 0, 0, 3517), model="gpt-4o-mini"),
    )
    assert kinds(events) == ["text", "usage", "done"]


def test_envoy_ai_gateway_bedrock_calls_with_a_null_id_and_an_empty_name_on_each_fragment() -> None:
    """envoyproxy/ai-gateway tests/data-plane/testupstream_test.go ("aws - /v1/chat/
    completions - streaming with tool use": Converse stream events in, the chunks the
    gateway writes out): every delta repeats `role: "assistant"`; a call's argument
    fragment carries `id: null` and `name: ""` beside its index; the finish chunk's delta
    is `{content: "", role}`; the usage chunk has no `choices` key at all. Two calls, the
    text before them, the usage (41 in, 36 out)."""
    request_id = "2bc5b090-a26c-4007-9467-ce5adc4ffa1d"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": {**delta, "role": "assistant"}}
        if finish is not None:
            choice["finish_reason"] = finish
        return {
            "id": request_id,
            "choices": [choice],
            "created": 123,
            "model": "something",
            "object": "chat.completion.chunk",
        }

    def call(index: int, call_id: str | None, name: str, arguments: str) -> dict[str, Any]:
        entry = {
            "index": index,
            "id": call_id,
            "function": {"arguments": arguments, "name": name},
            "type": "function",
        }
        return chunk({"tool_calls": [entry]})

    body = _sse(
        chunk({"content": ""}),
        chunk({"content": "Don"}),
        chunk({"content": "'t worry, I'm here to help."}),
        call(0, "tooluse_QklrEHKjRu6Oc4BQUfy7ZQ", "cosine", ""),
        call(0, None, "", '{"x": "17"}'),
        call(1, "tooluse_stream2", "sine", ""),
        call(1, None, "", '{"x": "17"}'),
        chunk({"content": ""}, "tool_calls"),
        {
            "id": request_id,
            "created": 123,
            "model": "something",
            "object": "chat.completion.chunk",
            "usage": {"prompt_tokens": 41, "completion_tokens": 36, "total_tokens": 77},
        },
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Don't worry, I'm here to help.",
            tools=(
                ("tooluse_QklrEHKjRu6Oc4BQUfy7ZQ", "cosine", {"x": "17"}),
                ("tooluse_stream2", "sine", {"x": "17"}),
            ),
            usage=(41, 36, 0, 0, 77),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="something",
        ),
    )


def test_new_api_usage_then_a_cost_frame_without_usage() -> None:
    """QuantumNous/new-api relay/channel/openai/relay_openai_stream_usage_test.go
    (`TestOaiStreamHandler_UsageExtractedWhenCostMetadataFrameFollows`): an upstream sends
    the finish with its usage (42 prompt, 7 completion), then a frame of no choices,
    `usage: null` and `cost: {input, output}`. new-api's fix keeps the usage of the frame
    that had it; so does the turn here, and the cost object, which says no currency, is
    logged as a field with no event."""

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": "test-model",
            "choices": choices,
            **extra,
        }

    body = _sse(
        chunk(
            [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}]
        ),
        chunk(
            [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            usage={"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
        ),
        chunk([], usage=None, cost={"input": 0.01, "output": 0.002}),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="hi", usage=(42, 7, 0, 0, 49), model="test-model"))
    assert any("'cost'" in message for message in messages)


def test_new_api_relays_an_upstream_plain_text_line_as_it_came() -> None:
    """QuantumNous/new-api relay/channel/openai/relay_openai_stream_compat_test.go: a
    relayed upstream (zai-org/glm-5-maas on Vertex AI) writes `fault filter abort` as a
    data line; new-api wraps it into a chunk for Vertex channels and sends it as it came,
    `data: fault filter abort`, for the others. That line is not a chunk: the turn ends
    in an error that quotes it, after the text it had."""

    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]}

    body = _sse(
        chunk({"role": "assistant", "content": "Here is"}),
        "fault filter abort",
        done=False,
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="Here is", terminal="error", error_kind="protocol"),
    )
    assert "fault filter abort" in events[-1].model_dump()["error"]["message"]


def test_github_copilot_reasoning_text_closed_by_reasoning_opaque() -> None:
    """caozhiyuan/copilot-api tests/stream-translation-edge-cases.test.ts (a gateway in
    front of GitHub Copilot's chat completions, claude-3-5-sonnet-20241022 in its
    chunks): Copilot streams a Claude thinking block as `delta.reasoning_text` pieces and
    closes it with a delta of `content: ""` and `reasoning_opaque`, the block's opaque
    signature, which the gateway turns into Anthropic's `content_block_stop`. The
    thinking is reasoning, the opaque string its signature, then the text and a call.
    Before: both fields were logged as having no event, the reasoning lost."""
    model = "claude-3-5-sonnet-20241022"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {
            "id": "test-1",
            "object": "chat.completion.chunk",
            "created": 1677652288,
            "model": model,
            "choices": [choice],
        }

    opener = {
        "index": 0,
        "id": "toolu_01",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
    }
    body = _sse(
        chunk({"role": "assistant", "reasoning_text": "Let me think"}),
        chunk({"reasoning_text": " about the file."}),
        chunk({"content": "", "reasoning_opaque": "signature_data_here"}),
        chunk({"content": "Reading it."}),
        chunk({"tool_calls": [opener]}),
        chunk({}, "tool_calls"),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Reading it.",
            reasoning="Let me think about the file.",
            signatures=1,
            tools=(("toolu_01", "read_file", {"path": "README.md"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["reasoning", "text", "tool_start", "tool_request", "done"]
    assert [e.signature for e in events if e.type == "reasoning" and e.signature] == [
        "signature_data_here"
    ]


def test_portkey_gemini_thinking_in_content_blocks_and_a_signed_call() -> None:
    """Portkey-AI/gateway src/providers/google/chatComplete.ts
    (`GoogleChatCompleteStreamChunkTransform`, `strict_open_ai_compliance` off): each
    Gemini chunk becomes one chunk whose choice's delta is a whole message: a thought
    part is `content_blocks: [{index: 0, delta: {thinking}}]` beside `content: ""`, a
    chunk of calls is `tool_calls` (index = the part's place, an id Portkey makes) whose
    `function` carries the part's `thoughtSignature` as `thought_signature`, and a
    finish on a chunk of calls is `tool_calls`; the usage counts the thoughts in the
    completion and says them again as reasoning tokens. The thinking is reasoning, and
    the call keeps its signature (Gemini 3 answers 400 to a history whose calls lost
    it)."""
    model = "gemini-3-pro-preview"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": "portkey-4f1d2c3b",
            "object": "chat.completion.chunk",
            "created": 1764940862,
            "model": model,
            "provider": "google",
            "choices": [{"delta": delta, "index": 0, "finish_reason": finish}],
            **extra,
        }

    call = {
        "index": 0,
        "id": "portkey-2b7e0c8a-6f6e-4a52-9d8b-0c1c8e7f2a11",
        "type": "function",
        "function": {
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "thought_signature": "CiQB0e2Kb6qg1wOf5Xx",
        },
    }
    usage = {
        "prompt_tokens": 72,
        "completion_tokens": 95,
        "total_tokens": 167,
        "completion_tokens_details": {"reasoning_tokens": 77},
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    body = _sse(
        chunk(
            {
                "role": "assistant",
                "content": "",
                "content_blocks": [{"index": 0, "delta": {"thinking": "**Checking the weather**"}}],
            }
        ),
        chunk({"role": "assistant", "tool_calls": [call]}, "tool_calls", usage=usage),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="**Checking the weather**",
            tools=(
                ("portkey-2b7e0c8a-6f6e-4a52-9d8b-0c1c8e7f2a11", "get_weather", {"city": "Paris"}),
            ),
            usage=(72, 95, 77, 0, 167),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    requests = [e for e in events if e.type == "tool_request"]
    assert [r.signature for r in requests] == ["CiQB0e2Kb6qg1wOf5Xx"]


def test_portkey_gemini_grounding_beside_the_choice_is_cited() -> None:
    """Portkey-AI/gateway src/providers/google/chatComplete.ts (strict OpenAI compliance
    off): a Gemini candidate's `groundingMetadata` (Google Search grounding) is passed on
    beside the choice of the chunk it came in, as Gemini wrote it, and the finish as
    Gemini's word (`STOP`). Each grounding chunk's web page is a citation (its uri and
    title, as the Gemini wire reads them), once; the search entry point's HTML has no
    event. Before: the field was logged as having no event, the sources lost."""
    model = "gemini-2.5-flash"
    grounding = {
        "searchEntryPoint": {"renderedContent": "<style>.container{}</style>"},
        "groundingChunks": [
            {
                "web": {
                    "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXG1",
                    "title": "npmjs.com",
                }
            },
            {
                "web": {
                    "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXE9",
                    "title": "google.dev",
                }
            },
        ],
        "groundingSupports": [
            {
                "segment": {"startIndex": 3, "endIndex": 8, "text": "45678"},
                "groundingChunkIndices": [0, 1],
            }
        ],
        "webSearchQueries": ["sdk latest version"],
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **beside: Any) -> dict[str, Any]:
        choice = {"delta": delta, "index": 0, "finish_reason": finish, **beside}
        return {
            "id": "portkey-9a8b7c6d",
            "object": "chat.completion.chunk",
            "created": 1764940862,
            "model": model,
            "provider": "google",
            "choices": [choice],
        }

    body = _sse(
        chunk({"role": "assistant", "content": "123"}),
        chunk({"role": "assistant", "content": "45678"}, "STOP", groundingMetadata=grounding),
    )
    events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="12345678", raw_stop_reason="STOP", model=model))
    cited = [(e.url.rsplit("/", 1)[-1], e.title) for e in events if e.type == "citation"]
    assert cited == [("AbF9wXG1", "npmjs.com"), ("AbF9wXE9", "google.dev")]


def test_portkey_bedrock_claude_thinking_blocks_and_a_call_opened_without_arguments() -> None:
    """Portkey-AI/gateway src/providers/bedrock/chatComplete.ts
    (`BedrockChatCompleteStreamChunkTransform`, strict OpenAI compliance off): every
    Converse event becomes a chunk of `role: "assistant"` with no `finish_reason` key; a
    reasoning delta is `content_blocks: [{index, delta: {thinking}}]` or `{signature}`;
    a `toolUse` start is a call opener whose `arguments` is the start's `input`, absent
    on the wire, its input pieces follow at that index; the `metadata` event is the
    finish, Bedrock's own word (`tool_use`), with the usage, then `[DONE]`. The thinking,
    its signature, the text and one call, read as Bedrock's own wire says them."""

    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "portkey-bedrock-1",
            "object": "chat.completion.chunk",
            "created": 1740000000,
            "model": "",
            "provider": "bedrock",
            "choices": [{"index": 0, "delta": {"role": "assistant", **delta}}],
        }

    def thinking(delta: dict[str, str]) -> dict[str, Any]:
        return chunk({"content_blocks": [{"index": 0, "delta": delta}]})

    def piece(arguments: str) -> dict[str, Any]:
        call = {"index": 0, "type": "function", "function": {"arguments": arguments}}
        return chunk({"tool_calls": [call]})

    opener = {
        "index": 0,
        "id": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
        "type": "function",
        "function": {"name": "get_weather"},
    }
    finish = chunk({})
    finish["choices"][0]["delta"] = {}
    finish["choices"][0]["finish_reason"] = "tool_use"
    finish["usage"] = {"prompt_tokens": 420, "completion_tokens": 96, "total_tokens": 516}
    body = _sse(
        thinking({"thinking": "The user asks "}),
        thinking({"thinking": "for the weather."}),
        thinking({"signature": "EqoBCkgIARABGAIiQL"}),
        chunk(
            {
                "content": "Let me check.",
                "content_blocks": [{"index": 1, "delta": {"text": "Let me check."}}],
            }
        ),
        chunk({"tool_calls": [opener]}),
        piece('{"location":'),
        piece(' "Paris"}'),
        finish,
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Let me check.",
            reasoning="The user asks for the weather.",
            signatures=1,
            tools=(("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", {"location": "Paris"}),),
            usage=(420, 96, 0, 0, 516),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
        ),
    )


def test_spark_chunks_that_say_code_0_success_and_carry_the_usage_with_the_last_text() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/spark.ts (the chunk its
    comment quotes from iFlytek Spark's v1 endpoint): every chunk has `code: 0`,
    `message: "Success"` and a `sid` beside the choices; no finish reason ever comes,
    the last text chunk carries the usage, then `[DONE]`. The words "Success" are no
    error; the text, the usage, the turn ended by `[DONE]`."""
    sid = "cha000d05ef@dx196553ae415b80a432"

    def chunk(content: str, **extra: Any) -> dict[str, Any]:
        return {
            "code": 0,
            "message": "Success",
            "sid": sid,
            "id": sid,
            "created": 1745186655,
            "choices": [{"delta": {"role": "assistant", "content": content}, "index": 0}],
            **extra,
        }

    body = _sse(
        chunk("你好"),
        chunk("!"),
        chunk(" 😊", usage={"prompt_tokens": 1, "completion_tokens": 418, "total_tokens": 419}),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="你好! 😊", usage=(1, 418, 0, 0, 419), raw_stop_reason=None),
    )


def test_tensorzero_thoughts_in_its_extra_content_with_a_signature() -> None:
    """tensorzero/tensorzero tensorzero-core/src/endpoints/openai_compatible/streaming.rs
    (`ExtraContentBlockChunk`, `process_chat_content_chunk`) and its e2e test
    `test_extra_content_roundtrip_streaming`: TensorZero's OpenAI-compatible endpoint
    streams a model's thoughts as `delta.tensorzero_extra_content_experimental`, a list
    of `{type: "thought", insert_index, id, text, signature, summary_id, summary_text}`
    (the thought chunk flattened), beside `content`; each chunk has `episode_id`, an
    empty `system_fingerprint`, `usage: null` until the last. The thought's text is
    reasoning, its signature kept; the text and the usage read as usual. Before: the
    field was logged as having no event, the reasoning lost."""
    model = "tensorzero::model_name::anthropic::claude-sonnet-4-5"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "finish_reason": finish, "logprobs": None, "delta": delta}
        return {
            "id": "0196c681-1a0e-7d42-9f0b-7a3e5c2d1b00",
            "episode_id": "0196c681-19ff-7c31-8e0a-6b2d4c1a0f00",
            "choices": [choice],
            "created": 1747000000,
            "model": model,
            "system_fingerprint": "",
            "service_tier": None,
            "object": "chat.completion.chunk",
            "usage": None,
            **extra,
        }

    def thought(**fields: Any) -> dict[str, Any]:
        block = {"type": "thought", "insert_index": 0, "id": "0", "text": None, "signature": None}
        block.update({"summary_id": None, "summary_text": None, **fields})
        return {"tensorzero_extra_content_experimental": [block]}

    body = _sse(
        chunk({"role": "assistant", **thought(text="Two plus two ")}),
        chunk(thought(text="is four.")),
        chunk(thought(signature="ErUBCkYIBBgCIkAx")),
        chunk({"content": "4"}),
        chunk(
            {},
            "stop",
            usage={"prompt_tokens": 40, "completion_tokens": 25, "total_tokens": 65},
        ),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="4",
            reasoning="Two plus two is four.",
            signatures=1,
            usage=(40, 25, 0, 0, 65),
            model=model,
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


def test_minimax_web_search_sources_in_a_tool_role_delta_are_not_the_answer() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/openai/openai.ts (the
    chunk its comment quotes from MiniMax's built-in web search, abab6.5s-chat): the
    search's pages come first as a delta of `role: "tool"` with a `tool_call_id`, whose
    `content` is the JSON list of pages (`no`, `url`, `title`, `content`, `web_icon`),
    its finish `stop`; every chunk carries MiniMax's sensitivity flags and a usage of
    zeros until the last. LobeChat shows nothing of that delta. It is the search's
    result, a server tool result, and each page a citation, never the answer's text.
    Before: the JSON of the pages was the first text of the answer."""
    model = "abab6.5s-chat"
    pages = [
        {
            "no": 1,
            "url": "https://www.xiaohongshu.com/discovery/item/66d8de3c000000001f01e752",
            "title": "郑钦文为国而战",
            "content": "2024年08月03日 郑钦文夺得巴黎奥运会网球女单比赛金牌",
            "web_icon": "https://www.xiaohongshu.com/favicon.ico",
        }
    ]

    def chunk(delta: dict[str, Any], finish: str | None = None, **usage: int) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta}
        if finish is not None:
            choice["finish_reason"] = finish
        return {
            "id": "0483748a25071c611e2f48d2982fbe96",
            "choices": [choice],
            "created": 1748255114,
            "model": model,
            "object": "chat.completion.chunk",
            "usage": {"total_tokens": 0, "total_characters": 0, **usage},
            "input_sensitive": False,
            "output_sensitive": False,
            "input_sensitive_type": 0,
            "output_sensitive_type": 0,
            "output_sensitive_int": 0,
        }

    tool_delta = {
        "content": json.dumps(pages, ensure_ascii=False),
        "role": "tool",
        "tool_call_id": "call_function_6696730535",
    }
    body = _sse(
        chunk(tool_delta, "stop"),
        chunk({"content": "郑钦文夺得金牌。", "role": "assistant"}),
        chunk(
            {"content": "", "role": "assistant"},
            "stop",
            total_tokens=100,
            prompt_tokens=80,
            completion_tokens=20,
        ),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(text="郑钦文夺得金牌。", usage=(80, 20, 0, 0, 100), model=model),
    )
    results = [e for e in events if e.type == "server_tool_result"]
    assert [(r.call_id, r.name, r.content) for r in results] == [
        ("call_function_6696730535", "web_search", pages)
    ]
    cited = [(e.url, e.title) for e in events if e.type == "citation"]
    assert cited == [(pages[0]["url"], "郑钦文为国而战")]


def test_hunyuan_search_info_on_every_chunk_is_cited_once() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/openai/openai.ts ("in
    Hunyuan api, the citation is in every chunk": `search_info.search_results`, read
    beside Perplexity's `citations`, Wenxin's `search_results` and Zhipu's `web_search`):
    Tencent Hunyuan's OpenAI-compatible stream with search enhancement repeats
    `search_info: {search_results: [{index, title, url}]}` on every chunk. Each page is a
    citation, once. Before: the field was logged as having no event."""
    model = "hunyuan-turbos-latest"
    search_info = {
        "search_results": [
            {"index": 1, "title": "上海天气预报", "url": "https://weather.example.cn/shanghai"},
            {"index": 2, "title": "中国天气网", "url": "https://www.weather.com.cn/"},
        ]
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": "2a1f9c3e4b5d6e7f8a9b0c1d2e3f4a5b",
            "object": "chat.completion.chunk",
            "created": 1748255114,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "search_info": search_info,
            **extra,
        }

    body = _sse(
        chunk({"role": "assistant", "content": "上海今天"}),
        chunk({"content": "晴。"}),
        chunk(
            {},
            "stop",
            usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        ),
    )
    events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text="上海今天晴。", usage=(10, 5, 0, 0, 15), model=model))
    cited = [(e.url, e.title) for e in events if e.type == "citation"]
    assert cited == [
        ("https://weather.example.cn/shanghai", "上海天气预报"),
        ("https://www.weather.com.cn/", "中国天气网"),
    ]


# -- Anthropic Messages ------------------------------------------------------------------


def test_new_api_claude_format_from_an_openai_upstream_that_sent_no_finish() -> None:
    """QuantumNous/new-api relay/channel/openai/claude_stream_terminal_test.go and its
    converter (`StreamResponseOpenAI2Claude`, `FinalizeStreamResponseOpenAI2Claude`):
    new-api serving `/v1/messages` from an OpenAI-style upstream (coding-deepseek) that
    sent `reasoning_content`, then content, then `[DONE]` with no finish and no usage.
    It writes `message_start` with the prompt tokens it estimated, a thinking block
    started with `thinking: ""` and never signed, a text block, then a `message_delta` of
    `end_turn` whose `usage` is null, and `message_stop`. The reasoning and the text,
    `end_turn`, and the estimate as the only count there is."""
    message = {
        "id": "chatcmpl_1",
        "type": "message",
        "role": "assistant",
        "model": "coding-deepseek",
        "content": [],
        "usage": {"input_tokens": 100, "output_tokens": 0},
    }
    payloads: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "thinking"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "XAG_OK"},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "usage": None, "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="XAG_OK",
            reasoning="thinking",
            usage=(100, 0, 0, 0, 100),
            raw_stop_reason="end_turn",
            model="coding-deepseek",
        ),
    )


# -- Gemini ------------------------------------------------------------------------------


def test_kong_gemini_json_array_pretty_printed_with_blank_lines_inside_an_object() -> None:
    """Kong/kong spec/03-plugins/38-ai-proxy/09-streaming_integration_spec.lua (the
    `/gemini/llm/v1/chat/functions/good` mock): `streamGenerateContent` without
    `alt=sse` as Gemini writes it, one JSON array pretty-printed with CRLF line ends,
    and the mock adds a blank line after each piece it writes, one of them cut inside
    the candidate object: `[{...` then `"finishReason": ...}` then `]`. One call (add,
    a=2, b=12), its usage (47 in, 3 out), the model version."""
    response = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "add", "args": {"a": 2, "b": 12}}}],
                },
                "finishReason": "STOP",
                "safetyRatings": [
                    {
                        "category": "HARM_CATEGORY_HATE_SPEECH",
                        "probability": "NEGLIGIBLE",
                        "probabilityScore": 0.10498047,
                        "severity": "HARM_SEVERITY_NEGLIGIBLE",
                        "severityScore": 0.09423828,
                    }
                ],
            }
        ],
        "usageMetadata": {"promptTokenCount": 47, "candidatesTokenCount": 3, "totalTokenCount": 50},
        "modelVersion": "gemini-1.5-pro-001",
        "createTime": "2025-02-20T21:58:56.381597Z",
        "responseId": "oKW3Z52lF4762PgP4P6i4Ak",
    }
    pretty = json.dumps(response, indent=2).replace("\n", "\r\n")
    cut = pretty.index('      "finishReason"')
    body = f"[{pretty[:cut]}\n\n{pretty[cut:]}\n\n]\n\n".encode()
    events = replay_every_way(body, "google")
    calls = [(e.name, e.arguments) for e in events if e.type == "tool_request"]
    assert calls == [("add", {"a": 2, "b": 12})]
    summary = summarize(events)
    assert (summary.terminal, summary.stop_reason, summary.raw_stop_reason) == (
        "done",
        "tool_use",
        "STOP",
    )
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (47, 3)
    assert summary.model == "gemini-1.5-pro-001"


def test_vertex_model_armor_blocks_the_prompt_with_only_the_traffic_type_as_usage() -> None:
    """Kong/kong spec/fixtures/ai-proxy/gemini/llm-v1-chat/responses/
    fails-model-armor-floor.json (gemini-2.5-flash on Vertex AI behind a Model Armor
    floor setting): no candidates, `promptFeedback` of `blockReason: "MODEL_ARMOR"` with
    its `blockReasonMessage`, and a `usageMetadata` holding only `trafficType`. The turn
    ends as filtered, the raw reason kept, the message logged; no usage is made of a
    metadata that counts nothing."""
    response = {
        "usageMetadata": {"trafficType": "ON_DEMAND"},
        "createTime": "2025-09-13T22:15:16.223845Z",
        "promptFeedback": {
            "blockReasonMessage": "Blocked by Model Armor Floor Setting: The prompt violated "
            "Responsible AI Safety settings (Harassment), Prompt Injection and Jailbreak filters.",
            "blockReason": "MODEL_ARMOR",
        },
        "responseId": "9OzFaOXUDdyZgLUPmd2_sA0",
        "modelVersion": "gemini-2.5-flash",
    }
    body = f"data: {json.dumps(response)}\r\n\r\n".encode()
    with log_messages() as messages:
        events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="",
            stop_reason="content_filter",
            raw_stop_reason="MODEL_ARMOR",
            model="gemini-2.5-flash",
        ),
    )
    assert any("Model Armor Floor Setting" in message for message in messages)
