"""Stream readings session 36 left open, each decided from the provider's reference or
the source that writes the shape: fixed where rxllm misread. Bodies are written by hand
from that source, replayed whole and cut at arbitrary byte boundaries, and over a
loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, ToolRequest
from tests.support import ServeBody, log_messages, replay_every_way, summarize

# -- Responses: calls added at one output index, argument events without an item id ----

# The Responses reference names each argument event's item (`item_id`) and its
# `output_index`; bbff80d read a call added at the output index of another call still
# open there (Helicone's AI Gateway writes every item at output index 0) at an index of
# its own, where the events naming it by its id go. A writer that leaves the id out of
# the argument events adds each call before its arguments: its deltas are the latest
# call's still open there, and a done event of one of several open calls is left to the
# call's `output_item.done`, which names it.
_CALLS = [
    ("call_wX3pQ9", "get_weather", ['{"city":', ' "Paris"}']),
    ("call_tZ7mK2", "get_time", ['{"tz":', ' "CET"}']),
]
_WANT = [("call_wX3pQ9", {"city": "Paris"}), ("call_tZ7mK2", {"tz": "CET"})]


def _events(*payloads: dict[str, Any]) -> bytes:
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


def _call_item(n: int, status: str, arguments: str) -> dict[str, Any]:
    call_id, name, _ = _CALLS[n]
    return {
        "id": f"fc_{n}",
        "type": "function_call",
        "status": status,
        "name": name,
        "call_id": call_id,
        "arguments": arguments,
    }


def _stacked_calls(order: str, whole: bool) -> bytes:
    """Both calls at output index 0, argument events without `item_id`: the second added
    while the first is open, after the first's deltas; done events in `order` ("first":
    the first call's first; "second": the second's); `whole`: the done events carry the
    arguments, else they leave them out (empty) and the deltas are the arguments."""

    def added(n: int) -> dict[str, Any]:
        return {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": _call_item(n, "in_progress", ""),
        }

    def deltas(n: int) -> list[dict[str, Any]]:
        return [
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": piece}
            for piece in _CALLS[n][2]
        ]

    def done(n: int) -> list[dict[str, Any]]:
        arguments = "".join(_CALLS[n][2]) if whole else ""
        return [
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": _call_item(n, "completed", arguments),
            },
        ]

    ends = [*done(0), *done(1)] if order == "first" else [*done(1), *done(0)]
    response = {"id": "resp_9", "object": "response", "model": "gpt-4o-mini"}
    return _events(
        {"type": "response.created", "response": response | {"status": "in_progress"}},
        added(0),
        *deltas(0),
        added(1),
        *deltas(1),
        *ends,
        {
            "type": "response.completed",
            "response": response
            | {
                "status": "completed",
                "output": [_call_item(n, "completed", "".join(_CALLS[n][2])) for n in (0, 1)],
                "usage": {"input_tokens": 40, "output_tokens": 22, "total_tokens": 62},
            },
        },
    )


@pytest.mark.parametrize(
    ("order", "whole"),
    [("first", False), ("second", False), ("second", True), ("first", True)],
    ids=["deltas", "deltas_second_done_first", "second_done_first", "guard_in_order"],
)
def test_calls_at_one_output_index_with_argument_events_without_item_ids(
    order: str, whole: bool
) -> None:
    """Each call with its own arguments. Before, every event without an id went to the
    call first added there: the second call's deltas joined the first's ('arguments of
    tool call 'call_wX3pQ9' ('get_weather') are not valid JSON (Extra data: char 17 of
    30)'), and the second's done event, first, gave the first call its arguments."""
    events = replay_every_way(_stacked_calls(order, whole), "openai-responses")
    summary = summarize(events)
    assert summary.terminal == "done" and summary.stop_reason == "tool_use"
    requested = {e.call_id: e.arguments for e in events if isinstance(e, ToolRequest)}
    assert requested == dict(_WANT)


async def test_calls_at_one_output_index_without_item_ids_over_http(
    serve_body: ServeBody,
) -> None:
    base_url = await serve_body(_stacked_calls("second", whole=False))
    async with rxllm.provider("openai-responses", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="gpt-4o-mini", messages=[rxllm.Message.user("hi")])
        )
    assert isinstance(record.terminal, Done), record.terminal
    assert sorted((c.call_id, c.arguments) for c in record.tool_calls) == sorted(_WANT)


# -- chat: reasoning_details tested for None first on every delta ------------------------


def test_an_empty_reasoning_details_object_is_still_read_as_one_detail() -> None:
    """The chat wire tests a delta's `reasoning_details` against None before its class
    (most deltas have none); an empty object `{}` is still one detail, as it was read
    before that change (a detail with no event, logged), not skipped as no detail as a
    truthiness test would."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    body = "".join(
        f"data: {json.dumps(c)}\n\n"
        for c in (
            chunk({"role": "assistant", "reasoning_details": {}}),
            chunk({"content": "hi"}),
            chunk({}, "stop"),
        )
    )
    with log_messages() as logs:
        events = replay_every_way((body + "data: [DONE]\n\n").encode(), "openai")
    assert [(e.type, getattr(e, "text", None)) for e in events] == [("text", "hi"), ("done", None)]
    assert "a reasoning detail of type None has no event" in logs


# -- chat: OpenCode Zen's cost chunk after a usage chunk of its own, and without its type -

# anomalyco/opencode packages/console/app/src/routes/zen/util/handler.ts writes the
# upstream's stream through and, once it has ended, one chunk more: buildCostChunk
# (provider/provider.ts) writes, for the chat format, `{id, object:
# "chat.completion.chunk", created, model, choices: [], cost}` (the identity echoed from
# the stream, no `x-opencode-type`); new-api's OpenCode Go adaptor tests (relay/channel/
# opencodego) replay it as `{"choices": [], "x-opencode-type": "inference-cost", "cost":
# "0", "normalizedUsage": {...}}` after the upstream's own usage chunk (`choices: []`).
_ZEN = {"id": "chatcmpl-zen7", "object": "chat.completion.chunk", "created": 1783000000}
_ZEN_USAGE = {"prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25}


def _zen(choices: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {**_ZEN, "model": "glm-5.2", "choices": choices, **more}


def _zen_turn(cost_chunk: dict[str, Any], usage_apart: bool) -> bytes:
    finish = {"index": 0, "delta": {}, "finish_reason": "stop"}
    chunks = [_zen([{"index": 0, "delta": {"role": "assistant", "content": "OK"}}])]
    if usage_apart:
        chunks += [_zen([finish]), _zen([], usage=_ZEN_USAGE)]
    else:
        chunks.append(_zen([finish], usage=_ZEN_USAGE))
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in [*chunks, cost_chunk])
    return (body + "data: [DONE]\n\n").encode()


_TYPED = {
    "choices": [],
    "x-opencode-type": "inference-cost",
    "cost": "0.0000315",
    "normalizedUsage": {"inputTokens": 21, "outputTokens": 4},
}
_AS_WRITTEN_NOW = _zen([], cost="0.0000315")


@pytest.mark.parametrize(
    ("cost_chunk", "usage_apart"),
    [(_TYPED, True), (_AS_WRITTEN_NOW, True), (_AS_WRITTEN_NOW, False), (_TYPED, False)],
    ids=["typed_after_usage_chunk", "untyped_after_usage_chunk", "untyped", "guard_typed"],
)
def test_opencode_zen_cost_after_the_usage_chunk_and_without_its_type(
    cost_chunk: dict[str, Any], usage_apart: bool
) -> None:
    """The turn's usage with its cost, the latest usage. Before, a cost chunk after a
    usage chunk of its own came after the turn had ended there (ignored as a chunk after
    the terminal event), and one without `x-opencode-type` was logged as having no
    event: no cost either way."""
    events = replay_every_way(_zen_turn(cost_chunk, usage_apart), "openai")
    summary = summarize(events)
    assert summary.text == "OK" and summary.terminal == "done"
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (21, 4)
    assert summary.usage.cost_usd == pytest.approx(0.0000315)


async def test_opencode_zen_cost_after_the_usage_chunk_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_zen_turn(_AS_WRITTEN_NOW, usage_apart=True))
    async with rxllm.provider("openai", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="glm-5.2", messages=[rxllm.Message.user("hi")])
        )
    assert isinstance(record.terminal, Done), record.terminal
    assert record.usage is not None and record.usage.cost_usd == pytest.approx(0.0000315)
