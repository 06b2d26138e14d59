"""The local provider's Anthropic Messages encoder: a script as named SSE events.

Each step is one or more content blocks: thinking (with its signature), text (with
`citations_delta`s for its citations; a refusal is text ending with `stop_reason:
refusal`), `tool_use` (no `input_json_delta` at all for a tool without parameters),
and a provider-run tool as a `server_tool_use` block and its `*_tool_result` block. A
`whole` script sends every block complete in `message_start`, then `message_stop`.
A request with thinking on whose open tool loop began without a thinking block is
refused, as the API did (`_check_thinking_turn`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rxllm.local.script import (
    Cite,
    Prompt,
    Reasoning,
    Refuse,
    Say,
    Script,
    Step,
    ToolChoice,
    ToolUse,
    chosen,
    pieces,
    response_id,
    words,
)

__all__ = ["PATH", "frames", "prompt_of"]

PATH = "/v1/messages"

_STOP = {"stop": "end_turn", "tool_use": "tool_use", "length": "max_tokens", "pause": "pause_turn"}


def prompt_of(body: dict[str, Any]) -> Prompt:
    """What a Messages request asks: the last user text, the offered tools, the tool's
    result when a user message of `tool_result` blocks ends the conversation (it is the
    tool's turn, as a `tool` message is in the chat wire, so it does not replace the
    user's last text), and the `tool_choice`."""
    text = ""
    called: dict[str, str] = {}  # tool_use id -> tool name
    result = None
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        for block in blocks:
            if block.get("type") == "tool_use":
                called[str(block.get("id"))] = str(block.get("name"))
        if message.get("role") != "user":
            result = None
            continue
        if isinstance(content, str):
            text, result = content, None
            continue
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if texts:
            text = " ".join(texts)
        result = None
        if results:
            last = results[-1]
            name = called.get(str(last.get("tool_use_id")), "the tool")
            result = (name, _text(last.get("content")))
    _check_thinking_turn(body)
    tools = {
        str(tool.get("name")): tool.get("input_schema") or {} for tool in body.get("tools") or ()
    }
    choice, allowed = _choice(body, tools)
    replies = sum(m.get("role") == "assistant" for m in body.get("messages", []))
    return Prompt(str(body.get("model", "")), text, tools, result, choice, allowed, replies)


def _check_thinking_turn(body: dict[str, Any]) -> None:
    """Refuse, as the API did, thinking on while an open tool loop's assistant turn
    (from the first assistant message after the last user message that is no tool
    result) does not begin with a thinking block (the extended-thinking guide,
    "Toggling thinking modes in conversations", and its error's words)."""
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") == "disabled":
        return
    messages = body.get("messages") or []
    if not messages or not _results_in(messages[-1]):
        return  # no tool loop open: a new turn may think
    first = None
    for at in range(len(messages) - 1, -1, -1):
        if messages[at].get("role") == "assistant":
            first = at
        elif not _results_in(messages[at]):
            break
    content = messages[first].get("content") if first is not None else None
    if not isinstance(content, list) or not content:
        return
    found = content[0].get("type")
    if found in ("thinking", "redacted_thinking"):
        return
    raise ValueError(
        f"messages.{first}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
        f"found `{found}`. When `thinking` is enabled, a final `assistant` message must "
        "start with a thinking block (preceding the lastmost set of `tool_use` and "
        "`tool_result` blocks). To avoid this requirement, disable `thinking`."
    )


def _results_in(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and any(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for block in (content if isinstance(content, list) else ())
    )


# `tool_choice.type` as a mode: `any` requires a call of any tool, `tool` of the one named.
_MODES = {"auto": "auto", "any": "required", "tool": "required", "none": "none"}


def _choice(body: dict[str, Any], tools: dict[str, Any]) -> tuple[ToolChoice, tuple[str, ...]]:
    """`tool_choice`: `{"type": "auto" | "any" | "none"}` or `{"type": "tool", "name"}`."""
    choice = body.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, dict) else None
    named = [choice.get("name")] if isinstance(choice, dict) and kind == "tool" else []
    return chosen(_MODES.get(str(kind), "auto"), named, tools)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return content if isinstance(content, str) else ""


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


@dataclass
class _Block:
    """One content block: how it starts, its deltas, and the block as a whole."""

    start: dict[str, Any]
    deltas: list[dict[str, Any]] = field(default_factory=list)
    whole: dict[str, Any] = field(default_factory=dict)
    closed: bool = True


def _blocks(step: Step, cut: bool, fragment: int) -> Iterator[_Block]:
    """The content blocks of a step (a server tool is its call and its result)."""
    deltas: list[dict[str, Any]]
    whole: dict[str, Any]
    if isinstance(step, Reasoning):
        signature = _signature(step.text)
        deltas = [{"type": "thinking_delta", "thinking": w} for w in words(step.text)]
        deltas.append({"type": "signature_delta", "signature": signature})
        whole = {"type": "thinking", "thinking": step.text, "signature": signature}
        yield _Block({"type": "thinking", "thinking": "", "signature": ""}, deltas, whole)
    elif isinstance(step, Say | Refuse):
        deltas = [{"type": "text_delta", "text": w} for w in words(step.text)]
        cited = step.citations if isinstance(step, Say) else ()
        citations = [_citation(c) for c in cited]
        deltas += [{"type": "citations_delta", "citation": c} for c in citations]
        whole = {"type": "text", "text": step.text}
        if citations:
            whole["citations"] = citations
        yield _Block({"type": "text", "text": ""}, deltas, whole)
    elif isinstance(step, ToolUse):
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": step.call_id,
            "name": step.name,
            "input": {},
        }
        # The API opens with an empty fragment; a tool without parameters gets none.
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in ("", *pieces(step.arguments, fragment))
            if step.arguments
        ]
        whole = {**block, "input": _input(step.arguments)}
        yield _Block(block, deltas, whole, closed=not cut)
    else:
        name, argument, result = _SERVER[step.kind]
        call: dict[str, Any] = {
            "type": "server_tool_use",
            "id": step.call_id,
            "name": name,
            "input": {},
        }
        arguments = json.dumps({argument: step.input})
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments, 8)]
        yield _Block(call, deltas, {**call, "input": {argument: step.input}})
        if step.kind == "web_search":
            content: Any = [
                {
                    "type": "web_search_result",
                    "url": step.url,
                    "title": step.output,
                    "encrypted_content": _signature(step.url),
                    "page_age": None,
                }
            ]
        else:
            content = {
                "type": "code_execution_result",
                "stdout": step.output,
                "stderr": "",
                "return_code": 0,
                "content": [],
            }
        outcome = {"type": result, "tool_use_id": step.call_id, "content": content}
        yield _Block(outcome, [], outcome)


def _input(arguments: str) -> Any:
    """A whole block's `input`: the arguments as JSON ({} without parameters)."""
    try:
        return json.loads(arguments or "{}")
    except ValueError:  # a malformed script cannot be sent whole; send what parses
        return {}


# Protocol-neutral server tools as Anthropic names them: (tool, input key, result block).
_SERVER = {
    "web_search": ("web_search", "query", "web_search_tool_result"),
    "code_execution": ("code_execution", "code", "code_execution_tool_result"),
}


def _citation(cite: Cite) -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "url": cite.url,
        "title": cite.title,
        "cited_text": cite.cited_text,
        "encrypted_index": _signature(cite.cited_text),
    }


def _stop_reason(script: Script) -> str:
    if any(isinstance(step, Refuse) for step in script.steps):
        return "refusal"  # Anthropic's streaming classifiers end the turn this way
    return _STOP[script.stop]


def frames(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    model = str(body.get("model") or "rxllm-local")
    usage = {
        "input_tokens": script.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }
    last = len(script.steps) - 1
    blocks = [
        block
        for index, step in enumerate(script.steps)
        for block in _blocks(step, script.stop == "length" and index == last, script.fragment)
    ]
    message: dict[str, Any] = {
        "id": response_id("msg_local_", body),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    if script.whole:  # the whole message in message_start, then message_stop
        whole = {
            **message,
            "content": [block.whole for block in blocks],
            "stop_reason": _stop_reason(script),
            "usage": {**usage, "output_tokens": script.output_tokens},
        }
        yield _frame("message_start", {"type": "message_start", "message": whole})
        yield _frame("message_stop", {"type": "message_stop"})
        return
    yield _frame("message_start", {"type": "message_start", "message": message})
    yield _frame("ping", {"type": "ping"})
    for index, block in enumerate(blocks):
        yield _start(index, block.start)
        for delta in block.deltas:
            yield _delta(index, delta)
        if block.closed:  # max_tokens cut a call: the API never closes its block
            yield _stop(index)
    if script.error is not None:
        error = {"type": "overloaded_error", "message": script.error}
        yield _frame("error", {"type": "error", "error": error})
        return
    delta = {"stop_reason": _stop_reason(script), "stop_sequence": None}
    yield _frame(
        "message_delta",
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": script.output_tokens}},
    )
    if script.cut:
        return  # the body ends before message_stop: a truncated turn
    yield _frame("message_stop", {"type": "message_stop"})
    if script.late_text is not None:
        yield _delta(max(len(blocks) - 1, 0), {"type": "text_delta", "text": script.late_text})
