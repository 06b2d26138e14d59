"""Request bodies a probe found refused or lossy: each conversation sent over a loopback
server that records what arrived, checked against what the provider's API reference
(named beside each test) accepts.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm import ChatRequest, Message, StreamRecord, Tool
from rxllm.events import Failed
from rxllm.request import ImagePart, ReasoningPart, TextPart, ToolCall
from tests.support import CHAT_ANSWER, Recorder, Serve


async def _turn(
    serve: Serve, name: str, request: ChatRequest, base_path: str = "/v1", **answers: bytes
) -> tuple[dict[str, Any], StreamRecord]:
    """What provider `name` sent for `request` to the base URL `base_path` of a
    loopback server, and the record of the turn (which must end in `done`)."""
    recorder = Recorder(answers=answers)
    base_url = (await serve(recorder.handle)).removesuffix("/v1") + base_path
    async with rxllm.provider(
        name, api_key="sk-probe-0123456789abcdef", base_url=base_url, max_attempts=1
    ) as p:
        record = await p.complete(request)
    assert record.terminal.type == "done", record.terminal
    (sent,) = recorder.requests
    return sent, record


async def _sent(
    serve: Serve, name: str, request: ChatRequest, base_path: str = "/v1"
) -> dict[str, Any]:
    return (await _turn(serve, name, request, base_path))[0]


# ------------------------------------- Anthropic: thinking counts against max_tokens


@pytest.mark.parametrize("budget", [4096, 10000, 32000])
async def test_anthropic_default_max_tokens_leaves_room_above_the_thinking_budget(
    serve: Serve, budget: int
) -> None:
    """Extended thinking's `budget_tokens` must be below `max_tokens` (Anthropic's
    extended-thinking docs, "max tokens and context window size"; the API's 400:
    "`max_tokens` must be greater than `thinking.budget_tokens`", as in
    liuw1535/antigravity2api-nodejs#149). Before: the default 4096 was written whatever
    the budget, so `thinking={"type": "enabled", "budget_tokens": 10000}` without a
    `max_tokens` was refused. Now the default is 4096 for the answer plus the budget."""
    thinking = {"type": "enabled", "budget_tokens": budget}
    request = ChatRequest(
        model="claude-sonnet-4-5", messages=[Message.user("hi")], params={"thinking": thinking}
    )
    body = (await _sent(serve, "anthropic", request))["body"]
    assert body["thinking"] == thinking
    assert body["max_tokens"] == 4096 + budget > budget


async def test_anthropic_a_max_tokens_the_user_sets_is_sent_as_it_is(serve: Serve) -> None:
    thinking = {"type": "enabled", "budget_tokens": 10000}
    for request in (
        ChatRequest(
            model="c",
            messages=[Message.user("hi")],
            max_tokens=16000,
            params={"thinking": thinking},
        ),
        ChatRequest(
            model="c",
            messages=[Message.user("hi")],
            params={"thinking": thinking, "max_tokens": 16000},
        ),
    ):
        assert (await _sent(serve, "anthropic", request))["body"]["max_tokens"] == 16000
    # No thinking (or adaptive thinking, which has no budget): the plain default.
    for params in ({}, {"thinking": {"type": "adaptive"}}, {"thinking": {"type": "disabled"}}):
        request = ChatRequest(model="c", messages=[Message.user("hi")], params=params)
        assert (await _sent(serve, "anthropic", request))["body"]["max_tokens"] == 4096


# ------------------------------------ Anthropic: a prefill without trailing whitespace


async def test_anthropic_a_prefill_is_sent_without_trailing_whitespace(serve: Serve) -> None:
    """A final assistant message ending in whitespace is a 400 ("messages: final
    assistant content cannot end with trailing whitespace": tailcallhq/forgecode#1872,
    anomalyco/opencode#1295, langchain-ai/langchain#35071). Before: sent as it was.
    Only the final assistant message is trimmed; earlier turns go as they were."""
    request = ChatRequest(
        model="c",
        messages=[
            Message.user("Name a colour."),
            Message.assistant("Blue.  \n"),
            Message.user("Now as JSON."),
            Message.assistant('{"colour": \n '),
        ],
    )
    messages = (await _sent(serve, "anthropic", request))["body"]["messages"]
    assert [m["content"][-1]["text"] for m in messages] == [
        "Name a colour.",
        "Blue.  \n",
        "Now as JSON.",
        '{"colour":',
    ]


# ----------------------------- Anthropic: an inline image goes with its bytes' type

_JPEG = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00").decode()
_WEBP = base64.b64encode(b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00").decode()


@pytest.mark.parametrize(
    ("url", "media_type"),
    [
        (f"data:image/png;base64,{_JPEG}", "image/jpeg"),  # a JPEG said to be a PNG
        (f"data:image/jpg;base64,{_JPEG}", "image/jpeg"),  # no such type at Anthropic
        (f"data:application/octet-stream;base64,{_WEBP}", "image/webp"),
        ("data:image/png;base64,iVBORw0KGgo=", "image/png"),
        # Bytes that say no type the API takes: the URL's type, as it was.
        ("data:image/heic;base64,AAAAGGZ0eXBoZWlj", "image/heic"),
    ],
)
async def test_anthropic_sends_an_inline_image_with_the_type_its_bytes_have(
    serve: Serve, url: str, media_type: str
) -> None:
    """Anthropic checks the declared type against the image (400 "The image was
    specified using the image/png media type, but the image appears to be a image/jpeg
    image": home-assistant/core#167208) and takes only image/jpeg, png, gif and webp,
    where OpenAI reads the bytes and takes the same data URL. Before: the URL's type
    was sent as it was, so a request that works on OpenAI failed on Anthropic."""
    request = ChatRequest(model="c", messages=[Message.user("What is this?", images=[url])])
    _, image = (await _sent(serve, "anthropic", request))["body"]["messages"][0]["content"]
    assert image["source"] == {
        "type": "base64",
        "media_type": media_type,
        "data": url.partition(",")[2],
    }


# ------------------------ Anthropic: no thinking block from another wire's reasoning


def _sse(*payloads: dict[str, Any]) -> bytes:
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


_REASONING_ITEM = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Paris, then."}],
    "encrypted_content": "gAAAAABopenai-encrypted-reasoning",
}
_CALL_ITEM = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "call_1",
    "name": "weather",
    "arguments": '{"city": "Paris"}',
    "status": "completed",
}
_RESPONSES_TURN = _sse(
    {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
    {"type": "response.output_item.done", "output_index": 0, "item": _REASONING_ITEM},
    {"type": "response.output_item.done", "output_index": 1, "item": _CALL_ITEM},
    {
        "type": "response.completed",
        "response": {
            "id": "resp_1",
            "status": "completed",
            "output": [_REASONING_ITEM, _CALL_ITEM],
            "usage": {"input_tokens": 9, "output_tokens": 30, "total_tokens": 39},
        },
    },
)


async def test_anthropic_sends_no_thinking_block_for_another_wires_reasoning(
    serve: Serve,
) -> None:
    """A history begun on the Responses wire (`include: ["reasoning.encrypted_content"]`)
    goes on at Anthropic, as `rxllm.fallback` or a user switching models does. Before:
    the Responses reasoning item went to Anthropic as a `thinking` block whose
    `signature` was OpenAI's encrypted content, which the API refuses (it checks that
    thinking blocks are Claude's own). A part with `details` came from another wire,
    as the Responses and OpenRouter wires already judge by them; Claude's own thinking
    still goes back."""
    tools = [Tool(name="weather")]
    first = ChatRequest(model="o4-mini", messages=[Message.user("Weather?")], tools=tools)
    _, record = await _turn(serve, "openai-responses", first, responses=_RESPONSES_TURN)
    assert record.reasoning_parts[0].signature == _REASONING_ITEM["encrypted_content"]
    claude = ReasoningPart(text="Check Paris.", signature="EqQBCkYIBxgCKkA")
    history = [
        Message.user("Weather?"),
        record.to_message(),
        Message.tool("call_1", "20C"),
        Message.assistant(
            tool_calls=[ToolCall(id="toolu_2", name="weather", arguments={"city": "Lyon"})],
            reasoning=[claude],
        ),
        Message.tool("toolu_2", "18C"),
    ]
    request = ChatRequest(model="claude-sonnet-4-5", messages=history, tools=tools)
    messages = (await _sent(serve, "anthropic", request))["body"]["messages"]
    assert [block["type"] for block in messages[1]["content"]] == ["tool_use"]
    assert messages[3]["content"][0] == {
        "type": "thinking",
        "thinking": "Check Paris.",
        "signature": "EqQBCkYIBxgCKkA",
    }


# ----------------------------------- chat: a tool result's images are never dropped

_PNG = "data:image/png;base64,iVBORw0KGgo="


def _tool_loop(*after: Message) -> ChatRequest:
    return ChatRequest(
        model="gpt-4.1",
        messages=[
            Message.user("Screenshot both pages."),
            Message.assistant(
                tool_calls=[
                    ToolCall(id="call_a", name="shot", arguments={"page": "a"}),
                    ToolCall(id="call_b", name="shot", arguments={"page": "b"}),
                ]
            ),
            Message(
                role="tool",
                tool_call_id="call_a",
                content=[TextPart(text="page a"), ImagePart(url="https://example.com/a.png")],
            ),
            Message.tool("call_b", "page b: no change"),
            *after,
        ],
        tools=[Tool(name="shot")],
    )


async def test_chat_images_of_tool_results_follow_the_results_as_a_user_message(
    serve: Serve,
) -> None:
    """A Chat Completions tool message takes text only (its `content` is a string or an
    array of text parts; images are for user messages). Before: the images of a tool
    result were silently left out, so the model never saw the screenshot it asked for.
    Now they follow the run of tool messages (which must directly follow the calls) as
    one user message, each result's images after a line naming its call."""
    request = _tool_loop(
        Message(role="tool", tool_call_id="call_c", content=[ImagePart(url=_PNG)]),
        Message.user("Which changed?"),
    )
    messages = (await _sent(serve, "openai", request))["body"]["messages"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "user",
        "user",
    ]
    assert [m["content"] for m in messages[2:5]] == ["page a", "page b: no change", ""]
    assert messages[5]["content"] == [
        {"type": "text", "text": "[Images from tool call call_a]"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "[Images from tool call call_c]"},
        {"type": "image_url", "image_url": {"url": _PNG}},
    ]
    assert messages[6] == {"role": "user", "content": "Which changed?"}


async def test_chat_images_of_the_last_tool_results_end_the_conversation(serve: Serve) -> None:
    messages = (await _sent(serve, "openai", _tool_loop()))["body"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert [part["type"] for part in messages[-1]["content"]] == ["text", "image_url"]


# ----------------------------- chat: a tool schema OpenAI takes, so tools stay on


@pytest.mark.parametrize(
    ("parameters", "sent"),
    [
        # An MCP server's tool without parameters.
        ({"type": "object"}, {"type": "object", "properties": {}}),
        # A schema that leaves out its top-level type.
        (
            {"properties": {"q": {"type": "string"}}, "required": ["q"]},
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        ),
        ({}, {"type": "object", "properties": {}}),
    ],
)
async def test_chat_tool_parameters_are_an_object_schema_with_properties(
    serve: Serve, parameters: dict[str, Any], sent: dict[str, Any]
) -> None:
    """OpenAI refuses a function whose parameters lack `"type": "object"` (400 "schema
    must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'":
    i-am-bee/beeai-framework#844) or an object schema without `properties` ("object
    schema missing properties": wakehacker/wake-ai#16). Before: sent as given, the
    400 (param `tools[0].function.parameters`) made the degraded retry drop `tools`,
    and the turn went on without any tool, a success that had lost them. Now both are
    written, and the one request is taken."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        for tool in body.get("tools") or ():
            schema = tool["function"]["parameters"]
            if schema.get("type") != "object" or "properties" not in schema:
                error = {
                    "message": "Invalid schema for function 'lookup': In context=(), object "
                    "schema missing properties.",
                    "type": "invalid_request_error",
                    "param": "tools[0].function.parameters",
                    "code": "invalid_function_parameters",
                }
                return web.json_response({"error": error}, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(CHAT_ANSWER)
        return response

    request = ChatRequest(
        model="gpt-4.1",
        messages=[Message.user("Look it up.")],
        tools=[Tool(name="lookup", parameters=parameters)],
    )
    async with rxllm.provider("openai", api_key="sk-probe", base_url=await serve(handler)) as p:
        record = await p.complete(request)
    assert record.terminal.type == "done"
    assert [attempt.dropped for attempt in record.attempts] == [[]]
    (body,) = bodies
    assert body["tools"][0]["function"]["parameters"] == sent


async def test_chat_tool_parameters_of_another_shape_go_as_they_are(serve: Serve) -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    request = ChatRequest(
        model="m", messages=[Message.user("hi")], tools=[Tool(name="f", parameters=schema)]
    )
    body = (await _sent(serve, "openai", request))["body"]
    assert body["tools"][0]["function"]["parameters"] == schema


# ----------------------------------------------------------- headers and the URL


async def test_headers_say_the_key_the_way_each_endpoint_reads_it(serve: Serve) -> None:
    """Anthropic: `x-api-key` and `anthropic-version`, no bearer token; OpenAI: a bearer
    token; Azure: `api-key`, with the deployment URL's `api-version` query kept."""
    request = ChatRequest(model="m", messages=[Message.user("héllo ✓")])
    anthropic = await _sent(serve, "anthropic", request)
    assert anthropic["path"] == "/v1/messages"
    assert anthropic["headers"]["x-api-key"] == "sk-probe-0123456789abcdef"
    assert anthropic["headers"]["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in anthropic["headers"]
    assert anthropic["body"]["messages"][0]["content"][0]["text"] == "héllo ✓"

    openai = await _sent(serve, "openai", request)
    assert openai["headers"]["Authorization"] == "Bearer sk-probe-0123456789abcdef"

    azure = await _sent(
        serve, "azure-openai", request, "/openai/deployments/gpt?api-version=2024-10-21"
    )
    assert azure["path"] == "/openai/deployments/gpt/chat/completions"
    assert azure["query"] == {"api-version": "2024-10-21"}
    assert azure["headers"]["api-key"] == "sk-probe-0123456789abcdef"
    assert "Authorization" not in azure["headers"]


# ------------------------------------------ Anthropic: a base URL without its version


async def test_anthropic_404_on_a_base_url_without_v1_says_what_to_check(serve: Serve) -> None:
    """Anthropic's SDKs take the base URL without the version
    (`ANTHROPIC_BASE_URL=https://api.anthropic.com`, then `/v1/messages`); given to
    rxllm, whose base URL ends in `/v1` as OpenAI's does, that one posts to
    `/messages`, which the API answers 404 "Not Found". Before: the error said only
    that. Now it names the likely cause, as the Gemini wire does for its version."""
    not_found = {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.json_response(not_found, status=404)

    root = (await serve(handler)).removesuffix("/v1")
    request = ChatRequest(model="claude-sonnet-4-5", messages=[Message.user("hi")])
    for base_url, hinted in ((root, True), (root + "/v1", False)):
        async with rxllm.provider("anthropic", api_key="sk-probe", base_url=base_url) as p:
            record = await p.complete(request)
        assert isinstance(record.terminal, Failed)
        error = record.terminal.error
        assert error.status == 404
        assert ("missing it?" in error.message) is hinted, error.message
        assert "Not Found" in error.message


# ------------------------------------- Responses: tool-result images, Azure's query

_RESPONSES_ANSWER = "".join(
    f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"
    for payload in (
        {"type": "response.created", "response": {"id": "r", "output": []}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    )
).encode()


async def test_responses_tool_result_images_go_in_the_function_call_output(
    serve: Serve,
) -> None:
    """`function_call_output.output` takes a list of `input_text` / `input_image` parts
    (OpenAI's ResponseFunctionCallOutputItem); the image of a tool result was dropped,
    the output its text alone."""
    history = [
        Message.user("look"),
        Message.assistant("", tool_calls=[ToolCall(id="call_1", name="snap")]),
        Message(
            role="tool",
            tool_call_id="call_1",
            content=[TextPart(text="here"), ImagePart(url=_PNG)],
        ),
    ]
    sent, _ = await _turn(
        serve,
        "openai-responses",
        ChatRequest(model="m", messages=history),
        **{"/responses": _RESPONSES_ANSWER},
    )
    (output,) = [item for item in sent["body"]["input"] if item["type"] == "function_call_output"]
    assert output["call_id"] == "call_1"
    assert output["output"] == [
        {"type": "input_text", "text": "here"},
        {"type": "input_image", "image_url": _PNG, "detail": "auto"},
    ]


async def test_responses_url_keeps_a_query_after_its_path(serve: Serve) -> None:
    """Azure's Responses URL carries `?api-version=...` on the base URL: `/responses`
    went after the query (`...?api-version=preview/responses`)."""
    sent, _ = await _turn(
        serve,
        "openai-responses",
        ChatRequest(model="m", messages=[Message.user("hi")]),
        base_path="/openai/v1?api-version=preview",
        **{"/responses": _RESPONSES_ANSWER},
    )
    assert sent["path"] == "/openai/v1/responses"
    assert sent["query"] == {"api-version": "preview"}


# ------------------------------------- data URLs as RFC 2397 writes them

_PNG_BYTES = base64.b64decode("iVBORw0KGgo=")


@pytest.mark.parametrize(
    "url",
    [
        "DATA:image/png;base64,iVBORw0KGgo=",  # the scheme in another case
        "data:image/png;BASE64,iVBORw0KGgo=",
        "data:image/png," + "".join(f"%{byte:02X}" for byte in _PNG_BYTES),  # no ;base64
    ],
    ids=["upper-scheme", "upper-base64", "percent-encoded"],
)
async def test_anthropic_reads_every_form_of_a_data_url(serve: Serve, url: str) -> None:
    """RFC 2397: the scheme has no case, and data without `;base64` is percent-encoded
    bytes. `DATA:` went out as a remote URL source, and percent-encoded data as if it
    were base64."""
    request = ChatRequest(model="m", messages=[Message.user("look", images=[url])])
    sent = await _sent(serve, "anthropic", request)
    (image,) = [b for b in sent["body"]["messages"][0]["content"] if b["type"] == "image"]
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


@pytest.mark.parametrize(
    ("name", "base_path", "path", "query"),
    [
        ("anthropic", "/v1?gateway=eu", "/v1/messages", {"gateway": "eu"}),
        (
            "google",
            "/v1beta?gateway=eu",
            "/v1beta/models/m:streamGenerateContent",
            {"alt": "sse", "gateway": "eu"},
        ),
    ],
)
async def test_a_base_url_query_stays_after_the_path_on_every_wire(
    serve: Serve, name: str, base_path: str, path: str, query: dict[str, str]
) -> None:
    """The chat wire kept a base URL's query after its path; Anthropic's and Gemini's
    wrote theirs after the query (`...?gateway=eu/messages`)."""
    recorder = Recorder()
    base_url = (await serve(recorder.handle)).removesuffix("/v1") + base_path
    async with rxllm.provider(name, api_key="sk-probe-0123456789abcdef", base_url=base_url) as p:
        await p.complete(ChatRequest(model="m", messages=[Message.user("hi")]))
    (sent,) = recorder.requests
    assert (sent["path"], sent["query"]) == (path, query)
