"""The sixteenth round of unseen rejections (tests/rejections_extra, 20 cases from vendors
and languages the earlier rounds had few or none of: Sarvam, OVHcloud, Alibaba's DashScope,
Baidu's ERNIE behind one-api, Volcano Engine's Ark, Zhipu and Z.ai in Chinese and in
Anthropic's envelope, SiliconFlow, and the routers: Vercel AI Gateway, Cloudflare AI
Gateway, new-api, claude-code-router, GitHub Copilot's CAPI; a refused value named by a
JSON path, a zod issue list or a pydantic location) taught these readings;
the bodies near each that must not change with them are read as `sources.http` reads a
rejection (`test_probe_rejections_7.response`), or as the chat wire reads a frame after
`200 OK`. The words of the near misses are paraphrases of the servers' formats.

Three of the 20 were misread before, and two router wordings round fifteen left open:

- A gateway that got no answer from its upstream, at 400: Cloudflare AI Gateway's 2005
  "Failed to get response from provider" named nothing, so the static list was walked with
  a smaller body the same upstream would have answered as well later
  (cloudflare_ai_gateway__400_2005_failed_to_get_response_from_provider: before, static).
  No answer from what serves the model, where that is the whole of what is said, is the
  server's trouble: the same body after a wait. A relay's preamble to its upstream's words
  ("Failed to get response from provider: Unknown parameter ...") still gives them.
- An image outside the model's bounds: DashScope's "The image length and width do not meet
  the model restrictions. [height:1 or width:1 must be larger than 10]" refused the image in
  words no image reading had, so the static list was walked
  (dashscope__400_image_length_and_width_do_not_meet_model_restrictions: before, static).
  An image not meeting a model's restrictions or requirements, or too small, is refused as
  one too large is.
- A missing field named by its path into the Responses API's input: Ark's "missing
  `input.content.text' parameter" (`param` the same path) points into a message's content,
  which no smaller body fills (volcengine_ark__400_missing_parameter_json_path_input_content_text:
  before, static). `input...content` is the messages, as `contents[0].parts` is Gemini's.
- A router with no route that has a capability (round fifteen's "No connected provider
  supports tool calling"): "No available backend supports function calling" was read as no
  backend free, an overload, and "No eligible provider found that supports tool calling" as
  the caller's own provider settings; both refuse the capability, whose keys go (and the
  images, where image input is what none supports). "No available backend" alone is still
  an overload, "No eligible providers are available" still the caller's settings.

The round's other cases were read right before:
baidu_qianfan__336006_length_of_messages_must_be_odd_via_oneapi,
claude_code_router__400_provider_response_error_antigravity_nested_field_required_path,
dashscope__400_input_should_be_a_valid_list_input_messages_content,
dashscope__400_role_tool_must_respond_to_preceding_tool_calls_lowercase_code,
github_copilot__404_no_endpoints_found_that_support_image_input_tencent_hy3,
groq__400_code_400_message_only_allowed_string_values_tool_choice,
lmstudio__400_invalid_tool_choice_type_object_supported_string_values,
newapi__400_bad_response_status_code_400_upstream_error_param_400,
ovhcloud__400_max_tokens_must_be_at_least_1_got_negative_context,
sarvam__400_body_messages_0_user_content_input_should_be_a_valid_string,
siliconflow__403_30011_selected_model_requires_paid_balance,
vercel_ai_gateway__400_invalid_input_zod_issues_in_param,
vercel_ai_gateway__sse_stream_error_nested_upstream_context_length,
volcengine__400_max_completion_tokens_integer_above_maximum_expected_value,
zai__429_anthropic_rate_limit_error_type_1113_insufficient_balance,
zhipu__429_1113_account_in_arrears_chinese,
zhipu__429_1113_balance_or_resource_package_chinese_glm5.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.rejection_rounds import (
    assert_reads_as_its_file_says,
    in_band,
    openai_error,
    over_http,
    verdict,
)
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# none 13, drop 3, images 2, backoff 1, static 1
ROUND_SIXTEEN = (
    "baidu_qianfan__336006_length_of_messages_must_be_odd_via_oneapi",
    "claude_code_router__400_provider_response_error_antigravity_nested_field_required_path",
    "cloudflare_ai_gateway__400_2005_failed_to_get_response_from_provider",
    "dashscope__400_image_length_and_width_do_not_meet_model_restrictions",
    "dashscope__400_input_should_be_a_valid_list_input_messages_content",
    "dashscope__400_role_tool_must_respond_to_preceding_tool_calls_lowercase_code",
    "github_copilot__404_no_endpoints_found_that_support_image_input_tencent_hy3",
    "groq__400_code_400_message_only_allowed_string_values_tool_choice",
    "lmstudio__400_invalid_tool_choice_type_object_supported_string_values",
    "newapi__400_bad_response_status_code_400_upstream_error_param_400",
    "ovhcloud__400_max_tokens_must_be_at_least_1_got_negative_context",
    "sarvam__400_body_messages_0_user_content_input_should_be_a_valid_string",
    "siliconflow__403_30011_selected_model_requires_paid_balance",
    "vercel_ai_gateway__400_invalid_input_zod_issues_in_param",
    "vercel_ai_gateway__sse_stream_error_nested_upstream_context_length",
    "volcengine__400_max_completion_tokens_integer_above_maximum_expected_value",
    "volcengine_ark__400_missing_parameter_json_path_input_content_text",
    "zai__429_anthropic_rate_limit_error_type_1113_insufficient_balance",
    "zhipu__429_1113_account_in_arrears_chinese",
    "zhipu__429_1113_balance_or_resource_package_chinese_glm5",
)

SURFACE = ("surface", ())
BACKOFF = ("backoff", ())
IMAGES = ("images", ())
STATIC = ("static", ())
NO_TOOLS = ("drop", ("tools", "tool_choice"))

WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
WITH_IMAGES = body(True, temperature=0.2)
PLAIN = body(temperature=0.2)


def test_the_cases_are_round_sixteens() -> None:
    assert len(set(ROUND_SIXTEEN)) == 20
    assert action_counts(ROUND_SIXTEEN) == {
        "none": 13,
        "drop": 3,
        "images": 2,
        "backoff": 1,
        "static": 1,
    }


@pytest.mark.parametrize("case_name", ROUND_SIXTEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- no route behind a router that has the capability: its keys ----------------------------


@pytest.mark.parametrize(
    "message",
    [
        "No available backend supports function calling",
        "No available backend supports tool calling for this model.",
        "No eligible provider found that supports tool calling",
        "No eligible providers found which support tool use for this model",
        "no healthy upstream that supports function calling",
    ],
)
def test_no_route_with_the_capability_refuses_it(message: str) -> None:
    assert over_http(message, WITH_TOOLS, 400) == NO_TOOLS
    assert in_band({"message": message}, WITH_TOOLS) == NO_TOOLS


@pytest.mark.parametrize(
    ("message", "sent", "status", "expected"),
    [
        # the images, where image input is what none supports
        ("No eligible provider found that supports image input", WITH_IMAGES, 400, IMAGES),
        ("No available backend supports vision input", WITH_IMAGES, 400, IMAGES),
        # no capability named: no backend free is an overload, as before
        ("No available backend", PLAIN, 400, BACKOFF),
        ("No available backends for model gpt-oss", WITH_TOOLS, 400, BACKOFF),
        ("no healthy upstream", PLAIN, 400, BACKOFF),
        # and no provider the caller allows is the caller's settings, as before
        ("No eligible providers are available for this model.", WITH_TOOLS, 404, SURFACE),
        ("No allowed providers are available for the selected model.", PLAIN, 404, SURFACE),
        # no tools in the body: nothing to drop
        ("No available backend supports function calling", PLAIN, 400, STATIC),
        # an overload's status with the capability named: the status speaks, as before
        ("No available backend supports function calling", WITH_TOOLS, 503, BACKOFF),
    ],
)
def test_routers_near_the_rule(
    message: str, sent: dict[str, Any], status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, status) == expected


# -- no answer from what serves the model, the whole of what is said: a wait ---------------


@pytest.mark.parametrize(
    "message",
    [
        "Failed to get response from provider",
        "Failed to get a response from the upstream.",
        "Unable to receive response from backend",
        "Could not get any response from the upstream server",
        "No response received from provider.",
    ],
)
def test_no_answer_from_upstream_is_a_wait(message: str) -> None:
    assert over_http(message, PLAIN, 400) == BACKOFF
    assert in_band({"message": message}, PLAIN) == BACKOFF


def test_cloudflares_own_envelope_is_a_wait() -> None:
    payload = {
        "success": False,
        "result": [],
        "messages": [],
        "error": [{"code": 2005, "message": "Failed to get response from upstream."}],
    }
    assert verdict(payload, PLAIN, 400) == BACKOFF


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a relay's preamble to its upstream's words: those words speak
        (
            "Failed to get response from provider: Unknown parameter: 'logprobs'.",
            body(logprobs=True, temperature=0.2),
            ("drop", ("logprobs",)),
        ),
        (
            "Failed to get response from provider: This model's maximum context length is "
            "8192 tokens",
            PLAIN,
            SURFACE,
        ),
        # the model's own answer, not the provider's absence
        (
            "Failed to get response format json_schema from the model: unsupported",
            body(response_format={"type": "json_schema"}, temperature=0.2),
            ("drop", ("response_format",)),
        ),
        # a response the client must send, not one it did not get
        ("No response from the user was provided for the tool call", WITH_TOOLS, SURFACE),
    ],
)
def test_no_answer_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- an image outside the model's bounds: the images --------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "<400> InternalError.Algo.InvalidParameter: The image length and width do not meet "
        "the model restrictions. [height:1 or width:1 must be larger than 10]",
        "The image does not meet the model's requirements.",
        "Image dimensions do not satisfy the minimum size constraints",
        "The image is too small: 1x1",
        "image is smaller than the minimum of 10 pixels",
    ],
)
def test_an_image_out_of_bounds_loses_the_images(message: str) -> None:
    assert over_http(message, WITH_IMAGES, 400) == IMAGES
    assert in_band({"message": message}, WITH_IMAGES) == IMAGES


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no images in the body: nothing to remove
        ("The image length and width do not meet the model restrictions.", PLAIN, STATIC),
        # a key's value that does not meet a limit, with images beside it: the key
        (
            "max_tokens does not meet the model restrictions for image inputs",
            body(True, max_tokens=99999, temperature=0.2),
            ("drop", ("max_tokens",)),
        ),
        # the prompt, not the image, too small
        ("The prompt is too small to process", WITH_IMAGES, STATIC),
    ],
)
def test_image_bounds_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- a path into the Responses API's input: the conversation -------------------------------


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ("The request failed because it is missing `input.content.text' parameter.", None),
        ("Invalid value at input[2].content[0].type", None),
        ("Field required", "input.0.content"),
        ("input.content must not be empty", None),
    ],
)
def test_a_path_into_the_input_surfaces(message: str, param: str | None) -> None:
    assert verdict(openai_error(message, param), PLAIN) == SURFACE


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key of the body by another name that holds "input": that key
        (
            "input_audio_format is not supported",
            body(input_audio_format="pcm16", temperature=0.2),
            ("drop", ("input_audio_format",)),
        ),
        # the input's own size is the conversation's length
        ("input is too long for the model", PLAIN, SURFACE),
    ],
)
def test_input_paths_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "routers": "no available backend " * 3_000 + "supports tool calling",
    "router spaces": "no eligible provider" + " " * 60_000 + "supports tools",
    "no answer": "failed to get response from " * 3_000 + "provider",
    "no answer spaces": "failed to get response from provider" + " " * 60_000 + "x",
    "image bounds": "image length width " * 4_000 + "do not meet the restrictions",
    "image words": "the image " + "does not meet the " * 4_000,
    "input paths": "input" + ".0" * 30_000 + ".contents",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, tool_choice="auto", temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, openai_error(text), sent))
        verdicts.append(response(503, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
