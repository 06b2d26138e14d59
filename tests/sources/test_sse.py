"""The SSE decoder against the WHATWG event-stream rules, fed in every chunking."""

from __future__ import annotations

import pytest

from rxllm.sources.sse import SseDecoder, SseEvent, SseLineTooLong
from tests.support import CAPTURES, log_messages, rechunk


def decode(*chunks: bytes, max_line_bytes: int = 1 << 20) -> list[SseEvent]:
    decoder = SseDecoder(max_line_bytes)
    events: list[SseEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events + decoder.close()


def every_split(data: bytes) -> list[list[SseEvent]]:
    """The events of `data` split once at every position, and byte by byte."""
    results = [decode(data[:i], data[i:]) for i in range(len(data) + 1)]
    results.append(decode(*[data[i : i + 1] for i in range(len(data))]))
    return results


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_all_three_line_endings(newline: bytes) -> None:
    body = newline.join([b"event: add", b"data: 1", b"", b"data: 2", b"", b""])
    expected = [SseEvent("1", "add"), SseEvent("2")]
    for events in every_split(body):
        assert events == expected


def test_mixed_line_endings_and_crlf_split_across_chunks() -> None:
    body = b"data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n"
    for events in every_split(body):
        assert [e.data for e in events] == ["a", "b", "c", "d"]


def test_comments_are_not_events() -> None:
    decoder = SseDecoder()
    events = decoder.feed(b": OPENROUTER PROCESSING\n\n: x\ndata: hi\n\n")
    assert events == [SseEvent("hi")] and decoder.comments == 2


def test_multi_line_data_joins_with_newlines() -> None:
    assert decode(b"data: one\ndata:two\ndata:  three\ndata\n\n") == [
        SseEvent("one\ntwo\n three\n")
    ]


def test_one_space_after_the_colon_is_removed_and_a_field_without_colon_is_empty() -> None:
    assert decode(b"data:x\n\ndata:  y\n\ndata\n\n") == [
        SseEvent("x"),
        SseEvent(" y"),
        SseEvent(""),
    ]


def test_id_and_retry_and_unknown_fields() -> None:
    events = decode(b"id: 7\nretry: 1500\nfoo: bar\ndata: a\n\nretry: x1\ndata: b\n\n")
    assert events == [SseEvent("a", "message", "7", 1500), SseEvent("b", "message", "7", 1500)]


def test_event_name_resets_after_dispatch() -> None:
    assert decode(b"event: error\ndata: 1\n\ndata: 2\n\n") == [
        SseEvent("1", "error"),
        SseEvent("2"),
    ]


def test_a_blank_line_without_data_dispatches_nothing() -> None:
    assert decode(b"event: ping\n\n\n\ndata: 1\n\n") == [SseEvent("1")]


def test_a_leading_bom_is_dropped_even_when_split() -> None:
    body = b"\xef\xbb\xbfdata: a\n\n"
    for events in every_split(body):
        assert events == [SseEvent("a")]
    assert decode(b"data: \xef\xbb\xbfa\n\n") == [SseEvent("\ufeffa")]  # only a leading one


def test_utf8_split_inside_a_character() -> None:
    body = "data: héllo 🌍 ok\n\n".encode()
    for events in every_split(body):
        assert events == [SseEvent("héllo 🌍 ok")]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert decode(b"data: a\xffb\n\n") == [SseEvent("a\ufffdb")]


def test_the_last_event_counts_without_its_final_line_break_or_blank_line() -> None:
    assert decode(b"data: a\n\ndata: b\n") == [SseEvent("a"), SseEvent("b")]
    assert decode(b"data: a\n\ndata: [DONE]") == [SseEvent("a"), SseEvent("[DONE]")]
    assert decode(b"data: a\r") == [SseEvent("a")]
    assert decode(b"\xef\xbb") == [] and decode(b": only a comment") == []


def test_line_cap_gives_a_clear_error_whether_or_not_the_line_ends() -> None:
    with pytest.raises(SseLineTooLong, match=r"max_line_bytes \(100\)"):
        decode(b"data: " + b"x" * 200, max_line_bytes=100)
    with pytest.raises(SseLineTooLong, match="exceeded"):
        decode(b"data: " + b"x" * 200 + b"\n\n", max_line_bytes=100)
    with pytest.raises(SseLineTooLong):
        decode(*[b"x" * 10] * 20, max_line_bytes=100)  # the cap holds across chunks


def test_long_lines_under_the_cap_arrive_in_many_pieces() -> None:
    payload = "y" * 600_000  # longer than aiohttp's 512 KiB readline limit
    body = f"data: {payload}\n\n".encode()
    assert decode(*rechunk(body, seed=1, max_size=4096)) == [SseEvent(payload)]


def test_every_capture_decodes_the_same_in_any_chunking() -> None:
    for path in sorted(CAPTURES.glob("*/*.sse")):
        body = path.read_bytes()
        whole = decode(body)
        assert whole, path
        for seed in range(3):
            assert decode(*rechunk(body, seed, max_size=7)) == whole, (path, seed)


def test_a_read_of_one_data_line_decodes_as_its_lines_do() -> None:
    """The decoder's shortcut for `data: ...\\n\\n` in a read of its own, beside
    what the general path makes of the same bytes cut in two."""
    reads = [
        b": keepalive\n\n",
        b"id: 7\nretry: 10\n\n",  # kept for the events after
        b'data: {"a": 1}\n\n',
        b"data:no space\n\n",
        b"data:  two spaces\n\n",
        b"data: \n\n",
        b"data: caf\xc3\n\n",  # a character cut short: replaced, not raised
        b"event: named\n\n",  # a field without data: nothing to dispatch
        b"data: after a CR\r",
        b"\n\n",
        b"data: x\r\n\r\n",
    ]
    shortcut, general = SseDecoder(), SseDecoder()
    got = [event for read in reads for event in shortcut.feed(read)]
    cut = [event for read in reads for half in (read[:1], read[1:]) for event in general.feed(half)]
    assert got == cut
    assert [(e.data, e.id, e.retry) for e in got] == [
        ('{"a": 1}', "7", 10),
        ("no space", "7", 10),
        (" two spaces", "7", 10),
        ("", "7", 10),
        ("caf\ufffd", "7", 10),
        ("after a CR", "7", 10),
        ("x", "7", 10),
    ]
    assert shortcut.events == general.events == 7
    assert shortcut.bytes == general.bytes == sum(map(len, reads))


# -- a JSON value written between events without framing ---------------------------------

GEMINI_ERROR = b'{\n  "error": {\n    "code": 429,\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n'


def test_an_error_object_written_between_events_is_an_error_frame() -> None:
    """Gemini and Vertex end a `200 OK` stream with their error object pretty-printed
    into the body, without `data:` (google-genai reads lines without it as JSON). Before,
    its lines were ignored as unknown fields and the turn read as truncated."""
    text = GEMINI_ERROR.decode().rstrip("\n")
    for body in (b"data: 1\n\n" + GEMINI_ERROR, b": keepalive\n" + GEMINI_ERROR):
        for events in every_split(body):
            assert events[-1] == SseEvent(text, "error")
    listed = b"data: 1\n\n[" + GEMINI_ERROR.rstrip(b"\n") + b"]\n"
    assert decode(listed)[-1].event == "error"


def test_a_stray_value_ends_at_a_field_a_blank_line_or_the_end() -> None:
    """The lines of a field the spec names, and a blank line, are the stream again: a
    stray value never swallows the events after it."""
    one_line = b'data: 1\n\n{"error": "busy"}\ndata: 2\n\n'
    for events in every_split(one_line):
        assert events == [SseEvent("1"), SseEvent('{"error": "busy"}', "error"), SseEvent("2")]
    blank = b'data: 1\n\n{"error": "busy"}\n\ndata: 2\n\n'
    assert [e.data for e in decode(blank)] == ["1", '{"error": "busy"}', "2"]
    # llama.cpp's `error:` field ends it too (a review found it swallowed)
    llama = b'data: 1\n\n{"note": 1}\nerror: {"message": "boom"}\n\n'
    assert decode(llama)[-1] == SseEvent('{"message": "boom"}', "error")


def test_other_stray_json_is_ignored_and_said() -> None:
    """JSON that is no error object, or no JSON, is ignored as its lines were before, and
    logged; at the body's start a JSON value is the reader's (a body of JSON, no SSE)."""
    with log_messages() as messages:
        assert decode(b'data: 1\n\n{"candidates": []}\n[1, 2\ndata: 2\n\n') == [
            SseEvent("1"),
            SseEvent("2"),
        ]
    assert any("candidates" in m for m in messages), messages
    assert decode(b'{"error": "at the start"}\n\ndata: 1\n\n') == [SseEvent("1")]


def test_a_stray_value_longer_than_the_line_cap_is_refused() -> None:
    """Its lines count together against `max_line_bytes`: a body of short lines that never
    ends its value cannot grow the buffer without bound."""
    body = b"data: 1\n\n{\n" + b'  "k": 1,\n' * 200
    with pytest.raises(SseLineTooLong, match="outside SSE framing"):
        decode(body, max_line_bytes=1000)


def test_a_stray_value_is_counted_in_bytes_not_characters() -> None:
    """Found by a review of the hostile network: the stray value's lines were counted
    after decoding, so 480 bytes of non-ASCII text (210 characters) passed a cap of 400
    that the same bytes of ASCII did not."""
    wide = "\u00e9\u4e2d"  # 2 and 3 bytes in UTF-8
    line = b'  "m": "' + (wide * 30).encode() + b'",\n'  # 160 bytes, 70 characters
    body = b"data: 1\n\n{\n" + line * 3 + b"}\n\n"
    with pytest.raises(SseLineTooLong, match="outside SSE framing"):
        decode(body, max_line_bytes=400)
    assert decode(body, max_line_bytes=600)[0] == SseEvent("1")  # within the cap: read
