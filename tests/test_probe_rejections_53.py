"""The twenty-second round of unseen rejections (tests/rejections_extra, 19 cases, 2025-2026):
tools of a type the endpoint does not take (OpenAI's hosted `web_search_preview` through
new-api, one-hub's `search` tool, Anthropic's `web_fetch_20250910` without its beta), keys
inside an object (`reasoning.summary`, `reasoning.generate_summary`, `response_format.type`
on Anthropic's OpenAI-compatible route), keys new in 2025-2026 refused elsewhere
(`safety_identifier` at the ChatGPT Codex backend, `prompt_cache_retention` at Fireworks,
`context_management` at Anthropic without its beta, Groq's `reasoning_format`), the
thinking level refused by Gemini and Vertex, DeepSeek V4's tool choice in thinking mode
behind LiteLLM, Gemini's mixed built-in and function tools, counts of images over a maximum
(Muse Spark, Copilot, new-api), and xAI's 410 for Live Search.

Three of the 19 were misread before:

- muse_spark__400_request_contains_54_images_exceeding_maximum_of_50 (static before): read
  by test_probe_rejections_52's image count, committed with it.
- vertex__400_thinking_level_medium_is_not_supported_by_this_model (static before):
  "thinking_level MEDIUM is not supported by this model" writes the refused value bare
  after the setting, where the reasoning phrase took a quoted value only; a bare word after
  the setting's name (level, effort, mode, budget, value, config) now counts too, so the
  reasoning switch the body sent goes. "reasoning content is not supported" (a message's
  field, no setting) names nothing, as before.
- xai__410_live_search_is_deprecated_switch_to_agent_tools_api (surface before): 410 Gone
  with words of a feature retired, where the model and the endpoint are read before and
  neither is what is gone, is the body's: the static list is walked, and reaches
  `search_parameters` (a request without it is served: vercel/ai#15713). A bare 410, or a
  model retired at 410, surfaces as before.

The case format says which top-level keys go (`drop`); what goes inside a key
(`Verdict.prune`: a tool of a refused type beside others, `reasoning.summary` beside an
effort) is read here from the same real bodies against bodies that hold more: the real
request of each held one tool, or the one key, and its file says so.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Retry
from tests.rejection_rounds import assert_reads_as_its_file_says, openai_error, over_http
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_9 import EXTRA
from tests.test_probe_rejections_19 import action_counts

# drop 14, images 3, none 1, static 1
ROUND_TWENTY_TWO = (
    "anthropic__400_context_management_extra_inputs_are_not_permitted",
    "anthropic__400_tools_1_input_tag_web_fetch_does_not_match_expected_tags",
    "anthropic_compat__400_response_format_type_input_should_be_json_schema",
    "chatgpt_backend__400_detail_unsupported_parameter_safety_identifier",
    "copilot__400_too_many_images_11_provided_model_supports_maximum_of_10",
    "fireworks__400_extra_inputs_field_prompt_cache_retention_value_24h_glm",
    "gemini__400_enable_include_server_side_tool_invocations_builtin_with_function_calling",
    "gemini__400_thinking_level_is_not_supported_for_this_model_2_5_flash",
    "groq__400_reasoning_format_not_supported_with_this_model",
    "litellm_deepseek__400_thinking_mode_does_not_support_this_tool_choice_v4",
    "muse_spark__400_request_contains_54_images_exceeding_maximum_of_50",
    "newapi__400_hosted_tool_web_search_preview_not_supported_with_gpt_4_1",
    "newapi__500_too_many_images_in_the_message_max_allowed_is_16",
    "one_hub__400_provider_api_error_invalid_value_search_value_must_be_function",
    "openai__400_invalid_value_none_param_reasoning_summary_supported_values",
    "openai__400_unsupported_parameter_reasoning_generate_summary_o3_mini",
    "openai__400_unsupported_value_concise_param_reasoning_summary_gpt_5",
    "vertex__400_thinking_level_medium_is_not_supported_by_this_model",
    "xai__410_live_search_is_deprecated_switch_to_agent_tools_api",
)


def test_the_cases_are_round_twenty_twos() -> None:
    assert len(set(ROUND_TWENTY_TWO)) == 19
    assert action_counts(ROUND_TWENTY_TWO) == {"drop": 14, "images": 3, "none": 1, "static": 1}


@pytest.mark.parametrize("case_name", ROUND_TWENTY_TWO)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


def _body_of(name: str) -> Any:
    return json.loads(json.loads((EXTRA / f"{name}.json").read_text())["body"])


def _reading(name: str, sent: dict[str, Any], status: int = 400) -> tuple[Any, ...]:
    read = response(status, _body_of(name), sent)
    return read.action, read.drop, read.prune


# -- the same real bodies against bodies that hold more -------------------------------------

WEB_SEARCH = {"type": "web_search_preview"}
FETCH = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5}
SEARCH_20250305 = {"type": "web_search_20250305", "name": "web_search"}
CUSTOM = {"type": "custom", "name": "lookup", "input_schema": {"type": "object"}}


@pytest.mark.parametrize(
    ("name", "tools", "pruned"),
    [
        # the hosted tool refused by name, `param: tools`
        (
            "newapi__400_hosted_tool_web_search_preview_not_supported_with_gpt_4_1",
            [WEB_SEARCH, *TOOLS],
            (("tools", 0),),
        ),
        # `param: tools[0].type`; "Value must be 'function'" is the type accepted
        (
            "one_hub__400_provider_api_error_invalid_value_search_value_must_be_function",
            [{"type": "search", "search": {}}, *TOOLS],
            (("tools", 0),),
        ),
        # the tags the validator lists are the ones it takes, not refused
        (
            "anthropic__400_tools_1_input_tag_web_fetch_does_not_match_expected_tags",
            [SEARCH_20250305, FETCH, CUSTOM],
            (("tools", 1),),
        ),
    ],
)
def test_a_real_tool_type_refusal_keeps_the_other_tools(
    name: str, tools: list[Any], pruned: tuple[Any, ...]
) -> None:
    assert _reading(name, body(tools=tools, tool_choice="auto")) == ("drop", (), pruned)


def test_built_in_and_custom_tools_not_combined_keeps_the_functions() -> None:
    """Antigravity-Manager's 400 (lbjlaq/Antigravity-Manager#2241, 2026-03): the built-in tool
    spelled as an identifier is the type refused; "Function Calling" in prose names no type."""
    words = (
        "Built-in tools ({google_search}) and Custom tools (Function Calling) cannot be "
        "combined in the same request. Please choose one to continue."
    )
    sent = body(tools=[{"type": "google_search"}, *TOOLS], tool_choice="auto")
    assert response(400, openai_error(words), sent).prune == (("tools", 0),)
    assert frame({"message": words}, sent).prune == (("tools", 0),)


REASONING = body(reasoning={"effort": "medium", "summary": "concise"}, temperature=1)


@pytest.mark.parametrize(
    "name",
    [
        "openai__400_unsupported_value_concise_param_reasoning_summary_gpt_5",
        "openai__400_invalid_value_none_param_reasoning_summary_supported_values",
    ],
)
def test_a_real_refusal_inside_reasoning_keeps_the_effort(name: str) -> None:
    assert _reading(name, REASONING) == ("drop", (), (("reasoning", "summary"),))


def test_the_codex_backends_frame_inside_reasoning_keeps_the_effort() -> None:
    """The ChatGPT Codex backend's error frame (superset-sh/superset#1898, 2026-02), read as
    the chat wire reads an error object after `200 OK`."""
    error = {
        "type": "invalid_request_error",
        "code": "unsupported_parameter",
        "message": (
            "Unsupported parameter: 'reasoning.summary' is not supported with the "
            "'gpt-5.3-codex-spark' model."
        ),
        "param": "reasoning.summary",
    }
    read = frame(error, REASONING)
    assert (read.action, read.drop, read.prune) == ("drop", (), (("reasoning", "summary"),))


# -- a thinking level written bare, and near misses ---------------------------------------

EFFORT = body(reasoning_effort="medium", temperature=0.7)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("thinking_level MEDIUM is not supported by this model", ("drop", ("reasoning_effort",))),
        (
            "Thinking level MINIMAL is not supported for this model.",
            ("drop", ("reasoning_effort",)),
        ),
        ("reasoning effort high is not supported", ("drop", ("reasoning_effort",))),
        # no setting named: a message's field, not the switch
        ("reasoning content is not supported for this model", ("static", ())),
        # the word alone, with no refusal right after the setting
        ("thinking level MEDIUM applies to Gemini 3 models only", ("static", ())),
    ],
)
def test_a_thinking_level_written_bare(message: str, expected: Any) -> None:
    assert over_http(message, EFFORT, 400) == expected


# -- 410 Gone: a feature retired, near the model and the endpoint --------------------------

LIVE_SEARCH = body(search_parameters={"mode": "auto"})


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"error": "Live search is deprecated. Please switch to the Agent Tools API."},
            ("static", ()),
        ),
        ({"error": "This feature has been retired."}, ("static", ())),
        # the model retired: read before, surfaces
        (
            {
                "error": {
                    "message": "The model `grok-2` has been deprecated and is no longer available."
                }
            },
            ("surface", ()),
        ),
        # the endpoint retired: not the body
        ({"error": "This endpoint is deprecated. Use /v1/responses."}, ("surface", ())),
        # no word of what is gone
        ({"error": "Gone"}, ("surface", ())),
    ],
)
def test_gone_reads_the_body_only_for_a_feature(payload: Any, expected: Any) -> None:
    read = response(410, payload, LIVE_SEARCH)
    assert (read.action, read.drop) == expected


# -- in a turn against a loopback server ---------------------------------------------------


async def test_a_hosted_tool_refused_in_a_turn(serve: Callable[[Any], Awaitable[str]]) -> None:
    from tests.test_rejections import OK_STREAMS

    name = "newapi__400_hosted_tool_web_search_preview_not_supported_with_gpt_4_1"
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if len(bodies) == 1:
            return web.json_response(_body_of(name), status=400)
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    function = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    url = await serve(handler)
    request = rxllm.ChatRequest(
        model="gpt-4.1",
        messages=[rxllm.Message.user("news today?")],
        params={"tools": [WEB_SEARCH, function], "tool_choice": "auto"},
    )
    async with rxllm.provider(
        "custom", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    assert len(bodies) == 2
    assert bodies[1] == {**bodies[0], "tools": [function]}
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and retries[0].dropped == ["tools[0]"]
    assert events[-1].type == "done"
