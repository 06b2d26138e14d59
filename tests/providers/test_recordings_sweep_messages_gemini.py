"""Anthropic Messages and Gemini streams from apps' and gateways' code and test fixtures:
claude-code-router's `/v1/messages` bridge (musistudio/llms, its Anthropic transformer,
which writes this wire from an OpenAI-compatible upstream), Envoy AI Gateway's bridge
of the same kind, LobeChat's model-runtime stream tests (Anthropic and Gemini), in
shapes no other test replays.

Each body is written by hand from the source named beside it (its essential events,
ids and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, Failed, ServerToolResult
from tests.support import Expect, check, kinds, replay_every_way, summarize

# -- Anthropic Messages -------------------------------------------------------------------


def _messages(*payloads: dict[str, Any]) -> bytes:
    """Named SSE events, each under its own `type`."""
    return b"".join(
        f"event: {p['type']}\ndata: {json.dumps(p, ensure_ascii=False)}\n\n".encode()
        for p in payloads
    )


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _text(index: int, text: str) -> dict[str, Any]:
    return _delta(index, {"type": "text_delta", "text": text})


def _json(index: int, partial: str) -> dict[str, Any]:
    return _delta(index, {"type": "input_json_delta", "partial_json": partial})


def _end(stop_reason: str, **usage: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage,
        },
        {"type": "message_stop"},
    )


# claude-code-router opens every message with zero usage and its own id and the
# upstream's model; the counts come in the `message_delta` it holds until the end.
_CCR_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1751",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "deepseek-chat",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    },
}


def test_claude_code_router_error_object_under_message_is_read_as_anthropics() -> None:
    """musistudio/llms src/transformer/anthropic.transformer.ts
    (`convertOpenAIStreamToAnthropic`, claude-code-router's bridge): an upstream chunk
    holding `error` (OpenRouter's in-band `{"error": {"message", "code": 502,
    "metadata"}}`) becomes `event: error` with `{"type": "error", "message": {"type":
    "api_error", "message": <the upstream error as JSON>}}`: Anthropic's error object
    under `message`, not `error`. The bridge goes on, and at the end of the body
    closes with a `message_delta` of `end_turn` and zero usage and `message_stop`.
    The error ends the turn, read as Anthropic's own `api_error`: status 500 and the
    type as its code, as the recovery policy reads that HTTP error. Before: status
    and code were None and the message was the whole object as JSON."""
    upstream = {
        "message": "Provider returned error",
        "code": 502,
        "metadata": {"raw": "upstream connect error", "provider_name": "Chutes"},
    }
    error = {"type": "error", "message": {"type": "api_error", "message": json.dumps(upstream)}}
    # the first upstream chunk an error: no `message_start` before it
    events = replay_every_way(
        _messages(error, *_end("end_turn", input_tokens=0, output_tokens=0)), "anthropic"
    )
    assert kinds(events) == ["error"]
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.kind == "stream_error"
    assert failed.error.status == 500
    assert failed.error.code == "api_error"
    assert failed.error.message == f"{json.dumps(upstream)} (api_error)"
    assert failed.error.retryable

    # an error after text: the text stays, the error ends the turn, what follows is not
    # read as a natural end
    events = replay_every_way(
        _messages(
            _CCR_START,
            _start(0, {"type": "text", "text": ""}),
            _text(0, "Par"),
            error,
            _stop(0),
            *_end("end_turn", input_tokens=0, output_tokens=0, cache_read_input_tokens=0),
        ),
        "anthropic",
    )
    check(
        summarize(events),
        Expect(text="Par", terminal="error", error_kind="stream_error"),
    )
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert (failed.error.status, failed.error.code) == (500, "api_error")


def test_claude_code_router_starts_a_call_at_the_index_of_the_text_it_closed() -> None:
    """musistudio/llms anthropic.transformer.ts: the text block starts at `contentIndex`
    without moving it on, so the first tool call, which closes the text, starts at the
    same index (0) and moves it on; the next call starts at 1. Its `message_delta`
    carries `input_tokens` and `cache_read_input_tokens` beside the output, after a
    `message_start` of zeros. The text, both calls with their arguments, the usage of
    the `message_delta` and `tool_use`."""
    body = _messages(
        _CCR_START,
        _start(0, {"type": "text", "text": ""}),
        _text(0, "Let me read both."),
        _stop(0),
        _start(0, {"type": "tool_use", "id": "call_a1", "name": "Read", "input": {}}),
        _json(0, '{"file_path":'),
        _json(0, '"/src/a.ts"}'),
        _stop(0),
        _start(1, {"type": "tool_use", "id": "call_b2", "name": "Read", "input": {}}),
        _json(1, '{"file_path":"/src/b.ts"}'),
        _stop(1),
        *_end("tool_use", input_tokens=1204, output_tokens=58, cache_read_input_tokens=0),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="Let me read both.",
            tools=(
                ("call_a1", "Read", {"file_path": "/src/a.ts"}),
                ("call_b2", "Read", {"file_path": "/src/b.ts"}),
            ),
            usage=(1204, 58, 0, 0, 1262),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="deepseek-chat",
        ),
    )


def test_claude_code_router_unsigned_thinking_then_text_at_the_same_index() -> None:
    """musistudio/llms anthropic.transformer.ts: a thinking block moves `contentIndex`
    on only when a signature comes; an upstream that signs nothing (DeepSeek's
    `reasoning_content` made `delta.thinking`) has its thinking block closed by the
    first text, which starts at the same index 0. The reasoning, unsigned, then the
    text; `end_turn` is `stop`."""
    body = _messages(
        _CCR_START,
        _start(0, {"type": "thinking", "thinking": ""}),
        _delta(0, {"type": "thinking_delta", "thinking": "The user greets me."}),
        _stop(0),
        _start(0, {"type": "text", "text": ""}),
        _text(0, "Hello!"),
        _stop(0),
        *_end("end_turn", input_tokens=9, output_tokens=12, cache_read_input_tokens=0),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="Hello!",
            reasoning="The user greets me.",
            usage=(9, 12, 0, 0, 21),
            raw_stop_reason="end_turn",
            model="deepseek-chat",
        ),
    )


def test_claude_code_router_annotations_as_a_search_result_block_without_its_call() -> None:
    """musistudio/llms anthropic.transformer.ts: OpenAI `delta.annotations`
    (url_citation) close the text and become one `web_search_tool_result` block each,
    at the next index, with a made-up `srvtoolu_` id and no `server_tool_use` before
    it; the text that follows starts at that same index. Without usage from upstream
    the bridge's `message_delta` holds zeros. The text whole around it, one server
    tool result named after its type (no call seen), no usage event."""
    found = [{"type": "web_search_result", "title": "Notes", "url": "https://d.example/r"}]
    block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9f", "content": found}
    body = _messages(
        _CCR_START,
        _start(0, {"type": "text", "text": ""}),
        _text(0, "Per the release notes"),
        _stop(0),
        _start(1, block),
        _stop(1),
        _start(1, {"type": "text", "text": ""}),
        _text(1, ", it shipped in May."),
        _stop(1),
        *_end("end_turn", input_tokens=0, output_tokens=0, cache_read_input_tokens=0),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="Per the release notes, it shipped in May.",
            raw_stop_reason="end_turn",
            model="deepseek-chat",
        ),
    )
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(r.call_id, r.name, r.content) for r in results] == [
        ("srvtoolu_9f", "web_search", found)
    ]


def test_envoy_bridge_text_after_a_call_goes_to_the_calls_index() -> None:
    """envoyproxy/ai-gateway internal/translator/anthropic_openai.go and its stream
    state (`openAIStreamToAnthropicState`, /v1/messages served from an OpenAI chat
    upstream; `TestAnthropicToOpenAITranslator_ResponseBody_Streaming` asserts its
    events): `message_start` with the chunk's id and zero usage ("Input tokens are not
    yet known"), a call's block opened with `input: {}` and an id of `""` where the
    chunk had none, and text that comes after a call written as a `text_delta` at the
    open call's index, with no block of its own (the state opens a text block only
    when none is open). `message_delta` carries only `output_tokens`. The text is
    kept, the call keeps its arguments (its id made from its index), the usage is the
    output alone, `tool_use`."""
    body = _messages(
        {
            "type": "message_start",
            "message": {
                "id": "chatcmpl-xyz",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "gpt-4o",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        },
        _start(0, {"type": "tool_use", "id": "", "name": "get_weather", "input": {}}),
        _json(0, '{"location":'),
        _json(0, '"NYC"}'),
        _text(0, "Checking now."),
        _stop(0),
        *_end("tool_use", output_tokens=5),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="Checking now.",
            tools=(("toolu_0", "get_weather", {"location": "NYC"}),),
            usage=(0, 5, 0, 0, 5),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="gpt-4o",
        ),
    )


def test_lobechat_anthropic_call_opened_by_an_empty_fragment() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/anthropic.test.ts
    ("should handle tool use event and ReadableStream input", claude-3-sonnet-20240229):
    text, then a `tool_use` whose first `input_json_delta` is empty and whose
    arguments split after a CJK character; `message_delta` with `output_tokens` only.
    LobeChat shows the text and one call with `{"city": "杭州"}`. Its stream ends
    there; a wire body goes on to `message_stop`, added here."""
    body = _messages(
        {
            "type": "message_start",
            "message": {
                "id": "msg_017a",
                "type": "message",
                "role": "assistant",
                "model": "claude-3-sonnet-20240229",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 457, "output_tokens": 1},
            },
        },
        _start(0, {"type": "text", "text": ""}),
        _text(0, "好"),
        _text(0, "的:"),
        _stop(0),
        _start(
            1,
            {
                "type": "tool_use",
                "id": "toolu_01Wd",
                "name": "realtime-weather____fetchCurrentWeather",
                "input": {},
            },
        ),
        _json(1, ""),
        _json(1, '{"city": "'),
        _json(1, "杭"),
        _json(1, '州"}'),
        _stop(1),
        *_end("tool_use", output_tokens=83),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="好的:",
            tools=(("toolu_01Wd", "realtime-weather____fetchCurrentWeather", {"city": "杭州"}),),
            usage=(457, 83, 0, 0, 540),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="claude-3-sonnet-20240229",
        ),
    )


# -- Gemini -------------------------------------------------------------------------------


def _gemini(*payloads: dict[str, Any]) -> bytes:
    """`alt=sse` frames of the payloads."""
    return b"".join(f"data: {json.dumps(p, ensure_ascii=False)}\r\n\r\n".encode() for p in payloads)


def test_lobechat_gemini_3_signed_call_then_an_empty_text_with_the_finish() -> None:
    """lobehub/lobe-chat packages/model-runtime/src/core/streams/google/google-ai.test.ts
    ("should handle tool calls with thoughtSignature", gemini-3-pro-preview): a chunk of
    one `functionCall` with its `thoughtSignature` and no text, then a chunk whose only
    part is `{"text": ""}` with `finishReason: STOP`, both with the same usage
    (thoughts 196). LobeChat shows one call carrying the signature, `STOP`, and the
    usage (output 41 + 196). The call with its signature, no text, `tool_use`."""
    usage = {
        "promptTokenCount": 1171,
        "candidatesTokenCount": 41,
        "totalTokenCount": 1408,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1171}],
        "thoughtsTokenCount": 196,
    }
    args = {"query": '"version":', "repo": "lobehub/lobe-chat", "path": "package.json"}
    call = {"functionCall": {"name": "grep____searchGitHub____mcp", "args": args}}

    def chunk(part: dict[str, Any], **candidate: Any) -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"parts": [part], "role": "model"}, "index": 0, **candidate}
            ],
            "modelVersion": "gemini-3-pro-preview",
            "responseId": "UVcdaZ26",
            "usageMetadata": usage,
        }

    events = replay_every_way(
        _gemini(
            chunk({**call, "thoughtSignature": "123"}),
            chunk({"text": ""}, finishReason="STOP"),
        ),
        "google",
    )
    summary = summarize(events)
    assert len(summary.tool_calls) == 1
    call_id, name, arguments = summary.tool_calls[0]
    assert (name, arguments) == ("grep____searchGitHub____mcp", args)
    requests = [e for e in events if e.type == "tool_request"]
    assert [getattr(e, "signature", None) for e in requests] == ["123"]
    check(
        summary,
        Expect(
            text="",
            signatures=1,
            tools=((call_id, name, args),),
            usage=(1171, 237, 196, 0, 1408),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
            model="gemini-3-pro-preview",
        ),
    )


def test_lobechat_gemini_grounding_empty_then_whole_with_the_finish() -> None:
    """lobehub/lobe-chat google-ai.test.ts ("should handle groundingMetadata",
    gemini-2.5-flash-preview-04-17): the first text chunk carries `groundingMetadata:
    {}`, the last one (with STOP) the whole metadata: `searchEntryPoint`, two
    `groundingChunks` (web uri and title), `groundingSupports` and
    `webSearchQueries`. LobeChat shows the text, then one grounding of two citations
    (url and title each), then the usage. Both citations once, after the text, no
    cited text (a support segment is the answer's own text)."""
    uris = (
        "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXG1",
        "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXE9",
    )
    grounding = {
        "searchEntryPoint": {"renderedContent": "content\n"},
        "groundingChunks": [
            {"web": {"uri": uris[0], "title": "npmjs.com"}},
            {"web": {"uri": uris[1], "title": "google.dev"}},
        ],
        "groundingSupports": [
            {
                "segment": {"startIndex": 63, "endIndex": 67, "text": "1。"},
                "groundingChunkIndices": [0],
                "confidenceScores": [1],
            },
            {
                "segment": {"startIndex": 69, "endIndex": 187, "text": "SDK。"},
                "groundingChunkIndices": [1],
                "confidenceScores": [1],
            },
        ],
        "webSearchQueries": ["sdk latest version"],
    }

    def chunk(text: str, output: int, **candidate: Any) -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0, **candidate}
            ],
            "usageMetadata": {
                "promptTokenCount": 9,
                "candidatesTokenCount": output,
                "totalTokenCount": 9 + output,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 9}],
            },
            "modelVersion": "models/gemini-2.5-flash-preview-04-17",
        }

    events = replay_every_way(
        _gemini(
            chunk("123", 18, groundingMetadata={}),
            chunk("45678", 122, finishReason="STOP", groundingMetadata=grounding),
        ),
        "google",
    )
    check(
        summarize(events),
        Expect(
            text="12345678",
            usage=(9, 122, 0, 0, 131),
            raw_stop_reason="STOP",
            model="models/gemini-2.5-flash-preview-04-17",
        ),
    )
    assert [(c.url, c.title, c.cited_text) for c in events if isinstance(c, Citation)] == [
        (uris[0], "npmjs.com", None),
        (uris[1], "google.dev", None),
    ]
    assert kinds(events) == ["text", "citation", "citation", "usage", "done"]


def test_lobechat_gemini_3_parallel_calls_each_in_its_chunk_only_the_first_signed() -> None:
    """lobehub/lobe-chat google-ai.test.ts ("should handle parallel tool calls",
    gemini-3-pro-preview): two calls of the same function, each alone in its chunk,
    only the first with a `thoughtSignature` (Gemini 3 signs the first call of a
    step), then `{"text": ""}` with STOP. LobeChat shows two calls, the first with
    the signature, and output 36 + 77. Two calls with distinct ids, the signature on
    the first only, `tool_use`."""
    usage = {
        "promptTokenCount": 72,
        "candidatesTokenCount": 36,
        "totalTokenCount": 185,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 72}],
        "thoughtsTokenCount": 77,
    }

    def chunk(part: dict[str, Any], **candidate: Any) -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"parts": [part], "role": "model"}, "index": 0, **candidate}
            ],
            "usageMetadata": usage,
            "modelVersion": "gemini-3-pro-preview",
            "responseId": "UDcdaZvi",
        }

    def call(city: str) -> dict[str, Any]:
        return {"functionCall": {"name": "get_current_temperature", "args": {"location": city}}}

    events = replay_every_way(
        _gemini(
            chunk({**call("Paris"), "thoughtSignature": "ErEDCq4DAdHtim"}),
            chunk(call("London")),
            chunk({"text": ""}, finishReason="STOP"),
        ),
        "google",
    )
    summary = summarize(events)
    ids = [call_id for call_id, _, _ in summary.tool_calls]
    assert len(set(ids)) == 2
    requests = [e for e in events if e.type == "tool_request"]
    assert [getattr(e, "signature", None) for e in requests] == ["ErEDCq4DAdHtim", None]
    check(
        summary,
        Expect(
            text="",
            signatures=1,
            tools=(
                (ids[0], "get_current_temperature", {"location": "Paris"}),
                (ids[1], "get_current_temperature", {"location": "London"}),
            ),
            usage=(72, 113, 77, 0, 185),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
            model="gemini-3-pro-preview",
        ),
    )
