"""Round fifteen's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the fifteenth round (listed in
tests/test_probe_rejections_39.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_38.py does for
round fourteen): 400 combinations. Each must get the original's action and dropped keys,
unless its envelope loses what the action rests on (`DIFFERENT`, with the reason): Google's
envelope gives LiveKit's 503 the status `UNAVAILABLE`, a transient code, which outranks the
words that refuse the images (as the module's docstring says of every structured code); and
a frame with neither status nor code keeps only Antigravity's words, a quota reached, which
are the account's where no 429 speaks (as round five's "a suspended account that names a
wait" is), whatever wait they name: the turn surfaces, as the wait of a day would have it.

Two readings were widened for it, the first time the combinations ran (before, 30 of them
read otherwise):

- the caller's country refused in words, where no status and no code says it: OpenAI's
  "Country, region, or territory not supported" in a frame without its 403 or its code
  `unsupported_country_region_territory` walked the static list; the words ("User location
  is not supported", "not available in your country") and the code now surface;
- the reset of what is spent, a wait in words: Google Antigravity's "Your quota will reset
  after 25h20m26s." and "Resets in 108h48m29s." name their wait (`error_body`), as "try again
  in" does (a quota's, a limit's or an allowance's reset, or one opening its sentence; not
  9router's own "(reset after 30s)" after the upstream's refusal); at its 429 without
  Google's RetryInfo, that wait is what says the quota passes.

Then one or two paraphrases of most cases in another server's envelope or words
(`VARIANTS`: vLLM's flat envelope, LiteLLM's relay, a frame without a status). None of these
bodies was recorded.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxllm.error_body import parse_error_body
from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_39 import ROUND_FIFTEEN

_LIVEKIT = "livekit_inference__503_gemini_image_input_not_enabled_on_gateway/"
_ANTIGRAVITY = (
    "antigravity__429_exhausted_capacity_quota_will_reset_after/",
    "antigravity__429_individual_quota_reached_resets_in_hours/",
)
# Combinations whose envelope loses what the original's action rests on: id -> why.
DIFFERENT: dict[str, str] = {
    **{
        _LIVEKIT + envelope: "Google's envelope gives the 503 `UNAVAILABLE`, a transient code, "
        "and structure outranks the words that refuse the images"
        for envelope in ("google", "google/sse")
    },
    **{
        case + envelope: "a frame with neither status nor code keeps a quota's words alone, the "
        "account's where no 429 speaks, whatever wait they name (it surfaces, as a day's wait "
        "would)"
        for case in _ANTIGRAVITY
        for envelope in ("tgi/sse", "ollama/sse")
    },
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_FIFTEEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_fifteens() -> None:
    assert len(combinations(ROUND_FIFTEEN)) == 400
    assert {key.split("/")[0] for key in DIFFERENT} <= set(ROUND_FIFTEEN)


PLAIN = body(temperature=0.2)


def in_band(message: str, sent: dict[str, Any] = PLAIN, **fields: Any) -> tuple[Any, ...]:
    read = frame({"message": message, **fields}, sent)
    return read.action, read.drop, read.delay


# -- the caller's country, in words: surface --------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Country, region, or territory not supported",
        "Country or region not supported (request id: 20240725104225)",
        "User location is not supported for the API use.",
        "This service is not available in your country.",
        "Your region is not supported.",
    ],
)
def test_the_callers_country_refused_surfaces(message: str) -> None:
    assert in_band(message) == ("surface", (), None)
    assert response(400, error(message), PLAIN).action == "surface"


def test_the_country_code_surfaces_whatever_the_words() -> None:
    payload = error("Request forbidden", code="unsupported_country_region_territory")
    assert frame(payload, PLAIN).action == "surface"


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key of the body by that name is the key refused
        ("'region' is not supported", body(region="eu", temperature=0.2), ("drop", ("region",))),
        # a location in a tool's definition is no caller's
        ("The location field of the tool is not supported", body(tools=TOOLS), ("static", ())),
    ],
)
def test_countries_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert in_band(message, sent)[:2] == expected


# -- the reset of what is spent, in words: a wait -------------------------------------------


@pytest.mark.parametrize(
    ("message", "wait"),
    [
        ("You have exhausted your capacity on this model. Your quota will reset after 5m.", 300.0),
        ("Individual quota reached. Resets in 1h2m3s.", 3723.0),
        ("Requests per minute exhausted. Resets in 45s.", 45.0),
        ("The limit resets after 30 seconds.", 30.0),
        # a day at most, as every wait
        ("Your quota will reset after 25h20m26s.", 86400.0),
    ],
)
def test_a_reset_in_words_is_a_wait(message: str, wait: float) -> None:
    assert parse_error_body(message).retry_after == wait
    read = response(429, error(message), PLAIN)
    assert (read.action, read.delay) == ("backoff", wait)


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a reset with no duration is no wait: a quota counted by the month surfaces
        ("Your quota resets monthly.", PLAIN, ("surface", (), None)),
        # a relay's note of its own cooldown is no reset of a quota: the upstream's refusal of
        # a key stands (9router's "... (reset after 30s)")
        (
            "Unsupported parameter: 'logprobs' is not supported with this model. (reset after 30s)",
            body(logprobs=True, temperature=0.2),
            ("drop", ("logprobs",), None),
        ),
        # a count of turns is no duration
        (
            "The conversation resets after 10 turns; unknown parameter: logprobs",
            body(logprobs=True, temperature=0.2),
            ("drop", ("logprobs",), None),
        ),
    ],
)
def test_resets_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    assert in_band(message, sent) == expected


# == the round's cases in other words ===================================================
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)

VARIANTS = [
    # -- nvidia_vllm__400_literal_error_tuple_loc_reasoning_effort_bad_request --------------
    case(
        "literal/a: SGLang's envelope, in-band",
        frame(
            {
                "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'reasoning_effort'), 'msg': \"Input should be 'low', 'medium' or 'high'\", "
                "'input': 'max'}"
            },
            body(reasoning_effort="max", temperature=0.2),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- opencode_go__400_upstream_json_unknown_field_thinking_param ------------------------
    case(
        "go_unknown/a: no `param`, vLLM's envelope",
        response(
            400,
            vllm('invalid request body: json: unknown field "top_k"'),
            body(top_k=40, temperature=0.2),
        ),
        "drop",
        ("top_k",),
    ),
    # -- dynamo__400_unsupported_parameters_backticked_list_bad_request ---------------------
    case(
        "backticked/a: one key, in-band",
        frame({"message": "Unsupported parameter(s): `logit_bias`"}, body(logit_bias={"1": 2})),
        "drop",
        ("logit_bias",),
    ),
    # -- copilot__400_may_not_include_more_than_128_tools, groq's items ----------------------
    case(
        "tool_cap/a: behind LiteLLM",
        response(
            400,
            litellm("litellm.BadRequestError: Too many tools: at most 64 are allowed", 400),
            WITH_TOOLS,
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    case(
        "tool_cap/b: in-band, no status",
        frame({"message": "You may not include more than 128 tools in your request."}, WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- cocore__400_tool_calls_not_supported_no_connected_provider -------------------------
    case(
        "router/a: vLLM's envelope",
        response(400, vllm("No online backends support tool calling for this model."), WITH_TOOLS),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- livekit_inference__503_gemini_image_input_not_enabled_on_gateway -------------------
    case(
        "images_off/a: 529, vLLM's envelope",
        response(529, vllm("vision input is currently disabled on this gateway", 529), body(True)),
        "images",
    ),
    # -- litellm_vertex__500_wrapping_429_quota_exceeded_resource_exhausted -----------------
    case(
        "relayed_429/a: a 502 and another upstream's words",
        response(
            502,
            error(
                "litellm.APIError: Error code: 429 - {'error': {'message': 'Rate limit reached "
                "for requests'}}"
            ),
            PLAIN,
        ),
        "backoff",
    ),
    # -- gateway__429_concurrent_request_limit_exceeded_retry_after_field -------------------
    case(
        "concurrency/a: in-band, no status",
        frame({"message": "Too many concurrent requests for this model"}, PLAIN),
        "backoff",
    ),
    # -- meta_llama__429_problem_document_tokens_within_time_frame --------------------------
    case(
        "problem/a: at 503, another title",
        response(
            503,
            {"title": "Service Unavailable", "detail": "Please try again later.", "status": 503},
            PLAIN,
        ),
        "backoff",
    ),
    # -- the organization not verified: surface ---------------------------------------------
    case(
        "verify/a: in-band, no `param`",
        frame({"message": "Your organization must be verified to stream this model."}, PLAIN),
        "surface",
    ),
    # -- lmstudio / openrouter context: surface ---------------------------------------------
    case(
        "context/a: in-band, LM Studio's words",
        frame(
            {
                "message": "the model is loaded with context length of only 4096 tokens, which "
                "is not enough"
            },
            PLAIN,
        ),
        "surface",
    ),
    case(
        "context/b: OpenRouter's words behind LiteLLM",
        response(
            400,
            litellm(
                "litellm.ContextWindowExceededError: This endpoint's maximum context length is "
                "8192 tokens. However, you requested about 9000 tokens",
                400,
            ),
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


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "countries": "country, region, " * 4_000 + "x",
    "country spaces": "country" + " " * 60_000 + "not supported",
    "resets": "resets in " * 6_000 + "5s",
    "reset units": "resets after " + "1h" * 20_000,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, PLAIN))
        verdicts.append(response(403, error(text), PLAIN))
        verdicts.append(response(429, text, PLAIN))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
