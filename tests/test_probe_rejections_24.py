"""The eighth round of unseen rejections (tests/rejections_extra, 31 cases: Anthropic's and
Gemini's own 400s about `thinking`, `top_k`, the response schema, stop sequences and
candidates; errors after `200 OK` from SGLang and a hosted vLLM; images refused by Ollama
Cloud's /v1; `parallel_tool_calls` and `tool_choice` refused alone) taught these readings;
the bodies near each that must not change with them are read as `sources.http` reads a
rejection (`test_probe_rejections_7.response`). The words are paraphrases of the servers'
formats.

- A model's id bare after "Unsupported model" is the model missing ("Unsupported model
  anthropic.claude-3-5-haiku-20241022-v1:0, please use models API ...")
  (bedrock_access_gateway__detail_unsupported_model_use_models_api: before, static).
- Reasoning refused as "not configurable", or by the server's field for it ("thinking_config
  is not supported.") names the reasoning switches
  (vertex__thinking_not_configurable_remove_thinking_config,
  gemini__native_thinking_config_is_not_supported: before, static).
- Advice to enable a key ("To use thinking blocks, enable `thinking` in your request.") does
  not name it: no body without it turns it on
  (anthropic__thinking_disabled_final_assistant_message_cannot_contain_thinking: before,
  drop `thinking`).
- Words that refuse the key right after them refuse a list ending in it ("Invalid
  top_logprobs and logprobs value") (deepseek__detail_invalid_top_logprobs_and_logprobs_value:
  before, `top_logprobs` alone).
- The output's schema by Gemini's name, `response_schema`, is `response_format`'s, refused as
  a tool's definition is (gemini__native_response_schema_properties_should_be_non_empty_for_object:
  before, static).
- A field quoted is a name, not words about the size: "... is less than the
  `context_window` for this model" refuses the key's value
  (groq__max_completion_tokens_must_be_le_maximum_not_context_window: before, surfaced).
- Stop sequences in prose, or by Google's field (`stopSequences`), are `stop`'s
  (vertex__stop_sequences_value_10_supported_range_1_to_6: before, static).
- Gemini's candidates are the choices `n` asks for
  (gemini__native_only_one_candidate_can_be_specified: before, static).

The round's other cases were read right before:
anthropic__extra_body_extra_inputs_are_not_permitted,
anthropic__first_block_must_be_thinking_or_redacted_thinking_found_text,
anthropic__thinking_blocks_in_latest_assistant_message_cannot_be_modified,
anthropic__top_k_must_be_unset_when_thinking_is_enabled,
azure_openai__unknown_parameter_apimode_camelcase,
bedrock_litellm__top_p_must_be_unset_when_thinking_is_enabled,
darkbloom__inference_enforced_tool_choice_not_supported_for_model,
gemini__native_thinking_is_not_enabled_for_model,
groq__messages_0_role_system_property_id_unsupported_did_you_mean_name,
hosted_vllm__sse_model_is_not_multimodal_remove_image_inputs,
litellm_proxy__unsupported_params_ollama_parallel_tool_calls,
lmstudio__anthropic_endpoint_500_model_crashed_api_error,
nvidia__validation_thinking_type_must_be_enabled_or_disabled,
ollama_cloud__openai_compat_bare_error_string_no_image_input,
opencode_zen__detail_check_parameters_input_longer_than_context_length,
openai__unsupported_parameter_parallel_tool_calls_with_this_model,
perplexity__at_body_messages_content_field_required_role_literal,
perplexity__at_body_response_format_union_members_input_should_be,
sglang__sse_request_queue_is_full_503,
sglang__sse_requested_token_count_exceeds_maximum_context_length,
vertex__unable_to_submit_request_logprobs_not_supported_for_this_model,
vertex_anthropic__messages_thinking_cache_control_extra_inputs_google_envelope.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, response


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _google(message: str) -> dict[str, Any]:
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def _verdict(payload: Any, sent: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    verdict = response(400, payload, sent)
    return verdict.action, verdict.drop


def test_a_bare_model_id_after_unsupported_model_is_the_model() -> None:
    payload = {"detail": "Unsupported model meta/llama-3.1-8b, please use models API to get a list"}
    assert _verdict(payload, body(temperature=0.2)) == ("surface", ())


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a plain word after the words is a setting of the model, not its id
        ("Unsupported model parameter: top_k", body(top_k=40), ("drop", ("top_k",))),
        (
            "Unsupported model settings: top_k is not allowed",
            body(top_k=40),
            ("drop", ("top_k",)),
        ),
        # an id the key it is refused for follows
        (
            "Unsupported model gpt-4o for parameter 'reasoning_effort'",
            body(reasoning_effort="low"),
            ("drop", ("reasoning_effort",)),
        ),
    ],
)
def test_unsupported_model_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_error(message), sent) == expected


@pytest.mark.parametrize(
    "message",
    [
        "thinking_config is not supported.",
        "Thinking budget is not supported for this model.",
        "Unable to submit request because thinking is not configurable in this model.",
    ],
)
def test_reasoning_refused_by_its_setting_names_the_switches(message: str) -> None:
    sent = body(reasoning_effort="low", temperature=0.2)
    assert _verdict(_google(message), sent) == ("drop", ("reasoning_effort",))


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the setting accepted; another key refused
        (
            "The thinking_config field was accepted. Temperature is not supported.",
            ("drop", ("temperature",)),
        ),
        # the setting needed, not refused
        ("thinking_config is required to set include_thoughts.", ("static", ())),
        # configurable, not "not configurable"
        ("The thinking budget is configurable up to 24576 tokens.", ("static", ())),
    ],
)
def test_reasoning_setting_words_near_the_rule(
    message: str, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_google(message), body(reasoning_effort="low", temperature=0.2)) == expected


def test_advice_to_enable_a_key_names_none() -> None:
    message = "To use thinking blocks, enable `thinking` in your request."
    assert _verdict(_error(message), body(thinking={"type": "disabled"})) == ("static", ())


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # to disable it, dropping it does
        (
            "messages.1.content.0.type: Expected `thinking`, but found `text`. To avoid this "
            "requirement, disable `thinking`.",
            body(thinking={"type": "enabled"}),
            ("thinking",),
        ),
        # a key whose name starts with the word
        (
            "`enable_thinking` is not supported for this model.",
            body(enable_thinking=True),
            ("enable_thinking",),
        ),
        # the key to enable stays; the one that needs it goes
        (
            "Please enable `logprobs` to use `top_logprobs`.",
            body(logprobs=False, top_logprobs=2),
            ("top_logprobs",),
        ),
    ],
)
def test_enable_words_near_the_rule(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    assert _verdict(_error(message), sent) == ("drop", dropped)


@pytest.mark.parametrize(
    ("detail", "sent", "dropped"),
    [
        (
            "Invalid top_logprobs and logprobs value",
            body(logprobs=False, top_logprobs=0),
            ("logprobs", "top_logprobs"),
        ),
        (
            "Invalid 'top_k', 'min_p' or temperature",
            body(top_k=5, min_p=0.1, temperature=2),
            ("top_k", "min_p", "temperature"),
        ),
    ],
)
def test_a_refusal_before_a_list_of_keys_names_each(
    detail: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    assert _verdict({"detail": detail}, sent) == ("drop", dropped)


@pytest.mark.parametrize(
    ("detail", "sent"),
    [
        # plain words before the conjunction are prose, not keys
        ("Invalid request and logprobs were ignored", body(logprobs=True)),
        ("Invalid content and stop", body(stop=["x"])),
        ("Unsupported image and tools", body(tools=TOOLS)),
    ],
)
def test_list_words_near_the_rule(detail: str, sent: dict[str, Any]) -> None:
    assert _verdict({"detail": detail}, sent) == ("static", ())


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # a tool's schema, by the same words: the tools
        (
            "* GenerateContentRequest.tools[0].function_declarations[0].parameters"
            '.properties["q"].properties: should be non-empty for OBJECT type\n',
            body(tools=TOOLS, response_format={"type": "json_object"}),
            ("tools",),
        ),
        # the schema in one sentence, the refusal in the next
        (
            "The response schema was applied. Temperature must be <= 2.",
            body(response_format={"type": "json_object"}, temperature=3),
            ("temperature",),
        ),
    ],
)
def test_response_schema_words_near_the_rule(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    assert _verdict(_google(message), sent) == ("drop", dropped)


def test_a_quoted_context_field_is_a_name_not_the_size() -> None:
    message = (
        "`max_completion_tokens` must be less than or equal to `16384`, the maximum value for "
        "`max_completion_tokens` is less than the `context_window` for this model"
    )
    sent = body(max_completion_tokens=32000)
    assert _verdict(_error(message), sent) == ("drop", ("max_completion_tokens",))


@pytest.mark.parametrize(
    "message",
    [
        # the size in prose, or a field's name unquoted in prose: the conversation's size
        "This model's context window is 8192 tokens; your prompt is too long.",
        "Input exceeds the context_window of this model",
    ],
)
def test_context_words_in_prose_still_say_the_size(message: str) -> None:
    assert _verdict(_error(message), body(max_tokens=100)) == ("surface", ())


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        (
            "It has a stopSequences value of 10 but the supported range is from 1 to 6.",
            body(stop=list("abcdefghij")),
            ("drop", ("stop",)),
        ),
        # a longer key's name spelled (Anthropic's `stop_sequences`), as round 19 reads it
        (
            "the number of stop_sequences must not exceed 5",
            body(stop=list("abcdef")),
            ("static", ()),
        ),
        # a stop sequence spoken of, not refused
        ("The stop sequence was found at position 12.", body(stop=["x"]), ("static", ())),
        (
            "The output was cut at a stop sequence. Temperature is not supported.",
            body(stop=["x"], temperature=0.2),
            ("drop", ("temperature",)),
        ),
    ],
)
def test_stop_sequence_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_google(message), sent) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Only one candidate can be specified", ("drop", ("n",))),
        # a candidate of the answer, not the number asked for
        ("The candidate was blocked due to SAFETY", ("static", ())),
        ("Response has no candidates; the prompt was blocked.", ("static", ())),
    ],
)
def test_candidate_words_near_the_rule(message: str, expected: tuple[str, tuple[str, ...]]) -> None:
    assert _verdict(_google(message), body(n=2)) == expected
