"""The local provider's OpenAI Responses encoder: a script as typed streaming events.

Each step is one output item: `reasoning` (a summary), `message` (an `output_text`
part with its `url_citation` annotations, or a `refusal` part), `function_call`, an
item that asks the client to act (`shell_call`, ...: the script's arguments are its
fields), and a provider-run `web_search_call` or `code_interpreter_call` with its
progress events. A `whole` script sends each item only as its `output_item.done`.
"""

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


def prompt_of(body: dict[str, Any]) -> Prompt:
    """What a Responses request asks: the last user text, the offered functions, the
    tool's result when a `function_call_output` item ends the input, and the
    `tool_choice`."""
    text = ""
    called: dict[str, str] = {}  # call_id -> function name
    items = body.get("input")
    if isinstance(items, str):
        text, items = items, []
    for item in items or ():
        if not isinstance(item, dict):
            continue
        if item.get("role") == "user":
            text = _text_of(item.get("content"))
        if item.get("type") == "function_call":
            called[str(item.get("call_id"))] = str(item.get("name"))
    result = None
    last = items[-1] if items else None
    if isinstance(last, dict) and str(last.get("type", "")).endswith("_output"):
        name = called.get(str(last.get("call_id")), "the tool")
        output = last.get("output")
        result = (name, output if isinstance(output, str) else json.dumps(output))
    tools = {
        str(tool.get("name")): tool.get("parameters") or {}
        for tool in body.get("tools") or ()
        if tool.get("type") == "function"
    }
    choice, allowed = _choice(body, tools)
    # Items of the assistant's turns (its messages, its calls and their outputs): every
    # turn adds at least one.
    replies = sum(
        isinstance(item, dict) and (item.get("role") == "assistant" or "call_id" in item)
        for item in items or ()
    )
    return Prompt(str(body.get("model", "")), text, tools, result, choice, allowed, replies)


def _choice(body: dict[str, Any], tools: dict[str, Any]) -> tuple[ToolChoice, tuple[str, ...]]:
    """`tool_choice`: a mode, `{"type": "function", "name": ...}`, or `{"type":
    "allowed_tools", "mode": "auto" | "required", "tools": [{"type": "function", "name":
    ...}, ...]}` (the model picks among those functions only)."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        names = [
            tool.get("name")
            for tool in choice.get("tools") or ()
            if isinstance(tool, dict) and tool.get("type") == "function"
        ]
        return chosen(str(choice.get("mode")), names, tools)
    if isinstance(choice, dict) and choice.get("type") == "function":
        return chosen("required", [choice.get("name")], tools)
    return chosen(choice if isinstance(choice, str) else "auto", (), tools)


Events = list[tuple[str, dict[str, Any]]]
"""(type, fields) of the streaming events of one output item, before its `.done`."""


def _reasoning(step: Reasoning, at: dict[str, Any], encrypted: bool) -> tuple[Events, Any]:
    item: dict[str, Any] = {"id": at["item_id"], "type": "reasoning", "summary": []}
    if encrypted:
        item["encrypted_content"] = sealed(step.text)
    where = {**at, "summary_index": 0}
    part = {"type": "summary_text", "text": step.text}
    events: Events = [
        ("response.output_item.added", {"output_index": at["output_index"], "item": item}),
        ("response.reasoning_summary_part.added", {**where, "part": {**part, "text": ""}}),
        *[
            ("response.reasoning_summary_text.delta", {**where, "delta": w})
            for w in words(step.text)
        ],
        ("response.reasoning_summary_text.done", {**where, "text": step.text}),
        ("response.reasoning_summary_part.done", {**where, "part": part}),
    ]
    return events, {**item, "summary": [part]}


def _message(step: Say | Refuse, at: dict[str, Any], status: str) -> tuple[Events, Any]:
    item: dict[str, Any] = {
        "id": at["item_id"],
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    where = {**at, "content_index": 0}
    if isinstance(step, Refuse):
        part: dict[str, Any] = {"type": "refusal", "refusal": step.text}
        streamed: Events = [
            *[("response.refusal.delta", {**where, "delta": w}) for w in words(step.text)],
            ("response.refusal.done", {**where, "refusal": step.text}),
        ]
        empty: dict[str, Any] = {**part, "refusal": ""}
    else:
        annotations = [_annotation(step.text, cite) for cite in step.citations]
        part = {"type": "output_text", "text": step.text, "annotations": annotations}
        streamed = [
            *[
                ("response.output_text.delta", {**where, "delta": w, "logprobs": []})
                for w in words(step.text)
            ],
            *[
                (
                    "response.output_text.annotation.added",
                    {**where, "annotation_index": i, "annotation": a},
                )
                for i, a in enumerate(annotations)
            ],
            ("response.output_text.done", {**where, "text": step.text, "logprobs": []}),
        ]
        empty = {**part, "text": "", "annotations": []}
    events: Events = [
        ("response.output_item.added", {"output_index": at["output_index"], "item": item}),
        ("response.content_part.added", {**where, "part": empty}),
        *streamed,
        ("response.content_part.done", {**where, "part": part}),
    ]
    return events, {**item, "status": status, "content": [part]}


def _call(step: ToolUse, at: dict[str, Any], status: str, fragment: int) -> tuple[Events, Any]:
    if step.item is not None:  # an item that asks the client to act, not a function
        item = {"id": at["item_id"], "type": step.item, "call_id": step.call_id}
        fields = json.loads(step.arguments)
        added = (
            "response.output_item.added",
            {
                "output_index": at["output_index"],
                "item": {**item, "status": "in_progress", **fields},
            },
        )
        return [added], {**item, "status": status, **fields}
    item = {
        "id": at["item_id"],
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": step.call_id,
        "name": step.name,
    }
    events: Events = [
        ("response.output_item.added", {"output_index": at["output_index"], "item": item}),
        *[
            ("response.function_call_arguments.delta", {**at, "delta": piece})
            for piece in pieces(step.arguments, fragment)
        ],
        ("response.function_call_arguments.done", {**at, "arguments": step.arguments}),
    ]
    return events, {**item, "status": status, "arguments": step.arguments}


def _server_tool(step: ServerTool, at: dict[str, Any]) -> tuple[Events, Any]:
    if step.kind == "web_search":
        kind = "web_search_call"
        item: dict[str, Any] = {"id": at["item_id"], "type": kind, "status": "in_progress"}
        action = {"type": "search", "query": step.input}
        sources = [{"type": "url", "url": step.url}]
        done = {**item, "status": "completed", "action": {**action, "sources": sources}}
        progress = ("in_progress", "searching", "completed")
        streamed: Events = []
    else:
        kind = "code_interpreter_call"
        item = {
            "id": at["item_id"],
            "type": kind,
            "status": "in_progress",
            "code": "",
            "container_id": "cntr_local",
            "outputs": None,
        }
        logs = [{"type": "logs", "logs": step.output}]
        done = {**item, "status": "completed", "code": step.input, "outputs": logs}
        progress = ("in_progress", "interpreting", "completed")
        streamed = [
            *[(f"response.{kind}_code.delta", {**at, "delta": w}) for w in words(step.input)],
            (f"response.{kind}_code.done", {**at, "code": step.input}),
        ]
    events: Events = [
        ("response.output_item.added", {"output_index": at["output_index"], "item": item}),
        (f"response.{kind}.{progress[0]}", at),
        *streamed,
        (f"response.{kind}.{progress[1]}", at),
        (f"response.{kind}.{progress[2]}", at),
    ]
    return events, done


def _annotation(text: str, cite: Cite) -> dict[str, Any]:
    start = text.find(cite.cited_text)
    return {
        "type": "url_citation",
        "url": cite.url,
        "title": cite.title,
        "start_index": start,
        "end_index": start + len(cite.cited_text),
    }


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

    named = response_id("resp_local_", body)

    def response(status: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": named,
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
        # A provider-run tool's item id is its call id: new in the conversation, as the
        # call ids `script_for` gives are.
        name = step.call_id if isinstance(step, ServerTool) else f"local_{index}"
        at: dict[str, Any] = {"item_id": f"{_PREFIX[type(step)]}_{name}", "output_index": index}
        if isinstance(step, Reasoning):
            events, item = _reasoning(step, at, encrypted)
        elif isinstance(step, Say | Refuse):
            last_message = at["item_id"]
            events, item = _message(step, at, status)
        elif isinstance(step, ToolUse):
            events, item = _call(step, at, status, script.fragment)
        else:
            events, item = _server_tool(step, at)
        if not script.whole:  # a whole item comes only with its output_item.done
            for kind, fields in events:
                yield event(kind, **fields)
        yield event("response.output_item.done", output_index=index, item=item)
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


# Item id prefixes, as OpenAI's read.
_PREFIX: dict[type, str] = {
    Reasoning: "rs",
    Say: "msg",
    Refuse: "msg",
    ToolUse: "fc",
    ServerTool: "ws",
}
