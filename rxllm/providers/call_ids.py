"""Tool call ids as a wire's API takes them back, for a history written anywhere.

A conversation may hold calls another provider made (a fallback, a history begun
elsewhere): their ids may hold characters the API refuses (`functions.f:0`), be longer
than it takes (vLLM's 46 characters), or repeat (rxllm names Gemini's calls, which have
none, `{name}_{index}` in every turn). `CallIds` rewrites what the API would refuse and
keeps the rest, so that each result still names its call. The chat wire names one
turn's calls through it too, as they start: a server that gives two calls of a turn one
id (DeepSeek, Z.ai) has the repeat renamed there, and the history keeps that name.
"""

from __future__ import annotations

import hashlib
import re
import string

__all__ = ["CallIds", "base62_of"]

_BASE62 = string.digits + string.ascii_letters


class CallIds:
    """One conversation's call ids, unique, made only of `allowed` characters (a regex
    character class, or None for any), at most `longest` characters. A valid id seen
    for the first time is kept; any other is rewritten (refused characters to `_`, too
    long to `call_` and base-62 characters of its SHA-256, then `_2`, `_3`... until
    unused), and the results that follow take the id of the latest call that had theirs."""

    def __init__(self, allowed: str | None = None, longest: int | None = None) -> None:
        self._refused = None if allowed is None else re.compile(f"[^{allowed}]")
        self._longest = longest
        self.used: set[str] = set()
        self.latest: dict[str, str] = {}

    def call(self, call_id: str) -> str:
        base = self._valid(call_id)
        wire, n = base, 1
        while wire in self.used:
            n += 1
            suffix = f"_{n}"
            wire = (base if self._longest is None else base[: self._longest - len(suffix)]) + suffix
        self.used.add(wire)
        self.latest[call_id] = wire
        return wire

    def result(self, call_id: str | None) -> str | None:
        if call_id is None:
            return None
        return self.latest.get(call_id) or self._valid(call_id)

    def _valid(self, call_id: str) -> str:
        """The id with what the API refuses rewritten, before any uniqueness."""
        if self._refused is not None:
            call_id = self._refused.sub("_", call_id) or "call"
        if self._longest is not None and len(call_id) > self._longest:
            call_id = "call_" + base62_of(call_id, min(24, self._longest - 5))
        return call_id


def base62_of(text: str, length: int) -> str:
    """`length` base-62 characters of `text`'s SHA-256: the same text, the same id."""
    n = int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")
    chars = []
    for _ in range(length):
        n, r = divmod(n, 62)
        chars.append(_BASE62[r])
    return "".join(chars)
