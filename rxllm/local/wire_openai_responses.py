"""The local provider's OpenAI Responses encoder: a script as typed streaming events."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from rxllm.local.script import Reasoning, Say, Script, ToolUse, pieces, words

__all__ = ["PATH", "frames", "prompt_of"]

PATH = "/v1/responses"

# What a client asks for to get its reasoning back as an opaque blob (OpenAI's `include`).
ENCRYPTED_REASONING = "reasoning.encrypted_content"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") in ("input_text", "text")
        )
    return ""


def prompt_of(body: dict[str, Any]) -> tuple[str, str, bool]:
    """(model, last user text, whether tools were offered) of a request body."""
    text = ""
    items = body.get("input")
    if isinstance(items, str):
        text = items
    elif isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and item.get("role") == "user":
                text = _text_of(item.get("content"))
    return str(body.get("model", "")), text, bool(body.get("tools"))


def frames(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    model = str(body.get("model") or "rxllm-local")
    encrypted = ENCRYPTED_REASONING in (body.get("include") or ())
    sequence = 0
    output: list[dict[str, Any]] = []

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal sequence
        payload = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode()

    def response(status: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": "resp_local",
            "object": "response",
            "created_at": 0,
            "status": status,
            "model": model,
            "output": list(output),
            "error": None,
            "incomplete_details": None,
            "usage": None,
            **fields,
        }

    yield event("response.created", response=response("in_progress"))
    yield event("response.in_progress", response=response("in_progress"))
    last_message: str | None = None
    cut_at = len(script.steps) - 1 if script.stop == "length" else -1
    for index, step in enumerate(script.steps):
        status = "incomplete" if index == cut_at else "completed"  # the token limit hit it
        where = {"output_index": index}
        if isinstance(step, Reasoning):
            item_id = f"rs_local_{index}"
            item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
            if encrypted:
                item["encrypted_content"] = _sealed(step.text)
            yield event("response.output_item.added", **where, item=item)
            at = {"item_id": item_id, **where, "summary_index": 0}
            yield event(
                "response.reasoning_summary_part.added",
                **at,
                part={"type": "summary_text", "text": ""},
            )
            for word in words(step.text):
                yield event("response.reasoning_summary_text.delta", **at, delta=word)
            yield event("response.reasoning_summary_text.done", **at, text=step.text)
            part = {"type": "summary_text", "text": step.text}
            yield event("response.reasoning_summary_part.done", **at, part=part)
            item = {**item, "summary": [part]}
        elif isinstance(step, Say):
            item_id = last_message = f"msg_local_{index}"
            item = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            yield event("response.output_item.added", **where, item=item)
            at = {"item_id": item_id, **where, "content_index": 0}
            empty: dict[str, Any] = {"type": "output_text", "text": "", "annotations": []}
            yield event("response.content_part.added", **at, part=empty)
            for word in words(step.text):
                yield event("response.output_text.delta", **at, delta=word, logprobs=[])
            yield event("response.output_text.done", **at, text=step.text, logprobs=[])
            part = {**empty, "text": step.text}
            yield event("response.content_part.done", **at, part=part)
            item = {**item, "status": status, "content": [part]}
        else:
            assert isinstance(step, ToolUse)
            item_id = f"fc_local_{index}"
            item = {
                "id": item_id,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": step.call_id,
                "name": step.name,
            }
            yield event("response.output_item.added", **where, item=item)
            at = {"item_id": item_id, **where}
            for piece in pieces(step.arguments, script.fragment):
                yield event("response.function_call_arguments.delta", **at, delta=piece)
            yield event("response.function_call_arguments.done", **at, arguments=step.arguments)
            item = {**item, "status": status, "arguments": step.arguments}
        yield event("response.output_item.done", **where, item=item)
        output.append(item)
    if script.cut:
        return
    if script.error is not None:
        error = {"code": "server_error", "message": script.error}
        yield event("error", **error, param=None)
        yield event("response.failed", response=response("failed", error=error))
        return
    usage = {
        "input_tokens": script.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": script.output_tokens,
        "output_tokens_details": {"reasoning_tokens": script.reasoning_tokens},
        "total_tokens": script.input_tokens + script.output_tokens,
    }
    if script.stop == "length":
        details = {"reason": "max_output_tokens"}
        final = response("incomplete", incomplete_details=details, usage=usage)
        yield event("response.incomplete", response=final)
    else:
        yield event("response.completed", response=response("completed", usage=usage))
    if script.late_text is not None:
        late_id = last_message or "msg_local_late"
        at = {"item_id": late_id, "output_index": len(output), "content_index": 0}
        yield event("response.output_text.delta", **at, delta=script.late_text, logprobs=[])


def _sealed(text: str) -> str:
    """A stand-in for OpenAI's encrypted reasoning: opaque to the client, stable."""
    return "rxllm-local:" + base64.urlsafe_b64encode(text.encode()).decode()
