"""Round nine's rejections in every envelope and in other words.

The 27 cases tests/rejections_extra gained in the ninth round (listed in
tests/test_probe_rejections_26.py's docstring) are taken apart and put back together in
each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame
after `200 OK` (`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_16.py
does for earlier rounds): 520 combinations of 26 of them. Each must get the original's
action, dropped keys and renames. (Ollama Cloud's weekly usage limit in Anthropic's and
Google's envelopes, which type every 429 as a rate limit, was marked `DIFFERENT` here; it
reads the same since a limit counted by the week outranks that code where no wait is named,
tests/test_probe_rejections_29.py.)

The 27th, OpenRouter's turn that ended with `finish_reason: "error"`, has no error body to
wrap: it is read as the chat wire reads it (`rxllm.replay`), in the shapes such a chunk
comes in (the error object inside the choice, `[DONE]` after it, usage beside it, only the
upstream's own word) under four presets, and in the other words for a failed generation
(vLLM's `abort`, Z.ai's `network_error`, DeepSeek's `insufficient_system_resource`).

Then, as tests/test_probe_rejections_17.py does, two to four paraphrases of each case
(`VARIANTS`, 73, in Chinese where the servers write Chinese), and of six of the round's
seven rules (`RULES`: a JSON schema refused without its owner; a never-dropped key unknown;
an image the server could not read; a model not ready; the chat's messages in other words;
"can not be") one more positive and two near misses each; the seventh, the failed finish,
has its own above. The readings widened here have two near misses each (`WIDENED`). The
wordings follow the servers' own (Gemini's "Unable to process input image" and "Provided
image is not valid", DashScope's "Failed to download multimodal content", TorchServe's "has
no worker to serve", Bedrock's "extraneous key [x] is not permitted", Gemini's
"contents.parts must not be empty", Mistral's "Expected last role User or Tool", Zhipu's
"messages 参数非法"); none of these bodies was recorded.

Against the previous degradation.py 24 of these tests failed: Copilot's "Model is not
supported for this request." in the 10 envelopes without its code and `param`, read static;
13 paraphrases (an image not valid, not downloaded, not decoded by a relay; the model "not
supported for this request" in words twice; a deployment "still starting up" or
"initializing", TorchServe's "no worker to serve"; a schema's path written bare twice;
Gemini's `contents` twice; xAI's "Argument not supported on this model: include"), and one
rule's positive ("Could not fetch image from URL").

Left out as debatable: a never-dropped key refused unquoted ("stream can not be false
for this model": the key, or nothing named); Anthropic's image of another media type than
declared ("... but the image appears to be a image/png image", no words of refusal); a
failed finish for a malformed call (`malformed_function_call`: the same body again, or one
without tools); Gemini's "Unsupported MIME type: png" (no word of an image). (OpenRouter's
documented mid-stream error object with `code: 502`, left out here before, reads backoff
since OpenRouter's 502 rule reads the HTTP status only: a 502 in a frame after `200 OK` is an
upstream that failed while streaming, tests/test_degradation.py.)
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import rxllm
from rxllm.degradation import Verdict, classify
from rxllm.events import Event
from tests.test_probe_rejections_7 import (
    DEGRADES,
    OPENROUTER,
    TOOLS,
    body,
    frame,
    litellm,
    response,
)
from tests.test_probe_rejections_9 import EXTRA
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error
from tests.test_probe_rejections_19 import action_counts, assert_reads_the_same
from tests.test_probe_rejections_21 import anthropic
from tests.test_probe_rejections_23 import flat, google

# drop 11, none 9, images 4, backoff 3
ROUND_NINE = (
    "anthropic__could_not_process_image",
    "anthropic__image_format_not_supported_at_base64_data",
    "bedrock__validation_model_does_not_support_image_field_for_user_messages",
    "copilot__model_not_supported_for_this_request_param_model",
    "dashscope__enable_thinking_parameter_restricted_to_true",
    "dashscope__tool_choice_is_one_of_the_strings_none_auto",
    "dynamo__503_model_not_ready_to_serve_requests_retry_shortly",
    "fireworks__json_schema_not_supported_could_not_understand_instance",
    "gemini__native_unknown_name_messages_openai_body_at_native_endpoint",
    "gigachat__422_field_properties_data_properties_is_missing",
    "kserve__400_model_is_not_ready_yet_scale_from_zero",
    "litellm_bedrock__guardrails_extra_inputs_are_not_permitted",
    "llamacpp__assistant_response_prefill_incompatible_with_enable_thinking",
    "minimax__2013_invalid_params_unknown_model",
    "mistral__422_extra_forbidden_safe_mode",
    "modelscope__enable_thinking_can_not_be_support_when_stream_false",
    "ollama_cloud__429_weekly_usage_limit_upgrade",
    "openrouter__sse_choice_error_processing_stream_502_retryable",
    "openrouter__stepfun_unrecognized_chat_message",
    "snowflake__assistant_role_in_final_position_when_tools_used",
    "vertex__gemini_must_include_at_least_one_parts_field",
    "volcengine__invalid_combination_of_reasoning_effort_and_thinking_type",
    "volcengine__unsupported_image_format_param_image_url",
    "watsonx__json_validation_error_tools_function_parameters_pointer",
    "watsonx__missing_json_field_response_format_type",
    "xai__argument_not_supported_include",
    "zai__1214_messages_parameter_is_illegal",
)
# A turn that ended with a failed finish has no error body to wrap: its readings are below.
FAILED_FINISH = "openrouter__sse_choice_error_processing_stream_502_retryable"
WRAPPED = tuple(name for name in ROUND_NINE if name != FAILED_FINISH)


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(WRAPPED))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


def test_the_cases_are_round_nines() -> None:
    assert len(set(ROUND_NINE)) == 27
    assert action_counts(ROUND_NINE) == {"drop": 11, "none": 9, "images": 4, "backoff": 3}


SCHEMA_OUTPUT = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
TRIMMED_FORMAT = {"json_schema": {"name": "answer", "schema": {"type": "object"}}}


def dashscope(message: str) -> dict[str, Any]:
    """DashScope's compatible-mode error object."""
    return {
        "error": {
            "code": "invalid_parameter_error",
            "param": None,
            "message": message,
            "type": "invalid_request_error",
        }
    }


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- anthropic__could_not_process_image: images -------------------------------------
    case(
        "could_not_process/a: Gemini's 'Unable to process input image', a link to report",
        response(
            400,
            google(
                "Unable to process input image. Please retry or report in "
                "https://developers.generativeai.google/guide/troubleshooting"
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "could_not_process/b: Gemini's 'Provided image is not valid'",
        response(400, google("Provided image is not valid"), body(True, temperature=0.2)),
        "images",
    ),
    case(
        "could_not_process/c: DashScope's 'Failed to download multimodal content'",
        response(
            400,
            dashscope(
                "<400> InternalError.Algo.InvalidParameter: Failed to download multimodal content"
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "could_not_process/d: a relay's 'fail to decode image config'",
        response(
            400,
            error(
                "fail to decode image config(webp): webpGetInfo: bad arguments, data is empty",
                type="one_api_error",
                param="",
                code="count_token_messages_failed",
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- anthropic__image_format_not_supported_at_base64_data: images ------------------
    case(
        "image_format/a: Gemini's 'Unsupported MIME type', the image's type",
        response(400, google("Unsupported MIME type: image/heic"), body(True, temperature=0.2)),
        "images",
    ),
    case(
        "image_format/b: OpenAI's 'You uploaded an unsupported image', the formats listed",
        response(
            400,
            error(
                "You uploaded an unsupported image. Please make sure your image is below 20 MB "
                "in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
                type="invalid_request_error",
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_format/c: in-band, Anthropic's error object, another pointer",
        frame(
            {
                "type": "invalid_request_error",
                "message": "messages.2.content.0.image.source.base64.data: Image format "
                "image/bmp not supported",
            },
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- bedrock__validation_model_does_not_support_image_field_for_user_messages: images -
    case(
        "image_field/a: Bedrock through LiteLLM, 'Remove image and try again'",
        response(
            400,
            litellm(
                'litellm.BadRequestError: BedrockException - {"message":"This model doesn\'t '
                'support the image field. Remove image and try again."}',
                400,
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_field/b: 'image content blocks are not supported for user messages'",
        response(
            400,
            error(
                "Validation error: image content blocks are not supported for user messages "
                "with this model."
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- copilot__model_not_supported_for_this_request_param_model: none ---------------
    case(
        "model_not_supported/a: 'The requested model is not supported', code and param",
        response(
            400,
            error(
                "The requested model is not supported.",
                code="model_not_supported",
                param="model",
                type="invalid_request_error",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "model_not_supported/b: plain text, no code, no param",
        response(400, "Model is not supported for this request.", body(temperature=0.2)),
        "surface",
    ),
    case(
        "model_not_supported/c: the model's name quoted, Ollama's envelope",
        response(
            400,
            {"error": 'model "gpt-5-mini" is not supported for this request'},
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- dashscope__enable_thinking_parameter_restricted_to_true: drop enable_thinking ---
    case(
        "restricted_to_true/a: 'parameter.enable_thinking must be set to true'",
        response(
            400,
            dashscope(
                "<400> InternalError.Algo.InvalidParameter: parameter.enable_thinking must be "
                "set to true for this model"
            ),
            body(enable_thinking=False, temperature=0.7),
        ),
        "drop",
        ("enable_thinking",),
    ),
    case(
        "restricted_to_true/b: the value assigned, 'only supports'",
        response(
            400,
            error("This model only supports enable_thinking=true."),
            body(enable_thinking=False, temperature=0.7),
        ),
        "drop",
        ("enable_thinking",),
    ),
    case(
        "restricted_to_true/c: in Chinese, the key against the words",
        response(
            400,
            dashscope("enable_thinking参数只能设置为true"),
            body(enable_thinking=False, temperature=0.7),
        ),
        "drop",
        ("enable_thinking",),
    ),
    # -- dashscope__tool_choice_is_one_of_the_strings_none_auto: drop tool_choice --------
    case(
        "tool_choice_strings/a: FastAPI's 422, the literal's values",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "tool_choice"],
                        "msg": "Input should be 'none' or 'auto'",
                    }
                ]
            },
            body(tools=TOOLS, tool_choice="required", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "tool_choice_strings/b: the value refused, the supported ones after",
        response(
            400,
            error("Invalid tool_choice: 'required'. Supported values are: 'none', 'auto'."),
            body(tools=TOOLS, tool_choice="required", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "tool_choice_strings/c: in Chinese",
        response(
            400,
            dashscope("tool_choice参数只能为none或auto"),
            body(tools=TOOLS, tool_choice="required", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- dynamo__503_model_not_ready_to_serve_requests_retry_shortly: backoff -----------
    case(
        "not_ready_to_serve/a: in-band, no status, no type",
        frame(
            error("Model `Qwen/Qwen3-32B` is not ready to serve requests yet."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "not_ready_to_serve/b: 400, 'still starting up', no wait named",
        response(
            400,
            {"error": "The deployment is still starting up and cannot serve requests."},
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "not_ready_to_serve/c: in-band, TorchServe's 'has no worker to serve'",
        frame(
            {
                "type": "ServiceUnavailableException",
                "message": 'Model "llama3" has no worker to serve inference request. Please use '
                "scale workers API to add workers.",
            },
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- fireworks__json_schema_not_supported_could_not_understand_instance: drop tools ---
    case(
        "json_schema/a: vLLM's grammar backend, 'features not supported'",
        response(
            400,
            error("The provided JSON schema contains features not supported by xgrammar."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "json_schema/b: a grammar compiler's 'unsupported JSON schema keyword'",
        response(
            400,
            error(
                "Grammar compilation failed: unsupported JSON Schema keyword 'patternProperties'"
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "json_schema/c: the output's schema the only one",
        response(
            400,
            error("Invalid JSON schema: the 'minItems' keyword is not supported."),
            body(response_format=SCHEMA_OUTPUT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- gemini__native_unknown_name_messages_openai_body_at_native_endpoint: none -------
    case(
        "unknown_messages/a: Azure's completions endpoint, 'Unrecognized request argument'",
        response(
            400,
            error("Unrecognized request argument supplied: messages"),
            body(temperature=0.7, top_p=0.9),
        ),
        "surface",
    ),
    case(
        "unknown_messages/b: TGI's /generate, serde's 'unknown field' and the fields it knows",
        response(
            422,
            {
                "error": "Failed to deserialize the JSON body into the target type: unknown field "
                "`messages`, expected one of `inputs`, `parameters`, `stream` at line 1 "
                "column 12",
                "error_type": "validation",
            },
            body(temperature=0.7, top_p=0.9),
        ),
        "surface",
    ),
    case(
        "unknown_messages/c: Vertex's native endpoint, `messages` and `max_tokens` unknown",
        response(
            400,
            google(
                'Invalid JSON payload received. Unknown name "messages": Cannot find field.\n'
                'Invalid JSON payload received. Unknown name "max_tokens": Cannot find field.'
            ),
            body(max_tokens=100, temperature=0.7),
        ),
        "surface",
    ),
    # -- gigachat__422_field_properties_data_properties_is_missing: drop tools ----------
    case(
        "schema_path/a: the path unquoted",
        response(
            422,
            {"status": 422, "message": "Field properties.location.description is missing"},
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "schema_path/b: ajv's item, its instancePath into a schema",
        response(
            400,
            {
                "errors": [
                    {
                        "instancePath": "/properties/city",
                        "message": "must have required property 'type'",
                    }
                ]
            },
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "schema_path/c: 'items.' at the path's root, unquoted, 'must be'",
        response(
            400,
            error("Invalid schema: items.properties.name.type must be a string"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    # -- kserve__400_model_is_not_ready_yet_scale_from_zero: backoff ---------------------
    case(
        "not_ready_yet/a: 'not yet ready', in-band",
        frame({"error": "Model sklearn-iris is not yet ready."}, body(temperature=0.2)),
        "backoff",
    ),
    case(
        "not_ready_yet/b: TorchServe's and KServe v2's 'Model with name ... is not ready'",
        response(400, {"error": "Model with name llama-3-8b is not ready."}, body(temperature=0.2)),
        "backoff",
    ),
    case(
        "not_ready_yet/c: 'still initializing', no wait named",
        response(400, {"detail": "Model llama-3-8b is still initializing."}, body(temperature=0.2)),
        "backoff",
    ),
    # -- litellm_bedrock__guardrails_extra_inputs_are_not_permitted: drop guardrails ----
    case(
        "guardrails/a: Bedrock's 'extraneous key [x] is not permitted' through LiteLLM",
        response(
            400,
            litellm(
                'litellm.BadRequestError: BedrockException - {"message":"Malformed input '
                "request: #: extraneous key [guardrails] is not permitted, please reformat your "
                'input and try again."}',
                400,
            ),
            body(guardrails=["pii-mask"], max_completion_tokens=1000, temperature=0.5),
        ),
        "drop",
        ("guardrails",),
    ),
    case(
        "guardrails/b: Anthropic's own envelope",
        response(
            400,
            anthropic("invalid_request_error", "guardrails: Extra inputs are not permitted"),
            body(guardrails=["pii-mask"], max_completion_tokens=1000, temperature=0.5),
        ),
        "drop",
        ("guardrails",),
    ),
    case(
        "guardrails/c: 'Unrecognized request argument supplied'",
        response(
            400,
            error("Unrecognized request argument supplied: guardrails"),
            body(guardrails=["pii-mask"], max_completion_tokens=1000, temperature=0.5),
        ),
        "drop",
        ("guardrails",),
    ),
    # -- llamacpp__assistant_response_prefill_incompatible_with_enable_thinking: none ----
    case(
        "prefill/a: Anthropic's 'does not support assistant message prefill'",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "This model does not support assistant message prefill. The conversation must "
                "end with a user message.",
            ),
            body(temperature=0.6, max_tokens=8192),
        ),
        "surface",
    ),
    case(
        "prefill/b: in-band, the flat envelope",
        frame(
            flat(
                "Assistant response prefill is incompatible with enable_thinking.",
                "invalid_request_error",
                "400",
            ),
            body(temperature=0.6, max_tokens=8192),
        ),
        "surface",
    ),
    case(
        "prefill/c: 'Cannot prefill the assistant turn while reasoning is enabled'",
        response(
            400,
            error("Cannot prefill the assistant turn while reasoning is enabled."),
            body(temperature=0.6, max_tokens=8192),
        ),
        "surface",
    ),
    # -- minimax__2013_invalid_params_unknown_model: none --------------------------------
    case(
        "unknown_model/a: MiniMax's native `base_resp`",
        response(
            400,
            {
                "base_resp": {
                    "status_code": 2013,
                    "status_msg": "invalid params, unknown model 'abab7'",
                }
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "unknown_model/b: in Chinese, the model's name between",
        response(
            400,
            error("模型 gpt-5.5 不存在", code="model_not_found"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "unknown_model/c: in-band, 'invalid model'",
        frame(error("invalid model: 'gpt-5.5'"), body(temperature=0.2)),
        "surface",
    ),
    # -- mistral__422_extra_forbidden_safe_mode: drop safe_mode ------------------------
    case(
        "safe_mode/a: pydantic v1's 'extra fields not permitted'",
        response(
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "safe_mode"],
                        "msg": "extra fields not permitted",
                        "type": "value_error.extra",
                    }
                ]
            },
            body(safe_mode=False, temperature=0.7),
        ),
        "drop",
        ("safe_mode",),
    ),
    case(
        "safe_mode/b: Go's 'json: unknown field'",
        response(400, {"error": 'json: unknown field "safe_mode"'}, body(safe_mode=False)),
        "drop",
        ("safe_mode",),
    ),
    # -- modelscope__enable_thinking_can_not_be_support_when_stream_false: drop ----------
    case(
        "can_not_be_support/a: DashScope's 'must be set to false for non-streaming calls'",
        response(
            400,
            dashscope("parameter.enable_thinking must be set to false for non-streaming calls"),
            body(enable_thinking=True, temperature=0.6),
        ),
        "drop",
        ("enable_thinking",),
    ),
    case(
        "can_not_be_support/b: the key's words, 'can not be used when'",
        response(
            400,
            error("Enable thinking can not be used when stream is false."),
            body(enable_thinking=True, temperature=0.6),
        ),
        "drop",
        ("enable_thinking",),
    ),
    case(
        "can_not_be_support/c: in Chinese, 'non-streaming calls do not support'",
        response(
            400,
            dashscope("非流式调用不支持enable_thinking参数"),
            body(enable_thinking=True, temperature=0.6),
        ),
        "drop",
        ("enable_thinking",),
    ),
    # -- ollama_cloud__429_weekly_usage_limit_upgrade: none -----------------------------
    case(
        "weekly_limit/a: a monthly limit, the same words",
        response(
            429,
            {"error": "you have reached your monthly usage limit, upgrade for higher limits"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "weekly_limit/b: 'Weekly usage limit reached', a link to upgrade",
        response(
            429,
            {"error": "Weekly usage limit reached. Upgrade at https://ollama.com/upgrade."},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "weekly_limit/c: in-band, no status",
        frame(
            error("You've hit your weekly usage limit. Upgrade for more."), body(temperature=0.2)
        ),
        "surface",
    ),
    # -- openrouter__stepfun_unrecognized_chat_message: none ---------------------------
    case(
        "chat_message/a: 'Invalid chat message at index 2'",
        response(
            400,
            {
                "error": {
                    "message": "Invalid chat message at index 2.",
                    "type": "request_params_invalid",
                }
            },
            body(temperature=0.7, max_tokens=8192),
        ),
        "surface",
    ),
    case(
        "chat_message/b: 'Unsupported chat message type'",
        response(
            400,
            error("Unsupported chat message type: 'developer'"),
            body(temperature=0.7, max_tokens=8192),
        ),
        "surface",
    ),
    # -- snowflake__assistant_role_in_final_position_when_tools_used: none --------------
    case(
        "final_position/a: Mistral's 'Expected last role User or Tool'",
        response(
            400,
            flat(
                "Expected last role User or Tool (or Assistant with prefix True) for serving but "
                "got assistant",
                "invalid_request_message_order",
                "3230",
            ),
            body(tools=TOOLS, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "final_position/b: 'The last message must be a user or tool message'",
        response(
            400,
            {"message": "The last message must be a user or tool message when tools are provided."},
            body(tools=TOOLS, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "final_position/c: in-band, the role quoted, the tools quoted",
        frame(
            error(
                "invalid request parameters: the final message cannot have the `assistant` role "
                "when `tools` are used."
            ),
            body(tools=TOOLS, temperature=0.2),
        ),
        "surface",
    ),
    # -- vertex__gemini_must_include_at_least_one_parts_field: none --------------------
    case(
        "parts_field/a: Gemini's 'contents.parts must not be empty'",
        response(
            400,
            google("* GenerateContentRequest.contents[3].parts: contents.parts must not be empty."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "parts_field/b: Gemini's 'contents is not specified'",
        response(
            400,
            google("* GenerateContentRequest.contents: contents is not specified"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- volcengine__invalid_combination_of_reasoning_effort_and_thinking_type: drop -----
    case(
        "combination/a: 'is not compatible with thinking type'",
        response(
            400,
            error("reasoning_effort is not compatible with thinking type 'disabled'"),
            body(reasoning_effort="high", temperature=0.2),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "combination/b: both assigned, the type by its path",
        response(
            400,
            error("Invalid combination: reasoning_effort=high with thinking.type=disabled"),
            body(reasoning_effort="high", temperature=0.2),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "combination/c: in Chinese",
        response(
            400,
            error("reasoning_effort与thinking.type的组合无效"),
            body(reasoning_effort="high", temperature=0.2),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- volcengine__unsupported_image_format_param_image_url: images -------------------
    case(
        "unsupported_image_format/a: the code alone names the image",
        response(
            400,
            error(
                "The request failed because the format is not supported by the API.",
                code="InvalidParameter.UnsupportedImageFormat",
                type="BadRequest",
            ),
            body(True, temperature=0.2, top_p=0.9),
        ),
        "images",
    ),
    case(
        "unsupported_image_format/b: in Chinese",
        response(400, error("不支持的图片格式"), body(True, temperature=0.2, top_p=0.9)),
        "images",
    ),
    case(
        "unsupported_image_format/c: in-band, `param` at the part",
        frame(
            error("Unsupported image format: image/tiff", param="image_url"),
            body(True, temperature=0.2, top_p=0.9),
        ),
        "images",
    ),
    # -- watsonx__json_validation_error_tools_function_parameters_pointer: drop tools ----
    case(
        "tools_pointer/a: ajv's instancePath from the body's root",
        response(
            400,
            {
                "errors": [
                    {
                        "instancePath": "/tools/0/function/parameters/properties/a/type",
                        "message": "must be equal to one of the allowed values",
                    }
                ]
            },
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tools_pointer/b: a dotted path, a pointer into the schema",
        response(
            400,
            {
                "errors": [
                    {
                        "code": "json_validation_error",
                        "message": "Json document validation error: tools.0.function.parameters: "
                        "at '/required/0': value must be a string",
                    }
                ]
            },
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- watsonx__missing_json_field_response_format_type: drop response_format ---------
    case(
        "missing_field/a: FastAPI's 422, the member missing",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "missing",
                        "loc": ["body", "response_format", "type"],
                        "msg": "Field required",
                    }
                ]
            },
            body(response_format=TRIMMED_FORMAT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "missing_field/b: 'Missing required field', the path dotted",
        response(
            400,
            error("Missing required field: response_format.type"),
            body(response_format=TRIMMED_FORMAT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- xai__argument_not_supported_include: drop include ------------------------------
    case(
        "argument/a: xAI's 'on this model' form",
        response(
            400,
            {"code": "400", "error": "Argument not supported on this model: include"},
            body(include=["inline_citations"], temperature=0.2),
        ),
        "drop",
        ("include",),
    ),
    case(
        "argument/b: 'Unsupported argument:'",
        response(
            400,
            error("Unsupported argument: include"),
            body(include=["inline_citations"], temperature=0.2),
        ),
        "drop",
        ("include",),
    ),
    case(
        "argument/c: the word as a parameter, 'is not supported by this model'",
        response(
            400,
            error("The include parameter is not supported by this model."),
            body(include=["inline_citations"], temperature=0.2),
        ),
        "drop",
        ("include",),
    ),
    # -- zai__1214_messages_parameter_is_illegal: none ----------------------------------
    case(
        "messages_illegal/a: Zhipu's Chinese, the key against the words",
        response(
            400,
            {"error": {"code": "1214", "message": "messages 参数非法。请检查文档。"}},
            body(temperature=0.6, max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "messages_illegal/b: quoted, what it must hold",
        response(
            400,
            error("Invalid 'messages': the request must contain at least one user message."),
            body(temperature=0.6, max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "messages_illegal/c: in-band, its code",
        frame(
            error("The messages parameter is illegal.", code="1214"),
            body(temperature=0.6, max_tokens=4096),
        ),
        "surface",
    ),
]

# == the round's rules, in other words, and near each ====================================
RULES = [
    # -- a JSON schema refused without its owner named ---------------------------------
    case(
        "rule/schema/a: 'Schema not supported', the output's schema the only one",
        response(
            400,
            error("unsupported keyword 'patternProperties' in JSON schema"),
            body(response_format=SCHEMA_OUTPUT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "near/schema/a: the model's output against a schema, at a pointer",
        response(
            400,
            error("Generated output does not match the JSON schema at '/properties/name'."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "static",
    ),
    case(
        "near/schema/b: a key of the body whose name holds a schema word",
        response(
            400,
            error("'schema_version' must be at most 2."),
            body(tools=TOOLS, schema_version=3),
        ),
        "drop",
        ("schema_version",),
    ),
    # -- a never-dropped key refused as unknown ----------------------------------------
    case(
        "rule/unknown_kept/a: serde's 'unknown field `stream`'",
        response(
            422,
            {"error": "unknown field `stream`, expected `inputs` or `parameters`"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/unknown_kept/a: a longer key that starts with `stream`",
        response(
            400,
            google('Invalid JSON payload received. Unknown name "streaming": Cannot find field.'),
            body(streaming=True, temperature=0.2),
        ),
        "drop",
        ("streaming",),
    ),
    case(
        "near/unknown_kept/b: a field inside a message unknown",
        response(
            400,
            error("Unknown parameter: 'messages[0].name'."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- an image the server could not read --------------------------------------------
    case(
        "rule/image_unread/a: 'Could not fetch image from URL'",
        response(
            400,
            error("Could not fetch image from URL: connection refused by the host."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "near/image_unread/a: a key with the word, refused",
        response(
            400,
            error("Could not process `image_detail`: it must be 'low' or 'high'."),
            body(True, image_detail="auto"),
        ),
        "drop",
        ("image_detail",),
    ),
    case(
        "near/image_unread/b: images refused beside a system message, Groq's words",
        response(
            400,
            error("prompting with images is incompatible with system messages"),
            body(True, temperature=0.2),
        ),
        "surface",
    ),
    # -- a model or server not ready yet -----------------------------------------------
    case(
        "rule/not_ready/a: in-band, 'engine is not ready'",
        frame(error("The engine is not ready yet, please wait."), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "near/not_ready/a: a capability not ready for the model: no wait brings it",
        response(
            400,
            error("Structured output is not ready for this model."),
            body(response_format=SCHEMA_OUTPUT, temperature=0.2),
        ),
        "static",
    ),
    case(
        "near/not_ready/b: a key's setting 'still initializing' is no server state",
        response(
            400,
            error("`top_k` must be set before the sampler is initialized."),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    # -- the chat's messages in other words --------------------------------------------
    case(
        "rule/conversation/a: 'chat messages' refused, the order",
        response(
            400,
            error("Invalid chat messages: the first message must have role user."),
            body(temperature=0.2, max_tokens=100),
        ),
        "surface",
    ),
    case(
        "near/conversation/a: a key whose name starts with 'chat'",
        response(
            400,
            error("chat_template_kwargs: unknown key 'enable_thinking'"),
            body(chat_template_kwargs={"enable_thinking": True}, temperature=0.2),
        ),
        "drop",
        ("chat_template_kwargs",),
    ),
    case(
        "near/conversation/b: the server's prefill cache, a key refused",
        response(
            400,
            error("Prefix caching is not supported with prompt_logprobs."),
            body(prompt_logprobs=1, temperature=0.2),
        ),
        "drop",
        ("prompt_logprobs",),
    ),
    # -- "can not be" in two words -----------------------------------------------------
    case(
        "rule/can_not/a: 'can not be specified'",
        response(
            400,
            error("top_k can not be specified for this model"),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/can_not/a: the caller's key 'can not be used'",
        response(
            403,
            error("Your API key can not be used with this model."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/can_not/b: a request that 'can not be processed right now'",
        response(
            400,
            error("This request can not be processed right now, please retry later."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
]

# == near the readings widened for this probe ============================================
WIDENED = [
    # -- the model refused "for this request" ------------------------------------------
    case(
        "near/for_this_request/a: a key refused for this request",
        response(
            400,
            error("'logprobs' is not supported for this request."),
            body(logprobs=True, temperature=0.2),
        ),
        "drop",
        ("logprobs",),
    ),
    case(
        "near/for_this_request/b: the model lacks a capability",
        response(
            400,
            error("The model is not supported for tool calling."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    # -- an image not valid, not fetched -----------------------------------------------
    case(
        "near/image_fetch/a: something else not downloaded",
        response(
            400,
            error("Failed to download the tokenizer for this model."),
            body(True, temperature=0.2),
        ),
        "static",
    ),
    case(
        "near/image_fetch/b: a key with the word 'not valid'",
        response(
            400,
            error("'image_detail' is not valid for this model."),
            body(True, image_detail="auto"),
        ),
        "drop",
        ("image_detail",),
    ),
    # -- still starting up -------------------------------------------------------------
    case(
        "near/starting_up/a: the model starting to generate, a key refused",
        response(
            400,
            error("The model is starting to generate; `n` must be 1."),
            body(n=2, temperature=0.2),
        ),
        "drop",
        ("n",),
    ),
    case(
        "near/starting_up/b: a key's value 'being deployed'",
        response(
            400,
            error("`reasoning_effort` 'minimal' is being deployed and is not available yet."),
            body(reasoning_effort="minimal", temperature=0.2),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- a schema's path written bare --------------------------------------------------
    case(
        "near/bare_schema_path/a: the end of a longer key's name",
        response(
            400,
            error("max_items.value must be at most 10"),
            body(tools=TOOLS, max_items=20),
        ),
        "drop",
        ("max_items",),
    ),
    case(
        "near/bare_schema_path/b: a file's name",
        response(
            400,
            error("Failed to read definitions.json: file is missing"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "static",
    ),
    # -- Gemini's `contents` -----------------------------------------------------------
    case(
        "near/contents/a: the contents of an image",
        response(
            400,
            error("The contents of the image could not be read."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "near/contents/b: a request's contents in prose",
        response(400, error("Request contents are not valid JSON."), body(temperature=0.2)),
        "static",
    ),
    # -- a key after the colon of "not supported on this model:" -------------------------
    case(
        "near/colon/a: advice after the colon",
        response(
            400,
            error("Argument not supported on this model: see the documentation."),
            body(temperature=0.2),
        ),
        "static",
    ),
    case(
        "near/colon/b: a field inside a message after the colon",
        response(
            400,
            error("Field not permitted in this request: messages[0].name"),
            body(temperature=0.2),
        ),
        "surface",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + RULES + WIDENED)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# == the failed finish =================================================================


def _events(data: str, preset: str) -> list[Event]:
    events: list[Event] = []
    rxllm.replay(data, provider=preset).subscribe(on_next=events.append)
    return events


def _policy(preset: str) -> Any:
    return rxllm.provider(preset, api_key="k", base_url="http://127.0.0.1:9/v1").wire.recovery


def _chunk(**choice: Any) -> str:
    base = {"index": 0, "delta": {"role": "assistant", "content": ""}}
    return "data: " + json.dumps({"id": "gen-1", "model": "m", "choices": [{**base, **choice}]})


def _read_finish(data: str, preset: str) -> Verdict:
    """The verdict on the error event a replayed stream ends with."""
    last = _events(data, preset)[-1]
    assert last.type == "error", last
    return classify(last.error, body(temperature=0.6), _policy(preset))


FAILED_FINISHES = {
    # OpenRouter's chunk: the error object inside the choice, the failed finish beside it
    "openrouter, the error in the choice": _chunk(
        finish_reason="error",
        native_finish_reason="error",
        error={"message": "Error processing stream", "code": 502},
    )
    + "\n\n",
    # the same without the error object, then `[DONE]`
    "openrouter, then [DONE]": _chunk(finish_reason="error") + "\n\ndata: [DONE]\n\n",
    # the same with the usage of what was spent
    "openrouter, with usage": "data: "
    + json.dumps(
        {
            "id": "gen-1",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "error"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 0, "total_tokens": 12},
        }
    )
    + "\n\n",
    # the upstream's own word beside it, in its own case
    "openrouter, the native word upper-case": _chunk(
        finish_reason="error", native_finish_reason="ERROR"
    )
    + "\n\n",
}
OTHER_WORDS = {
    # vLLM aborted the request (vllm#57082), Z.ai's inference failed, DeepSeek ran out of
    # resources: each a generation that failed, not the body
    "abort": _chunk(finish_reason="abort") + "\n\ndata: [DONE]\n\n",
    "network_error": _chunk(finish_reason="network_error") + "\n\ndata: [DONE]\n\n",
    "insufficient_system_resource": _chunk(finish_reason="insufficient_system_resource")
    + "\n\ndata: [DONE]\n\n",
}


def test_the_failed_finish_case_backs_off() -> None:
    case = json.loads((EXTRA / f"{FAILED_FINISH}.json").read_text())
    assert _read_finish(case["body"], case["preset"]).action == "backoff"


@pytest.mark.parametrize("preset", ["openrouter", "custom", "mistral", "vllm"])
@pytest.mark.parametrize("data", FAILED_FINISHES.values(), ids=FAILED_FINISHES.keys())
def test_a_failed_finish_backs_off_in_every_shape(data: str, preset: str) -> None:
    assert _read_finish(data, preset).action == "backoff"


@pytest.mark.parametrize("preset", ["openrouter", "custom"])
@pytest.mark.parametrize("data", OTHER_WORDS.values(), ids=OTHER_WORDS.keys())
def test_a_failed_finish_in_other_words_backs_off(data: str, preset: str) -> None:
    assert _read_finish(data, preset).action == "backoff"


def test_near_a_failed_finish_an_error_object_that_names_a_key() -> None:
    # the error object beside the finish is read: a 400 that names `temperature`
    data = (
        "data: "
        + json.dumps(
            {
                "error": {"code": 400, "message": "temperature is not supported for this model"},
                "choices": [{"index": 0, "delta": {}, "finish_reason": "error"}],
            }
        )
        + "\n\n"
    )
    verdict = _read_finish(data, "openrouter")
    assert (verdict.action, verdict.drop) == ("drop", ("temperature",))


def test_near_a_failed_finish_a_filtered_finish_is_no_error() -> None:
    events = _events(_chunk(finish_reason="content_filter") + "\n\ndata: [DONE]\n\n", "openrouter")
    assert [event.type for event in events] == ["done"]


# Inputs aimed at the readings added here (a model refused for the request, a server still
# starting, no worker to serve, a schema's bare path, an image not fetched or not valid,
# Gemini's `contents`, a key after a refusal's colon).
_HOSTILE = {
    "for this request": "model is not supported for this " * 2_048,
    "starting up": "deployment may still be " * 2_730,
    "no workers": "no worker to " * 5_041,
    "bare schema paths": "items[a]" * 8_192,
    "bare path roots": "properties.a " * 5_041,
    "unfetched images": "failed to fetch image " * 2_978,
    "invalid images": "image is not valid " * 3_449,
    "contents": "contents[" * 7_281 + "Request.contents" * 4_096,
    "colons": "argument not supported on this model " * 1_771 + ": x",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, response_format=SCHEMA_OUTPUT, temperature=0.2)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(error(text), sent, DEGRADES))
        verdicts.append(response(400, error(text), sent, OPENROUTER))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
