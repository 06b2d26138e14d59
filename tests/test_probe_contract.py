"""A contract probe of DESIGN.md's promises through the public API, as a user of a
provider's own SDK would call it, against loopback servers that send the bytes written
here (hand-made from the providers' references). Each case failed before its fix."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Failed
from tests.support import Serve, ServeBody, replay_every_way, summarize

KEY = "sk-probe-contract-0123456789abcdef"
ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


# -- Gemini: text written in the part that holds the call ---------------------------------


def gemini(*parts: dict[str, Any]) -> bytes:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}
    payload = {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "r1"}
    return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"


async def test_text_beside_a_call_in_one_gemini_part_is_said_before_the_call(
    serve_body: ServeBody,
) -> None:
    """Gemini's `Part` holds one kind of data (a oneof), but its JSON has a member for
    each, and a relay may write a call's text in the call's own part. google-genai reads
    such a part as both (`response.text` joins every part's text, `function_calls` takes
    every part's call); rxllm dropped the text without a word (DESIGN: nothing a
    provider says is silently dropped). Now the text comes first, as for a chunk whose
    text and call are two parts."""
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
    body = gemini({"text": "Let me check. ", **call})
    events = replay_every_way(body, "google")
    said = summarize(events)
    assert said.text == "Let me check. "
    assert [ev.type for ev in events] == ["text", "tool_start", "tool_request", "done"]
    assert said.tool_calls[0][1:] == ("get_weather", {"city": "Paris"})
    async with rxllm.provider(
        "google", api_key=KEY, base_url=await serve_body(body), allow_private_network=True
    ) as p:
        rec = await p.complete(ASK)
    assert rec.text == "Let me check. " and rec.terminal.type == "done"
    assert [(c.name, c.arguments) for c in rec.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_a_call_part_without_text_reads_as_before() -> None:
    """The near miss: a call's part with no text (or an empty one) says no text."""
    for part in ({}, {"text": ""}):
        body = gemini({**part, "functionCall": {"name": "f", "args": {}}})
        events = replay_every_way(body, "google")
        assert [ev.type for ev in events] == ["tool_start", "tool_request", "done"]


def test_a_thought_beside_a_call_in_one_part_is_reasoning() -> None:
    """A thought written in the call's part is reasoning, as a thought part is."""
    body = gemini({"text": "plan", "thought": True, "functionCall": {"name": "f", "args": {}}})
    said = summarize(replay_every_way(body, "google"))
    assert (said.reasoning, said.text) == ("plan", "")
    assert [name for _, name, _ in said.tool_calls] == ["f"]


# -- the request id on every error of a response that named one ----------------------------

REQUEST_ID = "req_0123456789abcdef"


def chat(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"model": "m", "choices": [choice]}).encode() + b"\n\n"


def call(arguments: str) -> bytes:
    entry = {"index": 0, "id": "call_1", "type": "function"}
    return chat({"tool_calls": [{**entry, "function": {"name": "f", "arguments": arguments}}]})


CALLS_END = chat({}, "tool_calls") + b"data: [DONE]\n\n"


async def errors_of(serve: Serve, body: bytes, **options: Any) -> list[rxllm.ErrorInfo]:
    """The errors of one turn whose 200 response names REQUEST_ID (OpenAI's
    `x-request-id`), retried once: the absorbed one (on its `retry`) and the last."""

    async def handler(request: web.Request) -> web.StreamResponse:
        headers = {"Content-Type": "text/event-stream", "x-request-id": REQUEST_ID}
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        await response.write(body)
        return response

    async with rxllm.provider(
        "custom",
        base_url=await serve(handler),
        api_key=KEY,
        allow_private_network=True,
        **{"max_attempts": 2, **options},
    ) as p:
        events = [ev async for ev in p.astream(ASK)]
    assert isinstance(events[-1], Failed)
    return [ev.reason for ev in events if isinstance(ev, rxllm.Retry)] + [events[-1].error]


@pytest.mark.parametrize(
    ("body", "kind", "options"),
    [
        (call('{"city": ') + CALLS_END, "malformed_tool_arguments", {}),
        (
            call('{"city": "' + "x" * 100 + '"}') + CALLS_END,
            "limit",
            {"max_tool_argument_bytes": 64},
        ),
        (chat({"content": 5}) + CALLS_END, "protocol", {}),  # a chunk that cannot be read
    ],
    ids=["malformed", "argument-limit", "unreadable-chunk"],
)
async def test_every_error_of_a_response_names_its_request_id(
    serve: Serve, body: bytes, kind: str, options: dict[str, Any]
) -> None:
    """DESIGN: `ErrorInfo.request_id` is the provider's request id header, for support
    tickets. A stream error, a cut, a stall and a limit on the body named it; tool
    arguments the model wrote wrong (the very error to report to the provider) and a
    chunk that could not be read did not: their errors are made past the step that
    holds the response's headers. Now every error of an attempt whose response named
    one says it, absorbed into a `retry` or surfaced."""
    errors = await errors_of(serve, body, **options)
    assert [error.kind for error in errors][-1] == kind
    assert [error.request_id for error in errors] == [REQUEST_ID] * len(errors)


async def test_an_error_before_any_response_names_no_request_id(serve: Serve) -> None:
    """The near miss: a retry whose next attempt fails before a response (here, the
    server is gone) names no request id, not the one of the attempt before it."""
    served: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        served.append(1)
        if len(served) > 1:
            assert request.transport is not None
            request.transport.close()  # no response at all
            raise web.HTTPInternalServerError
        headers = {"Content-Type": "text/event-stream", "x-request-id": REQUEST_ID}
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        await response.write(chat({"role": "assistant"}))  # commits nothing; then cut
        return response

    async with rxllm.provider(
        "custom",
        base_url=await serve(handler),
        api_key=KEY,
        allow_private_network=True,
        max_attempts=2,
    ) as p:
        events = [ev async for ev in p.astream(ASK)]
    retry, last = events[0], events[-1]
    assert isinstance(retry, rxllm.Retry) and isinstance(last, Failed)
    assert (retry.reason.kind, retry.reason.request_id) == ("truncated", REQUEST_ID)
    assert last.error.kind == "transport" and last.error.request_id is None


# -- a character whose UTF-16 halves come in two deltas ------------------------------------

# JSON writes a character past U+FFFF escaped as its UTF-16 pair ("\ud83d\ude00", 😀),
# and a writer that cuts text by UTF-16 code units (JavaScript's `slice`) may send the
# halves in two deltas; Python's `json` decodes each to a lone surrogate.
EMOJI_HALVES = ("hi \\ud83d", "\\ude00 there")


def split_text(wire: str) -> bytes:
    """A turn whose text is "hi 😀 there", the emoji's halves in two deltas."""
    first, second = EMOJI_HALVES
    if wire == "anthropic":
        start = {"type": "message_start", "message": {"id": "msg_1", "type": "message",
                 "role": "assistant", "model": "claude", "content": [],
                 "usage": {"input_tokens": 3, "output_tokens": 0}}}  # fmt: skip
        block = {"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}}  # fmt: skip
        stop = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 3}}  # fmt: skip
        frames = [json.dumps(start), json.dumps(block)]
        for half in (first, second):
            frames.append(
                '{"type": "content_block_delta", "index": 0, '
                f'"delta": {{"type": "text_delta", "text": "{half}"}}}}'
            )
        frames += ['{"type": "content_block_stop", "index": 0}', json.dumps(stop)]
        frames.append('{"type": "message_stop"}')
        return b"".join(b"data: " + frame.encode() + b"\n\n" for frame in frames)
    deltas = [
        f'{{"choices": [{{"index": 0, "delta": {{"content": "{half}"}}}}]}}'
        for half in (first, second)
    ]
    deltas.append('{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}')
    return b"".join(b"data: " + delta.encode() + b"\n\n" for delta in [*deltas, "[DONE]"])


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_character_whose_halves_come_in_two_deltas_is_one_character(
    serve_body: ServeBody, wire: str
) -> None:
    """The text was "hi \\ud83d" then "\\ude00 there": two lone surrogates, which no
    UTF-8 writer takes. The record's text could not be printed to a UTF-8 file or sent
    on: the next turn, the answer in its history, was refused at the call ("the request
    holds text that is not Unicode"). Now the high half waits for the next text, and
    the pair is one character."""
    body = split_text(wire)
    events = replay_every_way(body, wire)
    texts = [ev.text for ev in events if ev.type == "text"]
    assert "".join(texts) == "hi \U0001f600 there"
    for text in texts:
        text.encode()  # every delta is Unicode a UTF-8 writer takes
    name = "custom" if wire == "openai" else wire
    async with rxllm.provider(
        name, api_key=KEY, base_url=await serve_body(body), allow_private_network=True
    ) as p:
        rec = await p.complete(ASK)
        assert rec.text == "hi \U0001f600 there"
        history = [*ASK.messages, rxllm.Message.assistant(rec.text), rxllm.Message.user("and?")]
        p.stream(ASK.model_copy(update={"messages": history}))  # accepted at the call


def test_a_lone_half_is_the_replacement_character() -> None:
    """A half with no other half (a high one at the end of the text, a low one that no
    high one preceded) is U+FFFD, as a byte UTF-8 cannot decode is in the stream."""
    deltas = ["a\\ud83d", "b\\ude00c", "d\\ud83d"]
    body = b"".join(
        f'data: {{"choices": [{{"index": 0, "delta": {{"content": "{text}"}}}}]}}\n\n'.encode()
        for text in deltas
    )
    body += b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    said = summarize(replay_every_way(body, "openai"))
    assert said.text == "a\ufffdb\ufffdcd\ufffd"
    assert said.stop_reason == "stop"


def test_a_pair_in_one_delta_reads_as_before() -> None:
    """The near miss: both halves in one delta are one character, as `json` reads them."""
    body = (
        b'data: {"choices": [{"index": 0, "delta": {"content": "hi \\ud83d\\ude00"}}]}\n\n'
        b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    )
    assert summarize(replay_every_way(body, "openai")).text == "hi \U0001f600"


def chat_deltas(*deltas: str, finish: str = "stop") -> bytes:
    """A chat stream of the given delta objects' JSON text, then `finish`."""
    chunks = [f'{{"choices": [{{"index": 0, "delta": {delta}}}]}}' for delta in deltas]
    chunks.append(f'{{"choices": [{{"index": 0, "delta": {{}}, "finish_reason": "{finish}"}}]}}')
    return b"".join(b"data: " + chunk.encode() + b"\n\n" for chunk in chunks)


def test_reasoning_and_a_refusal_whose_halves_come_apart_are_one_character_each() -> None:
    """The same for reasoning (which goes back in the history too) and a refusal, each
    kind waiting for the next of its own kind."""
    body = chat_deltas(
        '{"reasoning_content": "think \\ud83d"}',
        '{"reasoning_content": "\\ude00"}',
        '{"refusal": "no \\ud83d"}',
        '{"refusal": "\\ude00 sorry"}',
    )
    said = summarize(replay_every_way(body, "openai"))
    assert said.reasoning == "think \U0001f600"
    assert said.refusal == "no \U0001f600 sorry"


def test_a_high_half_before_anything_else_is_the_replacement_character_first() -> None:
    """A high half whose next text is not its pair's (a call comes) is U+FFFD, said
    before that call."""
    call = '{"tool_calls": [{"index": 0, "id": "call_1", "type": "function", '
    call += '"function": {"name": "f", "arguments": "{}"}}]}'
    body = chat_deltas('{"content": "a\\ud83d"}', call, finish="tool_calls")
    events = replay_every_way(body, "openai")
    assert [(ev.type, getattr(ev, "text", None)) for ev in events[:3]] == [
        ("text", "a"),
        ("text", "\ufffd"),
        ("tool_start", None),
    ]


def test_tool_arguments_whose_character_halves_come_apart_hold_the_character() -> None:
    """Arguments written with their characters as they are, cut by UTF-16 code units
    between two fragments: each fragment's JSON escapes its half, and the arguments
    held two lone surrogates ({'city': 'x\\ud83d\\ude00'}), which the next request,
    the call in its history, could not send. Now they are the character."""
    call = '{"tool_calls": [{"index": 0, "id": "call_1", "type": "function", '
    first = call + '"function": {"name": "f", "arguments": "{\\"city\\": \\"x\\ud83d"}}]}'
    second = '{"tool_calls": [{"index": 0, "function": {"arguments": "\\ude00\\"}"}}]}'
    body = chat_deltas(first, second, finish="tool_calls")
    said = summarize(replay_every_way(body, "openai"))
    assert said.tool_calls == [("call_1", "f", {"city": "x\U0001f600"})]
    call = rxllm.ToolCall(id="call_1", name="f", arguments=said.tool_calls[0][2])
    history = [*ASK.messages, rxllm.Message.assistant("", tool_calls=[call])]
    history.append(rxllm.Message.tool("call_1", "sunny"))
    p = rxllm.provider("openai", api_key=KEY)
    p.stream(ASK.model_copy(update={"messages": history}))  # accepted at the call


def test_arguments_that_escape_their_characters_read_as_before() -> None:
    """The near miss: arguments whose JSON text escapes the pair itself (two escapes in
    the text, split between fragments) read as one character, as `json` reads them."""
    call = '{"tool_calls": [{"index": 0, "id": "call_1", "type": "function", '
    first = call + '"function": {"name": "f", "arguments": "{\\"city\\": \\"x\\\\ud83d"}}]}'
    second = '{"tool_calls": [{"index": 0, "function": {"arguments": "\\\\ude00\\"}"}}]}'
    body = chat_deltas(first, second, finish="tool_calls")
    said = summarize(replay_every_way(body, "openai"))
    assert said.tool_calls == [("call_1", "f", {"city": "x\U0001f600"})]
