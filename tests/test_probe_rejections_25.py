"""Round eight's rejections in every envelope and in other words.

The 31 cases tests/rejections_extra gained in the eighth round (listed in
tests/test_probe_rejections_24.py's docstring) are taken apart and put back together in
each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame
after `200 OK` (`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_16.py
does for earlier rounds): 620 combinations. Each must get the original's action, dropped
keys and renames. No envelope loses what an action of this round rests on, so none is
marked `DIFFERENT`: where a frame has neither status nor type, the words still say the
server's trouble (LM Studio's "The model has crashed", SGLang's "The request queue is
full").

Then, as tests/test_probe_rejections_17.py does, one to three paraphrases of each case
(`VARIANTS`), and of each of the round's eight rules (`RULES`: a model's id bare after
"Unsupported model"; reasoning "not configurable" or refused by the server's field for it;
advice to enable a key; a refusal before a list of keys; Gemini's `response_schema`; a
quoted field is no size; stop sequences; Gemini's candidates) with two near misses per
rule. Every expected action is written beside its body. The wordings are invented after
the servers' formats; none was recorded.

Left out as debatable: a final assistant turn that "must start with a thinking block" with
no advice (the conversation, or `thinking` whose dropping lifts the requirement); "Stop
sequences are supported up to 4" beside another key's refusal (a limit described, or
`stop` refused); `generation_config.stop_sequences` as a Google field violation (Google's
snake_case field, or Anthropic's longer key, which round 19 reads as static); "response
logprobs is not supported" (Vertex's `responseLogprobs` is `logprobs`, or a longer key's
words, as "prompt logprobs" is); "`thinking` is enabled by default and cannot be
disabled" with `thinking` disabled in the body (drop it and get the default, or surface);
"Unsupported model gpt-4o with tools" (the model, or `tools` with it); the model's output
checked against the response schema (the output, or the schema).
"""

from __future__ import annotations

import json
import threading

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict
from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import SCHEMA, case, error, pydantic, vllm
from tests.test_probe_rejections_19 import action_counts, assert_reads_the_same
from tests.test_probe_rejections_21 import anthropic
from tests.test_probe_rejections_23 import flat, google

# drop 18, none 9, images 2, backoff 2
ROUND_EIGHT = (
    "anthropic__extra_body_extra_inputs_are_not_permitted",
    "anthropic__first_block_must_be_thinking_or_redacted_thinking_found_text",
    "anthropic__thinking_blocks_in_latest_assistant_message_cannot_be_modified",
    "anthropic__thinking_disabled_final_assistant_message_cannot_contain_thinking",
    "anthropic__top_k_must_be_unset_when_thinking_is_enabled",
    "azure_openai__unknown_parameter_apimode_camelcase",
    "bedrock_access_gateway__detail_unsupported_model_use_models_api",
    "bedrock_litellm__top_p_must_be_unset_when_thinking_is_enabled",
    "darkbloom__inference_enforced_tool_choice_not_supported_for_model",
    "deepseek__detail_invalid_top_logprobs_and_logprobs_value",
    "gemini__native_only_one_candidate_can_be_specified",
    "gemini__native_response_schema_properties_should_be_non_empty_for_object",
    "gemini__native_thinking_config_is_not_supported",
    "gemini__native_thinking_is_not_enabled_for_model",
    "groq__max_completion_tokens_must_be_le_maximum_not_context_window",
    "groq__messages_0_role_system_property_id_unsupported_did_you_mean_name",
    "hosted_vllm__sse_model_is_not_multimodal_remove_image_inputs",
    "litellm_proxy__unsupported_params_ollama_parallel_tool_calls",
    "lmstudio__anthropic_endpoint_500_model_crashed_api_error",
    "nvidia__validation_thinking_type_must_be_enabled_or_disabled",
    "ollama_cloud__openai_compat_bare_error_string_no_image_input",
    "openai__unsupported_parameter_parallel_tool_calls_with_this_model",
    "opencode_zen__detail_check_parameters_input_longer_than_context_length",
    "perplexity__at_body_messages_content_field_required_role_literal",
    "perplexity__at_body_response_format_union_members_input_should_be",
    "sglang__sse_request_queue_is_full_503",
    "sglang__sse_requested_token_count_exceeds_maximum_context_length",
    "vertex__stop_sequences_value_10_supported_range_1_to_6",
    "vertex__thinking_not_configurable_remove_thinking_config",
    "vertex__unable_to_submit_request_logprobs_not_supported_for_this_model",
    "vertex_anthropic__messages_thinking_cache_control_extra_inputs_google_envelope",
)


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_EIGHT))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


def test_the_cases_are_round_eights() -> None:
    assert len(set(ROUND_EIGHT)) == 31
    assert action_counts(ROUND_EIGHT) == {
        "drop": 18,
        "none": 9,
        "images": 2,
        "backoff": 2,
    }


THINKING = {"type": "enabled", "budget_tokens": 1024}
STOPS = ["\n", "```", "</s>", "<|end|>", "\n\n", "#", "//", "/*", '"""', "'''"]

# == the round's cases in other words ===================================================
VARIANTS = [
    # -- anthropic__extra_body_extra_inputs_are_not_permitted: drop extra_body -------------
    case(
        "extra_body/a: FastAPI's 422, the key under `body`",
        response(
            422,
            pydantic("extra_body"),
            body(extra_body={"reasoning_effort": "high"}, temperature=0.2),
        ),
        "drop",
        ("extra_body",),
    ),
    case(
        "extra_body/b: OpenAI's 'Unrecognized request argument supplied'",
        response(
            400,
            error("Unrecognized request argument supplied: extra_body"),
            body(extra_body={"reasoning_effort": "high"}, temperature=0.2),
        ),
        "drop",
        ("extra_body",),
    ),
    # -- anthropic__first_block_must_be_thinking_or_redacted_thinking_found_text: none -----
    case(
        "first_block/a: reworded, the block's index, 'got'",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.3.content.0: the first block of an assistant message with thinking "
                "blocks must be of type `thinking` or `redacted_thinking`, got `tool_use`.",
            ),
            body(thinking=THINKING),
        ),
        "surface",
    ),
    case(
        "first_block/b: in-band, Anthropic's error object",
        frame(
            {
                "type": "invalid_request_error",
                "message": "messages.1.content.0: If an assistant message contains thinking "
                "blocks, its first block must be `thinking`. Found `text`.",
            },
            body(thinking=THINKING),
        ),
        "surface",
    ),
    # -- anthropic__thinking_blocks_in_latest_assistant_message_cannot_be_modified: none ---
    case(
        "modified/a: 'must not be changed', a hint",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.3.content.1: `thinking` blocks in the last assistant turn must not "
                "be changed; pass them back exactly as they were received.",
            ),
            body(thinking=THINKING),
        ),
        "surface",
    ),
    case(
        "modified/b: in-band, `redacted_thinking` alone",
        frame(
            {
                "type": "invalid_request_error",
                "message": "messages.5.content.0: `redacted_thinking` blocks in the latest "
                "assistant message cannot be modified.",
            },
            body(thinking=THINKING),
        ),
        "surface",
    ),
    # -- anthropic__thinking_disabled_final_assistant_message_cannot_contain_thinking: none -
    case(
        "cannot_contain/a: clauses reordered, 'Enable `thinking` to use them'",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.9.content.0: an `assistant` message in the final position cannot "
                "contain `thinking` blocks while thinking is disabled. Enable `thinking` to "
                "use them.",
            ),
            body(thinking={"type": "disabled"}),
        ),
        "surface",
    ),
    case(
        "cannot_contain/b: 'turn on', double quotes",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.2.content.0: When thinking is disabled, the final assistant message "
                'cannot contain "thinking" blocks. To use them, turn on "thinking".',
            ),
            body(thinking={"type": "disabled"}),
        ),
        "surface",
    ),
    # -- anthropic__top_k_must_be_unset_when_thinking_is_enabled: drop top_k --------------
    case(
        "top_k_unset/a: 'cannot be set when', no link",
        response(
            400,
            anthropic("invalid_request_error", "`top_k` cannot be set when thinking is enabled."),
            body(top_k=40, thinking=THINKING),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "top_k_unset/b: in-band, 'must not be set if `thinking` is enabled'",
        frame(
            {
                "type": "invalid_request_error",
                "message": "`top_k` must not be set if `thinking` is enabled.",
            },
            body(top_k=40, thinking=THINKING),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "top_k_unset/c: bare word, 'is not allowed while extended thinking is enabled'",
        response(
            400,
            error("top_k is not allowed while extended thinking is enabled"),
            body(top_k=40, thinking=THINKING),
        ),
        "drop",
        ("top_k",),
    ),
    # -- azure_openai__unknown_parameter_apimode_camelcase: drop apiMode -------------------
    case(
        "apimode/a: no `param`, the code only",
        response(
            400,
            error("Unknown parameter: 'apiMode'.", code="unknown_parameter"),
            body(apiMode="chatCompletion", temperature=0.7),
        ),
        "drop",
        ("apiMode",),
    ),
    case(
        "apimode/b: 'Unrecognized request argument supplied'",
        response(
            400,
            error("Unrecognized request argument supplied: apiMode"),
            body(apiMode="chatCompletion", temperature=0.7),
        ),
        "drop",
        ("apiMode",),
    ),
    # -- bedrock_access_gateway__detail_unsupported_model_use_models_api: none ------------
    case(
        "unsupported_model/a: another id, a semicolon, another hint",
        response(
            400,
            {
                "detail": "Unsupported model meta.llama3-70b-instruct-v1:0; call the models API "
                "for the supported list"
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "unsupported_model/b: the id alone, OpenAI's envelope",
        response(
            400,
            error("Unsupported model us.anthropic.claude-3-7-sonnet-20250219-v1:0"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "unsupported_model/c: passive, 'Model X is not supported'",
        response(
            400,
            {
                "detail": "Model anthropic.claude-v2 is not supported, please use models API to "
                "get a list of supported models"
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- bedrock_litellm__top_p_must_be_unset_when_thinking_is_enabled: drop top_p --------
    case(
        "top_p_unset/a: LiteLLM's relay, 'must not be set'",
        response(
            400,
            litellm(
                'litellm.BadRequestError: BedrockException - {"message":"The model returned '
                'the following errors: top_p must not be set when thinking is enabled."}',
                400,
            ),
            body(top_p=0.9, thinking=THINKING),
        ),
        "drop",
        ("top_p",),
    ),
    case(
        "top_p_unset/b: the same rule for `temperature` ('may only be set to 1')",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "`temperature` may only be set to 1 when thinking is enabled.",
            ),
            body(temperature=0.5, thinking=THINKING),
        ),
        "drop",
        ("temperature",),
    ),
    # -- darkbloom__inference_enforced_tool_choice_not_supported_for_model: drop tool_choice -
    case(
        "forced_choice/a: the value quoted, the model quoted",
        response(
            400,
            error('tool_choice "required" is not supported for model "qwen/qwen3-32b"'),
            body(tools=TOOLS, tool_choice="required"),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "forced_choice/b: 'by this model', the forms in parentheses",
        response(
            400,
            error(
                "Forced tool_choice (required or a named function) is not supported by this model."
            ),
            body(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "f"}}),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- deepseek__detail_invalid_top_logprobs_and_logprobs_value: drop both --------------
    case(
        "invalid_pair/a: the keys reordered",
        response(
            400,
            {"detail": "Invalid logprobs and top_logprobs value"},
            body(logprobs=False, top_logprobs=0),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "invalid_pair/b: backticks, 'or'",
        response(
            400,
            error("Invalid `top_logprobs` or `logprobs` value."),
            body(logprobs=False, top_logprobs=0),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "invalid_pair/c: 'Invalid values for', the keys after",
        response(
            400,
            {"detail": "Invalid values for top_logprobs and logprobs"},
            body(logprobs=False, top_logprobs=0),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- gemini__native_only_one_candidate_can_be_specified: drop n -----------------------
    case(
        "candidate/a: Google's field, 'must be 1'",
        response(
            400, google("candidateCount must be 1 for this model."), body(n=2, temperature=1.0)
        ),
        "drop",
        ("n",),
    ),
    case(
        "candidate/b: 'Multiple candidates are not supported'",
        response(
            400,
            google("Multiple candidates are not supported for this model."),
            body(n=3, temperature=1.0),
        ),
        "drop",
        ("n",),
    ),
    case(
        "candidate/c: Google's field, out of its range",
        response(400, google("candidateCount must be between 1 and 8"), body(n=10)),
        "drop",
        ("n",),
    ),
    # -- gemini__native_response_schema_properties_should_be_non_empty_for_object: drop ----
    case(
        "response_schema/a: camelCase, a shorter path",
        response(
            400,
            google(
                '* GenerateContentRequest.generationConfig.responseSchema.properties["go"]'
                ".properties: should be non-empty for OBJECT type"
            ),
            body(response_format=SCHEMA, temperature=0.1),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "response_schema/b: Gemini's 'Unknown name' inside the schema",
        response(
            400,
            google(
                'Invalid JSON payload received. Unknown name "additionalProperties" at '
                "'generation_config.response_schema': Cannot find field."
            ),
            body(response_format=SCHEMA, temperature=0.1),
        ),
        "drop",
        ("response_format",),
    ),
    # -- gemini__native_thinking_config_is_not_supported: drop reasoning_effort -----------
    case(
        "thinking_config/a: camelCase, 'for this model'",
        response(
            400,
            google("thinkingConfig is not supported for this model."),
            body(reasoning_effort="low", temperature=0.3),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "thinking_config/b: in words, 'Thinking config'",
        response(
            400,
            google("Thinking config is not supported."),
            body(reasoning_effort="low", temperature=0.3),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- gemini__native_thinking_is_not_enabled_for_model: drop reasoning_effort ---------
    case(
        "thinking_enabled/a: 'not available'",
        response(
            400,
            google("Thinking is not available for models/gemini-2.0-flash"),
            body(reasoning_effort="low", temperature=0.5),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "thinking_enabled/b: 'Reasoning', in-band",
        frame(
            error("Reasoning is not enabled for this model."),
            body(reasoning_effort="low", temperature=0.5),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- groq__max_completion_tokens_must_be_le_maximum_not_context_window: drop ----------
    case(
        "max_le/a: `max_tokens` in the same words",
        response(
            400,
            error(
                "`max_tokens` must be less than or equal to `8192`, the maximum value for "
                "`max_tokens` is less than the `context_window` for this model"
            ),
            body(max_tokens=32000, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_le/b: single quotes, the reason in parentheses, no `param`",
        response(
            400,
            error(
                "'max_completion_tokens' must be <= 16384 (the maximum for this model is "
                "less than its 'context_window')"
            ),
            body(max_completion_tokens=32000, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    # -- groq__messages_0_role_system_property_id_unsupported_did_you_mean_name: none -----
    case(
        "message_property/a: another message, another property",
        response(
            400,
            error(
                "'messages.2' : for 'role:assistant' the following must be satisfied"
                "[('messages.2' : property 'annotations' is unsupported)]"
            ),
            body(temperature=0.5),
        ),
        "surface",
    ),
    case(
        "message_property/b: in-band, with the suggestion",
        frame(
            error(
                "'messages.0' : for 'role:user' the following must be satisfied"
                "[('messages.0' : property 'id' is unsupported, did you mean 'name'?)]"
            ),
            body(temperature=0.5),
        ),
        "surface",
    ),
    # -- hosted_vllm__sse_model_is_not_multimodal_remove_image_inputs: images ------------
    case(
        "not_multimodal/a: in-band, reworded",
        frame(
            flat(
                "This model is not multimodal; remove the image inputs.", "BadRequestError", "400"
            ),
            body(True, temperature=0.3),
        ),
        "images",
    ),
    case(
        "not_multimodal/b: over HTTP, 'does not support multimodal inputs'",
        response(
            400,
            vllm("Model 'qwen3-8b' does not support multimodal inputs."),
            body(True, temperature=0.3),
        ),
        "images",
    ),
    # -- litellm_proxy__unsupported_params_ollama_parallel_tool_calls: drop ---------------
    case(
        "unsupported_params/a: two keys listed",
        response(
            400,
            litellm(
                "litellm.UnsupportedParamsError: ollama does not support parameters: "
                "['parallel_tool_calls', 'seed'], for model=phi4-mini. To drop these, set "
                "litellm.drop_params=True",
                400,
            ),
            body(tools=TOOLS, parallel_tool_calls=True),
        ),
        "drop",
        ("parallel_tool_calls", "seed"),
    ),
    case(
        "unsupported_params/b: another backend, a dict of the values",
        response(
            400,
            litellm(
                "litellm.UnsupportedParamsError: vllm does not support parameters: "
                "{'parallel_tool_calls': True}, for model=llama3.",
                400,
            ),
            body(tools=TOOLS, parallel_tool_calls=True),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- lmstudio__anthropic_endpoint_500_model_crashed_api_error: backoff ----------------
    case(
        "crashed/a: 500, 'crashed unexpectedly', an image in the body",
        response(
            500,
            anthropic("api_error", "The model crashed unexpectedly."),
            body(True, max_tokens=50),
        ),
        "backoff",
    ),
    case(
        "crashed/b: in-band, no status, no type",
        frame("Model process crashed (exit code 139).", body(True, max_tokens=50)),
        "backoff",
    ),
    case(
        "crashed/c: in-band, Ollama's runner terminated",
        frame(error("llama runner process has terminated: exit status 2"), body(True)),
        "backoff",
    ),
    # -- nvidia__validation_thinking_type_must_be_enabled_or_disabled: drop thinking -----
    case(
        "thinking_type/a: another member of `thinking`",
        response(
            400,
            {
                "message": "Validation: `thinking.budget_tokens` must be at least 1024",
                "type": "Bad Request",
                "code": 400,
            },
            body(thinking={"type": "enabled", "budget_tokens": 10}, temperature=0.6),
        ),
        "drop",
        ("thinking",),
    ),
    case(
        "thinking_type/b: a validator's path, 'Input should be'",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "thinking", "type"],
                        "msg": "Input should be 'enabled' or 'disabled'",
                    }
                ]
            },
            body(thinking={"type": "adaptive"}, temperature=0.6),
        ),
        "drop",
        ("thinking",),
    ),
    # -- ollama_cloud__openai_compat_bare_error_string_no_image_input: images ------------
    case(
        "bare_image/a: 'does not support images'",
        response(400, {"error": "model does not support images"}, body(True)),
        "images",
    ),
    case(
        "bare_image/b: plain text, contracted",
        response(400, "this model doesn't support image input", body(True)),
        "images",
    ),
    # -- openai__unsupported_parameter_parallel_tool_calls_with_this_model: drop ----------
    case(
        "parallel/a: no `param`, `tool_choice` beside",
        response(
            400,
            error("Unsupported parameter: 'parallel_tool_calls' is not supported with this model."),
            body(tools=TOOLS, tool_choice="auto", parallel_tool_calls=False),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    case(
        "parallel/b: bare word, 'for reasoning models'",
        response(
            400,
            error("parallel_tool_calls is not supported for reasoning models"),
            body(tools=TOOLS, tool_choice="auto", parallel_tool_calls=False),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- opencode_zen__detail_check_parameters_input_longer_than_context_length: none ----
    case(
        "longer_input/a: the boilerplate, OpenAI's words for the length",
        response(
            400,
            {
                "detail": "Invalid request. Please check the parameters and try again. Details: "
                "This model's maximum context length is 131072 tokens. However, you requested "
                "200000 tokens."
            },
            body(max_tokens=32000, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "longer_input/b: 'verify your parameters', 'exceeds the context window'",
        response(
            400,
            error(
                "Please verify your parameters. The prompt (300000 tokens) exceeds the "
                "model's context window (262144 tokens)."
            ),
            body(max_tokens=32000, temperature=0.2),
        ),
        "surface",
    ),
    # -- perplexity__at_body_messages_content_field_required_role_literal: none ----------
    case(
        "at_body_messages/a: one item, content missing",
        response(
            400,
            {
                "error": {
                    "message": '["At body -> messages -> 2 -> content: Field required"]',
                    "type": "bad_request",
                    "code": 400,
                }
            },
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    case(
        "at_body_messages/b: one item, the role's literal",
        response(
            400,
            {
                "error": {
                    "message": '["At body -> messages -> 3 -> role: Input should be '
                    "'system', 'user' or 'assistant'\"]",
                    "type": "bad_request",
                    "code": 400,
                }
            },
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    # -- perplexity__at_body_response_format_union_members_input_should_be: drop --------
    case(
        "at_body_format/a: one member's literal",
        response(
            400,
            {
                "error": {
                    "message": '["At body -> response_format -> type: Input should be '
                    "'text', 'json_schema' or 'regex'\"]",
                    "type": "bad_request",
                    "code": 400,
                }
            },
            body(response_format={"type": "json_object"}, temperature=0.3),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "at_body_format/b: FastAPI's 422, a union member in the path",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "response_format", "ResponseFormatText", "type"],
                        "msg": "Input should be 'text'",
                    }
                ]
            },
            body(response_format={"type": "json_object"}, temperature=0.3),
        ),
        "drop",
        ("response_format",),
    ),
    # -- sglang__sse_request_queue_is_full_503: backoff ----------------------------------
    case(
        "queue_full/a: in-band, no status, 'waiting queue'",
        frame(error("The waiting queue is full."), body(temperature=0.6)),
        "backoff",
    ),
    case(
        "queue_full/b: over HTTP, 503",
        response(503, vllm("The request queue is full.", 503), body(temperature=0.6)),
        "backoff",
    ),
    # -- sglang__sse_requested_token_count_exceeds_maximum_context_length: none ---------
    case(
        "token_count/a: in-band, the input against the context",
        frame(
            flat(
                "The input (204830 tokens) exceeds the maximum context length (196608 tokens).",
                "BadRequestError",
                "400",
            ),
            body(max_tokens=32000),
        ),
        "surface",
    ),
    case(
        "token_count/b: over HTTP, the first sentence only",
        response(
            400,
            vllm(
                "Requested token count exceeds the model's maximum context length of 8192 tokens."
            ),
            body(max_tokens=4000),
        ),
        "surface",
    ),
    # -- vertex__stop_sequences_value_10_supported_range_1_to_6: drop stop --------------
    case(
        "stop_sequences/a: Google's field, 'at most'",
        response(
            400,
            google("stopSequences must have at most 5 items."),
            body(stop=STOPS, temperature=0.1),
        ),
        "drop",
        ("stop",),
    ),
    case(
        "stop_sequences/b: prose, 'the maximum is'",
        response(
            400,
            google("Too many stop sequences: 10 were given, but the maximum allowed is 5."),
            body(stop=STOPS, temperature=0.1),
        ),
        "drop",
        ("stop",),
    ),
    # -- vertex__thinking_not_configurable_remove_thinking_config: drop reasoning_effort -
    case(
        "not_configurable/a: 'not adjustable', the field to remove",
        response(
            400,
            google("Thinking is not adjustable for this model; remove thinking_config."),
            body(reasoning_effort="low", temperature=0.4),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "not_configurable/b: the budget",
        response(
            400,
            google("The thinking budget is not configurable for models/gemini-2.5-pro."),
            body(reasoning_effort="low", temperature=0.4),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- vertex__unable_to_submit_request_logprobs_not_supported_for_this_model: drop ---
    case(
        "logprobs/a: plural, 'are not supported'",
        response(
            400,
            google("Logprobs are not supported for this model."),
            body(logprobs=True, top_logprobs=3, temperature=0.2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "logprobs/b: 'not available', a hint",
        response(
            400,
            google(
                "Unable to submit request because logprobs is not available "
                "for this model. Remove logprobs and try again."
            ),
            body(logprobs=True, top_logprobs=3, temperature=0.2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- vertex_anthropic__messages_thinking_cache_control_extra_inputs_google_envelope: -
    case(
        "thinking_block_field/a: Anthropic's own envelope",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
            ),
            body(thinking=THINKING),
        ),
        "surface",
    ),
    case(
        "thinking_block_field/b: a field missing in a thinking block",
        response(
            400,
            google(
                json.dumps(
                    anthropic(
                        "invalid_request_error",
                        "messages.3.content.1.thinking.signature: Field required",
                    )
                )
            ),
            body(thinking=THINKING),
        ),
        "surface",
    ),
]

# == the round's rules, in other words, and near each ====================================
RULES = [
    # -- a model's id bare after "Unsupported model" ----------------------------------------
    case(
        "rule/bare_id/a: a dated id, a semicolon",
        response(
            400,
            error("Unsupported model gpt-5-nano-2025-08-07; see /v1/models"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/bare_id/a: 'Unsupported model feature: logprobs'",
        response(
            400, error("Unsupported model feature: logprobs"), body(logprobs=True, temperature=0.2)
        ),
        "drop",
        ("logprobs",),
    ),
    case(
        "near/bare_id/b: 'Unsupported model-specific parameter: top_k'",
        response(
            400,
            error("Unsupported model-specific parameter: top_k"),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    # -- reasoning not configurable, or by the server's field ---------------------------
    case(
        "rule/not_configurable/a: 'thinking mode is not configurable'",
        response(
            400,
            google("thinking mode is not configurable for this model"),
            body(reasoning_effort="high", temperature=0.4),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "near/not_configurable/a: another key not configurable, reasoning the circumstance",
        response(
            400,
            error("Temperature is not configurable for reasoning models."),
            body(reasoning_effort="low", temperature=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "near/not_configurable/b: thinking enabled, `stop` not configurable",
        response(
            400,
            error("Thinking is enabled; `stop` is not configurable in this mode."),
            body(reasoning_effort="low", stop=["x"]),
        ),
        "drop",
        ("stop",),
    ),
    # -- advice to enable a key ---------------------------------------------------------
    case(
        "rule/enable/a: 'please activate'",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.4.content.0: thinking blocks are not allowed while thinking is "
                "disabled; please activate `thinking`.",
            ),
            body(thinking={"type": "disabled"}),
        ),
        "surface",
    ),
    case(
        "near/enable/a: 'Cannot enable `logprobs`' refuses it",
        response(
            400,
            error("Cannot enable `logprobs` for this model."),
            body(logprobs=True, temperature=0.2),
        ),
        "drop",
        ("logprobs",),
    ),
    case(
        "near/enable/b: 'unable to enable \"seed\"' refuses it",
        response(
            400,
            error('Unable to enable "seed": deterministic sampling is not supported.'),
            body(temperature=0.2),
        ),
        "drop",
        ("seed",),
    ),
    # -- a refusal before a list of keys ------------------------------------------------
    case(
        "rule/list/a: three keys, commas and 'and'",
        response(
            400,
            error("Unsupported frequency_penalty, presence_penalty and logit_bias for this model"),
            body(frequency_penalty=0.5, presence_penalty=0.5, logit_bias={"1": 1}),
        ),
        "drop",
        ("frequency_penalty", "presence_penalty", "logit_bias"),
    ),
    case(
        "near/list/a: keys of a message listed",
        response(
            400,
            error("Invalid tool_call_id and name in messages[3]"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/list/b: one key refused, others said fine",
        response(
            400,
            error("Invalid top_logprobs value; logprobs and seed are fine."),
            body(logprobs=True, top_logprobs=30),
        ),
        "drop",
        ("top_logprobs",),
    ),
    # -- Gemini's response_schema -------------------------------------------------------
    case(
        "rule/response_schema/a: 'response schema' in words, 'is invalid'",
        response(
            400,
            google("The response schema is invalid: enum values must be strings."),
            body(response_format=SCHEMA, temperature=0.1),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "near/response_schema/a: a longer key with the words",
        response(
            400,
            error("'response_schema_version' is not supported"),
            body(response_schema_version=2, response_format=SCHEMA),
        ),
        "drop",
        ("response_schema_version",),
    ),
    case(
        "near/response_schema/b: the schema accepted, `top_k` refused in the next sentence",
        response(
            400,
            google("Response schema accepted. `top_k` should be at most 40."),
            body(top_k=100, response_format=SCHEMA),
        ),
        "drop",
        ("top_k",),
    ),
    # -- a quoted field is no size ------------------------------------------------------
    case(
        "rule/quoted_field/a: double quotes",
        response(
            400,
            error(
                '"max_tokens" must be at most 4096: the maximum for "max_tokens" is below '
                'the "context_window" of this model',
                param="max_tokens",
            ),
            body(max_tokens=8000, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "near/quoted_field/a: the prompt quoted, the context window in prose",
        response(
            400,
            error("The `prompt` is longer than the context window of this model."),
            body(max_tokens=8000),
        ),
        "surface",
    ),
    case(
        "near/quoted_field/b: the input's tokens over the context, the field quoted",
        response(
            400,
            error("Input tokens (9000) exceed the model's `context_length` (8192)."),
            body(max_tokens=1000),
        ),
        "surface",
    ),
    # -- stop sequences -----------------------------------------------------------------
    case(
        "rule/stop/a: 'stop sequence' singular, 'invalid'",
        response(
            400,
            error("Invalid stop sequence: sequences must not be empty."),
            body(stop=["", "x"], temperature=0.2),
        ),
        "drop",
        ("stop",),
    ),
    case(
        "near/stop/a: stop sequences said unaffected, `logit_bias` refused",
        response(
            400,
            error(
                "Invalid 'logit_bias': token ids must be integers (stop sequences are unaffected)."
            ),
            body(stop=["x"], logit_bias={"a": 1}),
        ),
        "drop",
        ("logit_bias",),
    ),
    case(
        "near/stop/b: a stop sequence in the history, the conversation",
        response(
            400,
            error(
                "messages[2].content ends with a stop sequence; remove it from "
                "the assistant prefix."
            ),
            body(stop=["###"], temperature=0.2),
        ),
        "surface",
    ),
    # -- Gemini's candidates ------------------------------------------------------------
    case(
        "rule/candidates/a: snake_case field, 'only 1'",
        response(400, google("candidate_count: only 1 is supported"), body(n=4, temperature=1.0)),
        "drop",
        ("n",),
    ),
    case(
        "near/candidates/a: a longer key with the word",
        response(
            400,
            error("Invalid 'candidate_labels': must be a list of strings."),
            body(candidate_labels="a", n=2),
        ),
        "drop",
        ("candidate_labels",),
    ),
    case(
        "near/candidates/b: candidates accepted, `top_k` refused in the next sentence",
        response(
            400,
            google("Multiple candidates are fine. `top_k` must be at most 40."),
            body(n=2, top_k=100),
        ),
        "drop",
        ("top_k",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + RULES)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings added here (a crash, a full queue, advice refused, a list
# after "values for", remarks in parentheses).
_HOSTILE = {
    "crashes": "model has crashed " * 3_640,
    "queues": "queue is full " * 4_681,
    "cannot enables": "cannot enable `x` " * 3_640,
    "terminated processes": "process has terminated " * 2_849,
    "values for lists": "invalid values for a_b and " * 2_427,
    "asides": "(" * 32_767 + "stop sequences must",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    policy = RecoveryPolicy(degrade=True)
    sent = body(True, logprobs=True, tools=TOOLS, temperature=0.2)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(error(text), sent, policy))
        verdicts.append(response(400, error(text), sent, policy))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
