"""The 28 shared rejections, each as three other servers could send it.

For every case in ../shared/rejections: (a) the same meaning in other words, (b) the same
words in another envelope (flat, `{"error": "text"}`, FastAPI/pydantic `detail`, zod,
express-validator, ajv, Google's `fieldViolations`, a gateway's JSON string, an in-band
`data:` frame after `200 OK`), and (c) a near miss that must get another action. Each body
is read as the source reads it (`parse_error_body` for a response, `parse_error_payload`
for a frame) and classified against the body it refused. The wordings follow the
servers' and validators' own formats; none of these exact bodies was recorded.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from yarl import URL

from rxllm.degradation import RecoveryPolicy, Verdict, classify
from rxllm.error_body import envelope_status, parse_error_body, parse_error_payload
from rxllm.events import ErrorInfo
from rxllm.sources.http import status_message

DEGRADES = RecoveryPolicy(degrade=True)
OPENROUTER = RecoveryPolicy(degrade=True, degrade_on_bad_gateway=True)
NVIDIA = RecoveryPolicy(
    degrade=True,
    degrade_on_opaque_server_error=True,
    mandatory_body_keys=frozenset({"chat_template_kwargs"}),
)
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def body(images: bool = False, **params: Any) -> dict[str, Any]:
    """A chat body as the shared cases send it: two unrelated keys beside the case's."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "hi"}]
    return {
        "model": "m",
        "messages": [{"role": "user", "content": content + ([IMAGE] if images else [])}],
        "stream": True,
        "seed": 7,
        "user": "case-user",
        **params,
    }


def response(
    status: int,
    payload: Any,
    sent: dict[str, Any],
    policy: RecoveryPolicy = DEGRADES,
    headers: dict[str, str] | None = None,
) -> Verdict:
    """`classify` of an HTTP rejection, read as `sources.http` reads one."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    parsed = parse_error_body(text)
    url = URL("http://127.0.0.1:8000/v1/chat/completions")
    error = ErrorInfo(
        kind="rejected" if status < 500 else "http",
        message=status_message(status, parsed.message, url, ()),
        status=status,
        provider="p",
        raw=text,
        **parsed.fields(headers or {}),
    )
    return classify(error, sent, policy)


def frame(error: Any, sent: dict[str, Any], policy: RecoveryPolicy = DEGRADES) -> Verdict:
    """`classify` of `data: {"error": <error>}` after `200 OK`, read as the chat wire
    reads one (`WireState.stream_error`)."""
    parsed = parse_error_payload(error)
    info = ErrorInfo(
        kind="stream_error",
        message=parsed.message,
        status=envelope_status(error),
        provider="p",
        raw=json.dumps(error),
        **parsed.fields(),
    )
    return classify(info, sent, policy)


def gateway_string(upstream: dict[str, Any], status: int) -> dict[str, Any]:
    """OpenRouter's envelope: the upstream's body as a JSON string in `metadata.raw`."""
    return {
        "error": {
            "message": "Provider returned error",
            "code": status,
            "metadata": {"provider_name": "Upstream", "raw": json.dumps(upstream)},
        }
    }


def litellm(words: str, status: int) -> dict[str, Any]:
    """LiteLLM's proxy: the upstream's words after its exception's name, `code` a string."""
    return {"error": {"message": words, "type": None, "param": None, "code": str(status)}}


PER_MINUTE_ANTHROPIC = (
    "This request would exceed the rate limit for your organization (a22cf6e6) of 40,000 input "
    "tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. "
    "You can see the response headers for current usage. Please reduce the prompt length or "
    "the maximum tokens requested, or try again later. You may also contact sales at "
    "https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
)
ORG_VERIFICATION = (
    "Your organization must be verified to stream this model. Please go to: "
    "https://platform.openai.com/settings/organization/general and click on Verify "
    "Organization. If you just verified, it can take up to 15 minutes for access to propagate."
)

# (id, verdict, action, drop)
VARIANTS: list[tuple[str, Verdict, str, tuple[str, ...]]] = [
    # -- azure-openai__content_filter_prompt: none ------------------------------------
    (
        "content_filter/a: OpenAI's safety-system words and code",
        response(
            400,
            {
                "error": {
                    "message": "Your request was rejected as a result of our safety system. "
                    "Your prompt may contain text that is not allowed by our safety system.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "content_policy_violation",
                }
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "content_filter/b: Azure's body as the upstream's raw string",
        response(
            400,
            gateway_string(
                {
                    "error": {
                        "message": "The response was filtered due to the prompt triggering "
                        "Azure OpenAI's content management policy. Please modify your prompt "
                        "and retry.",
                        "type": None,
                        "param": "prompt",
                        "code": "content_filter",
                        "status": 400,
                    }
                },
                400,
            ),
            body(temperature=0.2),
            OPENROUTER,
        ),
        "surface",
        (),
    ),
    (
        "content_filter/c: a rate limit of the content filter is a rate limit",
        response(
            429,
            {
                "error": {
                    "code": "429",
                    "message": "Requests to the content filtering service have exceeded call "
                    "rate limit of your current pricing tier. Please retry after 2 seconds.",
                }
            },
            body(),
        ),
        "backoff",
        (),
    ),
    # -- azure-openai__temperature_unsupported_value: drop temperature ----------------
    (
        "temperature_value/a: the key and its value in prose",
        response(
            400,
            {
                "error": {
                    "message": "Temperature value 0.2 is not supported by this model, "
                    "only 1 is allowed.",
                    "type": "invalid_request_error",
                }
            },
            body(temperature=0.2),
        ),
        "drop",
        ("temperature",),
    ),
    (
        "temperature_value/b: LiteLLM's in-band frame, the status as the code",
        frame(
            litellm(
                "litellm.BadRequestError: AzureException BadRequestError - Unsupported value: "
                "'temperature' does not support 0.2 with this model. Only the default (1) value "
                "is supported.",
                400,
            )["error"],
            body(temperature=0.2),
        ),
        "drop",
        ("temperature",),
    ),
    (
        "temperature_value/b2: zod's issue inside an envelope with its own message",
        response(
            400,
            {
                "message": "Invalid request body",
                "issues": [
                    {
                        "code": "invalid_type",
                        "expected": "number",
                        "received": "string",
                        "path": ["temperature"],
                        "message": "Expected number, received string",
                    }
                ],
            },
            body(temperature="0.2"),
        ),
        "drop",
        ("temperature",),
    ),
    (
        "temperature_value/c: the same words about `n` keep the temperature",
        response(
            400,
            {
                "error": {
                    "message": "Unsupported value: 'n' does not support 2 with this model. "
                    "Only the default (1) value is supported.",
                    "type": "invalid_request_error",
                    "param": "n",
                    "code": "unsupported_value",
                }
            },
            body(temperature=0.2, n=2),
        ),
        "drop",
        ("n",),
    ),
    # -- azure-openai__unknown_parameter_stream_options: drop stream_options ----------
    (
        "stream_options/a: Google's camelCase of the key",
        response(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "status": "INVALID_ARGUMENT",
                        "message": 'Invalid JSON payload received. Unknown name "streamOptions": '
                        "Cannot find field.",
                    }
                }
            ],
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    (
        "stream_options/b: zod's unrecognized_keys issue",
        response(
            400,
            {
                "success": False,
                "error": {
                    "name": "ZodError",
                    "issues": [
                        {
                            "code": "unrecognized_keys",
                            "keys": ["stream_options"],
                            "path": [],
                            "message": "Unrecognized key(s) in object: 'stream_options'",
                        }
                    ],
                },
            },
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    (
        "stream_options/c: the words about a key the body does not hold name nothing",
        response(
            400,
            {
                "error": {
                    "message": "Unknown parameter: 'stream_options'.",
                    "type": "invalid_request_error",
                    "code": "unknown_parameter",
                }
            },
            body(temperature=0.2),
        ),
        "static",
        (),
    ),
    # -- deepseek__insufficient_balance_402: none -------------------------------------
    (
        "balance/a: Zhipu's exhausted balance, in Chinese, at 429",
        response(
            429, {"error": {"code": "1113", "message": "余额不足或无可用资源包,请充值。"}}, body()
        ),
        "surface",
        (),
    ),
    (
        "balance/a2: Zhipu's account in arrears, in Chinese, at 429",
        response(
            429,
            {"error": {"code": "1113", "message": "您的账户已欠费\uff0c请充值后重试。"}},
            body(),
        ),
        "surface",
        (),
    ),
    (
        "balance/b: the same words in an in-band frame with no status",
        frame(
            {
                "message": "Insufficient Balance",
                "type": "unknown_error",
                "param": None,
                "code": "invalid_request_error",
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "balance/c: a daily token limit that links the billing page is a rate limit",
        response(
            429,
            {
                "error": {
                    "message": "Rate limit reached for model `llama-3.3-70b-versatile` in "
                    "organization `org_01` service tier `on_demand` on tokens per day (TPD): "
                    "Limit 100000, Used 99500, Requested 1200. Please try again in 10m4.8s. "
                    "Need more tokens? Upgrade to Dev Tier today at "
                    "https://console.groq.com/settings/billing",
                    "type": "tokens",
                    "code": "rate_limit_exceeded",
                }
            },
            body(),
        ),
        "backoff",
        (),
    ),
    # -- gemini__openai_compat_unknown_name_reasoning: drop reasoning -----------------
    (
        "unknown_name/a: ajv's additionalProperties, the key only in params",
        response(
            400,
            {
                "message": "Request body validation failed",
                "errors": [
                    {
                        "instancePath": "",
                        "schemaPath": "#/additionalProperties",
                        "keyword": "additionalProperties",
                        "params": {"additionalProperty": "reasoning"},
                        "message": "must NOT have additional properties",
                    }
                ],
            },
            body(reasoning={"effort": "low"}, temperature=0.2),
        ),
        "drop",
        ("reasoning",),
    ),
    (
        "unknown_name/b: Google's BadRequest, the key only in fieldViolations",
        response(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "message": "Request contains an invalid argument.",
                        "status": "INVALID_ARGUMENT",
                        "details": [
                            {
                                "@type": "type.googleapis.com/google.rpc.BadRequest",
                                "fieldViolations": [
                                    {"field": "reasoning", "description": "Cannot find field."}
                                ],
                            }
                        ],
                    }
                }
            ],
            body(reasoning={"effort": "low"}, temperature=0.2),
        ),
        "drop",
        ("reasoning",),
    ),
    (
        "unknown_name/c: another key's unknown name names nothing in the body",
        response(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "status": "INVALID_ARGUMENT",
                        "message": "Invalid JSON payload received. "
                        'Unknown name "reasoning_effort": Cannot find field.',
                    }
                }
            ],
            body(reasoning={"effort": "low"}, temperature=0.2),
        ),
        "static",
        (),
    ),
    # -- groq__429_tpm_try_again_in_seconds: backoff ----------------------------------
    (
        "tpm/a: Anthropic's per-minute limit, which also asks for a shorter prompt",
        response(
            429,
            {
                "type": "error",
                "error": {"type": "rate_limit_error", "message": PER_MINUTE_ANTHROPIC},
            },
            body(),
        ),
        "backoff",
        (),
    ),
    (
        "tpm/a2: the same limit relayed by a gateway that calls it invalid_request_error",
        response(
            429,
            {
                "error": {
                    "code": "rate_limit_error",
                    "message": PER_MINUTE_ANTHROPIC,
                    "type": "invalid_request_error",
                    "param": None,
                }
            },
            body(),
        ),
        "backoff",
        (),
    ),
    (
        "tpm/b: Groq's body as the upstream's raw string",
        response(
            429,
            gateway_string(
                {
                    "error": {
                        "message": "Rate limit reached for model `gemma2-9b-it` on tokens "
                        "per minute (TPM): Limit 15000, Used 11972, Requested 4351. Please "
                        "try again in 5.289s.",
                        "type": "tokens",
                        "code": "rate_limit_exceeded",
                    }
                },
                429,
            ),
            body(),
            OPENROUTER,
        ),
        "backoff",
        (),
    ),
    (
        "tpm/c: a request larger than the whole per-minute allowance surfaces",
        response(
            429,
            {
                "error": {
                    "message": "Request too large for gpt-4o in organization org-x on tokens per "
                    "min (TPM): Limit 30000, Requested 31538. The input or output tokens must be "
                    "reduced in order to run successfully.",
                    "type": "tokens",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            },
            body(),
        ),
        "surface",
        (),
    ),
    # -- hf-tgi__sse_top_p_validation: drop top_p -------------------------------------
    (
        "top_p/a: the key's words hyphenated",
        response(
            400,
            {
                "error": {
                    "message": "Top-p must be greater than 0 and at most 1.",
                    "type": "invalid_request_error",
                }
            },
            body(top_p=0, temperature=0.2),
        ),
        "drop",
        ("top_p",),
    ),
    (
        "top_p/b: a FastAPI detail list from pydantic v2",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "greater_than",
                        "loc": ["body", "top_p"],
                        "msg": "Input should be greater than 0",
                        "input": 0,
                        "ctx": {"gt": 0.0},
                    }
                ]
            },
            body(top_p=0, temperature=0.2),
        ),
        "drop",
        ("top_p",),
    ),
    (
        "top_p/c: TGI's size limit names its own max_new_tokens",
        frame(
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. "
            "Given: 3000 `inputs` tokens and 20 `max_new_tokens`",
            body(top_p=0.5, max_tokens=20),
        ),
        "surface",
        (),
    ),
    # -- llamacpp__image_input_not_supported_500: images ------------------------------
    (
        "image_500/a: Ollama's model without a projector, in its native envelope",
        response(
            500, {"error": "this model is missing data required for image input"}, body(images=True)
        ),
        "images",
        (),
    ),
    (
        "image_500/b: LiteLLM's relay of the same words at 500",
        response(
            500,
            litellm(
                "litellm.APIError: APIError: OpenAIException - image input is not supported "
                "by this server",
                500,
            ),
            body(images=True),
        ),
        "images",
        (),
    ),
    (
        "image_500/c: a rate limit on images per minute is a rate limit",
        response(
            429,
            {
                "error": {
                    "message": "Rate limit reached for images per minute (IPM): Limit 5, "
                    "Used 5, Requested 1. Please try again in 12s.",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
            body(images=True),
        ),
        "backoff",
        (),
    ),
    # -- llamacpp__sse_exceed_context_size_after_200: none ----------------------------
    (
        "context_size/a: Gemini's input token count over its maximum",
        frame(
            {
                "code": 400,
                "message": "The input token count (1200000) exceeds the maximum "
                "number of tokens allowed (1048576).",
                "status": "INVALID_ARGUMENT",
            },
            body(),
        ),
        "surface",
        (),
    ),
    (
        "context_size/b: llama-cpp-python's words as a FastAPI string detail",
        response(400, {"detail": "Requested tokens (9000) exceed context window of 8192"}, body()),
        "surface",
        (),
    ),
    (
        "context_size/c: max_tokens above the output limit is the key's",
        response(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "max_tokens: 100000 > 64000, which is the maximum "
                    "allowed number of output tokens for this model",
                },
            },
            body(max_tokens=100000),
        ),
        "drop",
        ("max_tokens",),
    ),
    # -- mistral__extra_forbidden_max_completion_tokens: drop (rename max_tokens) -----
    (
        "extra_forbidden/a: pydantic v1's extra fields",
        response(
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "max_completion_tokens"],
                        "msg": "extra fields not permitted",
                        "type": "value_error.extra",
                    }
                ]
            },
            body(max_completion_tokens=32000),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    (
        "extra_forbidden/b: Mistral's body as a LiteLLM message string",
        response(
            400,
            litellm(
                "litellm.BadRequestError: MistralException - "
                + json.dumps(
                    {
                        "object": "error",
                        "message": {
                            "detail": [
                                {
                                    "type": "extra_forbidden",
                                    "loc": ["body", "max_completion_tokens"],
                                    "msg": "Extra inputs are not permitted",
                                    "input": 32000,
                                }
                            ]
                        },
                        "type": "invalid_request_error",
                    }
                ),
                400,
            ),
            body(max_completion_tokens=32000),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    (
        "extra_forbidden/c: a key of the messages' own is the conversation",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "extra_forbidden",
                        "loc": ["body", "messages", 0, "user", "max_completion_tokens"],
                        "msg": "Extra inputs are not permitted",
                        "input": 1,
                    }
                ]
            },
            body(max_completion_tokens=32000),
        ),
        "surface",
        (),
    ),
    # -- nvidia__function_not_found_for_account_404: none -----------------------------
    (
        "not_for_account/a: Zhipu's missing model, in Chinese, at 400",
        response(
            400,
            {"error": {"code": "1211", "message": "模型不存在\uff0c请检查模型代码。"}},
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "not_for_account/b: a FastAPI string detail",
        response(
            404, {"detail": "Function '23d4f03a': Not found for account 'Qawmu2vU'"}, body(), NVIDIA
        ),
        "surface",
        (),
    ),
    (
        "not_for_account/c: OpenRouter's 404 for a capability no endpoint has",
        response(
            404,
            {
                "error": {
                    "message": "No endpoints found that support tool use. To learn more "
                    "about provider routing, visit: https://openrouter.ai/docs",
                    "code": 404,
                }
            },
            body(tools=TOOLS, tool_choice="auto"),
            OPENROUTER,
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- nvidia__opaque_500_internal_server_error: static ------------------------------
    (
        "opaque_500/a: Starlette's plain-text page",
        response(500, "Internal Server Error", body(temperature=0.6), NVIDIA),
        "static",
        (),
    ),
    (
        "opaque_500/b: an RFC 7807 problem that says only that",
        response(
            500,
            {"status": 500, "title": "Internal Server Error", "detail": "Internal Server Error"},
            body(temperature=0.6),
            NVIDIA,
        ),
        "static",
        (),
    ),
    (
        "opaque_500/c: a 500 that names the server's trouble is the server's",
        response(
            500,
            {
                "message": "Internal server error: CUDA out of memory",
                "type": "internal_server_error",
                "code": 500,
            },
            body(temperature=0.6),
            NVIDIA,
        ),
        "backoff",
        (),
    ),
    # -- ollama__gemma3_does_not_support_tools: drop tools ----------------------------
    (
        "no_tools/a: Gemini's function calling not enabled",
        response(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "message": "Function calling is not enabled for this model",
                        "status": "INVALID_ARGUMENT",
                    }
                }
            ],
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    (
        "no_tools/b: Ollama's native envelope, a bare string",
        response(
            400,
            {"error": "registry.ollama.ai/library/gemma3:4b does not support tools"},
            body(tools=TOOLS),
        ),
        "drop",
        ("tools",),
    ),
    (
        "no_tools/c: thinking refused keeps the tools",
        response(
            400,
            {"error": '"gemma3:4b" does not support thinking'},
            body(tools=TOOLS, reasoning_effort="low"),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- openai__502_cloudflare_html_bare: backoff ------------------------------------
    (
        "bad_gateway/a: Envoy's plain-text reset",
        response(
            502,
            "upstream connect error or disconnect/reset before headers. reset "
            "reason: connection termination",
            body(temperature=0.2),
        ),
        "backoff",
        (),
    ),
    (
        "bad_gateway/b: OpenAI's own JSON 502",
        response(
            502,
            {
                "error": {
                    "code": 502,
                    "message": "Bad gateway.",
                    "param": None,
                    "type": "cf_bad_gateway",
                }
            },
            body(temperature=0.2),
        ),
        "backoff",
        (),
    ),
    (
        "bad_gateway/c: a 502 that names a refused key is a refusal",
        response(
            502,
            {
                "error": {
                    "message": "Upstream returned 400: Unsupported parameter: 'temperature' "
                    "is not supported with this model.",
                    "type": "upstream_error",
                }
            },
            body(temperature=0.2),
        ),
        "drop",
        ("temperature",),
    ),
    # -- openai__context_length_exceeded: none ----------------------------------------
    (
        "context_length/a: input tokens over a configured limit",
        response(
            400,
            {
                "error": {
                    "message": "Input tokens exceed the configured limit of 272000 tokens. "
                    "Your messages resulted in 290000 tokens.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": None,
                }
            },
            body(max_tokens=1000),
        ),
        "surface",
        (),
    ),
    (
        "context_length/b: Gemini's body as the JSON string of the message",
        response(
            400,
            {
                "error": {
                    "message": json.dumps(
                        {
                            "error": {
                                "code": 400,
                                "message": "The input token count (1200000) exceeds the "
                                "maximum number of tokens allowed (1048576).",
                                "status": "INVALID_ARGUMENT",
                            }
                        },
                        indent=1,
                    ),
                    "code": 400,
                    "status": "Bad Request",
                }
            },
            body(max_tokens=1000),
        ),
        "surface",
        (),
    ),
    (
        "context_length/c: max_tokens above its maximum value is the key's",
        response(
            400,
            {
                "error": {
                    "message": "Invalid 'max_tokens': integer above maximum value. Expected "
                    "a value <= 4096, but got 8192 instead.",
                    "type": "invalid_request_error",
                    "param": "max_tokens",
                    "code": "integer_above_max_value",
                }
            },
            body(max_tokens=8192),
        ),
        "drop",
        ("max_tokens",),
    ),
    # -- openai__incorrect_api_key_401: none ------------------------------------------
    (
        "api_key/a: Gemini's invalid key at 400",
        response(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "message": "API key not valid. Please pass a valid API key.",
                        "status": "INVALID_ARGUMENT",
                        "details": [
                            {
                                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                "reason": "API_KEY_INVALID",
                                "domain": "googleapis.com",
                            }
                        ],
                    }
                }
            ],
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "api_key/b: Anthropic's envelope at 401",
        response(
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
            body(),
        ),
        "surface",
        (),
    ),
    (
        "api_key/c: a per-minute limit of one key is a rate limit",
        response(
            429,
            {
                "error": {
                    "message": "Too many requests for this API key: 60 requests per "
                    "minute allowed. Please try again in 20 seconds."
                }
            },
            body(),
        ),
        "backoff",
        (),
    ),
    # -- openai__insufficient_quota_429: none -----------------------------------------
    (
        "quota/a: Anthropic's credit balance at 400",
        response(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "Your credit balance is too low to access the Anthropic "
                    "API. Please go to Plans & Billing to upgrade or "
                    "purchase credits.",
                },
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "quota/b: OpenAI's quota body as the upstream's raw string",
        response(
            429,
            gateway_string(
                {
                    "error": {
                        "message": "You exceeded your current quota, please check "
                        "your plan and billing details.",
                        "type": "insufficient_quota",
                        "param": None,
                        "code": "insufficient_quota",
                    }
                },
                429,
            ),
            body(),
            OPENROUTER,
        ),
        "surface",
        (),
    ),
    (
        "quota/c: Vertex's per-minute quota metric, relayed by LiteLLM, is a rate limit",
        response(
            429,
            {
                "error": {
                    "message": "litellm.RateLimitError: VertexAIException - Quota exceeded "
                    "for aiplatform.googleapis.com/generate_content_requests_per_minute_per_"
                    "project_per_base_model with base model: gemini-1.5-pro. Please submit a "
                    "quota increase request.",
                    "type": "throttling_error",
                    "param": None,
                    "code": "429",
                }
            },
            body(),
        ),
        "backoff",
        (),
    ),
    # -- openai__max_tokens_use_max_completion_tokens: drop max_tokens ----------------
    (
        "use_instead/a: the replacement in other words",
        response(
            400,
            {
                "error": {
                    "message": "max_tokens is not supported for reasoning models; "
                    "use max_completion_tokens instead."
                }
            },
            body(max_tokens=1024),
        ),
        "drop",
        ("max_tokens",),
    ),
    (
        "use_instead/b: express-validator's item",
        response(
            400,
            {
                "errors": [
                    {
                        "type": "field",
                        "value": 1024,
                        "msg": "Use max_completion_tokens instead",
                        "path": "max_tokens",
                        "location": "body",
                    }
                ]
            },
            body(max_tokens=1024),
        ),
        "drop",
        ("max_tokens",),
    ),
    (
        "use_instead/c: the messages and completion together too long",
        response(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, "
                    "you requested 9000 tokens (1000 in the messages, 8000 in the "
                    "completion). Please reduce the length of the messages or completion.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            body(max_tokens=8000),
        ),
        "surface",
        (),
    ),
    # -- openai__model_not_found_404: none --------------------------------------------
    (
        "model_not_found/a: Mistral's invalid model at 400",
        response(
            400,
            {
                "object": "error",
                "message": "Invalid model: mistral-huge-latest",
                "type": "invalid_model",
                "param": None,
                "code": "1500",
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "model_not_found/b: OpenRouter's invalid model id in a frame",
        frame(
            {"message": "openai/gpt-9 is not a valid model ID", "code": 400}, body(temperature=0.2)
        ),
        "surface",
        (),
    ),
    (
        "model_not_found/c: a model that does not support a parameter drops it",
        response(
            400,
            {
                "code": "Client specified an invalid argument",
                "error": "Model grok-3 does not support parameter presencePenalty.",
            },
            body(presence_penalty=0.5, temperature=0.2),
        ),
        "drop",
        ("presence_penalty",),
    ),
    # -- openai__o1_mini_system_role_unsupported_value: none --------------------------
    (
        "role/a: Anthropic's alternation rule quotes the roles",
        response(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": 'messages: roles must alternate between "user" and '
                    '"assistant", but found multiple "user" roles in a row',
                },
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "role/b: a pydantic literal error on a message's role",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "messages", 0, "role"],
                        "msg": "Input should be 'user' or 'assistant'",
                        "input": "system",
                        "ctx": {"expected": "'user' or 'assistant'"},
                    }
                ]
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "role/c: the body's own `user` refused is the key's",
        response(
            400,
            {
                "error": {
                    "message": "Invalid 'user': string too long. Expected a string with "
                    "maximum length 128, but got a string with length 300 instead.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "string_above_max_length",
                }
            },
            body(temperature=0.2),
        ),
        "drop",
        ("user",),
    ),
    # -- openai__o3_mini_temperature_unsupported_parameter: drop temperature ----------
    (
        "unsupported_parameter/a: Go's validator names the struct field",
        response(
            400,
            {
                "error": "Key: 'ChatCompletionRequest.Temperature' Error:Field "
                "validation for 'Temperature' failed on the 'lte' tag"
            },
            body(temperature=0.2, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    (
        "unsupported_parameter/b: express-validator names the key only by its path",
        response(
            400,
            {
                "message": "Validation failed",
                "errors": [
                    {
                        "type": "field",
                        "value": 0.2,
                        "msg": "Invalid value",
                        "path": "temperature",
                        "location": "body",
                    }
                ],
            },
            body(temperature=0.2, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    (
        "unsupported_parameter/b2: express-validator v6 names it by `param`",
        response(
            400,
            {
                "message": "Validation failed",
                "errors": [
                    {
                        "value": 0.2,
                        "msg": "Invalid value",
                        "param": "temperature",
                        "location": "body",
                    }
                ],
            },
            body(temperature=0.2, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    (
        "unsupported_parameter/c: an unverified organization, relayed without its param",
        response(
            400,
            litellm(f"litellm.BadRequestError: OpenAIException - {ORG_VERIFICATION}", 400),
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    # -- openai__unrecognized_request_argument_thinking: drop thinking ----------------
    (
        "unrecognized/a: Azure's plural list, the key last",
        response(
            400,
            {
                "error": {
                    "message": "Unrecognized request arguments supplied: min_p, top_k, "
                    "reasoning, thinking",
                    "type": "invalid_request_error",
                }
            },
            body(thinking={"type": "disabled"}, reasoning={"effort": "low"}, top_k=5, min_p=0.1),
        ),
        "drop",
        ("thinking", "reasoning", "top_k", "min_p"),
    ),
    (
        "unrecognized/b: Go's encoding/json names the field of its struct",
        response(
            400,
            {
                "error": {
                    "message": "json: cannot unmarshal object into Go struct field "
                    "ChatCompletionRequest.max_tokens of type int",
                    "type": "invalid_request_error",
                }
            },
            body(max_tokens={"value": 5}, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    (
        "unrecognized/c: thinking as the condition of a temperature refusal stays",
        response(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "`temperature` may only be set to 1 when thinking is enabled.",
                },
            },
            body(thinking={"type": "enabled", "budget_tokens": 2048}, temperature=0.2),
        ),
        "drop",
        ("temperature",),
    ),
    # -- openai__web_search_options_named_only_by_param: drop web_search_options ------
    (
        "web_search/a: other words, the param at a field inside the key",
        response(
            400,
            {
                "error": {
                    "message": "The web search tool is unavailable for gpt-4o-mini.",
                    "type": "invalid_request_error",
                    "param": "web_search_options.search_context_size",
                    "code": None,
                }
            },
            body(web_search_options={"search_context_size": "low"}, temperature=0.2),
        ),
        "drop",
        ("web_search_options",),
    ),
    (
        "web_search/b: express-validator v6 writes `param`",
        response(
            400,
            {
                "errors": [
                    {
                        "msg": "Web search options not supported with this model.",
                        "param": "web_search_options",
                        "location": "body",
                    }
                ]
            },
            body(web_search_options={"search_context_size": "low"}, temperature=0.2),
        ),
        "drop",
        ("web_search_options",),
    ),
    (
        "web_search/c: a hosted tool refused by its param drops the tools",
        response(
            400,
            {
                "error": {
                    "message": "Hosted tool 'web_search_preview' is not supported with "
                    "gpt-4o-mini.",
                    "type": "invalid_request_error",
                    "param": "tools",
                    "code": None,
                }
            },
            body(web_search_options={"search_context_size": "low"}, tools=TOOLS),
        ),
        "drop",
        ("tools",),
    ),
    # -- openrouter__429_upstream_rate_limited: backoff -------------------------------
    (
        "upstream_429/a: throttled upstream in other words",
        response(
            429,
            {
                "error": {
                    "code": 429,
                    "message": "Request throttled by upstream provider "
                    "Google. Please retry shortly.",
                }
            },
            body(),
            OPENROUTER,
        ),
        "backoff",
        (),
    ),
    (
        "upstream_429/b: Google's exhausted resource as the upstream's raw string",
        response(
            429,
            gateway_string(
                {
                    "error": {
                        "code": 429,
                        "message": "Resource has been exhausted (e.g. check quota).",
                        "status": "RESOURCE_EXHAUSTED",
                    }
                },
                429,
            ),
            body(),
            OPENROUTER,
        ),
        "backoff",
        (),
    ),
    (
        "upstream_429/c: too few credits for max_tokens is the account's",
        response(
            402,
            {
                "error": {
                    "message": "This request requires more credits, or fewer max_tokens. You "
                    "requested up to 16384 tokens, but can only afford 9000. To increase, "
                    "visit https://openrouter.ai/settings/credits",
                    "code": 402,
                }
            },
            body(max_tokens=16384),
            OPENROUTER,
        ),
        "surface",
        (),
    ),
    # -- openrouter__no_endpoints_support_image_input_404: images ---------------------
    (
        "no_image_endpoints/a: image input refused as not enabled",
        response(
            404,
            {
                "error": {
                    "message": "Image input is not enabled for any endpoint of this model",
                    "code": 404,
                }
            },
            body(images=True),
            OPENROUTER,
        ),
        "images",
        (),
    ),
    (
        "no_image_endpoints/b: LiteLLM's relay of OpenRouter's body",
        response(
            404,
            litellm(
                "litellm.NotFoundError: OpenrouterException - "
                + json.dumps(
                    {
                        "error": {
                            "message": "No endpoints found that support image input",
                            "code": 404,
                        }
                    }
                ),
                404,
            ),
            body(images=True),
            OPENROUTER,
        ),
        "images",
        (),
    ),
    (
        "no_image_endpoints/c: the requested parameters, unnamed, with images in the body",
        response(
            404,
            {
                "error": {
                    "message": "No endpoints found that can handle the requested parameters.",
                    "code": 404,
                }
            },
            body(images=True, top_k=5),
            OPENROUTER,
        ),
        "static",
        (),
    ),
    # -- together__invalid_api_key_401: none ------------------------------------------
    (
        "together_key/a: new-api's invalid token, in Chinese",
        response(
            401,
            {
                "error": {
                    "message": "无效的令牌 (request id: 2025)",
                    "type": "new_api_error",
                    "param": "",
                    "code": "",
                }
            },
            body(),
        ),
        "surface",
        (),
    ),
    (
        "together_key/b: the same body in an in-band frame",
        frame(
            {
                "message": "Invalid API key provided. You can find your API key at "
                "https://api.together.xyz/settings/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            },
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "together_key/c: a key refused only for a parameter's value is the parameter's",
        response(
            403,
            {
                "error": {
                    "message": "You are not allowed to request logprobs from this model",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
            body(logprobs=True, top_logprobs=2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- vllm__extra_forbidden_prompt_logprobs: drop prompt_logprobs ------------------
    (
        "prompt_logprobs/a: the key's words in prose, beside the body's logprobs",
        response(
            400,
            {
                "object": "error",
                "message": "This engine does not support prompt logprobs",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            body(prompt_logprobs=True, logprobs=True),
        ),
        "drop",
        ("prompt_logprobs",),
    ),
    (
        "prompt_logprobs/b: a bare FastAPI detail list",
        response(
            400,
            {
                "detail": [
                    {
                        "type": "extra_forbidden",
                        "loc": ["body", "prompt_logprobs"],
                        "msg": "Extra inputs are not permitted",
                        "input": True,
                    }
                ]
            },
            body(prompt_logprobs=True),
        ),
        "drop",
        ("prompt_logprobs",),
    ),
    (
        "prompt_logprobs/c: the decoder prompt too long for the model",
        response(
            400,
            {
                "object": "error",
                "message": "The decoder prompt (length 9000) is longer "
                "than the maximum model length of 8192. Make sure that `max_model_len` is "
                "no smaller than the number of text tokens.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            body(prompt_logprobs=True),
        ),
        "surface",
        (),
    ),
    # -- vllm__not_a_multimodal_model_none_suffix: images -----------------------------
    (
        "not_multimodal/a: vLLM's zero image limit",
        response(
            400,
            {
                "object": "error",
                "message": "At most 0 image(s) may be provided in one request.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            body(images=True),
        ),
        "images",
        (),
    ),
    (
        "not_multimodal/b: a FastAPI string detail",
        response(400, {"detail": "facebook/opt-125m is not a multimodal model"}, body(images=True)),
        "images",
        (),
    ),
    (
        "not_multimodal/a2: SiliconFlow's model that is no VLM",
        response(
            400,
            {"code": 20015, "message": "The model is not a VLM", "data": None},
            body(images=True),
        ),
        "images",
        (),
    ),
    (
        "not_multimodal/c: images allowed only in the user's messages",
        response(
            400,
            {
                "error": {
                    "message": "Image URLs are only allowed for messages with role 'user', "
                    "but this message with role 'assistant' contains an image URL.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": None,
                }
            },
            body(images=True),
        ),
        "surface",
        (),
    ),
]


@pytest.mark.parametrize(
    ("verdict", "action", "drop"),
    [pytest.param(v, a, d, id=i) for i, v, a, d in VARIANTS],
)
def test_variant(verdict: Verdict, action: str, drop: tuple[str, ...]) -> None:
    assert (verdict.action, verdict.drop) == (action, drop), verdict


# What the mechanisms behind the variants above must not reach.
GUARDS: list[tuple[str, Verdict, str, tuple[str, ...]]] = [
    (
        "a role's sentence is cut, the next sentence still names its key",
        response(
            400,
            {
                "error": {
                    "message": 'roles must alternate between "user" and '
                    '"assistant". Also, `top_k` is not supported.'
                }
            },
            body(top_k=5),
        ),
        "drop",
        ("top_k",),
    ),
    (
        "a validator's item inside a message beside one that names a key",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "messages", 0, "role"],
                        "msg": "Input should be 'user' or 'assistant'",
                        "input": "system",
                    },
                    {
                        "type": "extra_forbidden",
                        "loc": ["body", "top_k"],
                        "msg": "Extra inputs are not permitted",
                        "input": 5,
                    },
                ]
            },
            body(top_k=5),
        ),
        "drop",
        ("top_k",),
    ),
    (
        "parallel tool calls refused keep the tools",
        response(
            400,
            {"error": {"message": "Parallel tool calls are not supported by this model."}},
            body(tools=TOOLS, tool_choice="auto", parallel_tool_calls=True),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    (
        "tool choice in prose is still the tool capability",
        response(
            400,
            {"error": {"message": "Tool choice 'required' is not supported by this model."}},
            body(tools=TOOLS, tool_choice="required"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    (
        "a request header refused at 4xx still surfaces",
        response(
            400,
            {"error": {"message": "Unexpected value(s) context-1m for the anthropic-beta header."}},
            body(temperature=0.2),
        ),
        "surface",
        (),
    ),
    (
        "a per-minute rate limit in plain words still backs off with its prompt words",
        response(
            429,
            {
                "error": {
                    "message": "Input tokens per minute exceeded. Reduce the "
                    "prompt length or try again later."
                }
            },
            body(),
        ),
        "backoff",
        (),
    ),
]


@pytest.mark.parametrize(
    ("verdict", "action", "drop"),
    [pytest.param(v, a, d, id=i) for i, v, a, d in GUARDS],
)
def test_guard(verdict: Verdict, action: str, drop: tuple[str, ...]) -> None:
    assert (verdict.action, verdict.drop) == (action, drop), verdict


_HOSTILE = {
    "quota metric names": "requests_per_minute_" * 3_276,
    "role words": "role " * 13_107,
    "key and numbers": "temperature 0.2 " * 4_096,
    "key and dotted numbers": "temperature" + " 1.1.1.1.1" * 6_553,
    "hyphenated words": "top-" * 16_384,
    "compound words": "prompt logprobs " * 4_096,
    "type roots": "arequest." * 7_281,
    "not a VLM": "not a VLM " * 6_553,
    "模型": "模型" * 32_768,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(temperature=0.1, top_p=0.5, prompt_logprobs=True, logprobs=True, tools=TOOLS)
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p")
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, sent, DEGRADES)), daemon=True
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is a fraction of a second
    assert verdicts
