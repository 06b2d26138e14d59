"""What providers say beyond text and calls, over real HTTP: the local provider sends each
shape of `rxllm.local.script.STORIES` as every wire sends it (a refusal, a provider-run
web search with a cited answer, code execution, a paused turn, a tool without
parameters, content that arrives whole, a Responses item that asks the client to act),
and each wire's normalizer must turn it into the events DESIGN.md names.

Where a wire has no such field the expectation says so: Anthropic has no refusal text
(its text ends with `stop_reason: refusal`), Gemini neither (`finishReason: SAFETY`) and
shows a web search only as grounding; only Anthropic pauses.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import ServerToolCall, ServerToolResult
from rxllm.local import WIRES, LocalServer
from rxllm.local.script import SEARCH, STORIES, Refuse, Say


class _AnyText(str):
    """Equal to any non-empty string (an opaque blob such as `encrypted_content`)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and bool(other)

    __hash__ = str.__hash__


ANY_TEXT = _AnyText()


def provider(server: LocalServer, wire: str) -> rxllm.Provider:
    return server.provider(wire)


async def turn(server: LocalServer, wire: str, story: str) -> rxllm.StreamRecord:
    request = rxllm.ChatRequest(
        model=f"fault/{story}",
        messages=[rxllm.Message.user("Tell me about rxllm.")],
        tools=[rxllm.Tool(name="get_time"), rxllm.Tool(name="get_weather")],
    )
    record = await provider(server, wire).complete(request)
    assert record.provider == ("local" if wire == "openai" else wire)
    return record


def calls(record: rxllm.StreamRecord) -> list[tuple[str, str, Any]]:
    return [
        (event.type, event.name, event.arguments)
        if isinstance(event, ServerToolCall)
        else (event.type, event.name, event.content)
        for event in record.server_tools
    ]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_refusal(local_server: LocalServer, wire: str) -> None:
    record = await turn(local_server, wire, "refusal")
    (step,) = STORIES["refusal"].steps
    assert isinstance(step, Refuse)
    assert record.terminal.type == "done"
    if wire in ("openai", "openai-responses"):  # a refusal field: never mixed into text
        assert (record.refusal, record.text) == (step.text, "")
        assert record.terminal.stop_reason == "stop"
    elif wire == "anthropic":  # text, then the turn ends refused
        assert (record.refusal, record.text) == ("", step.text)
        assert (record.terminal.stop_reason, record.terminal.raw_stop_reason) == (
            "content_filter",
            "refusal",
        )
    else:  # Gemini blocks without text
        assert (record.refusal, record.text) == ("", "")
        assert (record.terminal.stop_reason, record.terminal.raw_stop_reason) == (
            "content_filter",
            "SAFETY",
        )


@pytest.mark.parametrize("wire", WIRES)
async def test_a_web_search_with_a_cited_answer(local_server: LocalServer, wire: str) -> None:
    record = await turn(local_server, wire, "web_search")
    answer = STORIES["web_search"].steps[1]
    assert isinstance(answer, Say)
    (cite,) = answer.citations
    assert record.text == answer.text and record.terminal.type == "done"
    assert [(c.url, c.title) for c in record.citations] == [(cite.url, cite.title)]
    # Gemini's supports and Responses' ranges are the answer's own text, not a quote of
    # the source.
    quoted = None if wire in ("google", "openai-responses") else cite.cited_text
    assert record.citations[0].cited_text == quoted
    expected = {
        "openai": [  # Groq's executed_tools
            ("server_tool_call", "search", {"query": SEARCH.input}),
            ("server_tool_result", "search", {"output": SEARCH.output}),
        ],
        "openai-responses": [  # shown at .done, where OpenAI fills in the action
            (
                "server_tool_call",
                "web_search_call",
                {"action": {"type": "search", "query": SEARCH.input}},
            ),
            (
                "server_tool_result",
                "web_search_call",
                {
                    "status": "completed",
                    "action": {
                        "type": "search",
                        "query": SEARCH.input,
                        "sources": [{"type": "url", "url": SEARCH.url}],
                    },
                },
            ),
        ],
        "anthropic": [
            ("server_tool_call", "web_search", {"query": SEARCH.input}),
            (
                "server_tool_result",
                "web_search",
                [
                    {
                        "type": "web_search_result",
                        "url": SEARCH.url,
                        "title": SEARCH.output,
                        "encrypted_content": ANY_TEXT,
                        "page_age": None,
                    }
                ],
            ),
        ],
        "google": [],  # grounding only: the search is not shown as a call on this wire
    }[wire]
    assert calls(record) == expected
    if expected:  # a call and its result share the call id
        first, second = record.server_tools
        assert first.call_id == second.call_id


@pytest.mark.parametrize("wire", WIRES)
async def test_code_execution(local_server: LocalServer, wire: str) -> None:
    record = await turn(local_server, wire, "code_execution")
    assert record.text == "The answer is 42." and record.terminal.type == "done"
    call, result = record.server_tools
    assert isinstance(call, ServerToolCall) and isinstance(result, ServerToolResult)
    assert call.call_id == result.call_id and call.name == result.name
    code = "print(6 * 7)"
    if wire == "openai":
        assert (call.name, call.arguments) == ("python", {"code": code})
        assert result.content == {"output": "42\n"}
    elif wire == "openai-responses":
        assert call.name == "code_interpreter_call"
        assert call.arguments == {"container_id": "cntr_local", "code": code}
        assert result.content["code"] == code
        assert result.content["outputs"] == [{"type": "logs", "logs": "42\n"}]
    elif wire == "anthropic":
        assert (call.name, call.arguments) == ("code_execution", {"code": code})
        assert result.content["stdout"] == "42\n" and result.content["return_code"] == 0
    else:
        assert (call.name, call.arguments) == (
            "code_execution",
            {"language": "PYTHON", "code": code},
        )
        assert result.content == {"outcome": "OUTCOME_OK", "output": "42\n"}


@pytest.mark.parametrize("wire", WIRES)
async def test_code_execution_ids_differ_from_turn_to_turn(
    local_server: LocalServer, wire: str
) -> None:
    """Code execution in two turns of one conversation: each call's id is new in it, as a
    provider's are (Gemini and Groq leave it unnamed and rxllm tags the id it makes with
    the response's id, which the local server gives each request); an app keeping results
    by call id, as the AI SDK's chat does, would otherwise give the second turn the
    first one's."""
    request = rxllm.ChatRequest(
        model="fault/code_execution", messages=[rxllm.Message.user("Tell me about rxllm.")]
    )
    p = provider(local_server, wire)
    first = await p.complete(request)
    messages = [*request.messages, first.to_message(), rxllm.Message.user("Again, please.")]
    second = await p.complete(request.model_copy(update={"messages": messages}))
    assert first.server_tools[0].call_id != second.server_tools[0].call_id


@pytest.mark.parametrize("wire", WIRES)
async def test_a_paused_turn(local_server: LocalServer, wire: str) -> None:
    record = await turn(local_server, wire, "pause")
    assert record.terminal.type == "done"
    paused = wire == "anthropic"  # the only wire with a pause
    assert record.terminal.stop_reason == ("pause" if paused else "stop")
    expected_server_tools = 0 if wire == "google" else 2
    assert len(record.server_tools) == expected_server_tools
    assert record.tool_calls == [], "a provider-run tool is never the app's to run"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_tool_without_parameters(local_server: LocalServer, wire: str) -> None:
    record = await turn(local_server, wire, "no_argument_tool")
    assert record.terminal.type == "done" and record.terminal.stop_reason == "tool_use"
    assert [(c.call_id, c.name, c.arguments) for c in record.tool_calls] == [
        ("call_local_now", "get_time", {})
    ]


@pytest.mark.parametrize("wire", WIRES)
async def test_content_that_arrives_whole(local_server: LocalServer, wire: str) -> None:
    whole = await turn(local_server, wire, "whole")
    streamed = await turn(local_server, wire, "weather")
    assert whole.terminal.type == "done" and whole.terminal.stop_reason == "tool_use"
    assert whole.text == streamed.text == "Let me check the weather."
    assert whole.reasoning == streamed.reasoning
    assert whole.reasoning.startswith("The user asks about the weather")
    assert [(c.name, c.arguments) for c in whole.tool_calls] == [
        ("get_weather", {"city": "Paris", "unit": "celsius", "days": 3})
    ]
    assert whole.usage is not None and whole.usage.output_tokens > 0


@pytest.mark.parametrize("wire", WIRES)
async def test_an_item_that_asks_the_client_to_act(local_server: LocalServer, wire: str) -> None:
    record = await turn(local_server, wire, "client_action")
    action = {"commands": ["ls -la"], "timeout_ms": 10000}
    assert record.terminal.type == "done" and record.terminal.stop_reason == "tool_use"
    (call,) = record.tool_calls
    # Responses sends a `shell_call` item (its type is the name); the others a function.
    assert (call.call_id, call.name, call.arguments) == (
        "call_local_shell",
        "shell_call",
        {"action": action},
    )


async def test_a_client_item_goes_back_as_its_own_type(local_server: LocalServer) -> None:
    """The next Responses turn carries the shell call back as a `shell_call` item and the
    app's answer as its `shell_call_output`, not as a function call."""
    p = provider(local_server, "openai-responses")
    first = await turn(local_server, "openai-responses", "client_action")
    (call,) = first.tool_calls
    output = [{"stdout": "total 0\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]
    history = [
        rxllm.Message.user("Tell me about rxllm."),
        rxllm.Message.assistant("", tool_calls=[call.to_call()]),
        rxllm.Message.tool(call.call_id, json.dumps({"output": output})),
    ]
    await p.complete(rxllm.ChatRequest(model="answer", messages=history))
    sent = local_server.requests[-1]["input"]
    assert sent[1] == {
        "type": "shell_call",
        "call_id": "call_local_shell",
        "action": {"commands": ["ls -la"], "timeout_ms": 10000},
    }
    assert sent[2] == {"type": "shell_call_output", "call_id": "call_local_shell", "output": output}
