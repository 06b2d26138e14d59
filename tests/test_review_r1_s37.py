"""Session 37's review: readings a commit of this session broke, each beside the case the
commit meant, which still reads as it decided."""

from __future__ import annotations

import json

import pytest

from tests.rejection_rounds import openai_error
from tests.support import replay_every_way, summarize
from tests.test_probe_rejections_7 import body, frame, response

# -- storage said full where the server says a wait helps (6411bed) ------------------------

# 6411bed surfaces the caller's own storage said full ("Your file storage is full. Delete
# files ..."): it frees only as the caller deletes. It read storage before anything else,
# so a store said full or at its limit that a wait frees, in the server's own words, lost
# the backoff it had at a2ae8b1.


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (429, "Storage capacity reached, try again in 30 seconds"),
        (503, "Server storage is full, please try again later"),
        (429, "Your request was rate limited: storage requests limit exceeded, retry after 2s"),
        (503, "Upstream object storage capacity exceeded, retry later"),
    ],
)
def test_storage_full_that_a_wait_frees_backs_off(status: int, message: str) -> None:
    assert response(status, openai_error(message), body(temperature=0.5)).action == "backoff"
    assert frame({"message": message}, body(temperature=0.5)).action == "backoff"


@pytest.mark.parametrize(
    "message",
    [
        "Your file storage is full. Delete files to free up space.",
        # (a retry once the caller deleted: no wait said)
        "Vector store is full. Delete some files and retry.",
        "File storage limit reached. Try again after deleting files.",
    ],
)
def test_the_callers_storage_full_still_surfaces(message: str) -> None:
    assert response(429, openai_error(message), body(temperature=0.5)).action == "surface"


# -- a choiceless chunk's cost that is no float (5ada109) ----------------------------------

# 5ada109 reads a choiceless chunk with a top-level `cost` and no `usage` as OpenCode Zen's
# cost chunk, also after the usage chunk. `float()` of a JSON integer too large for a float
# raises OverflowError, which `_inference_cost` did not catch (only a word's ValueError): the
# replay's observer got the exception, no event, where a2ae8b1 ignored the chunk and ended
# the turn. Such a cost is no cost, as a word is.
_CHUNKS = [
    {"id": "x", "choices": [{"index": 0, "delta": {"content": "hi"}}]},
    {"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"id": "x", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                                         "total_tokens": 5}},
]  # fmt: skip


@pytest.mark.parametrize(
    ("cost", "said"),
    [("1" + "0" * 400, None), ('"1e999x"', None), ('"0.002"', 0.002)],
    ids=["integer_past_float", "word_guard", "decimal_string_guard"],
)
def test_a_cost_chunk_whose_cost_is_no_float_ends_the_turn(cost: str, said: float | None) -> None:
    frames = [json.dumps(chunk) for chunk in _CHUNKS]
    frames += ['{"id": "x", "choices": [], "cost": ' + cost + "}", "[DONE]"]
    events = replay_every_way(b"".join(b"data: " + f.encode() + b"\n\n" for f in frames), "openai")
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.stop_reason) == ("hi", "done", "stop")
    assert summary.usage is not None and summary.usage.cost_usd == said
