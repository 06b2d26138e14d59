"""Round twenty-one's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the twenty-first round (listed in
tests/test_probe_rejections_50.py) are taken apart and put back together in each envelope
of `tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_45.py does for
round eighteen): 400 combinations. Each must get the original's action and dropped keys,
unless its envelope loses what the action rests on. None does: the keys these servers
refuse are named in their words (OpenAI's and the ChatGPT backend's `param` repeats a key
the words quote or spell, `reasoning.effort` and `parallel_tool_calls` among them), so the
envelopes without a `param` read them as well; Gemini's "Request contains an invalid
argument." names nothing in any envelope, and NVIDIA's preset keeps
`chat_template_kwargs` in each. All 400 read as their originals the first time the
round's three readings were in place.

Then one or two paraphrases of most cases in another server's envelope or words
(`VARIANTS`: vLLM's flat envelope, LiteLLM's relay, FastAPI's `detail`, Anthropic's, a
frame without a status). None of these bodies was recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import NVIDIA, TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_50 import ROUND_TWENTY_ONE


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_TWENTY_ONE))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


def test_the_combinations_are_round_twenty_ones() -> None:
    assert len(combinations(ROUND_TWENTY_ONE)) == 400


# == the round's cases in other words ===================================================
PLAIN = body(temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
WITH_KWARGS = body(chat_template_kwargs={"enable_thinking": True}, temperature=0.2)
WITH_EFFORT = body(output_config={"effort": "high"}, max_tokens=1024)
CACHE_KEYS = body(prompt_cache_key="k", prompt_cache_retention="24h")
EFFORT = body(reasoning_effort="minimal", temperature=0.2)


def anthropic(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


VARIANTS = [
    # -- nvidia_nim__400_chat_template_not_supported_for_mistral_tokenizers -----------------
    case(
        "chat_template/a: vLLM's flat envelope, a preset that may drop the kwargs",
        response(400, vllm("chat_template is not supported for Mistral tokenizers."), WITH_KWARGS),
        "drop",
        ("chat_template_kwargs",),
    ),
    case(
        "chat_template/b: in-band, NVIDIA's preset",
        frame(
            {"message": "chat_template is not supported for Mistral tokenizers."},
            WITH_KWARGS,
            NVIDIA,
        ),
        "surface",
    ),
    case(
        "chat_template/c: behind LiteLLM",
        response(
            400,
            litellm(
                "litellm.BadRequestError: Hosted_vllmException - chat_template is not "
                "supported for Mistral tokenizers.",
                400,
            ),
            WITH_KWARGS,
        ),
        "drop",
        ("chat_template_kwargs",),
    ),
    # -- free_claude_code / vllm: a tool's type refused ------------------------------------
    case(
        "tool_type/a: FastAPI's detail",
        response(400, {"detail": "Unsupported tool type: 'custom'"}, WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tool_type/b: in-band, no status",
        frame({"message": "tool type namespace not supported"}, WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- anthropic__400_this_model_does_not_support_the_effort_parameter ------------------
    case(
        "effort/a: OpenAI's envelope",
        response(400, error("This model does not support the effort parameter."), WITH_EFFORT),
        "drop",
        ("output_config",),
    ),
    case(
        "effort/b: in-band, Anthropic's words",
        frame({"message": "The effort parameter is not supported by this model."}, WITH_EFFORT),
        "drop",
        ("output_config",),
    ),
    # -- prompt cache keys: one named, the other kept --------------------------------------
    case(
        "prompt_cache/a: vLLM's envelope",
        response(400, vllm("Unsupported parameter: prompt_cache_retention"), CACHE_KEYS),
        "drop",
        ("prompt_cache_retention",),
    ),
    case(
        "prompt_cache/b: Anthropic's envelope",
        response(400, anthropic("prompt_cache_key: Extra inputs are not permitted"), CACHE_KEYS),
        "drop",
        ("prompt_cache_key",),
    ),
    # -- reasoning_effort's values ---------------------------------------------------------
    case(
        "effort_value/a: in-band, no status",
        frame(
            {"message": "Invalid reasoning_effort: minimal. Valid values are: high, low"}, EFFORT
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "effort_value/b: FastAPI's detail",
        response(400, {"detail": "reasoning_effort 'minimal' is not supported"}, EFFORT),
        "drop",
        ("reasoning_effort",),
    ),
    # -- cerebras__400_parallel_tool_calls_false_not_supported_by_this_model ---------------
    case(
        "parallel/a: in-band",
        frame(
            {"message": "parallel_tool_calls=False is not supported by this model."},
            body(tools=TOOLS, parallel_tool_calls=False, temperature=0.2),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- gemini__400_request_contains_an_invalid_argument_reasoning_effort_none ------------
    case(
        "invalid_argument/a: OpenAI's envelope, nothing named",
        response(
            400, error("Request contains an invalid argument."), body(reasoning_effort="none")
        ),
        "static",
    ),
    # -- mistral__400_reasoning_prompt_mode_not_enabled_for_this_model_3051 ----------------
    case(
        "prompt_mode/a: vLLM's envelope",
        response(
            400,
            vllm("Reasoning prompt mode is not enabled for this model"),
            body(prompt_mode="reasoning", temperature=0.7),
        ),
        "drop",
        ("prompt_mode",),
    ),
    # -- litellm_bedrock__400_gpt_oss_unknown_field_thinking_expected_one_of ---------------
    case(
        "thinking/a: in-band",
        frame(
            {"message": "unknown field `thinking`, expected one of `messages`, `reasoning_effort`"},
            body(thinking={"type": "enabled"}, reasoning_effort="low"),
        ),
        "drop",
        ("thinking",),
    ),
    # -- a plain chat body, none of these keys ---------------------------------------------
    case(
        "plain/a: the tool type refused, no tools sent",
        response(400, error("Unsupported Responses tool type: 'custom'"), PLAIN),
        "static",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert verdict.action == action, verdict
    assert verdict.drop == drop, verdict
    assert dict(verdict.rename) == (rename or {})
