"""Stream readings session 35 saw and left open, each decided from the source that
writes the shape (a gateway's converter, the provider's reference): fixed where rxllm
misread. Bodies are written by hand from that source, replayed whole and cut at
arbitrary byte boundaries, and over a loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Citation, Done, Failed, ReasoningDelta, ToolRequest
from rxllm.providers.anthropic import anthropic_messages
from tests.support import (
    Expect,
    ServeBody,
    check,
    kinds,
    log_messages,
    replay_every_way,
    summarize,
)


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


async def _chat_record(serve_body: ServeBody, body: bytes) -> rxllm.StreamRecord:
    base_url = await serve_body(body)
    async with rxllm.provider("openai", api_key="k", base_url=base_url) as provider:
        return await provider.complete(
            rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        )


def _sent_to_anthropic(record: rxllm.StreamRecord) -> list[dict[str, Any]]:
    """The turn's content blocks as the next Anthropic request writes them."""
    _, messages = anthropic_messages(
        [rxllm.Message.user("hi"), record.to_message(), rxllm.Message.user("and?")]
    )
    return [
        block
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
    ]


# -- Helicone's Anthropic-to-chat converter: interleaved thinking --------------------------

# Helicone/helicone packages/llm-mapper/transform/providers/anthropic/streamedResponse/
# toOpenai.ts (`AnthropicToOpenAIStreamConverter`, its AI Gateway serving Claude on the
# chat wire): each `thinking_delta` is a chunk's `delta.reasoning`, whatever block it is
# in; `server_tool_use` and `web_search_tool_result` blocks are skipped; each thinking
# block's whole text and signature are kept by block index and all written at
# `message_delta`, on the finish chunk, as untyped `reasoning_details` entries
# `{"thinking", "signature"}`; `message_stop` is a choiceless usage chunk, no `[DONE]`.
_CLAUDE = "claude-sonnet-4-5-20250929"
_FIRST = ["The user asks about Paris weather;", " I should search."]
_SECOND = ["The results say 18C and sunny;", " answer briefly."]
_SIG_FIRST = "EqQBCkgIBRABGAIqQFirstBlockSignatureXk3Q"
_SIG_SECOND = "EpUCCkgIBRABGAIqQSecondBlockSignatureR7mW"


def _claude_chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> Any:
    choices = []
    if delta is not None:
        choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "object": "chat.completion.chunk",
        "created": 1766265214,
        "model": _CLAUDE,
        "system_fingerprint": "",
        "choices": choices,
        **extra,
    }


def _interleaved(*between: dict[str, Any]) -> bytes:
    """Two thinking blocks (a web search between them, which the converter skips, and
    any chunks `between`), the answer, and both blocks signed at the finish."""
    entries = [
        {"thinking": "".join(_FIRST), "signature": _SIG_FIRST},
        {"thinking": "".join(_SECOND), "signature": _SIG_SECOND},
    ]
    return _sse(
        _claude_chunk({"role": "assistant", "content": ""}),
        *(_claude_chunk({"reasoning": piece}) for piece in _FIRST),
        *(_claude_chunk(delta) for delta in between),
        *(_claude_chunk({"reasoning": piece}) for piece in _SECOND),
        _claude_chunk({"content": "It is 18C and sunny in Paris."}),
        _claude_chunk({"reasoning_details": entries}, "stop"),
        _claude_chunk(
            None, usage={"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508}
        ),
        done=False,
    )


def test_helicone_interleaved_thinking_signs_no_block_with_another_blocks_signature() -> None:
    """The two blocks' thinking streamed as one run of reasoning, and their signatures
    came apart at the finish: no signature is that run's. Before, the first entry's
    signature closed the whole run (both blocks' thinking signed as the first block)
    and the second's closed an empty block; now the thinking is said once and stays
    plain reasoning, with no signature."""
    with log_messages() as logged:
        events = replay_every_way(_interleaved(), "openai")
    check(
        summarize(events),
        Expect(
            text="It is 18C and sunny in Paris.",
            reasoning="".join(_FIRST + _SECOND),
            signatures=0,
            usage=(412, 96, 0, 0, 508),
            model=_CLAUDE,
        ),
    )
    assert not [e for e in events if isinstance(e, ReasoningDelta) and e.signature is not None]
    assert any("signed apart" in message for message in logged)


async def test_helicone_interleaved_thinking_goes_back_to_anthropic_without_a_wrong_signature(
    serve_body: ServeBody,
) -> None:
    """What the record sends back to Anthropic (a fallback, a history moved to the
    native wire): before, a thinking block holding both blocks' thinking signed with the
    first's signature, and an empty one with the second's, which the API refuses
    ("Invalid `signature` in `thinking` block"); now no thinking block, as for any
    reasoning without its own signature, and the text as it came. A text chunk between
    the blocks (the model wrote before searching) changes nothing."""
    record = await _chat_record(serve_body, _interleaved({"content": "Searching. "}))
    assert record.reasoning == "".join(_FIRST + _SECOND)
    assert [part.signature for part in record.reasoning_parts] == [None]
    assert _sent_to_anthropic(record) == [
        {"type": "text", "text": "Searching. It is 18C and sunny in Paris."}
    ]


def test_helicone_one_thinking_block_keeps_its_signature() -> None:
    """One block signed at the finish (the shape a890b02 read) is still that block's."""
    body = _sse(
        _claude_chunk({"role": "assistant", "content": ""}),
        *(_claude_chunk({"reasoning": piece}) for piece in _FIRST),
        _claude_chunk({"content": "Done."}),
        _claude_chunk(
            {"reasoning_details": [{"thinking": "".join(_FIRST), "signature": _SIG_FIRST}]},
            "stop",
        ),
        done=False,
    )
    summary = summarize(replay_every_way(body, "openai"))
    assert (summary.reasoning, summary.signatures) == ("".join(_FIRST), [_SIG_FIRST])


# -- Helicone's chat-to-Responses converter: calls named before their arguments -----------

# Helicone/helicone packages/llm-mapper/transform/providers/responses/streamedResponse/
# toResponses.ts (`ChatToResponsesStreamConverter`, its AI Gateway answering the
# Responses API from a chat upstream): every item at `output_index` 0; a call is added
# (`fn_<id>_<n>`, by its chat index) the first time a fragment of it comes, each argument
# fragment is a `function_call_arguments.delta` under its item id, and at the chat finish
# each call's `function_call_arguments.done` and done item follow; `response.completed`
# (on the usage chunk) lists the calls as `fc_<call_id>`. A chat chunk that names both
# calls with empty arguments (the upstream's headers first) adds both before either's
# arguments come.
_RESPONSE_ID = "chatcmpl-D2kq7RjX0cVb3wQ9nZy1tH5s"
_CALLS = [
    ("call_q1Rz8mWf", "get_weather", ['{"city":', ' "Paris"}'], {"city": "Paris"}),
    ("call_T5vLx2Ce", "get_time", ['{"tz":', ' "CET"}'], {"tz": "CET"}),
]


def _call_item(n: int, status: str, arguments: str) -> dict[str, Any]:
    call_id, name = _CALLS[n][:2]
    return {
        "id": f"fn_{_RESPONSE_ID}_{n}",
        "type": "function_call",
        "status": status,
        "name": name,
        "call_id": call_id,
        "arguments": arguments,
        "parsed_arguments": None,
    }


def _events(*payloads: dict[str, Any]) -> bytes:
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


def _calls_named_first(order: list[tuple[int, int]]) -> bytes:
    """Both calls added, then their argument fragments in `order` ((call, piece) pairs),
    then each call's done events and the completed response."""
    payloads: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {
                "id": _RESPONSE_ID,
                "object": "response",
                "created_at": 1766265214,
                "status": "in_progress",
                "output": [],
                "model": "gpt-4o-mini",
            },
        },
        {"type": "response.in_progress", "response": {"id": _RESPONSE_ID}},
        *(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": _call_item(n, "in_progress", ""),
            }
            for n in range(len(_CALLS))
        ),
        *(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": f"fn_{_RESPONSE_ID}_{n}",
                "output_index": 0,
                "delta": _CALLS[n][2][piece],
            }
            for n, piece in order
        ),
    ]
    for n, (_, _, pieces, _) in enumerate(_CALLS):
        arguments = "".join(pieces)
        payloads += [
            {
                "type": "response.function_call_arguments.done",
                "item_id": f"fn_{_RESPONSE_ID}_{n}",
                "output_index": 0,
                "arguments": arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": _call_item(n, "completed", arguments),
            },
        ]
    output = [
        _call_item(n, "completed", "".join(_CALLS[n][2])) | {"id": f"fc_{_CALLS[n][0]}"}
        for n in range(len(_CALLS))
    ]
    payloads.append(
        {
            "type": "response.completed",
            "response": {
                "id": _RESPONSE_ID,
                "object": "response",
                "created_at": 1766265214,
                "status": "completed",
                "model": "gpt-4o-mini",
                "output": output,
                "usage": {"input_tokens": 81, "output_tokens": 46, "total_tokens": 127},
            },
        }
    )
    return _events(*payloads)


_ONE_THEN_THE_OTHER = [(0, 0), (0, 1), (1, 0), (1, 1)]
_INTERLEAVED = [(0, 0), (1, 0), (0, 1), (1, 1)]


@pytest.mark.parametrize("order", [_ONE_THEN_THE_OTHER, _INTERLEAVED], ids=["in_turn", "mixed"])
def test_helicone_two_calls_added_at_one_output_index_before_their_arguments(
    order: list[tuple[int, int]],
) -> None:
    """Each call with its own arguments. Before, the second call's start ended the
    first with no arguments at all, and the turn failed ("arguments of tool call
    'call_q1Rz8mWf' ('get_weather') are missing, not a JSON object")."""
    events = replay_every_way(_calls_named_first(order), "openai-responses")
    check(
        summarize(events),
        Expect(
            reasoning="",
            tools=tuple((call_id, name, arguments) for call_id, name, _, arguments in _CALLS),
            usage=(81, 46, 0, 0, 127),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="gpt-4o-mini",
        ),
    )
    assert [(e.call_id, e.index) for e in events if isinstance(e, ToolRequest)] == [
        ("call_q1Rz8mWf", 0),
        ("call_T5vLx2Ce", 1),
    ]


async def test_helicone_two_calls_added_at_one_output_index_over_http(
    serve_body: ServeBody,
) -> None:
    base_url = await serve_body(_calls_named_first(_INTERLEAVED))
    async with rxllm.provider("openai-responses", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="gpt-4o-mini", messages=[rxllm.Message.user("hi")])
        )
    assert isinstance(record.terminal, Done)
    assert [(c.call_id, c.arguments) for c in record.tool_calls] == [
        ("call_q1Rz8mWf", {"city": "Paris"}),
        ("call_T5vLx2Ce", {"tz": "CET"}),
    ]
    assert len(record.attempts) == 1


# -- Venice: web search sources after the usage chunk ---------------------------------------

# achappey/aihappey-ai Core/AIHappey.Tests/Venice/VeniceProviderStreamTests.cs replays
# Venice's chat stream with web search (`venice_parameters.enable_web_search: "on"`): the
# answer, the finish chunk, the usage chunk (`choices: []`), then two choiceless chunks
# whose `venice_parameters` carry `web_search_citations` (`{content, date, title, url}`:
# a second entry for one URL, an entry without a URL), and expects each source before
# the finish. The SDKs read a chat stream to its `[DONE]` or its end.
_VENICE = "venice/kimi-k2-6"
_VENICE_FLAGS = {
    "enable_web_search": "on",
    "enable_web_citations": True,
    "include_search_results_in_stream": True,
}


def _venice_chunk(choices: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-venice-7",
        "object": "chat.completion.chunk",
        "created": 1778768574,
        "model": _VENICE,
        "choices": choices,
        **more,
    }


def _venice_sources(*entries: dict[str, Any]) -> dict[str, Any]:
    return _venice_chunk(
        [], venice_parameters={**_VENICE_FLAGS, "web_search_citations": list(entries)}
    )


def _venice_after_usage(done: bool) -> bytes:
    return _sse(
        _venice_chunk(
            [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": "Paris is sunny [REF]0[/REF]."},
                    "finish_reason": None,
                }
            ]
        ),
        _venice_chunk([{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]),
        _venice_chunk([], usage={"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}),
        _venice_sources(
            {
                "content": "18C",
                "date": "",
                "title": "Paris weather",
                "url": "https://wx.example/paris",
            },
            {
                "content": "again",
                "date": "",
                "title": "Paris (2)",
                "url": "https://wx.example/paris",
            },
        ),
        _venice_sources(
            {
                "content": "sun",
                "date": "2026-12-03",
                "title": "Forecast",
                "url": "https://fc.example/",
            },
            {"content": "no url", "date": "", "title": "Nothing"},
        ),
        done=done,
    )


_VENICE_CITED = [
    ("https://wx.example/paris", "Paris weather"),
    ("https://fc.example/", "Forecast"),
]


@pytest.mark.parametrize("done", [True, False], ids=["done_marker", "body_end"])
def test_venice_sources_after_the_usage_chunk_are_citations_before_the_finish(done: bool) -> None:
    """Each URL once, with its first title, before `done`. Before, the usage chunk
    after the finish ended the turn, and both chunks of sources were dropped
    ("ignored a chunk after the terminal event")."""
    events = replay_every_way(_venice_after_usage(done), "custom")
    check(
        summarize(events),
        Expect(text="Paris is sunny [REF]0[/REF].", usage=(12, 7, 0, 0, 19), model=_VENICE),
    )
    assert [(e.url, e.title) for e in events if isinstance(e, Citation)] == _VENICE_CITED
    assert kinds(events) == ["text", "usage", "citation", "citation", "done"]


async def test_venice_sources_after_the_usage_chunk_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_venice_after_usage(done=True))
    async with rxllm.provider("openai", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model=_VENICE, messages=[rxllm.Message.user("weather?")])
        )
    assert isinstance(record.terminal, Done)
    assert [(c.url, c.title) for c in record.citations] == _VENICE_CITED
    assert record.usage is not None and record.usage.total_tokens == 19


# -- a custom tool's input cut off: free text, not JSON ------------------------------------

# OpenAI's custom tools take free text, not JSON. The chat wire streams a custom call as
# `{"type": "custom", "custom": {"name", "input"}}` (openai-python chat_completion_chunk.py,
# `ChoiceDeltaToolCallCustom`); the Responses API as a `custom_tool_call` item whose input
# streams in `response.custom_tool_call_input.delta` events until its `.done` (openai-python
# types/responses/response_custom_tool_call_input_delta_event.py). A stop that cuts the
# output (`finish_reason: "length"`; `response.incomplete` with `max_output_tokens`)
# leaves the input cut: the turn fails, nothing dispatched (4ef9278). Before, the chat
# wire said "arguments ... are not valid JSON (Unterminated string starting at: char 10
# of 21), not a JSON object" with the JSON rxllm wraps the input in as raw, and the
# Responses wire "are missing, not a JSON object" with nothing; now both say the input
# was cut off, the input so far as raw.
_CUT = "print('hel"


def _chat_custom_cut() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-Cx1",
            "object": "chat.completion.chunk",
            "created": 1766265214,
            "model": "gpt-5-2025-08-07",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    first = {"index": 0, "id": "call_c1", "type": "custom", "custom": {"name": "code_exec"}}
    return _sse(
        chunk({"role": "assistant", "content": None, "tool_calls": [first]}),
        *(
            chunk({"tool_calls": [{"index": 0, "type": "custom", "custom": {"input": piece}}]})
            for piece in ("print(", "'hel")
        ),
        chunk({}, "length"),
    )


def _responses_custom_cut() -> bytes:
    item = {
        "id": "ctc_68a1",
        "type": "custom_tool_call",
        "status": "in_progress",
        "call_id": "call_c1",
        "name": "code_exec",
        "input": "",
    }
    response = {"id": "resp_68a1", "object": "response", "model": "gpt-5-2025-08-07"}
    return _events(
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        *(
            {
                "type": "response.custom_tool_call_input.delta",
                "output_index": 0,
                "item_id": "ctc_68a1",
                "delta": piece,
            }
            for piece in ("print(", "'hel")
        ),
        {
            "type": "response.incomplete",
            "response": {
                **response,
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "output": [item | {"input": _CUT}],
                "usage": {"input_tokens": 40, "output_tokens": 8, "total_tokens": 48},
            },
        },
    )


@pytest.mark.parametrize(
    ("body", "provider", "stop"),
    [
        (_chat_custom_cut(), "openai", "length"),
        (_responses_custom_cut(), "openai-responses", "max_output_tokens"),
    ],
    ids=["chat", "responses"],
)
def test_a_custom_tool_input_cut_off_says_so(body: bytes, provider: str, stop: str) -> None:
    events = replay_every_way(body, provider)
    summary = summarize(events)
    assert (summary.terminal, summary.error_kind, summary.tool_calls) == (
        "error",
        "malformed_tool_arguments",
        [],
    )
    error = events[-1].error  # type: ignore[union-attr]
    assert error.message == (
        "the input of tool call 'call_c1' ('code_exec') was cut off: "
        f"the turn stopped ({stop}) before the call was complete"
    )
    assert (error.raw, error.code) == (_CUT, stop)
    assert "JSON" not in error.message


async def test_a_custom_tool_input_cut_off_over_http(serve_body: ServeBody) -> None:
    record = await _chat_record(serve_body, _chat_custom_cut())
    assert not record.tool_calls
    assert isinstance(record.terminal, Failed)
    assert record.terminal.error.message.startswith(
        "the input of tool call 'call_c1' ('code_exec') was cut off"
    )


# -- Workers AI's closing tool-call entry with an index ------------------------------------


# cloudflare/ai packages/workers-ai-provider src/streaming.ts (`emitToolCallDeltas`,
# `isNullFinalizationChunk`): Workers AI closes a streamed call with an entry that has
# no id, no name and no arguments (`{id: null, type: null, function: {name: null}}`);
# the provider skips any such entry, whatever its `index`. Without an index rxllm read it
# as the last call again (test_recordings_sweep_clouds); with the index of no call yet,
# it started a second call with no name and dispatched it with `{}`.
@pytest.mark.parametrize(
    "closing",
    [
        {"index": 1, "id": None, "type": None, "function": {"name": None}},
        {"index": 1, "id": None, "type": None, "function": {"name": None, "arguments": None}},
        {"index": 1, "id": None, "type": None, "function": {"name": None, "arguments": ""}},
        {"index": 0, "id": None, "type": None, "function": {"name": None}},
    ],
    ids=["next_index", "null_arguments", "empty_arguments", "its_own_index"],
)
def test_workers_ai_closing_entry_with_an_index_is_no_call(closing: dict[str, Any]) -> None:
    model = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-9b1e",
            "object": "chat.completion.chunk",
            "created": 1751570976,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    start = {"id": "chatcmpl-tool-4c2a", "type": "function", "index": 0}
    body = _sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"tool_calls": [start | {"function": {"name": "get_weather"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"location": '}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"London"}'}}]}),
        chunk({"tool_calls": [closing]}),
        chunk({}, "tool_calls"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("chatcmpl-tool-4c2a", "get_weather", {"location": "London"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "done"]
