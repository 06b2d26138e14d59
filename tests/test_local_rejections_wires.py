"""The local provider's rejections on every wire: a trigger reads the body where that
wire sends what it rejects (Gemini's `generationConfig`, Responses' `max_output_tokens`,
each wire's image parts), and the refusal comes in that wire's own envelope, so an app
can test its rejection handling on Gemini, Anthropic and Responses too."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.local import LocalServer
from rxllm.testing import fault, reply, scripted
from tests.test_local_rejections import IMAGE

WEATHER = rxllm.Tool(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
PICTURE = IMAGE["content"][1]["image_url"]["url"]


def ask(model: str = "m", image: bool = False, **fields: Any) -> rxllm.ChatRequest:
    user = rxllm.Message.user("hi", images=[PICTURE] if image else None)
    return rxllm.ChatRequest(model=model, messages=[user], **fields)


def envelope(wire: str, raw: str | None) -> str:
    """The error's words as that wire's envelope holds them (and the envelope is it)."""
    payload = json.loads(raw or "null")
    if wire == "anthropic":  # {"type": "error", "error": {"type", "message"}}
        assert payload["type"] == "error"
        assert payload["error"]["type"] == "invalid_request_error"
        return str(payload["error"]["message"])
    if wire == "google":  # {"error": {"code", "message", "status", ...}}
        assert (payload["error"]["code"], payload["error"]["status"]) == (400, "INVALID_ARGUMENT")
        return str(payload["error"]["message"])
    return str(payload["error"]["message"] if "error" in payload else payload["message"])


# (fault, wire, the request, where the body sends what is rejected, the wire's words)
SURFACED = [
    (
        "reject_param",
        "google",
        {"temperature": 0.2},
        ("generationConfig", "temperature"),
        "Unknown name \"temperature\" at 'generation_config': Cannot find field.",
    ),
    (
        "reject_param",
        "anthropic",
        {"temperature": 0.2},
        ("temperature",),
        "`temperature` is deprecated for this model.",
    ),
    (
        "reject_param",
        "openai-responses",
        {"temperature": 0.2},
        ("temperature",),
        "Unsupported parameter: 'temperature' is not supported with this model.",
    ),
    (
        "reject_two_params",
        "google",
        {"top_p": 0.9, "seed": 7},
        ("generationConfig", "topP"),
        "Unknown name \"topP\" at 'generation_config': Cannot find field.\n"
        'Invalid JSON payload received. Unknown name "seed"',
    ),
    (
        "reject_two_params",
        "anthropic",
        {"top_p": 0.9},
        ("top_p",),
        "top_p: Extra inputs are not permitted",
    ),
    (
        "reject_max_tokens",
        "google",
        {"max_tokens": 64},
        ("generationConfig", "maxOutputTokens"),
        "has a maxOutputTokens value of 64 but the supported range is from 1 (inclusive)",
    ),
    (
        "reject_max_tokens",
        "openai-responses",
        {"max_tokens": 64},
        ("max_output_tokens",),
        "Unsupported parameter: 'max_output_tokens' is not supported with this model.",
    ),
    (
        "reject_max_tokens",
        "anthropic",
        {"max_tokens": 64},
        ("max_tokens",),
        "max_tokens: 64 > 63, which is the maximum allowed number of output tokens for m",
    ),
    (
        "reject_images",
        "google",
        {"image": True},
        ("contents",),
        "Image input modality is not enabled for models/m",
    ),
    (
        "reject_images",
        "openai-responses",
        {"image": True},
        ("input",),
        "m is not a multimodal model",
    ),
    (
        "reject_tools",
        "google",
        {"tools": [WEATHER]},
        ("tools",),
        "Function calling is not enabled for models/m",
    ),
    (
        "reject_tools",
        "anthropic",
        {"tools": [WEATHER]},
        ("tools",),
        "registry.ollama.ai/library/m does not support tools",
    ),
]


@pytest.mark.parametrize(
    ("name", "wire", "fields", "where", "words"),
    SURFACED,
    ids=[f"{case[0]}-{case[1]}" for case in SURFACED],
)
async def test_a_scripted_rejection_refuses_what_the_wire_sends(
    name: str, wire: Any, fields: dict[str, Any], where: tuple[str, ...], words: str
) -> None:
    """These wires do not degrade a request: the rejection surfaces, as the real
    provider's would, in its own words and envelope, and nothing is sent again."""
    async with scripted(fault(name), reply("Unused."), wire=wire) as llm:
        record = await llm.provider.complete(ask(**fields))
        sent: Any = llm.requests[0]
    for key in where:
        sent = sent[key]  # the body does send it, there
    error = record.terminal.error if record.terminal.type == "error" else None
    assert error is not None and (error.kind, error.status) == ("rejected", 400)
    assert len(llm.requests) == 1 and len(record.attempts) == 1
    assert words in envelope(wire, error.raw)


@pytest.mark.parametrize(
    ("name", "wire", "fields"),
    [
        ("reject_param", "google", {"temperature": 0.2}),
        ("reject_two_params", "google", {"top_p": 0.9, "seed": 7}),
        ("reject_max_tokens", "google", {"max_tokens": 64}),
        ("reject_max_tokens", "openai-responses", {"max_tokens": 64}),
        ("reject_images", "google", {"image": True}),
        ("reject_images", "openai-responses", {"image": True}),
    ],
)
async def test_a_rejection_by_model_name_plays_only_while_the_wire_sends_it(
    local_server: LocalServer, name: str, wire: str, fields: dict[str, Any]
) -> None:
    """Model `fault/<name>`: refused while the body sends it where the wire puts it, the
    usual answer once the request no longer sends it."""
    provider = local_server.provider(wire)
    refused = await provider.complete(ask(f"fault/{name}", **fields))
    assert refused.terminal.type == "error" and refused.terminal.error.status == 400
    answered = await provider.complete(ask(f"fault/{name}"))
    assert answered.terminal.type == "done" and answered.text
