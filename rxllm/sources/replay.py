"""Recorded wire bytes as a source: the same decoder the HTTP source uses, fed from memory.

A recording is usually the SSE body as it arrived. Other shapes real recordings take
are read too, as the body they hold:

- gzip-compressed (a saved file, or a body kept as it came off the wire);
- an HTTP response dump (`curl -i`, a proxy's log): the status line and headers are
  set aside, chunked framing is undone, and a status that is not 2xx is that error;
- JSON instead of SSE: Gemini's `streamGenerateContent` without `alt=sse` answers one
  JSON array of its chunks, and recorders keep a stream as one JSON payload a line
  (NDJSON, as vercel/ai's `*.chunks.txt`): each object is replayed as one data event.

What cannot be a recording of a stream ends the replay in an error that says what it
is: an empty file, a whole response that was not streamed, Ollama's native NDJSON
API, rxllm's own record or events, bytes that are not SSE, a recording cut in the
middle of a line.

A turn that `rxllm stream --raw` kept holds each attempt's body in turn, with the
`retry` events that came between them as comment lines (`retry_marker`);
`bodies_of` reads them apart again.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import reactivex
from pydantic import BaseModel
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from rxllm.error_body import parse_error_body
from rxllm.events import ErrorKind, Failed, Retry, failed
from rxllm.fragments import RawChunk, SourceItem
from rxllm.sources.raw import ChunkReader, cut_short, whole_response
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "MAX_DECOMPRESSED_BYTES",
    "Body",
    "Recording",
    "ReplayData",
    "as_chunks",
    "bodies_of",
    "json_documents",
    "not_a_stream",
    "read_recording",
    "replay_source",
    "retry_marker",
]

ReplayData = bytes | str | Path | Iterable[bytes]

MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
"""The most a compressed recording may expand to: what a live response may send
(`max_response_bytes`' default), and no decompression bomb more."""

# How a str body begins (after an optional BOM): an SSE field or comment, or JSON.
_BODY_START = re.compile(r"\ufeff?\s*(?:(?:data|event|id|retry)?:|[\[{])")
_BOM = b"\xef\xbb\xbf"
_GZIP = b"\x1f\x8b"
_STATUS_LINE = re.compile(rb"HTTP/\d(?:\.\d)? (\d{3})\b")
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_JSON_SPACE = re.compile(r"[ \t\r\n]*")
# How much of a recording's start tells its shape (an HTTP head, gzip, JSON or SSE).
_START_BYTES = 64 * 1024
_OLLAMA_HINT = (
    "the recording is Ollama's native API stream (NDJSON of /api/chat or /api/generate), "
    "which rxllm does not speak: record Ollama's OpenAI-compatible endpoint instead "
    "(provider='ollama', base URL http://localhost:11434/v1)"
)
_LLAMA_CPP_HINT = (
    "the recording is llama.cpp's native /completion stream (`content` and `stop` per "
    "chunk), which rxllm does not speak: record llama-server's OpenAI-compatible "
    "endpoint instead (provider='llamacpp', base URL http://localhost:8080/v1)"
)


_RXLLM_RECORD = (
    "the recording is rxllm's record of a turn (a StreamRecord, as `rxllm stream --record` "
    "writes it), not a provider's stream: it holds what the turn came to, not its bytes "
    "(`StreamRecord.model_validate_json` reads it); replay the turn's `--raw` file"
)
_RXLLM_EVENTS = (
    "the recording is rxllm's own events (as `rxllm stream --json` prints them), not a "
    "provider's stream: they are normalized already "
    "(`rxllm.events.EventAdapter.validate_json` reads each line); replay the turn's "
    "`--raw` file"
)


def not_a_stream(first: dict[str, Any]) -> str | None:
    """Why a recording whose first JSON value is `first` holds no provider's stream
    (rxllm's own record or events, a whole response, a native API rxllm does not
    speak), or None."""
    if isinstance(first.get("terminal"), dict) and "attempts" in first:
        return _RXLLM_RECORD
    if isinstance(first.get("type"), str) and "provider" in first and "attempt" in first:
        return _RXLLM_EVENTS
    if isinstance(first.get("done"), bool) and ("message" in first or "response" in first):
        return _OLLAMA_HINT
    if isinstance(first.get("stop"), bool) and "content" in first:
        return _LLAMA_CPP_HINT
    what = whole_response(first)
    if what is not None:
        return (
            f"the recording is a whole response, not streamed ({what}): rxllm "
            "replays streamed bodies, record a request sent with streaming on"
        )
    return None


@dataclass(frozen=True)
class Recording:
    """A recording, unwrapped: the network chunks of its body (decompressed, without an
    HTTP head), the status and headers of a response dump, when it cannot be replayed,
    why (an error kind and message), and when its body is cut short (a gzip stream
    that stops before its end), why: said once what the body holds is played."""

    chunks: list[bytes]
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    problem: tuple[ErrorKind, str] | None = None
    cut: str | None = None


def read_recording(data: ReplayData, limit: int | None = None) -> Recording:
    """`data` as a recording (see the module). The chunks are the given ones for a
    plain body; a compressed body or a dump is read as one chunk, decompressed up to
    `limit` bytes (`MAX_DECOMPRESSED_BYTES`).

    Raises:
        FileNotFoundError: a str read as a path that names no file.
        IsADirectoryError: a str read as a path that names a directory.
        TypeError: data of another type.
    """
    limit = MAX_DECOMPRESSED_BYTES if limit is None else limit
    chunks = _given(data)
    start = _start_of(chunks)
    recording = Recording(chunks)
    if start.startswith(_GZIP):
        recording = _gunzip(b"".join(chunks), limit)
        if recording.problem is not None:
            return recording
        start = recording.chunks[0][:_START_BYTES]
    if _STATUS_LINE.match(start) is None:
        return recording
    dump = _response(b"".join(recording.chunks), limit)
    return dataclasses.replace(dump, cut=dump.cut or recording.cut)


_RETRY_MARKER = b": rxllm: retry "
# The marker as a line of its own (any line end: a file may have been converted).
_EOL = rb"(?:\r\n|\r|\n)"
_RETRY_LINE = re.compile(
    rb"(?:%s|^)%s(\{[^\r\n]*\})%s(?:%s|\Z)" % (_EOL, _RETRY_MARKER, _EOL, _EOL)
)


def retry_marker(retry: Retry) -> bytes:
    """The comment line `rxllm stream --raw` writes where a turn retried: the `retry`
    event as JSON. Its line end first ends a body cut in the middle of a line, and the
    blank line after it any event left open; `bodies_of` takes all three away again."""
    from rxllm.serving.event_json import dump_event  # here: only a retried turn needs it

    return b"\n" + _RETRY_MARKER + dump_event(retry).encode() + b"\n\n"


@dataclass(frozen=True)
class Body:
    """One attempt's body in a recording: the attempt's number, and the `retry`
    events the recording holds before it (the last one announced this attempt)."""

    recording: Recording
    number: int = 1
    retries: tuple[Retry, ...] = ()


def bodies_of(recording: Recording) -> list[Body]:
    """The bodies of `recording`, one per attempt, split where `retry_marker` lines
    are (a recording without them is one body, attempt 1). Each keeps the given
    chunking. Retries after the last body (the turn ended before another body came)
    make a last, empty body. A marker that is not a `retry` event, or that announces
    no later attempt than the one before it, is left in its body as the comment it is."""
    chunks = recording.chunks
    data = b"".join(chunks)  # one chunk (a file) is not copied
    if _RETRY_MARKER not in data or recording.problem is not None or recording.status:
        return [Body(recording)]  # no markers (and none in a response dump: no CLI writes one)
    from rxllm.serving.event_json import load_event

    ends = list(itertools.accumulate(map(len, chunks)))  # where each given chunk ended
    bodies: list[Body] = []
    number, retries, start = 1, list[Retry](), 0
    for match in _RETRY_LINE.finditer(data):
        try:
            retry = load_event(match[1])
        except ValueError:  # pydantic's ValidationError is one
            continue
        if not isinstance(retry, Retry) or retry.next_attempt <= number:
            continue
        if match.start() > start:  # the bytes since the last marker: a body
            body = Recording(_between(data, ends, start, match.start()))
            bodies.append(Body(body, number, tuple(retries)))
            retries = []
        retries.append(retry)
        number, start = retry.next_attempt, match.end()
    if not retries:  # markers in name only: the recording as it came
        return [Body(recording)]
    last = Recording(_between(data, ends, start, len(data)), cut=recording.cut)
    bodies.append(Body(last, number, tuple(retries)))
    return bodies


def _between(data: bytes, ends: list[int], start: int, end: int) -> list[bytes]:
    """`data[start:end]`, cut where the given chunks ended."""
    inside = ends[bisect.bisect_right(ends, start) : bisect.bisect_left(ends, end)]
    edges = [start, *inside, end]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def as_chunks(data: ReplayData) -> list[bytes]:
    """The body's chunks to replay (`read_recording(data).chunks`)."""
    return read_recording(data).chunks


def _given(data: ReplayData) -> list[bytes]:
    """The network chunks given: one for a whole body, the given ones for an iterable.
    A str is the body's text, unless it is one line that does not begin as SSE or JSON
    does (with a field such as `data:`, a `:` comment, `[` or `{`): that is a path."""
    if isinstance(data, Path):
        return [data.read_bytes()]
    if isinstance(data, str):
        if data and _BODY_START.match(data) is None and not any(end in data for end in "\r\n"):
            return [_read_path(data)]
        return [data.encode("utf-8")]
    if isinstance(data, bytes | bytearray | memoryview):
        return [bytes(data)]
    # a dict iterates as its keys, a pydantic model (a StreamRecord) as (field, value)
    if not isinstance(data, Iterable) or isinstance(data, Mapping | BaseModel):
        raise TypeError(
            "replay data must be bytes, str, a Path or an iterable of bytes, "
            f"got {type(data).__name__}"
        )
    chunks = list(data)
    for chunk in chunks:
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise TypeError(f"replay chunks must be bytes, got {type(chunk).__name__}")
    return [bytes(chunk) for chunk in chunks]


def _read_path(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise IsADirectoryError(
            f"replay: {path!r} is a directory: pass the path of a recording in it"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(
            f"replay: no file {path!r} (a one-line str that is not SSE is read as a "
            "path): pass a Path to the recording, or its bytes"
        ) from None


def _start_of(chunks: list[bytes]) -> bytes:
    start = bytearray()
    for chunk in chunks:
        start += chunk[: _START_BYTES - len(start)]
        if len(start) >= _START_BYTES:
            break
    return bytes(start)


def _gunzip(data: bytes, limit: int) -> Recording:
    """The decompressed body (every gzip member), at most `limit` bytes of it. A cut
    stream gives what it holds, and says it is cut: a body cut where its events end
    (or before any) would otherwise replay as a whole one (or as an empty file)."""
    out = bytearray()
    ended = True
    try:
        while data:
            inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            out += inflate.decompress(data, limit + 1 - len(out))
            if len(out) > limit:
                message = f"the gzip-compressed recording expands past {limit} bytes"
                return Recording([bytes(out[:limit])], problem=("limit", message))
            ended = inflate.eof
            data = inflate.unused_data if ended else b""
    except zlib.error as exc:
        message = f"the recording looks gzip-compressed but does not decompress: {exc}"
        return Recording([bytes(out)], problem=("protocol", message))
    if ended:
        return Recording([bytes(out)])
    where = f"{len(out)} bytes into its body" if out else "before any of its body"
    return Recording([bytes(out)], cut=f"the gzip-compressed recording is cut short, {where}")


def _response(dump: bytes, limit: int) -> Recording:
    """An HTTP response dump's body, status and headers (after any 1xx responses)."""
    status, headers = 0, dict[str, str]()
    while (line := _STATUS_LINE.match(dump)) is not None:
        end = _HEAD_END.search(dump)
        head, dump = (dump, b"") if end is None else (dump[: end.start()], dump[end.end() :])
        status = int(line[1])
        lines = head.decode("latin-1").splitlines()[1:]
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (h.partition(":") for h in lines)
        }
        if not 100 <= status < 200:
            break
    if "chunked" in headers.get("transfer-encoding", "").lower():
        dump = _dechunked(dump)
    if dump.startswith(_GZIP):  # Content-Encoding: gzip, kept as it came
        return dataclasses.replace(_gunzip(dump, limit), status=status, headers=headers)
    return Recording([dump], status, headers)


def _dechunked(body: bytes) -> bytes:
    """A chunked body's data; a body already de-chunked (`curl -i` keeps the header)
    is returned as it is, and a cut one as far as it goes."""
    parts: list[bytes] = []
    at = 0
    while (eol := body.find(b"\n", at)) >= 0:
        try:
            size = int(body[at:eol].split(b";")[0].strip(), 16)
        except ValueError:
            return body if at == 0 else b"".join(parts)
        if size == 0:
            break
        start = eol + 1
        parts.append(body[start : start + size])
        at = start + size
        at += 2 if body[at : at + 2] == b"\r\n" else 1
    return b"".join(parts)


def json_documents(
    text: str, most: int | None = None
) -> tuple[list[str], tuple[ErrorKind, str] | None]:
    """The texts of the JSON values of a body that is a JSON array or a sequence of
    JSON values (NDJSON), each as it was written, and why the JSON ends early, if it
    does (`truncated`: a cut; `protocol`: text that is not JSON). `most` stops after
    that many."""
    decoder = json.JSONDecoder()
    text = text.removeprefix("\ufeff")
    array = text.lstrip().startswith("[")
    at = text.index("[") + 1 if array else 0
    documents: list[str] = []
    while most is None or len(documents) < most:
        at = _skip_space(text, at)
        if at == len(text):
            return documents, _cut(documents, array) if array else None
        if array and text[at] == "]":
            return documents, None
        try:
            _, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            rest = text[at:].rstrip()
            if not rest.endswith("]") if array else "\n" not in rest:  # the last value
                return documents, _cut(documents, array)
            return documents, ("protocol", f"the recording's JSON breaks off: {rest[:60]!r}")
        documents.append(text[at:end])
        at = _skip_space(text, end)
        if array and text[at : at + 1] == ",":
            at += 1
    return documents, None


def _cut(documents: list[str], array: bool) -> tuple[ErrorKind, str]:
    whole = f"{len(documents)} whole value{'' if len(documents) == 1 else 's'} before the cut"
    return "truncated", f"the recording's JSON {'array ' if array else ''}is cut short: {whole}"


def _skip_space(text: str, at: int) -> int:
    """Where the JSON whitespace from `at` ends."""
    match = _JSON_SPACE.match(text, at)
    assert match is not None  # `*` matches the empty string too
    return match.end()


def replay_source(
    data: ReplayData | Recording,
    *,
    provider: str,
    attempt: int = 1,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Observable[SourceItem]:
    """A cold Observable that decodes `data` synchronously on each subscription,
    keeping the given chunking (a body, str or Path is read as one chunk)."""
    recording = data if isinstance(data, Recording) else read_recording(data)

    def subscribe(
        observer: abc.ObserverBase[SourceItem], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        problem = _Player(observer, provider, attempt, max_line_bytes).play(recording)
        if problem is not None:
            observer.on_next(problem)
        observer.on_completed()
        return Disposable()

    return reactivex.create(subscribe)


class _Player:
    """Plays one recording into a sink; returns the failure that ends it, if any."""

    __slots__ = ("attempt", "max_line_bytes", "provider", "sink")

    def __init__(
        self, sink: abc.ObserverBase[SourceItem], provider: str, attempt: int, max_line_bytes: int
    ) -> None:
        self.sink = sink
        self.provider = provider
        self.attempt = attempt
        self.max_line_bytes = max_line_bytes

    def play(self, recording: Recording) -> Failed | None:
        if recording.problem is not None:
            return self._failure(*recording.problem)
        status = recording.status
        if status is not None and not 200 <= status < 300:
            return self._http_error(status, recording)
        chunks = recording.chunks
        start = _start_of(chunks).removeprefix(_BOM).lstrip()
        if not start and sum(map(len, chunks)) <= _START_BYTES:
            why = recording.cut or "the recording is empty: nothing to replay"
            return self._failure("truncated", why)
        if start[:1] in (b"[", b"{"):
            failure = self._play_json(b"".join(chunks).decode("utf-8", "replace"))
        else:
            failure = self._play_sse(chunks)
        if failure is None and recording.cut is not None:
            return self._failure("truncated", recording.cut)
        return failure

    def _play_sse(self, chunks: list[bytes]) -> Failed | None:
        cut = _cut_line(chunks, self.max_line_bytes)
        reader = ChunkReader(self.sink, self.provider, self.attempt, self.max_line_bytes)
        for chunk in _without_tail(chunks, len(cut)):
            problem = reader.feed(chunk)
            if problem is not None:
                return problem
        problem = reader.close()
        if problem is None and cut:
            snippet = cut[:80].decode("utf-8", "replace")
            message = f"the recording is cut in the middle of its last line: {snippet!r}..."
            return self._failure("truncated", message)
        return problem

    def _play_json(self, text: str) -> Failed | None:
        documents, ends_early = json_documents(text)
        try:
            first = json.loads(documents[0]) if documents else None
        except RecursionError:  # read once by raw_decode, on a shallower stack
            first = None
        if documents and not isinstance(first, dict):
            return self._failure("protocol", "the recording is JSON, but not of JSON objects")
        if isinstance(first, dict) and (why := not_a_stream(first)) is not None:
            return self._failure("protocol", why)
        for document in documents:
            self.sink.on_next(RawChunk(self.provider, self.attempt, "message", document))
        if ends_early is not None:
            return self._failure(*ends_early)
        return None

    def _http_error(self, status: int, recording: Recording) -> Failed:
        text = b"".join(recording.chunks).decode("utf-8", "replace")
        body = parse_error_body(text)
        return failed(
            self.provider,
            "rejected" if 400 <= status < 500 else "http",
            f"HTTP {status}: {body.message.removeprefix(f'{status}: ')}",
            attempt=self.attempt,
            status=status,
            raw=text,
            **body.fields(recording.headers),
        )

    def _failure(self, kind: ErrorKind, message: str) -> Failed:
        return failed(self.provider, kind, message, attempt=self.attempt)


def _cut_line(chunks: list[bytes], max_line_bytes: int) -> bytes:
    """The recording's last line when it is a `data:` line cut short (no line end, and
    its value is not JSON), else b"". A last line that is whole but lacks its line end
    is kept: many recordings omit the final line break. A line past `max_line_bytes`
    is left to the decoder, which refuses it."""
    tail: list[bytes] = []
    size = 0
    for chunk in reversed(chunks):
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        tail.append(chunk[end + 1 :])
        size += len(tail[-1])
        if end >= 0 or size > max_line_bytes:
            break
    if size > max_line_bytes:
        return b""
    line = b"".join(reversed(tail))
    return line if cut_short(line) else b""


def _without_tail(chunks: list[bytes], size: int) -> list[bytes]:
    kept = list(chunks)
    while size:
        last = kept.pop()
        if len(last) > size:
            kept.append(last[:-size])
            break
        size -= len(last)
    return kept
