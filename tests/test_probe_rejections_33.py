"""The twelfth round of unseen rejections (tests/rejections_extra, 20 cases from families and
wordings the earlier rounds had few or none of: structured output's strict schema,
`verbosity`, `web_search_options`, `prediction`, `metadata` and `store`, `n` > 1,
`prompt_logprobs`, Groq's `reasoning_effort` values, a PDF's `file` part and an audio part
refused, context lengths from LM Studio, Vertex and TGI, rate limits of Fireworks, Moonshot
and Mistral's service tier, Gemini's high demand, EPAM DIAL and llama-swap) taught these
readings;
the bodies near each that must not change with them are read as `sources.http` reads a
rejection (`test_probe_rejections_7.response`), or as the chat wire reads a frame after
`200 OK`. The words of the near misses are paraphrases of the servers' formats.

Three of the 20 were misread before, and a fourth was read right for a wrong reason:

- The prompt compared with the context by the server's own field for it is the
  conversation's size ("Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)", LM
  Studio; `max_seq_len`, `max_model_len`), the prompt's side only: "max_tokens (8192) must be
  less than n_ctx" is that key's value
  (lmstudio__400_cannot_truncate_prompt_with_n_keep_ge_n_ctx: before, static).
- The types a message's part may have, listed as the accepted values ("Invalid value: file.
  Supported values are: 'text','image_url','video_url' and 'video'.", DashScope, to a PDF),
  are the conversation, as the roles listed so are; `response_format`'s types ('text',
  'json_object') are not (dashscope__400_invalid_value_file_supported_values_text_image_url_video:
  before, static).
- A message's part of other media than images refused ("The audio file could not be decoded
  or its format is not supported.", OpenAI; "PDF input is not supported") is the
  conversation: no body without a key and no removal of images changes it; the output's
  audio (`modalities`, the `audio` key) is still a key's
  (openai__400_audio_file_could_not_be_decoded_or_format_not_supported: before, static).
- The input's count said to be more than the model supports ("the input token count is
  1251952 but model only supports up to 1048576", Vertex) is the size: the case surfaced
  before only because its advice names "the CountTokens API", another endpoint; without that
  sentence it was static (vertex__400_input_token_count_is_but_model_only_supports_up_to).

And one reading widened that the replay cannot see: no model found for the request ("no model
id could be identified", llama-swap's 404) is a missing model where no status says it (its
case surfaced before by its 404 alone; in a frame it was static).

The round's other cases were read right before:
epam_dial__400_deployment_does_not_support_n_greater_than_1,
fireworks__429_too_many_requests_exceeded_usage_limits_try_again_later,
gemini__503_model_experiencing_high_demand_spikes_temporary,
gemini__openai_compat_400_unknown_name_metadata_and_store_list_envelope,
groq__400_property_prediction_is_unsupported,
groq__400_reasoning_effort_must_be_one_of_none_or_default,
hf_tgi__422_inputs_tokens_plus_max_new_tokens_must_be_le_given,
llama_swap__404_no_model_id_could_be_identified_src,
lmstudio__400_tokens_to_keep_greater_than_context_length_n_keep_n_ctx,
mistral__429_service_tier_capacity_exceeded_for_this_model,
moonshot__429_max_request_per_minute_reached_try_again_after_seconds,
openai__400_invalid_value_file_param_messages_content_type,
openai__400_response_format_additional_properties_required_to_be_false,
openai__400_unknown_parameter_web_search_options_code,
openai__400_unsupported_value_verbosity_low_supported_medium,
vllm__400_extra_forbidden_prompt_logprobs_repr_tuple_loc.

Left as they read, marked debatable in its file: a strict schema refused
("'additionalProperties' is required to be supplied and to be false") drops
`response_format`, as every refusal of the output's schema does: the turn is served as prose,
where a caller who needs the JSON may rather see the error.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.rejection_rounds import (
    assert_reads_as_its_file_says,
    both_ways,
    openai_error,
    verdict,
)
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# drop 8, none 8, backoff 4
ROUND_TWELVE = (
    "dashscope__400_invalid_value_file_supported_values_text_image_url_video",
    "epam_dial__400_deployment_does_not_support_n_greater_than_1",
    "fireworks__429_too_many_requests_exceeded_usage_limits_try_again_later",
    "gemini__503_model_experiencing_high_demand_spikes_temporary",
    "gemini__openai_compat_400_unknown_name_metadata_and_store_list_envelope",
    "groq__400_property_prediction_is_unsupported",
    "groq__400_reasoning_effort_must_be_one_of_none_or_default",
    "hf_tgi__422_inputs_tokens_plus_max_new_tokens_must_be_le_given",
    "llama_swap__404_no_model_id_could_be_identified_src",
    "lmstudio__400_cannot_truncate_prompt_with_n_keep_ge_n_ctx",
    "lmstudio__400_tokens_to_keep_greater_than_context_length_n_keep_n_ctx",
    "mistral__429_service_tier_capacity_exceeded_for_this_model",
    "moonshot__429_max_request_per_minute_reached_try_again_after_seconds",
    "openai__400_audio_file_could_not_be_decoded_or_format_not_supported",
    "openai__400_invalid_value_file_param_messages_content_type",
    "openai__400_response_format_additional_properties_required_to_be_false",
    "openai__400_unknown_parameter_web_search_options_code",
    "openai__400_unsupported_value_verbosity_low_supported_medium",
    "vertex__400_input_token_count_is_but_model_only_supports_up_to",
    "vllm__400_extra_forbidden_prompt_logprobs_repr_tuple_loc",
)


def test_the_cases_are_round_twelves() -> None:
    assert len(set(ROUND_TWELVE)) == 20
    assert action_counts(ROUND_TWELVE) == {"drop": 8, "none": 8, "backoff": 4}


@pytest.mark.parametrize("case_name", ROUND_TWELVE)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- the prompt against the context by the server's field: the size ---------------------


@pytest.mark.parametrize(
    "message",
    [
        "Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)",
        "The number of tokens to keep from the initial prompt is greater than the context "
        "length (n_keep: 13055>= n_ctx: 4096).",
        "prompt tokens (9000) exceed max_model_len (8192)",
    ],
)
def test_the_prompt_over_the_servers_context_field_is_the_size(message: str) -> None:
    assert both_ways(message, body(max_tokens=2048, temperature=0.2)) == [("surface", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key's value against the context: that key
        (
            "max_tokens (8192) must be less than n_ctx (4096)",
            body(max_tokens=8192, temperature=0.2),
            ("drop", ("max_tokens",)),
        ),
        # the field alone, nothing compared with it
        ("n_ctx must be a positive integer", body(temperature=0.2), ("static", ())),
    ],
)
def test_context_fields_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- the input's count over what the model supports: the size ----------------------------

VERTEX = (
    "Unable to submit request because the input token count is 1251952 but model only "
    "supports up to 1048576."
)


@pytest.mark.parametrize(
    "message",
    [
        VERTEX,
        "Request rejected: input token count is 40000, but this model supports at most 32768.",
    ],
)
def test_an_input_count_over_what_the_model_supports_is_the_size(message: str) -> None:
    assert both_ways(message, body(max_tokens=8192, temperature=0.4)) == [("surface", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key's value over what the model supports: that key
        (
            "max_tokens is 100000 but the model only supports up to 8192",
            body(max_tokens=100000, temperature=0.2),
            ("drop", ("max_tokens",)),
        ),
        # the input's count, and no limit of the model
        (
            "The input token count is 1200, but the tokenizer failed to load.",
            body(temperature=0.2),
            ("static", ()),
        ),
    ],
)
def test_input_counts_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- the types of a message's parts listed: the conversation -----------------------------

DASHSCOPE = "Invalid value: file. Supported values are: 'text','image_url','video_url' and 'video'."


@pytest.mark.parametrize(
    "message",
    [
        DASHSCOPE,
        "Invalid value: 'input_audio'. Supported values are: 'text' and 'image_url'.",
        "Input should be 'text' or 'image_url'",
    ],
)
def test_the_part_types_listed_are_the_conversation(message: str) -> None:
    assert both_ways(message, body(temperature=0.7, max_tokens=4096)) == [("surface", ())] * 2


def test_the_part_types_listed_keep_a_key_the_param_points_at() -> None:
    # the output's types, at `modalities`: that key
    said = openai_error(
        "Invalid value: 'image'. Supported values are: 'text' and 'audio'.", "modalities"
    )
    sent = body(modalities=["image"], temperature=0.2)
    assert verdict(said, sent) == ("drop", ("modalities",))


def test_the_output_formats_listed_are_response_formats() -> None:
    # `response_format`'s types ('text', 'json_object'): the key holding the value refused
    message = (
        "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and 'json_schema'."
    )
    sent = body(response_format={"type": "xml"}, temperature=0.2)
    assert both_ways(message, sent) == [("drop", ("response_format",))] * 2


# -- a message's part of other media than images: the conversation -----------------------

AUDIO = "The audio file could not be decoded or its format is not supported."


@pytest.mark.parametrize(
    "message",
    [AUDIO, "PDF input is not supported for this model.", "Video content is not allowed."],
)
def test_other_media_in_a_message_are_the_conversation(message: str) -> None:
    assert both_ways(message, body(temperature=0.7, max_tokens=1024)) == [("surface", ())] * 2


def test_other_media_refused_beside_images_remove_nothing() -> None:
    # images in the body, and the refusal is of the audio: no image removal helps
    assert both_ways(AUDIO, body(True, temperature=0.7)) == [("surface", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        # the output's audio: the key that asks for it
        (
            "This model does not support audio output.",
            body(audio={"voice": "alloy", "format": "wav"}, temperature=0.2),
        ),
        ("The 'audio' parameter is only supported for audio models.", body(audio={"voice": "x"})),
    ],
)
def test_the_outputs_audio_is_a_key(message: str, sent: dict[str, Any]) -> None:
    assert both_ways(message, sent) == [("drop", ("audio",))] * 2


# -- no model found for the request: a missing model -------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "no model id could be identified",
        "Could not find the model 'qwen3' in the configuration.",
    ],
)
def test_no_model_found_for_the_request_is_a_missing_model(message: str) -> None:
    assert both_ways(message, body(temperature=0.7)) == [("surface", ())] * 2


def test_no_model_identified_surfaces_in_llama_swaps_frame() -> None:
    said = {"error": "no model id could be identified", "src": "llama-swap"}
    assert frame(said, body(temperature=0.7)).action == "surface"


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a thing of the model's, not the model
        ("Could not identify the model's tokenizer.", body(temperature=0.2), ("static", ())),
        # the model's output, not the model
        ("No model output could be identified.", body(temperature=0.2), ("static", ())),
        # a model with a capability, which is the capability's refusal
        (
            "Could not find a model that supports tool use.",
            body(tools=TOOLS, temperature=0.2),
            ("static", ()),
        ),
    ],
)
def test_model_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "prompts before a comparison": "prompt " * 10_000 + ">= n_ct",
    "prompts and spaces": "n_keep" + " " * 60_000 + "> max_seq_le",
    "input counts": "input token count is 1 but " * 3_000 + "supports up t",
    "digits": "input count is " + "1" * 60_000 + " bu",
    "part types": "'text', " * 8_000 + "'image_ur",
    "media": "audio " * 12_000 + "fil",
    "no models": "no model id could " * 4_000 + "b",
    "could not find": "could not find the " * 5_000 + "mode",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, max_tokens=100, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, openai_error(text), sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
