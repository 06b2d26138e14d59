"""Today's rejections read the same in every envelope.

Sixty of the cases added to tests/rejections_extra with the day's rules (moderation words,
barred accounts, usage limits, tool definitions in prose, JSON inside an error string,
accepted-value lists, `function_call` as a key, "Unsupported model", "Invalid provider",
Responses-API-only models, keys refused "with" another, renames, "not (yet) implemented",
"only [...] support", text-only parts, Chinese image errors, a model still loading), every
action represented, are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`.
Each combination must get the original's action, dropped keys and renames, unless the
envelope loses what the action rests on (`DIFFERENT`, each with its reason).

Not taken: cases whose words are outside the members `said` reads (Spring Boot's "Bad
Request" beside its details, tinker's list of validation errors, a relay's
`metadata.reason`): every envelope loses them alike.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict
from tests.test_probe_rejections_7 import frame, response
from tests.test_probe_rejections_9 import (
    ENVELOPES,
    EXTRA,
    NO_PARAM,
    NOT_IN_BAND,
    original,
    wrapped,
)

# drop 25, none 18, backoff 10, images 4, static 3
CASES = (
    # drop
    "groq__property_verbosity_is_unsupported",
    "openai__parallel_tool_calls_only_allowed_when_tools",
    "azure-openai__model_does_not_support_logprobs_parameter",
    "vllm__value_error_tool_choice_requires_tools_input_echo",
    "runpod-vllm__validation_error_functions_extra_forbidden_location_line",
    "zhipu__stop_colon_at_most_4_stop_words_chinese_via_oneapi",
    "azure-openai__functions_are_not_supported_for_this_api_version",
    "ik_llamacpp__500_response_format_type_must_be_text_or_json_object",
    "litellm__vllm_tool_use_not_supported_without_harmony_nested_json",
    "nvidia_nim__sse_tool_calling_not_supported_in_streaming_mode",
    "openai__function_tools_with_reasoning_effort_param_reasoning_effort",
    "openrouter__novita_raw_model_features_function_calling_not_support",
    "qwen_openai_api__detail_function_calling_not_yet_implemented_for_stream",
    "xinference__detail_only_listed_models_support_tool_calls",
    "deepseek__invalid_schema_for_function_type_null",
    "perplexity__tool_parameters_must_be_a_json_object",
    "lmstudio__zod_issues_as_error_string_function_parameters_type",
    "lmstudio__zod_invalid_type_function_parameters_properties_required",
    "9router__nested_openai_unsupported_max_tokens_reset_after_30s",
    "freetoken__function_call_not_supported_use_tools_tool_choice",
    "freetoken__only_n_1_is_supported_param_n",
    "freetoken__thinking_type_must_be_enabled_or_disabled_got_adaptive",
    "nativ__sse_error_string_thinking_budget_not_supported_with_speculative_decoding",
    "truefoundry_deepinfra__405_tool_calling_is_not_supported_for_model",
    "dashscope__algo_invalid_parameter_model_does_not_support_enable_search",
    # none (surface)
    "openai__requires_audio_modality_param_model",
    "deepseek__content_exists_risk",
    "dashscope__data_inspection_failed_inappropriate_content",
    "zhipu__1301_unsafe_or_sensitive_content_chinese",
    "zhipu__1261_prompt_exceeds_max_length",
    "groq__organization_restricted_via_oneapi",
    "anthropic__specified_api_usage_limits_regain_access",
    "github-models__413_tokens_limit_reached_request_body_too_large",
    "openrouter__404_no_endpoints_matching_data_policy",
    "groq__sse_tool_call_validation_failed_parameters_for_tool",
    "oneapi__403_token_not_allowed_to_use_model_chinese",
    "octopus_relay__unsupported_model_bad_response_status_code",
    "cloudflare_ai_gateway__2008_invalid_provider_compat",
    "databricks__model_only_supports_the_responses_api_use_serving_endpoints_responses",
    "openai__o1_stream_does_not_support_true_param_stream",
    "azure_ai_ai21__422_error_list_role_literal_and_extra_inputs",
    "mistral__422_extra_forbidden_messages_user_name_tool_calls",
    "freetoken__sse_context_length_exceeded_after_role_chunk",
    # backoff (`classify` only: no wait is slept here)
    "cerebras__429_requests_per_minute_request_quota_exceeded",
    "anthropic__429_rate_limit_error_input_tokens_per_minute_openai_compat",
    "openai__429_tpm_try_again_in_hours_go_duration",
    "openai__429_requests_per_min_try_again_in_3s_payment_method",
    "oneapi__503_no_available_channel_for_model_in_group",
    "chatgpt_proxy__429_detail_only_one_message_at_a_time_wait_one_minute",
    "freetoken__503_model_is_still_loading_bare_error_string",
    "freetoken__503_server_unavailable_cache_rebuild_in_progress",
    "hf_inference__503_model_currently_loading_estimated_time",
    "textgen_webui__500_keyerror_guidance_scale_openai_error",
    # images
    "swiftlet__unsupported_content_part_type_text_parts_only",
    "freetoken__unsupported_content_part_type_for_text_only_server",
    "zai__1210_image_input_format_parse_error_chinese_anthropic_envelope",
    "opencode_zen__upstream_unknown_variant_image_url_messages_408",
    # static
    "lmstudio__failed_to_initialize_samplers_parse_grammar",
    "azure_ai_ai21__422_error_list_extra_inputs_not_permitted",
    "xiaomi_mimo__param_incorrect_text_is_not_set",
)


def combination_id(case: str, envelope: str, in_band: bool) -> str:
    return f"{case}/{envelope}{'/sse' if in_band else ''}"


def combinations(cases: Sequence[str]) -> list[Any]:
    """Each of `cases` in each envelope, over HTTP and, where the envelope has a frame of
    its own, in band: the parameters of an envelope probe (19 and 21 take them too)."""
    return [
        pytest.param(case, envelope, in_band, id=combination_id(case, envelope, in_band))
        for case in cases
        for envelope in ENVELOPES
        for in_band in ((False,) if envelope in NOT_IN_BAND else (False, True))
    ]


def reading(verdict: Verdict) -> tuple[str, set[str], dict[str, str]]:
    return verdict.action, set(verdict.drop), dict(verdict.rename)


# The frames that name no status (the others carry it as a number or as LiteLLM's code).
_NO_STATUS = ("openai/sse", "tgi/sse", "ollama/sse", "anthropic/sse")

_AUDIO = "openai__requires_audio_modality_param_model/"
_WITH = "openai__function_tools_with_reasoning_effort_param_reasoning_effort/"
_KEYERROR = "textgen_webui__500_keyerror_guidance_scale_openai_error/"
# Combinations whose envelope loses what the original's action rests on: id -> why.
DIFFERENT: dict[str, str] = {
    **{
        _AUDIO + envelope: "`param: model` is what says the model is at fault; the words "
        "('This model requires ... audio') name no key, and a 400 naming nothing is static"
        for envelope in NO_PARAM
    },
    **{
        _WITH + envelope: "no `param` points at one key of the pair, so both go (accepted too)"
        for envelope in NO_PARAM
    },
    **{
        _KEYERROR + envelope: "the frame has no status: the 500 alone said the server's "
        "trouble, and \"KeyError('guidance_scale')\" names no key of the body (static)"
        for envelope in _NO_STATUS
    },
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(CASES))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    case = json.loads((EXTRA / f"{case_name}.json").read_text())
    verdict = wrapped(case, envelope, in_band)
    assert verdict is not None
    expected = reading(original(case))
    if combination_id(case_name, envelope, in_band) in DIFFERENT:
        assert reading(verdict) != expected, "now reads the same: unmark it"
        return
    assert reading(verdict) == expected, verdict


def test_the_cases_are_todays_and_cover_every_action() -> None:
    actions = {
        json.loads((EXTRA / f"{name}.json").read_text())["expected"]["action"] for name in CASES
    }
    assert len(set(CASES)) == 60 and all((EXTRA / f"{name}.json").is_file() for name in CASES)
    assert actions == {"drop", "none", "backoff", "images", "static"}
    assert {key.split("/")[0] for key in DIFFERENT} <= set(CASES)


# Inputs aimed at the readings added with these combinations (a relay's class before its
# words, JSON after words, an assignment, a 503's words, a wait, a rate window with no
# status, the caller's settings).
_HOSTILE = {
    "relay prefixes": "AError: BException - " * 1_560,
    "a bracket after words": "x" * 32_767 + "[",
    "brackets after words": "x " + "[" * 32_766,
    "assignments": "n=" * 16_384,
    "unavailable words": "server is currently " * 1_638,
    "loading words": "is still loading " * 1_927,
    "wait words": "wait a few " * 2_978,
    "rate windows": "per minute " * 2_978,
    "settings words": "your data " * 3_276,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    policy = RecoveryPolicy(degrade=True)
    body = {"model": "m", "messages": [], "stream": True, "user": "u", "n": 2, "stop": "x"}
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(text, body, policy))
        verdicts.append(response(400, {"error": {"message": text, "code": text}}, body, policy))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
