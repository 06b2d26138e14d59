from __future__ import annotations

import pydantic
import pytest

import rxllm
from rxllm.events import (
    Cancelled,
    Done,
    EventAdapter,
    ReasoningDelta,
    TextDelta,
    ToolRequest,
    ToolStart,
    Usage,
    UsageUpdate,
    commits,
    failed,
)

ALL = [
    TextDelta(provider="openai", text="hi"),
    ReasoningDelta(provider="anthropic", text="hm", signature="sig", attempt=2),
    ReasoningDelta(provider="anthropic", signature="blob", redacted=True),
    ToolStart(provider="google", call_id="c1", name="f", index=0),
    ToolRequest(
        provider="google", call_id="c1", name="f", index=0, arguments={"a": [1, {"b": None}]}
    ),
    UsageUpdate(
        provider="openai",
        usage=Usage.of(
            input_tokens=5, output_tokens=7, reasoning_tokens=3, cache_read_tokens=2, cost_usd=0.01
        ),
    ),
    Done(provider="openai", stop_reason="tool_use", raw_stop_reason="tool_calls", model="gpt-x"),
    failed("groq", "stream_error", "boom", status=503, retryable=True, raw="{}"),
    Cancelled(provider="local"),
]


@pytest.mark.parametrize("event", ALL, ids=lambda e: e.type)
def test_json_round_trip_through_the_discriminated_union(event: rxllm.Event) -> None:
    again = EventAdapter.validate_json(event.model_dump_json())
    assert again == event and type(again) is type(event)


def test_fast_construction_equals_validated_construction() -> None:
    assert TextDelta.make(provider="p", text="x") == TextDelta(provider="p", text="x")
    assert Done.make(provider="p", stop_reason="stop") == Done(provider="p", stop_reason="stop")
    assert repr(TextDelta.make(provider="p", text="x")) == repr(TextDelta(provider="p", text="x"))


def test_events_are_immutable() -> None:
    event = TextDelta(provider="p", text="x")
    with pytest.raises(pydantic.ValidationError):
        event.text = "y"  # type: ignore[misc]


def test_validation_rejects_unknown_types_and_fields() -> None:
    with pytest.raises(pydantic.ValidationError):
        EventAdapter.validate_python({"type": "nope", "provider": "p"})
    with pytest.raises(pydantic.ValidationError):
        EventAdapter.validate_python({"type": "done", "provider": "p", "stop_reason": "weird"})
    with pytest.raises(pydantic.ValidationError):
        TextDelta(provider="p", text="x", extra=1)  # type: ignore[call-arg]


def test_usage_total_is_consistent() -> None:
    usage = Usage.of(
        input_tokens=10,
        output_tokens=5,
        reasoning_tokens=2,
        cache_read_tokens=90,
        cache_write_tokens=1,
    )
    assert usage.total_tokens == 106 and usage.reasoning_tokens <= usage.output_tokens


def test_what_commits() -> None:
    assert [commits(e) for e in ALL] == [True, True, True, True, True, True, False, False, False]


def test_record_round_trip() -> None:
    record = rxllm.StreamRecord(
        provider="openai",
        requested_model="a",
        model="b",
        text="hi",
        tool_calls=[ALL[4]],
        usage=ALL[5].usage,
        terminal=ALL[6],
        attempts=[rxllm.Attempt(number=1, provider="openai", committed=True)],
        duration=0.5,
    )
    assert rxllm.StreamRecord.model_validate_json(record.model_dump_json()) == record


def test_a_tool_request_becomes_the_history_tool_call_keeping_its_signature() -> None:
    request = ToolRequest(
        provider="google", call_id="c1", name="f", index=0, arguments={"a": 1}, signature="sig"
    )
    assert request.to_call() == rxllm.ToolCall(
        id="c1", name="f", arguments={"a": 1}, signature="sig"
    )


def test_make_builds_what_validation_builds() -> None:
    """`make` skips validation on the hot path, not defaults: a default factory runs
    per object, so no list is shared between two of them."""
    made = rxllm.Attempt.make(number=1, provider="p")
    assert made == rxllm.Attempt(number=1, provider="p") and made.dropped == []
    other = rxllm.Attempt.make(number=2, provider="p")
    assert made.dropped is not other.dropped
    retry = rxllm.Retry.make(
        provider="p",
        reason=rxllm.ErrorInfo(kind="rejected", message="m", provider="p"),
        next_attempt=2,
        next_provider="p",
    )
    assert retry == rxllm.Retry(**retry.model_dump()) and retry.dropped == []


def test_events_built_on_the_hot_path_share_their_fields_set_safely() -> None:
    a = TextDelta.make(provider="p", attempt=1, text="a")
    b = TextDelta.make(provider="p", attempt=1, text="b")
    assert a.model_fields_set is b.model_fields_set == {"provider", "attempt", "text"}
    c = a.model_copy(update={"text": "c"})
    assert c.text == "c" and a.model_fields_set == {"provider", "attempt", "text"}
    with pytest.raises(pydantic.ValidationError):
        a.text = "x"  # type: ignore[misc]
    assert b.model_fields_set == {"provider", "attempt", "text"}


def test_text_delta_of_is_make_at_a_lower_cost() -> None:
    built = rxllm.TextDelta.of("openai", 2, "hé")
    made = rxllm.TextDelta.make(provider="openai", attempt=2, text="hé")
    assert built == made
    assert built.model_fields_set == made.model_fields_set == {"provider", "attempt", "text"}
    assert list(built.__dict__) == list(made.__dict__)
    assert built.model_dump_json() == made.model_dump_json()
