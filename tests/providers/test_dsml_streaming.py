"""DeepSeek's DSML calls read as they stream, as a host's `deepseek_v32` / `deepseek_v4`
tool parser delivers them: a call starts at its invoke's tag, its arguments flow as its
parameters are read. Held whole until the block closed, a long call (a big file write)
gave the deadlines no output, and `idle_timeout` (or `first_event_timeout`, for a turn
that opens with the block) ended the turn while the call was arriving.

Bodies are written from DeepSeek's grammar (the module docstring of
`rxllm.providers.dsml`), served by a loopback server that sends each piece of content
after the last, as a host passes the tokens on."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Done, Failed, ToolRequest, ToolStart
from rxllm.providers.dsml import DsmlSplitter
from tests.support import Serve, replay, summarize

BAR = "\uff5c"
M = f"{BAR}DSML{BAR}"

# A file written in a call: far longer than the deadlines below when paced.
FILE = "".join(f'line {n}: say "hi"\\n\n' for n in range(40))
WRITE = (
    f"<{M}tool_calls>\n"
    f'<{M}invoke name="write_file">\n'
    f'<{M}parameter name="path" string="true">notes/hi.txt</{M}parameter>\n'
    f'<{M}parameter name="content" string="true">{FILE}</{M}parameter>\n'
    f'<{M}parameter name="mode" string="false">{{"append": false}}</{M}parameter>\n'
    f"</{M}invoke>\n"
    f"</{M}tool_calls>"
)
ARGUMENTS = {"path": "notes/hi.txt", "content": FILE, "mode": {"append": False}}
TOOL = rxllm.Tool(name="write_file", description="Write a file.", parameters={"type": "object"})


def _chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
    payload = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "deepseek-ai/DeepSeek-V3.2",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def _pieces(content: str, count: int) -> list[str]:
    size = -(-len(content) // count)
    return [content[i : i + size] for i in range(0, len(content), size)]


async def _paced(serve: Serve, content: str, count: int, pause: float) -> str:
    """A server that streams `content` in `count` deltas, `pause` seconds apart."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_chunk({"role": "assistant", "content": ""}))
        for piece in _pieces(content, count):
            await asyncio.sleep(pause)
            await response.write(_chunk({"content": piece}))
        await response.write(_chunk({}, "stop") + b"data: [DONE]\n\n")
        return response

    return await serve(handler)


@pytest.mark.parametrize("prose", ["", "I'll write it.\n\n"], ids=["opens the turn", "after prose"])
async def test_a_long_call_arriving_slowly_is_no_stall(serve: Serve, prose: str) -> None:
    """30 deltas 0.1 s apart: the block takes three seconds, each deadline 0.8 s. A
    turn that stalled would end `error(stalled)`."""
    base_url = await _paced(serve, prose + WRITE, count=30, pause=0.1)
    async with rxllm.provider(
        "vllm", base_url=base_url, first_event_timeout=0.8, idle_timeout=0.8
    ) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], tools=[TOOL]
        )
        record = await provider.complete(request)
    assert isinstance(record.terminal, Done), record.terminal
    assert record.terminal.stop_reason == "tool_use"
    assert record.text == prose
    assert [(c.name, c.arguments) for c in record.tool_calls] == [("write_file", ARGUMENTS)]


class _Out:
    """What a splitter let out, in order: text, starts, argument fragments, ends."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []
        self.splitter = DsmlSplitter(self.text, self.start, self.arguments, self.end)

    def text(self, text: str) -> None:
        self.items.append(("text", text))

    def start(self, name: str) -> int:
        self.items.append(("start", name))
        return sum(kind == "start" for kind, _ in self.items) - 1

    def arguments(self, index: int, piece: str) -> None:
        self.items.append(("args", (index, piece)))

    def end(self, index: int, arguments: str | None = None) -> None:
        self.items.append(("end", (index, arguments)))

    def feed(self, *deltas: str) -> list[tuple[str, Any]]:
        """What the deltas let out, each delta's apart."""
        seen = len(self.items)
        for delta in deltas:
            self.splitter.feed(delta)
        return self.items[seen:]

    def arguments_of(self, index: int) -> str:
        return "".join(piece for i, piece in self._of("args") if i == index)

    def _of(self, kind: str) -> list[Any]:
        return [value for k, value in self.items if k == kind]

    def joined_text(self) -> str:
        return "".join(self._of("text"))


def test_a_call_starts_at_its_invoke_and_its_text_values_flow() -> None:
    out = _Out()
    assert out.feed(f"<{M}tool_calls>\n") == []  # a block's opening alone: nothing yet
    assert out.feed(f'<{M}invoke name="write_file">\n') == [("start", "write_file")]
    assert out.feed(f'<{M}parameter name="path" string="true">notes/') == [
        ("args", (0, '{"path": "')),
        ("args", (0, "notes/")),
    ]
    # a possible closing tag at a delta's end is held; text goes out JSON-escaped
    assert out.feed('a "b"\n</') == [("args", (0, 'a \\"b\\"\\n'))]
    assert out.feed(f"{M}parameter>") == [("args", (0, '"'))]
    # a JSON value flows as it came too, checked whole when its parameter closes
    assert out.feed(f'<{M}parameter name="n" string="false">[1, ') == [
        ("args", (0, ', "n": ')),
        ("args", (0, "[1, ")),
    ]
    assert out.feed(f"2]</{M}parameter>\n</{M}invoke>") == [
        ("args", (0, "2]")),
        ("args", (0, "}")),
        ("end", (0, None)),
    ]
    assert out.feed(f"\n</{M}tool_calls>") == []
    assert json.loads(out.arguments_of(0)) == {"path": 'notes/a "b"\n', "n": [1, 2]}


def test_an_invoke_without_parameters_is_an_empty_object() -> None:
    out = _Out()
    out.feed(f'<{M}tool_calls>\n<{M}invoke name="now">\n</{M}invoke>\n</{M}tool_calls>ok')
    out.splitter.flush()
    assert out.arguments_of(0) == "{}"
    assert out.joined_text() == "ok"


@pytest.mark.parametrize("size", [1, 2, 5, 17, 1000])
def test_every_split_gives_the_same_calls_and_text(size: int) -> None:
    content = "Sure.\n\n" + WRITE + "\nDone."
    out = _Out()
    out.feed(*[content[i : i + size] for i in range(0, len(content), size)])
    out.splitter.flush()
    assert out.joined_text() == "Sure.\n\n\nDone."
    assert json.loads(out.arguments_of(0)) == ARGUMENTS
    assert [value for kind, value in out.items if kind == "end"] == [(0, None)]


def test_a_block_that_breaks_before_any_invoke_is_text_as_it_came() -> None:
    content = f"<{M}tool_calls>\n  <{M}tool_calls> no call here"
    out = _Out()
    out.feed(*content)
    out.splitter.flush()
    assert out.joined_text() == content
    assert [kind for kind, _ in out.items] == ["text"] * len(out.items)


def test_a_block_cut_before_any_invoke_is_text() -> None:
    out = _Out()
    out.feed("Checking. ", f"<{M}tool_calls>\n<{M}inv")
    out.splitter.flush()
    assert out.joined_text() == f"Checking. <{M}tool_calls>\n<{M}inv"


def test_a_call_that_is_cut_stays_open() -> None:
    """The stream ends inside the invoke: the call was started and is never ended here;
    the turn's end reports it as a call cut off (`accumulate_tool_arguments`)."""
    out = _Out()
    out.feed(f'<{M}tool_calls>\n<{M}invoke name="f">\n<{M}parameter name="a" string="true">x')
    out.splitter.flush()
    assert [kind for kind, _ in out.items] == ["start", "args", "args"]
    assert out.arguments_of(0) == '{"a": "x'


@pytest.mark.parametrize(
    ("inside", "said"),
    [
        # a JSON value that is no JSON: the invoke and that parameter, as written
        (
            f'<{M}parameter name="days" string="false">three</{M}parameter>',
            f'<{M}parameter name="days" string="false">three</{M}parameter>',
        ),
        # a value that would read as JSON only beside the other members
        (
            f'<{M}parameter name="days" string="false">1, "x": 2</{M}parameter>',
            f'<{M}parameter name="days" string="false">1, "x": 2</{M}parameter>',
        ),
        # a parameter said twice
        (
            f'<{M}parameter name="city" string="true">Paris</{M}parameter>'
            f'<{M}parameter name="city" string="true">Rome</{M}parameter>',
            f'<{M}parameter name="city" string="true">',
        ),
        # the block's end where the invoke's belongs (Luce-Org/lucebox#742)
        (f'<{M}parameter name="city" string="true">Paris</{M}parameter>\n</{M}tool_calls>', ""),
    ],
)
def test_an_invoke_that_does_not_read_ends_with_its_markup(inside: str, said: str) -> None:
    """The call started and cannot go back to text: it ends with arguments that are its
    markup, which are never JSON, so the turn reports it malformed."""
    invoke = f'<{M}invoke name="get_weather">'
    out = _Out()
    out.feed(f"<{M}tool_calls>\n{invoke}\n{inside}\n</{M}invoke>\n</{M}tool_calls>")
    out.splitter.flush()
    ends = [value for kind, value in out.items if kind == "end"]
    assert ends == [(0, invoke + said)]


def _stream(content: str, finish: str = "stop") -> bytes:
    frames = [_chunk({"role": "assistant", "content": ""})]
    frames += [_chunk({"content": piece}) for piece in _pieces(content, 40)]
    frames.append(_chunk({}, finish) + b"data: [DONE]\n\n")
    return b"".join(frames)


def test_a_call_cut_by_the_token_limit_is_reported_cut() -> None:
    """As a chat-wire call cut off by `length`: the turn fails, naming the call and the
    stop, where the block held whole was text."""
    cut = WRITE[: WRITE.index("line 20")]
    events = replay(_stream("Writing. " + cut, finish="length"), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert isinstance(events[-1], Failed)
    assert "write_file" in events[-1].error.message
    assert "the turn stopped (length)" in events[-1].error.message
    assert out.text == "Writing. "
    assert [type(e) for e in events if isinstance(e, ToolStart | ToolRequest)] == [ToolStart]


def test_a_whole_call_before_the_cut_is_a_call() -> None:
    """The token limit cut the block after its invoke closed: the call is whole."""
    cut = WRITE[: WRITE.index(f"</{M}tool_calls>")]
    out = summarize(replay(_stream(cut, finish="length"), "vllm"))
    assert [(name, args) for _, name, args in out.tool_calls] == [("write_file", ARGUMENTS)]
    assert (out.terminal, out.stop_reason) == ("done", "length")


def test_a_delta_of_many_blocks_is_read_in_one_pass() -> None:
    """Each block read from where the last ended, not by a call per block on the rest:
    a delta of 3,000 blocks (a looping host) raised RecursionError at the 500th."""
    block = f'<{M}tool_calls>\n<{M}invoke name="f">\n</{M}invoke>\n</{M}tool_calls>'
    out = _Out()
    out.feed(block * 3000)
    assert [value for kind, value in out.items if kind == "start"] == ["f"] * 3000
