"""Recorded wire bytes as a source: the same decoder the HTTP source uses, fed from memory."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import reactivex
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from rxllm.fragments import SourceItem
from rxllm.sources.raw import ChunkReader
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

__all__ = ["ReplayData", "as_chunks", "replay_source"]

ReplayData = bytes | str | Path | Iterable[bytes]

# How an SSE body's first line begins (after an optional BOM): a field or a comment.
_SSE_START = re.compile(r"\ufeff?(?:data|event|id|retry)?:")


def as_chunks(data: ReplayData) -> list[bytes]:
    """The network chunks to replay: one for a whole body, the given ones for an iterable.

    A str is the body's text, unless it is one line that does not begin as SSE does
    (with a field such as `data:`, or a `:` comment): that is a file's path.

    Raises:
        FileNotFoundError: a str read as a path that names no file.
    """
    if isinstance(data, Path):
        return [data.read_bytes()]
    if isinstance(data, str):
        if data and _SSE_START.match(data) is None and not any(end in data for end in "\r\n"):
            return [_read_path(data)]
        return [data.encode("utf-8")]
    if isinstance(data, bytes | bytearray | memoryview):
        return [bytes(data)]
    if not isinstance(data, Iterable):
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
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise FileNotFoundError(
            f"replay: no file {path!r} (a one-line str that is not SSE is read as a "
            "path): pass a Path to the recording, or its bytes"
        ) from None


def replay_source(
    data: ReplayData,
    *,
    provider: str,
    attempt: int = 1,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Observable[SourceItem]:
    """A cold Observable that decodes `data` synchronously on each subscription,
    keeping the given chunking (a body, str or Path is read as one chunk)."""
    chunks = as_chunks(data)

    def subscribe(
        observer: abc.ObserverBase[SourceItem], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        reader = ChunkReader(observer, provider, attempt, max_line_bytes)
        for chunk in chunks:
            problem = reader.feed(chunk)
            if problem is not None:
                observer.on_next(problem)
                break
        else:
            problem = reader.close()
            if problem is not None:
                observer.on_next(problem)
        observer.on_completed()
        return Disposable()

    return reactivex.create(subscribe)
