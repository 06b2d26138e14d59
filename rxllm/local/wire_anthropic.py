"""The local provider's Anthropic Messages encoder: a script as named SSE events."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from typing import Any

from rxllm.local.script import Reasoning, Say, Script, ToolUse, pieces, words

__all__ = ["PATH", "frames", "prompt_of"]

PATH = "/v1/messages"

_STOP = {"stop": "end_turn", "tool_use": "tool_use", "length": "max_tokens"}


def prompt_of(body: dict[str, Any]) -> tuple[str, str, bool]:
    """(model, last user text, whether tools were offered) of a request body.

    A user message made only of tool results carries no user text (it is the tool's
    turn, as a `tool` message is in the chat wire), so it does not replace the last.
    """
    text = ""
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            texts = [p.get("text", "") for p in content if p.get("type") == "text"]
            if texts:
                text = " ".join(texts)
    return str(body.get("model", "")), text, bool(body.get("tools"))


def _frame(event: str, payload: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()


def _signature(text: str) -> str:
    """An opaque, deterministic stand-in for Anthropic's thinking signature."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return _frame(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _start(index: int, block: dict[str, Any]) -> bytes:
    payload = {"type": "content_block_start", "index": index, "content_block": block}
    return _frame("content_block_start", payload)


def _stop(index: int) -> bytes:
    return _frame("content_block_stop", {"type": "content_block_stop", "index": index})


def frames(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    model = str(body.get("model") or "rxllm-local")
    usage = {
        "input_tokens": script.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }
    message: dict[str, Any] = {
        "id": "msg_local",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield _frame("message_start", {"type": "message_start", "message": message})
    yield _frame("ping", {"type": "ping"})
    last = len(script.steps) - 1
    for index, step in enumerate(script.steps):
        if isinstance(step, Reasoning):
            yield _start(index, {"type": "thinking", "thinking": "", "signature": ""})
            for word in words(step.text):
                yield _delta(index, {"type": "thinking_delta", "thinking": word})
            yield _delta(index, {"type": "signature_delta", "signature": _signature(step.text)})
        elif isinstance(step, Say):
            yield _start(index, {"type": "text", "text": ""})
            for word in words(step.text):
                yield _delta(index, {"type": "text_delta", "text": word})
        elif isinstance(step, ToolUse):
            block = {"type": "tool_use", "id": step.call_id, "name": step.name, "input": {}}
            yield _start(index, block)
            yield _delta(index, {"type": "input_json_delta", "partial_json": ""})
            for piece in pieces(step.arguments, script.fragment):
                yield _delta(index, {"type": "input_json_delta", "partial_json": piece})
            if script.stop == "length" and index == last:
                continue  # max_tokens cut the call: the API never closes its block
        yield _stop(index)
    if script.error is not None:
        error = {"type": "overloaded_error", "message": script.error}
        yield _frame("error", {"type": "error", "error": error})
        return
    delta = {"stop_reason": _STOP[script.stop], "stop_sequence": None}
    yield _frame(
        "message_delta",
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": script.output_tokens}},
    )
    if script.cut:
        return  # the body ends before message_stop: a truncated turn
    yield _frame("message_stop", {"type": "message_stop"})
    if script.late_text is not None:
        yield _delta(max(last, 0), {"type": "text_delta", "text": script.late_text})
