"""Shapes of the OpenAI-compatible family that the captures lack, made by hand.

Each body below is written from the endpoint's documentation, SDK types or a public
issue thread (named beside it), never copied from a recording, and replayed through
the endpoint's preset whole and cut at arbitrary byte boundaries (`replay_every_way`).
Each test says what a careful user of that endpoint expects to see: every event once,
in order, usage counted once, nothing the provider said dropped without a trace.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import Citation, Done, Event, Failed, UsageUpdate
from rxllm.providers.openai_chat import openai_usage
from tests.support import kinds, log_messages, replay, replay_every_way, summarize


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    frames = [f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads]
    return ("".join(frames) + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"} | {
        "choices": [choice],
        **extra,
    }


def _call(index: int, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]
    }


def _usage(prompt: int, completion: int, **extra: Any) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion} | extra


def _last(events: list[Event]) -> Event:
    return events[-1]


# ------------------------------------------------------------------ how a turn ends


@pytest.mark.parametrize(
    ("provider", "finish"),
    [
        # vllm-project/vllm#57082: an engine abort (shutdown, scale-down, sleep, an abort
        # request) ends the stream with finish_reason "abort", then an unconditional
        # `data: [DONE]`: "the OpenAI-compatible streaming response still presents
        # itself to the client as a complete, successful response".
        ("vllm", "abort"),
        # docs.bigmodel.cn (Z.ai's API reference): finish_reason "network_error" means
        # "model inference exception".
        ("zai", "network_error"),
        # DeepSeek's finish reasons (the ds-api crate's FinishReason lists them):
        # "insufficient_system_resource", a request cut for lack of inference resources.
        ("deepseek", "insufficient_system_resource"),
        # Mistral's CompletionResponseStreamChoice finish_reason: "stop", "length",
        # "error", "tool_calls" (mistralai/client-python).
        ("mistral", "error"),
    ],
)
def test_a_finish_reason_that_means_failure_fails_the_turn(provider: str, finish: str) -> None:
    data = _sse(
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "Half an ans"}),
        _chunk(_call(0, "call_1", "f", '{"a": 1}')),
        _chunk({}, finish),
        {"id": "chatcmpl-1", "model": "m", "choices": [], "usage": _usage(7, 4)},
    )
    events = replay_every_way(data, provider)
    # The text said so far stays; the call is never dispatched; the usage is kept; the
    # turn is an error, not a success with stop reason "other".
    assert kinds(events) == ["text", "tool_start", "usage", "error"]
    error = _last(events)
    assert isinstance(error, Failed)
    assert error.error.kind == "stream_error"
    assert repr(finish) in error.error.message


def test_zai_context_window_exceeded_is_length() -> None:
    # anomalyco/opencode#18813: Z.ai (following Anthropic) ends a turn whose context is
    # full with finish_reason "model_context_window_exceeded"; treated as unknown, an
    # agent loop never stops or compacts.
    data = _sse(_chunk({"content": "x"}), _chunk({}, "model_context_window_exceeded"))
    done = _last(replay(data, "zai"))
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("length", "model_context_window_exceeded")


def test_a_stop_finish_after_tool_calls_is_tool_use() -> None:
    """Ollama's /v1 sent its tool calls in one chunk and `finish_reason: "stop"` in the
    next (ollama/ollama#7963; BerriAI/litellm#35663 on the same split), and OpenAI's
    gpt-4o has ended a streamed tool call with `stop` too (a comment in that PR): the
    turn still ended to run the calls, which is what `tool_use` says. The raw value
    stays."""
    data = _sse(
        _chunk(_call(0, "call_a", "run_command", '{"command": "ls"}')),
        _chunk(_call(0, "call_b", "run_command", '{"command": "pwd"}')),  # index 0 again
        _chunk({}, "stop"),
    )
    events = replay_every_way(data, "ollama")
    summary = summarize(events)
    assert [call[0] for call in summary.tool_calls] == ["call_a", "call_b"]
    assert (summary.stop_reason, summary.raw_stop_reason) == ("tool_use", "stop")
    # without calls, stop is stop
    plain = summarize(replay(_sse(_chunk({"content": "hi"}), _chunk({}, "stop")), "ollama"))
    assert plain.stop_reason == "stop"


def test_groq_x_groq_error_ends_the_stream() -> None:
    # groq-python's XGroq: `error: Optional[str]`, "an error string indicating why a
    # stream was stopped early"; `usage` beside it on the final chunk.
    data = _sse(
        _chunk({"content": "Partial"}),
        {
            "id": "chatcmpl-1",
            "model": "m",
            "choices": [],
            "x_groq": {"id": "req_1", "error": "model overloaded", "usage": _usage(3, 1)},
        },
    )
    events = replay_every_way(data, "groq")
    assert kinds(events) == ["text", "usage", "error"]
    error = _last(events)
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.message) == ("stream_error", "model overloaded")


# ----------------------------------------------------------------------------- usage


def test_vllm_continuous_usage_then_the_final_usage_chunk_wins() -> None:
    """vLLM with `stream_options: {include_usage, continuous_usage_stats}` puts usage on
    every chunk, the finish chunk included, then sends its final usage chunk
    (`choices: []`), the only one with `prompt_tokens_details.cached_tokens` when the
    server runs with --enable-prompt-tokens-details (serving_chat.py). The turn ends
    after that chunk, and its numbers are the usage."""

    def running(completion: int) -> dict[str, Any]:
        return _usage(12, completion, total_tokens=12 + completion)

    final = running(2) | {"prompt_tokens_details": {"cached_tokens": 8}}
    data = _sse(
        _chunk({"role": "assistant", "content": ""}, usage=running(0)),
        _chunk({"content": "Hi"}, usage=running(1)),
        _chunk({"content": "!"}, usage=running(2)),
        _chunk({}, "stop", stop_reason=None, usage=running(2)),
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "choices": [],
         "usage": final},
    )  # fmt: skip
    events = replay_every_way(data, "vllm")
    assert kinds(events)[-2:] == ["usage", "done"]
    # each change of the numbers once: the finish chunk repeated the last ones
    reported = [e.usage.output_tokens for e in events if isinstance(e, UsageUpdate)]
    assert reported == [0, 1, 2, 2]
    usage = summarize(events).usage
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (4, 8, 2)
    assert usage.total_tokens == 14


def test_usage_on_the_finish_chunk_still_ends_the_turn_at_done() -> None:
    # DeepSeek, Z.ai, Mistral: usage rides the finish chunk, then [DONE] (their captures).
    data = _sse(_chunk({"content": "4"}), _chunk({}, "stop", usage=_usage(5, 1)))
    events = replay_every_way(data, "zai")
    assert kinds(events) == ["text", "usage", "done"]


def test_perplexity_cost_object_is_its_total_cost() -> None:
    # vercel/ai packages/perplexity fixture perplexity-usage-raw-live: `usage.cost` is an
    # object {input_tokens_cost, output_tokens_cost, request_cost, total_cost}.
    raw = _usage(
        6,
        1,
        total_tokens=7,
        search_context_size="low",
        cost={"input_tokens_cost": 0.00001, "output_tokens_cost": 0, "request_cost": 0.005,
              "total_cost": 0.00501},
    )  # fmt: skip
    assert openai_usage(raw).cost_usd == pytest.approx(0.00501)


def test_perplexity_reasoning_tokens_at_the_top_level_are_counted_apart_once() -> None:
    """Perplexity's usage has `reasoning_tokens` beside `completion_tokens`, not in its
    details (its UsageInfo schema; vercel/ai packages/perplexity reads it there), and for
    sonar-deep-research they are a research step billed on their own ($3/M beside $8/M
    of output: docs.perplexity.ai, sonar-deep-research pricing), outside both
    `completion_tokens` and `total_tokens`: a real turn's usage (simonw's gist
    ad00a97d) was prompt 19, completion 498, total 517, reasoning 95305. The output
    counts them once, added; the cost is the `cost` object's total (here its parts at
    those prices)."""
    usage = _usage(19, 498, total_tokens=517, citation_tokens=10175,
                   num_search_queries=48, reasoning_tokens=95305,
                   cost={"input_tokens_cost": 0.000038, "output_tokens_cost": 0.003984,
                         "citation_tokens_cost": 0.02035, "reasoning_tokens_cost": 0.285915,
                         "search_queries_cost": 0.24, "total_cost": 0.550287})  # fmt: skip
    data = _sse(
        _chunk({"role": "assistant", "content": "# Report"}),
        _chunk({}, "stop", usage=usage, citations=["https://example.com/a"]),
    )
    got = summarize(replay_every_way(data, "custom")).usage
    assert got is not None
    assert (got.input_tokens, got.output_tokens, got.reasoning_tokens) == (19, 95803, 95305)
    assert got.total_tokens == 19 + 95803
    assert got.cost_usd == pytest.approx(0.550287)
    # Without reasoning (sonar), or with it in the details as elsewhere: as before.
    assert openai_usage(_usage(6, 1, total_tokens=7, reasoning_tokens=0)).output_tokens == 1
    inside = _usage(10, 30, total_tokens=40, reasoning_tokens=99,
                    completion_tokens_details={"reasoning_tokens": 20})  # fmt: skip
    assert (openai_usage(inside).output_tokens, openai_usage(inside).reasoning_tokens) == (30, 20)


def test_openrouter_byok_cost_adds_the_upstream_inference_cost() -> None:
    """openrouter.ai/docs, Usage Accounting: `cost` is what OpenRouter charged the
    account; `cost_details.upstream_inference_cost` is what the upstream provider
    charged, reported for BYOK requests, whose `cost` is OpenRouter's fee alone (often 0:
    tailcallhq/forgecode#1641). The turn cost both; without BYOK, `cost` is the price."""
    byok = _usage(
        9171,
        113,
        cost=0,
        is_byok=True,
        cost_details={"upstream_inference_cost": 0.0360795,
                      "upstream_inference_prompt_cost": 0.0343845,
                      "upstream_inference_completions_cost": 0.001695},
    )  # fmt: skip
    assert openai_usage(byok).cost_usd == pytest.approx(0.0360795)
    fee = byok | {"cost": 0.0018}
    assert openai_usage(fee).cost_usd == pytest.approx(0.0378795)
    routed = _usage(43, 36, cost=0.000669, is_byok=False,
                    cost_details={"upstream_inference_cost": None})  # fmt: skip
    assert openai_usage(routed).cost_usd == pytest.approx(0.000669)


# ------------------------------------------------------------------------- citations


def test_xai_top_level_citations_in_the_last_chunk() -> None:
    # docs.x.ai, Live Search: the sources come back as a top-level `citations` list of
    # URLs, in the last chunk of a stream; `usage.num_sources_used` counts them.
    data = _sse(
        _chunk({"content": "It rained."}),
        _chunk(
            {},
            "stop",
            citations=["https://x.com/a/status/1", "https://weather.example/today"],
            usage=_usage(30, 3, num_sources_used=2),
        ),
    )
    events = replay_every_way(data, "xai")
    assert kinds(events) == ["text", "citation", "citation", "usage", "done"]
    urls = [e.url for e in events if isinstance(e, Citation)]
    assert urls == ["https://x.com/a/status/1", "https://weather.example/today"]


def test_perplexity_citations_and_search_results_on_every_chunk_come_out_once() -> None:
    # vercel/ai packages/perplexity fixture perplexity-citations: the same `citations`
    # list on every chunk, usage on every chunk, the last chunk's object
    # "chat.completion.done"; docs.perplexity.ai: `search_results` [{title, url, date}].
    sources: dict[str, Any] = {
        "citations": ["https://en.wikipedia.org/wiki/SF", "https://census.example/sf"],
        "search_results": [
            {"title": "San Francisco - Wikipedia", "url": "https://en.wikipedia.org/wiki/SF",
             "date": "2025-01-02"},
            {"title": "Census", "url": "https://census.example/sf", "date": None},
        ],
    }  # fmt: skip
    data = _sse(
        _chunk({"role": "assistant", "content": "About 800k"}, usage=_usage(10, 3), **sources),
        _chunk({"role": "assistant", "content": " [1]."}, usage=_usage(10, 5), **sources),
        _chunk({"role": "assistant", "content": ""}, "stop", usage=_usage(10, 5), **sources)
        | {"object": "chat.completion.done"},
    )
    events = replay_every_way(data, "custom")
    # the usage repeated unchanged on the last chunk is one usage event
    assert [e.usage.output_tokens for e in events if isinstance(e, UsageUpdate)] == [3, 5]
    cited = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cited == [
        ("https://en.wikipedia.org/wiki/SF", "San Francisco - Wikipedia"),
        ("https://census.example/sf", "Census"),
    ]
    summary = summarize(events)
    assert (summary.text, summary.terminal) == ("About 800k [1].", "done")


def test_mistral_reference_chunks() -> None:
    """Mistral's content chunks (mistralai/client-python models): `tool_reference`
    {tool, title, url, favicon, description} is a source with a URL (a citation), also
    inside `thinking`; `reference` {reference_ids} points at sources the client sent in
    its tool results, so it has no URL to cite: it is logged, never silently dropped."""
    data = _sse(
        _chunk({"content": [{"type": "thinking", "thinking": [
            {"type": "text", "text": "Searching."},
            {"type": "tool_reference", "tool": "web_search", "title": "Doc A",
             "url": "https://a.example/doc"},
        ]}]}),
        _chunk({"content": [
            {"type": "text", "text": "Per the docs"},
            {"type": "reference", "reference_ids": [0, 2]},
            {"type": "text", "text": ", yes."},
            {"type": "tool_reference", "tool": "web_search", "title": "Doc A",
             "url": "https://a.example/doc"},
        ]}),
        _chunk({}, "stop", usage=_usage(20, 9)),
    )  # fmt: skip
    with log_messages() as messages:
        events = replay_every_way(data, "mistral")
    assert kinds(events) == ["reasoning", "citation", "text", "usage", "done"]
    summary = summarize(events)
    assert (summary.reasoning, summary.text) == ("Searching.", "Per the docs, yes.")
    assert any("reference" in m and "[0, 2]" in m for m in messages)


# ------------------------------------------------------------------- nothing dropped


def test_fields_without_an_event_are_logged_once_at_debug() -> None:
    """What has no event is logged at debug, once per stream: Azure's
    `content_filter_results` on choices and `prompt_filter_results` (the azure-openai
    capture), OpenRouter's generated `delta.images` (openrouter.ai/docs, Image
    Generation), Perplexity's `related_questions`."""
    filtered = {"hate": {"filtered": False, "severity": "safe"}}
    choice = {"index": 0, "delta": {"content": "a"}, "finish_reason": None,
              "content_filter_results": filtered}  # fmt: skip
    data = _sse(
        {"id": "", "model": "", "choices": [],
         "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filtered}]},
        {"id": "c", "model": "m", "choices": [choice]},
        {"id": "c", "model": "m", "choices": [choice]},
        _chunk({"images": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,"}}]}),
        _chunk({}, "stop", related_questions=["Why?"]),
    )  # fmt: skip
    with log_messages() as messages:
        events = replay(data, "custom")
    assert kinds(events) == ["text", "done"]
    for field in ("prompt_filter_results", "content_filter_results", "images",
                  "related_questions"):  # fmt: skip
        assert sum(repr(field) in m for m in messages) == 1, field


def test_legacy_function_call_delta_is_a_tool_call() -> None:
    # OpenAI's deprecated `functions` parameter streams `delta.function_call`
    # {name, arguments} and finishes with "function_call" (Chat Completions reference,
    # ChatCompletionChunk.choices.delta.function_call); servers built on the old
    # schema still send it. The finish was mapped to tool_use with no call behind it.
    data = _sse(
        _chunk({"role": "assistant", "content": None,
                "function_call": {"name": "get_weather", "arguments": ""}}),
        _chunk({"function_call": {"arguments": '{"city": '}}),
        _chunk({"function_call": {"arguments": '"Paris"}'}}),
        _chunk({}, "function_call"),
    )  # fmt: skip
    events = replay_every_way(data, "openai")
    summary = summarize(events)
    # no id: `call_{tag}_{index}`, the tag of the response's id (`response_tag`)
    assert summary.tool_calls == [("call_8mvbchpm_0", "get_weather", {"city": "Paris"})]
    assert summary.stop_reason == "tool_use"
    # beside `tool_calls` it would be the same call twice: `tool_calls` is read
    both = _call(0, "call_1", "get_weather", '{"city": "Oslo"}') | {
        "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    }
    twice = summarize(replay(_sse(_chunk(both), _chunk({}, "tool_calls")), "openai"))
    assert twice.tool_calls == [("call_1", "get_weather", {"city": "Oslo"})]


# ---------------------------------------------------------------------- what held


def test_vllm_reasoning_renamed_field_is_read_once() -> None:
    # vLLM renamed `reasoning_content` to `reasoning`; versions in between send both
    # with the same text (vllm-project/vllm, DeltaMessage).
    data = _sse(
        _chunk({"reasoning_content": "Think", "reasoning": "Think"}),
        _chunk({"reasoning": " more."}),
        _chunk({"reasoning_content": "", "content": "Done."}, "stop"),
    )
    summary = summarize(replay_every_way(data, "vllm"))
    assert (summary.reasoning, summary.text) == ("Think more.", "Done.")


def test_vllm_glm_final_chunk_repeats_the_call_metadata_with_the_last_arguments() -> None:
    # vllm-project/vllm#44098: the remaining-arguments chunk repeats id, type and name,
    # and carries finish_reason "tool_calls" and a token-id stop_reason.
    last = {"index": 0, "delta": _call(0, "call_9", "write_file", '"text": "hi"}'),
            "finish_reason": "tool_calls", "stop_reason": 154829}  # fmt: skip
    data = _sse(
        _chunk(_call(0, "call_9", "write_file", '{"path": "a.txt", ')),
        {"id": "chatcmpl-1", "model": "m", "choices": [last]},
    )
    summary = summarize(replay_every_way(data, "vllm"))
    assert summary.tool_calls == [("call_9", "write_file", {"path": "a.txt", "text": "hi"})]
    assert summary.stop_reason == "tool_use"


def test_vllm_error_object_in_a_data_line() -> None:
    # vLLM's serving_chat: an exception in the generator becomes
    # `data: {"error": {...}}` then `data: [DONE]` (create_streaming_error_response).
    error = {"error": {"object": "error", "message": "Engine loop has died",
                       "type": "InternalServerError", "param": None, "code": 500}}  # fmt: skip
    events = replay_every_way(_sse(_chunk({"content": "a"}), error), "vllm")
    assert kinds(events) == ["text", "error"]
    failed = _last(events)
    assert isinstance(failed, Failed)
    assert (failed.error.message, failed.error.status) == ("Engine loop has died", 500)


def test_llamacpp_timings_and_verbose_repeat_nothing() -> None:
    # llama-server's final chunk carries `timings` and, with `verbose`, `__verbose`
    # holding the whole completion again: neither may be read as output.
    final = _chunk({}, "stop", usage=_usage(5, 2),
                   timings={"prompt_n": 5, "predicted_n": 2, "predicted_per_second": 40.1},
                   __verbose={"content": "Hello!", "tokens_predicted": 2})  # fmt: skip
    summary = summarize(replay_every_way(_sse(_chunk({"content": "Hello!"}), final), "llamacpp"))
    assert summary.text == "Hello!"


def test_azure_annotation_chunks_after_the_finish_change_nothing() -> None:
    """Azure's asynchronous filter sends annotation chunks with no delta after the
    content, even after the finish (learn.microsoft.com, Content streaming;
    aallam/openai-kotlin#340 shows one: `choices[{content_filter_offsets,
    content_filter_results, finish_reason: null, index}]`, empty id and model)."""
    annotation = {"id": "", "object": "", "created": 0, "model": "", "choices": [{
        "index": 0, "finish_reason": None,
        "content_filter_offsets": {"check_offset": 10, "start_offset": 0, "end_offset": 12},
        "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
    }]}  # fmt: skip
    data = _sse(
        _chunk({"content": "Hello there."}, model="gpt-4o-2024-11-20"),
        _chunk({}, "stop", model="gpt-4o-2024-11-20"),
        annotation,
        {"id": "c", "model": "gpt-4o-2024-11-20", "choices": [], "usage": _usage(9, 3)},
    )
    events = replay_every_way(data, "azure-openai")
    assert kinds(events) == ["text", "usage", "done"]
    done = _last(events)
    assert isinstance(done, Done) and done.model == "gpt-4o-2024-11-20"
    assert next(e for e in events if isinstance(e, UsageUpdate)).usage.total_tokens == 12


def test_zai_tool_stream_repeats_the_call_id_and_ends_with_usage() -> None:
    # docs.z.ai, Tool Streaming Output (`tool_stream=True`, GLM-4.6 and later): the
    # arguments stream in `delta.tool_calls` fragments, accumulated by index; Z.ai
    # repeats the call's id on each fragment and puts usage on the finish chunk.
    def piece(arguments: str, name: str | None = None) -> dict[str, Any]:
        function = {"arguments": arguments} | ({"name": name} if name else {})
        return {"tool_calls": [{"index": 0, "id": "call_z1", "type": "function",
                                "function": function}]}  # fmt: skip

    usage = _usage(40, 12, prompt_tokens_details={"cached_tokens": 32})
    data = _sse(
        _chunk({"role": "assistant", "reasoning_content": "Need weather."}),
        _chunk(piece("", "get_weather")),
        _chunk(piece('{"location": "Bei')),
        _chunk(piece('jing"}')),
        _chunk({"role": "assistant"}, "tool_calls", usage=usage),
    )
    events = replay_every_way(data, "zai")
    assert kinds(events) == ["reasoning", "tool_start", "tool_request", "usage", "done"]
    summary = summarize(events)
    assert summary.tool_calls == [("call_z1", "get_weather", {"location": "Beijing"})]
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (8, 32)
