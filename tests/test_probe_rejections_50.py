"""The twenty-first round of unseen rejections (tests/rejections_extra, 20 cases): request
parameters OpenAI added in 2025-2026 (and Anthropic's and Google's equivalents) sent to
endpoints that do not know them, or not for this model: `reasoning_effort` and its values
("minimal", "none", "xhigh"), `reasoning.effort`, Anthropic's `output_config.effort`,
`prompt_cache_key` and `prompt_cache_retention`, `parallel_tool_calls`, `modalities`,
`top_k`, `thinking` on an OpenAI-compatible endpoint, Mistral's `prompt_mode`,
`chat_template_kwargs`, and custom and namespace tools (Codex's), from OpenAI's chat and
Responses APIs, the ChatGPT Codex backend, Azure, Groq, Cerebras, Fireworks, Mistral,
SGLang, vLLM, NVIDIA NIM, Gemini's OpenAI compatibility, Bedrock's gpt-oss, LiteLLM and
relays (CLIProxyAPI, a Claude Code proxy). The bodies near each new reading that must not
change with it are read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`), or as the chat wire reads a frame after `200 OK`.
The words of the near misses are paraphrases of the servers' formats.

Four of the 20 were misread before:

- A family of keys refused by its stem: vLLM answers `chat_template` or
  `chat_template_kwargs` sent for a Mistral tokenizer with one sentence, "chat_template is
  not supported for Mistral tokenizers." (nvidia_nim__400_chat_template_not_supported_for_
  mistral_tokenizers: before, static). The words spell `chat_template`, which the body does
  not hold; its `chat_template_kwargs` is no word of them, so nothing was named and the
  static list was walked. An identifier of two words or more that is no key of the body,
  spelled where nothing else is named, now names the body's keys it begins (`_` and more
  after it): `chat_template_kwargs` goes ("prompt_cache is not supported" names
  `prompt_cache_key` and `prompt_cache_retention`). A one-word stem names nothing
  ("stream" is not `stream_options`), a key the words spell whole is the one named, and a
  longer identifier that shares the stem ("chat_template_content_format") is another
  name. Behind NVIDIA's preset, which never drops `chat_template_kwargs`, the same words
  are a never-dropped key refused, as a quoted one is: the refusal surfaces, where the
  static list sent the key again three times (the case's reading); behind vLLM's preset
  the key goes.
- A tool's type refused: "Unsupported Responses tool type: 'custom'" (a Claude Code proxy's
  Responses endpoint given Codex's freeform `apply_patch`, free_claude_code__400_
  unsupported_responses_tool_type_custom) and vLLM's Harmony path "tool type namespace not
  supported" (vllm__400_tool_type_namespace_not_supported_harmony_responses: both before,
  static). "tool type" is now a word for the tools, as "tool use" and "tool calls" are:
  refused, the tools go (and `tool_choice` with them), where the static list dropped every
  other key first. `tool_choice` spelled beside "type" stays that key's (LM Studio's
  "Invalid tool_choice type: 'object'"), and "tool types" not refused names nothing.
- A key inside one of the body's objects called a parameter: Anthropic's "This model does
  not support the effort parameter." (anthropic__400_this_model_does_not_support_the_
  effort_parameter: before, static) to a body whose `output_config` holds the `effort`.
  The word named no key of the body, so the static list was walked (and reached
  `output_config` after the other optional keys, past the cap of retries). A plain word
  that is a key of one of the body's objects, written with the word for a parameter
  after it ("the effort parameter", "effort option"), where nothing else is named, now
  names that object (`reasoning` for the same words and `reasoning: {"effort": ...}`): no
  body can edit inside a key, as a path into it says already. Two objects that hold the
  word, a name every object shares ("type", "name"), or no word for a parameter after it,
  name nothing; an identifier inside an object refused for streaming walks the static
  list as before (`include_usage`, `stream_options` first).

The round's other 16 were read right before (committed first, 4ed676c):
chatgpt_backend__400_prompt_cache_retention_not_supported_on_this_model,
cliproxyapi__400_detail_unsupported_parameter_prompt_cache_retention (the key beside it,
`prompt_cache_key`, kept),
cerebras__400_parallel_tool_calls_false_not_supported_by_this_model (the tools kept),
fireworks__400_extra_inputs_not_permitted_field_prompt_cache_key_camelcase,
gemini__400_invalid_reasoning_effort_minimal_valid_values,
gemini__400_request_contains_an_invalid_argument_reasoning_effort_none (static: nothing
named), groq__400_property_prompt_cache_key_is_unsupported,
litellm_bedrock__400_gpt_oss_unknown_field_thinking_expected_one_of (the keys listed as
expected kept), litellm_together__400_unsupported_params_reasoning_effort_qwen,
mistral__400_reasoning_prompt_mode_not_enabled_for_this_model_3051 ("prompt mode" read
as `prompt_mode`), azure-openai__400_unrecognized_request_argument_modalities,
openai__400_unrecognized_request_argument_reasoning_effort_gpt_4o_mini,
openai__400_unrecognized_request_argument_top_k,
openai__400_unsupported_parameter_reasoning_dot_effort_param_gpt_4_1 (`reasoning` by the
path's head), openai__400_unsupported_parameter_reasoning_effort_moved_to_reasoning_dot_effort,
sglang__400_literal_error_reasoning_effort_xhigh_traceback.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Failed, Retry
from rxllm.request import Tool
from tests.rejection_rounds import assert_reads_as_its_file_says, both_ways, openai_error, verdict
from tests.test_probe_rejections_7 import NVIDIA, TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# drop 18, none 1, static 1
ROUND_TWENTY_ONE = (
    "anthropic__400_this_model_does_not_support_the_effort_parameter",
    "azure-openai__400_unrecognized_request_argument_modalities",
    "cerebras__400_parallel_tool_calls_false_not_supported_by_this_model",
    "chatgpt_backend__400_prompt_cache_retention_not_supported_on_this_model",
    "cliproxyapi__400_detail_unsupported_parameter_prompt_cache_retention",
    "fireworks__400_extra_inputs_not_permitted_field_prompt_cache_key_camelcase",
    "free_claude_code__400_unsupported_responses_tool_type_custom",
    "gemini__400_invalid_reasoning_effort_minimal_valid_values",
    "gemini__400_request_contains_an_invalid_argument_reasoning_effort_none",
    "groq__400_property_prompt_cache_key_is_unsupported",
    "litellm_bedrock__400_gpt_oss_unknown_field_thinking_expected_one_of",
    "litellm_together__400_unsupported_params_reasoning_effort_qwen",
    "mistral__400_reasoning_prompt_mode_not_enabled_for_this_model_3051",
    "nvidia_nim__400_chat_template_not_supported_for_mistral_tokenizers",
    "openai__400_unrecognized_request_argument_reasoning_effort_gpt_4o_mini",
    "openai__400_unrecognized_request_argument_top_k",
    "openai__400_unsupported_parameter_reasoning_dot_effort_param_gpt_4_1",
    "openai__400_unsupported_parameter_reasoning_effort_moved_to_reasoning_dot_effort",
    "sglang__400_literal_error_reasoning_effort_xhigh_traceback",
    "vllm__400_tool_type_namespace_not_supported_harmony_responses",
)

SURFACE = ("surface", ())
STATIC = ("static", ())
NO_TOOLS = ("drop", ("tools", "tool_choice"))

PLAIN = body(temperature=0.2)
WITH_KWARGS = body(chat_template_kwargs={"enable_thinking": True}, temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
WITH_EFFORT = body(output_config={"effort": "high"}, max_tokens=1024)
WITH_USAGE = body(
    stream_options={"include_usage": True, "continuous_usage_stats": True}, temperature=0.2
)


def test_the_cases_are_round_twenty_ones() -> None:
    assert len(set(ROUND_TWENTY_ONE)) == 20
    assert action_counts(ROUND_TWENTY_ONE) == {"drop": 18, "none": 1, "static": 1}


@pytest.mark.parametrize("case_name", ROUND_TWENTY_ONE)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- a family of keys refused by its stem: the body's keys it begins ----------------------


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        (
            "chat_template is not supported for Mistral tokenizers.",
            WITH_KWARGS,
            "chat_template_kwargs",
        ),
        ("`chat_template` cannot be set for this model", WITH_KWARGS, "chat_template_kwargs"),
        (
            "prompt_cache is not supported on this endpoint",
            body(prompt_cache_key="k", prompt_cache_retention="24h", temperature=0.2),
            "prompt_cache_key prompt_cache_retention",
        ),
    ],
)
def test_a_stem_names_the_keys_it_begins(message: str, sent: dict[str, Any], expected: str) -> None:
    dropped = ("drop", tuple(expected.split()))
    assert both_ways(message, sent) == [dropped, dropped]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no key of the body begins with it: nothing named
        ("chat_template is not supported for Mistral tokenizers.", PLAIN, STATIC),
        # the key the words spell whole is the one named
        (
            "chat_template is not supported for Mistral tokenizers.",
            body(chat_template="{{ messages }}", chat_template_kwargs={"x": 1}, temperature=0.2),
            ("drop", ("chat_template",)),
        ),
        # another identifier that shares the stem is another name
        ("chat_template_content_format is not supported", WITH_KWARGS, STATIC),
        # a one-word stem names nothing ("stream" is not `stream_options`)
        ("max is not supported here", body(max_completion_tokens=5, temperature=0.2), STATIC),
        # the stem in prose is no identifier
        ("chat template is not supported for Mistral tokenizers.", WITH_KWARGS, STATIC),
    ],
)
def test_stems_near_the_rule(message: str, sent: dict[str, Any], expected: Any) -> None:
    assert both_ways(message, sent) == [expected, expected]


def test_a_never_dropped_key_refused_by_its_stem_surfaces() -> None:
    message = "chat_template is not supported for Mistral tokenizers."
    assert verdict(openai_error(message), WITH_KWARGS, policy=NVIDIA) == SURFACE
    # without the key in the body the words name nothing of it
    assert verdict(openai_error(message), PLAIN, policy=NVIDIA) == STATIC


# -- a tool's type refused: the tools -------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Unsupported Responses tool type: 'custom'",
        "tool type namespace not supported",
        "Unsupported tool type: web_search_preview",
        "Tool type 'custom' is not supported by this model",
        "This endpoint does not support tool types other than function",
    ],
)
def test_a_tools_type_refused_drops_the_tools(message: str) -> None:
    assert both_ways(message, WITH_TOOLS) == [NO_TOOLS, NO_TOOLS]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # `tool_choice` spelled beside "type" is that key's, as before
        (
            "Invalid tool_choice type: 'object'. Supported string values: none, auto, required",
            WITH_TOOLS,
            ("drop", ("tool_choice",)),
        ),
        # no tools in the body: nothing to drop
        ("Unsupported Responses tool type: 'custom'", PLAIN, STATIC),
        # tool types not refused name nothing
        ("See the documentation for the tool types", WITH_TOOLS, STATIC),
    ],
)
def test_tool_types_near_the_rule(message: str, sent: dict[str, Any], expected: Any) -> None:
    assert both_ways(message, sent) == [expected, expected]


# -- a key inside an object, called a parameter: that object --------------------------------


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        ("This model does not support the effort parameter.", WITH_EFFORT, "output_config"),
        ("The effort parameter is not supported for this model", WITH_EFFORT, "output_config"),
        (
            "This model does not support the effort parameter.",
            body(reasoning={"effort": "high"}, temperature=0.2),
            "reasoning",
        ),
        ("effort option is unsupported", WITH_EFFORT, "output_config"),
    ],
)
def test_an_objects_key_called_a_parameter_drops_the_object(
    message: str, sent: dict[str, Any], expected: str
) -> None:
    assert both_ways(message, sent) == [("drop", (expected,)), ("drop", (expected,))]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # two objects hold the word: which one is not said
        (
            "This model does not support the effort parameter.",
            body(output_config={"effort": "high"}, reasoning={"effort": "high"}),
            STATIC,
        ),
        # a name every object's key may have
        (
            "Invalid type parameter",
            body(response_format={"type": "json_object"}, temperature=0.2),
            STATIC,
        ),
        # no word for a parameter after it
        ("effort is not supported for this model", WITH_EFFORT, STATIC),
        # no object holds it
        ("This model does not support the effort parameter.", PLAIN, STATIC),
        # an identifier inside an object refused for streaming: the static list, as before
        ("include_usage is not supported for streaming requests", WITH_USAGE, STATIC),
    ],
)
def test_inner_keys_near_the_rule(message: str, sent: dict[str, Any], expected: Any) -> None:
    assert both_ways(message, sent) == [expected, expected]


# -- the readings in turns against a loopback server ---------------------------------------


async def _turn(
    serve: Callable[[Any], Awaitable[str]],
    preset: str,
    rejection: dict[str, Any],
    params: dict[str, Any],
    tools: bool = False,
) -> tuple[list[dict[str, Any]], list[Any]]:
    """A turn whose first request is rejected at 400 with `rejection` and whose later ones
    are answered; the bodies sent, and the events."""
    from tests.test_rejections import OK_STREAMS

    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if len(bodies) == 1:
            return web.json_response(rejection, status=400)
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    url = await serve(handler)
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("hi")],
        params=params,
        tools=[Tool(name="lookup", description="Look a word up.")] if tools else [],
    )
    async with rxllm.provider(
        preset, api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    return bodies, events


MISTRAL_TOKENIZER = "nvidia_nim__400_chat_template_not_supported_for_mistral_tokenizers"


def _rejection(name: str) -> dict[str, Any]:
    from tests.test_probe_rejections_9 import EXTRA

    loaded: dict[str, Any] = json.loads(json.loads((EXTRA / f"{name}.json").read_text())["body"])
    return loaded


async def test_vllm_sends_the_kwargs_no_more(serve: Callable[[Any], Awaitable[str]]) -> None:
    params = {"chat_template_kwargs": {"enable_thinking": True}, "temperature": 0.2}
    bodies, events = await _turn(serve, "vllm", _rejection(MISTRAL_TOKENIZER), params)
    assert len(bodies) == 2 and "chat_template_kwargs" in bodies[0]
    assert bodies[1] == {k: v for k, v in bodies[0].items() if k != "chat_template_kwargs"}
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and retries[0].dropped == ["chat_template_kwargs"]


async def test_nvidia_surfaces_the_kwargs_refused(serve: Callable[[Any], Awaitable[str]]) -> None:
    params = {"chat_template_kwargs": {"enable_thinking": True}, "temperature": 0.2}
    bodies, events = await _turn(serve, "nvidia", _rejection(MISTRAL_TOKENIZER), params)
    assert len(bodies) == 1  # no retry: the preset never drops the key the words refuse
    end = events[-1]
    assert isinstance(end, Failed) and end.error.status == 400
    assert "chat_template is not supported for Mistral tokenizers" in end.error.message


async def test_a_tool_type_refused_drops_the_tools(serve: Callable[[Any], Awaitable[str]]) -> None:
    rejection = _rejection("free_claude_code__400_unsupported_responses_tool_type_custom")
    bodies, events = await _turn(serve, "vllm", rejection, {"temperature": 0.2}, tools=True)
    assert len(bodies) == 2 and "tools" in bodies[0] and "tools" not in bodies[1]
    assert bodies[1]["temperature"] == 0.2 and bodies[1]["messages"] == bodies[0]["messages"]
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and "tools" in retries[0].dropped


# -- the new readings take linear time ----------------------------------------------------

_HOSTILE = {
    "stem": "chat_template " * 8_000 + "is not supported",
    "stem glued": "chat_template_" * 8_000,
    "tool type": "tool type " * 8_000 + "not supported",
    "inner": "effort " * 8_000 + "parameter is not supported",
    "inner spaces": "effort" + " " * 60_000 + "parameter",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(
        tools=TOOLS,
        tool_choice="auto",
        chat_template_kwargs={"enable_thinking": True},
        prompt_cache_key_extra="k",
        output_config={"effort": "high"},
    )
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, {"detail": text}, sent))
        verdicts.append(response(503, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
