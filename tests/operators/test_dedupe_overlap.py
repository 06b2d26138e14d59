"""dedupe_overlap: cut a chunk's prefix that repeats the tail of the text emitted."""

from __future__ import annotations

import random
from typing import Any, TypeAlias

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.events import Done, ReasoningDelta, TextDelta, ToolStart
from rxllm.fragments import Fragment, ToolArgs, ToolEnd
from rxllm.operators.dedupe_overlap import (
    MIN_OVERLAP,
    OVERLAP_WINDOW,
    dedupe_overlap,
    longest_overlap,
)

# A marble diagram's lookup, typed as reactivex expects it.
Marbles: TypeAlias = dict[str | float, Any]


def t(text: str, attempt: int = 1) -> TextDelta:
    return TextDelta.make(provider="p", attempt=attempt, text=text)


DONE = Done.make(provider="p", stop_reason="stop")
START = ToolStart.make(provider="p", call_id="call_1", name="f", index=0)


def run(
    *items: Fragment | str, min_overlap: int = MIN_OVERLAP, window: int = OVERLAP_WINDOW
) -> list[Fragment | str]:
    """Push `items` (strings are text chunks) through a fresh operator; `|` marks completion."""
    out: list[Fragment | str] = []
    source = reactivex.from_iterable([t(i) if isinstance(i, str) else i for i in items])
    source.pipe(dedupe_overlap(min_overlap, window)).subscribe(
        out.append, lambda e: out.append(f"error {e!r}"), lambda: out.append("|")
    )
    return out


def texts(*chunks: str, **options: int) -> list[str]:
    return [i.text if isinstance(i, TextDelta) else str(i) for i in run(*chunks, **options)]


# -- marbles ---------------------------------------------------------------------------


def test_a_resent_tail_is_cut() -> None:
    values: Marbles = {"a": t("Hello wonderful "), "b": t("wonderful world"), "d": DONE}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-d-|", values, None)
        expected = exp("-a-r-d-|", {"a": values["a"], "r": t("world"), "d": DONE}, None)
        assert start(source.pipe(dedupe_overlap())) == expected


def test_a_chunk_that_only_repeats_emits_nothing() -> None:
    values: Marbles = {
        "a": t("The quick brown fox"),
        "b": t("brown fox"),
        "c": t(" jumps"),
        "d": DONE,
    }
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-c-d-|", values, None)
        expected = exp("-a---c-d-|", values, None)
        assert start(source.pipe(dedupe_overlap())) == expected


def test_each_subscription_starts_clean() -> None:
    """A retry re-subscribes: the first attempt's text is not the second's history."""
    values: Marbles = {"a": t("Some answer text")}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-#", values, None)
        expected = exp("-a--a-#", values, None)
        assert start(source.pipe(dedupe_overlap(), ops.retry(2))) == expected


def test_with_the_test_scheduler_timings() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        ReactiveTest.on_next(150, t("before subscription")),
        ReactiveTest.on_next(210, t("abcdefghij")),
        ReactiveTest.on_next(220, START),
        ReactiveTest.on_next(230, t("cdefghijKL")),
        ReactiveTest.on_next(240, DONE),
        ReactiveTest.on_completed(250),
    )
    results = scheduler.start(lambda: source.pipe(dedupe_overlap()))
    assert results.messages == [
        ReactiveTest.on_next(210, t("abcdefghij")),
        ReactiveTest.on_next(220, START),
        ReactiveTest.on_next(230, t("KL")),
        ReactiveTest.on_next(240, DONE),
        ReactiveTest.on_completed(250),
    ]


# -- the rule --------------------------------------------------------------------------


def test_seven_repeated_characters_are_kept_eight_are_cut() -> None:
    assert texts("0123456789", "3456789 next") == ["0123456789", "3456789 next", "|"]
    assert texts("0123456789", "23456789 next") == ["0123456789", " next", "|"]


def test_the_longest_repeat_is_cut() -> None:
    # "abababab", "ababababab" and "abababababab" all end the tail and start the chunk.
    assert texts("xxabababababab", "ababababababab!!") == ["xxabababababab", "ab!!", "|"]


def test_a_chunk_shorter_than_the_minimum_always_passes() -> None:
    assert texts("a repeated tail", "tail") == ["a repeated tail", "tail", "|"]


def test_a_repeat_inside_the_chunk_but_not_at_its_start_is_kept() -> None:
    assert texts("one two three", "and one two three") == [
        "one two three",
        "and one two three",
        "|",
    ]


def test_the_window_bounds_how_far_back_a_repeat_may_reach() -> None:
    head = "0123456789"
    filler = "x" * (OVERLAP_WINDOW - len(head))
    # a resend of the whole window: cut whole
    assert texts(head, filler, head + filler) == [head, filler, "|"]
    # one character more: the resend begins before the window, so it is kept
    filler += "x"
    assert texts(head, filler, head + filler) == [head, filler, head + filler, "|"]
    # a smaller window, given explicitly
    assert texts(head, head, window=9) == [head, head, "|"]
    assert texts(head, head[1:], window=9) == [head, "|"]


def test_the_tail_spans_several_chunks_and_other_items() -> None:
    out = run("Hel", "lo w", START, "orld", "lo world again", DONE)
    assert out == [t("Hel"), t("lo w"), START, t("orld"), t(" again"), DONE, "|"]


def test_every_other_item_passes_unchanged_and_in_order() -> None:
    reasoning = ReasoningDelta.make(provider="p", text="same text, same text")
    args, end = ToolArgs(0, '{"a": 1}'), ToolEnd(0)
    items: list[Fragment] = [t("same text, "), reasoning, START, args, end, DONE]
    out = run(*items)
    assert out == [*items, "|"]
    assert all(a is b for a, b in zip(out, items, strict=False))


def test_an_unchanged_chunk_is_the_same_object() -> None:
    chunk = t("fresh text here")
    assert run(chunk)[0] is chunk


def test_a_cut_chunk_keeps_its_provider_and_attempt() -> None:
    assert run(t("abcdefghij", 3), t("abcdefghijK", 3)) == [t("abcdefghij", 3), t("K", 3), "|"]


@pytest.mark.parametrize(("min_overlap", "window"), [(0, 10), (8, 7)])
def test_bad_bounds_are_refused(min_overlap: int, window: int) -> None:
    with pytest.raises(ValueError):
        dedupe_overlap(min_overlap, window)


def test_errors_pass_through() -> None:
    errors: list[Exception] = []
    reactivex.throw(RuntimeError("bug")).pipe(dedupe_overlap()).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["bug"]


# -- longest_overlap -------------------------------------------------------------------


def brute_force(tail: str, chunk: str, min_overlap: int) -> int:
    for size in range(min(len(tail), len(chunk)), min_overlap - 1, -1):
        if tail.endswith(chunk[:size]):
            return size
    return 0


def test_longest_overlap_agrees_with_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        tail = "".join(rng.choice("ab") for _ in range(rng.randint(0, 30)))
        chunk = "".join(rng.choice("ab") for _ in range(rng.randint(0, 30)))
        for min_overlap in (1, 3, 8):
            expected = brute_force(tail, chunk, min_overlap)
            assert longest_overlap(tail, chunk, min_overlap) == expected, (tail, chunk)


def test_worst_case_chunks() -> None:
    """Periodic text defeats naive matching (quadratic over the whole window: minutes
    here, so a regression shows as a slow suite; no test asserts a time)."""
    tail = "a" * OVERLAP_WINDOW
    chunk = "a" * (OVERLAP_WINDOW - 1) + "b" + "a" * 100_000
    assert longest_overlap(tail, chunk) == OVERLAP_WINDOW - 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"window": 100.0}, "window"),
        ({"min_overlap": 8.5}, "min_overlap"),
        ({"min_overlap": None}, "min_overlap"),
        ({"window": True}, "window"),
    ],
)
def test_bounds_that_are_not_ints_are_refused(kwargs: dict[str, Any], match: str) -> None:
    """`dedupe_overlap(window=100.0)` was accepted, and raised at the first text chunk
    (a slice index must be an int)."""
    with pytest.raises(TypeError, match=match):
        dedupe_overlap(**kwargs)
