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

A call is read as those parsers deliver it: it starts as soon as its invoke's tag is
read inside an opened block, and its arguments, the JSON text of an object, flow as its
parameters are read: a `string="true"` value as a JSON string, in escaped pieces as they
come; a `string="false"` value as it came, in pieces as they come too, and checked to be
JSON alone when its parameter closes (one that is not ends the call with its markup,
which replaces what was written: `fragments.ToolEnd`); the closing `}` at the invoke's
end, which ends the call. So a long call (a file written in it, a long array) is output
all along, never a silence that `operators.deadlines` would end while it arrives.

Rules, chosen to never turn text into a call by accident nor lose what the model said:

- Only an invoke inside an opened block is a call: the block's opening marker, then
  invokes of parameters, whitespace between them, and the closing marker. Prose may
  come before and after it.
- Until its first invoke, a block is still text: one that does not go on so (prose that
  names the marker, a block closed or cut before any invoke) is text, as it came. A
  corrupted marker such as the doubled bars of `<||DSML||`, or a bare invoke with no
  block around it, opens nothing: those shapes are the model's slips, and reading them
  would guess at a call it never committed to (ai-dynamo/frontend-crates#123).
- A call started is a call: it never goes back to text. An invoke that does not read
  as one (a `string="false"` value that is no JSON, NaN and the infinities among them,
  a parameter named twice, anything else where a parameter or the invoke's end belongs,
  as the block's end where an invoke was never closed) ends its call with its markup as
  its arguments (its tag and the part that does not read), which are never JSON:
  `operators.accumulate_tool_arguments` reports them as malformed, naming the call,
  since the model asked for the call and its arguments cannot be read. What follows is
  read as text.
- A call the stream cuts (the token limit) is left open, as the chat wire leaves a call
  a `length` finish cut: the turn's end reports it cut off. Nothing held inside a block
  whose calls began is text (a tag's beginning is markup): a flush keeps the block's
  place, so a call another call's delta comes in the middle of goes on.
- After a whole invoke, anything but another invoke or the block's end ends the block
  there, and is read as text, with the whitespace before it.

A possible marker at the end of a delta is held until the next delta says what it is;
so is a tag inside a block (DSML's own, at most `_LONGEST_TAG` characters) until its `>`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from loguru import logger

from rxllm.fragments import STRICT_JSON

__all__ = ["DsmlSplitter"]

_MARK = "<\uff5cDSML\uff5c"
_END_MARK = "</\uff5cDSML\uff5c"
_OPENERS = {f"{_MARK}{name}>": f"{_END_MARK}{name}>" for name in ("function_calls", "tool_calls")}
"""Each block's opening marker and its closing one: V3.2's name, V4's."""

_INVOKE = re.compile(r'<\uff5cDSML\uff5cinvoke\s+name="([^"]+)"\s*>')
_PARAMETER = re.compile(r'<\uff5cDSML\uff5cparameter\s+name="([^"]+)"\s+string="(true|false)"\s*>')
_INVOKE_END = f"{_END_MARK}invoke>"
_PARAMETER_END = f"{_END_MARK}parameter>"
_NOT_SPACE = re.compile(r"\S")

# A tag of DSML's still open after this many characters is none: its names are a tool's
# and a parameter's (OpenAI caps a function's at 64), and holding more would hold the
# output back.
_LONGEST_TAG = 1024

# Where the splitter is: in text; in a block, between invokes; in an invoke, between its
# parameters; in a parameter's value, text or JSON.
_TEXT, _BLOCK, _INVOKE_BODY, _STRING, _JSON = range(5)


def _held_prefix(buffer: str, start: int) -> int:
    """The length of the longest end of `buffer[start:]` that is a proper beginning of a
    block's opening marker."""
    for opener in _OPENERS:
        for size in range(min(len(opener) - 1, len(buffer) - start), 0, -1):
            if buffer.endswith(opener[:size]):
                return size
    return 0


def _held_end(buffer: str, start: int) -> int:
    """The length of the longest end of `buffer[start:]` that is a proper beginning of a
    parameter's closing tag (whose only `<` is its first character)."""
    at = buffer.rfind("<", max(len(buffer) - len(_PARAMETER_END) + 1, start))
    return len(buffer) - at if at >= 0 and _PARAMETER_END.startswith(buffer[at:]) else 0


def _may_be_tag(buffer: str, at: int) -> bool:
    """Whether `buffer[at:]`, no whole tag of those expected there, may still become
    one: a beginning of a DSML tag whose `>` has not come (a `>` inside a quoted name
    does not end it), short enough."""
    size = len(buffer) - at
    if size > _LONGEST_TAG:
        return False
    if not any(buffer.startswith(start[:size], at) for start in (_MARK, _END_MARK)):
        return False
    end = buffer.find(">", at)
    while end >= 0:
        if buffer.count('"', at, end) % 2 == 0:
            return False  # a tag ended there, and none that reads here
        end = buffer.find(">", end + 1)
    return True


def _escaped(text: str) -> str:
    """`text` as it reads inside a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class DsmlSplitter:
    """Feed content deltas; text comes out through `text`, calls through `start(name)`
    (which returns the call's index), `arguments(index, fragment)` and `end(index,
    arguments)`: None at the invoke's end (the fragments are the arguments), or the
    markup of an invoke that does not read. One instance per stream; `flush()` releases
    what is held back as text and must be called before any event that comes after the
    text so far.

    Held back at most: a marker's or a tag's beginning, the block's opening and the
    whitespace after it until its first invoke, and the whitespace after an invoke until
    what follows it. A `string="false"` value's pieces are also kept, written, until its
    parameter closes, to check it. Each delta is read once: O(size)."""

    __slots__ = (
        "_arguments",
        "_call",
        "_closer",
        "_end",
        "_held",
        "_invoke",
        "_names",
        "_opening",
        "_parameter_tag",
        "_space",
        "_start",
        "_state",
        "_text",
        "_value",
    )

    def __init__(
        self,
        text: Callable[[str], None],
        start: Callable[[str], int],
        arguments: Callable[[int, str], None],
        end: Callable[[int, str | None], None],
    ) -> None:
        self._text = text
        self._start = start
        self._arguments = arguments
        self._end = end
        self._state = _TEXT
        self._held = ""  # what may begin a marker, a tag, or a parameter's closing tag
        self._closer = ""  # the closing marker of the block being read
        # The block's opening marker and the whitespace after it, text until an invoke.
        self._opening: list[str] | None = None
        # The whitespace after the block's last invoke: text if prose follows it.
        self._space: list[str] = []
        self._call = 0  # the index of the call being read
        self._invoke = ""  # its invoke's tag
        self._names: set[str] = set()  # its parameters so far
        self._parameter_tag = ""  # a JSON parameter's tag
        self._value: list[str] = []  # its value's pieces so far

    def feed(self, content: str) -> None:
        if self._state == _TEXT and not self._held and "<" not in content:
            if content:
                self._text(content)  # the common case: no marker can begin here
            return
        buffer = self._held + content
        self._held = ""
        # One loop over the delta, each step reading from a position, never a copy of the
        # rest: a delta of many marks or blocks (a hostile or looping host; a host's line
        # may be 16 MB) costs its length, not its length times its marks.
        at, size = 0, len(buffer)
        while at < size:
            state = self._state
            if state == _TEXT:
                at = self._in_text(buffer, at)
            elif state >= _STRING:
                at = self._in_value(buffer, at)
            else:  # between tags
                space, found = at, _NOT_SPACE.search(buffer, at)
                at = size if found is None else found.start()
                if at > space:
                    if self._opening is not None:
                        self._opening.append(buffer[space:at])
                    elif state == _BLOCK:
                        self._space.append(buffer[space:at])
                if at < size:
                    at = self._tag(buffer, at)

    def flush(self) -> None:
        opening = self._opening
        if opening is None and self._state != _TEXT:
            # In a block whose calls began: what is held is markup, not text, and a call
            # open stays open (cut off, if the stream ends here).
            return
        held = self._held if opening is None else "".join(opening) + self._held
        self._state, self._held, self._opening = _TEXT, "", None
        if held:  # a marker's or a tag's beginning, or a block with no invoke yet
            self._text(held)

    def _in_text(self, buffer: str, start: int) -> int:
        """Read text from `start`: the position after a block's opening marker, or the
        buffer's end."""
        at = buffer.find(_MARK, start)
        while at >= 0:
            for opener, closer in _OPENERS.items():
                if buffer.startswith(opener, at):
                    if at > start:
                        self._text(buffer[start:at])
                    self._state, self._closer, self._opening = _BLOCK, closer, [opener]
                    return at + len(opener)
                if len(buffer) - at < len(opener) and buffer.startswith(
                    opener[: len(buffer) - at], at
                ):
                    if at > start:  # a marker still arriving
                        self._text(buffer[start:at])
                    self._held = buffer[at:]
                    return len(buffer)
            at = buffer.find(_MARK, at + 1)
        end = len(buffer) - _held_prefix(buffer, start)
        if end < len(buffer):
            self._held = buffer[end:]
        if end > start:
            self._text(buffer[start:end])
        return len(buffer)

    def _tag(self, buffer: str, at: int) -> int:
        """Read the tag at `at`, between invokes or between an invoke's parameters: the
        position after it (the buffer's end when it is held, `at` when it does not read)."""
        if self._state == _BLOCK:
            invoke = _INVOKE.match(buffer, at)
            if invoke is not None:
                self._opening, self._space = None, []  # a call: the block is no text any more
                self._call = self._start(invoke[1])
                self._invoke, self._names, self._state = invoke[0], set(), _INVOKE_BODY
                return invoke.end()
            if buffer.startswith(self._closer, at):
                if self._opening is not None:  # a block of no invoke: text, as it came
                    self._text("".join(self._opening) + self._closer)
                self._state, self._opening, self._space = _TEXT, None, []
                return at + len(self._closer)
        else:
            parameter = _PARAMETER.match(buffer, at)
            if parameter is not None:
                self._parameter(parameter[0], parameter[1], parameter[2] == "true")
                return parameter.end()
            if buffer.startswith(_INVOKE_END, at):
                self._arguments(self._call, "}" if self._names else "{}")
                self._end(self._call, None)
                self._state = _BLOCK
                return at + len(_INVOKE_END)
        if _may_be_tag(buffer, at):
            self._held = buffer[at:]
            return len(buffer)
        if self._state != _BLOCK:
            self._unread("")
        elif self._opening is not None:  # no call yet: the block was text
            self._text("".join(self._opening))
        else:
            logger.warning("a DSML block went on after its calls with no invoke: read as text")
            if self._space:  # the prose's own leading whitespace
                self._text("".join(self._space))
                self._space = []
        self._state, self._opening = _TEXT, None
        return at

    def _parameter(self, tag: str, name: str, is_text: bool) -> None:
        """A parameter's tag: its member of the arguments begins."""
        if name in self._names:  # which of the values did the model mean?
            self._unread(tag)
            return
        member = ("{" if not self._names else ", ") + json.dumps(name, ensure_ascii=False) + ": "
        self._names.add(name)
        if is_text:
            self._arguments(self._call, member + '"')
            self._state = _STRING
        else:
            self._arguments(self._call, member)
            self._parameter_tag, self._value, self._state = tag, [], _JSON

    def _in_value(self, buffer: str, at: int) -> int:
        """Read a parameter's value from `at`: the position after its closing tag, or
        the buffer's end."""
        end = buffer.find(_PARAMETER_END, at)
        if end < 0:
            end = len(buffer) - _held_end(buffer, at)
            if end < len(buffer):
                self._held = buffer[end:]
            if end > at:
                self._piece(buffer[at:end])
            return len(buffer)
        if self._state == _STRING:
            self._arguments(self._call, _escaped(buffer[at:end]) + '"')
            self._state = _INVOKE_BODY
        else:
            if end > at:
                self._piece(buffer[at:end])
            value = "".join(self._value)
            self._value = []
            try:
                # (NaN, the infinities and 1e400 too: refused here, at the value's close,
                # not at the invoke's end with the rest of the invoke read as the call's)
                STRICT_JSON.decode(value)
            except (ValueError, RecursionError):  # no JSON (or deeper than it reads), or
                # JSON only beside what is around it: what was written is replaced
                self._unread(self._parameter_tag + value + _PARAMETER_END)
            else:  # the model's JSON as written (whole: it adds no other member)
                self._state = _INVOKE_BODY
        return end + len(_PARAMETER_END)

    def _piece(self, piece: str) -> None:
        """A piece of a parameter's value: a text value's escaped, a JSON value's as it
        came (kept, to check it whole)."""
        if self._state == _STRING:
            self._arguments(self._call, _escaped(piece))
        else:
            self._arguments(self._call, piece)
            self._value.append(piece)

    def _unread(self, said: str) -> None:
        """The invoke being read does not read as one: its call ends with its tag and
        `said` (what did not read) as its arguments, and what follows is text."""
        logger.warning("a DSML invoke that does not read as one: its call is malformed")
        self._end(self._call, self._invoke + said)
        self._state = _TEXT
