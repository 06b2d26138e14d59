"""Round eighteen's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the eighteenth round (listed in
tests/test_probe_rejections_44.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_42.py does for
round sixteen): 400 combinations. Each must get the original's action and dropped keys,
unless its envelope loses what the action rests on (`DIFFERENT`, with the reason):

- SambaNova's "Decimal above maximum value. Expected a value between 0 and 1, but got 100
  instead." names its key only in `param` (`top_p`); the envelopes that have no `param`
  carry the words alone, whose value is unquoted and names no key, and the static list is
  walked (as for any value refused with no key at 400).

No reading was widened for them: the other 390 read as their originals the first time the
round's four readings were in place.

Then one or two paraphrases of most cases in another server's envelope or words
(`VARIANTS`: vLLM's flat envelope, LiteLLM's relay, FastAPI's `detail`, a frame without a
status). None of these bodies was recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_9 import NO_PARAM
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_44 import ROUND_EIGHTEEN

# Combinations whose envelope loses what the original's action rests on: id -> why.
_SAMBANOVA = "sambanova__400_decimal_above_max_value_param_top_p/"
DIFFERENT: dict[str, str] = {
    _SAMBANOVA + envelope: "`top_p` is named only by `param`, which the envelope does not "
    "carry: the words' value is unquoted and names no key"
    for envelope in NO_PARAM
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_EIGHTEEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_eighteens() -> None:
    assert len(combinations(ROUND_EIGHTEEN)) == 400
    assert {key.split("/")[0] for key in DIFFERENT} <= set(ROUND_EIGHTEEN)


# == the round's cases in other words ===================================================
PLAIN = body(temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
REQUIRED_CHOICE = body(tools=TOOLS, tool_choice="required", temperature=0.2)
WITH_IMAGES = body(True, temperature=0.2)
WITH_LOGPROBS = body(logprobs=True, top_logprobs=2, temperature=0.2)

VARIANTS = [
    # -- litellm_bedrock__400_model_is_unsupported_for_streaming ------------------------------
    case(
        "streaming/a: vLLM's envelope",
        response(400, vllm("This model does not support streaming."), PLAIN),
        "surface",
    ),
    case(
        "streaming/b: in-band, no status",
        frame({"message": "Streaming is not supported for this model"}, PLAIN),
        "surface",
    ),
    case(
        "streaming/c: Bedrock's own body, no relay",
        response(400, {"message": "The model is unsupported for streaming"}, PLAIN),
        "surface",
    ),
    # -- triton__400_detail_logprobs_available_only_for_the_vllm_backend -----------------------
    case(
        "available_only/a: vLLM's envelope",
        response(400, vllm("logprobs are only available for the vLLM backend"), WITH_LOGPROBS),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    case(
        "available_only/b: in-band",
        frame({"message": "logprobs are currently available only for this backend"}, WITH_LOGPROBS),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- triton__400_detail_having_tools_requires_tool_call_parser -----------------------------
    case(
        "flag/a: OpenAI's envelope",
        response(400, error("tools in the request require --tool-call-parser"), WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- rapid_mlx__400_vision_request_prompt_tokens_exceed_per_batch_cap_downscale_image ----
    case(
        "downscale/a: FastAPI's detail",
        response(
            400,
            {"detail": "Image too detailed for the vision budget; downscale the image."},
            WITH_IMAGES,
        ),
        "images",
    ),
    case(
        "downscale/b: behind LiteLLM",
        response(
            400,
            litellm("litellm.BadRequestError: OpenAIException - Please resize the image.", 400),
            WITH_IMAGES,
        ),
        "images",
    ),
    # -- gpt4all: a key quoted and refused, and the messages' roles ---------------------------
    case(
        "gpt4all/a: vLLM's envelope",
        response(400, vllm("'tools' is not supported"), WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "gpt4all/b: in-band, a role refused",
        frame({"message": "Invalid 'messages[1].role': expected 'user' but got 'tool'"}, PLAIN),
        "surface",
    ),
    # -- vllm__501_not_implemented_only_auto_or_none_tool_choice_harmony -----------------------
    case(
        "harmony/a: in-band, no status",
        frame(
            {"message": "Only 'auto' or 'none' tool_choice is supported with Harmony"},
            REQUIRED_CHOICE,
        ),
        "drop",
        ("tool_choice",),
    ),
    # -- koboldcpp__503_detail_server_is_busy_try_again_later ----------------------------------
    case(
        "busy/a: in-band, no status",
        frame({"message": "Server is busy; please try again later."}, PLAIN),
        "backoff",
    ),
    # -- triton__400_detail_received_n_only_single_choice_supported ----------------------------
    case(
        "n/a: vLLM's envelope",
        response(400, vllm("Received n=3, but only n=1 is currently supported"), body(n=3)),
        "drop",
        ("n",),
    ),
    # -- volcengine_ark__400_image_exceeds_maximum_allowed_total_pixels ------------------------
    case(
        "pixels/a: in-band",
        frame({"message": "Image 1 failed: Image exceeds the allowed total pixels."}, WITH_IMAGES),
        "images",
    ),
    # -- groq__400_json_validate_failed_failed_generation --------------------------------------
    case(
        "json_mode/a: vLLM's envelope, the same words",
        response(
            400,
            vllm("Failed to generate JSON. Please adjust your prompt."),
            body(response_format={"type": "json_object"}, temperature=0.2),
        ),
        "surface",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert verdict.action == action, verdict
    assert verdict.drop == drop, verdict
    assert dict(verdict.rename) == (rename or {})
