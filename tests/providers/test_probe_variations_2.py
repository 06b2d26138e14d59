"""Every capture rewritten in the shapes other servers of its wire send give the
recording's events (the second probe; `test_probe_variations` varies the SSE framing).

Chat: `role` in every delta, a first chunk `choices: []` with `usage: null`, no `delta`
on the finish chunk, no `index` on the choice (of a one-choice stream), no `type` on any
piece of a call, a call's arguments whole in its first piece then `""` pieces, the
finish on a chunk of its own with `delta: {}`, the usage on the finish chunk,
`system_fingerprint` changing mid-stream, `obfuscation` padding. Responses: no
`sequence_number`, no `.done` events or no `output_item.done` (the terminal response
then holds the items as the done events had them), `response.in_progress` repeated, no
`content_part.added`, a terminal `output` that leaves out what streamed. Anthropic:
`message_delta` without `usage`, no `content_block_stop` for the last block, a text
block whole in its `content_block_start`, `signature_delta` split in two. Gemini: the
finish in a chunk of its own with an empty text part, `usageMetadata` on every chunk
growing, `modelVersion`/`responseId` only on the first chunk, empty text parts beside
real ones, `index: 0` on candidates.

"The same events" reads text and plain reasoning as one run each: a block sent whole
is the deltas' text in one piece. Where a variant means something else, the test says
what, with its reference.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import rxllm
from rxllm.events import Event, ReasoningDelta, TextDelta
from tests.hypothesis_support import outcome
from tests.providers.test_probe_variations import WIRES, Frames, frames_of, normalized, sse
from tests.support import CAPTURES, HAVE_CAPTURES

Items = list[tuple[str, Any]]  # (SSE event name, JSON value, or the data as is: [DONE])
Variant = Callable[[Items], Items]


def provider_of(path: Path) -> str:
    """The provider that reads a capture: its folder's, but the Responses relays'."""
    if path.name.startswith("responses_api"):
        return "openai-responses"
    return "google" if path.parent.name == "gemini" else path.parent.name


def parsed(frames: Frames) -> Items:
    out: Items = []
    for name, data in frames:
        try:
            out.append((name, json.loads(data)))
        except ValueError:
            out.append((name, data))
    return out


def written(items: Items) -> Frames:
    return [(name, v if isinstance(v, str) else json.dumps(v)) for name, v in items]


def kind(value: Any) -> str:
    return str(value.get("type", "")) if isinstance(value, dict) else ""


# -- chat ----------------------------------------------------------------------------


def chunks(items: Items) -> Iterator[dict[str, Any]]:
    for _, value in items:
        if isinstance(value, dict) and isinstance(value.get("choices"), list):
            yield value


def choices(items: Items) -> Iterator[dict[str, Any]]:
    for chunk in chunks(items):
        yield from chunk["choices"]


def calls(items: Items) -> Iterator[dict[str, Any]]:
    for choice in choices(items):
        yield from (choice.get("delta") or {}).get("tool_calls") or ()


def role_everywhere(items: Items) -> Items:
    for choice in choices(items):
        if isinstance(choice.get("delta"), dict):
            choice["delta"].setdefault("role", "assistant")
    return items


def leading_empty_chunk(items: Items) -> Items:
    first = next(chunks(items))
    lead = {k: first[k] for k in ("id", "object", "created", "model") if k in first}
    return [("message", {**lead, "choices": [], "usage": None}), *items]


def finish_without_delta(items: Items) -> Items:
    for choice in choices(items):
        if choice.get("finish_reason") and choice.get("delta") == {}:
            del choice["delta"]
    return items


def choice_without_index(items: Items) -> Items:
    """Only a one-choice stream: without an index, n > 1 choices are one."""
    if any(choice.get("index") for choice in choices(items)):
        return items
    for choice in choices(items):
        choice.pop("index", None)
    return items


def calls_without_type(items: Items) -> Items:
    """No `type` on any piece of a call (Mistral's capture), the first included: the
    continuations of OpenAI's already have none."""
    for call in calls(items):
        call.pop("type", None)
    return items


def arguments_whole_first(items: Items) -> Items:
    whole: dict[Any, str] = {}
    for call in calls(items):
        arguments = (call.get("function") or {}).get("arguments")
        if isinstance(arguments, str):
            whole[call.get("index")] = whole.get(call.get("index"), "") + arguments
    for call in calls(items):
        function = call.get("function") or {}
        if isinstance(function.get("arguments"), str):
            function["arguments"] = whole.pop(call.get("index"), "")
    return items


def finish_apart(items: Items) -> Items:
    """A chunk that says something and finishes, as two: the words, then `delta: {}`
    with the finish (and the usage, where it came on it)."""
    out: Items = []
    for name, value in items:
        one = list(choices([(name, value)]))
        delta = one[0].get("delta") or {} if len(one) == 1 else {}
        if any(v not in (None, "", [], "assistant") for v in delta.values()) and one[0].get(
            "finish_reason"
        ):
            words = copy.deepcopy(value)
            words["choices"][0]["finish_reason"] = None
            words.pop("usage", None)
            finish = copy.deepcopy(value)
            finish["choices"][0]["delta"] = {}
            out += [(name, words), (name, finish)]
        else:
            out.append((name, value))
    return out


def usage_on_finish(items: Items) -> Items:
    """The usage-only chunk after the finish moved onto the (last) finish chunk."""
    at = {id(chunk): i for i, (_, chunk) in enumerate(items)}
    finishes = [c for c in chunks(items) if any(ch.get("finish_reason") for ch in c["choices"])]
    usages = [c for c in chunks(items) if not c["choices"] and isinstance(c.get("usage"), dict)]
    if finishes and usages and at[id(usages[-1])] > at[id(finishes[-1])]:
        finishes[-1]["usage"] = usages[-1]["usage"]
        del items[at[id(usages[-1])]]
    return items


def fingerprint_changing(items: Items) -> Items:
    every = list(chunks(items))
    for number, chunk in enumerate(every):
        chunk["system_fingerprint"] = "fp_a1b2c3" if number < len(every) // 2 else "fp_d4e5f6"
    return items


def obfuscation(items: Items) -> Items:
    for number, chunk in enumerate(chunks(items)):
        chunk["obfuscation"] = "xQ9z"[: 1 + number % 4]
    return items


# -- Responses -------------------------------------------------------------------------

TERMINALS = ("response.completed", "response.incomplete", "response.failed")


def no_sequence_number(items: Items) -> Items:
    for _, value in items:
        if isinstance(value, dict):
            value.pop("sequence_number", None)
    return items


def without_done(dropped: Callable[[str], bool]) -> Variant:
    """The events `dropped` names left out; the terminal response holds each item as
    its `output_item.done` had it, as a server that sends no done events gives them."""

    def change(items: Items) -> Items:
        done = {
            v["output_index"]: v["item"]
            for _, v in items
            if kind(v) == "response.output_item.done" and "output_index" in v
        }
        for _, value in items:
            output = (
                (value.get("response") or {}).get("output") if kind(value) in TERMINALS else None
            )
            for index, item in done.items() if isinstance(output, list) else ():
                if index < len(output):
                    output[index] = item
        return [(name, v) for name, v in items if not dropped(kind(v))]

    return change


def in_progress_repeated(items: Items) -> Items:
    at = [i for i, (_, v) in enumerate(items) if kind(v) == "response.in_progress"]
    if not at:
        return items
    again = items[at[0]]
    middle = (at[0] + len(items)) // 2
    return [*items[: at[0] + 1], again, *items[at[0] + 1 : middle], again, *items[middle:]]


def no_part_added(items: Items) -> Items:
    return [(name, v) for name, v in items if kind(v) != "response.content_part.added"]


def terminal_output_empty(items: Items) -> Items:
    for _, value in items:
        if kind(value) in TERMINALS and isinstance(value.get("response"), dict):
            value["response"]["output"] = []
    return items


# -- Anthropic -------------------------------------------------------------------------


def delta_without_usage(items: Items) -> Items:
    for _, value in items:
        if kind(value) == "message_delta":
            value.pop("usage", None)
    return items


def no_last_block_stop(items: Items) -> Items:
    ends = [i for i, (_, v) in enumerate(items) if kind(v) == "message_delta"]
    stops = [
        i
        for i, (_, v) in enumerate(items[: ends[0]] if ends else ())
        if kind(v) == "content_block_stop"
    ]
    if stops:
        del items[stops[-1]]
    return items


def text_whole_in_start(items: Items) -> Items:
    """Each text block without citations sent whole in its `content_block_start`."""
    texts: dict[int, list[str]] = {}
    cited: set[int] = set()
    for _, value in items:
        if kind(value) == "content_block_start" and value["content_block"]["type"] == "text":
            texts[value["index"]] = []
        elif kind(value) == "content_block_delta" and value["index"] in texts:
            if value["delta"]["type"] == "text_delta":
                texts[value["index"]].append(value["delta"]["text"])
            else:
                cited.add(value["index"])
    whole = texts.keys() - cited
    out: Items = []
    for name, value in items:
        if kind(value) == "content_block_start" and value["index"] in whole:
            block = value["content_block"]
            block["text"] = block.get("text", "") + "".join(texts[value["index"]])
        elif kind(value) == "content_block_delta" and value["index"] in whole:
            continue
        out.append((name, value))
    return out


def signature_split(items: Items) -> Items:
    out: Items = []
    for name, value in items:
        delta = value.get("delta") if kind(value) == "content_block_delta" else None
        if delta and delta.get("type") == "signature_delta":
            whole = delta["signature"]
            for half in (whole[: len(whole) // 2], whole[len(whole) // 2 :]):
                out.append((name, {**value, "delta": {**delta, "signature": half}}))
        else:
            out.append((name, value))
    return out


# -- Gemini ----------------------------------------------------------------------------


def candidates(value: Any) -> list[dict[str, Any]]:
    return value.get("candidates") or [] if isinstance(value, dict) else []


def finish_alone(items: Items) -> Items:
    out: Items = []
    for name, value in items:
        finish = None
        for candidate in candidates(value):
            finish = candidate.pop("finishReason", None) or finish
        out.append((name, value))
        if finish:
            empty = {"parts": [{"text": ""}], "role": "model"}
            last = {"candidates": [{"content": empty, "finishReason": finish, "index": 0}]}
            keys = ("usageMetadata", "modelVersion", "responseId")
            out.append((name, {**last, **{k: value[k] for k in keys if k in value}}))
    return out


def usage_growing(items: Items) -> Items:
    """Every chunk with the counts so far, the last one's the recording's."""
    final = items[-1][1].get("usageMetadata")
    if not isinstance(final, dict):
        return items
    for number, (_, value) in enumerate(items[:-1]):
        output = final.get("candidatesTokenCount", 0) * (number + 1) // len(items)
        prompt = final.get("promptTokenCount", 0)
        counts = {"promptTokenCount": prompt, "totalTokenCount": prompt + output}
        value["usageMetadata"] = {**counts, **({"candidatesTokenCount": output} if output else {})}
    return items


def ids_on_first_only(items: Items) -> Items:
    for _, value in items[1:]:
        value.pop("modelVersion", None)
        value.pop("responseId", None)
    return items


def empty_text_beside(items: Items) -> Items:
    for _, value in items:
        for candidate in candidates(value):
            parts = (candidate.get("content") or {}).get("parts")
            if parts:
                candidate["content"]["parts"] = [p for part in parts for p in ({"text": ""}, part)]
    return items


def candidate_index(items: Items) -> Items:
    for _, value in items:
        for candidate in candidates(value):
            candidate.setdefault("index", 0)
    return items


VARIANTS: dict[str, dict[str, Variant]] = {
    "chat": {
        "role in every delta": role_everywhere,
        "a first chunk with choices [] and usage null": leading_empty_chunk,
        "no delta on the finish chunk": finish_without_delta,
        "no index on the choice": choice_without_index,
        "no type on any piece of a call": calls_without_type,
        "arguments whole in the first piece, then empty pieces": arguments_whole_first,
        "the finish on a chunk of its own": finish_apart,
        "the usage on the finish chunk": usage_on_finish,
        "system_fingerprint changing mid-stream": fingerprint_changing,
        "obfuscation padding": obfuscation,
    },
    "responses": {
        "no sequence_number": no_sequence_number,
        "no .done events": without_done(lambda k: k.endswith(".done")),
        "no output_item.done": without_done(lambda k: k == "response.output_item.done"),
        "response.in_progress repeated": in_progress_repeated,
        "no content_part.added": no_part_added,
        "a terminal output without the streamed items": terminal_output_empty,
    },
    "anthropic": {
        "message_delta without usage": delta_without_usage,
        "no content_block_stop for the last block": no_last_block_stop,
        "text whole in content_block_start": text_whole_in_start,
        "signature_delta split in two": signature_split,
    },
    "google": {
        "the finish in a chunk of its own, an empty text part": finish_alone,
        "usageMetadata on every chunk, growing": usage_growing,
        "modelVersion and responseId only on the first chunk": ids_on_first_only,
        "empty text parts beside real parts": empty_text_beside,
        "index 0 on candidates": candidate_index,
    },
}

# Calls and reasoning items that no done event ended are ended by the terminal
# response, after what streamed on (openai_responses: "a call already started is left
# to the terminal to end"): the same events, each kind in its order.
ENDED_BY_THE_TERMINAL = {"no .done events", "no output_item.done"}


def said(events: list[Event]) -> list[dict[str, Any]]:
    """`normalized` events with each run of text, and of plain reasoning (no signature,
    no details), as one."""
    out: list[dict[str, Any]] = []
    for event, fields in zip(events, normalized(events), strict=True):
        last = out[-1] if out else None
        plain = isinstance(event, TextDelta) or (
            isinstance(event, ReasoningDelta) and event.signature is None and event.details is None
        )
        if (
            plain
            and last
            and last.get("plain")
            and {**last, "text": ""}
            == {
                **fields,
                "plain": True,
                "text": "",
            }
        ):
            last["text"] += fields["text"]
        else:
            out.append({**fields, "plain": True} if plain else fields)
    return out


def by_kind(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for fields in events:
        out.setdefault(fields["type"], []).append(fields)
    return out


def varied(path: Path, variant: str) -> Items:
    """The capture at `path` as `variant` rewrites it."""
    wire = WIRES.get(provider_of(path), "chat")
    return VARIANTS[wire][variant](parsed(frames_of(path.read_bytes())))


def cases() -> list[tuple[str, str]]:
    """Each capture with each variant of its wire that changes it."""
    paths = sorted(CAPTURES.glob("*/*.sse")) if HAVE_CAPTURES else []
    return [
        (f"{path.parent.name}/{path.stem}", variant)
        for path in paths
        for variant in VARIANTS[WIRES.get(provider_of(path), "chat")]
        if varied(path, variant) != parsed(frames_of(path.read_bytes()))
    ]


@pytest.mark.parametrize(("name", "variant"), cases())
def test_a_capture_in_another_servers_shape_gives_its_events(name: str, variant: str) -> None:
    path = CAPTURES / f"{name}.sse"
    provider = provider_of(path)
    body = path.read_bytes()
    frames = frames_of(body)
    expected, got = (
        said(outcome(body, provider)),
        said(outcome(sse(written(varied(path, variant))), provider)),
    )
    if variant == "message_delta without usage":
        # `MessageDeltaEvent.usage` is required; the SDK's message keeps message_start's
        # usage until a message_delta updates it (anthropic-sdk-python, streaming
        # `accumulate_event`): the counts are message_start's.
        [start] = [v for _, v in parsed(frames) if kind(v) == "message_start"]
        counts = start["message"]["usage"]
        [usage] = [e["usage"] for e in got if e["type"] == "usage"]
        assert (usage["input_tokens"], usage["output_tokens"]) == (
            counts["input_tokens"],
            counts["output_tokens"],
        )
        expected = [e for e in expected if e["type"] != "usage"]
        got = [e for e in got if e["type"] != "usage"]
    if variant in ENDED_BY_THE_TERMINAL:
        assert by_kind(got) == by_kind(expected)
        assert got[-1] == expected[-1]
    else:
        assert got == expected


# -- the defects the variations found ---------------------------------------------------


def frame(event: str, payload: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n"


def anthropic_turn(*blocks: list[dict[str, Any]], stop: str) -> bytes:
    """A Messages stream (the "Streaming Messages" docs' shape) of `blocks`, each the
    events of one content block, ending with `stop`."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 40, "output_tokens": 1},
    }
    events = [frame("message_start", {"type": "message_start", "message": message})]
    events += [frame(e["type"], e) for block in blocks for e in block]
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop},
        "usage": {"output_tokens": 30},
    }
    events += [frame("message_delta", delta), frame("message_stop", {"type": "message_stop"})]
    return "".join(events).encode()


def thinking_block(signatures: list[str]) -> list[dict[str, Any]]:
    def delta(d: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": 0, "delta": d}

    start = {"type": "thinking", "thinking": "", "signature": ""}
    return [
        {"type": "content_block_start", "index": 0, "content_block": start},
        delta({"type": "thinking_delta", "thinking": "Plan: greet."}),
        *(delta({"type": "signature_delta", "signature": s}) for s in signatures),
        {"type": "content_block_stop", "index": 0},
    ]


def text_block(index: int, text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


async def complete(
    serve_body: Callable[[bytes], Awaitable[str]], body: bytes
) -> rxllm.StreamRecord:
    base_url = await serve_body(body)
    async with rxllm.provider("anthropic", api_key="k", base_url=base_url) as provider:
        return await provider.complete(
            rxllm.ChatRequest(model="claude-sonnet-4-5", messages=[rxllm.Message.user("hi")])
        )


async def test_a_signature_sent_in_pieces_is_one_thinking_blocks_signature(
    serve_body: Callable[[bytes], Awaitable[str]],
) -> None:
    """A block has one signature (`ThinkingBlock.signature`); a relay that splits it
    over two `signature_delta`s made two reasoning parts of one block, each with half
    of it, and the next turn sent back two thinking blocks the API refuses."""
    body = anthropic_turn(
        thinking_block(["EqQBCkYIAx", "gCKkBsig=="]), text_block(1, "Hi"), stop="end_turn"
    )
    record = await complete(serve_body, body)
    assert record.terminal.type == "done" and record.text == "Hi"
    [part] = record.reasoning_parts
    assert (part.text, part.signature) == ("Plan: greet.", "EqQBCkYIAxgCKkBsig==")
    thinking = [p for p in record.to_message().content if isinstance(p, rxllm.ReasoningPart)]
    assert thinking == [part]


async def test_a_call_without_input_whose_block_stop_never_came_is_a_call(
    serve_body: Callable[[bytes], Awaitable[str]],
) -> None:
    """`stop_reason: "tool_use"` says the model ended its turn to call the tool: a
    `tool_use` block whose `content_block_stop` a relay left out is complete, and with
    its start's `input: {}` it is a call without parameters. It was an error
    (`malformed_tool_arguments`: "missing"); after `max_tokens` it still is one."""
    start = {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}
    call = [{"type": "content_block_start", "index": 1, "content_block": start}]
    record = await complete(
        serve_body, anthropic_turn(text_block(0, "Checking."), call, stop="tool_use")
    )
    assert record.terminal.type == "done" and record.terminal.stop_reason == "tool_use"
    assert [(c.call_id, c.name, c.arguments) for c in record.tool_calls] == [("toolu_1", "now", {})]

    cut = await complete(serve_body, anthropic_turn(call, stop="max_tokens"))
    assert cut.terminal.type == "error" and cut.terminal.error.kind == "malformed_tool_arguments"
