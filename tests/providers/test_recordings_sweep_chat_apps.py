"""Streams that chat applications' own stream parsers name and handle (enricoros/big-AGI's
AIX parsers, lobehub/lobehub's model-runtime streams and their tests, and the endpoints
those apps are pointed at: OpenCode Zen, MiniMax, Xiaomi MiMo, Workers AI as Cloudflare's
own provider reads it), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential chunks, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what the source says the provider sent.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, ReasoningDelta, ServerToolResult
from tests.support import Expect, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- chat completions family -------------------------------------------------------------


def _zen_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chat_1",
        "object": "chat.completion.chunk",
        "created": 1710000000,
        "model": "glm-5.2",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _inference_cost(cost: str, **counts: int) -> dict[str, Any]:
    """OpenCode Zen's last chunk before `[DONE]`: no id, no model, no choice."""
    return {
        "choices": [],
        "x-opencode-type": "inference-cost",
        "cost": cost,
        "normalizedUsage": counts,
    }


def test_opencode_zen_cost_in_a_trailing_inference_cost_chunk() -> None:
    """enricoros/big-AGI src/modules/aix/server/dispatch/chatGenerate/parsers/
    openai.parser.ts ("[OpenCode, 2026-07-11] Trailing cost-accounting event (no
    id/model/choices) - harvest cost/usage"), and the relays that strip it (new-api's
    OpenCode Go adaptor tests; anomalyco/opencode#24189): since July 2026 opencode.ai/zen
    puts the usage on the finish chunk, then sends `{"choices": [], "x-opencode-type":
    "inference-cost", "cost": "0.00002772", "normalizedUsage": {...}}` before `[DONE]`,
    the request's cost in USD as a decimal string. The usage is the finish chunk's, and
    the cost is the turn's (before: the chunk's three fields logged as having no event,
    no cost)."""
    usage = {
        "prompt_tokens": 90,
        "completion_tokens": 54,
        "total_tokens": 144,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 52},
    }
    body = _sse(
        _zen_chunk({"role": "assistant", "reasoning_content": "The user greets."}),
        _zen_chunk({"content": "hi"}),
        _zen_chunk({}, "stop", usage=usage),
        _inference_cost(
            "0.00002772",
            inputTokens=90,
            outputTokens=54,
            reasoningTokens=52,
            cacheReadTokens=0,
            cacheWrite5mTokens=0,
            cacheWrite1hTokens=0,
        ),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="hi",
            reasoning="The user greets.",
            usage=(90, 54, 52, 0, 144),
            cost=0.00002772,
            model="glm-5.2",
        ),
    )
    assert kinds(events)[-2:] == ["usage", "done"]


def test_opencode_zen_counts_only_in_its_inference_cost_chunk() -> None:
    """The same chunk where no usage came before it (new-api's OpenCode Go adaptor test
    `TestChatCostExtensionBecomesUsageFallback`: the finish chunk without usage, then
    `normalizedUsage` `{inputTokens: 12, outputTokens: 3, reasoningTokens: 2,
    cacheReadTokens: 88}`, which that relay writes back as 100 prompt tokens, 88 of them
    cached): its counts are the turn's usage, the input apart from the cache reads and
    the output with its reasoning, as rxllm counts them; its cost "0" is a cost of 0
    (before: no usage at all)."""
    body = _sse(
        _zen_chunk({"role": "assistant", "content": "OK"}, "stop"),
        _inference_cost("0", inputTokens=12, outputTokens=3, reasoningTokens=2, cacheReadTokens=88),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="OK", usage=(12, 3, 2, 88, 103), cost=0.0, model="glm-5.2"),
    )


def _minimax_chunk(
    delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": "055ccc4cbe1ca0dc18037256237d0823",
        "object": "chat.completion.chunk",
        "created": 1762498892,
        "model": "MiniMax-M2",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "usage": None,
        **extra,
    }


def test_reasoning_details_as_one_object_per_delta_not_a_list() -> None:
    """lobehub/lobehub packages/model-runtime/src/core/streams/openai/openai.ts reads
    MiniMax M2's `reasoning_details` as a list of `{type, id, format, index, text}`
    (its test's chunks), or as one such object, or as a string; relays pass a provider's
    value on as it came, "objects and scalars" included (Layr-Labs/d-inference#630). One
    object per delta is that detail: its text is the reasoning, once, the detail's own
    fields kept; before, the turn ended at the first such delta in a `protocol` error
    ("'str' object has no attribute 'get'": the object's keys were read as details)."""
    thoughts = ['中文打招呼说"你好"\uff0c', "我需要用中文回复。"]

    def detail(n: int) -> dict[str, Any]:
        return {
            "type": "reasoning.text",
            "id": f"reasoning-text-{n + 1}",
            "format": "MiniMax-response-v1",
            "index": 0,
            "text": thoughts[n],
        }

    body = _sse(
        _minimax_chunk({"content": "", "role": "assistant", "reasoning_details": detail(0)}),
        _minimax_chunk({"reasoning_details": detail(1)}),
        _minimax_chunk({"content": "你好"}),
        _minimax_chunk({"content": "\uff01"}),
        _minimax_chunk(
            {"content": ""},
            "stop",
            usage={"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        ),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="你好\uff01",
            reasoning="".join(thoughts),
            usage=(10, 20, 0, 0, 30),
            model="MiniMax-M2",
        ),
    )
    closed = [e.details for e in events if isinstance(e, ReasoningDelta) and e.details]
    assert closed == [
        {
            "type": "reasoning.text",
            "id": "reasoning-text-2",
            "format": "MiniMax-response-v1",
            "index": 0,
        }
    ]


def test_reasoning_details_as_a_string_is_the_reasoning_text() -> None:
    """The same field as a string (LobeChat's second form of it: `typeof details ===
    'string'`): the reasoning's text, as `reasoning` is, and not said twice where
    `reasoning` beside it carries the same text; a number there has no event. Before,
    the turn ended in a `protocol` error at the first such delta."""
    body = _sse(
        _minimax_chunk({"role": "assistant", "reasoning_details": "The user greets. "}),
        _minimax_chunk({"reasoning_details": "Reply in kind.", "reasoning": "Reply in kind."}),
        _minimax_chunk({"reasoning_details": 0}),
        _minimax_chunk({"content": "Hello!"}, "stop"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="Hello!", reasoning="The user greets. Reply in kind.", model="MiniMax-M2"),
    )


def test_minimax_web_search_closing_frame_of_the_whole_exchange() -> None:
    """lobehub/lobehub packages/model-runtime/src/core/streams/openai/openai.ts (the
    chunk its comment quotes from MiniMax-Text-01's built-in web search): the stream's
    last frame is a `chat.completion` whose choice holds no delta but `messages`, the
    whole exchange (the user's turn, the assistant's `web_search` call, the tool's turn,
    the answer with its `annotations` `{text: "【5†source】", url, quote}`), with
    `finish_reason: "tool_calls"`, the real usage and a `base_resp` of status 0 whose
    words are a warning. Before it: the pages as a `role: "tool"` delta (with its own
    `stop`, as MiniMax writes it), then the answer. Read as the answer, the search's
    result and its page cited once, the usage of the last frame, and the turn's first
    finish: that frame's `tool_calls` asks the client to run nothing, its call being
    one MiniMax ran. A guard: no change."""
    model = "MiniMax-Text-01"
    url = "https://mtianqi.eastday.com/tianqi/shanghai/20250526.html"
    pages = [
        {"no": 1, "url": url, "title": "上海天气预报", "content": "5月26日 多云", "web_icon": ""}
    ]
    call_id = "call_function_0872338692"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta}
        if finish is not None:
            choice["finish_reason"] = finish
        return {
            "id": "0483bf14ba55225a66de2342a21b4003",
            "choices": [choice],
            "created": 1748274196,
            "model": model,
            "object": "chat.completion.chunk",
            "usage": {"total_tokens": 0, "total_characters": 0},
            "input_sensitive": False,
            "output_sensitive": False,
        }

    search = {"query_tag": ["天气"], "query_list": ["上海 2025年5月26日 天气"]}
    exchange = [
        {"content": "", "role": "user", "reasoning_content": ""},
        {
            "content": "",
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "web_search",
                    "function": {"name": "get_search_result", "arguments": json.dumps(search)},
                }
            ],
            "reasoning_content": "",
        },
        {"content": "", "role": "tool", "tool_call_id": call_id, "reasoning_content": ""},
        {
            "content": "",
            "role": "assistant",
            "name": "海螺AI",
            "annotations": [{"text": "【5†source】", "url": url, "quote": "上海天气预报"}],
            "audio_content": "",
            "reasoning_content": "",
        },
    ]
    closing = {
        "id": "0483bf14ba55225a66de2342a21b4003",
        "choices": [{"finish_reason": "tool_calls", "index": 0, "messages": exchange}],
        "created": 1748274196,
        "model": model,
        "object": "chat.completion",
        "usage": {
            "total_tokens": 13110,
            "total_characters": 0,
            "prompt_tokens": 12938,
            "completion_tokens": 172,
        },
        "base_resp": {"status_code": 0, "status_msg": "Invalid parameters detected"},
    }
    tool_turn = {
        "content": json.dumps(pages, ensure_ascii=False),
        "role": "tool",
        "tool_call_id": call_id,
    }
    body = _sse(
        chunk(tool_turn, "stop"),
        chunk({"content": "上海今天多云。", "role": "assistant"}),
        closing,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="上海今天多云。", usage=(12938, 172, 0, 0, 13110), model=model),
    )
    assert [(e.call_id, e.content) for e in events if isinstance(e, ServerToolResult)] == [
        (call_id, pages)
    ]
    assert [(e.url, e.title) for e in events if isinstance(e, Citation)] == [(url, "上海天气预报")]


def test_xiaomi_mimo_flat_url_citations_in_the_first_chunk_and_again_beside_the_text() -> None:
    """lobehub/lobehub packages/model-runtime/src/core/streams/openai/openai.ts (the
    chunk its comment quotes from mimo-v2-omni's web search, and its test "should handle
    XiaomiMiMo annotations"): the first chunk's delta holds every source as an
    `annotations` entry of type `url_citation` whose fields are flat (`url`, `title`,
    `site_name`, `summary`), with `content: ""` and a usage that counts only the
    searches (`web_search_usage: {tool_usage, page_usage}`); the next chunk repeats the
    same annotations beside the first text. Each source is cited once, the search
    counts are no usage, the text whole. A guard: no change."""
    url = "https://biz.finance.sina.com.cn/usstock/usstock_news.php?symbol=ZNH"
    title = "南方航空相关新闻_美股 - 新浪财经"
    sources = [
        {
            "site_name": "biz.finance.sina.com.cn",
            "summary": "港股航空股再度走低",
            "title": title,
            "type": "url_citation",
            "url": url,
        }
    ]

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": "65b10aeecba14877b4cd282d4e32f203",
            "object": "chat.completion.chunk",
            "created": 1773907177,
            "model": "mimo-v2-omni",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }

    searches = {"web_search_usage": {"tool_usage": 5, "page_usage": 20}}
    body = _sse(
        chunk({"annotations": sources, "role": "assistant", "content": ""}, usage=searches),
        chunk({"role": "assistant", "content": "南航股价下跌\uff0c", "annotations": sources}),
        chunk({"content": "燃油附加费上调。"}, "stop"),
        chunk(
            {},
            usage={"prompt_tokens": 900, "completion_tokens": 30, "total_tokens": 930, **searches},
        ),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="南航股价下跌\uff0c燃油附加费上调。",
            usage=(900, 30, 0, 0, 930),
            model="mimo-v2-omni",
        ),
    )
    assert [(e.url, e.title) for e in events if isinstance(e, Citation)] == [(url, title)]
    assert kinds(events) == ["citation", "text", "usage", "done"]


def test_workers_ai_native_run_stream_its_text_in_response_and_usage_last() -> None:
    """cloudflare/ai packages/workers-ai-provider src/streaming.ts reads two formats from
    Workers AI's `/ai/run` (LobeChat's cloudflare.ts reads the first only): OpenAI's
    chunks, and its native ones, `{"response": "chunk"}` with the text at the top
    level, padding (`"p": "abc"`) beside it or alone, and a last `{"response": "",
    "usage": {...}}` before `[DONE]` (the chunks its test/stream-text.test.ts and the apps
    built on Workers AI replay). The text is the answer, the last count the usage, the
    turn done at `[DONE]` with no finish reason named (before: the text was logged as a
    field with no event, and the turn said nothing, done)."""
    body = _sse(
        {"response": "What", "p": "abc"},
        {"response": "", "p": "heartbeat"},
        {"tool_calls": [], "p": "abdefgh"},
        {"response": " next", "p": "def"},
        {
            "response": "",
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        },
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="What next", usage=(10, 2, 0, 0, 12), raw_stop_reason=None),
    )


def test_workers_ai_native_call_at_the_top_level_then_its_finish_alone() -> None:
    """cloudflare/ai packages/workers-ai-provider test/stream-text.test.ts ("should handle
    streamed tool calls (native format)"): the call is a chunk's own `tool_calls`, in
    OpenAI's entry shape, and the finish a chunk of its own, `{"finish_reason":
    "tool_calls"}`, before `[DONE]`. One call requested with its arguments, the turn
    ended tool_use (before: no call, done stop)."""
    call = {
        "id": "call123",
        "type": "function",
        "index": 0,
        "function": {"name": "get_weather", "arguments": '{"location": "London"}'},
    }
    body = _sse({"tool_calls": [call]}, {"finish_reason": "tool_calls"})
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            tools=(("call123", "get_weather", {"location": "London"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
        ),
    )
