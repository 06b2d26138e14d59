"""Anthropic Messages stream shapes from the 2025-2026 reference (platform.claude.com's
pages named beside each test, and anthropic-sdk-python's `types/beta/`) that no other
test replays: each body built by hand from the page's example (ids and opaque values
made up), replayed whole and cut at arbitrary byte boundaries (`replay_every_way`), and
checked against what a user of Anthropic's SDK gets."""

from __future__ import annotations

import json
from typing import Any

from rxllm import Message
from rxllm.events import Failed, Refusal, ServerToolCall
from rxllm.providers.anthropic import anthropic_messages
from tests.support import log_messages, replay_every_way, summarize
from tests.test_reasoning_history import record_of


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def start(model: str = "claude-fable-5", **usage: Any) -> dict[str, Any]:
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 412, "output_tokens": 1, **usage},
    }
    return {"type": "message_start", "message": message}


def block(index: int, content_block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content_block}


def delta(index: int, value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": value}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def text(index: int, value: str) -> list[dict[str, Any]]:
    return [
        block(index, {"type": "text", "text": ""}),
        delta(index, {"type": "text_delta", "text": value}),
        stop(index),
    ]


def end(reason: str, output_tokens: int = 7, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None, **fields},
        "usage": {"output_tokens": output_tokens},
    }


STOP = {"type": "message_stop"}


# -- Refusals -----------------------------------------------------------------------------

DECLINED = "This request was declined because it could enable cyber harm."


def refusal_details(**fields: Any) -> dict[str, Any]:
    return {"type": "refusal", "category": "cyber", "explanation": DECLINED, **fields}


def test_a_refusal_s_fallback_credit_and_recommended_model_are_logged() -> None:
    """platform.claude.com/docs/en/build-with-claude/fallback-credit and
    refusals-and-fallback (BetaRefusalStopDetails): under the `fallback-credit-2026-06-01`
    beta a refusal's `stop_details` carries `fallback_credit_token` (the credit to echo on
    the retry on a fallback model, "delivered in the final `message_delta` event's
    `stop_details`" when streaming), `fallback_has_prefill_claim` (which retry body to
    send) and `recommended_model` (where to retry when the server's own fallback could not
    run). No event carries them: they were dropped unsaid, only the type and category
    logged; now each is logged with its value, and the explanation is the refusal."""
    details = refusal_details(
        fallback_credit_token="fct_opaque_01",
        fallback_has_prefill_claim=True,
        recommended_model="claude-opus-4-8",
    )
    body = sse(start(), *text(0, "Here is"), end("refusal", stop_details=details), STOP)
    with log_messages() as messages:
        events = replay_every_way(body, "anthropic")
    got = summarize(events)
    assert (got.text, got.refusal) == ("Here is", DECLINED)
    assert (got.terminal, got.stop_reason, got.raw_stop_reason) == (
        "done",
        "content_filter",
        "refusal",
    )
    for key, value in (
        ("fallback_credit_token", "'fct_opaque_01'"),
        ("fallback_has_prefill_claim", "True"),
        ("recommended_model", "'claude-opus-4-8'"),
    ):
        said = f"no event carries the stop_details field {key}: {value}"
        assert any(m == said for m in messages), key
    # what an event carries (the explanation) or the category log says is not repeated
    assert not any(
        m.startswith("no event carries the stop_details field")
        and ("explanation" in m or "category" in m or "field type" in m)
        for m in messages
    )


def test_a_refusal_that_cut_a_call_is_said_beside_the_call_s_error() -> None:
    """platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/
    handle-streaming-refusals: the streaming classifiers stop a turn wherever it is, a
    call's input included; the API closes the cut block (`content_block_stop`, as at
    `max_tokens`) and the final `message_delta` says `refusal` with its `stop_details`.
    The call is malformed and never dispatched, and its error names the refusal; the
    refusal's explanation, which DESIGN makes an event, was dropped with everything
    after the call. It is said, as when the block is still open at the refusal."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "write_file", "input": {}}
    cut = '{"path": "x.py", "content": "import sock'
    refused = end("refusal", stop_details=refusal_details())
    begun = [block(0, call), delta(0, {"type": "input_json_delta", "partial_json": cut})]
    for frames in ([*begun, stop(0), refused, STOP], [*begun, refused, STOP]):
        events = replay_every_way(sse(start(), *frames), "anthropic")
        assert [e.type for e in events] == ["tool_start", "refusal", "usage", "error"]
        refusal, error = events[1], events[-1]
        assert isinstance(refusal, Refusal) and refusal.text == DECLINED
        assert isinstance(error, Failed)
        assert (error.error.kind, error.error.code) == ("malformed_tool_arguments", "refusal")
        assert "the turn stopped (refusal)" in error.error.message


# -- Server tools -------------------------------------------------------------------------


def test_server_calls_still_without_results_at_a_client_call_go_back_with_it() -> None:
    """platform.claude.com/docs/en/build-with-claude/handling-stop-reasons (`tool_use`:
    "A server tool call still missing its result block completes in a later response"),
    and the stream anthropics/anthropic-sdk-python#1325 reports: a
    `text_editor_code_execution` and a `web_search` `server_tool_use` start, then a client
    `tool_use`, and the turn ends `tool_use` with neither server result sent. Each server
    call is one `server_tool_call`, the client call one `tool_request`, the stop
    `tool_use`; the turn goes back with both server blocks (without results, which the
    next response completes) before the call, as the API needs to continue it."""
    editor = {
        "type": "server_tool_use",
        "id": "srvtoolu_0A",
        "name": "text_editor_code_execution",
        "input": {},
    }
    search = {"type": "server_tool_use", "id": "srvtoolu_0B", "name": "web_search"}
    client = {"type": "tool_use", "id": "toolu_0C", "name": "ask_internal_tool", "input": {}}
    created = {"command": "create", "path": "/tmp/report.py", "file_text": "print(1)\n"}
    frames = [
        start("claude-sonnet-4-6"),
        block(0, editor),
        delta(0, {"type": "input_json_delta", "partial_json": json.dumps(created)[:30]}),
        delta(0, {"type": "input_json_delta", "partial_json": json.dumps(created)[30:]}),
        stop(0),
        block(1, search),
        delta(1, {"type": "input_json_delta", "partial_json": '{"query": "port activity"}'}),
        stop(1),
        block(2, client),
        delta(2, {"type": "input_json_delta", "partial_json": '{"q": "ports 2025"}'}),
        stop(2),
        end("tool_use", 140),
        STOP,
    ]
    events = replay_every_way(sse(*frames), "anthropic")
    assert [e.type for e in events] == [
        "server_tool_call",
        "server_tool_call",
        "tool_start",
        "tool_request",
        "usage",
        "done",
    ]
    got = summarize(events)
    assert got.tool_calls == [("toolu_0C", "ask_internal_tool", {"q": "ports 2025"})]
    assert (got.stop_reason, got.raw_stop_reason) == ("tool_use", "tool_use")
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [
        ("srvtoolu_0A", "text_editor_code_execution", created),
        ("srvtoolu_0B", "web_search", {"query": "port activity"}),
    ]
    turn = record_of(events, "anthropic").to_message()
    _, messages = anthropic_messages([Message.user("report"), turn])
    assert messages[1]["content"] == [
        {**editor, "input": created},
        {**search, "input": {"query": "port activity"}},
        {**client, "input": {"q": "ports 2025"}},
    ]


# -- Fields no event carries --------------------------------------------------------------


def test_input_transformations_and_the_speed_are_logged_beside_a_turn_read_right() -> None:
    """anthropic-sdk-python `types/beta/beta_raw_message_delta_event.py` and
    `beta_usage.py`: under `thinking-binding-controls-2026-08-01` every response of a
    thinking model carries `input_transformations` (the thinking blocks of the request
    the API dropped or let through), "final in `message_start`", on the final
    `message_delta` only after a server-side fallback mid-stream; fast mode's usage says
    `speed: "fast"`. No event carries them: each is logged with its value, and the turn
    (thinking with its signature, then text) reads as without them."""
    dropped = [{"type": "thinking_dropped", "message_index": 1, "block_index": 0}]
    first = start("claude-opus-4-8", speed="fast", service_tier="standard")
    first["message"]["input_transformations"] = dropped
    final = end("end_turn", 31)
    final["input_transformations"] = []
    frames = [
        first,
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "Check the units."}),
        delta(0, {"type": "signature_delta", "signature": "EqQBCkgIARABGAIiQ"}),
        stop(0),
        *text(1, "42 km."),
        final,
        STOP,
    ]
    with log_messages() as messages:
        events = replay_every_way(sse(*frames), "anthropic")
    got = summarize(events)
    assert (got.reasoning, got.signatures, got.text) == (
        "Check the units.",
        ["EqQBCkgIARABGAIiQ"],
        "42 km.",
    )
    assert got.usage is not None
    assert (got.usage.input_tokens, got.usage.output_tokens) == (412, 31)
    assert (got.terminal, got.stop_reason, got.model) == ("done", "stop", "claude-opus-4-8")
    for said in (
        f"no event carries the message_start field input_transformations: {dropped!r}",
        "no event carries the message_delta field input_transformations: []",
        "no event carries the usage field speed: 'fast'",
    ):
        assert said in messages, said


def test_a_refusal_after_server_tools_goes_back_as_the_prefill_of_its_retry() -> None:
    """platform.claude.com/docs/en/build-with-claude/fallback-credit (BetaRefusalStopDetails
    `fallback_has_prefill_claim: true`): the retry on the fallback model may append one
    assistant message, "this response's content with any trailing whitespace stripped from
    the final text block", its paired server-tool blocks included. Here a web search ran
    (call and result), the answer began, and the classifier stopped it with a credit. The
    events are the call, its result, the text, the refusal and `content_filter`; the turn
    as the last message of the retry is the two server blocks as they came and the text
    without its trailing space, which the API takes as the prefill."""
    call = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}
    found = [{"type": "web_search_result", "url": "https://a.example", "title": "A"}]
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": found}
    details = refusal_details(fallback_credit_token="fct_02", fallback_has_prefill_claim=True)
    frames = [
        start(cache_read_input_tokens=4096),
        block(0, call),
        delta(0, {"type": "input_json_delta", "partial_json": '{"query": "exploit kit"}'}),
        stop(0),
        block(1, result),
        stop(1),
        *text(2, "The first result describes "),
        end("refusal", 19, stop_details=details),
        STOP,
    ]
    events = replay_every_way(sse(*frames), "anthropic")
    assert [e.type for e in events] == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "refusal",
        "usage",
        "done",
    ]
    got = summarize(events)
    assert (got.text, got.refusal, got.stop_reason) == (
        "The first result describes ",
        DECLINED,
        "content_filter",
    )
    assert got.usage is not None
    assert (got.usage.input_tokens, got.usage.cache_read_tokens) == (412, 4096)
    turn = record_of(events, "anthropic").to_message()
    _, messages = anthropic_messages([Message.user("find it"), turn])
    assert messages[-1] == {
        "role": "assistant",
        "content": [
            {**call, "input": {"query": "exploit kit"}},
            result,
            {"type": "text", "text": "The first result describes"},
        ],
    }


# -- Stop reasons -------------------------------------------------------------------------


def test_a_call_cut_by_the_context_window_is_truncated_not_dispatched() -> None:
    """platform.claude.com/docs/en/build-with-claude/handling-stop-reasons
    (`model_context_window_exceeded`: "The response filled the model's context window.
    Treat the response as truncated."), with fine-grained tool streaming
    (`eager_input_streaming`: "you may potentially receive invalid or partial JSON"): the
    window fills inside a call's input and the turn stops there, the block left open. The
    text before is kept, the usage reported, and the call is never dispatched: the turn
    ends with its malformed arguments, naming the stop, never a `done` that passes the cut
    call off as complete nor a call completed from what arrived."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "make_file", "input": {}}
    lines = '{"filename": "poem.txt", "lines_of_text": ["Roses are red", "Violets'
    frames = [
        start("claude-opus-4-8"),
        *text(0, "Writing it."),
        block(1, call),
        delta(1, {"type": "input_json_delta", "partial_json": lines[:40]}),
        delta(1, {"type": "input_json_delta", "partial_json": lines[40:]}),
        end("model_context_window_exceeded", 64000),
        STOP,
    ]
    events = replay_every_way(sse(*frames), "anthropic")
    assert [e.type for e in events] == ["text", "tool_start", "usage", "error"]
    got = summarize(events)
    assert (got.text, got.tool_calls) == ("Writing it.", [])
    assert got.usage is not None and got.usage.output_tokens == 64000
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.code) == (
        "malformed_tool_arguments",
        "model_context_window_exceeded",
    )
    assert error.error.raw == lines
