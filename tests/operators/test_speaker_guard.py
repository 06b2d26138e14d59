"""speaker_guard: cut the text where another speaker's turn begins, outside code."""

from __future__ import annotations

import random
from typing import Any, TypeAlias

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.events import (
    Done,
    ReasoningDelta,
    TextDelta,
    ToolStart,
    Usage,
    UsageUpdate,
    failed,
)
from rxllm.fragments import FailureUsage, Fragment, ToolArgs, ToolEnd
from rxllm.operators.speaker_guard import DEFAULT_SPEAKERS, SPEAKER_HOLD, speaker_guard
from tests.operators.marbles import BOOM, raise_on

# A marble diagram's lookup, typed as reactivex expects it.
Marbles: TypeAlias = dict[str | float, Any]


def t(text: str, attempt: int = 1) -> TextDelta:
    return TextDelta.make(provider="p", attempt=attempt, text=text)


DONE = Done.make(provider="p", stop_reason="stop")
START = ToolStart.make(provider="p", call_id="call_1", name="f", index=0)


def run(*items: Fragment | str, **options: Any) -> list[Fragment | str]:
    """Push `items` (strings are text chunks) through a fresh guard; `|` marks completion."""
    out: list[Fragment | str] = []
    source = reactivex.from_iterable([t(i) if isinstance(i, str) else i for i in items])
    source.pipe(speaker_guard(**options)).subscribe(
        out.append, lambda e: out.append(f"error {e!r}"), lambda: out.append("|")
    )
    return out


def texts(*chunks: str, **options: Any) -> list[str]:
    return [i.text if isinstance(i, TextDelta) else str(i) for i in run(*chunks, **options)]


# -- marbles ---------------------------------------------------------------------------
# A group "(x,y)" spans one tick per character, so sources are padded with "-" to keep
# the columns of both lines aligned.


def test_a_marker_split_across_chunks_cuts_the_text_there() -> None:
    values: Marbles = {"a": t("Sure.\nUs"), "b": t("er: more?"), "c": t("x"), "d": DONE}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-c-d-|", values, None)
        expected = exp("-s-----d-|", {"s": t("Sure."), "d": DONE}, None)
        assert start(source.pipe(speaker_guard())) == expected


def test_text_without_markers_passes_unchanged() -> None:
    values: Marbles = {"a": t("Hello"), "b": t(" there,\nfriend"), "c": t("!\n"), "d": DONE}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-c-d-----|", values, None)
        # the final line break is held until `done` proves it starts no marker
        expected = exp("-a-b-x-(n,d)-|", {**values, "x": t("!"), "n": t("\n")}, None)
        assert start(source.pipe(speaker_guard())) == expected


def test_a_held_suffix_is_released_at_the_end_of_the_stream() -> None:
    values: Marbles = {"a": t("Hi"), "b": t(" there\nUs")}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-|", values, None)
        expected = exp("-a-x-(h,|)", {"a": t("Hi"), "x": t(" there"), "h": t("\nUs")}, None)
        assert start(source.pipe(speaker_guard())) == expected


def test_a_held_suffix_is_released_before_a_tool_start_and_before_done() -> None:
    values: Marbles = {"a": t("Let me look.\nUs"), "s": START, "b": t("ing it\nHu"), "d": DONE}
    out: Marbles = {
        "a": t("Let me look."),
        "h": t("\nUs"),
        "s": START,
        "b": t("ing it"),
        "k": t("\nHu"),
    }
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-s-----b-d-----|", values, None)
        expected = exp("-a-(h,s)-b-(k,d)-|", {**out, "d": DONE}, None)
        assert start(source.pipe(speaker_guard())) == expected


def test_a_consumer_exception_on_text_released_at_the_end_reaches_on_error() -> None:
    # Nothing upstream is left to report it once the source has completed.
    values: Marbles = {"a": t("\nUs")}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-|", values, None)
        assert start(source.pipe(speaker_guard(), raise_on("text"))) == exp("---#", error=BOOM)


def test_each_subscription_starts_clean() -> None:
    """A retry re-subscribes: the first attempt's cut must not silence the second."""
    values: Marbles = {"a": t("Hi\nUser: x")}
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-#", values, None)
        expected = exp("-h--h-#", {"h": t("Hi")}, None)
        assert start(source.pipe(speaker_guard(), ops.retry(2))) == expected


def test_with_the_test_scheduler_timings() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        ReactiveTest.on_next(150, t("before subscription")),
        ReactiveTest.on_next(210, t("one\n")),
        ReactiveTest.on_next(220, t("Assis")),
        ReactiveTest.on_next(230, t("tant: hello")),
        ReactiveTest.on_next(240, DONE),
        ReactiveTest.on_completed(250),
    )
    results = scheduler.start(lambda: source.pipe(speaker_guard()))
    assert results.messages == [
        ReactiveTest.on_next(210, t("one")),
        ReactiveTest.on_next(240, DONE),
        ReactiveTest.on_completed(250),
    ]


# -- markers ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", DEFAULT_SPEAKERS)
def test_every_default_speaker_is_a_marker(name: str) -> None:
    assert texts(f"The answer is 4.\n\n{name}: and 5?", "more") == ["The answer is 4.\n", "|"]


def test_the_marker_and_all_later_text_are_dropped_but_other_items_pass() -> None:
    usage = UsageUpdate.make(provider="p", usage=Usage.of(input_tokens=3, output_tokens=2))
    out = run("ok\nHuman: hi", "later", START, "more", usage, DONE)
    assert out == [t("ok"), START, usage, DONE, "|"]


def test_a_marker_split_at_every_position_is_found() -> None:
    whole = "Answer.\nUser: next question"
    for cut in range(len(whole) + 1):
        out = run(whole[:cut], whole[cut:], DONE)
        assert "".join(i.text for i in out if isinstance(i, TextDelta)) == "Answer.", cut
        assert out[-2:] == [DONE, "|"]


def test_custom_names_replace_the_defaults() -> None:
    assert texts("a\nUser: b", names=["Bob"]) == ["a\nUser: b", "|"]
    assert texts("a\nBob: b", names=["Bob"]) == ["a", "|"]


def test_a_crlf_line_end_keeps_its_carriage_return() -> None:
    assert texts("a\r\nUser: b") == ["a\r", "|"]


def test_a_name_without_a_line_break_before_it_is_not_a_marker() -> None:
    # The first line of an answer is the model's own; a marker needs a line break.
    assert texts("User: is how logs start.") == ["User: is how logs start.", "|"]


def test_near_misses_are_released_as_soon_as_they_cannot_match() -> None:
    chunks = ("x\nUs", "ual", "\nSystem", " status")
    assert texts(*chunks) == ["x", "\nUsual", "\nSystem status", "|"]


def test_empty_text_chunks_pass_through() -> None:
    assert texts("", "a") == ["", "a", "|"]


# -- code spans ------------------------------------------------------------------------


def test_a_marker_inside_a_code_fence_does_not_trigger() -> None:
    chunks = ["Example:\n```\n", "User: hi\nAssistant: hello\n", "```\nDone."]
    assert "".join(texts(*chunks)[:-1]) == "".join(chunks)


def test_a_fence_split_across_chunks_is_still_a_fence() -> None:
    chunks = ["Log:\n``", "`text\nUser: x\n``", "`\nok\nUser: y"]
    assert "".join(texts(*chunks)[:-1]) == "Log:\n```text\nUser: x\n```\nok"


def test_a_fence_closes_only_with_as_many_backticks() -> None:
    chunks = ["````md\n```\nUser: a\n```\n", "User: b\n````\nUser: c"]
    assert "".join(texts(*chunks)[:-1]) == "````md\n```\nUser: a\n```\nUser: b\n````"


def test_a_marker_after_the_closing_fence_triggers() -> None:
    assert texts("```py\nx = 1\n```\nUser: more") == ["```py\nx = 1\n```", "|"]


def test_a_marker_inside_a_tilde_fence_does_not_trigger() -> None:
    """CommonMark fences code with three or more tildes as well as backticks."""
    values: Marbles = {
        "a": t("Transcript:\n~~"),
        "b": t("~text\nUser: hi\nAs"),
        "c": t("sistant: hello\n~~~\nDone.\nUs"),
        "e": t("er: cut"),
        "d": DONE,
    }
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-b-c-e-d-|", values, None)
        out: Marbles = {
            "a": values["a"],
            "b": values["b"],  # nothing is held inside code
            "c": t("sistant: hello\n~~~\nDone."),
            "d": DONE,
        }
        assert start(source.pipe(speaker_guard())) == exp("-a-b-c---d-|", out, None)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # closed by a run of as many tildes or more, never by backticks...
        (
            "~~~~\n~~~\nUser: a\n```\nUser: b\n~~~~~\nUser: cut",
            "~~~~\n~~~\nUser: a\n```\nUser: b\n~~~~~",
        ),
        # ...nor does a tilde run close a backtick fence
        ("```\n~~~\nUser: a\n```\nUser: cut", "```\n~~~\nUser: a\n```"),
        # an info string may hold backticks and tildes; a fence may be indented
        ("~~~ `md` ~x\nUser: a\n~~~\nUser: cut", "~~~ `md` ~x\nUser: a\n~~~"),
        ("  ~~~sh\nUser: x\n  ~~~\nUser: cut", "  ~~~sh\nUser: x\n  ~~~"),
        # tildes in prose (strikethrough, "about") or a short run open nothing
        ("~~old~~ new\n~3 tries, ~~ two\nUser: cut", "~~old~~ new\n~3 tries, ~~ two"),
        ("It is ~~~ here.\nUser: cut", "It is ~~~ here."),
        # a tilde fence after a stray backtick ends its paragraph and span
        ("It`s:\n~~~\nUser: x\n~~~\nUser: cut", "It`s:\n~~~\nUser: x\n~~~"),
        # tildes inside inline code are code; a ~~~ line ends the paragraph (and its
        # span) even so, and its info string may hold backticks: a fence, never closed
        ("Type `x ~~~`.\nUser: cut", "Type `x ~~~`."),
        ("Type `\n~~~` then.\nUser: kept", None),
    ],
)
def test_tilde_fences_in_any_chunking(text: str, kept: str | None) -> None:
    if kept is None:  # a fence opens and never closes: nothing is cut
        kept = text
    for size in (1, 2, 3, 5, len(text)):
        chunks = [text[at : at + size] for at in range(0, len(text), size)]
        out = run(*chunks, DONE)
        assert "".join(i.text for i in out if isinstance(i, TextDelta)) == kept, size
        assert out[-2:] == [DONE, "|"]


def test_inline_code_that_continues_on_the_next_line_protects_a_marker() -> None:
    text = "Type `first line\nUser: literally` then go on."
    assert texts(text) == [text, "|"]


def test_backticks_inside_inline_code_do_not_open_a_fence() -> None:
    assert texts("Type `` ``` `` to open a fence.\nUser: hi") == [
        "Type `` ``` `` to open a fence.",
        "|",
    ]


def test_a_stray_backtick_does_not_switch_the_guard_off_past_a_blank_line() -> None:
    assert texts("It`s fine.\nmore\n\nHuman: z") == ["It`s fine.\nmore\n", "|"]
    assert texts("It`s fine.\n", " \n", "Human: z") == ["It`s fine.\n", " ", "|"]


# -- chunking never changes the answer -------------------------------------------------

SAMPLES = [
    "Plain answer.\nSecond line.\n\nUser: leaked turn\nAssistant: more",
    "Code:\n```python\nprint('User: x')\nUser: y\n```\nAfter.\nSystem: cut",
    "Inline `a\nUser: b` and ``c ``` d``.\nHuman: cut here",
    "No markers at all, just `code` and\nlines\n",
    "Near misses:\nUsers: no\nUser : no\nuser: no\nAssistant:",
    "stray ` tick\ncontinues\n\nUser: cut",
    "Tilde:\n~~~~ ```\nUser: x\n~~~\n```\nUser: y\n~~~~\nSystem: cut",
    "~~strike~~ and ~ tilde\n\nUser: cut",
]


@pytest.mark.parametrize("sample", SAMPLES)
def test_any_chunking_gives_the_same_text(sample: str) -> None:
    whole = "".join(i.text for i in run(sample) if isinstance(i, TextDelta))
    rng = random.Random(sample)
    for _ in range(60):
        chunks, at = [], 0
        while at < len(sample):
            size = rng.randint(1, 6)
            chunks.append(sample[at : at + size])
            at += size
        out = run(*chunks, DONE)
        assert out[-2:] == [DONE, "|"]
        assert "".join(i.text for i in out if isinstance(i, TextDelta)) == whole, chunks
    assert "".join(i.text for i in run(*sample) if isinstance(i, TextDelta)) == whole


def test_every_other_item_passes_unchanged_and_in_order() -> None:
    reasoning = ReasoningDelta.make(provider="p", text="hmm")
    args, end = ToolArgs(0, '{"a":'), ToolEnd(0)
    out = run(reasoning, START, args, end, DONE)
    assert out == [reasoning, START, args, end, DONE, "|"]
    assert all(a is b for a, b in zip(out, [reasoning, START, args, end, DONE], strict=False))


def test_released_text_keeps_the_provider_and_attempt_of_its_chunk() -> None:
    out = run(t("a\nUs", attempt=2), DONE)
    assert out == [t("a", attempt=2), t("\nUs", attempt=2), DONE, "|"]


def test_held_text_never_exceeds_the_hold() -> None:
    name = "N" * (SPEAKER_HOLD - 2)
    assert texts("a\n" + name + ": b", names=[name]) == ["a", "|"]
    with pytest.raises(ValueError, match="longer than hold"):
        speaker_guard(names=[name + "x"])
    with pytest.raises(ValueError, match="longer than hold"):
        speaker_guard(hold=8)


@pytest.mark.parametrize("names", [[], [""], ["Us\ner"], ["`x"], ["~~~x"]])
def test_bad_names_are_refused(names: list[str]) -> None:
    with pytest.raises(ValueError):
        speaker_guard(names=names)


def test_errors_pass_through() -> None:
    errors: list[Exception] = []
    reactivex.throw(RuntimeError("bug")).pipe(speaker_guard()).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["bug"]


def test_a_single_name_given_as_a_string_is_refused() -> None:
    """A `str` is a sequence of one-letter names: `speaker_guard("Bob")` guarded "\\nB:",
    "\\no:" and "\\nb:", never "\\nBob:"."""
    with pytest.raises(TypeError, match=r"\['Bob'\]"):
        speaker_guard("Bob")


@pytest.mark.parametrize(("kwargs", "match"), [({"names": [1]}, "name"), ({"hold": "32"}, "hold")])
def test_arguments_of_the_wrong_type_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(TypeError, match=match):
        speaker_guard(**kwargs)


def test_an_error_drops_the_held_text_and_the_usage_before_it_does_not_release_it() -> None:
    """Held text never reached anyone: released before the error, it committed the
    attempt the error ends, which could then not be retried (DESIGN: "Text held by a
    guard does not commit until released")."""
    failure = failed("p", "stream_error", "boom")
    usage = FailureUsage("p", 1, Usage(input_tokens=5))
    assert run("Hi\nUs", usage, failure) == [t("Hi"), usage, failure, "|"]
    assert run("\n", failure) == [failure, "|"]
