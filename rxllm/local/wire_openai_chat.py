"""The local provider's OpenAI Chat Completions encoder: a script as chunk frames."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rxllm.local.script import Reasoning, Say, Script, ToolUse, pieces, words

__all__ = ["PATH", "frames", "prompt_of"]

PATH = "/v1/chat/completions"

_FINISH = {"stop": "stop", "tool_use": "tool_calls", "length": "length"}


def prompt_of(body: dict[str, Any]) -> tuple[str, str, bool]:
    """(model, last user text, whether tools were offered) of a request body."""
    text = ""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):
                text = " ".join(p.get("text", "") for p in content if p.get("type") == "text")
    return str(body.get("model", "")), text, bool(body.get("tools"))


def _frame(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def frames(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    model = str(body.get("model") or "rxllm-local")
    base = {"id": "chatcmpl-local", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _frame({**base, "choices": [choice]})

    yield chunk({"role": "assistant", "content": ""})
    call_index = 0
    for step in script.steps:
        if isinstance(step, Reasoning):
            for word in words(step.text):
                yield chunk({"reasoning_content": word})
        elif isinstance(step, Say):
            for word in words(step.text):
                yield chunk({"content": word})
        elif isinstance(step, ToolUse):
            head = {
                "index": call_index,
                "id": step.call_id,
                "type": "function",
                "function": {"name": step.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [head]})
            for piece in pieces(step.arguments, script.fragment):
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
