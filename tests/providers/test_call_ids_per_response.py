"""The ids rxllm gives calls that came without one are unique across a conversation's
turns and the same for a replay of the same bytes.

Gemini's `functionCall` has an optional `id` that its streams rarely carry; rxllm named
such a call `{name}_{index}`, so every turn that called `get_weather` first called it
`get_weather_0`. An app finds a call by its id: the AI SDK's `addToolOutput` takes the
first message holding it (turn 2's result overwrote turn 1's, turn 2's call was left
waiting), and so does any dict of results. The chat wire named id-less calls
`call_{index}` the same way. Now the id carries a tag of the response
(`response_tag`): of Gemini's `responseId` (a chat completion's `id`), which every
chunk of the captures carries, else of the chunk the call came in."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

import rxllm
from rxllm import ChatRequest, Message
from rxllm.events import ToolRequest
from rxllm.providers.google import gemini_contents
from rxllm.request import ToolCall
from tests.support import Serve, capture, needs_captures, replay, replay_every_way

QUESTION = Message.user("What is the weather in Paris?")


def _gemini(city: str, response_id: str | None, prompt_tokens: int) -> bytes:
    """One Gemini turn calling `get_weather` without an id, whole, as gemini-2.0-flash
    sends it (the capture `gemini/function_call_whole.sse`)."""
    payload: dict[str, Any] = {
        "candidates": [
            {
                "content": {
                    "parts": [{"functionCall": {"name": "get_weather", "args": {"city": city}}}],
                    "role": "model",
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": 5,
            "totalTokenCount": prompt_tokens + 5,
        },
        "modelVersion": "gemini-2.0-flash",
    }
    if response_id is not None:
        payload["responseId"] = response_id
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


async def _conversation(serve: Serve, answers: list[bytes]) -> tuple[list[Any], list[Any]]:
    """Two turns over loopback, each answered by the next of `answers` and its call
    given a result: (the two turns' calls, the bodies of the three requests)."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(answers[min(len(bodies), len(answers)) - 1])
        return response

    base_url = await serve(handler)
    history = [QUESTION]
    calls = []
    async with rxllm.provider("google", base_url=base_url, api_key="k", max_attempts=1) as p:
        for result, question in (("sunny in Paris", "And in Rome?"), ("rainy in Rome", None)):
            record = await p.complete(ChatRequest(model="gemini-2.0-flash", messages=history))
            (call,) = record.tool_calls
            calls.append(call)
            history += [record.to_message(), Message.tool(call.call_id, result)]
            if question is not None:
                history.append(Message.user(question))
        await p.complete(ChatRequest(model="gemini-2.0-flash", messages=history))
    return calls, bodies


async def test_two_turns_calling_one_function_give_its_calls_two_ids(serve: Serve) -> None:
    # Before: both `get_weather_0`; an app's results by call id kept only turn 2's.
    answers = [_gemini("Paris", "1lpeaMTxIpW1nvgP-O3vwQY", 52), _gemini("Rome", "x2peaAb", 80)]
    calls, bodies = await _conversation(serve, answers)
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]
    # the tag of each response's id, then the call's place in the turn
    assert [c.call_id for c in calls] == ["get_weather_2AZsU4w5_0", "get_weather_WVEtII5L_0"]
    results = {calls[0].call_id: "sunny in Paris", calls[1].call_id: "rainy in Rome"}
    assert len(results) == 2
    # Gemini gets no ids back: each result goes by its call's name, after its call
    contents = bodies[2]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user", "model", "user"]
    assert contents[1]["parts"][0]["functionCall"] == {
        "name": "get_weather",
        "args": {"city": "Paris"},
    }
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"output": "sunny in Paris"}}}
    ]
    assert contents[4]["parts"][0]["functionCall"]["args"] == {"city": "Rome"}
    assert contents[5]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"output": "rainy in Rome"}}}
    ]


async def test_without_a_response_id_the_chunk_names_the_response(serve: Serve) -> None:
    # A relay that drops `responseId`: the chunk the call came in differs between the
    # turns (here the prompt's token count, which grows with the history).
    calls, _ = await _conversation(serve, [_gemini("Paris", None, 52), _gemini("Paris", None, 80)])
    assert calls[0].arguments == calls[1].arguments
    assert calls[0].call_id != calls[1].call_id
    assert all(c.call_id.startswith("get_weather_") for c in calls)
    assert all(c.call_id.endswith("_0") for c in calls)


def _ids(data: bytes, provider: str) -> list[str]:
    return [e.call_id for e in replay_every_way(data, provider) if isinstance(e, ToolRequest)]


@needs_captures
def test_a_replay_of_the_same_bytes_gives_the_same_ids() -> None:
    # Vertex's two streamed getWeather calls, responseId dqHOab6xGLzWodAPkPuViA4 on
    # every chunk: one tag, the calls told apart by their place. A random tag would
    # make each replay of a recorded turn differ.
    data = capture("gemini/vertex_streamed_function_call_args.sse")
    first = _ids(data, "google")
    assert first == ["getWeather_CbYsy0p4_0", "getWeather_CbYsy0p4_1"]
    assert _ids(data, "google") == first
    # a relay's copy without the response id: still the same ids each time
    stripped = data.replace(b',"responseId":"dqHOab6xGLzWodAPkPuViA4"', b"")
    assert stripped.count(b"responseId") == 0
    again = _ids(stripped, "google")
    assert again == _ids(stripped, "google")
    assert len(set(again)) == 2 and set(again).isdisjoint(first)


def _call(call_id: str, name: str, city: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments={"city": city})


def test_a_history_holding_the_old_ids_still_goes_back() -> None:
    """A history written before the ids were unique: both turns' calls `get_weather_0`.
    Each result answers the latest call holding its id, by its name and in order."""
    history = [
        QUESTION,
        Message.assistant(tool_calls=[_call("get_weather_0", "get_weather", "P")]),
        Message.tool("get_weather_0", "sunny"),
        Message.user("And Rome, and the time there?"),
        Message.assistant(
            tool_calls=[
                _call("get_weather_0", "get_weather", "R"),
                _call("get_time_1", "get_time", "R"),
            ]
        ),
        Message.tool("get_time_1", "noon"),  # finished first
        Message.tool("get_weather_0", "rainy"),
    ]
    contents, _ = gemini_contents(history)
    responses = [
        [(p["functionResponse"]["name"], p["functionResponse"]["response"]) for p in c["parts"]]
        for c in contents
        if "functionResponse" in c["parts"][0]
    ]
    assert responses == [
        [("get_weather", {"output": "sunny"})],
        [("get_weather", {"output": "rainy"}), ("get_time", {"output": "noon"})],
    ]


def _chat(response_id: str, city: str) -> bytes:
    """A chat turn whose call came without an id (TGI sends `""`; a legacy
    `function_call` has none)."""
    function = {"name": "get_weather", "arguments": json.dumps({"city": city})}
    call = {"index": 0, "id": "", "type": "function", "function": function}
    deltas = [({"tool_calls": [call]}, None), ({}, "tool_calls")]
    frames = [
        {"id": response_id, "model": "m",
         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        for delta, finish in deltas
    ]  # fmt: skip
    return b"".join(f"data: {json.dumps(f)}\n\n".encode() for f in frames) + b"data: [DONE]\n\n"


def test_chat_calls_without_ids_get_one_per_response() -> None:
    # Before: `call_0` in every turn.
    first, second = _chat("chatcmpl-a1", "Paris"), _chat("chatcmpl-b2", "Paris")
    ids = [_ids(first, "custom"), _ids(second, "custom")]
    assert ids == [["call_RxSIDTbx_0"], ["call_bm3QKwVv_0"]]
    assert _ids(first, "custom") == ids[0]
    assert [e.call_id for e in replay(first, "openai") if isinstance(e, ToolRequest)] == ids[0]
