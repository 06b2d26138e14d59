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


# -- a character's halves around a usage chunk (f147657) -----------------------------------


# f147657 joins a character's UTF-16 halves that came in two text deltas; a half still
# waiting when anything else comes is U+FFFD. Endpoints that put usage on every chunk
# (vLLM's `continuous_usage_stats`, Perplexity: docs/wire-mapping.md) emit a usage update
# between any two text deltas, so there the pair was never joined: 'hi \ufffd\ufffd there'.
# Usage says no text and ends no block: the half waits past it.
def test_halves_of_a_character_around_usage_on_every_chunk_are_one_character() -> None:
    deltas = [("hi \\ud83d", 1), ("\\ude00 there", 2)]
    frames = [
        f'{{"choices": [{{"index": 0, "delta": {{"content": "{text}"}}}}], "usage": '
        f'{{"prompt_tokens": 3, "completion_tokens": {n}, "total_tokens": {3 + n}}}}}'
        for text, n in deltas
    ]
    frames += ['{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}', "[DONE]"]
    events = replay_every_way(b"".join(b"data: " + f.encode() + b"\n\n" for f in frames), "openai")
    summary = summarize(events)
    assert summary.text == "hi \U0001f600 there"
    assert summary.usage is not None and summary.usage.output_tokens == 2


def test_a_half_waiting_at_the_end_after_usage_is_the_replacement_character() -> None:
    """The guard: a half with no other is still U+FFFD, said before the turn's end."""
    frames = [
        '{"choices": [{"index": 0, "delta": {"content": "a\\ud83d"}}], "usage": '
        '{"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}',
        '{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}',
        "[DONE]",
    ]
    events = replay_every_way(b"".join(b"data: " + f.encode() + b"\n\n" for f in frames), "openai")
    assert summarize(events).text == "a\ufffd"
    assert [e.type for e in events][-1] == "done"


# -- a number past any float, anywhere in a chunk (a2ae8b1 already) ------------------------


# A usage's own cost read with float() raised
# (chat's usage_cost, at a2ae8b1 already): OverflowError was no error the normalize step
# took as a chunk it cannot read, so it reached the observer as an exception, no event.
# Now it is that chunk's protocol error, as any other value of a shape not expected.
def test_a_usage_cost_past_any_float_is_a_protocol_error_not_an_exception() -> None:
    big = "1" + "0" * 400
    frames = [
        '{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}',
        '{"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, '
        '"total_tokens": 2, "cost": ' + big + "}}",
        "[DONE]",
    ]
    events = replay_every_way(b"".join(b"data: " + f.encode() + b"\n\n" for f in frames), "openai")
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.error_kind) == ("hi", "error", "protocol")
