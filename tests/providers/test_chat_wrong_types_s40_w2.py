"""Chat completion chunks whose fields hold another JSON type than the reference gives
them, found by replacing each field of documented chunk shapes (OpenAI's text, refusal,
`annotations`, `tool_calls` by index and the usage chunk; DeepSeek's
`reasoning_content`; OpenRouter's `reasoning_details` and mid-stream error; Groq's
`executed_tools`; Gemini's `extra_content`; LiteLLM's `thinking_blocks`) in turn by a
list, an object, a number, a bool, null and a long string. The answer a chunk still
carries is read; a field no event needs is logged, never the turn's end; a value no
event can carry (a call id, a URL) never reaches one, nor keys the turn's state (a list
was hashed: "unhashable type"); a chunk that cannot be read ends the turn in an error
that says what was wrong in JSON's words, not Python's. Bodies are made by hand from the
API references; ids and values are made up."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Citation, Done, Event, Failed, ReasoningDelta, ServerToolCall, ToolRequest
from rxllm.request import ChatRequest, Message
from tests.support import ServeBody, replay, replay_every_way, summarize

PYTHON_WORDS = (
    "object has no attribute",
    "unhashable",
    "not iterable",
    "has no len",
    "KeyError",
    "NoneType",
)

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [choice],
        **extra,
    }


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads) + b"data: [DONE]\n\n"


def run(*payloads: dict[str, Any], provider: str = "openai") -> list[Event]:
    return replay_every_way(sse(*payloads), provider)


def error_of(events: list[Event]) -> Failed:
    terminal = events[-1]
    assert isinstance(terminal, Failed), terminal
    assert not any(words in terminal.error.message for words in PYTHON_WORDS), terminal
    return terminal


def calls(events: list[Event]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(ev.call_id, ev.name, ev.arguments) for ev in events if isinstance(ev, ToolRequest)]


# -- fields no event needs: the turn goes on ---------------------------------------------


@pytest.mark.parametrize("usage", [7, "15", [1, 2], True])
async def test_a_usage_that_is_no_object_does_not_end_the_turn(
    serve_body: ServeBody, usage: Any
) -> None:
    """`usage` is an object of counts; one of another type has none to read: the answer
    stands (it ended in `protocol`: "'int' object has no attribute 'get'"), over a real
    loopback stream."""
    body = sse(chunk({"role": "assistant", "content": "Hello"}), chunk({}, "stop", usage=usage))
    base_url = await serve_body(body)
    async with rxllm.provider("openai", base_url=base_url, api_key="k", max_attempts=1) as p:
        record = await p.complete(ChatRequest(model="gpt-4o", messages=[Message.user("hi")]))
    assert record.ok, record.terminal
    assert record.text == "Hello" and record.usage is None


@pytest.mark.parametrize(
    "key", ["prompt_tokens_details", "completion_tokens_details", "cost_details"]
)
@pytest.mark.parametrize("value", [7, "x", [1], True])
def test_usage_details_that_are_no_object_leave_the_counts(key: str, value: Any) -> None:
    """A breakdown of another type has nothing to add; the counts beside it still count
    (it ended in `protocol`: "'int' object has no attribute 'get'")."""
    usage = {**USAGE, key: value, "cost": 0.5, "is_byok": True}
    events = run(chunk({"content": "Hi"}), chunk({}, "stop"), chunk(usage=usage) | {"choices": []})
    got = summarize(events)
    assert got.terminal == "done" and got.usage is not None
    assert (got.usage.input_tokens, got.usage.output_tokens) == (10, 5)


@pytest.mark.parametrize("model", [[1, "a"], {"k": "v"}, 7, True])
def test_a_model_that_is_no_string_is_no_model(model: Any) -> None:
    """`Done.model` held the list or the number as it came."""
    first = chunk({"content": "Hi"})
    last = chunk({}, "stop")
    last["model"] = model
    done = run(first, last)[-1]
    assert isinstance(done, Done) and done.model == "gpt-4o"


@pytest.mark.parametrize("index", ["0", True, [0], {"i": 0}, 1.5])
def test_a_choice_index_that_names_no_other_choice_is_choice_0(index: Any) -> None:
    """Only a number other than 0 names another choice (n > 1); a value that is no
    number was read as one and ignored: the answer lost, the turn done empty."""
    first, last = chunk({"content": "Hello"}), chunk({"content": " there"}, "stop")
    for payload in (first, last):
        payload["choices"][0]["index"] = index
    got = summarize(run(first, last))
    assert (got.terminal, got.text) == ("done", "Hello there")


def test_a_choice_index_written_as_a_string_still_names_another_choice() -> None:
    other = {"index": "1", "delta": {"content": "Other"}, "finish_reason": None}
    first = chunk({"content": "Mine"})
    first["choices"].append(other)
    assert summarize(run(first, chunk({}, "stop"))).text == "Mine"


@pytest.mark.parametrize("value", [[1, "a"], {"k": "v"}, 7, True])
def test_annotations_of_another_shape_cite_what_reads_and_the_turn_goes_on(value: Any) -> None:
    """`annotations[].url_citation` {url, title, start_index, end_index}: a url that is a
    list keyed the cited set ("unhashable type", the turn ended in `protocol`), a number
    became `Citation.url`, a title of another type `Citation.title`; `annotations` or an
    entry of another type ended the turn ("'str' object has no attribute 'get'")."""
    good = {"type": "url_citation", "url_citation": {"url": "https://a.example/", "title": value}}
    bad = {"type": "url_citation", "url_citation": {"url": value, "title": "B"}}
    events = run(
        chunk({"role": "assistant", "content": "See"}),
        chunk({"annotations": [bad, good, value]}),
        chunk({"annotations": value}),
        chunk({"content": "."}, "stop"),
    )
    assert [(ev.url, ev.title) for ev in events if isinstance(ev, Citation)] == [
        ("https://a.example/", None)
    ]
    got = summarize(events)
    assert (got.terminal, got.text) == ("done", "See.")


@pytest.mark.parametrize("value", [[1, "a"], {"k": "v"}, 7, True])
def test_reasoning_details_of_another_shape_keep_what_reads(value: Any) -> None:
    """OpenRouter's `reasoning_details`: an entry that is no object ended the turn
    ("'int' object has no attribute 'get'"), as did a signature or encrypted data that
    is no string ("a reasoning signature is list, not a string"); the reasoning text
    does not need them. They are left out (logged), the rest read."""
    text = {"type": "reasoning.text", "text": "think", "format": "anthropic-claude-v1", "index": 0}
    signed = {
        "type": "reasoning.text",
        "signature": value,
        "format": "anthropic-claude-v1",
        "index": 0,
    }
    encrypted = {"type": "reasoning.encrypted", "data": value, "id": "rs_1", "index": 1}
    events = run(
        chunk({"role": "assistant", "content": "", "reasoning_details": [value, text]}),
        chunk({"reasoning_details": [signed]}),
        chunk({"reasoning_details": [encrypted]}),
        chunk({"content": "Answer"}, "stop"),
        provider="openrouter",
    )
    got = summarize(events)
    assert (got.terminal, got.reasoning, got.text, got.signatures) == (
        "done",
        "think",
        "Answer",
        [],
    )
    assert not [ev for ev in events if isinstance(ev, ReasoningDelta) and ev.redacted]


@pytest.mark.parametrize("value", [[1, "a"], 7, True])
def test_executed_tools_of_another_shape_are_shown_by_place(value: Any) -> None:
    """Groq's `executed_tools`: an `index` that is a list keyed the turn's tools
    ("unhashable type"), a `type` that is no string named the tool `"[1, 'a']"`, an entry
    that is no object ended the turn."""
    entry = {"index": value, "type": value, "arguments": '{"query": "x"}', "output": "found"}
    events = run(
        chunk({"role": "assistant", "content": "", "executed_tools": [value, entry]}),
        chunk({"content": "Found."}, "stop"),
        provider="groq",
    )
    (call,) = [ev for ev in events if isinstance(ev, ServerToolCall)]
    assert call.name == "tool" and call.arguments == {"query": "x"}
    assert summarize(events).text == "Found."


# -- calls: never a wrong-typed id, never a list as a key --------------------------------


@pytest.mark.parametrize("index", [[0], {"i": 0}, "0", 1.5])
def test_a_tool_call_index_that_is_no_number_is_read_as_no_index(index: Any) -> None:
    """`tool_calls[].index` keys the turn's calls: a list or an object was hashed there
    and the turn ended in `protocol` ("unhashable type: 'list'"). An index that is no
    number is none: the call is read as an index-less one (Mistral's)."""
    opening = {
        "index": index,
        "id": "call_a",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    events = run(
        chunk({"role": "assistant", "content": None, "tool_calls": [opening]}),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": '{"city": "Pa'}}]}),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": 'ris"}'}}]}),
        chunk({}, "tool_calls"),
    )
    assert calls(events) == [("call_a", "get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("given", [[1, "a"], {"k": "v"}, 7, True])
def test_a_tool_call_id_that_is_no_string_is_none(given: Any) -> None:
    """`tool_calls[].id` of another type ended the turn ("'list' object has no attribute
    'startswith'"); the call gets rxllm's id."""
    opening = {
        "index": 0,
        "id": given,
        "type": "function",
        "function": {"name": "get_time", "arguments": "{}"},
    }
    events = run(chunk({"role": "assistant", "tool_calls": [opening]}), chunk({}, "tool_calls"))
    ((call_id, name, arguments),) = calls(events)
    assert call_id.startswith("call_") and (name, arguments) == ("get_time", {})


# -- chunks that cannot be read: an error in JSON's words ---------------------------------


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        ("choices", {"index": 0}, "the chunk's choices are an object, not an array"),
        ("choices", "zz", "the chunk's choices are a string, not an array"),
        ("choice", 7, "a choice is a number, not an object"),
        ("delta", "Hi", "a choice's delta is a string, not an object"),
        ("content", 7, "a delta's content is a number, not a string"),
        ("content part", 7, "a content part is a number, not an object"),
        ("tool_calls", 7, "a delta's tool_calls are a number, not an array"),
        ("tool call", "get_time", "a tool_calls entry is a string, not an object"),
        ("function", "get_time", "a tool call's function is a string, not an object"),
        ("message", "Hi", "a choice's message is a string, not an object"),
    ],
)
def test_a_chunk_whose_answer_cannot_be_read_says_what_in_json_words(
    where: str, value: Any, said: str
) -> None:
    """The answer's own containers of another type: the turn ends in `protocol`, saying
    which (it said "KeyError: 0", "'str' object has no attribute 'get'", "object of type
    'int' has no len()", "'int' object is not iterable")."""
    payload = chunk({}, "stop")
    choice = payload["choices"][0]
    if where == "choices":
        payload["choices"] = value
    elif where == "choice":
        payload["choices"] = [value]
    elif where == "delta":
        choice["delta"] = value
    elif where == "content":
        choice["delta"] = {"content": value}
    elif where == "content part":
        choice["delta"] = {"content": [{"type": "text", "text": "a"}, value]}
    elif where == "tool_calls":
        choice["delta"] = {"tool_calls": value}
    elif where == "tool call":
        choice["delta"] = {"tool_calls": [value]}
    elif where == "function":
        choice["delta"] = {"tool_calls": [{"index": 0, "id": "call_a", "function": value}]}
    else:
        payload["choices"] = [{"index": 0, "message": value, "finish_reason": "stop"}]
    # (a message after deltas is their summary: without them, it is the answer)
    before = [] if where == "message" else [chunk({"content": "Hello"})]
    error = error_of(run(*before, payload)).error
    assert error.kind == "protocol"
    assert said in error.message


def test_null_entries_are_none_and_a_content_object_is_one_part() -> None:
    """A relay writing `null` in a list writes no entry; `content` as one typed part
    rather than a list of them is that part (it ended the turn: "'str' object has no
    attribute 'get'", iterating the object's keys)."""
    first = chunk({"content": {"type": "text", "text": "Hello"}})
    first["choices"].insert(0, None)
    last = chunk(
        {"content": [None, {"type": "text", "text": " there"}], "tool_calls": [None]}, "stop"
    )
    got = summarize(run(first, last))
    assert (got.terminal, got.text) == ("done", "Hello there")


def test_a_summary_message_that_is_no_object_is_logged_after_deltas() -> None:
    """A whole `message` after the deltas only repeats them (MiniMax's closing frame):
    one of another type is not the answer's end."""
    last = chunk({}, "stop")
    last["choices"][0]["message"] = "Hello"
    got = summarize(replay(sse(chunk({"content": "Hello"}), last), "openai"))
    assert (got.terminal, got.text) == ("done", "Hello")


@pytest.mark.parametrize("kind", ["reasoning.text", "reasoning.summary"])
@pytest.mark.parametrize("value", [[1, "a"], {"k": "v"}, 7, True])
def test_a_reasoning_detail_text_that_is_no_string_says_so(kind: str, value: Any) -> None:
    """A detail's second fragment whose `text` (or `summary`) is no string was compared
    with the detail's text so far ("'list' object has no attribute 'startswith'", in
    OpenRouter's own capture with the field replaced): the reasoning cannot be read, and
    the error says so in JSON's words."""
    field = "text" if kind == "reasoning.text" else "summary"
    first = {"type": kind, field: "Let me", "format": "anthropic-claude-v1", "index": 0}
    second = {**first, field: value}
    events = run(
        chunk({"role": "assistant", "content": "", "reasoning_details": [first]}),
        chunk({"reasoning_details": [second]}),
        chunk({"content": "Answer"}, "stop"),
        provider="openrouter",
    )
    error = error_of(events).error
    assert error.kind == "protocol"
    assert f"a {kind} detail's {field} is" in error.message and "not a string" in error.message
