"""Probes of the opt-in text guards and of `rxllm.replay` on shapes the captures lack:
code blocks that hold backticks, a stray ``` in prose, HTTP dumps with chunked framing,
error dumps, and data that is no recording."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeAlias

import pytest
import reactivex
from reactivex.testing.marbles import marbles_testing

import rxllm
from rxllm.events import Done, Failed, TextDelta
from rxllm.operators.speaker_guard import speaker_guard
from tests.support import CAPTURES, needs_captures, rechunk, replay

Marbles: TypeAlias = dict[str | float, Any]


def t(text: str) -> TextDelta:
    return TextDelta.make(provider="p", attempt=1, text=text)


DONE = Done.make(provider="p", stop_reason="stop")


def chat_body(*texts: str) -> bytes:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": text}}]} for text in texts
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


# -- speaker guard: only a ``` that begins a line is a fence (CommonMark) --------------


def test_a_code_line_holding_three_backticks_does_not_end_the_fence() -> None:
    """A code block that writes Markdown (`print("```")`) closed the guard's fence in
    the middle of a code line; the real closing fence then opened a new one, and every
    later "\\nUser:" went through, the leaked turn included."""
    values: Marbles = {
        "a": t('Here:\n```python\nprint("```")\n'),
        "b": t("```\nDone.\nUs"),
        "c": t("er: thanks!"),
        "d": DONE,
    }
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-c-d-|", values, None)
        expected = exp("-a-b---d-|", {"a": values["a"], "b": t("```\nDone."), "d": DONE}, None)
        assert start(source.pipe(speaker_guard())) == expected


def test_three_backticks_in_prose_do_not_switch_the_guard_off() -> None:
    """A ``` in the middle of a sentence opens no fence (CommonMark: an inline span at
    most, which a blank line ends); it switched the guard off for the whole answer."""
    values: Marbles = {"a": t("Wrap code in ``` fences.\n"), "b": t("\nUser: and?"), "d": DONE}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-d-|", values, None)
        expected = exp("-a---d-|", {"a": values["a"], "d": DONE}, None)
        assert start(source.pipe(speaker_guard())) == expected


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # a fence that opens the answer, one indented in a list, a longer fence around
        # a shorter one, a ``` line with backticks after it (inline code, no fence)
        ("```\nUser: in code\n\nUser: too\n```\nUser: cut", "```\nUser: in code\n\nUser: too\n```"),
        (
            "1. run:\n   ```sh\n   User: x\n   ```\nUser: cut",
            "1. run:\n   ```sh\n   User: x\n   ```",
        ),
        ("````md\n```\nUser: x\n```\n````\nUser: cut", "````md\n```\nUser: x\n```\n````"),
        ("```a```\nUser: cut", "```a```"),
        # a fence after a stray backtick: the fence ends that paragraph and its span
        ("It`s:\n```\nUser: x\n```\nUser: cut", "It`s:\n```\nUser: x\n```"),
        ('```py\nprint("```")\nUser: code\n```\nUser: cut', '```py\nprint("```")\nUser: code\n```'),
    ],
)
def test_fences_in_any_chunking(text: str, kept: str) -> None:
    for size in (1, 2, 3, 5, len(text)):
        out: list[Any] = []
        chunks = [t(text[at : at + size]) for at in range(0, len(text), size)]
        reactivex.from_iterable([*chunks, DONE]).pipe(speaker_guard()).subscribe(out.append)
        assert "".join(i.text for i in out if isinstance(i, TextDelta)) == kept, size
        assert out[-1] == DONE


async def test_the_guard_cuts_a_turn_after_a_code_block_that_holds_backticks(
    serve_body: Callable[[bytes], Awaitable[str]],
) -> None:
    """Over HTTP, as a provider with `speaker_guard=True` streams it."""
    url = await serve_body(
        chat_body("Use:\n```python\nprint(", '"```")\n```', "\nDone.\nUs", "er: more?")
    )
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    options: dict[str, Any] = {"allow_private_network": True, "speaker_guard": True}
    async with rxllm.provider("custom", base_url=url, **options) as provider:
        rec = await provider.complete(request)
    assert rec.text == 'Use:\n```python\nprint("```")\n```\nDone.'
    assert isinstance(rec.terminal, Done) and rec.terminal.stop_reason == "stop"


# -- replay: recordings in other shapes ------------------------------------------------

OPENAI = CAPTURES / "openai" / "chat_text_usage.sse"


def _chunked(body: bytes, size: int) -> bytes:
    framed = b"".join(
        b"%x\r\n%s\r\n" % (len(body[at : at + size]), body[at : at + size])
        for at in range(0, len(body), size)
    )
    return framed + b"0\r\n\r\n"


@needs_captures
def test_an_http_dump_with_chunked_framing_replays_as_its_body() -> None:
    body = OPENAI.read_bytes()
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    whole = replay(body, "openai")
    assert replay(head + _chunked(body, 37), "openai") == whole
    assert replay(rechunk(head + _chunked(body, 37), 3, 9), "openai") == whole


def test_an_error_dump_with_chunked_framing_is_that_error() -> None:
    error = {"error": {"message": "Rate limit", "type": "requests", "code": "rate_limit"}}
    head = (
        b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nRetry-After: 7\r\nx-request-id: req_1\r\n\r\n"
    )
    (event,) = replay(head + _chunked(json.dumps(error).encode(), 10), "openai")
    assert isinstance(event, Failed)
    assert (event.error.kind, event.error.status, event.error.code) == (
        "rejected",
        429,
        "rate_limit",
    )
    assert (event.error.retry_after, event.error.request_id) == (7.0, "req_1")


def test_an_empty_iterable_is_an_empty_recording() -> None:
    for data in ([], [b"", b""], iter(())):
        (event,) = replay(data, "openai")
        assert isinstance(event, Failed) and event.error.kind == "truncated"


def test_a_generator_that_fails_raises_its_own_error_at_the_call() -> None:
    def chunks() -> Iterator[bytes]:
        yield b'data: {"choices": []}\n\n'
        raise ConnectionResetError("the recording's source failed")

    with pytest.raises(ConnectionResetError, match="source failed"):
        rxllm.replay(chunks(), provider="openai")
