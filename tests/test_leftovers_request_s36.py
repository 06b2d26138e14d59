"""What rxllm sends on the next turn of a tool loop, for leftovers of earlier sessions:
Gemini's call ids back on the calls and their results, Mistral's 9-character ids
unique across the turns of a history, and an Anthropic turn with thinking on whose
open tool loop another provider began. Each turn streams from a loopback server
(a `Recorder`, or the local provider's Anthropic wire), and the body of the next
request is read as the server got it.

Sources: Gemini's `FunctionCall.id` ("If populated, the client to execute the
function_call and return the response with the matching id") and `FunctionResponse.id`
("Populated by the client to match the corresponding function call id"), as the
generativelanguage v1beta reference and googleapis/js-genai's `types.FunctionResponse`
give them; google-genai refusing `id` for Vertex ("id parameter is not supported in
Vertex AI", googleapis/go-genai `functionResponseToVertex`). Mistral's "Tool call id was
call_abc but must be a-z, A-Z, 0-9, with a length of 9." Anthropic's extended-thinking
guide, "Toggling thinking modes in conversations" (docs.anthropic.com/en/docs/
build-with-claude/extended-thinking): "If thinking is enabled, the final assistant turn
must start with a thinking block", its error "Expected `thinking` or
`redacted_thinking`, but found `tool_use`", and, in its 2026 text, "Graceful thinking
degradation": the API itself then "disables thinking for that request". Ids and
signatures are made up."""

from __future__ import annotations

import json
import re
from typing import Any

import rxllm
from rxllm import ChatRequest, Message
from rxllm.local import LocalServer
from tests.support import Recorder, Serve

KEY = "AIza-leftovers-s36-0123456789"


def _gemini_sse(*parts: dict[str, Any]) -> bytes:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}
    return f"data: {json.dumps({'candidates': [candidate]})}\r\n\r\n".encode()


# -- Gemini: functionCall.id back on the call and on its functionResponse ---------------


async def test_gemini_call_ids_go_back_on_their_calls_and_results(serve: Serve) -> None:
    """Two parallel calls of one function, each with the `id` Gemini gave it (the
    Gemini API does for parallel calls of 2025-2026 models), answered in the other
    order: the next request sends each call with its id and each `functionResponse`
    with the id of the call it answers, in the order of the calls. Before, no id went
    back, and two results of one function were told apart by their order alone."""
    turn = _gemini_sse(
        {
            "functionCall": {"id": "fc-paris-7q", "name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": "SIG_1",
        },
        {"functionCall": {"id": "fc-rome-2k", "name": "get_weather", "args": {"city": "Rome"}}},
    )
    recorder = Recorder(answers={":streamGenerateContent": turn})
    base_url = await serve(recorder.handle)
    question = Message.user("Weather in Paris and Rome?")
    async with rxllm.provider("google", base_url=base_url, api_key=KEY) as p:
        record = await p.complete(ChatRequest(model="gemini-3-flash", messages=[question]))
        assert [call.call_id for call in record.tool_calls] == ["fc-paris-7q", "fc-rome-2k"]
        history = [
            question,
            record.to_message(),
            Message.tool("fc-rome-2k", "rain"),
            Message.tool("fc-paris-7q", "sun"),
        ]
        await p.complete(ChatRequest(model="gemini-3-flash", messages=history))
    contents = recorder.requests[1]["body"]["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {
                    "name": "get_weather",
                    "args": {"city": "Paris"},
                    "id": "fc-paris-7q",
                },
                "thoughtSignature": "SIG_1",
            },
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}, "id": "fc-rome-2k"}},
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "get_weather",
                    "id": "fc-paris-7q",
                    "response": {"output": "sun"},
                }
            },
            {
                "functionResponse": {
                    "name": "get_weather",
                    "id": "fc-rome-2k",
                    "response": {"output": "rain"},
                }
            },
        ],
    }


async def test_gemini_ids_it_did_not_give_are_not_sent(serve: Serve) -> None:
    """A call Gemini gave no id (Vertex gives none, and google-genai refuses `id` there)
    and a call another provider made (an OpenAI `call_...` id in the history) go back
    without `id`, on the call and on its result, as before."""
    turn = _gemini_sse({"functionCall": {"name": "get_time", "args": {}}})
    recorder = Recorder(answers={":streamGenerateContent": turn})
    base_url = await serve(recorder.handle)
    question = Message.user("Time, and the weather?")
    elsewhere = rxllm.ToolCall(id="call_abc123", name="get_weather", arguments={"city": "Oslo"})
    async with rxllm.provider("google", base_url=base_url, api_key=KEY) as p:
        record = await p.complete(ChatRequest(model="gemini-2.5-flash", messages=[question]))
        (clock,) = record.tool_calls
        history = [
            question,
            Message.assistant(tool_calls=[elsewhere]),
            Message.tool("call_abc123", "snow"),
            record.to_message(),
            Message.tool(clock.call_id, "12:00"),
        ]
        await p.complete(ChatRequest(model="gemini-2.5-flash", messages=history))
    contents = recorder.requests[1]["body"]["contents"]
    sent = [part for content in contents for part in content["parts"]]
    calls = [part["functionCall"] for part in sent if "functionCall" in part]
    results = [part["functionResponse"] for part in sent if "functionResponse" in part]
    assert [sorted(call) for call in calls] == [["args", "name"]] * 2
    assert [sorted(result) for result in results] == [["name", "response"]] * 2


# -- Mistral: 9-character ids unique across the turns of a history ----------------------


async def test_mistral_ids_stay_unique_across_turns(serve: Serve) -> None:
    """Mistral takes call ids of 9 characters of `[a-zA-Z0-9]` only, so an id made
    elsewhere is mapped to 9 base-62 characters of its hash. Two turns whose calls had
    one id (a server's `call_0` each turn, as llama.cpp and others number them; Mistral's
    own id repeated) went back with one id twice, each result naming both calls; now the
    later call is renamed, deterministically, and each result names its own call."""
    recorder = Recorder()
    base_url = await serve(recorder.handle)
    history = [
        Message.user("Weather in Paris?"),
        Message.assistant(tool_calls=[rxllm.ToolCall(id="call_0", name="get_weather")]),
        Message.tool("call_0", "sun"),
        Message.user("And in Rome?"),
        Message.assistant(tool_calls=[rxllm.ToolCall(id="call_0", name="get_weather")]),
        Message.tool("call_0", "rain"),
        Message.user("And the time?"),
        Message.assistant(tool_calls=[rxllm.ToolCall(id="aB3xK9mP2", name="get_time")]),
        Message.tool("aB3xK9mP2", "12:00"),
        Message.assistant(tool_calls=[rxllm.ToolCall(id="aB3xK9mP2", name="get_time")]),
        Message.tool("aB3xK9mP2", "12:01"),
    ]
    request = ChatRequest(model="mistral-small-latest", messages=history)
    async with rxllm.provider("mistral", base_url=base_url, api_key="mistral-key-0123456789") as p:
        await p.complete(request)
        await p.complete(request)
    sent = recorder.requests[0]["body"]["messages"]
    calls = [
        m["tool_calls"][0]["id"] for m in sent if m["role"] == "assistant" and "tool_calls" in m
    ]
    results = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert len(calls) == 4
    assert all(re.fullmatch(r"[a-zA-Z0-9]{9}", call_id) for call_id in calls)
    assert len(set(calls)) == 4  # one id per call
    assert results == calls  # each result names its own call
    assert calls[2] == "aB3xK9mP2"  # Mistral's own, seen first: kept
    assert recorder.requests[1]["body"]["messages"] == sent  # the same every time


# -- Anthropic: thinking on, mid-tool-loop, in a turn another provider began ------------

WEATHER = rxllm.Tool(
    name="get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
QUESTION = Message.user("What's the weather in Paris?")


def _ask(messages: list[Message], **params: Any) -> ChatRequest:
    return ChatRequest(model="local", messages=messages, tools=[WEATHER], params=params)


async def _loop_begun_on(server: LocalServer, wire: str) -> list[Message]:
    """The history of a tool loop whose call `wire` made, its result given."""
    record = await server.provider(wire).complete(_ask([QUESTION], **THINKING))
    (call,) = record.tool_calls
    return [QUESTION, record.to_message(), Message.tool(call.call_id, "sunny, 21 C")]


async def test_fallback_into_anthropic_mid_tool_loop_with_thinking_on(
    local_server: LocalServer,
) -> None:
    """The loop's call came from OpenAI's chat wire (its reasoning has no Anthropic
    signature, so the assistant turn goes to Anthropic without a thinking block); the
    next turn falls back from OpenAI (401) into Anthropic with thinking on. Anthropic
    refused that ("Expected `thinking` or `redacted_thinking`, but found `tool_use`",
    as the local wire does): the fallback ended in that 400. Now the request leaves
    thinking out, and the turn is answered."""
    history = await _loop_begun_on(local_server, "openai")
    local_server.turns.append("bad_key")
    both = rxllm.fallback([local_server.provider("openai"), local_server.provider("anthropic")])
    record = await both.complete(_ask(history, **THINKING))
    assert record.terminal.type == "done", record.terminal
    assert record.text == "get_weather returned sunny, 21 C. That is my answer."
    assert [(a.provider, a.status) for a in record.attempts] == [
        ("local", 401),
        ("anthropic", None),
    ]
    sent = local_server.requests[-1]
    assert "thinking" not in sent
    assert sent["messages"][1]["content"][-1]["type"] == "tool_use"


async def test_anthropic_keeps_thinking_where_the_turn_allows_it(
    local_server: LocalServer,
) -> None:
    """Thinking stays on where the API takes it: a loop whose turn began with Claude's
    signed thinking, and a loop begun elsewhere once the user speaks again (a new turn
    may think)."""
    anthropic = local_server.provider("anthropic")
    own = await _loop_begun_on(local_server, "anthropic")
    record = await anthropic.complete(_ask(own, **THINKING))
    assert record.terminal.type == "done", record.terminal
    sent = local_server.requests[-1]
    assert sent["thinking"] == THINKING["thinking"]
    assert sent["messages"][1]["content"][0]["type"] == "thinking"

    elsewhere = await _loop_begun_on(local_server, "openai")
    answered = [*elsewhere, Message.assistant("Sunny."), Message.user("And tomorrow?")]
    record = await anthropic.complete(_ask(answered, **THINKING))
    assert record.terminal.type == "done", record.terminal
    assert local_server.requests[-1]["thinking"] == THINKING["thinking"]
