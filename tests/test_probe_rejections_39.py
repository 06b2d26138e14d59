"""The fifteenth round of unseen rejections (tests/rejections_extra, 20 cases in families of
wording the earlier rounds had few of: a refused parameter named by a pydantic tuple location,
Go's decoder or a backticked list; tools refused by their count or by a router with no backend
that calls them; image input switched off on a gateway; rate limits as an RFC 7807 problem, a
field `retry_after`, a relay's 500 around Vertex's 429, a relayed "Loading model" and Google's
quota resets in hours; an organization not verified, a country refused and the context in
OpenRouter's and LM Studio's words; from NVIDIA's vLLM, OpenCode Go behind 9router, Dynamo,
Gemini, Groq, GitHub Copilot, cocore, DeepSeek, LiveKit's inference gateway, Meta's Llama API,
an unnamed gateway, LiteLLM relaying Vertex, Second-Me relaying llama-server, Google's
Antigravity, OpenAI and OpenRouter) taught these readings;
the bodies near each that must not change with them are read as `sources.http` reads a
rejection (`test_probe_rejections_7.response`), or as the chat wire reads a frame after
`200 OK`. The words of the near misses are paraphrases of the servers' formats.

Four of the 20 were misread before:

- A relay's own 5xx around its upstream's 4xx in the SDKs' words: LiteLLM's 500 "Error code:
  429 - {'error': {'code': 429, 'message': 'Quota exceeded for ...tokens_per_minute...',
  'status': 'RESOURCE_EXHAUSTED'}}" was read by its 500, under which the quota's words are
  the account's (litellm_vertex__500_wrapping_429_quota_exceeded_resource_exhausted: before,
  surface). The relayed status now speaks, as it does in a frame without a status.
- A router with no backend that has the capability: "No connected provider supports tool
  calling for this model" (cocore) refused the tools in words no capability phrase read
  ("no endpoints found" was the only such negation), so the static list was walked
  (cocore__400_tool_calls_not_supported_no_connected_provider: before, static).
- The tools counted against a cap in prose: GitHub Copilot's "You may not include more than
  128 tools in your request" named no key (copilot__400_may_not_include_more_than_128_tools:
  before, static); Gemini's path `tools[0].function_declarations` and Groq's quoted
  `'tools'` were read right already.
- Image input switched off on a gateway, at 503: LiveKit's "gemini image input is not
  enabled: ... image (vision) input is currently disabled on this gateway" was an overload
  by its status, and the same body would have met the same refusal after each wait
  (livekit_inference__503_gemini_image_input_not_enabled_on_gateway: before, backoff). An
  overload's status whose words refuse image input, with no word of load, of a wait or of
  the server's trouble, removes the images; "disabled" refuses them as "not enabled" does.

The round's other cases were read right before:
antigravity__429_exhausted_capacity_quota_will_reset_after,
antigravity__429_individual_quota_reached_resets_in_hours,
deepseek__400_stream_options_should_be_set_along_with_stream_true,
dynamo__400_unsupported_parameters_backticked_list_bad_request,
gateway__429_concurrent_request_limit_exceeded_retry_after_field,
gemini__400_at_most_512_function_declarations_field_invalid_list,
groq__400_tools_maximum_number_of_items_is_128,
lmstudio__400_trying_to_keep_first_tokens_context_overflows,
meta_llama__429_problem_document_tokens_within_time_frame,
nvidia_vllm__400_literal_error_tuple_loc_reasoning_effort_bad_request,
openai__400_organization_must_be_verified_to_stream_param_stream,
openai__403_unsupported_country_region_territory_request_forbidden,
openai__404_organization_must_be_verified_to_use_model,
opencode_go__400_upstream_json_unknown_field_thinking_param,
openrouter__400_endpoint_maximum_context_length_middle_out,
second_me__sse_code_1_request_failed_relayed_503_loading_model.
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
)
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# drop 8, backoff 6, none 5, images 1
ROUND_FIFTEEN = (
    "antigravity__429_exhausted_capacity_quota_will_reset_after",
    "antigravity__429_individual_quota_reached_resets_in_hours",
    "cocore__400_tool_calls_not_supported_no_connected_provider",
    "copilot__400_may_not_include_more_than_128_tools",
    "deepseek__400_stream_options_should_be_set_along_with_stream_true",
    "dynamo__400_unsupported_parameters_backticked_list_bad_request",
    "gateway__429_concurrent_request_limit_exceeded_retry_after_field",
    "gemini__400_at_most_512_function_declarations_field_invalid_list",
    "groq__400_tools_maximum_number_of_items_is_128",
    "litellm_vertex__500_wrapping_429_quota_exceeded_resource_exhausted",
    "livekit_inference__503_gemini_image_input_not_enabled_on_gateway",
    "lmstudio__400_trying_to_keep_first_tokens_context_overflows",
    "meta_llama__429_problem_document_tokens_within_time_frame",
    "nvidia_vllm__400_literal_error_tuple_loc_reasoning_effort_bad_request",
    "openai__400_organization_must_be_verified_to_stream_param_stream",
    "openai__403_unsupported_country_region_territory_request_forbidden",
    "openai__404_organization_must_be_verified_to_use_model",
    "opencode_go__400_upstream_json_unknown_field_thinking_param",
    "openrouter__400_endpoint_maximum_context_length_middle_out",
    "second_me__sse_code_1_request_failed_relayed_503_loading_model",
)

SURFACE = ("surface", ())
BACKOFF = ("backoff", ())
IMAGES = ("images", ())
STATIC = ("static", ())
NO_TOOLS = ("drop", ("tools", "tool_choice"))

WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
WITH_IMAGES = body(True, temperature=0.2)
PLAIN = body(temperature=0.2)


def test_the_cases_are_round_fifteens() -> None:
    assert len(set(ROUND_FIFTEEN)) == 20
    assert action_counts(ROUND_FIFTEEN) == {"drop": 8, "backoff": 6, "none": 5, "images": 1}


@pytest.mark.parametrize("case_name", ROUND_FIFTEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- a relay's 5xx around its upstream's 4xx: the upstream's status ----------------------

_VERTEX_429 = (
    "Error code: 429 - {'error': {'code': 429, 'message': 'Quota exceeded for "
    "aiplatform.googleapis.com/generate_content_requests_per_minute_per_project', "
    "'status': 'RESOURCE_EXHAUSTED'}}"
)


@pytest.mark.parametrize(
    ("message", "sent", "status", "expected"),
    [
        (_VERTEX_429, PLAIN, 500, BACKOFF),
        (
            "litellm.InternalServerError: Error code: 429 - {'error': {'message': "
            "'Quota exceeded for tokens per minute'}}",
            PLAIN,
            502,
            BACKOFF,
        ),
        # the upstream's account status outranks the relay's 500 as well
        (
            "Error code: 401 - {'error': {'message': 'Incorrect API key provided'}}",
            PLAIN,
            500,
            SURFACE,
        ),
        (
            "Error code: 429 - {'error': {'message': 'You exceeded your current quota, please "
            "check your plan and billing details.', 'code': 'insufficient_quota'}}",
            PLAIN,
            500,
            SURFACE,
        ),
        # and its refusal of a key is still that key's
        (
            "Error code: 400 - {'error': {'message': \"Unknown parameter: 'logprobs'.\"}}",
            body(logprobs=True, temperature=0.2),
            500,
            ("drop", ("logprobs",)),
        ),
    ],
)
def test_a_relayed_4xx_speaks_for_the_relays_5xx(
    message: str, sent: dict[str, Any], status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, status) == expected


def test_a_relayed_429_in_a_frame_with_a_5xx_code() -> None:
    payload = {"message": _VERTEX_429, "code": 500}
    assert in_band(payload, PLAIN) == BACKOFF


@pytest.mark.parametrize(
    ("message", "status", "expected"),
    [
        # the quota's words at a 5xx that relays no status: the account's, as before
        (
            "Quota exceeded for aiplatform.googleapis.com/online_prediction_tokens_per_minute"
            "_per_base_model",
            500,
            SURFACE,
        ),
        # a 5xx relayed is the server's trouble still
        ("Error code 524: A timeout occurred", 500, BACKOFF),
        ("upstream said: Error code: 503 - {'error': {'message': 'overloaded'}}", 500, BACKOFF),
        # a 4xx of the relay's own is not overruled by the words
        ("Error code: 429 - {'error': {'message': 'Quota exceeded'}}", 400, SURFACE),
    ],
)
def test_relayed_statuses_near_the_rule(
    message: str, status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, PLAIN, status) == expected


# -- no backend behind a router that has the capability: its keys --------------------------


@pytest.mark.parametrize(
    "message",
    [
        "No connected provider supports tool calling for this model",
        "No endpoints available that support tool use",
        "no upstream channel supports tool calls for gpt-oss",
        "No online backends support function calling for this model.",
        "No active route which can support tool use for this model",
    ],
)
def test_no_backend_that_supports_the_tools_names_them(message: str) -> None:
    assert over_http(message, WITH_TOOLS, 400) == NO_TOOLS
    assert in_band({"message": message}, WITH_TOOLS) == NO_TOOLS


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no tools in the body: nothing to drop
        ("No connected provider supports tool calling for this model", PLAIN, STATIC),
        # no capability named: nothing to drop either
        ("No connected provider supports this model", WITH_TOOLS, STATIC),
        # the images, where the images are the capability
        (
            "No provider supports image input for this model",
            body(True, tools=TOOLS, temperature=0.2),
            IMAGES,
        ),
        # every backend has it: no refusal of the tools
        (
            "Every connected provider supports tool calling; the request failed validation",
            WITH_TOOLS,
            STATIC,
        ),
    ],
)
def test_routers_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- the tools counted against a cap in prose: the tools --------------------------------


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        ("You may not include more than 128 tools in your request.", WITH_TOOLS, NO_TOOLS),
        ("Too many tools: 200 were provided", WITH_TOOLS, NO_TOOLS),
        ("A maximum of 64 tools is supported per request", WITH_TOOLS, NO_TOOLS),
        (
            "Requests with more than 100 functions are not allowed",
            body(functions=[{"name": "f"}], function_call="auto", temperature=0.2),
            ("drop", ("functions", "function_call")),
        ),
    ],
)
def test_the_tools_over_a_cap_in_prose_go(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected
    assert in_band({"message": message}, sent) == expected


@pytest.mark.parametrize(
    ("message", "sent", "status", "expected"),
    [
        # other things counted: the images, the messages
        (
            "You may not include more than 10 images in your request.",
            body(True, tools=TOOLS, temperature=0.2),
            400,
            IMAGES,
        ),
        ("You may not include more than 64 messages in your request.", WITH_TOOLS, 400, SURFACE),
        # the model's calls counted, no definition: the tools stay
        ("The model may not make more than 5 tool calls in one turn", WITH_TOOLS, 400, SURFACE),
        # no tools in the body
        ("You may not include more than 128 tools in your request.", PLAIN, 400, STATIC),
        # the server's trouble beside a count of tools
        (
            "more than 128 tools are loaded on the server; the request timed out",
            WITH_TOOLS,
            504,
            BACKOFF,
        ),
    ],
)
def test_counts_near_the_rule(
    message: str, sent: dict[str, Any], status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, status) == expected


# -- image input switched off, at an overload's status: the images -------------------------


@pytest.mark.parametrize(
    ("message", "status"),
    [
        (
            "gemini image input is not enabled: message 5 contains image_url content but image "
            "(vision) input is currently disabled on this gateway",
            503,
        ),
        ("Image input is disabled for this deployment.", 503),
        ("This model does not support image input.", 529),
        ("Vision input is disabled on this server.", 400),
    ],
)
def test_image_input_switched_off_loses_the_images(message: str, status: int) -> None:
    assert over_http(message, WITH_IMAGES, status) == IMAGES
    assert in_band({"message": message, "code": status}, WITH_IMAGES) == IMAGES


@pytest.mark.parametrize(
    ("message", "sent", "status", "expected"),
    [
        # load or a wait said beside the images: the same body later
        (
            "The image service is temporarily unavailable, please try again later",
            WITH_IMAGES,
            503,
            BACKOFF,
        ),
        ("Image input is disabled while the server is overloaded", WITH_IMAGES, 503, BACKOFF),
        ("image input is not enabled: the vision worker crashed", WITH_IMAGES, 503, BACKOFF),
        # a rate's status: a rate, whatever it counts
        ("Too many image requests, slow down", WITH_IMAGES, 429, BACKOFF),
        # no images in the body: the 503 is an overload
        ("image (vision) input is currently disabled on this gateway", PLAIN, 503, BACKOFF),
    ],
)
def test_image_refusals_at_overload_near_the_rule(
    message: str, sent: dict[str, Any], status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, status) == expected


def test_a_wait_named_beside_the_images_is_a_wait() -> None:
    read = response(
        503,
        openai_error("image input is not enabled on this gateway"),
        WITH_IMAGES,
        headers={"retry-after": "3"},
    )
    assert (read.action, read.delay) == ("backoff", 3.0)


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "relayed codes": "Error code: 429 " * 4_000,
    "routers": "no connected provider " * 3_000 + "supports tool calling",
    "router spaces": "no" + " " * 60_000 + "provider supports tools",
    "tool counts": "more than 128 " * 4_500 + "tools",
    "disabled images": "image input disabled " * 3_000,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, tool_choice="auto", temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(500, openai_error(text), sent))
        verdicts.append(response(503, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
