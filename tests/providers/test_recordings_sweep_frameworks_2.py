"""Streams recorded or pinned by more Python frameworks and their instrumentation
(pydantic/logfire's VCR cassettes, deepset-ai/haystack-core-integrations' streaming
tests, with the chunks they copied from real responses, and agno-agi/agno's word on
what the Anthropic API writes but refuses back): the shapes the earlier sweeps did not
replay.

Each body is written by hand from the source named beside it (its essential chunks or
events, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what the recording says and its
own test expects.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm import Message
from rxllm.events import ServerToolResult
from rxllm.providers.anthropic import anthropic_messages
from tests.support import Expect, check, kinds, replay_every_way, summarize
from tests.test_reasoning_history import record_of


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- chat completions family -------------------------------------------------------------


def test_openrouter_gemini_reasoning_between_processing_comments_usage_after_finish() -> None:
    """pydantic/logfire tests/otel_integrations/cassettes/test_openai/
    test_openrouter_streaming_reasoning.yaml (google/gemini-2.5-flash through OpenRouter,
    `reasoning: {effort: low}`): eleven `: OPENROUTER PROCESSING` comments before the
    first chunk and more between chunks; each thought twice, as `reasoning` and as a
    `reasoning.text` detail tagged `provider: google-vertex` (no signature), with
    `content: ""` beside it; the answer's chunks carry `reasoning: null` and an empty
    `reasoning_details`; the last text chunk has `stop` (`native_finish_reason`
    `STOP`) and a later chunk with an empty piece and a null finish carries the usage
    (13 in, 1003 out, no details). Each thought once, the answer once, one `done`."""
    model = "google/gemini-2.5-flash"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {
            "index": 0,
            "delta": {"role": "assistant"} | delta,
            "finish_reason": finish,
            "native_finish_reason": "STOP" if finish else None,
            "logprobs": None,
        }
        return {
            "id": "gen-1751918758-SZqPQwzFgmd8JdDUxRuL",
            "provider": "Google",
            "model": model,
            "object": "chat.completion.chunk",
            "created": 1751918759,
            "choices": [choice],
            **extra,
        }

    def thought(text: str) -> dict[str, Any]:
        detail = {"type": "reasoning.text", "text": text, "provider": "google-vertex"}
        return chunk({"content": "", "reasoning": text, "reasoning_details": [detail]})

    def answer(text: str, finish: str | None = None) -> dict[str, Any]:
        return chunk({"content": text, "reasoning": None, "reasoning_details": []}, finish)

    thoughts = [
        "**Interpreting User Intent**\n\nI'm zeroing in on the core of the query.\n\n\n",
        '**Deconstructing the "Trick"**\n\nThe trick lies in the expectation gap.\n\n\n',
    ]
    pieces = ["That's a clever way to put it!", " I'm fully operational.", " How are *you*?"]
    comment = b": OPENROUTER PROCESSING\n\n\n"
    body = (
        comment * 11
        + _sse(thought(thoughts[0]), done=False)
        + comment * 5
        + _sse(thought(thoughts[1]), done=False)
        + comment
        + _sse(
            answer(pieces[0]),
            answer(pieces[1]),
            answer(pieces[2], "stop"),
            chunk(
                {"content": ""},
                usage={"prompt_tokens": 13, "completion_tokens": 1003, "total_tokens": 1016},
            ),
        )
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            text="".join(pieces),
            reasoning="".join(thoughts),
            usage=(13, 1003, 0, 0, 1016),
            model=model,
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


def test_llama_cpp_python_functionary_repeats_id_name_and_legacy_function_call_per_piece() -> None:
    """deepset-ai/haystack-core-integrations integrations/llama_cpp/tests/
    test_chat_generator.py, `test_handle_streaming_response_tool_calls` (llama-cpp-python's
    chunks for functionary-small-v2.4, "weather in Tokyo"): a role chunk whose delta holds
    every field null, then each argument piece twice over, as the legacy
    `function_call` (name and piece) and as a `tool_calls` entry that repeats the full
    id, `type` and name beside the piece; the last pieces are a space and an empty
    string; the finish `tool_calls` on a delta of nulls. One call under that id, its
    arguments `{"city": "Tokyo"}` read once (not twice, not with the name doubled)."""
    model = "tests/models/functionary-small-v2.4.Q4_0.gguf"
    call_id = "call__0_get_current_weather_cmpl-9eb96873-de1f-43af-8b9f-89ac4fdb58e2"
    name = "get_current_weather"
    nulls = {"role": None, "content": None, "function_call": None, "tool_calls": None}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "finish_reason": finish, "logprobs": None, "delta": delta}
        return {
            "id": "chatcmpl-9eb96873-de1f-43af-8b9f-89ac4fdb58e2",
            "object": "chat.completion.chunk",
            "created": 1753457703,
            "model": model,
            "choices": [choice],
        }

    def piece(text: str) -> dict[str, Any]:
        function = {"name": name, "arguments": text}
        call = {"index": 0, "id": call_id, "type": "function", "function": function}
        return chunk(nulls | {"function_call": function, "tool_calls": [call]})

    pieces = ["{", ' "', "city", '":', ' "', "Tok", "yo", '"', " }", " ", ""]
    body = _sse(
        chunk(nulls | {"role": "assistant"}),
        *(piece(p) for p in pieces),
        chunk(nulls, "tool_calls"),
    )
    events = replay_every_way(body, "llamacpp")
    check(
        summarize(events),
        Expect(
            text="",
            tools=((call_id, name, {"city": "Tokyo"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "done"]


# -- Gemini ------------------------------------------------------------------------------


def _gemini(*payloads: dict[str, Any]) -> bytes:
    """Gemini's `alt=sse` framing, CRLF-separated as the API writes it."""
    return "".join(f"data: {json.dumps(p)}\r\n\r\n" for p in payloads).encode()


def test_gemini_six_calls_without_ids_in_one_chunk_after_a_prompt_count_that_changes() -> None:
    """deepset-ai/haystack-core-integrations integrations/google_genai/tests/
    test_chat_generator_utils.py, `test_convert_google_chunk_to_streaming_chunk_real_example`
    (gemini-2.5-flash, "weather, population and time for Paris and Berlin"): two text
    chunks whose usage has only `promptTokenCount` 217 and the total (no candidates
    count), then one chunk holding six `functionCall` parts with no `id`, the same three
    names twice, finish `STOP`, its usage 144 in, 121 out, 265 in all. The text whole, six
    calls in order each with its own id and arguments, the last usage (not the first
    prompt count), `tool_use` over `STOP`."""
    model = "gemini-2.5-flash"

    def chunk(
        parts: list[dict[str, Any]], usage: dict[str, int], **candidate: Any
    ) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, **candidate}],
            "usageMetadata": usage,
            "modelVersion": model,
        }

    calls = [
        (name, {"city": city})
        for city in ("Paris", "Berlin")
        for name in ("get_weather", "get_population", "get_time")
    ]
    early = {"promptTokenCount": 217, "totalTokenCount": 217}
    text = [
        "I'll get the weather information for Paris and Berlin",
        " and present it in a structured format.",
    ]
    body = _gemini(
        chunk([{"text": text[0]}], early),
        chunk([{"text": text[1]}], early),
        chunk(
            [{"functionCall": {"name": name, "args": args}} for name, args in calls],
            {"promptTokenCount": 144, "candidatesTokenCount": 121, "totalTokenCount": 265},
            finishReason="STOP",
        ),
    )
    summary = summarize(replay_every_way(body, "google"))
    assert [(name, args) for _, name, args in summary.tool_calls] == calls
    assert len({call_id for call_id, _, _ in summary.tool_calls}) == 6
    check(
        summary,
        Expect(
            text="".join(text),
            tools=tuple(summary.tool_calls),
            usage=(144, 121, 0, 0, 265),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
            model=model,
        ),
    )


# -- Anthropic Messages ------------------------------------------------------------------


def _anthropic(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def test_a_code_execution_result_s_citations_are_read_but_not_sent_back() -> None:
    """agno-agi/agno libs/agno/tests/unit/models/anthropic/
    test_server_tool_block_citations.py: the API writes a `citations` field on its
    `code_execution_tool_result` and `bash_code_execution_tool_result` blocks (null, or a
    list) but refuses it on input ("messages.N.content.M.code_execution_tool_result.
    citations: Extra inputs are not permitted", a 400), so a turn that ran code, sent
    back with its blocks as they came, broke the next request. Here a `code_execution`
    call, its result with `citations: null` (agno's stored block: stdout "42\n"), then
    the answer. The result is read whole; the turn goes back with both server blocks,
    the result without its `citations`."""
    call = {"type": "server_tool_use", "id": "srvtoolu_9", "name": "code_execution", "input": {}}
    code = {"code": "print(6 * 7)"}
    output = {
        "type": "code_execution_result",
        "stdout": "42\n",
        "stderr": "",
        "return_code": 0,
        "content": [],
    }
    result = {
        "type": "code_execution_tool_result",
        "tool_use_id": "srvtoolu_9",
        "content": output,
        "citations": None,
    }
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 2210, "output_tokens": 3},
    }
    body = _anthropic(
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": call},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(code)},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "text_delta", "text": "Here is the result: 42."},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 61},
        },
        {"type": "message_stop"},
    )
    events = replay_every_way(body, "anthropic")
    assert kinds(events) == ["server_tool_call", "server_tool_result", "text", "usage", "done"]
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(e.call_id, e.name, e.content) for e in results] == [
        ("srvtoolu_9", "code_execution", output)
    ]
    turn = record_of(events, "anthropic").to_message()
    _, messages = anthropic_messages([Message.user("what is 6 * 7? run it"), turn])
    sent = {k: v for k, v in result.items() if k != "citations"}
    assert messages[1]["content"] == [
        {**call, "input": code},
        sent,
        {"type": "text", "text": "Here is the result: 42."},
    ]
