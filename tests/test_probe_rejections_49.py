"""Round twenty's first part in every envelope.

The 18 cases tests/rejections_extra gained in the twentieth round (its two parts, listed in
tests/test_probe_rejections_48.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_45.py does for
round eighteen): 360 combinations. Each must get the original's action and dropped keys,
unless its envelope loses what the action rests on (`DIFFERENT`, with the reason): the quota
spent at 429 in the three frames that keep no status (the account's, as the round decided),
the stringified error in OpenAI's frame, whose JSON text becomes the words of `message`, and
Scaleway's 416 in Google's envelope, whose status name for it, `UNKNOWN`, reads as the key
unknown there (the same key goes, its value moved to `max_tokens`).

Scaleway's 429 "You exceeded your current threshold of concurrent requests" read `static` in
the four frames that keep no status: concurrent requests over a threshold, a limit or a
maximum are the concurrency words they are now, as "too many concurrent requests" was.

Three of the cases needed no new reading here, but one more word: TGI's 424 "CUDA out of
memory ..." in TGI's and Ollama's frames (neither the 424 nor, as the frame is read here,
the `generation` type) read `static`; an accelerator that failed the run ("CUDA out of
memory", "CUDA error: ...", "GPU error") is the server's trouble now, with the module's
other words of it. And "Resource exhausted." at the 400 an envelope gives a frame without a
status read `static` (and "Resource has been exhausted (e.g. check quota)." surfaced): the
words are Google's RESOURCE_EXHAUSTED, a rate limit at whatever status a relay gives them.
"""

from __future__ import annotations

import pytest

from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_48 import ROUND_TWENTY_ONE, ROUND_TWENTY_TWO

CASES = ROUND_TWENTY_ONE + ROUND_TWENTY_TWO

# Combinations whose envelope loses what the original's action rests on: id -> why.
_QUOTA = "vertex_quota__429_quota_exceeded_message_only/"
_STRINGIFIED = "openrouter_relay__sse_error_stringified_code_429_provider_returned_error/"
DIFFERENT: dict[str, str] = {
    **{
        _QUOTA + envelope: "a frame with no status: 'Quota exceeded' without the 429 is the "
        "account's, as before (test_probe_rejections_48)"
        for envelope in ("openai/sse", "tgi/sse", "ollama/sse")
    },
    _STRINGIFIED + "openai/sse": "the JSON text with the 429 in it becomes the frame's "
    "`message`, read as words: an error object written as text is read in `error`, not in "
    "`message` (without an `error` member of its own)",
    **{
        "scaleway__416_max_completion_tokens_is_limited_for_this_model/" + envelope: "the "
        'envelope names 416 by no Google status, `UNKNOWN`, and a key refused beside "unknown" '
        "moves its value to the older name: `max_completion_tokens` still goes, as `max_tokens`"
        for envelope in ("google", "google/sse")
    },
}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(CASES))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_twentys() -> None:
    assert len(combinations(CASES)) == 360
    assert {key.split("/")[0] for key in DIFFERENT} <= set(CASES)
