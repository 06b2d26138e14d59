"""normalize: raw chunks -> fragments, through one provider normalizer per subscription."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import cast

from loguru import logger
from reactivex import Observable, abc

from rxllm.error_body import request_id_of
from rxllm.events import (
    Cancelled,
    Citation,
    Done,
    Failed,
    ReasoningDelta,
    Refusal,
    ServerToolCall,
    ServerToolResult,
    TextDelta,
    UsageUpdate,
    failed,
    unterminated,
)
from rxllm.fragments import (
    ChunkNormalizer,
    Emit,
    Fragment,
    RawChunk,
    ResponseHeaders,
    SourceItem,
    closing,
    hanging_up,
    has_half,
    is_high_half,
    whole_characters,
    whole_value,
)
from rxllm.operators._args import check_callable
from rxllm.operators._link import Link, Operator
from rxllm.secrets import redact, redact_head

__all__ = ["normalize"]

# Source failures that cut the body short: the normalizer may already know the turn
# was complete (a finish reason seen, the usage or `[DONE]` still to come).
_CUT_OFF = frozenset({"truncated", "transport", "stalled"})

# What a normalizer raises on a chunk it cannot read: a shape it did not expect, JSON
# nested past the parser's recursion limit, or a JSON integer past any float (`float()`).
_UNREADABLE = (
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    RecursionError,
    OverflowError,
)

# How much of an unparseable chunk an error quotes back.
_QUOTE_CHARS = 200

# The fragments that say text.
_SAID = frozenset({TextDelta, ReasoningDelta, Refusal})
_Said = TextDelta | ReasoningDelta | Refusal
# The events whose other fields hold what a provider said (a title, a tool's input and
# result): each is mended whole, as it comes.
_SAID_ELSEWHERE = frozenset({Citation, ServerToolCall, ServerToolResult})
_NOT_SAID = frozenset({"type", "provider", "attempt"})


def normalize(
    make_normalizer: Callable[[Emit], ChunkNormalizer],
) -> Callable[[Observable[SourceItem]], Observable[Fragment]]:
    """Feed each raw chunk to a fresh normalizer and emit the fragments it produces.
    Each subscription's normalizer is made when its source first says something (the
    response's headers, a chunk, a failure, its end), not at subscription.

    ::

        source:  -c1--c2--[DONE]-|
        normalize(openai)
        result:  -t---t---done---|

    A chunk the normalizer cannot read (not JSON, or not the expected shape) ends the
    stream with `error(kind="protocol")` quoting it; a `Failed` from the source passes
    through; the end of the source lets the normalizer decide what the end means, and
    so does a connection that fails mid-body: after the provider's completion signal
    (a finish reason whose usage or `[DONE]` had not come yet), the turn is done, with
    what it had, not truncated. A body that ends with no terminal fragment at all ends
    the attempt with `error(kind="truncated")`, naming it.

    Text, reasoning and a refusal are Unicode a UTF-8 writer takes, however the
    provider cut them: a character whose UTF-16 halves came in two deltas of one kind
    (JSON escapes each half) is one character, and a half with no other is U+FFFD, as it
    is in a citation's or a provider-run tool's fields. Only a chunk pydantic-core's
    parser refused can hold a lone half (`halves_possible`): other streams pay nothing.

    The response's headers (a `ResponseHeaders` item, before the first chunk) are kept,
    not emitted: an error in the body names the request id from them, and so does an
    operator downstream that hangs up on the stream (`fragments.hang_up`: a deadline).

    Only the provider's code is guarded, as RxPY guards only a user's mapper: an
    exception raised downstream while a fragment is emitted (a consumer's `on_next`, an
    operator it composed) is never blamed on the provider. It propagates to the source,
    which reports it with `on_error` and closes the response; at the end of the source,
    where nothing upstream is left to report it, it goes to `on_error` here.

    Args:
        make_normalizer: builds the normalizer, given where to emit.

    Raises:
        TypeError: `make_normalizer` is not callable.
    """
    check_callable("make_normalizer", make_normalizer)

    def _normalize(source: Observable[SourceItem]) -> Observable[Fragment]:
        def subscribe(
            observer: abc.ObserverBase[Fragment], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            return _Feeding(observer, make_normalizer).link_to(source, scheduler)

        return Operator(subscribe)

    return _normalize


class _Feeding(Link[SourceItem]):
    """One subscription: its normalizer, whether an emit raised downstream, and its
    upstream, whose disposal says which response closed (`fragments.hang_up`)."""

    __slots__ = (
        "_downstream_raised",
        "_high_halves",
        "_make_normalizer",
        "_normalizer",
        "_observer",
    )

    def __init__(
        self,
        observer: abc.ObserverBase[Fragment],
        make_normalizer: Callable[[Emit], ChunkNormalizer],
    ) -> None:
        super().__init__()
        self._observer = observer
        self._downstream_raised = False  # an emit raised: the exception is not the provider's
        # The normalizer is made at the first item (`_made`), not here: at a thousand
        # streams started at once, work done before a stream's request is sent delays
        # every stream's first text (benchmarks/README.md, the twenty-fifth round).
        self._make_normalizer: Callable[[Emit], ChunkNormalizer] | None = make_normalizer
        self._normalizer: ChunkNormalizer | None = None
        # The fragment of each kind of text whose last character is the high half of a
        # UTF-16 pair, waiting for the next of its kind (`_paired`): made at the first
        # such text, since only a stream that may hold lone halves has one.
        self._high_halves: dict[type, _Said] | None = None

    def _emit(self, fragment: Fragment) -> None:
        # A lone UTF-16 half can only come from a chunk pydantic-core's parser refused
        # (`halves_possible`): no other stream pays a check per fragment.
        if self._normalizer.halves_possible:  # type: ignore[union-attr]  # it is emitting
            whole = self._whole(fragment)
            if whole is None:
                return
            fragment = whole
        try:  # free unless something raises (zero-cost exceptions, Python 3.11)
            self._observer.on_next(fragment)  # looked up each time: see `Operator`
        except Exception:
            self._downstream_raised = True
            raise

    def _whole(self, fragment: Fragment) -> Fragment | None:
        """The fragment with whole characters, once the stream may have sent a lone
        UTF-16 half: a text's joined with the half before it (`_paired`), the fields of
        a citation or a provider-run tool's each U+FFFD for a lone half (a next turn
        sends them back, and no UTF-8 writer takes one)."""
        kind = type(fragment)
        if kind in _SAID_ELSEWHERE:
            said = fragment.__dict__
            mended = {
                name: whole
                for name, value in said.items()
                if name not in _NOT_SAID and (whole := whole_value(value)) != value
            }
            if mended:
                fragment = fragment.model_copy(update=mended)  # type: ignore[union-attr]
        if self._high_halves or (
            kind in _SAID
            and not (text := fragment.text).isascii()  # type: ignore[union-attr]
            and has_half(text) is not None
        ):
            return self._paired(fragment, kind)
        return fragment

    def _paired(self, fragment: Fragment, kind: type) -> Fragment | None:
        """A text (or reasoning, or refusal) with the high half the one of its kind before
        it ended in, its pairs joined into their characters, or None while all it holds
        is a high half, which waits for the next of its kind. A half that has no other is
        U+FFFD, as a byte UTF-8 cannot decode is in the stream: one still waiting when
        anything else comes is said before it, but at a failure, which drops it with its
        attempt (it reached no one). A usage update ends no text: a half waits past it
        (vLLM's continuous usage stats put one between any two deltas). Reasoning that
        closes its block (a signature, its details) keeps no half back: nothing of that
        block comes after it."""
        if kind is UsageUpdate:
            return fragment
        halves = self._high_halves
        if halves is None:
            halves = self._high_halves = {}
        held = halves.pop(kind) if kind in halves else None
        if halves:  # the halves of other kinds: the next of their kind did not come
            others = list(halves.values())
            halves.clear()
            if kind is not Failed and kind is not Cancelled:
                for other in others:
                    self._emit(other.model_copy(update={"text": "\ufffd"}))
        if kind not in _SAID:
            return fragment
        said = cast(_Said, fragment)
        text = said.text if held is None else held.text + said.text
        if has_half(text) is None:
            return said if held is None else said.model_copy(update={"text": text})
        closes = kind is ReasoningDelta and (
            cast(ReasoningDelta, said).signature is not None
            or cast(ReasoningDelta, said).details is not None
        )
        if is_high_half(text[-1]) and not closes:
            halves[kind] = said.model_copy(update={"text": text[-1]})
            text = text[:-1]
            if not text:
                return None
        return said.model_copy(update={"text": whole_characters(text)})

    def _made(self) -> ChunkNormalizer:
        normalizer = self._normalizer
        if normalizer is None:
            make, self._make_normalizer = self._make_normalizer, None  # needed once
            assert make is not None
            normalizer = self._normalizer = make(self._emit)
        return normalizer

    def _next(self, item: SourceItem) -> None:
        normalizer = self._normalizer
        if normalizer is None:  # (`_made`'s test, inline: this runs per chunk)
            normalizer = self._made()
        if type(item) is not RawChunk:
            if type(item) is ResponseHeaders:  # for the request id of an in-body error
                normalizer.response_headers = item.headers
                return
            if type(item) is Cancelled:  # its provider was closed mid-turn: the end
                normalizer.settled = True
                self._observer.on_next(item)
                return
            assert isinstance(item, Failed)
            if item.error.kind in _CUT_OFF and not normalizer.settled:
                # The connection failed mid-body: if the provider had already said the
                # turn was complete, the turn ends as it said.
                if not self._end(normalizer):
                    return
                if normalizer.settled:
                    logger.bind(provider=item.provider, attempt=item.attempt).debug(
                        "the connection failed after the turn was complete: {}",
                        item.error.message,
                    )
                    return
            normalizer.settled = True
            self._observer.on_next(item)
            return
        try:
            normalizer.feed(item)
        except _UNREADABLE as exc:
            if self._downstream_raised:
                raise
            if normalizer.settled:
                return
            secrets = normalizer.secrets
            quote = redact_head(item.data, secrets, _QUOTE_CHARS)
            if isinstance(exc, json.JSONDecodeError):
                message = f"a data line is not JSON: {quote!r}"
            elif type(exc) in (ValueError, TypeError):  # a wire's words ("... is an array")
                message = f"an unexpected chunk ({exc}): {quote!r}"
            else:  # Python's, which its exception's name completes ("KeyError: 'choices'")
                message = f"an unexpected chunk ({type(exc).__name__}: {exc}): {quote!r}"
            message = redact(message, secrets)  # the exception's words too
            # The traceback's frames hold the chunk, which may quote a credential.
            log = logger.bind(provider=normalizer.provider)
            log.opt(exception=None if secrets else exc).debug(message)
            normalizer.settled = True
            self._observer.on_next(
                failed(normalizer.provider, "protocol", message, attempt=normalizer.attempt)
            )

    def _end(self, normalizer: ChunkNormalizer) -> bool:
        """Let the normalizer say what the end of its input means; False when the
        stream is over on `on_error`."""
        try:
            normalizer.end()
        except _UNREADABLE as exc:
            if self._downstream_raised or normalizer.settled:
                self._observer.on_error(exc)
                return False
            # What the provider sent cannot be made sense of at its end (a finish
            # reason of the wrong type, held until now): its failure.
            message = f"the end of the stream could not be read ({type(exc).__name__})"
            logger.bind(provider=normalizer.provider).opt(exception=exc).debug(message)
            normalizer.settled = True
            self._observer.on_next(
                failed(normalizer.provider, "protocol", message, attempt=normalizer.attempt)
            )
        except Exception as exc:
            # The source has ended, so nothing upstream is left to report either a
            # bug of the normalizer or what a consumer raised on a fragment `end`
            # emitted: both are `on_error`, never an event.
            self._observer.on_error(exc)
            return False
        return True

    def _error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def _completed(self) -> None:
        normalizer = self._made()
        if normalizer.settled:
            self._observer.on_completed()
            return
        if not self._end(normalizer):
            return
        if not normalizer.settled:
            # The body ended without the provider's terminal marker. Said here, by the
            # attempt it cut short, rather than once the turn is settled: before
            # anything was committed, it is a failure the recovery policy may retry or
            # a fallback move on from, as a connection reset there is.
            normalizer.settled = True
            headers = normalizer.response_headers
            truncated = unterminated(
                normalizer.provider,
                normalizer.attempt,
                None if headers is None else request_id_of(headers),
            )
            try:
                self._observer.on_next(truncated)
            except Exception as exc:  # raised downstream: the source has ended (`_end`)
                self._observer.on_error(exc)
                return
        self._observer.on_completed()

    def dispose(self) -> None:
        normalizer = self._normalizer
        # Linked: not still subscribing (no upstream yet), not stopped.
        if self._upstream is not None and not self.stopped and normalizer is not None:
            # Whoever hangs up (a deadline) learns the response it cut off, for its
            # request id, and how the turn ends if its provider had said it was complete:
            # handed over once, at the end, never per chunk (nor per dispose: two holders
            # of one subscription dispose it twice, and two reports would name none).
            ended = self._ending(normalizer) if hanging_up() else None
            closing(normalizer.response_headers, ended=ended)
        self.unlink()

    def _ending(self, normalizer: ChunkNormalizer) -> tuple[Fragment, ...] | None:
        """What the normalizer ends its turn with at the end of the body, where that is
        `done`: its provider had said the turn was complete (a finish seen, the usage or
        `[DONE]` still to come), as for a connection cut then (`_CUT_OFF`). None
        otherwise. Asked by a hang-up, which closes the stream: what `end` emits is kept
        for it, never passed on here."""
        if normalizer.settled:
            return None
        observer, kept = self._observer, _Kept()
        self._observer = kept
        try:
            normalizer.end()
        except Exception:  # its end could not be read: no ending to give
            return None
        finally:
            self._observer = observer
        items = kept.items
        done = normalizer.settled and items and type(items[-1]) is Done
        return tuple(items) if done else None


class _Kept(abc.ObserverBase[Fragment]):
    """Holds what a normalizer emits while a hang-up asks how its turn ends."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Fragment] = []

    def on_next(self, value: Fragment) -> None:
        self.items.append(value)

    def on_error(self, error: Exception) -> None:  # pragma: no cover - `end` emits only
        raise error

    def on_completed(self) -> None:  # pragma: no cover - `end` emits only
        pass
