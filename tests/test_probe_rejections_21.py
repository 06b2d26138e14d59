"""Round six's rejections in every envelope and in other words.

The 31 cases tests/rejections_extra gained in the sixth round (listed in
tests/test_probe_rejections_20.py's docstring) are taken apart and put back together in
each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame
after `200 OK` (`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_16.py
does for earlier rounds): 620 combinations. Each must get the original's action, dropped
keys and renames; no envelope loses what an action of this round rests on, so none is
marked `DIFFERENT` (Gemini's 500 "An internal error has occurred. Please retry" in a frame
with no status says the server's trouble in its words).

Then, as tests/test_probe_rejections_17.py does, one to three paraphrases of each case
(`VARIANTS`, and `MORE` in the same families), and of each of the round's three rules
(`RULES`: "penalty" refused in prose; the completion choices `n` asks for, refused by
number; the part that reads images absent) with two near misses per rule. Every expected
action is written beside its body. The wordings are invented after the servers' formats;
none was recorded.

Left out as debatable: "budget_tokens must be at least 1024" with `thinking` sent and no
path to it (the field's owner by provider knowledge, or the static list); a "LoRA adapter
... not loaded" beside images (an adapter of the weights, or the part that reads images);
"Only one choice is supported" and "Only one tool call is allowed" with `n` sent (a
choice of `n` or of a tool; parallel calls, the tools or nothing of the body); "logprobs
are only available for a single choice" with `n` and `logprobs` sent (either key could
go); "max_completion_tokens is not supported with this api-version" (a key refused, or
the older name to move it to).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, pydantic
from tests.test_probe_rejections_19 import action_counts, assert_reads_the_same

# drop 18, none 5, backoff 4, images 4
ROUND_SIX = (
    "anthropic__400_credit_balance_too_low",
    "anthropic__401_authentication_error_invalid_x_api_key",
    "anthropic__500_api_error_overloaded_request_id_null",
    "anthropic__529_overloaded_error_x_should_retry",
    "anthropic__sse_error_event_overloaded_after_200",
    "anthropic__temperature_only_1_when_thinking_enabled_or_adaptive",
    "anthropic__temperature_range_minus_1_or_0_to_1",
    "anthropic__thinking_enabled_budget_tokens_at_least_1024",
    "azure-openai__unrecognized_request_argument_max_completion_tokens",
    "bedrock__converse_model_does_not_support_image_content_block",
    "cerebras__unsupported_tool_choice_expected_auto_or_none",
    "epam_dial__invalid_structure_on_path_stream_options_extra_fields",
    "gemini__500_internal_error_please_retry_or_report",
    "gemini__json_mode_not_enabled_for_gemma",
    "gemini__openai_compat_developer_instruction_not_enabled_gemma",
    "gemini__openai_compat_list_envelope_api_key_invalid",
    "gemini__penalty_not_enabled_both_penalties",
    "gemini__penalty_not_enabled_frequency_penalty_alone",
    "gemini_relay__nested_json_string_api_key_invalid",
    "hf-tgi__sse_frequency_penalty_range",
    "hf-tgi__sse_stop_supports_up_to_4_stop_sequences",
    "hf-tgi__sse_temperature_must_be_strictly_positive",
    "llamacpp__500_only_one_completion_choice_is_allowed",
    "lmstudio__200_vision_add_on_not_loaded_images_provided",
    "newapi__temperature_only_1_when_thinking_enabled_nil_type",
    "ollama__500_model_missing_data_required_for_image_input",
    "oneapi__function_call_not_supported_for_this_model_request_id",
    "openai__invalid_value_object_supported_values_param_response_format_type",
    "openai__tools_is_not_supported_in_this_model_link",
    "truefoundry_deepinfra__405_json_object_response_format_not_supported",
    "vllm__at_most_1_images_may_be_provided_in_one_request",
)


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_SIX))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


def test_the_cases_are_round_sixs() -> None:
    assert len(set(ROUND_SIX)) == 31
    assert action_counts(ROUND_SIX) == {
        "drop": 18,
        "none": 5,
        "backoff": 4,
        "images": 4,
    }


def anthropic(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def tgi(message: str) -> dict[str, Any]:
    return {"error": message, "error_type": "validation"}


THINKING = {"type": "enabled", "budget_tokens": 2048}
JSON_OBJECT = {"type": "json_object"}
NAMED_CHOICE = {"type": "function", "function": {"name": "f"}}

# == the round's cases in other words ===================================================
VARIANTS = [
    # -- anthropic__400_credit_balance_too_low: none ---------------------------------------
    case(
        "credit_balance/a: 'insufficient', 'purchase credits'",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "Your credit balance is insufficient to use the API. Please purchase credits.",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "credit_balance/b: in-band, no status",
        frame(
            error("Credit balance too low. Add credits in Plans & Billing."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- anthropic__401_authentication_error_invalid_x_api_key: none -----------------------
    case(
        "api_key/a: in-band, Anthropic's type",
        frame(
            {"type": "authentication_error", "message": "The API key provided is invalid."},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "api_key/b: 401, OpenAI's envelope",
        response(401, error("Incorrect API key provided: sk-ant-***"), body(temperature=0.2)),
        "surface",
    ),
    # -- anthropic__500_api_error_overloaded_request_id_null: backoff ---------------------
    case(
        "overloaded_500/a: 'is overloaded, please retry'",
        response(
            500,
            anthropic("api_error", "The server is overloaded, please retry."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "overloaded_500/b: in-band, no type",
        frame(error("Overloaded"), body(temperature=0.2)),
        "backoff",
    ),
    # -- anthropic__529_overloaded_error_x_should_retry: backoff --------------------------
    case(
        "overloaded_529/a: no header",
        response(529, anthropic("overloaded_error", "Overloaded"), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "overloaded_529/b: 503, the server asks for a retry",
        response(
            503,
            anthropic("api_error", "Service temporarily overloaded."),
            body(temperature=0.2),
            headers={"x-should-retry": "true"},
        ),
        "backoff",
    ),
    # -- anthropic__sse_error_event_overloaded_after_200: backoff -------------------------
    case(
        "overloaded_sse/a: in-band, 'temporarily overloaded'",
        frame(
            {"type": "overloaded_error", "message": "Anthropic's API is temporarily overloaded."},
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "overloaded_sse/b: in-band, 'high load ... try again shortly'",
        frame(
            error("The system is under high load. Please try again shortly."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- anthropic__temperature_only_1_when_thinking_enabled_or_adaptive: drop temperature
    case(
        "temperature_thinking/a: the condition first",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "When thinking is enabled, `temperature` can only be set to 1.",
            ),
            body(temperature=0.7, thinking=THINKING),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "temperature_thinking/b: 'must be 1 while', bare word",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "temperature must be 1 while extended thinking is on",
            ),
            body(temperature=0.7, thinking={"type": "adaptive"}),
        ),
        "drop",
        ("temperature",),
    ),
    # -- newapi__temperature_only_1_when_thinking_enabled_nil_type: drop temperature ------
    case(
        "temperature_thinking_relay/a: assigned, a request id after",
        response(
            400,
            error(
                "Only temperature=1 is allowed if thinking is enabled (request id: 2025abc)",
                type="<nil>",
                param="",
            ),
            body(temperature=0.3, thinking=THINKING),
        ),
        "drop",
        ("temperature",),
    ),
    # -- anthropic__temperature_range_minus_1_or_0_to_1: drop temperature -----------------
    case(
        "temperature_range/a: 'must be between 0 and 1'",
        response(
            400,
            anthropic("invalid_request_error", "temperature: must be between 0 and 1"),
            body(temperature=1.5, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "temperature_range/b: 422, backticks, 'out of range'",
        response(
            422,
            error("`temperature` is out of range: expected 0 <= x <= 1"),
            body(temperature=1.5, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    # -- anthropic__thinking_enabled_budget_tokens_at_least_1024: drop thinking -----------
    case(
        "budget_tokens/a: a shorter path",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "thinking.budget_tokens: Input should be greater than or equal to 1024",
            ),
            body(thinking={"type": "enabled", "budget_tokens": 512}, temperature=1),
        ),
        "drop",
        ("thinking",),
    ),
    case(
        "budget_tokens/b: the field before a colon, 'must be at least'",
        response(
            400,
            error("thinking: budget_tokens must be at least 1024"),
            body(thinking={"type": "enabled", "budget_tokens": 512}, temperature=1),
        ),
        "drop",
        ("thinking",),
    ),
    # -- azure-openai__unrecognized_request_argument_max_completion_tokens: rename --------
    case(
        "older_name/a: 'is not a recognized argument'",
        response(
            400,
            error("Unrecognized request argument: max_completion_tokens"),
            body(max_completion_tokens=100, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
        {"max_completion_tokens": "max_tokens"},
    ),
    case(
        "older_name/b: quoted, 'Unknown parameter'",
        response(
            400,
            error("Unknown parameter: 'max_completion_tokens'."),
            body(max_completion_tokens=100, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
        {"max_completion_tokens": "max_tokens"},
    ),
    # -- bedrock__converse_model_does_not_support_image_content_block: images -------------
    case(
        "image_block/a: 'does not support image content blocks'",
        response(
            400,
            {"message": "This model does not support image content blocks."},
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_block/b: in-band, 'image content is not supported'",
        frame(
            error("Image content is not supported by the selected model. Remove it and retry."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- cerebras__unsupported_tool_choice_expected_auto_or_none: drop tool_choice --------
    case(
        "tool_choice_value/a: no param, the accepted values after",
        response(
            400,
            error("Unsupported value for `tool_choice`: only 'auto' and 'none' are supported."),
            body(tools=TOOLS, tool_choice=NAMED_CHOICE, temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "tool_choice_value/b: the param, 'must be'",
        response(
            400,
            error("tool_choice must be one of 'auto' or 'none'", param="tool_choice"),
            body(tools=TOOLS, tool_choice=NAMED_CHOICE, temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- epam_dial__invalid_structure_on_path_stream_options_extra_fields: drop -----------
    case(
        "invalid_structure/a: 'at path', a colon",
        response(
            400,
            error("Invalid structure at path stream_options: extra fields not permitted"),
            body(stream_options={"include_usage": True}, temperature=1),
        ),
        "drop",
        ("stream_options",),
    ),
    case(
        "invalid_structure/b: FastAPI's 422 inside the key",
        response(
            422,
            pydantic("stream_options", "include_usage"),
            body(stream_options={"include_usage": True}, temperature=1),
        ),
        "drop",
        ("stream_options",),
    ),
    # -- gemini__500_internal_error_please_retry_or_report: backoff -----------------------
    case(
        "internal/a: in-band, no status, 'An internal error occurred'",
        frame(error("An internal error occurred. Please retry."), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "internal/b: 500, Google's other words",
        response(
            500,
            error("Internal error encountered.", code=500, status="INTERNAL"),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- gemini__json_mode_not_enabled_for_gemma: drop response_format --------------------
    case(
        "json_mode/a: 'not supported for'",
        response(
            400,
            error(
                "JSON mode is not supported for models/gemma-3-12b-it", status="INVALID_ARGUMENT"
            ),
            body(response_format=JSON_OBJECT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "json_mode/b: in-band, lower case",
        frame(
            error("json mode is not enabled for this model"),
            body(response_format=JSON_OBJECT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- gemini__openai_compat_developer_instruction_not_enabled_gemma: none --------------
    case(
        "system_turn/a: 'System instructions are not enabled'",
        response(
            400,
            error("System instructions are not enabled for models/gemma-3-4b-it"),
            body(temperature=0.2, max_tokens=512),
        ),
        "surface",
    ),
    case(
        "system_turn/b: 'is not supported by'",
        response(
            400,
            error("Developer instruction is not supported by models/gemma-3n-e4b-it"),
            body(temperature=0.2, max_tokens=512),
        ),
        "surface",
    ),
    # -- gemini__openai_compat_list_envelope_api_key_invalid: none ------------------------
    case(
        "key_invalid/a: 'expired', Google's list",
        response(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "message": "API key expired. Please renew the API key.",
                        "status": "INVALID_ARGUMENT",
                    }
                }
            ],
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "key_invalid/b: in-band, no status",
        frame(error("The provided API key is invalid."), body(temperature=0.2)),
        "surface",
    ),
    # -- gemini_relay__nested_json_string_api_key_invalid: none ---------------------------
    case(
        "key_invalid_relay/a: another reason in the string",
        response(
            400,
            {
                "error": {
                    "message": json.dumps(
                        {
                            "error": {
                                "code": 400,
                                "message": "API key not valid. Please pass a valid API key.",
                                "status": "INVALID_ARGUMENT",
                            }
                        }
                    ),
                    "code": 400,
                    "status": "Bad Request",
                }
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- gemini__penalty_not_enabled_frequency_penalty_alone / both: drop the penalties --
    case(
        "penalty/a: 'Penalties are not supported for'",
        response(
            400,
            error("Penalties are not supported for models/gemma-3-27b-it"),
            body(frequency_penalty=0.4, temperature=0.2),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    case(
        "penalty/b: in-band, 'penalty parameters are not enabled'",
        frame(
            error("penalty parameters are not enabled for this model"),
            body(presence_penalty=0.5, frequency_penalty=0.3, top_p=0.9),
        ),
        "drop",
        ("frequency_penalty", "presence_penalty"),
    ),
    case(
        "penalty/c: 422, 'aren't supported'",
        response(
            422,
            error("Penalties aren't supported by models/gemini-2.0-flash-lite."),
            body(presence_penalty=0.5, frequency_penalty=0.3, top_p=0.9),
        ),
        "drop",
        ("frequency_penalty", "presence_penalty"),
    ),
    # -- hf-tgi__sse_frequency_penalty_range: drop frequency_penalty ----------------------
    case(
        "frequency_penalty_range/a: in-band, 'between'",
        frame(
            tgi("Input validation error: `frequency_penalty` must be between -2 and 2"),
            body(frequency_penalty=2.5, presence_penalty=0.5),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    case(
        "frequency_penalty_range/b: 422, its words",
        response(
            422,
            tgi("Frequency penalty must be >= -2.0 and <= 2.0"),
            body(frequency_penalty=2.5, presence_penalty=0.5),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    # -- hf-tgi__sse_stop_supports_up_to_4_stop_sequences: drop stop ----------------------
    case(
        "stop_count/a: in-band, 'at most', 'got'",
        frame(
            tgi("Input validation error: `stop` supports at most 4 stop sequences, got 6"),
            body(stop=["a", "b", "c", "d", "e", "f"], temperature=0.2),
        ),
        "drop",
        ("stop",),
    ),
    case(
        "stop_count/b: 422, the field before a colon",
        response(
            422,
            tgi("stop: at most 4 sequences are allowed"),
            body(stop=["a", "b", "c", "d", "e", "f"], temperature=0.2),
        ),
        "drop",
        ("stop",),
    ),
    # -- hf-tgi__sse_temperature_must_be_strictly_positive: drop temperature --------------
    case(
        "temperature_positive/a: in-band, '> 0'",
        frame(tgi("`temperature` must be > 0"), body(temperature=0, top_p=0.9)),
        "drop",
        ("temperature",),
    ),
    case(
        "temperature_positive/b: 400, bare word, 'strictly greater than zero'",
        response(
            400,
            tgi("Input validation error: temperature must be strictly greater than zero"),
            body(temperature=0, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    # -- llamacpp__500_only_one_completion_choice_is_allowed: drop n ----------------------
    case(
        "one_choice/a: 400, 'a single completion choice is supported'",
        response(
            400,
            error("Only a single completion choice is supported", type="invalid_request_error"),
            body(n=3, temperature=0.2),
        ),
        "drop",
        ("n",),
    ),
    case(
        "one_choice/b: in-band, 'Multiple choices are not supported'",
        frame(error("Multiple choices are not supported."), body(n=2, temperature=0.2)),
        "drop",
        ("n",),
    ),
    case(
        "one_choice/c: 501, 'more than one completion'",
        response(
            501,
            error(
                "Generating more than one completion is not supported", type="not_supported_error"
            ),
            body(n=2, temperature=0.2),
        ),
        "drop",
        ("n",),
    ),
    # -- lmstudio__200_vision_add_on_not_loaded_images_provided: images -------------------
    case(
        "vision_part/a: in-band, 'has not been loaded'",
        frame(
            error("Vision adapter has not been loaded; images cannot be processed"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "vision_part/b: 500, a processor 'not initialized'",
        response(
            500,
            error("ValueError: The image processor is not initialized, but the request has images"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "vision_part/c: in-band, a projector 'not loaded'",
        frame(
            error("Multimodal projector not loaded, cannot process images."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- ollama__500_model_missing_data_required_for_image_input: images ------------------
    case(
        "missing_projector/a: 'lacks the data required'",
        response(
            500,
            {"error": "failed to process inputs: model lacks the data required for image input"},
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "missing_projector/b: 'does not have the projector'",
        response(
            500,
            {"error": "this model does not have the projector needed to process images"},
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- oneapi__function_call_not_supported_for_this_model_request_id: drop tools --------
    case(
        "function_call/a: 'Function calling is not supported'",
        response(
            400,
            error("Function calling is not supported for this model. (request id: 20250307)"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "function_call/b: in-band, 'does not support function calls'",
        frame(
            error("This model does not support function calls."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- openai__invalid_value_object_supported_values_param_response_format_type: drop ---
    case(
        "format_value/a: no param, the path in the words",
        response(
            400,
            error(
                "Invalid value for 'response_format.type': 'object'. Supported values are: "
                "'json_object', 'json_schema', and 'text'."
            ),
            body(response_format={"type": "object"}, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "format_value/b: the param, a validator's words",
        response(
            400,
            error(
                "'object' is not one of ['json_object', 'json_schema', 'text']",
                param="response_format.type",
            ),
            body(response_format={"type": "object"}, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- openai__tools_is_not_supported_in_this_model_link: drop tools --------------------
    case(
        "tools_link/a: 'Tool calling', a link",
        response(
            400,
            error(
                "Tool calling is not supported by this model. See "
                "https://platform.openai.com/docs/guides/function-calling"
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tools_link/b: a link whose anchor spells a key",
        response(
            400,
            error("This model does not support tools; see https://example.com/docs#temperature"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- truefoundry_deepinfra__405_json_object_response_format_not_supported: drop ------
    case(
        "json_object/a: the key spelled",
        response(
            405,
            error("json_object response_format is not supported for model: x/y", code="405"),
            body(response_format=JSON_OBJECT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "json_object/b: 400, words, 'by this model'",
        response(
            400,
            error("JSON object response format not supported by this model"),
            body(response_format=JSON_OBJECT, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- vllm__at_most_1_images_may_be_provided_in_one_request: images --------------------
    case(
        "image_count/a: 'per prompt'",
        response(
            400,
            {
                "object": "error",
                "message": "At most 1 image may be provided per prompt.",
                "type": "BadRequestError",
                "code": 400,
            },
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_count/b: 'Too many images'",
        response(
            400,
            error("Too many images: the model accepts at most one."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
]

# -- the same families in more words (each read wrong before this file) -----------------
MORE = [
    case(
        "one_choice/d: 'The number of completions must be 1'",
        response(400, error("The number of completions must be 1."), body(n=3)),
        "drop",
        ("n",),
    ),
    case(
        "vision_part/d: in-band, a vision 'module' not loaded",
        frame(
            error("The vision module is not loaded, but the request contains images."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "internal/c: in-band, 'on our end', 'retry your request'",
        frame(
            error("An unexpected error occurred on our end. Please retry your request."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "temperature_thinking_relay/b: in-band, bare word, 'may only be set'",
        frame(
            error("temperature may only be set to 1 when thinking is enabled"),
            body(temperature=0.5, thinking=THINKING),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "tools_link/c: 'Tools are not enabled'",
        response(
            400,
            error("Tools are not enabled for this model."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "image_count/c: 'only supports 1 image'",
        response(
            400, error("This model only supports 1 image per request."), body(True, temperature=0.2)
        ),
        "images",
    ),
    case(
        "image_count/d: a Chinese relay's 'at most 1 image'",
        response(400, error("最多只能上传1张图片"), body(True, temperature=0.2)),
        "images",
    ),
]

# == the round's three rules, and near misses ==========================================
RULES = [
    # -- "penalty" refused in prose names every penalty key the body holds ---------------
    case(
        "rule/penalty/a: 'Penalty settings are unavailable', repetition_penalty",
        response(
            400,
            error("Penalty settings are unavailable for this model."),
            body(repetition_penalty=1.1, temperature=0.2),
        ),
        "drop",
        ("repetition_penalty",),
    ),
    case(
        "rule/penalty/b: 'does not support penalties'",
        response(
            400,
            error("models/gemini-2.5-pro does not support penalties"),
            body(presence_penalty=0.5, temperature=0.2),
        ),
        "drop",
        ("presence_penalty",),
    ),
    case(
        "near/penalty/a: one penalty by its words",
        response(
            400,
            error("Presence penalty is not supported for this model."),
            body(presence_penalty=0.5, frequency_penalty=0.3),
        ),
        "drop",
        ("presence_penalty",),
    ),
    case(
        "near/penalty/b: a penalty the body does not hold",
        response(
            400,
            error("Length penalty is not supported for this model."),
            body(frequency_penalty=0.3),
        ),
        "static",
    ),
    # -- the completion choices `n` asks for, refused by number -------------------------
    case(
        "rule/choices/a: 'Multiple completion choices are not supported'",
        response(400, error("Multiple completion choices are not supported."), body(n=4)),
        "drop",
        ("n",),
    ),
    case(
        "rule/choices/b: 'at most 1 choice'",
        response(400, error("At most 1 completion choice can be generated."), body(n=4)),
        "drop",
        ("n",),
    ),
    case(
        "near/choices/a: one system message",
        response(400, error("Only one system message is allowed."), body(n=2)),
        "surface",
    ),
    case(
        "near/choices/b: one image",
        response(400, error("Only one image is allowed per request."), body(True, n=2)),
        "images",
    ),
    # -- the part that reads images absent refuses image input --------------------------
    case(
        "rule/vision_part/a: 'vision encoder not installed'",
        response(
            400,
            error("The vision encoder is not installed; image inputs cannot be used."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "rule/vision_part/b: in-band, 'image projector ... not been loaded'",
        frame(
            error("The image projector has not been loaded for this model"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "near/vision_part/a: the vision encoder still loading",
        frame(
            error("Vision encoder is still loading, please try again in a moment."),
            body(True, temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/vision_part/b: a part not loaded, no image word",
        response(400, error("The tokenizer processor is not loaded."), body(True, temperature=0.2)),
        "static",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + MORE + RULES)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings added here (an unqualified penalty after its words, the
# part that reads images absent, a count of images, a short wait, more than one choice).
_HOSTILE = {
    "penalty words": "the penalty " * 2_730,
    "marks before spaces": ("." + " " * 64) * 504,
    "no parts": "no vision " * 3_276,
    "does not have": "does not have the image " * 1_365,
    "only counts": "only one image " * 2_184,
    "waits": "try again in a " * 2_184,
    "more than one": "more than one " * 2_340,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    policy = RecoveryPolicy(degrade=True)
    sent = body(True, n=2, frequency_penalty=0.3, temperature=0.2)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(error(text), sent, policy))
        verdicts.append(response(400, error(text), sent, policy))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
