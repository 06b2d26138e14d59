"""dedupe_overlap: drop text a provider or proxy sends twice when it resumes mid-stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from loguru import logger
from reactivex import Observable, abc

from rxllm.events import TextDelta
from rxllm.operators._args import check_count
from rxllm.operators._link import Operator, link

__all__ = ["MIN_OVERLAP", "OVERLAP_WINDOW", "dedupe_overlap", "longest_overlap"]

_T = TypeVar("_T")
"""Whatever the stream carries (events, or the pipeline's fragments). The text it emits
is cut from text that came in, so it is one of `_T` too (hence the casts)."""

# Some providers and proxies resend the tail of the text they already sent when they
# resume or retry mid-stream. The numbers are the design's "Overlap removal" rule
# (DESIGN.md): a repeat shorter than 8 characters is too likely to be the answer's own
# words ("ha ha ", "1, 2, ") to cut, and a resend reaches back at most 4096 characters,
# which bounds both the tail kept per stream and the work per chunk.
MIN_OVERLAP = 8
OVERLAP_WINDOW = 4096


def dedupe_overlap(
    min_overlap: int = MIN_OVERLAP, window: int = OVERLAP_WINDOW
) -> Callable[[Observable[_T]], Observable[_T]]:
    """Drop the prefix of a text chunk that repeats the tail of the text already emitted.

    ::

        source:  -t("Hello wor")-t("llo world!")-done-|
        dedupe_overlap(min_overlap=3)
        result:  -t("Hello wor")-t("ld!")--------done-|

    The longest prefix of the chunk (at least `min_overlap` characters) that equals a
    suffix of the last `window` characters emitted is cut; a chunk that is entirely a
    repeat emits nothing. Every other item passes through unchanged and in order. The
    tail is kept per subscription, so a retry starts clean. Each chunk costs
    O(min(len(chunk), window)); the history is never rescanned.

    It cannot tell a resend from an answer that repeats itself, and cuts both: JSON
    streamed as `{"v": [0, 0, 0`, `, 0, 0, 0, 0, 0`, `, 0, 0, 0, 0, 0]}` comes out
    as `{"v": [0, 0, 0, 0, 0, 0, 0, 0]}`, still valid, 8 elements of 13. Do not use
    it on JSON or other structured output; only on prose from a source known to resend.

    Args:
        min_overlap: the shortest repeat that is cut (shorter ones are kept as text).
        window: how many emitted characters a repeat may reach back into.

    Returns:
        An operator on events (`Observable[Event]`) or on the pipeline's fragments:
        every item that is not text passes through as it is.

    Raises:
        TypeError, ValueError: a bound that is not an `int`, a `min_overlap` below 1,
            or a `window` shorter than `min_overlap`.
    """
    check_count("min_overlap", min_overlap, 1)
    check_count("window", window, 1)
    if window < min_overlap:
        raise ValueError(f"window ({window}) must be at least min_overlap ({min_overlap})")

    def _dedupe_overlap(source: Observable[_T]) -> Observable[_T]:
        def subscribe(
            observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            tail = ""  # the last `window` characters emitted

            def on_next(item: _T) -> None:
                nonlocal tail
                if not isinstance(item, TextDelta):
                    observer.on_next(item)
                    return
                delta: TextDelta = item
                text = delta.text
                cut = longest_overlap(tail, text, min_overlap)
                if cut:
                    logger.bind(provider=delta.provider, attempt=delta.attempt).debug(
                        "dropped {} characters of text repeated from earlier in the stream", cut
                    )
                    text = text[cut:]
                    if not text:
                        return
                    delta = TextDelta.make(
                        provider=delta.provider, attempt=delta.attempt, text=text, phase=delta.phase
                    )
                tail = (tail + text)[-window:]
                observer.on_next(cast(_T, delta))

            return link(source, on_next, observer.on_error, observer.on_completed, scheduler)

        return Operator(subscribe)

    return _dedupe_overlap


def longest_overlap(tail: str, chunk: str, min_overlap: int = MIN_OVERLAP) -> int:
    """The length of the longest prefix of `chunk` that is also a suffix of `tail`, if it
    is at least `min_overlap` characters long; else 0.

    Linear in `min(len(tail), len(chunk))`: a substring test (in C) rules out almost
    every chunk, and the rest run Knuth-Morris-Pratt of the chunk over the tail.
    """
    size = min(len(tail), len(chunk))
    if size < min_overlap:
        return 0
    pattern, text = chunk[:size], tail[-size:]
    if pattern[:min_overlap] not in text:
        return 0
    # failure[i]: the length of the longest proper border of pattern[: i + 1].
    failure = [0] * size
    k = 0
    for i in range(1, size):
        while k and pattern[i] != pattern[k]:
            k = failure[k - 1]
        if pattern[i] == pattern[k]:
            k += 1
        failure[i] = k
    # Match the pattern along the text; the state at the end is the longest prefix of
    # the pattern that ends there, i.e. the longest suffix of the tail it starts with.
    k = 0
    for char in text:
        while k and (k == size or char != pattern[k]):
            k = failure[k - 1]
        if char == pattern[k]:
            k += 1
    return k if k >= min_overlap else 0
