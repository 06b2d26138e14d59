"""What users of the providers' SDKs pass to a request, read as they mean it or refused
at once with what to do: the openai SDK's tool shapes, images as files or bytes, a tool
message without its call id, a tool's JSON result, and the names other SDKs give
providers."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import rxllm
from rxllm.local import WIRES, LocalServer
from rxllm.providers import PROVIDER_NAMES, wire_for

# A 1x1 PNG (its signature says image/png whatever a name or a data URL says).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
PNG_URL = f"data:image/png;base64,{base64.b64encode(PNG).decode()}"
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = rxllm.Tool(name="get_weather", description="The weather", parameters=WEATHER_SCHEMA)


def body(provider: str, messages: list[Any], tools: Sequence[Any] = ()) -> dict[str, Any]:
    request = rxllm.ChatRequest(model="m", messages=messages, tools=tools)
    return wire_for(provider).build_body(request)


# 1. The openai SDK's tool shapes


CHAT_TOOL = {  # openai.types.chat.ChatCompletionToolParam
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather",
        "parameters": WEATHER_SCHEMA,
        "strict": False,
    },
}
RESPONSES_TOOL = {  # openai.types.responses.FunctionToolParam: flat, strict required
    "type": "function",
    "name": "get_weather",
    "description": "The weather",
    "parameters": WEATHER_SCHEMA,
    "strict": None,
}
ANTHROPIC_TOOL = {  # anthropic.types.ToolParam: its functions are of type "custom"
    "type": "custom",
    "name": "get_weather",
    "description": "The weather",
    "input_schema": WEATHER_SCHEMA,
    "cache_control": {"type": "ephemeral"},
}


@pytest.mark.parametrize(
    "tool", [CHAT_TOOL, RESPONSES_TOOL, ANTHROPIC_TOOL], ids=["chat", "responses", "anthropic"]
)
@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "google"])
def test_the_openai_sdk_tool_shapes_are_read_as_the_tool(provider: str, tool: Any) -> None:
    hi = [rxllm.Message.user("hi")]
    assert body(provider, hi, [tool]) == body(provider, hi, [WEATHER])


def test_a_function_without_parameters_or_description_takes_none() -> None:
    (tool,) = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("hi")],
        tools=[{"type": "function", "function": {"name": "now"}}],
    ).tools
    assert tool == rxllm.Tool(name="now")


def test_strict_mode_is_refused_not_dropped() -> None:
    # rxllm sends every tool non-strict (the Responses wire says `strict: false`):
    # dropping `strict: true` would lose the schema adherence the user asked for.
    strict = {"type": "function", "function": {**CHAT_TOOL["function"], "strict": True}}
    with pytest.raises(ValidationError, match=r"tools\.0\n.*strict: true is not sent") as info:
        rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], tools=[strict])
    assert "params={'tools': [...]}" in str(info.value)


@pytest.mark.parametrize(
    "tool",
    [
        {"type": "web_search"},
        {"type": "custom", "custom": {"name": "code_exec"}},
        {"type": "web_search_20250305", "name": "web_search"},
    ],
)
def test_a_provider_tool_says_to_send_it_in_params(tool: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match=r"is the provider's own.*params=\{'tools'"):
        rxllm.Tool.model_validate(tool)


def test_what_else_the_wrapper_holds_is_still_refused() -> None:
    with pytest.raises(ValidationError, match=r"defer_loading\n  Extra inputs"):
        rxllm.Tool.model_validate({**CHAT_TOOL, "defer_loading": True})


def test_a_provider_tool_is_sent_in_params() -> None:
    # what the messages above point to: it reaches the body as the wire takes it
    search = [{"type": "web_search"}]
    request = rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("hi")], params={"tools": search}
    )
    assert wire_for("openai-responses").build_body(request)["tools"] == search


# 2. Images: a file or its bytes are read; a path given as a str is not a URL


def test_an_image_file_and_its_bytes_are_sent_inline(tmp_path: Path) -> None:
    # named .jpg: the bytes say PNG, and the APIs check the type against the bytes
    path = tmp_path / "dot.jpg"
    path.write_bytes(PNG)
    for image in (path, PNG, PNG_URL):
        message = rxllm.Message.user("What is this?", images=[image])
        assert message.images == [rxllm.ImagePart(url=PNG_URL)]
        assert rxllm.ImagePart(url=image).url == PNG_URL
    data = base64.b64encode(PNG).decode()
    source = {"type": "base64", "media_type": "image/png", "data": data}
    anthropic = body("anthropic", [message])["messages"][0]["content"][1]
    assert anthropic == {"type": "image", "source": source}
    google = body("google", [message])["contents"][0]["parts"][1]
    assert google == {"inlineData": {"mimeType": "image/png", "data": data}}
    openai = body("openai", [message])["messages"][0]["content"][1]
    assert openai == {"type": "image_url", "image_url": {"url": PNG_URL}}


def test_a_file_whose_bytes_say_no_type_goes_by_its_suffix(tmp_path: Path) -> None:
    heic = tmp_path / "photo.heic"  # Gemini takes HEIC; its bytes are not sniffed here
    heic.write_bytes(b"\x00\x00\x00\x18ftypheic")
    assert rxllm.ImagePart(url=heic).url.startswith("data:image/heic;base64,")
    assert rxllm.ImagePart(url=b"\x00\x00\x00\x18ftypheic", media_type="image/heic").inline == (
        "image/heic",
        base64.b64encode(b"\x00\x00\x00\x18ftypheic").decode(),
    )


def test_what_is_not_an_image_says_to_give_its_type(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not an image")
    for image in (notes, b"not an image"):
        with pytest.raises(ValidationError, match=r"image type of .* is unknown.*media_type="):
            rxllm.Message.user("hi", images=[image])


def test_a_missing_image_file_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"cannot read the image file .*missing\.png"):
        rxllm.Message.user("hi", images=[tmp_path / "missing.png"])


@pytest.mark.parametrize("url", ["/tmp/x.png", "x.png", "C:\\x.png"])
def test_a_path_as_a_str_is_not_sent_as_a_url(url: str) -> None:
    # It was sent as `"url": "/tmp/x.png"` (Gemini: `fileData.fileUri`), and the
    # provider's refusal could be taken for an endpoint that refuses images.
    with pytest.raises(ValidationError, match=r"is not a URL a provider can read.*pathlib\.Path"):
        rxllm.Message.user("hi", images=[url])
    with pytest.raises(ValidationError, match=r"messages\.0\.content\.1\.image\.url\n"):
        rxllm.ChatRequest(
            model="m",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hi"},
                        {"type": "image_url", "image_url": {"url": url}},
                    ],
                }
            ],
        )


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/a.png",
        "HTTP://example.com/a",
        "gs://bucket/a.png",
        "file:///srv/media/a.png",  # a local vLLM reads these (--allowed-local-media-path)
        PNG_URL,
    ],
)
def test_urls_are_kept_as_they_are(url: str) -> None:
    assert rxllm.Message.user("hi", images=[url]).images[0].url == url


@pytest.mark.parametrize("images", [PNG, Path("dot.png")], ids=["bytes", "path"])
def test_one_image_not_in_a_list_is_a_type_error(images: Any) -> None:
    # bytes are iterable too: one "image" per byte
    with pytest.raises(TypeError, match=r"images must be a list: images=\["):
        rxllm.Message.user("hi", images=images)


def test_an_image_file_in_an_openai_style_dict_is_read(tmp_path: Path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(PNG)
    message = rxllm.Message.model_validate(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": path}}]}
    )
    assert message.images == [rxllm.ImagePart(url=PNG_URL)]


# 3. A tool message answers a call


@pytest.mark.parametrize(
    "tool",
    [
        {"role": "tool", "content": "18 C"},
        {"role": "tool", "content": "18 C", "tool_call_id": None},
        {"role": "tool", "content": "18 C", "tool_call_id": ""},
    ],
)
def test_a_tool_message_without_its_call_id_is_refused(tool: dict[str, Any]) -> None:
    # It was sent as `tool_call_id: null` (OpenAI), `tool_use_id: null` (Anthropic),
    # `call_id: null` (Responses); Google refused it only when building the body.
    with pytest.raises(ValidationError, match=r"messages\.1\n.*needs its tool_call_id"):
        rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi"), tool])
    with pytest.raises(ValidationError, match="needs its tool_call_id"):
        rxllm.Message(role="tool", content=[rxllm.TextPart(text="18 C")])


# 4. A tool's result as JSON


@pytest.mark.parametrize("result", [{"temperature": 21, "unit": "°C"}, [1, "two"], 3.5])
def test_a_tool_result_that_is_not_a_str_is_sent_as_its_json(result: Any) -> None:
    assert json.loads(rxllm.Message.tool("c1", result).text) == result
    assert rxllm.Message.tool("c1", {"unit": "°C"}).text == '{"unit": "°C"}'


def test_a_json_object_result_reaches_gemini_as_its_response() -> None:
    messages = [
        rxllm.Message.user("Weather in Paris?"),
        rxllm.Message.assistant(tool_calls=[rxllm.ToolCall(id="c1", name="get_weather")]),
        rxllm.Message.tool("c1", {"temperature": 21}),
    ]
    (_, _, result) = body("google", messages, [WEATHER])["contents"]
    assert result["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"temperature": 21}}}
    ]


def test_a_result_that_is_not_json_says_to_encode_it() -> None:
    with pytest.raises(TypeError, match=r"not JSON .*json\.dumps\(result, default=str\)"):
        rxllm.Message.tool("c1", {"at": object()})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="not JSON"):
        rxllm.Message.tool("c1", {"x": float("nan")})


def test_user_text_that_is_not_a_str_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"Message\.user takes its text as one str, got list"):
        rxllm.Message.user(["a", "b"])  # type: ignore[arg-type]


@pytest.mark.parametrize("wire", WIRES)
async def test_an_agent_loop_with_openai_sdk_tools_and_a_dict_result_ends(
    local_server: LocalServer, wire: str
) -> None:
    p = local_server.provider(wire)
    messages = [rxllm.Message.user("What's the weather in Paris?")]
    request = rxllm.ChatRequest(model="local", messages=messages, tools=[CHAT_TOOL])
    record = await p.complete(request)
    (call,) = record.tool_calls
    assert call.name == "get_weather"
    messages += [
        rxllm.Message.assistant(record.text, [call.to_call()]),
        rxllm.Message.tool(call.call_id, {"temperature": 21}),
    ]
    record = await p.complete(request.model_copy(update={"messages": messages}))
    assert record.terminal.type == "done" and record.terminal.stop_reason == "stop"
    assert record.text.startswith("get_weather returned ") and "21" in record.text


# 5. The names other SDKs give providers


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("gemini", "'google'"),
        ("claude", "'anthropic'"),
        ("azure", "'azure-openai'"),
        ("openai-chat", "'openai'"),
        ("responses", "'openai-responses'"),
        ("grok", "'xai'"),
        ("lmstudio", "'custom' with base_url='http://localhost:1234/v1'"),
        ("lm-studio", "'custom' with base_url="),
        ("Gemini", "'google'"),
        ("OpenAI", "'openai'"),
        ("anthropc", "'anthropic'"),  # a typo, as before
    ],
)
def test_a_well_known_other_name_says_which_to_use(name: str, hint: str) -> None:
    with pytest.raises(
        rxllm.ConfigError, match=rf"unknown provider '{name}' \(did you mean "
    ) as info:
        rxllm.provider(name)
    assert hint in str(info.value)
    with pytest.raises(rxllm.ConfigError, match=rf"unknown provider '{name}' \(did you mean "):
        rxllm.replay(b"", provider=name)


def test_the_hints_are_hints_not_names() -> None:
    assert "gemini" not in PROVIDER_NAMES and "claude" not in PROVIDER_NAMES
    with pytest.raises(rxllm.ConfigError, match=r"unknown provider 'nothing-like-it'; known"):
        rxllm.provider("nothing-like-it")


def test_image_bytes_in_any_buffer_are_read() -> None:
    for image in (bytearray(PNG), memoryview(PNG)):
        (part,) = rxllm.Message.user("hi", images=[image]).images
        assert part.url == PNG_URL


@pytest.mark.parametrize("provider", ["anthropic", "google", "openai-responses"])
def test_an_image_in_a_system_message_is_refused_where_the_wire_drops_it(provider: str) -> None:
    # Anthropic's `system` and Gemini's `systemInstruction` take text: the image was
    # dropped without a word.
    system = rxllm.Message(
        role="system", content=[rxllm.TextPart(text="Be brief."), rxllm.ImagePart(url=PNG_URL)]
    )
    with pytest.raises(rxllm.ConfigError, match=r"(system\w*( prompt)?|instructions) take"):
        body(provider, [system, rxllm.Message.user("hi")])


def test_an_images_detail_reaches_the_openai_wires() -> None:
    # openai_message dropped `detail`: an openai SDK user's "high" went as the default
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "high"}},
        ],
    }
    chat = body("openai", [message])["messages"][0]["content"][1]
    assert chat == {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "high"}}
    responses = body("openai-responses", [message])["input"][0]["content"][1]
    assert responses["detail"] == "high"
    plain = body("openai", [rxllm.Message.user("hi", images=[PNG_URL])])["messages"][0]
    assert plain["content"][1] == {"type": "image_url", "image_url": {"url": PNG_URL}}
