"""OpenAI Responses streams from openai/codex's own fixtures and test helpers, and from
Envoy AI Gateway's Responses translator test, that a sweep of apps' and gateways'
fixtures replayed and found read right, in shapes no other test holds: codex's mocks
write items and deltas with neither an `output_index` nor an `item_id`, its fixture file
carries a stray line that is no SSE field, and its SSE reader expects the wait a
`response.failed` rate limit names in seconds or milliseconds.

Each body is written by hand from the source named beside it (its essential events),
replayed whole and cut at arbitrary byte boundaries (`replay_every_way`), and checked
against what that source expects.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import Failed, ServerToolCall, ServerToolResult
from tests.support import Expect, check, replay_every_way, summarize

PROVIDER = "openai-responses"


def codex_sse(*events: dict[str, Any]) -> bytes:
    """codex-rs/core/tests/common/responses.rs `sse()`: `event:` the payload's type, then
    its `data:` (an event of its type alone is written without data)."""
    out = ""
    for event in events:
        out += f"event: {event['type']}\n"
        out += f"data: {json.dumps(event)}\n\n" if len(event) != 1 else "\n"
    return out.encode()


# The helpers of codex-rs/core/tests/common/responses.rs, as they write the events.
def ev_response_created(response_id: str) -> dict[str, Any]:
    return {"type": "response.created", "response": {"id": response_id}}


def ev_completed(response_id: str) -> dict[str, Any]:
    usage = {
        "input_tokens": 0,
        "input_tokens_details": None,
        "output_tokens": 0,
        "output_tokens_details": None,
        "total_tokens": 0,
    }
    return {"type": "response.completed", "response": {"id": response_id, "usage": usage}}


def _message(item_id: str | None, text: str) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "message", "role": "assistant"}
    if item_id is not None:
        item["id"] = item_id
    return {**item, "content": [{"type": "output_text", "text": text}]}


def ev_message_item_added(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "response.output_item.added", "item": _message(item_id, text)}


def ev_assistant_message(item_id: str | None, text: str) -> dict[str, Any]:
    return {"type": "response.output_item.done", "item": _message(item_id, text)}


def ev_output_text_delta(delta: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "delta": delta}


def _summary(texts: list[str]) -> list[dict[str, str]]:
    return [{"type": "summary_text", "text": text} for text in texts]


def ev_reasoning_item_added(item_id: str, summary: list[str]) -> dict[str, Any]:
    item = {"type": "reasoning", "id": item_id, "summary": _summary(summary)}
    return {"type": "response.output_item.added", "item": item}


def ev_reasoning_item(item_id: str, summary: list[str], raw: list[str]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": _summary(summary)}
    if raw:
        item["content"] = [{"type": "reasoning_text", "text": text} for text in raw]
    return {"type": "response.output_item.done", "item": item}


def ev_reasoning_summary_text_delta(delta: str) -> dict[str, Any]:
    return {"type": "response.reasoning_summary_text.delta", "delta": delta, "summary_index": 0}


def ev_reasoning_text_delta(delta: str) -> dict[str, Any]:
    return {"type": "response.reasoning_text.delta", "delta": delta, "content_index": 0}


def ev_web_search_call(event: str, item_id: str, status: str, query: str) -> dict[str, Any]:
    item = {
        "type": "web_search_call",
        "id": item_id,
        "status": status,
        "action": {"type": "search", "query": query},
    }
    return {"type": f"response.output_item.{event}", "item": item}


def _done(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "item": item}


CODEX_USAGE = (0, 0, 0, 0, 0)


def test_codex_cli_fixture_with_a_line_that_is_no_sse_field() -> None:
    """openai/codex codex-rs/core/tests/cli_responses_fixture.sse, as the file holds it:
    a `# core/tests/...` line between an event's `event:` and `data:` lines (no colon:
    a field of that whole name, which SSE ignores; it is no `:` comment), a message done
    item without id or output index, and a terminal response whose output is empty and
    which has no usage. codex's CLI test expects "fixture hello" printed."""
    body = (
        b"event: response.created\n"
        b'data: {"type":"response.created","response":{"id":"resp1"}}\n\n'
        b"event: response.output_item.done\n"
        b"# core/tests/cli_responses_fixture.sse\n"
        b'data: {"type":"response.output_item.done","item":{"type":"message","role":'
        b'"assistant","content":[{"type":"output_text","text":"fixture hello"}]}}\n\n'
        b"event: response.completed\n"
        b'data: {"type":"response.completed","response":{"id":"resp1","output":[]}}\n'
    )
    events = replay_every_way(body, PROVIDER)
    check(summarize(events), Expect(text="fixture hello", raw_stop_reason="completed"))
    assert events[-1].response_id == "resp1"  # type: ignore[union-attr]


def test_codex_two_whole_messages_without_ids_or_indexes_are_both_said() -> None:
    """openai/codex codex-rs/codex-api/src/sse/responses.rs (parses_items_and_completed):
    two assistant messages, each only a done item with neither id nor output index,
    "Hello" then "World", and a completed response without usage: codex expects both
    items and the completion with no token usage. Two items that name no place could
    be read as one; each is said once, in order."""
    body = codex_sse(
        ev_assistant_message(None, "Hello"),
        ev_assistant_message(None, "World"),
        {"type": "response.completed", "response": {"id": "resp1"}},
    )
    check(
        summarize(replay_every_way(body, PROVIDER)),
        Expect(text="HelloWorld", raw_stop_reason="completed"),
    )


def test_codex_index_less_deltas_of_added_messages_are_not_said_again_at_their_done() -> None:
    """codex-rs/core/tests/common/responses.rs: `ev_message_item_added` (its content
    part already there, empty), `ev_output_text_delta` (a delta and nothing else: no
    item id, no output index, no content index), then `ev_assistant_message` with the
    whole text, for two messages one after the other, and `ev_completed` with its usage
    of zeros and null details. The deltas are the text; the done items repeat it and add
    nothing."""
    body = codex_sse(
        ev_response_created("resp-1"),
        ev_message_item_added("msg-1", ""),
        ev_output_text_delta("Hel"),
        ev_output_text_delta("lo"),
        ev_assistant_message("msg-1", "Hello"),
        ev_message_item_added("msg-2", ""),
        ev_output_text_delta("Bye"),
        ev_assistant_message("msg-2", "Bye"),
        ev_completed("resp-1"),
    )
    check(
        summarize(replay_every_way(body, PROVIDER)),
        Expect(text="HelloBye", usage=CODEX_USAGE, raw_stop_reason="completed"),
    )


def test_codex_message_added_with_its_whole_text_is_said_once() -> None:
    """codex-rs/core/tests/common/responses.rs: `ev_message_item_added(id, text)` puts
    the whole text in the added item's content; with no delta after it, the done item
    says the same text. It is said once."""
    body = codex_sse(
        ev_response_created("resp-1"),
        ev_message_item_added("msg-1", "Hello"),
        ev_assistant_message("msg-1", "Hello"),
        ev_completed("resp-1"),
    )
    check(
        summarize(replay_every_way(body, PROVIDER)),
        Expect(text="Hello", usage=CODEX_USAGE, raw_stop_reason="completed"),
    )


def test_codex_reasoning_summary_and_raw_text_deltas_without_item_ids() -> None:
    """codex-rs/core/tests/common/responses.rs: `ev_reasoning_item_added` with one empty
    summary part, `ev_reasoning_summary_text_delta` (only `summary_index`),
    `ev_reasoning_text_delta` (only `content_index`), then `ev_reasoning_item` with the
    whole summary and raw content, and a message. codex shows the summary and the raw
    reasoning as two parts; neither is said again at the done item, which goes back
    whole (`details`, no encrypted content: no signature)."""
    body = codex_sse(
        ev_response_created("resp-1"),
        ev_reasoning_item_added("rs-1", [""]),
        ev_reasoning_summary_text_delta("Sum"),
        ev_reasoning_summary_text_delta("mary"),
        ev_reasoning_text_delta("Raw"),
        ev_reasoning_item("rs-1", ["Summary"], ["Raw"]),
        ev_assistant_message("msg-1", "ok"),
        ev_completed("resp-1"),
    )
    events = replay_every_way(body, PROVIDER)
    check(
        summarize(events),
        Expect(
            text="ok",
            reasoning="Summary\n\nRaw",
            usage=CODEX_USAGE,
            raw_stop_reason="completed",
        ),
    )
    details = [ev.details for ev in events if getattr(ev, "details", None)]
    assert details == [ev_reasoning_item("rs-1", ["Summary"], ["Raw"])["item"]]


def test_codex_whole_client_items_and_a_web_search_without_indexes() -> None:
    """codex-rs/core/tests/common/responses.rs: `ev_web_search_call_added`/`_done` (the
    server's search), then done items alone, without output index or item id:
    `ev_apply_patch_custom_tool_call` (a `custom_tool_call` whose `input` is the patch
    text), `ev_local_shell_call` (status and an exec action) and `ev_function_call`.
    codex runs the three calls in order; the search is the provider's."""
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    body = codex_sse(
        ev_response_created("resp-1"),
        ev_web_search_call("added", "ws-1", "in_progress", "weather seattle"),
        ev_web_search_call("done", "ws-1", "completed", "weather seattle"),
        _done({"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c1"}),
        _done(
            {
                "type": "local_shell_call",
                "call_id": "c2",
                "status": "completed",
                "action": {"type": "exec", "command": ["ls", "-l"]},
            }
        ),
        _done(
            {
                "type": "function_call",
                "call_id": "c3",
                "name": "shell",
                "arguments": '{"command":["echo","hi"]}',
            }
        ),
        ev_completed("resp-1"),
    )
    events = replay_every_way(body, PROVIDER)
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                ("c1", "apply_patch", {"input": patch}),
                ("c2", "local_shell_call", {"action": {"type": "exec", "command": ["ls", "-l"]}}),
                ("c3", "shell", {"command": ["echo", "hi"]}),
            ),
            usage=CODEX_USAGE,
            stop_reason="tool_use",
            raw_stop_reason="completed",
        ),
    )
    search = [ev for ev in events if isinstance(ev, ServerToolCall | ServerToolResult)]
    assert [(type(ev).__name__, ev.call_id) for ev in search] == [
        ("ServerToolCall", "ws-1"),
        ("ServerToolResult", "ws-1"),
    ]


@pytest.mark.parametrize(
    ("code", "message", "retryable", "retry_after"),
    [
        # codex-api sse/responses.rs error_when_error_event: the wait in seconds
        (
            "rate_limit_exceeded",
            "Rate limit reached for gpt-5.1 in organization org-AAA on tokens per min "
            "(TPM): Limit 30000, Used 22999, Requested 12528. Please try again in 11.054s."
            " Visit https://platform.openai.com/account/rate-limits to learn more.",
            True,
            11.054,
        ),
        # test_try_parse_retry_after: in milliseconds
        (
            "rate_limit_exceeded",
            "Rate limit reached for gpt-5.1 in organization org- on tokens per min (TPM): "
            "Limit 1, Used 1, Requested 19304. Please try again in 28ms. Visit "
            "https://platform.openai.com/account/rate-limits to learn more.",
            True,
            0.028,
        ),
        # test_try_parse_retry_after_azure: in words
        ("rate_limit_exceeded", "Rate limit exceeded. Try again in 35 seconds.", True, 35.0),
        # context_window_error_with_newline_is_fatal
        (
            "context_length_exceeded",
            "Your input exceeds the context window of this model. Please adjust your "
            "input and try\nagain.",
            False,
            None,
        ),
        # quota_exceeded_error_is_fatal
        (
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
            False,
            None,
        ),
        # codex's `usage_not_included` (a ChatGPT plan without Codex): fatal too
        (
            "usage_not_included",
            "To use Codex with your ChatGPT plan, upgrade to Plus.",
            False,
            None,
        ),
    ],
    ids=["seconds", "milliseconds", "azure-words", "context", "quota", "plan"],
)
def test_codex_failed_responses_say_whether_and_when_to_retry(
    code: str, message: str, retryable: bool, retry_after: float | None
) -> None:
    """openai/codex codex-rs/codex-api/src/sse/responses.rs: a lone `response.failed`
    (its `sequence_number` 3, `usage: null`) whose `error.code` codex sorts: a rate limit
    is retried after the wait its message names (`try again in 11.054s`, `28ms`, Azure's
    `35 seconds`); a context window, quota or plan error is fatal. The turn ends in that
    error, its code and message as sent."""
    response = {
        "id": "resp_689bcf18d7f0",
        "object": "response",
        "created_at": 1755041560,
        "status": "failed",
        "background": False,
        "error": {"code": code, "message": message},
        "usage": None,
        "user": None,
        "metadata": {},
    }
    body = codex_sse({"type": "response.failed", "sequence_number": 3, "response": response})
    events = replay_every_way(body, PROVIDER)
    check(summarize(events), Expect(terminal="error", error_kind="stream_error"))
    failure = events[-1]
    assert isinstance(failure, Failed)
    error = failure.error
    assert (error.code, error.message) == (code, message)
    assert (error.retryable, error.retry_after) == (retryable, retry_after)


def test_envoy_tool_call_closed_only_by_the_terminal_with_cached_input() -> None:
    """envoyproxy/ai-gateway internal/translator/anthropic_openai_responses_test.go
    (TestAnthropicToResponsesOpenAITranslator_ResponseBodyStreamingTool): gpt-5.6-terra
    streams a call's arguments in one delta and their done event, then no
    `output_item.done`, and `response.completed` with an empty `output` and usage of
    42 input (5 of them cached), 7 output (2 reasoning). Envoy writes one tool_use block
    with `{"city":"Seattle"}` (not repeated from the done event), stop `tool_use`, and
    reads 5 cached tokens."""
    usage = {
        "input_tokens": 42,
        "input_tokens_details": {"cached_tokens": 5},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 2},
        "total_tokens": 49,
    }
    response = {"id": "resp_123", "object": "response", "model": "gpt-5.6-terra"}
    arguments = '{"city":"Seattle"}'
    call = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_123",
        "name": "get_weather",
        "arguments": "",
        "status": "in_progress",
    }
    at = {"item_id": "fc_1", "output_index": 0}
    body = codex_sse(
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {**response, "status": "in_progress"},
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": call,
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 2,
            **at,
            "delta": arguments,
        },
        {
            "type": "response.function_call_arguments.done",
            "sequence_number": 3,
            **at,
            "name": "get_weather",
            "arguments": arguments,
        },
        {
            "type": "response.completed",
            "sequence_number": 4,
            "response": {**response, "status": "completed", "output": [], "usage": usage},
        },
    )
    check(
        summarize(replay_every_way(body, PROVIDER)),
        Expect(
            text="",
            tools=(("call_123", "get_weather", {"city": "Seattle"}),),
            usage=(37, 7, 2, 5, 49),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="gpt-5.6-terra",
        ),
    )


def test_portkey_adapter_call_at_its_message_index_with_the_message_item_id() -> None:
    """Portkey-AI/gateway src/adapters/responses/streamTransform.ts (its test "should
    correctly transform a tool call streaming sequence": claude-3-sonnet's chat stream of
    `get_weather` with `{"location": "Paris"}` in four pieces, `finish_reason:
    tool_calls`, usage 15 + 20). The adapter opens a message at output index 0, then the
    call added at output index 0 too (the chat `tool_calls[].index`), its argument deltas
    naming the message's item id; at `[DONE]` it closes only the message (empty text)
    and completes with an output of that message alone: no done item and no terminal
    item for the call. The call is the turn's, whole, and the turn says `tool_use`."""
    msg, model = "msg_5f0c", "claude-3-sonnet"
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    message = {"id": msg, "type": "message", "role": "assistant", "status": "completed"}
    message_done = {**message, "content": [part]}

    def snapshot(
        status: str, output: list[dict[str, Any]], used: tuple[int, int]
    ) -> dict[str, Any]:
        usage = {
            "input_tokens": used[0],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": used[1],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": sum(used),
        }
        return {
            "id": "resp_2b7e",
            "object": "response",
            "created_at": 1700000000,
            "status": status,
            "model": model,
            "output": output,
            "usage": usage,
        }

    at = {"item_id": msg, "output_index": 0}
    call = {
        "id": "fc_8a1d",
        "type": "function_call",
        "call_id": "call_abc123",
        "name": "get_weather",
        "arguments": "",
        "status": "in_progress",
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": snapshot("in_progress", [], (0, 0))},
        {"type": "response.in_progress", "response": snapshot("in_progress", [], (0, 0))},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {"type": "response.content_part.added", **at, "content_index": 0, "part": part},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        *(
            {"type": "response.function_call_arguments.delta", **at, "delta": piece}
            for piece in ('{"lo', "cation", '": "Pa', 'ris"}')
        ),
        {"type": "response.output_text.done", **at, "content_index": 0, "text": "", "logprobs": []},
        {"type": "response.content_part.done", **at, "content_index": 0, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": message_done},
        {"type": "response.completed", "response": snapshot("completed", [message_done], (15, 20))},
    ]
    numbered = [{**event, "sequence_number": n} for n, event in enumerate(events)]
    check(
        summarize(replay_every_way(codex_sse(*numbered), PROVIDER)),
        Expect(
            text="",
            tools=(("call_abc123", "get_weather", {"location": "Paris"}),),
            usage=(15, 20, 0, 0, 35),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model=model,
        ),
    )


def _portkey_text_then_call(events: str) -> bytes:
    """Portkey's adapter (streamTransform.ts) on a chat stream of text, then a call:
    the text's deltas in the message at output index 0, the call added at output index 0
    over the open message, its argument deltas naming the message; at `[DONE]` the
    message's `output_text.done`, `content_part.done` and done item with the whole text
    ("text", "part", "item": which of the three `events` holds), and the terminal."""
    msg, text = "msg_5f0c", "Let me check."
    at = {"item_id": msg, "output_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    part = {**empty, "text": text}
    message = {"id": msg, "type": "message", "role": "assistant", "status": "completed"}
    response = {"id": "resp_2b7e", "object": "response", "model": "claude-3-sonnet"}
    usage = {"input_tokens": 15, "output_tokens": 20, "total_tokens": 35}
    call = {
        "id": "fc_8a1d",
        "type": "function_call",
        "call_id": "call_abc123",
        "name": "get_weather",
        "arguments": "",
        "status": "in_progress",
    }
    closing = {
        "text": {"type": "response.output_text.done", **at, "content_index": 0, "text": text},
        "part": {"type": "response.content_part.done", **at, "content_index": 0, "part": part},
        "item": {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**message, "content": [part]},
        },
    }
    stream: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {"type": "response.content_part.added", **at, "content_index": 0, "part": empty},
        {"type": "response.output_text.delta", **at, "content_index": 0, "delta": "Let me "},
        {"type": "response.output_text.delta", **at, "content_index": 0, "delta": "check."},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        *(
            {"type": "response.function_call_arguments.delta", **at, "delta": piece}
            for piece in ('{"lo', "cation", '": "Pa', 'ris"}')
        ),
        *(closing[name] for name in events.split()),
        {
            "type": "response.completed",
            "response": {
                **response,
                "status": "completed",
                "output": [{**message, "content": [part]}],
                "usage": usage,
            },
        },
    ]
    return codex_sse(*({**event, "sequence_number": n} for n, event in enumerate(stream)))


@pytest.mark.parametrize("closing", ["text part item", "part item", "item"])
def test_portkey_text_streamed_before_a_call_added_over_its_message_is_said_once(
    closing: str,
) -> None:
    """Portkey-AI/gateway src/adapters/responses/streamTransform.ts, a chat stream of
    text then a call (Claude's "Let me check." before `get_weather`): the call is added at
    output index 0, over the message still open there, as Ollama does; unlike Ollama,
    the adapter closes that message afterwards, at `[DONE]`, its `output_text.done`,
    `content_part.done` and done item naming it by its item id at output index 0, with
    the text that streamed. Before: the message's state went with the call's arrival,
    its done events read as a part that had no deltas, and the text came twice ("Let me
    check.Let me check."); its done item also marked the call done."""
    body = _portkey_text_then_call(closing)
    check(
        summarize(replay_every_way(body, PROVIDER)),
        Expect(
            text="Let me check.",
            tools=(("call_abc123", "get_weather", {"location": "Paris"}),),
            usage=(15, 20, 0, 0, 35),
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="claude-3-sonnet",
        ),
    )
