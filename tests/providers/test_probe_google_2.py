"""Gemini shapes a second probe found mishandled: a streamed call whose opening part
already carries `args` (Vertex's `streamFunctionCallArguments`: google-genai
`FunctionCall` {name, args, partialArgs, willContinue}), and the thought signature of
a text answer, which the next request's history lost. Bodies are made by hand from the
Vertex and Gemini references (ids and values made up), or are the real captures."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

import rxllm
from rxllm.providers.google import Google
from rxllm.request import ChatRequest, Message, ReasoningPart
from tests.providers.test_google import gid
from tests.providers.test_probe_google import chunk, run
from tests.support import Serve, capture, log_messages, needs_captures, summarize


def test_a_streamed_call_keeps_the_args_its_opening_part_carries() -> None:
    """`args` is "the function parameters and values in JSON object format"; the
    `partialArgs` that follow add to them (a string begun in `args` continues)."""
    opening = {
        "name": "book",
        "args": {"city": "San ", "nights": 2, "tags": ["quiet"], "extras": {}},
        "willContinue": True,
    }
    events = run(
        chunk({"functionCall": opening, "thoughtSignature": "sig"}),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "Fran", "willContinue": True}
                    ],
                    "willContinue": True,
                }
            }
        ),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "cisco"},
                        {"jsonPath": "$.tags[1]", "stringValue": "view"},
                        {"jsonPath": "$.nights", "numberValue": 3},
                    ],
                    "willContinue": True,
                }
            }
        ),
        chunk({"functionCall": {}}, finish="STOP"),
    )
    got = summarize(events)
    arguments = {"city": "San Francisco", "nights": 3, "tags": ["quiet", "view"], "extras": {}}
    assert got.tool_calls == [(gid("book", 0), "book", arguments)]
    assert got.stop_reason == "tool_use"


def test_a_streamed_call_whose_opening_part_carries_every_arg() -> None:
    """Nothing streamed after the opening part: its `args` are the call's arguments,
    not `{}`."""
    events = run(
        chunk({"functionCall": {"name": "find", "args": {"q": "rx"}, "willContinue": True}}),
        chunk({"functionCall": {}}, finish="STOP"),
    )
    assert summarize(events).tool_calls == [(gid("find", 0), "find", {"q": "rx"})]


def test_args_on_a_continued_part_are_logged_not_dropped_silently() -> None:
    with log_messages() as messages:
        events = run(
            chunk({"functionCall": {"name": "find", "willContinue": True}}),
            chunk({"functionCall": {"args": {"q": "rx"}, "willContinue": True}}),
            chunk({"functionCall": {}}, finish="STOP"),
        )
    assert summarize(events).tool_calls == [(gid("find", 0), "find", {})]
    assert any("ignored args on a continued part" in m for m in messages)


async def _second_body(serve: Serve, answer: bytes) -> dict[str, Any]:
    """The body of the request after a turn answered by `answer`, over loopback."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(answer)
        return response

    base_url = await serve(handler)
    history = [Message.user("Say OK.")]
    async with rxllm.provider("google", base_url=base_url, api_key="k", max_attempts=1) as p:
        record = await p.complete(ChatRequest(model="gemini-3-flash-preview", messages=history))
        assert record.ok and record.text
        history += [record.to_message(), Message.user("Again.")]
        await p.complete(ChatRequest(model="gemini-3-flash-preview", messages=history))
    return bodies[1]


def _wire_signature(data: bytes) -> str:
    """The thoughtSignature of the capture's (one) non-thought text part that has one."""
    for line in data.split(b"\n"):
        if line.startswith(b"data: "):
            for part in json.loads(line[6:])["candidates"][0]["content"]["parts"]:
                if part.get("text") and not part.get("thought") and "thoughtSignature" in part:
                    return str(part["thoughtSignature"])
    raise AssertionError("no signed text part")


@needs_captures
async def test_a_text_answer_goes_back_with_its_signature(serve: Serve) -> None:
    """Vertex `gemini-3-flash-preview`'s answer `{"text": "OK", "thoughtSignature"}`:
    the next request's model turn is that part, signature included (Gemini's
    thought-signatures guide: return every signature as it came)."""
    data = capture("gemini/vertex_text_flex.sse")
    body = await _second_body(serve, data)
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"text": "OK", "thoughtSignature": _wire_signature(data)}],
    }


@needs_captures
async def test_a_thinking_answer_goes_back_with_its_text_signature(serve: Serve) -> None:
    """gemini-2.5-pro with thought summaries: the signature rides on the first answer
    part after the thoughts; the thought text itself is not sent back."""
    data = capture("gemini/thought_parts.sse")
    body = await _second_body(serve, data)
    model = body["contents"][1]
    assert model["role"] == "model" and len(model["parts"]) == 1
    (part,) = model["parts"]
    assert part["thoughtSignature"] == _wire_signature(data)
    assert part["text"].startswith("This is a great question!") and "thought" not in part


def test_a_signature_from_another_provider_never_goes_to_gemini() -> None:
    """A signed thinking block from Anthropic (no details) or a Responses reasoning item
    is not Gemini's: the text goes back unsigned, as before."""
    turn = Message.assistant(
        "Hi",
        reasoning=[
            ReasoningPart(text="thinking", signature="anthropic-signature"),
            ReasoningPart(signature="enc", details={"type": "reasoning", "id": "rs_1"}),
        ],
    )
    body = Google().build_body(
        ChatRequest(model="gemini-3-flash-preview", messages=[Message.user("q"), turn])
    )
    assert body["contents"][1] == {"role": "model", "parts": [{"text": "Hi"}]}
