"""The request of an agent loop's next turn, after a turn with tool calls: what each
OpenAI-chat preset and the Gemini wire send back, checked against what the providers
document and refuse. Each test runs the loop over loopback: turn 1 streams from a
`Recorder`, the caller appends `record.to_message()`, the tool results and maybe a new
user message, and the recorded body of the next request is checked.

Sources: DeepSeek's thinking mode (api-docs.deepseek.com/guides/thinking_mode, "Tool
Calls"; its 400s "Missing `reasoning_content` field in the assistant message at message
index N" and "The `reasoning_content` in the thinking mode must be passed back", and the
clients that fixed them by sending it on every assistant message, `""` where none:
continuedev/continue#11285, Chevey339/kelivo#966); Mistral's strict validation (400
"Unexpected role 'user' after role 'tool'", code 3230: zed-industries/zed#37021,
datapizza-labs/datapizza-ai#98; 422 `extra_forbidden` for an unknown field of a message:
charmbracelet/crush#1590) and Groq's ("property 'metadata' is unsupported" for an
unknown message field: tests/rejections_extra); Gemini's thought signatures on its
OpenAI-compatible endpoint (ai.google.dev/gemini-api/docs/thought-signatures). Bodies
are written from those sources; ids and signatures are made up."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm import ChatRequest, Message
from rxllm.events import StreamRecord
from rxllm.providers import wire_for
from rxllm.providers.openai_chat import TOOL_RESULTS_READ
from rxllm.request import ImagePart, TextPart
from tests.providers.test_openai_family import PRESETS
from tests.support import Recorder, Serve

PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
ARGUMENTS = {"city": "Zürich", "days": [[1, 2], [3]], "note": "naïve ☂"}


def _sse(*deltas: dict[str, Any], finish: str = "tool_calls") -> bytes:
    def chunk(delta: dict[str, Any], finish_reason: str | None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return f"data: {json.dumps({'object': 'chat.completion.chunk', 'choices': [choice]})}\n\n"

    frames = [chunk(delta, None) for delta in deltas] + [chunk({}, finish)]
    return "".join(frames).encode() + b"data: [DONE]\n\n"


def _call(index: int, call_id: str, name: str, arguments: str, **extra: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {"index": index, "id": call_id, "type": "function", "function": function, **extra}


# Reasoning, text, then two parallel calls: one with unicode and nested arrays, one with
# no arguments at all (an empty argument string: a call without parameters).
TOOL_TURN = _sse(
    {"role": "assistant", "reasoning_content": "Weather first, then time."},
    {"content": "Checking both."},
    {"tool_calls": [_call(0, "call_w1", "get_weather", json.dumps(ARGUMENTS)[:20])]},
    {"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(ARGUMENTS)[20:]}}]},
    {"tool_calls": [_call(1, "call_t2", "get_time", "")]},
)
ANSWER_TURN = _sse(
    {"role": "assistant", "reasoning_content": "Both came back."},
    {"content": "Rain, and it is noon."},
    finish="stop",
)


def _results(record: StreamRecord) -> list[Message]:
    """The results of the two calls: the first failed, the second came with an image."""
    weather, clock = record.tool_calls
    return [
        Message.tool(weather.call_id, {"error": "station offline"}, is_error=True),
        Message(
            role="tool",
            tool_call_id=clock.call_id,
            content=[TextPart(text="12:00"), ImagePart(url=PNG)],
        ),
    ]


async def _provider(serve: Serve, recorder: Recorder, name: str) -> rxllm.Provider:
    base_url = await serve(recorder.handle)
    options: dict[str, Any] = {"base_url": base_url, "api_key": "sk-probe-0123456789abcdef"}
    if name == "custom":
        options["allow_private_network"] = True
    return rxllm.provider(name, **options)


async def _turn(provider: rxllm.Provider, history: list[Message]) -> StreamRecord:
    return await provider.complete(ChatRequest(model="m", messages=history))


@pytest.mark.parametrize("name", ["openai", *sorted(PRESETS)])
async def test_every_preset_sends_the_calls_and_their_results_back_whole(
    serve: Serve, name: str
) -> None:
    """What every preset's next request holds (OpenAI's assistant and tool message
    schemas): each call with `type: "function"` and its arguments as JSON text of the
    same object (unicode and nested arrays kept, `{}` for a call without parameters),
    the text beside the calls, and the results right after the calls, by the same ids."""
    recorder = Recorder(answers={"/chat/completions": TOOL_TURN})
    question = Message.user("Weather and time in Zürich?")
    async with await _provider(serve, recorder, name) as provider:
        record = await _turn(provider, [question])
        assert [call.arguments for call in record.tool_calls] == [ARGUMENTS, {}]
        await _turn(provider, [question, record.to_message(), *_results(record)])
    sent = recorder.requests[1]["body"]["messages"]
    assert [message["role"] for message in sent[:4]] == ["user", "assistant", "tool", "tool"]
    assistant = sent[1]
    if wire_for(name).options.reasoning_back == "thinking_chunks":  # Mistral's chunks
        thought = {
            "type": "thinking",
            "thinking": [{"type": "text", "text": "Weather first, then time."}],
            "closed": True,
        }
        assert assistant["content"] == [thought, {"type": "text", "text": "Checking both."}]
    else:
        # The reasoning came in a field, not in the content: no think-tag preset puts it
        # there (before: together, nvidia and groq sent it back as a `<think>` block).
        assert assistant["content"] == "Checking both."
    calls = assistant["tool_calls"]
    assert [(call["type"], call["function"]["name"]) for call in calls] == [
        ("function", "get_weather"),
        ("function", "get_time"),
    ]
    assert [json.loads(call["function"]["arguments"]) for call in calls] == [ARGUMENTS, {}]
    assert [message["tool_call_id"] for message in sent[2:4]] == [call["id"] for call in calls]
    assert json.loads(sent[2]["content"]) == {"error": "station offline"}
    assert sent[3]["content"] == "12:00"


async def test_deepseek_every_assistant_message_carries_its_reasoning(serve: Serve) -> None:
    """DeepSeek asks for the reasoning of every assistant message of a user turn that
    made tool calls, the answer after the results too, in all later requests. Before:
    the answer (no calls of its own) went without `reasoning_content`, and DeepSeek
    answers such a history with 400 "Missing `reasoning_content` field"."""
    recorder = Recorder(answers={"/chat/completions": TOOL_TURN})
    question = Message.user("Weather and time in Zürich?")
    async with await _provider(serve, recorder, "deepseek") as provider:
        calls = await _turn(provider, [question])
        history = [question, calls.to_message(), *_results(calls)]
        recorder.answers["/chat/completions"] = ANSWER_TURN
        answer = await _turn(provider, history)
        await _turn(provider, [*history, answer.to_message(), Message.user("And tomorrow?")])
    sent = recorder.requests[2]["body"]["messages"]
    assistants = [message for message in sent if message["role"] == "assistant"]
    assert [message["reasoning_content"] for message in assistants] == [
        "Weather first, then time.",
        "Both came back.",
    ]


async def test_deepseek_takes_a_tool_history_made_without_reasoning(serve: Serve) -> None:
    """A fallback to DeepSeek, or a history begun on a model that showed no reasoning:
    the calls have none to send, and DeepSeek's thinking mode refuses an assistant
    message without the field. Before: no `reasoning_content`, a 400; now `""`, which
    DeepSeek takes (kelivo#966: "empty string passes")."""
    plain_calls = _sse({"role": "assistant", "tool_calls": [_call(0, "call_1", "get_time", "")]})
    recorder = Recorder(answers={"/chat/completions": plain_calls})
    question = Message.user("Time?")
    async with await _provider(serve, recorder, "openai") as first:
        record = await _turn(first, [question])
    history = [question, record.to_message(), Message.tool("call_1", "12:00")]
    async with await _provider(serve, recorder, "deepseek") as deepseek:
        await _turn(deepseek, history)
    assistant = recorder.requests[1]["body"]["messages"][1]
    assert assistant["reasoning_content"] == ""
    assert assistant["content"] is None  # beside tool calls, as OpenAI's schema allows


SIGNED_TURN = _sse(
    {
        "role": "assistant",
        "tool_calls": [
            _call(
                0,
                "call_g1",
                "get_time",
                "{}",
                extra_content={"google": {"thought_signature": "SIG_GEMINI"}},
            )
        ],
    }
)


@pytest.mark.parametrize("name", ["mistral", "groq"])
async def test_a_gemini_signature_does_not_go_to_an_endpoint_that_refuses_unknown_fields(
    serve: Serve, name: str
) -> None:
    """A history made on Gemini's OpenAI-compatible endpoint (via `custom`) falls back to
    Mistral or Groq. Before: each call went with `extra_content`, a field neither knows
    and both refuse in a message (Mistral's 422 `extra_forbidden`, Groq's "property ...
    is unsupported"); Gemini alone reads it."""
    recorder = Recorder(answers={"/chat/completions": SIGNED_TURN})
    question = Message.user("Time?")
    async with await _provider(serve, recorder, "custom") as gemini:
        record = await _turn(gemini, [question])
    assert [call.signature for call in record.tool_calls] == ["SIG_GEMINI"]
    history = [question, record.to_message(), Message.tool("call_g1", "12:00")]
    async with await _provider(serve, recorder, "custom") as gemini:
        await _turn(gemini, history)
    async with await _provider(serve, recorder, name) as strict:
        await _turn(strict, history)
    to_gemini, to_strict = (request["body"]["messages"][1] for request in recorder.requests[1:])
    assert to_gemini["tool_calls"][0]["extra_content"] == {
        "google": {"thought_signature": "SIG_GEMINI"}
    }
    assert "extra_content" not in to_strict["tool_calls"][0]
    assert to_strict["tool_calls"][0]["function"] == {"name": "get_time", "arguments": "{}"}


async def test_mistral_gets_an_assistant_message_between_results_and_a_new_user_message(
    serve: Serve,
) -> None:
    """The user speaks again after the tool results (a follow-up, a cancelled run).
    Mistral refuses a user message right after tool messages (400 "Unexpected role
    'user' after role 'tool'", code 3230), so a short assistant message comes between;
    OpenAI takes the order as it is. Before: the user message followed the results."""
    recorder = Recorder(answers={"/chat/completions": TOOL_TURN})
    question = Message.user("Weather and time in Zürich?")
    roles: dict[str, list[str]] = {}
    for name in ("mistral", "openai"):
        async with await _provider(serve, recorder, name) as provider:
            record = await _turn(provider, [question])
            follow_up = Message.user("Never mind the time.")
            history = [question, record.to_message(), *_results(record), follow_up]
            await _turn(provider, history)
        sent = recorder.requests[-1]["body"]["messages"]
        roles[name] = [message["role"] for message in sent]
        if name == "mistral":
            assert sent[4] == {"role": "assistant", "content": TOOL_RESULTS_READ}
            assert sent[5] == {"role": "user", "content": "Never mind the time."}
    # Mistral leaves the result's image out (it takes no user message after results).
    assert roles["mistral"] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assert roles["openai"] == ["user", "assistant", "tool", "tool", "user", "user"]


async def test_a_custom_tool_call_goes_back_as_the_custom_call_it_came_as(serve: Serve) -> None:
    """A custom tool's call (free text, `{type: "custom", custom: {name, input}}`) goes
    back as a custom call when the request offers that custom tool, its result after."""
    custom_turn = _sse(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_c1",
                    "type": "custom",
                    "custom": {"name": "apply_patch", "input": "*** Begin Patch ✓"},
                }
            ],
        }
    )
    recorder = Recorder(answers={"/chat/completions": custom_turn})
    tools = [{"type": "custom", "custom": {"name": "apply_patch"}}]
    question = Message.user("Patch it.")
    async with await _provider(serve, recorder, "openai") as provider:
        request = ChatRequest(model="m", messages=[question], params={"tools": tools})
        record = await provider.complete(request)
        history = [question, record.to_message(), Message.tool("call_c1", "applied")]
        await provider.complete(request.model_copy(update={"messages": history}))
    assistant, result = recorder.requests[1]["body"]["messages"][1:]
    assert assistant["tool_calls"] == [
        {
            "id": "call_c1",
            "type": "custom",
            "custom": {"name": "apply_patch", "input": "*** Begin Patch ✓"},
        }
    ]
    assert result == {"role": "tool", "tool_call_id": "call_c1", "content": "applied"}


def _gemini_sse(*parts: dict[str, Any]) -> bytes:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}
    return f"data: {json.dumps({'candidates': [candidate]})}\r\n\r\n".encode()


async def test_gemini_next_turn_answers_each_call_as_its_docs_show(serve: Serve) -> None:
    """Gemini's function-calling docs: the model turn goes back with its parts and their
    thought signatures (the text's, and the first call's), and the results follow as
    one `user` content of `functionResponse` parts, by name (no id: Vertex refuses it),
    in the order of the calls, each `response` an object (`error` for a failed call);
    the result's image follows them as a part of its own."""
    turn = _gemini_sse(
        {"text": "Thinking.", "thought": True},
        {"text": "Checking both.", "thoughtSignature": "SIG_TEXT"},
        {"functionCall": {"name": "get_weather", "args": ARGUMENTS}, "thoughtSignature": "SIG_1"},
        {"functionCall": {"name": "get_time"}},
    )
    recorder = Recorder(answers={":streamGenerateContent": turn})
    base_url = await serve(recorder.handle)
    question = Message.user("Weather and time in Zürich?")
    async with rxllm.provider("google", base_url=base_url, api_key="AIza-probe-0123456789") as p:
        record = await p.complete(ChatRequest(model="gemini-3-flash", messages=[question]))
        history = [question, record.to_message(), *_results(record), Message.user("And?")]
        await p.complete(ChatRequest(model="gemini-3-flash", messages=history))
    contents = recorder.requests[1]["body"]["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"text": "Checking both.", "thoughtSignature": "SIG_TEXT"},
            {
                "functionCall": {"name": "get_weather", "args": ARGUMENTS},
                "thoughtSignature": "SIG_1",
            },
            {"functionCall": {"name": "get_time", "args": {}}},
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "get_weather",
                    "response": {"error": {"error": "station offline"}},
                }
            },
            {"functionResponse": {"name": "get_time", "response": {"output": "12:00"}}},
            {"inlineData": {"mimeType": "image/png", "data": PNG.partition(",")[2]}},
        ],
    }
    assert contents[3] == {"role": "user", "parts": [{"text": "And?"}]}
