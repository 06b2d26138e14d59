"""Properties of the byte-level reading, checked with hypothesis.

- Any split of any real capture (read by the provider its folder names) gives the
  same events as the whole body: pieces of one byte, cuts inside UTF-8 characters,
  between CR and LF, right after `data:`, with the capture's line ends rewritten to
  CRLF or CR and with a BOM in front.
- The SSE decoder against a model of the WHATWG rules: events generated abstractly,
  written with any line ends and comments, split anywhere, decode to exactly those
  events.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxllm.sources.sse import SseDecoder, SseEvent
from tests.hypothesis_support import BODIES, examples, needs_captures, outcome, wire_of

BOM = b"\xef\xbb\xbf"
LINE_ENDS = {"as recorded": None, "crlf": b"\r\n", "cr": b"\r", "lf": b"\n"}


def with_line_ends(data: bytes, end: bytes | None) -> bytes:
    if end is None:
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").replace(b"\n", end)


@functools.lru_cache(maxsize=8)
def awkward_cuts(data: bytes) -> list[int]:
    """Cut points where a careless reader breaks: inside a UTF-8 character, between
    CR and LF, right after a line end, and right after a field name's colon."""
    cuts: list[int] = []
    for i in range(1, len(data)):
        byte, before = data[i], data[i - 1]
        if (
            byte & 0xC0 == 0x80  # a continuation byte: the cut splits a character
            or before in (0x0A, 0x0D)  # after a line end, or between CR and LF
            or (before == 0x3A and data.endswith((b"data:", b"event:"), 0, i))
        ):
            cuts.append(i)
    return cuts


@st.composite
def splits(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """`data` in pieces: random cuts, awkward cuts, and a run of one-byte pieces."""
    size = len(data)
    cuts: set[int] = set(draw(st.lists(st.integers(0, size), max_size=40)))
    awkward = awkward_cuts(data)
    if awkward:
        cuts |= set(draw(st.lists(st.sampled_from(awkward), max_size=60)))
    if size and draw(st.booleans()):
        start = draw(st.integers(0, size - 1))
        width = draw(st.integers(1, 300))
        cuts |= set(range(start, min(size, start + width)))
    bounds = [0, *sorted(c for c in cuts if 0 < c < size), size]
    pieces = [data[a:b] for a, b in itertools.pairwise(bounds)]
    if draw(st.booleans()):  # empty network reads happen too
        pieces.insert(draw(st.integers(0, len(pieces))), b"")
    return pieces


@needs_captures
@pytest.mark.parametrize("path", BODIES, ids=lambda p: f"{p.parent.name}/{p.stem}")
@settings(max_examples=examples(8))
@given(data=st.data())
def test_any_split_of_a_capture_gives_the_events_of_the_whole(
    path: Path, data: st.DataObject
) -> None:
    provider = wire_of(path)
    body = path.read_bytes()
    whole = outcome(body, provider)
    ending = data.draw(st.sampled_from(sorted(LINE_ENDS)), label="line ends")
    variant = with_line_ends(body, LINE_ENDS[ending])
    if data.draw(st.booleans(), label="BOM"):
        variant = BOM + variant
    pieces = data.draw(splits(variant), label="pieces")
    assert b"".join(pieces) == variant
    assert outcome(pieces, provider) == whole


# A model of the event stream: what the decoder must hand out, and bytes that say it.
_FIELD_TEXT = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=20
)
_SSE_EVENTS = st.lists(
    st.tuples(
        st.lists(_FIELD_TEXT, min_size=1, max_size=3),  # data lines
        st.one_of(st.none(), _FIELD_TEXT.filter(lambda s: s != "")),  # event name
    ),
    max_size=8,
)


@st.composite
def sse_streams(draw: st.DrawFn) -> tuple[bytes, list[SseEvent]]:
    """Bytes of an event stream, and the events the WHATWG rules make of them."""
    events = draw(_SSE_EVENTS)
    ends = st.sampled_from([b"\n", b"\r\n", b"\r"])
    out = bytearray(BOM if draw(st.booleans()) else b"")
    expected: list[SseEvent] = []
    for data_lines, name in events:
        lines: list[bytes] = []
        if draw(st.booleans()):
            lines.append(b":" + draw(_FIELD_TEXT).encode())  # a comment
        if name is not None:
            lines.append(b"event: " + name.encode())
        for value in data_lines:
            space = b" " if draw(st.booleans()) or value.startswith(" ") else b""
            lines.append(b"data:" + space + value.encode())
        end = b""
        for line in lines:
            end = draw(ends)
            out += line + end
        # The blank line that dispatches (after a CR, a LF would only finish that CR).
        blank = [b"\r", b"\r\n"] if end == b"\r" else [b"\n", b"\r\n", b"\r"]
        out += draw(st.sampled_from(blank))
        expected.append(SseEvent("\n".join(data_lines), name or "message"))
    return bytes(out), expected


def decode(pieces: list[bytes]) -> list[SseEvent]:
    decoder = SseDecoder()
    out: list[SseEvent] = []
    for piece in pieces:
        out += decoder.feed(piece)
    return out + decoder.close()


@settings(max_examples=examples(300))
@given(stream=sse_streams(), data=st.data())
def test_the_sse_decoder_reads_what_the_spec_says_however_the_bytes_are_cut(
    stream: tuple[bytes, list[SseEvent]], data: st.DataObject
) -> None:
    body, expected = stream
    assert decode([body]) == expected
    pieces = data.draw(splits(body), label="pieces")
    assert decode(pieces) == expected
    assert decode([bytes([b]) for b in body]) == expected


@settings(max_examples=examples(300))
@given(stream=sse_streams())
def test_the_sse_decoder_reads_events_the_same_when_each_comes_in_a_read_of_its_own(
    stream: tuple[bytes, list[SseEvent]],
) -> None:
    """A paced server's reads end where its events do: the decoder's shortcut for a
    read of exactly one `data` line and its blank line gives what the lines give."""
    body, expected = stream
    reads = [part + b"\n\n" for part in body.split(b"\n\n")]
    reads[-1] = reads[-1][:-2]
    assert b"".join(reads) == body
    assert decode(reads) == expected
