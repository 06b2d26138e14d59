"""A tool result that is the tool's failure (`Message.tool(..., is_error=True)`): the
wires that have a field for it say so (Anthropic's `is_error`, Gemini's `error` key);
the OpenAI wires send the content as it is, and nothing else changes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import rxllm
from rxllm.providers import wire_for

CALL = rxllm.ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
FAILED = rxllm.Message.tool("call_1", "city not found: Paris", is_error=True)


def sent(provider: str, result: rxllm.Message) -> Any:
    """What `provider`'s wire sends for `result`, answering CALL."""
    request = rxllm.ChatRequest(
        model="m",
        messages=[
            rxllm.Message.user("weather?"),
            rxllm.Message.assistant("", tool_calls=[CALL]),
            result,
        ],
    )
    body = wire_for(provider).build_body(request)
    if "contents" in body:
        return body["contents"][-1]["parts"][0]["functionResponse"]
    if "input" in body:
        return body["input"][-1]
    return body["messages"][-1]


def test_anthropic_marks_the_result_an_error() -> None:
    # anthropic-sdk-python ToolResultBlockParam.is_error; content may not be empty then
    assert sent("anthropic", FAILED)["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": "city not found: Paris",
        "is_error": True,
    }
    for blank in ("", " \n"):  # "content cannot be empty if is_error is true"
        result = rxllm.Message.tool("call_1", blank, is_error=True)
        assert sent("anthropic", result)["content"][0]["content"] == "error"
    ok = sent("anthropic", rxllm.Message.tool("call_1", "21 C"))["content"][0]
    assert "is_error" not in ok


def test_gemini_sends_it_under_the_error_key() -> None:
    # ai.google.dev FunctionResponse.response: "Use "output" key to specify function
    # output and "error" key to specify error details (if any)"
    assert sent("google", FAILED) == {
        "name": "get_weather",
        "response": {"error": "city not found: Paris"},
    }
    structured = rxllm.Message.tool("call_1", {"code": 404}, is_error=True)
    assert sent("google", structured)["response"] == {"error": {"code": 404}}


@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_the_openai_wires_send_the_content_as_it_is(provider: str) -> None:
    ok = rxllm.Message.tool("call_1", "city not found: Paris")
    assert sent(provider, FAILED) == sent(provider, ok)


def test_is_error_belongs_to_a_tool_message() -> None:
    with pytest.raises(ValidationError, match="is_error is a tool message's"):
        rxllm.Message(role="user", content=[rxllm.TextPart(text="hi")], is_error=True)
    dict_form = rxllm.ChatRequest(
        model="m",
        messages=[
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "boom", "is_error": True},
        ],
    )  # fmt: skip
    assert dict_form.messages[-1].is_error
