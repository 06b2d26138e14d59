"""Chat-wire shapes of OpenAI-compatible servers the captures do not hold, each written
by hand from what the server is reported to send (named beside it), replayed whole and
cut at arbitrary byte boundaries, and once end to end over a loopback server.
"""

from __future__ import annotations

from typing import Any

import rxllm
from rxllm.events import Done
from tests.providers.test_probe_openai_chat import _chunk, _sse
from tests.support import ServeBody, kinds, replay_every_way, summarize


async def _record(serve_body: ServeBody, body: bytes, provider: str) -> rxllm.StreamRecord:
    base_url = await serve_body(body)
    async with rxllm.provider(
        provider, base_url=base_url, allow_private_network=True, max_attempts=1
    ) as p:
        return await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))


# ------------------------------------- Moonshot (Kimi): usage on the last chunk's choice

# Moonshot's API puts the turn's usage in `choices[0].usage` of the finish chunk, never at
# the top level (earendil-works/pi#2017: "Moonshot returns usage data in
# chunk.choices[0].usage instead of the standard chunk.usage"), `cached_tokens` beside
# the counts.
_KIMI_USAGE = {
    "prompt_tokens": 50,
    "completion_tokens": 10,
    "total_tokens": 60,
    "cached_tokens": 40,
}
_KIMI = _sse(
    _chunk({"role": "assistant", "content": ""}, model="kimi-k2"),
    _chunk(
        {"tool_calls": [{"index": 0, "id": "get_weather:0", "type": "function",
                         "function": {"name": "get_weather", "arguments": ""}}]},
        model="kimi-k2",
    ),
    _chunk(
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Beijing"}'}}]},
        model="kimi-k2",
    ),
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "kimi-k2",
        "choices": [
            {"index": 0, "delta": {}, "finish_reason": "tool_calls", "usage": _KIMI_USAGE}
        ],
    },
)  # fmt: skip


def test_moonshot_usage_on_the_choice_is_the_turns_usage() -> None:
    # Before: the choice's `usage` was logged as a field with no event; no usage at all.
    summary = summarize(replay_every_way(_KIMI, "custom"))
    assert summary.tool_calls == [("get_weather:0", "get_weather", {"city": "Beijing"})]
    usage = summary.usage
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (10, 40, 10)
    assert usage.total_tokens == 60
    assert (summary.stop_reason, summary.raw_stop_reason) == ("tool_use", "tool_calls")


async def test_moonshot_usage_over_http(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, _KIMI, "custom")
    assert rec.provider == "custom" and rec.model == "kimi-k2"
    assert [(c.call_id, c.arguments) for c in rec.tool_calls] == [
        ("get_weather:0", {"city": "Beijing"})
    ]
    assert rec.usage is not None and rec.usage.total_tokens == 60
    assert isinstance(rec.terminal, Done) and rec.terminal.stop_reason == "tool_use"


# ------------------------------ text-generation-inference: `tool_calls` as one object


# TGI before 3.2 streamed a call's deltas with `tool_calls` as a single object, not a
# list ("ToolCalls in streaming case should be a list of tool calls, TGI outputs
# singular tool call": huggingface/text-generation-inference#2949, fixed by #3086), its
# `id` empty, `function.description: null`, and the finish `eos_token`.
def _tgi(call: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "id": "",
        "created": 1732000000,
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "system_fingerprint": "2.4.1-native",
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "tool_calls": call},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": None,
    }


def _tgi_call(name: str | None, arguments: str) -> dict[str, Any]:
    function = {"description": None, "name": name, "arguments": arguments}
    return {"index": 0, "id": "", "type": "function", "function": function}


_TGI = _sse(
    _tgi(_tgi_call("get_current_weather", '{"')),
    _tgi(_tgi_call(None, 'location": "Paris, France"}')),
    _tgi(_tgi_call(None, ""), "eos_token"),
    {"object": "chat.completion.chunk", "id": "", "created": 1732000000, "model": "m",
     "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}},
)  # fmt: skip


def test_tgi_tool_calls_as_one_object_is_that_call() -> None:
    # Before: `'str' object has no attribute 'get'`, a protocol error: iterating the
    # object gave its keys.
    events = replay_every_way(_TGI, "custom")
    assert kinds(events) == ["tool_start", "tool_request", "usage", "done"]
    summary = summarize(events)
    # the id empty, and the response's too: the tag is of the chunk the call came in
    call = ("call_iJtYYj7A_0", "get_current_weather", {"location": "Paris, France"})
    assert summary.tool_calls == [call]
    assert (summary.stop_reason, summary.raw_stop_reason) == ("tool_use", "eos_token")
    assert summary.usage is not None and summary.usage.total_tokens == 29


async def test_tgi_tool_calls_as_one_object_over_http(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, _TGI, "custom")
    assert [(c.name, c.arguments) for c in rec.tool_calls] == [
        ("get_current_weather", {"location": "Paris, France"})
    ]
    assert isinstance(rec.terminal, Done) and rec.terminal.stop_reason == "tool_use"


# --------------------------- MiniMax: a placeholder usage on every chunk before the real


# MiniMax's stream carries `"usage": {"total_tokens": 0, "total_characters": 0}` on each
# chunk, `role: ""` and extra flags beside (MiniMax-AI/MiniMax-M2.5#2), and the counts on
# the finish chunk.
def _minimax(
    delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish:
        choice["finish_reason"] = finish
    return {
        "id": "0",
        "choices": [choice],
        "created": 1771279826,
        "model": "MiniMax-M2.5",
        "object": "chat.completion.chunk",
        "usage": usage or {"total_tokens": 0, "total_characters": 0},
        "input_sensitive": False,
        "output_sensitive": False,
    }


_MINIMAX = _sse(
    _minimax({"role": "", "reasoning_content": ""}),
    _minimax({"role": "assistant", "reasoning_content": "The user says hi."}),
    _minimax({"role": "assistant", "content": "Hello!"}),
    _minimax(
        {"role": "assistant", "content": ""},
        "stop",
        {"total_tokens": 120, "prompt_tokens": 100, "completion_tokens": 20,
         "completion_tokens_details": {"reasoning_tokens": 12}},
    ),
)  # fmt: skip


def test_minimax_placeholder_usage_is_no_usage() -> None:
    # Before: a usage event of zeros came first, released before the reasoning.
    events = replay_every_way(_MINIMAX, "custom")
    assert kinds(events) == ["reasoning", "text", "usage", "done"]
    summary = summarize(events)
    assert (summary.reasoning, summary.text) == ("The user says hi.", "Hello!")
    usage = summary.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (100, 20, 12)


async def test_minimax_placeholder_usage_over_http(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, _MINIMAX, "custom")
    assert (rec.reasoning, rec.text, rec.model) == ("The user says hi.", "Hello!", "MiniMax-M2.5")
    assert rec.usage is not None and rec.usage.total_tokens == 120
    assert rec.attempts[0].committed


# ------------------------------------ KoboldCpp: `"finish_reason": "null"`, the word

# KoboldCpp sent the string "null" as the finish reason of every chunk before the last
# (PowerShell/AIShell#350: "It uses the string "null" instead of the JSON null for
# finish_reason in the streaming chunk response"; fixed in LostRuins/koboldcpp@c55bb9a).
_KOBOLD = _sse(
    _chunk({"role": "assistant", "content": "Hel"}, "null", model="koboldcpp/llama"),
    _chunk({"content": "lo"}, "null", model="koboldcpp/llama"),
    _chunk({}, "stop", model="koboldcpp/llama"),
)


def test_koboldcpp_null_as_a_word_is_no_finish() -> None:
    # Before: the first chunk's "null" was taken as the finish: `done(other, "null")`.
    summary = summarize(replay_every_way(_KOBOLD, "custom"))
    assert summary.text == "Hello"
    assert (summary.stop_reason, summary.raw_stop_reason) == ("stop", "stop")


async def test_koboldcpp_null_as_a_word_over_http(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, _KOBOLD, "custom")
    assert rec.text == "Hello"
    assert isinstance(rec.terminal, Done)
    assert (rec.terminal.stop_reason, rec.terminal.raw_stop_reason) == ("stop", "stop")
