"""Round five's rejections in every envelope and in other words.

The 37 cases tests/rejections_extra gained in the fifth round (listed in
tests/test_probe_rejections_18.py's docstring) are taken apart and put back together in
each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame
after `200 OK`, as tests/test_probe_rejections_16.py does for earlier rounds; Cloudflare's
v4 envelope (`{"success": false, "errors": [{"code", "message"}]}`) gives its words from
its first error (`said_by`). Each combination must get the original's action, dropped keys
and renames, unless the envelope loses or overrides what the action rests on
(`DIFFERENT`, each with its reason).

Then, as tests/test_probe_rejections_17.py does, one to three paraphrases of each case
(`VARIANTS`), of each of the round's six rules (`RULES`: a tool definition over a limit, a
part "in the request" not being the request's size; another API or endpoint to use; chat
turns; an allowance used up; a capitalized identifier opening its sentence; a mid-stream
`server_error` whatever its code) with two near misses per rule, and near misses for the
readings this file added (`NEW_NEAR_MISSES`). Every expected action is written beside its
body. The wordings are invented after the servers' formats; none was recorded.

Left out as debatable: the Cerebras validator's "Input should be 'text' or 'json_object'"
at a bare `type` (a refusal of `response_format`'s value or the static list); Cohere's
"message: at least one token is required when no tool_results are given" with `tools`
sent (the message, or `tools` by its words); a 400 "No healthy deployments" (backoff or
none, as round five left it out); "Please adjust and try again later" in Chinese after a
key's refusal (the key or a wait); "stop sequences" in prose for `stop` (a plain word with
no word of a parameter beside it, as probe 17 leaves it), written here quoted; an account's
quota words with a wait named and no status (Gemini's free tier: a rate limit at 429, but
words alone may say either).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict
from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_9 import (
    ENVELOPES,
    EXTRA,
    Said,
    chat_wire_error,
    http_status,
    original,
    policy,
    said,
    sent,
)
from tests.test_probe_rejections_16 import combination_id, combinations, reading
from tests.test_probe_rejections_17 import SCHEMA, case, error, pydantic

# none 17, drop 10, backoff 5, static 4, images 1
ROUND_FIVE = (
    "anthropic__max_tokens_greater_than_maximum_allowed_output_tokens",
    "azure-openai__response_format_json_schema_enabled_only_for_api_versions",
    "bedrock_mantle__401_model_not_available_for_this_account",
    "cerebras__wrong_api_format_type_input_should_be_text",
    "cloudflare__3023_403_service_unavailable_for_account",
    "cloudflare__3036_429_daily_free_allocation_used_up",
    "cloudflare__3040_429_no_more_data_centers",
    "cloudflare__5007_no_such_model_or_task",
    "cohere__generate_api_not_supported_use_chat_api",
    "cohere__message_must_be_at_least_1_token_or_tool_results",
    "cohere__raw_prompt_invalid_must_contain_valid_chat_turns",
    "copilot__unsupported_api_for_model_not_accessible_via_endpoint",
    "dashscope__algo_invalid_parameter_tool_calls_must_be_followed_by_tool_messages",
    "dashscope__compat_range_of_top_p_open_interval",
    "dashscope__missing_required_parameter_messages_param_message",
    "dashscope__native_role_must_be_user_or_assistant_content_length_400",
    "fireworks__extra_inputs_field_response_format_schema_field",
    "gemini__function_calling_not_enabled_for_gemma",
    "gemini__function_declaration_exceeds_maximum_nesting_depth",
    "gemini__image_input_modality_not_enabled_for_gemma",
    "gemini__request_contains_an_invalid_argument_list_envelope",
    "github-models__400_text_plain_model_not_found_expected_format",
    "github-models__404_unknown_model_slash_prefix",
    "litellm__429_no_deployments_available_try_again_in_5_seconds",
    "localai__500_model_does_not_exist_for_every_backend",
    "localai__500_rpc_error_unimplemented",
    "newapi__429_upstream_error_param_404_bad_response_status_code",
    "newapi__429_upstream_load_saturated_chinese",
    "omlx__prompt_too_long_exceeds_max_context_window",
    "perplexity__max_tokens_must_be_at_least_16_for_sonar",
    "portkey__either_config_or_provider_header_required",
    "qianfan__parameter_check_failed_max_completion_tokens_range",
    "qwen_portal__invalid_parameter_error_bad_request_opaque",
    "siliconflow__20012_model_does_not_exist_check_carefully",
    "vertex__invalid_value_at_tools_function_declarations_field_violation",
    "vertex_anthropic__output_config_extra_inputs_not_permitted",
    "volcengine__one_or_more_parameters_not_valid_request_id_in_message",
)


def said_by(case: dict[str, Any]) -> Said:
    """What the case's server said: Cloudflare's v4 envelope holds its words and code in its
    first error, which `said` does not read (it would relay the whole body as the words)."""
    text = case["body"]
    payload = json.loads(text) if text.lstrip()[:1] == "{" else None
    errors = payload.get("errors") if isinstance(payload, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        first = errors[0]
        return Said(first["message"], None, str(first.get("code")), None, case["status"])
    return said(case)


def wrapped(case: dict[str, Any], envelope: str, in_band: bool) -> Verdict | None:
    """`tests.test_probe_rejections_9.wrapped`, of the words `said_by` reads."""
    s = said_by(case)
    payload = ENVELOPES[envelope](s)
    if not in_band:
        return response(http_status(s), payload, sent(case), policy(case))
    error = chat_wire_error(payload)
    return None if error is None else frame(error, sent(case), policy(case))


# Combinations whose envelope loses or overrides what the original's action rests on. (None
# now: Cloudflare's "daily free allocation" in Anthropic's and Google's envelopes, which type
# every 429 as a rate limit, reads the same since a limit counted by the day outranks that
# code where no wait is named, tests/test_probe_rejections_29.py.)
DIFFERENT: dict[str, str] = {}


def assert_reads_the_same(
    case_name: str, envelope: str, in_band: bool, different: Mapping[str, str] | None = None
) -> None:
    """Case `case_name` of tests/rejections_extra, in `envelope` (an HTTP body, or a frame
    after 200 OK), reads as the case itself does; one marked in `different` does not."""
    case = json.loads((EXTRA / f"{case_name}.json").read_text())
    verdict = wrapped(case, envelope, in_band)
    assert verdict is not None
    expected = reading(original(case))
    if combination_id(case_name, envelope, in_band) in (different or {}):
        assert reading(verdict) != expected, "now reads the same: unmark it"
        return
    assert reading(verdict) == expected, verdict


def action_counts(names: Sequence[str]) -> dict[str, int]:
    """How many of the cases `names` expect each action."""
    actions = [
        json.loads((EXTRA / f"{name}.json").read_text())["expected"]["action"] for name in names
    ]
    return {action: actions.count(action) for action in set(actions)}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_FIVE))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_cases_are_round_fives() -> None:
    assert len(set(ROUND_FIVE)) == 37
    assert action_counts(ROUND_FIVE) == {
        "none": 17,
        "drop": 10,
        "backoff": 5,
        "static": 4,
        "images": 1,
    }
    assert {key.split("/")[0] for key in DIFFERENT} <= set(ROUND_FIVE)


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- anthropic__max_tokens_greater_than_maximum_allowed_output_tokens: drop max_tokens
    case(
        "max_output/a: 'exceeds the model's maximum output'",
        response(
            400,
            error("The value of max_tokens (128001) exceeds the maximum output of 64000 tokens."),
            body(max_tokens=128001, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_output/b: 422, backticks, 'less than or equal to'",
        response(
            422,
            error("`max_tokens` must be less than or equal to 64000 for this model"),
            body(max_tokens=128001, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    # -- azure-openai__response_format_json_schema_enabled_only_for_api_versions: drop
    case(
        "json_schema_api_version/a: lower case, 'only supported in api versions'",
        response(
            400,
            error(
                "response_format of type json_schema is only supported in api versions "
                "2024-08-01-preview and later"
            ),
            body(response_format=SCHEMA, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "json_schema_api_version/b: capitalized, 'requires api-version'",
        response(
            400,
            error(
                "Response_format 'json_schema' requires api-version 2024-08-01-preview or later."
            ),
            body(response_format=SCHEMA, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "json_schema_api_version/c: in words, 'not enabled for this api version'",
        response(
            400,
            error("Structured output is not enabled for this api version."),
            body(response_format=SCHEMA, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- bedrock_mantle__401_model_not_available_for_this_account: none ---------------------
    case(
        "account_model/a: 403, 'not enabled for your account'",
        response(
            403,
            error("openai.gpt-5.6-luna is not enabled for your account. Request access first."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "account_model/b: in-band, 'not accessible to this account'",
        frame(
            error("openai.gpt-oss-120b is not accessible to this account."), body(temperature=0.2)
        ),
        "surface",
    ),
    # -- cerebras__wrong_api_format_type_input_should_be_text: static -----------------------
    case(
        "wrong_api_format/a: FastAPI's 422 at a bare `type`",
        response(
            422,
            {"detail": [{"loc": ["body", "type"], "msg": "Input should be 'text'"}]},
            body(response_format=SCHEMA, temperature=0.7),
        ),
        "static",
    ),
    # -- cloudflare__3023_403_service_unavailable_for_account: none -------------------------
    case(
        "service_for_account/a: in-band, 'is unavailable for this account'",
        frame(error("Service is unavailable for this account", code=3023), body(temperature=0.2)),
        "surface",
    ),
    case(
        "service_for_account/b: 403, 'not available to your account'",
        response(
            403, error("The service is not available to your account."), body(temperature=0.2)
        ),
        "surface",
    ),
    # -- cloudflare__3036_429_daily_free_allocation_used_up: none ---------------------------
    case(
        "allocation/a: passive, 'allowance ... has been exhausted'",
        response(
            429,
            error(
                "Your daily free allowance of 10,000 neurons has been exhausted. Upgrade to the "
                "paid plan to continue."
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "allocation/b: 'run out of your monthly allocation'",
        response(
            429,
            error("You have run out of your monthly allocation. Upgrade your plan to continue."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "allocation/c: LiteLLM's RateLimitError before the words",
        response(
            429,
            litellm(
                "litellm.RateLimitError: RateLimitError: OpenAIException - You have used up your "
                "daily free allocation of 10,000 neurons. Please upgrade to continue usage.",
                429,
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- cloudflare__3040_429_no_more_data_centers: backoff ---------------------------------
    case(
        "data_centers/a: in-band, 'no more data centers available'",
        frame(error("No more data centers available to forward the request"), body()),
        "backoff",
    ),
    case(
        "data_centers/b: in-band, 'no available replicas'",
        frame(error("There are no available replicas for this model right now."), body()),
        "backoff",
    ),
    # -- cloudflare__5007_no_such_model_or_task: none ---------------------------------------
    case(
        "no_such_model/a: 'not found'",
        response(400, error("Model @cf/meta/llama-3.9-8b-instruct not found"), body()),
        "surface",
    ),
    case(
        "no_such_model/b: in-band, 'Unknown model or task'",
        frame(error("Unknown model or task: @cf/meta/llama-3.9-8b-instruct"), body()),
        "surface",
    ),
    # -- cohere__generate_api_not_supported_use_chat_api: none ------------------------------
    case(
        "another_api/a: 'not available', 'use the Chat API'",
        response(
            400,
            {
                "message": "The generate API is not available for command-a-03-2025; "
                "use the Chat API."
            },
            body(temperature=0.3),
        ),
        "surface",
    ),
    case(
        "another_api/b: 'does not support the generate API, please call the chat API'",
        response(
            400,
            {
                "message": "invalid request: model 'command-a-03-2025' does not support the "
                "generate API, please call the chat API instead"
            },
            body(temperature=0.3),
        ),
        "surface",
    ),
    case(
        "another_api/c: the endpoint, not the API",
        response(
            400,
            {
                "message": "invalid request: the Generate endpoint is not supported for this "
                "model, use the Chat endpoint instead"
            },
            body(temperature=0.3),
        ),
        "surface",
    ),
    # -- cohere__message_must_be_at_least_1_token_or_tool_results: none ---------------------
    case(
        "empty_message/a: 'must not be empty unless tool results'",
        response(
            400,
            {"message": "invalid request: message must not be empty unless tool results are given"},
            body(tools=TOOLS, temperature=0.3),
        ),
        "surface",
    ),
    # -- cohere__raw_prompt_invalid_must_contain_valid_chat_turns: none ---------------------
    case(
        "chat_turns/a: 'could not be parsed into chat turns'",
        response(
            400,
            {"message": "invalid request: the raw prompt could not be parsed into chat turns"},
            body(temperature=0.3),
        ),
        "surface",
    ),
    case(
        "chat_turns/b: 422, 'chat-turns'",
        response(422, error("Invalid chat-turns in prompt."), body(temperature=0.3)),
        "surface",
    ),
    # -- copilot__unsupported_api_for_model_not_accessible_via_endpoint: none ---------------
    case(
        "endpoint_only/a: 'only accessible via the /responses endpoint'",
        response(
            400,
            error('model "gpt-5.4" is only accessible via the /responses endpoint'),
            body(temperature=0.2, max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "endpoint_only/b: 'not available on the chat completions API'",
        response(
            400,
            error("This model is not available on the chat completions API."),
            body(temperature=0.2, max_tokens=1024),
        ),
        "surface",
    ),
    # -- dashscope__algo_invalid_parameter_tool_calls_must_be_followed_by_tool_messages ----
    case(
        "tool_results_missing/a: roles quoted",
        response(
            400,
            error(
                "Messages with role 'assistant' and \"tool_calls\" must be followed by messages "
                "with role 'tool' for each tool_call_id."
            ),
            body(tools=TOOLS, parallel_tool_calls=True, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "tool_results_missing/b: Chinese",
        response(
            400,
            error("assistant消息中的tool_calls之后必须跟随对应的tool消息"),
            body(tools=TOOLS, parallel_tool_calls=True, temperature=0.2),
        ),
        "surface",
    ),
    # -- dashscope__compat_range_of_top_p_open_interval: drop top_p -------------------------
    case(
        "top_p_range/a: 'open interval'",
        response(400, error("top_p must be in the open interval (0, 1)"), body(top_p=1.0)),
        "drop",
        ("top_p",),
    ),
    case(
        "top_p_range/b: Chinese",
        response(400, error("top_p取值范围为(0.0, 1.0)\uff0c不包含边界"), body(top_p=1.0)),
        "drop",
        ("top_p",),
    ),
    case(
        "top_p_range/c: 'greater than 0 and less than 1'",
        response(
            400,
            error("The value of top_p should be greater than 0 and less than 1"),
            body(top_p=1.0, temperature=0.7),
        ),
        "drop",
        ("top_p",),
    ),
    # -- dashscope__missing_required_parameter_messages_param_message: none -----------------
    case(
        "messages_required/a: 'is a required property'",
        response(400, error("'messages' is a required property"), body(temperature=0.2)),
        "surface",
    ),
    case(
        "messages_required/b: the structured param",
        response(
            400,
            error("Missing required parameter: 'messages'.", param="messages"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- dashscope__native_role_must_be_user_or_assistant_content_length_400: none ----------
    case(
        "role_and_content/a: reordered",
        response(
            400,
            {
                "code": "InvalidParameter",
                "message": "Content length must be greater than 0 and "
                "role must be one of user, assistant",
            },
            body(temperature=0.2, max_tokens=512),
        ),
        "surface",
    ),
    case(
        "role_and_content/b: Chinese",
        response(
            400,
            {
                "code": "InvalidParameter",
                "message": "role必须是user或assistant\uff0c且content长度必须大于0",
            },
            body(temperature=0.2, max_tokens=512),
        ),
        "surface",
    ),
    # -- fireworks__extra_inputs_field_response_format_schema_field: drop response_format ---
    case(
        "inside_response_format/a: FastAPI's 422 inside the key",
        response(
            422,
            pydantic("response_format", "schema_field"),
            body(response_format={"type": "text"}, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "inside_response_format/b: the dotted path after a colon",
        response(
            400,
            error("Extra inputs are not permitted: response_format.schema_field"),
            body(response_format={"type": "text"}, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- gemini__function_calling_not_enabled_for_gemma: drop tools -------------------------
    case(
        "tools_not_enabled/a: 'Tool use is not enabled'",
        response(
            400,
            error("Tool use is not enabled for models/gemma-3-12b-it", status="INVALID_ARGUMENT"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tools_not_enabled/b: in-band, 'not supported by'",
        frame(
            error("Function calling is not supported by models/gemma-3-12b-it"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- gemini__function_declaration_exceeds_maximum_nesting_depth: drop tools -------------
    case(
        "declaration_depth/a: plural, 'in this request exceed'",
        response(
            400,
            error(
                "The function declarations in this request exceed the maximum allowed nesting "
                "depth of 16."
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "declaration_depth/b: the field's path",
        response(
            400,
            error("function_declarations[3].parameters exceeds the maximum nesting depth"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "declaration_depth/c: 'Nesting depth of FunctionDeclaration parameters exceeds'",
        response(
            400,
            error("Nesting depth of FunctionDeclaration parameters exceeds the limit of 16."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- gemini__image_input_modality_not_enabled_for_gemma: images -------------------------
    case(
        "image_modality/a: 'Image input is not enabled'",
        response(400, error("Image input is not enabled for models/gemma-3-27b-it"), body(True)),
        "images",
    ),
    case(
        "image_modality/b: in-band, 'does not support image input modality'",
        frame(error("models/gemma-3-27b-it does not support image input modality"), body(True)),
        "images",
    ),
    # -- gemini__request_contains_an_invalid_argument_list_envelope: static -----------------
    case(
        "invalid_argument/a: 'Invalid argument in request'",
        response(400, [error("Invalid argument in request.", code=400)], body(temperature=0.2)),
        "static",
    ),
    case(
        "invalid_argument/b: 'One of the request's arguments is invalid'",
        response(400, error("One of the request's arguments is invalid."), body(temperature=0.2)),
        "static",
    ),
    # -- github-models__400_text_plain_model_not_found_expected_format: none ----------------
    case(
        "model_format/a: 'Unknown model', the format",
        response(
            400,
            "Unknown model: gpt-4o. Expected format: {publisher}/{model_name}.",
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "model_format/b: 'was not found', a path to call",
        response(
            400,
            "Model 'gpt-4o' was not found; use the format publisher/model. See /catalog/models.",
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- github-models__404_unknown_model_slash_prefix: none --------------------------------
    case(
        "unknown_model/a: 'does not exist'",
        response(404, error("The model /gpt-5.2 does not exist"), body(temperature=0.2)),
        "surface",
    ),
    case(
        "unknown_model/b: in-band, the code",
        frame(error("Unknown model: /gpt-5.2", code="unknown_model"), body(temperature=0.2)),
        "surface",
    ),
    # -- litellm__429_no_deployments_available_try_again_in_5_seconds: backoff --------------
    case(
        "cooldown/a: in-band, a wait named",
        frame(error("All deployments are cooling down. Try again in 5 seconds."), body()),
        "backoff",
    ),
    case(
        "cooldown/b: 429, 'no healthy deployments', 'retry in 5s'",
        response(
            429, error("No healthy deployments for this model right now, retry in 5s"), body()
        ),
        "backoff",
    ),
    # -- localai__500_model_does_not_exist_for_every_backend: none --------------------------
    case(
        "backend_model/a: 500, through an rpc error",
        response(
            500,
            error("could not load model: rpc error: code = Unknown desc = model does not exist"),
            body(temperature=0.7),
        ),
        "surface",
    ),
    case(
        "backend_model/b: in-band",
        frame(error("model 'gpt-4' does not exist"), body(temperature=0.7)),
        "surface",
    ),
    # -- localai__500_rpc_error_unimplemented: backoff --------------------------------------
    case(
        "rpc_error/a: in-band, code Internal",
        frame(error("rpc error: code = Internal desc = backend crashed"), body(temperature=0.1)),
        "backoff",
    ),
    case(
        "rpc_error/b: 500, code Unavailable",
        response(
            500,
            error("rpc error: code = Unavailable desc = connection refused"),
            body(temperature=0.1),
        ),
        "backoff",
    ),
    # -- newapi__429_upstream_error_param_404_bad_response_status_code: backoff -------------
    case(
        "upstream_saturated/a: in-band, Chinese, 'load too high, retry later'",
        frame(
            error("上游负载过高\uff0c请稍后重试", type="upstream_error", param="404"),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "upstream_saturated/b: 429, English, the upstream's status as param",
        response(
            429,
            error(
                "Upstream load is saturated for the current group, please try again later",
                type="upstream_error",
                param="404",
                code="bad_response_status_code",
            ),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- newapi__429_upstream_load_saturated_chinese: backoff -------------------------------
    case(
        "saturated_chinese/a: in-band, 'system busy'",
        frame(error("系统繁忙\uff0c请稍后再试"), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "saturated_chinese/b: 503, 'server load too high'",
        response(503, error("服务器负载过高"), body(temperature=0.2)),
        "backoff",
    ),
    # -- omlx__prompt_too_long_exceeds_max_context_window: none -----------------------------
    case(
        "context_window/a: 'exceeds the max context window'",
        response(
            400,
            error("The prompt (51587 tokens) exceeds the max context window of 32768 tokens"),
            body(max_tokens=4096, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "context_window/b: 422, 'prompt is too long'",
        response(
            422,
            error("prompt is too long: 51587 tokens > 32768 maximum"),
            body(max_tokens=4096, temperature=0.2),
        ),
        "surface",
    ),
    # -- perplexity__max_tokens_must_be_at_least_16_for_sonar: drop max_tokens --------------
    case(
        "max_tokens_minimum/a: '>= 16'",
        response(400, error("max_tokens should be >= 16 for sonar models"), body(max_tokens=1)),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_tokens_minimum/b: 'Invalid max_tokens: minimum is 16'",
        response(400, error("Invalid max_tokens: minimum is 16"), body(max_tokens=1)),
        "drop",
        ("max_tokens",),
    ),
    # -- portkey__either_config_or_provider_header_required: none ---------------------------
    case(
        "header_required/a: 'header is missing'",
        response(
            400,
            {"status": "failure", "message": "x-portkey-provider header is missing"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "header_required/b: 'Missing required header'",
        response(
            400,
            {"status": "failure", "message": "Missing required header: x-portkey-config"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- qianfan__parameter_check_failed_max_completion_tokens_range: drop ------------------
    case(
        "completion_range/a: 'must be between'",
        response(
            400,
            error("max_completion_tokens must be between 2 and 4096"),
            body(max_completion_tokens=8192, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    case(
        "completion_range/b: Chinese",
        response(
            400,
            error("参数校验失败\uff0cmax_completion_tokens取值范围为[2, 4096]"),
            body(max_completion_tokens=8192, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    # -- qwen_portal__invalid_parameter_error_bad_request_opaque: static --------------------
    case(
        "bad_request/a: 'Bad Request', the code",
        response(400, error("Bad Request", code="invalid_parameter_error"), body(temperature=0.2)),
        "static",
    ),
    case(
        "bad_request/b: 422, 'invalid parameter'",
        response(422, error("invalid parameter"), body(temperature=0.2)),
        "static",
    ),
    # -- siliconflow__20012_model_does_not_exist_check_carefully: none ----------------------
    case(
        "model_missing/a: 'Model not found, please check'",
        response(
            400,
            {
                "code": 20012,
                "message": "Model not found, please check the model name.",
                "data": None,
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "model_missing/b: Chinese",
        response(
            400,
            {"code": 20012, "message": "模型不存在\uff0c请检查模型名称", "data": None},
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- vertex__invalid_value_at_tools_function_declarations_field_violation: drop tools ---
    case(
        "declaration_field/a: 'Unknown name' at a declaration",
        response(
            400,
            error(
                'Invalid JSON payload received. Unknown name "foo" at '
                "'tools[0].function_declarations[2].parameters': Cannot find field.",
                status="INVALID_ARGUMENT",
            ),
            body(tools=TOOLS, temperature=0.2, max_tokens=1024),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "declaration_field/b: the field violation alone",
        response(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "Request contains an invalid argument.",
                    "status": "INVALID_ARGUMENT",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.BadRequest",
                            "fieldViolations": [
                                {
                                    "field": "tools[0].function_declarations[1].parameters.type",
                                    "description": "Invalid value",
                                }
                            ],
                        }
                    ],
                }
            },
            body(tools=TOOLS, temperature=0.2, max_tokens=1024),
        ),
        "drop",
        ("tools",),
    ),
    # -- vertex_anthropic__output_config_extra_inputs_not_permitted: drop output_config -----
    case(
        "output_config/a: in-band, Anthropic's envelope",
        frame(
            {
                "type": "invalid_request_error",
                "message": "output_config: Extra inputs are not permitted",
            },
            body(output_config={"effort": "high"}, temperature=0.2),
        ),
        "drop",
        ("output_config",),
    ),
    case(
        "output_config/b: 'Unexpected field', quoted",
        response(
            400,
            error("Unexpected field 'output_config' in request body"),
            body(output_config={"effort": "high"}, temperature=0.2),
        ),
        "drop",
        ("output_config",),
    ),
    # -- volcengine__one_or_more_parameters_not_valid_request_id_in_message: static ---------
    case(
        "parameters_invalid/a: 'One or more of the parameters ... are invalid'",
        response(
            400,
            error("One or more of the parameters in the request are invalid.", param=""),
            body(temperature=0.2),
        ),
        "static",
    ),
    case(
        "parameters_invalid/b: 422, 'Some request parameters are not valid'",
        response(422, error("Some request parameters are not valid."), body(temperature=0.2)),
        "static",
    ),
]

# == the round's rules in other words, and what must not take them ======================
RULES = [
    # -- a tool definition over a limit (a part "in the request" is not its size) ---------
    case(
        "rule/definition/a: 'Tool definition ... exceeds the maximum size'",
        response(
            400,
            error("Tool definition 'f' in your request exceeds the maximum schema size."),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "near/definition/a: a key's value in the request over a maximum",
        response(
            400,
            error("The value of 'stop' in the request exceeds the maximum length of 32."),
            body(tools=TOOLS, stop=["x" * 40]),
        ),
        "drop",
        ("stop",),
    ),
    case(
        "near/definition/b: a message's content in the request over a nesting depth",
        response(
            400,
            error("A message content in this request exceeds the maximum allowed nesting depth."),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    # -- another API or endpoint to use: none ---------------------------------------------
    case(
        "rule/another_api/a: 'Completions API is not supported; call the Responses API'",
        response(
            400,
            error("The Completions API is not supported for o3-pro; call the Responses API."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/another_api/a: a key refused in the chat API",
        response(
            400,
            error("The logit_bias parameter is not supported in the chat API for this model."),
            body(logit_bias={"50256": -100}),
        ),
        "drop",
        ("logit_bias",),
    ),
    case(
        "near/another_api/b: a key refused at this endpoint",
        response(
            400,
            error("'top_k' is not supported by this endpoint; use the chat API without it."),
            body(top_k=40),
        ),
        "drop",
        ("top_k",),
    ),
    # -- chat turns: the conversation -----------------------------------------------------
    case(
        "rule/chat_turns/a: in-band, 'chat turn'",
        frame(error("Each chat turn must carry non-empty text."), body(temperature=0.3)),
        "surface",
    ),
    case(
        "near/chat_turns/a: a key refused for chat turns",
        response(400, error("'n' must be 1 for chat turns"), body(n=2)),
        "drop",
        ("n",),
    ),
    case(
        "near/chat_turns/b: chat turns counted per hour",
        response(429, error("Chat turn limit per hour reached."), body()),
        "backoff",
    ),
    # -- an allowance used up where no wait is said to help: none --------------------------
    case(
        "rule/allowance/a: in-band, 'allocation ... is used up'",
        frame(error("Your free allocation is used up. Upgrade to continue."), body()),
        "surface",
    ),
    case(
        "near/allowance/a: 'resets in 20 minutes'",
        response(
            429, error("Your hourly allowance is exhausted; it resets in 20 minutes."), body()
        ),
        "backoff",
    ),
    case(
        "near/allowance/b: a relay's class, the provider's own rate words",
        response(
            429,
            litellm(
                "litellm.RateLimitError: OpenAIException - Rate limit reached: your allocation "
                "is used up, try again later",
                429,
            ),
            body(),
        ),
        "backoff",
    ),
    # -- a capitalized identifier opening its sentence: its key ---------------------------
    case(
        "rule/capitalized/a: 'Max_tokens must be at most 4096.'",
        response(400, error("Max_tokens must be at most 4096."), body(max_tokens=8192)),
        "drop",
        ("max_tokens",),
    ),
    case(
        "rule/capitalized/b: after a sentence, 'Parallel_tool_calls is only supported with ...'",
        response(
            400,
            error("Invalid request. Parallel_tool_calls is only supported with tools."),
            body(parallel_tool_calls=False),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    case(
        "near/capitalized/a: a longer key's words are not `stop`",
        response(400, error("Stop_sequences must hold at most 4 entries."), body(stop=["x"])),
        "static",
    ),
    case(
        "near/capitalized/b: a capitalized identifier the body does not have",
        response(400, error("Seed_value must be an integer."), body(seed=7)),
        "static",
    ),
    # -- a mid-stream server_error: backoff whatever its code -----------------------------
    case(
        "rule/server_type/a: `api_error` beside an upstream's code",
        frame(
            error("Something went wrong.", type="api_error", code="upstream_timeout"),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/server_type/a: a key named outranks the type",
        frame(
            error(
                "Unsupported parameter: 'top_k'.",
                type="server_error",
                code="unsupported_parameter",
            ),
            body(top_k=40),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/server_type/b: a request's type is the body's",
        frame(
            error("Invalid request.", type="invalid_request_error", code="bad_request"),
            body(temperature=0.2),
        ),
        "static",
    ),
]

# Readings this file added: bodies near each that must not take them.
NEW_NEAR_MISSES = [
    # -- nothing left to serve: a key refused in words of backends ------------------------
    case(
        "near/capacity/a: 'no backends support' a key's value",
        response(
            400,
            error("Invalid value for 'service_tier': no backends support 'flex'."),
            body(service_tier="flex"),
        ),
        "drop",
        ("service_tier",),
    ),
    case(
        "near/capacity/b: 'No more than 4' values of a key",
        response(400, error("No more than 4 values are allowed for 'stop'."), body(stop=["a"] * 5)),
        "drop",
        ("stop",),
    ),
    # -- a wait in Chinese: a key's value refused, "change it and try again" ---------------
    case(
        "near/chinese_wait/a: 'modify and try again'",
        response(400, error("参数temperature不合法\uff0c请修改后再试"), body(temperature=3)),
        "drop",
        ("temperature",),
    ),
    # -- a wait named with no status: the account still outranks it ---------------------
    case(
        "near/wait/a: in-band, a suspended account that names a wait",
        frame(error("Your account has been suspended. Try again in 24 hours."), body()),
        "surface",
    ),
    # -- gRPC codes: the request's own -----------------------------------------------------
    case(
        "near/grpc/a: InvalidArgument naming a key",
        frame(
            error("rpc error: code = InvalidArgument desc = top_k must be positive"), body(top_k=0)
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/grpc/b: NotFound for the model",
        frame(error("rpc error: code = NotFound desc = model not found"), body()),
        "surface",
    ),
    # -- refused to the caller: a key refused for the account ------------------------------
    case(
        "near/caller/a: a key not enabled for this project",
        response(400, error("'logprobs' is not enabled for this project."), body(logprobs=True)),
        "drop",
        ("logprobs",),
    ),
    case(
        "near/caller/b: image input not available on the tier",
        response(400, error("Image input is not available on the free tier."), body(True)),
        "images",
    ),
]


@pytest.mark.parametrize(
    ("verdict", "action", "drop", "rename"), VARIANTS + RULES + NEW_NEAR_MISSES
)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings added here (nothing left to serve, a Chinese wait or load,
# a gRPC code, what is refused to the caller, an allowance before its verb, another
# endpoint by its path).
_HOSTILE = {
    "no more words": "no more " * 8_192,
    "no available data": "no available data " * 3_855,
    "Chinese load words": "负载" * 32_768,
    "Chinese later words": "稍后" * 32_768,
    "rpc errors": "rpc error: code = " * 3_640,
    "not available for": "not available for " * 3_640,
    "allocation words": "allocation " * 5_957,
    "slash paths": "/a" * 32_768,
    "the x endpoint": "use the x " * 6_553,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    policy = RecoveryPolicy(degrade=True)
    sent = body(temperature=0.2, tools=TOOLS)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(text, sent, policy))
        verdicts.append(response(400, {"error": {"message": text}}, sent, policy))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
