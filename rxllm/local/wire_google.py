"""The local provider's Gemini encoder: a script as `streamGenerateContent?alt=sse` chunks.

Each chunk is a whole `GenerateContentResponse` framed with `\\r\\n\\r\\n`, as the
Gemini API sends them: thought parts (`"thought": true`), text parts, whole
`functionCall` parts (parallel calls share one chunk), a cumulative `usageMetadata` on
every chunk, and `finishReason` on the last candidate. The thought signature rides on
the first part after the thoughts, as Gemini puts it.

Arguments that are not a JSON object cannot travel in a whole `functionCall` (its
`args` is a structure, not text); the Gemini wire's way to leave a call unfinished is
a streamed call (`willContinue`) that never ends, so that is how a malformed or cut
call is told here. A tool without parameters is a `functionCall` with no `args`.

Beyond that: code the provider runs is an `executableCode` part and its
`codeExecutionResult`; a web search shows only as `groundingMetadata` on the last
chunk (its queries and the cited pages as `groundingChunks`, with `groundingSupports`);
a refusal has no text on this wire: the turn ends with `finishReason: SAFETY` and no
content. A `whole` script sends each text in one part; Gemini has no pause.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from rxllm.local.script import (
    Prompt,
    Reasoning,
    Refuse,
    Say,
    Script,
    ServerTool,
    ToolChoice,
    ToolUse,
    chosen,
    response_id,
    words,
)

__all__ = ["PATH", "frames", "prompt_of"]

# aiohttp matches a variable followed by a literal in one segment; a model name with a
# `/` (`fault/<name>`) arrives percent-encoded and is decoded in `match_info`.
PATH = "/v1beta/models/{model}:streamGenerateContent"

_FINISH = {"stop": "STOP", "tool_use": "STOP", "length": "MAX_TOKENS", "pause": "STOP"}


def prompt_of(body: dict[str, Any]) -> Prompt:
    """What a Gemini request asks (the server puts the model from the URL into
    `body["model"]`): the last user text, the declared functions, the tool's result
    when `functionResponse` parts end the conversation (a turn of tool results only is
    not the user speaking), and `toolConfig.functionCallingConfig`."""
    text = ""
    result = None
    for content in body.get("contents") or ():
        parts = content.get("parts") or ()
        if content.get("role", "user") != "user":
            result = None
            continue
        said = [p["text"] for p in parts if isinstance(p.get("text"), str)]
        answers = [
            p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)
        ]
        if said:
            text = " ".join(said)
        result = None
        if answers:
            last = answers[-1]
            result = (str(last.get("name", "the tool")), _result_text(last.get("response")))
    tools = {
        str(declared.get("name")): (
            declared.get("parametersJsonSchema") or declared.get("parameters") or {}
        )
        for tool in body.get("tools") or ()
        for declared in tool.get("functionDeclarations") or ()
    }
    choice, allowed = _choice(body, tools)
    replies = sum(c.get("role") == "model" for c in body.get("contents") or ())
    return Prompt(str(body.get("model", "")), text, tools, result, choice, allowed, replies)


# `functionCallingConfig.mode` as a mode (`VALIDATED`, calls checked against their
# schema, may still answer in text: `auto`, its `allowedFunctionNames` kept).
_MODES = {"AUTO": "auto", "ANY": "required", "NONE": "none"}


def _choice(body: dict[str, Any], tools: dict[str, Any]) -> tuple[ToolChoice, tuple[str, ...]]:
    """`toolConfig.functionCallingConfig` (either spelling, as Gemini reads both): its
    `mode` and, for `ANY` and `VALIDATED` (the modes that take them), its
    `allowedFunctionNames`."""
    config = body.get("toolConfig") or body.get("tool_config") or {}
    calling = config.get("functionCallingConfig") or config.get("function_calling_config") or {}
    given = str(calling.get("mode"))
    names = calling.get("allowedFunctionNames") or calling.get("allowed_function_names") or ()
    limited = given in ("ANY", "VALIDATED")
    return chosen(_MODES.get(given, "auto"), names if limited else (), tools)


def _result_text(response: Any) -> str:
    """A `functionResponse.response` as text: a tool's text travels as `{"output": text}`."""
    if isinstance(response, dict) and set(response) == {"output"}:
        output = response["output"]
        return output if isinstance(output, str) else json.dumps(output)
    return json.dumps(response)


def _frame(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


def _arguments(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def frames(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    model = str(body.get("model") or "rxllm-local")
    # rxllm tags the ids of calls Gemini leaves unnamed (code execution, a call without
    # `id`) with the response's.
    named = response_id("rxllm-local-", body)
    prompt_usage = {"promptTokenCount": script.input_tokens, "totalTokenCount": script.input_tokens}

    def chunk(
        parts: list[dict[str, Any]],
        finish: str | None = None,
        usage: dict[str, Any] | None = None,
        grounding: dict[str, Any] | None = None,
    ) -> bytes:
        candidate: dict[str, Any] = {"index": 0}
        if parts:
            candidate["content"] = {"parts": parts, "role": "model"}
        if finish is not None:
            candidate["finishReason"] = finish
        if grounding:
            candidate["groundingMetadata"] = grounding
        return _frame(
            {
                "candidates": [candidate],
                "usageMetadata": usage or prompt_usage,
                "modelVersion": model,
                "responseId": named,
            }
        )

    signature: str | None = None  # owed to the first part after the thoughts

    def signed(part: dict[str, Any]) -> dict[str, Any]:
        nonlocal signature
        if signature is not None:
            part["thoughtSignature"], signature = signature, None
        return part

    def said(text: str) -> Iterator[str]:
        return iter((text,)) if script.whole else words(text)

    grounding: dict[str, Any] = {}  # sent with the last chunk, as Gemini sends it
    refused = False
    steps = script.steps
    position = 0
    while position < len(steps):
        step = steps[position]
        position += 1
        if isinstance(step, Reasoning):
            for word in said(step.text):
                yield chunk([{"text": word, "thought": True}])
            blob = f"rxllm-local thought signature {position}".encode()
            signature = base64.b64encode(blob).decode()
        elif isinstance(step, Say):
            for word in said(step.text):
                yield chunk([signed({"text": word})])
            for cite in step.citations:
                _ground(grounding, step.text, cite.url, cite.title, cite.cited_text)
        elif isinstance(step, Refuse):
            refused = True
        elif isinstance(step, ServerTool):
            if step.kind == "web_search":
                grounding.setdefault("webSearchQueries", []).append(step.input)
            else:
                code = {"language": "PYTHON", "code": step.input}
                yield chunk([signed({"executableCode": code})])
                result = {"outcome": "OUTCOME_OK", "output": step.output}
                yield chunk([{"codeExecutionResult": result}])
        elif isinstance(step, ToolUse):
            calls = [step]
            while position < len(steps) and isinstance(steps[position], ToolUse):
                following = steps[position]
                assert isinstance(following, ToolUse)
                calls.append(following)
                position += 1
            parts: list[dict[str, Any]] = []
            for call in calls:
                if not call.arguments:  # a tool without parameters
                    parts.append(signed({"functionCall": {"id": call.call_id, "name": call.name}}))
                    continue
                arguments = _arguments(call.arguments)
                if arguments is None:  # see the module docstring: an unfinished call
                    parts.append(
                        signed({"functionCall": {"name": call.name, "willContinue": True}})
                    )
                    break
                function_call = {"id": call.call_id, "name": call.name, "args": arguments}
                parts.append(signed({"functionCall": function_call}))
            yield chunk(parts)
    if script.cut:
        return
    if script.error is not None:
        error = {"code": 503, "message": script.error, "status": "UNAVAILABLE"}
        yield _frame({"error": error})
        return
    visible = script.output_tokens - script.reasoning_tokens
    usage = {
        "promptTokenCount": script.input_tokens,
        "candidatesTokenCount": visible,
        "thoughtsTokenCount": script.reasoning_tokens,
        "totalTokenCount": script.input_tokens + script.output_tokens,
    }
    if refused:
        yield chunk([], "SAFETY", usage)
    else:
        yield chunk([signed({"text": ""})], _FINISH[script.stop], usage, grounding)
    if script.late_text is not None:
        yield chunk([{"text": script.late_text}], usage=usage)


def _ground(grounding: dict[str, Any], text: str, url: str, title: str, cited: str) -> None:
    """Add a cited page to `groundingMetadata`: a chunk, and the supported segment."""
    chunks = grounding.setdefault("groundingChunks", [])
    chunks.append({"web": {"uri": url, "title": title}})
    start = text.find(cited)
    segment = {"startIndex": start, "endIndex": start + len(cited), "text": cited}
    support = {"segment": segment, "groundingChunkIndices": [len(chunks) - 1]}
    grounding.setdefault("groundingSupports", []).append(support)
