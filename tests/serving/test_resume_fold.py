"""Folding a resume's prefix cheaply (`UIMessageEncoder.fold` and `fold_json`) leaves
the encoder exactly as folding the whole events through `parts` does, at every cut
point, so the frames sent after the cursor are the bytes the original response sent
after that entry: over every real capture, hand-made mixes and random sequences."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rxllm.events import (
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
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
from rxllm.serving import UIMessageEncoder, ui_message_stream
from rxllm.serving.event_json import dump_event
from tests.hypothesis_support import BODIES, examples, outcome, wire_of

P = "openai"
START = 1700000000000
# Past this many events a capture's frames are compared at evenly spaced cuts (the
# state still at every one): every cut would be quadratic in the capture's length.
ALL_CUTS = 200


def state(encoder: UIMessageEncoder) -> dict[str, Any]:
    """Everything a fold leaves behind (the slots but the hooks)."""
    return {
        name: getattr(encoder, name)
        for name in UIMessageEncoder.__slots__
        if name not in ("_handlers", "_error_text")
    }


def entry_id(index: int) -> str:
    return f"{START}-{index}"


def stored(events: Sequence[Event]) -> list[bytes]:
    """The events as the log stores them (the producer's `dump_event`)."""
    return [dump_event(event).encode() for event in events]


def pages(items: list[bytes], size: int = 3) -> list[list[bytes]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def check_every_cut(events: Sequence[Event], *, by_json: bool = True, **options: Any) -> None:
    """At each cut k, an encoder that folded events[:k] cheaply has the state of one
    that took their parts, and sends after entry k-1 what the whole response did."""
    whole = UIMessageEncoder("m", **options)
    sent = [whole.frames(event, entry_id(i)) for i, event in enumerate(events)]
    full = UIMessageEncoder("m", **options)
    by_event = UIMessageEncoder("m", **options)
    cheap = UIMessageEncoder("m", **options)
    data = stored(events) if by_json else []
    step = 1 if len(events) <= ALL_CUTS else len(events) // 50
    for k in range(len(events) + 1):
        if k:
            full.parts(events[k - 1])
            by_event.fold(events[k - 1])
            if by_json:
                cheap.fold_json(data[k - 1 : k])
        assert state(by_event) == state(full), (k, events[k - 1] if k else None)
        if by_json:
            assert state(cheap) == state(full), (k, events[k - 1] if k else None)
        if k % step == 0 or k == len(events):
            # A fresh fold of the whole prefix, in pages, then the rest as frames.
            resumed = UIMessageEncoder("m", **options)
            if by_json:
                for page in pages(data[:k]):
                    resumed.fold_json(page)
            else:
                for event in events[:k]:
                    resumed.fold(event)
            rest = [resumed.frames(events[i], entry_id(i)) for i in range(k, len(events))]
            assert b"".join(rest) == b"".join(sent[k:]), k


def text(t: str) -> TextDelta:
    return TextDelta(provider=P, text=t)


def reasoning(t: str = "r", **fields: Any) -> ReasoningDelta:
    return ReasoningDelta(provider=P, text=t, **fields)


def done() -> Done:
    return Done(provider=P, stop_reason="stop")


ERROR = ErrorInfo(kind="http", message="boom", status=500, provider=P, raw="secret")

MIXES: dict[str, list[Event]] = {
    "text_reasoning_text": [text("a"), text("b"), reasoning(), reasoning(), text("c"), done()],
    "signatures_end_thinking_blocks": [
        reasoning("think"),
        reasoning(signature="sig-1"),
        reasoning("more"),
        reasoning("", signature="sig-2"),
        text("answer"),
        done(),
    ],
    "redacted_blocks": [
        reasoning("plain"),
        reasoning("", redacted=True),
        reasoning("", redacted=True),
        reasoning("", redacted=True),
        reasoning("seen"),
        reasoning("seen too"),
        text("x"),
        done(),
    ],
    "refusal_between_text": [
        text("a"),
        Refusal(provider=P, text="no"),
        Refusal(provider=P, text=" way"),
        text("b"),
        done(),
    ],
    "empty_deltas": [text(""), text("a"), text(""), reasoning(""), reasoning(""), done()],
    "tools": [
        text("let me look"),
        ToolStart(provider=P, call_id="c1", name="f", index=0),
        ToolStart(provider=P, call_id="c2", name="g", index=1),
        ToolRequest(provider=P, call_id="c1", name="f", index=0, arguments={"x": 1}),
        text("and more"),
        Failed(provider=P, error=ERROR),
    ],
    "server_tools_and_sources": [
        ServerToolResult(provider=P, call_id="s0", name="search", content=None),
        ServerToolCall(provider=P, call_id="s1", name="search", arguments={"q": "x"}),
        ServerToolResult(provider=P, call_id="s1", name="search", content={"hits": [1]}),
        text("found "),
        Citation(provider=P, url="https://a.example", title="A", cited_text="a"),
        text("it"),
        Citation(provider=P, url="https://b.example"),
        UsageUpdate(provider=P, usage=Usage.of(input_tokens=3, output_tokens=4)),
        done(),
    ],
    "retry_then_cancel": [
        Retry(provider=P, reason=ERROR, next_attempt=2, next_provider=P, dropped=["seed"]),
        text("a"),
        Cancelled(provider=P, attempt=2, reason="user"),
    ],
    "events_after_the_terminal": [text("a"), done(), text("late"), reasoning("late"), done()],
    "only_a_terminal": [done()],
}


@pytest.mark.parametrize("retries", [False, True])
@pytest.mark.parametrize("name", list(MIXES))
def test_hand_made_mixes(name: str, retries: bool) -> None:
    check_every_cut(MIXES[name], retries=retries)


@pytest.mark.parametrize("path", BODIES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_capture(path: Path) -> None:
    check_every_cut(outcome(path.read_bytes(), wire_of(path)))


@pytest.mark.parametrize("by_json", [False, True])
def test_split_surrogates(by_json: bool) -> None:
    """Half a character waits in the encoder for its pair, folded from the event or
    from the log's JSON (its escape, `dump_event`'s ASCII fallback)."""
    events: list[Event] = [
        text("smile \ud83d"),
        text("\ude00!"),
        text("\ud83d"),
        reasoning("r"),
        reasoning("\ud83e"),
        reasoning("\udd14"),
        text("\ud83d"),
        text("a\udc00b"),
        ToolRequest(provider=P, call_id="c", name="f", index=0, arguments={"k": "x\ud800"}),
        done(),
    ]
    check_every_cut(events, by_json=by_json)


_ids = st.sampled_from(["c1", "c2", "c3"])
# Halves of a surrogate pair too: a provider may split one across deltas.
_texts = st.sampled_from(
    ["", "a", "word ", "😀", '\\n"quoted"', "é", "\ud83d", "\ude00", "b\ud83d"]
)
_deltas = st.one_of(
    st.builds(TextDelta, provider=st.just(P), text=_texts),
    st.builds(
        ReasoningDelta,
        provider=st.just(P),
        text=_texts,
        signature=st.sampled_from([None, None, "sig"]),
        redacted=st.sampled_from([False, False, True]),
    ),
    st.builds(Refusal, provider=st.just(P), text=_texts),
)
_others = st.one_of(
    st.builds(ToolStart, provider=st.just(P), call_id=_ids, name=st.just("f"), index=st.just(0)),
    st.builds(
        ToolRequest,
        provider=st.just(P),
        call_id=_ids,
        name=st.just("f"),
        index=st.just(0),
        arguments=st.just({"x": 1}),
        signature=st.sampled_from([None, "s"]),
    ),
    st.builds(ServerToolCall, provider=st.just(P), call_id=_ids, name=st.just("search")),
    st.builds(ServerToolResult, provider=st.just(P), call_id=_ids, name=st.just("search")),
    st.builds(Citation, provider=st.just(P), url=st.just("https://x.example")),
    st.just(UsageUpdate(provider=P, usage=Usage.of(output_tokens=1))),
    st.just(Retry(provider=P, reason=ERROR, next_attempt=2, next_provider=P)),
)
_terminals = st.sampled_from(
    [done(), Failed(provider=P, error=ERROR), Cancelled(provider=P, reason="user")]
)
_turns = st.tuples(
    # Long enough that runs of deltas meet every kind of block change.
    st.lists(st.one_of(_deltas, _deltas, _deltas, _others), min_size=10, max_size=60),
    st.lists(_terminals, max_size=1),
    st.lists(_deltas, max_size=2),
).map(lambda parts: [*parts[0], *parts[1], *parts[2]])


@settings(max_examples=examples(100))
@given(_turns, st.booleans())
def test_random_turns(events: list[Event], retries: bool) -> None:
    check_every_cut(events, retries=retries)


async def _entries(events: Sequence[Event], first: int) -> AsyncIterator[tuple[str, Event]]:
    for i, event in enumerate(events[first:], first):
        yield entry_id(i), event


@pytest.mark.parametrize("cut", [0, 1, 5, 9])
async def test_ui_message_stream_continues_a_folded_encoder(cut: int) -> None:
    """The resume's shape: fold through the cursor, then stream the entries after it."""
    events = MIXES["server_tools_and_sources"]
    whole = b"".join([chunk async for chunk in ui_message_stream(_entries(events, 0))])
    encoder = UIMessageEncoder()
    encoder.fold_json(stored(events[:cut]))
    rest = ui_message_stream(_entries(events, cut), encoder=encoder)
    resumed = b"".join([chunk async for chunk in rest])
    if cut == 0:
        assert resumed == whole
    else:
        mark = whole.index(b"id: " + entry_id(cut - 1).encode())
        assert resumed == whole[whole.index(b"\n\n", mark) + 2 :]


def test_fold_json_reads_bytes_and_text_alike() -> None:
    events = MIXES["signatures_end_thinking_blocks"]
    from_bytes, from_text = UIMessageEncoder(), UIMessageEncoder()
    from_bytes.fold_json(stored(events))
    from_text.fold_json([event.model_dump_json() for event in events])
    assert state(from_bytes) == state(from_text)


def test_a_bad_entry_raises_as_validation_does() -> None:
    for bad in (b"not json", b'{"type": "text"}', b'{"type": "nope", "provider": "p"}'):
        with pytest.raises(ValidationError):
            UIMessageEncoder().fold_json([bad])
    opened = UIMessageEncoder()
    opened.fold_json(stored([text("a")]))
    with pytest.raises(ValidationError):  # not a string: no shortcut, full validation
        opened.fold_json([b'{"provider": "p", "type": "text", "text": 3}'])


async def test_a_source_that_loses_a_cancel_still_lets_the_response_end() -> None:
    """Python 3.11's `asyncio.wait_for` swallows a cancel that meets a finished send
    (redis-py sends so): the pump must still stop once the response has ended."""

    class Deaf:
        def __init__(self) -> None:
            self.calls = 0

        def __aiter__(self) -> Deaf:
            return self

        async def __anext__(self) -> Event:
            self.calls += 1
            if self.calls == 1:
                return text("a")
            with contextlib.suppress(asyncio.CancelledError):  # lost, as wait_for loses it
                await asyncio.sleep(3600)
            return text("b")

    source = Deaf()
    stream = ui_message_stream(source)
    async with asyncio.timeout(5):
        assert b"text-delta" in await anext(stream)
        await asyncio.sleep(0)  # the pump waits for its second item
        await stream.aclose()
    assert source.calls == 2  # it stopped at the item after the lost cancel
