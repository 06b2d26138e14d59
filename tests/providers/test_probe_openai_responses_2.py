"""OpenAI Responses call shapes a second probe found mishandled: a done event that
leaves out what the call streamed (proxies), a custom tool call whose
`output_item.done` never came, and `arguments` sent as an object. Bodies are made by
hand from the streaming events reference and openai-python's types
(`ResponseCustomToolCall`, `ResponseCustomToolCallInputDeltaEvent`,
`ResponseCustomToolCallInputDoneEvent`); ids and values are made up. Every body is
checked whatever the chunking."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.events import Failed
from tests.providers.test_probe_openai_responses import CREATED, RESPONSE, added, done, run
from tests.support import summarize

CUSTOM = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "sql"}
FUNCTION = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_f",
    "name": "lookup",
    "status": "in_progress",
}


def on(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "output_index": 0, "item_id": "ctc_1", **fields}


def terminal(*output: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    response: dict[str, Any] = {**RESPONSE, "status": status, "output": list(output)}
    if status == "incomplete":
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    return {"type": f"response.{status}", "response": response}


INPUT = (
    on("response.custom_tool_call_input.delta", delta="SELECT "),
    on("response.custom_tool_call_input.delta", delta="1"),
)


@pytest.mark.parametrize(
    "done_item",
    [CUSTOM, {**CUSTOM, "input": ""}],
    ids=["without-input", "empty-input"],
)
def test_a_custom_call_done_without_its_input_keeps_the_streamed_one(
    done_item: dict[str, Any],
) -> None:
    """A proxy's `output_item.done` that leaves out (or blanks, as the added item had
    it) the `input` the call streamed: the streamed input is the call's."""
    events = run(CREATED, added(0, {**CUSTOM, "input": ""}), *INPUT, done(0, done_item), terminal())
    got = summarize(events)
    assert got.tool_calls == [("call_1", "sql", {"input": "SELECT 1"})]
    assert got.stop_reason == "tool_use"


def test_the_done_item_input_stays_authoritative() -> None:
    events = run(
        CREATED,
        added(0, {**CUSTOM, "input": ""}),
        *INPUT,
        done(0, {**CUSTOM, "input": "SELECT 2", "namespace": "db"}),
        terminal(),
    )
    assert summarize(events).tool_calls == [
        ("call_1", "sql", {"input": "SELECT 2", "namespace": "db"})
    ]


@pytest.mark.parametrize(
    "ending",
    [
        pytest.param((terminal(),), id="completed-without-the-item"),
        pytest.param((terminal({**CUSTOM, "input": "SELECT 1"}),), id="completed-with-the-item"),
        pytest.param(
            (on("response.custom_tool_call_input.done", input="SELECT 1"), terminal()),
            id="input-done",
        ),
        pytest.param(
            (
                on("response.custom_tool_call_input.done", input="SELECT 1"),
                terminal(status="incomplete"),
            ),
            id="input-done-then-incomplete",
        ),
    ],
)
def test_a_custom_call_whose_done_item_never_came(ending: tuple[dict[str, Any], ...]) -> None:
    """No `output_item.done` for the call: its streamed input (whole at its
    `custom_tool_call_input.done`, or the response completed) is still a call."""
    events = run(CREATED, added(0, {**CUSTOM, "input": ""}), *INPUT, *ending)
    assert summarize(events).tool_calls == [("call_1", "sql", {"input": "SELECT 1"})]


def test_a_custom_call_cut_off_by_the_token_limit_is_malformed() -> None:
    """Input still streaming when the response ended incomplete, never marked done: the
    text cannot say where it stops, and a cut-off call is never dispatched."""
    events = run(CREATED, added(0, {**CUSTOM, "input": ""}), *INPUT, terminal(status="incomplete"))
    end = events[-1]
    assert isinstance(end, Failed) and end.error.kind == "malformed_tool_arguments"
    assert "'call_1'" in end.error.message and "'sql'" in end.error.message


def _arguments(fragment: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": fragment}


@pytest.mark.parametrize(
    "finish",
    [
        pytest.param(
            (
                {
                    "type": "response.function_call_arguments.done",
                    "output_index": 0,
                    "arguments": "",
                },
                done(0, {**FUNCTION, "arguments": ""}),
            ),
            id="arguments-done-empty",
        ),
        pytest.param((done(0, {**FUNCTION, "arguments": ""}),), id="item-done-empty"),
    ],
)
def test_an_empty_done_arguments_keeps_the_streamed_ones(
    finish: tuple[dict[str, Any], ...],
) -> None:
    """A done event with `arguments: ""` after the deltas streamed `{"id": 7}`: the call
    has those arguments, not none."""
    events = run(
        CREATED,
        added(0, {**FUNCTION, "arguments": ""}),
        _arguments('{"id": '),
        _arguments("7}"),
        *finish,
        terminal(),
    )
    assert summarize(events).tool_calls == [("call_f", "lookup", {"id": 7})]


@pytest.mark.parametrize(
    "events",
    [
        pytest.param(
            (added(0, FUNCTION), done(0, {**FUNCTION, "arguments": {"id": 7}})), id="item-done"
        ),
        pytest.param(
            (
                added(0, FUNCTION),
                {
                    "type": "response.function_call_arguments.done",
                    "output_index": 0,
                    "arguments": {"id": 7},
                },
            ),
            id="arguments-done",
        ),
        pytest.param((), id="terminal-only"),
    ],
)
def test_arguments_sent_as_an_object_are_read_not_a_crash(
    events: tuple[dict[str, Any], ...],
) -> None:
    """`arguments` as a JSON object instead of its text (as some servers send on the
    chat wire): read as that object, where it raised inside the pipeline (`on_error`)."""
    body = terminal({**FUNCTION, "status": "completed", "arguments": {"id": 7}})
    got = summarize(run(CREATED, *events, body))
    assert got.tool_calls == [("call_f", "lookup", {"id": 7})]


def test_custom_input_for_a_call_never_begun_waits_for_its_done_item() -> None:
    """Input events before any `output_item.added` (a proxy that sends none): logged,
    and the done item, whole, is the call."""
    events = run(CREATED, *INPUT, done(0, {**CUSTOM, "input": "SELECT 1"}), terminal())
    assert summarize(events).tool_calls == [("call_1", "sql", {"input": "SELECT 1"})]
