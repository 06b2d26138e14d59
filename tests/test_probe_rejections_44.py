"""The eighteenth round of unseen rejections (tests/rejections_extra, 20 cases from servers
and vendors the earlier rounds had none or one of: GPT4All's local API server, the Triton
Inference Server's OpenAI-compatible frontend, KoboldCpp, Rapid-MLX, vLLM's Responses path
with a Harmony model, SambaNova, Bedrock's OpenAI-compatible endpoint and Bedrock behind
LiteLLM, PPIO (Novita), the Hugging Face router, Volcano Engine's Ark, Vertex behind 9router,
and Groq's JSON mode) taught these readings; the bodies near each that must not change with
them are read as `sources.http` reads a rejection (`test_probe_rejections_7.response`), or as
the chat wire reads a frame after `200 OK`. The words of the near misses are paraphrases of
the servers' formats.

Four of the 20 were misread before:

- Streaming itself refused in words: Bedrock's ValidationException "The model is unsupported
  for streaming." (behind LiteLLM, litellm_bedrock__400_model_is_unsupported_for_streaming:
  before, static) named no key, so the static list was walked, and every body on it still
  streams: the same refusal up to the attempts' cap. Only a quoted `'stream'` was read as the
  never-dropped key (GPT4All's "'stream' is not supported", read right before). Streaming
  refused in words ("does not support streaming", "Streaming is not supported for this
  model", "stream mode is not supported", "不支持流式") is now that key, and surfaces. A key
  refused for streaming is still that key ("Function calling is not yet implemented for
  stream mode" drops the functions), and streaming refused under a condition ("... when tools
  are provided") is still left to the static list, which can send the body without them.
- A key refused as "available only for" what this server is not: Triton's "logprobs are
  currently available only for the vLLM backend" (triton__400_detail_logprobs_available_only_
  for_the_vllm_backend: before, static). The plain word was read next to "is not available"
  and "can only be", not next to "(is|are) only available" or "available only"; now it is, so
  `logprobs` goes, and `top_logprobs` with it. "logprobs are available" says no refusal, and
  "This feature is available only to users on the Pro plan" names no key.
- A key the server needs a launch flag for, the key the sentence's subject: Triton's
  "having tools in the request requires --tool-call-parser to be set" (triton__400_detail_
  having_tools_requires_tool_call_parser: before, static). LMDeploy's "launch the api_server
  with --tool-call-parser if you want to use tools" was read (the key after "use"); a key
  before "requires --flag" or "needs --flag" in one sentence now is too. A flag required of
  the prompt or the request names no key.
- An image the server asks to have made smaller: Rapid-MLX's "Vision-request prompt tokens
  (16329) exceeds the per-batch cap (...). For image inputs, downscale the image…"
  (rapid_mlx__400_vision_request_prompt_tokens_exceed_per_batch_cap_downscale_image: before,
  static) refused the image's size in words no image reading had: no "too large", no
  "exceeds" with the image its subject. Advice to shrink the image ("downscale the image",
  "resize the image", "reduce the image resolution", "use a smaller image") now refuses the
  images, where the body has some. A server that says it resizes images itself refuses
  nothing by that.

The round's other cases were read right before:
9router__vertex_400_invalid_value_at_tools_function_declarations_schema,
bedrock_openai__400_frequency_penalty_parameter_is_not_supported,
gpt4all__400_greater_than_the_maximum_dash_quoted_key,
gpt4all__400_invalid_messages_role_expected_system_assistant_user_got_tool,
gpt4all__400_response_format_is_not_supported,
gpt4all__400_stream_is_not_supported,
gpt4all__400_top_logprobs_only_allowed_when_logprobs_enabled,
groq__400_json_validate_failed_failed_generation,
huggingface_router__400_model_not_supported_by_any_provider_you_have_enabled,
koboldcpp__503_detail_server_is_busy_try_again_later,
ppio__500_reason_model_not_available,
sambanova__400_decimal_above_max_value_param_top_p,
triton__400_detail_auto_tool_choice_requires_tool_call_parser,
triton__400_detail_received_n_only_single_choice_supported,
vllm__501_not_implemented_only_auto_or_none_tool_choice_harmony (a 501 whose words name
`tool_choice`: the key goes, as at 400),
volcengine_ark__400_image_exceeds_maximum_allowed_total_pixels.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.rejection_rounds import assert_reads_as_its_file_says, both_ways, over_http
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# drop 11, none 6, images 2, backoff 1
ROUND_EIGHTEEN = (
    "9router__vertex_400_invalid_value_at_tools_function_declarations_schema",
    "bedrock_openai__400_frequency_penalty_parameter_is_not_supported",
    "gpt4all__400_greater_than_the_maximum_dash_quoted_key",
    "gpt4all__400_invalid_messages_role_expected_system_assistant_user_got_tool",
    "gpt4all__400_response_format_is_not_supported",
    "gpt4all__400_stream_is_not_supported",
    "gpt4all__400_top_logprobs_only_allowed_when_logprobs_enabled",
    "groq__400_json_validate_failed_failed_generation",
    "huggingface_router__400_model_not_supported_by_any_provider_you_have_enabled",
    "koboldcpp__503_detail_server_is_busy_try_again_later",
    "litellm_bedrock__400_model_is_unsupported_for_streaming",
    "ppio__500_reason_model_not_available",
    "rapid_mlx__400_vision_request_prompt_tokens_exceed_per_batch_cap_downscale_image",
    "sambanova__400_decimal_above_max_value_param_top_p",
    "triton__400_detail_auto_tool_choice_requires_tool_call_parser",
    "triton__400_detail_having_tools_requires_tool_call_parser",
    "triton__400_detail_logprobs_available_only_for_the_vllm_backend",
    "triton__400_detail_received_n_only_single_choice_supported",
    "vllm__501_not_implemented_only_auto_or_none_tool_choice_harmony",
    "volcengine_ark__400_image_exceeds_maximum_allowed_total_pixels",
)

SURFACE = ("surface", ())
BACKOFF = ("backoff", ())
IMAGES = ("images", ())
STATIC = ("static", ())
NO_TOOLS = ("drop", ("tools", "tool_choice"))
NO_LOGPROBS = ("drop", ("logprobs", "top_logprobs"))

PLAIN = body(temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
WITH_IMAGES = body(True, temperature=0.2)
WITH_LOGPROBS = body(logprobs=True, top_logprobs=2, temperature=0.2)
WITH_USAGE = body(
    stream_options={"include_usage": True, "continuous_usage_stats": True}, temperature=0.2
)


def test_the_cases_are_round_eighteens() -> None:
    assert len(set(ROUND_EIGHTEEN)) == 20
    assert action_counts(ROUND_EIGHTEEN) == {"drop": 11, "none": 6, "images": 2, "backoff": 1}


@pytest.mark.parametrize("case_name", ROUND_EIGHTEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- streaming refused in words: `stream`, never dropped ---------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "The model is unsupported for streaming.",
        "This model does not support streaming",
        "Streaming is not supported for this model",
        "streaming not supported",
        "The model does not support stream mode",
        "stream mode is not supported",
        "Streaming responses are not available for this model",
        "该模型不支持流式输出",
    ],
)
def test_streaming_refused_in_words_surfaces(message: str) -> None:
    assert both_ways(message, PLAIN) == [SURFACE, SURFACE]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key refused for streaming is that key, as before
        (
            "Function calling is not yet implemented for stream mode.",
            body(functions=[{"name": "f"}], temperature=0.2),
            ("drop", ("functions",)),
        ),
        ("Tools are not supported with streaming", WITH_TOOLS, NO_TOOLS),
        ("Cannot use tools with stream", WITH_TOOLS, NO_TOOLS),
        ("logprobs is not supported with tools + stream", WITH_LOGPROBS, NO_LOGPROBS),
        # streaming refused under a condition: the static list can send the body without it
        ("Streaming is not supported when tools are provided", WITH_TOOLS, STATIC),
        # streaming for now: a wait, as before
        ("Streaming is temporarily unavailable, please try again later", PLAIN, BACKOFF),
        # trouble while streaming, or a key only streaming takes: no refusal of streaming
        ("An error occurred while streaming the response", PLAIN, STATIC),
        ("include_usage is only supported when streaming", PLAIN, STATIC),
        # a body that does not stream is not refused by it
        ("This model does not support streaming", body(stream=False, temperature=0.2), STATIC),
        # a key inside one of the body's objects refused for streaming: that object's
        # (the static list's first step, `stream_options`), not streaming's (a review of
        # the round read it as "the endpoint does not stream")
        ("include_usage is not supported for streaming requests", WITH_USAGE, STATIC),
        ("continuous_usage_stats is not supported in streaming mode", WITH_USAGE, STATIC),
        # an inner key the body does not hold names nothing
        ("include_obfuscation is not supported for streaming requests", WITH_USAGE, SURFACE),
    ],
)
def test_streaming_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected, expected]


# -- a key "available only for" what this server is not: that key -------------------------


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        ("logprobs are currently available only for the vLLM backend", WITH_LOGPROBS, NO_LOGPROBS),
        ("logprobs are only available for the vLLM backend", WITH_LOGPROBS, NO_LOGPROBS),
        ("seed is available only on dedicated endpoints", body(seed=3), ("drop", ("seed",))),
        (
            "Penalty is only available with the vLLM backend",
            body(penalty=1.1, temperature=0.2),
            ("drop", ("penalty",)),
        ),
    ],
)
def test_a_key_available_only_elsewhere_is_dropped(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected, expected]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # available, with no "only": no refusal
        ("logprobs are available for this model", WITH_LOGPROBS, STATIC),
        # no key of the body the subject
        ("This feature is available only to users on the Pro plan", PLAIN, STATIC),
        ("Only available for models hosted on our platform", PLAIN, STATIC),
        # a word that is no key of the body (`reasoning_effort` is not "Reasoning")
        (
            "Reasoning is only available for reasoning models",
            body(reasoning_effort="low", temperature=0.2),
            STATIC,
        ),
    ],
)
def test_available_only_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- a key that needs a server flag, the key the subject: that key -----------------------


@pytest.mark.parametrize(
    "message",
    [
        "having tools in the request requires --tool-call-parser to be set",
        "tools require --enable-auto-tool-choice",
        # as before: the key after "use", the flag before or after it
        "Using tools needs --jinja",
        "Please launch the api_server with --tool-call-parser if you want to use tools.",
        '"auto" tool choice requires --tool-call-parser to be set',
    ],
)
def test_a_key_that_needs_a_server_flag_is_dropped(message: str) -> None:
    assert both_ways(message, WITH_TOOLS) == [NO_TOOLS, NO_TOOLS]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a flag the prompt or the request needs names no key
        ("The prompt requires --ctx-size of at least 8192", PLAIN, STATIC),
        ("This request requires --tool-call-parser to be set", WITH_TOOLS, STATIC),
        # no tools in the body: nothing to drop
        ("having tools in the request requires --tool-call-parser to be set", PLAIN, STATIC),
    ],
)
def test_server_flags_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- an image the server asks to have made smaller: the images ---------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Vision-request prompt tokens (16329) exceeds the per-batch cap (8192 = vision token "
        "budget 8192 x 1 vision request(s)). For image inputs, downscale the image…",
        "Please resize the image to fit within 2048x2048",
        "Reduce the image resolution and try again",
        "Use a smaller image",
        "please compress your images before sending them",
    ],
)
def test_an_image_asked_smaller_loses_the_images(message: str) -> None:
    assert both_ways(message, WITH_IMAGES) == [IMAGES, IMAGES]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no images in the body: nothing to remove
        ("For image inputs, downscale the image", PLAIN, STATIC),
        # the vision budget alone, no advice: as before
        (
            "Vision-request prompt tokens (16329) exceeds the per-batch cap (8192 = vision "
            "token budget 8192 x 1 vision request(s)).",
            WITH_IMAGES,
            STATIC,
        ),
        # the server that resizes images itself refuses nothing by saying so
        ("Images are resized automatically; the request is invalid", WITH_IMAGES, STATIC),
        # the conversation to shrink, not an image
        ("Please compress the conversation history", WITH_IMAGES, SURFACE),
    ],
)
def test_image_advice_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "streaming": "does not support " * 4_000 + "streaming",
    "streaming spaces": "streaming" + " " * 60_000 + "is not supported",
    "available only": "logprobs are " * 4_000 + "available only for",
    "flag": "tools " * 8_000 + "requires --x",
    "flag spaces": "tools" + " " * 60_000 + "requires --tool-call-parser",
    "image advice": "downscale the " * 4_000 + "image",
    "image words": "reduce the image " * 4_000 + "resolution",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, tool_choice="auto", logprobs=True, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, {"detail": text}, sent))
        verdicts.append(response(503, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
