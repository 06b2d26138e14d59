"""accumulate_tool_arguments: argument fragments -> one `ToolRequest` per complete call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from loguru import logger
from reactivex import Observable, abc

from rxllm.events import (
    Cancelled,
    Done,
    Event,
    Failed,
    Refusal,
    ToolRequest,
    ToolStart,
    UsageUpdate,
    failed,
    named_call,
)
from rxllm.fragments import (
    STRICT_JSON,
    FailureUsage,
    Fragment,
    ToolArgs,
    ToolEnd,
    ToolInputCut,
    has_half,
    whole_characters,
    whole_value,
)
from rxllm.operators._args import check_count
from rxllm.operators._link import Link, Operator
from rxllm.sources.sse import utf8_size

__all__ = ["accumulate_tool_arguments"]


# A UTF-16 half written as its own JSON escape ("\\ud800"), which `json` reads as a lone
# surrogate where no partner escape follows.
_ESCAPED_HALF = re.compile(r"\\u[dD][89a-fA-F]").search


# The stops that end a turn before its output did: a call still open was cut off.
_CUT_SHORT = frozenset({"length", "content_filter", "pause"})
# The items `on_next` reads beside `ToolArgs`; any other passes as it came.
_CALL_ITEMS = frozenset({ToolEnd, ToolInputCut, ToolStart, Done, Failed, Cancelled})


class _Call:
    __slots__ = ("cut", "pieces", "size", "start")

    def __init__(self, start: ToolStart) -> None:
        self.start = start
        self.pieces: list[str] = []
        self.size = 0
        self.cut: str | None = None  # a custom tool's free-text input, cut off (`ToolInputCut`)


def accumulate_tool_arguments(
    max_argument_bytes: int | None = None,
) -> Callable[[Observable[Fragment]], Observable[Event | FailureUsage]]:
    """Buffer each call's argument fragments and emit a `tool_request` once they form
    a complete JSON object.

    ::

        source:  -start(0)-a('{"x"')-a(':1}')-end(0)-done-|
        accumulate_tool_arguments()
        result:  -start(0)-------------------request(0,{x:1})-done-|

    Pieces are appended to a list and joined and parsed once, when the call ends (its
    `ToolEnd`, or the `done` of the stream for providers that do not mark the end of a
    call): O(total bytes), whatever the fragmentation. A call its `ToolEnd` marks
    complete with no arguments at all has no parameters: `{}`; one still open and empty
    when the turn ends was cut off. Arguments that are not a JSON object end
    the stream with `error(kind="malformed_tool_arguments")` naming the provider, the
    call id and the tool; nothing is invented or cut, and a call cut off before its
    completion signal is never dispatched. An error or a
    cancellation drops the calls still open.

    A call marked complete whose arguments are malformed ends the turn where the turn
    ends (its `done`, error or cancellation), not at once: the usage the provider sends
    after the call is passed on, so the failed turn says what it cost, and a stop that
    cut the call short (`max_tokens`) is named, as for a call still open then. Nothing
    else after the call is emitted but a refusal, which says why the turn stopped (a
    provider's classifier cut the call off: Anthropic closes the cut block, then says
    `refusal` with its explanation).

    ::

        source:  -start(0)-a('{"x"')-end(0)-text-usage-done(length)-|
        accumulate_tool_arguments()
        result:  -start(0)------------------------usage-error-------|

    A character whose UTF-16 halves came in two fragments (JSON escapes each half) is
    one character in the arguments, as in text (`operators.normalize`).

    A custom tool's input is free text, not JSON (its wire streams it as the JSON text of
    `{"input": text}`): one the turn's stop cut off (`ToolInputCut`, the input so far)
    is reported as cut off, with that text, never as JSON that is not valid.

    A wire's contradictions are the provider's failure, never `on_error`: a start on
    the index of a call still open (another call id: a repeat of the same start is
    dropped) ends the earlier call there, judged as the end of the turn judges it
    (dispatched if its arguments are a complete JSON object, else an error); an
    argument fragment for a call already complete is `error(kind="protocol")` naming
    the call, unless it is only whitespace, which JSON allows after a value and which
    changes nothing (dropped, logged at debug). A fragment for an index that never
    started is a normalizer's bug (each wire's normalizer starts a call before its
    arguments), raised to `on_error`.

    Args:
        max_argument_bytes: the most JSON text one call may stream, in UTF-8 bytes
            (providers send non-ASCII text as it is, not escaped); more ends the stream
            with `error(kind="limit")` naming the call, instead of buffering without end.
            None: no limit.

    Raises:
        TypeError, ValueError: `max_argument_bytes` is not None or an `int`, 0 or more.
    """
    if max_argument_bytes is not None:
        check_count("max_argument_bytes", max_argument_bytes, 0)

    def _accumulate(source: Observable[Fragment]) -> Observable[Event | FailureUsage]:
        def subscribe(
            observer: abc.ObserverBase[Event | FailureUsage],
            scheduler: abc.SchedulerBase | None = None,
        ) -> abc.DisposableBase:
            return _Calls(observer, max_argument_bytes).link_to(source, scheduler)

        return Operator(subscribe)

    return _accumulate


class _Calls(Link[Fragment]):
    """One subscription: the calls still open, and whether a malformed one broke it."""

    __slots__ = ("_broken", "_calls", "_ended", "_malformed", "_max_argument_bytes", "_observer")

    def __init__(
        self, observer: abc.ObserverBase[Event | FailureUsage], max_argument_bytes: int | None
    ) -> None:
        super().__init__()
        self._observer = observer
        self._max_argument_bytes = max_argument_bytes
        self._calls: dict[int, _Call] = {}
        self._ended: dict[int, ToolStart] = {}  # the starts of the calls complete
        self._broken = False  # a malformed call ended the stream
        # A call marked complete with malformed arguments: (its start, what is wrong, its
        # text), reported at the turn's end, which says whether the turn cut it short.
        self._malformed: tuple[ToolStart, str, str] | None = None

    def _finish(self, index: int, end: ToolEnd | None, done: Done | None = None) -> bool:
        """Dispatch call `index`; `end`: the provider marked it complete, rather than
        the turn ending while it was open (None); `done`: the turn's end, if that is
        what ended it."""
        call = self._calls.pop(index)
        start = self._ended[index] = call.start
        ended = end is not None
        if call.cut is not None and not ended:
            wrong = f"the input of {named_call(start.call_id, start.name)} was cut off"
            self._malformed = (start, wrong, call.cut)
            if done is not None:
                self._report(done)
            return False
        arguments, signature = (None, None) if end is None else (end.arguments, end.signature)
        text = arguments if arguments is not None else "".join(call.pieces)
        if not text.isascii() and has_half(text) is not None:
            # a character's halves a writer cut between fragments, each JSON-escaped
            text = whole_characters(text)
        try:
            # Marked complete with no arguments at all: a call without parameters
            # (DESIGN.md), whatever the wire (a Gemini call with no `args`, an OpenAI
            # argument string still empty at the finish). Still open when the turn
            # ended with nothing: cut off, missing.
            parsed = STRICT_JSON.decode(text) if text.strip() else ({} if ended else None)
        except json.JSONDecodeError as exc:
            reason = f"not valid JSON ({exc.msg}: char {exc.pos} of {len(text)})"
            parsed = None
        except ValueError as exc:  # NaN or an infinity
            reason = f"not valid JSON ({exc})"
            parsed = None
        except RecursionError:
            reason = "JSON nested too deep to read"
            parsed = None
        else:
            reason = "missing" if parsed is None else f"a JSON {type(parsed).__name__}"
            if "\\u" in text and _ESCAPED_HALF(text) is not None:  # once a call, not a fragment
                try:
                    parsed = whole_value(parsed)
                except RecursionError:  # as deep as `json` reads: no deeper here
                    reason, parsed = "JSON nested too deep to read", None
        if isinstance(parsed, dict):
            self._observer.on_next(
                ToolRequest.make(
                    provider=start.provider,
                    attempt=start.attempt,
                    call_id=start.call_id,
                    name=start.name,
                    index=start.index,
                    arguments=parsed,
                    signature=start.signature if signature is None else signature,
                    details=start.details,
                )
            )
            return True
        wrong = f"arguments of {named_call(start.call_id, start.name)} are {reason}"
        self._malformed = (start, f"{wrong}, not a JSON object", text)
        if done is not None:
            self._report(done)
        return False

    def _report(self, done: Done | None) -> None:
        """The malformed call's error, at the end of its turn: `done`, if that is how the
        turn ended."""
        assert self._malformed is not None
        start, message, text = self._malformed
        self._malformed = None
        # A turn that stopped early (a token limit, a filter) cut the call off: say so,
        # or a refusal reads like a model that wrote bad JSON.
        stop = None
        if done is not None and done.stop_reason in _CUT_SHORT:
            stop = done.raw_stop_reason or done.stop_reason
            message += f": the turn stopped ({stop}) before the call was complete"
        self._observer.on_next(
            failed(
                start.provider,
                "malformed_tool_arguments",
                message,
                attempt=start.attempt,
                raw=text[:2000],
                code=stop,
            )
        )

    def _error(self, error: Exception) -> None:
        self._observer.on_error(error)

    def _completed(self) -> None:
        if self._malformed is not None:  # (a source that ended without a terminal event)
            self._report(None)
        self._observer.on_completed()

    def _next(self, item: Fragment) -> None:
        if self._broken:
            if self._malformed is not None:
                self._until_the_end(item)
            return
        calls = self._calls
        kind = type(item)
        if kind is ToolArgs:
            assert isinstance(item, ToolArgs)
            call = calls.get(item.index)
            if call is None:
                self._late_arguments(item)
                return
            delta = item.delta
            call.pieces.append(delta)
            # (ASCII, nearly every fragment, without a call: this runs per fragment)
            call.size += len(delta) if delta.isascii() else utf8_size(delta)
            limit = self._max_argument_bytes
            if limit is not None and call.size > limit:
                self._broken = True
                calls.clear()
                start = call.start
                self._observer.on_next(
                    failed(
                        start.provider,
                        "limit",
                        f"the arguments of {named_call(start.call_id, start.name)} "
                        f"exceed max_tool_argument_bytes ({limit})",
                        attempt=start.attempt,
                    )
                )
        elif kind not in _CALL_ITEMS:  # text, reasoning, usage: one test, not six
            self._observer.on_next(item)  # type: ignore[arg-type]
        elif kind is ToolEnd:
            assert isinstance(item, ToolEnd)
            if item.index in calls:
                self._broken = not self._finish(item.index, item)
        elif kind is ToolInputCut:
            assert isinstance(item, ToolInputCut)
            call = calls.get(item.index)
            if call is not None:
                call.cut = item.text
        elif kind is ToolStart:
            assert isinstance(item, ToolStart)
            if not self._restart(item):
                return
            calls[item.index] = _Call(item)
            self._ended.pop(item.index, None)
            self._observer.on_next(item)
        elif kind is Done:
            assert isinstance(item, Done)
            for index in sorted(calls):
                if not self._finish(index, None, item):
                    self._broken = True
                    return
            self._observer.on_next(item)
        else:  # Failed or Cancelled
            calls.clear()
            self._observer.on_next(item)  # type: ignore[arg-type]

    def _until_the_end(self, item: Fragment) -> None:
        """After a malformed call, until its turn ends: the usage and a refusal (why the
        turn stopped) pass, the end reports the call's error (the first failure), and the
        rest is dropped."""
        kind = type(item)
        if kind is UsageUpdate or kind is FailureUsage or kind is Refusal:
            self._observer.on_next(item)  # type: ignore[arg-type]
        elif kind is Done:
            assert isinstance(item, Done)
            self._report(item)
        elif kind is Failed or kind is Cancelled:
            self._report(None)

    def _restart(self, item: ToolStart) -> bool:
        """A start on the index of a call still open: False if it is a repeat of that
        call's start (dropped), or if the earlier call, which it ends, was malformed."""
        call = self._calls.get(item.index)
        if call is None:
            return True
        start = call.start
        if item.call_id == start.call_id:
            logger.bind(provider=item.provider, attempt=item.attempt).debug(
                "tool call {!r} started again on index {}: the repeat is dropped",
                item.call_id,
                item.index,
            )
            return False
        # Another call on its index: the earlier one's arguments have ended.
        if self._finish(item.index, None):
            return True
        self._broken = True
        return False

    def _late_arguments(self, item: ToolArgs) -> None:
        start = self._ended.get(item.index)
        if start is None:
            raise ValueError(f"arguments for tool call {item.index} before its start")
        if not item.delta.strip():
            logger.bind(provider=start.provider, attempt=start.attempt).debug(
                "whitespace after the arguments of tool call {!r}: dropped", start.call_id
            )
            return
        self._broken = True
        self._calls.clear()
        self._observer.on_next(
            failed(
                start.provider,
                "protocol",
                f"arguments for {named_call(start.call_id, start.name)} arrived "
                "after the call was complete",
                attempt=start.attempt,
                raw=item.delta[:2000],
            )
        )
