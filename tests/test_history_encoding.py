"""What rxllm sends back: a turn read from a real capture over loopback, made the
assistant message of the history (`StreamRecord.to_message()`), its calls answered,
and the next request sent to each wire and recorded as the server got it. Each body is
checked against the rules of that wire's request reference, the ones whose breach is a
400 the caller cannot fix:

- Anthropic Messages (`messages[].content` blocks): every `tool_use` is answered by a
  `tool_result` at the start of the next user message ("messages.N: `tool_use` ids were
  found without `tool_result` blocks immediately after"; "Did not find N `tool_result`
  block(s) at the beginning of this message"); ids `^[a-zA-Z0-9_-]+$`; text blocks
  non-blank ("text content blocks must contain non-whitespace text"); a `thinking`
  block keeps its signature and its place ("Invalid `signature` in `thinking` block"),
  a `redacted_thinking` block its data; no thinking or server block of another wire.
- OpenAI Chat Completions (`messages`): an assistant message with `tool_calls` is
  followed by one `tool` message per call id ("An assistant message with 'tool_calls'
  must be followed by tool messages responding to each 'tool_call_id'"); `content: null`
  only beside `tool_calls`; call ids at most 40 characters; no other wire's reasoning.
- OpenAI Responses (`input` items): each `function_call_output` answers an earlier
  `function_call` of its `call_id` ("No tool call found for function call output"), and
  each call is answered ("No tool output found for function call"); a `reasoning` item
  has its `summary`, no `status` (output only), its `encrypted_content` when sent
  without its `id`, and an item of its turn right after it ("provided without its
  required following item"); none from another wire.
- Gemini (`contents`): roles `user` and `model`, no empty part; a model turn's first
  `functionCall` carries a `thoughtSignature` (Gemini 3 refuses it missing: "Function
  call is missing a thought_signature"), the signature Gemini gave, else the documented
  `skip_thought_signature_validator`; the next content answers each call with a
  `functionResponse` of its name, in order ("Please ensure that the number of function
  response parts is equal to the number of function call parts").

Turns cover parallel calls, calls without arguments, reasoning with signatures and
redacted, a refusal, server tools, a turn cut by `length` mid-call, one ended by an
error after it began, images in tool results, an empty turn, and a turn begun on
Anthropic sent on by `rxllm.fallback` to the other wires. A turn that failed or was
cancelled once a call was complete keeps the call; sent on without its result (the
user's next message instead), every wire refused it, on every later turn: it goes back
answered as not run (`answer_each_call`)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import reactivex.operators as ops
from aiohttp import web

import rxllm
from rxllm.events import Event, StreamRecord
from rxllm.pipeline.provider import record_of
from rxllm.providers.call_ids import NOT_RUN
from rxllm.request import ChatRequest, ImagePart, Message, TextPart
from tests.support import ANTHROPIC_ANSWER, Recorder, Serve, capture, needs_captures

KEY = "sk-history-encoding-0123456789abcdef"
QUESTION = Message.user("Go ahead.")
FOLLOW_UP = Message.user("Thanks. And then?")
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SKIP = "skip_thought_signature_validator"
WIRES = ("anthropic", "openai", "openai-responses", "google")

# The provider each capture folder is read as.
PROVIDERS = {"gemini": "google"}


def provider_of(relative: str) -> str:
    folder = relative.split("/")[0]
    return PROVIDERS.get(folder, folder)


def wire_family(name: str) -> str:
    return name if name in ("anthropic", "openai-responses", "google") else "openai"


async def first_turn(serve: Serve, name: str, answer: bytes) -> StreamRecord:
    """Turn 1 on provider `name`, its server answering `answer`."""
    suffix = {
        "anthropic": "/messages",
        "openai-responses": "/responses",
        "google": ":streamGenerateContent",
    }.get(name, "/chat/completions")
    recorder = Recorder(answers={suffix: answer})
    async with rxllm.provider(name, api_key=KEY, base_url=await serve(recorder.handle)) as p:
        return await p.complete(ChatRequest(model="m", messages=[QUESTION]))


async def next_request(serve: Serve, name: str, history: list[Message]) -> dict[str, Any]:
    """The body provider `name` sends for `history`, as its server got it."""
    recorder = Recorder(answers={"/responses": capture("openai-responses/text.sse")})
    async with rxllm.provider(name, api_key=KEY, base_url=await serve(recorder.handle)) as p:
        record = await p.complete(ChatRequest(model="m", messages=history))
    assert record.ok, record.terminal
    body: dict[str, Any] = recorder.requests[0]["body"]
    return body


def answered(
    record: StreamRecord, results: Callable[[str], Message] | None = None
) -> list[Message]:
    """The history after `record`: the question, the turn, a result for each call (or
    `results(call_id)`), and a follow-up question."""
    make = results or (lambda call_id: Message.tool(call_id, '{"ok": true}'))
    return [
        QUESTION,
        record.to_message(),
        *(make(call.call_id) for call in record.tool_calls),
        FOLLOW_UP,
    ]


def strings(node: Any) -> list[str]:
    """Every string in a JSON body."""
    if isinstance(node, str):
        return [node]
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    return [text for value in values for text in strings(value)]


# -- the reference rules, per wire ----------------------------------------------------------

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")


def check_anthropic(messages: list[dict[str, Any]], source: str) -> None:
    seen_ids: set[str] = set()
    for n, message in enumerate(messages):
        assert message["role"] in ("user", "assistant"), message
        assert message["content"], f"messages.{n} is empty"
        if n:
            assert not message["role"] == messages[n - 1]["role"] == "assistant", n
        for block in message["content"]:
            kind = block["type"]
            if kind == "text":
                assert block["text"].strip(), f"messages.{n}: a blank text block"
            elif kind == "thinking":
                assert source == "anthropic", f"another wire's reasoning as thinking: {block}"
                assert block["signature"], f"messages.{n}: a thinking block without signature"
            elif kind == "redacted_thinking":
                assert source == "anthropic" and block["data"]
            elif kind in ("server_tool_use", "web_search_tool_result"):
                assert source == "anthropic"
            elif kind == "tool_use":
                assert _ANTHROPIC_ID.fullmatch(block["id"]), block["id"]
                assert block["id"] not in seen_ids
                seen_ids.add(block["id"])
                assert isinstance(block["input"], dict)
        uses = [block["id"] for block in message["content"] if block["type"] == "tool_use"]
        if not uses:
            continue
        following = messages[n + 1]
        assert following["role"] == "user"
        leading = []
        for block in following["content"]:
            if block["type"] != "tool_result":
                break
            leading.append(block["tool_use_id"])
        assert sorted(leading) == sorted(uses), (uses, following["content"])
        for block in following["content"][len(leading) :]:
            assert block["type"] != "tool_result"


def check_chat(messages: list[dict[str, Any]], source: str, wire: str) -> None:
    for n, message in enumerate(messages):
        assert message["role"] in ("system", "user", "assistant", "tool"), message
        if message["role"] != "assistant":
            if message["role"] == "tool":
                # every tool message answers a call of the assistant message before its run
                k = n
                while messages[k]["role"] == "tool":
                    k -= 1
                calls = [call["id"] for call in messages[k].get("tool_calls", ())]
                assert message["tool_call_id"] in calls, (message, calls)
            continue
        if wire == "openai":  # which takes no reasoning back (a preset may, in its form)
            assert not {"reasoning_content", "reasoning_details", "reasoning"} & set(message)
        calls = [call["id"] for call in message.get("tool_calls", ())]
        if not calls:
            assert isinstance(message["content"], str) and message["content"], message
            continue
        assert message["content"] is None or message["content"], message
        assert all(len(call_id) <= 40 for call_id in calls), calls
        results = []
        for following in messages[n + 1 :]:
            if following["role"] != "tool":
                break
            results.append(following["tool_call_id"])
        assert sorted(results) == sorted(calls), (calls, results)
        for call in message["tool_calls"]:
            assert isinstance(json.loads(call["function"]["arguments"]), dict)


def check_responses(items: list[dict[str, Any]], source: str) -> None:
    calls: list[str] = []
    outputs: list[str] = []
    for n, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            calls.append(item["call_id"])
            assert isinstance(json.loads(item["arguments"]), dict)
        elif kind == "function_call_output":
            assert item["call_id"] in calls, f"input[{n}] answers no call before it"
            outputs.append(item["call_id"])
        elif kind == "reasoning":
            assert source == "openai-responses", f"another wire's reasoning: {item}"
            assert "summary" in item and "status" not in item
            assert "id" in item or item.get("encrypted_content")
            after = items[n + 1]
            assert after.get("type") != "reasoning" and after.get("role") != "user", after
        else:
            assert kind == "message" and item["role"] in ("user", "assistant", "system"), item
            assert item["content"]
    assert sorted(calls) == sorted(outputs)


def check_gemini(contents: list[dict[str, Any]], source: str) -> None:
    for n, content in enumerate(contents):
        assert content["role"] in ("user", "model")
        assert content["parts"], f"contents[{n}] has no parts"
        for part in content["parts"]:
            assert part.get("text", "x") != "", f"contents[{n}]: an empty text part"
            if source != "google" and "thoughtSignature" in part:
                assert part["thoughtSignature"] == SKIP, "another wire's signature to Gemini"
        calls = [part for part in content["parts"] if "functionCall" in part]
        if not calls:
            continue
        assert content["role"] == "model"
        assert contents[n - 1]["role"] == "user"  # a call turn follows a user turn
        assert calls[0].get("thoughtSignature"), f"contents[{n}]: first call unsigned"
        responses = [
            p["functionResponse"] for p in contents[n + 1]["parts"] if "functionResponse" in p
        ]
        assert [r["name"] for r in responses] == [c["functionCall"]["name"] for c in calls]
        assert all(isinstance(r["response"], dict) for r in responses)


def check(wire: str, body: dict[str, Any], source: str) -> None:
    family, source = wire_family(wire), wire_family(source)
    if family == "anthropic":
        check_anthropic(body["messages"], source)
    elif family == "openai-responses":
        check_responses(body["input"], source)
    elif family == "google":
        check_gemini(body["contents"], source)
    else:
        check_chat(body["messages"], source, wire)


# -- every captured turn, back on every wire -------------------------------------------------

TURNS = [
    "anthropic/docs_tool_use_example.sse",  # text, then a call
    "anthropic/tool_use_input_json_delta.sse",  # a call with its `caller`
    "anthropic/thinking_signature.sse",  # signed thinking, text
    "anthropic/redacted_thinking.sse",  # two redacted thinking blocks, text
    "anthropic/web_search_server_tool.sse",  # thinking, a server tool call and its result
    "openai/chat_parallel_tool_calls.sse",  # two parallel calls
    "openai/chat_parallel_tool_calls_no_args.sse",  # two parallel calls without arguments
    "openai/chat_refusal.sse",  # a refusal
    "ollama/parallel_tool_calls_whole_chunks.sse",  # two calls of one tool, whole
    "deepseek/reasoner_tool_call.sse",  # reasoning_content, then a call
    "mistral/tool_call_single_chunk_no_index.sse",  # a 9-character id
    "vllm/qwen_tool_call_fragments.sse",  # a 46-character id
    "openai-responses/reasoning_encrypted_then_function_call.sse",  # encrypted reasoning, call
    "openai-responses/text_then_function_call_phase.sse",  # reasoning, commentary, call
    "openai-responses/reasoning_summary.sse",  # reasoning with summary parts, text
    "gemini/function_call_thought_signature.sse",  # a signed call without arguments
    "gemini/vertex_streamed_function_call_args.sse",  # two parallel calls, the first signed
    "gemini/thought_parts.sse",  # thoughts, text with a signature
]


@needs_captures
@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("relative", TURNS)
async def test_a_captured_turn_goes_back_as_each_wire_requires(
    serve: Serve, relative: str, wire: str
) -> None:
    source = provider_of(relative)
    record = await first_turn(serve, source, capture(relative))
    assert record.ok, record.terminal
    body = await next_request(serve, wire, answered(record))
    check(wire, body, source)


# -- the turn's own wire: exactly what came ---------------------------------------------------


@needs_captures
async def test_anthropic_thinking_server_tool_and_text_go_back_in_their_order(
    serve: Serve,
) -> None:
    """The web search turn goes back block for block: the signed thinking, the server
    call, its result (without the `citations` the API writes on output only), and the
    answer's text around them, in the order they came."""
    record = await first_turn(serve, "anthropic", capture("anthropic/web_search_server_tool.sse"))
    body = await next_request(serve, "anthropic", answered(record))
    turn = body["messages"][1]
    assert turn["role"] == "assistant"
    kinds = [block["type"] for block in turn["content"]]
    searched = ["server_tool_use", "web_search_tool_result", "text"]
    assert kinds == ["thinking", *searched, *searched]
    thinking = turn["content"][0]
    assert thinking["thinking"] == record.reasoning
    assert thinking["signature"].startswith("Er8ECkYIBxgCKkDp29haxwUos3j9hg3HNQI8e4jcFtinIsLx")
    assert turn["content"][1]["id"] == turn["content"][2]["tool_use_id"]
    assert turn["content"][4]["id"] == turn["content"][5]["tool_use_id"]
    assert "citations" not in turn["content"][2]
    assert body["messages"][2] == {
        "role": "user",
        "content": [{"type": "text", "text": FOLLOW_UP.text}],
    }


@needs_captures
async def test_anthropic_redacted_thinking_goes_back_as_its_data(serve: Serve) -> None:
    record = await first_turn(serve, "anthropic", capture("anthropic/redacted_thinking.sse"))
    body = await next_request(serve, "anthropic", answered(record))
    blocks = body["messages"][1]["content"]
    assert [block["type"] for block in blocks] == ["redacted_thinking", "redacted_thinking", "text"]
    assert blocks[0]["data"].startswith("EqkECkYIBxgCKkA8AZ4noDfV")
    assert set(blocks[0]) == {"type", "data"}


@needs_captures
async def test_parallel_calls_without_arguments_go_back_as_empty_objects(serve: Serve) -> None:
    """openai-python's two parallel calls whose arguments are `{}`: a call without
    parameters goes back with an empty object on every wire, each answered in turn."""
    record = await first_turn(
        serve, "openai", capture("openai/chat_parallel_tool_calls_no_args.sse")
    )
    ids = [call.call_id for call in record.tool_calls]
    history = answered(record)
    chat = (await next_request(serve, "openai", history))["messages"]
    assert [call["function"]["arguments"] for call in chat[1]["tool_calls"]] == ["{}", "{}"]
    assert [m["tool_call_id"] for m in chat[2:4]] == ids
    claude = (await next_request(serve, "anthropic", history))["messages"]
    assert [(b["id"], b["input"]) for b in claude[1]["content"]] == [(ids[0], {}), (ids[1], {})]
    assert [b["tool_use_id"] for b in claude[2]["content"]] == ids
    items = (await next_request(serve, "openai-responses", history))["input"]
    assert [i["arguments"] for i in items if i["type"] == "function_call"] == ["{}", "{}"]
    gemini = (await next_request(serve, "google", history))["contents"]
    assert gemini[1]["parts"] == [
        {"functionCall": {"name": "get_country", "args": {}}, "thoughtSignature": SKIP},
        {"functionCall": {"name": "get_product_name", "args": {}}},
    ]


@needs_captures
async def test_gemini_parallel_calls_keep_the_signature_on_the_first(serve: Serve) -> None:
    """Vertex's two streamed calls: the signature came on the first call's part and
    goes back there; the second goes without one, as the docs show parallel calls."""
    relative = "gemini/vertex_streamed_function_call_args.sse"
    record = await first_turn(serve, "google", capture(relative))
    contents = (await next_request(serve, "google", answered(record)))["contents"]
    first, second = contents[1]["parts"]
    assert first["functionCall"] == {"name": "getWeather", "args": {"location": "Boston"}}
    assert first["thoughtSignature"].startswith("CiMBjz1rX25KieIB4d4AwFn8")
    assert second == {"functionCall": {"name": "getWeather", "args": {"location": "San Francisco"}}}
    assert [p["functionResponse"]["name"] for p in contents[2]["parts"]] == ["getWeather"] * 2


@needs_captures
async def test_responses_encrypted_reasoning_goes_back_before_its_call(serve: Serve) -> None:
    relative = "openai-responses/reasoning_encrypted_then_function_call.sse"
    record = await first_turn(serve, "openai-responses", capture(relative))
    items = (await next_request(serve, "openai-responses", answered(record)))["input"]
    kinds = [item["type"] for item in items]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output", "message"]
    reasoning = items[1]
    assert reasoning["encrypted_content"].startswith("gAAAAABoyXvx")
    assert "id" not in reasoning and reasoning["summary"] == []
    assert items[2]["call_id"] == items[3]["call_id"] == record.tool_calls[0].call_id


# -- a turn cut or ended early: what is kept -------------------------------------------------


@needs_captures
@pytest.mark.parametrize("wire", WIRES)
async def test_a_call_cut_by_max_tokens_is_left_out_and_its_text_kept(
    serve: Serve, wire: str
) -> None:
    """The Anthropic SDK's fixture: text, then a `tool_use` whose input max_tokens cut.
    The turn ends in `malformed_tool_arguments`; its text goes back, the cut call
    nowhere (no call without its result: every wire refuses one)."""
    record = await first_turn(
        serve, "anthropic", capture("anthropic/max_tokens_truncated_tool_json.sse")
    )
    assert record.terminal.type == "error" and not record.tool_calls
    body = await next_request(serve, wire, answered(record))
    check(wire, body, "anthropic")
    dumped = json.dumps(body)
    assert "make_file" not in dumped and "toolu_01EKqbqmZrGRXy18eN7m9kvY" not in dumped
    assert record.text.startswith("I'll create a comprehensive tax guide")
    assert record.text in strings(body)


def _cut_second_call() -> bytes:
    """openai-python's two parallel calls, the second cut by `length` mid-arguments."""
    lines = capture("openai/chat_parallel_tool_calls.sse").decode().split("\n")
    cut = next(n for n, line in enumerate(lines) if '"index":1,"function":{"arguments"' in line)
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
    return (
        "\n".join(lines[: cut + 2]) + f"\ndata: {json.dumps(finish)}\n\ndata: [DONE]\n\n"
    ).encode()


@needs_captures
@pytest.mark.parametrize("wire", WIRES)
async def test_parallel_calls_cut_by_length_keep_the_complete_one(serve: Serve, wire: str) -> None:
    record = await first_turn(serve, "openai", _cut_second_call())
    assert record.terminal.type == "error"
    assert [call.name for call in record.tool_calls] == ["GetWeatherArgs"]
    body = await next_request(serve, wire, answered(record))
    check(wire, body, "openai")
    assert "get_stock_price" not in json.dumps(body)


def _anthropic_cut_by_error(before: str, nth: int = 1) -> bytes:
    """The signed thinking capture, cut by an `overloaded_error` frame right before the
    `nth` event holding `before`."""
    lines = capture("anthropic/thinking_signature.sse").decode().split("\n")
    holding = [n for n, line in enumerate(lines) if before in line]
    cut = holding[nth - 1] - 1  # its `event:` line
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return ("\n".join(lines[:cut]) + f"\n\nevent: error\ndata: {json.dumps(error)}\n\n").encode()


@needs_captures
async def test_an_error_mid_thinking_sends_no_unsigned_thinking(serve: Serve) -> None:
    """Cut before its signature, the thinking block has none: Anthropic refuses it
    unsigned, and with nothing else in the turn, the turn is left out."""
    record = await first_turn(serve, "anthropic", _anthropic_cut_by_error("signature_delta"))
    assert record.terminal.type == "error" and record.reasoning
    messages = (await next_request(serve, "anthropic", answered(record)))["messages"]
    assert [m["role"] for m in messages] == ["user", "user"]
    check_anthropic(messages, "anthropic")


@needs_captures
@pytest.mark.parametrize("wire", WIRES)
async def test_an_error_mid_text_keeps_the_signed_thinking_and_the_text(
    serve: Serve, wire: str
) -> None:
    record = await first_turn(serve, "anthropic", _anthropic_cut_by_error('"text_delta"', nth=3))
    assert record.terminal.type == "error" and record.text
    body = await next_request(serve, wire, answered(record))
    check(wire, body, "anthropic")
    assert record.text in strings(body)
    if wire == "anthropic":
        kinds = [block["type"] for block in body["messages"][1]["content"]]
        assert kinds == ["thinking", "text"]


# -- an empty turn, and images in tool results -----------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
async def test_an_empty_turn_is_left_out(serve: Serve, wire: str) -> None:
    """A turn that said nothing (`end_turn` with no block): no assistant message with
    nothing in it (Anthropic: "all messages must have non-empty content"; OpenAI's
    `content: null` only beside tool calls; Gemini's content needs a part)."""
    record = await first_turn(serve, "anthropic", ANTHROPIC_ANSWER)
    assert record.ok and not record.text
    body = await next_request(serve, wire, answered(record))
    check(wire, body, "anthropic")
    turns = body.get("messages") or body.get("contents") or body["input"]
    assert len(turns) == 2


def _with_image(call_id: str) -> Message:
    return Message(
        role="tool", tool_call_id=call_id, content=[TextPart(text="a chart"), ImagePart(url=PNG)]
    )


def _image_only(call_id: str) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=[ImagePart(url=PNG)])


@needs_captures
@pytest.mark.parametrize("result", [_with_image, _image_only], ids=["text and image", "image"])
@pytest.mark.parametrize("wire", WIRES)
async def test_images_in_parallel_results_go_where_each_wire_takes_them(
    serve: Serve, wire: str, result: Callable[[str], Message]
) -> None:
    """Anthropic and Responses take an image inside the result; a chat `tool` message
    takes text only, so the images follow the results as one user message; Gemini's
    follow the function responses as parts of their own."""
    record = await first_turn(
        serve, "ollama", capture("ollama/parallel_tool_calls_whole_chunks.sse")
    )
    first, second = (call.call_id for call in record.tool_calls)
    body = await next_request(serve, wire, answered(record, result))
    check(wire, body, "ollama")
    data = PNG.partition(",")[2]
    text = [{"type": "text", "text": "a chart"}] if result is _with_image else []
    if wire == "anthropic":
        image = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data},
        }
        assert body["messages"][2]["content"] == [
            {"type": "tool_result", "tool_use_id": call, "content": [*text, image]}
            for call in (first, second)
        ]
    elif wire == "openai":
        messages = body["messages"]
        assert [m["role"] for m in messages] == [
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "user",
        ]
        assert messages[2]["content"] == ("a chart" if text else "")
        shown = messages[4]["content"]
        assert shown[0] == {"type": "text", "text": f"[Images from tool call {first}]"}
        assert shown[1] == {"type": "image_url", "image_url": {"url": PNG}}
    elif wire == "openai-responses":
        outputs = [item for item in body["input"] if item["type"] == "function_call_output"]
        image_item = {"type": "input_image", "image_url": PNG, "detail": "auto"}
        words = [{"type": "input_text", "text": "a chart"}] if text else []
        assert [o["output"] for o in outputs] == [[*words, image_item]] * 2
    else:
        parts = body["contents"][2]["parts"]
        assert [next(iter(p)) for p in parts] == [
            "functionResponse",
            "functionResponse",
            "inlineData",
            "inlineData",
        ]


# -- a turn begun on Anthropic, sent on by a fallback ----------------------------------------


@needs_captures
@pytest.mark.parametrize("wire", ["openai", "openai-responses", "google", "deepseek", "openrouter"])
@pytest.mark.parametrize(
    "relative", ["anthropic/web_search_server_tool.sse", "anthropic/redacted_thinking.sse"]
)
async def test_a_fallback_sends_no_claude_signature_to_another_wire(
    serve: Serve, relative: str, wire: str
) -> None:
    """Anthropic refuses the next turn (overloaded, before anything committed) and the
    fallback sends it to another wire: Claude's signatures, redacted data and server
    blocks mean nothing there and are not sent; the turn's text is."""
    record = await first_turn(serve, "anthropic", capture(relative))
    history = answered(record)
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    claude = Recorder((529, overloaded))
    other = Recorder(answers={"/responses": capture("openai-responses/text.sse")})
    first = rxllm.provider(
        "anthropic", api_key=KEY, base_url=await serve(claude.handle), max_attempts=1
    )
    second = rxllm.provider(wire, api_key=KEY, base_url=await serve(other.handle))
    async with first, second:
        done = await rxllm.fallback([first, second]).complete(
            ChatRequest(model="m", messages=history)
        )
    assert done.ok and done.provider == wire, done.terminal
    body = other.requests[0]["body"]
    check(wire, body, "anthropic")
    dumped = json.dumps(body)
    signed = [part.signature for part in record.to_message().content if hasattr(part, "signature")]
    assert signed and all(s and s not in dumped for s in signed)
    assert "srvtoolu_" not in dumped and "encrypted_content" not in dumped
    assert any(text.startswith(record.text[:60]) for text in strings(body))


# -- calls the turn made but nobody answered --------------------------------------------------


def _cut_after_the_call(relative: str, event: str) -> bytes:
    """A capture up to the end of its first `tool_use` block, then `event` (an error
    frame), or nothing more when `event` is empty (the server holds the body open)."""
    text = capture(relative).decode()
    stop = re.search(r'"content_block_stop","index":1\s*}[^\n]*\n\n', text)
    assert stop is not None
    return (text[: stop.end()] + event).encode()


def unanswered(body: dict[str, Any], wire: str) -> list[dict[str, Any]]:
    """The tool results the body gives for the turn's calls, in the wire's own form."""
    family = wire_family(wire)
    if family == "anthropic":
        return [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    if family == "google":
        parts = [p for c in body["contents"] for p in c["parts"]]
        return [p["functionResponse"] for p in parts if "functionResponse" in p]
    if family == "openai-responses":
        return [i for i in body["input"] if i["type"] == "function_call_output"]
    return [m for m in body["messages"] if m["role"] == "tool"]


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@needs_captures
@pytest.mark.parametrize("wire", [*WIRES, "mistral"])
async def test_a_call_of_a_turn_that_failed_is_answered_as_not_run(serve: Serve, wire: str) -> None:
    """The documented tool-use stream, cut by an `overloaded_error` once its call was
    complete: the record keeps the call (`to_message()`), which nobody ran, and the
    next request is the user's new message. Every wire refuses a call without its
    result (Anthropic: "`tool_use` ids were found without `tool_result` blocks
    immediately after"; Gemini: "the number of function response parts is equal to
    the number of function call parts"), turn after turn, as the history keeps it:
    the call goes back answered, as a failure that says it was not run.

    Before: the call went back alone and the request was refused."""
    error = f"event: error\ndata: {json.dumps(OVERLOADED)}\n\n"
    answer = _cut_after_the_call("anthropic/docs_tool_use_example.sse", error)
    record = await first_turn(serve, "anthropic", answer)
    assert record.terminal.type == "error" and len(record.tool_calls) == 1
    body = await next_request(serve, wire, [QUESTION, record.to_message(), FOLLOW_UP])
    check(wire, body, "anthropic")
    (result,) = unanswered(body, wire)
    if wire == "anthropic":
        assert result == {
            "type": "tool_result",
            "tool_use_id": record.tool_calls[0].call_id,
            "content": NOT_RUN,
            "is_error": True,
        }
        assert body["messages"][-1]["content"][-1] == {"type": "text", "text": FOLLOW_UP.text}
    elif wire == "google":
        assert result == {"name": "get_weather", "response": {"error": NOT_RUN}}
    else:
        assert result["output" if wire == "openai-responses" else "content"] == NOT_RUN


@needs_captures
@pytest.mark.parametrize("wire", [*WIRES, "mistral"])
async def test_a_parallel_call_left_unanswered_is_answered_as_not_run(
    serve: Serve, wire: str
) -> None:
    """Two parallel calls, one answered: the other gets its result too, with the one
    given, in the order of the calls (Gemini matches them by it)."""
    record = await first_turn(serve, "openai", capture("openai/chat_parallel_tool_calls.sse"))
    first, second = record.tool_calls
    history = [QUESTION, record.to_message(), Message.tool(second.call_id, "12.5"), FOLLOW_UP]
    body = await next_request(serve, wire, history)
    check(wire, body, "openai")
    results = unanswered(body, wire)
    if wire == "anthropic":
        assert [r["tool_use_id"] for r in results] == [second.call_id, first.call_id]
        assert results[0]["content"] == "12.5" and results[1]["is_error"] is True
    elif wire == "google":
        assert [r["name"] for r in results] == ["GetWeatherArgs", "get_stock_price"]
        assert results[0]["response"] == {"error": NOT_RUN}
    else:
        said = [r.get("output", r.get("content")) for r in results]
        assert said == ["12.5", NOT_RUN]


@needs_captures
@pytest.mark.parametrize("wire", [*WIRES, "mistral"])
async def test_a_call_of_a_cancelled_turn_is_answered_as_not_run(serve: Serve, wire: str) -> None:
    """The caller cancels as the call's `tool_request` arrives (the server holds the
    rest of the body): the record is `cancelled` with the call, and the next request
    answers it."""
    head = _cut_after_the_call("anthropic/tool_use_input_json_delta.sse", "")

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(head)
        await asyncio.sleep(30)  # the turn is cancelled long before
        return response

    cancel = asyncio.Event()

    def on_call(event: Event) -> None:
        if event.type == "tool_request":
            cancel.set()

    async with rxllm.provider("anthropic", api_key=KEY, base_url=await serve(handler)) as p:
        events = p.stream(ChatRequest(model="m", messages=[QUESTION]), cancel=cancel)
        record = await record_of(events.pipe(ops.do_action(on_call)), "anthropic")
    assert record.terminal.type == "cancelled" and len(record.tool_calls) == 1
    body = await next_request(serve, wire, [QUESTION, record.to_message(), FOLLOW_UP])
    check(wire, body, "anthropic")
    assert len(unanswered(body, wire)) == 1
