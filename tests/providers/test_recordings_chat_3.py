"""Chat-completions recordings of the public SDKs' test suites: the shapes the earlier
sweeps did not replay.

Each body is written by hand from the recording named beside it (its essential chunks,
ids and padding shortened), replayed through the endpoint's preset whole and cut at
arbitrary byte boundaries (`replay_every_way`), and checked against what the recording
and its own test say.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import ServerToolCall, ServerToolResult
from rxllm.providers.call_ids import response_tag
from tests.support import Expect, check, replay_every_way, summarize


def _sse(*payloads: dict[str, Any]) -> bytes:
    return ("".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + "data: [DONE]\n\n").encode()


def _chunk(
    model: str, delta: dict[str, Any], finish: str | None = None, **top: Any
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [choice],
    } | top


COMPOUND = "groq/compound"
_GROQ_USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
_SEARCH = {"index": 0, "type": "search", "arguments": '{"query": "weather in San Francisco"}'}
_FOUND = {
    "results": [
        {
            "title": "SF Weather",
            "url": "https://www.weatherapi.com/",
            "content": "San Francisco: Sunny, 62\u00b0F.",
            "score": 0.98,
        }
    ]
}


def test_groq_search_streamed_in_one_chunk_is_a_call_and_its_result() -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_groq/
    test_groq_model_web_search_tool_stream_single_chunk.yaml (groq/compound): the search
    arrives whole in one `executed_tools` entry, its `search_results` beside its
    `arguments` and no `output`; then the answer. pydantic-ai reads those results as the
    search's return. Before: the call came out, its result never (the results were
    dropped unsaid, since only `output` counted as one)."""
    body = _sse(
        _chunk(COMPOUND, {"role": "assistant", "content": ""}),
        _chunk(COMPOUND, {"executed_tools": [_SEARCH | {"search_results": _FOUND}]}),
        _chunk(COMPOUND, {"content": "The weather in San Francisco is sunny and 62\u00b0F."}),
        _chunk(COMPOUND, {}, "stop", x_groq={"id": "req_test", "usage": _GROQ_USAGE}),
    )
    events = replay_every_way(body, "groq")
    calls = [ev for ev in events if isinstance(ev, ServerToolCall)]
    results = [ev for ev in events if isinstance(ev, ServerToolResult)]
    assert [(ev.call_id, ev.name, ev.arguments) for ev in calls] == [
        (f"search_{response_tag('c1', '')}_0", "search", {"query": "weather in San Francisco"})
    ]
    assert [(ev.call_id, ev.name, ev.content) for ev in results] == [
        (f"search_{response_tag('c1', '')}_0", "search", {"search_results": _FOUND})
    ]
    check(
        summarize(events),
        Expect(
            text="The weather in San Francisco is sunny and 62\u00b0F.",
            usage=(100, 20, 0, 0, 120),
            model=COMPOUND,
        ),
    )


def test_groq_search_announced_with_no_results_yet_reports_its_result_once() -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_groq/
    test_groq_model_web_search_tool_stream.yaml: the entry first comes with
    `search_results: {"results": []}` (the search starting), then again with its
    `output` and the results. Empty results are no result: one call, then one result,
    the one that came with the output."""
    output = "Title: SF Weather\nURL: https://www.weatherapi.com/\nScore: 0.9655\n\n"
    body = _sse(
        _chunk(COMPOUND, {"reasoning": "<tool>\nsearch(weather)\n"}),
        _chunk(COMPOUND, {"executed_tools": [_SEARCH | {"search_results": {"results": []}}]}),
        _chunk(
            COMPOUND,
            {"executed_tools": [_SEARCH | {"output": output, "search_results": _FOUND}]},
        ),
        _chunk(COMPOUND, {"content": "Sunny."}),
        _chunk(COMPOUND, {}, "stop", x_groq={"id": "req_test", "usage": _GROQ_USAGE}),
    )
    events = replay_every_way(body, "groq")
    tools = [ev for ev in events if isinstance(ev, ServerToolCall | ServerToolResult)]
    assert [ev.type for ev in tools] == ["server_tool_call", "server_tool_result"]
    result = tools[1]
    assert isinstance(result, ServerToolResult)
    assert result.content == {"output": output, "search_results": _FOUND}


MISTRAL = "mistral-small-latest"


def _mistral_usage(**cache: Any) -> dict[str, Any]:
    """The usage of vercel/ai packages/mistral/src/__fixtures__/
    mistral-usage-details.chunks.txt (its final chunk), with the cache count `cache` says."""
    return {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "total_tokens": 150,
        "prompt_audio_seconds": 1,
        "request_count": 1,
        "service_tier": "standard",
        "prompt_tokens_details": {"audio_tokens": 1, "messages": []},
    } | cache


def test_mistral_num_cached_tokens_are_cache_reads() -> None:
    """vercel/ai packages/mistral/src/__fixtures__/mistral-usage-details.chunks.txt: Mistral's
    usage counts its cache hits as `num_cached_tokens` (0 in the recording), and some of
    its responses as `prompt_token_details.cached_tokens` (sic); @ai-sdk/mistral's
    `convertMistralUsage` reads both (its tests: 60 of a 100-token prompt cached, and 50
    of 150 under `prompt_token_details`). Before: neither was read, so cached input
    counted as uncached and the cache read as 0."""
    for cache in (
        {"num_cached_tokens": 60},
        {"num_cached_tokens": 60, "prompt_token_details": {"cached_tokens": 60}},
        {"prompt_token_details": {"cached_tokens": 60, "audio_tokens": 1}},
    ):
        body = _sse(
            _chunk(MISTRAL, {"role": "assistant", "content": "OK"}),
            _chunk(MISTRAL, {"content": ""}, "stop", usage=_mistral_usage(**cache)),
        )
        expect = Expect(text="OK", usage=(40, 50, 0, 60, 150), model=MISTRAL)
        check(summarize(replay_every_way(body, "mistral")), expect)


def test_mistral_thinking_chunks_marked_closed_and_text_in_the_same_list() -> None:
    """vercel/ai packages/openai-compatible/src/chat/__fixtures__/
    issue-13703-mistral-thinking.chunks.txt (mistral-small-latest): thinking chunks carry
    `closed: true` (or not) on each delta, the last delta's list holds the end of the
    thinking and the first text together, and the answer ends as a plain string beside
    the finish. Verified correct; no other test has `closed` or the mixed list."""
    body = _sse(
        _chunk(MISTRAL, {"role": "assistant", "content": ""}),
        _chunk(MISTRAL, {"content": ""}, p="abcdefghijklmnopqrstu"),
        _chunk(
            MISTRAL,
            {
                "content": [
                    {
                        "type": "thinking",
                        "thinking": [{"type": "text", "text": "17 * 2"}],
                        "closed": True,
                    }
                ]
            },
        ),
        _chunk(
            MISTRAL,
            {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "3"}]}]},
        ),
        _chunk(
            MISTRAL,
            {
                "content": [
                    {
                        "type": "thinking",
                        "thinking": [{"type": "text", "text": " = 391."}],
                        "closed": True,
                    },
                    {"type": "text", "text": "3"},
                ]
            },
        ),
        _chunk(
            MISTRAL,
            {"content": "91"},
            "stop",
            usage={
                "prompt_tokens": 28,
                "total_tokens": 167,
                "completion_tokens": 139,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        ),
    )
    expect = Expect(
        text="391", reasoning="17 * 23 = 391.", usage=(28, 139, 0, 0, 167), model=MISTRAL
    )
    check(summarize(replay_every_way(body, "mistral")), expect)
