from __future__ import annotations

from typing import Any

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.scheduler import EventLoopScheduler
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxllm.events import Done, Failed, TextDelta, failed
from rxllm.operators import settle_once
from tests.operators.marbles import BOOM, EVENTS, P, raise_on, reporting


def test_passes_events_and_completes_at_the_terminal() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-b-d-|", EVENTS).pipe(settle_once(P)))
        assert results == exp("-a-b-(d,|)", EVENTS)


def test_drops_late_events_and_unsubscribes_at_the_terminal() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-a-x-b-d-|", EVENTS)
        results = start(source.pipe(settle_once(P)))
        assert results == exp("-a-(x,|)", EVENTS)


def test_a_source_ending_without_terminal_is_truncated() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-|", EVENTS).pipe(settle_once(P)))
    assert [r.value.kind for r in results] == ["N", "N", "N", "C"]
    last: Failed = results[2].value.value
    assert last.error.kind == "truncated" and last.error.provider == P
    assert results[2].time == results[3].time == 200 + 5


def test_an_empty_source_is_truncated_with_the_given_provider_name() -> None:
    events: list[Any] = []
    reactivex.empty().pipe(settle_once("groq")).subscribe(events.append)
    assert len(events) == 1 and events[0].error.kind == "truncated"
    assert events[0].provider == "groq"


def test_on_error_is_passed_on_as_a_bug() -> None:
    boom = RuntimeError("bug")
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-#", EVENTS, error=boom).pipe(settle_once(P)))
        assert results == exp("-a-#", EVENTS, error=boom)


def test_terminal_disposes_the_source_subscription() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        ReactiveTest.on_next(10, EVENTS["a"]),
        ReactiveTest.on_next(20, EVENTS["d"]),
        ReactiveTest.on_next(30, EVENTS["b"]),
        ReactiveTest.on_completed(40),
    )
    results = scheduler.start(lambda: source.pipe(settle_once(P)))
    assert [m.time for m in results.messages] == [210, 220, 220]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 220)]


def test_a_consumer_exception_on_the_terminal_reaches_on_error_and_unsubscribes() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        ReactiveTest.on_next(10, EVENTS["a"]),
        ReactiveTest.on_next(20, EVENTS["d"]),
        ReactiveTest.on_completed(40),
    )
    results = scheduler.start(lambda: source.pipe(settle_once(P), raise_on("done")))
    assert results.messages == [
        ReactiveTest.on_next(210, EVENTS["a"]),
        ReactiveTest.on_error(220, BOOM),
    ]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 220)]


def test_a_consumer_exception_on_the_truncation_error_reaches_on_error() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-|", EVENTS).pipe(settle_once(P), raise_on("error")))
        assert results == exp("-a-#", EVENTS, error=BOOM)


def test_a_consumer_exception_on_another_event_is_reported_by_the_source() -> None:
    errors: list[Exception] = []
    source = reporting([EVENTS["a"], EVENTS["d"]])
    source.pipe(settle_once(P), raise_on("text")).subscribe(on_error=errors.append)
    assert errors == [BOOM]


def test_each_subscription_settles_on_its_own() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-d-a|", EVENTS).pipe(settle_once(P), ops.repeat(2)))
    on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed
    assert results == [
        *(on_next(201, EVENTS["a"]), on_next(203, EVENTS["d"])),
        *(on_next(204, EVENTS["a"]), on_next(206, EVENTS["d"]), on_completed(206)),
    ]


def test_disposing_before_the_terminal_leaves_no_drain_timer() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(ReactiveTest.on_next(10, EVENTS["a"]))
    scheduler.start(lambda: source.pipe(settle_once(P, drain=50)), disposed=300)
    assert source.subscriptions == [ReactiveTest.subscribe(200, 300)]
    assert [item for item, _ in scheduler._queue.items if not item.is_cancelled()] == []


# -- hold: after a `done`, the completion waits for the source's end ------------------------

on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed
subscribe = ReactiveTest.subscribe


def _held(*messages: Any, dispose: int = 1000, **kwargs: Any) -> tuple[Any, Any, TestScheduler]:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(*messages)
    results = scheduler.start(lambda: source.pipe(settle_once(P, **kwargs)), disposed=dispose)
    return results.messages, source.subscriptions, scheduler


def test_the_completion_after_a_done_waits_for_the_source_to_end_within_the_hold() -> None:
    # source:  -a-d---|      (hold 10)
    # result:  -a-d---|
    messages, subscriptions, _ = _held(
        on_next(10, EVENTS["a"]), on_next(20, EVENTS["d"]), on_completed(25), hold=10, drain=50
    )
    assert messages == [on_next(210, EVENTS["a"]), on_next(220, EVENTS["d"]), on_completed(225)]
    assert subscriptions == [subscribe(200, 225)]


def test_a_hold_that_runs_out_completes_and_lets_the_source_drain() -> None:
    # source:  -a-d----------|    (hold 3, drain 50)
    # result:  -a-d-|             the source still subscribed until its end
    messages, subscriptions, scheduler = _held(
        on_next(10, EVENTS["a"]),
        on_next(20, EVENTS["d"]),
        on_next(22, EVENTS["b"]),  # after the terminal: dropped, as without a hold
        on_completed(40),
        hold=3,
        drain=50,
    )
    assert messages == [on_next(210, EVENTS["a"]), on_next(220, EVENTS["d"]), on_completed(223)]
    assert subscriptions == [subscribe(200, 240)]
    assert [item for item, _ in scheduler._queue.items if not item.is_cancelled()] == []


def test_a_hold_without_a_drain_unsubscribes_when_it_runs_out() -> None:
    messages, subscriptions, _ = _held(on_next(20, EVENTS["d"]), on_completed(40), hold=3, drain=0)
    assert messages == [on_next(220, EVENTS["d"]), on_completed(223)]
    assert subscriptions == [subscribe(200, 223)]


def test_only_the_completion_after_a_done_waits() -> None:
    messages, subscriptions, _ = _held(on_next(20, EVENTS["x"]), on_completed(25), hold=10)
    assert messages == [on_next(220, EVENTS["x"]), on_completed(220)]
    assert subscriptions == [subscribe(200, 220)]


def test_a_source_failing_during_the_hold_still_ends_the_turn_done() -> None:
    """The turn's last event came: how its body ended (a reset after `[DONE]`) is no
    failure of the turn's."""
    messages, subscriptions, _ = _held(
        on_next(20, EVENTS["d"]), ReactiveTest.on_error(24, RuntimeError("reset")), hold=10
    )
    assert messages == [on_next(220, EVENTS["d"]), on_completed(224)]
    assert subscriptions == [subscribe(200, 224)]


def test_disposing_during_the_hold_unsubscribes_and_leaves_no_timer() -> None:
    messages, subscriptions, scheduler = _held(
        on_next(20, EVENTS["d"]), on_completed(100), hold=50, drain=50, dispose=230
    )
    assert messages == [on_next(220, EVENTS["d"])]  # the caller left before the completion
    assert subscriptions == [subscribe(200, 230)]
    assert [item for item, _ in scheduler._queue.items if not item.is_cancelled()] == []


def test_a_consumer_exception_on_a_done_with_a_hold_reaches_on_error_at_once() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(20, EVENTS["d"]), on_completed(25))
    results = scheduler.start(
        lambda: source.pipe(settle_once(P, hold=10), raise_on("done")), disposed=1000
    )
    assert results.messages == [ReactiveTest.on_error(220, BOOM)]
    assert source.subscriptions == [subscribe(200, 220)]


def test_a_hold_without_a_clock_completes_at_once() -> None:
    """Subscribed without a scheduler, outside a running loop (`rxllm.replay`): nothing
    can time a hold, and nothing waits."""
    events: list[Any] = []
    reactivex.of(EVENTS["a"], EVENTS["d"]).pipe(settle_once(P, hold=1.0)).subscribe(events.append)
    assert events == [EVENTS["a"], EVENTS["d"]]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"drain": None}, "drain"),
        ({"drain": "2"}, "drain"),
        ({"drain": -1}, "drain"),
        ({"drain": float("nan")}, "drain"),
        ({"hold": -1}, "hold"),
        ({"hold": None}, "hold"),
        ({"provider": None}, "provider"),
    ],
)
def test_bad_arguments_are_refused_at_the_call(kwargs: dict[str, Any], match: str) -> None:
    """`settle_once(drain=None)` was accepted and raised at the terminal event, after
    emitting it: the stream never completed."""
    with pytest.raises((TypeError, ValueError), match=match):
        settle_once(**kwargs)


class _MyDone(Done):
    """A user's own terminal event class."""


class _MyFailed(Failed):
    pass


@pytest.mark.parametrize(
    "end",
    [
        _MyDone.make(provider=P, attempt=1, stop_reason="stop"),
        _MyFailed.make(provider=P, attempt=1, error=failed(P, "stream_error", "boom").error),
    ],
    ids=["done", "error"],
)
def test_a_subclass_of_a_terminal_event_is_terminal(end: Done | Failed) -> None:
    text = TextDelta.of(P, 1, "hi")
    events: list[Any] = []
    late = TextDelta.of(P, 1, "late")
    reactivex.of(text, end, late).pipe(settle_once(P)).subscribe(events.append)
    assert events == [text, end]  # one terminal, the subclass's; what came after dropped


def test_a_scheduler_that_can_no_longer_time_the_drain_still_completes() -> None:
    """A scheduler disposed mid-turn (`EventLoopScheduler().dispose()`): the drain timer
    raised DisposedException, so the terminal came but `on_completed` never did (a review
    of rxllm from threads and schedulers). The source is unsubscribed at once instead."""
    disposed = EventLoopScheduler()
    disposed.dispose()
    subject: reactivex.subject.Subject[Any] = reactivex.subject.Subject()
    out: list[Any] = []
    subject.pipe(settle_once(drain=2.0)).subscribe(
        out.append, out.append, lambda: out.append("|"), scheduler=disposed
    )
    subject.on_next(EVENTS["a"])
    subject.on_next(EVENTS["d"])
    assert out == [EVENTS["a"], EVENTS["d"], "|"]
    assert not subject.observers  # unsubscribed: no drain left waiting on a dead clock


# -- what the observer raises once the stream has ended ------------------------------------


def _ends_raising(observable: Any, **observer: Any) -> None:
    observable.subscribe(
        on_next=observer.get("on_next", lambda _: None),
        on_error=observer.get("on_error", lambda _: None),
        on_completed=observer.get("on_completed", lambda: None),
    )


def _raise(*_: object) -> None:
    raise RuntimeError("the observer's own bug")


@pytest.mark.parametrize("where", ["on_completed", "to_list"])
async def test_what_the_observer_raises_at_the_end_reaches_the_loops_handler(
    where: str, local_server: Any
) -> None:
    """An exception in the observer's `on_completed`, or in its `on_next` of what an
    operator emits at completion (`to_list`), went back to the source, which gave it
    to the settled subscription: dropped with a debug log (off by default), nowhere."""
    import asyncio

    import rxllm

    loop = asyncio.get_running_loop()
    reported: list[BaseException | None] = []
    loop.set_exception_handler(lambda _, context: reported.append(context.get("exception")))
    request = rxllm.ChatRequest(model="answer", messages=[rxllm.Message.user("hi")])
    ended = loop.create_future()
    try:
        async with local_server.provider("openai") as provider:
            stream = provider.stream(request)
            if where == "on_completed":

                def on_completed() -> None:
                    ended.set_result(None)
                    _raise()

                _ends_raising(stream, on_completed=on_completed)
            else:

                def on_next(_: object) -> None:
                    ended.set_result(None)
                    _raise()

                _ends_raising(stream.pipe(ops.to_list()), on_next=on_next)
            await ended
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert [type(exc) for exc in reported] == [RuntimeError]


def test_without_a_loop_it_propagates_to_who_drives_the_stream() -> None:
    """`rxllm.replay` needs no loop: its subscribe drives the whole stream."""
    import rxllm

    with pytest.raises(RuntimeError, match="the observer's own bug"):
        _ends_raising(rxllm.replay(b"data: [DONE]\n\n", provider="openai"), on_completed=_raise)
