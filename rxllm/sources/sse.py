"""Incremental Server-Sent Events decoder: bytes in, complete events out.

Follows the WHATWG event-stream rules (html.spec.whatwg.org, "Parsing an event
stream"): lines end in CRLF, LF or CR; a leading BOM is dropped; `:` starts a comment;
`data` lines join with `\\n`; a blank line dispatches; a field without a colon has an
empty value; one space after the colon is removed. Lines are split on bytes first and
decoded as UTF-8 afterwards, so a character split across network chunks is never
broken. It knows nothing of HTTP: `sources.http` and `sources.replay` feed it.

Two deliberate leniencies. A body that ends cleanly without its final line break or
blank line still delivers its last event (some servers, and many stored recordings,
omit them); a last `data:` line that is not whole JSON is a cut, which the reader
(`sources.raw.cut_short`) drops and reports as `truncated`. A connection cut mid-body
never reaches `close`: the source reports it.
And a field named `error`, which the spec would ignore, reads as `event: error` with its
value as a `data` line: llama.cpp's server wrote its mid-stream failures that way (see
`_line`), and an ignored failure would end the turn as a success. Every other unknown
field is ignored, as the spec says, and logged at debug (once per field name).
And an error object written into the body between events without SSE framing (Gemini
and Vertex end a `200 OK` stream with their error pretty-printed over several lines,
which google-genai reads, as lines without `data:` are JSON to it) reads as an
`event: error` frame: no SSE field starts with `{` or `[`. Its lines run to a blank
line, a line of a field the spec names, or the end of the body; any other JSON there is
ignored and logged, as before.
"""

from __future__ import annotations

import json
from typing import NamedTuple, TypeVar

from loguru import logger

from rxllm.secrets import redact_head

__all__ = ["DEFAULT_MAX_LINE_BYTES", "SseDecoder", "SseEvent", "SseLineTooLong", "utf8_size"]

# Large enough for a whole `response.completed` echo of a long answer; small enough
# that a body with no line breaks cannot eat the memory of a small service.
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"
# Bytes as ints, tested without a slice; and `b"\r" in chunk` first tries its operand
# as an int, raising and clearing an error inside: ten times the search (0.13 us).
_CR, _LF, _SPACE = 0x0D, 0x0A, 0x20
# A NamedTuple's constructor is a Python function (a frame per call: twice the cost of
# `tuple.__new__` with the fields): the fast path builds its event without it.
_new = tuple.__new__
# An ignored line is logged once per field name, for so many names per stream and so
# many characters: a body of made-up names (or of lines that are not SSE at all) must
# grow neither a set nor the log as long as itself.
_MAX_IGNORED_NAMES = 16
_LOGGED_CHARS = 200
# The fields the spec names, and llama.cpp's `error` (`SseDecoder._line`): a line of one
# ends a stray JSON value (`SseDecoder._stray`).
_FIELDS = frozenset({"data", "event", "id", "retry", "error"})


class SseEvent(NamedTuple):
    """One dispatched event (a NamedTuple: immutable and cheap to build, once per event)."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseLineTooLong(ValueError):
    """A line exceeded the decoder's cap: the body is not a sane event stream. `events`
    are those the same `feed` completed before that line, which still count (had the
    network split the bytes before the line, an earlier `feed` would have returned them)."""

    def __init__(self, message: str, events: list[SseEvent] | None = None) -> None:
        super().__init__(message)
        self.events = events if events is not None else []


class SseDecoder:
    """Feed bytes with `feed`, get the events they complete; call `close` at the end."""

    # One per stream in flight: slots, not an instance dict (and faster to read).
    __slots__ = (
        "_attempt",
        "_data",
        "_event",
        "_has_fields",
        "_ignored",
        "_last_id",
        "_pending",
        "_pending_size",
        "_provider",
        "_retry",
        "_secrets",
        "_skip_lf",
        "_started",
        "_stray",
        "_stray_size",
        "bytes",
        "comments",
        "events",
        "fields",
        "max_line_bytes",
    )

    def __init__(
        self,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        *,
        provider: str = "",
        attempt: int = 1,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.max_line_bytes = max_line_bytes
        # For the log of an ignored line only: a server may echo the request's headers.
        self._provider = provider
        self._attempt = attempt
        self._secrets = secrets
        self._ignored: set[str] | None = None  # field names logged as ignored
        self.events = 0
        self.comments = 0
        # `event`, `id` and `retry` lines read: SSE framing even where no event followed
        # (a body of `event:` lines alone was cut before its data)
        self.fields = 0
        self.bytes = 0
        # A line not yet ended, in the pieces it came in; no list until there is one
        # (most reads end their lines: a stream keeps none).
        self._pending: list[bytes] | tuple[()] = ()
        self._pending_size = 0
        self._started = False  # past the place where a BOM could be
        self._skip_lf = False  # the last chunk ended in CR: a LF next is the same line end
        self._data: list[str] | tuple[()] = ()  # the event's data lines, as `_pending`
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None
        self._has_fields = False
        self._stray: list[str] | None = None  # the lines of a JSON value outside framing
        self._stray_size = 0

    def one_data(self, chunk: bytes) -> str | None:
        """The data of `chunk` when it is the common read, one event of one `data` line
        with nothing pending (read, as `feed` reads it), else None with nothing read.
        The chunk reader's per-event path: no list, no `SseEvent`. The body's first read
        too: with nothing pending, a read that starts with `data:` has no BOM before it."""
        if (
            chunk.startswith(b"data:")
            and chunk.find(b"\n") == len(chunk) - 2
            and chunk[-1] == _LF
            and not self._pending
            and not self._has_fields
            and self._stray is None
            and not self._skip_lf
            and _CR not in chunk
            and len(chunk) <= self.max_line_bytes
        ):
            # What `feed`'s lines make of it, without splitting it into lines.
            self._started = True  # (past where a BOM could be: a store, not a test per read)
            self.bytes += len(chunk)
            self.events += 1
            value = chunk[6:-2] if chunk[5] == _SPACE else chunk[5:-2]
            return value.decode("utf-8", "replace")
        return None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        data = self.one_data(chunk)
        if data is not None:
            return [_new(SseEvent, (data, "message", self._last_id, self._retry))]
        self.bytes += len(chunk)
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == _LF:
                chunk = chunk[1:]
        if not self._started:
            head = b"".join(self._pending) + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._pending, self._pending_size = [head], len(head)
                return []
            self._started = True
            self._pending, self._pending_size = (), 0
            chunk = head[3:] if head.startswith(_BOM) else head
        if _LF not in chunk and _CR not in chunk:
            self._hold(chunk)
            return []
        if self._pending:
            chunk = b"".join(self._pending) + chunk
            self._pending, self._pending_size = (), 0
        if chunk[-1] == _CR:
            self._skip_lf = True
        if _CR in chunk:
            lines = chunk.splitlines(keepends=True)
            rest = b"" if lines[-1][-1] in b"\r\n" else lines.pop()
            text = b"".join(line.rstrip(b"\r\n") + b"\n" for line in lines).decode(
                "utf-8", "replace"
            )
        else:
            complete, _, rest = chunk.rpartition(b"\n")
            text = complete.decode("utf-8", "replace") + "\n"
        out: list[SseEvent] = []
        decoded = text[:-1].split("\n")
        if len(chunk) > self.max_line_bytes:
            self._check_lines(chunk, decoded, out)
        if rest:
            self._hold(rest)
        for line in decoded:
            self._line(line, out)
        return out

    def unended_line(self) -> bytes:
        """The last line fed so far that no line break has ended yet (b"" if none)."""
        return b"".join(self._pending) if self._started else b""

    def close(self, *, last_line: bool = True) -> list[SseEvent]:
        """End of body: its last line and last event count even without their line
        break and blank line. `last_line=False` drops an unended last line (its
        reader found it cut short); the event it belonged to still counts."""
        rest = b"".join(self._pending) if last_line else b""
        self._pending, self._pending_size = (), 0
        if not self._started and rest.startswith(_BOM):
            rest = rest[len(_BOM) :]
        out: list[SseEvent] = []
        if rest:
            self._line(rest.decode("utf-8", "replace"), out)
        if self._stray is not None:
            self._end_stray(out)
        if self._has_fields:
            self._dispatch(out)
        return out

    def _hold(self, piece: bytes) -> None:
        self._pending = _appended(self._pending, piece)
        self._pending_size += len(piece)
        if self._pending_size > self.max_line_bytes:
            raise SseLineTooLong(
                f"an SSE line exceeded max_line_bytes ({self.max_line_bytes}) without a "
                "line break: raise the provider option if the endpoint's lines are that long"
            )

    def _check_lines(self, chunk: bytes, lines: list[str], out: list[SseEvent]) -> None:
        """Raise at the first line of `chunk` (its `lines`, decoded, and an unended
        rest) past the cap, with the events of the lines before it."""
        # Measured as bytes, before decoding: an invalid byte decodes to U+FFFD, which
        # is three bytes long, and the line that was within the cap is not anymore.
        for at, line in enumerate(chunk.splitlines()):
            if len(line) > self.max_line_bytes:
                for before in lines[:at]:
                    self._line(before, out)
                raise SseLineTooLong(
                    f"an SSE line of {len(line)} bytes exceeded max_line_bytes "
                    f"({self.max_line_bytes})",
                    out,
                )

    def _line(self, line: str, out: list[SseEvent]) -> None:
        if self._stray is not None:
            if line and line[0] != ":" and line.partition(":")[0] not in _FIELDS:
                self._stray.append(line)
                self._stray_size += utf8_size(line)
                if self._stray_size > self.max_line_bytes:
                    raise SseLineTooLong(
                        f"a JSON value outside SSE framing exceeded max_line_bytes "
                        f"({self.max_line_bytes})",
                        out,
                    )
                return
            self._end_stray(out)
        if not line:
            self._dispatch(out)
            return
        if line[0] == ":":
            self.comments += 1
            return
        if line[0] in "{[" and not self._has_fields and (self.events or self.comments):
            # A JSON value between events, outside framing (the module docstring); at the
            # body's start it is the reader's (`sources.raw`: a body of JSON, no SSE).
            self._stray, self._stray_size = [line], utf8_size(line)
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        self._has_fields = True
        if name == "data":
            self._data = _appended(self._data, value)
        elif name == "event":
            self.fields += 1
            self._event = value
        elif name == "id":
            self.fields += 1
            if "\0" not in value:
                self._last_id = value
            else:
                self._ignore(name, value)
        elif name == "retry" and value.isascii() and value.isdigit():
            self.fields += 1
            self._retry = int(value)
        elif name == "error":
            # llama.cpp's server sent a failure after `200 OK` as `error: {"code": ...,
            # "message": ..., "type": ...}` (examples/server/server.cpp by 2024, then
            # tools/server/server.cpp's `server_sent_event(sink, "error", ...)`, until
            # ggml-org/llama.cpp#16109 of 2025-09 made it `data: {"error": ...}`). Read
            # as the `event: error` frame it means, so each wire's normalizer sees an
            # error frame; here, with the other unknown fields, no `data` line pays it.
            self._data = _appended(self._data, value)
            self._event = "error"
        else:
            self._ignore(name, value)

    def _end_stray(self, out: list[SseEvent]) -> None:
        """A stray JSON value ended: an error object (or a list of one, Gemini's array
        form) is an `event: error` frame, which each wire reads as its error; anything
        else is ignored, and logged, as its lines were before."""
        text = "\n".join(self._stray or ())
        self._stray, self._stray_size = None, 0
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None
        first = value[0] if isinstance(value, list) and value else value
        if isinstance(first, dict) and "error" in first:
            out.append(SseEvent(text, "error", self._last_id, self._retry))
            self.events += 1
        else:
            self._ignore("{", text)

    def _ignore(self, name: str, value: str) -> None:
        """A line the spec ignores (a field it does not know, `Data` too, a `retry`
        not all digits, an `id` with NUL): ignored, and logged at debug the first time
        its field name comes, since nothing a provider says goes unseen. What it
        quotes is redacted (a server may echo the request's `authorization: Bearer ...`
        header as a line), a line without a colon being all name."""
        ignored = self._ignored
        if ignored is None:
            ignored = self._ignored = set()
        seen = name[:_LOGGED_CHARS]
        if seen in ignored or len(ignored) >= _MAX_IGNORED_NAMES:
            return
        ignored.add(seen)
        secrets = self._secrets
        logger.bind(provider=self._provider, attempt=self._attempt).debug(
            "ignored an SSE line of field {!r}, as the event-stream format says: {!r}{}",
            redact_head(name, secrets, _LOGGED_CHARS),
            redact_head(value, secrets, _LOGGED_CHARS),
            " (further field names are not logged)"
            if len(ignored) == _MAX_IGNORED_NAMES
            else " (logged once per field name)",
        )

    def _dispatch(self, out: list[SseEvent]) -> None:
        self._has_fields = False
        if self._data:
            data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
            out.append(SseEvent(data, self._event or "message", self._last_id, self._retry))
            self.events += 1
        self._data = ()
        self._event = ""


_T = TypeVar("_T")


def _appended(items: list[_T] | tuple[()], item: _T) -> list[_T]:
    """`items` with `item` at its end: a list made at the first (a decoder keeps `()`
    while it holds no piece of a line, nor data line of an event)."""
    if items:
        items.append(item)
        return items
    return [item]


def utf8_size(text: str) -> int:
    """The bytes `text` takes in UTF-8, what a byte limit counts (a JSON value outside
    SSE framing is counted against max_line_bytes line by line, after decoding; a tool
    call's arguments against max_tool_argument_bytes). ASCII costs no encoding."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
