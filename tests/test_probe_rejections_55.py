"""The twenty-third round of unseen rejections (tests/rejections_extra, 17 cases, 2025-2026): a
model served only by another API (gpt-5-pro on chat completions, a model Codex refuses for a
ChatGPT account, a model Bedrock no longer serves behind a proxy, Azure's chatCompletion
operation for gpt-5.1-codex), a key Anthropic calls deprecated for claude-sonnet-5 behind
LiteLLM, a hosted tool that cannot go with a reasoning effort (OpenAI's file_search), Qwen's
tool choice and thinking budget in thinking mode, Gemini's function calling beside a JSON mime
type and an image of a type it does not know, OpenAI's image URL without its `data:` prefix,
Venice's strict validator (zod), the conversation refused in four shapes (DeepSeek's role behind
9router, its JSON that does not parse, Mistral's empty assistant message, a content part's
fields behind LiteLLM), and a rate limit said by its code alone after `200 OK`.

One of the 17 was misread before:

- bedrock__400_unsupported_model_or_request_did_not_allow_prompt_caching (static before):
  "You invoked an unsupported model or your request did not allow prompt caching." names
  the model without its name, where "unsupported model" was read only before a name
  ("Unsupported model: 'x'"). The model as the object an article makes it ("an unsupported
  model", "the unsupported model") surfaces now, not where a setting of it follows ("an
  unsupported model parameter") or a key it is for in the same sentence.

The case format says which top-level keys go (`drop`); what goes inside a key
(`Verdict.prune`) is read here from the same real bodies against bodies that hold more.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.rejection_rounds import assert_reads_as_its_file_says, both_ways, openai_error
from tests.test_probe_rejections_7 import TOOLS, body, response
from tests.test_probe_rejections_9 import EXTRA
from tests.test_probe_rejections_19 import action_counts

# none 8, drop 6, images 2, backoff 1
ROUND_TWENTY_THREE = (
    "9router__deepseek_v4_unknown_variant_developer_role_reset_after_30s",
    "azure-openai__400_operation_not_supported_chatcompletion_gpt_5_1_codex",
    "bedrock__400_unsupported_model_or_request_did_not_allow_prompt_caching",
    "chatgpt_backend__400_gpt_5_4_model_not_supported_when_using_codex_with_chatgpt_account",
    "dashscope__400_thinking_budget_must_be_positive_integer_not_greater_than_38912",
    "dashscope__400_tool_choice_cannot_be_required_or_object_in_thinking_mode_qwen3_6",
    "deepseek__400_failed_to_parse_request_body_as_json_tool_calls_key_must_be_a_string",
    "gemini__400_function_calling_with_response_mime_type_application_json_unsupported",
    "gemini__400_unsupported_mime_type_image_jpg_invalid_argument",
    "litellm_anthropic__400_top_p_is_deprecated_for_this_model_claude_sonnet_5",
    "litellm_zhipu__400_value_error_message_content_has_invalid_fields_text_no_fallback",
    "mistral__400_3240_at_least_one_content_or_tool_calls_non_empty_assistant_message",
    "newapi_upstream__sse_code_only_rate_limit_exceeded_after_200",
    "openai__400_following_tools_cannot_be_used_with_reasoning_effort_minimal_file_search",
    "openai__400_invalid_image_url_expected_base64_data_url_without_data_prefix",
    "openai__400_model_only_supported_in_v1_responses_not_chat_completions_param_model",
    "venice__400_invalid_request_parameters_unrecognized_key_in_object_thinking",
)


def test_the_cases_are_round_twenty_threes() -> None:
    assert len(set(ROUND_TWENTY_THREE)) == 17
    assert action_counts(ROUND_TWENTY_THREE) == {"none": 8, "drop": 6, "images": 2, "backoff": 1}


@pytest.mark.parametrize("case_name", ROUND_TWENTY_THREE)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


def _body_of(name: str) -> Any:
    return json.loads(json.loads((EXTRA / f"{name}.json").read_text())["body"])


# -- the same real bodies against bodies that hold more -------------------------------------

FILE_SEARCH = {"type": "file_search", "vector_store_ids": ["vs_1"]}


def test_a_tool_that_cannot_go_with_the_effort_goes_alone() -> None:
    """`param: tools` and the type listed: the function tool beside it stays, and so does
    the effort, which the words name only as the condition."""
    name = "openai__400_following_tools_cannot_be_used_with_reasoning_effort_minimal_file_search"
    sent = body(tools=[FILE_SEARCH, *TOOLS], reasoning={"effort": "minimal"}, tool_choice="auto")
    read = response(400, _body_of(name), sent)
    assert (read.action, read.drop, read.prune) == ("drop", (), (("tools", 0),))


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "f"}}])
def test_qwens_tool_choice_in_thinking_mode_goes_whatever_its_form(choice: Any) -> None:
    name = "dashscope__400_tool_choice_cannot_be_required_or_object_in_thinking_mode_qwen3_6"
    sent = body(tools=TOOLS, tool_choice=choice, enable_thinking=True)
    read = response(400, _body_of(name), sent)
    assert (read.action, read.drop) == ("drop", ("tool_choice",))


def test_an_image_part_pointed_at_removes_the_images() -> None:
    name = "openai__400_invalid_image_url_expected_base64_data_url_without_data_prefix"
    read = response(400, _body_of(name), body(images=True, temperature=0.2))
    assert (read.action, read.drop) == ("images", ())


# -- the model unsupported, unnamed, and near misses ---------------------------------------

SAMPLING = body(logprobs=True, top_k=5, temperature=0.1)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "You invoked an unsupported model or your request did not allow prompt caching.",
            "surface",
        ),
        ("This is an unsupported model. See the documentation for more information.", "surface"),
        ("The requested model is an unsupported model.", "surface"),
    ],
)
def test_an_unsupported_model_unnamed_surfaces(message: str, expected: str) -> None:
    assert both_ways(message, SAMPLING) == [(expected, ())] * 2


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a setting of the model
        ("logprobs is an unsupported model parameter", ("drop", ("logprobs",))),
        ("top_k: an unsupported model option", ("drop", ("top_k",))),
        # the model for a key, in the same sentence
        ("an unsupported model for parameter logprobs", ("drop", ("logprobs",))),
        # no article: the words name no model as the thing refused
        ("unsupported model features requested", ("static", ())),
    ],
)
def test_an_unsupported_model_near_the_rule(message: str, expected: Any) -> None:
    assert both_ways(message, SAMPLING) == [expected, expected]


def test_the_model_refused_at_an_openai_envelope_with_a_status_of_404() -> None:
    words = "You invoked an unsupported model or your request did not allow prompt caching."
    read = response(404, openai_error(words), SAMPLING)
    assert (read.action, read.drop) == ("surface", ())
