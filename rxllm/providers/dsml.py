"""DeepSeek's DSML tool calls written into `content`, read into calls as they stream.

DeepSeek V3.2 and V4 write a tool call as DSML markup, which the host's tool parser
turns into `tool_calls` (vLLM's and SGLang's `deepseek_v32` / `deepseek_v4`). A host
without that parser, or one whose parser missed the block, passes the markup on as
the answer's text, finish `stop` (sgl-project/sglang#40236, cline/cline#13348,
anomalyco/opencode#24566): the call is shown, never run. The grammar is DeepSeek's own
(encoding/README.md of DeepSeek-V4; the system prompt its encoding writes), each `|`
here U+FF5C, FULLWIDTH VERTICAL LINE (the marker is one special token of DeepSeek's
tokenizer):

    <|DSML|tool_calls>
    <|DSML|invoke name="get_weather">
    <|DSML|parameter name="city" string="true">Paris</|DSML|parameter>
    <|DSML|parameter name="days" string="false">3</|DSML|parameter>
    </|DSML|invoke>
    </|DSML|tool_calls>

V3.2 names the block `function_calls`, V4 `tool_calls`. A parameter with
`string="true"` is text as it is; with `string="false"` it is JSON.

Rules, chosen to never turn text into a call by accident nor lose what the model said:

- Only a whole block reads as calls: the opening marker, one or more invokes of
  parameters, whitespace between them, and the closing marker. Prose may come before
  and after it.
- A block that does not read so (a corrupted marker such as the doubled bars of
  `<||DSML||`, a bare invoke with no block around it, an invoke never closed) is text,
  as it came: those shapes are the model's slips, and reading them would guess at a
  call it never committed to (ai-dynamo/frontend-crates#123).
- A `string="false"` value that is no JSON makes that call's arguments the invoke's
  markup, which `operators.accumulate_tool_arguments` reports as malformed, naming the
  call: the model asked for the call, and its arguments cannot be read.
- A block still open at the end of the stream (cut by the token limit) is text.

A possible marker at the end of a delta is held until the next delta says what it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from loguru import logger

__all__ = ["DsmlSplitter", "read_block"]

_MARK = "<\uff5cDSML\uff5c"
_OPENERS = {
    f"{_MARK}{name}>": f"</\uff5cDSML\uff5c{name}>" for name in ("function_calls", "tool_calls")
}
"""Each block's opening marker and its closing one: V3.2's name, V4's."""

_INVOKE = re.compile(r'\s*<\uff5cDSML\uff5cinvoke\s+name="([^"]+)"\s*>')
_PARAMETER = re.compile(
    r'\s*<\uff5cDSML\uff5cparameter\s+name="([^"]+)"\s+string="(true|false)"\s*>'
    r"(.*?)</\uff5cDSML\uff5cparameter>",
    re.DOTALL,
)
_INVOKE_END = re.compile(r"\s*</\uff5cDSML\uff5cinvoke>")

_TEXT, _BLOCK = 0, 1


def read_block(body: str) -> list[tuple[str, str]] | None:
    """The calls of a block's `body` (between its markers): each its tool's name and its
    arguments as JSON text, or None if the body is not a whole block of invokes."""
    calls: list[tuple[str, str]] = []
    at = 0
    while (invoke := _INVOKE.match(body, at)) is not None:
        at = invoke.end()
        members: list[str] = []
        names: set[str] = set()
        readable = True
        while (parameter := _PARAMETER.match(body, at)) is not None:
            at = parameter.end()
            name, is_text, value = parameter.groups()
            if is_text == "false":
                value = value.strip()
                try:
                    json.loads(value)
                except ValueError:
                    readable = False
            else:
                value = json.dumps(value, ensure_ascii=False)
            readable = readable and name not in names
            names.add(name)
            # the model's JSON as written (checked whole above: it adds no other key)
            members.append(f"{json.dumps(name, ensure_ascii=False)}: {value}")
        end = _INVOKE_END.match(body, at)
        if end is None:
            return None
        if readable:
            arguments = "{" + ", ".join(members) + "}"
        else:  # no JSON object: the call is reported malformed, with what it said
            arguments = body[invoke.end() : end.start()].strip()
        calls.append((invoke[1], arguments))
        at = end.end()
    if not calls or body[at:].strip():
        return None
    return calls


def _held_prefix(text: str) -> int:
    """The length of the longest end of `text` that is a proper beginning of a marker."""
    for opener in _OPENERS:
        for size in range(min(len(opener) - 1, len(text)), 0, -1):
            if opener.startswith(text[-size:]):
                return size
    return 0


class DsmlSplitter:
    """Feed content deltas; text comes out through `text`, each call of a whole block
    through `call(name, arguments)`. One instance per stream; `flush()` releases what is
    held back and must be called before any event that comes after the text so far.

    A block is kept as its pieces, and each delta is searched for the closing marker
    together with the end of the pieces before it (a marker the deltas cut): O(size)."""

    __slots__ = ("_block", "_call", "_closer", "_held", "_tail", "_text")

    def __init__(self, text: Callable[[str], None], call: Callable[[str, str], None]) -> None:
        self._text = text
        self._call = call
        self._held = ""  # text that may begin a marker
        self._closer: str | None = None  # the closing marker of the block being read
        self._block: list[str] = []  # the block's pieces so far, its opening marker first
        self._tail = ""  # the block's last characters, fewer than its closing marker's

    def feed(self, content: str) -> None:
        if self._closer is not None:
            self._in_block(content)
        elif not self._held and "<" not in content:
            if content:
                self._text(content)  # the common case: no marker can begin here
        else:
            self._in_text(self._held + content)

    def flush(self) -> None:
        held = "".join(self._block) if self._closer is not None else self._held
        self._held, self._closer, self._block = "", None, []
        if held:  # a marker's beginning, or a block never closed: it was text
            self._text(held)

    def _in_text(self, buffer: str) -> None:
        self._held = ""
        at = buffer.find(_MARK)
        while at >= 0:
            # (tested in place: copying the rest at every mark that opens no block made a
            # delta of many such marks quadratic)
            for opener, closer in _OPENERS.items():
                if buffer.startswith(opener, at):
                    if at:
                        self._text(buffer[:at])
                    self._closer, self._block, self._tail = closer, [], ""
                    self._in_block(buffer[at:])
                    return
                if len(buffer) - at < len(opener) and opener.startswith(buffer[at:]):
                    if at:  # a marker still arriving
                        self._text(buffer[:at])
                    self._held = buffer[at:]
                    return
            at = buffer.find(_MARK, at + 1)
        keep = _held_prefix(buffer)
        if keep:
            self._held = buffer[-keep:]
            buffer = buffer[:-keep]
        if buffer:
            self._text(buffer)

    def _in_block(self, content: str) -> None:
        closer = self._closer
        assert closer is not None
        window = self._tail + content
        end = window.find(closer)
        if end < 0:
            self._block.append(content)
            self._tail = window[len(window) - len(closer) + 1 :]
            return
        cut = end + len(closer) - len(self._tail)  # where the marker ends in `content`
        self._block.append(content[:cut])
        whole = "".join(self._block)
        self._closer, self._block, self._tail = None, [], ""
        calls = read_block(whole[whole.index(">") + 1 : len(whole) - len(closer)])
        if calls is None:
            logger.warning("a DSML block that is no block of calls passed on as text")
            self._text(whole)  # as it came
        else:
            for name, arguments in calls:
                self._call(name, arguments)
        if cut < len(content):
            self._in_text(content[cut:])
