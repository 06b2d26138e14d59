"""Tool-call argument shapes real servers send, per wire, made by hand from each wire's
reference and the compatible servers named beside them; ids and values are made up.
Every body is replayed whole and cut at arbitrary byte boundaries, and each wire once
end to end over a loopback server.

The contract (DESIGN.md, tool arguments): a `tool_request` only for a complete JSON
object; anything else ends the stream with `error(kind="malformed_tool_arguments")`
naming the provider, the call id and the tool; a call the protocol marks complete with
no arguments at all is `{}`; nothing is invented, wrapped or cut.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Event, Failed, ToolRequest
from tests.providers import test_anthropic_shapes as anth
from tests.providers import test_openai_responses_shapes as resp
from tests.providers import test_probe_google as gem
from tests.providers.test_google import gid
from tests.providers.test_probe_openai_chat import _chunk, _sse
from tests.support import ServeBody, replay_every_way, summarize

Call = tuple[str, str, dict[str, Any]]

# Numbers JSON holds that a float would change: Python's json reads the integer exactly
# and the decimal to the nearest double, as the tool would read them itself.
BIG = '{"n": 123456789012345678901234567890, "f": 0.1000000000000000055511151231257827}'
BIG_READ = {"n": 123456789012345678901234567890, "f": 0.1}


def calls(events: list[Event]) -> list[Call]:
    return summarize(events).tool_calls


def malformed(events: list[Event], provider: str, call_id: str, name: str) -> None:
    """The stream ended in `malformed_tool_arguments` naming the call, and dispatched
    nothing."""
    assert not any(isinstance(ev, ToolRequest) for ev in events)
    last = events[-1]
    assert isinstance(last, Failed) and last.error.kind == "malformed_tool_arguments"
    assert last.error.provider == provider
    assert repr(call_id) in last.error.message and repr(name) in last.error.message


# ------------------------------------------------------------------ OpenAI chat
# Reference: `choices[].delta.tool_calls[]` {index, id, type, function: {name, arguments}}
# with `arguments` a string of JSON text streamed in pieces (openai-python's
# `ChoiceDeltaToolCallFunction.arguments: Optional[str]`).

CHAT_CALL = {"index": 0, "id": "call_1", "type": "function"}


def chat(*pieces: Any, finish: str | None = "tool_calls") -> bytes:
    """One call `f` whose `arguments` arrive as `pieces`, the first beside its name."""
    first, *rest = pieces
    chunks = [
        _chunk({"tool_calls": [{**CHAT_CALL, "function": {"name": "f", "arguments": first}}]})
    ]
    chunks += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in rest]
    if finish:
        chunks.append(_chunk({}, finish))
    return _sse(*chunks)


@pytest.mark.parametrize(
    ("pieces", "arguments"),
    [
        # Ollama sends a call whole, `arguments` an object (ollama/ollama#7963's bodies);
        # llama.cpp and TGI have too: the object is the arguments, `{}` included.
        (({"city": "Paris", "days": [1, 2]},), {"city": "Paris", "days": [1, 2]}),
        (({},), {}),
        # Complete with no arguments at all: null, "", whitespace, or "{}" itself.
        ((None,), {}),
        (("",), {}),
        ((" \n",), {}),
        (("{}",), {}),
        (("", "{}"), {}),
        # Pieces cut inside a \\u escape, between the halves of a surrogate pair,
        # inside a number and inside `true`: joined before reading.
        (('{"s": "\\u00', 'e9 \\ud83d', '\\ude00", "n": -12', '.5e-', '3, "b": tr', "ue}"),
         {"s": "é 😀", "n": -0.0125, "b": True}),
        # Duplicate keys: the last wins, as Python's json (and JSON.parse) reads them.
        (('{"a": 1, "a": 2}',), {"a": 2}),
        ((BIG[:9], BIG[9:40], BIG[40:]), BIG_READ),
    ],
)  # fmt: skip
def test_chat_arguments_read_as_json_reads_them(
    pieces: tuple[Any, ...], arguments: dict[str, Any]
) -> None:
    assert calls(replay_every_way(chat(*pieces), "openai")) == [("call_1", "f", arguments)]


@pytest.mark.parametrize(
    "pieces",
    [
        ("null",),  # a JSON null is no object, and no "no arguments" either
        ('"{\\"a\\": 1}"',),  # a JSON string, even one holding an object: never unwrapped
        ("[1, 2]",),  # an array: never wrapped
        ('{"a": ', "1"),  # cut
        ('{"a": 1}', '{"a": 1}'),  # a server that repeats the whole at the end
        ('{"a": NaN}',),  # not JSON
    ],
)
def test_chat_arguments_that_are_no_json_object_are_malformed(pieces: tuple[str, ...]) -> None:
    malformed(replay_every_way(chat(*pieces), "openai"), "openai", "call_1", "f")


@pytest.mark.parametrize("arguments", [[], 0, False, [1], 1, True, "[]"])
def test_chat_arguments_that_are_neither_text_nor_an_object_are_never_no_arguments(
    arguments: Any,
) -> None:
    # Before: `[]`, `0` and `false` (falsy) were skipped like a missing value, and the
    # call was dispatched with `{}`: arguments invented. Every value that is no JSON
    # object now ends the stream, nothing dispatched (a wrong type in the field is a
    # chunk that cannot be read, as `[1]` already was; JSON text that is no object is
    # malformed arguments).
    events = replay_every_way(chat(arguments), "openai")
    assert not any(isinstance(ev, ToolRequest) for ev in events)
    assert isinstance(events[-1], Failed)
    expected = "malformed_tool_arguments" if isinstance(arguments, str) else "protocol"
    assert events[-1].error.kind == expected


def test_chat_name_after_the_first_argument_piece_and_calls_interleaved_by_index() -> None:
    # vercel/ai#14722: a call's name in a later delta than its first arguments; two calls
    # streamed alternately by index (each delta names its index, as the reference says).
    data = _sse(
        _chunk({"tool_calls": [{**CHAT_CALL, "function": {"arguments": '{"a": '}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                                "function": {"name": "g", "arguments": '{"b"'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "1"}}]}),
        _chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': 2}'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
        _chunk({}, "tool_calls"),
    )  # fmt: skip
    assert sorted(calls(replay_every_way(data, "openai"))) == [
        ("call_1", "f", {"a": 1}),
        ("call_2", "g", {"b": 2}),
    ]


def test_chat_done_without_a_finish_completes_a_call_without_arguments() -> None:
    # Snowflake ends its stream with `[DONE]` and no finish reason (its capture): the
    # turn is complete, and a call whose arguments stayed empty is a call without
    # parameters, as it is at a finish. Before: "arguments ... are missing", an error,
    # while the same call with arguments was dispatched.
    data = chat("", finish=None)
    assert calls(replay_every_way(data, "openai")) == [("call_1", "f", {})]
    assert calls(replay_every_way(chat('{"a": 1}', finish=None), "openai")) == [
        ("call_1", "f", {"a": 1})
    ]
    # Still judged: arguments cut before `[DONE]` are malformed, never completed.
    malformed(replay_every_way(chat('{"a": ', finish=None), "openai"), "openai", "call_1", "f")


# ------------------------------------------------------------------ OpenAI Responses
# Reference: `response.function_call_arguments.delta` {output_index, delta} and
# `.done` {output_index, arguments: the full text}; the `function_call` item's
# `arguments` in `output_item.done` and in the completed response.

RESP_CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}


def responses(deltas: list[str], done: Any, item_done: Any = ..., args_done: bool = True) -> bytes:
    item_done = done if item_done is ... else item_done
    final = {**RESP_CALL, "arguments": item_done, "status": "completed"}
    events: list[dict[str, Any]] = [
        resp.CREATED,
        resp.added(0, {**RESP_CALL, "arguments": "", "status": "in_progress"}),
    ]
    events += [
        {"type": "response.function_call_arguments.delta", "output_index": 0,
         "item_id": "fc_1", "delta": piece}
        for piece in deltas
    ]  # fmt: skip
    if args_done:
        events.append(
            {"type": "response.function_call_arguments.done", "output_index": 0,
             "item_id": "fc_1", "arguments": done}
        )  # fmt: skip
    events.append(resp.done(0, final))
    completed = resp.COMPLETED["response"]
    events.append({**resp.COMPLETED, "response": {**completed, "output": [final]}})
    return resp.wire(*events)


@pytest.mark.parametrize(
    ("deltas", "done", "item_done", "args_done", "arguments"),
    [
        # The done event's text is authoritative over the deltas, either way round.
        (['{"a": ', "1}"], '{"a": 2}', ..., True, {"a": 2}),
        (['{"a": '], '{"a": 1}', ..., True, {"a": 1}),
        # Without `function_call_arguments.done`, the item's done is the first to say.
        (['{"a": 1}'], '{"a": 3}', ..., False, {"a": 3}),
        # The first done wins over a later item that says otherwise.
        (['{"a": 1}'], '{"a": 2}', '{"a": 3}', True, {"a": 2}),
        # An object where the text belongs (compatible servers), taken as that object.
        ([], {"a": [1, 2]}, ..., True, {"a": [1, 2]}),
        # An empty or null done text (a proxy's) leaves the deltas, here cut inside a
        # surrogate pair, as the arguments.
        (['{"s": "\\ud8', '3d\\ude00"}'], "", ..., True, {"s": "😀"}),
        (['{"a": 1}'], None, ..., True, {"a": 1}),
        ([], "", ..., True, {}),
        ([], "  ", ..., True, {}),
        ([], BIG, ..., True, BIG_READ),
    ],
)
def test_responses_arguments_the_first_done_says(
    deltas: list[str], done: Any, item_done: Any, args_done: bool, arguments: dict[str, Any]
) -> None:
    data = responses(deltas, done, item_done, args_done)
    assert calls(replay_every_way(data, "openai-responses")) == [("call_1", "f", arguments)]


@pytest.mark.parametrize(
    ("deltas", "done"),
    [(["null"], "null"), ([], '"x"'), ([], "[1]"), (['{"a": 1}'], '{"a": ')],
)
def test_responses_done_text_that_is_no_json_object_is_malformed(
    deltas: list[str], done: str
) -> None:
    events = replay_every_way(responses(deltas, done), "openai-responses")
    malformed(events, "openai-responses", "call_1", "f")


# ------------------------------------------------------------------ Anthropic
# Reference (fine-grained streaming / streaming messages): `content_block_start` with a
# `tool_use` block whose `input` is `{}`, then `input_json_delta` pieces (the first is
# often `""`), then `content_block_stop`.


def anthropic(block_input: Any, *pieces: str, reason: str = "tool_use", stop: bool = True) -> bytes:
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": block_input}
    events = [anth.START, anth.start(0, block)]
    events += [anth.delta(0, {"type": "input_json_delta", "partial_json": p}) for p in pieces]
    if stop:
        events.append(anth.stop(0))
    return anth.sse(*events, anth.end(reason), anth.STOP)


@pytest.mark.parametrize(
    ("block_input", "pieces", "arguments"),
    [
        ({}, ("", '{"a": ', "1}"), {"a": 1}),
        ({}, ("",), {}),  # an empty first fragment alone: the block's `{}`
        ({}, (), {}),
        # A complete input at the start (a relay's, or a block sent whole): that input,
        # an empty fragment after it changing nothing.
        ({"a": 1, "b": [1, 2]}, (), {"a": 1, "b": [1, 2]}),
        ({"a": 1}, ("",), {"a": 1}),
        ({}, ('{"s": "\\ud83d', '\\ude00 \\u00', 'e9", "n": 1', "2, ", '"t": tr', "ue}"),
         {"s": "😀 é", "n": 12, "t": True}),
        ({}, ('{"a": 1, "a": 2}',), {"a": 2}),
        ({}, (BIG[:20], BIG[20:]), BIG_READ),
    ],
)  # fmt: skip
def test_anthropic_input_as_streamed_or_as_started(
    block_input: Any, pieces: tuple[str, ...], arguments: dict[str, Any]
) -> None:
    data = anthropic(block_input, *pieces)
    assert calls(replay_every_way(data, "anthropic")) == [("toolu_1", "f", arguments)]


@pytest.mark.parametrize(
    ("block_input", "pieces", "reason", "stop"),
    [
        ({}, ("null",), "tool_use", True),
        ({}, ("[1, 2]",), "tool_use", True),
        ([1], (), "tool_use", True),  # a started input that is no object: not wrapped
        ({}, ('{"a": ',), "max_tokens", False),  # cut by the limit
        ({}, (), "max_tokens", False),  # cut before any input: missing, not `{}`
    ],
)
def test_anthropic_input_that_is_no_json_object_is_malformed(
    block_input: Any, pieces: tuple[str, ...], reason: str, stop: bool
) -> None:
    data = anthropic(block_input, *pieces, reason=reason, stop=stop)
    malformed(replay_every_way(data, "anthropic"), "anthropic", "toolu_1", "f")


@pytest.mark.parametrize("reason", ["max_tokens", "tool_use", "end_turn"])
@pytest.mark.parametrize("stop", [True, False], ids=["block stop", "no block stop"])
async def test_anthropic_a_malformed_call_ends_the_turn_with_its_usage(
    serve_body: ServeBody, reason: str, stop: bool
) -> None:
    # Invalid input that its `content_block_stop` closed, then `message_delta` with the
    # stop and the usage. Before: the error came at the block stop, the usage never (the
    # turn's counts lost) and a max_tokens cut unnamed, where the same call without its
    # block stop (the capture max_tokens_truncated_tool_json.sse) reported both.
    data = anthropic({}, '{"filename": "a.txt", "lines": ["Roses", "Vio', reason=reason, stop=stop)
    base_url = await serve_body(data)
    async with rxllm.provider("anthropic", base_url=base_url, api_key="k", max_attempts=1) as p:
        request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        over_http = [event async for event in p.astream(request)]
    for events in (over_http, replay_every_way(data, "anthropic")):
        assert [event.type for event in events] == ["tool_start", "usage", "error"]
        malformed(events, "anthropic", "toolu_1", "f")
        usage = summarize(events).usage
        assert usage is not None and (usage.input_tokens, usage.output_tokens) == (10, 5)
        error = events[-1].error  # type: ignore[union-attr]
        cut = reason == "max_tokens"
        assert ("the turn stopped (max_tokens)" in error.message) is cut
        assert error.code == ("max_tokens" if cut else None)


# ------------------------------------------------------------------ Gemini
# Reference: `Part.functionCall` {id?, name, args: Struct}; Vertex's streamed arguments
# (`FunctionCallingConfig.streamFunctionCallArguments`): `partialArgs` [{jsonPath,
# stringValue | numberValue | boolValue | nullValue}] with `willContinue` until the last
# part of the call.


def fc(**call: Any) -> dict[str, Any]:
    return {"functionCall": call}


def test_gemini_args_null_is_a_call_without_arguments() -> None:
    # proto3 JSON: "null is an accepted value for all field types and treated as the
    # default value of the corresponding field type": `args: null` is no `args`.
    # Before: "arguments ... are missing", an error.
    data = gem.sse(gem.chunk(fc(name="f", args=None), finish="STOP"))
    assert calls(replay_every_way(data, "google")) == [(gid("f", 0), "f", {})]


def test_gemini_whole_args_keep_their_numbers() -> None:
    data = gem.sse(gem.chunk(fc(name="f", args=json.loads(BIG)), finish="STOP"))
    assert calls(replay_every_way(data, "google")) == [(gid("f", 0), "f", BIG_READ)]


def test_gemini_partial_args_string_streamed_in_pieces() -> None:
    data = gem.sse(
        gem.chunk(fc(name="f", args={"q": "he"}, willContinue=True)),
        gem.chunk(fc(partialArgs=[{"jsonPath": "$.q", "stringValue": "llo "}], willContinue=True)),
        gem.chunk(fc(partialArgs=[{"jsonPath": "$.q", "stringValue": "😀"},
                                  {"jsonPath": "$.n", "numberValue": 3}], willContinue=True)),
        gem.chunk(fc()),  # the empty terminator: the call is complete
        gem.chunk({"text": ""}, finish="STOP"),
    )  # fmt: skip
    assert calls(replay_every_way(data, "google")) == [
        (gid("f", 0), "f", {"q": "hello 😀", "n": 3})
    ]


@pytest.mark.parametrize(
    "chunks",
    [
        [gem.chunk(fc(name="f", args=[1]), finish="STOP")],
        [gem.chunk(fc(name="f", args='{"a": 1}'), finish="STOP")],  # text is no Struct
        # Still continuing when the turn finished: the provider said more was coming.
        [
            gem.chunk(fc(name="f", willContinue=True)),
            gem.chunk(fc(partialArgs=[{"jsonPath": "$.q", "stringValue": "a"}], willContinue=True),
                      finish="STOP"),
        ],
    ],
)  # fmt: skip
def test_gemini_args_that_are_no_object_or_never_end_are_malformed(
    chunks: list[dict[str, Any]],
) -> None:
    malformed(replay_every_way(gem.sse(*chunks), "google"), "google", gid("f", 0), "f")


# ------------------------------------------------------------------ over HTTP


async def _record(serve_body: ServeBody, provider: str, body: bytes) -> rxllm.StreamRecord:
    base_url = await serve_body(body)
    async with rxllm.provider(provider, base_url=base_url, api_key="k", max_attempts=1) as p:
        return await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))


@pytest.mark.parametrize(
    ("provider", "body", "call"),
    [
        ("openai", chat(None), ("call_1", "f", {})),
        ("openai", chat("", finish=None), ("call_1", "f", {})),
        ("openai-responses", responses(['{"a": 1}'], '{"a": 2}'), ("call_1", "f", {"a": 2})),
        ("anthropic", anthropic({"a": 1}, ""), ("toolu_1", "f", {"a": 1})),
        (
            "google",
            gem.sse(gem.chunk(fc(name="f", args=None), finish="STOP")),
            (gid("f", 0), "f", {}),
        ),
    ],
)
async def test_each_wire_over_a_loopback_server(
    serve_body: ServeBody, provider: str, body: bytes, call: Call
) -> None:
    rec = await _record(serve_body, provider, body)
    assert [(c.call_id, c.name, c.arguments) for c in rec.tool_calls] == [call]
    assert rec.terminal.type == "done"


async def test_no_arguments_invented_over_a_loopback_server(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, "openai", chat([]))
    assert rec.tool_calls == [] and rec.terminal.type == "error"
