"""Forty of the extra rejections (tests/rejections_extra), each as other servers could send it.

For each: (a) the same meaning in another server's words, (b) the same refusal in another
envelope (flat, `{"error": "text"}`, FastAPI/pydantic `detail` or pydantic's text, zod, a
gateway's JSON string in `metadata.raw`, LiteLLM's proxy, an in-band `data:` frame after
`200 OK`); for fifteen, (c) a near miss that must get another action. Bodies are read as the
source reads them (`parse_error_body` for a response, `parse_error_payload` for a frame).
Wordings follow the servers' own formats (vLLM's pydantic text, serde, Google's
`Unknown name`, OpenAI's `Unsupported parameter`, LiteLLM's exception prefixes, Ollama's
flat errors); where a wording is invented, its comment says so. None of these exact bodies
was recorded.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict, classify
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

DEEPSEEK = RecoveryPolicy(degrade=True, mandatory_body_keys=frozenset({"thinking"}))


def vllm(message: str, status: int = 400) -> dict[str, Any]:
    """vLLM's and SGLang's flat envelope."""
    return {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": status,
    }


def pydantic_text(*errors: tuple[str, str, str]) -> str:
    """pydantic v2's `str(ValidationError)`, as vLLM puts it in `message`: a location line,
    then the indented message (`(location, message, type)`)."""
    n = len(errors)
    lines = [f"{n} validation error{'s' if n > 1 else ''} for ChatCompletionRequest"]
    for location, message, kind in errors:
        lines += [location, f"  {message} [type={kind}, input_value=1, input_type=int]"]
    return "\n".join(lines)


def error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, **fields}}


def case(name: str, verdict: Verdict, action: str, drop: tuple[str, ...] = (), **extra: Any) -> Any:
    return pytest.param(verdict, action, drop, extra.get("rename"), id=name)


VARIANTS = [
    # -- azure-openai__404_unrecognized_argument_tools: drop tools, tool_choice ------------
    case(
        "azure_tools/a: Azure's plural form lists both keys",
        response(
            404,
            error("Unrecognized request arguments supplied: tool_choice, tools"),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "azure_tools/b: LiteLLM's in-band frame, the status as a string",
        frame(
            litellm(
                "litellm.BadRequestError: AzureException BadRequestError - Unrecognized "
                "request argument supplied: tools",
                400,
            ),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "azure_tools/c: Azure's 404 for a wrong path or deployment names nothing",
        response(404, {"error": {"code": "404", "message": "Resource not found"}}, body()),
        "surface",
    ),
    # -- azure__validation_error_json_pointer: drop max_completion_tokens, store ----------
    case(
        "json_pointer/a: pointers without '#', another validator's words (invented wording)",
        response(
            400,
            error(
                "Validation failed at /max_completion_tokens: additional property not allowed;"
                " at /store: additional property not allowed"
            ),
            body(max_completion_tokens=64, store=True),
        ),
        "drop",
        ("max_completion_tokens", "store"),
    ),
    case(
        "json_pointer/b: TGI's flat envelope",
        response(
            422,
            {
                "error": "Validation error at #/max_completion_tokens: Extra inputs are not "
                "permitted\nValidation error at #/store: Extra inputs are not permitted",
                "error_type": "validation",
            },
            body(max_completion_tokens=64, store=True),
        ),
        "drop",
        ("max_completion_tokens", "store"),
    ),
    # -- cerebras__camelcase_body_properties_unsupported: drop maxTokens, thinking --------
    case(
        "camel_body/a: zod's unrecognized keys, quoted",
        response(
            400,
            error("Unrecognized key(s) in object: 'maxTokens', 'thinking'"),
            body(maxTokens=64, thinking={"type": "enabled"}),
        ),
        "drop",
        ("maxTokens", "thinking"),
    ),
    case(
        "camel_body/b: Cerebras's body relayed by OpenRouter in metadata.raw",
        response(
            400,
            gateway_string(
                {
                    "message": "body.maxTokens: property 'body.maxTokens' is unsupported\n"
                    "body.thinking: property 'body.thinking' is unsupported",
                    "type": "invalid_request_error",
                    "param": "validation_error",
                    "code": "wrong_api_format",
                },
                400,
            ),
            body(maxTokens=64, thinking={"type": "enabled"}),
            OPENROUTER,
        ),
        "drop",
        ("maxTokens", "thinking"),
    ),
    # -- cerebras__store_property_unsupported: drop store (a plain word) ----------------
    case(
        "store/a: OpenAI's 'argument supplied' words",
        response(400, error("Unrecognized request argument supplied: store"), body(store=True)),
        "drop",
        ("store",),
    ),
    case(
        "store/b: vLLM's pydantic text, the key alone on its location line",
        response(
            400,
            vllm(pydantic_text(("store", "Extra inputs are not permitted", "extra_forbidden"))),
            body(store=True),
        ),
        "drop",
        ("store",),
    ),
    # -- chatgpt_backend__unsupported_service_tier_flex: drop service_tier ----------------
    case(
        "service_tier/a: the key, then its value refused (invented wording)",
        response(
            400,
            error("The service_tier 'flex' is not available for this model."),
            body(service_tier="flex"),
        ),
        "drop",
        ("service_tier",),
    ),
    case(
        "service_tier/b: in-band, named only by its value (OpenAI's unsupported_value)",
        frame(
            error(
                "Unsupported value: 'flex' is not supported with this model.",
                type="invalid_request_error",
                code="unsupported_value",
            ),
            body(service_tier="flex"),
        ),
        "drop",
        ("service_tier",),
    ),
    # -- cloudflare__bad_input_messages_content_type_mismatch: none -----------------------
    case(
        "content_mismatch/a: ajv's item, pointing into a message's content",
        response(
            400,
            {
                "errors": [
                    {
                        "instancePath": "/messages/1/content",
                        "schemaPath": "#/properties/messages/items/properties/content/type",
                        "keyword": "type",
                        "params": {"type": "string"},
                        "message": "must be string",
                    }
                ]
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "content_mismatch/b: the Cloudflare body relayed by OpenRouter",
        response(
            400,
            gateway_string(
                {
                    "errors": [
                        {
                            "message": "AiError: Bad input: Type mismatch of "
                            "'/messages/*/content', 'array' not in 'string'",
                            "code": 5006,
                        }
                    ],
                    "success": False,
                },
                400,
            ),
            body(temperature=0.2),
            OPENROUTER,
        ),
        "surface",
    ),
    # -- copilot_api__assistant_prefill_unsupported: none ---------------------------------
    case(
        "prefill/a: the last message's role, in other words (invented wording)",
        response(
            400,
            error("Assistant prefill is not supported: the final message must have role 'user'."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "prefill/b: Anthropic's words in an in-band frame",
        frame(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "This model does not support assistant message prefill. "
                    "The conversation must end with a user message.",
                },
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- copilot_api__max_tokens_use_max_completion_tokens_no_param: rename ---------------
    case(
        "use_instead/a: bare names, no quotes",
        response(
            400,
            error("max_tokens is not supported with this model; use max_completion_tokens instead"),
            body(max_tokens=64),
        ),
        "drop",
        ("max_tokens",),
        rename={"max_tokens": "max_completion_tokens"},
    ),
    case(
        "use_instead/b: OpenAI's words relayed in-band by LiteLLM",
        frame(
            litellm(
                "litellm.BadRequestError: OpenAIException - Unsupported parameter: 'max_tokens' "
                "is not supported with this model. Use 'max_completion_tokens' instead.",
                400,
            ),
            body(max_tokens=64),
        ),
        "drop",
        ("max_tokens",),
        rename={"max_tokens": "max_completion_tokens"},
    ),
    # -- copilot_api__model_not_supported_for_vision: images ------------------------------
    case(
        "vision/a: the model 'not supported with image content'",
        response(
            400,
            error("The model gpt-4o-mini-tts is not supported with image content."),
            body(images=True),
        ),
        "images",
    ),
    case(
        "vision/b: in-band, a model code beside words about vision (invented wording)",
        frame(
            error("Vision is not enabled for this model.", code="model_not_supported"),
            body(images=True),
        ),
        "images",
    ),
    case(
        "vision/c: Copilot's missing model, with images in the body, surfaces",
        response(
            400,
            error(
                "The requested model is not supported.",
                code="model_not_supported",
                param="model",
                type="invalid_request_error",
            ),
            body(images=True),
        ),
        "surface",
    ),
    # -- copilot_api__unexpected_anthropic_beta_header: none ------------------------------
    case(
        "beta_header/a: the header named first (invented wording)",
        response(
            400,
            error("Invalid value for header 'anthropic-beta': context-1m-2025-08-07"),
            body(temperature=0.2, top_p=0.5),
        ),
        "surface",
    ),
    case(
        "beta_header/b: relayed by OpenRouter",
        response(
            400,
            gateway_string(
                error(
                    "Unexpected value(s) context-1m-2025-08-07 for the anthropic-beta header. "
                    "Please consult our documentation at docs.anthropic.com or try again "
                    "without the header.",
                    code="invalid_request_body",
                ),
                400,
            ),
            body(temperature=0.2, top_p=0.5),
            OPENROUTER,
        ),
        "surface",
    ),
    case(
        "beta_header/c: Envoy's 'reset before headers' at 503 backs off",
        response(
            503,
            "upstream connect error or disconnect/reset before headers. reset reason: overflow",
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- dashscope__enable_thinking_false_chinese: drop enable_thinking -------------------
    case(
        "enable_thinking_cn/a: the key first, Chinese after a space (invented wording)",
        response(
            400,
            error("enable_thinking 参数仅支持流式调用", code="invalid_parameter_error"),
            body(enable_thinking=True),
        ),
        "drop",
        ("enable_thinking",),
    ),
    case(
        "enable_thinking_cn/b: DashScope's words in an in-band frame",
        frame(
            error(
                "parameter.enable_thinking必须设置为false才能进行非流式调用",
                code="invalid_parameter_error",
                type="invalid_request_error",
            ),
            body(enable_thinking=True),
        ),
        "drop",
        ("enable_thinking",),
    ),
    # -- dashscope__sse_range_of_max_tokens: drop max_tokens ------------------------------
    case(
        "max_tokens_range/a: over HTTP, the range in other words (invented wording)",
        response(
            400,
            error("The value of max_tokens is out of range [1, 8192]."),
            body(max_tokens=100000),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_tokens_range/b: vLLM's sampling check, flat",
        response(400, vllm("max_tokens must be at least 1, got 0."), body(max_tokens=0)),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_tokens_range/c: the input length's range, in-band, surfaces",
        frame(
            error("Range of input length should be [1, 129024]", code="invalid_parameter_error"),
            body(max_tokens=1024),
        ),
        "surface",
    ),
    # -- deepinfra__429_model_busy: backoff -----------------------------------------------
    case(
        "busy/a: DeepInfra's words in-band, no status: the words alone say busy",
        frame(error("Model busy, retry later"), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "busy/b: TGI's flat frame with its error_type",
        frame(
            {"error": "Model is overloaded", "error_type": "overloaded"},
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- deepseek__422_response_format_json_schema_unavailable: drop response_format -------
    case(
        "json_schema/a: serde's unknown variant inside response_format",
        response(
            422,
            "Failed to deserialize the JSON body into the target type: response_format: unknown "
            "variant `json_schema`, expected `text` or `json_object` at line 1 column 120",
            body(response_format={"type": "json_schema"}),
            DEEPSEEK,
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "json_schema/b: the plain-text body relayed by OpenRouter",
        response(
            400,
            gateway_string(
                {
                    "message": "Failed to deserialize the JSON body into the target type: "
                    "response_format: response_format.type `json_schema` is unavailable now at "
                    "line 1 column 12992"
                },
                422,
            ),
            body(response_format={"type": "json_schema"}),
            OPENROUTER,
        ),
        "drop",
        ("response_format",),
    ),
    # -- deepseek__deserialize_messages_invalid_type_sequence: none -----------------------
    case(
        "serde_messages/a: a map where a string is expected",
        response(
            400,
            "Failed to deserialize the JSON body into the target type: messages[2].content: "
            "invalid type: map, expected a string at line 1 column 500",
            body(temperature=0.2),
            DEEPSEEK,
        ),
        "surface",
    ),
    case(
        "serde_messages/b: the same relayed in-band by LiteLLM",
        frame(
            litellm(
                "litellm.BadRequestError: DeepseekException - Failed to deserialize the JSON body "
                "into the target type: messages[5]: invalid type: sequence, expected a string at "
                "line 1 column 33928",
                400,
            ),
            body(temperature=0.2),
            DEEPSEEK,
        ),
        "surface",
    ),
    case(
        "serde_messages/c: serde's path at a body key drops that key",
        response(
            400,
            "Failed to deserialize the JSON body into the target type: temperature: invalid "
            'type: string "0.2", expected f32 at line 1 column 40',
            body(temperature="0.2"),
            DEEPSEEK,
        ),
        "drop",
        ("temperature",),
    ),
    # -- deepseek__function_calling_unsupported: drop tools, tool_choice ------------------
    case(
        "function_calling/a: Ollama's flat words for a model without tools",
        response(
            400,
            {"error": "registry.ollama.ai/library/deepseek-r1:latest does not support tools"},
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "function_calling/b: in-band, passive (invented wording)",
        frame(
            error("Function calling is not supported by deepseek-reasoner."),
            body(tools=TOOLS, tool_choice="auto"),
            DEEPSEEK,
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- deepseek__json_output_unsupported: drop response_format --------------------------
    case(
        "json_output/a: 'JSON mode' in other words",
        response(
            400,
            error("This model does not support JSON mode."),
            body(response_format={"type": "json_object"}, max_tokens=64),
            DEEPSEEK,
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "json_output/b: 'response format' in prose, in-band (invented wording)",
        frame(
            error("Response format json_object is unsupported for this model"),
            body(response_format={"type": "json_object"}, max_tokens=64),
        ),
        "drop",
        ("response_format",),
    ),
    # -- deepseek__unknown_variant_image_url: images --------------------------------------
    case(
        "unknown_variant/a: single quotes, a list of expected variants",
        response(
            400,
            error(
                "Failed to deserialize the JSON body into the target type: messages[0].content"
                "[1]: unknown variant 'image_url', expected one of 'text', 'input_audio'"
            ),
            body(images=True),
        ),
        "images",
    ),
    case(
        "unknown_variant/b: relayed by OpenRouter",
        response(
            400,
            gateway_string(
                error(
                    "Failed to deserialize the JSON body into the target type: messages[7]: "
                    "unknown variant `image_url`, expected `text` at line 1 column 114708"
                ),
                400,
            ),
            body(images=True),
            OPENROUTER,
        ),
        "images",
    ),
    # -- fireworks__extra_inputs_field_value: drop vl_high_resolution_images ---------------
    case(
        "image_key/a: a key whose name says 'images', images in the body",
        response(
            400,
            error(
                "Unsupported parameter: 'vl_high_resolution_images' is not supported with "
                "this model."
            ),
            body(images=True, vl_high_resolution_images=True),
        ),
        "drop",
        ("vl_high_resolution_images",),
    ),
    case(
        "image_key/b: FastAPI's detail list",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "extra_forbidden",
                        "loc": ["body", "vl_high_resolution_images"],
                        "msg": "Extra inputs are not permitted",
                        "input": True,
                    }
                ]
            },
            body(images=True, vl_high_resolution_images=True),
        ),
        "drop",
        ("vl_high_resolution_images",),
    ),
    # -- gateway__legacy_protocol_chat_completions_use_responses: none -------------------
    case(
        "legacy_path/a: OpenAI's 'only supported in v1/responses'",
        response(
            400,
            error(
                "This model is only supported in v1/responses and not in v1/chat/completions.",
                type="invalid_request_error",
                param=None,  # (a relay blanks it; the words alone must say it)
                code=None,
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "legacy_path/b: the gateway's words in an in-band frame",
        frame(
            error(
                "Unsupported legacy protocol: /v1/chat/completions is not supported. Please use "
                "/v1/responses.",
                type="invalid_request_error",
                param="",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- bedrock__model_does_not_support_chat_completions_api_path: none ------------------
    case(
        "operation/a: Azure's OperationNotSupported",
        response(
            400,
            {
                "error": {
                    "code": "OperationNotSupported",
                    "message": "The chatCompletion operation does not work with the specified "
                    "model, gpt-5-codex. Please choose different model and try again. You can "
                    "learn more about which models can be used with each operation here: "
                    "https://go.microsoft.com/fwlink/?linkid=2197993.",
                }
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "operation/b: Bedrock's words in-band",
        frame(
            error(
                "The model 'openai.gpt-oss-120b' does not support the '/v1/chat/completions' API",
                code="validation_error",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- gemini__function_response_parts_mismatch: none (tools stay) ----------------------
    case(
        "tool_pairs/a: Anthropic's tool_use without tool_result",
        response(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "messages.2: `tool_use` ids were found without `tool_result` "
                    "blocks immediately after: toolu_01. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message.",
                },
            },
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    case(
        "tool_pairs/b: OpenAI's words, param into messages, in-band",
        frame(
            error(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                "response messages: call_abc",
                type="invalid_request_error",
                param="messages.[3].role",
            ),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    case(
        "tool_pairs/c: Gemini refusing function calling for the model drops the tools",
        response(
            400,
            [
                error(
                    "Function calling is not enabled for models/gemma-3-27b-it",
                    code=400,
                    status="INVALID_ARGUMENT",
                )
            ],
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- gemini__logprobs_not_enabled_for_model: drop logprobs, top_logprobs --------------
    case(
        "logprobs/a: OpenAI's unsupported parameter",
        response(
            400,
            error(
                "Unsupported parameter: 'logprobs' is not supported with this model.",
                param="logprobs",
                code="unsupported_parameter",
            ),
            body(logprobs=True, top_logprobs=3),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "logprobs/b: Google's list envelope in-band",
        frame(
            [
                error(
                    "Logprobs is not enabled for models/gemini-2.5-pro",
                    code=400,
                    status="INVALID_ARGUMENT",
                )
            ],
            body(logprobs=True, top_logprobs=3),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- gemini__unknown_name_google: drop google -----------------------------------------
    case(
        "unknown_name/a: at a path that is no body key",
        response(
            400,
            [
                error(
                    'Invalid JSON payload received. Unknown name "google" at '
                    "'generation_config': Cannot find field.",
                    code=400,
                    status="INVALID_ARGUMENT",
                )
            ],
            body(google={"thinking_config": {}}),
        ),
        "drop",
        ("google",),
    ),
    case(
        "unknown_name/b: Google's fieldViolations field only",
        response(
            400,
            error(
                "Request contains an invalid argument.",
                code=400,
                status="INVALID_ARGUMENT",
                details=[
                    {
                        "@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [{"field": "google", "description": "Unknown field."}],
                    }
                ],
            ),
            body(google={"thinking_config": {}}),
        ),
        "drop",
        ("google",),
    ),
    case(
        "unknown_name/c: an unknown name inside a message surfaces",
        response(
            400,
            [
                error(
                    'Invalid JSON payload received. Unknown name "thought_signature" at '
                    "'messages[1].tool_calls[0]': Cannot find field.",
                    code=400,
                    status="INVALID_ARGUMENT",
                )
            ],
            body(google={"thinking_config": {}}),
        ),
        "surface",
    ),
    # -- groq__images_incompatible_with_system_messages: none -----------------------------
    case(
        "image_system/a: a system prompt, not 'messages' (invented wording)",
        response(
            400,
            error("Image input is not supported together with a system prompt."),
            body(images=True),
        ),
        "surface",
    ),
    case(
        "image_system/b: the chat template's own words, vLLM's envelope",
        response(
            400, vllm("Prompting with images is incompatible with system messages."), body(True)
        ),
        "surface",
    ),
    case(
        "image_system/c: images refused outright are removed",
        response(400, error("Prompting with images is not supported by this model."), body(True)),
        "images",
    ),
    # -- groq__nested_message_property_metadata: none (the body's metadata stays) ---------
    case(
        "message_field/a: vLLM's pydantic text, a field of a message",
        response(
            400,
            vllm(
                pydantic_text(
                    (
                        "messages.1.user.metadata",
                        "Extra inputs are not permitted",
                        "extra_forbidden",
                    )
                )
            ),
            body(metadata={"k": "v"}, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "message_field/b: Groq's words relayed by OpenRouter",
        response(
            400,
            gateway_string(
                error(
                    "'messages.1' : for 'role:user' the following must be satisfied"
                    "[('messages.1' : property 'metadata' is unsupported)]"
                ),
                400,
            ),
            body(metadata={"k": "v"}, temperature=0.2),
            OPENROUTER,
        ),
        "surface",
    ),
    # -- groq__temperature_value_must_be_a_number: drop temperature -----------------------
    case(
        "temperature_type/a: zod-validation-error's 'at \"temperature\"'",
        response(
            400,
            error('Validation error: Expected number, received string at "temperature"'),
            body(temperature="hot", top_p=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "temperature_type/b: vLLM's pydantic text, the plain key on its location line",
        response(
            400,
            vllm(
                pydantic_text(
                    (
                        "temperature",
                        "Input should be a valid number, unable to parse string as a number",
                        "float_parsing",
                    )
                )
            ),
            body(temperature="hot", top_p=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    # -- lmstudio__cannot_read_properties_of_null: static ---------------------------------
    case(
        "null_read/a: a Python server's attribute error (invented wording)",
        response(400, {"error": "'NoneType' object has no attribute 'get'"}, body()),
        "static",
    ),
    case(
        "null_read/b: in-band, undefined",
        frame({"error": "Cannot read properties of undefined (reading 'type')"}, body()),
        "static",
    ),
    case(
        "null_read/c: the same words at 500 on a direct endpoint back off",
        response(500, {"error": "Cannot read properties of null (reading 'type')"}, body()),
        "backoff",
    ),
    # -- lmstudio__model_does_not_support_images: images ----------------------------------
    case(
        "images/a: passive (invented wording)",
        response(400, error("Images are not supported by this model."), body(True)),
        "images",
    ),
    case(
        "images/b: LiteLLM's frame",
        frame(
            litellm(
                "litellm.BadRequestError: Lm_studioException - Model does not support images. "
                "Please use a model that does.",
                400,
            ),
            body(True),
        ),
        "images",
    ),
    # -- litellm__unsupported_params_max_completion_tokens: rename to max_tokens ----------
    case(
        "litellm_params/a: LiteLLM's older dict form",
        response(
            400,
            error(
                "litellm.UnsupportedParamsError: ollama does not support parameters: "
                "{'max_completion_tokens': 256}, for model=llama3. To drop these, set "
                "`litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n drop_params: "
                "true`\n",
                type="invalid_request_error",
                code="400",
            ),
            body(max_completion_tokens=256, top_p=0.5),
        ),
        "drop",
        ("max_completion_tokens",),
        rename={"max_completion_tokens": "max_tokens"},
    ),
    case(
        "litellm_params/b: in-band",
        frame(
            litellm(
                "litellm.UnsupportedParamsError: zai does not support parameters: "
                "['max_completion_tokens'], for model=glm-5.2.",
                400,
            ),
            body(max_completion_tokens=256, top_p=0.5),
        ),
        "drop",
        ("max_completion_tokens",),
        rename={"max_completion_tokens": "max_tokens"},
    ),
    case(
        "litellm_params/c: LiteLLM's context-window class surfaces",
        frame(
            litellm(
                "litellm.ContextWindowExceededError: OpenAIException - This model's maximum "
                "context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
                400,
            ),
            body(max_completion_tokens=256),
        ),
        "surface",
    ),
    case(
        "litellm_params/d: LiteLLM's exhausted key budget surfaces",
        response(
            400,
            error(
                "Budget has been exceeded! Current cost: 0.0612, Max budget: 0.05",
                type="budget_exceeded",
                param=None,
                code="400",
            ),
            body(max_completion_tokens=256, top_p=0.5),
        ),
        "surface",
    ),
    # -- llamacpp__tools_param_requires_jinja: drop tools ---------------------------------
    case(
        "jinja/a: Ollama's OpenAI-compatible words",
        response(
            400,
            error("llama3 does not support tools", type="api_error", param=None, code=None),
            body(tools=TOOLS),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "jinja/b: llama.cpp's words in-band",
        frame(
            {
                "error": {
                    "code": 500,
                    "message": "tools param requires --jinja flag",
                    "type": "server_error",
                }
            },
            body(tools=TOOLS),
        ),
        "drop",
        ("tools",),
    ),
    # -- maritaca__422_loc_body_only_not_a_key: static ------------------------------------
    case(
        "loc_body/a: pydantic v2's model_attributes_type at the body",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "model_attributes_type",
                        "loc": ["body"],
                        "msg": "Input should be a valid dictionary or object to extract "
                        "fields from",
                        "input": "x",
                    }
                ]
            },
            body(temperature=0.2),
        ),
        "static",
    ),
    case(
        "loc_body/b: FastAPI's JSON decode error at a position",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "json_invalid",
                        "loc": ["body", 123],
                        "msg": "JSON decode error",
                        "input": {},
                        "ctx": {"error": "Expecting value"},
                    }
                ]
            },
            body(temperature=0.2),
        ),
        "static",
    ),
    case(
        "loc_body/c: a loc at a body key drops it",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "less_than_equal",
                        "loc": ["body", "temperature"],
                        "msg": "Input should be less than or equal to 2",
                        "input": 3,
                    }
                ]
            },
            body(temperature=3),
        ),
        "drop",
        ("temperature",),
    ),
    # -- nvidia__422_pydantic_v1_body_arrows: drop the located keys -----------------------
    case(
        "arrows/a: pydantic v1 text in vLLM's envelope",
        response(
            400,
            vllm(
                "2 validation errors for Request\nbody -> presence_penalty\n  extra fields not "
                "permitted (type=value_error.extra)\nbody -> frequency_penalty\n  extra fields "
                "not permitted (type=value_error.extra)"
            ),
            body(presence_penalty=0.1, frequency_penalty=0.1, top_p=0.5),
        ),
        "drop",
        ("presence_penalty", "frequency_penalty"),
    ),
    case(
        "arrows/b: a plain-word key under the arrow",
        response(
            422,
            {
                "error": "body -> temperature\n  ensure this value is less than or equal to 2 "
                "(type=value_error.number.not_le; limit_value=2)"
            },
            body(temperature=3, top_p=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    # -- openai__403_not_allowed_to_request_logprobs: drop logprobs, top_logprobs ---------
    case(
        "forbidden_key/a: the key quoted, 'permitted' (invented wording)",
        response(
            403,
            error("Requesting 'logprobs' is not permitted for this model."),
            body(logprobs=True, top_logprobs=3),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "forbidden_key/b: LiteLLM's 403 class name before OpenAI's words",
        frame(
            litellm(
                "litellm.PermissionDeniedError: OpenAIException - You are not allowed to request "
                "logprobs from this model",
                403,
            ),
            body(logprobs=True, top_logprobs=3),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "forbidden_key/c: OpenAI's 'not allowed to sample' surfaces",
        response(
            403,
            error("You are not allowed to sample from this model", type="invalid_request_error"),
            body(logprobs=True, top_logprobs=3),
        ),
        "surface",
    ),
    # -- openai__n_integer_above_maximum: drop n ------------------------------------------
    case(
        "n/a: vLLM's pydantic text, a one-letter location",
        response(
            400,
            vllm(
                pydantic_text(("n", "Input should be less than or equal to 128", "less_than_equal"))
            ),
            body(n=130),
        ),
        "drop",
        ("n",),
    ),
    case(
        "n/b: FastAPI's detail",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "less_than_equal",
                        "loc": ["body", "n"],
                        "msg": "Input should be less than or equal to 128",
                        "input": 130,
                        "ctx": {"le": 128},
                    }
                ]
            },
            body(n=130),
        ),
        "drop",
        ("n",),
    ),
    # -- perplexity__frequency_penalty_in_prose: drop frequency_penalty -------------------
    case(
        "penalty/a: the words, with 'must be between' (invented wording)",
        response(
            400,
            error("The frequency penalty must be between -2 and 2."),
            body(frequency_penalty=3, presence_penalty=0.1),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    case(
        "penalty/b: pydantic text with the identifier",
        response(
            400,
            vllm(
                pydantic_text(
                    ("frequency_penalty", "Input should be greater than 0", "greater_than")
                )
            ),
            body(frequency_penalty=0, presence_penalty=0.1),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    case(
        "penalty/c: the other penalty named drops the other key",
        response(
            400,
            {
                "message": "Presence penalty must satisfy p > 0.",
                "type": "invalid_parameter",
                "code": 400,
            },
            body(frequency_penalty=0.1, presence_penalty=0),
        ),
        "drop",
        ("presence_penalty",),
    ),
    # -- xai__argument_not_supported_on_this_model_camelcase: drop frequency_penalty ------
    case(
        "camel/a: Google's unknown name in camelCase",
        response(
            400,
            [
                error(
                    'Invalid JSON payload received. Unknown name "frequencyPenalty": Cannot '
                    "find field.",
                    code=400,
                    status="INVALID_ARGUMENT",
                )
            ],
            body(frequency_penalty=0.1, presence_penalty=0.1),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    case(
        "camel/b: xAI's flat envelope in-band",
        frame(
            {
                "code": "Client specified an invalid argument",
                "error": "Argument not supported on this model: frequencyPenalty",
            },
            body(frequency_penalty=0.1, presence_penalty=0.1),
        ),
        "drop",
        ("frequency_penalty",),
    ),
    case(
        "camel/c: the other camel key drops the other key",
        response(
            400,
            {
                "code": "Client specified an invalid argument",
                "error": "Argument not supported on this model: presencePenalty",
            },
            body(frequency_penalty=0.1, presence_penalty=0.1),
        ),
        "drop",
        ("presence_penalty",),
    ),
    # -- zhipu__temperature_param_invalid_chinese: drop temperature -----------------------
    case(
        "temperature_cn/a: '参数' before the key (invented wording)",
        response(
            400,
            {"error": {"code": "1214", "message": "参数temperature取值范围为(0, 1)。请检查文档。"}},
            body(temperature=0, top_p=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "temperature_cn/b: Zhipu's words in-band",
        frame(
            {"code": "1214", "message": "temperature 参数非法。请检查文档。"},
            body(temperature=0, top_p=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    # -- vllm__model_does_not_support_chat_completions_api: none --------------------------
    case(
        "not_chat/a: OpenAI's 'not a chat model'",
        response(
            404,
            error(
                "This is not a chat model and thus not supported in the v1/chat/completions "
                "endpoint. Did you mean to use v1/completions?",
                type="invalid_request_error",
                param="model",
            ),
            body(n=2, temperature=0.2),
        ),
        "surface",
    ),
    case(
        "not_chat/b: vLLM's words in-band",
        frame(vllm("The model does not support Chat Completions API"), body(n=2)),
        "surface",
    ),
    # -- moonshot__invalid_temperature_only_1: drop temperature ---------------------------
    case(
        "only_1/a: 'must be' after the key (invented wording)",
        response(400, error("temperature must be 1 for this model"), body(temperature=0.2)),
        "drop",
        ("temperature",),
    ),
    case(
        "only_1/b: Moonshot's words in-band",
        frame(
            error(
                "invalid temperature: only 1 is allowed for this model",
                type="invalid_request_error",
            ),
            body(temperature=0.2, top_p=0.5),
        ),
        "drop",
        ("temperature",),
    ),
    # -- moonshot__message_at_position_must_not_be_empty: none ----------------------------
    case(
        "empty_message/a: OpenAI's 'string too short'",
        response(
            400,
            error(
                "Invalid 'messages[2].content': string too short. Expected a string with "
                "minimum length 1, but got an empty string instead.",
                param="messages[2].content",
                code="string_below_min_length",
            ),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "empty_message/b: Anthropic's words in-band",
        frame(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "messages: text content blocks must be non-empty",
                },
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- openai__response_format_json_schema_not_supported_empty_param: response_format ---
    case(
        "rf_json_schema/a: 'Response format' in prose (invented wording)",
        response(
            400,
            error("Response format 'json_schema' is not supported by this model."),
            body(response_format={"type": "json_schema"}),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "rf_json_schema/b: in-band, the relay's blank param",
        frame(
            error(
                "Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                "with this model.",
                type="invalid_request_error",
                param="",
            ),
            body(response_format={"type": "json_schema"}),
        ),
        "drop",
        ("response_format",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings added with these variants (validator locations, relay class
# names, busy words, a path a model is only supported at, a key whose name says "images").
_HOSTILE = {
    "pydantic v1 arrows": "a -> " * 13_107,
    "JSON pointers": "#/a" * 21_845,
    "pointer segments": "/a" * 32_768,
    "location lines": "temperature\n" * 5_461,
    "one long serde path": "into the target type: " + "a" * 65_000,
    "letters before Error": "A" * 65_536,
    "supported at a path": "supported in /v1/" * 3_855,
    "参数 before keys": "参数temperature" * 4_681,
    "image key names": "vl_high_resolution_images " * 2_520,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, temperature=0.1, vl_high_resolution_images=True, tools=TOOLS)
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p", raw=text)
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, sent, DEGRADES)), daemon=True
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is about a second here
    assert verdicts
