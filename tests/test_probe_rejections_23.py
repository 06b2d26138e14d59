"""Round seven's rejections in every envelope and in other words.

The 30 cases tests/rejections_extra gained in the seventh round (listed in
tests/test_probe_rejections_22.py's docstring) are taken apart and put back together in
each envelope of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame
after `200 OK` (`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_16.py
does for earlier rounds): 600 combinations. Each must get the original's action, dropped
keys and renames. No envelope loses what an action of this round rests on, so none is
marked `DIFFERENT`: where a frame has no status, the words still say it (a relay's "Error
code: 400 - {...}", Cloudflare's "Error code 524", a gateway page's status line) or say the
server's trouble (a Python traceback, Envoy's "upstream connect error").

Then, as tests/test_probe_rejections_17.py does, one to three paraphrases of each case
(`VARIANTS`), and of each of the round's three rules (`RULES`: a key and the words that
refuse it read in one sentence of one string; a purpose clause "to use X" is a
circumstance; a tool's name refused is its definition refused) with two near misses per
rule. Every expected action is written beside its body. The wordings are invented after the
servers' formats; none was recorded.

Left out as debatable: "'logprobs' is not supported together with 'tools'" (either key
could go); "response_format requires the messages to contain 'json'" (the key refused, or
the prompt); a history's call to "an unknown function name" (the model's output, or the
tools); "Too many tools" with no word of a limit's number (a count of the tools, or of the
calls).

Also here: a 4xx is the request's fault whatever its type says (Ollama's 400 "... does not
support tools" is typed `api_error`): where no key can go, it surfaces, never resent.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import rxllm
from rxllm.degradation import RecoveryPolicy, Verdict
from tests.test_probe_rejections_7 import TOOLS, body, frame, gateway_string, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, pydantic
from tests.test_probe_rejections_19 import action_counts, assert_reads_the_same
from tests.test_probe_rejections_21 import JSON_OBJECT, NAMED_CHOICE, anthropic

# drop 12, none 9, backoff 7, static 2
ROUND_SEVEN = (
    "anthropic__503_no_healthy_upstream_plain_text",
    "baidu_qianfan__anthropic_protocol_invalid_argument_opaque",
    "cloudflare__524_a_timeout_occurred_html_relay",
    "dashscope__must_contain_word_json_param_null_algo_invalid_parameter",
    "dashscope__native_tool_names_are_not_allowed_to_be_search",
    "envoy__503_upstream_connect_error_connection_termination_text",
    "fireworks__request_validation_errors_tools_eager_input_streaming",
    "gemini__native_additional_properties_field_violations_tools",
    "gemini__native_unknown_name_const_at_tools_function_declarations",
    "gemini__openai_compat_list_unknown_name_parallel_tool_calls",
    "github_copilot__invalid_request_body_schema_locations_in_messages",
    "github_copilot__invalid_tools_array_too_long_invalid_request_body",
    "haproxy__504_gateway_time_out_html_server_didnt_respond",
    "litellm__sse_error_serializing_to_json_logprobs_stream_code_500",
    "llamacpp__logprobs_not_supported_with_tools_stream",
    "mistral__expected_last_role_user_or_tool_prefix_true",
    "mistral__unexpected_role_user_after_role_tool_code_3230",
    "moonshot__tool_choice_required_incompatible_with_thinking_enabled",
    "moonshot__tool_choice_specified_incompatible_with_thinking_enabled",
    "nginx__413_request_entity_too_large_html_padding",
    "nginx__504_gateway_time_out_html_ubuntu",
    "openai__messages_must_contain_word_json_to_use_response_format",
    "openai__messages_tool_calls_array_too_long_in_history",
    "openai__tools_array_too_long_array_above_max_length",
    "openai__unknown_parameter_nested_response_format_schema",
    "openai__unrecognized_request_arguments_camelcase_two_keys",
    "openrouter__moonshot_thinking_enabled_reasoning_content_missing_at_index",
    "tengine__504_gateway_time_out_html_did_not_receive_timely_response",
    "together__400_input_validation_error_opaque",
    "volcengine_ark__messages_content_type_document_supported_values_thinking",
)


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_SEVEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


def test_the_cases_are_round_sevens() -> None:
    assert len(set(ROUND_SEVEN)) == 30
    assert action_counts(ROUND_SEVEN) == {
        "drop": 12,
        "none": 9,
        "backoff": 7,
        "static": 2,
    }


def google(message: str, *fields: str) -> dict[str, Any]:
    """Google's 400, its fields refused as a BadRequest's fieldViolations."""
    violations = [{"field": field, "description": message} for field in fields]
    details = [
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": violations}
    ]
    return {
        "error": {
            "code": 400,
            "message": message,
            "status": "INVALID_ARGUMENT",
            "details": details if fields else [],
        }
    }


def flat(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """Mistral's and vLLM's flat envelope."""
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


THINKING = {"type": "enabled"}
TRACEBACK = (
    "Error serializing to JSON: TypeError: 'MockValSer' object cannot be converted\n\n"
    "Traceback (most recent call last):\n"
    '  File "/app/litellm/proxy/proxy_server.py", line 3039, in async_data_generator\n'
    "    chunk = chunk.model_dump_json(exclude_none=True)\n"
    "TypeError: 'MockValSer' object cannot be converted to 'SchemaSerializer'"
)

# == the round's cases in other words ===================================================
VARIANTS = [
    # -- anthropic__503_no_healthy_upstream_plain_text: backoff ---------------------------
    case(
        "no_healthy/a: plain text, 'no healthy upstream hosts'",
        response(503, "No healthy upstream hosts available", body(temperature=0.3)),
        "backoff",
    ),
    case(
        "no_healthy/b: in-band, no status",
        frame(error("no healthy upstream"), body(temperature=0.3)),
        "backoff",
    ),
    # -- baidu_qianfan__anthropic_protocol_invalid_argument_opaque: static ----------------
    case(
        "qianfan/a: in-band, `api_error`, the SDK's 'Error code: 400'",
        frame(
            {
                "type": "api_error",
                "message": "Error code: 400 - {'error': {'message': 'Invalid argument', "
                "'type': 'invalid_request_error'}}",
            },
            body(temperature=0.5, max_tokens=4096),
        ),
        "static",
    ),
    case(
        "qianfan/b: LiteLLM's classes before the SDK's words",
        response(
            400,
            error(
                "litellm.BadRequestError: OpenAIException - Error code: 400 - {'error': "
                "{'code': 'invalid_argument', 'message': 'Invalid Argument'}}",
                code="400",
            ),
            body(temperature=0.5, max_tokens=4096),
        ),
        "static",
    ),
    case(
        "qianfan/c: Anthropic's envelope, `api_error` at 400, 'Upstream rejected'",
        response(
            400,
            anthropic("api_error", "Upstream rejected the request: invalid argument"),
            body(temperature=0.5, max_tokens=4096),
        ),
        "static",
    ),
    # -- cloudflare__524_a_timeout_occurred_html_relay: backoff ----------------------------
    case(
        "cf_524/a: another host's page, short",
        response(
            524,
            "<html><head><title>api.example.com | 524: A timeout occurred</title></head>"
            "<body><h1>A timeout occurred</h1><span>Error code 524</span></body></html>",
            body(max_tokens=8192),
        ),
        "backoff",
    ),
    case(
        "cf_524/b: in-band, 522 named in words",
        frame(
            error("api.example.com | 522: Connection timed out. Error code 522"),
            body(max_tokens=8192),
        ),
        "backoff",
    ),
    # -- dashscope__must_contain_word_json_param_null_algo_invalid_parameter: none --------
    case(
        "json_word/a: the purpose first",
        response(
            400,
            error(
                "<400> InternalError.Algo.InvalidParameter: To use 'response_format' of type "
                "'json_object', 'messages' must contain the word 'json' in some form.",
                code="invalid_parameter_error",
                param=None,
                type="invalid_request_error",
            ),
            body(response_format=JSON_OBJECT, temperature=0.7),
        ),
        "surface",
    ),
    case(
        "json_word/b: 'in order to use', the word placed otherwise",
        response(
            400,
            error(
                "The word 'json' must appear in 'messages' in order to use 'response_format' "
                "of type 'json_object'.",
                code="invalid_parameter_error",
            ),
            body(response_format=JSON_OBJECT, temperature=0.7),
        ),
        "surface",
    ),
    # -- dashscope__native_tool_names_are_not_allowed_to_be_search: drop tools ------------
    case(
        "tool_name/a: 'is reserved and cannot be used'",
        response(
            400,
            {
                "code": "InvalidParameter",
                "message": "The tool name 'search' is reserved and cannot be used.",
            },
            body(tools=TOOLS, tool_choice="auto", top_p=0.8),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tool_name/b: 'Function names must not be'",
        response(
            400,
            error("Function names must not be one of [search, code_interpreter]"),
            body(tools=TOOLS, tool_choice="auto", top_p=0.8),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- envoy__503_upstream_connect_error_connection_termination_text: backoff -----------
    case(
        "envoy/a: in-band, 'connection failure', retried",
        frame(
            error(
                "upstream connect error or disconnect/reset before headers. retried and the "
                "latest reset reason: connection failure"
            ),
            body(max_tokens=256, temperature=0.6),
        ),
        "backoff",
    ),
    case(
        "envoy/b: 502, 'connection refused'",
        response(
            502,
            "upstream connect error or disconnect/reset before headers. reset reason: "
            "connection refused",
            body(max_tokens=256, temperature=0.6),
        ),
        "backoff",
    ),
    # -- fireworks__request_validation_errors_tools_eager_input_streaming: drop tools -----
    case(
        "fireworks/a: another field inside two tools",
        response(
            400,
            {
                "error": {
                    "type": "invalid_request_error",
                    "message": "2 request validation errors:\nExtra inputs are not permitted, "
                    "field: 'tools[0].cache_control', value: {'type': 'ephemeral'};\nExtra "
                    "inputs are not permitted, field: 'tools[3].cache_control'",
                }
            },
            body(tools=TOOLS, tool_choice="auto", max_tokens=1024),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "fireworks/b: FastAPI's 422 inside a tool",
        response(
            422,
            pydantic("tools", 0, "eager_input_streaming"),
            body(tools=TOOLS, tool_choice="auto", max_tokens=1024),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- gemini__native_additional_properties_field_violations_tools: drop tools ----------
    case(
        "gemini_props/a: one violation, `$schema`",
        response(
            400,
            google(
                'Invalid JSON payload received. Unknown name "$schema" at '
                "'tools[0].function_declarations[2].parameters': Cannot find field.",
                "tools[0].function_declarations[2].parameters",
            ),
            body(tools=TOOLS, top_p=0.95),
        ),
        "drop",
        ("tools",),
    ),
    # -- gemini__native_unknown_name_const_at_tools_function_declarations: drop tools -----
    case(
        "gemini_const/a: `exclusiveMinimum`, no details",
        response(
            400,
            google(
                'Invalid JSON payload received. Unknown name "exclusiveMinimum" at '
                "'tools[0].function_declarations[1].parameters.properties[0].value': Cannot "
                "find field."
            ),
            body(tools=TOOLS, temperature=0.4),
        ),
        "drop",
        ("tools",),
    ),
    # -- gemini__openai_compat_list_unknown_name_parallel_tool_calls: drop the key --------
    case(
        "gemini_ptc/a: not listed, the name backticked",
        response(
            400,
            google("Invalid JSON payload received. Unknown name `parallel_tool_calls`."),
            body(parallel_tool_calls=False, tool_choice="auto", tools=TOOLS),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    case(
        "gemini_ptc/b: in-band",
        frame(
            error('Invalid JSON payload received. Unknown name "parallel_tool_calls"'),
            body(parallel_tool_calls=False, tool_choice="auto", tools=TOOLS),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- github_copilot__invalid_request_body_schema_locations_in_messages: none ----------
    case(
        "copilot_schema/a: one reason, one location",
        response(
            400,
            error(
                "invalid request body, failed to validate schema: Reason: got object, want "
                "string, Location: /properties/messages/items/properties/content/type."
            ),
            body(temperature=0.7, max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "copilot_schema/b: a role missing, the code",
        response(
            400,
            error(
                "failed to validate schema: (1) Reason: missing property 'role', Location: "
                "/properties/messages/items/required.",
                code="invalid_request_body",
            ),
            body(temperature=0.7, max_tokens=1024),
        ),
        "surface",
    ),
    # -- github_copilot__invalid_tools_array_too_long_invalid_request_body: drop tools ----
    case(
        "copilot_tools/a: another maximum",
        response(
            400,
            error(
                "Invalid 'tools': array too long. Expected an array with maximum length 64, "
                "but got an array with length 80 instead.",
                code="invalid_request_body",
            ),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "copilot_tools/b: 'must have at most 128 items'",
        response(400, error("'tools' must have at most 128 items, got 133"), body(tools=TOOLS)),
        "drop",
        ("tools",),
    ),
    # -- haproxy__504_gateway_time_out_html_server_didnt_respond: backoff -----------------
    case(
        "haproxy/a: 'Gateway Timeout' spelled as one word",
        response(
            504,
            "<html><body><h1>504 Gateway Timeout</h1>\nThe server didn't respond in time.\n"
            "</body></html>",
            body(temperature=0.7),
        ),
        "backoff",
    ),
    case(
        "haproxy/b: in-band, the page's words",
        frame(error("504 Gateway Time-out: The server didn't respond in time."), body()),
        "backoff",
    ),
    # -- litellm__sse_error_serializing_to_json_logprobs_stream_code_500: backoff ---------
    case(
        "traceback/a: in-band, the code a string",
        frame(error(TRACEBACK, code="500"), body(logprobs=True, top_logprobs=2)),
        "backoff",
    ),
    case(
        "traceback/b: in-band, no code",
        frame(error(TRACEBACK), body(logprobs=True, top_logprobs=2)),
        "backoff",
    ),
    # -- llamacpp__logprobs_not_supported_with_tools_stream: drop logprobs ----------------
    case(
        "logprobs_tools/a: 'when tools are used with streaming'",
        response(
            400,
            error("logprobs are not supported when tools are used with streaming"),
            body(logprobs=True, top_logprobs=2, tools=TOOLS),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "logprobs_tools/b: the circumstance first",
        response(
            400,
            error("With tools and streaming, logprobs is not supported"),
            body(logprobs=True, top_logprobs=2, tools=TOOLS),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- mistral__expected_last_role_user_or_tool_prefix_true: none ----------------------
    case(
        "last_role/a: 'to be User or Tool', got",
        response(
            400,
            flat(
                "Expected last role to be User or Tool (or Assistant with prefix True), got "
                "Assistant",
                "invalid_request_error",
            ),
            body(frequency_penalty=0.5, presence_penalty=0.5),
        ),
        "surface",
    ),
    case(
        "last_role/b: 'The last message must have role'",
        response(
            400,
            error("The last message must have role user or tool, not assistant"),
            body(frequency_penalty=0.5, presence_penalty=0.5),
        ),
        "surface",
    ),
    # -- mistral__unexpected_role_user_after_role_tool_code_3230: none --------------------
    case(
        "role_order/a: the rule after it",
        response(
            400,
            flat(
                "Unexpected role 'user' after role 'tool': a tool message must be followed by "
                "an assistant message",
                "invalid_request_message_order",
                "3230",
            ),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    case(
        "role_order/b: 'cannot follow'",
        response(
            400,
            error("A message with role 'user' cannot follow a message with role 'tool'."),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
    # -- moonshot__tool_choice_required_incompatible_with_thinking_enabled: drop ----------
    case(
        "choice_required/a: 'cannot be used while thinking'",
        response(
            400,
            error("tool_choice 'required' cannot be used while thinking is enabled"),
            body(tool_choice="required", tools=TOOLS),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "choice_required/b: the condition first, the values allowed",
        response(
            400,
            error("When thinking is enabled, tool_choice must be 'auto' or 'none'"),
            body(tool_choice="required", tools=TOOLS),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- moonshot__tool_choice_specified_incompatible_with_thinking_enabled: drop ---------
    case(
        "choice_named/a: 'Specifying tool_choice is not supported when'",
        response(
            400,
            error("Specifying tool_choice is not supported when thinking is enabled"),
            body(tool_choice=NAMED_CHOICE, tools=TOOLS),
        ),
        "drop",
        ("tool_choice",),
    ),
    case(
        "choice_named/b: in-band, 'incompatible with thinking mode'",
        frame(
            error("tool_choice of type 'function' is incompatible with thinking mode"),
            body(tool_choice=NAMED_CHOICE, tools=TOOLS),
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- nginx__413_request_entity_too_large_html_padding: none --------------------------
    case(
        "nginx_413/a: 'Payload Too Large', openresty",
        response(
            413,
            "<html>\n<head><title>413 Payload Too Large</title></head>\n<body>\n<center><h1>413 "
            "Payload Too Large</h1></center>\n<hr><center>openresty</center>\n</body>\n</html>",
            body(max_tokens=512, temperature=0.7),
        ),
        "surface",
    ),
    case(
        "nginx_413/b: in-band, the status line",
        frame(error("413 Request Entity Too Large"), body(max_tokens=512, temperature=0.7)),
        "surface",
    ),
    # -- nginx__504_gateway_time_out_html_ubuntu: backoff --------------------------------
    case(
        "nginx_504/a: in-band, the status line",
        frame(error("504 Gateway Time-out nginx/1.24.0"), body(temperature=0.2)),
        "backoff",
    ),
    case(
        "nginx_504/b: openresty's page",
        response(
            504,
            "<html>\n<head><title>504 Gateway Time-out</title></head>\n<body>\n<center><h1>504 "
            "Gateway Time-out</h1></center>\n<hr><center>openresty</center>\n</body>\n</html>",
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- openai__messages_must_contain_word_json_to_use_response_format: none -------------
    case(
        "json_param/a: reordered, `param: messages`",
        response(
            400,
            error(
                "To use 'response_format' of type 'json_object', the word 'json' must appear "
                "in 'messages'.",
                type="invalid_request_error",
                param="messages",
            ),
            body(response_format=JSON_OBJECT),
        ),
        "surface",
    ),
    case(
        "json_param/b: in-band, unquoted, 'in order to use'",
        frame(
            error(
                "'messages' must contain the word \"json\" in some form, in order to use "
                "response_format of type json_object"
            ),
            body(response_format=JSON_OBJECT),
        ),
        "surface",
    ),
    # -- openai__messages_tool_calls_array_too_long_in_history: none ---------------------
    case(
        "history_calls/a: no `param`, another index",
        response(
            400,
            error(
                "Invalid 'messages[5].tool_calls': array too long. Expected an array with "
                "maximum length 128, but got an array with length 200 instead.",
                code="array_above_max_length",
            ),
            body(parallel_tool_calls=True, tool_choice="auto", tools=TOOLS),
        ),
        "surface",
    ),
    case(
        "history_calls/b: in prose",
        response(
            400,
            error("Too many tool calls in the assistant message at index 3: at most 128."),
            body(parallel_tool_calls=True, tool_choice="auto", tools=TOOLS),
        ),
        "surface",
    ),
    # -- openai__tools_array_too_long_array_above_max_length: drop tools -----------------
    case(
        "tools_long/a: FastAPI's 422 `too_long` at the key",
        response(
            422,
            {
                "detail": [
                    {
                        "type": "too_long",
                        "loc": ["body", "tools"],
                        "msg": "List should have at most 128 items after validation, not 325",
                    }
                ]
            },
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tools_long/b: in-band, the `param` kept",
        frame(
            error(
                "Invalid 'tools': array too long. Expected at most 128 items.",
                param="tools",
                code="array_above_max_length",
            ),
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- openai__unknown_parameter_nested_response_format_schema: drop response_format ---
    case(
        "nested_rf/a: deeper, with `param`",
        response(
            400,
            error(
                "Unknown parameter: 'response_format.json_schema.strict_mode'.",
                param="response_format.json_schema.strict_mode",
                code="unknown_parameter",
            ),
            body(response_format=JSON_OBJECT, temperature=0.1),
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "nested_rf/b: no `param`, Azure's words",
        response(
            400,
            error("Unrecognized request argument supplied: response_format.schema"),
            body(response_format=JSON_OBJECT, temperature=0.1),
        ),
        "drop",
        ("response_format",),
    ),
    # -- openai__unrecognized_request_arguments_camelcase_two_keys: drop both -------------
    case(
        "camel/a: reordered",
        response(
            400,
            error("Unrecognized request arguments supplied: responseFormat, maxTokens"),
            body(maxTokens=256, responseFormat=JSON_OBJECT, temperature=0.3),
        ),
        "drop",
        ("maxTokens", "responseFormat"),
    ),
    case(
        "camel/b: 'Unknown parameters', quoted",
        response(
            400,
            error("Unknown parameters: 'maxTokens', 'topP'."),
            body(maxTokens=256, topP=0.9, temperature=0.3),
        ),
        "drop",
        ("maxTokens", "topP"),
    ),
    # -- openrouter__moonshot_thinking_enabled_reasoning_content_missing_at_index: none ---
    case(
        "reasoning_missing/a: the condition last",
        response(
            400,
            gateway_string(
                error(
                    "reasoning_content is missing in assistant tool call message at index 5 "
                    "while thinking is enabled",
                    type="invalid_request_error",
                ),
                400,
            ),
            body(reasoning={"effort": "medium"}, tools=TOOLS),
        ),
        "surface",
    ),
    case(
        "reasoning_missing/b: 'has no reasoning_content'",
        response(
            400,
            error(
                "thinking is enabled but the assistant message at index 3 has no reasoning_content"
            ),
            body(reasoning={"effort": "medium"}, tools=TOOLS),
        ),
        "surface",
    ),
    # -- tengine__504_gateway_time_out_html_did_not_receive_timely_response: backoff -----
    case(
        "tengine/a: its 502 page",
        response(
            502,
            "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>"
            "<p>The proxy server received an invalid response from an upstream server.<hr/>"
            "Powered by Tengine</body></html>",
            body(max_tokens=2048),
        ),
        "backoff",
    ),
    case(
        "tengine/b: in-band, the words alone",
        frame(
            error(
                "The gateway did not receive a timely response from the upstream server or "
                "application."
            ),
            body(max_tokens=2048),
        ),
        "backoff",
    ),
    # -- together__400_input_validation_error_opaque: static ----------------------------
    case(
        "opaque/a: 422, 'Request validation failed'",
        response(
            422,
            error("Request validation failed", type="invalid_request_error"),
            body(tool_choice="auto", temperature=0.2, tools=TOOLS),
        ),
        "static",
    ),
    case(
        "opaque/b: 'Invalid request', every field null",
        response(
            400,
            error("Invalid request", type="invalid_request_error", param=None, code=None),
            body(tool_choice="auto", temperature=0.2, tools=TOOLS),
        ),
        "static",
    ),
    # -- volcengine_ark__messages_content_type_document_supported_values_thinking: none --
    case(
        "ark_document/a: the values reordered",
        response(
            400,
            error(
                "The parameter `messages.content.type` specified in the request are not valid: "
                "invalid value: `document`, supported values are: `text`, `image`, `thinking`, "
                "`tool_use`.",
                code="InvalidParameter",
                type="BadRequest",
            ),
            body(thinking=THINKING, max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "ark_document/b: a path into one message, 'allowed values'",
        response(
            400,
            error(
                "Invalid value `document` for `messages[0].content[1].type`; allowed values: "
                "`text`, `thinking`, `image`"
            ),
            body(thinking=THINKING, max_tokens=4096),
        ),
        "surface",
    ),
]

# == the round's three rules, and near misses ==========================================
RULES = [
    # -- a key and the words that refuse it, in one sentence of one string ----------------
    case(
        "rule/one_string/a: 'cannot be used with tools and stream', twice in the body",
        response(
            400,
            error("logprobs cannot be used with tools and stream"),
            body(logprobs=True, top_logprobs=2, tools=TOOLS),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "rule/one_string/b: the first sentence ends with a key",
        response(
            400,
            error("This endpoint streams with tools! top_k is not supported."),
            body(top_k=40, tools=TOOLS),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/one_string/a: two keys refused in one sentence",
        response(
            400,
            error("Tools and temperature are not supported for this model."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "drop",
        ("tools", "temperature"),
    ),
    case(
        "near/one_string/b: the refusal before the key, a comma between",
        response(
            400,
            error("Not supported for this model, temperature must be omitted"),
            body(temperature=0.2, tools=TOOLS),
        ),
        "drop",
        ("temperature",),
    ),
    # -- "to use X": a purpose, a circumstance --------------------------------------------
    case(
        "rule/purpose/a: 'mention', 'in order to use'",
        response(
            400,
            error("'messages' must mention JSON in order to use 'response_format'."),
            body(response_format=JSON_OBJECT, top_p=0.9),
        ),
        "surface",
    ),
    case(
        "rule/purpose/b: in-band, the conversation unquoted",
        frame(
            error("The messages must contain the word json, to use response_format json_object"),
            body(response_format=JSON_OBJECT, top_p=0.9),
        ),
        "surface",
    ),
    case(
        "near/purpose/a: 'not allowed to use' refuses the key",
        response(
            400,
            error("You are not allowed to use 'logit_bias' with this model."),
            body(logit_bias={"50256": -100}, top_p=0.9),
        ),
        "drop",
        ("logit_bias",),
    ),
    case(
        "near/purpose/b: 'failed to use' refuses the key",
        response(400, error("Failed to use 'top_k' with this model."), body(top_k=40, top_p=0.9)),
        "drop",
        ("top_k",),
    ),
    # -- a tool's name refused, its definition refused -----------------------------------
    case(
        "rule/tool_name/a: 'contains invalid characters'",
        response(
            400,
            error("Tool name 'web.search' contains invalid characters."),
            body(tools=TOOLS, tool_choice="auto", top_p=0.9),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "rule/tool_name/b: duplicate function names",
        response(
            400,
            error("Duplicate function names are not allowed: get_weather"),
            body(tools=TOOLS, top_p=0.9),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "near/tool_name/a: `tool_name` a field of the messages",
        response(400, error("tool_name is required for each tool message"), body(tools=TOOLS)),
        "surface",
    ),
    case(
        "near/tool_name/b: the name of a call in the history",
        response(
            400,
            error("The function name of the tool call at messages[4] is empty."),
            body(tools=TOOLS, tool_choice="auto"),
        ),
        "surface",
    ),
]


# -- near the readings this file added (a status in words, the server's trouble in words,
# the conversation named outside a purpose) ---------------------------------------------
NEW_NEAR_MISSES = [
    case(
        "near/status_words/a: a code of four digits is no status",
        frame({"type": "api_error", "message": "Error code: 4001 - upstream failure"}, body()),
        "backoff",
    ),
    case(
        "near/status_words/b: a key refused under the SDK's words",
        frame(
            error("Error code: 400 - {'error': {'message': \"Unsupported parameter: 'top_k'\"}}"),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    case(
        "near/trouble_words/a: a key with 'timeout' in its name, refused",
        frame(error("'request_timeout' is not supported"), body(request_timeout=30)),
        "drop",
        ("request_timeout",),
    ),
    case(
        "near/trouble_words/b: 'reset' and 'connection' in a key's refusal",
        frame(
            error("Invalid 'connection_reset': expected a boolean"),
            body(connection_reset="yes", temperature=0.2),
        ),
        "drop",
        ("connection_reset",),
    ),
    case(
        "near/purpose_conversation/a: the messages inside the purpose only",
        frame(
            error("'top_k' is not available to use with these messages"),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
]


@pytest.mark.parametrize(
    ("verdict", "action", "drop", "rename"), VARIANTS + RULES + NEW_NEAR_MISSES
)
def test_variant(
    verdict: Verdict, action: str, drop: tuple[str, ...], rename: dict[str, str] | None
) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Ollama's 400 (shared rejections: ollama__gemma3_does_not_support_tools), typed `api_error`.
OLLAMA_TOOLS = {
    "error": {
        "message": "registry.ollama.ai/library/gemma3:4b does not support tools",
        "type": "api_error",
        "param": None,
        "code": None,
    }
}


def test_a_4xx_typed_api_error_is_not_the_servers_trouble() -> None:
    sent = body(tools=TOOLS)
    # where keys go, `tools` does; where none can (the Responses wire), it surfaces
    assert response(400, OLLAMA_TOOLS, sent).drop == ("tools",)
    responses = rxllm.provider("openai-responses", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert response(400, OLLAMA_TOOLS, sent, responses.wire.recovery).action == "surface"
    # with no status the type still says it, and at 500 the status does
    assert frame(OLLAMA_TOOLS["error"], body(), responses.wire.recovery).action == "backoff"
    assert response(500, OLLAMA_TOOLS, body(), responses.wire.recovery).action == "backoff"


# Inputs aimed at the readings added here (a status in words, a traceback, a connection
# lost by a proxy).
_HOSTILE = {
    "error codes": "Error code " * 5_957,
    "error code colons": "Error code: 4 " * 5_041,
    "tracebacks": "Traceback (most " * 4_096,
    "connects": "upstream connect " * 3_855,
    "connections": "connection timed " * 3_855,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    policy = RecoveryPolicy(degrade=True)
    sent = body(True, logprobs=True, tools=TOOLS, temperature=0.2)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(error(text), sent, policy))
        verdicts.append(response(400, error(text), sent, policy))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
