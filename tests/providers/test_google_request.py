"""Gemini request bodies a probe found refused or lossy, each checked against a body
built by hand from Google's references: ai.google.dev/gemini-api/docs/function-calling
(parallel calls and their responses), ai.google.dev/api/caching#FunctionResponse
(`response` is a JSON object), and Gemini's turn rule for function calls ("Please
ensure that function call turn comes immediately after a user turn or after a function
response turn", its 400 INVALID_ARGUMENT)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.providers import wire_for
from rxllm.providers.google import SKIP_SIGNATURE, Google
from rxllm.request import ChatRequest, Message, ToolCall
from tests.support import Serve

KEY = "AIzaSy-probe-0123456789abcdefghijklmno"


def body_of(*messages: Message) -> dict[str, Any]:
    return Google().build_body(ChatRequest(model="gemini-2.5-flash", messages=list(messages)))


def test_parallel_results_go_back_in_the_order_of_the_calls() -> None:
    """Gemini pairs each functionResponse with its call by name and position (no id is
    sent: google-genai refuses `id` for Vertex): two calls of one function answered as
    they finished would swap their results."""
    calls = [
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="c2", name="get_weather", arguments={"city": "London"}),
        ToolCall(id="c3", name="get_time", arguments={}),
    ]
    body = body_of(
        Message.user("Weather in Paris and London, and the time?"),
        Message.assistant(tool_calls=calls),
        Message.tool("c3", "12:00"),
        Message.tool("c2", '{"temp": 14}'),
        Message.tool("c1", '{"temp": 21}'),
    )
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"temp": 21}}},
            {"functionResponse": {"name": "get_weather", "response": {"temp": 14}}},
            {"functionResponse": {"name": "get_time", "response": {"output": "12:00"}}},
        ],
    }


def test_results_keep_the_order_of_their_calls_when_ids_come_back_each_turn() -> None:
    """Gemini sends no call ids, so rxllm names its calls `{name}_{index}`, and a later
    turn calling the same function brings the same ids back: each turn's results still
    go back in the order of that turn's calls."""

    def weather(index: int, city: str) -> ToolCall:
        return ToolCall(id=f"get_weather_{index}", name="get_weather", arguments={"city": city})

    body = body_of(
        Message.user("Paris and London, then Tokyo and Rome"),
        Message.assistant(tool_calls=[weather(0, "Paris"), weather(1, "London")]),
        Message.tool("get_weather_1", "London: rain"),
        Message.tool("get_weather_0", "Paris: sun"),
        Message.assistant(tool_calls=[weather(0, "Tokyo"), weather(1, "Rome")]),
        Message.tool("get_weather_1", "Rome: hot"),
        Message.tool("get_weather_0", "Tokyo: snow"),
    )
    answers = [
        [part["functionResponse"]["response"]["output"] for part in content["parts"]]
        for content in body["contents"][2::2]
    ]
    assert answers == [["Paris: sun", "London: rain"], ["Tokyo: snow", "Rome: hot"]]


def test_an_assistant_text_then_its_calls_are_one_model_turn() -> None:
    """Histories often hold the text and the calls of one model turn as two assistant
    messages: as two model contents the calls would not follow a user turn (400)."""
    body = body_of(
        Message.user("Weather in Paris?"),
        Message.assistant("Let me check."),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="get_weather")]),
        Message.tool("c1", "sunny"),
    )
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me check."},
                {
                    "functionCall": {"name": "get_weather", "args": {}},
                    "thoughtSignature": SKIP_SIGNATURE,
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}}
            ],
        },
    ]


def test_a_result_that_is_a_json_array_goes_back_as_json() -> None:
    """`response` must be an object: an array (`Message.tool(id, [...])`) goes under
    `output` as the array itself, not as its JSON text in a string; a str that is not
    JSON goes as it is, and an object is the response."""
    calls = [ToolCall(id=f"c{n}", name=f"f{n}") for n in range(3)]
    body = body_of(
        Message.user("go"),
        Message.assistant(tool_calls=calls),
        Message.tool("c0", [{"id": 1}, {"id": 2}]),
        Message.tool("c1", "not json [1"),
        Message.tool("c2", {"ok": True}),
    )
    assert [part["functionResponse"]["response"] for part in body["contents"][2]["parts"]] == [
        {"output": [{"id": 1}, {"id": 2}]},
        {"output": "not json [1"},
        {"ok": True},
    ]


async def test_the_key_goes_in_its_header_and_nowhere_else(serve: Serve, logs: list[str]) -> None:
    """The conversation over a loopback server: `models/{model}:streamGenerateContent`
    with `alt=sse`, the key in `x-goog-api-key` (never the `key=` query), and the key
    in no log line and no record, even when a rejection quotes it."""
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(
            {
                "path": request.path,
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": await request.json(),
            }
        )
        if len(seen) > 1:  # a proxy's rejection that quotes the key it was sent
            quoted = request.headers.get("x-goog-api-key", "")
            error = {"code": 400, "message": f"API key {quoted} not valid", "status": "X"}
            return web.json_response({"error": error}, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Paris."}]}}],
        }
        # A finish message no event carries is logged at debug: the logs are not empty.
        finish = {"finishReason": "STOP", "finishMessage": "Model generated a stop sequence."}
        last = {"candidates": [{"content": {"role": "model", "parts": []}, **finish}]}
        await response.write(
            f"data: {json.dumps(chunk)}\r\n\r\ndata: {json.dumps(last)}\r\n\r\n".encode()
        )
        return response

    base_url = (await serve(handler)).removesuffix("/v1") + "/v1beta"
    calls = [ToolCall(id="c1", name="lookup"), ToolCall(id="c2", name="lookup")]
    request = ChatRequest(
        model="gemini-2.5-flash",
        messages=[
            Message.system("Be brief."),
            Message.user("Capital of France?"),
            Message.assistant("Looking it up."),
            Message.assistant(tool_calls=calls),
            Message.tool("c2", "Berlin"),
            Message.tool("c1", "Paris"),
        ],
        stop=["END"],
    )
    async with rxllm.provider("google", api_key=KEY, base_url=base_url, max_attempts=1) as p:
        record = await p.complete(request)
        rejected = await p.complete(request)
    assert record.terminal.type == "done" and record.text == "Paris."
    sent = seen[0]
    assert sent["path"] == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert sent["query"] == {"alt": "sse"}
    assert sent["headers"]["x-goog-api-key"] == KEY
    assert "Authorization" not in sent["headers"]
    assert sent["body"] == {
        "contents": [
            {"role": "user", "parts": [{"text": "Capital of France?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Looking it up."},
                    {
                        "functionCall": {"name": "lookup", "args": {}},
                        "thoughtSignature": SKIP_SIGNATURE,
                    },
                    {"functionCall": {"name": "lookup", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "lookup", "response": {"output": "Paris"}}},
                    {"functionResponse": {"name": "lookup", "response": {"output": "Berlin"}}},
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"stopSequences": ["END"]},
    }
    assert rejected.terminal.type == "error" and rejected.terminal.error.status == 400
    assert "[redacted]" in rejected.terminal.error.message  # the quote arrived, redacted
    shown = record.model_dump_json() + rejected.model_dump_json() + repr(rejected)
    assert KEY not in shown
    assert logs and not any(KEY in line for line in logs)


def test_a_tool_name_longer_than_gemini_takes_is_refused_at_the_call() -> None:
    """Gemini's FunctionDeclaration.name is at most 64 characters (a compatible server
    may take more): a longer one is a ConfigError naming it, which a fallback skips the provider
    for, not a 400 for the whole request."""
    long_name = "t" * 65
    request = rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("hi")], tools=[rxllm.Tool(name=long_name)]
    )
    with pytest.raises(
        rxllm.ConfigError, match=r"is not one google takes: .* at most 64 characters"
    ):
        wire_for("google").build_body(request)
    ok = request.model_copy(update={"tools": [rxllm.Tool(name="t" * 64)]})
    assert wire_for("google").build_body(ok)["tools"][0]["functionDeclarations"][0]["name"]
    assert wire_for("vllm").build_body(request)["tools"][0]["function"]["name"] == long_name
