"""Round fourteen's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the fourteenth round (listed in
tests/test_probe_rejections_37.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_36.py does for
round thirteen): 400 combinations. Each must get the original's action and dropped keys,
unless its envelope loses what the action rests on (`DIFFERENT`, with the reason): the
relay whose `param` holds the upstream's sentence keeps only "Param Incorrect" in an envelope
without a `param`, and Google's envelope gives ModelScope's 429 the status
`RESOURCE_EXHAUSTED`, a rate-limit code, which outranks the account's words (as the module's
docstring says of every structured code).

Then one or two paraphrases of most cases in another server's envelope or words
(`VARIANTS`: vLLM's flat envelope, LiteLLM's relay, a frame without a status, FastAPI's
`detail`). None of these bodies was recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_37 import ROUND_FOURTEEN

_PARAM_HOLDS = "upstream_relay__400_param_incorrect_param_holds_max_tokens_too_large/"
_NO_PARAM = (
    "fastapi",
    "tgi",
    "tgi/sse",
    "ollama",
    "ollama/sse",
    "llamacpp",
    "llamacpp/sse",
    "anthropic",
    "anthropic/sse",
    "plain",
)
_BALANCE = "modelscope__429_insufficient_balance_1008/"
# Combinations whose envelope loses what the original's action rests on: id -> why.
DIFFERENT: dict[str, str] = {
    **{
        _PARAM_HOLDS + envelope: "the upstream's sentence, which names `max_tokens`, rides in "
        '`param`; without one the words are "Param Incorrect" alone, and a 400 naming '
        "nothing is static"
        for envelope in _NO_PARAM
    },
    **{
        _BALANCE + envelope: "Google's envelope gives the 429 `RESOURCE_EXHAUSTED`, a rate-limit "
        "code, and structure outranks the account's words"
        for envelope in ("google", "google/sse")
    },
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_FOURTEEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_fourteens() -> None:
    assert len(combinations(ROUND_FOURTEEN)) == 400
    assert {key.split("/")[0] for key in DIFFERENT} <= set(ROUND_FOURTEEN)


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- cliproxyapi__400_level_max_not_supported_valid_levels: drop reasoning_effort -------
    case(
        "level/a: in-band, no status",
        frame(
            {"message": 'level "xhigh" not supported, valid levels: low, medium, high'},
            body(reasoning_effort="xhigh", temperature=0.7),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "level/b: 'is unsupported', one level down, vLLM's envelope",
        response(
            400,
            vllm("effort 'minimal' is unsupported for this model"),
            body(reasoning={"effort": "minimal"}, temperature=0.7),
        ),
        "drop",
        ("reasoning",),
    ),
    # -- bedrock__400_maximum_tokens_you_requested_exceeds_model_limit: drop max_tokens -----
    case(
        "max_out/a: in-band, no status",
        frame(
            {"message": "The maximum tokens you requested exceeds the model limit of 8192"},
            body(max_tokens=16000, temperature=0.7),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "max_out/b: 'max output tokens' behind LiteLLM, to `max_completion_tokens`",
        response(
            400,
            litellm(
                "litellm.BadRequestError: BedrockException - max output tokens is too large "
                "for this model",
                400,
            ),
            body(max_completion_tokens=200000, temperature=0.7),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    # -- litellm__400_unsupported_params_volcengine_response_format_vision_model_id ---------
    case(
        "vision_id/a: another key and another vision model, in-band",
        frame(
            error(
                "litellm.UnsupportedParamsError: ollama does not support parameters: "
                "['parallel_tool_calls'], for model=llama3.2-vision:11b-instruct-q4_K_M."
            ),
            body(True, tools=TOOLS, parallel_tool_calls=True),
        ),
        "drop",
        ("parallel_tool_calls",),
    ),
    # -- groq__400_model_decommissioned_vision_preview_model_id: none -----------------------
    case(
        "vision_id/b: the vision model retired, in-band without its code",
        frame(
            {"message": "The model `llama-3.2-90b-vision-preview` has been decommissioned."},
            body(True, temperature=0.7),
        ),
        "surface",
    ),
    case(
        "vision_id/c: a vision model not found, vLLM's envelope at 404",
        response(404, vllm("The model `Qwen2-VL-7B-Instruct` does not exist.", 404), body(True)),
        "surface",
    ),
    # -- the vision refusals: images -------------------------------------------------------
    case(
        "vision_caller/a: 'for this enterprise', in-band",
        frame({"message": "vision is not enabled for this enterprise"}, body(True)),
        "images",
    ),
    case(
        "multimodal/a: FastAPI's detail, a list of one",
        response(
            422,
            {
                "detail": [
                    {"loc": ["body"], "msg": "This model does not support multimodal requests"}
                ]
            },
            body(True, temperature=0.7),
        ),
        "images",
    ),
    # -- moonshot__429_engine_overloaded_error_try_again_later: backoff ---------------------
    case(
        "engine_overloaded/a: in-band, no status",
        frame(
            error(
                "The engine is currently overloaded, please try again later",
                type="engine_overloaded_error",
            ),
            body(temperature=0.3),
        ),
        "backoff",
    ),
    # -- the balances used up: none ---------------------------------------------------------
    case(
        "balance/a: in-band, MiniMax's words",
        frame({"message": "insufficient balance (1008)"}, body()),
        "surface",
    ),
    case(
        "balance/b: 'recharge', vLLM's envelope at 400",
        response(
            400, vllm("Your account balance is insufficient. Please recharge your account."), body()
        ),
        "surface",
    ),
    # -- the context said otherwise: none ---------------------------------------------------
    case(
        "cache_tokens/a: in-band, TabbyAPI's words",
        frame(
            {"message": "Prompt length 70012 exceeds the available context size of 65536 tokens"},
            body(max_tokens=2048),
        ),
        "surface",
    ),
    case(
        "sequence_length/a: in-band, no status",
        frame(
            {
                "message": "The provided prompt is 9000 tokens long, but the maximum supported "
                "sequence length is just 8192!"
            },
            body(max_tokens=16),
        ),
        "surface",
    ),
    # -- cerebras__400_reasoning_effort_input_should_be_enum_wrong_api_format ---------------
    case(
        "enum/a: in-band, pydantic's location line",
        frame(
            {
                "message": "1 validation error for ChatCompletionRequest\nreasoning_effort\n  "
                "Input should be 'low' or 'high' [type=enum, input_value='medium']"
            },
            body(reasoning_effort="medium", temperature=0.7),
        ),
        "drop",
        ("reasoning_effort",),
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert verdict.action == action, verdict
    assert verdict.drop == drop, verdict
    assert dict(verdict.rename) == (rename or {})
