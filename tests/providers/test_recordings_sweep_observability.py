"""Streams recorded by observability, evaluation and proxy tools that trace or replay
many providers' calls: W&B Weave's integration cassettes (wandb/weave
tests/integrations/*/cassettes), Helicone's recorded provider streams (Helicone/helicone
packages/__tests__/cost/testData) and the streams its AI Gateway writes in one wire from
another (its llm-mapper's chat-to-Responses, Anthropic-to-chat and Gemini-to-chat
converters), in shapes no other test replays.

Each body is written by hand from the recording named beside it (its essential events or
chunks, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what a client of that endpoint
should get.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, Done
from tests.support import Expect, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _events(*payloads: dict[str, Any]) -> bytes:
    """Each payload under an `event:` line naming its type, as the APIs write them."""
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


# -- OpenAI Responses --------------------------------------------------------------------


def test_responses_web_search_preview_annotation_under_its_first_event_name() -> None:
    """wandb/weave tests/integrations/openai/cassettes/openai_test/
    test_openai_responses_tool_calling_stream.yaml (gpt-4o-2024-08-06, `web_search_preview`,
    March 2025, openai-python 1.66.3): a `web_search_call` item holding only its id and
    status (no `action`), its three progress events, then the message, each
    `url_citation` announced between text deltas as `response.output_text_annotation.added`
    (the name the API streamed then, before `response.output_text.annotation.added`) and
    repeated in the done part, item and terminal response. Each citation once, where it
    was announced (between the text before and after it), not only when the item ends."""
    model = "gpt-4o-2024-08-06"
    ws, msg = "ws_67d988a6774081929cb1601d242c6028027110e9bec378eb", "msg_67d988a8629481"
    url = "https://www.reuters.com/markets/global-markets-wrapup-1-2025-03-18/?utm_source=openai"
    title = "Euro, stocks rise ahead of landmark German spending vote"
    before = "The STOXX 600 index in Europe rose by 0.7%. "
    link = f"([reuters.com]({url}))"
    after = "\n\nIn Asia, markets also saw gains."
    text = before + link + after
    annotation = {
        "type": "url_citation",
        "start_index": len(before),
        "end_index": len(before + link),
        "url": url,
        "title": title,
    }
    part = {"type": "output_text", "text": text, "annotations": [annotation]}
    message = {
        "type": "message",
        "id": msg,
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }
    search = {"type": "web_search_call", "id": ws, "status": "completed"}
    response = {
        "id": "resp_67d988a4e1a48192b904f4761ecb129d027110e9bec378eb",
        "object": "response",
        "status": "in_progress",
        "model": model,
        "output": [],
        "tools": [{"type": "web_search_preview", "search_context_size": "medium"}],
        "usage": None,
    }
    where = {"item_id": msg, "output_index": 1, "content_index": 0}
    body = _events(
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": search | {"status": "in_progress"},
        },
        *(
            {"type": f"response.web_search_call.{step}", "output_index": 0, "item_id": ws}
            for step in ("in_progress", "searching", "completed")
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": message | {"status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {"type": "response.output_text.delta", **where, "delta": before + link},
        {
            "type": "response.output_text_annotation.added",
            **where,
            "annotation_index": 0,
            "annotation": annotation,
        },
        {"type": "response.output_text.delta", **where, "delta": after},
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {
            "type": "response.completed",
            "response": response
            | {
                "status": "completed",
                "output": [search, message],
                "usage": {
                    "input_tokens": 328,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 461,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 789,
                },
            },
        },
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(text=text, usage=(328, 461, 0, 0, 789), raw_stop_reason="completed", model=model),
    )
    assert kinds(events) == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "citation",
        "text",
        "usage",
        "done",
    ]
    citations = [event for event in events if isinstance(event, Citation)]
    assert [(c.url, c.title) for c in citations] == [(url, title)]


def test_helicone_gateway_writes_every_item_of_a_chat_turn_at_output_index_zero() -> None:
    """Helicone/helicone packages/llm-mapper/transform/providers/responses/streamedResponse/
    toResponses.ts (`ChatToResponsesStreamConverter`, the AI Gateway's chat-to-Responses
    stream: worker/test/ai-gateway/map-responses.spec.ts): every item at `output_index` 0,
    the message (`msg_<id>`) and each call (`fn_<id>_<n>`, added when its first chat
    fragment comes, its argument deltas under its item id); at the chat finish the
    message's done events, then each call's `function_call_arguments.done` and done item,
    all still at output index 0 and named by their item ids; `response.completed` (on the
    usage chunk) lists the message without an id and the calls as `fc_<call_id>`. Each
    call with its own arguments: a done event naming the first call by its id, after the
    second was added at the same index, is about the first, not the second."""
    model = "gpt-4o-mini"
    response_id = "chatcmpl-CoyYYeUWSXMSmrqMmtP4fxamq4vM2"
    msg = f"msg_{response_id}"
    text = ["Let me check", " both."]
    calls = [
        ("call_8ksZ0m4pQ", "get_weather", ['{"city":', ' "Paris"}'], {"city": "Paris"}),
        ("call_Vb2rT7nXe", "get_time", ['{"tz": "CET"}'], {"tz": "CET"}),
    ]
    whole = "".join(text)
    part = {"type": "output_text", "text": whole, "annotations": []}
    at_zero = {"item_id": msg, "output_index": 0, "content_index": 0}
    payloads: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {
                "id": response_id,
                "object": "response",
                "created_at": 1766265214,
                "status": "in_progress",
                "output": [],
                "model": model,
            },
        },
        {"type": "response.in_progress", "response": {"id": response_id}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {
                "id": msg,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        },
        {
            "type": "response.content_part.added",
            **at_zero,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *({"type": "response.output_text.delta", **at_zero, "delta": piece} for piece in text),
    ]

    def item(n: int, status: str, arguments: str) -> dict[str, Any]:
        call_id, name = calls[n][:2]
        return {
            "id": f"fn_{response_id}_{n}",
            "type": "function_call",
            "status": status,
            "name": name,
            "call_id": call_id,
            "arguments": arguments,
            "parsed_arguments": None,
        }

    for n, (_, _, pieces, _) in enumerate(calls):
        payloads.append(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": item(n, "in_progress", ""),
            }
        )
        payloads.extend(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": f"fn_{response_id}_{n}",
                "output_index": 0,
                "delta": piece,
            }
            for piece in pieces
        )
    payloads += [
        {"type": "response.output_text.done", **at_zero, "text": whole},
        {"type": "response.content_part.done", **at_zero, "part": part},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                "id": msg,
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            },
        },
    ]
    for n, (_, _, pieces, _) in enumerate(calls):
        arguments = "".join(pieces)
        payloads += [
            {
                "type": "response.function_call_arguments.done",
                "item_id": f"fn_{response_id}_{n}",
                "output_index": 0,
                "arguments": arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": item(n, "completed", arguments),
            },
        ]
    payloads.append(
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "object": "response",
                "created_at": 1766265214,
                "status": "completed",
                "model": model,
                "output": [
                    {"type": "message", "role": "assistant", "content": [part]},
                    *(
                        item(n, "completed", "".join(calls[n][2])) | {"id": f"fc_{calls[n][0]}"}
                        for n in range(len(calls))
                    ),
                ],
                "usage": {"input_tokens": 81, "output_tokens": 46, "total_tokens": 127},
            },
        }
    )
    events = replay_every_way(_events(*payloads), "openai-responses")
    check(
        summarize(events),
        Expect(
            text=whole,
            tools=tuple((call_id, name, arguments) for call_id, name, _, arguments in calls),
            usage=(81, 46, 0, 0, 127),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )
    # each call requested at its own done event, the first after the second started
    assert kinds(events) == [
        "text",
        "tool_start",
        "tool_start",
        "tool_request",
        "tool_request",
        "usage",
        "done",
    ]


# -- chat completions family -------------------------------------------------------------


def test_legacy_function_call_forced_by_name_ends_with_stop() -> None:
    """wandb/weave weave/integrations/openai/cassettes/openai_test/
    test_openai_function_call_async_stream.yaml (gpt-4o-2024-05-13, June 2024, the
    deprecated `functions` with `function_call: {"name": "cricket_player_names"}`): the
    first chunk opens the legacy `delta.function_call` with its name, `content: null` and
    empty arguments; the arguments follow in pieces with no name and no id; a forced
    function ends with finish `stop`, not `function_call`. One call (an id made up, the
    wire sends none) with its arguments whole, `tool_use` over `stop`."""
    model = "gpt-4o-2024-05-13"
    name = "cricket_player_names"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {
            "id": "chatcmpl-9cDoAspZs24R7hQPixbNse9Lg5dgR",
            "object": "chat.completion.chunk",
            "created": 1718896570,
            "model": model,
            "system_fingerprint": "fp_f4e629d0a5",
            "choices": [choice],
        }

    pieces = ['{"', "name", '":"', "Sach", "in", " Tend", "ul", "kar", '","', "team", '":"']
    pieces += ["India", '","', "highest", "_score", '":', "200", "}"]
    body = _sse(
        chunk(
            {"role": "assistant", "content": None, "function_call": {"name": name, "arguments": ""}}
        ),
        *(chunk({"function_call": {"arguments": piece}}) for piece in pieces),
        chunk({}, "stop"),
    )
    events = replay_every_way(body, "openai")
    summary = summarize(events)
    assert len(summary.tool_calls) == 1
    call_id = summary.tool_calls[0][0]
    assert call_id
    arguments = {"name": "Sachin Tendulkar", "team": "India", "highest_score": 200}
    check(
        summary,
        Expect(
            text="",
            tools=((call_id, name, arguments),),
            stop_reason="tool_use",
            raw_stop_reason="stop",
            model=model,
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "done"]


def test_nvidia_whole_call_with_its_finish_and_usage_on_every_chunk() -> None:
    """wandb/weave tests/integrations/langchain/cassettes/
    langchain_nvidia_ai_endpoints_test/test_chatnvidia_tool_call_stream.yaml
    (integrate.api.nvidia.com, meta/llama-3.1-8b-instruct, December 2024): the role chunk
    already carries usage (318 in, 0 out); the next chunk holds the whole call (id,
    `type`, name, arguments in one string, a key named `team:` with its colon, `index`
    last) beside finish `tool_calls` and vLLM's `stop_reason: null`, with the usage so far;
    a chunk without choices repeats that usage before `[DONE]`. The call once, its key
    kept as written, the last usage once, `tool_use`."""
    model = "meta/llama-3.1-8b-instruct"
    name = "cricket_player_names"
    call_id = "chatcmpl-tool-9c5b090a0940445f8f757a153f2a4994"
    arguments = {"name": "Virat Kohli", "team:": "India", "highest_score": 183}
    usage = {"prompt_tokens": 318, "total_tokens": 348, "completion_tokens": 30}

    def chunk(choices: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": "chat-4b7a1e8ae72042c0bdd127eb322c6e5f",
            "object": "chat.completion.chunk",
            "created": 1734386579,
            "model": model,
            "choices": choices,
            "usage": usage,
        }

    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
        "index": 0,
    }
    body = _sse(
        chunk(
            [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": ""},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
            {"prompt_tokens": 318, "total_tokens": 318, "completion_tokens": 0},
        ),
        chunk(
            [
                {
                    "index": 0,
                    "delta": {"role": None, "content": None, "tool_calls": [call]},
                    "logprobs": None,
                    "finish_reason": "tool_calls",
                    "stop_reason": None,
                }
            ],
            usage,
        ),
        chunk([], usage),
    )
    events = replay_every_way(body, "nvidia")
    check(
        summarize(events),
        Expect(
            text="",
            tools=((call_id, name, arguments),),
            usage=(318, 30, 0, 0, 348),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["usage", "tool_start", "tool_request", "usage", "done"]


def test_xai_grok_4_usage_with_sources_and_done_without_a_line_end() -> None:
    """Helicone/helicone packages/__tests__/cost/testData/xai-stream-response.snapshot
    (grok-4 through Helicone's proxy, July 2025): text chunks with no `logprobs` key, then
    an empty delta with finish `stop` and xAI's usage (`prompt_tokens_details` with
    `text_tokens` 30 and `cached_tokens` 12, `num_sources_used`), and the body ends with
    `data: [DONE]` and no line end after it. The text once, 30 fresh input and 12 cached
    (42 in all), one `done`."""
    model = "grok-4"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": "chat-e5d2a8f3",
            "object": "chat.completion.chunk",
            "created": 1752854540,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }

    pieces = ["Let", " me", " search", " for", " that", " information", "."]
    usage = {
        "prompt_tokens": 42,
        "completion_tokens": 8,
        "total_tokens": 50,
        "prompt_tokens_details": {
            "text_tokens": 30,
            "audio_tokens": 0,
            "image_tokens": 0,
            "cached_tokens": 12,
        },
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
        "num_sources_used": 3,
    }
    body = (
        _sse(
            chunk({"role": "assistant", "content": ""}),
            *(chunk({"content": piece}) for piece in pieces),
            chunk({}, "stop", usage=usage),
            done=False,
        )
        + b"data: [DONE]"
    )
    events = replay_every_way(body, "xai")
    check(
        summarize(events),
        Expect(text="".join(pieces), usage=(30, 8, 0, 12, 50), model=model),
    )
    assert kinds(events) == ["text", "usage", "done"]


def test_helicone_gateway_claude_thinking_signed_in_an_untyped_reasoning_detail() -> None:
    """Helicone/helicone packages/llm-mapper/transform/providers/anthropic/
    streamedResponse/toOpenai.ts (`AnthropicToOpenAIStreamConverter`: the AI Gateway
    serving Claude on the chat wire): the thinking streams as `delta.reasoning`, the text
    and the `tool_use` block as the chat's own fields, and the chunk with the finish
    carries the thinking blocks again as `reasoning_details` entries with no `type`,
    `{"thinking", "signature"}` (Anthropic's block as it ended, not OpenRouter's
    `reasoning.text`); the usage chunk after it counts the fresh input as `prompt_tokens`
    with the cache read as `cached_tokens` and the cache write as `cache_write_tokens`.
    The thinking once, its signature kept (a client must send the block back with it),
    the call, 338 fresh in, 500 read, 20 written."""
    model = "claude-sonnet-4-5-20250929"
    thinking = ["The user wants the weather", " in Paris; I should call the tool."]
    signature = "EqQBCkgIBRABGAIqQMu2C4rjJ6hkGpCQf0BK0Yg3HJb5sJtfQpF2VsR1xwM"
    call_id = "toolu_01JrD5kkWfjyMKoo4TSZ7iZA"

    def chunk(
        delta: dict[str, Any] | None, finish: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        choices = []
        if delta is not None:
            choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        return {
            "id": "msg_01Nb3rAqKg9tmbqhDfHRvKnc",
            "object": "chat.completion.chunk",
            "created": 1766265214,
            "model": model,
            "system_fingerprint": "",
            "choices": choices,
            **extra,
        }

    def call(**function: str) -> dict[str, Any]:
        return {
            "tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": function}]
        }

    body = _sse(
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"reasoning": piece}) for piece in thinking),
        chunk({"content": "Let me check."}),
        chunk(call(name="get_weather", arguments="")),
        chunk(call(arguments='{"city": ')),
        chunk(call(arguments='"Paris"}')),
        chunk(
            {"reasoning_details": [{"thinking": "".join(thinking), "signature": signature}]},
            "tool_calls",
        ),
        chunk(
            None,
            usage={
                "prompt_tokens": 338,
                "completion_tokens": 65,
                "total_tokens": 403,
                "prompt_tokens_details": {
                    "cached_tokens": 500,
                    "audio_tokens": 0,
                    "cache_write_tokens": 20,
                    "cache_write_details": {"write_5m_tokens": 0, "write_1h_tokens": 20},
                },
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
        ),
        done=False,
    )
    events = replay_every_way(body, "openai")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="Let me check.",
            reasoning="".join(thinking),
            signatures=1,
            tools=((call_id, "get_weather", {"city": "Paris"}),),
            usage=(338, 65, 0, 500, 923),
            cache_write=20,
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert summary.signatures == [signature]


def test_helicone_gateway_gemini_thoughts_each_with_the_one_signature() -> None:
    """Helicone/helicone packages/llm-mapper/transform/providers/google/streamedResponse/
    toOpenai.ts (`GoogleToOpenAIStreamConverter`: the AI Gateway serving Gemini on the
    chat wire): a role chunk, each thought part as `delta.reasoning`, the answer as
    `content`; the finish chunk (`stop` for `STOP`) carries `reasoning_details` with one
    untyped entry per thought part, each with the same `signature` (the `thoughtSignature`
    Gemini put on the answer's part), and the usage beside it. The thoughts once, one
    signature (not one per entry, not the thoughts again)."""
    model = "gemini-2.5-flash"
    thoughts = ["**Counting letters**\n\nI spell it out.\n\n", "**Answer**\n\nThree r's.\n\n"]
    signature = "CiQB0e2Kb0x3Hk7xq9w5bM5m1n0yDq2pK8sAPYyH3rTnZ1u+Y0QKXwHR7Z"
    answer = ["The letter 'r' appears ", "3 times."]

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-gemini-1766265214",
            "object": "chat.completion.chunk",
            "created": 1766265214,
            "model": model,
            "system_fingerprint": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }

    details = [{"thinking": thought, "signature": signature} for thought in thoughts]
    body = _sse(
        chunk({"role": "assistant"}),
        *(chunk({"reasoning": thought}) for thought in thoughts),
        *(chunk({"content": piece}) for piece in answer),
        chunk(
            {"reasoning_details": details},
            "stop",
            usage={
                "prompt_tokens": 24,
                "completion_tokens": 238,
                "total_tokens": 262,
                "completion_tokens_details": {"reasoning_tokens": 187},
            },
        ),
    )
    events = replay_every_way(body, "openai")
    summary = summarize(events)
    check(
        summary,
        Expect(
            text="".join(answer),
            reasoning="".join(thoughts),
            signatures=1,
            usage=(24, 238, 187, 0, 262),
            model=model,
        ),
    )
    assert summary.signatures == [signature]


def test_helicone_worker_claude_max_tokens_finish_then_a_stop_for_message_stop() -> None:
    """Helicone/helicone worker/src/lib/clients/llmmapper/providers/anthropic/
    streamedResponse/toOpenai.ts (the worker's Anthropic-to-chat converter, served by
    router/ant2oai/stream.ts): one chat chunk per Anthropic event, only the first with the
    message's id and model (the rest `""`); `message_delta` becomes a chunk whose
    `finish_reason` is Anthropic's own `stop_reason` (here `max_tokens`) with the usage
    (`input_tokens` absent there: 0 in), `message_stop` another chunk whose finish is
    `stop`, then the gateway's `[DONE]`. The text whole, the turn cut by its length (the
    later `stop` does not hide it), the id and model of the first chunk."""
    model = "claude-3-5-sonnet-20241022"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": extra.pop("id", ""),
            "object": "chat.completion.chunk",
            "created": 1730001100,
            "model": extra.pop("model", ""),
            "system_fingerprint": "",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }

    pieces = ["Paris is the capital", " of France and its largest"]
    body = _sse(
        chunk({"role": "assistant"}, id="msg_01XFDUDYJgAACzvnptvVoYEL", model=model),
        *(chunk({"content": piece}) for piece in pieces),
        chunk(
            {},
            "max_tokens",
            usage={"prompt_tokens": 0, "completion_tokens": 12, "total_tokens": 12},
        ),
        chunk({}, "stop"),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="".join(pieces),
            usage=(0, 12, 0, 0, 12),
            stop_reason="length",
            raw_stop_reason="max_tokens",
            model=model,
        ),
    )
    assert [e.response_id for e in events if isinstance(e, Done)] == [
        "msg_01XFDUDYJgAACzvnptvVoYEL"
    ]


# -- Anthropic Messages ------------------------------------------------------------------


def test_anthropic_padded_lines_one_hour_cache_write_and_no_line_end_at_message_stop() -> None:
    """Helicone/helicone packages/__tests__/cost/testData/anthropic-stream-response.snapshot
    (claude-3-5-haiku-20241022 through Helicone's proxy): every `data:` line padded with
    spaces inside the JSON after its last member (`{"type":"content_block_stop","index":0
    }`), `message_start` usage with 500 cache reads and 20 cache writes all in the
    one-hour tier (`cache_creation.ephemeral_1h_input_tokens`), a `ping` between deltas, a
    `tool_use` block whose first `input_json_delta` is empty and whose key is split
    across pieces, `message_delta` repeating the input counts beside 65 output tokens, and
    the body ending right after `message_stop`'s JSON, with no line end. The text, the
    call, 338 fresh in, 500 read, 20 written, one `done` (`tool_use`)."""
    model = "claude-3-5-haiku-20241022"
    call_id = "toolu_019z4x8aagZbz8K455pmuVqk"
    counts = {
        "input_tokens": 338,
        "cache_creation_input_tokens": 20,
        "cache_read_input_tokens": 500,
    }
    start_usage = counts | {
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 20},
        "output_tokens": 1,
        "service_tier": "standard",
    }
    pieces = ["I", "'ll", " help", " you calculate", " that using", " the", " calculate function"]
    pieces.append(".")
    arguments = ["", '{"expressio', 'n": "50', "+50", '"}']
    payloads: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_018nzQcNteHNGhuEAzJDzUMd",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces[:2]
        ),
        {"type": "ping"},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces[2:]
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": call_id, "name": "calculate", "input": {}},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in arguments
        ),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": counts | {"output_tokens": 65},
        },
    ]
    # each object's closing brace after a run of spaces, as the API pads its lines
    padded = [
        json.dumps(p, separators=(",", ":"))[:-1] + " " * (3 + n % 11) + "}"
        for n, p in enumerate(payloads)
    ]
    lines = [f"event: {p['type']}\ndata: {line}" for p, line in zip(payloads, padded, strict=True)]
    last = 'event: message_stop\ndata: {"type":"message_stop"          }'
    body = ("\n\n".join([*lines, last])).encode()
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="".join(pieces),
            tools=((call_id, "calculate", {"expression": "50+50"}),),
            usage=(338, 65, 0, 500, 923),
            cache_write=20,
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model=model,
        ),
    )
    assert kinds(events) == ["text", "tool_start", "tool_request", "usage", "done"]
