"""The local provider's OpenAI Chat Completions encoder: a script as chunk frames.

Beyond text and calls it sends what the chat family adds: `delta.refusal`, OpenRouter's
`url_citation` annotations after the text they cite, and Groq's `executed_tools` for a
tool the provider runs (first with its arguments, then with its output). The chat wire
has no pause: a paused script stops.

Reasoning is `delta.reasoning_content`, unless the request carries OpenRouter's
`reasoning` parameter: then it is OpenRouter's `delta.reasoning` with
`delta.reasoning_details` (openrouter.ai/docs, Reasoning Tokens), as an upstream
reasoned: for an `openai/...` model, `reasoning.summary` fragments then one
`reasoning.encrypted` detail with the item's id (`openai-responses-v1`); for any other
model, `reasoning.text` fragments then the signature in a last fragment
(`anthropic-claude-v1`), as the openrouter captures show."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rxllm.local.script import (
    Cite,
    Prompt,
    Reasoning,
    Refuse,
    Say,
    Script,
    ServerTool,
    ToolChoice,
    ToolUse,
    chosen,
    pieces,
    response_id,
    sealed,
    words,
)

__all__ = ["PATH", "frames", "prompt_of"]

PATH = "/v1/chat/completions"

_FINISH = {"stop": "stop", "tool_use": "tool_calls", "length": "length", "pause": "stop"}
# Groq's names for the tools it runs.
_EXECUTED = {"web_search": "search", "code_execution": "python"}


def prompt_of(body: dict[str, Any]) -> Prompt:
    """What a chat request asks: the last user text, the offered functions, the tool's
    result when a `tool` message ends the conversation, and the `tool_choice`. A user
    message of images right after tool messages is those results' images (a tool
    message takes text only, so clients send them so), not the user speaking."""
    text = ""
    called: dict[str, str] = {}  # call id -> function name
    messages = body.get("messages") or []
    if len(messages) > 1 and messages[-2].get("role") == "tool" and _has_images(messages[-1]):
        messages = messages[:-1]
    for message in messages:
        if message.get("role") == "user":
            text = _text(message.get("content"))
        for call in message.get("tool_calls") or ():
            called[str(call.get("id"))] = str((call.get("function") or {}).get("name"))
    result = None
    if messages and messages[-1].get("role") == "tool":
        last = messages[-1]
        name = called.get(str(last.get("tool_call_id")), "the tool")
        result = (name, _text(last.get("content")))
    tools = {
        str(tool["function"].get("name")): tool["function"].get("parameters") or {}
        for tool in body.get("tools") or ()
        if isinstance(tool.get("function"), dict)
    }
    choice, allowed = _choice(body, tools)
    replies = sum(message.get("role") == "assistant" for message in messages)
    return Prompt(str(body.get("model", "")), text, tools, result, choice, allowed, replies)


def _choice(body: dict[str, Any], tools: dict[str, Any]) -> tuple[ToolChoice, tuple[str, ...]]:
    """`tool_choice`: a mode, `{"type": "function", "function": {"name": ...}}`, or
    `{"type": "allowed_tools", "allowed_tools": {"mode": "auto" | "required", "tools":
    [{"type": "function", "function": {"name": ...}}, ...]}}` (the model picks among
    those only)."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        allowed = choice.get("allowed_tools") or {}
        names = [
            (tool.get("function") or {}).get("name")
            for tool in allowed.get("tools") or ()
            if isinstance(tool, dict) and tool.get("type") == "function"
        ]
        return chosen(str(allowed.get("mode")), names, tools)
    if isinstance(choice, dict) and choice.get("type") == "function":
        return chosen("required", [(choice.get("function") or {}).get("name")], tools)
    return chosen(choice if isinstance(choice, str) else "auto", (), tools)


def _has_images(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and any(part.get("type") == "image_url" for part in content)
    )


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return content if isinstance(content, str) else ""


def _frame(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def frames(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    model = str(body.get("model") or "rxllm-local")
    # rxllm names Groq's executed tools, which carry no id, after the response's id.
    named = response_id("chatcmpl-local-", body)
    base = {"id": named, "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _frame({**base, "choices": [choice]})

    def said(text: str) -> Iterator[str]:
        return iter((text,)) if script.whole else words(text)

    yield chunk({"role": "assistant", "content": ""})
    call_index = 0
    details = 0  # OpenRouter's reasoning details so far: the next one's index
    for position, step in enumerate(script.steps):
        if isinstance(step, Reasoning) and "reasoning" in body:
            for delta in _reasoning_details(step.text, said(step.text), model, details):
                yield chunk(delta)
            details += 2 if model.startswith("openai/") else 1
        elif isinstance(step, Reasoning):
            for word in said(step.text):
                yield chunk({"reasoning_content": word})
        elif isinstance(step, Say):
            for word in said(step.text):
                yield chunk({"content": word})
            if step.citations:
                yield chunk({"annotations": [_annotation(step.text, c) for c in step.citations]})
        elif isinstance(step, Refuse):
            for word in said(step.text):
                yield chunk({"refusal": word})
        elif isinstance(step, ServerTool):
            tool = {
                "index": position,
                "type": _EXECUTED[step.kind],
                "arguments": json.dumps(
                    {"query": step.input} if step.kind == "web_search" else {"code": step.input}
                ),
            }
            yield chunk({"executed_tools": [tool]})
            yield chunk({"executed_tools": [{**tool, "output": step.output}]})
        elif isinstance(step, ToolUse):
            head = {
                "index": call_index,
                "id": step.call_id,
                "type": "function",
                "function": {
                    "name": step.name,
                    "arguments": step.arguments if script.whole else "",
                },
            }
            yield chunk({"tool_calls": [head]})
            for piece in () if script.whole else pieces(step.arguments, script.fragment):
                yield chunk(
                    {"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}
                )
            call_index += 1
    if script.cut:
        return
    if script.error is not None:
        yield _frame({"error": {"message": script.error, "type": "server_error", "code": 503}})
        return
    yield chunk({}, _FINISH[script.stop])
    if body.get("stream_options", {}).get("include_usage"):
        usage = {
            "prompt_tokens": script.input_tokens,
            "completion_tokens": script.output_tokens,
            "total_tokens": script.input_tokens + script.output_tokens,
            "completion_tokens_details": {"reasoning_tokens": script.reasoning_tokens},
        }
        yield _frame({**base, "choices": [], "usage": usage})
    yield _frame("[DONE]")
    if script.late_text is not None:
        yield chunk({"content": script.late_text})


def _reasoning_details(
    text: str, fragments: Iterator[str], model: str, index: int
) -> Iterator[dict[str, Any]]:
    """One reasoning step as OpenRouter streams it (module docstring): the plain
    `reasoning` beside each detail fragment that carries text."""
    if model.startswith("openai/"):
        form = "openai-responses-v1"
        for piece in fragments:
            summary = {"type": "reasoning.summary", "summary": piece, "format": form}
            yield {"reasoning": piece, "reasoning_details": [{**summary, "index": index}]}
        encrypted = {
            "type": "reasoning.encrypted",
            "data": sealed(text),
            "id": f"rs_local_{index + 1}",
            "format": form,
            "index": index + 1,
        }
        yield {"reasoning_details": [encrypted]}
        return
    form = "anthropic-claude-v1"
    for piece in fragments:
        fragment = {"type": "reasoning.text", "text": piece, "format": form, "index": index}
        yield {"reasoning": piece, "reasoning_details": [fragment]}
    signed = {"type": "reasoning.text", "signature": sealed(text), "format": form, "index": index}
    yield {"reasoning_details": [signed]}


def _annotation(text: str, cite: Cite) -> dict[str, Any]:
    start = text.find(cite.cited_text)
    return {
        "type": "url_citation",
        "url_citation": {
            "url": cite.url,
            "title": cite.title,
            "content": cite.cited_text,
            "start_index": start,
            "end_index": start + len(cite.cited_text),
        },
    }
