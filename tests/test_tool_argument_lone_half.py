"""A UTF-16 half written as a JSON escape of its own in tool arguments, with no
partner anywhere ('{"a": "\\ud800"}'): `json` reads it as a lone surrogate, which the
next request, the call in its history, cannot send. Now it is U+FFFD, as a lone half in
text is (f147657), and as one cut between two argument fragments is (3eb48b6)."""

from __future__ import annotations

import pytest

import rxllm
from rxllm.events import Failed
from tests.test_probe_contract import ASK, KEY, chat_deltas, replay_every_way, summarize

CALL = '{"tool_calls": [{"index": 0, "id": "call_1", "type": "function", '


def said(arguments: str) -> object:
    """The arguments of one chat call whose argument text is `arguments` (as JSON
    text: each backslash in it is escaped again inside the chunk)."""
    escaped = arguments.replace("\\", "\\\\").replace('"', '\\"')
    first = CALL + '"function": {"name": "f", "arguments": "' + escaped + '"}}]}'
    summary = summarize(replay_every_way(chat_deltas(first, finish="tool_calls"), "openai"))
    [(_, _, parsed)] = summary.tool_calls
    return parsed


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"a": "\\ud800"}', {"a": "\ufffd"}),
        ('{"a": "x\\uDE00y"}', {"a": "x\ufffdy"}),
        ('{"\\ud83d": [1, {"b": ["\\ude00"]}]}', {"\ufffd": [1, {"b": ["\ufffd"]}]}),
    ],
)
def test_a_lone_escaped_half_in_arguments_is_the_replacement_character(
    arguments: str, expected: dict[str, object]
) -> None:
    parsed = said(arguments)
    assert parsed == expected
    assert isinstance(parsed, dict)
    call = rxllm.ToolCall(id="call_1", name="f", arguments=parsed)
    history = [*ASK.messages, rxllm.Message.assistant("", tool_calls=[call])]
    history.append(rxllm.Message.tool("call_1", "sunny"))
    p = rxllm.provider("openai", api_key=KEY)
    p.stream(ASK.model_copy(update={"messages": history}))  # accepted at the call


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),  # a pair: the character
        ('{"a": "\\\\ud800"}', {"a": "\\ud800"}),  # a backslash, then letters
        ('{"a": "\\u00e9"}', {"a": "\u00e9"}),
    ],
)
def test_escapes_that_are_no_lone_half_read_as_json_reads_them(
    arguments: str, expected: dict[str, object]
) -> None:
    assert said(arguments) == expected


def test_arguments_as_deep_as_json_reads_with_a_lone_half_end_the_turn_as_malformed() -> None:
    """The walk that mends the halves takes a frame or two a level where `json` takes
    one: arguments `json` reads, nested too deep for the walk, with a lone half, are
    malformed arguments (an error event), never an exception out of the stream."""
    depth = 600
    arguments = '{"a": ' + "[" * depth + '"\\ud800"' + "]" * depth + "}"
    escaped = arguments.replace("\\", "\\\\").replace('"', '\\"')
    first = CALL + '"function": {"name": "f", "arguments": "' + escaped + '"}}]}'
    events: list[rxllm.Event] = []
    errors: list[Exception] = []
    body = chat_deltas(first, finish="tool_calls")
    rxllm.replay(body, provider="openai").subscribe(events.append, errors.append)
    assert errors == []
    last = events[-1]
    assert isinstance(last, Failed)
    assert last.error.kind == "malformed_tool_arguments"
    assert "too deep" in last.error.message
