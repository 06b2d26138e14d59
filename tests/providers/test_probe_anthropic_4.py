"""The Anthropic wire against Anthropic-compatible servers and across an agent loop: each
stream made by hand from what the issues named beside its test report of DeepSeek's,
Kimi's and MiniMax's `/anthropic` endpoints and of the proxies that translate other
wires into the Messages API (LiteLLM, Bifrost); each next turn recorded by a loopback
server and checked against Anthropic's "Thinking in tool and multi-turn workflows"
("Echo the assistant message exactly as received"). Ids and values are made up."""

from __future__ import annotations

import base64
from typing import Any

import rxllm
from rxllm import ChatRequest, Message, StreamRecord, Tool
from rxllm.events import Done
from rxllm.providers.anthropic import Anthropic
from rxllm.request import ImagePart, TextPart
from tests.providers.test_anthropic_shapes import START, STOP, delta, end, run, sse, start, stop
from tests.support import Recorder, Serve

QUESTION = Message.user("Weather and time in Paris?")
TOOLS = [Tool(name="weather"), Tool(name="clock")]
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(8)).decode()


def thinking(index: int, text: str, sig: str | None, **block: Any) -> list[Any]:
    """A thinking block (its start's other fields in `block`); `sig` None sends no
    `signature_delta` at all."""
    frames = [
        start(index, {"type": "thinking", "thinking": "", **block}),
        delta(index, {"type": "thinking_delta", "thinking": text}),
    ]
    if sig is not None:
        frames.append(delta(index, {"type": "signature_delta", "signature": sig}))
    return [*frames, stop(index)]


def text(index: int, value: str) -> list[Any]:
    return [
        start(index, {"type": "text", "text": ""}),
        delta(index, {"type": "text_delta", "text": value}),
        stop(index),
    ]


def call(index: int, call_id: str, name: str, arguments: str) -> list[Any]:
    return [
        start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        delta(index, {"type": "input_json_delta", "partial_json": arguments}),
        stop(index),
    ]


async def loop(
    serve: Serve, first: bytes, follow_up: list[Message]
) -> tuple[StreamRecord, dict[str, Any]]:
    """Turn 1 answered with `first`; turn 2 sends the question, `record.to_message()`
    and `follow_up`. Returns turn 1's record and the body turn 2 sent."""
    recorder = Recorder(answers={"/messages": first})
    base_url = await serve(recorder.handle)
    params = {**THINKING, "cache_control": {"type": "ephemeral"}}
    async with rxllm.provider("anthropic", api_key="sk-probe", base_url=base_url) as p:
        record = await p.complete(
            ChatRequest(model="m", messages=[QUESTION], tools=TOOLS, params=params)
        )
        assert isinstance(record.terminal, Done), record.terminal
        history = [QUESTION, record.to_message(), *follow_up]
        await p.complete(ChatRequest(model="m", messages=history, tools=TOOLS, params=params))
    return record, recorder.requests[-1]["body"]


async def test_an_agent_loop_sends_the_turn_back_as_it_came(serve: Serve) -> None:
    """Signed thinking and redacted thinking first, unchanged; the text; both parallel
    calls with their exact ids and inputs; then one user message of their results in
    call order, the failed one `is_error`, the other holding an image. (Passed before:
    the loop as Anthropic documents it, kept as the reference the fixes below extend.)"""
    first = sse(
        START,
        *thinking(0, "Two tools are needed.", "SIG/A+=="),
        start(1, {"type": "redacted_thinking", "data": "EncryptedBlob=="}),
        stop(1),
        *text(2, "Checking both."),
        *call(3, "toolu_01A", "weather", '{"city": "Paris", "units": ["C"]}'),
        *call(4, "toolu_01B", "clock", "{}"),
        end("tool_use"),
        STOP,
    )
    results = [
        Message.tool("toolu_01A", "weather service down", is_error=True),
        Message(
            role="tool",
            tool_call_id="toolu_01B",
            content=[TextPart(text="14:05, chart attached"), ImagePart(url=PNG)],
        ),
    ]
    _, body = await loop(serve, first, results)
    # Params go as they are: the thinking config, Anthropic's top-level cache_control.
    assert body["thinking"] == THINKING["thinking"]
    assert body["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two tools are needed.", "signature": "SIG/A+=="},
                {"type": "redacted_thinking", "data": "EncryptedBlob=="},
                {"type": "text", "text": "Checking both."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "weather",
                    "input": {"city": "Paris", "units": ["C"]},
                },
                {"type": "tool_use", "id": "toolu_01B", "name": "clock", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": "weather service down",
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": [
                        {"type": "text", "text": "14:05, chart attached"},
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": PNG.partition(",")[2],
                            },
                        },
                    ],
                },
            ],
        },
    ]


# -- defects found ------------------------------------------------------------------------


async def test_unsigned_thinking_of_a_compatible_server_goes_back_as_it_came(
    serve: Serve,
) -> None:
    """DeepSeek's `/anthropic` sent thinking blocks without a signature (new-api#4763)
    and refuses a tool-call turn sent back without them: 400 "The `content[].thinking`
    in the thinking mode must be passed back to the API" (hermes-agent#16748, #17992);
    Kimi's and Fireworks' send `signature: ""` and take the block back with it
    (opencode#44713, hermes-agent#73609, pi#4464), as MiniMax takes unsigned blocks
    (hermes-agent#75779). The anthropic SDK sends such a block back as it came; rxllm
    left it out, and ran two unsigned blocks together into one."""
    first = sse(
        START,
        *thinking(0, "First, the city.", None),  # no signature field, no signature_delta
        *text(1, "Looking it up."),
        *thinking(2, "Then the call.", "", signature=""),  # "" at start and in the delta
        *call(3, "call_0", "weather", '{"city": "Paris"}'),
        end("tool_use"),
        STOP,
    )
    record, body = await loop(serve, first, [Message.tool("call_0", "sunny")])
    assert [(p.text, p.signature) for p in record.reasoning_parts] == [
        ("First, the city.", ""),
        ("Then the call.", ""),
    ]
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "First, the city.", "signature": ""},
        {"type": "text", "text": "Looking it up."},  # in the order the blocks came
        {"type": "thinking", "thinking": "Then the call.", "signature": ""},
        {"type": "tool_use", "id": "call_0", "name": "weather", "input": {"city": "Paris"}},
    ]


async def test_reasoning_from_another_wire_is_never_a_thinking_block(serve: Serve) -> None:
    """Anthropic refuses a thinking block whose signature is missing or not its own. A
    history begun on DeepSeek's chat wire (`reasoning_content`, no signature) and
    continued on Anthropic leaves that reasoning out: only the Anthropic wire's own
    blocks, signed or sent unsigned by a compatible server, go back as thinking."""
    reasoner = (
        b'data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":'
        b'"Paris, so weather."}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0",'
        b'"type":"function","function":{"name":"weather","arguments":"{}"}}]},'
        b'"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    )
    recorder = Recorder(answers={"/chat/completions": reasoner})
    base_url = await serve(recorder.handle)
    async with rxllm.provider("deepseek", api_key="sk-probe", base_url=base_url) as p:
        record = await p.complete(ChatRequest(model="deepseek-reasoner", messages=[QUESTION]))
    assert record.reasoning == "Paris, so weather."
    history = [QUESTION, record.to_message(), Message.tool("call_0", "sunny")]
    body = Anthropic().build_body(ChatRequest(model="m", messages=history))
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_0", "name": "weather", "input": {}}
    ]


def test_a_natural_end_after_tool_calls_is_tool_use() -> None:
    """Proxies translating another wire into Messages end a turn of calls with
    `end_turn` (LiteLLM#34692 for ollama_chat; Bifrost#3638 and #6123 for vLLM and other
    OpenAI-compatible upstreams). As on the chat and Gemini wires, a natural end after
    client calls is `tool_use`, the raw reason kept; an agent loop reading the stop
    reason runs the calls instead of ending."""
    events = run(START, *call(0, "call_1", "weather", '{"city": "Paris"}'), end("end_turn"), STOP)
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("tool_use", "end_turn")
    # A turn cut by max_tokens after a complete call stays cut.
    events = run(START, *call(0, "call_1", "weather", "{}"), end("max_tokens"), STOP)
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "length"
