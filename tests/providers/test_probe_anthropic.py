"""Anthropic Messages stream shapes found missing by a probe of the streaming reference,
the compaction docs (`usage.iterations`, `stop_reason: "compaction"`) and
anthropic-sdk-python's beta types (`beta_compaction_block.py`,
`beta_compaction_content_block_delta.py`, `beta_iterations_usage.py`,
`beta_container_upload_block.py`); ids and values are made up. Every body is checked
whatever the chunking."""

from __future__ import annotations

from typing import Any

from rxllm.events import Done, Event, ReasoningDelta, UsageUpdate
from tests.providers.test_anthropic_shapes import START, STOP, delta, end, run, start, stop
from tests.support import log_messages, summarize


def message_start(**usage: Any) -> dict[str, Any]:
    """`START` with its usage replaced, where given."""
    return {**START, "message": {**START["message"], "usage": usage or START["message"]["usage"]}}


def compaction(index: int, summary: str = "Summary of the conversation") -> list[dict[str, Any]]:
    return [
        start(index, {"type": "compaction", "content": None}),
        delta(index, {"type": "compaction_delta", "content": summary, "encrypted_content": "EC1"}),
        stop(index),
    ]


def text(index: int, value: str) -> list[dict[str, Any]]:
    return [
        start(index, {"type": "text", "text": ""}),
        delta(index, {"type": "text_delta", "text": value}),
        stop(index),
    ]


def last_usage(events: list[Event]) -> tuple[int, int, int, int, int]:
    usage = [e.usage for e in events if isinstance(e, UsageUpdate)][-1]
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.total_tokens,
    )


def test_a_pause_after_compaction_is_a_pause() -> None:
    """`pause_after_compaction`: the API stops with `stop_reason: "compaction"` once the
    summary is written, and the turn is sent back to continue, as after `pause_turn`."""
    events = run(message_start(), *compaction(0), end("compaction"), STOP)
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("pause", "compaction")


def test_compaction_iterations_are_counted_in_the_usage() -> None:
    """The compaction docs: "The top-level input_tokens and output_tokens do not include
    compaction iteration usage ... To calculate total tokens consumed and billed for a
    request, sum across all entries in the usage.iterations array"."""
    iterations = [
        {
            "type": "compaction",
            "input_tokens": 180000,
            "output_tokens": 3500,
            "cache_read_input_tokens": 7,
            "cache_creation_input_tokens": 0,
        },
        {"type": "message", "input_tokens": 23000, "output_tokens": 1000},
    ]
    events = run(
        message_start(input_tokens=23000, output_tokens=1),
        *compaction(0),
        *text(1, "Based on our conversation"),
        end("end_turn", input_tokens=23000, output_tokens=1000, iterations=iterations),
        STOP,
    )
    assert last_usage(events) == (203000, 4500, 7, 0, 203000 + 4500 + 7)
    assert summarize(events).text == "Based on our conversation"


def test_a_compaction_only_response_reports_the_compaction_tokens() -> None:
    """A response that only compacts reports zero top-level counts: its tokens are all in
    its compaction iteration. Other iterations (an advisor's, billed at another model's
    rates and left out of the top level) are not added."""
    iterations = [
        {"type": "compaction", "input_tokens": 144, "output_tokens": 276},
        {"type": "advisor_message", "model": "claude-x", "input_tokens": 9, "output_tokens": 9},
    ]
    events = run(
        message_start(input_tokens=0, output_tokens=0),
        *compaction(0),
        end("compaction", input_tokens=0, output_tokens=0, iterations=iterations),
        STOP,
    )
    assert last_usage(events) == (144, 276, 0, 0, 420)


def test_iterations_resent_in_a_later_message_delta_replace_the_earlier_ones() -> None:
    """Usage counts are cumulative: a later `iterations` list is the whole list so far."""
    first = [{"type": "compaction", "input_tokens": 100, "output_tokens": 10}]
    second = [*first, {"type": "message", "input_tokens": 5, "output_tokens": 6}]
    events = run(
        message_start(input_tokens=0, output_tokens=0),
        *compaction(0),
        end(None, input_tokens=0, output_tokens=0, iterations=first),
        *text(1, "ok"),
        end("end_turn", input_tokens=5, output_tokens=6, iterations=second),
        STOP,
    )
    assert last_usage(events) == (105, 16, 0, 0, 121)


def test_what_an_unknown_block_says_is_logged_with_its_values() -> None:
    """A `container_upload`'s file id has no event: logged with its values, not only its
    type."""
    with log_messages() as messages:
        events = run(
            message_start(),
            start(0, {"type": "container_upload", "file_id": "file_42"}),
            stop(0),
            *text(2, "ok"),
            end("end_turn"),
            STOP,
        )
    assert summarize(events).text == "ok"
    assert "file_42" in "\n".join(messages)


def test_a_compaction_block_is_kept_whole_for_the_turn_sent_back() -> None:
    """BetaCompactionBlockParam: "Users should round-trip these blocks from responses to
    subsequent requests to maintain context across compaction boundaries" (its summary
    and its opaque `encrypted_content`, verbatim). Before, it was only logged: a turn
    paused after compaction went back without its summary."""
    events = run(
        message_start(),
        *compaction(0, "the user asked about tulips"),
        *text(1, "ok"),
        end("end_turn"),
        STOP,
    )
    kept = [e for e in events if isinstance(e, ReasoningDelta)]
    assert [(e.text, e.details) for e in kept] == [
        (
            "",
            {
                "type": "compaction",
                "content": "the user asked about tulips",
                "encrypted_content": "EC1",
            },
        )
    ]
    assert summarize(events).text == "ok" and summarize(events).reasoning == ""


def test_an_input_json_delta_for_a_block_that_is_no_call_is_logged() -> None:
    with log_messages() as messages:
        events = run(
            message_start(),
            start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "input_json_delta", "partial_json": '{"a": 1}'}),
            stop(0),
            end("end_turn"),
            STOP,
        )
    assert [e.type for e in events] == ["usage", "done"]
    assert any('{"a": 1}' in m for m in messages), messages
