"""Round eleven's rejections in every envelope and in other words.

The 22 cases tests/rejections_extra gained in the eleventh round (listed in
tests/test_probe_rejections_30.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_16.py does for
earlier rounds): 440 combinations. Each must get the original's action, dropped keys and
renames; 13 are marked `DIFFERENT`, all of one case: OpenRouter's upstream parser failure
(`openrouter__sse_mid_stream_upstream_harmony_unexpected_token`, a 502 inside the stream,
which backs off) becomes OpenRouter's HTTP 502 in every JSON envelope, which OpenRouter's
policy reads as "no upstream takes this body" and degrades (as plain text, no router's error,
it backs off as the original does); and in the frames that name no
status, "Unexpected token ... while expecting start token" names no key, so a frame that says
nothing of the server reads static, as probe 16's frames without a status do.

Then, as tests/test_probe_rejections_17.py does, one to three paraphrases of each case
(`VARIANTS`, 50, in the servers' own formats where they could be read: LiteLLM's relay of
Bedrock, the Claude Code Router's "Error from provider(...)", opencode's "Upstream request
failed: [404] ...", watsonx's "was not found. This model may be unsupported, deprecated, or
removed", transformers' "tokenizer.chat_template is not set"), and of each of the round's
eight rules (`RULES`: too many tokens and a wait; a turn's tool results by their field; a
request's bytes over a limit; an empty text; a guardrail that acted; reasoning that cannot be
switched off; the prompt's tokens by the server's field; the server's chat template) one more
positive and two near misses each. None of these bodies was recorded.

Three readings are widened here, each with two near misses (`WIDENED`); against the previous
degradation.py the envelopes found them:

- A runner that "terminated unexpectedly" is the server's failure where no status says it
  (Docker Model Runner's 500 in the frames of OpenAI, TGI and Ollama: before, static).
- An image file, by its name, the endpoint timed out or failed while downloading is image
  input refused ("Timeout while downloading 20250503_162129.jpg.": OpenAI's case in the 16
  envelopes that lose its `invalid_image_url` code, before, static).
- No provider the caller allows is the caller's own settings where the body sends no
  `provider` ("No allowed providers are available for the selected model.": OpenRouter's
  case in the four frames without its 404, before, static).

And one narrowed: a size in bytes over a limit is the request's ("Request payload size
exceeds the limit"), not an image's payload ("The image payload size exceeds the limit" is an
image over a limit, image input refused).

Against the previous degradation.py 32 of these tests failed: 23 envelopes (the three
widened above), 6 variants (a runner in a frame twice, an image file's download twice, no
allowed providers in a frame, an image's payload) and the 3 widened readings' positives.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tests.test_probe_rejections_7 import (
    NVIDIA,
    OPENROUTER,
    TOOLS,
    body,
    frame,
    litellm,
    response,
)
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_23 import flat, google
from tests.test_probe_rejections_29 import cohere
from tests.test_probe_rejections_30 import ROUND_ELEVEN

_HARMONY = "openrouter__sse_mid_stream_upstream_harmony_unexpected_token"
# Combinations whose envelope loses or overrides what the original's action rests on: id ->
# why.
DIFFERENT: dict[str, str] = {
    **{
        f"{_HARMONY}/{envelope}": "over HTTP the 502 is OpenRouter's own, that no upstream "
        "takes the body: its policy degrades it (static), where the 502 inside the stream was "
        "the upstream's failure (backoff)"
        for envelope in (
            "openai",
            "vllm",
            "fastapi",
            "tgi",
            "ollama",
            "llamacpp",
            "anthropic",
            "google",
            "openrouter",
            "litellm",
        )
    },
    **{
        f"{_HARMONY}/{envelope}/sse": "the frame names no status: the 502 alone said the "
        "upstream failed, and the parser's words name no key (static)"
        for envelope in ("openai", "tgi", "ollama")
    },
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_ELEVEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_marks_are_round_elevens() -> None:
    assert len(DIFFERENT) == 13
    assert {key.split("/")[0] for key in DIFFERENT} == {_HARMONY}


BEDROCK_WAIT = "Too many tokens, please wait before trying again."
MANDATORY = "Reasoning is mandatory for this endpoint and cannot be disabled."
VLLM_TEMPLATE = (
    "As of transformers v4.44, default chat template is no longer allowed, so you must "
    "provide a chat template if the tokenizer does not define one."
)


def _watsonx(code: str, message: str, status: int) -> dict[str, Any]:
    return {
        "errors": [
            {
                "code": code,
                "message": message,
                "more_info": "https://cloud.ibm.com/apidocs/watsonx-ai#text-chat",
            }
        ],
        "trace": "0c3d1f5a9e2b4c7d8e6f1a2b3c4d5e6f",
        "status_code": status,
    }


def _openrouter(status: int, raw: Any, provider: str = "BaseTen") -> dict[str, Any]:
    return {
        "error": {
            "message": "Provider returned error",
            "code": status,
            "metadata": {"raw": raw, "provider_name": provider},
        }
    }


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- bedrock__429_throttling_too_many_tokens_please_wait: backoff -----------------------
    case(
        "throttle/a: in-band, no status, the exception's name before the words",
        frame({"message": "ThrottlingException: " + BEDROCK_WAIT}, body(temperature=0.7)),
        "backoff",
    ),
    case(
        "throttle/b: LiteLLM's relay of Bedrock, its code a string",
        response(
            429,
            litellm(
                "litellm.RateLimitError: BedrockException - "
                + json.dumps({"message": BEDROCK_WAIT}),
                429,
            ),
            body(temperature=0.7, max_tokens=4096),
        ),
        "backoff",
    ),
    case(
        "throttle/c: 'slow down' for the wait",
        response(429, error("Too many tokens, slow down."), body(temperature=0.7)),
        "backoff",
    ),
    # -- bifrost__sse_status_400_empty_error_after_200: static ------------------------------
    case(
        "empty_400/a: over HTTP, OpenAI's envelope with no words",
        response(400, error("", type=""), body(temperature=0.7)),
        "static",
    ),
    case(
        "empty_400/b: in-band, vLLM's flat envelope, its code the status",
        frame(flat("", "BadRequestError", None) | {"code": 400}, body(temperature=0.7)),
        "static",
    ),
    # -- cohere__400_cannot_specify_both_message_and_tool_results_multistep: none ------------
    case(
        "tool_results/a: in-band",
        frame(
            cohere(
                "invalid request: cannot specify both message and tool_results in multistep mode"
            ),
            body(tools=TOOLS, temperature=0.3),
        ),
        "surface",
    ),
    case(
        "tool_results/b: the results out of place",
        response(
            400,
            cohere("invalid request: tool_results must follow the message that made the calls"),
            body(tools=TOOLS, temperature=0.3),
        ),
        "surface",
    ),
    case(
        "tool_results/c: Gemini's word for them, spelled as a field",
        response(
            400,
            google("function_responses must not be sent without the function call turn"),
            body(tools=TOOLS, temperature=0.3),
        ),
        "surface",
    ),
    # -- docker_model_runner__500_unable_to_load_runner_llamacpp_terminated: backoff --------
    case(
        "runner/a: the load failed, in other words",
        response(
            500,
            "unable to load runner: error waiting for runner to be ready: llama.cpp terminated "
            "unexpectedly: llama.cpp failed: failed to load model",
            body(temperature=0.7),
        ),
        "backoff",
    ),
    case(
        "runner/b: in-band, no status",
        frame(
            {"message": "llama.cpp terminated unexpectedly: exit status 0xc0000135"},
            body(temperature=0.7),
        ),
        "backoff",
    ),
    case(
        "runner/c: in-band, another engine's process",
        frame({"message": "The engine core exited unexpectedly."}, body(temperature=0.7)),
        "backoff",
    ),
    # -- gemini__400_request_payload_size_exceeds_the_limit: images (none before round 24) ---
    case(
        "payload/a: in-band, no status",
        frame(
            {"message": "Request payload size exceeds the limit: 20971520 bytes."},
            body(True, temperature=0.4),
        ),
        "images",
    ),
    case(
        "payload/b: the body's size, a code of 413 in the envelope",
        response(
            400,
            {
                "error": {
                    "message": "Maximum request body size 1048576 exceeded, actual body size "
                    "1056562",
                    "code": 413,
                    "status": "Request Entity Too Large",
                }
            },
            body(temperature=0.4),
        ),
        "surface",
    ),
    # -- gemini__openai_compat_400_empty_text_parameter_list_envelope: none -----------------
    case(
        "empty_text/a: Google's native envelope",
        response(
            400,
            google(
                "Unable to submit request because it has an empty text parameter. Add a value "
                "to the parameter and try again."
            ),
            body(temperature=0.7),
        ),
        "surface",
    ),
    case(
        "empty_text/b: in-band, 'empty text content block'",
        frame(error("messages: empty text content block is not allowed"), body(temperature=0.7)),
        "surface",
    ),
    # -- gigachat__400_request_contains_invalid_json_syntax: static -------------------------
    case(
        "json_syntax/a: OpenAI's envelope",
        response(400, error("Your request contains invalid JSON syntax."), body(tools=TOOLS)),
        "static",
    ),
    case(
        "json_syntax/b: 'Invalid JSON body'",
        response(400, {"status": 400, "message": "Invalid JSON body"}, body(temperature=0.7)),
        "static",
    ),
    # -- litellm__400_violated_guardrail_policy_bedrock_pre_call: none ----------------------
    case(
        "guardrail/a: in-band",
        frame(litellm("Violated guardrail policy", 400), body(temperature=0.7)),
        "surface",
    ),
    case(
        "guardrail/b: a named guardrail that blocked",
        response(
            400,
            error("Blocked by guardrail 'lakera-pre-call': prompt injection detected"),
            body(temperature=0.7),
        ),
        "surface",
    ),
    case(
        "guardrail/c: a content safety policy violated",
        response(400, litellm("Violated content safety policy", 400), body(temperature=0.7)),
        "surface",
    ),
    # -- nvidia_nim__400_validation_top_p_immutable_for_this_model: drop top_p --------------
    case(
        "immutable/a: 'must be 0.95 for this model'",
        response(
            400,
            {
                "message": "Validation: `top_p` must be 0.95 for this model, got 1",
                "type": "Bad Request",
                "code": 400,
            },
            body(top_p=1, temperature=0.6, chat_template_kwargs={"enabled": True}),
            NVIDIA,
        ),
        "drop",
        ("top_p",),
    ),
    case(
        "immutable/b: in-band, 'fixed at'",
        frame(
            error("top_p is fixed at 0.95 for this model"),
            body(top_p=1, temperature=0.6, chat_template_kwargs={"enabled": True}),
            NVIDIA,
        ),
        "drop",
        ("top_p",),
    ),
    # -- open_webui__400_detail_nonetype_has_no_attribute_startswith: static ----------------
    case(
        "attribute/a: another attribute",
        response(400, {"detail": "'NoneType' object has no attribute 'get'"}, body()),
        "static",
    ),
    case(
        "attribute/b: 'not subscriptable'",
        response(400, error("'NoneType' object is not subscriptable"), body(temperature=0.7)),
        "static",
    ),
    # -- openai__400_additional_properties_max_tokens_unexpected_in_message: none -----------
    case(
        "in_message/a: another key, another message",
        response(
            400,
            error(
                "Additional properties are not allowed ('temperature' was unexpected) - "
                "'messages.1'"
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "in_message/b: pydantic's location inside a message",
        response(
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "messages", 0, "max_tokens"],
                        "msg": "Extra inputs are not permitted",
                        "type": "extra_forbidden",
                    }
                ]
            },
            body(max_tokens=5, temperature=0.2),
        ),
        "surface",
    ),
    # -- openai__400_failed_to_download_image_size_exceeds_limit: images --------------------
    case(
        "download_size/a: the image by its URL",
        response(
            400,
            error(
                "Failed to download image from https://example.com/cat.png. Image size "
                "exceeds the limit.",
                code="invalid_image",
            ),
            body(True, temperature=0.7),
        ),
        "images",
    ),
    case(
        "download_size/b: in-band, the limit named",
        frame(error("Image size exceeds the limit of 20 MB."), body(True, temperature=0.7)),
        "images",
    ),
    case(
        "download_size/c: the image's payload, not the request's",
        response(400, error("The image payload size exceeds the limit."), body(True)),
        "images",
    ),
    # -- openai__400_timeout_while_downloading_image_invalid_image_url: images --------------
    case(
        "download_timeout/a: the image by its URL, with its code",
        response(
            400,
            error(
                "Timeout while downloading https://cdn.example.com/photo.jpg.",
                code="invalid_image_url",
            ),
            body(True, temperature=0.7),
        ),
        "images",
    ),
    case(
        "download_timeout/b: in-band, no code",
        frame(
            {"message": "Timeout while downloading https://cdn.example.com/photo.jpg."},
            body(True, temperature=0.7),
        ),
        "images",
    ),
    case(
        "download_timeout/c: 'Error while downloading', the code lost in a relay",
        response(
            400,
            litellm(
                "litellm.BadRequestError: OpenAIException - Error while downloading "
                "https://upload.wikimedia.org/wikipedia/commons/3/3a/Cat03.jpg.",
                400,
            ),
            body(True, temperature=0.7),
        ),
        "images",
    ),
    # -- openai__400_unrecognized_request_argument_supplied_provider: drop provider ---------
    case(
        "provider/a: two of the gateway's keys",
        response(
            400,
            error("Unrecognized request argument supplied: provider, transforms"),
            body(provider={"order": ["OpenAI"]}, transforms=["middle-out"]),
        ),
        "drop",
        ("provider", "transforms"),
    ),
    case(
        "provider/b: pydantic's extra_forbidden",
        response(
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "provider"],
                        "msg": "Extra inputs are not permitted",
                        "type": "extra_forbidden",
                    }
                ]
            },
            body(provider={"order": ["OpenAI"]}, temperature=0.7),
        ),
        "drop",
        ("provider",),
    ),
    # -- openrouter__400_reasoning_is_mandatory_cannot_be_disabled: drop reasoning ----------
    case(
        "mandatory/a: in-band",
        frame(
            {"error": {"message": MANDATORY, "code": 400, "metadata": {"provider_name": None}}},
            body(reasoning={"enabled": False}, temperature=0.3),
            OPENROUTER,
        ),
        "drop",
        ("reasoning",),
    ),
    case(
        "mandatory/b: relayed by the Claude Code Router",
        response(
            400,
            error(
                "Error from provider(openrouter,stepfun/step-3.5-flash:free: 400): "
                + json.dumps(
                    {
                        "error": {
                            "message": MANDATORY,
                            "code": 400,
                            "metadata": {"provider_name": None},
                        }
                    }
                )
            ),
            body(reasoning={"enabled": False}, temperature=0.3),
            OPENROUTER,
        ),
        "drop",
        ("reasoning",),
    ),
    # -- openrouter__404_no_allowed_providers_account_settings: none ------------------------
    case(
        "no_allowed/a: in-band, no status",
        frame(
            {"message": "No allowed providers are available for the selected model."},
            body(temperature=0.7),
        ),
        "surface",
    ),
    case(
        "no_allowed/b: opencode's relay",
        response(
            404,
            error(
                "Upstream request failed: [404] No allowed providers are available for the "
                "selected model."
            ),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # -- openrouter__429_provider_returned_error_rate_limited_upstream_remedy_hint: backoff -
    case(
        "upstream_pool/a: in-band",
        frame(
            _openrouter(
                429, "z-ai/glm-5.3-flash is temporarily rate-limited upstream. Retry shortly."
            ),
            body(temperature=0.7),
            OPENROUTER,
        ),
        "backoff",
    ),
    case(
        "upstream_pool/b: the upstream's body as JSON text",
        response(
            429,
            _openrouter(429, json.dumps(error("Rate limit reached, please retry shortly"))),
            body(temperature=0.7),
            OPENROUTER,
        ),
        "backoff",
    ),
    # -- openrouter__sse_mid_stream_upstream_harmony_unexpected_token: backoff --------------
    case(
        "harmony/a: in-band, another parser error, another upstream",
        frame(
            {
                "error": {
                    "message": "Upstream error from Parasail: unexpected tokens remaining in "
                    'message header: ["commentary"]',
                    "code": 502,
                }
            },
            body(tools=TOOLS, temperature=0.7),
            OPENROUTER,
        ),
        "backoff",
    ),
    case(
        "harmony/b: vLLM's own 500, the parser's exception",
        response(
            500,
            flat(
                "openai_harmony.HarmonyError: Unexpected token 200002 while expecting start "
                "token 200006",
                "InternalServerError",
            )
            | {"code": 500},
            body(tools=TOOLS, temperature=0.7),
        ),
        "backoff",
    ),
    # -- siliconflow__400_20015_prompt_tokens_must_be_less_than_max_seq_len: none -----------
    case(
        "prompt_tokens/a: in-band",
        frame(
            {
                "code": 20015,
                "message": "length of prompt_tokens (140000) must be less than max_seq_len "
                "(131072).",
                "data": None,
            },
            body(temperature=0.6, max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "prompt_tokens/b: the input's tokens, 'must be <='",
        response(400, error("input_tokens (9000) must be <= 8192"), body(max_tokens=1024)),
        "surface",
    ),
    # -- vllm__400_default_chat_template_no_longer_allowed: none ----------------------------
    case(
        "template/a: vLLM's older flat envelope",
        response(400, flat(VLLM_TEMPLATE, "BadRequestError") | {"code": 400}, body(max_tokens=512)),
        "surface",
    ),
    case(
        "template/b: in-band",
        frame(error(VLLM_TEMPLATE, type="BadRequestError", code=400), body(temperature=0.7)),
        "surface",
    ),
    case(
        "template/c: transformers' words, relayed",
        response(
            400,
            error(
                "Cannot use chat template functions because tokenizer.chat_template is not set "
                "and no template argument was passed!"
            ),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # -- watsonx__400_invalid_input_argument_upstream_vllm_empty_message: static ------------
    case(
        "watsonx_empty/a: without the line break",
        response(
            400,
            _watsonx(
                "invalid_input_argument",
                "Invalid input argument for Model 'mistralai/mistral-medium-2505': "
                + json.dumps(flat("", "BadRequestError") | {"code": 400}),
                400,
            ),
            body(temperature=0.7),
        ),
        "static",
    ),
    # -- watsonx__404_model_not_supported_errors_envelope: none -----------------------------
    case(
        "watsonx_model/a: 'was not found ... may be unsupported, deprecated, or removed'",
        response(
            404,
            _watsonx(
                "model_not_supported",
                "Model 'openai/gpt-oss-120b' was not found. This model may be unsupported, "
                "deprecated, or removed.",
                404,
            ),
            body(temperature=0.7),
        ),
        "surface",
    ),
    case(
        "watsonx_model/b: in-band, its code beside the words",
        frame(
            error("Model 'ibm/granite-x' is not supported", code="model_not_supported"),
            body(temperature=0.7),
        ),
        "surface",
    ),
]

# == the round's eight rules: one more positive, two near misses each =====================
RULES = [
    # -- too many tokens and a wait -------------------------------------------------------
    case(
        "throttle: 'wait before retrying', no status",
        frame({"message": "Too many tokens, please wait before retrying."}, body()),
        "backoff",
    ),
    case(
        "throttle near: the prompt's tokens, no wait",
        response(400, error("Too many tokens in messages: 9000 > 8192."), body()),
        "surface",
    ),
    case(
        "throttle near: a wait in the next sentence is no throttle of these tokens",
        response(
            400,
            error("Too many tokens in the prompt. Shorten it; the server cannot wait."),
            body(),
        ),
        "surface",
    ),
    # -- a turn's tool results by their field ---------------------------------------------
    case(
        "tool_results: 'tool_results cannot be empty'",
        response(400, cohere("invalid request: tool_results cannot be empty"), body()),
        "surface",
    ),
    case(
        "tool_results near: a key of the body, `tool_choice`",
        response(400, error("tool_choice must be 'auto'"), body(tools=TOOLS, tool_choice="none")),
        "drop",
        ("tool_choice",),
    ),
    case(
        "tool_results near: a tool's definition, by its path",
        response(400, error("tools[0].function.name is invalid"), body(tools=TOOLS)),
        "drop",
        ("tools",),
    ),
    # -- a request's bytes over a limit ---------------------------------------------------
    case(
        "payload: 'request body size is larger than'",
        response(400, error("Request body size is larger than 10 MB."), body()),
        "surface",
    ),
    case(
        "payload near: a batch's size",
        response(400, error("batch size exceeds the limit"), body()),
        "static",
    ),
    case(
        "payload near: a key's value over a size",
        response(400, error("stop: sequence size exceeds the limit of 4"), body(stop=["a"] * 9)),
        "drop",
        ("stop",),
    ),
    # -- an empty text --------------------------------------------------------------------
    case(
        "empty_text: 'blank content'",
        response(400, error("blank content part at index 1"), body()),
        "surface",
    ),
    case(
        "empty_text near: a key whose value is empty",
        response(400, error("'stop' must not contain an empty text value"), body(stop=[""])),
        "drop",
        ("stop",),
    ),
    case(
        "empty_text near: the tools empty",
        response(400, error("empty tools array is not allowed"), body(tools=[])),
        "drop",
        ("tools",),
    ),
    # -- a guardrail that acted -----------------------------------------------------------
    case(
        "guardrail: 'flagged by guardrail'",
        response(400, error("Input flagged by guardrail 'presidio-pii'."), body()),
        "surface",
    ),
    case(
        "guardrail near: a guardrail's config refused",
        response(400, error("guardrail_config is invalid"), body()),
        "static",
    ),
    case(
        "guardrail near: the body's `guardrails` refused",
        response(
            400, error("guardrails is not supported for this model"), body(guardrails=["pii"])
        ),
        "drop",
        ("guardrails",),
    ),
    # -- reasoning that cannot be switched off --------------------------------------------
    case(
        "mandatory: 'Thinking mode cannot be turned off'",
        response(
            400,
            error("Thinking mode cannot be turned off for this model."),
            body(enable_thinking=False),
        ),
        "drop",
        ("enable_thinking",),
    ),
    case(
        "mandatory near: streaming, which is never dropped",
        response(400, error("Streaming cannot be disabled for this model."), body()),
        "static",
    ),
    case(
        "mandatory near: a reasoning value refused, no switch off",
        response(
            400,
            error("Reasoning effort 'none' is not supported for this model."),
            body(reasoning_effort="none"),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- the prompt's tokens by the server's field ----------------------------------------
    case(
        "prompt_tokens: 'prompt_tokens must be at most'",
        response(400, error("prompt_tokens must be at most 32768"), body()),
        "surface",
    ),
    case(
        "prompt_tokens near: a key for prompt tokens",
        response(
            400, error("max_prompt_tokens must be less than 100"), body(max_prompt_tokens=500)
        ),
        "drop",
        ("max_prompt_tokens",),
    ),
    case(
        "prompt_tokens near: tokens per minute, a rate",
        response(429, error("prompt tokens per minute must be less than 10000"), body()),
        "backoff",
    ),
    # -- the server's chat template -------------------------------------------------------
    case(
        "template: 'chat template is missing'",
        response(400, error("Chat template is missing from the tokenizer config."), body()),
        "surface",
    ),
    case(
        "template near: a template that does not support the tools",
        response(400, error("The chat template does not support tools"), body(tools=TOOLS)),
        "drop",
        ("tools",),
    ),
    case(
        "template near: the body's template refused",
        response(
            400,
            error("Invalid chat template: unexpected end of template"),
            body(chat_template="{{ x"),
        ),
        "drop",
        ("chat_template",),
    ),
]

# == the readings widened here: a positive and two near misses each ========================
WIDENED = [
    # -- a runner that terminated unexpectedly --------------------------------------------
    case(
        "terminated: 'died unexpectedly', no status",
        frame({"message": "The model server died unexpectedly."}, body()),
        "backoff",
    ),
    case(
        "terminated near: at 4xx the words are the request's",
        response(400, error("The request was terminated unexpectedly by the client."), body()),
        "static",
    ),
    case(
        "terminated near: terminated as asked, no status",
        frame({"message": "The stream was terminated by the caller."}, body()),
        "static",
    ),
    # -- an image file that failed to download --------------------------------------------
    case(
        "image_file: 'Failure while fetching' a .webp",
        response(400, error("Failure while fetching https://x.example/a.webp"), body(True)),
        "images",
    ),
    case(
        "image_file near: a file that is no image",
        response(400, error("Error while downloading https://x.example/report.pdf."), body(True)),
        "static",
    ),
    case(
        "image_file near: the model's own files",
        response(400, error("Timeout while downloading the model weights."), body(True)),
        "static",
    ),
    # -- no provider the caller allows ----------------------------------------------------
    case(
        "no_allowed: 'No eligible providers', no status",
        frame({"message": "No eligible providers are available for this model."}, body()),
        "surface",
    ),
    case(
        "no_allowed near: the body's own routing preferences",
        frame(
            {"message": "No allowed providers are available for the selected model."},
            body(provider={"only": ["tencent"]}),
        ),
        "static",
    ),
    case(
        "no_allowed near: no allowed values of a key",
        response(400, error("No allowed values for top_k on this model"), body(top_k=5)),
        "drop",
        ("top_k",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + RULES + WIDENED)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings widened here (a runner's end, an image file's download, the
# caller's providers): each is read well under a second.
_HOSTILE = {
    "unexpected ends": "terminated " * 6_000 + "unexpectedl",
    "downloads": "timeout while downloading x" * 2_500 + ".jp",
    "a long name": "timeout while downloading " + "x" * 60_000 + ".jp",
    "no allowed": "no allowed " * 6_000 + "provider",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, error(text), sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
