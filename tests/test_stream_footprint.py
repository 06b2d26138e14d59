"""What a stream in flight keeps: structure the cost at scale depends on (issue
"Performance at scale"). A server holds one of these per user, and the garbage
collector walks every object each keeps; no test here measures a time."""

from __future__ import annotations

import asyncio
import gc
import secrets
import sys
import types
from collections import Counter
from collections.abc import Coroutine
from typing import Any

import pytest
from aiohttp import web
from reactivex.disposable import (
    CompositeDisposable,
    Disposable,
    SerialDisposable,
    SingleAssignmentDisposable,
)
from reactivex.observer import AutoDetachObserver
from reactivex.scheduler.eventloop import AsyncIOScheduler
from reactivex.testing import TestScheduler

import rxllm
from rxllm.degradation import RetryPlan
from rxllm.operators._link import Operator, attach
from rxllm.operators._timers import after, loop_scheduler
from rxllm.sources.http import _Transfer
from tests.support import CHAT_ANSWER, GEMINI_ANSWER, Serve, ServeBody

# RxPY's wrappers, each with its own lock: rxllm's operators hold none per stream.
_WRAPPERS = (
    AutoDetachObserver,
    SingleAssignmentDisposable,
    SerialDisposable,
    CompositeDisposable,
    Disposable,
    AsyncIOScheduler,
)


def _live(types: tuple[type, ...]) -> Counter[str]:
    """Objects of exactly these types (a stream's consumer end is a scheduler by
    subclass, `rxllm.sources.job.Driver`: one per stream by design, not a wrapper)."""
    gc.collect()
    return Counter(type(o).__name__ for o in gc.get_objects() if type(o) in types)


async def _paused_stream(serve: Serve) -> tuple[str, asyncio.Event]:
    """A chat stream that sends one text chunk and then waits for `go`."""
    go = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        await response.write(chunk)
        await go.wait()
        await response.write(
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        )
        return response

    return await serve(handler), go


@pytest.mark.parametrize("options", [{}, {"total_timeout": 60.0, "max_events": 1000}])
async def test_streams_in_flight_hold_no_rxpy_wrappers(serve: Serve, options: Any) -> None:
    base_url, go = await _paused_stream(serve)
    provider = rxllm.provider("openai", api_key="sk-test", base_url=base_url, **options)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    loop_scheduler(asyncio.get_running_loop())  # the loop's one, made before counting
    before = _live(_WRAPPERS)
    streams = [provider.astream(request) for _ in range(20)]
    firsts = [await anext(stream) for stream in streams]
    assert [type(event) for event in firsts] == [rxllm.TextDelta] * 20
    in_flight = _live(_WRAPPERS) - before
    go.set()
    lasts = [[event async for event in stream][-1] for stream in streams]
    await provider.aclose()
    assert in_flight == Counter()  # not one per stream, nor one per operator
    assert all(isinstance(event, rxllm.Done) for event in lasts)


def _footprint() -> tuple[Counter[str], set[_Transfer]]:
    """Retry plans and the source's coroutines by name, and the HTTP transfers, alive
    now (other tests' may be: what a test counts is the difference it makes)."""
    gc.collect()
    live = gc.get_objects()
    counts = Counter(o.__qualname__ for o in live if isinstance(o, Coroutine))
    counts["RetryPlan"] = sum(1 for o in live if type(o) is RetryPlan)
    return counts, {o for o in live if type(o) is _Transfer}


async def test_streams_in_flight_share_what_only_a_failure_or_a_redirect_needs(
    serve: Serve,
) -> None:
    """No retry plan until a failure, no frame of the redirect loop while the body
    streams, and no copy of the request headers, nor of the URL, per stream."""
    base_url, go = await _paused_stream(serve)
    provider = rxllm.provider("openai", api_key="sk-test-0123456789abcdef", base_url=base_url)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    counts_before, transfers_before = _footprint()
    streams = [provider.astream(request) for _ in range(20)]
    for stream in streams:
        await anext(stream)
    counts, transfers = _footprint()
    in_flight = counts - counts_before
    mine = transfers - transfers_before
    headers = {id(transfer._settings.request.headers) for transfer in mine}
    urls = {id(transfer._settings.request.url) for transfer in mine}
    go.set()
    for stream in streams:
        assert isinstance([event async for event in stream][-1], rxllm.Done)
    await provider.aclose()
    assert in_flight["RetryPlan"] == 0
    assert in_flight["_Transfer._run"] == in_flight["_Transfer._transfer"] == 20
    assert in_flight["_Transfer._respond"] == 0
    assert len(mine) == 20 and len(headers) == 1  # the provider's, shared by its turns
    assert len(urls) == 1  # and its endpoint's URL


@pytest.mark.parametrize(
    ("options", "guarded"),
    [({}, False), ({"read_timeout": 60.0}, True), ({"idle_timeout": None}, True)],
)
async def test_the_transport_guard_is_armed_only_where_a_silence_could_pass_the_deadlines(
    serve: Serve, options: dict[str, Any], guarded: bool
) -> None:
    """A silence without a byte is one without output: while `idle_timeout` is on, the
    deadlines see every one first, and the read watchdog was one more timer a stream in
    the loop's heap. Asked for (`read_timeout`), or without `idle_timeout`, it is armed."""
    base_url, go = await _paused_stream(serve)
    provider = rxllm.provider("openai", api_key="sk-test", base_url=base_url, **options)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    _, transfers_before = _footprint()
    stream = provider.astream(request)
    assert isinstance(await anext(stream), rxllm.TextDelta)
    _, transfers = _footprint()
    watchdogs = [transfer._watchdog is not None for transfer in transfers - transfers_before]
    go.set()
    assert isinstance([event async for event in stream][-1], rxllm.Done)
    await provider.aclose()
    assert watchdogs == [guarded]


async def test_the_request_is_sent_in_the_loop_iteration_that_subscribed(serve: Serve) -> None:
    """No hop between subscribing and starting the request: its task exists at once."""
    base_url, go = await _paused_stream(serve)
    go.set()
    provider = rxllm.provider("openai", api_key="sk-test", base_url=base_url)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    tasks = len(asyncio.all_tasks())
    subscription = provider.stream(request).subscribe(
        scheduler=loop_scheduler(asyncio.get_running_loop())
    )
    assert len(asyncio.all_tasks()) == tasks + 1  # the request's task, before any await
    subscription.dispose()
    await provider.aclose()


async def test_a_stream_waiting_for_its_first_event_keeps_no_operator(serve: Serve) -> None:
    """What runs keeps what it needs, the operators' states: the Observables the turn
    was assembled from (`Operator`s, their subscribe functions) go once subscribed, not
    when the first event comes, which at a thousand streams started at once is after
    every stream's start (benchmarks/README.md, the twenty-fifth round)."""
    go = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        await go.wait()  # no headers until the streams have been counted
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(CHAT_ANSWER)
        return response

    base_url = await serve(handler)
    provider = rxllm.provider("openai", api_key="sk-test", base_url=base_url)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    before = _live((Operator,))
    streams = [provider.astream(request) for _ in range(5)]
    firsts = [asyncio.ensure_future(anext(stream)) for stream in streams]
    await asyncio.sleep(0.05)  # each stream subscribed, its request sent, its wait begun
    waiting = sum(not first.done() for first in firsts)
    in_flight = _live((Operator,)) - before
    go.set()
    assert [type(await first) for first in firsts] == [rxllm.TextDelta] * 5
    for stream in streams:
        assert isinstance([event async for event in stream][-1], rxllm.Done)
    await provider.aclose()
    assert waiting == 5
    assert in_flight == Counter(), in_flight


async def test_a_timer_on_the_loop_is_the_loops_own_handle() -> None:
    fired: list[str] = []
    timer = after(loop_scheduler(asyncio.get_running_loop()), 0.01, fired.append, "x")
    assert isinstance(timer, asyncio.TimerHandle)
    stopped = after(loop_scheduler(asyncio.get_running_loop()), 0.01, fired.append, "y")
    stopped.cancel()
    await asyncio.sleep(0.05)
    assert fired == ["x"]


def test_a_timer_on_another_scheduler_runs_in_its_time() -> None:
    scheduler = TestScheduler()
    fired: list[float] = []
    after(scheduler, 5.0, lambda: fired.append(scheduler.clock))
    stopped = after(scheduler, 6.0, lambda: fired.append(-1.0))
    stopped.cancel()
    scheduler.advance_to(10.0)
    assert fired == [5.0]


class _Observer:
    def __init__(self) -> None:
        self.got: list[Any] = []

    def on_next(self, value: Any) -> None:
        self.got.append(value)

    def on_error(self, error: Exception) -> None:
        self.got.append(f"error: {error}")

    def on_completed(self) -> None:
        self.got.append("|")


def test_attach_keeps_the_observers_on_next_and_stops_after_a_terminal() -> None:
    held: list[Any] = []
    source: Operator[str] = Operator(lambda observer, _: held.append(observer))
    observer = _Observer()
    subscription = attach(source, observer)
    link = held[0]
    assert link.on_next == observer.on_next  # no gate: the observer's own method
    link.on_next("a")
    link.on_error(RuntimeError("boom"))
    link.on_next("late")
    link.on_completed()
    assert observer.got == ["a", "error: boom"]
    subscription.dispose()  # idempotent after the terminal


def test_attach_to_an_rxpy_observable_subscribes_it_the_usual_way() -> None:
    import reactivex

    observer = _Observer()
    attach(reactivex.of(1, 2), observer)
    assert observer.got == [1, 2, "|"]


@pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic", "google"])
def test_a_normalizer_keeps_its_state_in_slots(name: str) -> None:
    """One normalizer per stream: past 30 attributes an instance dict stops sharing its
    keys (1.3 KB per stream for the chat wire's, measured with tracemalloc)."""
    from rxllm.providers import wire_for

    normalizer = wire_for(name).normalizer(lambda _: None, name)
    assert not hasattr(normalizer, "__dict__"), sorted(vars(normalizer))


async def test_a_streams_normalizing_step_keeps_only_what_its_stream_needs(serve: Serve) -> None:
    """Between chunks, a stream's normalizing step holds its normalizer, not a bound
    `feed` of it as well, and no dict of held UTF-16 halves: only a stream that may
    hold a lone half (`halves_possible`) makes one. The normalizer keeps no chunk's
    text past its reading (`chunk_data`, read only while a chunk is)."""
    from rxllm.operators.normalize import _Feeding

    base_url, go = await _paused_stream(serve)
    provider = rxllm.provider("openai", api_key="sk-test", base_url=base_url)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    gc.collect()
    before = {id(o) for o in gc.get_objects() if type(o) is _Feeding}
    streams = [provider.astream(request) for _ in range(3)]
    for stream in streams:
        assert isinstance(await anext(stream), rxllm.TextDelta)
    gc.collect()
    feedings = [o for o in gc.get_objects() if type(o) is _Feeding and id(o) not in before]
    held = Counter(type(r).__name__ for f in feedings for r in gc.get_referents(f))
    # no method held: its `on_next` is its class's `_next`, found there (`Link`)
    open_links = [type(f).on_next is type(f)._next and "on_next" not in vars(f) for f in feedings]
    chunks_kept = [f._normalizer.chunk_data for f in feedings]
    go.set()
    for stream in streams:
        assert isinstance([event async for event in stream][-1], rxllm.Done)
    await provider.aclose()
    assert len(feedings) == 3
    assert held["dict"] == 0 and held["method"] == 0 and open_links == [True] * 3, held
    assert chunks_kept == ["", "", ""]


_CONTAINERS = (dict, list, tuple, set, frozenset, types.CellType)


def _rxllms(item: Any) -> bool:
    """Whether the walk below enters `item`: a container, or rxllm's own function, class
    or object (a cache's wrapper is named after its function). Not another package's
    objects: a module's loader reaches pytest's session and this test's frames, and
    yarl's caches of URL strings are yarl's."""
    if isinstance(item, _CONTAINERS):
        return True
    named = item if callable(item) else type(item)
    module = getattr(named, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] == "rxllm"


def _held_by_rxllm(key: str) -> list[str]:
    """Every string holding `key` that the globals of rxllm's modules reach (a cache, a
    registry, a class attribute), walked through what the collector sees."""
    modules = [m for name, m in sys.modules.items() if name.partition(".")[0] == "rxllm"]
    seen: set[int] = set()
    todo: list[Any] = [vars(m) for m in modules]
    found: list[str] = []
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, str):
            if key in item:
                found.append(item)
            continue
        if _rxllms(item):
            todo.extend(gc.get_referents(item))
    return found


@pytest.mark.parametrize("provider", ["google", "custom"])
async def test_a_key_in_the_base_url_goes_with_its_provider(
    provider: str, serve_body: ServeBody
) -> None:
    """The endpoint's URL is shared by a provider's streams (above), held by the provider
    and not by a process-wide cache: a base URL with a key in its query (Gemini's
    `?key=`, a gateway's) is kept by nothing once its provider is closed and dropped."""
    key = "AIza" + secrets.token_hex(16)  # made here: no constant of this file holds it
    base_url = await serve_body(GEMINI_ANSWER if provider == "google" else CHAT_ANSWER)
    held = rxllm.provider(
        provider, api_key="test", base_url=f"{base_url}?key={key}", allow_private_network=True
    )
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    for _ in range(2):
        assert isinstance([event async for event in held.astream(request)][-1], rxllm.Done)
    await held.aclose()
    del held
    gc.collect()
    assert _held_by_rxllm(key) == []
