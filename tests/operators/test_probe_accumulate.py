"""accumulate_tool_arguments where a wire contradicts itself: a fragment after its call
completed, a second start on an index still open. The provider's failure is an error
event (DESIGN.md: `on_error` means a bug), and no call is lost without a word."""

from __future__ import annotations

import json
from typing import Any

from reactivex.testing.marbles import marbles_testing

import rxllm
from rxllm.events import ToolRequest, ToolStart, failed
from rxllm.fragments import ToolArgs
from rxllm.operators import accumulate_tool_arguments
from tests.operators.marbles import EVENTS, P


def request(call_id: str, name: str, index: int, arguments: dict[str, Any]) -> ToolRequest:
    return ToolRequest(provider=P, call_id=call_id, name=name, index=index, arguments=arguments)


def values(results: list[Any]) -> list[Any]:
    return [r.value.value for r in results if r.value.kind == "N"]


def errors(results: list[Any]) -> list[Any]:
    return [r.value.exception for r in results if r.value.kind == "E"]


LATE = failed(
    P,
    "protocol",
    "arguments for tool call 'call_1' ('f') arrived after the call was complete",
    raw='{"x"',
)


def test_a_fragment_after_its_call_completed_is_a_protocol_error() -> None:
    lookup = {**EVENTS, "r": request("call_1", "f", 0, {"x": 1}), "L": LATE}
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-s-m-n-e-m-D-|", lookup).pipe(accumulate_tool_arguments()))
        assert results == exp("-s-----r-L---|", lookup)


def test_whitespace_after_a_completed_call_changes_nothing() -> None:
    lookup = {**EVENTS, "r": request("call_1", "f", 0, {"x": 1}), "w": ToolArgs(0, " \n")}
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-s-m-n-e-w-D-|", lookup).pipe(accumulate_tool_arguments()))
        assert results == exp("-s-----r---D-|", lookup)


def test_another_start_on_an_open_index_ends_the_earlier_call() -> None:
    second = ToolStart(provider=P, call_id="call_9", name="h", index=0)
    lookup = {
        **EVENTS,
        "S": second,
        "r": request("call_1", "f", 0, {"x": 1}),
        "R": request("call_9", "h", 0, {"x": 1}),
    }
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-s-m-n-S-m-n-e-D-|", lookup)
        results = start(source.pipe(accumulate_tool_arguments()))
        # the earlier call is complete JSON: dispatched, then the new one starts
        assert results == exp("-s-----(r,S)-R-D-|", lookup)


def test_another_start_on_an_open_index_after_partial_arguments_is_malformed() -> None:
    second = ToolStart(provider=P, call_id="call_9", name="h", index=0)
    lookup = {**EVENTS, "S": second}
    with marbles_testing() as (start, cold, _hot, _exp):
        source = cold("-s-z-S-m-n-e-D-|", lookup)
        results = start(source.pipe(accumulate_tool_arguments()))
    out = values(results)
    assert [e.type for e in out] == ["tool_start", "error"] and not errors(results)
    error = out[1].error
    assert error.kind == "malformed_tool_arguments" and error.provider == P
    assert "'call_1' ('f')" in error.message and error.raw == '{"x": '


def test_a_repeated_start_of_the_open_call_is_dropped() -> None:
    lookup = {**EVENTS, "r": request("call_1", "f", 0, {"x": 1})}
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-s-m-s-n-e-D-|", lookup).pipe(accumulate_tool_arguments()))
        assert results == exp("-s-------r-D-|", lookup)


# --- the same through real bytes: replay of hand-built wire bodies ------------------


def _run(body: str, provider: str) -> tuple[list[Any], list[Exception]]:
    out: list[Any] = []
    errs: list[Exception] = []
    rxllm.replay(body, provider=provider).subscribe(out.append, errs.append)
    return out, errs


def _chat(delta: dict[str, Any], finish: str | None = None) -> str:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n"


def _args(arguments: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}


def test_openai_arguments_after_the_finish_are_an_error_event_not_on_error() -> None:
    first = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a"'},
    }
    body = (
        _chat({"role": "assistant", "tool_calls": [first]})
        + _chat(_args(":1}"), "tool_calls")
        + _chat(_args(', "b": 2}'))  # after the finish, which completed the call
        + "data: [DONE]\n\n"
    )
    out, errs = _run(body, "openai")
    assert not errs  # was: ValueError("arguments for tool call 0 before its start")
    assert [e.type for e in out] == ["tool_start", "tool_request", "error"]
    error = out[-1].error
    assert error.kind == "protocol" and error.provider == "openai"
    assert "'c1' ('f')" in error.message


def _anthropic(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


_MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
}
_END = [
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
    {"type": "message_stop"},
]


def _tool_use(call_id: str, name: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": 0, "content_block": block}


def _json(partial: str) -> dict[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": partial}
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def test_anthropic_second_tool_use_on_an_open_index_does_not_lose_the_first() -> None:
    body = _anthropic(
        _MESSAGE_START,
        _tool_use("toolu_a", "f"),
        _json('{"x": 1}'),
        _tool_use("toolu_b", "g"),
        _json('{"y": 2}'),
        *_END,
    )
    out, errs = _run(body, "anthropic")
    assert not errs
    requests = [(e.call_id, e.arguments) for e in out if e.type == "tool_request"]
    # was: only toolu_b; toolu_a was started, then dropped without a word
    assert requests == [("toolu_a", {"x": 1}), ("toolu_b", {"y": 2})]
    assert out[-1].type == "done"


def test_anthropic_second_tool_use_cutting_the_first_short_is_malformed() -> None:
    body = _anthropic(
        _MESSAGE_START,
        _tool_use("toolu_a", "f"),
        _json('{"x": '),
        _tool_use("toolu_b", "g"),
        _json('{"y": 2}'),
        *_END,
    )
    out, errs = _run(body, "anthropic")
    assert not errs
    # the turn's usage (message_delta's) before the error, which ends the turn
    assert [e.type for e in out] == ["tool_start", "usage", "error"]
    assert out[-1].error.kind == "malformed_tool_arguments"
    assert "'toolu_a' ('f')" in out[-1].error.message
