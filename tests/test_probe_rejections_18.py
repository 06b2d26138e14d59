"""The fifth round of unseen rejections (tests/rejections_extra, 37 cases from servers and
gateways with few cases so far) taught five readings; these are the bodies near each that
must not change with them, read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`). The words are paraphrases of the servers' formats.

- A part "in the request" over a maximum is that part's, not the request's size; a tool
  definition by the API's own name (`FunctionDeclaration`) over a limit refuses `tools`
  (gemini__function_declaration_exceeds_maximum_nesting_depth: before, read as too long).
- Another API named as the one to use, or this one refused for the model, is no body's
  fault (cohere__generate_api_not_supported_use_chat_api: before, static).
- "Chat turns" are the conversation (cohere__raw_prompt_invalid_must_contain_valid_chat_turns:
  before, static).
- An allowance used up where no wait is said to help is the account's
  (cloudflare__3036_429_daily_free_allocation_used_up: before, backoff).
- An identifier capitalized as its sentence's first word names its key
  (azure-openai__response_format_json_schema_enabled_only_for_api_versions: before, static).

The round's other cases were read right before: anthropic__max_tokens_greater_than_maximum_
allowed_output_tokens, bedrock_mantle__401_model_not_available_for_this_account,
cerebras__wrong_api_format_type_input_should_be_text, cloudflare__3023_403_service_unavailable_
for_account, cloudflare__3040_429_no_more_data_centers, cloudflare__5007_no_such_model_or_task,
cohere__message_must_be_at_least_1_token_or_tool_results, copilot__unsupported_api_for_model_
not_accessible_via_endpoint, dashscope__algo_invalid_parameter_tool_calls_must_be_followed_by_
tool_messages, dashscope__compat_range_of_top_p_open_interval, dashscope__missing_required_
parameter_messages_param_message, dashscope__native_role_must_be_user_or_assistant_content_
length_400, fireworks__extra_inputs_field_response_format_schema_field, gemini__function_
calling_not_enabled_for_gemma, gemini__image_input_modality_not_enabled_for_gemma,
gemini__request_contains_an_invalid_argument_list_envelope, github-models__400_text_plain_
model_not_found_expected_format, github-models__404_unknown_model_slash_prefix,
litellm__429_no_deployments_available_try_again_in_5_seconds, localai__500_model_does_not_
exist_for_every_backend, localai__500_rpc_error_unimplemented, newapi__429_upstream_error_
param_404_bad_response_status_code, newapi__429_upstream_load_saturated_chinese,
omlx__prompt_too_long_exceeds_max_context_window, perplexity__max_tokens_must_be_at_least_16_
for_sonar, portkey__either_config_or_provider_header_required, qianfan__parameter_check_
failed_max_completion_tokens_range, qwen_portal__invalid_parameter_error_bad_request_opaque,
siliconflow__20012_model_does_not_exist_check_carefully, vertex__invalid_value_at_tools_
function_declarations_field_violation, vertex_anthropic__output_config_extra_inputs_not_
permitted, volcengine__one_or_more_parameters_not_valid_request_id_in_message.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, response


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


def _with_tools(**params: Any) -> dict[str, Any]:
    return {**body(**params), "tools": TOOLS, "tool_choice": "auto"}


def test_a_tool_definition_over_a_limit_refuses_the_tools() -> None:
    message = "A FunctionDeclaration in the request exceeds the maximum allowed nesting depth."
    verdict = response(400, _error(message), _with_tools(temperature=0.2))
    assert (verdict.action, verdict.drop) == ("drop", ("tools", "tool_choice"))


@pytest.mark.parametrize(
    ("message", "action"),
    [
        # the request itself over a maximum is still its size
        ("The request exceeds the maximum context length of 8192 tokens.", "surface"),
        # calls of the history over a maximum are the conversation, not the definitions
        ("The number of function calls in the history exceeds the maximum of 64.", "surface"),
    ],
)
def test_the_request_or_its_calls_over_a_maximum_keep_the_tools(message: str, action: str) -> None:
    verdict = response(400, _error(message), _with_tools(temperature=0.2))
    assert (verdict.action, verdict.drop) == (action, ())


@pytest.mark.parametrize(
    ("status", "message", "sent", "expected"),
    [
        # a key named beside the API is that key's refusal
        (
            400,
            "'logprobs' is not supported by the chat API for this model.",
            body(logprobs=True),
            ("drop", ("logprobs",)),
        ),
        # a wait said to help outranks the advice to use another API
        (
            429,
            "Too many requests: please use the batch API instead or try again later.",
            body(temperature=0.2),
            ("backoff", ()),
        ),
    ],
)
def test_another_api_beside_a_key_or_a_wait(
    status: int, message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    verdict = response(status, _error(message), sent)
    assert (verdict.action, verdict.drop) == expected


@pytest.mark.parametrize(
    ("status", "message", "sent", "expected"),
    [
        # a body key named in the same sentence goes, whatever it says of chat turns
        (
            400,
            "'chat_template_kwargs' is not supported: chat turns are rendered by the server.",
            body(chat_template_kwargs={"enable_thinking": False}),
            ("drop", ("chat_template_kwargs",)),
        ),
        # chat turns counted per minute are a rate
        (429, "Too many chat turns per minute for this key.", body(), ("backoff", ())),
    ],
)
def test_chat_turns_beside_a_key_or_a_window(
    status: int, message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    verdict = response(status, _error(message), sent)
    assert (verdict.action, verdict.drop) == expected


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (429, "You have used up your allocation for this minute. Please retry in 20 seconds."),
        (429, "Your free allocation has been used up; it resets at the top of the hour."),
        (503, "The GPU allocation is exhausted, try again later."),
    ],
)
def test_an_allowance_that_a_wait_restores_is_a_backoff(status: int, message: str) -> None:
    assert response(status, _error(message), body(temperature=0.2)).action == "backoff"


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        # a longer key's capitalized name is not the shorter key
        ("Max_tokens_per_request must be at most 4096.", body(max_tokens=8192)),
        ("Top_p_min is not supported.", body(top_p=0.9)),
    ],
)
def test_a_capitalized_longer_identifier_names_no_shorter_key(
    message: str, sent: dict[str, Any]
) -> None:
    verdict = response(400, _error(message), sent)
    assert verdict.action == "static", verdict


def test_a_capitalized_identifier_opening_a_sentence_is_its_key() -> None:
    message = (
        "Response_format value as json_schema is enabled only for api versions "
        "2024-08-01-preview and later"
    )
    verdict = response(400, _error(message), body(response_format={"type": "json_schema"}))
    assert (verdict.action, verdict.drop) == ("drop", ("response_format",))
