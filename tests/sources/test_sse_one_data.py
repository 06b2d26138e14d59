"""The common read (one event of one `data` line, nothing pending), which the chunk
reader takes without the decoder's list and `SseEvent`: the same chunks as the general
path makes of the same bytes."""

from __future__ import annotations

import gc
from typing import Any

from rxllm.fragments import RawChunk
from rxllm.sources.raw import ChunkReader
from rxllm.sources.sse import SseDecoder

READS = [
    b'data: {"first": 0}\n\n',  # before the body showed itself SSE: the general path
    b": keepalive\n\n",
    b"id: 7\nretry: 10\n\n",
    b'data: {"a": 1}\n\n',
    b"data:no space\n\n",
    b"data:  two spaces\n\n",
    b"data: \n\n",
    b"data: caf\xc3\n\n",  # a character cut short: replaced, not raised
    b"event: named\n",  # pending: the next read's data is a named event's
    b"data: named\n\n",
    b"data: after a CR\r",
    b"\n\n",
    b"data: x\r\n\r\n",
    b"data: one\ndata: two\n\n",
    b"data: two events\n\ndata: in one read\n\n",
    b"data: cut",
    b" in two\n\n",
]


class Sink:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def on_next(self, item: Any) -> None:
        self.items.append(item)

    def on_error(self, error: Exception) -> None:
        raise error

    def on_completed(self) -> None:
        pass


def test_one_data_reads_the_common_read_and_leaves_any_other() -> None:
    decoder = SseDecoder()
    decoder.feed(READS[0])  # past the place where a BOM could be
    assert decoder.one_data(b'data: {"a": 1}\n\n') == '{"a": 1}'
    assert decoder.one_data(b"data:no space\n\n") == "no space"
    assert decoder.one_data(b"data: caf\xc3\n\n") == "caf\ufffd"
    assert (decoder.events, decoder.bytes) == (4, len(READS[0]) + 16 + 15 + 12)
    for other in (
        b": keepalive\n\n",
        b"data: one\ndata: two\n\n",
        b"data: x\r\n\r\n",
        b"data: cut",
    ):
        assert decoder.one_data(other) is None
    assert (decoder.events, decoder.bytes) == (4, len(READS[0]) + 16 + 15 + 12)  # none read
    decoder.feed(b"event: named\n")
    assert decoder.one_data(b"data: named\n\n") is None  # a field pending: not the common read
    assert [e.event for e in decoder.feed(b"data: named\n\n")] == ["named"]


def test_the_chunk_readers_reads_are_the_decoders_events() -> None:
    sink = Sink()
    reader = ChunkReader(sink, "p", 2)
    for read in READS:
        assert reader.feed(read) is None
    assert reader.close() is None
    general = SseDecoder()
    events = [e for read in READS for half in (read[:1], read[1:]) for e in general.feed(half)]
    events += general.close()
    assert sink.items == [RawChunk("p", 2, e.event, e.data) for e in events]
    assert [type(item) for item in sink.items] == [RawChunk] * len(events)
    assert [item.data for item in sink.items][-5:] == [
        "x",
        "one\ntwo",
        "two events",
        "in one read",
        "cut in two",
    ]
    assert sink.items[6] == RawChunk("p", 2, "named", "named")


def _lists(decoder: SseDecoder) -> int:
    return sum(1 for o in gc.get_referents(decoder) if type(o) is list)


def test_a_decoder_between_events_holds_no_list() -> None:
    """A line not yet ended and an event's data lines are lists only while there are
    some: a stream that waits between whole events keeps none (one per stream, per
    list, at a thousand streams)."""
    decoder = SseDecoder()
    unended = (b"data: after a CR\r", b"data: cut")  # an event, a line, not yet ended
    for read in READS:
        decoder.feed(read)
        assert _lists(decoder) == (read in unended), read
    decoder.feed(b"data: one\n")
    assert _lists(decoder) == 1  # the event's first data line, until its blank line
    assert [event.data for event in decoder.feed(b"data: two\n\n")] == ["one\ntwo"]
    assert _lists(decoder) == 0


def test_the_bodys_first_read_is_the_common_read_when_no_bom_can_start_it() -> None:
    """A body's first read that starts with `data:` is read as any other common read:
    no BOM is before it. One that starts with a BOM, whole or cut, is `feed`'s, which
    drops it; after the body's start a BOM is a character of the line, as the SSE
    rules say (that line's field, `\ufeffdata`, is none: ignored)."""
    first = SseDecoder()
    assert first.one_data(b'data: {"a": 1}\n\n') == '{"a": 1}'
    assert first.feed(b"\xef\xbb\xbfdata: x\n\n") == []
    for reads in ([b"\xef\xbb\xbfdata: x\n\n"], [b"\xef\xbb", b"\xbfdata: x\n\n"]):
        decoder = SseDecoder()
        assert decoder.one_data(reads[-1]) is None
        assert [event.data for read in reads for event in decoder.feed(read)] == ["x"]
    sink = Sink()
    reader = ChunkReader(sink, "p")
    assert reader.feed(b"data: one\n\n") is None
    assert reader.close() is None  # an SSE stream: no "not an SSE stream"
    assert [item.data for item in sink.items] == ["one"]
