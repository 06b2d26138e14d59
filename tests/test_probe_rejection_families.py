"""Four families of rejection wording that round fourteen read as `static`.

Round fourteen's unseen rejections (tests/test_probe_rejections_37.py and _38.py) sent, at 400,
words that each have a clear verdict and that `classify` read as `static` before: the degraded
retry walked the static list, one body per attempt, each refused again. Each family is read as
a family of wording, in paraphrases over HTTP at 400 and in a frame after `200 OK`
(`tests.rejection_rounds.both_ways`):

- the size in other words ("exceeds the token limit of this model", "token count 40000 is
  greater than the maximum allowed", "Total tokens exceed the model's limit"; and, found in
  session 33, a request said to have its tokens over the limit: "Request has 140000 tokens,
  more than the model's limit of 131072"): surface, as the context-length readings do;
- a model without vision asked for images ("Model does not have vision capability"): the
  images go, where the body has images;
- moderation and safety refusals ("Request blocked by content moderation", "The prompt was
  rejected by the safety system"): surface, no smaller body sends another prompt;
- money and plans ("Insufficient account funds", "Your trial has expired, please upgrade",
  "Your plan does not include access to this model"): surface.

The near misses keep their reading: a key named in the sentence is still dropped (`max_tokens`
over the model's token limit, a key refused by the safety system, a plan that does not include
a parameter), a token limit per minute is a rate limit, "vision" inside a model's id is a name,
and "plan mode" is no plan. None of these bodies was recorded.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxllm.degradation import Verdict, classify
from rxllm.events import ErrorInfo
from tests.rejection_rounds import both_ways
from tests.test_probe_rejections_7 import DEGRADES, TOOLS, body

SURFACE = ("surface", ())
IMAGES = ("images", ())
STATIC = ("static", ())

# A body with a key of each kind the near misses name, and with images or without.
WITH_IMAGES = body(True, max_tokens=100, logprobs=True, tools=TOOLS, temperature=0.2)
TEXT_ONLY = body(max_tokens=100, logprobs=True, tools=TOOLS, temperature=0.2)

SIZE = [
    "Your input exceeds the token limit of this model (32768 tokens)",
    "This request exceeds the token limit of this model.",
    "The prompt exceeds the model's token limit.",
    "token count 40000 is greater than the maximum allowed 32768",
    "Your token count (130000) is greater than the maximum allowed for this model.",
    "Total tokens exceed the model's limit.",
    "The total number of tokens exceeds the model's maximum.",
    "Number of tokens in the request (40000) exceeds the limit of this model (32768).",
    "The input is too long for the model's context window.",
    # the request said to have its tokens over the limit (session 33: read as static before)
    "Request has 140000 tokens, more than the model's limit of 131072",
    "This request has 9000 tokens which is more than the 8192 allowed for this model",
    "Your input has more tokens than this model accepts (32768).",
    "The prompt has 5000 tokens, exceeding the limit of 4096.",
    "Your messages contain 9000 tokens, which exceeds the maximum of 8192.",
    "The conversation holds 300000 tokens, over the context of this model.",
]
VISION = [
    "Model does not have vision capability",
    "This model has no vision capability.",
    "The model does not have image understanding capabilities.",
    "This model lacks vision support.",
    "Vision is not supported by this model.",
    "The selected model cannot see images.",
    "The chosen model can't view images.",
]
MODERATION = [
    "Request blocked by content moderation",
    "The prompt was rejected by the safety system",
    "Your input was flagged by our moderation.",
    "Your message was flagged by the moderation system.",
    "Request blocked by our safety filters.",
    "The content was rejected by the provider's safety classifier.",
    "This prompt violates the provider's terms of use.",
    "This request violates our usage policies.",
]
MONEY = [
    "Insufficient account funds",
    "Not enough funds in your account.",
    "Your trial has expired, please upgrade",
    "Your free trial has ended. Upgrade to keep going.",
    "The trial period for this key has ended.",
    "Your subscription has expired.",
    "Your plan does not include access to this model.",
    "Your current plan does not include this model.",
    "gpt-4o is not included in your current plan.",
]

POSITIVE = [
    *[(f"size: {m}", m, sent, SURFACE) for m in SIZE for sent in (TEXT_ONLY, WITH_IMAGES)],
    *[(f"vision: {m}", m, WITH_IMAGES, IMAGES) for m in VISION],
    *[(f"moderation: {m}", m, TEXT_ONLY, SURFACE) for m in MODERATION],
    *[(f"money: {m}", m, TEXT_ONLY, SURFACE) for m in MONEY],
]


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [pytest.param(m, s, e, id=i) for i, m, s, e in POSITIVE],
)
def test_the_family_reads_as_its_verdict(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected, expected]


# (id, message, body, the reading over HTTP at 400, the reading in a frame without a status)
NEAR_MISSES = [
    # -- the size: a key's value over the limit, a limit per a window --------------------
    (
        "size: max_tokens over the model's token limit",
        "max_tokens exceeds the token limit of this model.",
        body(max_tokens=100000),
        ("drop", ("max_tokens",)),
        ("drop", ("max_tokens",)),
    ),
    (
        "size: the max tokens value in prose",
        "The max tokens value exceeds the token limit of this model.",
        body(max_tokens=100000),
        ("drop", ("max_tokens",)),
        ("drop", ("max_tokens",)),
    ),
    (
        "size: max_completion_tokens greater than the maximum allowed",
        "max_completion_tokens (70000) is greater than the maximum allowed (65536).",
        body(max_completion_tokens=70000),
        ("drop", ("max_completion_tokens",)),
        ("drop", ("max_completion_tokens",)),
    ),
    (
        "size: output tokens over the model's limit are the output limit's",
        "Output tokens exceed the model's limit.",
        body(max_tokens=100000),
        ("drop", ("max_tokens",)),
        ("drop", ("max_tokens",)),
    ),
    (
        "size: a token limit per minute",
        "Request exceeds the token limit per minute.",
        body(),
        STATIC,
        ("backoff", ()),
    ),
    (
        "size: input tokens over a limit in TPM",
        "Prompt tokens exceed the limit of 40000 TPM.",
        body(),
        STATIC,
        ("backoff", ()),
    ),
    (
        "size: a request that has tokens per minute over a limit",
        "Request has 50000 tokens per minute, more than your limit.",
        body(),
        STATIC,
        ("backoff", ()),
    ),
    (
        "size: a request that has tokens over a limit per minute",
        "Your request has 9000 tokens, more than the limit of 8000 tokens per minute.",
        body(),
        STATIC,
        ("backoff", ()),
    ),
    (
        "size: a key that has tokens over the limit",
        "max_tokens has 9000 tokens, more than the model's limit",
        body(max_tokens=100000),
        ("drop", ("max_tokens",)),
        ("drop", ("max_tokens",)),
    ),
    (
        "size: a request that has tools over a limit",
        "The request has 10 tools, more than the limit of 8.",
        body(),
        STATIC,
        STATIC,
    ),
    # -- vision: no images in the body, "vision" in a model's id -------------------------
    (
        "vision: no images to remove",
        "Model does not have vision capability",
        TEXT_ONLY,
        STATIC,
        STATIC,
    ),
    (
        "vision: lacks vision, no images to remove",
        "This model lacks vision support.",
        TEXT_ONLY,
        STATIC,
        STATIC,
    ),
    (
        "vision: in a model's id, a key named",
        "Model llama-3.2-11b-vision-preview does not have 'logprobs' enabled.",
        WITH_IMAGES,
        ("drop", ("logprobs",)),
        ("drop", ("logprobs",)),
    ),
    (
        "vision: in a model's id, nothing named",
        "The model qwen2-vl-7b-vision does not have a chat template.",
        WITH_IMAGES,
        STATIC,
        STATIC,
    ),
    # -- moderation: a key named, the service's own trouble, another blocker -------------
    (
        "moderation: a key rejected by the safety system",
        "'safe_prompt' was rejected by the safety system for this model.",
        body(safe_prompt=True),
        ("drop", ("safe_prompt",)),
        ("drop", ("safe_prompt",)),
    ),
    (
        "moderation: safety_settings refused by it",
        "safety_settings: the threshold was rejected by the safety system.",
        body(safety_settings=[{"category": "HARM_CATEGORY_HARASSMENT"}]),
        ("drop", ("safety_settings",)),
        ("drop", ("safety_settings",)),
    ),
    (
        "moderation: the service unavailable",
        "The moderation service is temporarily unavailable, please try again later.",
        body(),
        ("backoff", ()),
        ("backoff", ()),
    ),
    (
        "moderation: blocked by something else",
        "Request blocked by the firewall.",
        body(),
        STATIC,
        STATIC,
    ),
    # -- money and plans: a key the plan leaves out, plan mode, a key named trial --------
    (
        "money: the plan does not include a named parameter",
        "Your plan does not include the parameter 'logprobs'.",
        body(logprobs=True),
        ("drop", ("logprobs",)),
        ("drop", ("logprobs",)),
    ),
    (
        "money: the plan does not include this parameter",
        "Your plan does not include this parameter.",
        body(logprobs=True),
        STATIC,
        STATIC,
    ),
    (
        "money: the plan does not include a key of the body",
        "Your plan does not include logprobs.",
        body(logprobs=True),
        STATIC,
        STATIC,
    ),
    (
        "money: plan mode does not support tools",
        "Plan mode does not support tools.",
        body(tools=TOOLS),
        ("drop", ("tools",)),
        ("drop", ("tools",)),
    ),
    (
        "money: tools in plan mode",
        "tools are not available in plan mode",
        body(tools=TOOLS),
        ("drop", ("tools",)),
        ("drop", ("tools",)),
    ),
    (
        "money: a key named trial_mode",
        "trial_mode is not supported",
        body(trial_mode=True),
        ("drop", ("trial_mode",)),
        ("drop", ("trial_mode",)),
    ),
]


@pytest.mark.parametrize(
    ("message", "sent", "over_http", "in_band"),
    [pytest.param(m, s, h, f, id=i) for i, m, s, h, f in NEAR_MISSES],
)
def test_the_near_misses_keep_their_reading(
    message: str,
    sent: dict[str, Any],
    over_http: tuple[str, tuple[str, ...]],
    in_band: tuple[str, tuple[str, ...]],
) -> None:
    assert both_ways(message, sent) == [over_http, in_band]


def test_the_families_are_five_or_more_each() -> None:
    assert min(len(SIZE), len(VISION), len(MODERATION), len(MONEY)) >= 5
    families = {i.split(":")[0] for i, *_ in NEAR_MISSES}
    assert all(
        sum(i.startswith(f) for i, *_ in NEAR_MISSES) >= 2 for f in families
    ) and families == {"size", "vision", "moderation", "money"}


_HOSTILE = {
    "token counts": "token count 9000 " * 4_096,
    "tokens over": "tokens exceed " * 4_681,
    "blocked by": "blocked by the " * 4_369,
    "violates": "violates the " * 5_041,
    "trial": "trial " * 10_922,
    "funds": "not enough " * 5_957,
    "plan": "plan does not include " * 2_978,
    "one long word": "a" * 65_536 + " is not included in your plan",
    "does not have": "does not have vision " * 3_120,
    "request has": "request has 9 tokens more than " * 2_114,
    "has tokens": "input has tokens " * 3_855,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p")
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, WITH_IMAGES, DEGRADES)), daemon=True
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is a fraction of a second
    assert verdicts
