"""The sixth round of unseen rejections (tests/rejections_extra, 31 cases, most of images,
tools, renamed or out-of-range keys, Anthropic's and Gemini's own APIs and errors after
`200 OK`) taught three readings; these are the bodies near each that must not change with
them, read as `sources.http` reads a rejection (`test_probe_rejections_7.response`). The
words are paraphrases of the servers' formats.

- "Penalty" refused in prose names every penalty key the body holds
  (gemini__penalty_not_enabled_frequency_penalty_alone,
  gemini__penalty_not_enabled_both_penalties: before, static).
- The completion choices `n` asks for, refused by number, name `n`
  (llamacpp__500_only_one_completion_choice_is_allowed: before, backoff).
- The part that reads images absent ("Vision add-on is not loaded, but images were
  provided") refuses image input (lmstudio__200_vision_add_on_not_loaded_images_provided:
  before, static).

The round's other cases were read right before: anthropic__400_credit_balance_too_low,
anthropic__401_authentication_error_invalid_x_api_key,
anthropic__500_api_error_overloaded_request_id_null,
anthropic__529_overloaded_error_x_should_retry,
anthropic__sse_error_event_overloaded_after_200,
anthropic__temperature_only_1_when_thinking_enabled_or_adaptive,
anthropic__temperature_range_minus_1_or_0_to_1,
anthropic__thinking_enabled_budget_tokens_at_least_1024,
azure-openai__unrecognized_request_argument_max_completion_tokens,
bedrock__converse_model_does_not_support_image_content_block,
cerebras__unsupported_tool_choice_expected_auto_or_none,
epam_dial__invalid_structure_on_path_stream_options_extra_fields,
gemini__500_internal_error_please_retry_or_report, gemini__json_mode_not_enabled_for_gemma,
gemini__openai_compat_developer_instruction_not_enabled_gemma,
gemini__openai_compat_list_envelope_api_key_invalid,
gemini_relay__nested_json_string_api_key_invalid,
hf-tgi__sse_frequency_penalty_range, hf-tgi__sse_stop_supports_up_to_4_stop_sequences,
hf-tgi__sse_temperature_must_be_strictly_positive,
newapi__temperature_only_1_when_thinking_enabled_nil_type,
ollama__500_model_missing_data_required_for_image_input,
oneapi__function_call_not_supported_for_this_model_request_id,
openai__invalid_value_object_supported_values_param_response_format_type,
openai__tools_is_not_supported_in_this_model_link,
truefoundry_deepinfra__405_json_object_response_format_not_supported,
vllm__at_most_1_images_may_be_provided_in_one_request.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import body, response


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        (
            "Penalty is not enabled for models/gemini-2.5-flash",
            body(frequency_penalty=0.3, presence_penalty=0.5, top_p=0.9),
            ("frequency_penalty", "presence_penalty"),
        ),
        (
            "Penalties are not supported for this model.",
            body(repetition_penalty=1.1, temperature=0.2),
            ("repetition_penalty",),
        ),
    ],
)
def test_penalty_refused_in_prose_names_the_penalty_keys(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == ("drop", dropped)


@pytest.mark.parametrize(
    ("status", "message", "sent", "expected"),
    [
        # a penalty named by its own words is that key alone
        (
            400,
            "Frequency penalty must be between -2.0 and 2.0.",
            body(frequency_penalty=2.5, presence_penalty=0.5),
            ("drop", ("frequency_penalty",)),
        ),
        # a penalty spelled as its key, and another suggested: the refused one alone
        (
            400,
            "repetition_penalty is not supported; use frequency_penalty instead.",
            body(repetition_penalty=1.1, frequency_penalty=0.3),
            ("drop", ("repetition_penalty",)),
        ),
        # a penalty of time under a rate limit is a wait
        (
            429,
            "Too many requests: a penalty of 60 seconds applies, try again later.",
            body(frequency_penalty=0.3),
            ("backoff", ()),
        ),
        # the phrase names only the keys the body holds
        (
            400,
            "Penalty is not enabled for models/gemini-2.5-flash",
            body(temperature=0.2),
            ("static", ()),
        ),
    ],
)
def test_penalty_words_near_the_rule(
    status: int, message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    verdict = response(status, _error(message), sent)
    assert (verdict.action, verdict.drop) == expected


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "Only one completion choice is allowed"),
        (400, "Multiple completions are not supported by this server."),
    ],
)
def test_completion_choices_refused_name_n(status: int, message: str) -> None:
    verdict = response(status, _error(message), body(n=2, temperature=0.2))
    assert (verdict.action, verdict.drop) == ("drop", ("n",))


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # choices spoken of in another sentence than the refusal keep `n`
        (
            "Completion choices are streamed in order. 'logprobs' is not supported.",
            body(n=2, logprobs=True),
            ("drop", ("logprobs",)),
        ),
        # one tool choice is about `tool_choice`'s value, not the choices `n` counts
        (
            "Only one tool choice is allowed per request.",
            body(n=2, tool_choice="required"),
            ("static", ()),
        ),
        # the phrase names `n` only where the body holds it
        ("Only one completion choice is allowed", body(temperature=0.2), ("static", ())),
    ],
)
def test_choices_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == expected


def test_the_part_that_reads_images_absent_refuses_image_input() -> None:
    message = (
        "Error in iterating prediction stream: ValueError: Vision add-on is not loaded, "
        "but images were provided for processing"
    )
    assert response(400, _error(message), body(images=True, temperature=0.2)).action == "images"


@pytest.mark.parametrize(
    ("status", "message", "action"),
    [
        # the model still loading is a wait, images or not
        (503, "The vision model is not loaded yet, please retry in a few seconds.", "backoff"),
        # an adapter of the text model, no word of images: the images are not what is refused
        (400, "LoRA adapter 'my-lora' is not loaded on this server.", "static"),
        # the model itself not loaded, beside images: not the part that reads them
        (400, "Model 'qwen2-vl' is not loaded. Images were provided.", "static"),
    ],
)
def test_something_else_not_loaded_keeps_the_images(status: int, message: str, action: str) -> None:
    verdict = response(status, _error(message), body(images=True, temperature=0.2))
    assert (verdict.action, verdict.drop) == (action, ())
