"""A review of DeepSeek's DSML calls read as they stream (881e539), by probing it: the
faults it left and the rules it keeps, each through the public path (a loopback server
or a replayed stream) or through `DsmlSplitter` itself.

Bodies are written from DeepSeek's grammar (the module docstring of
`rxllm.providers.dsml`)."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Done, Failed, ToolRequest
from tests.providers.test_dsml_streaming import _chunk, _Out, _paced
from tests.support import Serve, replay, summarize

BAR = "\uff5c"
M = f"{BAR}DSML{BAR}"


def _block(value: str, string: str, name: str = "f", parameter: str = "a") -> str:
    return (
        f"<{M}tool_calls>\n"
        f'<{M}invoke name="{name}">\n'
        f'<{M}parameter name="{parameter}" string="{string}">{value}</{M}parameter>\n'
        f"</{M}invoke>\n"
        f"</{M}tool_calls>"
    )


def _stream(*contents: bytes | str, finish: str = "stop") -> bytes:
    """A chat stream: each content a delta, each bytes a chunk as it is."""
    frames = [_chunk({"role": "assistant", "content": ""})]
    frames += [c if isinstance(c, bytes) else _chunk({"content": c}) for c in contents]
    return b"".join([*frames, _chunk({}, finish), b"data: [DONE]\n\n"])


# -- faults ---------------------------------------------------------------------------

ROWS = [{"id": n, "name": f"row {n}"} for n in range(60)]


async def test_a_long_json_value_arriving_slowly_is_no_stall(serve: Serve) -> None:
    """A `string="false"` value was held whole until its parameter closed: no output
    while a long one arrived, so `idle_timeout` ended the turn in the middle of the
    call, as 881e539 fixed for text values. 30 deltas 0.1 s apart, each deadline 0.8 s."""
    content = _block(json.dumps(ROWS), "false", name="insert", parameter="rows")
    base_url = await _paced(serve, content, count=30, pause=0.1)
    tool = rxllm.Tool(name="insert", description="Insert rows.", parameters={"type": "object"})
    async with rxllm.provider(
        "vllm", base_url=base_url, first_event_timeout=0.8, idle_timeout=0.8
    ) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], tools=[tool]
        )
        record = await provider.complete(request)
    assert isinstance(record.terminal, Done), record.terminal
    assert [(c.name, c.arguments) for c in record.tool_calls] == [("insert", {"rows": ROWS})]


def test_a_json_value_nested_too_deep_is_a_malformed_call() -> None:
    """`json.loads` raises RecursionError, no ValueError, on a value nested deeper than
    it reads: it escaped the splitter, and the turn ended as a protocol error ('an
    unexpected chunk (RecursionError ...)'), where the call's arguments cannot be read."""
    deep = "[" * 5000 + "]" * 5000
    events = replay(_stream("Saving. ", _block(deep, "false", name="save")), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert isinstance(events[-1], Failed) and "'save'" in events[-1].error.message
    assert out.text == "Saving. "


def test_a_native_call_inside_an_open_invoke_leaves_the_dsml_call_whole() -> None:
    """A `tool_calls` delta flushes what the splitters hold, before the call; the DSML
    splitter went back to text there, in the middle of its invoke: the DSML call was
    left open (the turn failed it) and the rest of its markup became the answer's text.
    Nothing held inside a block whose calls began is text: it goes on."""
    content = _block("Paris", "true", name="get_weather", parameter="city")
    half = content.index("Paris") + 2
    native = _chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_native",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"tz": "CET"}'},
                }
            ]
        }
    )
    events = replay(_stream("Checking. ", content[:half], native, content[half:]), "vllm")
    out = summarize(events)
    assert (out.terminal, out.stop_reason) == ("done", "tool_use")
    assert out.text == "Checking. "
    calls = sorted((name, args) for _, name, args in out.tool_calls)
    assert calls == [("get_time", {"tz": "CET"}), ("get_weather", {"city": "Paris"})]
    requests = [e for e in events if isinstance(e, ToolRequest)]
    assert len({e.call_id for e in requests}) == len({e.index for e in requests}) == 2


def test_a_block_cut_in_its_closing_marker_puts_no_markup_in_the_text() -> None:
    """The token limit cut the block in its closing marker, after its call was whole:
    the marker's beginning, held until its `>`, came out as the answer's text."""
    content = "Checking. " + _block("Paris", "true", name="get_weather", parameter="city")
    closing = content.index(f"\n</{M}tool_calls>")
    for cut in range(closing, len(content)):
        out = summarize(replay(_stream(content[:cut], finish="length"), "vllm"))
        assert (out.terminal, out.stop_reason) == ("done", "length"), cut
        assert out.text == "Checking. ", cut
        assert [(n, a) for _, n, a in out.tool_calls] == [("get_weather", {"city": "Paris"})]


# -- what held ------------------------------------------------------------------------

TEXT_VALUES = [
    "a \"quoted\" 'word'",
    'C:\\dir\\n \\u0041 \\"',
    "line\nline\r\nline\ttab",
    "".join(map(chr, range(32))) + "\x7f",
    "emoji \U0001f600 \U0001d11e and 中文",
    f"x </{M}param y",
    f"x </{M}parameter y",
    f"ends </{M}parameter",
    "a < b <",
    "<",
    f"{BAR} alone {BAR}",
    f'<{M}invoke name="g">',
    f"<{M}tool_calls>",
    f"</{M}invoke>",
    "",
]


@pytest.mark.parametrize("value", TEXT_VALUES)
def test_a_text_value_reads_as_written_at_every_split(value: str) -> None:
    """Whatever the value holds, the arguments parse to it exactly, the text around the
    block is whole, and two deltas split anywhere (the marker's halves, U+FF5C alone)
    or one character each read as the whole block does."""
    content = "pre " + _block(value, "true") + " post"

    def read(*deltas: str) -> tuple[str, str, list[object]]:
        out = _Out()
        out.feed(*deltas)
        out.splitter.flush()
        return out.joined_text(), out.arguments_of(0), [v for k, v in out.items if k == "end"]

    whole = read(content)
    assert whole[0] == "pre  post"
    assert json.loads(whole[1]) == {"a": value}
    assert whole[2] == [(0, None)]
    for at in range(len(content) + 1):
        assert read(content[:at], content[at:]) == whole, at
    assert read(*content) == whole


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("3", 3),
        ("-1.5e3", -1500.0),
        (' {"a": [1, {"b": null}]} ', {"a": [1, {"b": None}]}),
        ("[]", []),
        ("null", None),
        ("true", True),
        ('"text"', "text"),
    ],
)
def test_a_json_value_reads_as_written(value: str, parsed: object) -> None:
    for size in (1, 3, len(value) + 200):
        content = _block(value, "false", name="f", parameter="v")
        deltas = [content[i : i + size] for i in range(0, len(content), size)]
        out = summarize(replay(_stream(*deltas), "vllm"))
        assert [(n, a) for _, n, a in out.tool_calls] == [("f", {"v": parsed})], size


@pytest.mark.parametrize(
    "value", ["three", "", "[1,", '1, "x": 2', '{"a": 1} {"b": 2}', "1 x", "NaN"]
)
def test_a_json_value_that_is_no_json_alone_is_never_a_call(value: str) -> None:
    """Even written piece by piece as it comes, a value that is no JSON alone (one that
    would add members beside it) never reaches a ToolRequest: the turn fails naming
    the call."""
    for size in (1, 4, 1000):
        content = "Ok. " + _block(value, "false", name="f", parameter="v")
        deltas = [content[i : i + size] for i in range(0, len(content), size)]
        events = replay(_stream(*deltas), "vllm")
        out = summarize(events)
        assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments"), size
        assert not any(isinstance(e, ToolRequest) for e in events)
        assert isinstance(events[-1], Failed) and "'f'" in events[-1].error.message


async def test_a_record_sends_its_dsml_call_back_as_a_call(serve: Serve) -> None:
    """`to_message()` of the record: the call, under its id, with its arguments, and
    the prose around the block; sent back as OpenAI's `tool_calls`, with no markup."""
    content = "Let me check. " + _block("Paris", "true", name="get_weather", parameter="city")
    bodies: list[dict[str, object]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_stream(*[content[i : i + 5] for i in range(0, len(content), 5)]))
        return response

    base_url = await serve(handler)
    tool = rxllm.Tool(name="get_weather", description="The weather.", parameters={})
    async with rxllm.provider("deepseek", base_url=base_url, api_key="sk-review") as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v4", messages=[rxllm.Message.user("weather?")], tools=[tool]
        )
        record = await provider.complete(request)
        message = record.to_message()
        call = record.tool_calls[0]
        again = rxllm.ChatRequest(
            model="deepseek-v4",
            messages=[
                rxllm.Message.user("weather?"),
                message,
                rxllm.Message.tool(call.call_id, "sunny"),
            ],
            tools=[tool],
        )
        await asyncio.wait_for(provider.complete(again), 10)
    assert message.tool_calls is not None
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        (call.call_id, "get_weather", {"city": "Paris"})
    ]
    sent = bodies[1]["messages"]
    assert isinstance(sent, list)
    assert sent[1]["content"] == "Let me check. "
    assert [json.loads(c["function"]["arguments"]) for c in sent[1]["tool_calls"]] == [
        {"city": "Paris"}
    ]
    assert M not in json.dumps(sent, ensure_ascii=False)
