"""ChatRequest as users write it: OpenAI-style message dicts, typed sampling fields
that each wire writes under its own body keys, and errors that say what to do."""

from __future__ import annotations

import ast
import inspect
from typing import Any

import pytest
from pydantic import ValidationError

import rxllm
from rxllm.local import LocalServer
from rxllm.providers import wire_for
from rxllm.providers.base import SAMPLING_ALIASES
from rxllm.request import SAMPLING_FIELDS

HI = [{"role": "user", "content": "hi"}]


def test_openai_style_messages_validate_into_messages() -> None:
    req = rxllm.ChatRequest(
        model="m",
        messages=[
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://x.test/a.png", "detail": "low"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,  # as the openai SDK's model_dump() writes it
                "annotations": [],  # the answer's url citations, in every dump since 2025
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
        ],
    )
    assert req.messages == [
        rxllm.Message.system("Be brief."),
        rxllm.Message(
            role="user",
            content=[
                rxllm.TextPart(text="What is this?"),
                rxllm.ImagePart(url="https://x.test/a.png", detail="low"),  # for OpenAI's wires
            ],
        ),
        rxllm.Message.assistant(
            tool_calls=[
                rxllm.ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
            ]
        ),
        rxllm.Message.tool("call_1", "18 C"),
    ]


def test_dicts_and_messages_mix() -> None:
    req = rxllm.ChatRequest(model="m", messages=[rxllm.Message.system("s"), *HI])
    assert [m.role for m in req.messages] == ["system", "user"]
    assert req.messages[1].text == "hi"


@pytest.mark.parametrize(
    ("message", "where", "says"),
    [
        ({"role": "usr", "content": "x"}, "messages.1.role", "'system', 'user'"),
        ({"role": "user", "content": 5}, "messages.1", "content must be a string or a list"),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {}}]},
            "messages.1",
            "content[0].image_url must be",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}],
            },
            "messages.1",
            "tool_calls[0].function.arguments is not valid JSON",
        ),
        ({"role": "user", "content": [{"type": "input_audio"}]}, "messages.1.content.0", "'text'"),
    ],
)
def test_a_bad_message_names_its_index_and_field(
    message: dict[str, Any], where: str, says: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        rxllm.ChatRequest(model="m", messages=[*HI, message])
    text = str(caught.value)
    assert f"\n{where}\n" in text and says in text


def test_sampling_fields_are_typed() -> None:
    req = rxllm.ChatRequest(model="m", messages=HI, temperature=0.2, max_tokens=100, stop="\n")
    assert (req.temperature, req.max_tokens, req.stop) == (0.2, 100, "\n")
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        rxllm.ChatRequest(model="m", messages=HI, temperature=-1)


def test_the_signature_type_checkers_see_has_every_field() -> None:
    """ChatRequest declares its __init__ for type checkers (so messages may be dicts);
    a field added to the model must be added there too."""
    tree = ast.parse(inspect.getsource(rxllm.ChatRequest))
    init = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    )
    assert [arg.arg for arg in init.args.kwonlyargs] == list(rxllm.ChatRequest.model_fields)


def test_an_unknown_keyword_points_to_params() -> None:
    with pytest.raises(ValidationError, match=r"no field 'top_k': .*params=\{'top_k': \.\.\.\}"):
        rxllm.ChatRequest(model="m", messages=HI, top_k=40)  # type: ignore[call-arg]


ALL = {
    "temperature": 0.2,
    "top_p": 0.9,
    "max_tokens": 100,
    "stop": "END",
    "seed": 7,
    "presence_penalty": 0.1,
    "frequency_penalty": 0.3,
}


def body_of(provider: str, **fields: Any) -> dict[str, Any]:
    return wire_for(provider).build_body(rxllm.ChatRequest(model="m", messages=HI, **fields))


def test_openai_chat_writes_its_own_names() -> None:
    """OpenAI's `max_tokens` is deprecated for `max_completion_tokens` (o-series and gpt-5
    refuse it); the compatible servers read `max_tokens`."""
    body = body_of("openai", **ALL)
    names = {**{key: key for key in ALL}, "max_tokens": "max_completion_tokens"}
    assert {key: body[names[key]] for key in ALL} == {**ALL, "stop": ["END"]}
    assert "max_tokens" not in body
    assert body_of("vllm", max_tokens=100)["max_tokens"] == 100


def test_responses_writes_max_output_tokens() -> None:
    body = body_of("openai-responses", temperature=0.2, top_p=0.9, max_tokens=100)
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.2, 0.9, 100)
    assert "max_tokens" not in body


def test_anthropic_writes_max_tokens_and_stop_sequences() -> None:
    body = body_of("anthropic", temperature=0.2, top_p=0.9, max_tokens=100, stop="END")
    assert (body["temperature"], body["top_p"]) == (0.2, 0.9)
    assert (body["max_tokens"], body["stop_sequences"]) == (100, ["END"])
    assert "stop" not in body


def test_google_writes_generation_config() -> None:
    body = body_of("google", **ALL)
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "topP": 0.9,
        "maxOutputTokens": 100,
        "stopSequences": ["END"],
        "seed": 7,
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.3,
    }
    assert not ALL.keys() & body.keys()


def test_typed_fields_and_params_go_together() -> None:
    body = body_of("google", temperature=0.2, params={"top_k": 40, "safetySettings": []})
    assert body["generationConfig"] == {"temperature": 0.2, "topK": 40}
    assert body["safetySettings"] == []


@pytest.mark.parametrize(
    ("provider", "field"),
    [("anthropic", "seed"), ("anthropic", "presence_penalty"), ("openai-responses", "stop")],
)
def test_a_field_the_wire_lacks_is_a_config_error(provider: str, field: str) -> None:
    with pytest.raises(rxllm.ConfigError, match=f"{provider} has no '{field}' parameter"):
        body_of(provider, **{field: ALL[field]})


@pytest.mark.parametrize(
    ("provider", "key"), [("openai", "temperature"), ("openai-responses", "max_output_tokens")]
)
def test_a_field_set_twice_is_a_config_error(provider: str, key: str) -> None:
    field = "temperature" if key == "temperature" else "max_tokens"
    with pytest.raises(rxllm.ConfigError, match=f"{field} is set twice.*params\\['{key}'\\]"):
        body_of(provider, **{field: 1, "params": {key: 1}})


@pytest.mark.parametrize(
    "provider",
    ["openai", "openai-responses", "anthropic", "google", "mistral", "xai", "deepseek"],
)
@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("max_tokens", "max_tokens"),
        ("max_tokens", "max_completion_tokens"),
        ("max_tokens", "max_output_tokens"),
        ("max_tokens", "maxOutputTokens"),
        ("temperature", "temperature"),
        ("top_p", "topP"),
    ],
)
def test_a_field_set_again_under_any_of_its_names_is_a_config_error(
    provider: str, field: str, key: str
) -> None:
    """The same setting under another wire's name is the field set twice: Mistral,
    xAI, DeepSeek and the Responses API sent both limits (`max_tokens` 100 and
    `max_completion_tokens` 50), Anthropic `max_tokens` beside a key it does not know."""
    with pytest.raises(rxllm.ConfigError, match=rf"{field} is set twice.*params\['{key}'\]"):
        body_of(provider, **{field: 1, "params": {key: 1}})


@pytest.mark.parametrize(
    ("provider", "field", "key"),
    [
        ("openai", "stop", "stop_sequences"),
        ("anthropic", "stop", "stopSequences"),
        ("openai", "seed", "random_seed"),
        ("mistral", "seed", "seed"),
        ("openai", "presence_penalty", "presencePenalty"),
        ("mistral", "frequency_penalty", "frequencyPenalty"),
    ],
)
def test_every_field_with_other_names_is_refused_under_them(
    provider: str, field: str, key: str
) -> None:
    with pytest.raises(rxllm.ConfigError, match=rf"{field} is set twice.*params\['{key}'\]"):
        body_of(provider, **{field: ALL[field], "params": {key: ALL[field]}})


def test_every_sampling_field_has_its_names() -> None:
    assert SAMPLING_ALIASES.keys() == set(SAMPLING_FIELDS)
    assert all(field in names for field, names in SAMPLING_ALIASES.items())


async def test_a_typed_field_the_endpoint_rejects_is_dropped_and_retried(
    local_server: LocalServer,
) -> None:
    p = rxllm.provider("local", base_url=local_server.url)
    req = rxllm.ChatRequest(model="fault/reject_param", messages=HI, temperature=0.2)
    rec = await p.complete(req)
    assert rec.terminal.type == "done" and rec.text
    assert [a.dropped for a in rec.attempts] == [[], ["temperature"]]
    sent = local_server.requests
    assert len(sent) == 2 and sent[0]["temperature"] == 0.2 and "temperature" not in sent[1]
    assert sent[1]["messages"] == [{"role": "user", "content": "hi"}]


def test_a_tool_name_given_twice_is_refused_at_the_request() -> None:
    """Every provider refuses it (Anthropic: "tools: Tool names must be unique")."""
    with pytest.raises(ValidationError, match="tool name 'f' is given twice"):
        rxllm.ChatRequest(
            model="m",
            messages=[rxllm.Message.user("hi")],
            tools=[rxllm.Tool(name="f"), rxllm.Tool(name="f", description="again")],
        )


@pytest.mark.parametrize("provider", ["anthropic", "google"])
@pytest.mark.parametrize(
    "messages",
    [
        [rxllm.Message.system("Be brief.")],
        [rxllm.Message.system("Be brief."), rxllm.Message.user("")],
    ],
)
def test_a_conversation_of_system_text_alone_is_a_config_error_where_it_goes_apart(
    provider: str, messages: list[rxllm.Message]
) -> None:
    """Anthropic and Gemini take the system prompt apart from the messages, and refuse a
    request with none left ("messages: at least one message is required"): said at the
    call, never sent."""
    request = rxllm.ChatRequest(model="m", messages=messages)
    with pytest.raises(rxllm.ConfigError, match=f"{provider} needs a message besides"):
        wire_for(provider).build_body(request)
