"""The UI message stream at a tool call that never completes: a malformed call's input
is its raw text, as the `ai` package's own server sends it (`toUIMessageStream`, the
`tool-call` part with `invalid: true`: `input` is the raw text where it is not JSON), and
a cancel leaves a call still streaming as the SDK's server does (`abort` alone)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import rxllm
from rxllm.events import Cancelled, ToolStart
from tests.serving.support import check_rules, encode
from tests.serving.test_ui_message_stream_node import node_client, run_client

__all__ = ["node_client"]  # the Node fixture, shared with the conformance test

P = "openai"


def _chat_body(*deltas: tuple[dict[str, Any], str | None]) -> bytes:
    """An OpenAI chat stream: one chunk per (delta, finish_reason), then `[DONE]`."""
    frames = []
    for delta, finish in deltas:
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        frames.append(f"data: {json.dumps(chunk)}\n\n")
    return ("".join(frames) + "data: [DONE]\n\n").encode()


def _call(index: int, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]
    }


# Two parallel calls; the first one's arguments stop mid-string at the finish.
TWO_CALLS = _chat_body(
    ({"role": "assistant", **_call(0, "call_a", "get_weather", '{"city": "Par')}, None),
    (_call(1, "call_b", "get_time", '{"tz": "CET"}'), None),
    ({}, "tool_calls"),
)


async def test_a_malformed_call_sends_its_raw_input_text() -> None:
    stream = await encode(rxllm.replay(TWO_CALLS, provider=P))
    check_rules(stream)
    first, second = stream.of("tool-input-error")
    # The call the error names: its text, as the SDK's server sends an invalid call's.
    assert first["toolCallId"] == "call_a" and first["input"] == '{"city": "Par'
    # The other one's input never came (its dispatch stopped at the error): nothing.
    assert second["toolCallId"] == "call_b" and second["input"] is None
    assert stream.types[-5:-2] == ["tool-input-error", "tool-input-error", "message-metadata"]
    assert stream.types[-2:] == ["error", "finish"]


async def test_raw_of_other_errors_is_still_never_sent() -> None:
    body = _chat_body(({"role": "assistant", **_call(0, "call_a", "f", '{"x": "SECRET')}, None))
    cut = body.removesuffix(b"data: [DONE]\n\n")  # no finish, no [DONE]: truncated
    stream = await encode(rxllm.replay(cut, provider=P))
    assert (
        stream.of("error")[0]["errorText"] == "The model provider's answer was cut off; try again."
    )
    (failed,) = stream.of("tool-input-error")
    assert failed["input"] is None and b"SECRET" not in stream.raw


def test_the_ai_client_keeps_the_raw_input_of_a_malformed_call(node_client: Path) -> None:
    cancelled = [
        ToolStart(provider=P, call_id="call_c", name="f", index=0),
        Cancelled(provider=P, reason="user"),
    ]

    async def bodies() -> dict[str, bytes]:
        return {
            "malformed": (await encode(rxllm.replay(TWO_CALLS, provider=P))).raw,
            "cancelled": (await encode(cancelled)).raw,
        }

    results = run_client(node_client, asyncio.run(bodies()))["results"]
    assert len(results) == 8
    for result in results:
        assert not result["errors"], result
        parts = {p["toolCallId"]: p for p in result["message"]["parts"] if "toolCallId" in p}
        if result["name"] == "malformed":
            # a static tool part: the input the model wrote is its rawInput, which
            # convertToModelMessages sends back with the error on the next turn
            assert parts["call_a"]["state"] == "output-error"
            assert parts["call_a"]["rawInput"] == '{"city": "Par'
            assert parts["call_b"]["state"] == "output-error"
        else:
            # as after the SDK's own `abort`: still streaming, which
            # convertToModelMessages leaves out of the next turn
            assert parts["call_c"]["state"] == "input-streaming"
