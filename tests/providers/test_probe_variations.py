"""Real captures rewritten the ways the same provider may legitimately send them give
the same normalized events as the recording.

Each capture is decoded into its SSE events and written back varied: `data:` without
the space, CRLF line ends, comments before every event and inside it, `id:` and
`retry:` fields, `event:` lines dropped (OpenRouter's Responses relay sends none),
pretty-printed JSON over several `data:` lines (WHATWG joins them with `\\n`, which
JSON reads as whitespace), spaces inside the JSON, keys reversed, unknown fields at
every level, usage counts written as floats (`12.0`: JSON has one number type), and per
wire the optional fields each SDK types as nullable sent `null`, empty or absent
(`content: null`, `tool_calls: []`, `usage: null`, `finish_reason: ""`, a continuation
fragment's `id: null`), the final `[DONE]` dropped, Anthropic `ping` events between all
events, Gemini's JSON-array body and its zero counts written out. What may differ is
only what carries the provider's own JSON (`raw`, `details`, an error's `raw` text).

A capture without `[DONE]` and no other terminal marker (Snowflake's, which sends no
`finish_reason`) is truncated without it, as the contract says; none below is such.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import rxllm
from rxllm.events import Event
from rxllm.sources.sse import SseDecoder
from tests.hypothesis_support import outcome
from tests.support import CAPTURES, HAVE_CAPTURES

Frames = list[tuple[str, str]]  # (SSE event name, data)

# The captures varied, spread over the wires, and the provider that reads each.
VARIED = {
    "openai/chat_parallel_tool_calls": "openai",
    "openrouter/reasoning_anthropic_signature": "openrouter",
    "openrouter/midstream_error_with_usage": "openrouter",
    "groq/reasoning_tool_call_x_groq_usage": "groq",
    "deepseek/reasoner_tool_call": "deepseek",
    "mistral/tool_call_single_chunk_no_index": "mistral",
    "mistral/magistral_thinking_content_list": "mistral",
    "vllm/qwen_tool_call_fragments": "vllm",
    "ollama/parallel_tool_calls_whole_chunks": "ollama",
    "openai-responses/reasoning_encrypted_then_function_call": "openai-responses",
    "anthropic/thinking_signature": "anthropic",
    "anthropic/docs_tool_use_example": "anthropic",
    "anthropic/web_search_server_tool": "anthropic",
    "gemini/thought_parts": "google",
    "gemini/function_call_whole": "google",
}
WIRES = {"openai-responses": "responses", "anthropic": "anthropic", "google": "google"}
# Objects that are the model's or the server tool's own JSON (arguments, results):
# a field added there changes what the events carry, so the variations leave them be.
OPAQUE = {
    "chat": frozenset(),
    "responses": frozenset({"input", "action", "arguments"}),
    "anthropic": frozenset({"input", "content"}),
    "google": frozenset({"args", "response", "partialArgs"}),
}


def frames_of(data: bytes) -> Frames:
    decoder = SseDecoder()
    return [(ev.event, ev.data) for ev in decoder.feed(data) + decoder.close()]


def sse(
    frames: Frames,
    *,
    space: bool = True,
    events: bool = True,
    comments: bool = False,
    ids: bool = False,
    crlf: bool = False,
) -> bytes:
    """`frames` written as SSE; a multi-line data becomes one `data:` line per line."""
    sep = " " if space else ""
    out = ["retry: 3000\n"] if ids else []
    for number, (name, data) in enumerate(frames):
        lines = [": keepalive", ""] if comments else []
        if events and name != "message":
            lines.append(f"event:{sep}{name}")
        if ids:
            lines.append(f"id: {number}")
        if comments:
            lines.append(": inside an event")
        lines += [f"data:{sep}{line}" for line in data.split("\n")]
        out.append("\n".join(lines) + "\n\n")
    text = "".join(out)
    return (text.replace("\n", "\r\n") if crlf else text).encode()


def each_json(frames: Frames, change: Callable[[Any], Any]) -> Frames:
    """`frames` with each JSON data changed (a string result is the new data as is)."""
    out: Frames = []
    for name, data in frames:
        try:
            value = json.loads(data)
        except ValueError:  # [DONE]
            out.append((name, data))
            continue
        changed = change(value)
        out.append((name, changed if isinstance(changed, str) else json.dumps(changed)))
    return out


def each_object(value: Any, change: Callable[[dict[str, Any]], dict[str, Any]], wire: str) -> Any:
    """`value` with `change` applied to every object, innermost first, except inside
    the wire's opaque fields."""
    if isinstance(value, list):
        return [each_object(item, change, wire) for item in value]
    if not isinstance(value, dict):
        return value
    return change(
        {k: v if k in OPAQUE[wire] else each_object(v, change, wire) for k, v in value.items()}
    )


def floats(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [floats(v) for v in value]
    return float(value) if type(value) is int else value


def usage_as_floats(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: floats(v) if k in ("usage", "usageMetadata") else v for k, v in obj.items()}


def chat_optional(style: str) -> Callable[[Any], Any]:
    """A chat chunk with its optional fields sent as `style` says where it left them
    out: `null` (the SDK's `Optional` fields), empty, or `finish_reason: ""`."""

    def change(chunk: Any) -> Any:
        if not isinstance(chunk, dict) or "choices" not in chunk:
            return chunk
        chunk = copy.deepcopy(chunk)
        chunk.setdefault("usage", None)
        chunk.setdefault("system_fingerprint", None)
        if isinstance(chunk["usage"], dict):
            chunk["usage"].setdefault("prompt_tokens_details", None)
            chunk["usage"].setdefault("completion_tokens_details", None)
        for choice in chunk["choices"]:
            choice.setdefault("logprobs", None)
            if choice.get("finish_reason") is None:
                choice["finish_reason"] = "" if style == "empty finish" else None
            delta = choice.setdefault("delta", {})
            if style == "null":
                for key in ("content", "refusal", "tool_calls", "function_call", "role"):
                    delta.setdefault(key, None)
                for key in ("reasoning", "reasoning_content"):
                    delta.setdefault(key, None)
                for call in delta.get("tool_calls") or []:
                    call.setdefault("id", None)
                    call.setdefault("type", None)
                    call.setdefault("function", {}).setdefault("name", None)
            elif style == "empty":
                delta.setdefault("content", "")
                delta.setdefault("tool_calls", [])
        return chunk

    return change


def anthropic_nulls(event: Any) -> Any:
    """The nullable fields of Anthropic's `Usage`, `MessageDeltaUsage`, `Message` and
    `TextBlock` sent as `null` where the recording left them out."""
    if not isinstance(event, dict):
        return event
    event = copy.deepcopy(event)
    kind = event.get("type")
    if kind == "message_start":
        message = event["message"]
        for key in ("stop_sequence", "container"):
            message.setdefault(key, None)
        for key in ("cache_creation_input_tokens", "cache_read_input_tokens", "server_tool_use"):
            message["usage"].setdefault(key, None)
    elif kind == "message_delta":
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            event["usage"].setdefault(key, None)
        event["usage"].setdefault("server_tool_use", None)
        event["delta"].setdefault("stop_sequence", None)
    elif kind == "content_block_start" and event["content_block"].get("type") == "text":
        event["content_block"].setdefault("citations", None)
    return event


def gemini_defaults(chunk: Any) -> Any:
    """A Gemini chunk with proto3 defaults written out: `thought: false` on answer
    parts, zero counts, the candidate's index; an empty text part beside the finish."""
    chunk = copy.deepcopy(chunk)
    for candidate in chunk.get("candidates", []):
        candidate.setdefault("index", 0)
        parts = candidate.setdefault("content", {"role": "model"}).setdefault("parts", [])
        for part in parts:
            if "text" in part:
                part.setdefault("thought", False)
        if candidate.get("finishReason"):
            parts.append({"text": ""})
    counts = chunk.get("usageMetadata")
    if isinstance(counts, dict):
        for key in ("candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount"):
            counts.setdefault(key, 0)
    return chunk


def gemini_finish_apart(frames: Frames) -> Frames:
    """The finish reason in a chunk of its own after the last content, as Gemini
    sends it on longer turns: a candidate with no parts, the usage repeated."""
    out: Frames = []
    for name, data in frames:
        chunk = json.loads(data)
        candidate = chunk["candidates"][0]
        finish = candidate.pop("finishReason", None)
        out.append((name, json.dumps(chunk)))
        if finish:
            last = {"candidates": [{"content": {"role": "model"}, "finishReason": finish}]}
            last["usageMetadata"] = chunk.get("usageMetadata")
            out.append((name, json.dumps(last)))
    return out


def variants(frames: Frames, provider: str) -> dict[str, bytes]:
    wire = WIRES.get(provider, "chat")
    unknown = {"x_unknown": {"nested": [1, None]}, "zz_null": None}
    out = {
        "data: without the space": sse(frames, space=False),
        "crlf": sse(frames, crlf=True),
        "comments everywhere": sse(frames, comments=True),
        "id and retry fields": sse(frames, ids=True),
        "unknown fields at every level": sse(
            each_json(frames, lambda v: each_object(v, lambda o: {**o, **unknown}, wire))
        ),
        "keys reversed": sse(
            each_json(frames, lambda v: each_object(v, lambda o: dict(reversed(o.items())), wire))
        ),
        "usage counts as floats": sse(
            each_json(frames, lambda v: each_object(v, usage_as_floats, wire))
        ),
        "spaces inside the JSON": sse(
            each_json(frames, lambda v: json.dumps(v, separators=(" , ", " : ")))
        ),
        "JSON over several data lines": sse(each_json(frames, lambda v: json.dumps(v, indent=2))),
    }
    if wire == "chat":
        for style in ("null", "empty", "empty finish"):
            out[f"optional fields {style}"] = sse(each_json(frames, chat_optional(style)))
        if frames[-1][1] == "[DONE]":
            out["no [DONE]"] = sse(frames[:-1])
    if wire in ("responses", "anthropic"):
        out["no event: lines"] = sse(frames, events=False)
    if wire == "responses":
        out["a [DONE] after the terminal event"] = sse([*frames, ("message", "[DONE]")])
    if wire == "anthropic":
        ping = ("ping", '{"type": "ping"}')
        out["pings everywhere"] = sse([ping, *(f for frame in frames for f in (frame, ping))])
        out["nullable fields null"] = sse(each_json(frames, anthropic_nulls))
    if wire == "google":
        chunks = [json.loads(data) for _, data in frames]
        out["a JSON array body"] = (
            "[" + ",\r\n".join(json.dumps(c, indent=2) for c in chunks) + "]"
        ).encode()
        out["defaults written out"] = sse(each_json(frames, gemini_defaults))
        out["the finish in a chunk of its own"] = sse(gemini_finish_apart(frames))
    return out


def normalized(events: list[Event]) -> list[dict[str, Any]]:
    """What the events say, without the provider's own JSON they carry along."""
    out = []
    for event in events:
        fields = event.model_dump(exclude={"raw", "details"})
        if "error" in fields:
            fields["error"].pop("raw")
        out.append(fields)
    return out


@pytest.mark.parametrize("name", sorted(VARIED) if HAVE_CAPTURES else [])
def test_a_legitimate_variation_of_a_capture_gives_its_events(name: str) -> None:
    provider = VARIED[name]
    body = (CAPTURES / f"{name}.sse").read_bytes()
    expected = normalized(outcome(body, provider))
    divergent = [
        variant
        for variant, data in variants(frames_of(body), provider).items()
        if normalized(outcome(data, provider)) != expected
    ]
    assert divergent == []


# -- the defects the variations found ---------------------------------------------------


def frame(event: str, payload: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n"


# Anthropic's streaming example (docs, "Streaming Messages") with its counts as floats.
ANTHROPIC_FLOAT_COUNTS = (
    frame(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-1",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 472.0, "output_tokens": 2.0},
            },
        },
    )
    + frame(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    + frame(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    )
    + frame("content_block_stop", {"type": "content_block_stop", "index": 0})
    + frame(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"input_tokens": None, "output_tokens": 89.0},
        },
    )
    + frame("message_stop", {"type": "message_stop"})
).encode()


async def test_anthropic_counts_written_as_floats_are_the_turns_usage(
    serve_body: Callable[[bytes], Awaitable[str]],
) -> None:
    """JSON has one number type: `472.0` is 472 tokens (the TypeScript SDK's JSON.parse
    reads it so), and `MessageDeltaUsage.input_tokens: null` keeps message_start's.
    The integer-only check dropped the usage altogether."""
    base_url = await serve_body(ANTHROPIC_FLOAT_COUNTS)
    async with rxllm.provider("anthropic", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="claude-opus-4-1", messages=[rxllm.Message.user("hi")])
        )
    assert record.terminal.type == "done" and record.text == "Hi"
    assert record.usage is not None
    assert (record.usage.input_tokens, record.usage.output_tokens) == (472, 89)
    assert record.usage.total_tokens == 561


def test_a_chat_total_written_as_a_float_still_says_which_reading_it_summed() -> None:
    """OpenRouter's counts of a turn cut at max_completion_tokens=10 (the capture
    midstream_error_with_usage): reasoning 11 is inside completion 10 + the total 53
    = 43 + 10 says so. Written `53.0`, the total was ignored and the reasoning added
    to the output (21, total 64)."""
    usage = {
        "prompt_tokens": 43.0,
        "completion_tokens": 10.0,
        "total_tokens": 53.0,
        "completion_tokens_details": {"reasoning_tokens": 11.0},
    }
    chunks = [
        {"id": "g", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]},
        {"id": "g", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        {"id": "g", "choices": [], "usage": usage},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    events = outcome(body.encode(), "openrouter")
    [counted] = [e.usage for e in events if isinstance(e, rxllm.UsageUpdate)]
    assert (counted.output_tokens, counted.reasoning_tokens, counted.total_tokens) == (10, 11, 53)
