"""Today's extra rejections in other servers' words.

For each of 87 cases of tests/rejections_extra (every action, every rule family the day
added), one to four paraphrases (202 in all) of the same refusal as another server would
word it:
clauses reordered, synonyms ("unsupported", "not allowed", "is not available for this
model", "cannot be used"), the key quoted otherwise (backticks, double quotes, none,
`body.key`, camelCase), the passive voice, a trailing hint or link, an upper-case code,
another status of the same class (400/422, 429/503), and Chinese where the provider writes
Chinese. Each keeps the original's action, written out beside it. After them, two near
misses per rule family: a refusal of a parameter that happens to use the rule's words, and
must not take the rule's action. All wordings are invented after the servers' formats;
none of these bodies was recorded.

Left out as debatable: "unsupported tool choice 'required'" in prose (the capability or
the one key), `functions` refused with "use 'tools' instead" (a rename whose value has
another shape), "requires a paid subscription" for one key (the account or the key), and
a plain word as a key with no word of a parameter beside it ("stop contains sensitive
words": `stop` or the prompt), written here with the key quoted instead.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxllm.degradation import Verdict, classify
from rxllm.events import ErrorInfo
from tests.test_probe_rejections_7 import (
    DEGRADES,
    TOOLS,
    body,
    frame,
    gateway_string,
    litellm,
    response,
)

FUNCTIONS = [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
STOPS = ["\n\n", "```", "</s>", "<|endoftext|>", "\n#", "\n//", "<a>", "<b>", "<c>"]
SCHEMA = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}


def error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, **fields}}


def vllm(message: str, status: int = 400) -> dict[str, Any]:
    return {"object": "error", "message": message, "type": "BadRequestError", "code": status}


def pydantic(*loc: str | int, msg: str = "Extra inputs are not permitted") -> dict[str, Any]:
    """FastAPI's 422: one pydantic item at `loc` under `body`."""
    return {"detail": [{"type": "extra_forbidden", "loc": ["body", *loc], "msg": msg}]}


def case(
    name: str,
    verdict: Verdict,
    action: str,
    drop: tuple[str, ...] = (),
    rename: dict[str, str] | None = None,
) -> Any:
    return pytest.param(verdict, action, drop, rename, id=name)


VARIANTS = [
    # == drop: a key named and refused =====================================================
    # -- groq__property_verbosity_is_unsupported: drop verbosity ----------------------------
    case(
        "verbosity/a: backticks, 'not supported by this model'",
        response(
            400,
            error("Parameter `verbosity` is not supported by this model."),
            body(verbosity="medium", temperature=0.7),
        ),
        "drop",
        ("verbosity",),
    ),
    case(
        "verbosity/b: 422, a validator's 'field: message' line",
        response(
            422,
            {"detail": "verbosity: unsupported property"},
            body(verbosity="low", temperature=0.7),
        ),
        "drop",
        ("verbosity",),
    ),
    case(
        "verbosity/c: bare word, 'cannot be used', upper-case code",
        response(
            400,
            error(
                "The verbosity parameter cannot be used with this model.",
                code="UNSUPPORTED_PARAMETER",
            ),
            body(verbosity="medium", temperature=0.7),
        ),
        "drop",
        ("verbosity",),
    ),
    case(
        "verbosity/d: double quotes, 'is not allowed'",
        response(400, error('"verbosity" is not allowed'), body(verbosity="high", temperature=0.7)),
        "drop",
        ("verbosity",),
    ),
    # -- openai__metadata_only_allowed_when_store_enabled: drop metadata -------------------
    case(
        "metadata_store/a: 'can only be used when', param",
        response(
            400,
            error("'metadata' can only be used when 'store' is true.", param="metadata"),
            body(metadata={"s": "1"}, store=False),
        ),
        "drop",
        ("metadata",),
    ),
    case(
        "metadata_store/b: 'requires', the condition assigned",
        response(
            400,
            error("The metadata field requires store=true."),
            body(metadata={"s": "1"}, store=False),
        ),
        "drop",
        ("metadata",),
    ),
    case(
        "metadata_store/c: the condition with 'if', both quoted",
        response(
            400,
            error("The `metadata` field is only supported if `store` is set to true."),
            body(metadata={"s": "1"}, store=False),
        ),
        "drop",
        ("metadata",),
    ),
    # -- openai__parallel_tool_calls_only_allowed_when_tools: drop parallel_tool_calls -----
    case(
        "parallel_without_tools/a: 'requires tools'",
        response(
            400,
            error("parallel_tool_calls requires tools to be specified"),
            body(parallel_tool_calls=False, temperature=0.2),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    case(
        "parallel_without_tools/b: vLLM's value error, backticks",
        response(
            400,
            vllm("Value error, `parallel_tool_calls` is only valid when `tools` is provided."),
            body(parallel_tool_calls=False, temperature=0.2),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    case(
        "parallel_without_tools/c: 'must be omitted when no tools'",
        response(
            400,
            error(
                "Invalid value for 'parallel_tool_calls': must be omitted when no tools are given."
            ),
            body(parallel_tool_calls=False, temperature=0.2),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- deepseek__reasoner_does_not_support_this_tool_choice: drop tool_choice ------------
    case(
        "reasoner_tool_choice/a: the value quoted, passive",
        response(
            400,
            error('tool_choice "required" is not supported by deepseek-reasoner'),
            body(tools=TOOLS, tool_choice="required"),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "reasoner_tool_choice/b: 'is not available for'",
        response(
            400,
            error("The tool_choice value 'required' is not available for deepseek-reasoner."),
            body(tools=TOOLS, tool_choice="required"),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "reasoner_tool_choice/c: 422, a location before the colon",
        response(
            422,
            error("`tool_choice`: this value is not supported for this model"),
            body(tools=TOOLS, tool_choice="required"),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- azure-openai__model_does_not_support_logprobs_parameter: drop logprobs ------------
    case(
        "logprobs/a: 'is not available for this model'",
        response(
            400,
            error("logprobs is not available for this model"),
            body(logprobs=True, top_logprobs=2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "logprobs/b: double quotes, 'cannot be used'",
        response(
            400,
            error('The parameter "logprobs" cannot be used with this model.'),
            body(logprobs=True, top_logprobs=2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "logprobs/c: in words, 'log probabilities'",
        response(
            400,
            {"detail": "Log probabilities are not supported for this deployment."},
            body(logprobs=True, top_logprobs=2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "logprobs/d: an upper-case code before the words",
        response(
            400,
            error("LOGPROBS_NOT_SUPPORTED: logprobs unsupported", code="LOGPROBS_NOT_SUPPORTED"),
            body(logprobs=True, top_logprobs=2),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- nvidia__validation_unsupported_parameters_prompt_cache_key: drop prompt_cache_key --
    case(
        "prompt_cache_key/a: camelCase",
        response(
            400,
            error("promptCacheKey is not a supported parameter"),
            body(prompt_cache_key="s-1", temperature=0.6),
        ),
        "drop",
        ("prompt_cache_key",),
    ),
    case(
        "prompt_cache_key/b: FastAPI's 422",
        response(422, pydantic("prompt_cache_key"), body(prompt_cache_key="s-1", temperature=0.6)),
        "drop",
        ("prompt_cache_key",),
    ),
    case(
        "prompt_cache_key/c: 'not allowed', a trailing hint",
        response(
            400,
            error(
                "Parameter not allowed: 'prompt_cache_key'. Remove it and send the request again."
            ),
            body(prompt_cache_key="s-1", temperature=0.6),
        ),
        "drop",
        ("prompt_cache_key",),
    ),
    # -- vllm__value_error_tool_choice_requires_tools_input_echo: drop tool_choice ---------
    case(
        "tool_choice_without_tools/a: reordered",
        response(
            400,
            vllm("Value error, `tools` must be provided when `tool_choice` is set."),
            body(tool_choice="none"),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "tool_choice_without_tools/b: 'cannot be used without'",
        response(400, error("tool_choice cannot be used without tools"), body(tool_choice="none")),
        "drop",
        ("tool_choice",),
    ),
    case(
        "tool_choice_without_tools/c: 422, 'requires a non-empty tools list'",
        response(
            422,
            error("Setting tool_choice requires a non-empty tools list."),
            body(tool_choice="none"),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- runpod-vllm__validation_error_functions_extra_forbidden_location_line: functions --
    case(
        "functions/a: Azure's unrecognized argument",
        response(
            400,
            error("Unrecognized request argument supplied: functions"),
            body(functions=FUNCTIONS, temperature=0.2),
        ),
        "drop",
        ("functions",),
    ),
    case(
        "functions/b: FastAPI's 422",
        response(422, pydantic("functions"), body(functions=FUNCTIONS, temperature=0.2)),
        "drop",
        ("functions",),
    ),
    case(
        "functions/c: 'field: message'",
        response(
            400,
            error("functions: extra fields not permitted"),
            body(functions=FUNCTIONS, temperature=0.2),
        ),
        "drop",
        ("functions",),
    ),
    # -- openai__stop_array_too_long_array_above_max_length: drop stop ---------------------
    case(
        "stop_too_long/a: quoted, 'at most'",
        response(
            400,
            error("'stop' may contain at most 4 sequences, got 9."),
            body(stop=STOPS, max_tokens=256),
        ),
        "drop",
        ("stop",),
    ),
    case(
        "stop_too_long/b: 'stop sequences' in prose",
        response(
            400,
            error("Too many stop sequences (9); the maximum is 4."),
            body(stop=STOPS, max_tokens=256),
        ),
        "drop",
        ("stop",),
    ),
    case(
        "stop_too_long/c: Chinese, 'stop参数'",
        response(400, error("stop参数最多支持4个"), body(stop=STOPS, max_tokens=256)),
        "drop",
        ("stop",),
    ),
    case(
        "stop_too_long/d: upper-case code",
        response(
            400,
            error("Invalid 'stop': expected at most 4 items.", code="ARRAY_ABOVE_MAX_LENGTH"),
            body(stop=STOPS, max_tokens=256),
        ),
        "drop",
        ("stop",),
    ),
    # -- zhipu__stop_colon_at_most_4_stop_words_chinese_via_oneapi: drop stop --------------
    case(
        "zhipu_stop/a: '参数stop'",
        response(400, error("参数stop最多只能有4个停止词"), body(stop=STOPS, temperature=0.2)),
        "drop",
        ("stop",),
    ),
    case(
        "zhipu_stop/b: English, 'field: message'",
        response(
            400, error("stop: at most 4 stop words are allowed"), body(stop=STOPS, temperature=0.2)
        ),
        "drop",
        ("stop",),
    ),
    # -- kimi_k3__top_level_message_invalid_temperature_only_1_allowed: drop temperature ---
    case(
        "kimi_temperature/a: 'must be 1'",
        response(
            400,
            {"message": "temperature must be 1 for this model"},
            body(temperature=0.8, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "kimi_temperature/b: assigned",
        response(
            400,
            error("Only temperature=1 is allowed for kimi-k3."),
            body(temperature=0.8, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "kimi_temperature/c: 'the temperature parameter is fixed'",
        response(
            400,
            error(
                "The temperature parameter is fixed at 1.0 for this model and cannot be changed."
            ),
            body(temperature=0.8, top_p=0.9),
        ),
        "drop",
        ("temperature",),
    ),
    # -- databricks__bad_request_model_does_not_support_the_temperature_parameter ---------
    case(
        "databricks_temperature/a: 'is not supported for model'",
        response(
            400,
            {"error_code": "BAD_REQUEST", "message": "temperature is not supported for model x"},
            body(temperature=0.2, max_tokens=256),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "databricks_temperature/b: 'does not accept a \"temperature\" value'",
        response(
            400,
            error('The model does not accept a "temperature" value.'),
            body(temperature=0.2, max_tokens=256),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "databricks_temperature/c: 'is not allowed'",
        response(
            400,
            error("Setting temperature is not allowed for this model."),
            body(temperature=0.2, max_tokens=256),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "databricks_temperature/d: 422, a hint after",
        response(
            422,
            error("Unsupported parameter: temperature. Reasoning models only use the default."),
            body(temperature=0.2, max_tokens=256),
        ),
        "drop",
        ("temperature",),
    ),
    # -- fastchat__less_than_minimum_of_1_max_tokens_code_40302: drop max_tokens -----------
    case(
        "max_tokens_minimum/a: 'field: message'",
        response(
            400,
            error("max_tokens: 0 is less than the minimum of 1"),
            body(max_tokens=0, temperature=0.7),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_tokens_minimum/b: 'must be >= 1'",
        response(
            400,
            error("Invalid value for max_tokens: must be >= 1."),
            body(max_tokens=0, temperature=0.7),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_tokens_minimum/c: camelCase",
        response(
            400, error("maxTokens must be a positive integer"), body(max_tokens=0, temperature=0.7)
        ),
        "drop",
        ("max_tokens",),
    ),
    # -- rapid_mlx__detail_n_greater_than_1_not_supported: drop n --------------------------
    case(
        "n/a: assigned, 'only'",
        response(400, {"detail": "Only n=1 is supported."}, body(n=2, max_tokens=10)),
        "drop",
        ("n",),
    ),
    case(
        "n/b: the value assigned in parentheses",
        response(400, error("Multiple choices (n=2) are not supported"), body(n=2, max_tokens=10)),
        "drop",
        ("n",),
    ),
    case(
        "n/c: backticks, 'must be 1'",
        response(422, error("The parameter `n` must be 1."), body(n=2, max_tokens=10)),
        "drop",
        ("n",),
    ),
    # -- dashscope__algo_invalid_parameter_model_does_not_support_enable_search -----------
    case(
        "enable_search/a: passive",
        response(
            400,
            error("enable_search is not supported by this model"),
            body(enable_search=True, temperature=0.3),
        ),
        "drop",
        ("enable_search",),
    ),
    case(
        "enable_search/b: DashScope's prefix, 'Parameter ... is unsupported'",
        response(
            400,
            error(
                "<400> InternalError.Algo.InvalidParameter: Parameter enable_search is unsupported."
            ),
            body(enable_search=True, temperature=0.3),
        ),
        "drop",
        ("enable_search",),
    ),
    case(
        "enable_search/c: Chinese",
        response(
            400, error("该模型不支持enable_search参数"), body(enable_search=True, temperature=0.3)
        ),
        "drop",
        ("enable_search",),
    ),
    # -- fireworks__extra_inputs_not_permitted_field_stream_options: drop stream_options ---
    case(
        "stream_options/a: 'field: message'",
        response(
            400,
            error("stream_options: Extra inputs are not permitted"),
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    case(
        "stream_options/b: double quotes, 'Unknown field'",
        response(
            400,
            error('Unknown field "stream_options"'),
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    case(
        "stream_options/c: camelCase",
        response(
            400,
            error("streamOptions is not a recognized parameter"),
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    case(
        "stream_options/d: Azure AI's extra parameter, singular",
        response(
            400,
            {
                "detail": "Extra parameter 'stream_options' is not allowed. Set extra-parameters "
                "to 'pass-through' to pass it to the model."
            },
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    # -- mistral__422_extra_forbidden_nested_stream_options_include_usage -----------------
    case(
        "nested_stream_options/a: the dotted path in text",
        response(
            422,
            error("stream_options.include_usage: Extra inputs are not permitted"),
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    case(
        "nested_stream_options/b: `body.` rooted path",
        response(
            400,
            error("property 'body.stream_options.include_usage' is unsupported"),
            body(stream_options={"include_usage": True}, temperature=0.2),
        ),
        "drop",
        ("stream_options",),
    ),
    # -- freetoken__logit_bias_is_not_supported: drop logit_bias --------------------------
    case(
        "logit_bias/a: 'field: unsupported'",
        response(
            400, error("logit_bias: unsupported"), body(logit_bias={"1": -100}, temperature=0.2)
        ),
        "drop",
        ("logit_bias",),
    ),
    case(
        "logit_bias/b: camelCase, 'cannot be used'",
        response(
            400,
            error("The logitBias option cannot be used with this server."),
            body(logit_bias={"1": -100}, temperature=0.2),
        ),
        "drop",
        ("logit_bias",),
    ),
    case(
        "logit_bias/c: 422, in words",
        response(
            422,
            {"detail": "logit bias is not supported"},
            body(logit_bias={"1": -100}, temperature=0.2),
        ),
        "drop",
        ("logit_bias",),
    ),
    # -- freetoken__thinking_type_must_be_enabled_or_disabled_got_adaptive: drop thinking --
    case(
        "thinking_type/a: 'Invalid value for thinking.type'",
        response(
            400,
            error("Invalid value for thinking.type: 'adaptive'. Expected 'enabled' or 'disabled'."),
            body(thinking={"type": "adaptive"}, temperature=0.2),
        ),
        "drop",
        ("thinking",),
    ),
    case(
        "thinking_type/b: backticks, the value 'is not supported'",
        response(
            400,
            error("`thinking`: type 'adaptive' is not supported"),
            body(thinking={"type": "adaptive"}, temperature=0.2),
        ),
        "drop",
        ("thinking",),
    ),
    # -- nativ__sse_error_string_thinking_budget_not_supported_with_speculative_decoding --
    case(
        "thinking_budget/a: in-band, 'cannot be used while'",
        frame(
            {"error": "thinking_budget cannot be used while speculative decoding is enabled"},
            body(thinking_budget=1024, reasoning_effort="low", temperature=0.2),
        ),
        "drop",
        ("thinking_budget",),
    ),
    case(
        "thinking_budget/b: in words, 'is unsupported'",
        response(
            400,
            error("Thinking budget is unsupported with speculative decoding."),
            body(thinking_budget=1024, reasoning_effort="low", temperature=0.2),
        ),
        "drop",
        ("thinking_budget",),
    ),
    case(
        "thinking_budget/c: in words, 'is not supported'",
        frame(
            {"error": "the thinking budget is not supported with speculative decoding"},
            body(thinking_budget=1024, reasoning_effort="low", temperature=0.2),
        ),
        "drop",
        ("thinking_budget",),
    ),
    # -- vllm__extra_forbidden_bad_words_repr_message: drop bad_words ---------------------
    case(
        "bad_words/a: vLLM's pydantic text",
        response(
            400,
            vllm(
                "1 validation error for ChatCompletionRequest\nbad_words\n  Extra inputs are not "
                "permitted [type=extra_forbidden, input_value=['x'], input_type=list]"
            ),
            body(bad_words=["x"], temperature=0.2),
        ),
        "drop",
        ("bad_words",),
    ),
    case(
        "bad_words/b: 'Unknown parameter', in-band",
        frame(error("Unknown parameter: bad_words"), body(bad_words=["x"], temperature=0.2)),
        "drop",
        ("bad_words",),
    ),
    # -- 9router__nested_openai_unsupported_max_tokens_reset_after_30s: rename -------------
    case(
        "max_tokens_rename/a: reordered",
        response(
            400,
            error(
                "'max_tokens' is not supported with this model; "
                "use 'max_completion_tokens' instead."
            ),
            body(max_tokens=1024, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
        {"max_tokens": "max_completion_tokens"},
    ),
    case(
        "max_tokens_rename/b: 'deprecated', unquoted",
        response(
            400,
            error(
                "max_tokens is deprecated for this model. Please use max_completion_tokens instead."
            ),
            body(max_tokens=1024, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
        {"max_tokens": "max_completion_tokens"},
    ),
    case(
        "max_tokens_rename/c: LiteLLM's frame",
        frame(
            litellm(
                "litellm.BadRequestError: OpenAIException - Unsupported parameter: 'max_tokens' "
                "is not supported with this model. Use 'max_completion_tokens' instead.",
                400,
            ),
            body(max_tokens=1024, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
        {"max_tokens": "max_completion_tokens"},
    ),
    # -- freetoken__response_format_json_schema_no_constrained_decoding --------------------
    case(
        "response_format/a: 'json_schema' quoted, 'is unavailable'",
        response(
            400,
            error("response_format type 'json_schema' is unavailable on this server"),
            body(response_format=SCHEMA, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "response_format/b: in words, 'structured output'",
        response(
            400,
            error("Structured output is not supported (no constrained decoding)."),
            body(response_format=SCHEMA, temperature=0.2),
        ),
        "drop",
        ("response_format",),
    ),
    # -- ik_llamacpp__500_response_format_type_must_be_text_or_json_object ----------------
    case(
        "ik_response_format/a: 500, 'field: message'",
        response(
            500,
            error("response_format: json_schema is not supported", type="server_error"),
            body(response_format=SCHEMA, temperature=0.3),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "ik_response_format/b: 400, allowed values listed",
        response(
            400,
            error(
                "Unsupported response_format type 'json_schema'. Allowed: 'text', 'json_object'."
            ),
            body(response_format=SCHEMA, temperature=0.3),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "ik_response_format/c: 500, 'JSON schema output' in words",
        response(
            500,
            error("JSON schema output is not supported by this server", type="server_error"),
            body(response_format=SCHEMA, temperature=0.3),
        ),
        "drop",
        ("response_format",),
    ),
    # == drop: a capability refused ========================================================
    # -- azure-openai__functions_are_not_supported_for_this_api_version: drop tools --------
    case(
        "azure_functions/a: 'function calling is not available'",
        response(
            400,
            error("Function calling is not available for this API version."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.5),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "azure_functions/b: 'does not support functions'",
        response(
            400,
            error("This model version does not support functions."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.5),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "azure_functions/c: 'Tools cannot be used', a hint",
        response(
            400,
            error("Tools cannot be used with the current api-version; upgrade to 2024-02-01."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.5),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- dashscope__algo_invalid_parameter_tool_call_is_not_supported: drop tools ---------
    case(
        "dashscope_tool_call/a: 'Tool calls are unsupported'",
        response(
            400,
            error("Tool calls are unsupported for this model."),
            body(tools=TOOLS, temperature=0.7),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "dashscope_tool_call/b: Chinese, 'does not support tool calling'",
        response(400, error("该模型不支持工具调用"), body(tools=TOOLS, temperature=0.7)),
        "drop",
        ("tools",),
    ),
    case(
        "dashscope_tool_call/c: Chinese, 'function calling'",
        response(
            400,
            {"code": "InvalidParameter", "message": "当前模型暂不支持函数调用(function call)"},
            body(tools=TOOLS, temperature=0.7),
        ),
        "drop",
        ("tools",),
    ),
    # -- julep_litellm__tools_is_not_supported_in_this_model_double_relay: drop tools -----
    case(
        "julep_tools/a: LiteLLM's in-band frame, 'The tools parameter'",
        frame(
            litellm(
                "litellm.BadRequestError: OpenAIException - The tools parameter is not supported "
                "by this model.",
                400,
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.7),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "julep_tools/b: 'does not support tools'",
        response(
            400,
            error("Model gpt-5-chat-latest does not support tools."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.7),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "julep_tools/c: 'are not available for this model', a doc link",
        response(
            400,
            error(
                "Tools are not available for this model. See "
                "https://platform.openai.com/docs/guides/function-calling"
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.7),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- litellm__gradientai_does_not_support_parameter_tools_drop_params: drop tools -----
    case(
        "litellm_unsupported_params/a: a list of parameters",
        response(
            400,
            litellm(
                "litellm.UnsupportedParamsError: gradient_ai does not support parameters: "
                "['tools'], for model=openai-gpt-4o. To drop these, set "
                "`litellm.drop_params=True`.",
                400,
            ),
            body(tools=TOOLS, temperature=0.3),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "litellm_unsupported_params/b: in-band",
        frame(
            litellm(
                'litellm.UnsupportedParamsError: GradientAI does not support parameter "tools".',
                400,
            ),
            body(tools=TOOLS, temperature=0.3),
        ),
        "drop",
        ("tools",),
    ),
    # -- litellm__hosted_vllm_auto_tool_choice_requires_server_flags: drop tools ----------
    case(
        "auto_tool_choice/a: vLLM's own words",
        response(
            400,
            vllm('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
            body(tools=TOOLS, tool_choice="auto", top_p=0.9),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "auto_tool_choice/b: 'not enabled on this server'",
        response(
            400,
            error("Automatic tool choice is not enabled on this server."),
            body(tools=TOOLS, tool_choice="auto", top_p=0.9),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- ollama__native_error_string_does_not_support_tools_hf_model: drop tools ----------
    case(
        "ollama_tools/a: the model quoted",
        response(400, {"error": 'model "qwen3:0.6b" does not support tools'}, body(tools=TOOLS)),
        "drop",
        ("tools",),
    ),
    case(
        "ollama_tools/b: passive",
        response(400, {"error": "tools are not supported by qwen3:0.6b"}, body(tools=TOOLS)),
        "drop",
        ("tools",),
    ),
    case(
        "ollama_tools/c: 500, 'tool calling'",
        response(
            500,
            error("this model does not support tool calling", type="api_error"),
            body(tools=TOOLS),
        ),
        "drop",
        ("tools",),
    ),
    # -- openai__function_tools_with_reasoning_effort_param_reasoning_effort --------------
    case(
        "tools_with_effort/a: 'cannot be combined with'",
        response(
            400,
            error(
                "reasoning_effort cannot be combined with function tools for this model.",
                param="reasoning_effort",
            ),
            body(tools=TOOLS, reasoning_effort="high", temperature=1),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "tools_with_effort/b: 'together with'",
        response(
            400,
            error(
                "Function tools are not supported together with reasoning_effort on this model.",
                param="reasoning_effort",
            ),
            body(tools=TOOLS, reasoning_effort="high", temperature=1),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- openrouter__novita_raw_model_features_function_calling_not_support ---------------
    case(
        "novita/a: the upstream in metadata.raw",
        response(
            400,
            gateway_string(
                {"code": 400, "message": "function calling is not supported by model"}, 400
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "novita/b: 'function_call unsupported'",
        response(
            400,
            error("model features: function_call unsupported"),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- qwen_openai_api__detail_function_calling_not_yet_implemented_for_stream ----------
    case(
        "qwen_stream_functions/a: 'is not supported in stream mode'",
        response(
            400,
            {"detail": "Function calling is not supported in stream mode."},
            body(functions=FUNCTIONS, temperature=0.5),
        ),
        "drop",
        ("functions",),
    ),
    case(
        "qwen_stream_functions/b: 'functions are not implemented'",
        response(
            400,
            {
                "detail": "Invalid request: functions are not implemented for streaming "
                "requests yet."
            },
            body(functions=FUNCTIONS, temperature=0.5),
        ),
        "drop",
        ("functions",),
    ),
    # -- truefoundry_deepinfra__405_tool_calling_is_not_supported_for_model ---------------
    case(
        "deepinfra_tools/a: 405, 'does not support function calling'",
        response(
            405,
            error("Model mistralai/Mistral-Small does not support function calling"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "deepinfra_tools/b: 400, 'Tool use is unsupported'",
        response(400, error("Tool use is unsupported for this model."), body(tools=TOOLS)),
        "drop",
        ("tools",),
    ),
    # -- xinference__detail_only_listed_models_support_tool_calls: drop tools -------------
    case(
        "xinference/a: 'are only supported by [...]'",
        response(
            400,
            {"detail": "Tool calls are only supported by ['qwen-chat', 'glm4-chat']."},
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "xinference/b: 'does not support tool calls', the list after",
        response(
            400,
            {"detail": "Model 'llama-2' does not support tool calls. Supported: ['qwen-chat']"},
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    # == drop: a tool's definition refused =================================================
    # -- databricks__parameters_required_property_for_function_in_parameter_tools ---------
    case(
        "tool_parameters_required/a: the path before",
        response(
            400,
            error("tools[0].function: 'parameters' is a required property"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "tool_parameters_required/b: 'Missing ... in function definition'",
        response(
            400,
            error("Missing \"parameters\" in function definition of tool 'get_weather'"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    # -- perplexity__tool_parameters_must_be_a_json_object: drop tools --------------------
    case(
        "tool_parameters_object/a: 'Function parameters must be'",
        response(
            400,
            error("Function parameters must be a valid JSON Schema object."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "tool_parameters_object/b: 422, 'tool definition invalid'",
        response(
            422,
            error("tool definition invalid: parameters is not an object"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "tool_parameters_object/c: 'Invalid tool schema', upper-case code",
        response(
            400,
            error("Invalid tool schema: expected type object", code="INVALID_TOOL_SCHEMA"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    # -- deepseek__invalid_schema_for_function_type_null: drop tools ----------------------
    case(
        "function_schema/a: 'Schema of function ... is invalid'",
        response(
            400,
            error("Schema of function 'agent_manager' is invalid: type must be \"object\"."),
            body(tools=TOOLS, temperature=0.2, max_tokens=512),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "function_schema/b: 'The JSON schema for tool ... is invalid'",
        response(
            400,
            error("The JSON schema for tool 'agent_manager' is invalid (type null)."),
            body(tools=TOOLS, temperature=0.2, max_tokens=512),
        ),
        "drop",
        ("tools",),
    ),
    # -- groq__invalid_json_schema_for_tool_param_with_tool_name: drop tools --------------
    case(
        "groq_tool_schema/a: the path as param",
        response(
            400,
            error(
                "'required' present but 'properties' missing",
                param="tools[3].function.parameters",
            ),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "groq_tool_schema/b: 'Invalid JSON Schema in tool'",
        response(
            400,
            error("Invalid JSON Schema in tool 'view_agent_graph': properties missing"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    # -- minimax__function_parameters_is_empty_2013: drop tools ---------------------------
    case(
        "minimax_empty_parameters/a: 'tool parameters cannot be empty'",
        response(
            400,
            error("invalid params, tool parameters cannot be empty (2013)"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "minimax_empty_parameters/b: a dotted path",
        response(
            400, error("function.parameters must not be empty"), body(tools=TOOLS, temperature=0.2)
        ),
        "drop",
        ("tools",),
    ),
    # -- omniroute_relay__missing_required_parameter_tools_0_name: drop tools -------------
    case(
        "tool_name_missing/a: the nested path",
        response(
            400,
            error("Missing required parameter: 'tools[0].function.name'."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "tool_name_missing/b: a dotted path, 'Field required'",
        response(422, error("tools.0.name: Field required"), body(tools=TOOLS, temperature=0.2)),
        "drop",
        ("tools",),
    ),
    # == surface: moderation ===============================================================
    # -- deepseek__content_exists_risk: none ----------------------------------------------
    case(
        "content_risk/a: 'Content risk detected'",
        response(
            400,
            error("Content risk detected in the input."),
            body(temperature=0.7, max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "content_risk/b: upper-case code, 'contains sensitive content'",
        response(
            400,
            error("The request contains sensitive content.", code="CONTENT_RISK"),
            body(temperature=0.7, max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "content_risk/c: Chinese",
        response(400, {"detail": "内容存在风险"}, body(temperature=0.7, max_tokens=4096)),
        "surface",
    ),
    # -- dashscope__data_inspection_failed_inappropriate_content: none --------------------
    case(
        "inappropriate/a: 'may include inappropriate content', camel code",
        response(
            400,
            error("The input may include inappropriate content.", code="DataInspectionFailed"),
            body(temperature=0.5, enable_search=False),
        ),
        "surface",
    ),
    case(
        "inappropriate/b: the output flagged",
        response(
            400,
            error("Output data may contain harmful content."),
            body(temperature=0.5, enable_search=False),
        ),
        "surface",
    ),
    case(
        "inappropriate/c: Chinese, '不当内容'",
        response(
            400, error("输入数据可能包含不当内容"), body(temperature=0.5, enable_search=False)
        ),
        "surface",
    ),
    # -- zhipu__1301_unsafe_or_sensitive_content_chinese: none ----------------------------
    case(
        "zhipu_unsafe/a: English",
        response(
            400,
            error(
                "The system detected that the input or generated content may contain unsafe or "
                "sensitive content.",
                code="1301",
            ),
            body(temperature=0.6, max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "zhipu_unsafe/b: other Chinese words",
        response(
            400,
            error("输入内容包含违规信息 请修改后重试", code="1301"),
            body(temperature=0.6, max_tokens=1024),
        ),
        "surface",
    ),
    # == surface: size =====================================================================
    # -- zhipu__1261_prompt_exceeds_max_length: none --------------------------------------
    case(
        "prompt_length/a: 'longer than the maximum allowed length'",
        response(
            400,
            error("The prompt is longer than the maximum allowed length.", code="1261"),
            body(max_tokens=4096, temperature=0.6),
        ),
        "surface",
    ),
    case(
        "prompt_length/b: Chinese",
        response(
            400, error("输入长度超过限制", code="1261"), body(max_tokens=4096, temperature=0.6)
        ),
        "surface",
    ),
    case(
        "prompt_length/c: 'Input exceeds the maximum length'",
        response(
            400, error("Input exceeds the maximum length."), body(max_tokens=4096, temperature=0.6)
        ),
        "surface",
    ),
    # -- openai-compatible-proxy__sse_context_length_exceeded_uppercase_code: none -------
    case(
        "context_exceeded/a: 'context window', upper-case code",
        frame(
            error("context window exceeded", code="CONTEXT_WINDOW_EXCEEDED"), body(max_tokens=4096)
        ),
        "surface",
    ),
    case(
        "context_exceeded/b: 'Too many tokens in the prompt'",
        frame(
            error("Too many tokens in the prompt", code="PROMPT_TOO_LONG"), body(max_tokens=4096)
        ),
        "surface",
    ),
    case(
        "context_exceeded/c: 400, OpenAI's older words",
        response(
            400,
            error(
                "This model's maximum context length is 32768 tokens. However, your messages "
                "resulted in 40000 tokens."
            ),
            body(max_tokens=4096),
        ),
        "surface",
    ),
    # -- github-models__413_tokens_limit_reached_request_body_too_large: none ------------
    case(
        "body_too_large/a: 413's reason phrase only",
        response(413, error("Payload Too Large"), body(temperature=0.7)),
        "surface",
    ),
    case(
        "body_too_large/b: 400, 'Request entity too large'",
        response(
            400,
            error("Request entity too large: max 8000 tokens for gpt-4o."),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # == surface: the account ==============================================================
    # -- groq__organization_restricted_via_oneapi: none -----------------------------------
    case(
        "org_restricted/a: 'suspended', upper-case code",
        response(
            400,
            error("Your organization has been suspended. Contact support.", code="ORG_SUSPENDED"),
            body(temperature=0.5),
        ),
        "surface",
    ),
    case(
        "org_restricted/b: 'is restricted;'",
        response(
            400,
            error("This organization is restricted; please reach out to support."),
            body(temperature=0.5),
        ),
        "surface",
    ),
    # -- anthropic__specified_api_usage_limits_regain_access: none ------------------------
    case(
        "usage_limits/a: 'usage limit has been reached'",
        response(
            400,
            error("Your API usage limit has been reached; access resumes on 2026-04-01."),
            body(max_tokens=8192, temperature=1),
        ),
        "surface",
    ),
    case(
        "usage_limits/b: 'spend limit reached'",
        response(
            400, error("Monthly spend limit reached for this workspace."), body(max_tokens=8192)
        ),
        "surface",
    ),
    # -- openrouter__402_requires_more_credits_or_fewer_max_tokens: none -----------------
    case(
        "credits/a: 400, 'Insufficient credits', a key named",
        response(
            400,
            error(
                "Insufficient credits: this request needs 32000 tokens but your balance covers "
                "27342. Lower max_tokens or add credits."
            ),
            body(max_tokens=32000),
        ),
        "surface",
    ),
    case(
        "credits/b: 402, no words of the account",
        response(
            402, error("Lower max_tokens to 27342 to afford this request."), body(max_tokens=32000)
        ),
        "surface",
    ),
    # -- openrouter__404_no_endpoints_matching_data_policy: none -------------------------
    case(
        "data_policy/a: 'your privacy settings'",
        response(
            404,
            error("No endpoints available that match your privacy settings."),
            body(temperature=0.2, top_p=0.9),
        ),
        "surface",
    ),
    case(
        "data_policy/b: 'given your data policy'",
        response(
            404,
            error(
                "No allowed providers are available for the selected model given your data policy."
            ),
            body(temperature=0.2, top_p=0.9),
        ),
        "surface",
    ),
    # -- oneapi__403_token_not_allowed_to_use_model_chinese: none ------------------------
    case(
        "token_no_right/a: other Chinese words",
        response(403, error("该令牌没有权限访问模型 qwen2"), body(temperature=0.3, max_tokens=512)),
        "surface",
    ),
    case(
        "token_no_right/b: English",
        response(
            403,
            error("This token is not allowed to use model qwen2"),
            body(temperature=0.3, max_tokens=512),
        ),
        "surface",
    ),
    # == surface: the conversation =========================================================
    # -- hebo-gateway__sse_content_must_be_a_string_upstream_bad_request: none -----------
    case(
        "content_string/a: in-band, a dotted path",
        frame(error("messages.0.content: expected string, received array"), body(temperature=0.4)),
        "surface",
    ),
    case(
        "content_string/b: 'Message content must be a string'",
        response(400, error("Message content must be a string"), body(temperature=0.4)),
        "surface",
    ),
    # -- llamacpp__jinja_system_message_must_be_at_the_beginning_400: none ---------------
    case(
        "system_first/a: 'must be the first message'",
        response(400, error("The system message must be the first message."), body(top_p=0.95)),
        "surface",
    ),
    case(
        "system_first/b: 500, 'system prompt must come first'",
        response(
            500,
            error("Jinja Exception: system prompt must come first", type="server_error"),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # -- deepseek__last_message_must_be_user_or_prefix_mode: none ------------------------
    case(
        "last_message/a: 'must have role'",
        response(
            400,
            error("The final message must have role 'user'."),
            body(max_completion_tokens=5000),
        ),
        "surface",
    ),
    case(
        "last_message/b: 'Last message must be from the user'",
        response(
            400,
            error("Last message must be from the user or be an assistant prefix."),
            body(max_completion_tokens=5000),
        ),
        "surface",
    ),
    # -- gemini__single_turn_requests_end_with_user_role_status_name: none ---------------
    case(
        "single_turn/a: 'must end with a user turn'",
        response(
            400,
            error("Single-turn requests must end with a user turn.", status="INVALID_ARGUMENT"),
            body(temperature=0.5),
        ),
        "surface",
    ),
    case(
        "single_turn/b: 'role field'",
        response(
            400,
            error("The last content's role must be user, or its role field empty."),
            body(temperature=0.5),
        ),
        "surface",
    ),
    # -- azure_ai_ai21__422_error_list_role_literal_and_extra_inputs: none ---------------
    case(
        "role_literal/a: 'role must be one of'",
        response(422, {"detail": "role must be one of 'system', 'user', 'assistant'"}, body()),
        "surface",
    ),
    # -- minimax__invalid_function_arguments_json_string_tool_call_id: none --------------
    case(
        "call_arguments/a: 'tool call arguments are not valid JSON'",
        response(
            400,
            error("invalid params, tool call arguments are not valid JSON, tool_call_id: call_1"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # -- groq__sse_tool_call_validation_failed_parameters_for_tool: none -----------------
    case(
        "call_validation/a: 'arguments for tool ... do not match'",
        frame(
            error(
                "tool call validation failed: arguments for tool web_search do not match "
                "its schema",
                code="tool_use_failed",
            ),
            body(tools=TOOLS, temperature=0.2),
        ),
        "surface",
    ),
    # == surface: a never-dropped key, the model, the endpoint =============================
    # -- openai__requires_audio_modality_param_model: none --------------------------------
    case(
        "audio_only/a: param model",
        response(
            400,
            error("This model only accepts audio input or output.", param="model"),
            body(temperature=0.5),
        ),
        "surface",
    ),
    case(
        "audio_only/b: upper-case code",
        response(
            400,
            error(
                "Audio modality is required for this model.", param="model", code="INVALID_VALUE"
            ),
            body(temperature=0.5),
        ),
        "surface",
    ),
    # -- openai__o1_stream_does_not_support_true_param_stream: none ----------------------
    case(
        "stream_true/a: param stream",
        response(
            400,
            error("Streaming is not supported for this model.", param="stream"),
            body(temperature=1, max_completion_tokens=512),
        ),
        "surface",
    ),
    case(
        "stream_true/b: quoted, no param",
        response(
            400,
            error("Unsupported value: 'stream' must be false for o1."),
            body(temperature=1, max_completion_tokens=512),
        ),
        "surface",
    ),
    case(
        "stream_true/c: double quotes",
        response(
            400,
            error('"stream": true is not supported with this model'),
            body(temperature=1, max_completion_tokens=512),
        ),
        "surface",
    ),
    # -- octopus_relay__unsupported_model_bad_response_status_code: none -----------------
    case(
        "unsupported_model/a: 'Model ... is not supported'",
        response(400, error("Model 'deepseek-r1' is not supported."), body(temperature=0.6)),
        "surface",
    ),
    case(
        "unsupported_model/b: 'is unavailable'",
        response(
            400, error("The requested model deepseek-r1 is unavailable."), body(temperature=0.6)
        ),
        "surface",
    ),
    case(
        "unsupported_model/c: double quotes",
        response(400, error('unsupported model "deepseek-r1"'), body(temperature=0.6)),
        "surface",
    ),
    # -- perplexity__invalid_model_type_invalid_model: none ------------------------------
    case(
        "invalid_model/a: 'is not a valid model'",
        response(400, error("Model 'sonar-x' is not a valid model."), body(top_p=0.9)),
        "surface",
    ),
    case(
        "invalid_model/b: upper-case code",
        response(400, error("perplexity/sonar", code="INVALID_MODEL"), body(top_p=0.9)),
        "surface",
    ),
    # -- gemini_code_assist__list_envelope_no_access_or_model_name_invalid: none --------
    case(
        "model_name_invalid/a: 'is not valid'",
        response(
            400,
            error("The model name is not valid or you lack access to it."),
            body(temperature=0.7),
        ),
        "surface",
    ),
    case(
        "model_name_invalid/b: 'was not found'",
        response(
            400,
            error("Model 'gemini-9' was not found, or your project does not have access."),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # -- cloudflare_ai_gateway__2008_invalid_provider_compat: none -----------------------
    case(
        "invalid_provider/a: 'Unknown provider'",
        response(
            400,
            {"success": False, "errors": [{"code": 2008, "message": "Unknown provider"}]},
            body(),
        ),
        "surface",
    ),
    # -- truefoundry_openai__404_not_a_chat_model_gateway_envelope: none -----------------
    case(
        "not_chat/a: 'use the completions endpoint'",
        response(
            404,
            error("gpt-3.5-turbo-instruct is not a chat model; use the completions endpoint."),
            body(max_tokens=64),
        ),
        "surface",
    ),
    case(
        "not_chat/b: 400, 'only supported in v1/completions'",
        response(
            400, error("This model is only supported in v1/completions."), body(max_tokens=64)
        ),
        "surface",
    ),
    # -- databricks__model_only_supports_the_responses_api_use_serving_endpoints ---------
    case(
        "responses_only/a: 'only be served through the Responses API'",
        response(
            400,
            error("This model can only be served through the Responses API."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "responses_only/b: 'call /v1/responses instead'",
        response(
            400,
            error("Chat Completions are not supported for this model; call /v1/responses instead."),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # == backoff ===========================================================================
    # -- siliconflow__429_rejected_due_to_rate_limiting_tpm: backoff ---------------------
    case(
        "tpm/a: 429, 'Tokens per minute'",
        response(429, {"message": "Tokens per minute limit exceeded."}, body(max_tokens=4096)),
        "backoff",
    ),
    case(
        "tpm/b: in-band, no status, 'TPM'",
        frame(error("TPM limit reached, request rejected"), body(max_tokens=4096)),
        "backoff",
    ),
    case(
        "tpm/c: 503, 'slow down'",
        response(
            503, error("Too many tokens per minute, please slow down."), body(max_tokens=4096)
        ),
        "backoff",
    ),
    # -- cerebras__429_requests_per_minute_request_quota_exceeded: backoff ---------------
    case(
        "rpm_quota/a: 'quota' with a window, upper-case code",
        response(
            429,
            error(
                "Request quota exceeded: too many requests per minute.",
                code="REQUEST_QUOTA_EXCEEDED",
            ),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "rpm_quota/b: in-band, 'RPM quota'",
        frame(
            error("RPM quota exhausted for this key", code="quota_exceeded"), body(temperature=0.2)
        ),
        "backoff",
    ),
    # -- anthropic__429_rate_limit_error_input_tokens_per_minute_openai_compat ------------
    case(
        "per_minute_shorten/a: 'Shorten the prompt or retry later'",
        response(
            429,
            error(
                "Rate limit: 20,000 input tokens per minute exceeded. Shorten the prompt or retry "
                "later."
            ),
            body(max_tokens=8192, temperature=0.5),
        ),
        "backoff",
    ),
    # -- oneapi__503_no_available_channel_for_model_in_group: backoff --------------------
    case(
        "no_channel/a: other Chinese words",
        response(
            503, error("当前分组 default 下模型 gpt-4o-mini 暂无可用渠道"), body(max_tokens=1024)
        ),
        "backoff",
    ),
    case(
        "no_channel/b: 500, English",
        response(
            500,
            error("No available channels for model gpt-4o-mini under group default"),
            body(max_tokens=1024),
        ),
        "backoff",
    ),
    # -- coze__503_code_50508_system_too_busy_try_again_later: backoff -------------------
    case(
        "too_busy/a: 500, 'overloaded ... retry shortly'",
        response(
            500,
            error("The system is overloaded right now; please retry shortly."),
            body(temperature=0.7),
        ),
        "backoff",
    ),
    case(
        "too_busy/b: in-band, 'busy'",
        frame(error("Service is busy, try again in a moment"), body(temperature=0.7)),
        "backoff",
    ),
    # -- hf_inference__503_model_currently_loading_estimated_time: backoff ---------------
    case(
        "loading/a: in-band, 'still being loaded'",
        frame({"error": "Model is still being loaded, please wait"}, body(temperature=0.2)),
        "backoff",
    ),
    case(
        "loading/b: 400 with the words",
        response(400, {"error": "model is currently loading"}, body(temperature=0.2)),
        "backoff",
    ),
    # -- freetoken__503_server_unavailable_cache_rebuild_in_progress: backoff ------------
    case(
        "unavailable/a: in-band, 'temporarily unavailable'",
        frame({"error": "Service temporarily unavailable: warming up"}, body(temperature=0.2)),
        "backoff",
    ),
    # -- chatgpt_proxy__429_detail_only_one_message_at_a_time_wait_one_minute -------------
    case(
        "one_at_a_time/a: in-band, 'wait a few seconds'",
        frame(
            {"error": "Only one message at a time; please wait a few seconds"},
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- openai__429_requests_per_min_current_30_no_wait_billing_link: backoff -----------
    case(
        "rpm_billing/a: 429, a payment method",
        response(
            429,
            error(
                "Rate limit reached on requests per min. Add a payment method to increase "
                "your limit.",
                type="requests",
            ),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "rpm_billing/b: in-band, no status, the billing page",
        frame(
            error(
                "Rate limit reached on requests per min (RPM). Visit "
                "https://platform.openai.com/account/billing to add a payment method."
            ),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # == images ============================================================================
    # -- copilot__missing_copilot_vision_request_header_for_vision_requests: images -------
    case(
        "vision_header/a: 'is required for image input'",
        response(
            400,
            error("Copilot-Vision-Request header is required for image input"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "vision_header/b: 'Missing header ... for image requests'",
        response(
            400,
            error("Missing header Copilot-Vision-Request for image requests"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- freetoken__unsupported_content_part_type_for_text_only_server: images ------------
    case(
        "text_only_server/a: 'is not supported; text-only'",
        response(
            400,
            error("Content part type 'image_url' is not supported; this server is text-only."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "text_only_server/b: 'accepts only text content parts'",
        response(
            400,
            error("This endpoint accepts only text content parts."),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "text_only_server/c: 'image_url parts are unsupported'",
        response(422, error("image_url parts are unsupported"), body(True, temperature=0.2)),
        "images",
    ),
    # -- opencode_go__server_error_type_no_endpoints_support_image_input: images ----------
    case(
        "no_image_endpoints/a: 'No providers available that accept image input'",
        response(
            400,
            error(
                "Upstream request failed: [404] No providers available that accept image input",
                type="server_error",
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "no_image_endpoints/b: 'No endpoints found supporting image inputs'",
        response(404, error("No endpoints found supporting image inputs."), body(True)),
        "images",
    ),
    # -- opencode_go__upstream_request_failed_model_does_not_support_image_inputs --------
    case(
        "model_no_images/a: 'Images are not supported by this model'",
        response(400, error("Images are not supported by this model."), body(True)),
        "images",
    ),
    case(
        "model_no_images/b: 'cannot process image content'",
        response(400, error("This model cannot process image content."), body(True)),
        "images",
    ),
    case(
        "model_no_images/c: 'is not available for this model'",
        response(400, error("Image input is not available for this model."), body(True)),
        "images",
    ),
    # -- opencode_zen__upstream_unknown_variant_image_url_messages_408: images ------------
    case(
        "unknown_variant/a: serde's words at another path",
        response(
            422,
            error(
                "Failed to deserialize the JSON body into the target type: messages[0].content[1]:"
                " unknown variant `image_url`, expected `text`"
            ),
            body(True),
        ),
        "images",
    ),
    # -- llamacpp__500_failed_to_parse_messages_unsupported_content_part_type_image_url ---
    case(
        "llamacpp_image_url/a: 500, the part quoted",
        response(
            500,
            error('Unsupported content part type: "image_url"', type="server_error"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    case(
        "llamacpp_image_url/b: 500, 'is not supported by this server'",
        response(
            500,
            error("image_url content is not supported by this server", type="server_error"),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- tinker__validation_errors_list_textcontentpart_input_should_be_text: images ------
    case(
        "text_part_only/a: FastAPI's 422 at the part's type",
        response(
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "messages", 0, "content", 1, "type"],
                        "msg": "Input should be 'text'",
                        "type": "literal_error",
                    }
                ]
            },
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- zai__1210_image_input_format_parse_error_chinese_anthropic_envelope: images ------
    case(
        "image_parse/a: other Chinese words",
        response(400, error("[1210][图像输入格式错误]", code="1210"), body(True, temperature=0.6)),
        "images",
    ),
    case(
        "image_parse/b: English",
        response(
            400,
            error("Image input format or parsing error", code="1210"),
            body(True, temperature=0.6),
        ),
        "images",
    ),
    # == static ============================================================================
    # -- xiaomi_mimo__param_incorrect_text_is_not_set: static -----------------------------
    case(
        "param_incorrect/a: 'Invalid parameter', no key",
        response(
            400, error("Invalid parameter", param="text is missing"), body(True, temperature=0.2)
        ),
        "static",
    ),
    case(
        "param_incorrect/b: 422, upper-case code",
        response(
            422, error("Parameter error", code="PARAM_INCORRECT"), body(True, temperature=0.2)
        ),
        "static",
    ),
    # -- lmstudio__failed_to_initialize_samplers_parse_grammar: static --------------------
    case(
        "grammar/a: 'Failed to compile grammar'",
        response(400, error("Failed to compile grammar"), body(temperature=0.4)),
        "static",
    ),
    case(
        "grammar/b: 422, 'sampler chain'",
        response(
            422, error("Could not build sampler chain: grammar parse failed"), body(temperature=0.4)
        ),
        "static",
    ),
    # -- azure_ai_ai21__422_error_list_extra_inputs_not_permitted: static -----------------
    case(
        "extra_inputs/a: 'Extra fields not permitted'",
        response(422, {"error": ["Extra fields not permitted"]}, body(temperature=0.2)),
        "static",
    ),
]

# A refusal of one parameter in words another rule reads: it must get the parameter's
# action, not that rule's.
NEAR_MISSES = [
    # -- images: a key whose refusal speaks of images ------------------------------------
    case(
        "near/images/a: a key named after images",
        response(
            400,
            error("vl_high_resolution_images is not supported for this model"),
            body(True, vl_high_resolution_images=True),
        ),
        "drop",
        ("vl_high_resolution_images",),
    ),
    case(
        "near/images/b: image output refused at `modalities`",
        response(
            400,
            error("Image output is not supported by this model.", param="modalities"),
            body(True, modalities=["text", "image"]),
        ),
        "drop",
        ("modalities",),
    ),
    # -- a capability: the key refused with the capability as its condition --------------
    case(
        "near/capability/a: temperature refused when using tools",
        response(
            400,
            error("temperature is not supported when using tools"),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("temperature",),
    ),
    case(
        "near/capability/b: temperature refused for reasoning models",
        response(
            400,
            error("temperature is not supported with reasoning models"),
            body(reasoning_effort="high", temperature=0.2),
        ),
        "drop",
        ("temperature",),
    ),
    # -- a tool's definition: a schema that is not a tool's ------------------------------
    case(
        "near/definition/a: response_format's schema refused",
        response(
            400,
            error("response_format json_schema: schema must be an object"),
            body(tools=TOOLS, response_format=SCHEMA),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "near/definition/b: a call's arguments in the history",
        response(
            400,
            error("Invalid 'messages[2].tool_calls[0].function.arguments': not valid JSON"),
            body(tools=TOOLS),
        ),
        "surface",
    ),
    # -- moderation: a key's value in moderation words -----------------------------------
    case(
        "near/moderation/a: stop holds sensitive words",
        response(
            400, error("'stop' contains sensitive words which are not allowed"), body(stop=["x"])
        ),
        "drop",
        ("stop",),
    ),
    case(
        "near/moderation/b: a parameter that cannot include sensitive information",
        response(
            400,
            error("The 'metadata' parameter cannot include sensitive information."),
            body(metadata={"k": "v"}),
        ),
        "drop",
        ("metadata",),
    ),
    # -- size: a key's value over a maximum ----------------------------------------------
    case(
        "near/size/a: max_tokens too large",
        response(
            400,
            error(
                "max_tokens is too large: 100000. This model supports at most 16384 completion "
                "tokens, whereas you provided 100000.",
                param="max_tokens",
            ),
            body(max_tokens=100000),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "near/size/b: a stop sequence over the maximum length",
        response(
            400,
            error("stop: sequence length exceeds the maximum length of 32"),
            body(stop=["x" * 40]),
        ),
        "drop",
        ("stop",),
    ),
    # -- the account: a key refused for the organization ---------------------------------
    case(
        "near/account/a: a tier not available for the organization",
        response(
            400,
            error("service_tier 'flex' is not available for your organization"),
            body(service_tier="flex"),
        ),
        "drop",
        ("service_tier",),
    ),
    case(
        "near/account/b: 403 that names a key and no access",
        response(
            403,
            error("You are not allowed to set top_logprobs on this model"),
            body(top_logprobs=3),
        ),
        "drop",
        ("top_logprobs",),
    ),
    # -- the conversation: a key refused in words of the conversation --------------------
    case(
        "near/conversation/a: 'seed' refused in multi-turn conversations",
        response(
            400, error("The 'seed' parameter is not supported in multi-turn conversations."), body()
        ),
        "drop",
        ("seed",),
    ),
    case(
        "near/conversation/b: 'user' quoted as the body's key",
        response(400, error("'user' must be a string of at most 64 characters"), body()),
        "drop",
        ("user",),
    ),
    # -- a missing model: a parameter refused in the model's sentence --------------------
    case(
        "near/model/a: 'model x: unknown parameter'",
        response(400, error("model gpt-x: unknown parameter 'top_k'"), body(top_k=40)),
        "drop",
        ("top_k",),
    ),
    case(
        "near/model/b: 'is not available for this model'",
        response(
            400,
            error("The 'reasoning_effort' parameter is not available for this model."),
            body(reasoning_effort="low"),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- backoff: a key refused in words of a wait ----------------------------------------
    case(
        "near/backoff/a: in-band, 'per request' is no window",
        frame(error("max_tokens per request must be <= 4096"), body(max_tokens=8192)),
        "drop",
        ("max_tokens",),
    ),
    case(
        "near/backoff/b: 'wait for a future release'",
        response(
            400,
            error("Unsupported parameter: 'top_k'. Please wait for a future release."),
            body(top_k=40),
        ),
        "drop",
        ("top_k",),
    ),
    # -- static: nothing named, but the refusal is not the body's keys -------------------
    case(
        "near/static/a: extra inputs inside a message",
        response(422, error("Extra inputs are not permitted: messages.0.name"), body()),
        "surface",
    ),
    case(
        "near/static/b: a header",
        response(422, error("Invalid value in the 'x-api-version' header"), body()),
        "surface",
    ),
    # -- the never-dropped key: a droppable key beside `stream` --------------------------
    case(
        "near/kept/a: stream_options refused, `stream` its condition",
        response(
            400,
            error("'stream_options' is only allowed when 'stream' is true"),
            body(stream_options={"include_usage": True}),
        ),
        "drop",
        ("stream_options",),
    ),
    case(
        "near/kept/b: a key refused 'while streaming'",
        response(400, error("n > 1 is not supported while streaming"), body(n=2)),
        "drop",
        ("n",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + NEAR_MISSES)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings added with these variants (a request's size in words, a
# condition's clause, Chinese size and moderation words, "only supported by", a path to
# call instead).
_HOSTILE = {
    "input and digits": "input " + "1" * 65_000,
    "input words": "input length " * 5_000,
    "if clauses": "if " * 21_845,
    "Chinese input words": "输入" * 32_768,
    "content before risk": "内容" * 32_768,
    "only supported by": "only supported by " * 3_640,
    "call a path": "call /" * 10_922,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, temperature=0.1, stop=["x"], tools=TOOLS)
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p", raw=text)
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, sent, DEGRADES)), daemon=True
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is about a second here
    assert verdicts
