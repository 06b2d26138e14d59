"""llama.cpp's `error:` SSE field: a failure the spec would have the decoder ignore.

llama.cpp's server wrote an error after `200 OK` as a line whose *field name* is `error`,
with `format_error_response`'s object (`code`, `message`, `type`) as its value:
`examples/server/server.cpp` by 2024 wrote `"error: " + result.data.dump(...) + "\\n\\n"`
and stopped (no `[DONE]`); later `tools/server/server.cpp` wrote it through
`server_sent_event(sink, "error", error_data)`, followed by `data: [DONE]` on the
OpenAI-compatible endpoints, until ggml-org/llama.cpp#16109 (merged 2025-09-19, for
issue #16104) changed it to `data: {"error": {...}}`. The bodies below are made by hand
from that source; the context-size line is the one coddy-project/coddy-agent#106 quotes
from llama-server b5966. Before the decoder read the field, these turns ended `done`
(with `[DONE]`), `truncated` (without), or as "not an SSE stream" (the line alone).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Failed
from rxllm.fragments import RawChunk, SourceItem
from rxllm.sources.raw import ChunkReader
from rxllm.sources.sse import SseDecoder, SseEvent
from tests.support import Serve

CONTEXT_MESSAGE = (
    "the request exceeds the available context size. try increasing the context size "
    "or enable context shift"
)
# nlohmann's `dump()`: compact, keys in order (its default object is a sorted map).
LLAMA_ERROR = json.dumps(
    {"code": 400, "message": CONTEXT_MESSAGE, "type": "invalid_request_error"},
    separators=(",", ":"),
)


def chunk(content: str) -> bytes:
    """A chat chunk as llama.cpp's `format_partial_response_oaicompat` wrote it."""
    body = {
        "choices": [{"delta": {"content": content}, "finish_reason": None, "index": 0}],
        "created": 1717000000,
        "id": "chatcmpl-5SvLMq4dwDZx8QKh1v2tg1Y0XjLKTvBf",
        "model": "gpt-3.5-turbo",
        "object": "chat.completion.chunk",
    }
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


ERROR_LINE = b"error: " + LLAMA_ERROR.encode() + b"\n\n"
# examples/server/server.cpp (2024): text, then the error line; the body just ends.
BODY_2024 = chunk("Hel") + chunk("lo") + ERROR_LINE
# tools/server/server.cpp before #16109: the error line, then `[DONE]`.
BODY_2025 = chunk("Hel") + chunk("lo") + ERROR_LINE + b"data: [DONE]\n\n"
# b5966 as coddy-agent#106 shows it: a prompt over the context, so no text at all.
BODY_NO_TEXT = ERROR_LINE + b"data: [DONE]\n\n"


def decode(*chunks: bytes) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for piece in chunks:
        events += decoder.feed(piece)
    return events + decoder.close()


def blocks(body: bytes) -> list[bytes]:
    """The body as llama.cpp's `sink.write` calls sent it: one read per event."""
    return [block + b"\n\n" for block in body.split(b"\n\n") if block]


# -- the decoder ------------------------------------------------------------------------


def test_the_error_field_is_an_error_event_however_the_bytes_are_cut() -> None:
    expected = [
        SseEvent(chunk("Hel")[6:-2].decode()),
        SseEvent(chunk("lo")[6:-2].decode()),
        SseEvent(LLAMA_ERROR, "error"),
        SseEvent("[DONE]"),
    ]
    for i in range(len(BODY_2025) + 1):
        assert decode(BODY_2025[:i], BODY_2025[i:]) == expected
    assert decode(*[BODY_2025[i : i + 1] for i in range(len(BODY_2025))]) == expected
    # One read per event: the `data` reads around it keep the decoder's shortcut.
    assert decode(*blocks(BODY_2025)) == expected
    assert decode(*blocks(BODY_2025.replace(b"\n", b"\r\n"))) == expected


def test_the_error_field_without_its_blank_line_at_the_end_of_the_body_still_counts() -> None:
    assert decode(chunk("Hel") + ERROR_LINE[:-2]) == [
        SseEvent(chunk("Hel")[6:-2].decode()),
        SseEvent(LLAMA_ERROR, "error"),
    ]


def test_only_the_field_named_error_is_read_every_other_unknown_field_is_ignored() -> None:
    """Field names are case-sensitive (WHATWG): `Error`, `errors`, `err` stay unknown."""
    body = b"Error: a\nerrors: b\nerr: c\nfoo: d\n\nerror: plain words\n\ndata: x\n\n"
    assert decode(body) == [SseEvent("plain words", "error"), SseEvent("x")]
    assert decode(b"Error: a\nerrors: b\n\n") == []


# -- the chunk reader the HTTP and replay sources share ---------------------------------


class Sink:
    def __init__(self) -> None:
        self.items: list[SourceItem] = []

    def on_next(self, value: SourceItem) -> None:
        self.items.append(value)

    def on_error(self, error: Exception) -> None:
        raise error

    def on_completed(self) -> None:
        pass


def test_a_body_of_the_error_line_alone_is_an_error_chunk_not_a_body_that_is_not_sse() -> None:
    sink = Sink()
    reader = ChunkReader(sink, "llamacpp")
    assert reader.feed(ERROR_LINE) is None
    assert reader.close() is None
    assert sink.items == [RawChunk("llamacpp", 1, "error", LLAMA_ERROR)]


# -- end to end: a loopback server, the llamacpp preset, the whole pipeline ------------


def ask() -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


async def serve_blocks(serve: Serve, body: bytes) -> str:
    """A loopback llama-server: one write per event, as its `sink.write` calls were."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for block in blocks(body):
            await response.write(block)
            await asyncio.sleep(0)
        return response

    return await serve(handler)


@pytest.mark.parametrize(
    ("body", "text"),
    [(BODY_2024, "Hello"), (BODY_2025, "Hello"), (BODY_NO_TEXT, "")],
    ids=["2024-no-done", "2025-then-done", "no-text"],
)
async def test_the_turn_ends_in_an_error_with_llamacpps_message_and_the_text_before_it(
    serve: Serve, body: bytes, text: str
) -> None:
    url = await serve_blocks(serve, body)
    async with rxllm.provider("llamacpp", base_url=url, allow_private_network=True) as provider:
        events = [event async for event in provider.astream(ask())]
        rec = await provider.complete(ask())
    terminal = events[-1]
    assert isinstance(terminal, Failed)
    error = terminal.error
    assert (error.kind, error.message, error.status) == ("stream_error", CONTEXT_MESSAGE, 400)
    assert error.raw is not None and json.loads(error.raw) == json.loads(LLAMA_ERROR)
    assert "".join(e.text for e in events if e.type == "text") == text
    assert [e.type for e in events].count("done") == 0
    assert rec.terminal.type == "error" and rec.text == text


async def test_a_replayed_llamacpp_body_ends_the_same_way() -> None:
    """The replay source feeds the same decoder: the exact reads, or the whole body."""

    async def events_of(data: Any) -> list[Any]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        events: list[Any] = []
        rxllm.replay(data, provider="llamacpp").subscribe(
            events.append, done.set_exception, lambda: done.set_result(None)
        )
        await asyncio.wait_for(done, timeout=10)
        return events

    for data in (BODY_2025, blocks(BODY_2025)):
        events = await events_of(data)
        assert events[-1].type == "error" and events[-1].error.message == CONTEXT_MESSAGE
        assert "".join(e.text for e in events if e.type == "text") == "Hello"
