"""The OpenAI Responses wire: real captures (whole and re-chunked), request bodies,
edge cases of the event vocabulary, and every outcome over real HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import (
    Citation,
    Done,
    Event,
    Failed,
    ReasoningDelta,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
    ToolStart,
)
from rxllm.local import FAULTS, LocalServer
from rxllm.local.script import ANSWER, WEATHER_CALL, Reasoning, Say
from rxllm.local.wire_openai_responses import frames
from rxllm.providers.openai_responses import OpenAIResponses
from tests.support import Summary, capture, log_messages, rechunk, replay, summarize

P = "openai-responses"

CAPTURES = [
    "openai-responses/background_queued.sse",
    "openai-responses/error_insufficient_quota.sse",
    "openai-responses/function_call_args_delta.sse",
    "openai-responses/reasoning_encrypted_then_function_call.sse",
    "openai-responses/reasoning_summary.sse",
    "openai-responses/text.sse",
    "openai-responses/text_then_function_call_phase.sse",
    "deepseek/responses_api_reasoning_function_call.sse",
    "openrouter/responses_api_reasoning_text.sse",
]


def events_of(relative: str) -> list[Event]:
    return replay(capture(relative), P)


def facts(relative: str) -> Summary:
    events = events_of(relative)
    assert {ev.provider for ev in events} == {P} and {ev.attempt for ev in events} == {1}
    return summarize(events)


def usage_of(summary: Summary) -> tuple[int, int, int, int, int, int]:
    usage = summary.usage
    assert usage is not None
    return (
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        usage.cache_write_tokens,
        usage.total_tokens,
    )


def wire(*payloads: dict[str, Any], named: bool = True) -> bytes:
    """Responses events framed as OpenAI does (`event:` + `data:`) or as OpenRouter does."""
    out = []
    for payload in payloads:
        head = f"event: {payload['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


# -- every capture: the events never depend on how the network split the bytes --------


@pytest.mark.parametrize("relative", CAPTURES)
def test_rechunking_never_changes_the_events(relative: str) -> None:
    data = capture(relative)
    whole = replay(data, P)
    assert whole and whole[-1].type in ("done", "error")
    assert replay(rechunk(data, seed=0, max_size=1), P) == whole  # byte by byte
    for max_size, seeds in ((2, 3), (3, 3), (7, 6), (64, 8), (1024, 8)):
        for seed in range(1, seeds + 1):
            assert replay(rechunk(data, seed, max_size), P) == whole, (seed, max_size)


# -- every capture: what it really says -----------------------------------------------


def test_text_capture() -> None:
    s = facts("openai-responses/text.sse")
    assert s.text == "The capital of France is Paris."
    assert s.reasoning == "" and s.signatures == [] and s.tool_calls == []
    assert usage_of(s) == (278, 0, 9, 0, 0, 287)
    assert (s.terminal, s.stop_reason, s.raw_stop_reason) == ("done", "stop", "completed")
    assert s.model == "gpt-4o-2024-08-06"


def test_background_queued_capture() -> None:
    s = facts("openai-responses/background_queued.sse")
    assert s.text == "2 + 2 equals 4."
    assert s.reasoning == "" and s.tool_calls == []
    assert usage_of(s) == (15, 0, 9, 0, 0, 24)
    assert (s.terminal, s.stop_reason) == ("done", "stop")
    assert s.model == "gpt-4o-2024-08-06"


def test_insufficient_quota_capture_ends_once_with_a_final_error() -> None:
    events = events_of("openai-responses/error_insufficient_quota.sse")
    # The `error` event is the terminal; the `response.failed` after it adds nothing.
    assert len(events) == 1 and isinstance(events[0], Failed)
    error = events[0].error
    assert error.kind == "stream_error" and error.provider == P
    assert error.message.startswith("You exceeded your current quota")
    assert not error.retryable  # more attempts cannot buy quota
    assert error.raw is not None and json.loads(error.raw)["code"] == "insufficient_quota"
    assert summarize(events).text == ""


def test_function_call_capture() -> None:
    events = events_of("openai-responses/function_call_args_delta.sse")
    s = summarize(events)
    assert s.tool_calls == [("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", {"country": "France"})]
    start = next(ev for ev in events if isinstance(ev, ToolStart))
    request = next(ev for ev in events if isinstance(ev, ToolRequest))
    assert start.index == request.index == 0 and start.name == "get_capital"
    assert events.index(start) < events.index(request)
    assert s.text == "" and s.reasoning == ""
    assert usage_of(s) == (255, 0, 16, 0, 0, 271)
    assert (s.terminal, s.stop_reason, s.raw_stop_reason) == ("done", "tool_use", "completed")
    assert s.model == "gpt-4o-2024-08-06"


def test_encrypted_reasoning_then_function_call_capture() -> None:
    events = events_of("openai-responses/reasoning_encrypted_then_function_call.sse")
    s = summarize(events)
    # The blob of the item's output_item.done (3896 chars), not the shorter one it was
    # added with: OpenAI re-encrypts the finished item.
    assert len(s.signatures) == 1
    assert s.signatures[0].startswith("gAAAAABoyXvxI6jwG5j6rvTGC7PD6JN5758K-WDl")
    assert s.signatures[0].endswith("IVgXKYQko02bg-rk3VE=") and len(s.signatures[0]) == 3896
    assert s.reasoning == "" and s.text == ""
    assert s.tool_calls == [("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666})]
    request = next(ev for ev in events if isinstance(ev, ToolRequest))
    assert request.index == 1  # the function call is output item 1
    assert usage_of(s) == (53, 0, 469, 448, 0, 522)
    assert (s.terminal, s.stop_reason) == ("done", "tool_use")
    assert s.model == "gpt-5-2025-08-07"


def test_reasoning_summary_capture() -> None:
    events = events_of("openai-responses/reasoning_summary.sse")
    s = summarize(events)
    titles = [
        "**Providing street crossing instructions**\n\nThe user is asking how to cross",
        "\n\n**Explaining street crossing safety**\n\nI see that the user is asking",
        "\n\n**Sharing street crossing safety tips**\n\nWhen crossing the street",
        "\n\n**Providing safe crossing advice**\n\nI\u2019m going to share",
    ]
    assert s.reasoning.startswith(titles[0])
    positions = [s.reasoning.find(title) for title in titles]
    assert positions == sorted(positions) and -1 not in positions
    # Four summary parts of 460, 517, 540 and 505 characters, a blank line between them.
    assert len(s.reasoning) == 460 + 517 + 540 + 505 + 3 * 2
    assert s.text.startswith("I'm not a road safety professional, but here are some generally")
    assert s.text.endswith("rules specific to your area. Stay safe!") and len(s.text) == 1251
    assert len(s.signatures) == 1
    assert s.signatures[0].startswith("gAAAAABoxC0m_QWpOlSt8wyPk_gtnjiI4mNLOryY")
    assert len(s.signatures[0]) == 440
    # All reasoning comes before the answer.
    kinds = [ev.type for ev in events]
    assert kinds.index("text") > max(i for i, k in enumerate(kinds) if k == "reasoning")
    assert s.tool_calls == []
    assert usage_of(s) == (13, 0, 1680, 1408, 0, 1693)
    assert (s.terminal, s.stop_reason) == ("done", "stop")
    assert s.model == "o3-mini-2025-01-31"


def test_text_then_function_call_capture() -> None:
    s = facts("openai-responses/text_then_function_call_phase.sse")
    assert len(s.signatures) == 1 and len(s.signatures[0]) == 1080
    assert s.signatures[0].startswith("gAAAAABqaR3-pGgSyJcPT3y2_26v61vCZmE9M2P6")
    assert s.reasoning == ""
    assert s.text == "I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d"
    assert s.tool_calls == [
        ("call_LabG58Uhrq9kZvR52BYKjToD", "get_capital", {"country": "PotatoLand"})
    ]
    assert usage_of(s) == (63, 0, 69, 26, 0, 132)
    assert (s.terminal, s.stop_reason) == ("done", "tool_use")
    assert s.model == "gpt-5.5-2026-04-23"


def test_deepseek_responses_capture() -> None:
    s = facts("deepseek/responses_api_reasoning_function_call.sse")
    assert s.reasoning == "The user asks about temperature in Tokyo. I'll call the tool."
    assert s.signatures == [] and s.text == ""
    assert s.tool_calls == [
        ("call_00_xjY8Z2BvSlzgEmmw0DtH0464", "get_temperature", {"city": "Tokyo"})
    ]
    # 366 input tokens of which 256 were cached: counted apart, never twice.
    assert usage_of(s) == (110, 256, 59, 14, 0, 425)
    assert (s.terminal, s.stop_reason) == ("done", "tool_use")
    assert s.model == "deepseek-v4-flash"


def test_openrouter_responses_capture_without_event_lines() -> None:
    s = facts("openrouter/responses_api_reasoning_text.sse")
    assert s.reasoning == (
        'The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.'
    )
    assert s.text == "4" and s.signatures == [] and s.tool_calls == []
    assert usage_of(s) == (78, 0, 37, 22, 0, 115)
    assert s.usage is not None and s.usage.cost_usd == pytest.approx(1.13e-05)
    assert (s.terminal, s.stop_reason) == ("done", "stop")  # its trailing [DONE] is ignored
    assert s.model == "openai/gpt-oss-20b"


# -- the event vocabulary beyond the captures ------------------------------------------

CREATED = {"type": "response.created", "response": {"model": "gpt-test", "status": "in_progress"}}
USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 40},
    "output_tokens": 30,
    "output_tokens_details": {"reasoning_tokens": 10},
    "total_tokens": 130,
}


def call_added(index: int, call_id: str = "call_1", name: str = "f") -> dict[str, Any]:
    item = {"type": "function_call", "id": f"fc_{index}", "call_id": call_id, "name": name}
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def args(index: int, delta: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": index, "delta": delta}


def text(delta: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "output_index": 0, "delta": delta}


def completed(usage: dict[str, Any] | None = None) -> dict[str, Any]:
    response = {"model": "gpt-test", "status": "completed", "usage": usage}
    return {"type": "response.completed", "response": response}


def incomplete(reason: str) -> dict[str, Any]:
    response = {"status": "incomplete", "incomplete_details": {"reason": reason}, "usage": USAGE}
    return {"type": "response.incomplete", "response": response}


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("max_output_tokens", "length"), ("content_filter", "content_filter"), ("odd", "other")],
)
def test_incomplete_response(reason: str, stop: str) -> None:
    events = replay(wire(CREATED, text("Hel"), text("lo"), incomplete(reason)), P)
    s = summarize(events)
    assert s.text == "Hello" and s.terminal == "done"
    assert (s.stop_reason, s.raw_stop_reason, s.model) == (stop, reason, "gpt-test")
    assert [ev.type for ev in events][-2:] == ["usage", "done"]
    assert usage_of(s) == (60, 40, 30, 10, 0, 130)


def test_a_length_cut_function_call_is_malformed_not_invented() -> None:
    events = replay(
        wire(CREATED, call_added(0), args(0, '{"city": "Par'), incomplete("max_output_tokens")), P
    )
    assert isinstance(events[-1], Failed)
    assert events[-1].error.kind == "malformed_tool_arguments"
    assert "call_1" in events[-1].error.message and "'f'" in events[-1].error.message


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        ({"code": "server_error", "message": "boom"}, True),
        ({"code": "rate_limit_exceeded", "message": "slow down"}, True),
        ({"code": "insufficient_quota", "message": "pay up"}, False),
        ({"code": "invalid_prompt", "message": "no"}, False),
    ],
)
def test_top_level_error_event(error: dict[str, Any], retryable: bool) -> None:
    # OpenAI documents `code` and `message` at the top level of the `error` event.
    event = {"type": "error", "sequence_number": 3, "param": None, **error}
    events = replay(wire(CREATED, text("Hi"), event, completed(USAGE)), P)
    assert [ev.type for ev in events] == ["text", "error"]
    assert isinstance(events[-1], Failed)
    info = events[-1].error
    assert (info.kind, info.message, info.retryable) == (
        "stream_error",
        error["message"],
        retryable,
    )
    assert info.raw is not None and json.loads(info.raw)["code"] == error["code"]


def test_response_failed_alone() -> None:
    failure = {
        "type": "response.failed",
        "response": {"status": "failed", "error": {"code": "server_error", "message": "oops"}},
    }
    events = replay(wire(CREATED, failure), P)
    assert len(events) == 1 and isinstance(events[0], Failed)
    assert (events[0].error.kind, events[0].error.message) == ("stream_error", "oops")
    assert events[0].error.retryable


def test_response_failed_keeps_the_usage_of_what_was_said() -> None:
    """openai-python's Response: a failed response still carries its `usage`. After
    output it is the turn's cost; before any, a rejection's usage is dropped as ever."""
    usage = {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}
    failure = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": {"code": "server_error", "message": "oops"},
            "usage": usage,
        },
    }
    events = replay(wire(CREATED, text("Hel"), failure), P)
    assert [e.type for e in events] == ["text", "usage", "error"]
    assert usage_of(summarize(events)) == (9, 0, 4, 0, 0, 13)
    alone = replay(wire(CREATED, failure), P)
    assert [e.type for e in alone] == ["error"] and alone[0].error.retryable


def test_a_bare_error_object_without_type_is_a_stream_error() -> None:
    bare = b'data: {"error": {"message": "upstream died", "code": "server_error"}}\n\n'
    events = replay(wire(CREATED, text("a")) + bare, P)
    assert isinstance(events[-1], Failed)
    assert (events[-1].error.kind, events[-1].error.message) == ("stream_error", "upstream died")


def test_a_refusal_is_a_refusal_not_text() -> None:
    refusal = {"type": "response.refusal.delta", "output_index": 0, "delta": "I can't help."}
    s = summarize(replay(wire(CREATED, refusal, completed()), P))
    assert s.refusal == "I can't help." and s.text == "" and s.stop_reason == "stop"


def test_arguments_done_is_authoritative() -> None:
    done = {
        "type": "response.function_call_arguments.done",
        "output_index": 0,
        "arguments": '{"a": 2}',
    }
    events = replay(wire(CREATED, call_added(0), args(0, '{"a": 1'), done, completed()), P)
    assert summarize(events).tool_calls == [("call_1", "f", {"a": 2})]


def test_output_item_done_ends_a_call_without_arguments_done() -> None:
    item = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": '{"x": [1]}'}
    item_done = {"type": "response.output_item.done", "output_index": 2, "item": item}
    events = replay(wire(CREATED, call_added(2), args(2, '{"x": '), item_done, completed()), P)
    requests = [ev for ev in events if isinstance(ev, ToolRequest)]
    assert [(r.index, r.arguments) for r in requests] == [(2, {"x": [1]})]
    # The request is out before the terminal, so the call can be dispatched at once.
    assert events.index(requests[0]) < len(events) - 1


def test_parallel_calls_are_keyed_by_output_index() -> None:
    events = replay(
        wire(
            CREATED,
            call_added(0, "call_a", "f"),
            call_added(1, "call_b", "g"),
            args(1, '{"b":'),
            args(0, '{"a":'),
            args(0, "1}"),
            args(1, "2}"),
            completed(),
        ),
        P,
    )
    s = summarize(events)
    assert sorted(s.tool_calls) == [("call_a", "f", {"a": 1}), ("call_b", "g", {"b": 2})]
    assert s.stop_reason == "tool_use"


def test_encrypted_reasoning_only_at_added_is_kept() -> None:
    item = {"type": "reasoning", "id": "rs_1", "encrypted_content": "BLOB", "summary": []}
    added = {"type": "response.output_item.added", "output_index": 0, "item": item}
    events = replay(wire(CREATED, added, text("ok"), completed()), P)
    signed = [ev for ev in events if isinstance(ev, ReasoningDelta)]
    assert [(ev.text, ev.signature) for ev in signed] == [("", "BLOB")]


def test_data_only_events_unknown_types_and_comments() -> None:
    unknown = {"type": "response.web_search_call.searching", "output_index": 0}
    data = b": keepalive\n\n" + wire(CREATED, unknown, text("a"), completed(USAGE), named=False)
    s = summarize(replay(data, P))
    assert s.text == "a" and s.stop_reason == "stop"


def test_end_of_body_without_a_terminal_is_truncated() -> None:
    events = replay(wire(CREATED, text("partial")), P)
    assert isinstance(events[-1], Failed) and events[-1].error.kind == "truncated"
    assert summarize(events).text == "partial"


def test_done_marker_is_not_a_terminal() -> None:
    events = replay(wire(CREATED, text("partial")) + b"data: [DONE]\n\n", P)
    assert isinstance(events[-1], Failed) and events[-1].error.kind == "truncated"


def test_late_events_after_the_terminal_are_ignored() -> None:
    events = replay(wire(CREATED, text("a"), completed(), text("LATE")), P)
    assert summarize(events).text == "a" and isinstance(events[-1], Done)


def test_arguments_for_an_item_nothing_else_names_are_logged_and_no_call() -> None:
    """Argument events with no call begun (the call whole at its done item or in the
    terminal's output, when those come): without a name they request nothing."""
    with log_messages() as messages:
        events = replay(wire(CREATED, args(5, "{}"), completed()), P)
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "stop"
    assert summarize(events).tool_calls == []
    assert any("output item 5, which is no function_call begun" in m for m in messages)


def test_a_non_json_chunk_is_a_protocol_error() -> None:
    events = replay(b"event: response.created\ndata: {nope\n\n", P)
    assert isinstance(events[-1], Failed) and events[-1].error.kind == "protocol"


# -- the request --------------------------------------------------------------------------


def test_wire_identity_url_and_headers() -> None:
    wire_ = OpenAIResponses()
    assert wire_.name == P and wire_.default_base_url == "https://api.openai.com/v1"
    assert wire_.api_key_env == "OPENAI_API_KEY"
    request = rxllm.ChatRequest(model="gpt-4.1-mini", messages=[rxllm.Message.user("hi")])
    sent = rxllm.provider(P, api_key="sk-test").http_request(request)
    assert sent.url == "https://api.openai.com/v1/responses"
    assert sent.headers["Authorization"] == "Bearer sk-test"
    assert sent.headers["Accept"] == "text/event-stream"
    assert wire_.url("http://host/v1/", request) == "http://host/v1/responses"


def test_build_body_maps_the_whole_conversation() -> None:
    weather = rxllm.Tool(
        name="get_weather",
        description="Weather of a city",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    call = rxllm.ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    request = rxllm.ChatRequest(
        model="gpt-4.1-mini",
        messages=[
            rxllm.Message.system("Be brief."),
            rxllm.Message.system("Use metric units."),
            rxllm.Message.user("Weather here?", images=["https://example.com/sky.png"]),
            rxllm.Message.assistant("Checking.", tool_calls=[call]),
            rxllm.Message.tool("call_1", '{"temp": 21}'),
            rxllm.Message.system("Answer in French."),
            rxllm.Message.user("Thanks"),
        ],
        tools=[weather],
        params={"temperature": 0.2, "max_output_tokens": 200, "reasoning": {"effort": "low"}},
    )
    body = OpenAIResponses().build_body(request)
    assert body["model"] == "gpt-4.1-mini" and body["stream"] is True
    assert body["instructions"] == "Be brief.\n\nUse metric units."
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Weather here?"},
                {
                    "type": "input_image",
                    "image_url": "https://example.com/sky.png",
                    "detail": "auto",
                },
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": '{"temp": 21}'},
        {
            "type": "message",
            "role": "system",
            "content": [{"type": "input_text", "text": "Answer in French."}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": weather.parameters,
            "strict": False,
        }
    ]
    assert body["temperature"] == 0.2 and body["max_output_tokens"] == 200
    assert body["reasoning"] == {"effort": "low"}
    json.dumps(body)  # what goes on the wire


def test_build_body_minimal_and_data_url_images() -> None:
    image = "data:image/png;base64,iVBORw0KGgo="
    request = rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("", images=[image]), rxllm.Message.assistant("")]
    )
    body = OpenAIResponses().build_body(request)
    assert set(body) == {"model", "input", "stream"}  # no instructions, no tools
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_image", "image_url": image, "detail": "auto"}],
        }
    ]


def test_assistant_text_goes_back_as_output_text_with_its_annotations() -> None:
    # openai-python responses/response_output_text_param.py: `annotations` is Required.
    request = rxllm.ChatRequest(
        model="m",
        messages=[
            rxllm.Message.user("hi"),
            rxllm.Message.assistant("Hello."),
            rxllm.Message.user("?"),
        ],
    )
    assert OpenAIResponses().build_body(request)["input"][1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hello.", "annotations": []}],
    }


def test_params_add_keys_but_never_the_instructions() -> None:
    def request(**params: object) -> rxllm.ChatRequest:
        messages = [rxllm.Message.system("a"), rxllm.Message.user("hi")]
        return rxllm.ChatRequest(model="m", messages=messages, params=params)

    body = OpenAIResponses().build_body(request(store=False))
    assert body["instructions"] == "a" and body["store"] is False
    with pytest.raises(rxllm.ConfigError, match=r"'instructions'.*Message\.system"):
        OpenAIResponses().build_body(request(instructions="b"))


# -- the local server's Responses encoder -----------------------------------------------


def test_local_encoder_names_every_event_and_numbers_it() -> None:
    data = b"".join(frames(WEATHER_CALL, {"model": "m"})).decode()
    blocks = [block for block in data.split("\n\n") if block]
    numbers = []
    for block in blocks:
        name_line, data_line = block.split("\n")
        payload = json.loads(data_line.removeprefix("data: "))
        assert name_line == f"event: {payload['type']}"
        numbers.append(payload["sequence_number"])
    assert numbers == list(range(len(blocks)))
    kinds = [json.loads(b.split("\n")[1][6:])["type"] for b in blocks]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert "response.reasoning_summary_text.delta" in kinds
    assert kinds.count("response.function_call_arguments.delta") > 3  # fragmented


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_local_encoder_replays_through_the_normalizer(name: str) -> None:
    script = FAULTS[name]
    data = b"".join(frames(script, {"model": "m"}))
    whole = replay(data, P)
    assert replay(rechunk(data, seed=7, max_size=5), P) == whole
    s = summarize(whole)
    said = "".join(step.text for step in script.steps if isinstance(step, Say))
    thought = "".join(step.text for step in script.steps if isinstance(step, Reasoning))
    assert s.text == said and s.reasoning == thought


# -- over real HTTP, against the embedded local server ------------------------------------

WEATHER = rxllm.Tool(name="get_weather", parameters={"type": "object", "properties": {}})


def ask(
    model: str = "gpt-local", text: str = "hello", tools: bool = False, **params: Any
) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.system("Be kind."), rxllm.Message.user(text)],
        tools=[WEATHER] if tools else [],
        params=params,
    )


def responses(server: LocalServer) -> rxllm.Provider:
    return rxllm.provider(P, api_key="test", base_url=server.url)


async def test_http_text_turn_with_reasoning(local_server: LocalServer) -> None:
    rec = await responses(local_server).complete(ask())
    said = next(step.text for step in ANSWER.steps if isinstance(step, Say))
    thought = next(step.text for step in ANSWER.steps if isinstance(step, Reasoning))
    assert rec.text == said and rec.reasoning == thought
    assert isinstance(rec.terminal, Done) and rec.terminal.stop_reason == "stop"
    assert rec.provider == P and rec.model == "gpt-local"
    assert rec.usage is not None
    assert (rec.usage.input_tokens, rec.usage.output_tokens, rec.usage.reasoning_tokens) == (
        ANSWER.input_tokens,
        ANSWER.output_tokens,
        ANSWER.reasoning_tokens,
    )
    body = local_server.requests[-1]
    assert body["stream"] is True and body["instructions"] == "Be kind."
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}
    ]


async def test_http_encrypted_reasoning_comes_back_as_a_signature(
    local_server: LocalServer,
) -> None:
    request = ask(include=["reasoning.encrypted_content"], store=False)
    events = [ev async for ev in responses(local_server).astream(request)]
    signatures = [ev.signature for ev in events if isinstance(ev, ReasoningDelta) and ev.signature]
    assert len(signatures) == 1 and signatures[0].startswith("rxllm-local:")
    assert local_server.requests[-1]["include"] == ["reasoning.encrypted_content"]


async def test_http_tool_call_with_fragmented_arguments(local_server: LocalServer) -> None:
    events = [
        ev
        async for ev in responses(local_server).astream(ask(text="weather in Paris?", tools=True))
    ]
    types = [ev.type for ev in events]
    assert types.index("tool_start") < types.index("tool_request")
    request = next(ev for ev in events if isinstance(ev, ToolRequest))
    assert (request.call_id, request.name) == ("call_local_weather_1", "get_weather")
    assert request.arguments == {"city": "Paris", "unit": "celsius", "days": 3}
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "tool_use"
    assert summarize(events).text == "Let me check the weather."
    tools = local_server.requests[-1]["tools"]
    assert tools == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "",
            "parameters": WEATHER.parameters,
            "strict": False,
        }
    ]


async def test_http_parallel_tool_calls(local_server: LocalServer) -> None:
    rec = await responses(local_server).complete(ask("fault/parallel_tools", tools=True))
    assert [(c.index, c.call_id, c.name, c.arguments) for c in rec.tool_calls] == [
        (0, "call_local_1", "get_weather", {"city": "Paris"}),
        (1, "call_local_2", "get_time", {"timezone": "Europe/Paris"}),
    ]


async def test_http_error_event(local_server: LocalServer) -> None:
    events = [ev async for ev in responses(local_server).astream(ask("fault/error_event"))]
    assert [ev.type for ev in events].count("error") == 1
    assert isinstance(events[-1], Failed)
    error = events[-1].error
    assert error.kind == "stream_error" and error.provider == P
    assert error.message == "The server is overloaded, try again later."
    assert error.retryable
    assert error.raw is not None and json.loads(error.raw)["code"] == "server_error"


async def test_http_truncated(local_server: LocalServer) -> None:
    rec = await responses(local_server).complete(ask("fault/truncated"))
    assert isinstance(rec.terminal, Failed) and rec.terminal.error.kind == "truncated"
    assert rec.text.startswith("Hello from rxllm's local provider!")


@pytest.mark.parametrize("fault", ["malformed_tool", "length_cut_tool"])
async def test_http_malformed_tool_arguments(local_server: LocalServer, fault: str) -> None:
    rec = await responses(local_server).complete(ask(f"fault/{fault}", tools=True))
    assert rec.tool_calls == []
    assert isinstance(rec.terminal, Failed)
    error = rec.terminal.error
    assert error.kind == "malformed_tool_arguments" and error.provider == P
    assert "get_weather" in error.message and "call_" in error.message


async def test_http_late_text_is_ignored(local_server: LocalServer) -> None:
    rec = await responses(local_server).complete(ask("fault/late_event"))
    assert isinstance(rec.terminal, Done) and "LATE" not in rec.text


# -- output items beyond function calls (bodies made by hand from OpenAI's Responses
# -- streaming reference; no capture holds these shapes) ----------------------------


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def item_done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


COMPUTER = {
    "type": "computer_call",
    "id": "cu_1",
    "call_id": "call_cu",
    "action": {"type": "click", "button": "left", "x": 10, "y": 20},
    "pending_safety_checks": [],
    "status": "completed",
}
SHELL = {
    "type": "shell_call",
    "id": "sh_1",
    "call_id": "call_sh",
    "action": {"commands": ["ls -la"], "timeout_ms": 1000},
    "status": "completed",
}
LOCAL_SHELL = {
    "type": "local_shell_call",
    "id": "ls_1",
    "call_id": "call_ls",
    "action": {"type": "exec", "command": ["echo", "hi"], "env": {}},
    "status": "completed",
}
PATCH = {
    "type": "apply_patch_call",
    "id": "ap_1",
    "call_id": "call_ap",
    "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-x\n+y\n"},
    "status": "completed",
}
CUSTOM = {
    "type": "custom_tool_call",
    "id": "ctc_1",
    "call_id": "call_ct",
    "name": "run_sql",
    "input": "SELECT 1",
}
APPROVAL = {
    "type": "mcp_approval_request",
    "id": "mcpr_1",
    "name": "roll",
    "server_label": "dice",
    "arguments": '{"sides": 6}',
}
CLIENT_SEARCH = {
    "type": "tool_search_call",
    "id": "ts_1",
    "call_id": "call_ts",
    "execution": "client",
    "arguments": {"query": "weather"},
    "status": "completed",
}


@pytest.mark.parametrize(
    ("item", "call_id", "name", "arguments"),
    [
        (
            COMPUTER,
            "call_cu",
            "computer_call",
            {k: COMPUTER[k] for k in ("action", "pending_safety_checks")},
        ),
        (SHELL, "call_sh", "shell_call", {"action": SHELL["action"]}),
        (LOCAL_SHELL, "call_ls", "local_shell_call", {"action": LOCAL_SHELL["action"]}),
        (PATCH, "call_ap", "apply_patch_call", {"operation": PATCH["operation"]}),
        (CUSTOM, "call_ct", "run_sql", {"input": "SELECT 1"}),
        (
            APPROVAL,
            "mcpr_1",
            "mcp_approval_request",
            {"name": "roll", "server_label": "dice", "arguments": {"sides": 6}},
        ),
        (
            CLIENT_SEARCH,
            "call_ts",
            "tool_search_call",
            {"execution": "client", "arguments": {"query": "weather"}},
        ),
    ],
)
@pytest.mark.parametrize("seen_added", [True, False])
def test_items_that_ask_the_client_to_act_are_tool_requests(
    item: dict[str, Any], call_id: str, name: str, arguments: dict[str, Any], seen_added: bool
) -> None:
    start = {**item, "status": "in_progress"}
    body = (added(0, start),) if seen_added else ()
    events = replay(wire(CREATED, *body, item_done(0, item), completed()), P)
    starts = [ev for ev in events if isinstance(ev, ToolStart)]
    requests = [ev for ev in events if isinstance(ev, ToolRequest)]
    assert [(ev.call_id, ev.name, ev.index) for ev in starts] == [(call_id, name, 0)]
    assert [(ev.call_id, ev.name, ev.arguments) for ev in requests] == [(call_id, name, arguments)]
    assert events.index(starts[0]) < events.index(requests[0])
    assert not [ev for ev in events if ev.type.startswith("server_tool")]
    assert summarize(events).stop_reason == "tool_use"


def test_a_client_item_starts_at_added_and_its_done_item_is_authoritative() -> None:
    first = {**COMPUTER, "action": {"type": "screenshot"}, "status": "in_progress"}
    events = replay(
        wire(CREATED, added(3, first), text("x"), item_done(3, COMPUTER), completed()), P
    )
    assert [ev.type for ev in events] == ["tool_start", "text", "tool_request", "done"]
    request = events[2]
    assert isinstance(request, ToolRequest) and request.arguments["action"] == COMPUTER["action"]


def test_a_client_item_never_done_is_not_invented() -> None:
    events = replay(wire(CREATED, added(0, SHELL), incomplete("max_output_tokens")), P)
    assert not [ev for ev in events if isinstance(ev, ToolRequest)]
    assert isinstance(events[-1], Failed)


SERVER_CASES = [
    (
        {"type": "web_search_call", "id": "ws_1", "status": "in_progress"},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "rxllm"},
        },
        {"action": {"type": "search", "query": "rxllm"}},
        {"action": {"type": "search", "query": "rxllm"}},
    ),
    (
        {"type": "file_search_call", "id": "fs_1", "status": "in_progress", "queries": ["q"]},
        {
            "type": "file_search_call",
            "id": "fs_1",
            "status": "completed",
            "queries": ["q"],
            "results": [{"file_id": "f1", "filename": "a.txt", "score": 0.5, "text": "t"}],
        },
        {"queries": ["q"]},
        {"queries": ["q"]},
    ),
    (
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "status": "in_progress",
            "code": "",
            "container_id": "c1",
        },
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "status": "completed",
            "code": "print(2)",
            "container_id": "c1",
            "outputs": [{"type": "logs", "logs": "2\n"}],
        },
        {"code": "print(2)", "container_id": "c1"},
        {"code": "print(2)", "container_id": "c1"},
    ),
    (
        {
            "type": "mcp_call",
            "id": "mcp_1",
            "name": "roll",
            "server_label": "dice",
            "arguments": '{"sides": 6}',
        },
        {
            "type": "mcp_call",
            "id": "mcp_1",
            "name": "roll",
            "server_label": "dice",
            "arguments": '{"sides": 6}',
            "output": "4",
            "error": None,
        },
        {"name": "roll", "server_label": "dice", "arguments": {"sides": 6}},
        {"name": "roll", "server_label": "dice", "arguments": {"sides": 6}},
    ),
    (
        {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "dice", "tools": []},
        {
            "type": "mcp_list_tools",
            "id": "mcpl_1",
            "server_label": "dice",
            "tools": [{"name": "roll", "input_schema": {"type": "object"}}],
        },
        {"server_label": "dice"},
        {"server_label": "dice"},
    ),
    (
        {"type": "image_generation_call", "id": "ig_1", "status": "in_progress"},
        {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "aGk="},
        {},
        {},
    ),
    (
        {
            "type": "tool_search_call",
            "id": "ts_2",
            "execution": "server",
            "arguments": {"query": "w"},
        },
        {
            "type": "tool_search_call",
            "id": "ts_2",
            "execution": "server",
            "arguments": {"query": "w"},
            "status": "completed",
        },
        {"arguments": {"query": "w"}},
        {"arguments": {"query": "w"}},
    ),
]


@pytest.mark.parametrize(("first", "last", "at_added", "at_done"), SERVER_CASES)
@pytest.mark.parametrize("seen_added", [True, False])
def test_provider_run_items_are_server_tool_calls_and_results(
    first: dict[str, Any],
    last: dict[str, Any],
    at_added: dict[str, Any],
    at_done: dict[str, Any],
    seen_added: bool,
) -> None:
    # The call's arguments are the item's input once known (here at its done item, an
    # added one or not); the result is the whole done item minus id and type.
    body = (added(1, first),) if seen_added else ()
    events = replay(wire(CREATED, *body, item_done(1, last), text("ok"), completed()), P)
    calls = [ev for ev in events if isinstance(ev, ServerToolCall)]
    results = [ev for ev in events if isinstance(ev, ServerToolResult)]
    kind, item_id = last["type"], last["id"]
    expected = at_added if seen_added else at_done
    assert [(ev.call_id, ev.name, ev.arguments) for ev in calls] == [(item_id, kind, expected)]
    content = {k: v for k, v in last.items() if k not in ("id", "type")}
    assert [(ev.call_id, ev.name, ev.content) for ev in results] == [(item_id, kind, content)]
    assert events.index(calls[0]) < events.index(results[0])
    assert not [ev for ev in events if isinstance(ev, ToolStart | ToolRequest)]
    s = summarize(events)
    assert s.tool_calls == [] and s.stop_reason == "stop" and s.text == "ok"


def test_a_server_tool_search_output_is_its_result() -> None:
    output = {
        "type": "tool_search_output",
        "id": "tso_1",
        "call_id": "ts_2",
        "tools": [{"name": "w"}],
    }
    events = replay(wire(CREATED, item_done(0, output), completed()), P)
    results = [ev for ev in events if isinstance(ev, ServerToolResult)]
    assert [(r.call_id, r.name, r.content) for r in results] == [
        ("ts_2", "tool_search_call", {"call_id": "ts_2", "tools": [{"name": "w"}]})
    ]


# -- citations ---------------------------------------------------------------------------

URL_CITATION = {
    "type": "url_citation",
    "url": "https://example.com/paris",
    "title": "Paris",
    "start_index": 4,
    "end_index": 9,
}


def message(text_: str, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    part = {"type": "output_text", "text": text_, "annotations": annotations}
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }


def annotation_added(annotation: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_text.annotation.added",
        "item_id": "msg_1",
        "output_index": 0,
        "content_index": 0,
        "annotation_index": index,
        "annotation": annotation,
    }


def citations(events: list[Event]) -> list[tuple[str, str | None, str | None]]:
    return [(ev.url, ev.title, ev.cited_text) for ev in events if isinstance(ev, Citation)]


def test_annotation_added_is_a_citation_once_even_when_the_done_item_repeats_it() -> None:
    other = {"type": "file_citation", "file_id": "f1", "index": 0, "filename": "a.txt"}
    events = replay(
        wire(
            CREATED,
            text("See "),
            text("Paris, capital."),
            annotation_added(URL_CITATION),
            annotation_added(other, 1),
            item_done(0, message("See Paris, capital.", [URL_CITATION, other])),
            completed(),
        ),
        P,
    )
    assert citations(events) == [("https://example.com/paris", "Paris", None)]
    assert summarize(events).text == "See Paris, capital."


def test_citations_and_text_of_a_message_that_arrived_whole() -> None:
    second = {
        **URL_CITATION,
        "url": "https://example.com/b",
        "title": None,
        "start_index": 0,
        "end_index": 99,
    }
    events = replay(
        wire(
            CREATED,
            item_done(0, message("See Paris, capital.", [URL_CITATION, second])),
            completed(),
        ),
        P,
    )
    assert summarize(events).text == "See Paris, capital."
    # cited_text stays empty: the range marks the answer's own text, not the source's.
    assert citations(events) == [
        ("https://example.com/paris", "Paris", None),
        ("https://example.com/b", None, None),
    ]


# -- content that arrives whole ------------------------------------------------------------


def test_a_message_with_deltas_is_never_emitted_twice_capture() -> None:
    # The capture's output_item.done repeats the streamed text in its message item.
    raw = capture("openai-responses/text.sse")
    assert (
        b'"type":"response.output_item.done"' in raw
        and b'"text":"The capital of France is Paris."' in raw
    )
    assert facts("openai-responses/text.sse").text == "The capital of France is Paris."


def test_a_refusal_that_arrived_whole_is_a_refusal() -> None:
    part = {"type": "refusal", "refusal": "I can't help."}
    item = {"type": "message", "id": "msg_1", "role": "assistant", "content": [part]}
    s = summarize(replay(wire(CREATED, item_done(0, item), completed()), P))
    assert (s.refusal, s.text) == ("I can't help.", "")


def test_a_function_call_that_arrived_whole_is_requested_once() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_9",
        "name": "f",
        "arguments": '{"a": 1}',
    }
    events = replay(wire(CREATED, item_done(0, item), completed()), P)
    assert summarize(events).tool_calls == [("call_9", "f", {"a": 1})]
    assert [ev.type for ev in events] == ["tool_start", "tool_request", "done"]


def test_a_text_part_that_arrived_whole_at_its_done_event_is_emitted_once() -> None:
    # Made by hand: `response.output_text.done` with no deltas before it, then the
    # message's output_item.done repeating the same text.
    done_ = {
        "type": "response.output_text.done",
        "output_index": 0,
        "content_index": 0,
        "text": "See Paris, capital.",
    }
    refusal_done = {
        "type": "response.refusal.done",
        "output_index": 1,
        "content_index": 0,
        "refusal": "No.",
    }
    refused = {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "No."}],
    }
    events = replay(
        wire(
            CREATED,
            done_,
            item_done(0, message("See Paris, capital.", [URL_CITATION])),
            refusal_done,
            item_done(1, refused),
            completed(),
        ),
        P,
    )
    s = summarize(events)
    assert (s.text, s.refusal) == ("See Paris, capital.", "No.")
    assert citations(events) == [("https://example.com/paris", "Paris", None)]


@pytest.mark.parametrize(
    "relative",
    [
        "openai-responses/background_queued.sse",
        "openai-responses/reasoning_summary.sse",
        "openai-responses/text.sse",
        "openai-responses/text_then_function_call_phase.sse",
        "openrouter/responses_api_reasoning_text.sse",
    ],
)
def test_done_events_of_the_captures_never_repeat_streamed_text(relative: str) -> None:
    # Every capture streams its text as deltas, then repeats it in output_text.done and
    # output_item.done: the text is the deltas joined, once.
    raw = capture(relative).decode()
    deltas = [
        json.loads(line[6:])["delta"]
        for line in raw.splitlines()
        if line.startswith("data: {") and '"response.output_text.delta"' in line
    ]
    assert deltas and '"response.output_item.done"' in raw
    assert facts(relative).text == "".join(deltas)


def test_a_text_part_done_without_deltas_or_item_done_is_still_the_text() -> None:
    # Made by hand: only the part's `.done` carries the text before the terminal.
    done_ = {
        "type": "response.output_text.done",
        "output_index": 0,
        "content_index": 0,
        "text": "Hi",
    }
    assert summarize(replay(wire(CREATED, done_, completed()), P)).text == "Hi"


# -- hosted shell and the `error` event's structured fields (made by hand from the
# -- openai-python / openai-java Responses types; no capture holds these shapes) ----------


def test_a_hosted_shell_call_is_a_server_tool_not_a_request() -> None:
    # openai-java ResponseFunctionShellToolCall.environment / openai-python shell_call_output:
    # a shell_call run in a hosted container comes back with OpenAI's shell_call_output.
    first = {
        "type": "shell_call",
        "id": "sh_1",
        "call_id": "call_sh",
        "status": "in_progress",
        "action": {"commands": [], "timeout_ms": None, "max_output_length": None},
        "environment": {"type": "container_reference", "container_id": "cntr_1"},
    }
    last = {**first, "status": "completed", "action": {**first["action"], "commands": ["uname"]}}
    output = {
        "type": "shell_call_output",
        "id": "sho_1",
        "call_id": "call_sh",
        "max_output_length": None,
        "output": [
            {"outcome": {"type": "exit", "exit_code": 0}, "stdout": "Linux\n", "stderr": ""}
        ],
    }
    events = replay(
        wire(
            CREATED,
            added(0, first),
            item_done(0, last),
            added(1, {**output, "output": []}),
            item_done(1, output),
            text("Linux"),
            completed(),
        ),
        P,
    )
    assert not [ev for ev in events if isinstance(ev, ToolStart | ToolRequest)]
    calls = [(ev.call_id, ev.name) for ev in events if isinstance(ev, ServerToolCall)]
    results = [ev for ev in events if isinstance(ev, ServerToolResult)]
    assert calls == [("call_sh", "shell_call")]
    assert [(ev.call_id, ev.name) for ev in results] == [("call_sh", "shell_call")] * 2
    assert results[-1].content["output"] == output["output"]
    assert summarize(events).stop_reason == "stop"


def test_a_local_shell_call_is_still_a_request() -> None:
    local = {**SHELL, "environment": {"type": "local"}}
    events = replay(wire(CREATED, added(0, local), item_done(0, local), completed()), P)
    assert summarize(events).tool_calls == [
        ("call_sh", "shell_call", {"action": SHELL["action"], "environment": {"type": "local"}})
    ]


def test_the_error_event_keeps_param_and_invents_no_code() -> None:
    # openai-python ResponseErrorEvent: `code` and `param` are optional, at the top level.
    event = {
        "type": "error",
        "code": None,
        "message": "Unsupported parameter: 'temperature'",
        "param": "temperature",
        "sequence_number": 1,
    }
    events = replay(wire(CREATED, event), P)
    assert isinstance(events[-1], Failed)
    assert (events[-1].error.code, events[-1].error.param) == (None, "temperature")


@pytest.mark.parametrize(
    ("parameters", "sent"),
    [
        ({"type": "object"}, {"type": "object", "properties": {}}),  # an MCP tool's
        ({}, {"type": "object", "properties": {}}),
        (
            {"properties": {"q": {"type": "string"}}},
            {"type": "object", "properties": {"q": {"type": "string"}}},
        ),
    ],
)
def test_tool_parameters_are_an_object_schema_with_properties(
    parameters: dict[str, Any], sent: dict[str, Any]
) -> None:
    """As on the chat wire (`function_parameters`): an object schema without `properties`
    is refused by the Responses API too ("object schema missing properties":
    everruns/everruns#984, mark3labs/mcp-go#680)."""
    tool = rxllm.Tool(name="lookup", parameters=parameters)
    request = rxllm.ChatRequest(model="gpt-5", messages=[rxllm.Message.user("hi")], tools=[tool])
    [function] = OpenAIResponses().build_body(request)["tools"]
    assert function["parameters"] == sent
