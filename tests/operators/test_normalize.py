from __future__ import annotations

import json
from typing import Any

import pytest
import reactivex
from reactivex.disposable import CompositeDisposable
from reactivex.testing.marbles import marbles_testing

from rxllm.events import Done, TextDelta, failed
from rxllm.fragments import Closed, Emit, RawChunk, ResponseHeaders, hang_up
from rxllm.operators import normalize
from rxllm.providers.openai_chat import ChatNormalizer
from tests.operators.marbles import BOOM, raise_on, reporting

P = "openai"


def chat(emit: Emit) -> ChatNormalizer:
    return ChatNormalizer(emit, P)


def chunk(data: str, event: str = "message") -> RawChunk:
    return RawChunk(P, 1, event, data)


def delta(text: str, finish: str | None = None) -> RawChunk:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    return chunk(json.dumps({"choices": [choice]}))


LOOKUP: dict[str | float, Any] = {
    "h": delta("Hel"),
    "l": delta("lo", "stop"),
    "D": chunk("[DONE]"),
    "H": TextDelta(provider=P, text="Hel"),
    "L": TextDelta(provider=P, text="lo"),
    "d": Done(provider=P, stop_reason="stop", raw_stop_reason="stop"),
    "x": failed(P, "http", "HTTP 500: boom", status=500),
}


def test_chunks_become_events_and_the_marker_settles() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-h-l-D-|", LOOKUP).pipe(normalize(chat)))
        assert results == exp("-H-L-d-|", LOOKUP)


def test_the_end_of_the_body_settles_a_held_finish() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-h-l-|", LOOKUP).pipe(normalize(chat)))
        assert results == exp("-H-L-(d,|)", LOOKUP)


def test_a_source_failure_passes_through() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-h-x-|", LOOKUP).pipe(normalize(chat)))
        assert results == exp("-H-x-|", LOOKUP)


def test_an_unreadable_chunk_is_a_protocol_error_quoting_it() -> None:
    out: list[Any] = []
    source = reactivex.from_iterable([delta("a"), chunk("{oops"), delta("b")])
    source.pipe(normalize(chat)).subscribe(out.append)
    assert [e.type for e in out] == ["text", "error"]
    assert out[1].error.kind == "protocol" and "'{oops'" in out[1].error.message


def test_an_unexpected_shape_is_a_protocol_error_not_a_traceback() -> None:
    out: list[Any] = []
    source = reactivex.from_iterable([chunk('{"choices": [{"index": 0, "delta": 5}]}')])
    source.pipe(normalize(chat)).subscribe(out.append)
    assert [e.type for e in out] == ["error"] and out[0].error.kind == "protocol"


def test_each_subscription_gets_a_fresh_normalizer() -> None:
    stream = reactivex.from_iterable([delta("a"), delta("b", "stop")]).pipe(normalize(chat))
    first: list[Any] = []
    second: list[Any] = []
    stream.subscribe(first.append)
    stream.subscribe(second.append)
    assert first == second and first[-1].type == "done"


class Counted:
    """A normalizer factory that keeps what it made."""

    def __init__(self) -> None:
        self.made: list[ChatNormalizer] = []

    def __call__(self, emit: Emit) -> ChatNormalizer:
        self.made.append(chat(emit))
        return self.made[-1]


def test_the_normalizer_is_made_at_the_first_item_not_at_subscription() -> None:
    # At a thousand streams started at once, what a stream does before its request is
    # sent delays every stream's first text: the normalizer waits for the response.
    counted = Counted()
    source: reactivex.subject.Subject[Any] = reactivex.subject.Subject()
    out: list[Any] = []
    source.pipe(normalize(counted)).subscribe(out.append)
    assert counted.made == []
    source.on_next(delta("a"))
    source.on_next(delta("b", "stop"))
    source.on_completed()
    assert len(counted.made) == 1 and [e.type for e in out] == ["text", "text", "done"]


def test_a_body_with_no_chunk_is_truncated_by_a_normalizer_made_at_its_end() -> None:
    counted = Counted()
    out: list[Any] = []
    reactivex.empty().pipe(normalize(counted)).subscribe(out.append)
    assert len(counted.made) == 1
    assert [(e.type, e.error.kind) for e in out] == [("error", "truncated")]


def test_a_hang_up_before_any_item_makes_no_normalizer_and_names_no_response() -> None:
    counted = Counted()
    source: reactivex.subject.Subject[Any] = reactivex.subject.Subject()
    subscription = source.pipe(normalize(counted)).subscribe(lambda _: None)
    assert hang_up(subscription) == Closed(None, None, None)
    assert counted.made == [] and not source.observers


def test_a_hang_up_after_the_headers_names_them() -> None:
    source: reactivex.subject.Subject[Any] = reactivex.subject.Subject()
    subscription = source.pipe(normalize(chat)).subscribe(lambda _: None)
    source.on_next(ResponseHeaders({"x-request-id": "req_1"}))
    assert hang_up(subscription).headers == {"x-request-id": "req_1"}


def test_a_hang_up_that_disposes_it_twice_names_the_response_once() -> None:
    """Two holders of one subscription (a user's composite) dispose it twice in one
    hang-up: it says which response closed once, not twice (two would name none)."""
    source: reactivex.subject.Subject[Any] = reactivex.subject.Subject()
    feeding = normalize(chat)(source)._subscribe(reactivex.Observer(), None)  # type: ignore[attr-defined]
    source.on_next(ResponseHeaders({"x-request-id": "req_1"}))
    twice = CompositeDisposable(feeding, feeding)
    assert hang_up(twice).headers == {"x-request-id": "req_1"}
    assert not source.observers


# -- a consumer's exception is never the provider's ----------------------------------


def test_a_consumer_exception_on_a_fragment_propagates_and_is_never_a_protocol_error() -> None:
    with marbles_testing() as (start, cold, _hot, _exp), pytest.raises(KeyError) as raised:
        start(cold("-h-l-D-|", LOOKUP).pipe(normalize(chat), raise_on("text")))
    assert raised.value is BOOM  # not swallowed into error(kind="protocol")


def test_a_source_reports_the_consumer_exception_with_on_error() -> None:
    seen: list[Any] = []
    errors: list[Exception] = []
    source = reporting([delta("a"), delta("b", "stop"), chunk("[DONE]")])
    source.pipe(normalize(chat), raise_on("text")).subscribe(seen.append, errors.append)
    assert seen == [] and errors == [BOOM]


def test_a_consumer_exception_on_what_end_emits_reaches_on_error() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-h-l-|", LOOKUP).pipe(normalize(chat), raise_on("done")))
        assert results == exp("-H-L-#", LOOKUP, error=BOOM)


def test_a_bug_in_the_normalizer_end_is_on_error_too() -> None:
    class Broken(ChatNormalizer):
        def end(self) -> None:
            raise RuntimeError("normalizer bug")

    errors: list[Exception] = []
    source = reactivex.from_iterable([delta("a")])
    source.pipe(normalize(lambda emit: Broken(emit, P))).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["normalizer bug"]


def test_a_normalizer_factory_that_is_not_callable_is_refused_at_the_call() -> None:
    with pytest.raises(TypeError, match="make_normalizer"):
        normalize(None)  # type: ignore[arg-type]
