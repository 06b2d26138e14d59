"""Gemini chunks whose fields hold another JSON type than the reference gives them (a
relay writing every member as `null`, an int32 written as a string, a proxy's bug), found
by replacing each field of documented chunk shapes in turn by a list, an object, a
number, a bool, null and a long string. The answer a chunk still carries is read; a field
no event needs is logged, never the turn's end; a value that no event can carry (a call
id or a URL that is a list) never reaches one; a chunk that cannot be read ends the turn
in an error that says what was wrong in JSON's words, not Python's. Bodies are made by
hand from the Gemini API reference (`GenerateContentResponse`, `Candidate`, `Part`,
`FunctionCall`, `PartialArg`, `GroundingMetadata`); ids and values are made up."""

from __future__ import annotations

from typing import Any

import pytest

import rxllm
from rxllm.events import (
    Citation,
    Done,
    Event,
    Failed,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
    ToolStart,
)
from rxllm.request import ChatRequest, Message
from tests.providers.test_google import gid
from tests.providers.test_probe_google import chunk, run, sse
from tests.support import ServeBody, log_messages, summarize

USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}

# What Python says when it reads a value of the wrong type: never an error's words.
PYTHON_WORDS = (
    "object has no attribute",
    "unhashable",
    "not iterable",
    "has no len",
    "sequence item",
)


def error_of(events: list[Event]) -> Failed:
    terminal = events[-1]
    assert isinstance(terminal, Failed), terminal
    assert not any(words in terminal.error.message for words in PYTHON_WORDS), terminal
    return terminal


# -- fields no event needs: the turn goes on ---------------------------------------------


@pytest.mark.parametrize("usage", [7, True, "15", [1, 2]])
async def test_a_usage_metadata_that_is_no_object_does_not_end_the_turn(
    serve_body: ServeBody, usage: Any
) -> None:
    """`usageMetadata` is an object of counts; one of another type has none to read. The
    answer stands (it ended in `protocol`: "argument of type 'int' is not iterable"),
    over a real loopback stream, and the latest usage that reads is the turn's."""
    first = chunk({"text": "Hello"})
    first["usageMetadata"] = USAGE
    last = chunk({"text": " world"}, finish="STOP")
    last["usageMetadata"] = usage
    base_url = await serve_body(sse(first, last))
    async with rxllm.provider("google", base_url=base_url, api_key="k", max_attempts=1) as p:
        record = await p.complete(
            ChatRequest(model="gemini-2.5-flash", messages=[Message.user("hi")])
        )
    assert record.ok, record.terminal
    assert record.text == "Hello world"
    assert record.usage is not None and record.usage.input_tokens == 10


@pytest.mark.parametrize("model", [[1, "a"], {"k": "v"}, 7, True])
def test_a_model_version_that_is_no_string_is_no_model(model: Any) -> None:
    """`modelVersion` is a string; `Done.model` held the list or the number as it came."""
    first = chunk({"text": "Hi"})
    first["modelVersion"] = model
    events = run(first, chunk({"text": "."}, finish="STOP"))
    done = events[-1]
    assert isinstance(done, Done) and done.model == "gemini-test"  # the chunk that has one
    only = chunk({"text": "Hi"}, finish="STOP")
    only["modelVersion"] = model
    done = run(only)[-1]
    assert isinstance(done, Done) and done.model is None


@pytest.mark.parametrize("index", [None, "0", 0.0, [1], {"k": 1}, True, "zz"])
def test_a_candidate_index_that_names_no_other_candidate_is_candidate_0(index: Any) -> None:
    """proto3 JSON leaves out the default index 0 and takes an int32 written as a string;
    a relay writing every member writes `"index": null`. Each was read as another
    candidate and ignored: the answer lost, the turn `truncated`."""
    first, last = chunk({"text": "Hello"}), chunk({"text": " there"}, finish="STOP")
    for payload in (first, last):
        payload["candidates"][0]["index"] = index
    got = summarize(run(first, last))
    assert (got.terminal, got.text) == ("done", "Hello there")


def test_a_candidate_index_written_as_a_string_still_names_another_candidate() -> None:
    """ "1" is candidate 1, as 1 is: only candidate 0 is read (candidateCount > 1)."""
    other = {"content": {"parts": [{"text": "Other"}], "role": "model"}, "index": "1"}
    first = chunk({"text": "Mine"}, finish="STOP")
    first["candidates"].append(other)
    assert summarize(run(first)).text == "Mine"


@pytest.mark.parametrize("signature", [7, True, ["c2ln"], {"k": "v"}])
def test_a_text_part_signature_that_is_no_string_is_left_out_not_the_turn(
    signature: Any,
) -> None:
    """A `thoughtSignature` is bytes written as base64. One of another type cannot go
    back on the text, and the text does not need it: logged, the answer stands (it
    ended in `protocol`: "a reasoning signature is int, not a string")."""
    with log_messages() as messages:
        events = run(
            chunk({"text": "Hello", "thoughtSignature": signature}),
            chunk({"text": "."}, finish="STOP"),
        )
    got = summarize(events)
    assert (got.terminal, got.text, got.signatures) == ("done", "Hello.", [])
    assert any(m.startswith("ignored thoughtSignature:") for m in messages)


@pytest.mark.parametrize("signature", [[], {}, 0, False, 7])
def test_a_call_signature_that_is_no_string_is_none(signature: Any) -> None:
    """A call's `thoughtSignature` of another type reached `ToolStart.signature` and
    `ToolRequest.signature` as it came (`[]`, `0`), or ended the turn."""
    part = {"functionCall": {"name": "get_time", "args": {}}, "thoughtSignature": signature}
    events = run(chunk(part, finish="STOP"))
    (request,) = [ev for ev in events if isinstance(ev, ToolRequest)]
    (start,) = [ev for ev in events if isinstance(ev, ToolStart)]
    assert request.signature is None and start.signature is None
    assert summarize(events).stop_reason == "tool_use"


@pytest.mark.parametrize("value", [[1, "a"], {"k": "v"}, 7, True])
def test_sources_of_another_shape_are_no_citations_and_do_not_end_the_turn(value: Any) -> None:
    """`groundingChunks[].web.uri`, a source's `title`, `citationSources[].uri`, and the
    metadata objects themselves: a uri that is a list was hashed into the set of cited
    uris (TypeError: unhashable type, the turn ended in `protocol`), a number became
    `Citation.url`; a `groundingMetadata` of another type ended the turn too. Sources
    are not the answer: what reads is cited, the rest is logged."""
    good = {"web": {"uri": "https://a.example/", "title": value}}
    bad = {"web": {"uri": value, "title": "B"}}
    first = chunk({"text": "Cited."})
    first["candidates"][0]["groundingMetadata"] = {"groundingChunks": [bad, good, value]}
    first["candidates"][0]["citationMetadata"] = {"citationSources": [{"uri": value}]}
    second = chunk({"text": " Again."})
    second["candidates"][0]["groundingMetadata"] = value
    second["candidates"][0]["citationMetadata"] = value
    events = run(first, second, chunk({"text": " Done."}, finish="STOP"))
    assert [(ev.url, ev.title) for ev in events if isinstance(ev, Citation)] == [
        ("https://a.example/", None)
    ]
    got = summarize(events)
    assert (got.terminal, got.text) == ("done", "Cited. Again. Done.")


@pytest.mark.parametrize("value", [[1, "a"], 7, True])
def test_a_tool_step_of_another_shape_is_logged_and_the_answer_goes_on(value: Any) -> None:
    """Gemini runs code and its built-in tools itself: an `executableCode`,
    `codeExecutionResult` or `toolCall` that is no object has nothing to show (it ended
    the turn in `protocol`: "'list' object has no attribute 'get'"); ids of another type
    are none (they became `ServerToolCall.call_id` as they came), and `toolCall.args`
    that are no object are no arguments."""
    tag = gid("code_execution", 0).rsplit("_", 1)[0]
    events = run(
        chunk({"executableCode": value}, {"codeExecutionResult": value}, {"toolCall": value}),
        chunk({"executableCode": {"language": "PYTHON", "code": "print(1)", "id": value}}),
        chunk({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1", "id": value}}),
        chunk({"toolCall": {"toolType": "URL_CONTEXT", "args": value, "id": value}}),
        chunk({"text": "Done."}, finish="STOP"),
    )
    calls = [(ev.call_id, ev.name, ev.arguments) for ev in events if isinstance(ev, ServerToolCall)]
    assert calls == [
        (f"{tag}_0", "code_execution", {"language": "PYTHON", "code": "print(1)"}),
        (gid("url_context", 0), "url_context", {}),
    ]
    (result,) = [ev for ev in events if isinstance(ev, ServerToolResult)]
    assert result.call_id == f"{tag}_0"  # the latest code part's
    assert summarize(events).text == "Done."


def test_a_prompt_feedback_that_is_no_object_is_logged() -> None:
    """`promptFeedback` of another type says nothing of a block: the candidates are read
    (it ended the turn in `protocol`: "'str' object has no attribute 'get'")."""
    first = chunk({"text": "Hi"}, finish="STOP")
    first["promptFeedback"] = "SAFETY"
    assert summarize(run(first)).text == "Hi"


# -- calls: never a wrong-typed id or name, never lost -----------------------------------


@pytest.mark.parametrize("given", [[1, "a"], {"k": "v"}, 7, True])
def test_a_function_call_id_that_is_no_string_is_none(given: Any) -> None:
    """`FunctionCall.id` is a string; one of another type reached `ToolRequest.call_id`
    as it came (an app keying results by id fails on a list). The call gets rxllm's id,
    and no id goes back to Gemini as its own."""
    part = {"functionCall": {"id": given, "name": "get_weather", "args": {"city": "Paris"}}}
    events = run(chunk(part, finish="STOP"))
    (request,) = [ev for ev in events if isinstance(ev, ToolRequest)]
    assert request.call_id == gid("get_weather", 0)
    assert request.details is None
    assert request.arguments == {"city": "Paris"}


@pytest.mark.parametrize("name", [[1, "a"], {"k": "v"}, 7, True, []])
def test_a_function_call_name_that_is_no_string_is_a_malformed_call(name: Any) -> None:
    """A name of another type reached `ToolRequest.name` (`7`, `['a']`), or, falsy, the
    call was dropped and the turn ended `done` with the text before it. A call whose
    function cannot be named cannot be dispatched: the turn fails as Gemini's own
    MALFORMED_FUNCTION_CALL does."""
    part = {"functionCall": {"name": name, "args": {"q": "x"}}}
    events = run(chunk({"text": "Looking."}, part, finish="STOP"))
    error = error_of(events).error
    assert error.kind == "malformed_tool_arguments"
    assert "name is" in error.message and "not a string" in error.message
    assert not [ev for ev in events if isinstance(ev, ToolRequest)]


def test_streamed_args_that_are_no_object_say_so() -> None:
    """The opening part's `args` beside `willContinue` must be an object: "functionCall
    args must be an object, got 'xxxx...'" quoted the value (a long string whole)."""
    part = {"functionCall": {"name": "find", "args": "x" * 10_000, "willContinue": True}}
    error = error_of(run(chunk(part), chunk({"functionCall": {}}, finish="STOP"))).error
    assert error.kind == "malformed_tool_arguments"
    assert error.message.endswith("are a string, not an object")
    assert len(error.message) < 200


# -- Vertex's streamed arguments ---------------------------------------------------------


def streamed(*partial_args: dict[str, Any]) -> list[Event]:
    return run(
        chunk({"functionCall": {"name": "plan", "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": list(partial_args), "willContinue": True}}),
        chunk({"functionCall": {}}, finish="STOP"),
    )


def test_partial_args_with_every_member_written_read_the_one_that_is_set() -> None:
    """A relay writing every member of `PartialArg` writes the unset values `null`
    (proto3 JSON: no member). `stringValue: null` was read as a string piece and the
    call failed ("sequence item 0: expected str instance, NoneType found")."""
    unset = {"stringValue": None, "numberValue": None, "boolValue": None, "nullValue": None}
    events = streamed(
        {**unset, "jsonPath": "$.city", "stringValue": "Paris"},
        {**unset, "jsonPath": "$.days", "numberValue": 3},
        {**unset, "jsonPath": "$.metric", "boolValue": False},
        {**unset, "jsonPath": "$.note"},
    )
    (request,) = [ev for ev in events if isinstance(ev, ToolRequest)]
    assert request.arguments == {"city": "Paris", "days": 3, "metric": False, "note": None}


@pytest.mark.parametrize(
    ("partial_args", "said"),
    [
        (7, "partialArgs is a number, not an array"),
        ({"jsonPath": "$.a"}, "partialArgs is an object, not an array"),
        ([[1, "a"]], "a partialArgs entry is an array, not an object"),
        ([{"jsonPath": ["$", "a"], "stringValue": "x"}], "jsonPath is an array, not a string"),
        ([{"jsonPath": 7, "stringValue": "x"}], "jsonPath is a number, not a string"),
        ([{"jsonPath": "$.a", "stringValue": 7}], "a partialArgs stringValue is a number"),
        ([{"jsonPath": "$.a", "stringValue": ["x"]}], "a partialArgs stringValue is an array"),
        ([{"jsonPath": "$.a", "numberValue": "3"}], "a partialArgs numberValue is a string"),
        ([{"jsonPath": "$.a", "numberValue": True}], "a partialArgs numberValue is a boolean"),
        ([{"jsonPath": "$.a", "boolValue": 1}], "a partialArgs boolValue is a number"),
    ],
)
def test_partial_args_of_another_type_are_malformed_in_json_words(
    partial_args: Any, said: str
) -> None:
    """Each ended the turn `malformed_tool_arguments` or `protocol` in Python's words
    ("unhashable type: 'list'", "'int' object has no attribute 'startswith'",
    "sequence item 1: expected str instance, int found"), or, a number where a string
    was due, built arguments of the wrong type."""
    events = run(
        chunk({"functionCall": {"name": "plan", "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": partial_args, "willContinue": True}}),
        chunk({"functionCall": {}}, finish="STOP"),
    )
    error = error_of(events).error
    assert error.kind == "malformed_tool_arguments"
    assert said in error.message


# -- chunks that cannot be read: an error in JSON's words ---------------------------------


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        ("candidates", "zz", "the chunk's candidates are a string, not an array"),
        ("candidates", {"k": "v"}, "the chunk's candidates are an object, not an array"),
        ("candidate", 7, "a candidate is a number, not an object"),
        ("content", [1], "a candidate's content is an array, not an object"),
        ("parts", {"k": "v"}, "a candidate's content.parts is an object, not an array"),
        ("part", True, "a part is a boolean, not an object"),
        ("functionCall", "get_time", "a functionCall is a string, not an object"),
    ],
)
def test_a_chunk_whose_answer_cannot_be_read_says_what_in_json_words(
    where: str, value: Any, said: str
) -> None:
    """The answer's own containers of another type: no answer can be read from the
    chunk, so the turn ends in `protocol`, saying which (it said "'str' object has no
    attribute 'get'", "object of type 'bool' has no len()")."""
    payload = chunk({"text": "Hi"}, finish="STOP")
    candidate = payload["candidates"][0]
    if where == "candidates":
        payload["candidates"] = value
    elif where == "candidate":
        payload["candidates"] = [value]
    elif where == "content":
        candidate["content"] = value
    elif where == "parts":
        candidate["content"]["parts"] = value
    elif where == "part":
        candidate["content"]["parts"] = [value]
    else:
        candidate["content"]["parts"] = [{"functionCall": value}]
    error = error_of(run(chunk({"text": "Hello"}), payload)).error
    assert error.kind == "protocol"
    assert said in error.message


def test_a_null_part_or_candidate_is_none() -> None:
    """A relay writing `null` in a list writes no entry: the others are read."""
    payload = chunk({"text": "Hi"}, finish="STOP")
    payload["candidates"][0]["content"]["parts"] = [None, {"text": "Hi"}, None]
    payload["candidates"].insert(0, None)
    assert summarize(run(payload)).text == "Hi"
