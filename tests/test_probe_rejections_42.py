"""Round sixteen's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the sixteenth round (listed in
tests/test_probe_rejections_41.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_40.py does for
round fifteen): 400 combinations. Each must get the original's action and dropped keys,
unless its envelope loses what the action rests on (`DIFFERENT`, with the reason):

- Vercel AI Gateway's "Invalid input" says where only in its zod issues, a list in `param`
  whose path leads into `messages`; the envelopes carry the words alone, which name nothing,
  and the static list is walked (as for any bare "Invalid input" at 400);
- Vercel AI Gateway's "Stream error occurred" holds the upstream's context overflow only in
  `error.value.error_message`, which no other envelope carries: the words alone name nothing;
- a 429 that Anthropic's and Google's envelopes type as a rate limit (`rate_limit_error`,
  `RESOURCE_EXHAUSTED`), or that keeps Z.ai's own type `rate_limit_error` where the
  envelope has no other code (vLLM's, TGI's, llama.cpp's): structure outranks the words
  that ask for a recharge, as the module's docstring says of every rate-limit code; the
  originals keep Zhipu's code 1113 or none that says a rate.

No reading was widened for them: the other 343 read as their originals the first time.

Then one or two paraphrases of most cases in another server's envelope or words
(`VARIANTS`: vLLM's flat envelope, LiteLLM's relay, a frame without a status). None of these
bodies was recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_41 import ROUND_SIXTEEN

# Combinations whose envelope loses what the original's action rests on: id -> why.
_ZOD = "vercel_ai_gateway__400_invalid_input_zod_issues_in_param/"
_NESTED = "vercel_ai_gateway__sse_stream_error_nested_upstream_context_length/"
_ZAI = "zai__429_anthropic_rate_limit_error_type_1113_insufficient_balance/"
_ZHIPU = (
    "zhipu__429_1113_account_in_arrears_chinese/",
    "zhipu__429_1113_balance_or_resource_package_chinese_glm5/",
)
_ALL = (
    "openai",
    "openai/sse",
    "vllm",
    "vllm/sse",
    "fastapi",
    "tgi",
    "tgi/sse",
    "ollama",
    "ollama/sse",
    "llamacpp",
    "llamacpp/sse",
    "anthropic",
    "anthropic/sse",
    "google",
    "google/sse",
    "openrouter",
    "openrouter/sse",
    "litellm",
    "litellm/sse",
    "plain",
)
_TYPED_AS_RATE = ("anthropic", "anthropic/sse", "google", "google/sse")
DIFFERENT: dict[str, str] = {
    **{
        _ZOD + envelope: "the path into `messages` is in the zod issues of `param`, which the "
        'envelope does not carry: "Invalid input" alone names nothing'
        for envelope in _ALL
    },
    **{
        _NESTED + envelope: "the upstream's context overflow is in `error.value`, which the "
        'envelope does not carry: "Stream error occurred" alone names nothing'
        for envelope in _ALL
    },
    **{
        _ZAI + envelope: "the envelope keeps `rate_limit_error` as the only code of the 429 "
        "(Z.ai's 1113 lost), and a rate-limit code outranks the words"
        for envelope in (*_TYPED_AS_RATE, "vllm", "vllm/sse", "tgi", "llamacpp", "llamacpp/sse")
    },
    **{
        case + envelope: "the envelope types the 429 as a rate limit, and a rate-limit code "
        "outranks the words"
        for case in _ZHIPU
        for envelope in _TYPED_AS_RATE
    },
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_SIXTEEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_sixteens() -> None:
    assert len(combinations(ROUND_SIXTEEN)) == 400
    assert {key.split("/")[0] for key in DIFFERENT} <= set(ROUND_SIXTEEN)


# == the round's cases in other words ===================================================
PLAIN = body(temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
NAMED_CHOICE = body(
    tools=TOOLS, tool_choice={"type": "function", "function": {"name": "f"}}, temperature=0.2
)

VARIANTS = [
    # -- cloudflare_ai_gateway__400_2005_failed_to_get_response_from_provider ---------------
    case(
        "no_answer/a: vLLM's envelope at 400",
        response(400, vllm("Failed to get a response from the upstream provider."), PLAIN),
        "backoff",
    ),
    case(
        "no_answer/b: in-band, no status",
        frame({"message": "Unable to receive response from backend"}, PLAIN),
        "backoff",
    ),
    # -- dashscope__400_image_length_and_width_do_not_meet_model_restrictions ---------------
    case(
        "image_bounds/a: behind LiteLLM",
        response(
            400,
            litellm(
                "litellm.BadRequestError: DashscopeException - The image width does not meet "
                "the minimum size requirements",
                400,
            ),
            body(True, temperature=0.2),
        ),
        "images",
    ),
    # -- volcengine_ark__400_missing_parameter_json_path_input_content_text -----------------
    case(
        "input_path/a: vLLM's envelope, a list index",
        response(400, vllm("Field required at input[0].content"), PLAIN),
        "surface",
    ),
    # -- routers with no route that has the capability -------------------------------------
    case(
        "router/a: in-band, another router's words",
        frame({"message": "No eligible providers found that support function calling"}, WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- groq / lmstudio: a named tool choice refused by its type ---------------------------
    case(
        "tool_choice_type/a: vLLM's envelope",
        response(
            400,
            vllm("Only allowed string values for 'tool_choice' are [none, auto, required]"),
            NAMED_CHOICE,
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- volcengine__400_max_completion_tokens_integer_above_maximum_expected_value ---------
    case(
        "above_max/a: in-band, no param",
        frame(
            {
                "message": "The parameter `max_completion_tokens` specified in the request are "
                "not valid: integer above maximum value, expected a value <= 8192"
            },
            body(max_completion_tokens=32000, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    # -- the conversation's shape, in others' words: surface --------------------------------
    case(
        "odd_messages/a: vLLM's envelope",
        response(400, vllm("the number of messages must be odd"), PLAIN),
        "surface",
    ),
    case(
        "content_string/a: a pydantic loc in a frame",
        frame({"message": "body.messages.1.user.content : Input should be a valid string"}, PLAIN),
        "surface",
    ),
    # -- the account in Chinese and English at 429: surface ---------------------------------
    case(
        "balance/a: in-band, no status or code",
        frame({"message": "您的账户余额不足, 请充值后重试。"}, PLAIN),
        "surface",
    ),
    case(
        "balance/b: SiliconFlow's words at 429, OpenAI's envelope",
        response(
            429,
            error("Your paid balance is insufficient. Please top up and try again."),
            PLAIN,
        ),
        "surface",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert verdict.action == action, verdict
    assert verdict.drop == drop, verdict
    assert dict(verdict.rename) == (rename or {})
