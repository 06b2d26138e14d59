"""The fourteenth round of unseen rejections (tests/rejections_extra, 20 cases in families of
wording the earlier rounds had few of: a value refused by its level or mode and not its key,
the output's limit in prose, image input refused to a caller or by a validator that echoes
the request, a model's id that holds "vision", balances used up at 403, 429 and 500, an
engine overloaded, the context said as cache tokens or a sequence length; from CLIProxyAPI,
LiteLLM relaying Volcengine and DeepSeek, Bedrock, Groq, GitHub's Copilot API and app,
ModelScope, MiniMax, AIHubMix, Cerebras, TabbyAPI, Volcengine Ark, SambaNova, Gemini and
OpenAI) taught these readings;
the bodies near each that must not change with them are read as `sources.http` reads a
rejection (`test_probe_rejections_7.response`), or as the chat wire reads a frame after
`200 OK`. The words of the near misses are paraphrases of the servers' formats.

Four of the 20 were misread before:

- A value quoted and refused right after it, the key never named ("level "max" not
  supported, valid levels: low, medium, high, xhigh", CLIProxyAPI's thinking validator, to
  `reasoning_effort: "max"`): a value was read as its key's only in a sentence that said
  "value" (cliproxyapi__400_level_max_not_supported_valid_levels: before, static, whose list
  reaches the body without `reasoning_effort` only after each optional key before it).
- The output's limit in prose, no key spelled ("The maximum tokens you requested exceeds the
  model limit of 32768", Bedrock): the key the body sets it by, `max_tokens` here
  (bedrock__400_maximum_tokens_you_requested_exceeds_model_limit: before, static).
- A model's id that holds an image word is a name, not words about images: LiteLLM's
  "volcengine does not support parameters: {'response_format': ...}, for
  model=doubao-1-5-vision-pro-32k-250115" refuses `response_format`
  (litellm__400_unsupported_params_volcengine_response_format_vision_model_id: before,
  images, which removed the images and sent the refused key again), and Groq's "The model
  `llama-3.2-11b-vision-preview` has been decommissioned" is the model retired, whose reading
  stood aside for any image word (groq__400_model_decommissioned_vision_preview_model_id:
  before, static).

The round's other cases were read right before:
aihubmix__403_account_balance_insufficient_recharge,
cerebras__400_reasoning_effort_input_should_be_enum_wrong_api_format,
copilot_api__400_nested_vision_not_enabled_for_this_organization,
gateway__400_value_error_model_does_not_support_multimodal_requests_echoed_input,
gemini__400_input_token_count_exceeds_maximum_number_of_tokens_allowed_list,
github_app__400_vision_not_enabled_for_user_or_integration,
github_copilot__400_reasoning_effort_provided_model_does_not_support_reasoning_effort,
litellm_deepseek__400_insufficient_balance_unknown_error,
minimax__500_api_error_insufficient_balance_1008,
modelscope__429_insufficient_balance_1008,
moonshot__429_engine_overloaded_error_try_again_later,
openai__400_reasoning_effort_does_not_support_high_with_this_model,
sambanova__400_requested_generation_length_not_possible_max_sequence_length,
tabbyapi__400_initial_job_allocation_exceeds_available_context_size,
upstream_relay__400_param_incorrect_param_holds_max_tokens_too_large,
volcengine__400_parameter_model_not_valid_does_not_support_this_api.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.rejection_rounds import assert_reads_as_its_file_says, both_ways, openai_error
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# none 9, drop 7, images 3, backoff 1
ROUND_FOURTEEN = (
    "aihubmix__403_account_balance_insufficient_recharge",
    "bedrock__400_maximum_tokens_you_requested_exceeds_model_limit",
    "cerebras__400_reasoning_effort_input_should_be_enum_wrong_api_format",
    "cliproxyapi__400_level_max_not_supported_valid_levels",
    "copilot_api__400_nested_vision_not_enabled_for_this_organization",
    "gateway__400_value_error_model_does_not_support_multimodal_requests_echoed_input",
    "gemini__400_input_token_count_exceeds_maximum_number_of_tokens_allowed_list",
    "github_app__400_vision_not_enabled_for_user_or_integration",
    "github_copilot__400_reasoning_effort_provided_model_does_not_support_reasoning_effort",
    "groq__400_model_decommissioned_vision_preview_model_id",
    "litellm__400_unsupported_params_volcengine_response_format_vision_model_id",
    "litellm_deepseek__400_insufficient_balance_unknown_error",
    "minimax__500_api_error_insufficient_balance_1008",
    "modelscope__429_insufficient_balance_1008",
    "moonshot__429_engine_overloaded_error_try_again_later",
    "openai__400_reasoning_effort_does_not_support_high_with_this_model",
    "sambanova__400_requested_generation_length_not_possible_max_sequence_length",
    "tabbyapi__400_initial_job_allocation_exceeds_available_context_size",
    "upstream_relay__400_param_incorrect_param_holds_max_tokens_too_large",
    "volcengine__400_parameter_model_not_valid_does_not_support_this_api",
)


def test_the_cases_are_round_fourteens() -> None:
    assert len(set(ROUND_FOURTEEN)) == 20
    assert action_counts(ROUND_FOURTEEN) == {"none": 9, "drop": 7, "images": 3, "backoff": 1}


@pytest.mark.parametrize("case_name", ROUND_FOURTEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- a value quoted and refused right after it: its key ----------------------------------


@pytest.mark.parametrize(
    ("message", "sent", "key"),
    [
        (
            'level "max" not supported, valid levels: low, medium, high, xhigh',
            body(reasoning_effort="max", temperature=0.2),
            "reasoning_effort",
        ),
        (
            "effort 'high' is not available for this model",
            body(reasoning_effort="high", temperature=0.2),
            "reasoning_effort",
        ),
        ("'flex' is not supported by this model", body(service_tier="flex"), "service_tier"),
        # one level down, as `reasoning: {"effort": ...}` holds it
        ('mode "max" is invalid', body(reasoning={"effort": "max"}, temperature=0.2), "reasoning"),
    ],
)
def test_a_value_refused_right_after_it_names_its_key(
    message: str, sent: dict[str, Any], key: str
) -> None:
    assert both_ways(message, sent) == [("drop", (key,))] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # two keys hold the value: which one is refused is not said
        (
            "level 'high' not supported",
            body(reasoning_effort="high", verbosity="high", temperature=0.2),
            ("static", ()),
        ),
        # the value quoted, the refusal about another thing after it
        (
            "'flex' requests are queued; not supported: streaming",
            body(service_tier="flex", temperature=0.2),
            ("static", ()),
        ),
        # the refusal is of the caller's tier, not of the value
        (
            "The 'flex' tier is not available for your organization",
            body(service_tier="flex", temperature=0.2),
            ("surface", ()),
        ),
        # a value no key of the body holds
        ('level "max" not supported', body(reasoning_effort="high"), ("static", ())),
    ],
)
def test_values_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- the output's limit in prose: the key that sets it ----------------------------------


@pytest.mark.parametrize(
    ("message", "sent", "key"),
    [
        (
            "The maximum tokens you requested exceeds the model limit of 32768",
            body(max_tokens=64000, temperature=0.2),
            "max_tokens",
        ),
        (
            "max output tokens must be at most 8192",
            body(max_completion_tokens=9000, temperature=0.2),
            "max_completion_tokens",
        ),
        (
            "Requested output tokens are greater than the model allows",
            body(max_tokens=9000, temperature=0.2),
            "max_tokens",
        ),
    ],
)
def test_the_output_limit_in_prose_names_its_key(
    message: str, sent: dict[str, Any], key: str
) -> None:
    assert both_ways(message, sent) == [("drop", (key,))] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no key of the body sets it: nothing to drop
        (
            "The maximum tokens you requested exceeds the model limit of 32768",
            body(temperature=0.2),
            [("static", ())] * 2,
        ),
        # a rate's window (at 400 the body's; in a frame without a status, a wait)
        (
            "Output tokens per minute limit exceeded",
            body(max_tokens=100, temperature=0.2),
            [("static", ()), ("backoff", ())],
        ),
        # the output's tokens counted, nothing refused
        (
            "Total output tokens for this request: 100",
            body(max_tokens=100, temperature=0.2),
            [("static", ())] * 2,
        ),
        # the usage's field spelled, no key of a body
        (
            "completion_tokens (9000) must be less than 8192",
            body(max_tokens=9000),
            [("static", ())] * 2,
        ),
        # the prompt over the context: the size, before any name
        (
            "This model's maximum context length is 8192 tokens; the maximum tokens requested "
            "exceed it",
            body(max_tokens=100, temperature=0.2),
            [("surface", ())] * 2,
        ),
    ],
)
def test_output_limits_near_the_rule(
    message: str, sent: dict[str, Any], expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert both_ways(message, sent) == expected


# -- a model's id is no words about images -----------------------------------------------


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        (
            "The model `llama-3.2-11b-vision-preview` has been decommissioned and is no longer "
            "supported.",
            body(True, temperature=0.2),
            ("surface", ()),
        ),
        (
            "The model `llava-v1.6-vision-34b` does not exist",
            body(True, temperature=0.2),
            ("surface", ()),
        ),
        (
            "ollama does not support parameters: ['tools'], for "
            "model=llama-3.2-11b-vision-instruct.",
            body(True, tools=TOOLS, temperature=0.2),
            ("drop", ("tools",)),
        ),
    ],
)
def test_an_image_word_in_a_model_id_is_the_models_name(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


@pytest.mark.parametrize(
    "message",
    [
        # the id, and the images refused in words of their own
        "model gpt-4-vision-preview does not support images",
        "qwen2-vl-7b: vision input is not enabled",
        # an image file's name is the image, not a model
        "The image photo-1-2.jpg could not be processed",
        # a word of two parts, no id
        "this model is not a vision-language model",
    ],
)
def test_images_refused_beside_ids_and_file_names(message: str) -> None:
    assert both_ways(message, body(True, temperature=0.2)) == [("images", ())] * 2


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "ids": "a-1-vision-" * 8_000 + "x",
    "id separators": "-" * 60_000 + "vision1",
    "output limits": "maximum " * 8_000 + "tokens",
    "output spaces": "max" + " " * 60_000 + "tokens per",
    "quoted values": "'high' " * 8_000 + "is not",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, max_tokens=100, reasoning_effort="high", temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, openai_error(text), sent))
        verdicts.append(response(400, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
