"""A wire value of another JSON type than the Messages and Responses streams document (a
list, an object, a number, a bool where a string or an int goes) fails no turn on a field
the turn can go without, and ends one that needs it in an error that names the field.

What each reads, as a user of Anthropic's and OpenAI's SDKs would expect:

- an id or a name of no string is none (a call's id then is the one rxllm makes, as for
  a call sent without one); a block's or a part's index of no int is none (the block
  started last, the part at 0); an event's type of no string is none (Anthropic's SSE
  name is read, as for an event without one; a Responses event is skipped, logged; an
  item of no type is one of a type unknown here, skipped, logged);
- an object or an array the turn can go without (a message's envelope, a usage,
  citations, annotations, summary parts, a response) of another type says nothing;
- what the answer is made of (a block, a delta) of another type ends the turn in a
  protocol error naming it, not in "'list' object has no attribute 'get'";
- a Responses call's arguments of another JSON type are its JSON text: an array, a
  number or a bool is no object, `malformed_tool_arguments` naming the call.

Bodies written from Anthropic's streaming reference and OpenAI's Responses streaming
events reference; each replayed at every chunking, and one of each wire served over
loopback HTTP."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

import rxllm
from rxllm.events import (
    Citation,
    Done,
    Failed,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
)
from rxllm.providers.wire_signs import json_type
from tests.support import ServeBody, replay_every_way

Frames = list[dict[str, Any]]
_NOT_STR = [["x"], {"a": 1}, 7, True]
_NOT_INT = [["x"], {"a": 1}, "1", True]
_NOT_OBJECT = [["x"], 7, "text", True]


def _sse(frames: Frames, named: bool) -> bytes:
    """Frames as SSE; `named`: each with its `event:` line, the type it was written
    with (kept when a test changes the JSON type)."""
    out = []
    for frame in frames:
        name = frame.pop("_event", frame.get("type"))
        event = f"event: {name}\n" if named else ""
        out.append(f"{event}data: {json.dumps(frame)}\n\n")
    return "".join(out).encode()


def _named(frames: Frames) -> Frames:
    """Each frame remembers its own type as its SSE name, whatever a test does to it."""
    return [{**frame, "_event": frame["type"]} for frame in frames]


def _read(events: list[Any]) -> dict[str, Any]:
    last = events[-1]
    return {
        "terminal": last.type,
        "stop": last.stop_reason if isinstance(last, Done) else None,
        "error": (last.error.kind, last.error.message) if isinstance(last, Failed) else None,
        "text": "".join(e.text for e in events if e.type == "text"),
        "calls": [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ToolRequest)],
        "server": [
            (e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)
        ],
        "results": [(e.call_id, e.name) for e in events if isinstance(e, ServerToolResult)],
        "citations": [e.url for e in events if isinstance(e, Citation)],
        "model": last.model if isinstance(last, Done) else None,
    }


# ------------------------------------------------------------------ Anthropic Messages

_MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [], "stop_reason": None,
            "usage": {"input_tokens": 3, "output_tokens": 1}}  # fmt: skip
_CITE = {"type": "web_search_result_location", "url": "https://a.example/", "title": "A",
         "cited_text": "a", "encrypted_index": "e"}  # fmt: skip


def _anthropic_frames() -> Frames:
    """A turn of the streaming reference's shapes: a server tool call and its result, a
    cited text block, a client tool call."""
    search = {"type": "server_tool_use", "id": "srvtoolu_A", "name": "web_search", "input": {}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_A",
              "content": [{"type": "web_search_result", "url": "https://a.example/",
                           "title": "A", "encrypted_content": "x"}]}  # fmt: skip
    call = {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {}}
    frames: Frames = [
        {"type": "message_start", "message": copy.deepcopy(_MESSAGE)},
        {"type": "content_block_start", "index": 0, "content_block": search},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"query": "q"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "text", "text": "", "citations": []}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "citations_delta", "citation": _CITE}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 2},
        {"type": "ping"},
        {"type": "content_block_start", "index": 3, "content_block": call},
        {"type": "content_block_delta", "index": 3,
         "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}},
        {"type": "content_block_stop", "index": 3},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return _named(frames)


_ANTHROPIC_TURN = {
    "terminal": "done",
    "stop": "tool_use",
    "error": None,
    "text": "hi",
    "calls": [("toolu_A", "get_weather", {"city": "Paris"})],
    "server": [("srvtoolu_A", "web_search", {"query": "q"})],
    "results": [("srvtoolu_A", "web_search")],
    "citations": ["https://a.example/"],
    "model": "claude-x",
}


def _anthropic(change: Callable[[Frames], object]) -> dict[str, Any]:
    frames = _anthropic_frames()
    change(frames)
    return _read(replay_every_way(_sse(frames, named=True), "anthropic"))


def test_the_anthropic_turn_as_written() -> None:
    assert _anthropic(lambda frames: None) == _ANTHROPIC_TURN


@pytest.mark.parametrize("value", _NOT_INT, ids=repr)
@pytest.mark.parametrize(
    "event", ["content_block_start", "content_block_delta", "content_block_stop"]
)
def test_an_anthropic_block_index_of_no_int_is_none(event: str, value: Any) -> None:
    """Each event of that kind without a usable index: the block started last (a start,
    the next place), as an event that names no index is read. Was: 'unhashable type'
    (a list, an object), "can only concatenate str" (a start's string), a ToolStart
    whose index is True."""

    def change(frames: Frames) -> None:
        for frame in frames:
            if frame["type"] == event:
                frame["index"] = value

    assert _anthropic(change) == _ANTHROPIC_TURN


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
def test_anthropic_ids_and_names_of_no_string_are_none(value: Any) -> None:
    """A call's id is then the one rxllm makes for a block without one; its name ''; a
    result's tool_use_id ''. Was: 'unhashable type' (a server call's id), or events
    holding the list as a call id or a name."""

    def change(frames: Frames) -> None:
        for frame in frames:
            block = frame.get("content_block", {})
            for key in ("id", "name", "tool_use_id"):
                if key in block:
                    block[key] = value

    read = _anthropic(change)
    assert read["calls"] == [("toolu_3", "", {"city": "Paris"})]
    assert read["server"] == [("srvtoolu_0", "", {"query": "q"})]
    assert read["results"] == [("", "web_search")]
    assert (read["terminal"], read["text"], read["citations"]) == (
        "done",
        "hi",
        ["https://a.example/"],
    )


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
def test_an_anthropic_event_type_of_no_string_is_its_sse_name(value: Any) -> None:
    """As an event without a `type` is read: by its `event:` line."""

    def change(frames: Frames) -> None:
        for frame in frames:
            frame["type"] = value

    assert _anthropic(change) == _ANTHROPIC_TURN


@pytest.mark.parametrize("value", _NOT_OBJECT, ids=repr)
@pytest.mark.parametrize(
    "where",
    ["message", "message.usage", "message.content", "delta.usage", "delta.delta", "citations"],
)
def test_anthropic_fields_the_turn_can_go_without(where: str, value: Any) -> None:
    """Of another type, each says nothing (logged); the blocks still say the answer. Was:
    a protocol error ("'list' object has no attribute 'get'", "'int' object is not
    iterable"). A `message_delta` that says no stop reason is a running count: the turn
    ends at `message_stop`, its stop `other` as for no reason given."""

    def change(frames: Frames) -> None:
        start, delta = frames[0], frames[-2]
        if where == "message":
            start["message"] = value
        elif where == "message.usage":
            start["message"]["usage"] = value
        elif where == "message.content":
            start["message"]["content"] = value
        elif where == "delta.usage":
            delta["usage"] = value
        elif where == "delta.delta":
            delta["delta"] = value
        else:
            frames[6]["content_block"]["citations"] = value

    expected = dict(_ANTHROPIC_TURN)
    if where == "message":
        expected["model"] = None
    if where == "delta.delta":
        expected["stop"] = "other"
    assert _anthropic(change) == expected


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
def test_an_anthropic_model_of_no_string_names_none(value: Any) -> None:
    """Was: a `done` whose model is the list (an event its own model refuses)."""

    def change(frames: Frames) -> None:
        frames[0]["message"]["model"] = value

    assert _anthropic(change) == {**_ANTHROPIC_TURN, "model": None}


@pytest.mark.parametrize("value", [*_NOT_OBJECT, None], ids=repr)
@pytest.mark.parametrize("key", ["content_block", "delta"])
def test_an_anthropic_block_of_no_object_is_an_error_naming_it(key: str, value: Any) -> None:
    """What the answer is made of cannot be left out unsaid: a protocol error that says
    which field, not Python's "'list' object has no attribute 'get'"."""
    event = "content_block_start" if key == "content_block" else "content_block_delta"

    def change(frames: Frames) -> None:
        next(frame for frame in frames if frame["type"] == event)[key] = value

    kind, message = _anthropic(change)["error"]
    assert kind == "protocol"
    assert f"{event} event's {key} is " in message and "not an object" in message
    assert "attribute" not in message


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
@pytest.mark.parametrize("key", ["partial_json", "signature"])
def test_a_joined_anthropic_piece_of_no_string_is_an_error_naming_it(key: str, value: Any) -> None:
    """A server call's input pieces and a signature's are joined at the block's end:
    another type failed there as "sequence item 0: expected str instance"."""

    def change(frames: Frames) -> None:
        if key == "partial_json":
            frames[2]["delta"]["partial_json"] = value
        else:  # a thinking block before the rest, its signature a list
            thinking = {"type": "thinking", "thinking": "", "signature": ""}
            frames[1:1] = _named(
                [
                    {"type": "content_block_start", "index": 0, "content_block": thinking},
                    {"type": "content_block_delta", "index": 0,
                     "delta": {"type": "thinking_delta", "thinking": "hm"}},
                    {"type": "content_block_delta", "index": 0,
                     "delta": {"type": "signature_delta", "signature": value}},
                    {"type": "content_block_stop", "index": 0},
                ]
            )  # fmt: skip

    kind, message = _anthropic(change)["error"]
    assert kind == "protocol"
    assert f"'s {key} is " in message and "not a string" in message
    assert "sequence item" not in message


async def test_an_anthropic_turn_of_wrong_types_over_http(serve_body: ServeBody) -> None:
    frames = _anthropic_frames()
    for frame in frames:
        if "index" in frame:
            frame["index"] = ["x"]
        block = frame.get("content_block", {})
        if "id" in block:
            block["id"] = {"a": 1}
    frames[0]["message"]["usage"] = ["x"]
    base_url = await serve_body(_sse(frames, named=True))
    async with rxllm.provider("anthropic", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="claude-x", messages=[rxllm.Message.user("hi")])
        )
    assert record.terminal.type == "done"
    assert record.text == "hi"
    assert [(c.call_id, c.name, c.arguments) for c in record.tool_calls] == [
        ("toolu_3", "get_weather", {"city": "Paris"})
    ]


# ------------------------------------------------------------------ OpenAI Responses

_RESPONSE = {"id": "resp_1", "object": "response", "status": "in_progress",
             "model": "gpt-x", "output": []}  # fmt: skip
_USAGE = {"input_tokens": 5, "input_tokens_details": {"cached_tokens": 0},
          "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 2},
          "total_tokens": 12}  # fmt: skip
_ANNOTATION = {"type": "url_citation", "url": "https://b.example/", "title": "B",
               "start_index": 0, "end_index": 2}  # fmt: skip


def _responses_frames() -> Frames:
    """A turn of the streaming events reference's shapes: a reasoning summary, a web
    search, a message with an annotation, a function call."""
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    search = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    search_done = {**search, "status": "completed",
                   "action": {"type": "search", "query": "q"}}  # fmt: skip
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress",
               "content": []}  # fmt: skip
    text_part = {"type": "output_text", "text": "", "annotations": []}
    message_done = {**message, "status": "completed",
                    "content": [{"type": "output_text", "text": "hi",
                                 "annotations": [_ANNOTATION]}]}  # fmt: skip
    call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather",
            "arguments": "", "status": "in_progress"}  # fmt: skip
    call_done = {**call, "arguments": '{"city": "Paris"}', "status": "completed"}
    summary_done = {**reasoning, "summary": [{"type": "summary_text", "text": "think"}]}
    completed = {**_RESPONSE, "status": "completed", "usage": _USAGE,
                 "output": [summary_done, search_done, message_done, call_done]}  # fmt: skip
    frames: Frames = [
        {"type": "response.created", "response": dict(_RESPONSE)},
        {"type": "response.in_progress", "response": dict(_RESPONSE)},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        {"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "delta": "think"},
        {"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "text": "think"},
        {"type": "response.reasoning_summary_part.done", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "part": {"type": "summary_text", "text": "think"}},
        {"type": "response.output_item.done", "output_index": 0, "item": summary_done},
        {"type": "response.output_item.added", "output_index": 1, "item": search},
        {"type": "response.web_search_call.in_progress", "item_id": "ws_1", "output_index": 1},
        {"type": "response.web_search_call.completed", "item_id": "ws_1", "output_index": 1},
        {"type": "response.output_item.done", "output_index": 1, "item": search_done},
        {"type": "response.output_item.added", "output_index": 2, "item": message},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 2,
         "content_index": 0, "part": text_part},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 2,
         "content_index": 0, "delta": "hi"},
        {"type": "response.output_text.annotation.added", "item_id": "msg_1",
         "output_index": 2, "content_index": 0, "annotation_index": 0,
         "annotation": _ANNOTATION},
        {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 2,
         "content_index": 0, "text": "hi"},
        {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 2,
         "content_index": 0, "part": message_done["content"][0]},
        {"type": "response.output_item.done", "output_index": 2, "item": message_done},
        {"type": "response.output_item.added", "output_index": 3, "item": call},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 3,
         "delta": '{"city": "Paris"}'},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 3,
         "arguments": '{"city": "Paris"}'},
        {"type": "response.output_item.done", "output_index": 3, "item": call_done},
        {"type": "response.completed", "response": completed},
    ]  # fmt: skip
    for number, frame in enumerate(frames):
        frame["sequence_number"] = number
    return _named(copy.deepcopy(frames))


_RESPONSES_TURN = {
    "terminal": "done",
    "stop": "tool_use",
    "error": None,
    "text": "hi",
    "calls": [("call_1", "get_weather", {"city": "Paris"})],
    "server": [("ws_1", "web_search_call", {"action": {"type": "search", "query": "q"}})],
    "results": [("ws_1", "web_search_call")],
    "citations": ["https://b.example/"],
    "model": "gpt-x",
}


def _responses(change: Callable[[Frames], object]) -> dict[str, Any]:
    frames = _responses_frames()
    change(frames)
    return _read(replay_every_way(_sse(frames, named=True), "openai-responses"))


def _reasoning_of(change: Callable[[Frames], object]) -> str:
    frames = _responses_frames()
    change(frames)
    events = replay_every_way(_sse(frames, named=True), "openai-responses")
    return "".join(e.text for e in events if e.type == "reasoning")


def test_the_responses_turn_as_written() -> None:
    assert _responses(lambda frames: None) == _RESPONSES_TURN
    assert _reasoning_of(lambda frames: None) == "think"


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
def test_a_responses_event_type_of_no_string_is_skipped(value: Any) -> None:
    """An event of no type a string names is one of a type unknown here: logged and
    skipped, as the SDK's stream skips one it does not know. Was: 'unhashable type'
    (`_IGNORED`) for a list or an object."""

    def change(frames: Frames) -> None:
        frames[1]["type"] = value  # response.in_progress
        frames[9]["type"] = value  # a web search's progress

    assert _responses(change) == _RESPONSES_TURN


@pytest.mark.parametrize("value", [["x"], {"a": 1}], ids=repr)
def test_a_responses_error_of_no_string_type_is_still_the_error(value: Any) -> None:
    """An error payload whose type names nothing is read as a type-less one is: the error."""

    def change(frames: Frames) -> None:
        error = {"type": value, "error": {"code": "server_error", "message": "boom"},
                 "_event": "error"}  # fmt: skip
        frames[13:] = [error]

    kind, message = _responses(change)["error"]
    assert (kind, message) == ("stream_error", "boom")


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
def test_a_responses_item_type_of_no_string_is_an_unknown_item(value: Any) -> None:
    """An item of no type a string names is skipped, logged, in the events and in the
    terminal's output. Was: 'unhashable type' (`CLIENT_ITEMS`, `SERVER_OUTPUTS`)."""

    def change(frames: Frames) -> None:
        odd = {"id": "x_1", "type": value, "status": "completed"}
        frames[19:19] = _named(
            [
                {"type": "response.output_item.added", "output_index": 4, "item": odd},
                {"type": "response.output_item.done", "output_index": 4, "item": odd},
            ]
        )
        # and one the terminal's output alone holds
        frames[-1]["response"]["output"] += [odd, {**odd, "id": "x_2"}]

    assert _responses(change) == _RESPONSES_TURN


@pytest.mark.parametrize("value", _NOT_INT, ids=repr)
@pytest.mark.parametrize("key", ["content_index", "summary_index"])
def test_a_responses_part_index_of_no_int_is_the_first_part(key: str, value: Any) -> None:
    """As a part event without one: part 0. Was: 'unhashable type', "'<' not supported",
    "can only concatenate str"."""

    def change(frames: Frames) -> None:
        for frame in frames:
            if key in frame:
                frame[key] = value

    assert _responses(change) == _RESPONSES_TURN
    assert _reasoning_of(change) == "think"


def test_a_responses_output_index_of_a_bool_is_none() -> None:
    """True is no output index (as an event without one: by its item id). Was: a tool
    call whose index was True, an event its own model refuses."""

    frames = _responses_frames()
    for frame in frames[19:23]:
        frame["output_index"] = True
    events = replay_every_way(_sse(frames, named=True), "openai-responses")
    assert _read(events) == _RESPONSES_TURN
    indices = [e.index for e in events if isinstance(e, ToolRequest)]
    assert indices == [3] and indices[0].__class__ is int


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
def test_a_responses_call_id_of_no_string_is_none(value: Any) -> None:
    """The call then goes by its item id, as one added without a call_id. Was: a
    tool_request whose call id is the list."""

    def change(frames: Frames) -> None:
        for frame in frames:
            for item in (frame.get("item"), *frame.get("response", {}).get("output", ())):
                if isinstance(item, dict) and "call_id" in item:
                    item["call_id"] = value

    assert _responses(change) == {
        **_RESPONSES_TURN,
        "calls": [("fc_1", "get_weather", {"city": "Paris"})],
    }


@pytest.mark.parametrize("value", _NOT_OBJECT, ids=repr)
@pytest.mark.parametrize(
    "where",
    ["created", "completed", "usage", "usage details", "annotations", "summary", "model"],
)
def test_responses_fields_the_turn_can_go_without(where: str, value: Any) -> None:
    """Of another type, each says nothing; the events around them still say the turn.
    Was: a protocol error ("'list' object has no attribute 'get'", "'int' object is not
    iterable"), or a `done` whose model is the list."""

    def change(frames: Frames) -> None:
        response = frames[-1]["response"]
        if where == "created":
            frames[0]["response"] = value
        elif where == "completed":
            frames[-1]["response"] = value
        elif where == "usage":
            response["usage"] = value
        elif where == "usage details":
            response["usage"]["input_tokens_details"] = value
            response["usage"]["output_tokens_details"] = value
        elif where == "annotations":
            frames[17]["part"]["annotations"] = value
            frames[18]["item"]["content"][0]["annotations"] = value
        elif where == "summary":
            frames[7]["item"]["summary"] = value
        else:
            frames[0]["response"]["model"] = value
            response["model"] = value

    expected = dict(_RESPONSES_TURN)
    if where == "model":  # (a string is a model's name)
        expected["model"] = value if isinstance(value, str) else None
    assert _responses(change) == expected


@pytest.mark.parametrize("value", [["x"], 7, True], ids=repr)
def test_responses_arguments_of_no_object_are_a_malformed_call(value: Any) -> None:
    """The done event's arguments are authoritative; of another JSON type than a string
    or an object they are no object: `malformed_tool_arguments` naming the call, as
    the DESIGN says of arguments that are not a JSON object. Was: a protocol error
    ('tool call arguments must be a JSON string, got list')."""

    def change(frames: Frames) -> None:
        frames[21]["arguments"] = value

    kind, message = _responses(change)["error"]
    assert kind == "malformed_tool_arguments"
    assert "'call_1'" in message and "get_weather" in message


async def test_a_responses_turn_of_wrong_types_over_http(serve_body: ServeBody) -> None:
    frames = _responses_frames()
    frames[1]["type"] = ["x"]
    for frame in frames:
        if "content_index" in frame:
            frame["content_index"] = {"a": 1}
    frames[-1]["response"]["usage"] = ["x"]
    base_url = await serve_body(_sse(frames, named=True))
    async with rxllm.provider("openai-responses", api_key="k", base_url=base_url,
                              allow_private_network=True) as provider:  # fmt: skip
        record = await provider.complete(
            rxllm.ChatRequest(model="gpt-x", messages=[rxllm.Message.user("hi")])
        )
    assert record.terminal.type == "done"
    assert record.text == "hi"
    assert [(c.call_id, c.name, c.arguments) for c in record.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"})
    ]


# ------------------------------------------- Responses: a client item read from the terminal

# Items that ask the client to act stream no input: the item is the call's arguments. One
# whose `output_item.done` never came (lost on the way) or could not be read (an item of no
# type a string names) is read from the completed response's output, which holds it whole,
# as any other item not marked done is. Was: left open for the terminal to judge as a
# function call's streamed JSON, `malformed_tool_arguments` ("are missing, not a JSON
# object"), though the response held the call.
_CLIENT_ITEMS = {
    "computer_call": {"action": {"type": "click", "x": 1, "y": 2, "button": "left"},
                      "pending_safety_checks": []},
    "shell_call": {"action": {"commands": ["ls"], "timeout_ms": 1000}},
    "apply_patch_call": {"operation": {"type": "update_file", "path": "a.py", "diff": "-a"}},
    "local_shell_call": {"action": {"type": "exec", "command": ["ls"], "env": {}}},
}  # fmt: skip


@pytest.mark.parametrize("done", ["lost", "of no type", "no object"])
@pytest.mark.parametrize("kind", sorted(_CLIENT_ITEMS))
def test_a_client_item_not_read_done_is_read_from_the_response(kind: str, done: str) -> None:
    arguments = _CLIENT_ITEMS[kind]
    added = {"id": "it_1", "type": kind, "call_id": "call_it", "status": "in_progress", **arguments}
    whole = {**added, "status": "completed"}
    frames: Frames = [
        {"type": "response.created", "response": dict(_RESPONSE)},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
    ]
    if done != "lost":
        item = {**whole, "type": ["x"]} if done == "of no type" else ["x"]
        frames.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    frames.append(
        {"type": "response.completed",
         "response": {**_RESPONSE, "status": "completed", "output": [whole], "usage": _USAGE}}
    )  # fmt: skip
    read = _read(replay_every_way(_sse(frames, named=True), "openai-responses"))
    assert (read["terminal"], read["stop"], read["error"]) == ("done", "tool_use", None)
    assert read["calls"] == [("call_it", kind, arguments)]


@pytest.mark.parametrize("value", _NOT_OBJECT, ids=repr)
def test_incomplete_details_of_no_object_say_no_reason(value: Any) -> None:
    """A `response.incomplete` whose `incomplete_details` is of another type ends the turn
    as one without a reason: `other`, the text kept. Was: a protocol error ("'list' object
    has no attribute 'get'") in place of the turn's end."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress",
               "content": []}  # fmt: skip
    frames: Frames = [
        {"type": "response.created", "response": dict(_RESPONSE)},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "delta": "hi"},
        {"type": "response.incomplete",
         "response": {**_RESPONSE, "status": "incomplete", "incomplete_details": value,
                      "usage": _USAGE}},
    ]  # fmt: skip
    read = _read(replay_every_way(_sse(frames, named=True), "openai-responses"))
    assert (read["terminal"], read["stop"], read["text"]) == ("done", "other", "hi")


# ------------------------------------------------ an error's message of no string

_ERRORS = {
    "anthropic": ("overloaded_error (overloaded_error)",
                  lambda v: [{"type": "error",
                              "error": {"type": "overloaded_error", "message": v}}]),
    "openai-responses": ("the server reported an error",
                         lambda v: [{"type": "error", "code": "rate_limit_exceeded", "message": v,
                                     "param": None, "sequence_number": 0}]),
    "openai-responses failed": ("the response failed",
                                lambda v: [{"type": "response.failed", "sequence_number": 0,
                                            "response": {**_RESPONSE, "status": "failed",
                                                         "error": {"code": "server_error",
                                                                   "message": v}}}]),
}  # fmt: skip


@pytest.mark.parametrize("value", _NOT_STR, ids=repr)
@pytest.mark.parametrize("wire", sorted(_ERRORS))
def test_an_error_message_of_no_string_is_none(wire: str, value: Any) -> None:
    """The error's message is the wire's words for an error without one; the value stays
    in `raw`, as sent. Was: Python's repr of it as the message (`['x']`, `True`)."""
    said, frames = _ERRORS[wire]
    events = replay_every_way(_sse(frames(value), named=True), wire.split()[0])
    last = events[-1]
    assert isinstance(last, Failed)
    assert (last.error.kind, last.error.message) == ("stream_error", said)
    assert json.dumps(value) in (last.error.raw or "")


@pytest.mark.parametrize("value", [["x"], {"a": 1}], ids=repr)
@pytest.mark.parametrize("key", ["start_index", "end_index"])
def test_a_citation_range_of_no_int_is_still_the_citation(key: str, value: Any) -> None:
    """A url_citation's range only tells repeats apart: a bound of no int is 0, and the
    citation is said once. Was: 'unhashable type' (the key of the citations said)."""

    def change(frames: Frames) -> None:
        annotations = (
            frames[15]["annotation"],
            *frames[17]["part"]["annotations"],
            *frames[18]["item"]["content"][0]["annotations"],
            *frames[-1]["response"]["output"][2]["content"][0]["annotations"],
        )
        for annotation in annotations:
            annotation[key] = value

    assert _responses(change) == _RESPONSES_TURN


@pytest.mark.parametrize("value", [["x"], 7, {"a": 1}], ids=repr)
@pytest.mark.parametrize("name", ["parallel", "get_weather"])
def test_a_held_call_s_fragment_of_no_string_is_said_at_once(name: str, value: Any) -> None:
    """A call held until whole (a parallel wrapper, or one added without its call_id) keeps
    its fragments to read them at its done item: one of no string ends the turn there and
    then, as any call's does, naming it. Was: Python's words at the join ('sequence item 0:
    expected str instance, list found') when its done item came."""
    call = {"id": "fc_1", "type": "function_call", "name": name, "arguments": ""}
    frames: Frames = [
        {"type": "response.created", "response": dict(_RESPONSE)},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0,
         "delta": value},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {**call, "call_id": "call_1", "arguments": ""}},
        {"type": "response.completed", "response": {**_RESPONSE, "status": "completed"}},
    ]  # fmt: skip
    kind, message = _read(replay_every_way(_sse(frames, named=True), "openai-responses"))["error"]
    assert kind == "protocol"
    assert f"a tool-argument fragment is {json_type(value)}, not a string" in message
    assert "sequence item" not in message
