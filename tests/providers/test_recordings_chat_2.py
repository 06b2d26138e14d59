"""Chat-completions recordings of the public SDKs' test suites, replayed against their own
content.

Each stream is written by hand from the recording named beside it (its essential chunks:
ids, timestamps and padding shortened), replayed through the endpoint's preset whole and
cut at arbitrary byte boundaries, and checked against what the recording itself says: the
text and reasoning are the joined deltas, each call is one `tool_request` with the
recorded arguments, the usage is the recorded one (reasoning inside the output once,
cached input apart), the finish is the recorded one, and the same stream cut before its
finish is `truncated`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import Failed
from tests.support import Expect, check, replay, replay_every_way, summarize


def _sse(payloads: list[dict[str, Any]], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]} | top


def _usage(prompt: int, completion: int, total: int, **more: Any) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total} | more


def _call(index: int, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {"index": index, "id": call_id, "type": "function", "function": function}


def _args(index: int, arguments: str) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": arguments}}


GPT4O = "gpt-4o-2024-08-06"
KIMI = "kimi-k3"
MISTRAL = "mistral-small-latest"

# (source, provider, chunks, what the recording says); laid out by hand, chunk by chunk.
# fmt: off
RECORDINGS: list[tuple[str, str, list[dict[str, Any]], Expect]] = [
    (
        "vercel/ai packages/openai-compatible/src/chat/__fixtures__/"
        "issue-15789-step-1.chunks.txt: text, then a call with arguments `{}`",
        "openai",
        [
            _chunk({"role": "assistant", "content": "", "refusal": None}, model=GPT4O),
            _chunk({"content": "PRE"}, model=GPT4O),
            _chunk({"content": "_TOOL"}, model=GPT4O),
            _chunk(
                {"tool_calls": [_call(0, "call_NZa7xqfefoaMI2YYHowVXVlU", "weather")]}, model=GPT4O
            ),
            _chunk({"tool_calls": [_args(0, "{}")]}, model=GPT4O),
            _chunk({}, "tool_calls", model=GPT4O),
            {"id": "c1", "model": GPT4O, "choices": [], "usage": _usage(58, 12, 70)},
        ],
        Expect(
            text="PRE_TOOL",
            tools=(("call_NZa7xqfefoaMI2YYHowVXVlU", "weather", {}),),
            usage=(58, 12, 0, 0, 70),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=GPT4O,
        ),
    ),
    (
        "vercel/ai .../issue-15789-step-2.chunks.txt: the answer after the tool result",
        "openai",
        [
            _chunk({"role": "assistant", "content": "", "refusal": None}, model=GPT4O),
            _chunk({"content": "POST"}, model=GPT4O),
            _chunk({"content": "_TOOL"}, model=GPT4O),
            _chunk({}, "stop", model=GPT4O),
            {"id": "c1", "model": GPT4O, "choices": [], "usage": _usage(86, 2, 88)},
        ],
        Expect(text="POST_TOOL", usage=(86, 2, 0, 0, 88), model=GPT4O),
    ),
    (
        "vercel/ai packages/xai/src/__fixtures__/issue-19639-stream.chunks.txt (grok through "
        "Vercel's gateway): the finish, the usage (674 of 675 input tokens cached, `cost`) "
        "and the gateway's `provider_metadata` in one chunk",
        "xai",
        [
            _chunk({"role": "assistant"}, model="spacexai/grok-4.1-fast-non-reasoning"),
            _chunk({"content": "OK"}, model="spacexai/grok-4.1-fast-non-reasoning"),
            _chunk(
                {"provider_metadata": {"gateway": {"cost": "0.0000344"}}},
                "stop",
                model="spacexai/grok-4.1-fast-non-reasoning",
                usage=_usage(
                    675,
                    1,
                    676,
                    cost=0.0000344,
                    is_byok=False,
                    prompt_tokens_details={"cached_tokens": 674, "audio_tokens": 0},
                    completion_tokens_details={"reasoning_tokens": 0},
                    cost_details={"upstream_inference_cost": None},
                ),
                generationId="gen_01M0XGYX12KSMYGX0ATQG2BFTX",
            ),
        ],
        Expect(
            text="OK",
            usage=(1, 1, 0, 674, 676),
            cost=0.0000344,
            model="spacexai/grok-4.1-fast-non-reasoning",
        ),
    ),
    (
        "vercel/ai .../placeholder-first-chunk.chunks.txt: a first chunk with no choices and "
        'empty `id`, `model` and `object`, `"created": 0`',
        "custom",
        [
            {"choices": [], "created": 0, "id": "", "model": "", "object": ""},
            _chunk({"content": "Hello", "role": "assistant"}, model="actual-model-name"),
            _chunk({}, "stop", model="actual-model-name"),
            {"id": "c1", "model": "actual-model-name", "choices": [], "usage": _usage(10, 1, 11)},
        ],
        Expect(text="Hello", usage=(10, 1, 0, 0, 11), model="actual-model-name"),
    ),
    (
        "vercel/ai .../issue-20203-empty-tool-calls.chunks.txt: `tool_calls: []` on every "
        "delta, beside reasoning and text; the finish on the last text chunk",
        "custom",
        [
            _chunk({"role": "assistant", "content": "", "reasoning_content": "Think ",
                    "tool_calls": []}),
            _chunk({"content": "", "reasoning_content": "more...", "tool_calls": []}),
            _chunk({"content": "Hello", "reasoning_content": "", "tool_calls": []}, "stop"),
        ],
        Expect(text="Hello", reasoning="Think more...", model="m"),
    ),
    (
        "vercel/ai .../tiny-chunks.chunks.txt: reasoning and text a token a chunk",
        "custom",
        [_chunk({"role": "assistant", "reasoning_content": "First"})]
        + [
            _chunk({"reasoning_content": piece})
            for piece in [",", " the", " user", " said", ":", ' "', "Hello", '."', " That",
                          " is", " simple", "."]
        ]
        + [_chunk({"content": piece}) for piece in ["Hi", " there", "!"]]
        + [_chunk({}, "stop")],
        Expect(text="Hi there!", reasoning='First, the user said: "Hello." That is simple.',
               model="m"),
    ),
    (
        "vercel/ai .../anthropic-fallback-tool-call.sse (claude-haiku-4-5 through an "
        "OpenAI-compatible gateway): the call at `index` 1 after text, an empty fragment",
        "custom",
        [
            _chunk({"role": "assistant"}, model="claude-haiku-4-5-20251001"),
            _chunk({"content": "Reading"}, model="claude-haiku-4-5-20251001"),
            _chunk({"content": " it."}, model="claude-haiku-4-5-20251001"),
            _chunk({"tool_calls": [_call(1, "toolu_sanitized", "read_file")]}),
            _chunk({"tool_calls": [_args(1, "")]}),
            _chunk({"tool_calls": [_args(1, '{"pa')]}),
            _chunk({"tool_calls": [_args(1, 'th": "a.txt"}')]}),
            _chunk({}, "tool_calls", model="claude-haiku-4-5-20251001"),
        ],
        Expect(
            text="Reading it.",
            tools=(("toolu_sanitized", "read_file", {"path": "a.txt"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="claude-haiku-4-5-20251001",
        ),
    ),
    (
        "vercel/ai .../azure-text.chunks.txt: a prompt-filter chunk first, and after the "
        "finish a choice with only `content_filter_offsets` and results, then the usage",
        "azure-openai",
        [
            {"choices": [], "created": 0, "id": "", "model": "", "object": "",
             "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]},
            _chunk({"content": "", "refusal": None, "role": "assistant"}, model="gpt-4",
                   usage=None),
            _chunk({"content": "Hello"}, model="gpt-4", usage=None),
            _chunk({"content": " World"}, model="gpt-4", usage=None),
            _chunk({}, "stop", model="gpt-4", usage=None),
            {"id": "c1", "model": "gpt-4", "choices": [{"index": 0, "finish_reason": None,
             "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 11},
             "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}}}]},
            {"id": "c1", "model": "gpt-4", "choices": [], "usage": _usage(15, 5, 20)},
        ],
        Expect(text="Hello World", usage=(15, 5, 0, 0, 20), model="gpt-4"),
    ),
    (
        "vercel/ai packages/moonshotai/src/__fixtures__/"
        "moonshotai-stream-usage-precedence.chunks.txt: usage on the finish's choice, then "
        "other usage at the top level: the latest is the turn's",
        "custom",
        [
            _chunk({"content": "OK"}, model="kimi-k2.5"),
            {"id": "c1", "model": "kimi-k2.5", "choices": [{"index": 0, "delta": {},
             "finish_reason": "stop", "usage": _usage(12, 5, 17)}]},
            {"id": "c1", "model": "kimi-k2.5", "choices": [], "usage": _usage(99, 33, 132)},
        ],
        Expect(text="OK", usage=(99, 33, 0, 0, 132), model="kimi-k2.5"),
    ),
    (
        "vercel/ai .../moonshotai-metadata-live.chunks.txt (kimi-k3): reasoning, a call, the "
        "same usage on the finish's choice and again at the top level; the whole prompt cached",
        "custom",
        [
            _chunk({"role": "assistant", "content": ""}, model=KIMI),
            _chunk({"reasoning_content": "User"}, model=KIMI),
            _chunk({"reasoning_content": " explicitly asks"}, model=KIMI),
            _chunk({"reasoning_content": ""}, model=KIMI),
            _chunk({"tool_calls": [_call(0, "get_weather_0", "get_weather")]}, model=KIMI),
            _chunk({"tool_calls": [_args(0, '{"city": "Paris"}')]}, model=KIMI),
            {"id": "c1", "model": KIMI, "choices": [{"index": 0, "delta": {},
             "finish_reason": "tool_calls", "usage": _usage(213, 99, 312, cached_tokens=213,
             completion_tokens_details={"reasoning_tokens": 46},
             prompt_tokens_details={"cached_tokens": 213})}]},
            {"id": "c1", "model": KIMI, "choices": [], "usage": _usage(213, 99, 312,
             cached_tokens=213, completion_tokens_details={"reasoning_tokens": 46},
             prompt_tokens_details={"cached_tokens": 213})},
        ],
        Expect(
            reasoning="User explicitly asks",
            tools=(("get_weather_0", "get_weather", {"city": "Paris"}),),
            usage=(0, 99, 46, 213, 312),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=KIMI,
        ),
    ),
    (
        "vercel/ai .../moonshot-cached-tokens.chunks.txt: Moonshot's top-level "
        "`cached_tokens`, on the finish chunk",
        "custom",
        [
            _chunk({"role": "assistant", "content": ""}, model="kimi-k2.5", usage=None),
            _chunk({"content": "Hello"}, model="kimi-k2.5", usage=None),
            _chunk({"content": ", world!"}, model="kimi-k2.5", usage=None),
            _chunk({}, "stop", model="kimi-k2.5", usage=_usage(100, 10, 110, cached_tokens=80)),
        ],
        Expect(text="Hello, world!", usage=(20, 10, 0, 80, 110), model="kimi-k2.5"),
    ),
    (
        "vercel/ai packages/mistral/src/__fixtures__/mistral-empty-choices.chunks.txt: a "
        '`"choices": [], "usage": null` chunk mid-stream; the usage on the finish chunk',
        "mistral",
        [
            _chunk({"role": "assistant", "content": ""}, model=MISTRAL),
            {"id": "c1", "model": MISTRAL, "choices": [], "usage": None},
            _chunk({"content": "Hello!"}, model=MISTRAL),
            _chunk({"content": ""}, "stop", model=MISTRAL, usage=_usage(5, 3, 8)),
        ],
        Expect(text="Hello!", usage=(5, 3, 0, 0, 8), model=MISTRAL),
    ),
    (
        "vercel/ai .../mistral-usage-raw-live.chunks.txt: Mistral's `p` padding on chunks",
        "mistral",
        [
            _chunk({"role": "assistant", "content": ""}, model=MISTRAL),
            _chunk({"content": "OK"}, model=MISTRAL, p="abcdefghijklmnopqrstuvwxyz0123456789"),
            _chunk({"content": ""}, "stop", model=MISTRAL, p="abcdef", usage=_usage(19, 2, 21,
                   prompt_tokens_details={"cached_tokens": 0}, service_tier="standard")),
        ],
        Expect(text="OK", usage=(19, 2, 0, 0, 21), model=MISTRAL),
    ),
    (
        "vercel/ai .../mistral-incremental-tool-call.chunks.txt (zai-glm-5-2): the call's "
        'arguments in a fragment that repeats `"name": ""` and the type, `index` inside '
        "the delta too",
        "mistral",
        [
            _chunk({"tool_calls": [_call(0, "chatcmpl-tool-9f149c74c42f265b", "webSearchTool")],
                    "index": 0, "content": ""}, model="zai-glm-5-2"),
            _chunk({"tool_calls": [{"type": "function", "index": 0, "function": {
                    "name": "", "arguments": '{"query": "current Berlin weather"}'}}],
                    "index": 0, "content": ""}, model="zai-glm-5-2"),
            _chunk({"index": 0, "content": ""}, "tool_calls", model="zai-glm-5-2",
                   usage=_usage(171, 14, 185, prompt_tokens_details={"cached_tokens": 128})),
        ],
        Expect(
            tools=(("chatcmpl-tool-9f149c74c42f265b", "webSearchTool",
                    {"query": "current Berlin weather"}),),
            usage=(43, 14, 0, 128, 185),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="zai-glm-5-2",
        ),
    ),
    (
        "vercel/ai packages/deepseek/src/chat/__fixtures__/issue-19789-live-usage.chunks.txt "
        "(deepseek-v4-flash): cut by `length`, every output token reasoning",
        "deepseek",
        [
            _chunk({"role": "assistant", "content": ""}, model="deepseek-v4-flash", usage=None),
            _chunk({"content": "sanitized"}, "length", model="deepseek-v4-flash",
                   usage=_usage(88, 4, 92, prompt_tokens_details={"cached_tokens": 0},
                                completion_tokens_details={"reasoning_tokens": 4},
                                prompt_cache_hit_tokens=0, prompt_cache_miss_tokens=88)),
        ],
        Expect(text="sanitized", usage=(88, 4, 4, 0, 92), stop_reason="length",
               raw_stop_reason="length", model="deepseek-v4-flash"),
    ),
    (
        "vercel/ai .../issue-19381-thinking-reasoning.chunks.txt (deepseek-v4-pro): "
        '`"content": null` beside reasoning, cut by `length` while thinking',
        "deepseek",
        [
            _chunk({"role": "assistant", "content": None, "reasoning_content": ""},
                   model="deepseek-v4-pro", usage=None),
            _chunk({"content": None, "reasoning_content": "We"}, model="deepseek-v4-pro"),
            _chunk({"content": None, "reasoning_content": " need"}, model="deepseek-v4-pro"),
            _chunk({"content": "", "reasoning_content": None}, "length",
                   model="deepseek-v4-pro", usage=_usage(87, 2, 89,
                   completion_tokens_details={"reasoning_tokens": 2},
                   prompt_cache_hit_tokens=0, prompt_cache_miss_tokens=87)),
        ],
        Expect(reasoning="We need", usage=(87, 2, 2, 0, 89), stop_reason="length",
               raw_stop_reason="length", model="deepseek-v4-pro"),
    ),
    (
        "vercel/ai packages/cerebras/src/fixtures/cererebras-structured-output-tools.1."
        "chunks.txt (zai-glm-4.7, its first turn): choices without a `finish_reason` key "
        "until the end, `delta.reasoning`, a whole call, usage with cache and reasoning",
        "custom",
        [
            {"id": "c1", "choices": [{"delta": {"role": "assistant"}, "index": 0}],
             "model": "zai-glm-4.7"},
            {"id": "c1", "choices": [{"delta": {"reasoning": "The"}, "index": 0}],
             "model": "zai-glm-4.7"},
            {"id": "c1", "choices": [{"delta": {"reasoning": " user asks."}, "index": 0}],
             "model": "zai-glm-4.7"},
            {"id": "c1", "model": "zai-glm-4.7", "choices": [{"index": 0, "delta": {
             "tool_calls": [_call(0, "bbd2b9d98", "nonUsefulTool", "{}")]}}]},
            {"id": "c1", "model": "zai-glm-4.7", "time_info": {"queue_time": 0.003},
             "choices": [{"delta": {}, "finish_reason": "tool_calls", "index": 0}],
             "usage": _usage(322, 104, 426, prompt_tokens_details={"cached_tokens": 256},
                             completion_tokens_details={"reasoning_tokens": 97})},
        ],
        Expect(
            reasoning="The user asks.",
            tools=(("bbd2b9d98", "nonUsefulTool", {}),),
            usage=(66, 104, 97, 256, 426),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="zai-glm-4.7",
        ),
    ),
    (
        "vercel/ai packages/groq/src/__fixtures__/groq-json-tool-call.chunks.txt: the usage "
        "both in `x_groq` and at the top level, once",
        "groq",
        [
            _chunk({"role": "assistant", "content": None}, model="gemma2-9b-it",
                   x_groq={"id": "req_01kh52nj5yfcat8hrmvrk2j2hj", "seed": 689520654}),
            _chunk({"tool_calls": [_call(0, "ax9fskhew", "json", '{"value":')]},
                   model="gemma2-9b-it"),
            _chunk({"tool_calls": [_args(0, '"Sparkle Day"}')]}, model="gemma2-9b-it"),
            _chunk({}, "tool_calls", model="gemma2-9b-it",
                   x_groq={"id": "req_1", "usage": _usage(45, 20, 65, queue_time=0.04)},
                   usage=_usage(45, 20, 65, queue_time=0.04)),
        ],
        Expect(
            tools=(("ax9fskhew", "json", {"value": "Sparkle Day"}),),
            usage=(45, 20, 0, 0, 65),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gemma2-9b-it",
        ),
    ),
    (
        "openai/openai-python tests/lib/chat/test_tool_call_deltas.py, scenario "
        '"parallel": in one delta a whole call at index 0, then index 1 twice (its name, '
        "then its first argument fragment); two entries for index 1 again in the next",
        "openai",
        [
            _chunk({"role": "assistant", "tool_calls": [
                _call(0, "call_other", "other", "{}"),
                {"index": 1, "id": "call_files", "type": "function",
                 "function": {"name": "list_files"}},
                _args(1, '{"path"'),
            ]}, model="gpt-4o-mini"),
            _chunk({"tool_calls": [_args(1, ": "), _args(1, '"."}')]}, model="gpt-4o-mini"),
            _chunk({}, "tool_calls", model="gpt-4o-mini"),
        ],
        Expect(
            tools=(("call_other", "other", {}), ("call_files", "list_files", {"path": "."})),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gpt-4o-mini",
        ),
    ),
    (
        "openai/openai-node tests/lib/chat-completion-stream-finish-reason.test.ts: audio "
        "output, its last piece (`expires_at`) in a chunk after the finish",
        "openai",
        [
            _chunk({"role": "assistant", "audio": {"id": "audio-1", "data": "ab",
                    "transcript": "Hi"}}, model="audio-test"),
            _chunk({"audio": {"data": "cd", "transcript": "!"}}, "stop", model="audio-test"),
            _chunk({"audio": {"expires_at": 0}}, model="audio-test"),
        ],
        Expect(text="Hi!", model="audio-test"),
    ),
    (
        "pydantic/pydantic-ai tests/models/cassettes/test_openrouter/"
        "test_openrouter_advisor_tool_stream.yaml: the `stop` finish twice, the second with "
        "the usage (`cost`, `server_tool_use_details`)",
        "openrouter",
        [
            _chunk({"content": "I", "role": "assistant"}, model="openai/gpt-4o-mini",
                   provider="OpenAI"),
            _chunk({"content": " recommend **Retryable**.", "role": "assistant"},
                   model="openai/gpt-4o-mini", provider="OpenAI"),
            _chunk({"content": "", "role": "assistant"}, "stop", model="openai/gpt-4o-mini"),
            _chunk({"content": "", "role": "assistant"}, "stop", model="openai/gpt-4o-mini",
                   usage=_usage(571, 59, 630, cost=0.00444105,
                   prompt_tokens_details={"cached_tokens": 0, "cache_write_tokens": 0},
                   completion_tokens_details={"reasoning_tokens": 0},
                   cost_details={"upstream_inference_cost": 0.00012105},
                   server_tool_use_details={"tool_calls_requested": 1,
                                            "tool_calls_executed": 1})),
        ],
        Expect(text="I recommend **Retryable**.", usage=(571, 59, 0, 0, 630), cost=0.00444105,
               model="openai/gpt-4o-mini"),
    ),
]
# fmt: on


@pytest.mark.parametrize(
    ("provider", "chunks", "expect"),
    [recording[1:] for recording in RECORDINGS],
    ids=[recording[0].split(":")[0] for recording in RECORDINGS],
)
def test_a_recording_says_what_it_recorded(
    provider: str, chunks: list[dict[str, Any]], expect: Expect
) -> None:
    check(summarize(replay_every_way(_sse(chunks), provider)), expect)


@pytest.mark.parametrize(
    ("provider", "chunks"),
    [recording[1:3] for recording in RECORDINGS],
    ids=[recording[0].split(":")[0] for recording in RECORDINGS],
)
def test_a_recording_cut_before_its_finish_is_truncated(
    provider: str, chunks: list[dict[str, Any]]
) -> None:
    finish = next(
        n
        for n, chunk in enumerate(chunks)
        if any(choice.get("finish_reason") for choice in chunk.get("choices") or ())
    )
    for end in range(finish + 1):
        summary = summarize(replay(_sse(chunks[:end], done=False), provider))
        assert (summary.terminal, summary.error_kind) == ("error", "truncated"), end


def test_groq_tool_use_failed_after_text_ends_the_stream_with_its_code() -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_groq/
    test_tool_use_failed_error_streaming_with_text.yaml (openai/gpt-oss-120b with
    `tool_choice: required`): reasoning, the text "maybe", then `event: error` whose data
    is the error object (`code: tool_use_failed`, `status_code: 400`) and no `[DONE]`."""
    model = "openai/gpt-oss-120b"
    error = {
        "message": "Tool choice is required, but model did not call a tool",
        "type": "invalid_request_error",
        "code": "tool_use_failed",
        "failed_generation": "",
        "status_code": 400,
    }
    body = (
        _sse(
            [
                _chunk({"role": "assistant", "content": ""}, model=model, x_groq={"id": "req_1"}),
                _chunk({"reasoning": "The user says", "channel": "analysis"}, model=model),
                _chunk({"reasoning": ": maybe.", "channel": "analysis"}, model=model),
                _chunk({"content": "maybe"}, model=model),
            ],
            done=False,
        )
        + f"event: error\ndata: {json.dumps({'error': error})}\n\n".encode()
    )
    events = replay_every_way(body, "groq")
    summary = summarize(events)
    assert (summary.reasoning, summary.text) == ("The user says: maybe.", "maybe")
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert (failure.error.kind, failure.error.code, failure.error.status) == (
        "stream_error",
        "tool_use_failed",
        400,
    )
    assert failure.error.message == error["message"]
