"""Rejections from gateways, relays and local servers, in words the earlier rules did not
read. The real bodies are in tests/rejections_extra (LiteLLM, Novita behind OpenRouter,
Azure's "Functions are not supported", Qwen's openai_api.py, Xinference, Cloudflare AI
Gateway's "Invalid provider", tinker's pydantic list, Z.ai's 1210, an octopus relay's
"Unsupported model", Google's "model name is invalid", a Spring Boot gateway's error
body); these are paraphrases and near misses of the same words, read as `sources.http`
and the chat wire read a rejection (`test_probe_rejections_7.response` and `.frame`)."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.error_body import parse_error_body
from tests.test_probe_rejections_7 import body, response

TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


@pytest.mark.parametrize(
    "message",
    [
        # a server's own English (Novita: "model features function calling not support")
        "model features tool calling not support",
        # a feature the server lacks (Qwen's openai_api.py)
        "Invalid request: Function calling is not yet implemented for stream mode.",
        # the capability as a plural noun (Azure)
        "Functions are not supported for this API version or this model version.",
        # a list of the models that have it (Xinference), names with dots inside
        "Only ['qwen1.5-chat', 'glm4-chat'] support tool calls",
    ],
)
def test_tools_refused_in_new_words_drop_the_tools(message: str) -> None:
    sent = body(temperature=0.2, tools=TOOLS, tool_choice="auto")
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("tools", "tool_choice"))


def test_the_legacy_function_keys_are_the_tools_too() -> None:
    """`functions` and `function_call` go where function calling is refused; the second
    means nothing without the first."""
    functions = [{"name": "get_weather", "parameters": {"type": "object"}}]
    sent = body(temperature=0.2, functions=functions, function_call="auto")
    error = {"detail": "Function calling is not yet implemented for stream mode."}
    verdict = response(400, error, sent)
    assert (verdict.action, verdict.drop) == ("drop", ("functions", "function_call"))


def test_only_with_support_names_nothing_outside_a_capability() -> None:
    """ "only ... supports" refuses a capability only; with no capability in its sentence
    it names no key (here a value, which the structured `param` names)."""
    error = _error("This model only supports temperature 1.", param="temperature")
    verdict = response(400, error, body(temperature=0.2, tools=TOOLS))
    assert (verdict.action, verdict.drop) == ("drop", ("temperature",))


def test_a_pair_refused_with_each_other_loses_the_key_the_param_points_at() -> None:
    """ "A with B are not supported", `param` at B (OpenAI's "Function tools with
    reasoning_effort are not supported for gpt-5.6-terra"): B goes, the tools stay."""
    sent = body(reasoning_effort="high", tools=TOOLS)
    message = "Tools with reasoning_effort 'high' are not supported for this model."
    verdict = response(400, _error(message, param="reasoning_effort"), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("reasoning_effort",))
    # without a pointer the pair goes together, which is accepted too
    verdict = response(400, _error(message), sent)
    assert set(verdict.drop) == {"reasoning_effort", "tools"}


@pytest.mark.parametrize(
    "message",
    [
        "Invalid provider",
        "Unknown provider 'acme' for model kimi-k2.6",
        "Unsupported model: 'deepseek-r1'.",
        "You don't have access to this model or the model name is invalid",
        "The model id is not valid for this endpoint",
    ],
)
def test_a_model_or_its_route_that_is_not_there_surfaces(message: str) -> None:
    assert response(400, _error(message), body(temperature=0.2, top_p=0.9)).action == "surface"


def test_a_setting_of_the_model_is_a_key_not_the_model() -> None:
    """ "Unsupported model parameter" names the parameter, not a missing model."""
    verdict = response(400, _error("Unsupported model parameter: 'top_p'"), body(top_p=0.9))
    assert (verdict.action, verdict.drop) == ("drop", ("top_p",))


def test_a_validator_that_wants_text_parts_refuses_the_images() -> None:
    """pydantic's "Input should be 'text'" at a message part's type: text parts only."""
    error = {
        "detail": [
            {
                "loc": ["body", "messages", 0, "content", 1, "type"],
                "msg": "Input should be 'text'",
                "type": "literal_error",
            }
        ]
    }
    assert response(422, error, body(images=True, temperature=0.2)).action == "images"


def test_a_list_of_types_is_about_a_value_not_the_images() -> None:
    """ "Input should be 'text' or 'json_object'" at `response_format.type` (DeepInfra)
    refuses that key's value, though the body carries images too."""
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}
    error = {
        "detail": [
            {
                "loc": ["body", "response_format", "type"],
                "msg": "Input should be 'text' or 'json_object'",
                "type": "literal_error",
            }
        ]
    }
    verdict = response(422, error, body(images=True, response_format=schema))
    assert (verdict.action, verdict.drop) == ("drop", ("response_format",))


@pytest.mark.parametrize("message", ["[1210][图片输入格式/解析错误]", "图片数据无效"])
def test_an_image_input_said_invalid_in_chinese_removes_the_images(message: str) -> None:
    error = {"error": {"code": "1210", "message": message}}
    assert response(400, error, body(images=True, temperature=0.2)).action == "images"


def test_an_invalid_parameter_in_chinese_without_image_words_keeps_the_images() -> None:
    error = {"error": {"code": "1210", "message": "API 调用参数有误。参数错误"}}
    assert response(400, error, body(images=True, temperature=0.2)).action == "static"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Spring Boot: `error` is the reason phrase, `message` the words
        (
            '{"status":400,"error":"Bad Request","path":"/v2/chat",'
            '"message":"Unsupported content part type: image"}',
            "Unsupported content part type: image",
        ),
        # NestJS: the words are a list
        (
            '{"statusCode":400,"message":["property top_k should not exist"],'
            '"error":"Bad Request"}',
            '["property top_k should not exist"]',
        ),
        # TGI and Ollama: `error` is the words, with no `message` beside it
        (
            '{"error":"Input validation error: `top_p` must be > 0.0","error_type":"validation"}',
            "Input validation error: `top_p` must be > 0.0",
        ),
    ],
)
def test_a_reason_phrase_beside_the_message_is_not_the_message(text: str, message: str) -> None:
    assert parse_error_body(text).message == message


def test_a_spring_boot_refusal_of_the_images_reads_its_message() -> None:
    error = {
        "status": 400,
        "error": "Bad Request",
        "message": "Unsupported content part type: image",
    }
    assert response(400, error, body(images=True)).action == "images"
