"""speaker_guard: stop the text where the model starts writing another speaker's turn."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from loguru import logger
from reactivex import Observable, abc

from rxllm.events import Failed, TextDelta
from rxllm.fragments import FailureUsage
from rxllm.operators._args import check_count
from rxllm.operators._link import Operator, link

__all__ = ["DEFAULT_SPEAKERS", "SPEAKER_HOLD", "check_speaker_names", "speaker_guard"]

_T = TypeVar("_T")
"""Whatever the stream carries (events, or the pipeline's fragments). The text it emits
is cut from text that came in, so it is one of `_T` too (hence the casts)."""

# The role labels of the common chat transcripts a model may slip into continuing
# ("\n\nHuman:" in Anthropic's legacy prompts, "User:"/"Assistant:" in most others).
DEFAULT_SPEAKERS = ("User", "Human", "Assistant", "System")

# The design's guard hold-back (DESIGN.md, "Speaker guard"): at most 32 characters of
# text are held while they could still become a marker. That covers "\n", a speaker
# name of up to 30 characters and ":", and delays the text by a few tokens at most.
SPEAKER_HOLD = 32

# What can change the guard's state: a line break (a marker may start), a backtick (a
# code span or fence may open or close) or a tilde (a fence may). Everything between
# them is passed on in one slice.
_SPECIAL = re.compile(r"[\n`~]")
# What a blank line may hold besides its line break.
_SPACE = " \t\r"


def speaker_guard(
    names: Sequence[str] | None = None, hold: int = SPEAKER_HOLD
) -> Callable[[Observable[_T]], Observable[_T]]:
    """Cut the text at the first line that begins another speaker's turn, `Name:`.

    ::

        source:  -t("Sure.\\nUs")-t("er: more?")-t("x")-done-|
        speaker_guard()
        result:  -t("Sure.")-----------------------------done-|

    A marker is a line break followed by one of `names` and a colon (`"\\nUser:"`),
    outside code: nothing triggers inside a ``` or ~~~ fence (as in CommonMark, a run
    of three or more backticks or tildes that begins a line, closed by a run of at
    least as many of the same character that begins a line: a ``` inside a code line,
    or inside a ~~~ fence, closes nothing) or an `inline` span (any other run of
    backticks, closed by a run of as many or, as in CommonMark, by a blank line, so a
    stray backtick, or three, cannot switch the guard off for the rest of the answer:
    "\\n\\nUser:" still triggers after one).

    While the end of the text could still become a marker (`"\\nUs"`), it is held back,
    not emitted (so it does not commit the attempt). It is released as soon as it
    cannot be a marker, before any item that is not text, and at the end of the
    stream; an error drops it (it never reached anyone, so the attempt the error ends
    is not committed by it and may be retried). Once a marker is seen, the text before
    it is emitted and every later text chunk is dropped; other items still pass
    through unchanged and in order. The state lives in each subscription: every stream
    and every retry starts clean.

    Args:
        names: the speaker names (a list, even of one: `["Bob"]`); by default
            `DEFAULT_SPEAKERS`.
        hold: the most characters held back at once; every marker must fit in it.

    Returns:
        An operator on events (`Observable[Event]`) or on the pipeline's fragments:
        every item that is not text passes through as it is.

    Raises:
        TypeError, ValueError: `names` is a `str` (a sequence of one-letter names),
            empty, or holds a name that is not a one-line `str` without backticks or
            tildes; `hold` is not an `int`, or too short for a marker.
    """
    markers = frozenset(f"\n{name}:" for name in check_speaker_names(names, hold))
    prefixes = frozenset(marker[:end] for marker in markers for end in range(1, len(marker)))

    def _speaker_guard(source: Observable[_T]) -> Observable[_T]:
        def subscribe(
            observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            guard = _Guard(markers, prefixes)
            last: TextDelta | None = None  # whose provider and attempt held text is

            def emit(like: TextDelta, text: str) -> None:
                delta = TextDelta.make(
                    provider=like.provider, attempt=like.attempt, text=text, phase=like.phase
                )
                observer.on_next(cast(_T, delta))

            def release() -> None:
                if guard.held and last is not None:
                    emit(last, guard.release())

            def drop(failure: Failed) -> None:
                # Held text never reached anyone: it must not commit the attempt the
                # error ends, which may yet be retried from a clean start.
                if guard.held:
                    logger.bind(provider=failure.provider, attempt=failure.attempt).debug(
                        "the turn failed: the {} characters held are dropped", len(guard.held)
                    )
                    guard.release()

            def on_next(item: _T) -> None:
                nonlocal last
                if not isinstance(item, TextDelta):
                    kind = type(item)
                    if kind is Failed:
                        drop(cast(Failed, item))
                    elif kind is not FailureUsage:  # (the usage of the failure to come)
                        release()
                    observer.on_next(item)
                    return
                if guard.stopped:
                    return
                last = item
                text = guard.feed(item.text)
                if guard.stopped:
                    logger.bind(provider=item.provider, attempt=item.attempt).debug(
                        "cut the text at a speaker marker; later text is dropped"
                    )
                if text == item.text:
                    observer.on_next(item)
                elif text:
                    emit(item, text)

            def on_completed() -> None:
                try:
                    release()
                except Exception as exc:
                    # The source has ended: nothing upstream is left to report what the
                    # observer raised on the released text, so it is its `on_error`.
                    observer.on_error(exc)
                    return
                observer.on_completed()

            return link(source, on_next, observer.on_error, on_completed, scheduler)

        return Operator(subscribe)

    return _speaker_guard


def check_speaker_names(
    names: Sequence[str] | None = None, hold: int = SPEAKER_HOLD
) -> tuple[str, ...]:
    """The speaker names `speaker_guard(names, hold)` guards against (`DEFAULT_SPEAKERS`
    for None), checked as it checks them, without building the operator: for options
    that validate the names when given and build the guard per stream.

    Raises:
        TypeError, ValueError: as `speaker_guard` does.
    """
    if isinstance(names, str):
        raise TypeError(f"names must be a list of names, e.g. [{names!r}], not a str")
    check_count("hold", hold, 1)
    speakers = tuple(DEFAULT_SPEAKERS if names is None else names)
    if not speakers:
        raise ValueError("speaker_guard needs at least one speaker name")
    for name in speakers:
        if not isinstance(name, str):
            raise TypeError(f"a speaker name must be a str, got {type(name).__name__}")
        if not name or any(char in name for char in "\r\n`~"):
            raise ValueError(
                "a speaker name must be non-empty, on one line, without backticks or "
                f"tildes: {name!r}"
            )
    longest = "\n" + max(speakers, key=len) + ":"  # the marker speaker_guard holds back
    if len(longest) > hold:
        raise ValueError(f"the marker {longest!r} is longer than hold={hold} characters")
    return speakers


class _Guard:
    """The text scanner of one subscription: code spans, the held suffix, the cut."""

    __slots__ = (
        "blank",
        "fence",
        "fence_char",
        "held",
        "inline",
        "markers",
        "opening",
        "prefixes",
        "run",
        "run_char",
        "stopped",
    )

    def __init__(self, markers: frozenset[str], prefixes: frozenset[str]) -> None:
        self.markers = markers
        self.prefixes = prefixes
        self.held = ""  # a suffix that could still become a marker; starts with "\n"
        self.fence = 0  # the length of the open fence's run, or 0
        self.fence_char = "`"  # what the open fence is made of: "`" or "~"
        self.opening = False  # on the line that opened the fence (its info string)
        self.inline = 0  # backticks of the open `inline` span, or 0
        self.blank = True  # the current line is blank so far (before a pending run)
        self.run = 0  # a run of backticks or tildes whose length is not known yet
        self.run_char = "`"  # what that run is made of
        self.stopped = False  # a marker was seen: no more text

    def feed(self, text: str) -> str:
        """The part of `text` that can be emitted now; holds or cuts the rest."""
        if not self.held and not self.run and not ("\n" in text or "`" in text or "~" in text):
            if self.blank and text.strip(_SPACE):
                self.blank = False
            return text
        out: list[str] = []
        held, markers, prefixes = self.held, self.markers, self.prefixes
        at, size = 0, len(text)
        while at < size:
            if held:
                candidate = held + text[at]
                if candidate in markers:
                    self.held, self.stopped = "", True
                    return "".join(out)
                if candidate in prefixes:
                    held = candidate
                    at += 1
                    continue
                # Not a marker after all; the character is read again below (it may be
                # the line break that starts the next candidate). Names hold no line
                # break, backtick or tilde, and nothing is held inside code, so the
                # released text changes no other state than whether its line is blank.
                self.held = held
                out.append(self.release())
                held = ""
            found = _SPECIAL.search(text, at)
            stop = found.start() if found else size
            if stop > at:
                piece = text[at:stop]
                if self.run:
                    self._end_run()
                if self.blank and piece.strip(_SPACE):
                    self.blank = False
                out.append(piece)
                at = stop
                continue
            char = text[at]
            at += 1
            if char != "\n":  # a backtick or a tilde
                if self.run and char != self.run_char:
                    self._end_run()
                self.run += 1
                self.run_char = char
                out.append(char)
                continue
            if self.run:
                self._end_run()
            self.opening = False
            if self.inline:
                if not self.blank:  # an inline span may go on to the next line...
                    self.blank = True
                    out.append(char)
                    continue
                self.inline = 0  # ...but not past a blank line (CommonMark paragraphs)
            self.blank = True
            if self.fence:
                out.append(char)
            else:
                held = char
        self.held = held
        return "".join(out)

    def release(self) -> str:
        """The held text, given up: it is plain text of the current line."""
        held, self.held = self.held, ""
        if held[1:].strip(_SPACE):
            self.blank = False
        return held

    def _end_run(self) -> None:
        """A run of backticks or tildes ended: it opens or closes a fence, or (of
        backticks) an inline span. Only a run that begins a line (after spaces) is a
        fence's, and only one of the fence's own character closes it (CommonMark)."""
        run, char, self.run = self.run, self.run_char, 0
        at_start, self.blank = self.blank, False
        if self.opening and char == "`" == self.fence_char:
            # a backtick in a ``` fence's info string: no fence, inline code (a ~~~
            # fence's info string may hold anything)
            self.inline, self.fence, self.opening = self.fence, 0, False
        if self.fence:
            if char == self.fence_char and run >= self.fence and at_start:
                self.fence = 0
        elif run >= 3 and at_start:  # a fence ends the paragraph, and any span open in it
            self.fence, self.fence_char, self.inline, self.opening = run, char, 0, True
        elif char == "~":
            pass  # tildes open no inline span, and close none
        elif self.inline:
            if run == self.inline:
                self.inline = 0
        else:
            self.inline = run
