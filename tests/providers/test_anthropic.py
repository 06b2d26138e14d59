"""The Anthropic Messages wire: every real capture in every chunking, the request body,
and the local server's Anthropic route over real HTTP."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
    TextDelta,
    ToolRequest,
    ToolStart,
    UsageUpdate,
)
from rxllm.local import LocalServer
from rxllm.local.script import FAULTS, Reasoning, Say, ToolUse
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers.anthropic import DEFAULT_MAX_TOKENS, Anthropic
from tests.support import capture, captures_of, needs_captures, rechunk, replay, summarize

PROVIDER = "anthropic"
ANSWER, WEATHER_CALL = FAULTS["answer"], FAULTS["weather"]


@dataclass(frozen=True)
class Expected:
    """What a capture really says, read from the capture itself."""

    terminal: str
    text: str | None = None
    """The exact text, when short enough to write down."""
    text_parts: tuple[str, ...] = ()
    """Key substrings (the text's start, end, ...) when the whole is long."""
    text_length: int | None = None
    reasoning: str = ""
    reasoning_parts: tuple[str, ...] = ()
    reasoning_length: int | None = None
    signatures: tuple[tuple[str, str, int], ...] = ()
    """(prefix, suffix, length) of each signature, in order."""
    redacted: int = 0
    tool_calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    tool_starts: tuple[tuple[str, str, int], ...] = ()
    usage: tuple[int, int, int, int] | None = None
    """(input, output, cache read, cache write); total is their sum."""
    stop_reason: str | None = None
    raw_stop_reason: str | None = None
    error_kind: str | None = None
    retryable: bool | None = None
    model: str | None = None
    message_parts: tuple[str, ...] = field(default_factory=tuple)


EXPECTED: dict[str, Expected] = {
    "docs_overloaded_error_event.sse": Expected(
        terminal="error",
        text="",
        error_kind="stream_error",
        retryable=True,
        message_parts=("Overloaded", "overloaded_error"),
    ),
    "docs_tool_use_example.sse": Expected(
        terminal="done",
        text="Okay, let's check the weather for San Francisco, CA:",
        tool_calls=(
            (
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "get_weather",
                {"location": "San Francisco, CA", "unit": "fahrenheit"},
            ),
        ),
        tool_starts=(("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", 1),),
        usage=(472, 89, 0, 0),
        stop_reason="tool_use",
        raw_stop_reason="tool_use",
        model="claude-opus-4-1-20250805",
    ),
    # max_tokens cut the tool's JSON: the block never gets its content_block_stop;
    # message_delta ends it, and the partial arguments are an error, never a call.
    "max_tokens_truncated_tool_json.sse": Expected(
        terminal="error",
        text=(
            "I'll create a comprehensive tax guide for someone with multiple W2s and save "
            "it in a file called taxes.txt. Let me do that for you now."
        ),
        tool_starts=(("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", 1),),
        usage=(450, 124, 0, 0),
        error_kind="malformed_tool_arguments",
        retryable=False,
        message_parts=("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", "not valid JSON"),
    ),
    "redacted_thinking.sse": Expected(
        terminal="done",
        text=(
            "I notice that you've sent what appears to be some kind of test string or "
            'command. I don\'t have any special "magic string" triggers or backdoor '
            "commands that would expose internal systems or change my behavior.\n\n"
            "I'm Claude, an AI assistant created by Anthropic to be helpful, harmless, "
            "and honest. How can I assist you today with a legitimate task or question?"
        ),
        signatures=(
            ("EqkECkYIBxgCKkA8AZ4noDfV", "AhDIXXjpot45vnBd4ewJ/hgB", 744),
            ("EtgBCkYIBxgCKkDQfGkwzflE", "jRRFuab/DBV3yRYdZ1J0GAE=", 296),
        ),
        redacted=2,
        usage=(92, 189, 0, 0),
        stop_reason="stop",
        raw_stop_reason="end_turn",
        model="claude-sonnet-4-5-20250929",
    ),
    "text_ping.sse": Expected(
        terminal="done",
        text="2",
        usage=(20, 5, 0, 0),
        stop_reason="stop",
        raw_stop_reason="end_turn",
        model="claude-sonnet-4-5-20250929",
    ),
    "thinking_signature.sse": Expected(
        terminal="done",
        text_parts=(
            "Here are the basic steps for safely crossing the street:\n\n**At intersections",
            "prioritize safety over speed when crossing streets.",
        ),
        text_length=1021,
        reasoning=(
            "This is a straightforward question about pedestrian safety. I should provide "
            "clear, helpful advice about how to safely cross a street. This is basic safety "
            "information that could help prevent accidents."
        ),
        signatures=(("EvMCCkYICxgCKkCHP2cSuEdc", "eb1vgb7wwzDvP/UhjfQYAQ==", 504),),
        usage=(43, 282, 0, 0),
        stop_reason="stop",
        raw_stop_reason="end_turn",
        model="claude-sonnet-4-20250514",
    ),
    # The stored file lacks the line break after its last line (`data: {"type":
    # "message_stop"}`); a body that ends cleanly still delivers its last event.
    "tool_use_input_json_delta.sse": Expected(
        terminal="done",
        text="I'll check the current weather in Paris for you.",
        tool_calls=(("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"}),),
        tool_starts=(("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", 1),),
        usage=(377, 65, 0, 0),
        stop_reason="tool_use",
        raw_stop_reason="tool_use",
        model="claude-sonnet-4-20250514",
    ),
    # Two server-side web searches: no client tool events; message_delta's input count
    # (22397, search results included) supersedes message_start's (2068).
    "web_search_server_tool.sse": Expected(
        terminal="done",
        text_parts=(
            "Based on the search results, I can see that the information is a bit dated",
            " Let me search for more current information.Based on the search results",
            "today (September 16) shows a high of 76°F and low of 59°F for San Francisco.",
            "Daytime temperatures usually reach 22°C (72°F) in San Francisco in September",
            "It's shaping up to be a pleasant day in San Francisco!",
        ),
        text_length=1335,
        reasoning_parts=(
            "The user is asking about the weather in San Francisco today.",
            "today's date is September 16, 2025.\n\nI should search for current",
            'I\'ll include "today" in the search query to get the most current information.',
        ),
        reasoning_length=405,
        signatures=(("Er8ECkYIBxgCKkDp29haxwUo", "lTbo1M2IQ3Ok0kdt0RAYAQ==", 776),),
        usage=(22397, 637, 0, 0),
        stop_reason="stop",
        raw_stop_reason="end_turn",
        model="claude-sonnet-4-20250514",
    ),
}

CAPTURES = [path.name for path in captures_of(PROVIDER)]

# Several random chunkings per capture, down to one byte at a time.
CHUNKINGS = [(seed, size) for size in (1, 2, 3, 5, 17, 64) for seed in range(3)]


@needs_captures
def test_every_capture_has_expectations() -> None:
    assert CAPTURES, "no Anthropic captures found"
    assert set(CAPTURES) == set(EXPECTED)


def check(events: list[Event], expected: Expected) -> None:
    got = summarize(events)
    assert got.providers == {PROVIDER}
    assert got.terminal == expected.terminal
    if expected.text is not None:
        assert got.text == expected.text
    for part in expected.text_parts:
        assert part in got.text
    if expected.text_length is not None:
        assert len(got.text) == expected.text_length
    if expected.reasoning:
        assert got.reasoning == expected.reasoning
    for part in expected.reasoning_parts:
        assert part in got.reasoning
    if expected.reasoning_length is not None:
        assert len(got.reasoning) == expected.reasoning_length
    if not (expected.reasoning or expected.reasoning_parts):
        assert got.reasoning == ""
    assert [(s[:24], s[-24:], len(s)) for s in got.signatures] == list(expected.signatures)
    redacted = [e for e in events if isinstance(e, ReasoningDelta) and e.redacted]
    assert len(redacted) == expected.redacted
    assert all(e.text == "" and e.signature for e in redacted)
    assert got.tool_calls == list(expected.tool_calls)
    starts = [(e.call_id, e.name, e.index) for e in events if isinstance(e, ToolStart)]
    assert starts == list(expected.tool_starts or [(c, n, 1) for c, n, _ in expected.tool_calls])
    usages = [e.usage for e in events if isinstance(e, UsageUpdate)]
    if expected.usage is None:
        assert usages == []
    else:
        assert len(usages) == 1, "usage is emitted once, at message_delta"
        inp, out, read, write = expected.usage
        usage = usages[0]
        assert (usage.input_tokens, usage.output_tokens) == (inp, out)
        assert (usage.cache_read_tokens, usage.cache_write_tokens) == (read, write)
        assert usage.reasoning_tokens == 0
        assert usage.total_tokens == inp + out + read + write
    terminal = events[-1]
    if expected.terminal == "done":
        assert isinstance(terminal, Done)
        assert terminal.stop_reason == expected.stop_reason
        assert terminal.raw_stop_reason == expected.raw_stop_reason
        assert terminal.model == expected.model
    else:
        assert isinstance(terminal, Failed)
        assert terminal.error.kind == expected.error_kind
        assert terminal.error.provider == PROVIDER
        assert terminal.error.retryable is expected.retryable
        for part in expected.message_parts:
            assert part in terminal.error.message


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_whole(name: str) -> None:
    check(replay(capture(f"{PROVIDER}/{name}"), PROVIDER), EXPECTED[name])


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_rechunked_gives_identical_events(name: str) -> None:
    data = capture(f"{PROVIDER}/{name}")
    whole = replay(data, PROVIDER)
    for seed, size in CHUNKINGS:
        chunks = rechunk(data, seed, max_size=size)
        assert replay(chunks, PROVIDER) == whole, f"seed {seed}, max_size {size}"


def test_stored_capture_without_final_newline() -> None:
    """As stored (no line break after message_stop) and as the wire sent it (with the
    blank line), the capture is the same complete tool-use turn."""
    data = capture(f"{PROVIDER}/tool_use_input_json_delta.sse")
    assert data.endswith(b'data: {"type":"message_stop"}')
    for chunks in ([data], [data + b"\n\n"], rechunk(data + b"\n\n", 7, max_size=3)):
        got = summarize(replay(chunks, PROVIDER))
        assert got.terminal == "done"
        assert (got.stop_reason, got.raw_stop_reason) == ("tool_use", "tool_use")
        assert got.tool_calls == [
            ("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})
        ]
        assert got.model == "claude-sonnet-4-20250514"


def test_max_tokens_cut_tool_is_malformed_whatever_the_ending() -> None:
    data = capture(f"{PROVIDER}/max_tokens_truncated_tool_json.sse")
    for body in (data, data + b"\n\n"):
        events = replay(body, PROVIDER)
        assert not [e for e in events if isinstance(e, ToolRequest)]
        terminal = events[-1]
        assert isinstance(terminal, Failed)
        assert terminal.error.kind == "malformed_tool_arguments"
        assert terminal.error.raw is not None
        assert terminal.error.raw.endswith('"",\n"Filing taxes')


def test_web_search_server_tools_are_server_events() -> None:
    """The capture's two `server_tool_use` blocks (query streamed as input_json_delta,
    start `input` {}) and their whole `web_search_tool_result` blocks, and its seven
    `citations_delta`s (repeats included), as the bytes hold them."""
    data = capture(f"{PROVIDER}/web_search_server_tool.sse")
    events = replay(data, PROVIDER)
    assert not [e for e in events if isinstance(e, ToolStart | ToolRequest)]
    # the search query fragments are not text either
    assert "San Francisco weather today" not in summarize(events).text
    first, second = "srvtoolu_01FYcUbzEaqqQh1WBRj1QX3h", "srvtoolu_01FDqc7ruGpVRoNuD5G6jkUx"
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [
        (first, "web_search", {"query": "San Francisco weather today"}),
        (second, "web_search", {"query": "San Francisco weather September 16 2025"}),
    ]
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(e.call_id, e.name, len(e.content)) for e in results] == [
        (first, "web_search", 10),
        (second, "web_search", 10),
    ]
    assert {item["type"] for e in results for item in e.content} == {"web_search_result"}
    assert results[0].content[0]["title"] == "San Francisco, CA Weather Forecast | AccuWeather"
    assert results[0].content[0]["url"] == (
        "https://www.accuweather.com/en/us/san-francisco/94103/weather-forecast/347629"
    )
    assert results[0].content[0]["encrypted_content"].startswith("EroTCioIBxgC")
    # each call precedes its result, and the result precedes the text written from it
    order = [e.type for e in events if e.type in ("server_tool_call", "server_tool_result")]
    assert order == ["server_tool_call", "server_tool_result"] * 2
    citations = [e for e in events if isinstance(e, Citation)]
    assert len(citations) == data.count(b'"type":"citations_delta"') == 7
    first_cite = citations[0]
    assert first_cite.url == (
        "https://www.accuweather.com/en/us/san-francisco/94103/september-weather/347629"
    )
    assert first_cite.cited_text is not None
    assert first_cite.cited_text.startswith("San Francisco, CA Weather Today WinterCast")
    assert (
        citations[1].url
        == citations[2].url
        == (
            "https://www.sfchronicle.com/weather-forecast/article/"
            "weather-forecast-san-francisco-21043269.php"
        )
    )
    assert citations[1].title == "Here\u2019s when S.F. weather could hit 90 degrees next week"
    assert citations[1].cited_text == (
        "Average mid-September highs in San Francisco are around 70 degrees. "
    )
    # a citation comes before the text it supports (citations_delta, then text_delta)
    kinds = [e.type for e in events]
    assert kinds[kinds.index("citation") + 1] == "text"


def test_error_event_mid_stream() -> None:
    """The documented error event spliced after a text delta (as it arrives after 200)."""
    text = capture(f"{PROVIDER}/text_ping.sse")
    error = capture(f"{PROVIDER}/docs_overloaded_error_event.sse")
    cut = text.index(b"event: content_block_stop")
    data = text[:cut] + error
    for chunks in ([data], rechunk(data, 3, max_size=2)):
        events = replay(chunks, PROVIDER)
        # what message_start counted (the input), reported with the failure: the turn
        # had committed, and message_delta's final counts never came
        assert [e.type for e in events] == ["text", "usage", "error"]
        usage = events[1]
        assert isinstance(usage, UsageUpdate) and usage.usage.input_tokens == 20
        terminal = events[-1]
        assert isinstance(terminal, Failed)
        assert terminal.error.kind == "stream_error"
        assert terminal.error.retryable is True
        assert terminal.error.raw is not None
        assert json.loads(terminal.error.raw)["error"]["type"] == "overloaded_error"


# -- synthetic streams for the rules no capture shows --------------------------------


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


START = {
    "type": "message_start",
    "message": {
        "model": "claude-test",
        "usage": {
            "input_tokens": 10,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7,
            "output_tokens": 1,
        },
    },
}
STOP = {"type": "message_stop"}


def delta_of(stop: str | None, **usage: int) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage}


def tool_block(index: int, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", **extra}
    return {"type": "content_block_start", "index": index, "content_block": block}


def args(index: int, partial: str) -> dict[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": partial}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def text_block(index: int, *texts: str) -> list[dict[str, Any]]:
    start = {"type": "content_block_start", "index": index, "content_block": {"type": "text"}}
    deltas = [
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": t}}
        for t in texts
    ]
    return [start, *deltas, block_stop(index)]


def test_usage_merges_start_and_delta_with_cache_apart() -> None:
    events = replay(
        sse(START, *text_block(0, "hi"), delta_of("end_turn", output_tokens=9), STOP), PROVIDER
    )
    usage = summarize(events).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (10, 9)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (100, 7)
    assert usage.total_tokens == 126


def test_tool_with_explicit_empty_input_and_no_fragments() -> None:
    body = sse(
        START, tool_block(0, input={}), args(0, ""), block_stop(0), delta_of("tool_use"), STOP
    )
    assert summarize(replay(body, PROVIDER)).tool_calls == [("toolu_0", "f", {})]


def test_tool_fragments_win_over_the_start_input() -> None:
    body = sse(
        START,
        tool_block(0, input={}),
        args(0, '{"a": '),
        args(0, "1}"),
        block_stop(0),
        delta_of("tool_use"),
        STOP,
    )
    assert summarize(replay(body, PROVIDER)).tool_calls == [("toolu_0", "f", {"a": 1})]


def test_a_tool_block_completed_without_input_has_no_parameters() -> None:
    """DESIGN.md: a call the protocol marks complete (`content_block_stop`) with no
    arguments at all is a call without parameters."""
    body = sse(START, tool_block(0), block_stop(0), delta_of("tool_use"), STOP)
    assert summarize(replay(body, PROVIDER)).tool_calls == [("toolu_0", "f", {})]


def test_open_tool_at_message_delta_uses_only_what_arrived() -> None:
    """A block cut before any fragment: its start `input: {}` is a placeholder."""
    body = sse(START, tool_block(0, input={}), delta_of("max_tokens"), STOP)
    terminal = replay(body, PROVIDER)[-1]
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "malformed_tool_arguments"


def test_parallel_tools_keep_their_block_index() -> None:
    body = sse(
        START,
        *text_block(0, "Two calls."),
        tool_block(1, input={}),
        args(1, '{"x": 1}'),
        block_stop(1),
        tool_block(2, input={}),
        args(2, '{"y": 2}'),
        block_stop(2),
        delta_of("tool_use"),
        STOP,
    )
    events = replay(body, PROVIDER)
    requests = [(e.call_id, e.index, e.arguments) for e in events if isinstance(e, ToolRequest)]
    assert requests == [("toolu_1", 1, {"x": 1}), ("toolu_2", 2, {"y": 2})]


@pytest.mark.parametrize(
    ("raw", "stop"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("pause_turn", "pause"),
        ("max_tokens", "length"),
        ("tool_use", "tool_use"),
        ("refusal", "content_filter"),
        ("something_new", "other"),
    ],
)
def test_stop_reasons(raw: str, stop: str) -> None:
    events = replay(sse(START, *text_block(0, "x"), delta_of(raw), STOP), PROVIDER)
    terminal = events[-1]
    assert isinstance(terminal, Done)
    assert (terminal.stop_reason, terminal.raw_stop_reason) == (stop, raw)


def test_message_delta_without_message_stop_is_truncated() -> None:
    events = replay(
        sse(START, *text_block(0, "x"), delta_of("end_turn", output_tokens=2)), PROVIDER
    )
    assert [e.type for e in events] == ["text", "usage", "error"]
    terminal = events[-1]
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "truncated"


def test_unknown_events_and_deltas_are_ignored() -> None:
    odd_delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta"}}
    body = sse(
        START,
        {"type": "brand_new_event", "x": 1},
        *text_block(0, "a"),
        odd_delta,
        {"type": "content_block_start", "index": 1, "content_block": {"type": "future_block"}},
        block_stop(1),
        delta_of("end_turn"),
        STOP,
    )
    got = summarize(replay(body, PROVIDER))
    assert (got.text, got.terminal, got.stop_reason) == ("a", "done", "stop")


def test_events_after_message_stop_are_ignored() -> None:
    late = text_block(1, "LATE")
    body = sse(START, *text_block(0, "a"), delta_of("end_turn"), STOP, *late)
    assert summarize(replay(body, PROVIDER)).text == "a"


@pytest.mark.parametrize(
    ("kind", "retryable"),
    [("overloaded_error", True), ("api_error", True), ("invalid_request_error", False)],
)
def test_error_kinds(kind: str, retryable: bool) -> None:
    error = {"type": "error", "error": {"type": kind, "message": "boom"}}
    terminal = replay(sse(START, error), PROVIDER)[-1]
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "stream_error"
    assert terminal.error.retryable is retryable
    assert "boom" in terminal.error.message


def test_an_error_event_keeps_its_request_id_and_wait() -> None:
    """docs.claude.com/en/api/errors: an error body carries `request_id`, mid-stream too."""
    error = {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Please try again in 2s"},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    terminal = replay(sse(START, error), PROVIDER)[-1]
    assert isinstance(terminal, Failed)
    assert (terminal.error.request_id, terminal.error.retry_after) == (
        "req_011CSHoEeqs5C35K2UUqR7Fy",
        2.0,
    )


def test_signature_and_redacted_thinking_events() -> None:
    thinking = {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}}
    sig = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "signature_delta", "signature": "SIG"},
    }
    think = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "hm"},
    }
    redacted = {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "redacted_thinking", "data": "BLOB"},
    }
    body = sse(
        START,
        thinking,
        think,
        sig,
        block_stop(0),
        redacted,
        block_stop(1),
        delta_of("end_turn"),
        STOP,
    )
    reasoning = [e for e in replay(body, PROVIDER) if isinstance(e, ReasoningDelta)]
    assert [(e.text, e.signature, e.redacted) for e in reasoning] == [
        ("hm", None, False),
        ("", "SIG", False),
        ("", "BLOB", True),
    ]


def test_a_record_keeps_each_thinking_block_with_its_signature() -> None:
    """The record groups reasoning as the wire delimited it (a signature closes a
    block), so `to_message()` can send each block back whole."""

    def thinking(index: int, *deltas: dict[str, Any]) -> list[dict[str, Any]]:
        start = {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "thinking"},
        }
        return [
            start,
            *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
            block_stop(index),
        ]

    redacted = {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "redacted_thinking", "data": "BLOB"},
    }
    body = sse(
        START,
        *thinking(
            0,
            {"type": "thinking_delta", "thinking": "a"},
            {"type": "thinking_delta", "thinking": "b"},
            {"type": "signature_delta", "signature": "S1"},
        ),
        redacted,
        block_stop(1),
        *thinking(
            2,
            {"type": "thinking_delta", "thinking": "c"},
            {"type": "signature_delta", "signature": "S2"},
        ),
        *text_block(3, "Hi."),
        delta_of("end_turn"),
        STOP,
    )
    builder = RecordBuilder(PROVIDER, "m")
    for event in replay(body, PROVIDER):
        builder.add(event)
    record = builder.build()
    assert record.reasoning == "abc"
    assert record.reasoning_parts == [
        rxllm.ReasoningPart(text="ab", signature="S1"),
        rxllm.ReasoningPart(signature="BLOB", redacted=True),
        rxllm.ReasoningPart(text="c", signature="S2"),
    ]
    message = record.to_message()
    assert message.role == "assistant" and message.text == "Hi."
    assert message.content[:3] == record.reasoning_parts


def test_build_body_sends_signed_reasoning_in_place_and_leaves_out_unsigned() -> None:
    """anthropic-sdk-python ThinkingBlockParam {thinking, signature} and
    RedactedThinkingBlockParam {data}: with thinking on, an assistant turn sent back
    must have them as they came (`Message.assistant` puts them first, as a turn
    starts); a thinking block cannot be sent without its signature."""
    assistant = rxllm.Message.assistant(
        "Checking.",
        tool_calls=[rxllm.ToolCall(id="toolu_1", name="f")],
        reasoning=[
            rxllm.ReasoningPart(text="plain reasoning, never signed"),
            rxllm.ReasoningPart(text="think", signature="SIG"),
            rxllm.ReasoningPart(signature="BLOB", redacted=True),
        ],
    )
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("go"), assistant, rxllm.Message.tool("toolu_1", "ok")],
    )
    body = Anthropic().build_body(request)
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "think", "signature": "SIG"},
        {"type": "redacted_thinking", "data": "BLOB"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
    ]


def test_not_json_is_a_protocol_error() -> None:
    terminal = replay(b"event: message_start\ndata: {nope\n\n", PROVIDER)[-1]
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "protocol"


# -- the request ----------------------------------------------------------------------

PNG = "data:image/png;base64,iVBORw0KGgo="


def test_url_and_headers() -> None:
    wire = Anthropic()
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    assert (
        wire.url("https://api.anthropic.com/v1/", request)
        == "https://api.anthropic.com/v1/messages"
    )
    headers = wire.headers("sk-test")
    assert headers["x-api-key"] == "sk-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "text/event-stream"
    assert "Authorization" not in headers
    assert "max_tokens" in wire.mandatory_body_keys
    assert (wire.name, wire.default_base_url, wire.api_key_env) == (
        "anthropic",
        "https://api.anthropic.com/v1",
        "ANTHROPIC_API_KEY",
    )


def test_build_body_full_conversation() -> None:
    Message, ToolCall = rxllm.Message, rxllm.ToolCall
    request = rxllm.ChatRequest(
        model="claude-sonnet-4-5",
        messages=[
            Message.system("Be brief."),
            Message.user("Weather here?", images=[PNG, "https://example.com/a.jpg"]),
            Message.assistant(
                "Checking.",
                tool_calls=[
                    ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
                    ToolCall(id="toolu_2", name="get_time", arguments={}),
                ],
            ),
            Message.tool("toolu_1", "18C"),
            Message.tool("toolu_2", "noon"),
            Message.user("Thanks"),
        ],
        tools=[
            rxllm.Tool(
                name="get_weather",
                description="Weather of a city",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            )
        ],
        params={"temperature": 0.2},
    )
    body = Anthropic().build_body(request)
    assert body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": DEFAULT_MAX_TOKENS,
        "system": "Be brief.",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather here?"},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    },
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/a.jpg"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "noon"},
                ],
            },
            {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
        ],
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather of a city",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
        "temperature": 0.2,
        "stream": True,
    }
    json.dumps(body)  # the body is plain JSON


def test_build_body_params_override_max_tokens_and_keep_stream() -> None:
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("hi")],
        params={"max_tokens": 64000, "thinking": {"type": "enabled", "budget_tokens": 2048}},
    )
    body = Anthropic().build_body(request)
    assert body["max_tokens"] == 64000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["stream"] is True
    assert "system" not in body and "tools" not in body


def test_build_body_several_system_messages_and_tool_results_not_merged_across_turns() -> None:
    Message = rxllm.Message
    request = rxllm.ChatRequest(
        model="m",
        messages=[
            Message.system("One."),
            Message.system("Two."),
            Message.user("go"),
            Message.assistant(tool_calls=[rxllm.ToolCall(id="a", name="f")]),
            Message.tool("a", "1"),
            Message.assistant(tool_calls=[rxllm.ToolCall(id="b", name="f")]),
            Message.tool("b", "2"),
        ],
    )
    body = Anthropic().build_body(request)
    assert body["system"] == [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "a", "name": "f", "input": {}}
    ]
    assert body["messages"][4]["content"] == [
        {"type": "tool_result", "tool_use_id": "b", "content": "2"}
    ]


def test_build_body_leaves_out_whitespace_only_text() -> None:
    # API: "messages: text content blocks must contain non-whitespace text" (400).
    Message = rxllm.Message
    request = rxllm.ChatRequest(
        model="m",
        messages=[
            Message.system("Be brief."),
            Message.system(" \n"),
            Message.user("go"),
            Message.assistant("\n\n", tool_calls=[rxllm.ToolCall(id="toolu_1", name="f")]),
            Message.tool("toolu_1", "done"),
            Message.user("  "),
            Message.user(" and now? "),
        ],
    )
    body = Anthropic().build_body(request)
    assert body["system"] == "Be brief."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}],
        },
        {"role": "user", "content": [{"type": "text", "text": " and now? "}]},
    ]


def test_build_body_call_ids_match_the_pattern_and_stay_unique() -> None:
    # API: "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'" and
    # "`tool_use` ids must be unique" (400), for ids other providers made.
    Message, ToolCall = rxllm.Message, rxllm.ToolCall
    request = rxllm.ChatRequest(
        model="m",
        messages=[
            Message.user("go"),
            Message.assistant(
                tool_calls=[
                    ToolCall(id="functions.search:0", name="search", arguments={"q": "a"}),
                    ToolCall(id="now_0", name="now"),
                ]
            ),
            Message.tool("functions.search:0", "a!"),
            Message.tool("now_0", "noon"),
            Message.assistant(tool_calls=[ToolCall(id="now_0", name="now")]),
            Message.tool("now_0", "one"),
        ],
    )
    messages = Anthropic().build_body(request)["messages"]
    assert [block["id"] for block in messages[1]["content"]] == ["functions_search_0", "now_0"]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "functions_search_0", "content": "a!"},
        {"type": "tool_result", "tool_use_id": "now_0", "content": "noon"},
    ]
    assert messages[3]["content"] == [
        {"type": "tool_use", "id": "now_0_2", "name": "now", "input": {}}
    ]
    assert messages[4]["content"] == [
        {"type": "tool_result", "tool_use_id": "now_0_2", "content": "one"}
    ]


def test_build_body_tool_schema_without_type_is_an_object() -> None:
    # API: "tools.N.custom.input_schema.type: Field required" (ToolParam.input_schema).
    properties = {"q": {"type": "string"}}
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("hi")],
        tools=[
            rxllm.Tool(name="bare", parameters={}),
            rxllm.Tool(name="search", parameters={"properties": properties}),
        ],
    )
    tools = Anthropic().build_body(request)["tools"]
    assert [tool["input_schema"] for tool in tools] == [
        {"type": "object"},
        {"type": "object", "properties": properties},
    ]


# -- over real HTTP, against the local server ---------------------------------------


def anthropic(server: LocalServer) -> rxllm.Provider:
    return rxllm.provider(PROVIDER, api_key="test", base_url=server.url)


async def collect(provider: rxllm.Provider, request: rxllm.ChatRequest) -> list[Event]:
    return [event async for event in provider.astream(request)]


def ask(model: str, text: str = "hi", tools: bool = False) -> rxllm.ChatRequest:
    weather = rxllm.Tool(
        name="get_weather",
        description="Weather of a city",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    return rxllm.ChatRequest(
        model=model, messages=[rxllm.Message.user(text)], tools=[weather] if tools else []
    )


def script_text(kind: type[Say] | type[Reasoning]) -> str:
    return "".join(s.text for s in ANSWER.steps if isinstance(s, kind))


async def test_http_text_turn_with_reasoning(local_server: LocalServer) -> None:
    events = await collect(anthropic(local_server), ask("claude-local"))
    got = summarize(events)
    assert got.text == script_text(Say)
    assert got.reasoning == script_text(Reasoning)
    assert len(got.signatures) == 1
    assert (got.terminal, got.stop_reason, got.raw_stop_reason) == ("done", "stop", "end_turn")
    assert got.model == "claude-local"
    assert got.usage is not None
    assert got.usage.input_tokens == ANSWER.input_tokens
    assert got.usage.output_tokens == ANSWER.output_tokens
    assert len([e for e in events if isinstance(e, TextDelta)]) > 10  # streamed word by word
    sent = local_server.requests[-1]
    assert sent["stream"] is True and sent["max_tokens"] == DEFAULT_MAX_TOKENS


async def test_http_tool_call_with_fragmented_arguments(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(
        ask("claude-local", "What's the weather in Paris?", tools=True)
    )
    assert isinstance(record.terminal, Done)
    assert record.terminal.stop_reason == "tool_use"
    assert record.text == "Let me check the weather."
    call = WEATHER_CALL.steps[-1]
    assert [(c.call_id, c.name, c.arguments) for c in record.tool_calls] == [
        ("call_local_weather_1", "get_weather", {"city": "Paris", "unit": "celsius", "days": 3})
    ]
    assert record.tool_calls[0].index == 2  # its content block's place in the message
    assert isinstance(call, ToolUse)
    assert len(call.arguments) > 3 * WEATHER_CALL.fragment  # sent in several fragments
    assert local_server.requests[-1]["tools"][0]["input_schema"]["type"] == "object"


async def test_http_tool_loop_sends_the_signed_thinking_back(local_server: LocalServer) -> None:
    """An agent loop with thinking: the next turn carries the assistant's turn back as
    `record.to_message()` made it, its signed thinking block first (the API refuses
    tool calls sent back without it when thinking is on)."""
    p = anthropic(local_server)
    first = ask("claude-local", "What's the weather in Paris?", tools=True)
    record = await p.complete(first)
    (part,) = record.reasoning_parts
    assert part.text == "".join(s.text for s in WEATHER_CALL.steps if isinstance(s, Reasoning))
    assert part.signature and not part.redacted
    (call,) = record.tool_calls
    history = [
        *first.messages,
        record.to_message(),
        rxllm.Message.tool(call.call_id, '{"temperature": 21}'),
    ]
    await p.complete(rxllm.ChatRequest(model="claude-local", messages=history, tools=first.tools))
    sent = local_server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [
        {"type": "thinking", "thinking": part.text, "signature": part.signature},
        {"type": "text", "text": "Let me check the weather."},
        {"type": "tool_use", "id": call.call_id, "name": "get_weather", "input": call.arguments},
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": call.call_id, "content": '{"temperature": 21}'}
    ]


async def test_http_parallel_tool_calls(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(ask("fault/parallel_tools"))
    assert [(c.call_id, c.arguments) for c in record.tool_calls] == [
        ("call_local_1", {"city": "Paris"}),
        ("call_local_2", {"timezone": "Europe/Paris"}),
    ]


async def test_http_error_event(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(ask("fault/error_event"))
    terminal = record.terminal
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "stream_error"
    assert terminal.error.retryable is True
    assert "overloaded" in terminal.error.message
    assert record.text == script_text(Say)  # what streamed before the error stays


async def test_http_truncated_stream(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(ask("fault/truncated"))
    terminal = record.terminal
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "truncated"
    assert record.text == script_text(Say)


async def test_http_malformed_tool_arguments(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(ask("fault/malformed_tool"))
    terminal = record.terminal
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "malformed_tool_arguments"
    assert "call_bad" in terminal.error.message and "get_weather" in terminal.error.message
    assert record.tool_calls == []


async def test_http_tool_cut_by_max_tokens(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(ask("fault/length_cut_tool"))
    terminal = record.terminal
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "malformed_tool_arguments"
    assert record.tool_calls == []


async def test_http_late_text_after_message_stop_is_ignored(local_server: LocalServer) -> None:
    record = await anthropic(local_server).complete(ask("fault/late_event"))
    assert isinstance(record.terminal, Done)
    assert record.text == script_text(Say)


# -- content that arrives whole, server tools, citations (bodies made by hand) ----------
# Shapes follow Anthropic's docs (Messages streaming, web search, code execution, MCP
# connector, citations and search results); ids and values are made up.


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def test_message_start_with_whole_content_is_read_like_a_stream() -> None:
    """Made by hand: a resumed programmatic tool-calling turn whose `message_start`
    holds every block, complete, and the stop reason; no `content_block_*` and no
    `message_delta`."""
    web_result = [{"type": "web_search_result", "url": "https://example.com/a", "title": "A"}]
    cite = {
        "type": "web_search_result_location",
        "url": "https://example.com/a",
        "title": "A",
        "cited_text": "a fact",
        "encrypted_index": "Eo8B",
    }
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "SIG"},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "a"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": web_result},
            {"type": "text", "text": "Per A, a fact.", "citations": [cite]},
            {
                "type": "tool_use",
                "id": "toolu_9",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }
    body = sse({"type": "message_start", "message": message}, STOP)
    whole = replay(body, PROVIDER)
    assert [e.type for e in whole] == [
        "reasoning",
        "server_tool_call",
        "server_tool_result",
        "citation",
        "text",
        "tool_start",
        "tool_request",
        "usage",
        "done",
    ]
    for seed in range(3):
        assert replay(rechunk(body, seed, max_size=5), PROVIDER) == whole
    got = summarize(whole)
    assert (got.reasoning, got.signatures, got.text) == ("plan", ["SIG"], "Per A, a fact.")
    assert got.tool_calls == [("toolu_9", "get_weather", {"city": "Paris"})]
    call = next(e for e in whole if isinstance(e, ServerToolCall))
    assert (call.call_id, call.name, call.arguments) == ("srvtoolu_1", "web_search", {"query": "a"})
    result = next(e for e in whole if isinstance(e, ServerToolResult))
    assert (result.call_id, result.name, result.content) == ("srvtoolu_1", "web_search", web_result)
    citation = next(e for e in whole if isinstance(e, Citation))
    assert (citation.url, citation.title, citation.cited_text) == (
        "https://example.com/a",
        "A",
        "a fact",
    )
    assert (got.stop_reason, got.raw_stop_reason, got.model) == (
        "tool_use",
        "tool_use",
        "claude-test",
    )
    assert got.usage is not None and (got.usage.input_tokens, got.usage.output_tokens) == (5, 7)


def test_whole_message_start_then_a_message_delta_and_no_message_stop() -> None:
    """Made by hand: the stop reason of a whole `message_start` is held for
    `message_stop` like `message_delta`'s; without it the turn is truncated."""
    message = {"model": "m", "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}
    start = {"type": "message_start", "message": message}
    assert [e.type for e in replay(sse(start), PROVIDER)] == ["text", "error"]
    events = replay(sse(start, delta_of("max_tokens", output_tokens=3), STOP), PROVIDER)
    terminal = events[-1]
    assert isinstance(terminal, Done)
    assert (terminal.stop_reason, terminal.raw_stop_reason) == ("length", "max_tokens")
    assert summarize(events).text == "hi"


def test_code_execution_server_tools() -> None:
    """Made by hand from the code execution tool docs: `bash_code_execution` and
    `text_editor_code_execution` calls (input streamed) with their results, and a
    legacy `code_execution` call whose input is whole in its start block."""
    bash_result = {
        "type": "bash_code_execution_result",
        "stdout": "4\n",
        "stderr": "",
        "return_code": 0,
        "content": [],
    }
    editor_result = {"type": "text_editor_code_execution_result", "is_file_update": False}
    legacy_result = {
        "type": "code_execution_result",
        "stdout": "2\n",
        "stderr": "",
        "return_code": 0,
        "content": [],
    }
    body = sse(
        START,
        block_start(
            0,
            {
                "type": "server_tool_use",
                "id": "srvtoolu_b",
                "name": "bash_code_execution",
                "input": {},
            },
        ),
        args(0, ""),
        args(0, '{"command": "ec'),
        args(0, 'ho $((2+2))"}'),
        block_stop(0),
        block_start(
            1,
            {
                "type": "bash_code_execution_tool_result",
                "tool_use_id": "srvtoolu_b",
                "content": bash_result,
            },
        ),
        block_stop(1),
        block_start(
            2,
            {
                "type": "server_tool_use",
                "id": "srvtoolu_e",
                "name": "text_editor_code_execution",
                "input": {},
            },
        ),
        args(2, '{"command": "create", "path": "a.py", "file_text": "x = 1\\n"}'),
        block_stop(2),
        block_start(
            3,
            {
                "type": "text_editor_code_execution_tool_result",
                "tool_use_id": "srvtoolu_e",
                "content": editor_result,
            },
        ),
        block_stop(3),
        block_start(
            4,
            {
                "type": "server_tool_use",
                "id": "srvtoolu_c",
                "name": "code_execution",
                "input": {"code": "print(1 + 1)"},
            },
        ),
        block_stop(4),
        block_start(
            5,
            {
                "type": "code_execution_tool_result",
                "tool_use_id": "srvtoolu_c",
                "content": legacy_result,
            },
        ),
        block_stop(5),
        *text_block(6, "4 and 2."),
        delta_of("end_turn", output_tokens=20),
        STOP,
    )
    events = replay(body, PROVIDER)
    assert not [e for e in events if isinstance(e, ToolStart | ToolRequest)]
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [
        ("srvtoolu_b", "bash_code_execution", {"command": "echo $((2+2))"}),
        (
            "srvtoolu_e",
            "text_editor_code_execution",
            {"command": "create", "path": "a.py", "file_text": "x = 1\n"},
        ),
        ("srvtoolu_c", "code_execution", {"code": "print(1 + 1)"}),
    ]
    results = [(e.call_id, e.name, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [
        ("srvtoolu_b", "bash_code_execution", bash_result),
        ("srvtoolu_e", "text_editor_code_execution", editor_result),
        ("srvtoolu_c", "code_execution", legacy_result),
    ]
    got = summarize(events)
    assert (got.text, got.terminal, got.stop_reason) == ("4 and 2.", "done", "stop")


def test_mcp_tool_use_and_result() -> None:
    """Made by hand from the MCP connector docs: `mcp_tool_use` (input whole, with
    `server_name`) and `mcp_tool_result`; plus a `tool_search_tool_result` whose call
    was never seen, named after its block type."""
    mcp_content = [{"type": "text", "text": "Hello"}]
    search_content = {"type": "tool_search_tool_search_result", "tool_references": []}
    body = sse(
        START,
        block_start(
            0,
            {
                "type": "mcp_tool_use",
                "id": "mcptoolu_1",
                "name": "echo",
                "server_name": "example-mcp",
                "input": {"param1": "value1"},
            },
        ),
        block_stop(0),
        block_start(
            1,
            {
                "type": "mcp_tool_result",
                "tool_use_id": "mcptoolu_1",
                "is_error": False,
                "content": mcp_content,
            },
        ),
        block_stop(1),
        block_start(
            2,
            {
                "type": "tool_search_tool_result",
                "tool_use_id": "srvtoolu_x",
                "content": search_content,
            },
        ),
        block_stop(2),
        delta_of("end_turn"),
        STOP,
    )
    events = replay(body, PROVIDER)
    assert [e.type for e in events] == [
        "server_tool_call",
        "server_tool_result",
        "server_tool_result",
        "usage",
        "done",
    ]
    call = events[0]
    assert isinstance(call, ServerToolCall)
    assert (call.call_id, call.name, call.arguments) == ("mcptoolu_1", "echo", {"param1": "value1"})
    results = [(e.call_id, e.name, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [
        ("mcptoolu_1", "echo", mcp_content),
        ("srvtoolu_x", "tool_search", search_content),
    ]


def test_server_call_with_bad_or_cut_input_is_skipped() -> None:
    """Made by hand: server arguments are never invented. Fragments that are not a
    JSON object, or a block cut at `message_delta`, give no server_tool_call."""
    body = sse(
        START,
        block_start(
            0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        ),
        args(0, '{"query": "a'),
        block_stop(0),
        block_start(
            1, {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {}}
        ),
        args(1, '{"query": "b"}'),
        delta_of("max_tokens"),
        STOP,
    )
    events = replay(body, PROVIDER)
    assert [e.type for e in events] == ["usage", "done"]


def citation_delta(index: int, citation: dict[str, Any]) -> dict[str, Any]:
    delta = {"type": "citations_delta", "citation": citation}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def test_document_citations_are_skipped_search_results_use_their_source() -> None:
    """Made by hand from the citations and search results docs: document locations
    (`char_location`, `page_location`, `content_block_location`) carry no url and are
    skipped; a `search_result_location`'s `source` is the url."""
    char = {
        "type": "char_location",
        "cited_text": "The grass is green.",
        "document_index": 0,
        "document_title": "Example Document",
        "start_char_index": 0,
        "end_char_index": 20,
    }
    page = {
        "type": "page_location",
        "cited_text": "p",
        "document_index": 1,
        "document_title": "Report",
        "start_page_number": 1,
        "end_page_number": 2,
    }
    block = {
        "type": "content_block_location",
        "cited_text": "c",
        "document_index": 2,
        "document_title": None,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    search = {
        "type": "search_result_location",
        "source": "https://docs.example.com/guide",
        "title": "Guide",
        "cited_text": "Step one.",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 0,
    }
    body = sse(
        START,
        block_start(0, {"type": "text", "text": "", "citations": []}),
        citation_delta(0, char),
        citation_delta(0, page),
        citation_delta(0, block),
        citation_delta(0, search),
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Green; step one."},
        },
        block_stop(0),
        delta_of("end_turn"),
        STOP,
    )
    events = replay(body, PROVIDER)
    cites = [(e.url, e.title, e.cited_text) for e in events if isinstance(e, Citation)]
    assert cites == [("https://docs.example.com/guide", "Guide", "Step one.")]
    assert summarize(events).text == "Green; step one."


def test_pause_turn_after_a_server_tool_is_pause() -> None:
    """Made by hand from the server tools docs: a long server-tool turn paused
    (`pause_turn`) ends with `done(pause)` after its server call, so the caller sends
    the turn back to continue."""
    body = sse(
        START,
        *text_block(0, "Searching."),
        block_start(
            1, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        ),
        args(1, '{"query": "q"}'),
        block_stop(1),
        delta_of("pause_turn", output_tokens=12),
        STOP,
    )
    events = replay(body, PROVIDER)
    assert [e.type for e in events] == ["text", "server_tool_call", "usage", "done"]
    terminal = events[-1]
    assert isinstance(terminal, Done)
    assert (terminal.stop_reason, terminal.raw_stop_reason) == ("pause", "pause_turn")


def test_thinking_tokens_are_the_reasoning_share_of_output() -> None:
    """Made by hand from the Claude Platform release notes and the Messages API usage
    reference: `usage.output_tokens_details.thinking_tokens` on the final
    `message_delta` is the thinking share of `output_tokens`, never added to it."""
    thinking = block_start(0, {"type": "thinking", "thinking": "", "signature": ""})
    think = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "27 * 453 = 12231"},
    }
    final = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 200, "output_tokens_details": {"thinking_tokens": 150}},
    }
    events = replay(
        sse(START, thinking, think, block_stop(0), *text_block(1, "12,231"), final, STOP), PROVIDER
    )
    usage = summarize(events).usage
    assert usage is not None
    assert (usage.output_tokens, usage.reasoning_tokens) == (200, 150)
    assert usage.total_tokens == 10 + 200 + 100 + 7


def test_refusal_stop_details_explanation_is_a_refusal_event() -> None:
    """Made by hand from the Messages API reference (`message_delta`'s
    `delta.stop_details`, a RefusalStopDetails): the explanation is a `refusal`, kept
    apart from the text streamed before the classifier stopped the turn."""
    explanation = "This request was declined under the cyber policy."
    final = {
        "type": "message_delta",
        "delta": {
            "stop_reason": "refusal",
            "stop_sequence": None,
            "stop_details": {"type": "refusal", "category": "cyber", "explanation": explanation},
        },
        "usage": {"output_tokens": 3},
    }
    events = replay(sse(START, *text_block(0, "Hello.."), final, STOP), PROVIDER)
    assert [e.type for e in events] == ["text", "refusal", "usage", "done"]
    got = summarize(events)
    assert (got.text, got.refusal) == ("Hello..", explanation)
    assert (got.stop_reason, got.raw_stop_reason) == ("content_filter", "refusal")


@pytest.mark.parametrize(
    "delta",
    [
        {"type": "text_delta", "text": 5},
        {"type": "input_json_delta", "partial_json": 5},
        {"type": "thinking_delta", "thinking": ["x"]},
        {"type": "signature_delta", "signature": 5},
    ],
)
def test_a_delta_whose_text_is_not_a_string_is_a_protocol_error(delta: dict[str, Any]) -> None:
    """Made by hand from the streaming docs' delta shapes, with a non-string value: a
    clear `protocol` error, never a typed event holding a number nor an `on_error`."""
    body = sse(
        START,
        tool_block(0, input={}),
        {"type": "content_block_delta", "index": 0, "delta": delta},
        block_stop(0),
        delta_of("tool_use"),
        STOP,
    )
    events = replay(body, PROVIDER)
    assert [e.type for e in events] == ["tool_start", "error"]
    terminal = events[-1]
    assert isinstance(terminal, Failed)
    assert terminal.error.kind == "protocol"


def test_the_code_execution_container_is_the_dones() -> None:
    """anthropic-sdk-python RawMessageDeltaEvent.delta.container (id, expires_at): its
    id is the `Done`'s, for the next request to name (before, it was only logged)."""
    end = delta_of("end_turn", output_tokens=3)
    end["delta"]["container"] = {"id": "container_011", "expires_at": "2026-12-01T06:00:00Z"}
    events = replay(sse(START, *text_block(0, "4"), end, STOP), PROVIDER)
    assert summarize(events).text == "4"
    assert isinstance(events[-1], Done) and events[-1].container == "container_011"
