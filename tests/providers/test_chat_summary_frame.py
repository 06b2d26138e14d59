"""A whole `message` after the turn streamed its deltas is the turn's summary: MiniMax ends
its stream with a `chat.completion` frame (not `.chunk`) whose `choices[0].message` repeats
the whole answer (content, reasoning_content or tool_calls) beside the only real usage
(GCWing/OpenBitFun#792, from a live MiniMax-M2.7-highspeed response; ENTERPILOT/GoModel's
`internal/providers/minimax/reasoning_stream.go`, PR #1068, drops the repeated message and
keeps the usage). Each item comes out once; from the summary, only its finish, its usage
and citations not seen yet. Bodies written by hand from those sources.
"""

from __future__ import annotations

from typing import Any

from rxllm.events import Citation, Done, Failed
from tests.providers.test_probe_openai_chat import _sse
from tests.providers.test_probe_openai_chat_3 import _record
from tests.support import ServeBody, kinds, replay_every_way, summarize

_PLACEHOLDER = {"total_tokens": 0, "total_characters": 0}  # MiniMax's, on every chunk
_USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "0", "object": "chat.completion.chunk", "model": "MiniMax-M2.7",
            "choices": [choice], "usage": _PLACEHOLDER}  # fmt: skip


def _summary(message: dict[str, Any], finish: str) -> dict[str, Any]:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    return {"id": "0", "object": "chat.completion", "model": "MiniMax-M2.7",
            "choices": [choice], "usage": _USAGE}  # fmt: skip


_TEXT = _sse(
    _chunk({"role": "assistant", "reasoning_content": "The user says hi."}),
    _chunk({"role": "assistant", "content": "Hello!"}),
    _chunk({"role": "assistant", "content": ""}, "stop"),
    _summary({"content": "Hello!", "reasoning_content": "The user says hi."}, "stop"),
)

_CALL = {"id": "call_function_abc_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
_TOOL = _sse(
    _chunk({"role": "assistant", "tool_calls": [{"index": 0, **_CALL}]}),
    _chunk({"role": "assistant", "content": ""}, "tool_calls"),
    _summary({"content": "", "tool_calls": [_CALL]}, "tool_calls"),
)


def test_the_summary_after_deltas_repeats_no_text_or_reasoning() -> None:
    # Before: reasoning and text twice ("The user says hi." and "Hello!" again).
    events = replay_every_way(_TEXT, "custom")
    assert kinds(events) == ["reasoning", "text", "usage", "done"]
    summary = summarize(events)
    assert (summary.reasoning, summary.text) == ("The user says hi.", "Hello!")
    assert summary.usage is not None and summary.usage.total_tokens == 120


def test_the_summary_after_a_call_is_not_a_second_call() -> None:
    # Before: tool_request, then error(protocol) "arguments for tool call ... arrived
    # after the call was complete".
    events = replay_every_way(_TOOL, "custom")
    assert kinds(events) == ["tool_start", "tool_request", "usage", "done"]
    summary = summarize(events)
    assert summary.tool_calls == [("call_function_abc_1", "get_weather", {"city": "Paris"})]
    assert summary.stop_reason == "tool_use"


def test_the_summary_that_carries_the_only_finish_ends_the_turn() -> None:
    body = _sse(
        _chunk({"role": "assistant", "content": "Hello!"}),
        _summary({"content": "Hello!"}, "stop"),
    )
    events = replay_every_way(body, "custom")
    assert kinds(events) == ["text", "usage", "done"]
    assert summarize(events).text == "Hello!"


def test_the_summary_gives_the_citations_not_seen_yet() -> None:
    cite = {"type": "url_citation", "url_citation": {"url": "https://a.example", "title": "A"}}
    later = {"type": "url_citation", "url_citation": {"url": "https://b.example", "title": "B"}}
    body = _sse(
        _chunk({"content": "See A.", "annotations": [cite]}, "stop"),
        _summary({"content": "See A.", "annotations": [cite, later]}, "stop"),
    )
    events = replay_every_way(body, "custom")
    assert kinds(events) == ["text", "citation", "citation", "usage", "done"]
    cited = [e.url for e in events if isinstance(e, Citation)]
    assert cited == ["https://a.example", "https://b.example"]


def test_a_role_only_delta_before_the_message_is_not_a_streamed_answer() -> None:
    # A delta that carried nothing does not make the whole message a summary.
    body = _sse(_chunk({"role": "assistant"}), _summary({"content": "Whole answer"}, "stop"))
    assert summarize(replay_every_way(body, "custom")).text == "Whole answer"


def test_a_server_that_streams_messages_has_each_read() -> None:
    # Messages in place of deltas, one piece each: none of them is a summary.
    pieces = [{"index": 0, "message": {"content": text}} for text in ("Whole", " answer")]
    body = _sse(*({"model": "m", "choices": [choice]} for choice in pieces), _chunk({}, "stop"))
    assert summarize(replay_every_way(body, "custom")).text == "Whole answer"


async def test_the_summary_over_http(serve_body: ServeBody) -> None:
    record = await _record(serve_body, _TEXT, "custom")
    assert (record.reasoning, record.text) == ("The user says hi.", "Hello!")
    assert isinstance(record.terminal, Done)
    assert record.usage is not None and record.usage.input_tokens == 100
    record = await _record(serve_body, _TOOL, "custom")
    assert not isinstance(record.terminal, Failed)
    assert [(c.call_id, c.arguments) for c in record.tool_calls] == [
        ("call_function_abc_1", {"city": "Paris"})
    ]
