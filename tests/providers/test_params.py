"""`ChatRequest.params` add body keys in every wire, and never override what the wire
writes from the request: that is a `ConfigError` when the body is built."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import rxllm
from rxllm.providers import PROVIDER_NAMES, WireProtocol, wire_for
from rxllm.providers.anthropic import Anthropic
from rxllm.providers.google import Google
from rxllm.providers.openai_chat import OpenAIChat
from rxllm.providers.openai_responses import OpenAIResponses

WEATHER = rxllm.Tool(name="get_weather", parameters={"type": "object", "properties": {}})


def request(
    params: dict[str, Any], *, tools: bool = False, system: bool = False
) -> rxllm.ChatRequest:
    messages = [rxllm.Message.user("hi")]
    if system:
        messages.insert(0, rxllm.Message.system("Be brief."))
    return rxllm.ChatRequest(
        model="m", messages=messages, tools=[WEATHER] if tools else [], params=params
    )


@pytest.mark.parametrize("name", PROVIDER_NAMES)
@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("model", "ChatRequest.model"),
        ("messages", "ChatRequest.messages"),
        ("stream", "rxllm streams every request"),
    ],
)
def test_no_wire_takes_model_messages_or_stream_from_params(name: str, key: str, why: str) -> None:
    with pytest.raises(rxllm.ConfigError, match=rf"params may not set '{key}': .*{why}"):
        wire_for(name).build_body(request({key: False}))


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_params_may_not_overwrite_the_tools_of_the_request(name: str) -> None:
    wire = wire_for(name)
    with pytest.raises(rxllm.ConfigError, match=r"'tools': .*ChatRequest\.tools"):
        wire.build_body(request({"tools": []}, tools=True))


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_params_add_top_level_keys_in_every_wire(name: str) -> None:
    """Keys the wire did not write pass through as they are, `tools` included when the
    request has none (a provider's built-in tools, say)."""
    builtin = [{"type": "web_search"}]
    body = wire_for(name).build_body(request({"tools": builtin, "user": "u-1"}))
    assert body["tools"] == builtin and body["user"] == "u-1"


@pytest.mark.parametrize(
    ("wire", "key"),
    [
        (OpenAIResponses(), "input"),
        (OpenAIResponses(), "instructions"),
        (Anthropic(), "system"),
        (Google(), "contents"),
        (Google(), "systemInstruction"),
        (Google(), "system_instruction"),
    ],
)
@pytest.mark.parametrize("system", [False, True])
def test_the_conversation_keys_of_each_wire_are_refused(
    wire: WireProtocol, key: str, system: bool
) -> None:
    """Refused whether or not this request wrote them: adding a system message must not
    turn a working request into a failing one."""
    with pytest.raises(rxllm.ConfigError, match=rf"params may not set '{key}': "):
        wire.build_body(request({key: "x"}, system=system))


def test_defaults_the_wire_writes_may_be_replaced() -> None:
    assert Anthropic().build_body(request({"max_tokens": 64000}))["max_tokens"] == 64000
    include = {"include_usage": True, "include_obfuscation": False}
    assert (
        OpenAIChat().build_body(request({"stream_options": include}))["stream_options"] == include
    )


def test_a_mandatory_key_the_wire_wrote_is_refused_and_says_so() -> None:
    class Strict(OpenAIChat):
        mandatory_body_keys: ClassVar[frozenset[str]] = frozenset({"stream_options"})
        param_defaults: ClassVar[frozenset[str]] = frozenset()

    with pytest.raises(rxllm.ConfigError, match="'stream_options': it is a mandatory key of"):
        Strict().build_body(request({"stream_options": {"include_usage": False}}))


def test_google_params_reach_the_body_never_dropped() -> None:
    params = {"temperature": 0.2, "safetySettings": [], "cachedContent": "c/1"}
    body = Google().build_body(request(params))
    assert body["generationConfig"] == {"temperature": 0.2}
    assert body["safetySettings"] == [] and body["cachedContent"] == "c/1"


def test_google_generation_config_must_be_an_object() -> None:
    with pytest.raises(rxllm.ConfigError, match="'generationConfig' must be an object"):
        Google().build_body(request({"generationConfig": "fast"}))
