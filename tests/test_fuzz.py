"""Fuzzing the byte and chunk readers: nothing a server sends may break the pipeline.

For every provider name, `rxllm.replay` is fed arbitrary bytes, real captures with
bytes flipped, inserted, deleted or spliced from another body, and well-framed SSE
whose JSON has the shapes the wire expects with wrong types inside (built from the
captures' and the local provider's own frames, mutated node by node with hypothesis'
recursive JSON). Every stream must end with exactly one terminal event, never call
`on_error`, and every `error` names the provider with a message (`outcome`).

The SSE decoder alone: arbitrary bytes, cut anywhere, decode as the whole does, and
the only exception it raises is its line cap's.

Inputs this fuzzing found to break the contract (JSON nested past the recursion
limit, a finish reason that is not a string, token counts of the wrong type) are kept
below as tests of their own.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import itertools
import json
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

import rxllm
from rxllm.degradation import RecoveryPolicy, Verdict, classify
from rxllm.events import ErrorInfo, EventAdapter
from rxllm.local.script import ANSWER, PARALLEL_CALLS, WEATHER_CALL
from rxllm.providers import PROVIDER_NAMES, wire_for
from rxllm.sources.sse import SseDecoder, SseEvent, SseLineTooLong
from tests.hypothesis_support import BODIES, examples, json_values, outcome, wire_of
from tests.support import NO_CAPTURES

# -- inputs ---------------------------------------------------------------------------

# Bytes that mean something to an SSE reader, so random bodies reach past the framing.
_SSE_BYTES = st.sampled_from(
    [b"\n", b"\r", b"\r\n", b":", b" ", b"data:", b"data: ", b"event:", b"id:", b"retry:",
     b"{", b"}", b"[", b"]", b'"', b"\xef\xbb\xbf", b"\xe2\x82", b"\xac", b"\xff", b"[DONE]"]
)  # fmt: skip
hostile_bytes = st.one_of(
    st.binary(max_size=300),
    st.lists(st.one_of(_SSE_BYTES, st.binary(max_size=6)), max_size=60).map(b"".join),
)


def family(provider: str) -> str:
    """The wire protocol a provider speaks (its normalizer's class)."""
    return type(wire_for(provider)).__name__


Frame = tuple[str, str]  # (SSE event name, data)


def decode_frames(data: bytes) -> list[Frame]:
    decoder = SseDecoder()
    return [(ev.event, ev.data) for ev in decoder.feed(data) + decoder.close()]


_LOCAL_WIRES = {
    "OpenAIChat": "wire_openai_chat",
    "Anthropic": "wire_anthropic",
    "OpenAIResponses": "wire_openai_responses",
    "Google": "wire_google",
}


@functools.cache
def sources_of(wire: str) -> list[list[Frame]]:
    """Valid streams of a wire: its real captures, and the local provider's turns."""
    streams = [decode_frames(p.read_bytes()) for p in BODIES if family(wire_of(p)) == wire]
    # The long recordings' middles repeat themselves: keep their start and their end.
    streams = [s if len(s) <= 30 else s[:22] + s[-8:] for s in streams]
    module = importlib.import_module(f"rxllm.local.{_LOCAL_WIRES[wire]}")
    body = {"model": "m", "stream_options": {"include_usage": True}}
    for script in (ANSWER, WEATHER_CALL, PARALLEL_CALLS):
        streams.append(decode_frames(b"".join(module.frames(script, body))))
    return streams


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """`value` with a few nodes replaced by arbitrary JSON, dropped or added: the shape
    a wire expects, with wrong types inside."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if draw(st.integers(0, 15)) == 0:
                continue
            out[key] = draw(mutated(item))
        if draw(st.integers(0, 15)) == 0:
            out[draw(st.text(max_size=8))] = draw(json_values)
        return out
    if isinstance(value, list):
        return [draw(mutated(item)) for item in value if draw(st.integers(0, 15))]
    return value


@st.composite
def frames_of(draw: st.DrawFn, wire: str) -> bytes:
    """A valid stream of `wire` with frames mutated, dropped, repeated, cut short,
    or taken from another wire, written back as SSE."""
    stream = draw(st.sampled_from(sources_of(wire)))
    out: list[bytes] = []
    for name, data in stream:
        roll = draw(st.integers(0, 9))
        if roll == 0:
            continue
        if roll <= 3:
            try:
                data = json.dumps(draw(mutated(json.loads(data))))
            except ValueError:
                data = draw(st.sampled_from(["[DONE]", "", "null", data[: len(data) // 2]]))
        frame = (f"event: {name}\n" if name != "message" else "") + f"data: {data}\n\n"
        out.append(frame.encode())
        if roll == 4:
            out.append(f"data: {json.dumps(draw(json_values))}\n\n".encode())
        if roll == 5:
            out.append(out[-1])
    if draw(st.booleans()):
        out = out[: draw(st.integers(0, len(out)))]
    if draw(st.integers(0, 4)) == 0:
        foreign = draw(st.sampled_from(sorted(_LOCAL_WIRES)))
        other = draw(st.sampled_from(sources_of(foreign)))
        out.insert(
            draw(st.integers(0, len(out))),
            "".join(f"data: {data}\n\n" for _, data in other[:3]).encode(),
        )
    return b"".join(out)


@st.composite
def damaged_capture(draw: st.DrawFn, wire: str) -> bytes:
    """A real capture of `wire` with bytes flipped, inserted, deleted, or spliced."""
    paths = [p for p in BODIES if family(wire_of(p)) == wire] or BODIES
    data = bytearray(draw(st.sampled_from(paths)).read_bytes())
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "splice"]))
        at = draw(st.integers(0, len(data)))
        if kind == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.one_of(_SSE_BYTES, st.binary(min_size=1, max_size=8)))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "splice":
            other = draw(st.sampled_from(BODIES)).read_bytes()
            start = draw(st.integers(0, len(other)))
            data[at:] = other[start : start + draw(st.integers(0, 4000))]
    return bytes(data)


def pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


# -- the SSE decoder --------------------------------------------------------------------


def decode(chunks: list[bytes], max_line_bytes: int) -> list[SseEvent] | str:
    decoder = SseDecoder(max_line_bytes)
    out: list[SseEvent] = []
    try:
        for chunk in chunks:
            out += decoder.feed(chunk)
        return out + decoder.close()
    except SseLineTooLong:
        return "too long"


@settings(max_examples=examples(300))
@given(data=hostile_bytes, cuts=st.lists(st.integers(0, 400), max_size=30))
def test_the_sse_decoder_reads_any_bytes_the_same_however_cut(data: bytes, cuts: list[int]) -> None:
    whole = decode([data], 1 << 20)
    assert whole != "too long"
    assert decode(pieces(data, cuts), 1 << 20) == whole
    assert decode([bytes([b]) for b in data], 1 << 20) == whole


@settings(max_examples=examples(200))
@given(data=hostile_bytes, cuts=st.lists(st.integers(0, 400), max_size=30))
def test_the_sse_line_cap_is_the_only_exception(data: bytes, cuts: list[int]) -> None:
    for chunks in ([data], pieces(data, cuts)):
        decode(chunks, 16)  # returns events or "too long"; anything else raises here


# -- every provider through rxllm.replay -----------------------------------------------


def fuzz_outcome(data: Any, provider: str) -> None:
    outcome(data, provider)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
@settings(max_examples=examples(25))
@given(data=hostile_bytes, cuts=st.lists(st.integers(0, 400), max_size=8))
def test_arbitrary_bytes_end_once(provider: str, data: bytes, cuts: list[int]) -> None:
    fuzz_outcome(data, provider)
    fuzz_outcome(pieces(data, cuts), provider)


@pytest.mark.skipif(not BODIES, reason=NO_CAPTURES)
@pytest.mark.parametrize("provider", PROVIDER_NAMES)
@settings(max_examples=examples(12))
@given(data=st.data())
def test_damaged_captures_end_once(provider: str, data: st.DataObject) -> None:
    fuzz_outcome(data.draw(damaged_capture(family(provider)), label="body"), provider)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
@settings(max_examples=examples(15))
@given(data=st.data())
def test_wire_shapes_with_wrong_types_end_once(provider: str, data: st.DataObject) -> None:
    fuzz_outcome(data.draw(frames_of(family(provider)), label="body"), provider)


def sse(*payloads: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return b"".join(f"{head}data: {json.dumps(p)}\n\n".encode() for p in payloads)


NAMED = {
    "chat tool index a string": sse({"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}),
    "chat tool call not a dict": sse({"choices": [{"delta": {"tool_calls": [5]}}]}),
    "chat delta a list": sse({"choices": [{"delta": [], "finish_reason": "stop"}]}),
    "chat usage a string": sse({"choices": [], "usage": "lots"}),
    "anthropic index null": sse(
        {"type": "content_block_delta", "index": None}, event="content_block_delta"
    ),
    "anthropic delta of a block never started": sse(
        {"type": "content_block_delta", "index": 7, "delta": {"type": "input_json_delta"}},
        event="content_block_delta",
    ),
    "anthropic message_start without message": sse({"type": "message_start"}),
    "gemini parts a number": sse({"candidates": [{"content": {"parts": 5}}]}),
    "gemini candidates a dict": sse({"candidates": {"content": None}}),
    "gemini functionCall args a list": sse(
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}]}
    ),
    "responses item null": sse({"type": "response.output_item.added", "item": None}),
    "responses delta a number": sse({"type": "response.output_text.delta", "delta": 5}),
    "responses completed without response": sse({"type": "response.completed"}),
    "error event without error": sse({"type": "error"}, event="error"),
    "error a string": sse({"error": "boom"}),
}


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_hostile_shapes_end_once(provider: str, name: str) -> None:
    outcome(NAMED[name], provider)


# -- found by fuzzing: inputs that break the contract today -----------------------------

DEEP = "[" * 10_000 + "]" * 10_000  # JSON nested deeper than Python's recursion limit


def chat_call(arguments: str) -> bytes:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}
    call["function"]["arguments"] = arguments  # type: ignore[index]
    return (
        sse({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
        + sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        + b"data: [DONE]\n\n"
    )


DEEP_BODIES = [
    *((p, b"data: " + DEEP.encode() + b"\n\n") for p in ("openai", "google", "openai-responses")),
    ("anthropic", b'event: error\ndata: {"type": "error", "error": ' + DEEP.encode() + b"}\n\n"),
    ("openai", chat_call(DEEP)),  # the tool call's arguments
]


@pytest.mark.parametrize(
    ("provider", "body"), DEEP_BODIES, ids=["data", "data", "data", "error", "args"]
)
def test_deeply_nested_json_is_an_error_event(provider: str, body: bytes) -> None:
    outcome(body, provider)


async def test_a_deeply_nested_http_error_body_is_an_error_event() -> None:
    async def reject(request: web.Request) -> web.Response:
        text = '{"error": {"message": "bad request", "detail": ' + DEEP + "}}"
        return web.Response(status=400, text=text, content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", reject)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        provider = rxllm.provider("local", base_url=f"http://127.0.0.1:{runner.addresses[0][1]}/v1")
        request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        try:
            record = await asyncio.wait_for(provider.complete(request), timeout=10)
        except RecursionError as exc:
            raise AssertionError("on_error: RecursionError") from exc
        assert record.terminal.type == "error" and record.terminal.error.status == 400
    finally:
        await runner.cleanup()


# Error bodies as long as rxllm reads (MAX_ERROR_BODY_BYTES), in shapes that make a regex
# tried at every start of a line without punctuation quadratic: the sentence-scoped one of
# `degradation` took 12 s on 20 KB of nested brackets, minutes on 64 KB, blocking the loop.
_HOSTILE_REJECTIONS = {
    "brackets": "[" * 32_768 + "]" * 32_768,
    "words without punctuation": "a " * 32_768,
    "message words": "message " * 8_192,
    "when clauses": "when " * 13_107,
}


@pytest.mark.parametrize("text", _HOSTILE_REJECTIONS.values(), ids=_HOSTILE_REJECTIONS.keys())
def test_a_long_rejection_is_read_in_linear_time(text: str) -> None:
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p", retryable=False)
    body = {"model": "m", "messages": [], "stream": True, "temperature": 1.0}
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, body, RecoveryPolicy(degrade=True))),
        daemon=True,
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is a fraction of a second
    assert verdicts and verdicts[0].action == "static"


@pytest.mark.parametrize("provider", ["openai", "openrouter", "local"])
def test_a_non_string_finish_reason_is_an_error_event(provider: str) -> None:
    outcome(sse({"choices": [{"index": 0, "finish_reason": {"a": 1}}]}), provider)


USAGE_TYPES = {
    "openai-responses": sse(
        {"type": "response.completed", "response": {"usage": {"input_tokens": 1e999}}}
    ),
    "openai": sse(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 1.5, "completion_tokens": True}},
    )
    + b"data: [DONE]\n\n",
}


@pytest.mark.parametrize("provider", sorted(USAGE_TYPES))
def test_every_event_fits_its_own_schema(provider: str) -> None:
    for event in outcome(USAGE_TYPES[provider], provider):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                assert EventAdapter.validate_json(event.model_dump_json()) == event
            except (Warning, ValueError) as exc:
                raise AssertionError(f"{event!r}: {exc}") from exc


def test_the_fuzz_sources_cover_every_wire() -> None:
    for wire in _LOCAL_WIRES:
        assert sources_of(wire)
    assert {family(name) for name in PROVIDER_NAMES} == set(_LOCAL_WIRES)
    assert all(isinstance(p, Path) for p in BODIES)
