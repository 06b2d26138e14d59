"""The seventh round of unseen rejections (tests/rejections_extra, 30 cases, most of gateway
pages in HTML or plain text, keys named only as a purpose or a circumstance, nested and
several keys, Moonshot, Mistral, Copilot, Gemini's native tool schemas) taught three
readings; these are the bodies near each that must not change with them, read as
`sources.http` reads a rejection (`test_probe_rejections_7.response`). The words are
paraphrases of the servers' formats.

- A key and the words that refuse it are read in one sentence of one string: the error's
  strings are joined by lines, and "... with tools + stream" ending one string does not
  take the "is not supported" of the next (llamacpp__logprobs_not_supported_with_tools_stream:
  before, `tools` dropped with `logprobs`).
- The purpose a rule serves ("..., to use 'response_format' of type 'json_object'") is a
  circumstance like a condition, and a condition's names are read only where nothing else is
  named, a never-dropped key included
  (dashscope__must_contain_word_json_param_null_algo_invalid_parameter: before, drop
  `response_format`).
- A tool's name refused is its definition refused ("Tool names are not allowed to be
  [search]") (dashscope__native_tool_names_are_not_allowed_to_be_search: before, static).

The round's other cases were read right before: anthropic__503_no_healthy_upstream_plain_text,
baidu_qianfan__anthropic_protocol_invalid_argument_opaque,
cloudflare__524_a_timeout_occurred_html_relay,
envoy__503_upstream_connect_error_connection_termination_text,
fireworks__request_validation_errors_tools_eager_input_streaming,
gemini__native_additional_properties_field_violations_tools,
gemini__native_unknown_name_const_at_tools_function_declarations,
gemini__openai_compat_list_unknown_name_parallel_tool_calls,
github_copilot__invalid_request_body_schema_locations_in_messages,
github_copilot__invalid_tools_array_too_long_invalid_request_body,
haproxy__504_gateway_time_out_html_server_didnt_respond,
litellm__sse_error_serializing_to_json_logprobs_stream_code_500,
mistral__expected_last_role_user_or_tool_prefix_true,
mistral__unexpected_role_user_after_role_tool_code_3230,
moonshot__tool_choice_required_incompatible_with_thinking_enabled,
moonshot__tool_choice_specified_incompatible_with_thinking_enabled,
nginx__413_request_entity_too_large_html_padding, nginx__504_gateway_time_out_html_ubuntu,
openai__messages_must_contain_word_json_to_use_response_format,
openai__messages_tool_calls_array_too_long_in_history,
openai__tools_array_too_long_array_above_max_length,
openai__unknown_parameter_nested_response_format_schema,
openai__unrecognized_request_arguments_camelcase_two_keys,
openrouter__moonshot_thinking_enabled_reasoning_content_missing_at_index,
tengine__504_gateway_time_out_html_did_not_receive_timely_response,
together__400_input_validation_error_opaque,
volcengine_ark__messages_content_type_document_supported_values_thinking.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, response


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def test_a_key_ending_one_string_is_not_refused_by_the_next() -> None:
    # (the message, then the same words again as the raw body's string)
    sent = body(logprobs=True, top_logprobs=2, tools=TOOLS)
    verdict = response(400, _error("logprobs is not supported with tools + stream"), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("logprobs", "top_logprobs"))


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # a number inside the gap is still one word of it
        (
            "Temperature value 0.2 is not supported by this model.",
            body(temperature=0.2),
            ("temperature",),
        ),
        # a list after the cue, in one sentence
        (
            "Unrecognized request arguments supplied: min_p, top_k",
            body(min_p=0.1, top_k=40),
            ("min_p", "top_k"),
        ),
        # a sentence ends between a key and the next sentence's refusal
        (
            "This request has tools. Temperature is not supported.",
            body(temperature=0.2, tools=TOOLS),
            ("temperature",),
        ),
    ],
)
def test_cue_words_near_the_rule(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == ("drop", dropped)


def test_a_key_named_only_as_the_purpose_is_kept() -> None:
    payload = {
        "error": {
            "code": "invalid_parameter_error",
            "param": None,
            "message": "<400> InternalError.Algo.InvalidParameter: 'messages' must contain the "
            "word 'json' in some form, to use 'response_format' of type 'json_object'.",
            "type": "invalid_request_error",
        }
    }
    verdict = response(400, payload, body(response_format={"type": "json_object"}))
    assert verdict.action == "surface"


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # "unable to use" refuses the key: no purpose
        (
            "Unable to use 'logit_bias' with this model.",
            body(logit_bias={"50256": -100}),
            ("logit_bias",),
        ),
        # the purpose is another sentence's: the refused key stays named
        (
            "'top_k' is not supported. To use other sampling settings, see the docs.",
            body(top_k=40, top_p=0.9),
            ("top_k",),
        ),
        # nothing but the purpose names a key, and no never-dropped key is quoted: it is read
        (
            "To use 'response_format', the model must support JSON mode.",
            body(response_format={"type": "json_object"}, temperature=0.2),
            ("response_format",),
        ),
    ],
)
def test_purpose_words_near_the_rule(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == ("drop", dropped)


def test_a_tool_name_refused_refuses_the_tools() -> None:
    payload = {"code": "InvalidParameter", "message": "Tool names are not allowed to be [search]"}
    verdict = response(400, payload, body(tools=TOOLS, tool_choice="auto"))
    assert (verdict.action, verdict.drop) == ("drop", ("tools", "tool_choice"))


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a name in the history's calls: the conversation
        (
            "Invalid tool name in messages[2].tool_calls[0]: must match ^[a-zA-Z0-9_-]+$",
            body(tools=TOOLS),
            ("surface", ()),
        ),
        # the name `tool_choice` asks for: that key alone
        (
            "The tool name in 'tool_choice' does not match any of the specified tools.",
            body(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "g"}}),
            ("drop", ("tool_choice",)),
        ),
        # a field spelled `function_name` is no tool's name in prose
        (
            "function_name is required in each tool_calls entry",
            body(tools=TOOLS),
            ("surface", ()),
        ),
    ],
)
def test_tool_name_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == expected
