"""DeepSeek's DSML calls (`rxllm.providers.dsml`): the leftovers session 40 fixed, each
through `DsmlSplitter` itself and through the public path (a replayed stream or a
loopback server). Bodies are written from DeepSeek's grammar (the module's docstring)."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Failed, TextDelta, ToolRequest, ToolStart
from tests.providers.test_dsml_review import _stream
from tests.providers.test_dsml_streaming import _Out
from tests.support import Serve, replay, summarize

BAR = "\uff5c"
M = f"{BAR}DSML{BAR}"


def _invoke(name: str, *parameters: tuple[str, str, str]) -> str:
    """An invoke of (name, string, value) parameters, laid out as DeepSeek writes it."""
    said = "".join(
        f'<{M}parameter name="{n}" string="{s}">{v}</{M}parameter>\n' for n, s, v in parameters
    )
    return f'<{M}invoke name="{name}">\n{said}</{M}invoke>\n'


def _read(*deltas: str) -> tuple[str, dict[int, str], list[tuple[int, str | None]]]:
    """What a splitter makes of the deltas: its text, each call's arguments, its ends."""
    out = _Out()
    out.feed(*deltas)
    out.splitter.flush()
    arguments: dict[int, str] = {}
    for kind, value in out.items:
        if kind == "args":
            arguments[value[0]] = arguments.get(value[0], "") + value[1]
    return out.joined_text(), arguments, [v for k, v in out.items if k == "end"]


def _every_split(content: str) -> None:
    """Two deltas split anywhere, and one character each, read as the whole does."""
    whole = _read(content)
    for at in range(len(content) + 1):
        assert _read(content[:at], content[at:]) == whole, at
    assert _read(*content) == whole


# -- a value JSON cannot hold ----------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", '{"a": [1, NaN]}']
)
def test_a_value_json_cannot_hold_ends_its_call_at_its_close(value: str) -> None:
    """`json.loads` reads NaN, the infinities and a number beyond a float's range, so
    the splitter took such a value as JSON and read on: the rest of the invoke went into
    the call, which ended as whole (None), and only argument accumulation refused it at
    the invoke's end. It is no JSON: the call ends at its close with its markup, as
    for any other value that is none, and what follows is text."""
    parameter = f'<{M}parameter name="v" string="false">{value}</{M}parameter>'
    rest = f'\n<{M}parameter name="w" string="true">x</{M}parameter>\n</{M}invoke>\n'
    content = f'<{M}tool_calls>\n<{M}invoke name="f">\n{parameter}{rest}</{M}tool_calls>'
    text, _, ends = _read(content)
    assert ends == [(0, f'<{M}invoke name="f">{parameter}')]
    assert text == rest + f"</{M}tool_calls>"
    _every_split(content)


@pytest.mark.parametrize("value", ["NaN", "1e400", "-Infinity"])
def test_a_value_json_cannot_hold_is_a_malformed_call(value: str) -> None:
    """Through the pipeline: the turn fails naming the call, and no call is requested,
    not the one after it in the block either."""
    content = (
        "Ok. "
        + f"<{M}tool_calls>\n"
        + _invoke("f", ("v", "false", value))
        + _invoke("g")
        + f"</{M}tool_calls>"
    )
    events = replay(_stream(content), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert isinstance(events[-1], Failed) and "'f'" in events[-1].error.message
    assert not any(isinstance(e, ToolRequest) for e in events)
    assert out.text == "Ok. "


@pytest.mark.parametrize("value", ["1e-400", "1e308", "-0", "12345678901234567890", '"NaN"'])
def test_a_value_at_the_edge_of_json_still_reads(value: str) -> None:
    content = f"<{M}tool_calls>\n" + _invoke("f", ("v", "false", value)) + f"</{M}tool_calls>"
    out = summarize(replay(_stream(content), "vllm"))
    assert [(n, a) for _, n, a in out.tool_calls] == [("f", {"v": json.loads(value)})]


# -- prose after a whole invoke, the block never closed ----------------------------------


@pytest.mark.parametrize("space", ["", " ", "\n\n", "\r\n", "\t \n  "])
def test_prose_after_a_whole_invoke_keeps_its_leading_whitespace(space: str) -> None:
    """The block is never closed: the prose after its last invoke ends it and is text.
    The whitespace before the prose was dropped as the space between tags; it is the
    prose's (and nothing the model said is lost)."""
    content = f"Sure.<{M}tool_calls>\n" + _invoke("now") + space + "Then the time."
    text, arguments, ends = _read(content)
    assert (text, arguments, ends) == ("Sure.\n" + space + "Then the time.", {0: "{}"}, [(0, None)])
    _every_split(content)
    out = summarize(replay(_stream(content), "vllm"))
    assert out.text == "Sure.\n" + space + "Then the time."
    assert [(n, a) for _, n, a in out.tool_calls] == [("now", {})]


def test_whitespace_between_calls_and_before_the_block_end_stays_markup() -> None:
    content = (
        f"<{M}tool_calls>\n\n"
        + _invoke("f")
        + "  \n"
        + _invoke("g")
        + f"\n</{M}tool_calls>\n\nDone."
    )
    text, arguments, ends = _read(content)
    assert (text, arguments, ends) == ("\n\nDone.", {0: "{}", 1: "{}"}, [(0, None), (1, None)])
    _every_split(content)


# -- OpenAI's parallel wrapper written in DSML ------------------------------------------

USES = [
    {"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}},
    {"recipient_name": "functions.get_time", "parameters": {"tz": "CET"}},
]
WRAPPER = f"<{M}tool_calls>\n" + _invoke(
    "multi_tool_use.parallel", ("tool_uses", "false", json.dumps(USES))
)


def _calls(events: list[rxllm.Event]) -> list[tuple[str, str, dict[str, object]]]:
    return [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ToolRequest)]


def test_a_wrapper_written_in_dsml_is_its_calls_in_their_place() -> None:
    """A call named `multi_tool_use.parallel`, which the chat wire unwraps when it comes
    as a native call, was unwrapped only at the turn's end here: its calls came after the
    prose that followed the block, and the splitter's end of the invoke was a `ToolEnd`
    of a call never started. It is whole at its invoke's end: its calls are requested
    there, each under the wrapper's id and `_n`, as a native wrapper's are."""
    events = replay(_stream("Checking. ", WRAPPER + f"</{M}tool_calls>", " Then more."), "vllm")
    out = summarize(events)
    assert (out.terminal, out.stop_reason) == ("done", "tool_use")
    assert out.text == "Checking.  Then more."
    calls = _calls(events)
    assert [(n, a) for _, n, a in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "CET"}),
    ]
    assert calls[0][0].endswith("_0") and calls[1][0] == calls[0][0][:-1] + "1"
    kinds = [type(e) for e in events if isinstance(e, TextDelta | ToolRequest)]
    assert kinds == [TextDelta, ToolRequest, ToolRequest, TextDelta]


def test_a_wrapper_whose_markup_does_not_read_is_the_call_it_came_as() -> None:
    """Its value is no JSON: it ends as the call it came as, with its markup, as any
    DSML call that does not read; the rest of the block was text, sent before the call
    had even started."""
    content = (
        "Ok. "
        + f"<{M}tool_calls>\n"
        + _invoke("multi_tool_use.parallel", ("tool_uses", "false", "three"))
        + f"</{M}tool_calls> and more"
    )
    events = replay(_stream(content), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert [type(e) for e in events] == [TextDelta, ToolStart, Failed]
    assert out.text == "Ok. "
    assert isinstance(events[-1], Failed)
    assert "'multi_tool_use.parallel'" in events[-1].error.message


def test_a_tool_named_parallel_written_in_dsml_is_requested_as_it_came() -> None:
    content = f"<{M}tool_calls>\n" + _invoke("parallel", ("n", "false", "2"))
    events = replay(_stream(content + f"</{M}tool_calls>", " ok"), "vllm")
    assert [(n, a) for _, n, a in _calls(events)] == [("parallel", {"n": 2})]
    kinds = [type(e) for e in events if isinstance(e, TextDelta | ToolRequest)]
    assert kinds == [ToolRequest, TextDelta]


async def test_a_wrapper_written_in_dsml_through_a_provider(serve: Serve) -> None:
    """The public path, tools offered: the record holds the wrapped calls, none named
    after the wrapper, and the prose around the block."""
    content = "Let me look. " + WRAPPER + f"</{M}tool_calls>"

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_stream(*[content[i : i + 7] for i in range(0, len(content), 7)]))
        return response

    base_url = await serve(handler)
    tools = [
        rxllm.Tool(name="get_weather", description="The weather.", parameters={}),
        rxllm.Tool(name="get_time", description="The time.", parameters={}),
    ]
    async with rxllm.provider("vllm", base_url=base_url) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], tools=tools
        )
        record = await provider.complete(request)
    assert record.text == "Let me look. "
    assert [(c.name, c.arguments) for c in record.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "CET"}),
    ]
    assert len({c.call_id for c in record.tool_calls}) == 2
