"""Round ten's rejections in every envelope and in other words.

The 27 cases tests/rejections_extra gained in the tenth round (listed in
tests/test_probe_rejections_28.py's docstring) are taken apart and put back together in
each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame
after `200 OK` (`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_16.py
does for earlier rounds): 540 combinations. Each must get the original's action, dropped keys
and renames; none is marked `DIFFERENT`. OpenRouter's "Rate limit exceeded:
free-models-per-day-high-balance." reads `none` in every envelope by its window of a day,
not only by its word "balance": the envelopes that type every 429 as a rate limit (vLLM's,
TGI's, llama.cpp's, Anthropic's and Google's) no longer turn it into a backoff (the same
reading unmarked probe 19's Cloudflare allocation and probe 27's Ollama Cloud weekly limit).

Then, as tests/test_probe_rejections_17.py does, two to four paraphrases of each case
(`VARIANTS`, 72, in Chinese where the servers write Chinese), and of each of the round's
seven rules (`RULES`: a model the caller cannot reach; a model retired in words; a model
named by its id and refused; a model too big for the machine; an image over a limit; a
capability given without what it needs; the chat's history) one more positive and two near
misses each. The readings widened here have two near misses each (`WIDENED`). The wordings
follow the servers' own where they could be read (Bedrock's "You don't have access to the
model with the specified model ID", Hugging Face's "is not supported for task ... and
provider ...", LM Studio's "Model loading was stopped due to insufficient system resources",
Cohere's "message must be at least 1 token long or tool results must be specified",
Gemini's "Invalid function name", "Too many concurrent requests for this model"); none of
these bodies was recorded.

Two more, from round 10's notes and another engineer's:

- A limit counted by the day or longer (OpenRouter's "free-models-per-day" without
  "balance", Groq's "requests per day (RPD)", GitHub Models' "per 86400s ...
  UserByModelByDay", Google's quota id "GenerateRequestsPerDayPerProjectPerModel", "Daily
  request 200 limit exceeded", "超过每日使用限额") read `backoff` and was retried in seconds:
  it surfaces now where it names no wait (`LONG_WINDOWS`), whatever rate-limit code the
  envelope gives; a wait it names is `backoff` with that delay, which the plan weighs against
  `max_retry_after` (Groq's "try again in 9m38.016s", and GitHub Models' "Please wait 5631
  seconds before retrying", read as a wait now); a short wait said, a per-minute window
  beside it, or a key of the body named keeps the old reading.
- OpenRouter's error object whose upstream said nothing readable (`"raw": {"retryable":
  true}`) left a colon introducing nothing ("Error processing stream: DeepInfra:"); it
  reads "Error processing stream (DeepInfra)" now.

Against the previous degradation.py and error_body.py 36 of these tests failed: 11
envelopes (Gemini Code Assist's "No capacity available for model ..." in TGI's and Ollama's
frames, which keep neither its 503 nor its status, read static; the per-day cap in the 9
envelopes that type a 429, read backoff); 16 paraphrases (no access to the model twice, an
image "too large" without a verb, "模型已下线", Cohere's `chat_history`, a model "not
deployed", no capacity three times, LM Studio's resources twice, the per-day cap three
times, too many requests at once twice); 5 of the long windows (4 positives, and a short
wait beside a daily limit, read static); GitHub Models' wait in words; the 3 colon tests.

Left out as debatable: "max_tokens too large for
vision models: at most 4096." reads `images` by "at most 4096" beside "vision" (the near
miss here says the limit otherwise); "This deployment has no capacity for tool calling."
reads static (the tools, or the deployment); Gemini's quota per day with a RetryInfo of
seconds backs off, the wait it names believed (as
gemini__429_retry_info_inside_message_json_string expects).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import rxllm
from rxllm.degradation import RetryPlan, Verdict, classify
from rxllm.error_body import parse_error_body, parse_error_payload
from rxllm.events import ErrorInfo
from tests.test_probe_rejections_7 import (
    DEGRADES,
    OPENROUTER,
    TOOLS,
    body,
    frame,
    gateway_string,
    litellm,
    response,
)
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error
from tests.test_probe_rejections_19 import action_counts, assert_reads_the_same
from tests.test_probe_rejections_21 import anthropic
from tests.test_probe_rejections_23 import flat, google

# none 18, drop 3, images 3, backoff 2, static 1
ROUND_TEN = (
    "aihubmix__gemini_unable_to_process_input_image_relay",
    "aimlapi__500_unable_to_access_model_nest_envelope",
    "anthropic__image_dimensions_exceed_max_allowed_size_many_image_requests",
    "anthropic__image_exceeds_5_mb_maximum",
    "azure_openai__410_model_deprecated_no_longer_available",
    "bedrock__400_on_demand_throughput_isnt_supported_use_inference_profile",
    "bedrock__400_provided_model_identifier_is_invalid",
    "cloudflare_workers_ai__anyof_not_met_required_properties_tools_function_name",
    "cohere__invalid_request_all_elements_in_history_must_have_a_message",
    "copilot__400_requested_model_not_available_for_session",
    "deepseek__400_model_not_exist",
    "deepseek__tools_function_name_does_not_match_pattern_param_null",
    "fireworks__404_model_not_found_inaccessible_and_or_not_deployed",
    "gemini_code_assist__503_no_capacity_available_for_model_on_the_server",
    "groq__model_decommissioned_no_longer_supported",
    "huggingface_router__400_model_not_supported_by_provider",
    "litellm__invalid_model_name_passed_param_none_string",
    "mistral__1500_invalid_model_type_invalid_model",
    "mistral__3280_tool_call_id_must_be_nine_alphanumerics",
    "novita_byok__router_all_target_providers_failed_openrouter_raw_invalid_request",
    "ollama__500_model_requires_more_system_memory",
    "ollama__v1_404_model_not_found_try_pulling_it_first",
    "openrouter__429_free_models_per_day_high_balance",
    "openrouter__gemini_function_calling_config_set_without_function_declarations",
    "openrouter_relay__not_a_valid_model_id_string_envelope",
    "sub2api__concurrency_limit_exceeded_for_user_retry_later",
    "vllm__pydantic_string_type_message_function_call_loc_tuple",
)


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_TEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


def test_the_cases_are_round_tens() -> None:
    assert len(set(ROUND_TEN)) == 27
    assert action_counts(ROUND_TEN) == {
        "none": 18,
        "drop": 3,
        "images": 3,
        "backoff": 2,
        "static": 1,
    }


def nest(message: str, status: int = 400) -> dict[str, Any]:
    """NestJS's exception envelope (AI/ML API's), the upstream's status inside the words."""
    return {"statusCode": status, "path": "/chat/completions", "message": message}


def cohere(message: str) -> dict[str, Any]:
    """Cohere's bare envelope."""
    return {"message": message}


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- aihubmix__gemini_unable_to_process_input_image_relay: images -------------------
    case(
        "unable_to_process/a: vLLM's loader, PIL's 'cannot identify image file'",
        response(
            400,
            flat(
                "Failed to load image: cannot identify image file <_io.BytesIO object>",
                "BadRequestError",
                "400",
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "unable_to_process/b: in-band, Gemini's words behind OpenAI's envelope",
        frame(error("Unable to process input image. Please retry."), body(True, temperature=0.2)),
        "images",
    ),
    case(
        "unable_to_process/c: in Chinese, 'cannot process the input image'",
        response(400, error("无法处理输入的图片, 请重试"), body(True, temperature=0.2)),
        "images",
    ),
    # -- aimlapi__500_unable_to_access_model_nest_envelope: none ------------------------
    case(
        "unable_to_access/a: the NestJS envelope, 'Cannot access model'",
        response(500, nest("400 Cannot access model gpt-4o-mini.", 500), body(temperature=0.7)),
        "surface",
    ),
    case(
        "unable_to_access/b: the key without access to the model, in-band",
        frame(
            error("You do not have access to the model gpt-4o-mini."),
            body(temperature=0.7, max_tokens=256),
        ),
        "surface",
    ),
    case(
        "unable_to_access/c: Bedrock's 'don't have access to the model with the specified ID'",
        response(
            400,
            litellm(
                "litellm.BadRequestError: BedrockException - You don't have access to the model "
                "with the specified model ID.",
                400,
            ),
            body(temperature=0.7, max_tokens=256),
        ),
        "surface",
    ),
    # -- anthropic__image_dimensions_exceed_max_allowed_size_many_image_requests: images --
    case(
        "image_dimensions/a: OpenAI's words, the pixels named",
        response(
            400,
            error(
                "Image dimensions exceed the maximum allowed size of 8000x8000 pixels.",
                type="invalid_request_error",
                param="messages.[0].content.[1].image_url",
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_dimensions/b: the image 'too large' with no verb, a resolution",
        response(
            400,
            {"error": "image too large: 9000x9000 exceeds the 8192 pixel limit"},
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_dimensions/c: in Chinese, the image's size over the limit",
        response(400, error("图片尺寸超过最大限制"), body(True, temperature=0.2)),
        "images",
    ),
    # -- anthropic__image_exceeds_5_mb_maximum: images ----------------------------------
    case(
        "image_5_mb/a: Bedrock's 'Image exceeds max size'",
        response(
            400,
            {"message": "Image exceeds max size of 3.75MB. Please resize and try again."},
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_5_mb/b: in-band, Anthropic's error object",
        frame(
            {
                "type": "invalid_request_error",
                "message": "messages.0.content.1.image.source.base64: image exceeds 5 MB "
                "maximum: 6291456 bytes > 5242880 bytes",
            },
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "image_5_mb/c: in Chinese, the picture too big",
        response(400, error("图片过大, 请压缩后重新上传"), body(True, temperature=0.2)),
        "images",
    ),
    # -- azure_openai__410_model_deprecated_no_longer_available: none -------------------
    case(
        "model_deprecated/a: OpenAI's 'has been deprecated' and a link",
        response(
            404,
            error(
                "The model `text-davinci-003` has been deprecated, learn more here: "
                "https://platform.openai.com/docs/deprecations",
                type="invalid_request_error",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "model_deprecated/b: in-band, 'This model has been retired'",
        frame(
            error("This model has been retired. Please use a newer model."), body(temperature=0.2)
        ),
        "surface",
    ),
    case(
        "model_deprecated/c: in Chinese, 'the model is offline'",
        response(400, error("该模型已下线, 请更换其他模型"), body(temperature=0.2)),
        "surface",
    ),
    # -- bedrock__400_on_demand_throughput_isnt_supported_use_inference_profile: none ---
    case(
        "on_demand/a: the SDK's apostrophe, through LiteLLM",
        response(
            400,
            litellm(
                'litellm.BadRequestError: BedrockException - {"message":"Invocation of model ID '
                "meta.llama3-3-70b-instruct-v1:0 with on-demand throughput isn\u2019t supported. "
                "Retry your request with the ID or ARN of an inference profile that contains "
                'this model."}',
                400,
            ),
            body(temperature=0.2, max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "on_demand/b: in-band, the model id unavailable in the region",
        frame(
            error("Model ID amazon.nova-pro-v1:0 is not available with on-demand throughput."),
            body(temperature=0.2, max_tokens=1024),
        ),
        "surface",
    ),
    # -- bedrock__400_provided_model_identifier_is_invalid: none ------------------------
    case(
        "model_identifier/a: through LiteLLM, the JSON after its words",
        response(
            400,
            litellm(
                'litellm.BadRequestError: BedrockException - {"message":"The provided model '
                'identifier is invalid."}',
                400,
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "model_identifier/b: 'The model ID provided is not valid'",
        response(400, error("The model ID provided is not valid."), body(temperature=0.2)),
        "surface",
    ),
    case(
        "model_identifier/c: in-band, 'Invalid model identifier'",
        frame(error("Invalid model identifier: anthropic.claude-v9"), body(temperature=0.2)),
        "surface",
    ),
    # -- cloudflare_workers_ai__anyof_not_met_required_properties_tools_function_name ---
    case(
        "anyof/a: ajv's items, a pointer into each",
        response(
            400,
            {
                "errors": [
                    {
                        "instancePath": "/tools/0/function",
                        "message": "must have required property 'name'",
                    },
                    {
                        "instancePath": "/tool_choice/function",
                        "message": "must have required property 'name'",
                    },
                ]
            },
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "anyof/b: in-band, Workers AI's words, one pointer",
        frame(
            error(
                "AiError: Bad input: Error: oneOf at '/' not met, required properties at "
                "'/tools/0/function' are 'name'"
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "anyof/c: serde's path after 'into the target type'",
        response(
            422,
            "Failed to deserialize the JSON body into the target type: tools[0].function: "
            "missing field `name` at line 1 column 120",
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- cohere__invalid_request_all_elements_in_history_must_have_a_message: none ------
    case(
        "history/a: Cohere's 'message must be at least 1 token long'",
        response(
            400,
            cohere(
                "invalid request: message must be at least 1 token long or tool results must "
                "be specified."
            ),
            body(temperature=0.3, max_tokens=512),
        ),
        "surface",
    ),
    case(
        "history/b: Cohere v1's field, `chat_history` by its path",
        response(
            400,
            cohere("invalid request: chat_history[2].message is required."),
            body(temperature=0.3, max_tokens=512),
        ),
        "surface",
    ),
    case(
        "history/c: in-band, 'the history'",
        frame(
            error("Every turn in the history must have non-empty content."),
            body(temperature=0.3, max_tokens=512),
        ),
        "surface",
    ),
    # -- copilot__400_requested_model_not_available_for_session: none ------------------
    case(
        "for_session/a: the verb written, 'this session'",
        response(
            400,
            error("The requested model is not available for this session."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "for_session/b: in-band, Copilot's code lost, the model by name",
        frame(error("Model claude-sonnet-4 is not available for session"), body(temperature=0.2)),
        "surface",
    ),
    # -- deepseek__400_model_not_exist: none --------------------------------------------
    case(
        "not_exist/a: SiliconFlow's 'Model does not exist. Please check it carefully.'",
        response(
            400,
            {
                "code": 20012,
                "message": "Model does not exist. Please check it carefully.",
                "data": None,
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "not_exist/b: in-band, vLLM's 'does not exist', the name quoted",
        frame(
            flat("The model `deepseek-chatt` does not exist.", "NotFoundError", "404"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- deepseek__tools_function_name_does_not_match_pattern_param_null: drop ---------
    case(
        "function_name/a: OpenAI's own words, its `param` set",
        response(
            400,
            error(
                "Invalid 'tools[0].function.name': string does not match pattern. Expected a "
                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                type="invalid_request_error",
                param="tools[0].function.name",
                code="invalid_value",
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "function_name/b: Anthropic's 'String should match pattern', the path first",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "function_name/c: Gemini's 'Invalid function name'",
        response(
            400,
            google(
                "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid "
                "function name. Must start with a letter or an underscore."
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- fireworks__404_model_not_found_inaccessible_and_or_not_deployed: none ----------
    case(
        "not_deployed/a: OpenAI's 'does not exist or you do not have access to it'",
        response(
            400,
            error(
                "The model `gpt-4o-miniz` does not exist or you do not have access to it.",
                code="model_not_found",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "not_deployed/b: in-band, the model 'is not deployed'",
        frame(
            error("Model accounts/acme/models/llama-v3-70b is not deployed."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "not_deployed/c: Vertex's 'Publisher Model ... not found'",
        response(
            400,
            google(
                "Publisher Model `projects/p/locations/us-central1/publishers/google/models/"
                "gemini-9` not found."
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- gemini_code_assist__503_no_capacity_available_for_model_on_the_server: backoff --
    case(
        "no_capacity/a: in-band, no status, no code",
        frame(
            {"message": "No capacity available for model gemini-2.5-pro on the server"},
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "no_capacity/b: 'out of capacity', a 400 from a relay",
        response(
            400,
            error("The model is currently out of capacity. Please try again."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "no_capacity/c: in Chinese, 'no capacity available for the model'",
        frame(error("当前模型无可用容量"), body(temperature=0.2)),
        "backoff",
    ),
    # -- groq__model_decommissioned_no_longer_supported: none ---------------------------
    case(
        "decommissioned/a: in-band, Groq's code kept",
        frame(
            error(
                "The model `llama3-70b-8192` has been decommissioned and is no longer supported.",
                type="invalid_request_error",
                code="model_decommissioned",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "decommissioned/b: Mistral's 'is deprecated', a replacement named",
        response(
            400,
            {"detail": "Model mistral-tiny is deprecated. Please use open-mistral-7b instead."},
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- huggingface_router__400_model_not_supported_by_provider: none ------------------
    case(
        "by_provider/a: 'not supported by any provider you have enabled'",
        response(
            400,
            {
                "error": "The requested model 'meta-llama/Llama-3.3-70B-Instruct' is not "
                "supported by any provider you have enabled."
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "by_provider/b: 'not supported for task ... and provider ...'",
        response(
            400,
            {
                "error": "Model Qwen/Qwen3-8B is not supported for task text-generation and "
                "provider novita. Supported task: conversational."
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- litellm__invalid_model_name_passed_param_none_string: none --------------------
    case(
        "model_name/a: LiteLLM's newer words, the models route to call",
        response(
            400,
            litellm(
                "Invalid model name passed in model=gpt-5-foo. Call `/v1/models` to view "
                "available models for your key.",
                400,
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "model_name/b: in-band, 'Invalid model' and the name",
        frame(error("Invalid model: gpt-5-foo", code="400"), body(temperature=0.2)),
        "surface",
    ),
    # -- mistral__1500_invalid_model_type_invalid_model: none ---------------------------
    case(
        "invalid_model/a: FastAPI's detail",
        response(400, {"detail": "Invalid model: open-mistral-99"}, body(temperature=0.2)),
        "surface",
    ),
    case(
        "invalid_model/b: 'Unknown model', in-band",
        frame(error("Unknown model: mistral-largee"), body(temperature=0.2)),
        "surface",
    ),
    # -- mistral__3280_tool_call_id_must_be_nine_alphanumerics: none --------------------
    case(
        "tool_call_id/a: the id by its field, a reason in parentheses",
        response(
            400,
            error("Invalid tool_call_id: turn1_0 (must be 9 alphanumeric characters)"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.3),
        ),
        "surface",
    ),
    case(
        "tool_call_id/b: Anthropic's pointer to the result's id",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "messages.3.content.0.tool_result.tool_use_id: String should match pattern "
                "'^[a-zA-Z0-9_-]+$'",
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.3),
        ),
        "surface",
    ),
    case(
        "tool_call_id/c: in-band, 'Tool call ids must be'",
        frame(
            flat(
                "Tool call ids must be 9 characters long and alphanumeric, got 'call_abc_1'.",
                "invalid_function_call",
                "3280",
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.3),
        ),
        "surface",
    ),
    # -- novita_byok__router_all_target_providers_failed_openrouter_raw_invalid_request -
    case(
        "opaque_upstream/a: OpenRouter's envelope alone, the upstream's words opaque",
        response(
            400,
            gateway_string(
                {
                    "message": "invalid request error trace_id: 4f2a",
                    "type": "invalid_request_error",
                },
                400,
            ),
            body(temperature=0.2),
        ),
        "static",
    ),
    case(
        "opaque_upstream/b: in-band, the type and nothing named",
        frame(
            {"message": "Upstream request failed.", "type": "invalid_request_error"},
            body(temperature=0.2),
        ),
        "static",
    ),
    # -- ollama__500_model_requires_more_system_memory: none ----------------------------
    case(
        "system_memory/a: LM Studio's guardrail, 'insufficient system resources'",
        response(
            400,
            error(
                "Model loading was stopped due to insufficient system resources. Under the "
                "current settings, this model requires approximately 273.25 GB of memory."
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "system_memory/b: 'Not enough resources to load the model'",
        frame(
            error("Not enough resources to load the model with the current settings."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "system_memory/c: Ollama's words at 500, the GPU's memory",
        response(
            500,
            {"error": "model requires more gpu memory (12.1 GiB) than is available (8.0 GiB)"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- ollama__v1_404_model_not_found_try_pulling_it_first: none ---------------------
    case(
        "try_pulling/a: Ollama's native envelope, the name quoted",
        response(
            404,
            {"error": "model 'llama3.2' not found, try pulling it first"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "try_pulling/b: in-band, the same words with no status",
        frame(
            error('model "qwen3:8b" not found, try pulling it first', type="api_error"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- openrouter__429_free_models_per_day_high_balance: none -------------------------
    case(
        "per_day/a: the cap without 'balance'",
        response(
            429,
            error("Rate limit exceeded: free-models-per-day.", code="429"),
            body(temperature=0.2),
            OPENROUTER,
        ),
        "surface",
    ),
    case(
        "per_day/b: the cap with credits to add",
        response(
            429,
            error(
                "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free "
                "model requests per day",
                code=429,
            ),
            body(temperature=0.2),
            OPENROUTER,
        ),
        "surface",
    ),
    case(
        "per_day/c: Groq's requests per day, no wait named",
        response(
            429,
            error(
                "Rate limit reached for model `llama-3.3-70b-versatile` in organization "
                "`org_01` service tier `on_demand` on requests per day (RPD): Limit 1000, Used "
                "1000, Requested 1.",
                type="requests",
                code="rate_limit_exceeded",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "per_day/d: in Chinese, 'over the daily usage limit'",
        response(429, error("超过每日使用限额"), body(temperature=0.2)),
        "surface",
    ),
    # -- openrouter__gemini_function_calling_config_set_without_function_declarations ---
    case(
        "set_without/a: in-band, Gemini's words alone",
        frame(
            google("Function calling config is set without function_declarations."),
            body(tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "set_without/b: Anthropic's 'tool_choice may only be specified while providing tools'",
        response(
            400,
            anthropic(
                "invalid_request_error",
                "tool_choice may only be specified while providing tools.",
            ),
            body(tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "set_without/c: vLLM's 'When using `tool_choice`, `tools` must be set'",
        response(
            400,
            flat("When using `tool_choice`, `tools` must be set.", "BadRequestError", "400"),
            body(tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- openrouter_relay__not_a_valid_model_id_string_envelope: none -------------------
    case(
        "valid_model_id/a: OpenRouter's own envelope",
        response(
            400,
            {"error": {"message": "openai/gpt-9 is not a valid model ID", "code": 400}},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "valid_model_id/b: 'not a valid model', the id quoted",
        frame(error("'google/gemini-x:free' is not a valid model"), body(temperature=0.2)),
        "surface",
    ),
    # -- sub2api__concurrency_limit_exceeded_for_user_retry_later: backoff --------------
    case(
        "concurrency/a: in-band, the limit alone, no wait named",
        frame(error("Concurrency limit exceeded for user"), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "concurrency/b: in-band, 'Too many concurrent requests for this model'",
        frame(error("Too many concurrent requests for this model"), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "concurrency/c: in Chinese, 'too many concurrent requests'",
        frame(error("并发请求过多, 请稍后重试"), body(temperature=0.2)),
        "backoff",
    ),
    # -- vllm__pydantic_string_type_message_function_call_loc_tuple: none ---------------
    case(
        "function_call_loc/a: FastAPI's 422, the item's loc a list",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "string_type",
                        "loc": ["body", "messages", 2, "function_call"],
                        "msg": "Input should be a valid string",
                    }
                ]
            },
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "surface",
    ),
    case(
        "function_call_loc/b: pydantic's text, the location on its own line",
        response(
            400,
            flat(
                "1 validation error for ChatCompletionRequest\nmessages.2.function_call\n  "
                "Input should be a valid string [type=string_type]",
                "BadRequestError",
                "400",
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "surface",
    ),
    case(
        "function_call_loc/c: in-band, the path in brackets",
        frame(
            error("messages[2].function_call: Input should be a valid string"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "surface",
    ),
]

# == the round's rules, in other words, and near each ====================================
RULES = [
    # -- a model the caller cannot reach, in more words -------------------------------
    case(
        "rule/unreachable/a: in-band, 'Cannot access the requested model'",
        frame(error('Cannot access the requested model "claude-opus-4".'), body(temperature=0.2)),
        "surface",
    ),
    case(
        "near/unreachable/a: a field of the model the caller may not see, quoted",
        response(
            400,
            error("You do not have access to this model's `top_logprobs` field."),
            body(top_logprobs=5, temperature=0.2),
        ),
        "drop",
        ("top_logprobs",),
    ),
    case(
        "near/unreachable/b: a key not available for this session, no model named",
        response(
            400,
            error("`seed` is not available for this session."),
            body(temperature=0.2),
        ),
        "drop",
        ("seed",),
    ),
    # -- a model retired, in words ----------------------------------------------------
    case(
        "rule/retired/a: in-band, 'was retired on' a date",
        frame(error("Model `gpt-4-0314` was retired on 2024-06-13."), body(temperature=0.2)),
        "surface",
    ),
    case(
        "near/retired/a: a key deprecated for the model, its replacement named",
        response(
            400,
            error("max_tokens is deprecated for this model; use max_completion_tokens instead."),
            body(max_tokens=256, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
        {"max_tokens": "max_completion_tokens"},
    ),
    case(
        "near/retired/b: the legacy `functions` deprecated, no model",
        response(
            400,
            error("The `functions` parameter is deprecated; send `tools`."),
            body(functions=[{"name": "f"}], temperature=0.2),
        ),
        "drop",
        ("functions",),
    ),
    # -- the model named by its id and refused ----------------------------------------
    case(
        "rule/model_id/a: 'Model ID ... is not supported in this region'",
        response(
            400,
            {"message": "Model ID meta.llama3-1-405b-v1:0 is not supported in this region."},
            body(temperature=0.2, max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "near/model_id/a: a key assigned in the sentence",
        response(
            400,
            error("Invocation of model ID x.y-1 with top_k=50 isn't supported."),
            body(top_k=50, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/model_id/b: the id fine, a key refused in words",
        response(
            400,
            error("The model ID is valid, but the seed parameter is not supported."),
            body(temperature=0.2),
        ),
        "drop",
        ("seed",),
    ),
    # -- a model too big for the machine ----------------------------------------------
    case(
        "rule/memory/a: 'Not enough GPU memory for this model', in-band",
        frame(error("Not enough GPU memory for this model."), body(temperature=0.2)),
        "surface",
    ),
    case(
        "near/memory/a: out of memory for a batch, a short wait said to help",
        response(
            500,
            error("Out of memory while processing the batch; please retry shortly."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/memory/b: a key of the body needing more memory",
        response(
            400,
            error("`max_tokens` requires more KV cache memory than is available."),
            body(max_tokens=32000, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    # -- an image over a limit --------------------------------------------------------
    case(
        "rule/image_limit/a: 'Uploaded image is larger than 5 MB'",
        response(400, error("Uploaded image is larger than 5 MB."), body(True, temperature=0.2)),
        "images",
    ),
    case(
        "near/image_limit/a: a key whose name holds the word, its value over a limit",
        response(
            400,
            error("'image_detail' too large: must be 'low' or 'high'."),
            body(True, image_detail="ultra"),
        ),
        "drop",
        ("image_detail",),
    ),
    case(
        "near/image_limit/b: a key over a limit for vision models",
        response(
            400,
            error("max_tokens too large for vision models; the limit is 4096."),
            body(True, max_tokens=8192),
        ),
        "drop",
        ("max_tokens",),
    ),
    # -- a capability given without what it needs -------------------------------------
    case(
        "rule/set_without/a: 'Tool choice is given without tools'",
        response(
            400,
            error("Tool choice is given without tools."),
            body(tool_choice="required", temperature=0.2),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "near/set_without/a: 'set without' after a key, another key refused",
        response(
            400,
            error("temperature is set without effect here; top_p is not supported."),
            body(top_p=0.9, temperature=0.2),
        ),
        "drop",
        ("top_p",),
    ),
    case(
        "near/set_without/b: 'without' that refuses nothing",
        response(
            400,
            error("Response format is applied without a schema by default."),
            body(response_format={"type": "json_object"}, temperature=0.2),
        ),
        "static",
    ),
    # -- the chat's history -----------------------------------------------------------
    case(
        "rule/history/a: 'message history contains a turn with no content'",
        response(
            400,
            error("The message history contains a turn with no content."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/history/a: a key whose name holds the word",
        response(
            400,
            error("history_size must be at most 20"),
            body(history_size=50, temperature=0.2),
        ),
        "drop",
        ("history_size",),
    ),
    case(
        "near/history/b: a response history kept by a key",
        response(
            400,
            error("`store` must be true to keep a response history."),
            body(store=False, temperature=0.2),
        ),
        "drop",
        ("store",),
    ),
]

# == near the readings widened for this probe ============================================
WIDENED = [
    # -- no access to the model --------------------------------------------------------
    case(
        "near/no_access/a: a setting of the model after the words",
        response(
            400,
            error("You do not have access to the model parameter `top_k`."),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/no_access/b: access to something else",
        response(
            400,
            error("You do not have access to the file you referenced."),
            body(temperature=0.2),
        ),
        "static",
    ),
    # -- the model not deployed, or refused for a task or provider -----------------------
    case(
        "near/not_deployed/a: not deployed with a key",
        response(
            400,
            error("The model is not deployed with `logprobs` enabled."),
            body(logprobs=True, temperature=0.2),
        ),
        "drop",
        ("logprobs",),
    ),
    case(
        "near/not_deployed/b: a key refused for a task",
        response(
            400,
            error("`top_k` is not supported for task text-generation."),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    # -- the model retired, in Chinese -------------------------------------------------
    case(
        "near/retired_cjk/a: a parameter deprecated",
        response(400, error("参数temperature已弃用"), body(temperature=0.2)),
        "drop",
        ("temperature",),
    ),
    case(
        "near/retired_cjk/b: a parameter of the model deprecated",
        response(400, error("该模型的top_k参数已弃用"), body(top_k=40, temperature=0.2)),
        "drop",
        ("top_k",),
    ),
    # -- an image "too large", the verb left out ---------------------------------------
    case(
        # (the body's bytes over, images in it: they go, tests/test_probe_rejections_58)
        "near/image_verbless/a: a request too large, images among its parts",
        response(
            413,
            error("Request too large: 9 images of 4 MB each."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "near/image_verbless/b: a video too large",
        response(400, error("video too large: at most 50 MB"), body(True, temperature=0.2)),
        "static",
    ),
    # -- Cohere's `chat_history` -------------------------------------------------------
    case(
        "near/chat_history/a: a longer key",
        response(
            400,
            error("chat_history_limit must be at most 50"),
            body(chat_history_limit=99, temperature=0.2),
        ),
        "drop",
        ("chat_history_limit",),
    ),
    case(
        "near/chat_history/b: the history of a chat's usage, no message",
        response(400, error("Chat usage report is unavailable."), body(temperature=0.2)),
        "static",
    ),
    # -- no capacity -------------------------------------------------------------------
    case(
        "near/capacity/a: a key over the model's capacity",
        response(
            400,
            error("max_tokens exceeds the model's output capacity of 8192."),
            body(max_tokens=9000, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "near/capacity/b: 'no capacity' for a capability, not the model",
        response(
            400,
            error("This deployment has no capacity for tool calling."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "static",
    ),
    # -- too many requests at once -----------------------------------------------------
    case(
        "near/concurrency/a: a longer key's name",
        response(
            400,
            error("max_concurrency limit must be at most 8"),
            body(max_concurrency=16, temperature=0.2),
        ),
        "drop",
        ("max_concurrency",),
    ),
    case(
        "near/concurrency/b: too many parallel tool calls asked for",
        response(
            400,
            error("parallel_tool_calls: too many parallel tool calls requested"),
            body(tools=TOOLS, parallel_tool_calls=True, temperature=0.2),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- resources to load the model ---------------------------------------------------
    case(
        "near/resources/a: resources short for now, a wait said to help",
        response(
            503,
            error("Not enough resources to serve the request right now, try again later."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/resources/b: a key of the body needing more resources",
        response(
            400,
            error("num_ctx needs more resources than the server allows."),
            body(num_ctx=131072, temperature=0.2),
        ),
        "drop",
        ("num_ctx",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + RULES + WIDENED)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# == a limit counted by the day or longer ================================================
# (OpenRouter's round-10 body reads `none` by its word "balance"; the same cap without it, and
# the other servers' daily limits, read `backoff` before, and were retried in seconds.)
GITHUB_MODELS_DAY = {
    "error": {
        "code": "RateLimitReached",
        "message": "Rate limit of 50 per 86400s exceeded for UserByModelByDay. Please wait 5631 "
        "seconds before retrying.",
        "details": "Rate limit of 50 per 86400s exceeded for UserByModelByDay.",
    }
}
GROQ_TPD = (
    "Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01` service "
    "tier `on_demand` on tokens per day (TPD): Limit 100000, Used 97050, Requested 3619. Please "
    "try again in 9m38.016s."
)


def _quota_failure(quota_id: str, retry_delay: str | None) -> dict[str, Any]:
    """Gemini's 429: RESOURCE_EXHAUSTED, the quota's id in a QuotaFailure detail."""
    details: list[dict[str, Any]] = [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": quota_id, "quotaValue": "50"}],
        }
    ]
    if retry_delay is not None:
        details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
        )
    return {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing "
            "details.",
            "status": "RESOURCE_EXHAUSTED",
            "details": details,
        }
    }


LONG_WINDOWS = [
    case(
        "long_window/a: Anthropic's envelope, every 429 a `rate_limit_error`",
        response(
            429,
            anthropic("rate_limit_error", "Rate limit exceeded: free-models-per-day."),
            body(temperature=0.2),
            OPENROUTER,
        ),
        "surface",
    ),
    case(
        "long_window/b: GitHub Models' window in seconds, no wait named",
        frame(
            {"code": "RateLimitReached", "message": GITHUB_MODELS_DAY["error"]["details"]},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "long_window/c: Gemini's quota per day, no RetryInfo",
        response(
            429,
            _quota_failure("GenerateRequestsPerDayPerProjectPerModel-FreeTier", None),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "long_window/d: 'Daily request limit exceeded', tomorrow the only wait",
        response(
            429,
            {"error": "Daily request 200 limit exceeded. Please try again tomorrow."},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "near/long_window/a: the same quota per day with Gemini's RetryInfo of 5s",
        response(
            429,
            _quota_failure("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "5s"),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/long_window/b: a per-minute window beside a daily cap",
        response(
            429,
            error(
                "Rate limit exceeded: 20 requests per minute; free models also have a daily cap."
            ),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/long_window/c: a daily limit with a wait of seconds named",
        response(
            429,
            error("Daily limit reached. Please try again in 30 seconds."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/long_window/d: a short wait said beside a daily limit",
        frame(
            error("Daily request limit reached for this slot; retry in a few seconds."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/long_window/e: 'daily' in another sentence than the limit",
        response(
            429,
            error("Rate limit exceeded. Usage is reported daily."),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "near/long_window/f: a key of the body over a daily limit",
        response(
            400,
            error("`max_tokens` exceeds the daily output limit of 4096 for this key."),
            body(max_tokens=8192, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), LONG_WINDOWS)
def test_a_limit_counted_by_the_day(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict


def _rejected(status: int, payload: Any) -> ErrorInfo:
    """An HTTP rejection as `sources.http` reports it (without its status line)."""
    text = json.dumps(payload)
    parsed = parse_error_body(text)
    return ErrorInfo(
        kind="rejected",
        message=parsed.message,
        status=status,
        provider="p",
        raw=text,
        **parsed.fields({}),
    )


@pytest.mark.parametrize(
    ("payload", "wait"),
    [
        (GITHUB_MODELS_DAY, 5631.0),
        (error(GROQ_TPD, type="tokens", code="rate_limit_exceeded"), 578.016),
    ],
    ids=["github models, 'Please wait 5631 seconds'", "groq, 'try again in 9m38.016s'"],
)
def test_a_daily_limit_that_names_its_wait_is_weighed_by_the_plan(
    payload: Any, wait: float
) -> None:
    rejection = _rejected(429, payload)
    assert rejection.retry_after == pytest.approx(wait)
    sent = body(temperature=0.2)
    verdict = classify(rejection, sent, DEGRADES)
    assert verdict.action == "backoff" and verdict.delay == pytest.approx(wait)
    # longer than the policy's `max_retry_after`: the turn surfaces rather than wait
    assert RetryPlan(sent, DEGRADES).after(rejection) is None


def test_near_a_daily_limit_a_short_named_wait_is_waited() -> None:
    rejection = _rejected(429, error("Daily limit reached. Please try again in 2s."))
    retry = RetryPlan(body(temperature=0.2), DEGRADES).after(rejection)
    assert retry is not None and retry.delay == 2.0


@pytest.mark.parametrize(
    "text",
    ["Please wait while the model loads.", "`max_wait` of 30 seconds is too long."],
)
def test_near_a_wait_in_words_no_number_of_a_wait(text: str) -> None:
    assert parse_error_payload({"message": text}).retry_after is None


# == an upstream that said nothing readable ==============================================
# (OpenRouter's object beside a failed finish, its upstream's `raw` only `{"retryable":
# true}`: the message ended "Error processing stream: DeepInfra:" before.)
PROCESSING_STREAM = {
    "message": "Error processing stream",
    "code": 502,
    "metadata": {"provider_name": "DeepInfra", "raw": {"retryable": True}},
}


def test_an_upstream_without_words_leaves_no_colon() -> None:
    assert parse_error_payload(PROCESSING_STREAM).message == "Error processing stream (DeepInfra)"


def test_an_upstream_without_words_or_name_leaves_no_colon() -> None:
    anonymous = {**PROCESSING_STREAM, "metadata": {"raw": {"retryable": True}}}
    assert parse_error_payload(anonymous).message == "Error processing stream"


def test_an_upstream_without_words_reads_cleanly_after_200() -> None:
    chunk = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "error": PROCESSING_STREAM,
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    }
    events: list[Any] = []
    rxllm.replay(f"data: {json.dumps(chunk)}\n\n", provider="openrouter").subscribe(
        on_next=events.append
    )
    assert events[-1].type == "error"
    assert events[-1].error.message == "Error processing stream (DeepInfra)"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # words as a JSON object, not a string: the name and the words, as before
        (
            {"error": {"message": "upstream timed out"}},
            "Error processing stream: DeepInfra: upstream timed out",
        ),
        # the upstream's words as text
        ("upstream timed out", "Error processing stream: DeepInfra: upstream timed out"),
    ],
)
def test_near_an_upstream_with_words_keeps_them(raw: Any, message: str) -> None:
    payload = {**PROCESSING_STREAM, "metadata": {"provider_name": "DeepInfra", "raw": raw}}
    assert parse_error_payload(payload).message == message


# Inputs aimed at the readings added here (no access to a model, a model not deployed or
# retired in Chinese, an image too large without a verb, Cohere's `chat_history`, no
# capacity, too many requests at once, resources to load a model, a limit counted by the day,
# a wait in words).
_HOSTILE = {
    "no access": "you do not have access to the " * 1_600 + "mode",
    "not deployed": "model x is not " * 3_000 + "deploy",
    "retired in chinese": "模型 " * 12_000 + "已",
    "image too": "image a b c too " * 3_000 + "larg",
    "chat history": "chat_" * 10_000 + "histor",
    "capacity": "no free capacity " * 3_500 + "availabl",
    "concurrency": "too many concurrent " * 2_500 + "request",
    "resources": "not enough resources " * 2_500 + "to loa",
    "day windows": "daily " * 9_000 + "limi",
    "limit words": "limit " * 9_000 + "dail",
    "quota ids": "aPerDay" * 7_000,
    "waits in words": "wait for " * 6_000 + "5",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, tool_choice="auto", temperature=0.2)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(error(text), sent, DEGRADES))
        verdicts.append(response(429, error(text), sent, OPENROUTER))
        verdicts.append(response(400, text, sent, OPENROUTER))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
