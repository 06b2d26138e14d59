"""The UI message stream encoder: a test per row of the mapping (issue 12), per bad
input, and over real streams: the local provider over loopback in every wire, and
the real captures replayed. Node with the real `ai` client checks the same frames in
test_ui_message_stream_node.py."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, get_args

import aiohttp
import pytest
import reactivex
from aiohttp import web
from loguru import logger
from reactivex.subject import Subject

import rxllm
from rxllm.events import (
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
    ErrorKind,
    Event,
    Failed,
    ReasoningDelta,
    Refusal,
    Retry,
    ServerToolCall,
    ServerToolResult,
    TextDelta,
    ToolRequest,
    ToolStart,
    Usage,
    UsageUpdate,
)
from rxllm.local import WIRES, LocalServer
from rxllm.local.script import SEARCH
from rxllm.operators import cancel_on
from rxllm.serving import UI_MESSAGE_STREAM_HEADERS, generic_error_text, ui_message_stream
from rxllm.serving.ui_message_stream import UIMessageEncoder, encode_frame
from tests.hypothesis_support import BODIES, wire_of
from tests.serving.support import Stream, check_rules, encode, read_sse
from tests.support import NO_CAPTURES, REJECTIONS, Serve, capture, needs_captures

P = "openai"


def text(t: str) -> TextDelta:
    return TextDelta(provider=P, text=t)


def done(stop: Any = "stop", raw: str | None = None) -> Done:
    return Done(provider=P, stop_reason=stop, raw_stop_reason=raw)


def request(story: str, **fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=f"fault/{story}",
        messages=[rxllm.Message.user("What's the weather in Paris? Tell me about rxllm.")],
        tools=[rxllm.Tool(name="get_time"), rxllm.Tool(name="get_weather")],
        **fields,
    )


async def over_http(server: LocalServer, wire: str, story: str, **options: Any) -> Stream:
    stream = await encode(server.provider(wire).stream(request(story)), **options)
    check_rules(stream)
    return stream


# --- headers and frames -------------------------------------------------------------


def test_headers() -> None:
    assert dict(UI_MESSAGE_STREAM_HEADERS) == {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-accel-buffering": "no",
    }


async def test_served_over_http(local_server: LocalServer, serve: Serve) -> None:
    """A real aiohttp response with the headers, read by a real client."""

    async def handler(incoming: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers=UI_MESSAGE_STREAM_HEADERS)
        await response.prepare(incoming)
        turn = local_server.provider("anthropic").stream(request("web_search"))
        async for frame in ui_message_stream(turn, message_id="msg_http"):
            await response.write(frame)
        return response

    url = await serve(handler)
    async with aiohttp.ClientSession() as session, session.post(url + "/api/chat") as got:
        assert got.status == 200
        for key, value in UI_MESSAGE_STREAM_HEADERS.items():
            assert got.headers[key] == value
        stream = read_sse(await got.read())
    check_rules(stream)
    assert stream.parts[0] == {"type": "start", "messageId": "msg_http"}
    assert stream.text() == "rxllm makes LLM streams boring to consume."


async def test_frames_are_compact_json_lines_ending_in_done() -> None:
    stream = await encode([text("héllo"), done()])
    assert stream.raw.startswith(b'data: {"type":"start"}\n\ndata: {"type":"start-step"}\n\n')
    assert b'data: {"type":"text-delta","id":"t1","delta":"h\xc3\xa9llo"}\n\n' in stream.raw
    assert stream.raw.endswith(b"data: [DONE]\n\n")
    check_rules(stream)


# --- one test per row -----------------------------------------------------------------


async def test_first_event_starts_the_message_and_its_step() -> None:
    stream = await encode([text("hi"), done()], message_id="msg_1")
    assert stream.parts[:2] == [{"type": "start", "messageId": "msg_1"}, {"type": "start-step"}]
    without = await encode([done()])
    assert without.parts[0] == {"type": "start"}  # the client keeps its own id


async def test_text_is_one_block_per_run(local_server: LocalServer) -> None:
    stream = await over_http(local_server, "openai", "answer")
    starts = stream.of("text-start")
    assert starts == [{"type": "text-start", "id": "t1"}]
    assert stream.text("t1").startswith("Hello from rxllm's local provider!")
    assert len(stream.of("text-delta")) > 5  # word by word, as it streamed
    # the reasoning before it is its own block, ended before the text starts
    types = stream.types
    assert types.index("reasoning-end") < types.index("text-start")


@pytest.mark.parametrize("wire", WIRES)
async def test_reasoning_block(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "answer")
    (start,) = stream.of("reasoning-start")
    assert start == {"type": "reasoning-start", "id": "r1"}
    reasoning = "".join(p["delta"] for p in stream.of("reasoning-delta"))
    assert reasoning == "The user wants a short greeting about streams. Keep it brief."
    assert stream.of("reasoning-end")[0]["id"] == "r1"


@needs_captures
async def test_reasoning_signature_rides_on_the_block_end() -> None:
    stream = await encode(rxllm.replay(capture("anthropic/thinking_signature.sse"), "anthropic"))
    check_rules(stream)
    (end,) = stream.of("reasoning-end")
    signature = end["providerMetadata"]["rxllm"]["signature"]
    assert len(signature) > 100 and "redacted" not in end["providerMetadata"]["rxllm"]


@needs_captures
async def test_redacted_reasoning_has_no_delta() -> None:
    stream = await encode(rxllm.replay(capture("anthropic/redacted_thinking.sse"), "anthropic"))
    check_rules(stream)
    assert stream.of("reasoning-delta") == []
    starts, ends = stream.of("reasoning-start"), stream.of("reasoning-end")
    assert [p["id"] for p in starts] == ["r1", "r2"]  # each redacted block its own
    for start, end in zip(starts, ends, strict=True):
        assert start["providerMetadata"] == {"rxllm": {"redacted": True}}
        assert end["providerMetadata"]["rxllm"]["redacted"] is True
        assert end["providerMetadata"]["rxllm"]["signature"]


@needs_captures
@pytest.mark.parametrize(
    "name", ["vertex_text_flex", "code_execution", "function_call_thought_signature"]
)
async def test_a_gemini_part_s_signature_is_no_reasoning_part(name: str) -> None:
    """Gemini signs a text part or a call, and rxllm reads the signature as reasoning
    without text (it closes the thoughts before it, when there are some): with none
    open it is no reasoning of its own. A text part's goes on the text block, in its
    end's providerMetadata, where the `ai` client keeps it on the text part; a call's
    is on the call already."""
    events: list[Event] = []
    rxllm.replay(capture(f"gemini/{name}.sse"), "google").subscribe(events.append)
    stream = await encode(reactivex.from_iterable(events))
    check_rules(stream)
    assert stream.of("reasoning-start") == [], stream.types
    signed = [e for e in events if isinstance(e, ReasoningDelta) and e.signature]
    texts = [e for e in signed if e.details is not None and e.details.keys() <= {"thought"}]
    ends = [p for p in stream.of("text-end") if "providerMetadata" in p]
    assert [p["providerMetadata"] for p in ends] == [
        {"rxllm": {"signature": e.signature, "details": e.details}} for e in texts
    ]
    calls = stream.of("tool-input-available")
    if name == "function_call_thought_signature":
        assert calls[0]["providerMetadata"]["rxllm"]["signature"] == signed[0].signature


def test_a_signature_after_thoughts_still_closes_them() -> None:
    """Gemini signs the thoughts on the first part after them: the signature ends the
    reasoning block it follows, which keeps it; the text after has none."""
    sign = ReasoningDelta(provider="google", text="", signature="S", details={})
    encoder = UIMessageEncoder()
    parts = [
        p
        for event in (ReasoningDelta(provider="google", text="Hm."), sign, text("A"), done())
        for p in encoder.parts(event)
    ]
    (end,) = [p for p in parts if p["type"] == "reasoning-end"]
    assert end["providerMetadata"] == {"rxllm": {"signature": "S", "details": {}}}
    assert [p for p in parts if p["type"] == "text-end"] == [{"type": "text-end", "id": "t1"}]


def test_anthropic_s_fallback_block_keeps_its_place() -> None:
    """Anthropic's `fallback` block, kept as reasoning without text whose details are the
    block, is a block of its own, not a part's signature: between two runs of thinking
    it marks where one ends (the API refuses the turn sent back without it), and the
    message's parts are the only place that keeps its order."""
    fallback = {"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}}
    events = [
        ReasoningDelta(provider="anthropic", text="One."),
        ReasoningDelta(provider="anthropic", text="", signature="S1"),
        ReasoningDelta(provider="anthropic", text="", details=fallback),
        ReasoningDelta(provider="anthropic", text="Two."),
        Done(provider="anthropic", stop_reason="stop"),
    ]
    encoder = UIMessageEncoder()
    ends = [p for e in events for p in encoder.parts(e) if p["type"] == "reasoning-end"]
    assert [(p["id"], p.get("providerMetadata")) for p in ends] == [
        ("r1", {"rxllm": {"signature": "S1"}}),
        ("r2", {"rxllm": {"details": fallback}}),
        ("r3", None),
    ]


@pytest.mark.parametrize("wire", ["openai", "openai-responses"])
async def test_refusal_is_its_own_text_block(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "refusal")
    (start,) = stream.of("text-start")
    assert start == {
        "type": "text-start",
        "id": "t1",
        "providerMetadata": {"rxllm": {"refusal": True}},
    }
    assert stream.text("t1") == "I can't help with that request."


async def test_refusal_after_text_opens_a_new_block() -> None:
    refusal = Refusal(provider=P, text="No.")
    stream = await encode([text("Well"), refusal, done()])
    assert [p["id"] for p in stream.of("text-start")] == ["t1", "t2"]
    assert stream.types[stream.types.index("text-end") + 1] == "text-start"
    assert (stream.text("t1"), stream.text("t2")) == ("Well", "No.")
    check_rules(stream)


@pytest.mark.parametrize("wire", WIRES)
async def test_tool_call(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "weather")
    args = {"city": "Paris", "unit": "celsius", "days": 3}
    available = stream.of("tool-input-available")
    assert [(p["toolCallId"], p["toolName"], p["input"]) for p in available] == [
        (available[0]["toolCallId"], "get_weather", args)
    ]
    starts = stream.of("tool-input-start")
    assert [(p["toolCallId"], p["toolName"]) for p in starts] == [
        (available[0]["toolCallId"], "get_weather")
    ]
    assert "providerExecuted" not in starts[0] and "providerExecuted" not in available[0]
    types = stream.types
    assert types.index("text-end") < types.index("tool-input-start")  # the text ended first
    assert stream.of("finish")[0]["finishReason"] == "tool-calls"


@pytest.mark.parametrize("wire", ["openai", "openai-responses", "anthropic"])
async def test_server_tool_call_and_result(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "web_search")
    start, available = stream.of("tool-input-start"), stream.of("tool-input-available")
    (output,) = stream.of("tool-output-available")
    assert [p["providerExecuted"] for p in (*start, *available, output)] == [True] * 3
    call_id = output["toolCallId"]
    assert start[0]["toolCallId"] == available[0]["toolCallId"] == call_id
    assert output["output"]  # the provider's own JSON, as it sent it
    types = stream.types
    assert types.index("tool-input-available") < types.index("tool-output-available")


@pytest.mark.parametrize("wire", WIRES)
async def test_citation_is_a_source_url(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "web_search")
    (source,) = stream.of("source-url")
    assert (source["sourceId"], source["url"], source["title"]) == ("s1", SEARCH.url, SEARCH.output)


async def test_citations_do_not_cut_the_text_block() -> None:
    cite = Citation(provider=P, url="https://example.com", title=None, cited_text="quoted")
    stream = await encode([text("a"), cite, text("b"), cite, done()])
    assert stream.types[2:-2] == [
        "text-start",
        "text-delta",
        "source-url",
        "text-delta",
        "source-url",
        "text-end",
    ]
    sources = stream.of("source-url")
    assert [s["sourceId"] for s in sources] == ["s1", "s2"]
    assert "title" not in sources[0]  # optional in the schema: absent, never null
    assert sources[0]["providerMetadata"] == {"rxllm": {"cited_text": "quoted"}}


async def test_usage_is_message_metadata() -> None:
    usage = Usage.of(input_tokens=3, output_tokens=5, reasoning_tokens=2)
    stream = await encode(
        [text("x"), UsageUpdate(provider="anthropic", attempt=2, usage=usage), done()]
    )
    (meta,) = stream.of("message-metadata")
    assert meta["messageMetadata"] == {
        "rxllm": {"usage": usage.model_dump(), "provider": "anthropic", "attempt": 2}
    }
    assert "text-end" not in stream.types[: stream.types.index("message-metadata")]


async def test_retry_sends_nothing_unless_asked(local_server: LocalServer) -> None:
    def turn() -> reactivex.Observable[Event]:
        return local_server.provider("openai").stream(request("reject_param", temperature=0.2))

    quiet = await encode(turn())
    check_rules(quiet)
    assert not [t for t in quiet.types if t.startswith("data-")]
    told = await encode(turn(), retries=True)
    check_rules(told)
    (retry,) = told.of("data-rxllm-retry")
    assert retry["transient"] is True
    data = retry["data"]
    assert (data["attempt"], data["next_attempt"], data["dropped"]) == (1, 2, ["temperature"])
    assert data["reason"]["kind"] == "rejected" and data["reason"]["status"] == 400
    # the provider's words ("Unsupported parameter: 'temperature' ...") stay on the server
    assert data["reason"]["message"] == "The model provider refused the request."
    assert b"Unsupported" not in told.raw and "raw" not in data["reason"]
    words = await encode(turn(), retries=True, error_text=lambda info: info.message)
    assert "Unsupported parameter" in words.of("data-rxllm-retry")[0]["data"]["reason"]["message"]
    assert told.text() == quiet.text() and told.text()  # the retried turn answered


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_use", "tool-calls"),
        ("content_filter", "content-filter"),
        ("pause", "other"),
        ("other", "other"),
    ],
)
async def test_done_finishes_the_step_and_message(stop: str, reason: str) -> None:
    stream = await encode([text("x"), done(stop, raw=f"raw_{stop}")])
    assert stream.types[-3:] == ["text-end", "finish-step", "finish"]
    finish = stream.parts[-1]
    assert finish["finishReason"] == reason
    assert finish["messageMetadata"]["rxllm"] == {
        "stop_reason": stop,
        "raw_stop_reason": f"raw_{stop}",
    }
    assert stream.frames[-1].data == "[DONE]"


async def test_pause_over_http_keeps_the_raw_reason(local_server: LocalServer) -> None:
    stream = await over_http(local_server, "anthropic", "pause")
    finish = stream.of("finish")[0]
    assert finish["finishReason"] == "other"
    assert finish["messageMetadata"]["rxllm"]["stop_reason"] == "pause"
    assert finish["messageMetadata"]["rxllm"]["raw_stop_reason"] == "pause_turn"


@pytest.mark.parametrize("wire", WIRES)
async def test_error_event(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "error_event")
    assert stream.types[-4:] == ["text-end", "message-metadata", "error", "finish"]
    facts = stream.parts[-3]["messageMetadata"]["rxllm"]["error"]
    assert (facts["kind"], facts["retryable"]) == ("stream_error", True)
    # what failed, and that it may pass: never the provider's words
    assert stream.parts[-2]["errorText"] == (
        "The model provider reported an error; try again."
        if wire == "openai-responses"  # its error event has no status
        else "The model provider is overloaded; try again."
    )
    assert b"try again later" not in stream.raw
    assert stream.parts[-1] == {"type": "finish", "finishReason": "error"}
    assert "finish-step" not in stream.types


@pytest.mark.parametrize("wire", WIRES)
async def test_error_fails_each_pending_tool_call(local_server: LocalServer, wire: str) -> None:
    stream = await over_http(local_server, wire, "malformed_tool")
    (start,) = stream.of("tool-input-start")
    (failed,) = stream.of("tool-input-error")
    (error,) = stream.of("error")
    assert (failed["toolCallId"], failed["toolName"]) == (start["toolCallId"], "get_weather")
    # The input the model wrote, as the SDK's server sends an invalid call's; Gemini's
    # malformed call says no text (a finish reason, MALFORMED_FUNCTION_CALL).
    assert failed["input"] == (None if wire == "google" else '{"city": "Par')
    assert failed["errorText"] == error["errorText"]
    assert stream.types[-4:] == ["tool-input-error", "message-metadata", "error", "finish"]


async def test_an_error_tells_the_ui_whether_it_may_pass() -> None:
    """The `error` chunk takes only its text (a strict schema refuses any other key),
    and `useChat` stops reading at it: the facts a UI needs to offer "try again" go
    before it, in the message's metadata, without the provider's words."""
    info = ErrorInfo(
        kind="http",
        message="Rate limit reached in organization org_SECRET",
        provider=P,
        status=429,
        retryable=True,
        retry_after=2.5,
        raw='{"error": "SECRET"}',
        code="rate_limit_exceeded",
        request_id="req_SECRET",
    )
    stream = await encode([text("a"), Failed(provider=P, error=info)])
    check_rules(stream)
    assert stream.parts[-3:] == [
        {
            "type": "message-metadata",
            "messageMetadata": {
                "rxllm": {
                    "error": {"kind": "http", "status": 429, "retryable": True, "retry_after": 2.5}
                }
            },
        },
        {"type": "error", "errorText": "The model provider is busy; try again."},
        {"type": "finish", "finishReason": "error"},
    ]
    assert b"SECRET" not in stream.raw


async def test_cancelled_aborts_after_keepalives(local_server: LocalServer) -> None:
    """A turn that hangs gets keep-alive comments while idle; the user's cancel then
    ends it with `abort`, and the provider's HTTP response is closed."""
    stop: Subject[None] = Subject()
    turn = local_server.provider("openai").stream(request("hang"))
    frames = ui_message_stream(turn.pipe(cancel_on(stop, reason="user")), keepalive=0.05)
    got = []
    async for chunk in frames:
        got.append(chunk)
        if chunk == b": keep-alive\n\n" and got.count(chunk) == 2:
            stop.on_next(None)
    stream = read_sse(b"".join(got))
    check_rules(stream)
    assert stream.comments == ["keep-alive", "keep-alive"]
    assert stream.parts[-1] == {"type": "abort"}
    assert stream.parts[-2]["messageMetadata"] == {"rxllm": {"cancel_reason": "user"}}
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)


async def test_cancelled_ends_open_blocks_first() -> None:
    stream = await encode([text("a"), Cancelled(provider=P, reason="user")])
    assert stream.types[-3:] == ["text-end", "message-metadata", "abort"]


async def test_cancel_reason_rides_in_metadata_as_strict_clients_refuse_it_on_abort() -> None:
    """`ai` 5.0.x (until 5.0.2xx) and 6.0.0 validate chunks with `z.strictObject`, and
    their `abort` has no `reason`: `{"type":"abort","reason":...}` fails the whole stream
    there. The reason goes to the message's metadata, which every version takes."""
    stream = await encode([text("a"), Cancelled(provider=P, reason="user")])
    check_rules(stream)  # the strict schemas' keys
    assert stream.parts[-2:] == [
        {"type": "message-metadata", "messageMetadata": {"rxllm": {"cancel_reason": "user"}}},
        {"type": "abort"},
    ]


# --- ids --------------------------------------------------------------------------------


async def test_ids_follow_event_order_and_repeat_on_replay() -> None:
    reasoning = ReasoningDelta(provider=P, text="hmm")
    events = [reasoning, text("a"), reasoning, text("b"), Refusal(provider=P, text="no"), done()]
    first, second = await encode(events), await encode(events)
    assert first.raw == second.raw
    starts = [p["id"] for p in first.parts if p["type"].endswith("-start")]
    assert starts == ["r1", "t1", "r2", "t2", "t3"]


async def entries(events: list[Event]) -> AsyncIterator[tuple[str, Event]]:
    for i, event in enumerate(events):
        yield f"1700000000000-{i}", event


async def test_log_entries_carry_their_id_on_their_last_frame() -> None:
    events: list[Event] = [text("a"), text("b"), ReasoningDelta(provider=P, text="r"), done()]
    stream = await encode(entries(events))
    ids = [f.id for f in stream.frames]
    # entry 0: start, start-step, text-start, delta; 1: delta; 2: text-end, r-start, delta;
    # 3: reasoning-end, finish-step, finish, [DONE]
    t = "1700000000000-"
    assert ids == [None] * 3 + [t + "0", t + "1"] + [None] * 2 + [t + "2"] + [None] * 3 + [t + "3"]
    check_rules(stream)


@pytest.mark.parametrize("cut", [0, 1, 2, 3, 4])
async def test_resume_after_an_entry_sends_exactly_the_rest(cut: int) -> None:
    events: list[Event] = [
        ReasoningDelta(provider=P, text="r"),
        text("a"),
        ToolStart(provider=P, call_id="c1", name="f", index=0),
        text("b"),
        done(),
    ]
    whole = await encode(entries(events), message_id="m")
    after = f"1700000000000-{cut}"
    rest = await encode(entries(events), message_id="m", after=after)
    mark = whole.raw.index(b"id: " + after.encode())
    mark = whole.raw.index(b"\n\n", mark) + 2
    assert rest.raw == whole.raw[mark:]  # same ids, same bytes, nothing twice


# --- bad input ------------------------------------------------------------------------


async def test_lone_surrogates_pair_across_deltas() -> None:
    stream = await encode([text("smile \ud83d"), text("\ude00!"), done()])
    assert stream.text() == "smile \U0001f600!"
    assert [p["delta"] for p in stream.of("text-delta")] == ["smile ", "\U0001f600!"]


async def test_unpaired_surrogates_become_replacement_characters() -> None:
    events = [
        text("a\udc00b"),  # a low half alone
        text("c\ud83d"),  # a high half the block never completes
        ToolRequest(provider=P, call_id="c", name="f", index=0, arguments={"k": "x\ud800"}),
        done(),
    ]
    stream = await encode(events)  # read_sse decodes strictly: the bytes are UTF-8
    assert stream.text() == "a\ufffdbc\ufffd"
    assert stream.of("tool-input-available")[0]["input"] == {"k": "x\ufffd"}


async def test_line_breaks_in_what_the_model_says_never_break_the_framing() -> None:
    """SSE splits lines at CR, LF and CRLF (not at U+2028, U+2029 or NEL, which
    JSON.parse takes raw): a model's text holding them, or holding a whole fake frame,
    stays inside its JSON string."""
    tricky = "a\rb\nc\r\nd\u2028e\u2029f\x85g\x00h\n\ndata: [DONE]\n\n: x\nid: 9\n"
    stream = await encode([text(tricky), Citation(provider=P, url="u", title=tricky), done()])
    check_rules(stream)
    assert b"\r" not in stream.raw
    assert all(line.startswith(b"data: {") for line in stream.raw.split(b"\n\n")[:-2])
    assert stream.text() == tricky and stream.of("source-url")[0]["title"] == tricky
    assert [f.data for f in stream.frames].count("[DONE]") == 1


async def test_non_finite_numbers_are_null_as_json_stringify_writes_them() -> None:
    """Python's JSON reads `NaN` and `Infinity` in a provider's body (tool arguments, a
    server tool's result) and writes them back; they are not JSON, a browser's
    JSON.parse refuses the frame, and the client the whole stream. They go as `null`,
    as the SDK's own server (`JSON.stringify`) writes them."""
    nan, inf = float("nan"), float("inf")
    reason = ErrorInfo(kind="rejected", message="no", provider=P)
    events: list[Event] = [
        ToolRequest(provider=P, call_id="c", name="f", index=0, arguments={"x": nan, "y": [inf]}),
        ServerToolCall(provider=P, call_id="s", name="code", arguments={"z": -inf}),
        ServerToolResult(provider=P, call_id="s", name="code", content={"v": (1.5, nan)}),
        UsageUpdate(provider=P, usage=Usage.make(cost_usd=nan)),
        Retry(provider=P, reason=reason, next_attempt=2, next_provider=P, delay=inf),
        done(),
    ]
    stream = await encode(events, retries=True)  # read_sse parses as strictly as JSON.parse
    check_rules(stream)
    assert stream.of("tool-input-available")[0]["input"] == {"x": None, "y": [None]}
    assert stream.of("tool-input-available")[1]["input"] == {"z": None}
    assert stream.of("tool-output-available")[0]["output"] == {"v": [1.5, None]}
    assert stream.of("message-metadata")[0]["messageMetadata"]["rxllm"]["usage"]["cost_usd"] is None
    assert stream.of("data-rxllm-retry")[0]["data"]["delay"] is None


async def test_a_result_without_its_call_gets_the_call() -> None:
    result = ServerToolResult(provider=P, call_id="srv_9", name="web_search", content={"ok": 1})
    stream = await encode([result, done()])
    check_rules(stream)
    assert stream.parts[2:4] == [
        {
            "type": "tool-input-available",
            "toolCallId": "srv_9",
            "toolName": "web_search",
            "input": None,
            "providerExecuted": True,
            "dynamic": True,
        },
        {
            "type": "tool-output-available",
            "toolCallId": "srv_9",
            "output": {"ok": 1},
            "providerExecuted": True,
            "dynamic": True,
        },
    ]


async def test_a_result_after_its_call_is_not_given_another() -> None:
    call = ServerToolCall(provider=P, call_id="s", name="code", arguments={"code": "1"})
    result = ServerToolResult(provider=P, call_id="s", name="code", content=None)
    stream = await encode([call, result, done()])
    assert len(stream.of("tool-input-available")) == 1
    assert stream.of("tool-output-available")[0]["output"] is None


def _result_for_a_call_of_the_app(*, complete: bool) -> list[Event]:
    """A provider's result for a call the client holds as the app's own (Responses'
    `shell_call` is a `tool_request`: the client runs it), its input complete or not."""
    start = ToolStart(provider=P, call_id="c1", name="shell_call", index=0)
    request = ToolRequest(provider=P, call_id="c1", name="shell_call", index=0, arguments={})
    result = ServerToolResult(provider=P, call_id="c1", name="shell_call", content={"out": "x"})
    return [start, request, result] if complete else [start, result]


@pytest.mark.parametrize("complete", [True, False], ids=["input complete", "input pending"])
async def test_a_result_for_a_call_of_the_app_goes_to_its_static_part(complete: bool) -> None:
    """`ai` 5.x looks a `dynamic` output up among the dynamic parts only, and the call
    is a static one there: "tool-output-error must be preceded by a
    tool-input-available" ended the message."""
    events = _result_for_a_call_of_the_app(complete=complete)
    stream = await encode([*events, done()])
    check_rules(stream)
    assert stream.of("tool-output-available") == [
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"out": "x"}}
    ]
    assert all("dynamic" not in p for p in stream.parts)
    # with its output, a call whose input never completed is no longer failed by an error
    failed = Failed(provider=P, error=ErrorInfo(kind="stalled", message="m", provider=P))
    assert not (await encode([*events, failed])).of("tool-input-error")


def test_an_event_after_the_terminal_is_dropped_and_logged() -> None:
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="WARNING")
    logger.enable("rxllm")
    try:
        encoder = UIMessageEncoder()
        encoder.parts(done())
        late = encoder.frames(text("late"))
    finally:
        logger.disable("rxllm")
        logger.remove(sink)
    assert late == b""
    assert len(messages) == 1 and "after the terminal event is dropped" in messages[0]


async def test_late_events_in_the_same_batch_are_dropped_too() -> None:
    stream = await encode([text("a"), done(), text("late"), done()])
    assert stream.text() == "a" and len(stream.of("finish")) == 1


async def test_error_text_comes_from_a_hook_and_raw_is_never_sent() -> None:
    info = ErrorInfo(
        kind="http", message="Bad gateway (upstream)", provider=P, status=502, raw="SECRET-BODY"
    )
    failed = Failed(provider=P, error=info)
    default = await encode([text("a"), failed])
    assert default.of("error") == [
        {"type": "error", "errorText": "The model provider had an error."}
    ]
    words = await encode([failed], error_text=lambda e: e.message)
    assert words.of("error")[0]["errorText"] == "Bad gateway (upstream)"
    hidden = await encode([failed], error_text=lambda e: f"Try again ({e.kind})")
    assert hidden.of("error")[0]["errorText"] == "Try again (http)"
    for stream in (default, words, hidden):
        assert b"SECRET-BODY" not in stream.raw
        check_rules(stream)


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        (
            {"kind": "http", "status": 429, "retryable": True},
            "The model provider is busy; try again.",
        ),
        ({"kind": "http", "status": 429}, "A usage limit was reached."),
        ({"kind": "rejected", "status": 400}, "The model provider refused the request."),
        (
            {"kind": "rejected", "status": 400, "code": "context_length_exceeded"},
            "The conversation is too long for the model.",
        ),
        ({"kind": "http", "status": 401}, "The model provider refused the server's access."),
        (
            {"kind": "http", "status": 404},
            "The model provider does not know the model or its endpoint.",
        ),
        ({"kind": "http", "status": 413}, "The request is too large for the model provider."),
        (
            {"kind": "http", "status": 500, "retryable": True},
            "The model provider had an error; try again.",
        ),
        ({"kind": "http", "status": 302}, "The model provider's answer could not be read."),
        (
            {"kind": "stream_error", "status": 529, "retryable": True},
            "The model provider is overloaded; try again.",
        ),
        ({"kind": "stream_error"}, "The model provider reported an error."),
        (
            {"kind": "stalled", "retryable": True},
            "The model provider stopped responding; try again.",
        ),
        (
            {"kind": "malformed_tool_arguments"},
            "The model wrote a tool call that could not be read.",
        ),
    ],
)
def test_the_default_error_text_says_what_failed(fields: dict[str, Any], said: str) -> None:
    assert generic_error_text(ErrorInfo(provider=P, message="SECRET", **fields)) == said


@pytest.mark.parametrize("kind", get_args(ErrorKind))
def test_every_kind_of_error_has_a_default_text(kind: str) -> None:
    for retryable in (False, True):
        info = ErrorInfo(kind=kind, message="SECRET", provider=P, retryable=retryable)  # type: ignore[arg-type]
        said = generic_error_text(info)
        assert said.startswith(("The ", "A ")) and "SECRET" not in said
        assert said.endswith("; try again." if retryable else ".")


REAL_REJECTIONS = {
    # the account's organization (redacted by its reporter: `...`), the model, the wait
    "groq__429_tpm_try_again_in_seconds": "The model provider is busy; try again.",
    # the account's id and the NVCF function's
    "nvidia__function_not_found_for_account_404": (
        "The model provider does not know the model or its endpoint."
    ),
    # the start and end of the server's API key
    "openai__incorrect_api_key_401": "The model provider refused the server's access.",
    "openai__context_length_exceeded": "The conversation is too long for the model.",
}


@pytest.mark.skipif(not REJECTIONS.is_dir(), reason=NO_CAPTURES)
@pytest.mark.parametrize("name", sorted(REAL_REJECTIONS))
async def test_a_real_rejection_says_what_failed_not_what_the_provider_said(
    serve: Serve, name: str
) -> None:
    """Before, the `errorText` was the provider's message: an organization or account
    id, a masked API key, the model's name."""
    case = json.loads((REJECTIONS / f"{name}.json").read_text())

    async def handler(incoming: web.Request) -> web.StreamResponse:
        return web.Response(
            status=case["status"], text=case["body"], content_type="application/json"
        )

    url = await serve(handler)
    provider = rxllm.provider("custom", base_url=url, allow_private_network=True, max_attempts=1)
    try:
        stream = await encode(provider.stream(request("x")), retries=True)
    finally:
        await provider.aclose()
    check_rules(stream)
    assert stream.of("error") == [{"type": "error", "errorText": REAL_REJECTIONS[name]}]
    assert case["message_probe"].encode() not in stream.raw


async def test_an_unreachable_provider_does_not_name_its_host() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = f"http://127.0.0.1:{port}/internal-gateway/v1"
    provider = rxllm.provider("custom", base_url=url, allow_private_network=True, max_attempts=1)
    try:
        stream = await encode(provider.stream(request("x")))
    finally:
        await provider.aclose()
    check_rules(stream)
    said = "The model provider could not be reached; try again."
    assert stream.of("error") == [{"type": "error", "errorText": said}]
    assert b"127.0.0.1" not in stream.raw and b"internal-gateway" not in stream.raw


async def test_a_source_without_a_terminal_still_ends_the_message() -> None:
    async def cut() -> AsyncIterator[Event]:
        yield ToolStart(provider=P, call_id="c", name="f", index=0)

    stream = await encode(cut())
    check_rules(stream)
    assert stream.types[-3:] == ["tool-input-error", "error", "finish"]  # no error's facts
    assert stream.of("error")[0]["errorText"] == "The stream ended without a terminal event."


async def test_a_broken_source_ends_the_message_then_raises() -> None:
    async def broken() -> AsyncIterator[Event]:
        yield text("a")
        raise RuntimeError("internal detail")

    got: list[bytes] = []
    with pytest.raises(RuntimeError, match="internal detail"):
        async for chunk in ui_message_stream(broken()):
            got.append(chunk)
    stream = read_sse(b"".join(got))
    check_rules(stream)
    assert stream.of("error") == [{"type": "error", "errorText": "The stream failed."}]
    assert b"internal detail" not in stream.raw


async def test_leaving_early_hangs_up_the_provider(local_server: LocalServer) -> None:
    frames = ui_message_stream(local_server.provider("openai").stream(request("slow_drip")))
    async for chunk in frames:
        if b"tool-input-start" in chunk:
            break
    await frames.aclose()
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)


async def test_an_async_source_left_early_is_closed() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[Event]:
        try:
            while True:
                yield text("x")
                await asyncio.sleep(0)
        finally:
            closed.set()

    frames = ui_message_stream(endless())
    async for _ in frames:
        break
    await frames.aclose()
    assert closed.is_set()


async def test_a_bad_cursor_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not a log entry id"):
        await encode(entries([done()]), after="yesterday")


# --- real streams -------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    "story",
    [
        "code_execution",
        "no_argument_tool",
        "whole",
        "client_action",
        "parallel_tools",
        "truncated",
        "late_event",
    ],
)
async def test_local_stories_keep_the_rules(
    local_server: LocalServer, wire: str, story: str
) -> None:
    stream = await over_http(local_server, wire, story)
    record = await local_server.provider(wire).complete(request(story))
    assert stream.text() == record.text + record.refusal
    assert [
        p["input"] for p in stream.of("tool-input-available") if not p.get("providerExecuted")
    ] == [call.arguments for call in record.tool_calls]


@pytest.mark.parametrize("path", BODIES, ids=lambda p: f"{p.parent.name}/{p.stem}")
async def test_every_capture_keeps_the_rules(path: Path) -> None:
    events = rxllm.replay(path.read_bytes(), provider=wire_of(path))
    stream = await encode(events, message_id="m")
    check_rules(stream)
    again = await encode(rxllm.replay(path.read_bytes(), provider=wire_of(path)), message_id="m")
    assert again.raw == stream.raw  # deterministic: a replay repeats every id


@pytest.mark.parametrize("wire", WIRES)
async def test_frames_are_the_parts_encoded(local_server: LocalServer, wire: str) -> None:
    """`frames` (with its shortcut for text deltas) writes exactly `parts`, encoded."""
    turn = [event async for event in local_server.provider(wire).astream(request("weather"))]
    odd = [TextDelta(provider=P, text=t) for t in ("a", "b\ud83d", "\ude00", "\udc00", "")]
    framed, parted = UIMessageEncoder("m"), UIMessageEncoder("m")
    for event in [*odd, *turn]:
        expected = b"".join(encode_frame(part) for part in parted.parts(event))
        if event is turn[-1]:
            expected += b"data: [DONE]\n\n"
        assert framed.frames(event) == expected, event


def test_the_encoder_needs_no_redis() -> None:
    """Without the `serving` extra's redis client the encoder still imports, and asking
    for the Redis log says which extra to install."""
    script = (
        "import sys; sys.modules['redis'] = None\n"
        "from rxllm.serving import ui_message_stream\n"
        "try:\n"
        "    from rxllm.serving import RedisLog\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "pip install 'rxllm[serving]'" in done.stdout
