"""A request's fields at their edges (session 40, helper E): a bool or a str is
refused where pydantic would read it as a number (a whole float is the int it is); one
message or tool given alone, tool parameters that are no object, an empty stop sequence
and a response format of another shape are said at once; an ImagePart is an image."""

from __future__ import annotations

import base64
from typing import Any

import pydantic
import pytest

import rxllm
from rxllm import ChatRequest, ImagePart, Message, Tool, ToolCall
from rxllm.errors import ConfigError
from rxllm.providers import wire_for

HI = [Message.user("hi")]
NUMBERS = ("temperature", "top_p", "max_tokens", "seed", "presence_penalty", "frequency_penalty")


@pytest.mark.parametrize("field", NUMBERS)
@pytest.mark.parametrize("value", [True, False, "1", "0.5"])
def test_a_bool_or_a_str_in_a_number_field_is_refused(field: str, value: Any) -> None:
    # was read as a number: max_tokens=True asked for one token, seed=False was seed 0,
    # temperature=True was 1.0, and "0.5" went out as 0.5 (an SDK sends it as a string)
    with pytest.raises(pydantic.ValidationError, match=rf"{field}\n.*should be a number, got"):
        ChatRequest(model="m", messages=HI, **{field: value})


def test_a_bool_as_a_calls_place_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"after\n.*should be a number, got bool"):
        ToolCall(id="c1", name="get_time", after=True)
    assert ToolCall(id="c1", name="get_time", after=0).after == 0


def test_numbers_are_still_taken_and_a_whole_float_is_an_int() -> None:
    request = ChatRequest(model="m", messages=HI, max_tokens=3.0, temperature=0, top_p=1)
    body = wire_for("anthropic").build_body(request)
    assert body["max_tokens"] == 3 and isinstance(body["max_tokens"], int)
    assert body["temperature"] == 0 and body["top_p"] == 1
    with pytest.raises(pydantic.ValidationError, match="fractional part"):
        ChatRequest(model="m", messages=HI, max_tokens=3.5)


@pytest.mark.parametrize("field", ["messages", "tools"])
def test_one_message_or_tool_given_alone_is_said_to_need_a_list(field: str) -> None:
    # was pydantic iterating the model as its fields: "5 validation errors ... Input
    # should be a valid dictionary or instance of Message [input_value=('role', 'user')]"
    one: dict[str, Any] = {"messages": HI[0], "tools": Tool(name="get_time")}
    fields: dict[str, Any] = {"messages": HI, field: one[field]}
    with pytest.raises(pydantic.ValidationError) as refused:
        ChatRequest(model="m", **fields)
    assert refused.value.error_count() == 1
    assert f"{field} must be a list, even of one: {field}=[" in str(refused.value)
    as_dict = {"messages": {"role": "user", "content": "hi"}, "tools": {"name": "get_time"}}
    with pytest.raises(pydantic.ValidationError, match=f"{field} must be a list, even of one"):
        ChatRequest(model="m", **{**fields, field: as_dict[field]})


def test_an_image_part_is_taken_among_a_users_images() -> None:
    # was "url: Input should be a valid string [input_value=ImagePart(...)]"
    low = ImagePart(url="https://example.com/a.png", detail="low")
    message = Message.user("what is it?", images=[low, "https://example.com/b.png"])
    assert message.images == [low, ImagePart(url="https://example.com/b.png")]


@pytest.mark.parametrize("kind", ["string", "array", "STRING"])
def test_tool_parameters_that_are_no_object_are_refused(kind: str) -> None:
    # was sent: OpenAI refuses it naming tools[0].function.parameters, and the retry that
    # reading brings drops the tools (the turn answered without them)
    with pytest.raises(pydantic.ValidationError, match="the JSON Schema of the call's arguments"):
        Tool(name="f", parameters={"type": kind})
    with pytest.raises(pydantic.ValidationError, match=f"an object, not '{kind}'"):
        ChatRequest(model="m", messages=HI, tools=[{"name": "f", "parameters": {"type": kind}}])


def test_tool_parameters_that_are_an_object_still_pass() -> None:
    for parameters in ({"type": "object", "properties": {}}, {"type": "OBJECT"}, {}):
        assert Tool(name="f", parameters=parameters).parameters == parameters


@pytest.mark.parametrize("stop", ["", ["\\n", ""]])
def test_an_empty_stop_sequence_is_refused(stop: Any) -> None:
    # was sent as [""] on every wire
    with pytest.raises(pydantic.ValidationError, match="a stop sequence is empty"):
        ChatRequest(model="m", messages=HI, stop=stop)
    assert ChatRequest(model="m", messages=HI, stop=[" "]).stop == [" "]


@pytest.mark.parametrize("given", ["json_object", "text", True])
def test_a_response_format_it_does_not_take_is_said_once(given: Any) -> None:
    # was two errors, one per member of the union ("Input should be 'json'", "Input
    # should be a valid dictionary or instance of JsonSchema")
    with pytest.raises(pydantic.ValidationError) as refused:
        ChatRequest(model="m", messages=HI, response_format=given)
    assert refused.value.error_count() == 1
    assert "response_format takes 'json' (any JSON object)" in str(refused.value)
    assert f"got {given!r}" in str(refused.value)


@pytest.mark.parametrize("field", ["id", "name"])
def test_a_call_with_an_empty_id_or_name_is_refused(field: str) -> None:
    # was taken: an id of "" failed only when the body was built ("a tool message needs
    # its tool_call_id", of the message that answers a call left unanswered), and a name
    # of "" went out for the provider to refuse
    fields = {"id": "c1", "name": "get_time", field: ""}
    with pytest.raises(pydantic.ValidationError, match=rf"{field}\n.*at least 1 character"):
        ToolCall(**fields)
    call = {"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    call = {**call, "id": ""} if field == "id" else {**call, "function": {"name": ""}}
    with pytest.raises(pydantic.ValidationError, match=f"tool_calls.0.{field}"):
        Message.model_validate({"role": "assistant", "tool_calls": [call]})


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(24)).decode()


@pytest.mark.parametrize(
    "url", [f"data:image/png,{PNG}", f"data:base64,{PNG}", "data:application/pdf,JVBERi0xLjcK"]
)
def test_base64_data_not_marked_base64_is_refused(url: str) -> None:
    # was read as percent-encoded bytes (RFC 2397) and base64-encoded again: the image's
    # base64 text went out as the image, which a provider cannot read (and a retry then
    # replaces with the image notice)
    with pytest.raises(pydantic.ValidationError, match="its data is base64, but not marked so"):
        ImagePart(url=url)


def test_percent_encoded_data_is_still_taken() -> None:
    part = ImagePart(url="data:image/png,%89PNG%0D%0A%1A%0A")
    assert part.inline == ("image/png", base64.b64encode(b"\x89PNG\r\n\x1a\n").decode())
    assert ImagePart(url="data:image/svg+xml,<svg></svg>").inline is not None


def test_a_data_url_without_a_media_type_is_sent_as_its_bytes_say() -> None:
    # was "application/octet-stream" to Gemini, which takes no such image
    part = ImagePart(url=f"data:;base64,{PNG}")
    assert part.inline == ("image/png", PNG)
    request = ChatRequest(model="m", messages=[Message(role="user", content=[part])])
    body = wire_for("google").build_body(request)
    assert body["contents"][0]["parts"][0]["inlineData"]["mimeType"] == "image/png"
    given = ImagePart(url=f"data:;base64,{PNG}", media_type="image/webp")
    assert given.inline == ("image/webp", PNG)  # the type given wins over the bytes'


@pytest.mark.parametrize("wire", ["openai", "openai-responses"])
@pytest.mark.parametrize("arguments", [{"when": {1, 2}}, {"x": float("nan")}])
def test_call_arguments_json_cannot_hold_are_a_config_error(
    wire: str, arguments: dict[str, Any]
) -> None:
    # was a TypeError from inside json's encoder (a set), or NaN written into the body,
    # which is no JSON; the other values of a request are a ConfigError when encoded
    call = ToolCall(id="c1", name="get_time", arguments=arguments)
    history = [*HI, Message.assistant("", tool_calls=[call]), Message.tool("c1", "noon")]
    request = ChatRequest(model="m", messages=history)
    with pytest.raises(ConfigError, match=r"^the request cannot be sent as JSON: the arguments"):
        wire_for(wire).build_body(request)


async def test_call_arguments_json_cannot_hold_end_a_stream_as_a_config_error() -> None:
    call = ToolCall(id="c1", name="get_time", arguments={"when": {1, 2}})
    history = [*HI, Message.assistant("", tool_calls=[call]), Message.tool("c1", "noon")]
    async with rxllm.provider("local") as local:
        with pytest.raises(ConfigError, match=r"tool call 'c1' \('get_time'\)"):
            await local.complete(ChatRequest(model="rxllm-local", messages=history))
