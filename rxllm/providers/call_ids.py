"""Tool call ids as a wire's API takes them back, for a history written anywhere.

A conversation may hold calls another provider made (a fallback, a history begun
elsewhere): their ids may hold characters the API refuses (`functions.f:0`), be longer
than it takes (vLLM's 46 characters), be of another form than the one it takes
(Mistral's nine base-62 characters), or repeat (a server's, or those rxllm gave
Gemini's calls, which have none, before `response_tag`: `{name}_{index}` in every
turn). `CallIds` rewrites what the API would refuse and keeps the rest, so that each
result still names its call. The chat wire names one turn's calls through it too, as
they start: a server that gives two calls of a turn one id (DeepSeek, Z.ai) has the
repeat renamed there, and the history keeps that name.

A call the wire sends without an id gets one of rxllm's, which must still be unique
across the conversation: an app (the AI SDK's `addToolOutput`, a dict of results) finds
a call by its id, the first one holding it, so turn 2's `get_weather_0` took turn 1's
result. `response_tag` names the response in such ids.

A call no tool message answers (a turn that failed or was cancelled once its call was
complete, kept by `StreamRecord.to_message()`, then the user's next message) is refused
by every wire, on every later turn: `answer_each_call` answers it as not run, for every
wire (`WireProtocol.build_body`).
"""

from __future__ import annotations

import hashlib
import re
import string

from loguru import logger

from rxllm.request import Message, ToolCall

__all__ = ["NOT_RUN", "CallIds", "answer_each_call", "base62_of", "response_tag"]

_BASE62 = string.digits + string.ascii_letters


class CallIds:
    """One conversation's call ids, unique, made only of `allowed` characters (a regex
    character class, or None for any), at most `longest` characters, or exactly
    `length` of them. A valid id seen for the first time is kept; any other is
    rewritten (refused characters to `_`, too long to `call_` and base-62 characters of
    its SHA-256, then `_2`, `_3`... until unused; with a `length`, base-62 characters
    of the SHA-256 of the id, then of the id and `2`, `3`...), and the results that
    follow take the id of the latest call that had theirs."""

    def __init__(
        self, allowed: str | None = None, longest: int | None = None, length: int | None = None
    ) -> None:
        self._refused = None if allowed is None else re.compile(f"[^{allowed}]")
        self._longest = longest
        self._length = length
        self.used: set[str] = set()
        self.latest: dict[str, str] = {}

    def call(self, call_id: str) -> str:
        base = self._valid(call_id)
        wire, n = base, 1
        while wire in self.used:
            n += 1
            wire = self._again(call_id, base, n)
        self.used.add(wire)
        self.latest[call_id] = wire
        return wire

    def result(self, call_id: str | None) -> str | None:
        if call_id is None:
            return None
        return self.latest.get(call_id) or self._valid(call_id)

    def _valid(self, call_id: str) -> str:
        """The id with what the API refuses rewritten, before any uniqueness."""
        if self._length is not None:  # a hash of any other id, base-62 as the API takes it
            fits = len(call_id) == self._length and not (
                self._refused is not None and self._refused.search(call_id)
            )
            return call_id if fits else base62_of(call_id, self._length)
        if self._refused is not None:
            call_id = self._refused.sub("_", call_id) or "call"
        if self._longest is not None and len(call_id) > self._longest:
            call_id = "call_" + base62_of(call_id, min(24, self._longest - 5))
        return call_id

    def _again(self, call_id: str, base: str, n: int) -> str:
        """The `n`th id to try for `call_id` when `base` (its valid form) is taken."""
        if self._length is not None:  # no room for a suffix: another hash, as repeatable
            return base62_of(f"{call_id}\n{n}", self._length)
        suffix = f"_{n}"
        return (base if self._longest is None else base[: self._longest - len(suffix)]) + suffix


def base62_of(text: str, length: int) -> str:
    """`length` base-62 characters of `text`'s SHA-256: the same text, the same id."""
    n = int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")
    chars = []
    for _ in range(length):
        n, r = divmod(n, 62)
        chars.append(_BASE62[r])
    return "".join(chars)


def response_tag(response_id: str | None, data: str) -> str:
    """8 base-62 characters naming one response, for the ids rxllm gives the calls its
    wire sent without one (`{name}_{tag}_{index}`): of the SHA-256 of the response's id
    (Gemini's `responseId`, a chat completion's `id`), else of `data`, the chunk the
    first such call came in.

    The response's id is what names a response: the tags of two differ, and a replay of
    the same bytes, in any chunking or shape, gives the same ids. A random tag would make
    every replay of a recorded turn differ. Without an id, the chunk holds what differs
    between turns in practice (usage counts that grow with the history, a chat chunk's
    `created` time, a thought signature, the call's arguments); two byte-identical
    chunks from a server that names neither its responses nor its calls still repeat."""
    return base62_of(response_id or data, 8)


# A Responses item asking the user to approve an MCP call (a `ToolCall` of that name).
_APPROVAL_REQUEST = "mcp_approval_request"

NOT_RUN = "The call was not run: no result was given for it."
"""The result of a call no tool message answers (`answer_each_call`): a plain statement
of what happened, never a result the tool did not give."""


def answer_each_call(messages: list[Message]) -> list[Message]:
    """`messages` with a result for each assistant call that no tool message answers
    before the model's next turn (or the end): a failure (`is_error`) saying
    it was not run (`NOT_RUN`), after the results given for its turn, or right after the
    turn. Each wire refuses a call without its result, with a 400 that every later turn
    of the history repeats: Anthropic's "`tool_use` ids were found without
    `tool_result` blocks immediately after", OpenAI's "An assistant message with
    'tool_calls' must be followed by tool messages responding to each 'tool_call_id'",
    the Responses API's "No tool output found for function call", Gemini's "the number
    of function response parts is equal to the number of function call parts". Such a
    call is one of a turn that failed or was cancelled once it was complete (the record
    keeps it), and the user's next message followed; codex answers one "aborted", Claude
    Code as interrupted. A Responses `mcp_approval_request` is left as it is: only the
    user approves or denies one, and its answer is no tool result. Without such a call,
    `messages` itself."""
    missing: dict[int, list[ToolCall]] = {}  # where the results go -> the calls
    answered: set[str | None] = set()  # tool messages after this point, in this exchange
    for n in range(len(messages) - 1, -1, -1):
        message = messages[n]
        if message.role == "tool":
            answered.add(message.tool_call_id)
            continue
        if message.role != "assistant":
            # (a system or user message between a call and its result ends nothing: an
            # app's reminder, lifted into the system prompt by Anthropic and Gemini; a
            # tool's image as a user message between parallel calls' results, which the
            # Responses API and chat templates take as written. A result after it still
            # answers the call, never to be told it was not run first.)
            continue
        if message.tool_calls:
            calls = [
                call
                for call in message.tool_calls
                if call.id not in answered and call.name != _APPROVAL_REQUEST
            ]
            if calls:
                end = n + 1
                while end < len(messages) and messages[end].role == "tool":
                    end += 1
                missing[end] = calls + missing.get(end, [])
        if n == 0 or messages[n - 1].role != "assistant":
            # the turn's first message (a turn written as one assistant message per
            # call shares its results): what came before answers no call after it
            answered = set()
    if not missing:
        return messages
    out: list[Message] = []
    for n in range(len(messages) + 1):
        for call in missing.get(n, ()):
            logger.debug("tool call {} ({}) has no result: sent as not run", call.id, call.name)
            out.append(Message.tool(call.id, NOT_RUN, is_error=True))
        if n < len(messages):
            out.append(messages[n])
    return out
