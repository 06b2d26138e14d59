"""Reasoning inlined in content as `<think>...</think>`, split out as it streams.

Open-weight reasoning models (DeepSeek-R1, QwQ, Qwen3) served without a reasoning
parser write their chain of thought into `content`, between `<think>` and `</think>`
(the Together capture). The tags may be cut anywhere by the provider's deltas
(`"<thi"`, `"nk>"`), so a possible tag prefix at the end of a delta is held back until
the next delta (or the end of the stream) says what it is.

Rules, chosen to never turn visible text into reasoning by accident:

- Only a `<think>` at the very start of the content (after whitespace) opens reasoning;
  a `<think>` later in the answer is text (a model may well write about the tag).
- Inside reasoning, the first `</think>` closes it; everything after is text.
- The newlines right after each tag are formatting, not content: they are dropped, so
  the answer does not start with `"\\n"` (what DeepSeek's own `reasoning_content`
  API gives).
- A reasoning block the stream never closes (cut by `max_tokens`) stays reasoning.

Each block that said something ends with `end_reasoning` (at its close tag, or where
`flush()` finds it open), so that the reasoning part it makes is known to have come in
tags (`TAGGED`): it goes back in the content it came in, not in a reasoning field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["CLOSE_TAG", "OPEN_TAG", "TAGGED", "ThinkTagSplitter", "came_in_tags", "think_tagged"]

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"

TAGGED = "think_tags"
"""The key of a reasoning part's details (`{"think_tags": true}`) that says the part came
inside `<think>` tags in the content, as Gemini's `{"thought": true}` says where its part
came: a wire that takes tagged reasoning back in the content tells it from reasoning
that came in a field (`reasoning_content`, `reasoning`) of the same stream."""


def came_in_tags(details: dict[str, Any] | None) -> bool:
    """Whether a reasoning part with these details came inside `<think>` tags."""
    return details is not None and details.get(TAGGED) is True


_START, _THINKING, _ANSWER = 0, 1, 2
_NEWLINES = "\r\n"


def think_tagged(reasoning: str, text: str) -> str:
    """An assistant turn's content as a model that thinks in tags writes it, for the
    history: its reasoning in a `<think>` block before its text, with the newlines the
    chat templates of MiniMax-M2 and Qwen3 put around the block (and the splitter drops).
    Reasoning that says nothing is no block."""
    reasoning = reasoning.strip(_NEWLINES)
    if not reasoning:
        return text
    return f"{OPEN_TAG}\n{reasoning}\n{CLOSE_TAG}\n\n{text}"


def _held_prefix(text: str, tag: str) -> int:
    """The length of the longest end of `text` that is a proper beginning of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkTagSplitter:
    """Feed content deltas; text and reasoning come out through the two callbacks.

    One instance per stream (its state is the stream's). `flush()` releases what is
    held back (at most a tag's length) and must be called before any event that has
    to come after the text so far: a tool call, the end of the turn. `end_reasoning`,
    if given, is called where a block of reasoning that said something ends.
    """

    __slots__ = ("_end_reasoning", "_held", "_reasoning", "_said", "_state", "_strip", "_text")

    def __init__(
        self,
        text: Callable[[str], None],
        reasoning: Callable[[str], None],
        end_reasoning: Callable[[], None] | None = None,
    ) -> None:
        self._text = text
        self._reasoning = reasoning
        self._end_reasoning = end_reasoning
        self._state = _START
        self._held = ""
        self._strip = False  # drop the newlines that follow a tag
        self._said = False  # reasoning came out since the block (or its last end) began

    def feed(self, content: str) -> None:
        state = self._state
        if state == _ANSWER and not self._strip:
            if content:
                self._text(content)  # the common case once the reasoning is over
            return
        buffer = self._held + content
        self._held = ""
        if state == _START:
            stripped = buffer.lstrip()
            if stripped.startswith(OPEN_TAG):
                self._state, self._strip = _THINKING, True
                buffer = stripped[len(OPEN_TAG) :]
            elif OPEN_TAG.startswith(stripped):  # empty, or a tag still arriving
                self._held = buffer
                return
            else:
                self._state = _ANSWER
                self._text(buffer)
                return
        if self._state == _THINKING:
            end = buffer.find(CLOSE_TAG)
            if end < 0:
                keep = _held_prefix(buffer, CLOSE_TAG)
                if keep:
                    self._held = buffer[-keep:]
                    buffer = buffer[:-keep]
                self._think(buffer)
                return
            self._think(buffer[:end])
            self._end_block()
            self._state, self._strip = _ANSWER, True
            buffer = buffer[end + len(CLOSE_TAG) :]
        self._emit(self._text, buffer)

    def flush(self) -> None:
        held, self._held = self._held, ""
        if self._state == _THINKING:
            self._think(held)
            self._end_block()  # what follows (a call, the end) comes after the block
        elif held:  # whitespace or an unfinished "<thi" at the start: it was text
            self._state = _ANSWER
            self._text(held)

    def _think(self, text: str) -> None:
        if self._emit(self._reasoning, text):
            self._said = True

    def _end_block(self) -> None:
        if self._said and self._end_reasoning is not None:
            self._end_reasoning()
        self._said = False

    def _emit(self, out: Callable[[str], None], text: str) -> bool:
        """Send `text` to `out`, the newlines after a tag dropped; whether any went."""
        if self._strip:
            text = text.lstrip(_NEWLINES)
            if not text:
                return False
            self._strip = False
        if text:
            out(text)
            return True
        return False
