"""Session 35's review of the last session's rejection readings (h7): two readings whose own
rule a near miss escaped.

- Streaming refused with a key of the body. b6c1a68 surfaced streaming refused in words
  ("The model is unsupported for streaming.", Bedrock) as the never-dropped `stream`, and
  left streaming refused under a condition ("... when tools are provided") to the degraded
  bodies. A condition said with "with" escaped it: "streaming is not supported with tools"
  (the error ollama/ollama#7750 raised for a request streaming with tools) and "Streaming is
  not supported with n > 1" surfaced the turn, where they walked the static list before and
  where "with tool calls", "with function calling" and "with logprobs" drop what they name
  (the plain word `tools`, and `n`, are no names to `named_keys`). The key of the body said
  right after the refusal is now dropped (with what depends on it); a word after it that is
  no key of the body ("for this model"), or one never dropped ("for model m"), still
  surfaces.

- A key's limit "for image inputs". 110b2eb made a limit the images' only where it counts
  them ("At most 1 image(s)", "only one image"), so that "max_tokens too large for vision
  models: at most 4096" drops `max_tokens` and keeps the images; but the word its rule lets
  stand between the number and the image noun took a preposition: "max_tokens must be at
  most 4096 for image inputs" (and "with images", "per image request", "n must be at most 1
  for image requests") still removed the images, and the degraded retry sent `max_tokens`
  again. A preposition there says the number counts something else: the key's limit.

Each test of the two readings failed on the degradation.py before this change; the near
misses read as before.

And one request-side near miss of this session's 5d1b253 (`answer_each_call`): a call
answered after a system message went back answered twice, "not run" first (below); and
one of e25f9de's: a chat chunk with a `type` that is no tool item (`"type":
"chat.completion.chunk"`) lost the response's id (below).
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import rxllm
from rxllm.events import Failed, Retry
from rxllm.providers.anthropic import Anthropic
from rxllm.providers.call_ids import NOT_RUN
from rxllm.providers.google import Google
from rxllm.providers.openai_chat import OpenAIChat
from rxllm.providers.openai_responses import OpenAIResponses
from tests.rejection_rounds import in_band, over_http
from tests.support import replay_every_way, summarize
from tests.test_probe_rejections_7 import TOOLS, body

WITH_KEYS = body(tools=TOOLS, tool_choice="auto", n=2, max_tokens=5000)
WITH_IMAGES = body(images=True, max_tokens=5000, n=2, top_p=0.5)
PLAIN = body()
REASONING = body(reasoning={"effort": "high"})

# == streaming refused with a key of the body =============================================

STREAMING_WITH_A_KEY = {
    "streaming is not supported with tools": ("drop", ("tools", "tool_choice")),
    "Streaming is not supported with tools.": ("drop", ("tools", "tool_choice")),
    "Streaming is not supported with n > 1": ("drop", ("n",)),
}


@pytest.mark.parametrize("message", STREAMING_WITH_A_KEY)
@pytest.mark.parametrize("where", ["http", "frame"])
def test_streaming_refused_with_a_key_drops_it(message: str, where: str) -> None:
    got = (
        over_http(message, WITH_KEYS, 400)
        if where == "http"
        else in_band({"message": message}, WITH_KEYS)
    )
    assert got == STREAMING_WITH_A_KEY[message]


# What the rule must not catch: streaming itself refused, a word after the refusal that is no
# key of the body or a key never dropped, a condition said as one (b6c1a68's own readings).
STREAMING_NEAR_MISSES = [
    ("The model is unsupported for streaming.", WITH_KEYS, ("surface", ())),
    ("Streaming is not supported for this model", WITH_KEYS, ("surface", ())),
    ("Streaming is not supported for model m", WITH_KEYS, ("surface", ())),
    ("This model does not support streaming", WITH_KEYS, ("surface", ())),
    ("streaming is not supported with tools", PLAIN, ("surface", ())),
    ("Streaming is not supported with users", WITH_KEYS, ("surface", ())),
    ("Streaming is not supported with model m", WITH_KEYS, ("surface", ())),
    ("Streaming is not supported with reasoning models", REASONING, ("surface", ())),
    ("Streaming is not supported for reasoning models", REASONING, ("surface", ())),
    ("Streaming is not supported when tools are provided", WITH_KEYS, ("static", ())),
    ("Streaming is not supported with tool calls", WITH_KEYS, ("drop", ("tools", "tool_choice"))),
    ("Cannot use tools with stream", WITH_KEYS, ("drop", ("tools", "tool_choice"))),
]


@pytest.mark.parametrize(("message", "sent", "expected"), STREAMING_NEAR_MISSES)
@pytest.mark.parametrize("where", ["http", "frame"])
def test_streaming_near_misses_read_as_before(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]], where: str
) -> None:
    got = over_http(message, sent, 400) if where == "http" else in_band({"message": message}, sent)
    assert got == expected


# == a key's limit beside an image word ===================================================

KEYS_LIMIT = {
    "max_tokens must be at most 4096 for image inputs": ("drop", ("max_tokens",)),
    "max_tokens must be at most 4096 with images": ("drop", ("max_tokens",)),
    "max_tokens can be up to 4096 per image request": ("drop", ("max_tokens",)),
    "n must be at most 1 for image requests": ("drop", ("n",)),
}


@pytest.mark.parametrize("message", KEYS_LIMIT)
@pytest.mark.parametrize("where", ["http", "frame"])
def test_a_keys_limit_for_image_inputs_is_the_keys(message: str, where: str) -> None:
    got = (
        over_http(message, WITH_IMAGES, 400)
        if where == "http"
        else in_band({"message": message}, WITH_IMAGES)
    )
    assert got == KEYS_LIMIT[message]


# Limits on the images themselves (110b2eb's and the real cases'): still the images.
IMAGE_LIMITS = [
    "At most 1 image(s) may be provided in one request.",
    "At most 5 image(s) may be provided in one request.",
    "Model 'moonshotai/kimi-k2.6' supports at most 1 image per prompt.",
    "Only one image is allowed per request",
    "You may not include more than 10 images",
    "This model accepts up to 4 attached images",
    "Only a single image is supported per message",
    "Image count must be at most 4",
    "each image may be up to 5 MB",
]


@pytest.mark.parametrize("message", IMAGE_LIMITS)
def test_limits_on_the_images_still_remove_them(message: str) -> None:
    assert over_http(message, WITH_IMAGES, 400) == ("images", ())
    assert in_band({"message": message}, WITH_IMAGES) == ("images", ())


# == over a loopback server ===============================================================

CHAT_OK = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


async def _turn(
    serve: Callable[[Any], Awaitable[str]], rejection: dict[str, Any], request: rxllm.ChatRequest
) -> tuple[list[dict[str, Any]], list[Any]]:
    """An Ollama turn whose first request is rejected at 400 with `rejection` and whose later
    ones are answered: the bodies sent and the events."""
    bodies: list[dict[str, Any]] = []

    async def handler(incoming: web.Request) -> web.StreamResponse:
        bodies.append(await incoming.json())
        if len(bodies) == 1:
            return web.json_response(rejection, status=400)
        return web.Response(body=CHAT_OK, headers={"Content-Type": "text/event-stream"})

    url = await serve(handler)
    async with rxllm.provider(
        "ollama", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    return bodies, events


async def test_ollamas_streaming_with_tools_goes_again_without_them(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("weather?")],
        tools=[rxllm.Tool(name="get_weather")],
    )
    rejection = {"error": {"message": "streaming is not supported with tools"}}
    bodies, events = await _turn(serve, rejection, request)
    assert len(bodies) == 2 and "tools" in bodies[0] and "tools" not in bodies[1]
    assert bodies[1]["stream"] is True and bodies[0]["messages"] == bodies[1]["messages"]
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and "tools" in retries[0].dropped
    assert events[-1].type == "done", json.dumps([event.type for event in events])


async def test_a_keys_limit_for_image_inputs_keeps_the_image(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("hi", images=["data:image/png;base64,iVBORw0KGgo="])],
        params={"max_tokens": 99999},
    )
    rejection = {"error": {"message": "max_tokens must be at most 4096 for image inputs"}}
    bodies, events = await _turn(serve, rejection, request)
    assert len(bodies) == 2 and "max_tokens" in bodies[0] and "max_tokens" not in bodies[1]
    assert bodies[0]["messages"] == bodies[1]["messages"]  # the image sent again
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and retries[0].dropped == ["max_tokens"]
    assert retries[0].images_removed == 0


# == a call answered after a system message ===============================================
# 5d1b253 answers a call no tool message answers "before the next user or system message"
# as not run. A system message between a call and its result (a reminder an app inserts)
# ends nothing on Anthropic's and Gemini's wires, which lift it into the system prompt: the
# result still answers the call there, and was sent so before 5d1b253. Since it, the call
# went back answered twice, "not run" first (Anthropic: two user turns of results for one
# `tool_use`, the second answering a call its previous message does not hold), and the
# model was told a call that ran had not.

CALL = rxllm.ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})


def _history(*between: rxllm.Message, answered: bool = True) -> list[rxllm.Message]:
    result = [rxllm.Message.tool("toolu_1", "sunny")] if answered else []
    return [
        rxllm.Message.user("weather?"),
        rxllm.Message(role="assistant", content=[], tool_calls=[CALL]),
        *between,
        *result,
        rxllm.Message.user("thanks"),
    ]


def _anthropic_results(messages: list[rxllm.Message]) -> list[dict[str, Any]]:
    body = Anthropic().build_body(rxllm.ChatRequest(model="claude", messages=messages))
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def _gemini_responses(messages: list[rxllm.Message]) -> list[dict[str, Any]]:
    body = Google().build_body(rxllm.ChatRequest(model="gemini", messages=messages))
    return [
        part["functionResponse"]
        for content in body["contents"]
        for part in content["parts"]
        if "functionResponse" in part
    ]


def test_a_result_after_a_system_message_answers_its_call() -> None:
    messages = _history(rxllm.Message.system("Reminder: be brief."))
    results = _anthropic_results(messages)
    assert [(r["tool_use_id"], r["content"], r.get("is_error")) for r in results] == [
        ("toolu_1", "sunny", None)
    ]
    responses = _gemini_responses(messages)
    assert len(responses) == 1 and NOT_RUN not in json.dumps(responses)
    chat = OpenAIChat().build_body(rxllm.ChatRequest(model="m", messages=messages))
    assert NOT_RUN not in json.dumps(chat["messages"])  # sent as the app wrote it


def test_a_call_left_unanswered_before_a_system_message_is_still_not_run() -> None:
    messages = _history(rxllm.Message.system("Reminder: be brief."), answered=False)
    results = _anthropic_results(messages)
    assert [(r["tool_use_id"], r["content"], r.get("is_error")) for r in results] == [
        ("toolu_1", NOT_RUN, True)
    ]


# ---------------------------------------------- e25f9de: a chunk's `type` and its id


def _replayed(body: bytes) -> list[rxllm.Event]:
    events: list[rxllm.Event] = []
    rxllm.replay(body, provider="openai").subscribe(events.append)
    return events


@pytest.mark.parametrize("kind", ["chat.completion.chunk", "content", None])
def test_a_chunk_typed_otherwise_than_as_a_tool_item_keeps_the_responses_id(
    kind: str | None,
) -> None:
    """e25f9de kept the id of a chunk that is a tool item the provider ran (Tinfoil's
    `web_search_call`) from being the response's by taking no id from any chunk with a
    `type`: a server writing `"type": "chat.completion.chunk"` in every chunk (or any
    other word) lost its response id (`done.response_id` None). Only a tool item's id is
    the item's."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        payload: dict[str, Any] = {
            "id": "chatcmpl-7",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if kind is not None:
            payload["type"] = kind
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    events = _replayed(chunk({"content": "hi"}) + chunk({}, "stop") + b"data: [DONE]\n\n")
    done = events[-1]
    assert isinstance(done, rxllm.Done)
    assert done.response_id == "chatcmpl-7"


def test_a_tool_items_id_is_still_not_the_responses() -> None:
    """The near miss e25f9de was for: Tinfoil's web search item, first in the stream,
    keeps its id to itself; the chat chunks after it name the response."""
    item = {
        "id": "ws_1",
        "model": "m",
        "object": "chat.completion.chunk",
        "choices": [],
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "q"},
    }
    text = {"id": "chatcmpl-8", "model": "m", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    end = {
        "id": "chatcmpl-8",
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    body = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in (item, text, end))
    events = _replayed(body + b"data: [DONE]\n\n")
    assert [e.type for e in events if e.type.startswith("server_tool")] == [
        "server_tool_call",
        "server_tool_result",
    ]
    done = events[-1]
    assert isinstance(done, rxllm.Done)
    assert done.response_id == "chatcmpl-8"


# == a chat chunk passing Gemini's usage on is no Gemini chunk (review h11 of c1b8173) ====


def _chat_stream(*payloads: dict[str, Any] | str) -> bytes:
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads
    )


_SAID = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}
_STOP = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
_GEMINI_USAGE = {"promptTokenCount": 31, "candidatesTokenCount": 7, "totalTokenCount": 38}


@pytest.mark.parametrize(
    "usage_chunk",
    [
        # a relay passing Gemini's usage on as it came, in the usage chunk's `choices: []`
        # (a client of Gemini's OpenAI-compatible route reads this shape on purpose)
        {"choices": [], "usageMetadata": _GEMINI_USAGE},
        {"id": "c1", "choices": [], "usage": {"prompt_tokens": 31}, "usageMetadata": _GEMINI_USAGE},
        {"id": "c1", "choices": [], "promptFeedback": {"safetyRatings": []}},
    ],
)
def test_a_chat_usage_chunk_with_geminis_usage_beside_is_the_chat_streams(
    usage_chunk: dict[str, Any],
) -> None:
    """c1b8173 took any `usageMetadata` or `promptFeedback` for a Gemini chunk on the
    chat wire too, where d5ccb7f's chat wire asked `candidates` alone: the answer said,
    then the turn ended in a `protocol` error ("an event of Gemini's API"). A chunk with
    `choices: []` is the chat stream's unless `candidates` or another wire's `type` say
    otherwise."""
    data = _chat_stream(_SAID, _STOP, usage_chunk, "[DONE]")
    summary = summarize(replay_every_way(data, "openai"))
    assert summary.text == "Hi"
    assert summary.terminal == "done"


@pytest.mark.parametrize(
    "chunk",
    [
        {"choices": [], "candidates": [{"content": {"parts": [{"text": "Hi"}]}}]},
        {"choices": [], "type": "message_start", "message": {"id": "m", "content": []}},
        {"choices": [], "type": "response.created", "response": {"id": "r"}},
    ],
)
def test_an_empty_choices_list_beside_another_wires_own_sign_is_still_that_wires(
    chunk: dict[str, Any],
) -> None:
    """The near misses: `candidates`, an Anthropic or Responses event `type` beside
    `choices: []` still end the turn in one `protocol` error naming that API."""
    events = replay_every_way(_chat_stream(chunk, "[DONE]"), "openai")
    summary = summarize(events)
    assert summary.terminal == "error"
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.kind == "protocol"


# == a tool's image as a user message between parallel calls' results (h11, 5d1b253) ======
# `answer_each_call` ended a call's exchange at a user message: an app that sends a
# tool's image as a user message after that tool's result (tool A, user image, tool B)
# had call B answered twice, "not run" first, though its result follows; the Responses
# API and chat templates (vLLM, Ollama) took that history as written before 5d1b253. A
# call's results are the tool messages up to the model's next turn.

CALL_A = rxllm.ToolCall(id="call_a", name="screenshot", arguments={})
CALL_B = rxllm.ToolCall(id="call_b", name="click", arguments={"x": 1})


def _parallel(*calls_messages: rxllm.Message) -> list[rxllm.Message]:
    return [rxllm.Message.user("open the page"), *calls_messages]


def test_a_result_after_a_user_image_still_answers_its_call() -> None:
    messages = _parallel(
        rxllm.Message.assistant(tool_calls=[CALL_A, CALL_B]),
        rxllm.Message.tool("call_a", "done"),
        rxllm.Message.user("the screenshot"),
        rxllm.Message.tool("call_b", "clicked"),
    )
    for wire in (OpenAIChat(), OpenAIResponses(), Anthropic(), Google()):
        body = wire.build_body(rxllm.ChatRequest(model="m", messages=messages))
        assert NOT_RUN not in json.dumps(body), wire.name  # sent as the app wrote it


@pytest.mark.parametrize(
    "messages",
    [
        # a call left unanswered, then the user, then a reused id answered in a later turn
        _parallel(
            rxllm.Message.assistant(tool_calls=[CALL_A]),
            rxllm.Message.user("go on"),
            rxllm.Message.assistant(tool_calls=[CALL_A]),
            rxllm.Message.tool("call_a", "done"),
        ),
        # a result in a later turn answers no call of an earlier one
        _parallel(
            rxllm.Message.assistant(tool_calls=[CALL_A]),
            rxllm.Message.user("go on"),
            rxllm.Message.assistant("ok", tool_calls=[CALL_B]),
            rxllm.Message.tool("call_b", "clicked"),
            rxllm.Message.tool("call_a", "done"),
        ),
    ],
)
def test_a_call_no_result_of_its_turn_answers_is_still_not_run(
    messages: list[rxllm.Message],
) -> None:
    chat = OpenAIChat().build_body(rxllm.ChatRequest(model="m", messages=messages))
    first = chat["messages"][2]
    assert (first["role"], first["tool_call_id"], first["content"]) == ("tool", "call_a", NOT_RUN)


def test_one_assistant_message_per_call_shares_the_results() -> None:
    """A turn written as one assistant message per call, the results after the last:
    every call is answered (as before 5d1b253, and at it)."""
    messages = _parallel(
        rxllm.Message.assistant(tool_calls=[CALL_A]),
        rxllm.Message.assistant(tool_calls=[CALL_B]),
        rxllm.Message.tool("call_a", "done"),
        rxllm.Message.tool("call_b", "clicked"),
    )
    chat = OpenAIChat().build_body(rxllm.ChatRequest(model="m", messages=messages))
    assert NOT_RUN not in json.dumps(chat["messages"])


# == a full pool of another host's is no wait of this one's (review h11 of 026c4ba) =======
# 026c4ba's connect-timeout words blame a session's full pool when any host had its cap
# of connections out: a session shared by two providers (limit_per_host=1), one turn held
# at the first, and the second's server not answering its connect read "... (the session
# passed in allows 1 connection per host, and connect_timeout counts the wait for one of
# them to be free)", where its own host had no connection out and the server was at fault.


async def test_a_connect_timeout_beside_another_hosts_full_pool_is_the_servers() -> None:
    answered = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await answered.wait()
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    # a listener that never accepts, its backlog filled: a connect to it hangs
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    silent = listener.getsockname()[1]
    fillers = [socket.socket() for _ in range(3)]
    for filler in fillers:
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", silent))
    ask = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    try:
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit_per_host=1)) as own,
            rxllm.provider(
                "custom",
                base_url=f"http://127.0.0.1:{port}/v1",
                api_key="k",
                session=own,
                ssrf_guard=False,
                max_attempts=1,
            ) as first,
            rxllm.provider(
                "custom",
                base_url=f"http://127.0.0.1:{silent}/v1",
                api_key="k",
                session=own,
                ssrf_guard=False,
                max_attempts=1,
                connect_timeout=0.5,
            ) as second,
        ):
            held = asyncio.ensure_future(first.complete(ask))
            while not own.connector or not own.connector._acquired:  # the first one is out
                await asyncio.sleep(0.01)
            rec = await second.complete(ask)
            answered.set()
            await held
    finally:
        for sock in (*fillers, listener):
            sock.close()
        server.close()
        await server.wait_closed()
    assert isinstance(rec.terminal, Failed)
    assert rec.terminal.error.kind == "stalled"
    assert rec.terminal.error.message == (
        "connect_timeout expired: no connection to custom within 0.5 s"
    )
