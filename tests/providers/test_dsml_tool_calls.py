"""DeepSeek's DSML tool calls left in `content` by a host whose tool parser missed them
(sgl-project/sglang#40236, cline/cline#13348, anomalyco/opencode#24566) read as calls.

Bodies are written from DeepSeek's grammar (DeepSeek-V4's encoding/README.md and the
tool prompt its encoding writes; V3.2's block name as vLLM's `deepseek_v32` parser and
ochafik/minja#11 quote it), streamed in small content deltas as a host passes the
tokens on, replayed cut at arbitrary byte boundaries and over a loopback server."""

from __future__ import annotations

import json

import pytest

import rxllm
from rxllm.events import Done, Failed
from tests.support import ServeBody, replay, replay_every_way, summarize

BAR = "\uff5c"  # the fullwidth bar of DeepSeek's special tokens
M = f"{BAR}DSML{BAR}"


def _param(name: str, value: str, is_text: bool = True) -> str:
    flag = "true" if is_text else "false"
    return f'<{M}parameter name="{name}" string="{flag}">{value}</{M}parameter>'


def _invoke(name: str, *params: str) -> str:
    return f'<{M}invoke name="{name}">\n' + "\n".join(params) + f"\n</{M}invoke>"


def _block(*invokes: str, name: str = "tool_calls") -> str:
    return f"<{M}{name}>\n" + "\n".join(invokes) + f"\n</{M}{name}>"


WEATHER = _block(
    _invoke("get_weather", _param("city", "Paris"), _param("days", "3", is_text=False))
)


def _stream(
    content: str,
    finish: str = "stop",
    size: int = 5,
    reasoning: str = "",
) -> bytes:
    """A chat stream whose content comes in deltas of `size` characters, as a host
    passes the model's tokens on; `reasoning` first, in `reasoning_content`."""

    def chunk(delta: dict[str, str], finish_reason: str | None = None) -> str:
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": "deepseek-ai/DeepSeek-V3.2",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    frames = [chunk({"role": "assistant", "content": ""})]
    if reasoning:
        frames.append(chunk({"reasoning_content": reasoning}))
    frames += [chunk({"content": content[i : i + size]}) for i in range(0, len(content), size)]
    frames.append(chunk({}, finish))
    frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def test_a_v4_block_after_prose_is_a_call_whatever_the_chunking() -> None:
    events = replay_every_way(_stream("Let me check.\n\n" + WEATHER), "vllm")
    out = summarize(events)
    assert out.text == "Let me check.\n\n"
    assert [(name, args) for _, name, args in out.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
    assert (out.terminal, out.stop_reason, out.raw_stop_reason) == ("done", "tool_use", "stop")


@pytest.mark.parametrize("size", [1, 3, 7, 64, 10_000])
def test_a_v3_2_block_of_two_invokes_is_two_calls(size: int) -> None:
    """ochafik/minja#11's V3.2 example: `function_calls`, two invokes, a JSON number and
    text in Chinese; each delta size cuts the markers at other places."""
    block = _block(
        _invoke(
            "search",
            _param("query", "search agent benchmark 2024"),
            _param("topn", "10", is_text=False),
            _param("source", "web"),
        ),
        _invoke(
            "search",
            _param("query", "搜索智能体 基准测试"),
            _param("topn", "10", is_text=False),
            _param("source", "web"),
        ),
        name="function_calls",
    )
    out = summarize(replay(_stream(block, size=size), "deepseek"))
    assert out.text == ""
    assert [(name, args) for _, name, args in out.tool_calls] == [
        ("search", {"query": "search agent benchmark 2024", "topn": 10, "source": "web"}),
        ("search", {"query": "搜索智能体 基准测试", "topn": 10, "source": "web"}),
    ]
    assert len({call_id for call_id, _, _ in out.tool_calls}) == 2
    assert out.stop_reason == "tool_use"


def test_text_values_are_kept_as_written_and_json_values_of_every_type() -> None:
    """`string="true"`: the text as it is (a Windows path, `|`, quotes and a newline:
    TokenRhythm/opensquilla#985's command); `string="false"`: JSON of any type."""
    command = "Get-Item -LiteralPath 'D:\\x.nbt' | Select-Object \"FullName\"\nexit"
    block = _block(
        _invoke(
            "exec_command",
            _param("cmd", command),
            _param("options", '{"cwd": "D:\\\\", "env": [1, 2.5, null]}', is_text=False),
            _param("force", "true", is_text=False),
        )
    )
    out = summarize(replay(_stream(block), "vllm"))
    assert out.tool_calls[0][1:] == (
        "exec_command",
        {"cmd": command, "options": {"cwd": "D:\\", "env": [1, 2.5, None]}, "force": True},
    )


def test_reasoning_in_think_tags_then_a_block() -> None:
    """A host that passes the whole output on (Together, NVIDIA): reasoning in `<think>`
    tags, then the block; the reasoning stays reasoning."""
    content = "<think>\nThe user wants the weather.\n</think>\n\n" + WEATHER
    out = summarize(replay_every_way(_stream(content), "together"))
    assert out.reasoning == "The user wants the weather.\n"
    assert out.text == ""
    assert [name for _, name, _ in out.tool_calls] == ["get_weather"]


def test_reasoning_in_its_field_and_prose_after_the_block() -> None:
    out = summarize(replay(_stream(WEATHER + "\nDone.", reasoning="Weather first."), "deepseek"))
    assert out.reasoning == "Weather first."
    assert out.text == "\nDone."
    assert [name for _, name, _ in out.tool_calls] == ["get_weather"]


def test_a_json_value_that_is_no_json_is_a_malformed_call() -> None:
    """The model asked for the call and its arguments cannot be read: an error naming
    the tool, never a call with a guessed value nor the markup as the answer."""
    block = _block(_invoke("get_weather", _param("days", "three", is_text=False)))
    events = replay(_stream(block), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert isinstance(events[-1], Failed) and "get_weather" in events[-1].error.message
    assert out.text == ""


def test_a_block_cut_by_the_token_limit_before_its_invoke_stays_text() -> None:
    cut = WEATHER[: WEATHER.index("invoke") + 3]
    out = summarize(replay(_stream("Checking. " + cut, finish="length"), "vllm"))
    assert out.text == "Checking. " + cut
    assert out.tool_calls == []
    assert out.stop_reason == "length"


def test_a_call_cut_by_the_token_limit_is_cut_off() -> None:
    """Its invoke began: a call, which the turn's end reports cut off, as a chat-wire
    call a `length` finish cut (a block held whole was text)."""
    cut = WEATHER[: WEATHER.index("</")]
    events = replay(_stream("Checking. " + cut, finish="length"), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert isinstance(events[-1], Failed)
    assert "get_weather" in events[-1].error.message
    assert "the turn stopped (length)" in events[-1].error.message
    assert out.text == "Checking. "


def test_an_invoke_never_closed_in_a_closed_block_is_malformed() -> None:
    """Luce-Org/lucebox#742: the call began, and its arguments cannot be read."""
    events = replay_every_way(_stream(WEATHER.replace(f"\n</{M}invoke>", "")), "vllm")
    out = summarize(events)
    assert (out.terminal, out.error_kind) == ("error", "malformed_tool_arguments")
    assert isinstance(events[-1], Failed) and "get_weather" in events[-1].error.message
    assert out.text == ""


@pytest.mark.parametrize(
    "content",
    [
        # a bare invoke, no block around it: not a call the model committed to
        # (ai-dynamo/frontend-crates#123)
        _invoke("get_weather", _param("city", "Paris")),
        # the doubled bar V4 Flash has leaked (MetaFARS/codex-relay#49), its own grammar
        WEATHER.replace(M, f"{BAR}{BAR}DSML{BAR}{BAR}"),
        # a block closed before any invoke
        f"<{M}tool_calls>\n</{M}tool_calls>",
        # prose that names the marker
        f"DeepSeek wraps calls in <{M}tool_calls> blocks.",
    ],
)
def test_markup_that_is_no_whole_block_stays_text(content: str) -> None:
    out = summarize(replay_every_way(_stream(content), "vllm"))
    assert out.text == content
    assert out.tool_calls == []
    assert out.stop_reason == "stop"


def test_an_endpoint_without_the_option_leaves_the_markup_as_text() -> None:
    """OpenAI's own endpoint serves no DeepSeek model: the option is off there."""
    out = summarize(replay(_stream(WEATHER), "openai"))
    assert out.text == WEATHER
    assert out.tool_calls == []


WEATHER_TOOL = rxllm.Tool(
    name="get_weather", description="The weather.", parameters={"type": "object"}
)


async def test_a_block_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_stream("Let me check.\n\n" + WEATHER, size=3))
    async with rxllm.provider("vllm", base_url=base_url) as provider:
        request = rxllm.ChatRequest(
            model="deepseek-v3.2", messages=[rxllm.Message.user("hi")], tools=[WEATHER_TOOL]
        )
        record = await provider.complete(request)
    assert isinstance(record.terminal, Done), record.terminal
    assert record.terminal.stop_reason == "tool_use"
    assert record.text == "Let me check.\n\n"
    assert [(c.name, c.arguments) for c in record.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
